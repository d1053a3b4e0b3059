"""Batching a graph: the same computation over a stack of inputs, as one graph.

:func:`vectorize_graph` rebuilds the part of a graph that depends on some Variables for
stacked values of them (one more, leading, dimension), node by node. It is how
:func:`arignote.gradient.jacobian` gets every row of a Jacobian from one reverse pass:
the pullback of a placeholder cotangent is built once, then batched over the rows of an
identity matrix.

Each Op is batched by a rule: Elemwise (the unbatched inputs broadcast along the new
dimension), DimShuffle, CAReduce, Alloc, Dot, MatMul, Reshape, SpecifyShape, Shape,
Shape_i, Join, Split, CumOp and Flip have one here; the indexing Ops, Blockwise, the
random variables and OpFromGraph register theirs next to their definitions
(:func:`register_batch_rule`). An Op that declares a ``gufunc_signature`` (the linear
algebra Ops) becomes a :class:`~arignote.tensor.blockwise.Blockwise`. Any other Op is
wrapped in :class:`Batched`, which loops over the rows at run time: still one node,
whatever the number of rows, but not a vectorised kernel.

>>> import arignote.tensor as pt
>>> x = pt.dvector("x")
>>> xs = pt.dmatrix("xs")
>>> (y,) = vectorize_graph([pt.exp(x).sum()], {x: xs})
>>> y.type
TensorType(float64, shape=(None,))
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from arignote.graph.basic import Apply, Variable
from arignote.graph.op import Op
from arignote.graph.traversal import io_toposort
from arignote.tensor.elemwise import CAReduce, DimShuffle, Elemwise
from arignote.tensor.type import TensorType

__all__ = ["Batched", "broadcast_batch", "register_batch_rule", "vectorize_graph"]

#: a rule: ``(op, node, args, batched) -> [(output, is_batched)]`` or ``None`` (cannot)
BatchRule = Callable[[Op, Apply, list, list], "list[tuple[Variable, bool]] | None"]
_RULES: dict[type, BatchRule] = {}


def register_batch_rule(*op_classes: type) -> Callable[[BatchRule], BatchRule]:
    """Decorator: the batching rule for Ops of these classes (and their subclasses).

    The rule gets the Op, the original node, its new inputs (batched ones with a leading
    batch dimension, the others as they were) and a flag per input saying which are
    batched; it returns ``(output, is_batched)`` per output, or ``None`` to fall back to
    :class:`Batched`.
    """

    def register(rule: BatchRule) -> BatchRule:
        for cls in op_classes:
            _RULES[cls] = rule
        return rule

    return register


def batch_length(v: Variable) -> Any:
    """The length of ``v``'s leading dimension: a Python int if static, else a Variable."""
    from arignote.tensor.shape import dim_length

    return dim_length(v, 0)


def broadcast_batch(v: Variable, n: Any) -> Variable:
    """``v`` repeated ``n`` times along a new leading dimension."""
    from arignote.tensor.alloc import alloc
    from arignote.tensor.shape import shape_i

    shape = [s if s is not None else shape_i(v, d) for d, s in enumerate(v.type.shape)]
    return alloc(v, n, *shape)


def vectorize_graph(
    outputs: Sequence[Variable], replace: Mapping[Variable, Variable]
) -> list[Variable | None]:
    """``outputs`` computed for stacked values of the keys of ``replace``.

    Each value of ``replace`` has one more (leading) dimension than its key: a stack of
    values for it, all of the same batch length. Returns, per output, its batched
    version (with that leading dimension), or ``None`` for an output that does not
    depend on any key. The original graph is not changed.
    """
    for k, v in replace.items():
        kn, vn = getattr(k.type, "ndim", None), getattr(v.type, "ndim", None)
        if kn is None or vn != kn + 1:
            raise ValueError(
                f"vectorize_graph: {v} ({v.type}) must have one more dimension than {k} ({k.type})"
            )
    batched: dict = dict(replace)  # Variable -> its batched version
    subst: dict = {}  # Variable -> an unbatched replacement (its node had a batched input)
    for node in io_toposort(list(replace), list(outputs)):
        ins = node.inputs
        flags = [i in batched for i in ins]
        if not any(flags):
            if any(i in subst for i in ins):
                new = node.op.make_node(*(subst.get(i, i) for i in ins))
                subst.update(zip(node.outputs, new.outputs))
            continue
        args = [batched[i] if f else subst.get(i, i) for i, f in zip(ins, flags)]
        results = _batch_node(node, args, flags)
        for o, (v, is_batched) in zip(node.outputs, results):
            if is_batched:
                batched[o] = v
            else:
                subst[o] = v
    result: list[Variable | None] = []
    n = None
    for o in outputs:
        if o in batched:
            result.append(batched[o])
        elif o in subst:
            if n is None:
                n = batch_length(next(iter(replace.values())))
            result.append(broadcast_batch(subst[o], n))
        else:
            result.append(None)
    return result


