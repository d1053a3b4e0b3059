"""The shape rules (arignote/tensor/rewriting/shape.py): each is checked to fire (the
compiled graph) and to compute what the graph as written computes."""

from __future__ import annotations

from typing import Any

import numpy as np

import arignote
import arignote.tensor as pt
from arignote.compile.builders import OpFromGraph
from arignote.graph.basic import Apply
from arignote.graph.fg import FunctionGraph
from arignote.graph.op import Op
from arignote.graph.rewriting.basic import apply_node_rewriters
from arignote.graph.traversal import graph_inputs
from arignote.tensor.rewriting.shape import (
    local_elemwise_of_alloc,
    shape_feature,
    shape_of_inner_graph_output,
)
from arignote.tensor.shape import Shape, Shape_i
from tests.modes import function  # FAST_RUN's rewrites, on the run's linker
from tests.tensor.utils import assert_infer_shape

UNREWRITTEN = arignote.Mode(optimizer=None)


def _ofg_nodes(f: Any) -> list:
    return [n for n in f.maker.fgraph.toposort() if isinstance(n.op, OpFromGraph)]


def test_the_rule_tracks_shape_and_shape_i() -> None:
    assert set(shape_of_inner_graph_output.tracks) == {Shape, Shape_i}


def test_shape_of_an_output_does_not_run_the_op():
    x = pt.dmatrix("x")
    op = OpFromGraph([x], [pt.exp(x)[1:], pt.concatenate([x, x], axis=1)])
    a = pt.dmatrix("a")
    o0, o1 = op(a)
    f = function([a], [o0.shape, o1.shape, o1.shape[1]])
    assert _ofg_nodes(f) == []
    got = f(np.zeros((4, 3)))
    assert got[0].tolist() == [3, 3] and got[1].tolist() == [4, 6] and int(got[2]) == 6


class _NoShapeOp(Op):
    """A test Op without infer_shape: its output's shape can only be computed."""

    __props__ = ()

    def make_node(self, x):
        return Apply(self, [x], [pt.dvector()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = np.repeat(inputs[0], 2)


def test_shape_needing_an_inner_op_without_infer_shape_keeps_the_node():
    x = pt.dvector("x")
    op = OpFromGraph([x], [_NoShapeOp()(x) + 1])
    a = pt.dvector("a")
    out = op(a)
    f = function([a], out.shape)
    assert len(_ofg_nodes(f)) == 1  # only running it tells the shape
    assert f(np.zeros(3)).tolist() == [6]
    assert_infer_shape(out, {a: np.zeros(3)})


def test_shape_of_an_output_equals_the_unrewritten_graph() -> None:
    x = pt.dmatrix("x")
    op = OpFromGraph([x], [pt.exp(x)[1:], pt.concatenate([x, x], axis=1)])
    a = pt.dmatrix("a")
    outs = [o.shape for o in op(a)]
    value = np.arange(12.0).reshape(4, 3)
    rewritten = function([a], outs)(value)
    plain = function([a], outs, mode=UNREWRITTEN)(value)
    assert len(_ofg_nodes(function([a], outs, mode=UNREWRITTEN))) == 1
    for got, want in zip(rewritten, plain):
        np.testing.assert_array_equal(got, want)


class _Twice(Op):
    """An Op without ``inner_output_shapes``: the rule leaves its shape alone."""

    __props__ = ()

    def make_node(self, x: Any) -> Apply:
        x = pt.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node: Apply, inputs: Any, output_storage: Any) -> None:
        output_storage[0][0] = inputs[0] * 2


def test_an_op_without_the_protocol_keeps_its_shape_node() -> None:
    a = pt.dvector("a")
    f = function([a], _Twice()(a).shape)
    assert any(isinstance(n.op, _Twice) for n in f.maker.fgraph.toposort())
    assert f(np.zeros(5)).tolist() == [5]


# --- shape inference: x.shape of a computed x -------------------------------------------------


class _Stretch(Op):
    """Doubles the length of a vector; its perform must never run when only the shape is
    asked for. infer_shape gets one tuple of symbolic dims per input."""

    __props__ = ()
    seen_shapes: list = []

    def make_node(self, x: Any) -> Apply:
        x = pt.as_tensor_variable(x)
        return Apply(self, [x], [pt.dvector()])

    def perform(self, node: Apply, inputs: Any, output_storage: Any) -> None:
        raise AssertionError("the shape was asked for: the Op must not run")

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Any) -> list:
        type(self).seen_shapes.append(shapes)
        ((n,),) = shapes
        return [(n * 2,)]


def _op_names(f: Any) -> list[str]:
    return [type(n.op).__name__ for n in f.maker.fgraph.toposort()]


def test_the_shape_of_a_custom_op_does_not_run_it() -> None:
    x = pt.dvector("x")
    y = _Stretch()(pt.exp(x))
    f = function([x], [y.shape, y.shape[0], pt.shape_i(y, 0)])
    assert "_Stretch" not in _op_names(f)
    got = f(np.zeros(5))
    assert got[0].tolist() == [10] and int(got[1]) == 10 and int(got[2]) == 10
    (dims,) = _Stretch.seen_shapes[-1]  # one tuple of dims for the one input
    assert isinstance(dims, tuple) and len(dims) == 1


