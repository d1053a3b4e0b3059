"""In-place rules (the pipeline's "inplace" stage): an Op overwrites its input instead of
allocating a new output where the :class:`~arignote.graph.destroyhandler.DestroyHandler`
says nobody else can see the difference.

A chain of ``inc_subtensor`` into one buffer (what the gradient of many indexed terms is,
once its increments at constant places are one vectorized increment and the others a
chain) then writes every increment into that buffer: linear time and memory instead of a
copy of the buffer per term. An elementwise node (fused or not) writes each output into an input
of its dtype and shape that nothing reads afterwards, so a chain of elementwise steps on
a temporary reuses one buffer instead of allocating one per step.

>>> import numpy as np
>>> import arignote
>>> import arignote.tensor as pt
>>> v = pt.dvector("v")
>>> i, j = pt.lscalars("i", "j")
>>> cost = v[i] * 3 + v[j] * 4 + v[0] + v[1] * 2
>>> f = arignote.function([v, i, j], arignote.grad(cost, v))
>>> [(type(n.op).__name__, n.op.inplace) for n in f.maker.fgraph.toposort() if hasattr(n.op, "inplace")]
[('AdvancedIncSubtensor1', True), ('IncSubtensor', True), ('IncSubtensor', True)]
>>> f(np.zeros(4), 3, 1)
array([1., 6., 0., 3.])

``exp(x) * 2 + 1`` is one fused node reading ``x``, a graph input the caller still holds,
so it allocates its result; on ``exp(x).sum(axis=0)``'s temporary it writes in place:

>>> x = pt.dmatrix("x")
>>> fused = arignote.function([x], pt.exp(x) * 2 + 1).maker.fgraph.outputs[0].owner
>>> fused.op.inplace_pattern
()
>>> s = x.sum(axis=0)
>>> fused = arignote.function([x], pt.exp(s) * 2 + 1).maker.fgraph.outputs[0].owner
>>> fused.op.inplace_pattern, fused.op.destroy_map
(((0, 0),), {0: [0]})
"""

from __future__ import annotations

from arignote.graph.basic import Apply, Constant, Variable
from arignote.graph.destroyhandler import DestroyHandler, view_root
from arignote.graph.fg import FunctionGraph
from arignote.graph.rewriting.basic import node_rewriter
from arignote.graph.rewriting.db import register_rewrite
from arignote.scalar.composite import Composite
from arignote.tensor.elemwise import Elemwise
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


@register_rewrite("inplace", "fast_run")
@node_rewriter([Elemwise])
def elemwise_inplace(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """An Elemwise (a fused ``Elemwise(Composite)`` included) writing each output ``k``
    into the first input ``i`` that may take it: ``inplace_pattern = {k: i}``.

    Input ``i`` may take output ``k`` when it is not a constant, has the output's dtype and
    broadcastable pattern (nothing is broadcast into it: where it is not statically 1, the
    runtime check makes its length the output's), the DestroyHandler lets the node overwrite
    it (:meth:`~arignote.graph.destroyhandler.DestroyHandler.can_destroy`: not a protected
    graph input or shared value, not returned, no reader that must run later), and no other
    output of the node already took it or a view of the same memory. Of a fused body with
    several outputs, output ``k`` takes only an input the body does not read after
    computing ``k`` (:func:`_read_after`): the backend writes ``k`` into it as soon as it
    is computed.
    """
    op = node.op
    if op.inplace_pattern or type(op) is not Elemwise:  # a subclass may define perform its own way
        return None
    handler = destroy_handler(fgraph)
    # the outputs' broadcastable pattern as make_node sees it: statically 1 where every
    # input is (a fused node may keep wider output Types than make_node's)
    out_broadcastable = tuple(all(flags) for flags in zip(*(v.type.broadcastable for v in node.inputs)))
    roots = [None if isinstance(v, Constant) else view_root(v) for v in node.inputs]
    body = op.scalar_op if isinstance(op.scalar_op, Composite) and op.nout > 1 else None
    pattern: dict[int, int] = {}
    taken: list[Variable] = []  # the roots already written into, by this node's other outputs
    for k, out in enumerate(node.outputs):
        for i, inp in enumerate(node.inputs):
            root = roots[i]
            if (
                root is None
                or any(root is r for r in taken)
                or inp.type.dtype != out.type.dtype
                or inp.type.broadcastable != out_broadcastable
                or (body is not None and _read_after(body, k, [j for j, r in enumerate(roots) if r is root]))
                or not handler.can_destroy(fgraph, node, i)
            ):
                continue
            pattern[k] = i
            taken.append(root)
            break
    if not pattern:
        return None
    new_op = Elemwise(op.scalar_op, inplace_pattern=pattern, name=op._name)
    # the replaced outputs' Types as they are (a fused node's may be wider than make_node's),
    # and no make_node: it also wants the target's static lengths to be the output's (a
    # vector of unknown length added to a constant of length 4 makes a length-4 output,
    # and may still take it)
    return Apply(new_op, list(node.inputs), [v.type() for v in node.outputs]).outputs


def _read_after(body: Composite, k: int, positions: list[int]) -> bool:
    """Whether the fused ``body`` reads one of its inputs at ``positions`` (those sharing
    memory with the input output ``k`` would overwrite) after computing output ``k``, or
    returns one of them as another output: writing ``k`` there would change what is still
    to be read or returned. The order is the body's toposort, the one the backends run."""
    inputs = [body.inner_inputs[j] for j in positions]
    target = body.inner_outputs[k]
    if any(v is inp for v in body.inner_outputs for inp in inputs):
        return True
    if target.owner is None:  # an input or a constant: no step computes it
        return False
    order = body.fgraph.toposort()
    later = order[order.index(target.owner) + 1 :]
    return any(v is inp for n in later for v in n.inputs for inp in inputs)
