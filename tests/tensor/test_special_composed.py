"""``tensor.special``'s elementwise functions (beta, betaln, poch, factorial, logit, xlogy,
xlog1py) and ``scalar.betaln``: SciPy is the oracle; gradients by finite differences."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special as sp

import arignote
import arignote.scalar as ps
import arignote.tensor as pt
from arignote.gradient import verify_grad
from arignote.tensor import special

A = np.array([2.0, 3.0, -0.5, 0.3, 150.0, -2.5, 1e-3])
B = np.array([3.0, 0.5, 2.0, 0.7, 160.0, 1.2, 4.0])


def _eval2(fn, a, b):
    x, y = pt.dvector("x"), pt.dvector("y")
    return arignote.function([x, y], fn(x, y))(a, b)


@pytest.mark.parametrize(
    "name, ref", [("betaln", sp.betaln), ("beta", sp.beta), ("poch", sp.poch)], ids=["betaln", "beta", "poch"]
)
def test_two_argument_functions_match_scipy(name, ref):
    with np.errstate(over="ignore"):
        got = _eval2(getattr(special, name), A, B)
        np.testing.assert_allclose(got, ref(A, B), rtol=1e-10)


def test_factorial_and_logit_match_scipy():
    x = pt.dvector("x")
    n = np.array([0.0, 3.0, 5.0, -1.0, 2.5, 20.0])
    np.testing.assert_allclose(special.factorial(x).eval({x: n}), sp.factorial(n), rtol=1e-12)
    k = pt.lvector("k")
    out = special.factorial(k)
    assert out.type.dtype == "float64"
    np.testing.assert_allclose(out.eval({k: np.array([0, 4, -2])}), sp.factorial(np.array([0, 4, -2])))
    p = np.array([0.25, 0.5, 1e-10, 1 - 1e-10, 0.0, 1.0])
    with np.errstate(divide="ignore"):
        np.testing.assert_allclose(special.logit(x).eval({x: p}), sp.logit(p), rtol=1e-9)


def test_xlogy_and_xlog1py_match_scipy():
    xs = np.array([0.0, 0.0, 2.0, 1.0, 0.0, -3.0, 0.5])
    ys = np.array([0.0, np.nan, 3.0, np.nan, -1.0, 0.25, 1e-12])
    np.testing.assert_array_equal(np.isnan(_eval2(special.xlogy, xs, ys)), np.isnan(sp.xlogy(xs, ys)))
    np.testing.assert_allclose(_eval2(special.xlogy, xs, ys), sp.xlogy(xs, ys), rtol=1e-12)
    np.testing.assert_allclose(_eval2(special.xlog1py, xs, ys), sp.xlog1py(xs, ys), rtol=1e-12)
    f = pt.fvector("f")
    assert special.xlogy(f, f).type.dtype == "float32" and special.betaln(f, f).type.dtype == "float32"


def test_gradients():
    rng = np.random.default_rng(3)
    a, b = np.array([0.7, 2.5, 4.0]), np.array([1.5, 0.4, 3.0])
    for fn in (special.betaln, special.beta, special.poch, special.xlogy, special.xlog1py):
        verify_grad(fn, [a, b], rng=rng)
    verify_grad(special.logit, [np.array([0.2, 0.5, 0.9])], rng=rng)
    verify_grad(special.factorial, [np.array([0.5, 2.3, 4.0])], rng=rng)
    # at x == 0, xlogy and xlog1py are 0 for every y: the gradient in y is 0, never NaN
    x, y = pt.dvector("x"), pt.dvector("y")
    for fn in (special.xlogy, special.xlog1py):
        gx, gy = arignote.grad(fn(x, y).sum(), [x, y])
        got_x, got_y = arignote.function([x, y], [gx, gy])(np.zeros(2), np.array([0.0, -1.0]))
        np.testing.assert_array_equal(got_y, [0.0, 0.0])


def test_scalar_betaln():
    a, b = ps.float64("a"), ps.float64("b")
    out = ps.betaln(a, b)
    assert np.isclose(out.eval({a: 2.0, b: 3.0}), sp.betaln(2.0, 3.0))
    assert ps.betaln(ps.float32("c"), ps.float32("d")).type.dtype == "float32"
    # as the tensor one: exact where gammaln(b) and gammaln(a + b) nearly cancel
    np.testing.assert_allclose(
        out.eval({a: 0.5, b: 1e300}), sp.gammaln(0.5) - 0.5 * np.log(1e300), rtol=1e-14
    )
    np.testing.assert_allclose(out.eval({a: 1e20, b: 7.5}), sp.gammaln(7.5) - 7.5 * np.log(1e20), rtol=1e-14)
    for av, bv in ((3.0, 9.99), (3.0, 10.0), (12.0, 12.0), (-0.5, 20.0)):
        np.testing.assert_allclose(out.eval({a: av, b: bv}), sp.betaln(av, bv), rtol=1e-13)


@pytest.mark.parametrize("dtype", ["uint8", "uint16", "int8", "int64", "bool"])
def test_logit_of_integers_and_bools_matches_scipy(dtype):
    """Integer inputs are computed in floatX: negating an unsigned 1 used to wrap around
    (logit(uint8 1) came out -5.5 instead of +inf)."""
    values = np.array([0, 1, 0, 1, 1]) if dtype == "bool" else np.array([0, 1, 2, 3, 200])
    v = values.astype(dtype)
    x = pt.tensor("x", dtype=dtype, shape=(None,))
    out = special.logit(x)
    assert out.type.dtype == arignote.config.floatX
    with np.errstate(divide="ignore", invalid="ignore"):
        want = sp.logit(v)
        got = out.eval({x: v})
    np.testing.assert_array_equal(got, want)


def test_betaln_and_beta_of_a_large_argument():
    # gammaln(a) + gammaln(b) - gammaln(a + b) cancels to nothing once b dwarfs a; for b of
    # 1e20 and more, betaln(a, b) is gammaln(a) - a log(b) to double precision
    a, b = pt.dvector("a"), pt.dvector("b")
    f = arignote.function([a, b], [special.betaln(a, b), special.beta(a, b)])
    av = np.array([0.5, 2.0, 7.5, 0.01])
    bv = np.array([1e300, 1e20, 1e150, 1e30])
    ln_b, b_fn = f(av, bv)
    want = sp.gammaln(av) - av * np.log(bv)
    np.testing.assert_allclose(ln_b, want, rtol=1e-14)
    np.testing.assert_allclose(f(bv, av)[0], want, rtol=1e-14)  # symmetric
    np.testing.assert_allclose(b_fn, np.exp(want), rtol=1e-12)
    # across the switch to Stirling's series (at 10), and where SciPy is exact
    av = np.array([0.3, 3.0, 3.0, 3.0, 12.0, 1e-3, 250.0])
    bv = np.array([9.99, 9.99, 10.0, 10.01, 12.0, 50.0, 900.0])
    np.testing.assert_allclose(f(av, bv)[0], sp.betaln(av, bv), rtol=1e-13)
    # negative and zero arguments keep the log-Gamma formula (SciPy's values)
    av, bv = np.array([-0.5, 0.0, -2.5]), np.array([20.0, 20.0, 0.7])
    np.testing.assert_allclose(f(av, bv)[0], sp.betaln(av, bv), rtol=1e-13)


def test_betaln_gradient_is_each_arguments_own_on_a_tie_and_far_out():
    a, b = pt.dvector("a"), pt.dvector("b")
    out = special.betaln(a, b)
    g = arignote.function([a, b], arignote.grad(out.sum(), [a, b]))
    av, bv = np.array([10.0, 3.0, 40.0]), np.array([10.0, 20.0, 1e4])
    ga, gb = g(av, bv)
    np.testing.assert_allclose(ga, sp.digamma(av) - sp.digamma(av + bv), rtol=1e-11)
    np.testing.assert_allclose(gb, sp.digamma(bv) - sp.digamma(av + bv), rtol=1e-9)
    verify_grad(lambda x, y: special.betaln(x, y), [np.array([0.7, 15.0]), np.array([12.0, 15.0])])


def test_betaln_keeps_float32():
    a, b = pt.fvector("a"), pt.fvector("b")
    out = special.betaln(a, b)
    assert out.type.dtype == "float32"
    got = out.eval({a: np.array([0.5, 3.0], "float32"), b: np.array([1e30, 2.0], "float32")})
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, [sp.gammaln(0.5) - 0.5 * np.log(1e30), sp.betaln(3.0, 2.0)], rtol=1e-5)


POLE_GRID = np.array([-4.0, -3.0, -2.5, -2.0, -1.5, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 5.0])


def test_poles_of_gamma_give_scipys_limits():
    """At the poles of Gamma (0, -1, -2, ...) beta, betaln and poch take SciPy's limits:
    ``beta(-3, 3) = -1/3``, ``poch(-3, 3) = -6``, ``beta(-1, 2) = inf``, zeros of SciPy's
    sign; and no NaN, nor any warning, from the branches not taken."""
    a, b = (np.ravel(g) for g in np.meshgrid(POLE_GRID, POLE_GRID))
    x, y = pt.dvector("x"), pt.dvector("y")
    f = arignote.function([x, y], [special.beta(x, y), special.betaln(x, y), special.poch(x, y)])
    with np.errstate(all="raise"):
        got = f(a, b)
    for value, want in zip(got, (sp.beta(a, b), sp.betaln(a, b), sp.poch(a, b))):
        # (atol: under JAX, XLA's gammaln(2) is -8.9e-16, where betaln(1, 1) is 0)
        np.testing.assert_allclose(value, want, rtol=1e-12, atol=1e-14)
    for value, want in zip(got[::2], (sp.beta(a, b), sp.poch(a, b))):
        np.testing.assert_array_equal(np.signbit(value), np.signbit(want))  # zeros' signs too
    assert got[0][(a == -3) & (b == 3)] == pytest.approx(-1 / 3)
    assert got[2][(a == -3) & (b == 3)] == pytest.approx(-6.0)
    s, t = ps.float64("s"), ps.float64("t")
    g = arignote.function([s, t], ps.betaln(s, t))
    np.testing.assert_allclose([g(i, j) for i, j in zip(a, b)], sp.betaln(a, b), rtol=1e-12)


def test_large_arguments_keep_their_digits():
    """Where gammaln's difference would cancel, Stirling's series keeps the digits: checked
    against exact rationals (SciPy's beta(4, 1e5) is off by 2e-10 there) and SciPy's
    asymptotic poch."""
    from fractions import Fraction

    x, y = pt.dvector("x"), pt.dvector("y")
    f = arignote.function([x, y], [special.beta(x, y), special.betaln(x, y), special.poch(x, y)])
    beta_v, betaln_v, poch_v = f(
        np.array([4.0, -2.5, 1e5, 1e300, 1e300]), np.array([1e5, 1e300, -4.0, 0.5, -1.0])
    )
    exact_beta = float(Fraction(6, 100000 * 100001 * 100002 * 100003))
    assert beta_v[0] == pytest.approx(exact_beta, rel=1e-14)
    assert betaln_v[1] == pytest.approx(sp.betaln(-2.5, 1e300), rel=1e-14)  # 1726.9, not 0
    assert poch_v[2] == pytest.approx(float(Fraction(1, 99999 * 99998 * 99997 * 99996)), rel=1e-14)
    np.testing.assert_allclose(poch_v[3:], [1e150, 1e-300], rtol=1e-13)  # (exp of 345: 4e-14)
    s, t = ps.float64("s"), ps.float64("t")
    assert arignote.function([s, t], ps.betaln(s, t))(-2.5, 1e300) == pytest.approx(1726.8825760290365)


def test_gradients_off_the_poles_and_far_out():
    rng = np.random.default_rng(5)
    # a negative argument beside a large one (Stirling's branch), and poch's large branch
    verify_grad(special.betaln, [np.array([-2.5, -0.5]), np.array([30.5, 12.0])], rng=rng)
    verify_grad(special.beta, [np.array([-2.5, 3.5]), np.array([30.5, -1.5])], rng=rng)
    verify_grad(special.poch, [np.array([12.0, 40.0, -2.5]), np.array([0.7, -3.5, 1.25])], rng=rng)


EDGE_GRID = np.array(
    [-np.inf, -1e300, -1e10, -2147483648.0, -2147483646.0, -3.0, -2.5, -1.0, -0.5, -0.0, 0.0]
    + [1e-300, 0.5, 1.0, 2.5, 3.0, 10.0, 1e10, np.inf, np.nan]
)


def test_beta_betaln_at_infinities_nan_and_far_poles_give_scipys_values():
    """On a grid of edges, beta and betaln give SciPy's values: 0 (-inf) at B(inf, x > 0),
    +-inf at B(inf, x < 0) (the sign of Gamma(x)), NaN at B(inf, inf) and beside a NaN;
    inf at the poles beyond -2**31 + 2 and at -inf, where SciPy takes no limit
    (beta(-2147483646, 3) = -2.0e-28, beta(-2147483648, 3) = inf); and no overflow or
    invalid warning from the branches not taken (underflows aside: Stirling's series at 1e10)."""
    a, b = (np.ravel(g) for g in np.meshgrid(EDGE_GRID, EDGE_GRID))
    x, y = pt.dvector("x"), pt.dvector("y")
    f = arignote.function([x, y], [special.beta(x, y), special.betaln(x, y)])
    with np.errstate(all="raise", under="ignore"):
        got = f(a, b)
    for value, want in zip(got, (sp.beta(a, b), sp.betaln(a, b))):
        np.testing.assert_array_equal(np.isnan(value), np.isnan(want))
        np.testing.assert_array_equal(np.isinf(value), np.isinf(want))
        signed = ~np.isnan(want)
        np.testing.assert_array_equal(np.signbit(value[signed]), np.signbit(want[signed]))  # zeros' too
        # (atol: under JAX, XLA's gammaln(2) is -8.9e-16, where betaln(1, 1) is 0)
        np.testing.assert_allclose(value, want, rtol=1e-12, atol=1e-14)
    assert got[0][(a == -2147483646.0) & (b == 3.0)] == pytest.approx(sp.beta(-2147483646.0, 3.0), rel=1e-12)
    s, t = ps.float64("s"), ps.float64("t")
    g = arignote.function([s, t], ps.betaln(s, t))
    with np.errstate(all="raise", under="ignore"):
        np.testing.assert_allclose([g(i, j) for i, j in zip(a, b)], sp.betaln(a, b), rtol=1e-12, atol=1e-14)


def test_betaln_of_subnormal_arguments_is_finite():
    """SciPy's gammaln is inf below 5.6e-309, where log Gamma(x) is -log x to rounding; so
    betaln(5e-324, 5e-324) is log(2 / 5e-324) = 745.13 (Gamma(x)**2 / Gamma(2x) = 2 / x
    there: SciPy gives inf), not NaN (inf - inf), and betaln(5e-324, 1) = -log(5e-324)."""
    from arignote.configdefaults import config

    if config.mode == "JAX":
        pytest.skip("XLA flushes subnormal inputs to 0 (a pole of Gamma)")
    x, y = pt.dvector("x"), pt.dvector("y")
    f = arignote.function([x, y], [special.beta(x, y), special.betaln(x, y)])
    with np.errstate(all="raise", under="ignore", over="ignore"):
        beta_v, betaln_v = f(np.array([5e-324, 5e-324]), np.array([5e-324, 1.0]))
    np.testing.assert_allclose(betaln_v, [np.log(2) - np.log(5e-324), -np.log(5e-324)], rtol=1e-15)
    np.testing.assert_array_equal(beta_v, [np.inf, np.inf])


POCH_GRID = np.array(
    [-np.inf, -1e300, -100.0, -3.0, -2.5, -1.0, -0.5, -0.0, 0.0, 1e-300, 1e-10, 0.5, 1.0, 2.0, 2.5, 3.0]
    + [1e300, np.inf, np.nan]
)


def test_poch_edges_give_scipys_values():
    """On a grid of edges poch gives SciPy's values wherever SciPy gives a number: 1 at m = 0
    (NaN z too), 0 at a pole z (whatever m), inf at a pole z + m, +-inf at m = inf;
    ``poch(1e-300, -1) = -1`` (1e-300 - 1 rounds onto the pole -1, where it gave inf). Where
    SciPy gives NaN, arignote gives the limit (0 for poch(-3, 1e-300), whose z + m rounds onto
    a pole for SciPy too) or NaN; SciPy's -0.0 and -inf at z = -inf, m = -1, 1 are not followed
    (NaN: -inf is taken for a pole). No overflow or invalid warnings (underflows aside)."""
    z, m = (np.ravel(g) for g in np.meshgrid(POCH_GRID, POCH_GRID))
    x, y = pt.dvector("x"), pt.dvector("y")
    with np.errstate(all="raise", under="ignore"):
        got = arignote.function([x, y], special.poch(x, y))(z, m)
    want = sp.poch(z, m)
    scipys = ~np.isnan(want) & ~((z == -np.inf) & (np.abs(m) == 1))
    assert scipys.sum() > 250
    np.testing.assert_array_equal(np.isinf(got[scipys]), np.isinf(want[scipys]))
    np.testing.assert_array_equal(np.signbit(got[scipys]), np.signbit(want[scipys]))  # zeros' too
    from arignote.configdefaults import config

    # (rtol: XLA flushes the subnormal m / z of Stirling's series at poch(1e300, 1e-10) to 0,
    # which loses m = 1e-10 of its log)
    rtol = 2e-10 if config.mode == "JAX" else 1e-12
    np.testing.assert_allclose(got[scipys], want[scipys], rtol=rtol)
    # where SciPy's is NaN: a pole z gives 0 (a pole z + m too, for an integer m: the limit,
    # poch(-1e300, 3) = -inf), and -inf gives NaN
    with np.errstate(invalid="ignore"):
        pole_z = (z <= 0) & (z == np.ceil(z)) & (z > -np.inf) & (m != np.round(m))
    np.testing.assert_array_equal(got[pole_z & ~scipys], 0.0)
    assert got[(z == -1e300) & (m == 3.0)] == -np.inf
    assert np.isnan(got[(z == -np.inf) & (m != 0)]).all()


def test_poch_keeps_its_digits_beside_poles_and_far_out():
    """Where z + m rounds onto a pole, or near one, for an integer m, and at large negative z,
    the reflection formula keeps poch's digits: checked against the rational products
    (SciPy's poch(-1e10 - 0.25, 0.5) is +99998.3, of the wrong sign, where it is
    -sqrt(u) (1 - 1 / (8 u)) to 1e-21, u = 1e10 + 0.75)."""
    from fractions import Fraction

    x, y = pt.dvector("x"), pt.dvector("y")
    z = np.array([1e-300, 1e-10, 0.9999999999999999, -1e10 - 0.5, -1e5 - 0.5, -1e10 - 0.25, 1e-5])
    m = np.array([-1.0, -2.0, -2.0, 1.0, 2.0, 0.5, -3.0])
    got = arignote.function([x, y], special.poch(x, y))(z, m)

    def falling(zv: float, k: int) -> float:  # poch(z, -k) = 1 / ((z - 1) ... (z - k))
        out = Fraction(1)
        for i in range(1, k + 1):
            out /= Fraction(zv) - i
        return float(out)

    u = 1e10 + 0.75
    exact = [
        falling(z[0], 1),
        falling(z[1], 2),
        falling(z[2], 2),
        z[3],
        float(Fraction(z[4]) * (Fraction(z[4]) + 1)),
        -np.sqrt(u) * (1 - 1 / (8 * u)),
        falling(z[6], 3),
    ]
    # (a log-Gamma of 23 carried through exp: 2e-15 of the result)
    np.testing.assert_allclose(got, exact, rtol=1e-14)


def test_poch_gradients_of_the_reflected_branch():
    """The reflected branch's gradient, at integer and fractional m, z on either side of 0."""
    rng = np.random.default_rng(7)
    verify_grad(
        special.poch,
        [np.array([0.3, 2.7, -2.3, -3.3, 5.5]), np.array([-2.0, -5.0, -1.0, 0.6, -8.0])],
        rng=rng,
    )
    verify_grad(
        special.poch, [np.array([-2.3, -40.5, 0.5, -20.5]), np.array([-1.4, -2.25, -3.25, 3.0])], rng=rng
    )
