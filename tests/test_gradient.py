"""Tests of arignote.gradient: grad and the Op contract, Lop/Rop, jacobian/hessian,
the gradient-changing identity Ops, subgraph_grad and verify_grad."""

from __future__ import annotations

import collections
import time
import warnings

import numpy as np
import pytest

import arignote
import arignote.tensor as pt
from arignote.compile.function import function
from arignote.gradient import (
    DisconnectedGrad,
    DisconnectedInputError,
    DisconnectedType,
    GradClip,
    GradientError,
    Lop,
    NullTypeGradError,
    Rop,
    disconnected_grad,
    disconnected_type,
    grad,
    grad_clip,
    grad_not_implemented,
    grad_scale,
    grad_undefined,
    hessian,
    hessian_vector_product,
    jacobian,
    numeric_grad,
    pullback,
    pushforward,
    subgraph_grad,
    undefined_grad,
    verify_grad,
    zero_grad,
)
from arignote.graph.basic import Apply, Variable
from arignote.graph.fg import FunctionGraph
from arignote.graph.null_type import (
    NullType,
)
from arignote.graph.op import Op
from arignote.graph.replace import batch_graph
from arignote.graph.rewriting.basic import merge_graph
from arignote.graph.traversal import ancestors, io_toposort
from arignote.tensor.batching import Batched
from arignote.tensor.type import TensorType
from arignote.tensor.variable import TensorConstant

RNG = np.random.default_rng(7)


def ev(outputs, givens):
    """Evaluate ``outputs`` (a Variable or a list) with the values in ``givens``."""
    fn = function(list(givens), outputs, on_unused_input="ignore")
    return fn(*givens.values())


def nodes_of(outputs, inputs=()):
    return io_toposort(list(inputs), outputs if isinstance(outputs, list) else [outputs])


def fd_jacobian(fn, x, eps=1e-6):
    """Central-difference Jacobian of ``fn`` at ``x``: shaped ``fn(x).shape + x.shape``."""
    x = np.asarray(x, dtype="float64")
    y = np.asarray(fn(x))
    jac = np.zeros(y.shape + x.shape)
    for idx in np.ndindex(*x.shape):
        hi, lo = x.copy(), x.copy()
        hi[idx] += eps
        lo[idx] -= eps
        jac[(...,) + idx] = (np.asarray(fn(hi)) - np.asarray(fn(lo))) / (2 * eps)
    return jac


# --- tiny Ops for the seeds' integer examples -------------------------------------------------


def _vec(dtype):
    return TensorType(dtype, (None,))


def _zeros_float(x):
    return pt.zeros_like(x, dtype="float64")


class IntDot(Op):
    """Example 1: the dot product of two integer vectors (an integer)."""

    __props__ = ()

    def make_node(self, x, y):
        return Apply(self, [x, y], [TensorType("int64", ())()])

    def perform(self, node, inputs, out):
        out[0][0] = np.asarray(np.dot(*inputs), dtype="int64")

    def grad(self, inputs, output_grads):
        x, y = inputs
        return [_zeros_float(x), _zeros_float(y)]


class FloatIntDot(Op):
    """Example 2: the dot product of a float vector and an integer vector (a float)."""

    __props__ = ()

    def make_node(self, x, y):
        return Apply(self, [x, y], [TensorType("float64", ())()])

    def perform(self, node, inputs, out):
        out[0][0] = np.asarray(np.dot(*inputs), dtype="float64")

    def grad(self, inputs, output_grads):
        x, y = inputs
        (g,) = output_grads
        return [g * pt.cast(y, "float64"), g * x]


class ArgmaxAxis(Op):
    """Example 3: the argmax of a matrix ``x`` along a symbolic axis ``y``."""

    __props__ = ()

    def make_node(self, x, axis):
        return Apply(self, [x, axis], [TensorType("int64", (None,))()])

    def perform(self, node, inputs, out):
        x, axis = inputs
        out[0][0] = np.argmax(x, axis=int(axis)).astype("int64")

    def grad(self, inputs, output_grads):
        x, axis = inputs
        return [_zeros_float(x), grad_undefined(self, 1, axis, "an axis is an integer")]


class FillToLength(Op):
    """Example 4: a vector of ``n`` copies of the scalar ``x``."""

    __props__ = ()

    def make_node(self, x, n):
        return Apply(self, [x, n], [TensorType("float64", (None,))()])

    def perform(self, node, inputs, out):
        x, n = inputs
        out[0][0] = np.full(int(n), x, dtype="float64")

    def connection_pattern(self, node):
        return [[True], [False]]

    def grad(self, inputs, output_grads):
        (g,) = output_grads
        return [g.sum(), disconnected_type()]


class ToInt(Op):
    """Example 5: ``f(x) = int(x)``."""

    __props__ = ()

    def make_node(self, x):
        return Apply(self, [x], [TensorType("int64", x.type.shape)()])

    def perform(self, node, inputs, out):
        out[0][0] = np.asarray(inputs[0]).astype("int64")

    def grad(self, inputs, output_grads):
        return [_zeros_float(inputs[0])]


class ToFloat(Op):
    """Example 5: ``g(y) = float(y)``."""

    __props__ = ()

    def make_node(self, y):
        return Apply(self, [y], [TensorType("float64", y.type.shape)()])

    def perform(self, node, inputs, out):
        out[0][0] = np.asarray(inputs[0]).astype("float64")

    def grad(self, inputs, output_grads):
        return [output_grads[0]]


