"""Rules about shapes, and the shape inference they use.

:class:`ShapeFeature` knows the shape of every tensor Variable of a FunctionGraph as a
tuple of dims (Python ints where static, 0-d int64 Variables otherwise), built on demand
from each Op's ``infer_shape`` and memoised per graph; a replacement forgets only the
shapes of the node it changed. The rules turn ``x.shape`` and ``x.shape[i]`` of a computed
``x`` into that inferred graph, so compiling ``op(x).shape`` does not run ``op``, and
``join(0, x, y).shape[0]`` is ``x.shape[0] + y.shape[0]``.

>>> import numpy as np
>>> import arignote
>>> import arignote.tensor as pt
>>> x, y = pt.dmatrix("x"), pt.dmatrix("y")
>>> f = arignote.function([x, y], pt.concatenate([pt.exp(x), y]).shape)
>>> [type(n.op).__name__ for n in f.maker.fgraph.toposort()].count("Join")
0
>>> f(np.ones((2, 3)), np.ones((4, 3)))
array([6, 3])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from arignote.graph.basic import Apply, Constant, Variable
from arignote.graph.features import Feature
from arignote.graph.fg import FunctionGraph
from arignote.graph.rewriting.basic import node_rewriter
from arignote.graph.rewriting.db import register_rewrite
from arignote.graph.traversal import ancestors
from arignote.tensor.alloc import Alloc
from arignote.tensor.conversion import as_tensor_variable
from arignote.tensor.elemwise import DimShuffle, Elemwise
from arignote.tensor.indexing.basic import Subtensor
from arignote.tensor.inner_shapes import has_shape, needs_computing
from arignote.tensor.shape import Shape, Shape_i, ShapeError, make_vector, shape_tuple
from arignote.tensor.type import TensorType
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


# --- shape inference ---------------------------------------------------------------------------


class ShapeFeature(Feature):
    """The inferred shapes of a FunctionGraph's tensor Variables, on demand (:meth:`shape_of`).

    A shape is computed from the owner's ``infer_shape`` (given one tuple of dims per
    input), iteratively over the owners whose shapes are not known yet (a chain 100,000
    nodes deep is fine), and kept; an Op without ``infer_shape`` (or one raising
    ``ShapeError``) gives ``Shape_i`` of its output for the dims not known statically.
    When a node's input is replaced, only that node's outputs are forgotten: the shapes
    of the others stay valid expressions of the same values.
    """

    def __init__(self) -> None:
        self.shapes: dict[Variable, tuple] = {}

    def on_attach(self, fgraph: FunctionGraph) -> None:
        fgraph.shape_feature = self  # type: ignore[attr-defined]

    def on_detach(self, fgraph: FunctionGraph) -> None:
        if getattr(fgraph, "shape_feature", None) is self:
            del fgraph.shape_feature  # type: ignore[attr-defined]

    def on_change_input(
        self, fgraph: FunctionGraph, node: Any, i: int, r: Variable, new_r: Variable, reason: Any = None
    ) -> None:
        for out in getattr(node, "outputs", ()):
            self.shapes.pop(out, None)

    def shape_of(self, fgraph: FunctionGraph, v: Variable) -> tuple:
        """``v``'s shape: a tuple of Python ints (static lengths) and 0-d int64 Variables."""
        known = self.shapes.get(v)
        if known is not None:
            return known
        todo = [v]
        while todo:
            top = todo[-1]
            if top in self.shapes:
                todo.pop()
                continue
            node = top.owner
            if node is None or all(s is not None for s in top.type.shape):
                self.shapes[top] = _own_shape(top)
                todo.pop()
                continue
            missing = [i for i in node.inputs if _is_tensor(i) and i not in self.shapes]
            if missing:
                todo.extend(missing)
                continue
            todo.pop()
            self._infer(fgraph, node)
            if top not in self.shapes:  # infer_shape gave nothing for it
                self.shapes[top] = _own_shape(top)
        return self.shapes[v]

    def _infer(self, fgraph: FunctionGraph, node: Apply) -> None:
        infer = getattr(node.op, "infer_shape", None)
        inferred = None
        if infer is not None:
            in_shapes = [self.shapes[i] if _is_tensor(i) else () for i in node.inputs]
            try:
                inferred = infer(fgraph, node, in_shapes)
            except ShapeError:
                inferred = None
        for k, out in enumerate(node.outputs):
            if not _is_tensor(out):
                continue
            dims = None if inferred is None else inferred[k]
            if dims is None or len(dims) != out.type.ndim:
                self.shapes[out] = _own_shape(out)
                continue
            self.shapes[out] = tuple(
                static if static is not None else _as_dim(d) for static, d in zip(out.type.shape, dims)
            )


def _is_tensor(v: Variable) -> bool:
    return isinstance(getattr(v, "type", None), TensorType)


def _own_shape(v: Variable) -> tuple:
    """The shape read off ``v`` itself: its static lengths, ``Shape_i`` for the others."""
    return tuple(shape_tuple(v))


def _as_dim(d: Any) -> Any:
    if isinstance(d, Variable):
        if isinstance(d, Constant) and d.type.ndim == 0:
            return int(d.data)
        return d if d.type.dtype == "int64" else cast(d, "int64")
    return int(d)


def shape_feature(fgraph: FunctionGraph) -> ShapeFeature:
    """The graph's :class:`ShapeFeature`, attached on first use."""
    feature = getattr(fgraph, "shape_feature", None)
    if feature is None:
        feature = ShapeFeature()
        fgraph.attach_feature(feature)
    return feature


