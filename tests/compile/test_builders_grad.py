"""OpFromGraph gradients: the inner graph's pullback and pushforward, the overrides,
disconnected inputs and outputs, higher derivatives, and the reuse of the rules."""

from __future__ import annotations

import numpy as np
import pytest

import arignote.tensor as pt
from arignote import function, shared
from arignote.compile.builders import OpFromGraph
from arignote.gradient import (
    DisconnectedInputError,
    DisconnectedType,
    NullTypeGradError,
    Rop,
    disconnected_type,
    grad,
    grad_undefined,
    hessian,
    verify_grad,
)
from arignote.graph.null_type import NullType
from arignote.graph.utils import MissingInputError
from tests.tensor.test_grad_ops import _check_pushforward, check_grad

DTYPES = ["float64", "float32"]
RNG = np.random.default_rng(7)


def _vec(n: int = 3, dtype: str = "float64") -> np.ndarray:
    return RNG.normal(size=n).astype(dtype)


def _ofg_nodes(f: object) -> list:
    return [n for n in f.maker.fgraph.toposort() if isinstance(n.op, OpFromGraph)]


def _two_output_op(dtype: str) -> OpFromGraph:
    x, y = pt.vector("x", dtype=dtype), pt.vector("y", dtype=dtype)
    return OpFromGraph([x, y], [x * y + pt.exp(x), pt.sum(x) * pt.tanh(y)], name="two")


# --- the default rule against finite differences -----------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_pullback_matches_finite_differences(dtype):
    op = _two_output_op(dtype)
    a, b = pt.vector("a", dtype=dtype), pt.vector("b", dtype=dtype)

    def build(a, b):
        o0, o1 = op(a, b)
        return o0 * 2 + o1

    got = check_grad(build, [(a, _vec(dtype=dtype)), (b, _vec(dtype=dtype))])
    assert [g.dtype for g in got] == [dtype, dtype]


@pytest.mark.parametrize("dtype", DTYPES)
def test_pullback_of_each_output_alone(dtype):
    op = _two_output_op(dtype)
    a, b = pt.vector("a", dtype=dtype), pt.vector("b", dtype=dtype)
    values = [(a, _vec(dtype=dtype)), (b, _vec(dtype=dtype))]
    check_grad(lambda a, b: op(a, b)[0], values)
    check_grad(lambda a, b: op(a, b)[1], values)
    # one rule per pattern of connected output gradients, built once
    assert set(op._pullback_cache) == {(True, False), (False, True)}


@pytest.mark.parametrize("dtype", DTYPES)
def test_verify_grad(dtype):
    x = pt.matrix("x", dtype=dtype)
    op = OpFromGraph([x], [pt.tanh(x) @ x.T])
    verify_grad(lambda m: op(m), [RNG.normal(size=(3, 2)).astype(dtype)], rng=np.random.default_rng(0))


def test_seed_spellings_l_op_and_r_op():
    x = pt.dvector("x")
    op = OpFromGraph([x], [x**3])
    a, g, t = pt.dvectors("a", "g", "t")
    (out,) = op(a, return_list=True)
    (lop,) = op.L_op([a], [out], [g])
    (rop,) = op.R_op([a], [t])
    av, gv, tv = _vec(), _vec(), _vec()
    np.testing.assert_allclose(function([a, g], lop)(av, gv), 3 * av**2 * gv)
    np.testing.assert_allclose(function([a, t], rop)(av, tv), 3 * av**2 * tv)


def test_pullback_when_an_output_feeds_another():
    x = pt.dvector("x")
    h = pt.sin(x)
    op = OpFromGraph([x], [h, h * h, x])
    a = pt.dvector("a")
    check_grad(lambda a: op(a)[0] + op(a)[1] * 3 + op(a)[2], [(a, _vec())])


def test_pullback_with_shared_variable():
    s = shared(np.array([0.5, -1.0, 2.0]), name="s")
    x = pt.dvector("x")
    op = OpFromGraph([x], [pt.exp(x * s)])
    a = pt.dvector("a")
    av = _vec()
    check_grad(lambda a: op(a), [(a, av)])
    gs = function([a], grad(op(a).sum(), s))(av)
    np.testing.assert_allclose(gs, av * np.exp(av * s.get_value()))