class TestSeedIntegerExamples:
    def test_1_integer_dot_has_zero_gradient(self):
        x, y = pt.vector("x", dtype="int64"), pt.vector("y", dtype="int64")
        cost = ToFloat()(IntDot()(x, y)) * 3.0
        gx, gy = grad(cost, [x, y])
        assert gx.type.dtype == gy.type.dtype == "float64"
        vx, vy = ev([gx, gy], {x: np.array([1, 2]), y: np.array([3, 4])})
        np.testing.assert_array_equal(vx, [0.0, 0.0])
        np.testing.assert_array_equal(vy, [0.0, 0.0])

    def test_2_float_int_dot_is_defined_for_the_integer(self):
        x, y = pt.dvector("x"), pt.vector("y", dtype="int64")
        cost = FloatIntDot()(x, y) * 2.0
        gx, gy = grad(cost, [x, y])
        vx, vy = ev([gx, gy], {x: np.array([1.5, -2.0]), y: np.array([3, 4])})
        np.testing.assert_allclose(vx, [6.0, 8.0])
        np.testing.assert_allclose(vy, [3.0, -4.0])  # as if y were float

    def test_3_argmax_axis_zero_for_x_undefined_for_the_axis(self):
        x, axis = pt.dmatrix("x"), pt.scalar("axis", dtype="int64")
        cost = ToFloat()(ArgmaxAxis()(x, axis)).sum()
        gx = grad(cost, x)
        np.testing.assert_array_equal(ev(gx, {x: np.ones((2, 3))}), np.zeros((2, 3)))
        with pytest.raises(NullTypeGradError, match="undefined"):
            grad(cost, axis)
        g_axis = grad(cost, axis, null_gradients="return")
        assert isinstance(g_axis.type, NullType)
        # with both: x's gradient is fine, the axis's raises
        with pytest.raises(NullTypeGradError):
            grad(cost, [x, axis])

    def test_4_fill_to_length_is_disconnected_from_the_length(self):
        x, n = pt.dscalar("x"), pt.scalar("n", dtype="int64")
        cost = (FillToLength()(x, n) * 2.0).sum()
        np.testing.assert_allclose(ev(grad(cost, x), {x: 1.5, n: 4}), 8.0)
        with pytest.raises(DisconnectedInputError):
            grad(cost, n)
        g_n = grad(cost, n, disconnected_inputs="ignore")
        assert g_n.type.dtype.startswith("float")
        assert ev(g_n, {n: 4}) == 0.0

    def test_5_int_and_float_casts(self):
        x = pt.dscalar("x")
        y = ToInt()(x)
        cost = 0.5 * ToFloat()(y)
        gx, gy = grad(cost, [x, y])
        assert ev(gy, {x: 3.7}) == 0.5  # y is an integer, its gradient is still 0.5
        assert ev(gx, {x: 3.7}) == 0.0  # through an integer-valued output: zero

    def test_integer_only_term_must_be_zero(self):
        class BadIntDot(IntDot):
            def grad(self, inputs, output_grads):
                x, y = inputs
                return [pt.constant(np.ones(1)), _zeros_float(y)]

        x, y = pt.vector("x", dtype="int64"), pt.vector("y", dtype="int64")
        cost = ToFloat()(BadIntDot()(x, y))
        with pytest.raises(ValueError, match="only through integer-valued outputs"):
            grad(cost, x)


# --- connection_pattern ------------------------------------------------------------------------


class TwoOut(Op):
    """``(2 * x, 3 * y)``: output 0 depends on x only, output 1 on y only."""

    __props__ = ("pattern", "bad")

    def __init__(self, pattern=True, bad=None):
        self.pattern = pattern
        self.bad = bad

    def make_node(self, x, y):
        return Apply(self, [x, y], [x.type(), y.type()])

    def perform(self, node, inputs, out):
        out[0][0] = 2 * inputs[0]
        out[1][0] = 3 * inputs[1]

    def connection_pattern(self, node):
        if self.pattern is True:
            return [[True, False], [False, True]]
        return self.pattern

    def grad(self, inputs, output_grads):
        gx, gy = output_grads
        x, y = inputs
        tx = disconnected_type() if isinstance(gx.type, DisconnectedType) else gx * 2.0
        ty = disconnected_type() if isinstance(gy.type, DisconnectedType) else gy * 3.0
        if self.bad == "term for unconnected":
            ty = pt.zeros_like(y)
        if self.bad == "disconnected for connected":
            tx = disconnected_type()
        return [tx, ty]


class NoPatternShape(Op):
    """The length of a vector (reads no element), without a connection_pattern."""

    __props__ = ()

    def make_node(self, x):
        return Apply(self, [x], [TensorType("float64", ())()])

    def perform(self, node, inputs, out):
        out[0][0] = np.asarray(float(len(inputs[0])))

    def grad(self, inputs, output_grads):
        return [disconnected_type()]


class PatternShape(NoPatternShape):
    def connection_pattern(self, node):
        return [[False]]


class TestConnectionPattern:
    def test_unused_output_disconnects_its_input(self):
        x, y = pt.dscalar("x"), pt.dscalar("y")
        a, b = TwoOut()(x, y)
        cost = a * 1.0
        assert ev(grad(cost, x), {x: 1.0}) == 2.0
        with pytest.raises(DisconnectedInputError):
            grad(cost, y)
        assert ev(grad(cost, y, disconnected_inputs="ignore"), {y: 1.0}) == 0.0
        ga, gb = grad(a + b, [x, y])
        assert ev([ga, gb], {x: 1.0, y: 1.0}) == [2.0, 3.0]

    def test_term_for_an_unconnected_input_is_an_error(self):
        x, y = pt.dscalar("x"), pt.dscalar("y")
        a, _ = TwoOut(bad="term for unconnected")(x, y)
        with pytest.raises(TypeError, match="connection_pattern says that input is not connected"):
            grad(a * 1.0, x)

    def test_disconnected_term_for_a_connected_input_is_an_error(self):
        x, y = pt.dscalar("x"), pt.dscalar("y")
        a, _ = TwoOut(bad="disconnected for connected")(x, y)
        with pytest.raises(TypeError, match="DisconnectedType term .* connection_pattern says"):
            grad(a * 1.0, [x, y], disconnected_inputs="ignore")

    def test_pattern_shape_must_match_the_node(self):
        x, y = pt.dscalar("x"), pt.dscalar("y")
        a, _ = TwoOut(pattern=((True,), (False,)))(x, y)
        with pytest.raises(ValueError, match="connection_pattern must give one row per input"):
            grad(a * 1.0, x)

    def test_shape_like_op_raises_disconnected_input(self):
        x = pt.dvector("x")
        with pytest.raises(DisconnectedInputError):
            grad(PatternShape()(x), x)
        assert ev(grad(PatternShape()(x), x, disconnected_inputs="ignore"), {x: [1.0, 2.0]}).tolist() == [
            0,
            0,
        ]

    def test_without_pattern_a_disconnected_term_warns_but_works(self):
        import arignote._gradient.derivatives as gradient_module

        gradient_module._warned_no_pattern.discard(NoPatternShape)
        x = pt.dvector("x")
        with pytest.warns(UserWarning, match="connection_pattern"):
            with pytest.raises(DisconnectedInputError):
                grad(NoPatternShape()(x), x)

    def test_an_elemwise_pattern_is_all_connected(self):
        x = pt.dvector("x")
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert ev(grad((x * x).sum(), x), {x: [1.0, 2.0]}).tolist() == [2.0, 4.0]


