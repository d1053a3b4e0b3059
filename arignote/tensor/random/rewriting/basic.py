"""Rewrites of random variables.

In the pipeline:

* :func:`random_make_inplace` (the "inplace" stage): draw from the generator itself, not a
  copy, when nothing else can see the generator;
* :func:`sidestep_unused_rng_consumer` (canonicalize, tagged ``random_unsafe``): a draw whose
  values nobody reads is dropped, and its next generator state becomes the generator it was
  given. The draws that follow from that generator change (they start where the dropped draw
  would have started), which is why the tag exists: ``mode.excluding("random_unsafe")`` keeps
  every draw.

Not in the pipeline, for a user (or a library such as a probabilistic programming language)
to apply, e.g. with ``rewrite_graph(out, custom_rewrite=local_subtensor_rv_lift)``: the lifts
that move work from the draws into the parameters. Each gives draws of the same distribution
and shape, not the same numbers (a different number of values is drawn, or in another order):

* :func:`local_rv_size_lift`: ``normal(mu, sigma, size=(2, 3))`` -> ``normal(mu', sigma')``
  with ``mu'``, ``sigma'`` broadcast to the batch shape ``(2, 3)`` and no ``size``;
* :func:`local_dimshuffle_rv_lift`: ``normal(mu, sigma).T`` -> ``normal(mu.T, sigma.T)``;
* :func:`local_subtensor_rv_lift`: ``normal(mu, sigma)[idx]`` -> ``normal(mu[idx], sigma[idx])``
  (basic and advanced integer indexing of the batch dimensions).

The lifts fire only when the draws are read by the rewritten node alone (nodes that read only
their shape do not count: :func:`is_rv_used_in_graph`), and only when the support (core)
dimensions of the draws are left as they are.

>>> import numpy as np
>>> import arignote, arignote.tensor as pt
>>> from arignote.graph.rewriting.utils import rewrite_graph
>>> mu = pt.dvector("mu")
>>> x = pt.random.normal(mu, 1e-9, size=(2, 3))[1]
>>> lifted = rewrite_graph(x, include=(), custom_rewrite=local_subtensor_rv_lift)
>>> draw = lifted.owner.inputs[0]      # under a SpecifyShape that keeps the static length 3
>>> draw.owner.op.name, draw.owner.inputs[2].owner.op   # mu, broadcast then indexed
('normal', Subtensor{1})
>>> np.round(lifted.eval({mu: np.array([1.0, 2.0, 3.0])}), 6)
array([1., 2., 3.])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from arignote.graph.basic import Apply, Variable
from arignote.graph.fg import FunctionGraph, Output
from arignote.graph.rewriting.basic import node_rewriter
from arignote.graph.rewriting.db import register_rewrite
from arignote.tensor.elemwise import DimShuffle
from arignote.tensor.indexing.advanced import AdvancedSubtensor, AdvancedSubtensor1
from arignote.tensor.indexing.basic import Subtensor
from arignote.tensor.indexing.index import indices_from_subtensor
from arignote.tensor.random.op import RandomVariable, RNGConsumerOp
from arignote.tensor.random.utils import explicit_expand_dims
from arignote.tensor.rewriting.basic import register_canonicalize
from arignote.tensor.shape import Shape, Shape_i
from arignote.tensor.shape_utils import broadcast_shape, broadcast_to
from arignote.tensor.type_other import NoneTypeT

__all__ = [
    "is_rv_used_in_graph",
    "local_dimshuffle_rv_lift",
    "local_rv_size_lift",
    "local_subtensor_rv_lift",
    "random_make_inplace",
    "sidestep_unused_rng_consumer",
]


# --- in place (the pipeline's "inplace" stage) -------------------------------------------------


@register_rewrite("inplace", "fast_run")
@node_rewriter([RandomVariable])
def random_make_inplace(fgraph: Any, node: Apply) -> list[Variable] | None:
    """Draw from the generator itself instead of a copy when nothing else can see it:
    either a function input whose update is exactly this draw's next state (a shared
    generator with ``updates={rng: next_rng}`` or a ``default_update``), or the fresh
    next state of an earlier draw; in both cases used by this node alone."""
    op = node.op
    if op.inplace:
        return None
    rng = node.inputs[0]
    if any(client is not node for client, _ in fgraph.clients.get(rng, ())):
        return None  # another node (or the function's outputs) reads the generator too
    update_mapping = getattr(fgraph, "update_mapping", None) or {}
    if rng.owner is None:
        if rng not in fgraph.inputs:
            return None
        k = fgraph.inputs.index(rng)
        if [fgraph.outputs[o] for o, i in update_mapping.items() if i == k] != [node.outputs[0]]:
            return None
    elif not (isinstance(rng.owner.op, RandomVariable) and not rng.owner.op.inplace and rng.index == 0):
        return None
    for client, _ in fgraph.clients.get(node.outputs[0], ()):
        if isinstance(client.op, Output) and client.op.idx not in update_mapping:
            return None  # the caller gets the next state: it must not move on in the next call
    inplace_op = type(op)(**{**op._props_dict(), "inplace": True})
    return Apply(inplace_op, list(node.inputs), [o.type() for o in node.outputs]).outputs


# --- draws nobody reads ------------------------------------------------------------------------


@register_canonicalize("random_unsafe")
@node_rewriter([RNGConsumerOp])
def sidestep_unused_rng_consumer(fgraph: FunctionGraph, node: Apply) -> dict | None:
    """A generator consumer whose other outputs (the draws) have no clients: its next
    generator states become the generators it was given, and the node goes."""
    update = node.op.update(node)
    nexts = set(update.values())
    if any(fgraph.clients.get(out) for out in node.outputs if out not in nexts):
        return None
    replacements = {}
    for rng, next_rng in update.items():
        if rng.type != next_rng.type:
            return None
        replacements[next_rng] = rng
    return replacements


# --- lifts: work moved from the draws into the parameters --------------------------------------


def is_rv_used_in_graph(base_rv: Variable, node: Apply, fgraph: FunctionGraph) -> bool:
    """Whether anything other than ``node`` reads the values of ``base_rv`` in ``fgraph``
    (the function's outputs included). Nodes that read only its shape (``Shape``,
    ``Shape_i``) do not count: they do not depend on the values drawn."""
    for client, _ in fgraph.clients.get(base_rv, ()):
        if client is node or isinstance(client.op, (Shape, Shape_i)):
            continue
        return True
    return False


def _size_entries(size: Variable) -> list[Variable]:
    return [size[i] for i in range(size.type.shape[0])]


def _batch_shape(op: RandomVariable, rv_node: Apply) -> list[Any]:
    """The batch shape of the draws: ``size`` when given, else the parameters' batch shapes
    broadcast together (symbolic lengths, read from the parameters, not from the draws)."""
    size = op.size_param(rv_node)
    if not isinstance(size.type, NoneTypeT):
        return _size_entries(size)
    batch_ndim = op.batch_ndim(rv_node)
    params = explicit_expand_dims(op.dist_params(rv_node), op.ndims_params, batch_ndim)
    shapes = [[p.shape[i] for i in range(batch_ndim)] for p in params]
    return list(broadcast_shape(*shapes, arrays_are_shapes=True)) if shapes else []


def _broadcast_params(op: RandomVariable, rv_node: Apply) -> list[Variable]:
    """Each parameter broadcast to the full batch shape of the draws (its core dimensions
    kept), so that an index or a reordering of the batch dimensions applies to it as to the
    draws."""
    batch = _batch_shape(op, rv_node)
    params = explicit_expand_dims(op.dist_params(rv_node), op.ndims_params, len(batch))
    out = []
    for p, nd in zip(params, op.ndims_params):
        core = [p.shape[p.type.ndim - nd + i] for i in range(nd)]
        out.append(broadcast_to(p, [*batch, *core]))
    return out


def _redraw(op: RandomVariable, rv_node: Apply, size: Any, params: Sequence[Variable]) -> Apply:
    return op.make_node(op.rng_param(rv_node), size, *params)


def _replacing(old: Apply, new: Apply, draws: Variable) -> dict:
    """Replace ``draws`` by the new node's draws and the old node's next generator state by
    the new one (a function that updates its generator keeps doing so)."""
    return {draws: new.outputs[1], old.outputs[0]: new.outputs[0]}


@node_rewriter([RandomVariable])
def local_rv_size_lift(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """``rv(rng, size, *params)`` -> ``rv(rng, None, *params')``: each parameter broadcast
    to ``size`` (plus its core dimensions). The draws keep their shape and distribution."""
    op = node.op
    size = op.size_param(node)
    if isinstance(size.type, NoneTypeT):
        return None
    new = _redraw(op, node, None, _broadcast_params(op, node))
    return list(new.outputs)


@node_rewriter([DimShuffle])
def local_dimshuffle_rv_lift(fgraph: FunctionGraph, node: Apply) -> dict | None:
    """``ds(rv(rng, size, *params))`` -> ``rv(rng, ds(size), *ds(params))`` when the
    DimShuffle reorders or adds batch dimensions only (the support dimensions stay last, in
    order; dimensions it drops are not lifted) and nothing else reads the draws."""
    draws = node.inputs[0]
    rv_node = draws.owner
    if rv_node is None or not isinstance(rv_node.op, RandomVariable) or draws is not rv_node.outputs[1]:
        return None
    op: RandomVariable = rv_node.op
    order = list(node.op.new_order)
    batch_ndim = op.batch_ndim(rv_node)
    ndim = draws.type.ndim
    kept = [d for d in order if d != "x"]
    if len(kept) != ndim:
        return None  # drops a dimension
    supp = list(range(batch_ndim, ndim))
    if op.ndim_supp and order[len(order) - op.ndim_supp :] != supp:
        return None  # moves (or puts a new dimension between) support dimensions
    batch_order = order[: len(order) - op.ndim_supp]
    if is_rv_used_in_graph(draws, node, fgraph):
        return None
    size = op.size_param(rv_node)
    new_size: Any = None
    if not isinstance(size.type, NoneTypeT):
        entries = _size_entries(size)
        new_size = [1 if d == "x" else entries[d] for d in batch_order]
    params = explicit_expand_dims(op.dist_params(rv_node), op.ndims_params, batch_ndim)
    new_params = []
    for p, nd in zip(params, op.ndims_params):
        core = list(range(batch_ndim, batch_ndim + nd))
        new_params.append(p.dimshuffle(*batch_order, *core))
    new = _redraw(op, rv_node, new_size, new_params)
    return _replacing(rv_node, new, node.outputs[0])


def _index_of(node: Apply) -> tuple | None:
    """The NumPy index a Subtensor-family node applies (its index inputs in place), or None
    for what the lift does not handle (new axes, boolean masks)."""
    op = node.op
    if isinstance(op, AdvancedSubtensor1):
        index: tuple = (node.inputs[1],)
    else:
        index = indices_from_subtensor(node.inputs[1:], op.idx_list)
    for entry in index:
        if entry is None:
            return None
        dtype = getattr(getattr(entry, "type", None), "dtype", None)
        if dtype == "bool":
            return None
    return index


@node_rewriter([Subtensor, AdvancedSubtensor1, AdvancedSubtensor])
def local_subtensor_rv_lift(fgraph: FunctionGraph, node: Apply) -> dict | None:
    """``rv(rng, size, *params)[idx]`` -> ``rv(rng, None, *[p'[idx] for p' in params'])``
    (``params'``: the parameters broadcast to the draws' batch shape) when ``idx`` indexes
    batch dimensions only (integers, slices, integer arrays) and nothing else reads the draws."""
    draws = node.inputs[0]
    rv_node = draws.owner
    if rv_node is None or not isinstance(rv_node.op, RandomVariable) or draws is not rv_node.outputs[1]:
        return None
    op: RandomVariable = rv_node.op
    index = _index_of(node)
    if index is None or len(index) > op.batch_ndim(rv_node):
        return None  # indexes the support dimensions
    if is_rv_used_in_graph(draws, node, fgraph):
        return None
    new_params = [p[index] for p in _broadcast_params(op, rv_node)]
    new = _redraw(op, rv_node, None, new_params)
    return _replacing(rv_node, new, node.outputs[0])