def test_nested_op_pullback():
    x, y = pt.dvectors("x", "y")
    inner = OpFromGraph([x, y], [x * pt.exp(y)])
    outer = OpFromGraph([x, y], [inner(inner(x, y), x * y)])
    a, b = pt.dvectors("a", "b")
    check_grad(lambda a, b: outer(a, b), [(a, _vec() * 0.3), (b, _vec() * 0.3)])


def test_reused_subexpressions():
    x, y = pt.dvectors("x", "y")
    op = OpFromGraph([x, y], [x * pt.sin(y) + y])
    a = pt.dvector("a")

    def build(a):
        b = op(a, a)
        return op(b, b)

    check_grad(build, [(a, _vec())])


def test_second_derivative():
    x = pt.dscalar("x")
    op = OpFromGraph([x], [pt.sin(x) * x**2])
    a = pt.dscalar("a")
    g = grad(op(a), a)
    gg = grad(g, a)
    f = function([a], [g, gg])
    av = 0.7
    d1 = np.cos(av) * av**2 + 2 * av * np.sin(av)
    d2 = -np.sin(av) * av**2 + 4 * av * np.cos(av) + 2 * np.sin(av)
    np.testing.assert_allclose(f(av), [d1, d2])
    check_grad(lambda a: grad(op(a), a), [(a, np.array(0.7))])


def test_hessian_through_an_op():
    x = pt.dvector("x")
    op = OpFromGraph([x], [pt.sum(pt.exp(x) * x[::-1])])
    a = pt.dvector("a")
    h = function([a], hessian(op(a), a))
    av = _vec()
    gfun = function([a], grad(op(a), a))
    eps = 1e-6
    numeric = np.stack([(gfun(av + eps * e) - gfun(av - eps * e)) / (2 * eps) for e in np.eye(3)], axis=1)
    np.testing.assert_allclose(h(av), numeric, rtol=1e-6, atol=1e-8)


def test_gradient_rule_is_an_op_from_graph_built_once():
    x, y = pt.dvectors("x", "y")
    op = OpFromGraph([x, y], [x * y])
    a, b, c = pt.dvectors("a", "b", "c")
    ga = grad(op(a, b).sum(), a)
    gc = grad(op(c, a).sum(), c)
    assert isinstance(ga.owner.op, OpFromGraph)
    assert ga.owner.op is gc.owner.op
    assert len(op._pullback_cache) == 1


def test_inline_gradients_are_inlined_too():
    x = pt.dvector("x")
    op = OpFromGraph([x], [pt.exp(x) * x], inline=True)
    a = pt.dvector("a")
    f = function([a], grad(op(a).sum(), a))
    assert _ofg_nodes(f) == []
    av = _vec()
    np.testing.assert_allclose(f(av), np.exp(av) * (av + 1))


@pytest.mark.parametrize("dtype", DTYPES)
def test_pushforward_matches_finite_differences(dtype):
    op = _two_output_op(dtype)
    a, b = pt.vector("a", dtype=dtype), pt.vector("b", dtype=dtype)
    av, bv, ta, tb = (_vec(dtype=dtype) for _ in range(4))
    eps = 1e-6 if dtype == "float64" else 1e-2
    for k in range(2):
        out = op(a, b)[k]
        if dtype == "float64":
            _check_pushforward(out, [a, b], [av, bv], [ta, tb], eps=eps)
            _check_pushforward(out, [a, b], [av, bv], [None, tb], eps=eps)
        jvp = Rop(out, [a, b], [pt.constant(ta), pt.constant(tb)], use_op_rop_implementation=True)
        got = function([a, b], jvp)(av, bv)
        assert got.dtype == dtype
        fk = function([a, b], out)
        numeric = (fk(av + eps * ta, bv + eps * tb) - fk(av - eps * ta, bv - eps * tb)) / (2 * eps)
        tol = 1e-6 if dtype == "float64" else 3e-2
        np.testing.assert_allclose(got, numeric, rtol=tol, atol=tol)


