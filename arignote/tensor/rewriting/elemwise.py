"""Rules about Elemwise nodes, and :func:`elemwise_of`, what a rule about some scalar ops
tracks (so the engine offers it only those nodes)."""

from __future__ import annotations

from typing import Any

import numpy as np

from arignote.graph.basic import Apply, Constant, Variable
from arignote.graph.fg import FunctionGraph
from arignote.graph.rewriting.basic import node_rewriter
from arignote.graph.rewriting.db import register_rewrite
from arignote.graph.rewriting.unify import OpPattern
from arignote.scalar.type import upcast
from arignote.tensor.elemwise import Elemwise

__all__ = ["elemwise_of", "exact_cast", "scalar_op_of", "upcast_constant_inputs"]


def elemwise_of(*scalar_op_classes: type) -> list[OpPattern]:
    """What a rule about Elemwise nodes of these scalar ops tracks: the engine offers it
    an ``Elemwise`` only when its ``scalar_op`` is an instance of one of them (decided
    once per scalar-op class, not per node).

    >>> from arignote.scalar.basic import Log
    >>> elemwise_of(Log)
    [OpPattern(Elemwise, scalar_op=OpPattern(Log))]
    """
    return [OpPattern(Elemwise, scalar_op=OpPattern(cls)) for cls in scalar_op_classes]


def scalar_op_of(node: Apply | None) -> Any:
    """The scalar op of a (not in-place) one-output plain Elemwise node, else None: what
    the arithmetic rules read an expression through."""
    if node is None:
        return None
    op = node.op
    if type(op) is not Elemwise or op.inplace_pattern or len(node.outputs) != 1:
        return None
    return op.scalar_op


def exact_cast(value: np.ndarray, dtype: str) -> np.ndarray | None:
    """``value`` converted to ``dtype`` when the conversion loses nothing (the round trip
    gives it back, NaNs included; to a complex dtype, through the real part), else None."""
    with np.errstate(all="ignore"):
        cast_value = value.astype(dtype)
        back = cast_value.real if cast_value.dtype.kind == "c" and value.dtype.kind != "c" else cast_value
        back = back.astype(value.dtype)
    if value.size == 1:  # the usual case, on Python scalars (array_equal costs ~20 µs)
        a, b = back.item(), value.item()
        return cast_value if a == b or (a != a and b != b) else None
    return cast_value if np.array_equal(back, value, equal_nan=value.dtype.kind in "fc") else None


@register_rewrite("canonicalize", "fast_run", "fast_compile")
@node_rewriter([Elemwise])
def upcast_constant_inputs(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """Give constant inputs the dtype the Elemwise computes in anyway (``x + 1`` with a
    float64 ``x``: the int8 constant 1 becomes the float64 constant 1.0), when the value
    converts exactly. Later rules then see one dtype; nothing computes differently."""
    (out,) = node.outputs if len(node.outputs) == 1 else (None,)
    if out is None:
        return None
    dtype = out.type.dtype
    if not any(isinstance(i, Constant) and i.type.dtype != dtype for i in node.inputs):
        return None  # the common case, decided first
    in_dtypes = [i.type.dtype for i in node.inputs]
    if upcast(*in_dtypes) != dtype:
        return None  # the op does not simply compute in the promoted dtype (comparisons, casts...)
    new_inputs = list(node.inputs)
    changed = False
    for k, inp in enumerate(node.inputs):
        if not isinstance(inp, Constant) or inp.type.dtype == dtype:
            continue
        cast_value = exact_cast(np.asarray(inp.data), dtype)
        if cast_value is None:
            continue
        ttype = _CONSTANT_TYPES.get((dtype, inp.type.shape))
        if ttype is None:
            if len(_CONSTANT_TYPES) > 4096:
                _CONSTANT_TYPES.clear()
            ttype = _CONSTANT_TYPES[(dtype, inp.type.shape)] = inp.type.clone(dtype=dtype)
        new_inputs[k] = ttype.make_constant(cast_value)
        changed = True
    if not changed:
        return None
    # whether the op takes these dtypes and gives the same output: once per op and dtypes
    key = (node.op, *[i.type.dtype for i in new_inputs])
    ok = _UPCAST_TAKEN.get(key)
    if ok is None:
        try:
            made = node.op.make_node(*new_inputs)
            ok = made.outputs[0].type.dtype == dtype
        except TypeError:  # the op wants that input's dtype as it is (e.g. an integer order)
            ok = False
        if len(_UPCAST_TAKEN) > 4096:
            _UPCAST_TAKEN.clear()
        _UPCAST_TAKEN[key] = ok
    if not ok:
        return None
    # (the inputs' shapes are those of the node: its outputs' Types are the same)
    return Apply._unchecked(node.op, new_inputs, [o.type() for o in node.outputs], node.trace).outputs


#: (dtype, shape) -> the Type of the constants upcast_constant_inputs makes (one object)
_CONSTANT_TYPES: dict[tuple, Any] = {}

#: (Elemwise op, input dtypes) -> whether upcast_constant_inputs may give it those dtypes
_UPCAST_TAKEN: dict[tuple, bool] = {}
