"""Gradients through scan against finite differences (a small RNN, a cumulative product
with zeros, a second-order recurrence), truncate_gradient, the pushforward, jacobian and
hessian of scan outputs, random draws inside the loop, and a 100,000-step recurrence."""

from __future__ import annotations

import numpy as np
import pytest

import arignote
import arignote.tensor as pt
from arignote.gradient import Rop, grad, hessian, jacobian, verify_grad
from arignote.scan.op import Scan

RNG = np.random.default_rng(42)


def _rnn(x, h0, W, U):
    hs, _ = arignote.scan(
        lambda xt, h, W, U: pt.tanh(pt.dot(xt, U) + pt.dot(h, W)),
        sequences=[x],
        outputs_info=[h0],
        non_sequences=[W, U],
    )
    return hs


def test_small_rnn_gradient_by_finite_differences():
    xv = RNG.normal(size=(5, 2))
    h0v = RNG.normal(size=3)
    Wv = RNG.normal(size=(3, 3)) * 0.5
    Uv = RNG.normal(size=(2, 3))
    verify_grad(lambda x, h0, W, U: (_rnn(x, h0, W, U) ** 2).sum(), [xv, h0v, Wv, Uv], rng=RNG)


def test_rnn_gradient_matches_numpy_bptt():
    x, h0, W, U = pt.dmatrix("x"), pt.dvector("h0"), pt.dmatrix("W"), pt.dmatrix("U")
    cost = _rnn(x, h0, W, U)[-1].sum()
    f = arignote.function([x, h0, W, U], grad(cost, [W, U, h0]))
    xv, h0v, Wv, Uv = (
        RNG.normal(size=(4, 2)),
        RNG.normal(size=3),
        RNG.normal(size=(3, 3)),
        RNG.normal(size=(2, 3)),
    )
    hs = [h0v]
    for t in range(4):
        hs.append(np.tanh(xv[t] @ Uv + hs[-1] @ Wv))
    gh = np.ones(3)
    gW, gU = np.zeros_like(Wv), np.zeros_like(Uv)
    for t in reversed(range(4)):
        gz = gh * (1 - hs[t + 1] ** 2)
        gW += np.outer(hs[t], gz)
        gU += np.outer(xv[t], gz)
        gh = Wv @ gz
    out = f(xv, h0v, Wv, Uv)
    np.testing.assert_allclose(out[0], gW)
    np.testing.assert_allclose(out[1], gU)
    np.testing.assert_allclose(out[2], gh)


def test_cumulative_product_with_zeros():
    def cumprod(v):
        ps, _ = arignote.scan(lambda a, p: p * a, sequences=[v], outputs_info=[pt.constant(np.float64(1.0))])
        return ps

    v = pt.dvector("v")
    xv = np.array([2.0, 0.0, 3.0, -1.5, 0.0, 4.0])
    np.testing.assert_allclose(arignote.function([v], cumprod(v))(xv), np.cumprod(xv))
    g = arignote.function([v], grad(cumprod(v).sum(), v))(xv)
    eps = 1e-6
    numeric = [
        (np.cumprod(xv + eps * e).sum() - np.cumprod(xv - eps * e).sum()) / (2 * eps) for e in np.eye(len(xv))
    ]
    np.testing.assert_allclose(g, numeric, atol=1e-6)
    verify_grad(lambda v: cumprod(v).sum(), [np.array([2.0, 0.0, 3.0, 0.5])], rng=RNG)


def test_second_order_recurrence():
    def second_order(init, a, b):
        xs, _ = arignote.scan(
            lambda x2, x1, a, b: a * x1 + b * x2 + 0.1 * x1 * x2,
            outputs_info=[{"initial": init, "taps": [-2, -1]}],
            non_sequences=[a, b],
            n_steps=6,
        )
        return (xs**2).sum()

    verify_grad(second_order, [np.array([0.3, -0.2]), np.array(0.7), np.array(0.4)], rng=RNG)


def test_sequence_taps_gradient():
    def f(v, w):
        zs, _ = arignote.scan(
            lambda a, b, c, w: a * b + w * c, sequences=[{"input": v, "taps": [-1, 0, 2]}], non_sequences=[w]
        )
        return (zs**2).sum()

    verify_grad(f, [RNG.normal(size=7), np.array(0.6)], rng=RNG)