# --- the Op contract's errors ---------------------------------------------------------------


class Contract(Op):
    """``2 * x`` with a pullback that breaks the contract in the way ``how`` says."""

    __props__ = ("how",)

    def __init__(self, how):
        self.how = how

    def make_node(self, x, *extra):
        return Apply(self, [x, *extra], [x.type()])

    def perform(self, node, inputs, out):
        out[0][0] = 2 * inputs[0]

    def grad(self, inputs, output_grads):
        (g,) = output_grads
        x = inputs[0]
        good = [g * 2.0] + [pt.zeros_like(i, dtype="float64") for i in inputs[1:]]
        if self.how == "too many":
            return [*good, g]
        if self.how == "too few":
            return []
        if self.how == "not a list":
            return g * 2.0
        if self.how == "none":
            return [None]
        if self.how == "not a variable":
            return [np.ones(3)]
        if self.how == "integer":
            return [pt.cast(g, "int32")]
        if self.how == "ndim":
            return [(g * 2.0).sum()]
        if self.how == "not implemented":
            return [grad_not_implemented(self, 0, x, "on purpose")]
        return good


class TestOpContract:
    @pytest.mark.parametrize(
        ("how", "error", "match"),
        [
            ("too many", ValueError, "one gradient term per input \\(1\\), got 2"),
            ("too few", ValueError, "one gradient term per input \\(1\\), got 0"),
            ("not a list", ValueError, "one gradient term per input"),
            ("none", TypeError, "returned None for input 0"),
            ("not a variable", TypeError, "returned ndarray .* expected a Variable"),
            ("integer", TypeError, "integer-valued gradient .*int32"),
            ("ndim", ValueError, "0-d gradient term .* 1-d input 0"),
        ],
    )
    def test_violation_is_a_clear_error(self, how, error, match):
        x = pt.dvector("x")
        with pytest.raises(error, match=match):
            grad(Contract(how)(x).sum(), x)

    def test_not_implemented_raises_null_type_error(self):
        x = pt.dvector("x")
        with pytest.raises(NullTypeGradError, match="not implemented. on purpose"):
            grad(Contract("not implemented")(x).sum(), x)

    def test_op_without_gradient(self):
        class NoGrad(Op):
            __props__ = ()

            def make_node(self, x):
                return Apply(self, [x], [x.type()])

            def perform(self, node, inputs, output_storage):
                output_storage[0][0] = inputs[0].copy()

        x = pt.dvector("x")
        with pytest.raises(NotImplementedError, match="defines no gradient"):
            grad(NoGrad()(x).sum(), x)

    def test_cost_must_be_a_scalar(self):
        x = pt.dvector("x")
        with pytest.raises(TypeError, match="cost must be a scalar"):
            grad(x * 2.0, x)
        with pytest.raises(TypeError, match="wrt\\[0\\] must be a Variable"):
            grad(x.sum(), [1.0])
        with pytest.raises(ValueError, match="needs a cost or known_grads"):
            grad(None, x)
        with pytest.raises(ValueError, match="disconnected_inputs must be one of"):
            grad(x.sum(), x, disconnected_inputs="maybe")


# --- both spellings of the rules -----------------------------------------------------------------


def _sq_grad(self, inputs, output_grads):
    return [output_grads[0] * 2.0 * inputs[0]]


def _sq_lop(self, inputs, outputs, output_grads):
    return [output_grads[0] * 2.0 * inputs[0]]


def _sq_rop(self, inputs, eval_points):
    self.seen_tangents.append(eval_points[0])
    return [None if eval_points[0] is None else eval_points[0] * 2.0 * inputs[0]]


def _sq_push(self, inputs, outputs, tangents):
    self.seen_tangents.append(tangents[0])
    return [tangents[0] * 2.0 * inputs[0]]


def _square_class(spelling):
    body = {"__props__": ()}
    if spelling == "grad":
        body.update(grad=_sq_grad, R_op=_sq_rop)
    elif spelling == "L_op":
        body.update(L_op=_sq_lop, R_op=_sq_rop)
    else:
        body.update(pullback=_sq_lop, pushforward=_sq_push)

    def __init__(self):
        self.seen_tangents = []

    def make_node(self, x):
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, out):
        out[0][0] = inputs[0] ** 2

    body.update(__init__=__init__, make_node=make_node, perform=perform)
    return type(f"Square_{spelling}", (Op,), body)


