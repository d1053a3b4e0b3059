"""The shape rules (arignote/tensor/rewriting/shape.py): each is checked to fire (the
compiled graph) and to compute what the graph as written computes."""

from __future__ import annotations

from typing import Any

import numpy as np

import arignote
import arignote.tensor as pt
from arignote import function
from arignote.compile.builders import OpFromGraph
from arignote.graph.basic import Apply
from arignote.graph.op import Op
from arignote.tensor.rewriting.shape import shape_of_inner_graph_output
from arignote.tensor.shape import Shape, Shape_i
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
