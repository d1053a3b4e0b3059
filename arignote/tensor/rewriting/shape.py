"""Rules about shapes."""

from __future__ import annotations

from arignote.graph.basic import Apply, Variable
from arignote.graph.fg import FunctionGraph
from arignote.graph.rewriting.basic import node_rewriter
from arignote.graph.rewriting.db import register_rewrite
from arignote.tensor.conversion import as_tensor_variable
from arignote.tensor.inner_shapes import has_shape, needs_computing
from arignote.tensor.shape import Shape, Shape_i, make_vector, shape_tuple
from arignote.tensor.ufuncs import cast


@register_rewrite("canonicalize", "fast_run", "fast_compile")
@node_rewriter([Shape, Shape_i])
def shape_of_inner_graph_output(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """The shape of an output of an Op holding an inner graph (OpFromGraph, scan) from the
    inner graph's shape inference, so that asking for it does not run the Op. An Op opts
    in by defining ``inner_output_shapes(node, input_shapes) -> (output_shapes, computed)``
    (``computed``: the inner Variables whose shape can only be read off them computed; see
    :func:`arignote.tensor.inner_shapes.infer_inner_shapes`)."""
    (x,) = node.inputs
    owner = x.owner
    inner_output_shapes = getattr(owner.op, "inner_output_shapes", None) if owner is not None else None
    if inner_output_shapes is None:
        return None
    in_shapes = [shape_tuple(i) if has_shape(i) else None for i in owner.inputs]
    out_shapes, computed = inner_output_shapes(owner, in_shapes)
    entries = out_shapes[x.index]
    if entries is None:
        return None
    if isinstance(node.op, Shape_i):
        entries = (entries[node.op.i],)
    if needs_computing(entries, computed, owner.inputs):
        return None  # the shape needs part of the inner graph computed: keep the node
    ints = [cast(as_tensor_variable(e), "int64") for e in entries]
    if isinstance(node.op, Shape_i):
        return [ints[0]]
    return [make_vector(*ints, dtype="int64")]