def _batch_node(node: Apply, args: list, flags: list) -> list[tuple[Variable, bool]]:
    op = node.op
    for cls in type(op).__mro__:
        rule = _RULES.get(cls)
        if rule is not None:
            out = rule(op, node, args, flags)
            if out is not None:
                return out
            break
    if getattr(op, "gufunc_signature", None) is not None:
        # a core Op that declares its core dims: the batch becomes one more Blockwise dim
        from arignote.tensor.blockwise import Blockwise

        return [(o, True) for o in Blockwise(op)(*args, return_list=True)]
    return [(o, True) for o in Batched(op, flags)(*args, return_list=True)]


# --- the rules ------------------------------------------------------------------------------


@register_batch_rule(Elemwise)
def _batch_elemwise(op: Elemwise, node: Apply, args: list, flags: list) -> list:
    # the unbatched inputs are left-padded by Elemwise: they broadcast along the batch
    eop = Elemwise(op.scalar_op) if op.inplace_pattern else op
    return [(o, True) for o in eop(*args, return_list=True)]


@register_batch_rule(DimShuffle)
def _batch_dimshuffle(op: DimShuffle, node: Apply, args: list, flags: list) -> list:
    order = [0, *("x" if d == "x" else d + 1 for d in op.new_order)]
    return [(DimShuffle(input_ndim=op.input_ndim + 1, new_order=order)(args[0]), True)]


@register_batch_rule(CAReduce)
def _batch_careduce(op: CAReduce, node: Apply, args: list, flags: list) -> list:
    (x,) = args
    new = copy.copy(op)
    new.axis = tuple(range(1, x.type.ndim)) if op.axis is None else tuple(a + 1 for a in op.axis)
    return [(new(x), True)]