def test_pushforward_with_shared_variable_and_missing_tangents():
    s = shared(np.array([1.0, 2.0, 3.0]), name="s")
    x, y = pt.dvectors("x", "y")
    op = OpFromGraph([x, y], [x * s, y * 2])
    a, b, t = pt.dvectors("a", "b", "t")
    o0, o1 = op(a, b)
    j0 = Rop(o0, a, t, use_op_rop_implementation=True)
    np.testing.assert_allclose(function([t], j0)(np.ones(3)), [1.0, 2.0, 3.0])
    with pytest.raises(DisconnectedInputError):
        Rop(o1, a, t, use_op_rop_implementation=True)
    rule = op.pushforward(list(o0.owner.inputs), [o0, o1], [None, t, disconnected_type()])
    assert isinstance(rule[0].type, DisconnectedType)
    np.testing.assert_allclose(function([t], rule[1])(np.ones(3)), [2.0, 2.0, 2.0])
    undefined = NullType("tangent of a undefined")()
    rule = op.pushforward(list(o0.owner.inputs), [o0, o1], [undefined, t, None])
    assert rule[0] is undefined  # x's tangent is undefined: so is x * s's
    np.testing.assert_allclose(function([t], rule[1])(np.ones(3)), [2.0, 2.0, 2.0])


# --- overrides -------------------------------------------------------------------------------


def test_straight_through_override():
    x = pt.dvector("x")
    ste = OpFromGraph([x], [pt.round(x)], lop_overrides=lambda inps, outs, gs: [gs[0]])
    a = pt.dvector("a")
    w = np.array([1.0, -2.0, 3.0])
    av = np.array([0.4, 1.6, -2.2])
    f = function([a], [ste(a), grad((ste(a) * w).sum(), a)])
    value, g = f(av)
    np.testing.assert_allclose(value, np.round(av))
    np.testing.assert_allclose(g, w)  # the identity's gradient, not round's zero


@pytest.mark.parametrize("spelling", ["lop_overrides", "pullback"])
def test_clipped_gradient_override(spelling):
    x = pt.dvector("x")
    clip = OpFromGraph([x], [x * 1.0], **{spelling: lambda i, o, g: [pt.clip(g[0], -1.0, 1.0)]})
    a = pt.dvector("a")
    w = np.array([0.5, -3.0, 7.0])
    g = function([a], grad((clip(a) * w).sum(), a), on_unused_input="ignore")(_vec())
    np.testing.assert_allclose(g, np.clip(w, -1, 1))


def test_override_using_the_outputs():
    x = pt.dvector("x")

    def sigmoid_grad(inputs, outputs, grads):
        (o,) = outputs
        return [grads[0] * o * (1 - o)]

    sig = OpFromGraph([x], [1 / (1 + pt.exp(-x))], lop_overrides=sigmoid_grad)
    a = pt.dvector("a")
    check_grad(lambda a: sig(a), [(a, _vec())])
    out = sig(a)
    g = grad(out.sum(), a)
    assert out in g.owner.inputs  # the gradient reads the forward output, not a recomputation


def test_override_list():
    x, y = pt.dvectors("x", "y")
    op = OpFromGraph([x, y], [x * y], lop_overrides=[None, lambda i, o, g: g[0] * 100.0])
    a, b = pt.dvectors("a", "b")
    av, bv = _vec(), _vec()
    ga, gb = function([a, b], grad(op(a, b).sum(), [a, b]))(av, bv)
    np.testing.assert_allclose(ga, bv)  # the default rule
    np.testing.assert_allclose(gb, np.full(3, 100.0))


def test_override_list_with_null_and_disconnected_entries():
    x, y = pt.dvectors("x", "y")
    a, b = pt.dvectors("a", "b")
    av, bv = _vec(), _vec()
    null = OpFromGraph([x, y], [x * y], lop_overrides=[None, NullType("no gradient for y")()])
    with pytest.raises(NullTypeGradError, match="no gradient for y"):
        grad(null(a, b).sum(), b)
    np.testing.assert_allclose(function([a, b], grad(null(a, b).sum(), a))(av, bv), bv)
    disc = OpFromGraph([x, y], [x * y], lop_overrides=[None, disconnected_type()])
    assert disc.connection_pattern(None) == [[True], [False]]
    with pytest.raises(DisconnectedInputError):
        grad(disc(a, b).sum(), b)
    gb = grad(disc(a, b).sum(), b, disconnected_inputs="ignore")
    np.testing.assert_allclose(function([b], gb)(bv), np.zeros(3))
    np.testing.assert_allclose(function([a, b], grad(disc(a, b).sum(), a))(av, bv), bv)


