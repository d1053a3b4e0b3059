"""In-place rules (the pipeline's "inplace" stage): an Op overwrites its input instead of
allocating a new output where the :class:`~arignote.graph.destroyhandler.DestroyHandler`
says nobody else can see the difference.

A chain of ``inc_subtensor`` into one buffer (what the gradient of many indexed terms is)
then writes every increment into that buffer: linear time and memory instead of a copy of
the buffer per term.

>>> import numpy as np
>>> import arignote
>>> import arignote.tensor as pt
>>> v = pt.dvector("v")
>>> cost = sum(v[i] * (i + 1) for i in range(4))
>>> f = arignote.function([v], arignote.grad(cost, v))
>>> sum(getattr(n.op, "inplace", False) for n in f.maker.fgraph.toposort())
4
>>> f(np.zeros(4))
array([1., 2., 3., 4.])
"""

from __future__ import annotations

from arignote.graph.basic import Apply, Variable
from arignote.graph.destroyhandler import DestroyHandler
from arignote.graph.fg import FunctionGraph
from arignote.graph.rewriting.basic import node_rewriter
from arignote.graph.rewriting.db import register_rewrite
from arignote.tensor.indexing.advanced import AdvancedIncSubtensor, AdvancedIncSubtensor1
from arignote.tensor.indexing.basic import IncSubtensor


def destroy_handler(fgraph: FunctionGraph) -> DestroyHandler:
    """The graph's DestroyHandler, attached on first use (its orderings then order every
    destroyer after the other readers of what it overwrites)."""
    handler = getattr(fgraph, "destroy_handler", None)
    if handler is None:
        handler = DestroyHandler()
        fgraph.attach_feature(handler)
    return handler


@register_rewrite("inplace", "fast_run")
@node_rewriter([IncSubtensor, AdvancedIncSubtensor1, AdvancedIncSubtensor])
def inc_subtensor_inplace(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """``inc_subtensor``/``set_subtensor`` (basic or advanced) writing into ``x`` itself
    when nothing else reads ``x`` afterwards and ``x`` is not a protected value."""
    op = node.op
    if op.inplace or not destroy_handler(fgraph).can_destroy(fgraph, node, 0):
        return None
    inplace_op = type(op)(**{**op._props_dict(), "inplace": True})
    return inplace_op.make_node(*node.inputs).outputs
