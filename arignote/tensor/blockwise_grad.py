"""Gradients of :class:`~arignote.tensor.blockwise.Blockwise`: the core Op's rule, built once
on core-shaped placeholders, then vectorised over the batch.

:func:`~arignote.tensor.batching.vectorize_graph` adds one leading batch dimension, so the
batch dimensions are first broadcast to their common shape and flattened into one, and the
results are unflattened and summed back over the dimensions an input was broadcast along.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from arignote.graph.basic import Variable
from arignote.graph.null_type import NullType, is_disconnected
from arignote.graph.replace import batch_graph
from arignote.tensor.alloc import alloc
from arignote.tensor.shape import _grad_like, dim_length, reshape


def _dims(v: Variable, start: int, stop: int) -> list:
    return [dim_length(v, d) for d in range(start, stop)]


def _product(dims: Sequence[Any]) -> Any:
    total: Any = 1
    for d in dims:
        total = total * d
    return total


def _flat(v: Variable, batch: list, core_ndim: int) -> Variable:
    """``v`` broadcast to the full ``batch`` dims, then with those dims flattened into one."""
    core = _dims(v, v.type.ndim - core_ndim, v.type.ndim)
    full = v if v.type.ndim - core_ndim == len(batch) and 1 not in v.type.shape[: len(batch)] else None
    if full is None:
        full = alloc(v, *batch, *core)
    return reshape(full, [_product(batch), *core])


def _unflat(term: Variable, batch: list, like: Variable, core_ndim: int) -> Variable:
    """A flat ``(B, *core)`` term reshaped to the batch dims, then summed back to ``like``'s
    own batch shape (over the dims ``like`` was broadcast along)."""
    core = _dims(like, like.type.ndim - core_ndim, like.type.ndim)
    g = reshape(term, [*batch, *core])
    pad = len(batch) - (like.type.ndim - core_ndim)
    if pad:
        g = g.sum(axis=tuple(range(pad)))
    ones = [d for d in range(like.type.ndim - core_ndim) if like.type.shape[d] == 1 and g.type.shape[d] != 1]
    if ones:
        g = g.sum(axis=tuple(ones), keepdims=True)
    return g


def _vectorize(terms: list, replace: dict, batch: list) -> list:
    """Each term (a Variable of the core graph, or a marker such as DisconnectedType) batched
    over the flat batch dimension."""
    real = [t for t in terms if isinstance(t, Variable) and not _is_marker(t)]
    batched = dict(zip(real, batch_graph(real, replace))) if real else {}
    out = []
    for t in terms:
        if t in batched:
            b = batched[t]
            # a term that depends on no placeholder: the same for every batch entry
            out.append(b if b is not None else alloc(t, _product(batch), *_dims(t, 0, t.type.ndim)))
        else:
            out.append(t)
    return out


def _is_marker(t: Variable) -> bool:

    return is_disconnected(t) or isinstance(t.type, NullType)


def _core_rule_batched(
    op: Any, inputs: Sequence, outputs: Sequence, extra: Sequence, extra_ndims: list, rule: str
) -> tuple:
    """The core Op's ``rule`` (pullback or pushforward), built on core-shaped placeholders
    for the inputs, the outputs and ``extra`` (the cotangents or tangents), then batched
    over the flattened batch dimensions. Returns the flat terms and the batch dims."""
    batch_ndim = outputs[0].type.ndim - len(op.outputs_sig[0])
    core = op.core_node(inputs)
    like = core.outputs if rule == "pullback" else core.inputs
    # an unused cotangent / tangent stays disconnected for the core rule too: zeros there
    # could meet an infinity (0 * inf) in a rule that divides, and would cost work for nothing
    core_extra = [e if is_disconnected(e) else c.type() for c, e in zip(like, extra)]
    terms = getattr(op.core_op, rule)(list(core.inputs), list(core.outputs), core_extra)
    batch = _dims(outputs[0], 0, batch_ndim)
    pairs = [
        *zip(core.inputs, inputs, op._core_ndims()),
        *zip(core.outputs, outputs, [len(s) for s in op.outputs_sig]),
        *((c, e, n) for c, e, n in zip(core_extra, extra, extra_ndims) if not is_disconnected(e)),
    ]
    replace = {c: _flat(v, batch, n) for c, v, n in pairs}
    return _vectorize(list(terms), replace, batch), batch


def blockwise_pullback(
    op: Any, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence
) -> list:
    batch_ndim = outputs[0].type.ndim - len(op.outputs_sig[0])
    if batch_ndim == 0:
        return op.core_op.pullback(list(inputs), list(outputs), list(output_grads))
    out_ndims = [len(s) for s in op.outputs_sig]
    terms, batch = _core_rule_batched(op, inputs, outputs, output_grads, out_ndims, "pullback")
    return [
        t if _is_marker(t) else _grad_like(_unflat(t, batch, x, n), x)
        for t, x, n in zip(terms, inputs, op._core_ndims())
    ]


def blockwise_pushforward(
    op: Any, inputs: Sequence[Variable], outputs: Sequence[Variable], eval_points: Sequence
) -> list:
    batch_ndim = outputs[0].type.ndim - len(op.outputs_sig[0])
    if batch_ndim == 0:
        return op.core_op.pushforward(list(inputs), list(outputs), list(eval_points))
    terms, batch = _core_rule_batched(op, inputs, outputs, eval_points, op._core_ndims(), "pushforward")
    return [
        t if _is_marker(t) else reshape(t, [*batch, *_dims(o, batch_ndim, o.type.ndim)])
        for t, o in zip(terms, outputs)
    ]