def test_override_callable_returning_special_terms():
    x, y = pt.dvectors("x", "y")
    op = OpFromGraph(
        [x, y],
        [x * y],
        lop_overrides=lambda i, o, g: [g[0] * 2.0, grad_undefined("op", 1, i[1], "by design")],
    )
    a, b = pt.dvectors("a", "b")
    with pytest.raises(NullTypeGradError, match="by design"):
        grad(op(a, b).sum(), b)
    g = function([a, b], grad(op(a, b).sum(), a), on_unused_input="ignore")(_vec(), _vec())
    np.testing.assert_allclose(g, np.full(3, 2.0))
    # a callable's DisconnectedType term for a connected input: no gradient flows, a zero
    op2 = OpFromGraph([x, y], [x * y], lop_overrides=lambda i, o, g: [g[0], disconnected_type()])
    gb = function([a, b], grad(op2(a, b).sum(), b), on_unused_input="ignore")(_vec(), _vec())
    np.testing.assert_allclose(gb, np.zeros(3))


def test_op_from_graph_as_override():
    x, y = pt.dvectors("x", "y")
    ox, g = pt.dvectors("o", "g")
    custom = OpFromGraph([x, y, ox, g], [g * 10.0, g * y])
    op = OpFromGraph([x, y], [x * y], lop_overrides=custom)
    a, b = pt.dvectors("a", "b")
    av, bv = _vec(), _vec()
    ga, gb = function([a, b], grad(op(a, b).sum(), [a, b]))(av, bv)
    np.testing.assert_allclose(ga, np.full(3, 10.0))
    np.testing.assert_allclose(gb, bv)
    bad = OpFromGraph([x, y], [x * y], lop_overrides=OpFromGraph([x, g], [g]))
    with pytest.raises(
        ValueError, match="takes 2 inputs; it must take the inputs, outputs and output gradients: 4"
    ):
        grad(bad(a, b).sum(), a)


def test_override_sees_disconnected_output_gradients():
    x = pt.dvector("x")
    seen = []

    def rule(inputs, outputs, grads):
        seen.append([isinstance(g.type, DisconnectedType) for g in grads])
        live = [g for g in grads if not isinstance(g.type, DisconnectedType)]
        return [live[0] * 3.0]

    op = OpFromGraph([x], [x * 2, x * 5], lop_overrides=rule)
    a = pt.dvector("a")
    g = function([a], grad(op(a)[1].sum(), a), on_unused_input="ignore")(_vec())
    assert seen == [[True, False]]
    np.testing.assert_allclose(g, np.full(3, 3.0))


def test_rop_overrides():
    x, y = pt.dvectors("x", "y")
    a, b, ta, tb = pt.dvectors("a", "b", "ta", "tb")
    av, bv, tav, tbv = _vec(), _vec(), _vec(), _vec()

    def jvp(op, k=None):
        out = op(a, b) if k is None else op(a, b)[k]
        res = Rop(out, [a, b], [ta, tb], use_op_rop_implementation=True)
        return function([a, b, ta, tb], res, on_unused_input="ignore")(av, bv, tav, tbv)

    scaled = OpFromGraph([x, y], [x * y], rop_overrides=lambda i, t: [t[0] * 100.0])
    np.testing.assert_allclose(jvp(scaled), tav * 100)
    both = OpFromGraph([x, y], [x * y, x + y], pushforward=[None, lambda i, t: t[1] * 3.0])
    np.testing.assert_allclose(jvp(both, 0), tav * bv + av * tbv)  # the default rule
    np.testing.assert_allclose(jvp(both, 1), tbv * 3)
    ex, ey = pt.dvectors("ex", "ey")
    custom = OpFromGraph([x, y, ex, ey], [ex - ey])
    via_op = OpFromGraph([x, y], [x * y], rop_overrides=custom)
    np.testing.assert_allclose(jvp(via_op), tav - tbv)
    undefined = OpFromGraph([x, y], [x * y, x - y], rop_overrides=[NullType("no jvp")(), None])
    res = undefined.pushforward([a, b], undefined(a, b), [ta, tb])
    assert isinstance(res[0].type, NullType)
    np.testing.assert_allclose(function([ta, tb], res[1])(tav, tbv), tav - tbv)


