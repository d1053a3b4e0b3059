"""TensorSymbolicOp (arignote.tensor.symbolic) and SymbolicOp (arignote.compile.builders):
Ops whose inner graph is built from the Types they are called with."""

from __future__ import annotations

import numpy as np
import pytest

import arignote
import arignote.tensor as pt
from arignote.compile.builders import OpFromGraph, SymbolicOp
from arignote.gradient import verify_grad
from arignote.tensor.symbolic import TensorSymbolicOp


class Softplus(TensorSymbolicOp):
    def build_inner_graph(self, x):
        return [pt.log1p(pt.exp(x))]


class ScaledSum(TensorSymbolicOp):
    __props__ = ("axis", "scale")

    def __init__(self, axis=None, scale=1.0, **kwargs):
        super().__init__(axis=axis, scale=scale, **kwargs)

    def build_inner_graph(self, x, y):
        return [(x * y).sum(axis=self.axis) * self.scale, x - y]


class InlinedSquare(TensorSymbolicOp):
    inline = True

    def build_inner_graph(self, x):
        return [x * x]


class StraightThroughRound(TensorSymbolicOp):
    def build_inner_graph(self, x):
        return [pt.round(x)]

    def pullback(self, inputs, outputs, output_grads):
        return [output_grads[0]]


def _nodes(f, op_type):
    return [n for n in f.maker.fgraph.apply_nodes if isinstance(n.op, op_type)]


def test_built_per_input_types_with_values_of_the_inner_graph():
    softplus = Softplus()
    assert not softplus.is_built
    x, m = pt.dvector("x"), pt.fmatrix("m")
    y, z = softplus(x), softplus(m)
    assert isinstance(y.owner.op, OpFromGraph) and y.owner.op.is_built
    assert y.owner.op is not z.owner.op and z.type.dtype == "float32" and z.type.ndim == 2
    assert softplus(pt.dvector("w")).owner.op is y.owner.op  # same Types: the same Op
    xv = np.array([-2.0, 0.0, 3.0])
    mv = np.arange(6, dtype="float32").reshape(2, 3) - 2
    f = arignote.function([x, m], [y, z])
    got_y, got_z = f(xv, mv)
    np.testing.assert_allclose(got_y, np.log1p(np.exp(xv)))
    np.testing.assert_allclose(got_z, np.log1p(np.exp(mv)), rtol=1e-6)
    assert len(_nodes(f, Softplus)) == 2  # not inlined by default


def test_python_values_become_tensors_and_props_reach_the_inner_graph():
    op = ScaledSum(axis=0, scale=2.0)
    total, diff = op([[1.0, 2.0], [3.0, 4.0]], np.ones((2, 2)))
    np.testing.assert_allclose(total.eval(), [8.0, 12.0])
    np.testing.assert_allclose(diff.eval(), [[0.0, 1.0], [2.0, 3.0]])
    assert op == ScaledSum(axis=0, scale=2.0) and op != ScaledSum(axis=1, scale=2.0)
    assert hash(op) == hash(ScaledSum(axis=0, scale=2.0))
    assert total.owner.op.axis == 0 and total.owner.op.scale == 2.0


def test_equal_calls_merge_and_gradients_follow_the_inner_graph():
    x = pt.dvector("x")
    a, b = Softplus()(x), Softplus()(x)
    f = arignote.function([x], [a, b, arignote.grad((a * b).sum(), x)])
    assert len(_nodes(f, Softplus)) == 1
    xv = np.array([0.5, -1.0])
    sp = np.log1p(np.exp(xv))
    np.testing.assert_allclose(f(xv)[2], 2 * sp / (1 + np.exp(-xv)))
    verify_grad(lambda v: Softplus()(v), [xv], rng=np.random.default_rng(0))


def test_inline_class_attribute_and_pullback_override():
    x = pt.dvector("x")
    f = arignote.function([x], InlinedSquare()(x))
    assert not _nodes(f, OpFromGraph)
    np.testing.assert_allclose(f([3.0, -2.0]), [9.0, 4.0])
    g = arignote.function([x], arignote.grad((StraightThroughRound()(x) * x).sum(), x))
    np.testing.assert_allclose(g([0.4, 1.6]), [0.4, 3.6])  # round(x) + x * 1


def test_printing_shows_one_node_without_the_inner_graph():
    x = pt.dvector("x")
    text = arignote.dprint(Softplus()(x), file="str")
    assert "Softplus" in text and "log1p" not in text.lower()


def test_errors_name_the_op_and_the_input():
    class Raw(SymbolicOp):
        def build_inner_graph(self, x):
            return [x + 1]

    with pytest.raises(TypeError, match=r"Raw: input 0 must be a Variable, got float"):
        Raw()(1.0)

    class Missing(SymbolicOp):
        pass

    with pytest.raises(NotImplementedError, match="Missing must define build_inner_graph"):
        Missing()(pt.dvector("x"))
    with pytest.raises(TypeError, match="build_inner_graph"):
        Softplus()(pt.dvector("x"), pt.dvector("y"))  # the inner graph takes one input