def _inferred_dims(fgraph: FunctionGraph, x: Variable) -> tuple | None:
    """``x``'s inferred dims when they do not need ``x`` computed; else None."""
    owner = x.owner
    if owner is None or not _is_tensor(x) or getattr(owner.op, "inner_output_shapes", None) is not None:
        return None  # graph inputs keep their Shape; inner-graph Ops have their own rule
    dims = shape_feature(fgraph).shape_of(fgraph, x)
    symbolic = [d for d in dims if isinstance(d, Variable)]
    if symbolic and any(v in owner.outputs for v in ancestors(symbolic, blockers=owner.inputs)):
        return None  # some length can only be read off the computed output
    return dims


@register_rewrite("canonicalize", "fast_run", "fast_compile")
@node_rewriter([Shape])
def shape_of_computed_value(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """``x.shape`` of a computed ``x`` as its inferred shape (``MakeVector`` of the dims),
    so that asking for it does not compute ``x``."""
    dims = _inferred_dims(fgraph, node.inputs[0])
    if dims is None:
        return None
    return [
        make_vector(*(as_tensor_variable(d) if not isinstance(d, int) else d for d in dims), dtype="int64")
    ]


@register_rewrite("canonicalize", "fast_run", "fast_compile")
@node_rewriter([Shape_i])
def shape_i_of_computed_value(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """``Shape_i(i)(x)`` of a computed ``x`` as its inferred length ``i``."""
    dims = _inferred_dims(fgraph, node.inputs[0])
    if dims is None:
        return None
    d = dims[node.op.i]
    if (
        isinstance(d, Variable)
        and d.owner is not None
        and d.owner.op == node.op
        and d.owner.inputs == node.inputs
    ):
        return None  # already this node
    return [as_tensor_variable(np.int64(d)) if isinstance(d, int) else d]


# --- an Elemwise reads an Alloc's value, broadcast -----------------------------------------


def _length_key(length: Any) -> Any:
    """What identifies a length: its value when constant; ``(x, i)`` when it is
    ``Shape_i(i)(x)`` or ``Shape(x)[i]`` (``i`` made non-negative); else the Variable."""
    if isinstance(length, (int, np.integer)):
        return int(length)
    if isinstance(length, Constant):
        return int(np.asarray(length.data))
    node = length.owner
    if node is not None and isinstance(node.op, Shape_i):
        return (node.inputs[0], node.op.i)
    if node is not None and isinstance(node.op, Subtensor) and len(node.op.idx_list) == 1:
        (i,) = node.op.idx_list
        shp = node.inputs[0].owner
        if isinstance(i, (int, np.integer)) and shp is not None and isinstance(shp.op, Shape):
            x = shp.inputs[0]
            return (x, int(i) % x.type.ndim) if -x.type.ndim <= i < x.type.ndim else length
    return length


def _same_length(a: Any, b: Any) -> bool:
    """Whether two lengths (Python ints, 0-d int Variables) are provably equal: equal
    constants, one Variable, or the same length of one Variable (``Shape_i``, ``Shape[i]``)."""
    ka, kb = _length_key(a), _length_key(b)
    if isinstance(ka, tuple) and isinstance(kb, tuple):
        return ka[0] is kb[0] and ka[1] == kb[1]
    if isinstance(ka, int) or isinstance(kb, int):
        return isinstance(ka, int) and isinstance(kb, int) and ka == kb
    return ka is kb


@register_rewrite("specialize", "fast_run")
@node_rewriter([Elemwise])
def local_elemwise_of_alloc(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """An Elemwise input ``alloc(v, *lengths)`` is ``v`` itself (given the Alloc's number of
    dimensions), where for each length another input provably has it: the Elemwise
    broadcasts ``v`` to the same values, and the Alloc's buffer is never made.

    The proof is what keeps the result and its errors: each of the Alloc's dims (but those
    of length 1 by its Type) must be read off another input's inferred shape
    (:class:`ShapeFeature`) as the same length (one constant, one Variable, ``Shape_i`` of
    one Variable). That input then gives the output its length, and checks ``v``'s
    length where the Alloc did. The gradient of ``x.sum(axis=1)`` is
    ``alloc(g[:, None], n, m)`` multiplied into an ``(n, m)`` value: it becomes
    ``g[:, None]`` in the product."""
    if node.op.inplace_pattern:
        return None
    out = node.outputs[0]
    ndim = out.type.ndim
    inputs = list(node.inputs)
    changed = False
    for k, inp in enumerate(node.inputs):
        owner = inp.owner
        if owner is None or not isinstance(owner.op, Alloc) or inp.type.ndim != ndim:
            continue
        v, *lengths = owner.inputs
        pad = ndim - v.type.ndim
        v_full = (
            v
            if pad == 0
            else DimShuffle(input_ndim=v.type.ndim, new_order=["x"] * pad + list(range(v.type.ndim)))(v)
        )
        if any(s == 1 and vs != 1 for s, vs in zip(inp.type.shape, v_full.type.shape)):
            continue  # (the Alloc checks a length the Type says is 1)
        others = [o for j, o in enumerate(node.inputs) if j != k and o.type.ndim == ndim]
        shapes = [shape_feature(fgraph).shape_of(fgraph, o) for o in others]
        if all(
            inp.type.shape[d] == 1
            or any(o.type.shape[d] != 1 and _same_length(sh[d], lengths[d]) for o, sh in zip(others, shapes))
            for d in range(ndim)
        ):
            inputs[k] = v_full
            changed = True
    if not changed:
        return None
    new = node.op.make_node(*inputs).outputs
    if [v.type for v in new] != [v.type for v in node.outputs]:
        return None
    return new