class TestSpellings:
    @pytest.mark.parametrize("spelling", ["grad", "L_op", "pullback"])
    def test_grad_lop_rop(self, spelling):
        op = _square_class(spelling)()
        x, u, v = pt.dvector("x"), pt.dvector("u"), pt.dvector("v")
        y = op(x)
        xv, uv, vv = np.array([1.0, -2.0]), np.array([0.5, 3.0]), np.array([2.0, 1.0])
        np.testing.assert_allclose(ev(grad(y.sum(), x), {x: xv}), 2 * xv)
        np.testing.assert_allclose(ev(Lop(y, x, u), {x: xv, u: uv}), 2 * xv * uv)
        np.testing.assert_allclose(ev(pullback(y, x, u), {x: xv, u: uv}), 2 * xv * uv)
        r = Rop(y, x, v, use_op_rop_implementation=True)
        np.testing.assert_allclose(ev(r, {x: xv, v: vv}), 2 * xv * vv)
        assert op.seen_tangents  # the Op's own rule was used
        r2 = Rop(y, x, v, use_op_rop_implementation=False)
        np.testing.assert_allclose(ev(r2, {x: xv, v: vv}), 2 * xv * vv)
        np.testing.assert_allclose(ev(pushforward(y, x, v), {x: xv, v: vv}), 2 * xv * vv)
        # the Op-level methods answer in either spelling
        (t,) = op.pullback([x], [y], [u])
        (t2,) = op.L_op([x], [y], [u])
        (t3,) = op.grad([x], [u])
        for term in (t, t2, t3):
            np.testing.assert_allclose(ev(term, {x: xv, u: uv}), 2 * xv * uv)

    def test_disconnected_tangents_per_spelling(self):
        """pushforward gets DisconnectedType for a tangent-less input; R_op gets None."""

        class Mul2(Op):
            __props__ = ()

            def make_node(self, a, b):
                return Apply(self, [a, b], [a.type()])

            def perform(self, node, inputs, out):
                out[0][0] = inputs[0] * inputs[1]

            def pullback(self, inputs, outputs, gs):
                return [gs[0] * inputs[1], gs[0] * inputs[0]]

        seen = []

        class WithPush(Mul2):
            def pushforward(self, inputs, outputs, tangents):
                seen.append(("push", [type(t.type).__name__ for t in tangents]))
                a, b = inputs
                ta, tb = tangents
                terms = []
                if not isinstance(ta.type, DisconnectedType):
                    terms.append(ta * b)
                if not isinstance(tb.type, DisconnectedType):
                    terms.append(a * tb)
                return [terms[0] if len(terms) == 1 else terms[0] + terms[1]]

        class WithRop(Mul2):
            def R_op(self, inputs, eval_points):
                seen.append(("rop", [None if t is None else "var" for t in eval_points]))
                a, b = inputs
                ta, tb = eval_points
                return [ta * b if tb is None else a * tb]

        a, b, t = pt.dvector("a"), pt.dvector("b"), pt.dvector("t")
        vals = {a: np.array([1.0, 2.0]), b: np.array([3.0, 4.0]), t: np.array([1.0, 1.0])}
        for op, expected in (
            (WithPush(), ("push", ["TensorType", "DisconnectedType"])),
            (WithRop(), ("rop", ["var", None])),
        ):
            seen.clear()
            r = Rop(op(a, b), a, t)
            assert seen == [expected]
            np.testing.assert_allclose(ev(r, vals), [3.0, 4.0])

    def test_rop_falls_back_without_op_rules(self):
        class NoRop(Op):
            __props__ = ()

            def make_node(self, x):
                return Apply(self, [x], [x.type()])

            def perform(self, node, inputs, out):
                out[0][0] = np.sin(inputs[0])

            def pullback(self, inputs, outputs, gs):
                return [gs[0] * pt.cos(inputs[0])]

        x, v = pt.dvector("x"), pt.dvector("v")
        y = pt.exp(NoRop()(x))
        xv, vv = np.array([0.3, 1.2]), np.array([1.0, -2.0])
        expected = np.exp(np.sin(xv)) * np.cos(xv) * vv
        np.testing.assert_allclose(ev(Rop(y, x, v), {x: xv, v: vv}), expected)
        with pytest.raises(NotImplementedError, match="neither pushforward nor R_op"):
            Rop(y, x, v, use_op_rop_implementation=True)


# --- grad's options ------------------------------------------------------------------------------


class TestGradOptions:
    def test_container_shape(self):
        x, y = pt.dscalar("x"), pt.dscalar("y")
        cost = x * y
        assert isinstance(grad(cost, x), Variable)
        assert isinstance(grad(cost, [x, y]), list)
        assert isinstance(grad(cost, (x, y)), tuple)
        assert len(grad(cost, (x,))) == 1

    def test_disconnected_inputs_policies(self):
        x, y = pt.dscalar("x"), pt.dscalar("y")
        cost = x * 2.0
        with pytest.raises(DisconnectedInputError, match="does not depend on wrt\\[1\\]"):
            grad(cost, [x, y])
        with pytest.warns(UserWarning, match="disconnected"):
            grad(cost, [x, y], disconnected_inputs="warn")
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            gx, gy = grad(cost, [x, y], disconnected_inputs="ignore")
        assert ev(gy, {y: 1.0}) == 0.0
        assert grad(cost, y, disconnected_inputs="ignore", return_disconnected="none") is None
        gd = grad(cost, y, disconnected_inputs="ignore", return_disconnected="disconnected")
        assert isinstance(gd.type, DisconnectedType)
        with pytest.raises(ValueError, match="return_disconnected"):
            grad(cost, y, return_disconnected="nothing")

    def test_integer_wrt_disconnected_gets_float_zeros(self):
        x, i = pt.dscalar("x"), pt.iscalar("i")
        g = grad(x * 2.0, i, disconnected_inputs="ignore")
        assert g.type.dtype == "float64"

    def test_null_gradients(self):
        x = pt.dscalar("x")
        cost = undefined_grad(x) * 2.0
        with pytest.raises(NullTypeGradError, match="undefined"):
            grad(cost, x)
        g = grad(cost, x, null_gradients="return")
        assert isinstance(g.type, NullType)
        # an undefined term anywhere on a path makes the total undefined
        cost2 = undefined_grad(x) * 2.0 + x * 3.0
        assert isinstance(grad(cost2, x, null_gradients="return").type, NullType)

    def test_known_grads(self):
        x = pt.dvector("x")
        y = pt.exp(x)
        z = (y * 3.0).sum()
        gy = pt.dvector("gy")
        xv, gv = np.array([0.0, 1.0]), np.array([2.0, 5.0])
        # without a cost: the pullback of gy
        np.testing.assert_allclose(ev(grad(None, x, known_grads={y: gy}), {x: xv, gy: gv}), np.exp(xv) * gv)
        # with a cost: a Variable in known_grads has exactly that gradient (the cost's
        # path through it is not added)
        np.testing.assert_allclose(ev(grad(z, x, known_grads={y: gy}), {x: xv, gy: gv}), np.exp(xv) * gv)
        assert grad(z, y, known_grads={y: gy}) is gy
        # plain numbers are accepted and cast to the variable's dtype
        xf = pt.fvector("xf")
        g = grad(None, xf, known_grads={xf * 2: np.ones(2, dtype="float64")})
        assert g.type.dtype == "float32"
        with pytest.raises(ValueError, match="is 0-d .* is 1-d"):
            grad(None, x, known_grads={y: pt.dscalar()})
        with pytest.raises(TypeError, match="integer dtype"):
            grad(None, x, known_grads={y: pt.ivector()})

    def test_consider_constant(self):
        x = pt.dscalar("x")
        y = x * x
        z = y * 3.0
        # nothing flows past y ...
        with pytest.raises(DisconnectedInputError):
            grad(z, x, consider_constant=[y])
        # ... but y itself gets its gradient
        gy, gx = grad(z, [y, x], consider_constant=[y], disconnected_inputs="ignore")
        assert ev([gy, gx], {x: 2.0}) == [3.0, 0.0]
        # a wrt that depends on another wrt: the path through it counts
        gy, gx = grad(z, [y, x])
        assert ev([gy, gx], {x: 2.0}) == [3.0, 12.0]

    def test_add_names(self):
        x = pt.dscalar("x")
        cost = (x * x).sum()
        cost.name = "loss"
        assert grad(cost, x).name == "(dloss/dx)"
        assert grad(x * x, x).name == "(dcost/dx)"
        assert grad(x * x, x, add_names=False).name is None

    def test_float32_stays_float32(self):
        x = pt.fvector("x")
        g = grad((x * 2.5).sum(), x)
        assert g.type.dtype == "float32"