def test_nit_sot_and_several_outputs_gradient():
    def f(x, h0):
        (h, y), _ = arignote.scan(
            lambda xt, h: [h * 0.9 + xt, pt.sin(h) * xt], sequences=[x], outputs_info=[h0, None]
        )
        return h.sum() + (y**2).sum()

    verify_grad(f, [RNG.normal(size=5), np.array(0.2)], rng=RNG)


def test_truncate_gradient():
    x0 = pt.dscalar("x0")
    w = pt.dscalar("w")
    q = pt.dvector("q")
    ys, _ = arignote.scan(
        lambda a, h, w: h * w + a, sequences=[q], outputs_info=[x0], non_sequences=[w], truncate_gradient=2
    )
    gq, gx0, gw = arignote.function([q, x0, w], grad(ys[-1], [q, x0, w]))(np.arange(1.0, 6.0), 1.0, 0.5)
    # only the last 2 steps are back-propagated through
    np.testing.assert_allclose(gq, [0, 0, 0, 0.5, 1.0])
    assert float(gx0) == 0.0
    # h3 = states before the last two steps; y = (h3 * w + q3) * w + q4
    h = 1.0
    hs = [h]
    for a in np.arange(1.0, 6.0):
        h = h * 0.5 + a
        hs.append(h)
    np.testing.assert_allclose(gw, hs[3] * 0.5 + (hs[3] * 0.5 + 4.0))


def test_gradient_through_until_loop():
    from arignote.scan.utils import until

    x0 = pt.dscalar("x0")
    ys, _ = arignote.scan(lambda a: (a * 1.5, until(a > 5.0)), outputs_info=[x0], n_steps=50)
    f = arignote.function([x0], [ys, grad(ys.sum(), x0)])
    vals, g = f(1.0)
    k = len(vals)
    np.testing.assert_allclose(g, sum(1.5 ** (i + 1) for i in range(k)))


def test_rop_matches_jacobian_vector_product():
    x, h0 = pt.dvector("x"), pt.dscalar("h0")
    w = pt.dscalar("w")
    hs, _ = arignote.scan(
        lambda a, h, w: pt.tanh(h * w + a), sequences=[x], outputs_info=[h0], non_sequences=[w]
    )
    vx, vh, vw = pt.dvector("vx"), pt.dscalar("vh"), pt.dscalar("vw")
    jv = Rop(hs, [x, h0, w], [vx, vh, vw])
    f = arignote.function([x, h0, w, vx, vh, vw], jv)
    J = arignote.function([x, h0, w], jacobian(hs, [x, h0, w]))
    args = [RNG.normal(size=4), np.float64(0.3), np.float64(0.8)]
    tans = [RNG.normal(size=4), np.float64(0.5), np.float64(-1.0)]
    Jx, Jh, Jw = J(*args)
    expected = Jx @ tans[0] + Jh * tans[1] + Jw * tans[2]
    np.testing.assert_allclose(f(*args, *tans), expected)


def test_jacobian_and_hessian_of_scan_output():
    x = pt.dvector("x")
    ps, _ = arignote.scan(lambda a, p: p * a, sequences=[x], outputs_info=[pt.constant(np.float64(1.0))])
    xv = np.array([0.5, 2.0, -1.0])
    J = arignote.function([x], jacobian(ps, x))(xv)
    expected = np.zeros((3, 3))
    for i in range(3):
        for j in range(i + 1):
            expected[i, j] = np.prod(xv[: i + 1]) / xv[j]
    np.testing.assert_allclose(J, expected)
    H = arignote.function([x], hessian(ps[-1], x))(xv)
    expected_h = np.zeros((3, 3))
    for i in range(3):
        for j in range(3):
            if i != j:
                expected_h[i, j] = np.prod(xv) / (xv[i] * xv[j])
    np.testing.assert_allclose(H, expected_h)


def test_gradient_with_random_draws_in_the_loop():
    rng = arignote.shared(np.random.default_rng(9), name="rng")

    def step(r, h, w):
        next_r, z = pt.random.normal(0.0, 1.0, rng=r, return_next_rng=True)
        return next_r, h * w * z

    w = pt.dscalar("w")
    (rngs, hs), _ = arignote.scan(
        step, outputs_info=[rng, pt.constant(np.float64(1.0))], non_sequences=[w], n_steps=4
    )
    f = arignote.function([w], [hs, grad(hs[-1], w)])
    vals, g = f(0.7)
    zs = np.random.default_rng(9).normal(size=4)
    np.testing.assert_allclose(vals, np.cumprod(0.7 * zs))
    np.testing.assert_allclose(g, 4 * 0.7**3 * np.prod(zs))