# --- errors in overrides ------------------------------------------------------------------------


def test_override_errors():
    x, y = pt.dvectors("x", "y")
    a, b = pt.dvectors("a", "b")
    with pytest.raises(TypeError, match="lop_overrides must be None, an OpFromGraph, a callable or a list"):
        OpFromGraph([x], [x], lop_overrides=3)
    with pytest.raises(TypeError, match=r"lop_overrides\[1\] must be None .* got float 3.0"):
        OpFromGraph([x, y], [x * y], lop_overrides=[None, 3.0])
    with pytest.raises(ValueError, match="lop_overrides has 1 entries, expected 2"):
        OpFromGraph([x, y], [x * y], lop_overrides=[None])
    with pytest.raises(ValueError, match="rop_overrides has 2 entries, expected 1"):
        OpFromGraph([x, y], [x * y], rop_overrides=[None, None])
    with pytest.raises(ValueError, match="not both"):
        OpFromGraph([x], [x], lop_overrides=lambda *a: a, pullback=lambda *a: a)
    cases = [
        (lambda i, o, g: g[0], TypeError, "must return a list"),
        (lambda i, o, g: [g[0]], ValueError, "must return a list of 2 entries, got 1"),
        (
            lambda i, o, g: [g[0], None],
            TypeError,
            r"returned NoneType None for entry 1.*disconnected_type\(\)",
        ),
        (lambda i, o, g: [g[0] * a, g[0]], MissingInputError, "uses a, which is none of the Variables"),
    ]
    for rule, err, match in cases:
        op = OpFromGraph([x, y], [x * y], lop_overrides=rule)
        with pytest.raises(err, match=match):
            grad(op(a, b).sum(), a)


# --- disconnected inputs --------------------------------------------------------------------


def test_unused_and_integer_inputs():
    x, y = pt.dvectors("x", "y")
    k = pt.lscalar("k")
    op = OpFromGraph([x, y, k], [x * pt.cast(k, "float64")])
    assert op.connection_pattern(None) == [[True], [False], [True]]
    a, b = pt.dvectors("a", "b")
    kv = pt.lscalar("kv")
    with pytest.raises(DisconnectedInputError):
        grad(op(a, b, kv).sum(), b)
    ga, gb = grad(op(a, b, kv).sum(), [a, b], disconnected_inputs="ignore")
    f = function([a, b, kv], [ga, gb], on_unused_input="ignore")
    got_a, got_b = f(_vec(), _vec(), 4)
    np.testing.assert_allclose(got_a, np.full(3, 4.0))
    np.testing.assert_allclose(got_b, np.zeros(3))
    # an input used only by the gradient override is connected only if the pattern says so
    over = OpFromGraph(
        [x, y],
        [x * 2],
        lop_overrides=lambda i, o, g: [g[0] * 2, g[0] * 3],
        connection_pattern=[[True], [True]],
    )
    gy = function([a, b], grad(over(a, b).sum(), b), on_unused_input="ignore")(_vec(), _vec())
    np.testing.assert_allclose(gy, np.full(3, 3.0))


def test_pullback_called_directly_with_disconnected_gradients():
    x = pt.dvector("x")
    y = pt.dvector("y")
    op = OpFromGraph([x, y], [x * 2, y * 3])
    a, b = pt.dvectors("a", "b")
    outs = op(a, b)
    terms = op.pullback([a, b], outs, [disconnected_type(), pt.constant(np.ones(3))])
    assert isinstance(terms[0].type, DisconnectedType)
    np.testing.assert_allclose(function([], terms[1])(), np.full(3, 3.0))
    with pytest.raises(ValueError, match="takes 2 output gradients, got 1"):
        op.pullback([a, b], outs, [disconnected_type()])