# --- graph shape of the reverse pass ------------------------------------------------------------


class TestReversePassGraph:
    def test_shared_subexpressions_are_differentiated_once(self):
        a = pt.dvector("a")
        b = a + a
        c = b * b
        d = c + c
        g = grad(d.sum(), a)
        fg = FunctionGraph([a], [g], clone=True)
        before = len(fg.apply_nodes)
        merged = merge_graph(fg)
        assert merged == 0 and len(fg.apply_nodes) == before  # no duplicated work to merge
        # the raw graph adds the terms of each Variable once: one (binary) add per fan-in
        forward = set(nodes_of(d))
        back = [n for n in nodes_of(g, [a]) if n not in forward]
        adds = [n for n in back if str(n.op) == "Add"]
        assert len(adds) == 3 and all(len(n.inputs) == 2 for n in adds)
        assert len([n for n in back if str(n.op) == "Mul"]) == 1  # d(b*b)/db built once
        np.testing.assert_allclose(ev(g, {a: np.array([1.0, 2.0])}), 16 * np.array([1.0, 2.0]))
        # asked for an intermediate too, the same summed gradient is returned (not re-added)
        gb, ga = grad(d.sum(), [b, a])
        assert ga.owner.inputs == [gb, gb]

    def test_each_node_is_differentiated_once(self):
        calls = collections.Counter()

        class Counted(Op):
            __props__ = ()

            def make_node(self, x):
                return Apply(self, [x], [x.type()])

            def perform(self, node, inputs, out):
                out[0][0] = inputs[0] * 1.0

            def grad(self, inputs, gs):
                calls[inputs[0]] += 1
                return [gs[0]]

        x = pt.dscalar("x")
        y = Counted()(x)
        z = y * y + y * 3.0 + pt.exp(y)
        grad(z, x)
        assert calls == {x: 1}

    def test_unneeded_terms_are_not_built(self):
        x = pt.dscalar("x")
        w = pt.dscalar("w")
        y = pt.exp(x * w)
        g = grad(y, x)
        # the term for w (exp(x*w) * x) is not part of the graph; only x's is
        back = [n for n in nodes_of(g, [x, w]) if n not in set(nodes_of(y))]
        assert back and not any(x in n.inputs for n in back)  # w's term would be (...) * x

    def test_deep_chain_100k(self):
        x, c = pt.dscalar("x"), pt.dscalar("c")  # (a symbolic factor: constant steps fold)
        y = x
        for _ in range(100_000):
            y = y * c
        t0 = time.process_time()
        g = grad(y, x)
        spent = time.process_time() - t0
        assert spent < 20.0
        back = 0
        v = g
        while v.owner is not None:  # a chain of 100,000 muls, one per forward node
            back += 1
            v = v.owner.inputs[0]
        assert back == 100_000

    def test_steps_on_small_constants_are_computed(self):
        # the output gradient 1.0 times the constant factor: one constant, not a node per
        # term (10,000 terms v[i] * (i + 1) would make 10,000 nodes to fold later)
        v = pt.dvector("v")
        g = grad(v[0] * np.float32(3.0) + v[1] * 2, v)
        consts = [n for n in ancestors([g]) if isinstance(n, TensorConstant)]
        assert any(np.asarray(c.data).dtype == np.float64 and c.data == 3.0 for c in consts)
        assert not any(n.owner is not None and str(n.owner.op) == "Mul" for n in ancestors([g]))
        np.testing.assert_array_equal(ev(g, {v: np.zeros(3)}), [3.0, 2.0, 0.0])

    def test_deep_chain_value(self):
        x = pt.dscalar("x")
        y = x
        for _ in range(2_000):
            y = pt.sin(y) * 0.5 + y * 0.5
        g = grad(y, x)
        xv, h = 0.3, 1e-6
        f = function([x], y)
        numeric = (f(xv + h) - f(xv - h)) / (2 * h)
        np.testing.assert_allclose(ev(g, {x: xv}), numeric, rtol=1e-5)


# --- Lop / Rop ----------------------------------------------------------------------------------


class TestLopRop:
    def test_rop_matches_jacobian_times_vector(self):
        x, v = pt.dvector("x"), pt.dvector("v")
        y = pt.exp(x * 2.0) + (x * x).sum() - pt.log(x + 3.0) / 2.0
        xv, vv = RNG.uniform(-1, 1, 3), RNG.uniform(-1, 1, 3)
        jac = fd_jacobian(lambda a: ev(y, {x: a}), xv)
        for use in (None, True, False):
            r = Rop(y, x, v, use_op_rop_implementation=use)
            np.testing.assert_allclose(ev(r, {x: xv, v: vv}), jac @ vv, rtol=1e-6, atol=1e-8)

    def test_rop_through_broadcast_and_reduction(self):
        x = pt.dmatrix("x")
        v = pt.dmatrix("v")
        y = (x * 2.0).max(axis=1) + x.sum(axis=1) + x.prod(axis=1)
        xv, vv = RNG.uniform(0.5, 1.5, (2, 3)), RNG.uniform(-1, 1, (2, 3))
        jac = fd_jacobian(lambda a: ev(y, {x: a}), xv)
        expected = np.einsum("iab,ab->i", jac, vv)
        for use in (True, False):
            r = Rop(y, x, v, use_op_rop_implementation=use)
            np.testing.assert_allclose(ev(r, {x: xv, v: vv}), expected, rtol=1e-6)

    def test_rop_disconnected_outputs(self):
        x, y, v = pt.dvector("x"), pt.dvector("y"), pt.dvector("v")
        with pytest.raises(DisconnectedInputError):
            Rop(y * 2.0, x, v)
        r = Rop(y * 2.0, x, v, disconnected_outputs="ignore")
        np.testing.assert_array_equal(ev(r, {y: np.ones(2)}), [0.0, 0.0])
        assert Rop([y * 2.0], x, v, disconnected_outputs="ignore", return_disconnected="none") == [None]
        # an output that is one of wrt: its tangent
        assert Rop(x, x, v) is v

    def test_lop_is_the_transpose_of_rop(self):
        x = pt.dvector("x")
        u, v = pt.dvector("u"), pt.dvector("v")
        y = pt.tanh(x) * x.sum()
        vals = {x: RNG.uniform(-1, 1, 4), u: RNG.uniform(-1, 1, 4), v: RNG.uniform(-1, 1, 4)}
        lhs = ev((Lop(y, x, u) * v).sum(), vals)
        rhs = ev((Rop(y, x, v) * u).sum(), vals)
        np.testing.assert_allclose(lhs, rhs)

    def test_lop_of_several_outputs(self):
        x = pt.dvector("x")
        a, b = pt.exp(x), x * 3.0
        ua, ub = pt.dvector("ua"), pt.dvector("ub")
        xv = np.array([0.1, 0.2])
        g = Lop([a, b], x, [ua, ub])
        np.testing.assert_allclose(ev(g, {x: xv, ua: np.ones(2), ub: np.ones(2)}), np.exp(xv) + 3.0)
        with pytest.raises(ValueError, match="2 outputs but 1 eval_points"):
            Lop([a, b], x, [ua])


