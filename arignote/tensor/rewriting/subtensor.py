"""Rules about Subtensor nodes: lengths read from a shape, and indexings that keep everything."""

from __future__ import annotations

import numpy as np

from arignote.graph.basic import Apply, Variable
from arignote.graph.fg import FunctionGraph
from arignote.graph.rewriting.basic import node_rewriter
from arignote.graph.rewriting.db import register_rewrite
from arignote.tensor.conversion import constant
from arignote.tensor.indexing.basic import Subtensor
from arignote.tensor.indexing.index import is_full_slice
from arignote.tensor.shape import Shape, Shape_i


def _shape_entry(node: Apply) -> tuple[Variable, int] | None:
    """``(x, i)`` when ``node`` is ``Shape(x)[i]`` for a constant ``i`` (made non-negative)."""
    shape_var = node.inputs[0]
    idx_list = node.op.idx_list
    if shape_var.owner is None or not isinstance(shape_var.owner.op, Shape):
        return None
    if len(idx_list) != 1 or not isinstance(idx_list[0], int):
        return None
    x = shape_var.owner.inputs[0]
    return x, idx_list[0] % x.type.ndim  # in bounds: Subtensor checked it against the static length


@register_rewrite("canonicalize", "fast_run", "fast_compile")
@node_rewriter([Subtensor])
def local_subtensor_of_static_shape(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """``Shape(x)[i]`` where ``x``'s length ``i`` is static: that length, as a constant."""
    entry = _shape_entry(node)
    if entry is None:
        return None
    x, i = entry
    length = x.type.shape[i]
    if length is None:
        return None
    return [constant(np.int64(length))]


@register_rewrite("canonicalize", "fast_run", "fast_compile")
@node_rewriter([Subtensor])
def local_subtensor_of_shape(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """``Shape(x)[i]`` (``x.shape[i]``) with a constant ``i``: ``Shape_i(i)(x)``, which
    reads one length instead of building the whole shape vector."""
    entry = _shape_entry(node)
    if entry is None:
        return None
    x, i = entry
    if x.type.shape[i] is not None:
        return None  # a constant (the rule above)
    return [Shape_i(i)(x)]


@register_rewrite("canonicalize", "fast_run", "fast_compile")
@node_rewriter([Subtensor])
def local_useless_subtensor(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """``x[:]``, ``x[::1, :]``...: an indexing by full slices only is ``x`` itself."""
    if not all(is_full_slice(e) for e in node.op.idx_list):
        return None
    x = node.inputs[0]
    if x.type != node.outputs[0].type:
        return None
    return [x]