def test_long_recurrence_and_its_gradient_without_recursion_error():
    x0 = pt.dscalar("x0")
    a = pt.dscalar("a")
    xs, _ = arignote.scan(lambda x, a: x * a + 1.0, outputs_info=[x0], non_sequences=[a], n_steps=100_000)
    f = arignote.function([x0, a], [xs[-1], *grad(xs[-1], [x0, a])])
    last, gx0, ga = f(0.0, 0.5)
    assert last == pytest.approx(2.0)
    assert float(gx0) == pytest.approx(0.0)
    assert float(ga) == pytest.approx(4.0)  # d/da of sum_k a^k at the fixed point: 1 / (1 - a)^2


def test_plain_gradient_keeps_only_last_carry():
    x, h0, W, U = pt.dmatrix("x"), pt.dvector("h0"), pt.dmatrix("W"), pt.dmatrix("U")
    g = grad(_rnn(x, h0, W, U).sum(), W)
    f = arignote.function([x, h0, W, U], g)
    keeps = [n.op.info.keep for n in f.maker.fgraph.apply_nodes if isinstance(n.op, Scan)]
    assert any(k and k[0] == 1 for k in keeps)  # the backward scan's weight carry keeps one row


@pytest.mark.parametrize("length", [12, 10])
def test_scan_checkpoints_matches_scan_and_its_gradient(length):
    from arignote.scan.checkpoints import scan_checkpoints

    x, h0, W = pt.dmatrix("x"), pt.dvector("h0"), pt.dmatrix("W")

    def step(xt, h, W):
        return pt.tanh(xt + pt.dot(h, W))

    plain, _ = arignote.scan(step, sequences=[x], outputs_info=[h0], non_sequences=[W])
    ckpt, _ = scan_checkpoints(step, sequences=[x], outputs_info=[h0], non_sequences=[W], save_every_N=4)
    cost_a, cost_b = plain[-1].sum(), ckpt[-1].sum()
    f = arignote.function([x, h0, W], [cost_a, cost_b, *grad(cost_a, [W, h0, x]), *grad(cost_b, [W, h0, x])])
    out = f(RNG.normal(size=(length, 3)), RNG.normal(size=3), RNG.normal(size=(3, 3)) * 0.5)
    np.testing.assert_allclose(out[0], out[1])
    for a, b in zip(out[2:5], out[5:]):
        np.testing.assert_allclose(a, b)


def test_scan_checkpoints_rejects_taps():
    from arignote.scan.checkpoints import scan_checkpoints

    v = pt.dvector("v")
    with pytest.raises(ValueError, match="only taps"):
        scan_checkpoints(lambda a, b: a + b, sequences=[{"input": v, "taps": [-1, 0]}], save_every_N=2)


def test_nested_scan_gradient():
    def f(m, w):
        def row(r, w):
            acc, _ = arignote.scan(
                lambda a, s, w: s * w + a,
                sequences=[r],
                outputs_info=[pt.constant(np.float64(0.0))],
                non_sequences=[w],
            )
            return acc[-1]

        ys, _ = arignote.scan(row, sequences=[m], non_sequences=[w])
        return (ys**2).sum()

    verify_grad(f, [RNG.normal(size=(3, 4)), np.array(0.7)], rng=RNG)


def test_random_stream_draws_reused_by_the_gradient():
    srng = pt.random.RandomStream(3)
    w = pt.dscalar("w")
    hs, up = arignote.scan(
        lambda h, w: h * w + srng.normal(),
        outputs_info=[pt.constant(np.float64(0.0))],
        non_sequences=[w],
        n_steps=5,
    )
    vals, g = arignote.function([w], [hs, grad(hs[-1], w)], updates=up)(0.5)
    noise = [vals[0]] + [vals[i] - vals[i - 1] * 0.5 for i in range(1, 5)]

    def last(wv):
        h = 0.0
        for z in noise:
            h = h * wv + z
        return h

    assert float(g) == pytest.approx((last(0.5 + 1e-6) - last(0.5 - 1e-6)) / 2e-6, rel=1e-6)