# --- jacobian / hessian -------------------------------------------------------------------------


class TestPushforwardThroughPullback:
    """The two-reverse-pass route agrees with the Ops' own pushforwards."""

    def test_a_pullback_computed_from_another_keeps_both_terms(self):
        from arignote.gradient import pushforward_through_pullback

        x, y, tx, ty = (pt.dvector(n) for n in ("x", "y", "tx", "ty"))
        out = x + pt.sum(y)  # y's pullback term is the sum of x's
        (j,) = pushforward_through_pullback([out], [x, y], [tx, ty])
        f = function([x, y, tx, ty], [j, Rop(out, [x, y], [tx, ty])], on_unused_input="ignore")
        got, direct = f(np.zeros(3), np.zeros(2), np.ones(3), np.full(2, 10.0))
        np.testing.assert_allclose(got, [21.0, 21.0, 21.0])
        np.testing.assert_allclose(direct, got)

    def test_integer_outputs_have_zero_tangents_on_both_routes(self):
        from arignote.gradient import pushforward_through_pullback

        x, t = pt.dvector("x"), pt.dvector("t")
        for out in (pt.gt(x, 0), pt.argsort(x)):
            direct = Rop(out, x, t, use_op_rop_implementation=True)
            (via,) = pushforward_through_pullback([out], [x], [t])
            for j in (direct, via):
                got = j.eval({x: np.array([1.0, -2.0]), t: np.ones(2)}, on_unused_input="ignore")
                np.testing.assert_array_equal(got, [0.0, 0.0])
        with pytest.raises(DisconnectedInputError):  # only the shape is read: disconnected
            Rop(x.shape, x, t)

    def test_a_random_generator_output_is_disconnected(self):
        from arignote.gradient import pushforward_through_pullback

        rng = arignote.shared(np.random.default_rng(0))
        mu, t = pt.dvector("mu"), pt.dvector("t")
        next_rng = pt.random.normal(mu, rng=rng).owner.outputs[0]
        for route in (
            lambda: Rop(next_rng, mu, t),
            lambda: pushforward_through_pullback([next_rng], [mu], [t]),
        ):
            with pytest.raises(DisconnectedInputError):
                route()
        assert Rop(next_rng, mu, t, disconnected_outputs="ignore") is None


