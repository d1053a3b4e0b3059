"""Batching tensors: how :func:`arignote.graph.replace.vectorize_graph` treats tensor
values, and :class:`Batched`, its fallback for Ops with neither a batching rule nor a gufunc
signature.

Each Op's batching rule is next to the Op (:func:`arignote.graph.replace.register_batch_rule`);
an Op that declares a ``gufunc_signature`` (the linear algebra Ops) without one becomes a
:class:`~arignote.tensor.blockwise.Blockwise`; any other Op is wrapped in :class:`Batched`,
which loops over the rows at run time: still one node, whatever the number of rows, but not
a vectorised kernel. Several batch dimensions are broadcast to their common shape, merged
into one for the node-by-node step, and split again in the results.

>>> import arignote.tensor as pt
>>> from arignote.graph.replace import vectorize_graph
>>> x = pt.dvector("x")
>>> xs = pt.dmatrix("xs")
>>> vectorize_graph(pt.exp(x).sum(), {x: xs}).type
TensorType(float64, shape=(None,))
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from arignote.graph.basic import Apply, Variable
from arignote.graph.null_type import grad_not_implemented
from arignote.graph.op import Op
from arignote.graph.replace import register_value_batching
from arignote.scalar.type import ScalarType
from arignote.tensor.alloc import broadcast_batch
from arignote.tensor.blockwise import Blockwise
from arignote.tensor.blockwise_grad import _dims, _flat
from arignote.tensor.conversion import as_tensor_variable
from arignote.tensor.shape import batch_length, dim_length, reshape
from arignote.tensor.shape_utils import _broadcast_lengths
from arignote.tensor.type import TensorType

__all__ = ["Batched"]


def _check_replacement(key: Any, value: Any) -> tuple[Variable, int]:
    """The replacement as a tensor Variable, and its number of batch dimensions."""
    if not isinstance(key, Variable) or not isinstance(key.type, TensorType):
        raise TypeError(f"vectorize_graph: the replaced {key!r} must be a tensor Variable")
    value = as_tensor_variable(value)
    n_core = key.type.ndim
    extra = value.type.ndim - n_core
    if extra < 0:
        raise ValueError(
            f"vectorize_graph: {value} ({value.type}) replaces {key} ({key.type}) and has fewer "
            "dimensions; the batch dimensions are added on the left of the core ones"
        )
    core = value.type.shape[extra:]
    for d, (want, got) in enumerate(zip(key.type.shape, core)):
        if want is not None and got is not None and want != got:
            raise ValueError(
                f"vectorize_graph: {value} ({value.type}) replaces {key} ({key.type}), but its core "
                f"dimension {d} has length {got}, not {want}"
            )
    return value, extra


def _batch_shape(values: list[Variable], extras: list[int]) -> list:
    """The broadcast of the values' batch shapes (right-aligned): a length per dimension, a
    Python int where one is static."""
    try:
        return _broadcast_lengths([[dim_length(v, d) for d in range(e)] for v, e in zip(values, extras)], "")
    except ValueError:
        lengths = ", ".join(f"{v} ({v.type})" for v in values)
        raise ValueError(
            f"vectorize_graph: the batch dimensions of the replacements do not broadcast: {lengths}"
        ) from None


class _TensorBatching:
    """:class:`arignote.graph.replace.ValueBatching` for tensors."""

    def check(self, key: Variable, value: Any) -> tuple[Variable, int]:
        return _check_replacement(key, value)

    def length(self, v: Variable) -> Any:
        return batch_length(v)

    def broadcast(self, v: Variable, n: Any) -> Variable:
        return broadcast_batch(v, n)

    def merge_batch_dims(self, values: dict, extras: list[int]) -> tuple[dict, Any]:
        lengths = {v.type.shape[0] for v in values.values()}
        if extras == [1] * len(values) and (len(lengths) == 1 or 1 not in lengths):
            return dict(values), None  # one batch dimension, nothing to broadcast
        batch = _batch_shape(list(values.values()), extras)
        return {k: _flat(v, batch, k.type.ndim) for k, v in values.items()}, batch

    def split_batch_dim(self, v: Variable, batch: Any) -> Variable:
        return reshape(v, [*batch, *_dims(v, 1, v.type.ndim)])

    def fallback(self, node: Apply, args: list, batched: list) -> list[tuple[Variable, bool]]:
        op = node.op
        if getattr(op, "gufunc_signature", None) is not None:
            # a core Op that declares its core dims: the batch becomes one more Blockwise dim
            return [(o, True) for o in Blockwise(op)(*args, return_list=True)]
        return [(o, True) for o in Batched(op, batched)(*args, return_list=True)]


register_value_batching(TensorType, _TensorBatching())


# --- the fallback ---------------------------------------------------------------------------


class Batched(Op):
    """``core_op`` applied to each row of its batched inputs (``batched[i]``: input ``i``
    has a leading batch dimension; the others are shared by every row).

    The fallback of :func:`vectorize_graph` for Ops with no batching rule: one node,
    whatever the batch length, that runs ``core_op.perform`` once per row and stacks the
    results.
    """

    __props__ = ("core_op", "batched")

    def __init__(self, core_op: Op, batched: Sequence[bool]):
        self.core_op = core_op
        self.batched = tuple(bool(b) for b in batched)

    def _core_node(self, inputs: Sequence[Variable]) -> Apply:
        core_inputs = [
            TensorType(i.type.dtype, i.type.shape[1:])() if b else i for i, b in zip(inputs, self.batched)
        ]
        try:
            return self.core_op.make_node(*core_inputs)
        except Exception as err:
            raise NotImplementedError(
                f"Cannot batch {self.core_op}: it has no batching rule and does not accept a "
                f"placeholder for a row of its batched inputs ({type(err).__name__}: {err})"
            ) from err

    def make_node(self, *inputs: Any) -> Apply:
        if len(inputs) != len(self.batched):
            raise ValueError(f"{self} takes {len(self.batched)} inputs, got {len(inputs)}")
        lengths = set()
        for i, (v, b) in enumerate(zip(inputs, self.batched)):
            if b:
                if not isinstance(getattr(v, "type", None), TensorType) or v.type.ndim < 1:
                    raise TypeError(
                        f"{self}: batched input {i} ({v}) must be a tensor with a batch dimension"
                    )
                if v.type.shape[0] is not None:
                    lengths.add(v.type.shape[0])
        if len(lengths) > 1:
            raise ValueError(f"{self}: the batched inputs have different batch lengths {sorted(lengths)}")
        n = lengths.pop() if lengths else None
        core = self._core_node(inputs)
        outputs = []
        for o in core.outputs:
            if isinstance(o.type, TensorType):
                outputs.append(TensorType(o.type.dtype, (n, *o.type.shape))())
            elif isinstance(o.type, ScalarType):  # a flag or a count per row: a vector of them
                outputs.append(TensorType(o.type.dtype, (n,))())
            else:
                raise NotImplementedError(
                    f"Cannot batch {self.core_op}: its output Type {o.type} is neither a tensor nor a "
                    "scalar, so its rows cannot be stacked"
                )
        return Apply(self, list(inputs), outputs)

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        core = self._core_node(node.inputs)
        lengths = {v.shape[0] for v, b in zip(inputs, self.batched) if b}
        if len(lengths) != 1:
            raise ValueError(f"{self}: the batched inputs have different batch lengths {sorted(lengths)}")
        (n,) = lengths
        op = self.core_op
        has_params = hasattr(op, "get_params")
        params = core.run_params() if has_params else None
        rows: list[list] = [[] for _ in node.outputs]
        for r in range(n):
            row_in = [np.asarray(v[r]) if b else v for v, b in zip(inputs, self.batched)]
            cells: list[list] = [[None] for _ in node.outputs]
            if has_params:
                op.perform(core, row_in, cells, params)
            else:
                op.perform(core, row_in, cells)
            for acc, cell in zip(rows, cells):
                acc.append(cell[0])
        for k, (cell, out) in enumerate(zip(output_storage, node.outputs)):
            dtype = out.type.numpy_dtype
            if n:
                cell[0] = np.stack([np.asarray(v) for v in rows[k]]).astype(dtype, copy=False)
                continue
            core_shape = getattr(core.outputs[k].type, "shape", ())
            if any(s is None for s in core_shape):
                raise ValueError(
                    f"{self}: an empty batch, and the shape of a row of output {k} is not static"
                )
            cell[0] = np.zeros((0, *core_shape), dtype=dtype)

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:

        return [
            grad_not_implemented(self, i, x, "(a Batched fallback node: give the core Op a batching rule)")
            for i, x in enumerate(inputs)
        ]

    def __str__(self) -> str:
        flags = "".join("b" if b else "." for b in self.batched)
        return f"Batched{{{self.core_op}, {flags}}}"