def test_join_shape_is_the_sum_of_the_lengths() -> None:
    x, y = pt.dmatrix("x"), pt.dmatrix("y")
    out = pt.concatenate([x, pt.exp(y)], axis=0).shape
    f = function([x, y], out)
    assert "Join" not in _op_names(f) and "Exp" not in _op_names(f)
    xv, yv = np.ones((2, 3)), np.ones((4, 3))
    np.testing.assert_array_equal(f(xv, yv), function([x, y], out, mode=UNREWRITTEN)(xv, yv))


def test_the_shape_of_a_gradient_does_not_compute_the_forward_output() -> None:
    x, w = pt.dmatrix("x"), pt.dmatrix("w")
    g = arignote.grad(pt.tanh(pt.dot(x, w)).sum(), w)
    f = function([x, w], g.shape)
    assert not {"Dot", "Tanh", "MatMul"} & set(_op_names(f))
    xv, wv = np.ones((4, 3)), np.ones((3, 5))
    np.testing.assert_array_equal(f(xv, wv), [3, 5])


def test_an_op_without_infer_shape_keeps_its_node() -> None:
    a = pt.dvector("a")
    f = function([a], _Twice()(pt.exp(a)).shape)
    assert "_Twice" in _op_names(f)
    assert f(np.zeros(4)).tolist() == [4]


def test_shape_inference_of_a_deep_chain_is_iterative() -> None:
    x = pt.dvector("x")
    y = x
    for _ in range(5_000):
        y = pt.exp(y)
    f = function([x], y.shape)
    assert "Exp" not in _op_names(f)
    assert f(np.zeros(3)).tolist() == [3]


def test_the_feature_forgets_a_changed_node() -> None:
    x, y = pt.dvector("x"), pt.dvector("y")
    z = pt.exp(x)
    fg = FunctionGraph([x, y], [z * 2.0], clone=False)
    feature = shape_feature(fg)
    (node,) = [n for n in fg.apply_nodes if n.outputs[0] is z]
    before = feature.shape_of(fg, z)
    assert z in feature.shapes and len(before) == 1
    fg.replace(x, y, reason="test")
    assert z not in feature.shapes  # its input changed: inferred again on demand
    (after,) = feature.shape_of(fg, node.outputs[0])
    assert y in graph_inputs([after])


# --- an Elemwise of an Alloc --------------------------------------------------------------


def _allocs(f: Any) -> int:
    return sum(type(n.op).__name__ == "Alloc" for n in f.maker.fgraph.apply_nodes)


def test_an_elemwise_reads_the_value_of_an_alloc_of_its_other_inputs_shape() -> None:
    x = pt.fmatrix("x")
    g = pt.fvector("g")
    out = pt.alloc(g[:, None], x.shape[0], x.shape[1]) * pt.exp(x)
    fg = FunctionGraph([x, g], [out], clone=False)
    assert apply_node_rewriters(fg, [local_elemwise_of_alloc]) == 1
    assert not any(type(n.op).__name__ == "Alloc" for n in fg.apply_nodes)
    f = function([x, g], out)
    assert _allocs(f) == 0
    xv = np.arange(6, dtype="float32").reshape(2, 3) / 6
    gv = np.array([2.0, -1.0], "float32")
    got = f(xv, gv)
    assert got.dtype == "float32"
    np.testing.assert_allclose(got, gv[:, None] * np.exp(xv), rtol=1e-6)
    with np.testing.assert_raises(ValueError):  # g of another length: still an error
        f(xv, np.ones(3, "float32"))


def test_the_lengths_may_come_from_an_inferred_shape() -> None:
    """The gradient of a row sum of ``dot(x, w)`` multiplied into a value of that shape:
    the Alloc's lengths are ``x.shape[0]`` and ``w.shape[1]``, which shape inference finds
    for ``exp(dot(x, w))``."""
    x, w = pt.dmatrix("x"), pt.dmatrix("w")
    v = pt.dvector("v")
    z = pt.exp(pt.dot(x, w))
    out = pt.alloc(v[:, None], x.shape[0], w.shape[1]) * z
    f = function([x, w, v], out)
    assert _allocs(f) == 0
    rng = np.random.default_rng(0)
    xv, wv, vv = rng.normal(size=(3, 4)), rng.normal(size=(4, 2)), rng.normal(size=3)
    np.testing.assert_allclose(f(xv, wv, vv), vv[:, None] * np.exp(xv @ wv), rtol=1e-12)


def test_an_alloc_of_lengths_no_input_has_is_kept() -> None:
    x = pt.dmatrix("x")
    v = pt.dvector("v")
    n, m = pt.lscalar("n"), pt.lscalar("m")
    out = pt.alloc(v[:, None], n, m) + x  # n, m: free lengths, unrelated to x's
    f = function([x, v, n, m], out)
    assert _allocs(f) == 1
    xv = np.ones((2, 3))
    np.testing.assert_array_equal(f(xv, np.array([1.0, 2.0]), 2, 3), [[2.0] * 3, [3.0] * 3])
    with np.testing.assert_raises(ValueError):  # the Alloc's shape against x's: an error
        f(xv, np.array([1.0, 2.0]), 2, 1)
    # an Alloc alone (no other input to read the lengths from) is kept too
    f = function([v, n, m], pt.exp(pt.alloc(v[:, None], n, m)))
    assert _allocs(f) >= 1
    np.testing.assert_allclose(f(np.array([0.0, 1.0]), 2, 2), np.exp([[0.0, 0.0], [1.0, 1.0]]))