class TestJacobianHessian:
    def test_jacobian_1d(self):
        x = pt.dvector("x")
        y = pt.exp(x) * x.sum() + x * x
        j = jacobian(y, x)
        xv = RNG.uniform(-1, 1, 4)
        np.testing.assert_allclose(
            ev(j, {x: xv}), fd_jacobian(lambda a: ev(y, {x: a}), xv), rtol=1e-6, atol=1e-8
        )

    def test_jacobian_2d_expression_2d_wrt(self):
        m, w = pt.dmatrix("m"), pt.dmatrix("w")
        y = pt.tanh(pt.dot(m, w)) * m.sum()
        jm, jw = jacobian(y, [m, w])
        mv, wv = RNG.uniform(-1, 1, (2, 3)), RNG.uniform(-1, 1, (3, 4))
        assert jm.type.ndim == jw.type.ndim == 4
        got_m, got_w = ev([jm, jw], {m: mv, w: wv})
        np.testing.assert_allclose(
            got_m, fd_jacobian(lambda a: ev(y, {m: a, w: wv}), mv), rtol=1e-6, atol=1e-8
        )
        np.testing.assert_allclose(
            got_w, fd_jacobian(lambda a: ev(y, {m: mv, w: a}), wv), rtol=1e-6, atol=1e-8
        )

    def test_jacobian_0d_expression_and_0d_wrt(self):
        x = pt.dvector("x")
        s = pt.dscalar("s")
        y0 = (pt.exp(x) * s).sum()  # 0-d expression: the gradient
        xv = np.array([0.1, 0.2])
        np.testing.assert_allclose(ev(jacobian(y0, x), {x: xv, s: 2.0}), 2 * np.exp(xv))
        y1 = pt.exp(x * s)  # 1-d expression, 0-d wrt: a vector
        j = jacobian(y1, s)
        assert j.type.ndim == 1
        np.testing.assert_allclose(ev(j, {x: xv, s: 2.0}), xv * np.exp(2 * xv))

    def test_jacobian_static_shapes(self):
        x = pt.tensor("x", dtype="float64", shape=(3,))
        m = pt.tensor("m", dtype="float64", shape=(2, 3))
        j = jacobian(m * x, [x, m])
        assert j[0].type.shape == (2, 3, 3)
        assert j[1].type.shape == (2, 3, 2, 3)

    def test_jacobian_graph_does_not_grow_with_outputs(self):
        def count(n):
            x = pt.tensor("x", dtype="float64", shape=(n,))
            w = pt.tensor("w", dtype="float64", shape=(n, n))
            y = pt.tanh(pt.dot(w, x)) + x * x.sum()
            j = jacobian(y, [x, w])
            ops = collections.Counter(type(node.op).__name__ for node in nodes_of(j))
            assert "Batched" not in ops  # every Op here has a batching rule
            return sum(ops.values())

        assert count(3) == count(50)

    @pytest.mark.parametrize("shapes", [((3, 4), (4, 2)), ((3, 4), (4,)), ((4,), (4, 2)), ((4,), (4,))])
    def test_vectorize_dot_of_two_batched_operands(self, shapes):
        a, b = (pt.tensor(n, dtype="float64", shape=(None,) * len(s)) for n, s in zip("ab", shapes))
        sa, sb = (pt.tensor(n, dtype="float64", shape=(None,) * (len(s) + 1)) for n, s in zip("AB", shapes))
        (y,) = batch_graph([pt.dot(a, b)], {a: sa, b: sb})
        assert not any(isinstance(n.op, Batched) for n in nodes_of(y))
        rng = np.random.default_rng(0)
        av, bv = rng.normal(size=(5, *shapes[0])), rng.normal(size=(5, *shapes[1]))
        expected = np.stack([np.dot(x, z) for x, z in zip(av, bv)])
        np.testing.assert_allclose(y.eval({sa: av, sb: bv}), expected)

    def test_jacobian_unrolled_matches(self):
        x = pt.tensor("x", dtype="float64", shape=(3,))
        y = pt.exp(x) * x.sum()
        xv = RNG.uniform(-1, 1, 3)
        a = ev(jacobian(y, x), {x: xv})
        b = ev(jacobian(y, x, vectorize=False), {x: xv})
        np.testing.assert_allclose(a, b)
        with pytest.raises(ValueError, match="static shape"):
            jacobian(pt.exp(pt.dvector()), pt.dvector(), vectorize=False)

    def test_jacobian_disconnected(self):
        x, y = pt.dvector("x"), pt.dvector("y")
        with pytest.raises(DisconnectedInputError):
            jacobian(x * 2.0, y)
        j = jacobian(x * 2.0, y, disconnected_inputs="ignore")
        assert ev(j, {x: np.ones(2), y: np.ones(3)}).shape == (2, 3)

    def test_hessian_1d(self):
        x = pt.dvector("x")
        cost = (pt.exp(x) * x.sum()).sum() + (x**3).sum()
        h = hessian(cost, x)
        xv = RNG.uniform(-1, 1, 3)
        gfun = function([x], grad(cost, x))
        np.testing.assert_allclose(ev(h, {x: xv}), fd_jacobian(gfun, xv), rtol=1e-6, atol=1e-7)

    def test_hessian_2d_and_0d(self):
        m = pt.dmatrix("m")
        s = pt.dscalar("s")
        cost = (pt.tanh(m) * m.sum(axis=0)).sum() * s + s**3
        hm, hs = hessian(cost, [m, s])
        mv = RNG.uniform(-1, 1, (2, 3))
        assert hm.type.ndim == 4 and hs.type.ndim == 0
        gm = function([m, s], grad(cost, m))
        np.testing.assert_allclose(
            ev(hm, {m: mv, s: 1.5}), fd_jacobian(lambda a: gm(a, 1.5), mv), rtol=1e-6, atol=1e-7
        )
        np.testing.assert_allclose(ev(hs, {m: mv, s: 1.5}), 6 * 1.5)

    def test_hessian_vector_product(self):
        x, p = pt.dvector("x"), pt.dvector("p")
        cost = (pt.exp(x) * x.sum()).sum()
        xv, pv = RNG.uniform(-1, 1, 3), RNG.uniform(-1, 1, 3)
        hv = hessian_vector_product(cost, x, p)
        np.testing.assert_allclose(ev(hv, {x: xv, p: pv}), ev(hessian(cost, x), {x: xv}) @ pv)

    @pytest.mark.parametrize(
        "case",
        ["concatenate", "reshape", "cumsum", "split", "alloc", "softmax", "dot", "matmul", "sort"],
    )
    def test_jacobian_through_tensor_ops(self, case):
        x = pt.dvector("x")
        build = {
            "concatenate": lambda: pt.concatenate([pt.exp(x), x * 2.0]),
            "reshape": lambda: pt.reshape(pt.exp(x), (2, 3)).sum(axis=0),
            "cumsum": lambda: pt.cumsum(pt.exp(x)),
            "split": lambda: pt.split(pt.exp(x), [2, 4], 2)[1],
            "alloc": lambda: pt.alloc(pt.exp(x), 2, 6).sum(axis=0),
            "softmax": lambda: pt.special.softmax(x),
            "dot": lambda: pt.dot(x, pt.reshape(x, (6, 1)) * pt.ones((6, 3))),
            "matmul": lambda: pt.matmul(pt.reshape(x, (2, 3)), pt.reshape(pt.exp(x), (3, 2))),
            "sort": lambda: pt.sort(x * x),
        }
        y = build[case]()
        j = jacobian(y, x)
        xv = RNG.uniform(0.1, 1.0, 6)
        np.testing.assert_allclose(ev(j, {x: xv}), fd_jacobian(lambda a: ev(y, {x: a}), xv), atol=1e-7)
        batched = [n for n in nodes_of(j) if isinstance(n.op, Batched)]
        if case != "sort":  # every Op in these gradients has a batching rule
            assert not batched

    def test_vectorize_graph_fallback_is_one_node(self):
        class RowNorm(Op):  # no batching rule: wrapped in Batched
            __props__ = ()

            def make_node(self, x):
                return Apply(self, [x], [TensorType("float64", ())()])

            def perform(self, node, inputs, out):
                out[0][0] = np.asarray(np.sqrt((inputs[0] ** 2).sum()))

        x = pt.dvector("x")
        xs = pt.dmatrix("xs")
        (y,) = batch_graph([RowNorm()(x * 2.0)], {x: xs})
        assert isinstance(y.owner.op, Batched)
        xv = RNG.uniform(-1, 1, (4, 3))
        np.testing.assert_allclose(ev(y, {xs: xv}), np.linalg.norm(2 * xv, axis=1))


# --- the gradient-changing identity Ops ----------------------------------------------------------


