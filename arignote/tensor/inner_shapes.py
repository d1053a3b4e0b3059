"""Shape inference through an inner graph: the shapes of the outputs of an Op that holds a
graph of its own (OpFromGraph, scan), from the ``infer_shape`` of each inner node, without
computing the Op."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from arignote.graph.basic import Apply, Variable, clone_get_equiv
from arignote.graph.op import HasInnerGraph
from arignote.graph.traversal import ancestors, io_toposort
from arignote.tensor.shape import ShapeError, shape_tuple

__all__ = ["has_shape", "infer_inner_shapes", "needs_computing"]


def has_shape(v: Variable) -> bool:
    return isinstance(getattr(v.type, "shape", None), tuple)


def infer_inner_shapes(op: HasInnerGraph, node: Apply, shapes: Sequence[Any]) -> tuple[list, set]:
    """The shapes of ``node``'s outputs (tuples of ints and 0-d integer Variables, or None
    for a Variable without a shape), and the set of Variables whose shape could only be
    read off the Variable itself (computing it: an inner op with no ``infer_shape``).

    The inner graph is rebuilt on the node's inputs (the rebuilt nodes are not computed
    unless a shape refers to them) and each rebuilt node's ``infer_shape`` is asked.
    """
    memo = dict(zip(op.inner_inputs, node.inputs))
    equiv = clone_get_equiv([], op.inner_outputs, copy_inputs=False, copy_orphans=False, memo=memo)
    shape_of: dict = {}
    for v, s in zip(node.inputs, shapes):
        shape_of[v] = tuple(s) if s is not None and has_shape(v) else None
    computed: set = set()

    def shape_for(v: Variable) -> tuple | None:
        if v in shape_of:
            return shape_of[v]
        return shape_tuple(v) if has_shape(v) else None  # a constant: its static shape

    for inner in io_toposort(op.inner_inputs, op.inner_outputs):
        new = equiv[inner]
        in_shapes = [shape_for(v) for v in new.inputs]
        out_shapes = None
        infer = getattr(new.op, "infer_shape", None)
        if infer is not None and all(
            s is not None or not has_shape(v) for v, s in zip(new.inputs, in_shapes)
        ):
            try:
                out_shapes = infer(None, new, [() if s is None else s for s in in_shapes])
            except ShapeError:
                out_shapes = None
        for k, out in enumerate(new.outputs):
            if not has_shape(out):
                shape_of[out] = None
                continue
            s = None if out_shapes is None else out_shapes[k]
            if s is None:
                s = shape_tuple(out)
                if any(isinstance(e, Variable) for e in s):
                    computed.add(out)
            else:  # a static length is better than any expression for it
                s = tuple(e if st is None else st for st, e in zip(out.type.shape, s))
            shape_of[out] = s
    return [shape_for(equiv.get(o, o)) for o in op.inner_outputs], computed


def needs_computing(entries: Sequence[Any], computed: set, stop: Sequence[Variable]) -> bool:
    roots = [e for e in entries if isinstance(e, Variable)]
    return bool(computed) and any(v in computed for v in ancestors(roots, blockers=stop))