def _register_tensor_rules() -> None:
    from arignote.tensor.alloc import Alloc, alloc
    from arignote.tensor.basic import NotScalarConstantError, get_underlying_scalar_constant_value, transpose
    from arignote.tensor.extra_ops import CumOp, Flip
    from arignote.tensor.join import Join, Split, join
    from arignote.tensor.math import cast
    from arignote.tensor.products import Dot, MatMul, matmul
    from arignote.tensor.shape import (
        MakeVector,
        Reshape,
        Shape,
        Shape_i,
        SpecifyShape,
        make_vector,
        shape_i,
        specify_shape,
    )
    from arignote.tensor.type_other import NoneTypeT

    def as_int64(n: Any) -> Any:
        return n if isinstance(n, int) else cast(n, "int64")

    @register_batch_rule(Alloc)
    def _batch_alloc(op: Op, node: Apply, args: list, flags: list) -> list | None:
        value, *shape = args
        if any(flags[1:]):
            return None
        vnd = value.type.ndim - 1
        pad = len(shape) - vnd
        if pad:  # line the value's dimensions up with the output's, after the batch one
            value = DimShuffle(input_ndim=vnd + 1, new_order=[0, *["x"] * pad, *range(1, vnd + 1)])(value)
        return [(alloc(value, batch_length(value), *shape), True)]

    @register_batch_rule(Dot)
    def _batch_dot(op: Op, node: Apply, args: list, flags: list) -> list | None:
        a, b = args
        fa, fb = flags
        if fa and fb:  # a stack of products: a batched matmul, vectors as 1-row/column matrices
            a3 = a if a.type.ndim == 3 else DimShuffle(input_ndim=2, new_order=[0, "x", 1])(a)
            b3 = b if b.type.ndim == 3 else DimShuffle(input_ndim=2, new_order=[0, 1, "x"])(b)
            out = matmul(a3, b3)
            drop = [d for d, keep in ((1, a.type.ndim == 3), (2, b.type.ndim == 3)) if not keep]
            if drop:
                out = DimShuffle(input_ndim=3, new_order=[d for d in range(3) if d not in drop])(out)
            return [(out, True)]
        if fa:  # a: (B, k) or (B, m, k)
            out = op(a, b) if a.type.ndim == 2 else matmul(a, b)
        elif b.type.ndim == 3:  # b: (B, k, n)
            out = matmul(a, b)
        else:  # b: (B, k): rows of b against a
            out = op(b, transpose(a)) if a.type.ndim == 2 else op(b, a)
        return [(out, True)]

    @register_batch_rule(MatMul)
    def _batch_matmul(op: Op, node: Apply, args: list, flags: list) -> list:
        return [(op(*args), True)]  # an unbatched input broadcasts along the batch

    @register_batch_rule(Reshape)
    def _batch_reshape(op: Op, node: Apply, args: list, flags: list) -> list | None:
        x, shp = args
        if flags[1]:
            return None
        n = as_int64(batch_length(x))
        if hasattr(shp, "data"):
            entries = [int(s) for s in np.asarray(shp.data).reshape(-1)]
            new_shape = make_vector(*[n, *entries], dtype="int64") if not isinstance(n, int) else None
            if new_shape is None:
                from arignote.tensor.basic import constant

                new_shape = constant(np.asarray([n, *entries], dtype="int64"))
        elif shp.owner is not None and isinstance(shp.owner.op, MakeVector):
            new_shape = make_vector(n, *shp.owner.inputs, dtype="int64")
        else:
            new_shape = join(0, make_vector(n, dtype="int64"), cast(shp, "int64"))
        return [(Reshape(op.ndim + 1)(x, new_shape), True)]

    @register_batch_rule(SpecifyShape)
    def _batch_specify_shape(op: Op, node: Apply, args: list, flags: list) -> list | None:
        x, *lengths = args
        if any(flags[1:]):
            return None
        spec = [None, *(None if isinstance(s.type, NoneTypeT) else s for s in lengths)]
        return [(specify_shape(x, spec), True)]

    def constant_axis(axis: Variable, ndim: int) -> int | None:
        try:
            a = int(get_underlying_scalar_constant_value(axis))
        except (NotScalarConstantError, TypeError, ValueError):
            return None
        return a % ndim if -ndim <= a < ndim else None

    @register_batch_rule(CumOp, Flip)
    def _batch_axis_op(op: Op, node: Apply, args: list, flags: list) -> list:
        new = copy.copy(op)
        new.axis = op.axis + 1
        return [(new(args[0]), True)]

    @register_batch_rule(Join)
    def _batch_join(op: Op, node: Apply, args: list, flags: list) -> list | None:
        axis, *tensors = args
        if flags[0]:
            return None
        a = constant_axis(axis, node.outputs[0].type.ndim)
        if a is None:
            return None
        n = next(batch_length(t) for t, f in zip(tensors, flags[1:]) if f)
        stacked = [t if f else broadcast_batch(t, n) for t, f in zip(tensors, flags[1:])]
        return [(op(a + 1, *stacked), True)]

    @register_batch_rule(Split)
    def _batch_split(op: Op, node: Apply, args: list, flags: list) -> list | None:
        x, axis, splits = args
        if flags[1] or flags[2]:
            return None
        a = constant_axis(axis, node.inputs[0].type.ndim)
        if a is None:
            return None
        return [(o, True) for o in op(x, a + 1, splits, return_list=True)]

    @register_batch_rule(Shape)
    def _batch_shape(op: Op, node: Apply, args: list, flags: list) -> list:
        (x,) = args
        return [(make_vector(*(shape_i(x, d + 1) for d in range(x.type.ndim - 1)), dtype="int64"), False)]

    @register_batch_rule(Shape_i)
    def _batch_shape_i(op: Op, node: Apply, args: list, flags: list) -> list:
        return [(Shape_i(op.i + 1)(args[0]), False)]


_register_tensor_rules()


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
            if not isinstance(o.type, TensorType):
                raise NotImplementedError(
                    f"Cannot batch {self.core_op}: its output Type {o.type} is not a tensor"
                )
            outputs.append(TensorType(o.type.dtype, (n, *o.type.shape))())
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
            core_shape = core.outputs[k].type.shape
            if any(s is None for s in core_shape):
                raise ValueError(
                    f"{self}: an empty batch, and the shape of a row of output {k} is not static"
                )
            cell[0] = np.zeros((0, *core_shape), dtype=dtype)

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        from arignote.gradient import grad_not_implemented

        return [
            grad_not_implemented(self, i, x, "(a Batched fallback node: give the core Op a batching rule)")
            for i, x in enumerate(inputs)
        ]

    def __str__(self) -> str:
        flags = "".join("b" if b else "." for b in self.batched)
        return f"Batched{{{self.core_op}, {flags}}}"