class TestViewOps:
    def test_forward_is_identity(self):
        x = pt.dvector("x")
        xv = np.array([1.0, -2.0])
        for f in (
            zero_grad,
            disconnected_grad,
            undefined_grad,
            lambda v: grad_clip(v, -1, 1),
            lambda v: grad_scale(v, 3),
        ):
            np.testing.assert_array_equal(ev(f(x), {x: xv}), xv)

    def test_backward_rules(self):
        x = pt.dvector("x")
        xv = np.array([1.0, -2.0])
        cost = lambda v: (v * v * 3.0).sum()  # noqa: E731  gradient 6 x
        np.testing.assert_array_equal(ev(grad(cost(zero_grad(x)), x), {x: xv}), [0.0, 0.0])
        with pytest.raises(DisconnectedInputError):
            grad(cost(disconnected_grad(x)), x)
        with pytest.raises(NullTypeGradError):
            grad(cost(undefined_grad(x)), x)
        np.testing.assert_array_equal(ev(grad(cost(grad_clip(x, -4.0, 5.0)), x), {x: xv}), [5.0, -4.0])
        np.testing.assert_array_equal(ev(grad(cost(grad_scale(x, 0.5)), x), {x: xv}), [3.0, -6.0])
        # only this path is changed
        np.testing.assert_array_equal(ev(grad(cost(zero_grad(x)) + x.sum(), x), {x: xv}), [1.0, 1.0])

    def test_grad_clip_bounds(self):
        with pytest.raises(ValueError, match="lower bound"):
            GradClip(2.0, 1.0)
        assert GradClip(-1, 1) == GradClip(-1, 1)
        assert DisconnectedGrad() == DisconnectedGrad()

    def test_rop_through_view_ops(self):
        x, v = pt.dvector("x"), pt.dvector("v")
        vals = {x: np.array([1.0, 2.0]), v: np.array([1.0, 1.0])}
        np.testing.assert_array_equal(ev(Rop(grad_scale(x, 2.0) * 3.0, x, v), vals), [6.0, 6.0])
        np.testing.assert_array_equal(ev(Rop(zero_grad(x) * 3.0, x, v), vals), [0.0, 0.0])


# --- subgraph_grad ------------------------------------------------------------------------------


class TestSubgraphGrad:
    def test_two_stages_equal_the_full_gradient(self):
        x = pt.dvector("x")
        w1, w2 = pt.dvector("w1"), pt.dvector("w2")
        h = pt.tanh(x * w1)
        cost = (pt.exp(h * w2)).sum()
        vals = {x: RNG.uniform(-1, 1, 3), w1: RNG.uniform(-1, 1, 3), w2: RNG.uniform(-1, 1, 3)}
        full = ev(grad(cost, [w1, w2]), vals)
        (g_w2,), (g_h,) = subgraph_grad(wrt=[w2], end=[h], cost=cost)
        (g_w1,), (g_x,) = subgraph_grad(wrt=[w1], end=[x], start={h: g_h})
        got = ev([g_w1, g_w2], vals)
        np.testing.assert_allclose(got[0], full[0])
        np.testing.assert_allclose(got[1], full[1])
        np.testing.assert_allclose(ev(g_x, vals), ev(grad(cost, x), vals))

    def test_details(self):
        x, w = pt.dvector("x"), pt.dvector("w")
        y = x * w
        cost = y.sum()
        wrt_g, end_g, start_g, cost_g = subgraph_grad(
            wrt=[w], end=[x], start={y: pt.ones_like(y)}, cost=cost, details=True
        )
        vals = {x: np.array([1.0, 2.0]), w: np.array([3.0, 4.0])}
        np.testing.assert_allclose(ev(wrt_g[0], vals), 2 * vals[x])
        assert start_g is not None and cost_g is not None
        with pytest.raises(ValueError, match="needs a cost or start"):
            subgraph_grad(wrt=[w], end=[x])


# --- verify_grad ----------------------------------------------------------------------------------


class WrongSquare(Op):
    """``x ** 2`` whose gradient is wrong at element ``bad`` (3x instead of 2x)."""

    __props__ = ("bad",)

    def __init__(self, bad=None):
        self.bad = bad

    def make_node(self, x):
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, out):
        out[0][0] = inputs[0] ** 2

    def grad(self, inputs, output_grads):
        (x,) = inputs
        (g,) = output_grads
        if self.bad is None:
            return [g * 2.0 * x]
        mask = np.zeros(3)
        mask[self.bad] = 1.0
        return [g * x * (2.0 + pt.constant(mask))]


class TestVerifyGrad:
    @pytest.mark.parametrize("dtype", ["float64", "float32"])
    def test_correct_gradients_pass(self, dtype):
        rng = np.random.default_rng(1)
        pt_ = [rng.uniform(0.5, 1.5, (2, 3)).astype(dtype), rng.uniform(0.5, 1.5, (3,)).astype(dtype)]
        verify_grad(lambda a, b: pt.exp(a) * b + pt.log(a) / b, pt_, rng=rng)
        verify_grad(lambda a, b: pt.tanh(pt.dot(a, b)) ** 2, pt_, rng=rng)
        verify_grad(lambda a, b: (a * b).max(axis=1) + a.prod(axis=0).sum(), pt_, rng=rng)

    def test_wrong_gradient_raises_naming_the_worst_element(self):
        x = np.array([0.5, 1.0, 2.0])
        verify_grad(lambda v: WrongSquare()(v), [x])
        with pytest.raises(GradientError) as info:
            verify_grad(lambda v: WrongSquare(bad=2)(v), [x])
        err = info.value
        assert err.arg == 0 and err.err_pos == (2,) and err.shape == (3,)
        assert err.abs_err > err.abs_tol and err.rel_err > err.rel_tol
        assert np.isclose(err.val1 / err.val2, 1.5)
        assert "worst at index (2,)" in str(err)

    def test_wrong_gradient_float32(self):
        x = np.array([0.5, 1.0, 2.0], dtype="float32")
        verify_grad(lambda v: WrongSquare()(v) * 2.0, [x])
        with pytest.raises(GradientError):
            verify_grad(lambda v: WrongSquare(bad=0)(v) * 2.0, [x])

    def test_tolerances_and_inputs(self):
        x = np.array([0.5, 1.0, 2.0])
        verify_grad(lambda v: WrongSquare(bad=1)(v), [x], abs_tol=10.0, rel_tol=10.0)
        with pytest.raises(TypeError, match="only real float inputs"):
            verify_grad(lambda v: v * 2, [np.array([1, 2])])

    def test_numeric_grad(self):
        ng = numeric_grad(lambda a: float((a**3).sum()), [np.array([1.0, 2.0])])
        np.testing.assert_allclose(ng.gf[0], [3.0, 12.0], rtol=1e-8)
