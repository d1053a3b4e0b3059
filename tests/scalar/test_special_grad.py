"""Derivatives of special functions in their shape parameters and orders: ``polygamma``
(the gradient of ``tri_gamma``), ``gammainc_grad`` / ``gammaincc_grad`` (d/dk of the
regularized incomplete gamma functions) and ``betainc_grad_a`` / ``betainc_grad_b`` (d/da,
d/db of the regularized incomplete beta function), and the gradients of ``gammainc``,
``gammaincc``, ``betainc`` and ``tri_gamma`` built from them.

References: sixth-order (Richardson-extrapolated) central differences of SciPy's functions
in float64, with a step fitted to the scale on which the function moves (agreement about
1e-10); and, at a few points, the defining series summed in 50- to 120-digit decimal
arithmetic (agreement about 1e-13).
"""

from __future__ import annotations

import math
import warnings
from decimal import Decimal, localcontext
from fractions import Fraction

import numpy as np
import pytest
import scipy.special as sp

import arignote.scalar as ps
import arignote.scalar.incomplete as incomplete
import arignote.scalar.math as psm
import arignote.tensor as pt
from arignote.compile.function import function
from arignote.gradient import NullTypeGradError, grad, verify_grad
from arignote.graph.null_type import NullType

# --- references --------------------------------------------------------------------------


def richardson(f, v, h):
    """``f'(v)`` from central differences with steps ``h, h/2, h/4`` (sixth order)."""
    d = [(f(v + s) - f(v - s)) / (2 * s) for s in (h, h / 2, h / 4)]
    d1, d2 = (4 * d[1] - d[0]) / 3, (4 * d[2] - d[1]) / 3
    return (16 * d2 - d1) / 15


def fd_gammainc_dk(k, x):
    """d/dk P(k, x) by differences of the smaller of SciPy's P and Q; the step follows the
    scale on which P moves with k (``k``, ``sqrt(k)``, ``1 / |log(x / k)|``)."""
    k, x = np.broadcast_arrays(np.asarray(k, float), np.asarray(x, float))
    with np.errstate(divide="ignore"):
        scale = np.minimum(np.minimum(k, np.sqrt(k)), 1 / np.abs(np.log(x / k)))
    lower = sp.gammainc(k, x) < 0.5
    return richardson(lambda kk: np.where(lower, sp.gammainc(kk, x), -sp.gammaincc(kk, x)), k, 0.01 * scale)


def fd_betainc_d(a, b, x, wrt_a):
    """d/da (``wrt_a``) or d/db of I_x(a, b) by differences of the smaller of SciPy's I
    and 1 - I; the step follows the scale on which I moves with the parameter."""
    a, b, x = np.broadcast_arrays(*(np.asarray(v, float) for v in (a, b, x)))
    u, v = (a, b) if wrt_a else (b, a)
    with np.errstate(divide="ignore"):
        scale = np.minimum(np.minimum(u, np.sqrt(u * (u + v) / v)), 1 / np.abs(np.log(x if wrt_a else 1 - x)))
    lower = sp.betainc(a, b, x) < 0.5

    def f(t):
        aa, bb = (t, b) if wrt_a else (a, t)
        return np.where(lower, sp.betainc(aa, bb, x), -sp.betaincc(aa, bb, x))

    return richardson(f, u, 0.01 * scale)


def assert_rel(got, want, rtol):
    """Relative agreement; where ``want`` underflowed to 0, ``got`` must be tiny."""
    got, want = np.broadcast_arrays(np.asarray(got, float), np.asarray(want, float))
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(want == 0, np.abs(got) / 1e-300, np.abs(got / want - 1))
    bad = ~(rel <= rtol)
    assert not bad.any(), f"{bad.sum()} of {bad.size} off; worst {np.nanmax(rel):.3g}"


# the defining series in decimal arithmetic (log gamma and psi by Stirling's series after
# shifting the argument past 5 * the precision: its error is far below the precision)


def _bernoulli(n):
    b = [Fraction(1)]
    for m in range(1, n + 1):
        b.append(-sum(math.comb(m + 1, j) * b[j] for j in range(m)) / (m + 1))
    return b


_B = _bernoulli(60)


def _dec(f):
    return Decimal(f.numerator) / Decimal(f.denominator)


def _pi():
    def arctan_inv(n):
        x = Decimal(1) / n
        total, term, k = x, x, 1
        while abs(term) > Decimal(10) ** -(Decimal(0).adjusted() + 200):
            term *= -x * x
            k += 2
            total += term / k
        return total

    return 4 * (4 * arctan_inv(5) - arctan_inv(239))


def _shift(z, prec):
    n = max(0, math.ceil(5 * prec - float(z)))
    return z + n, [z + j for j in range(n)]


def d_lgamma(z, prec):
    w, below = _shift(z, prec)
    s = (w - Decimal("0.5")) * w.ln() - w + (2 * _pi()).ln() / 2
    s += sum(_dec(_B[2 * j]) / (2 * j * (2 * j - 1) * w ** (2 * j - 1)) for j in range(1, 31))
    return s - sum(t.ln() for t in below)


def d_psi(z, prec):
    w, below = _shift(z, prec)
    s = w.ln() - 1 / (2 * w) - sum(_dec(_B[2 * j]) / (2 * j * w ** (2 * j)) for j in range(1, 31))
    return s - sum(1 / t for t in below)


def decimal_gammainc_dk(k, x, prec=50):
    """d/dk P(k, x) = sum_n t_n (log x - psi(k+n+1)), t_n = x**(k+n) exp(-x) / gamma(k+n+1)."""
    with localcontext() as ctx:
        ctx.prec = prec
        k, x = Decimal(k), Decimal(x)
        lx = x.ln()
        t = (k * lx - x - d_lgamma(k + 1, prec)).exp()
        psi = d_psi(k + 1, prec)
        total = t * (lx - psi)
        n = 0
        while True:
            n += 1
            t = t * x / (k + n)
            psi += 1 / (k + n)
            term = t * (lx - psi)
            total += term
            if (
                n > x
                and abs(term) < Decimal(10) ** (8 - prec)
                and abs(term) < abs(total) * Decimal(10) ** -30
            ):
                return float(total)


def decimal_betainc_d(a, b, x, wrt_a, prec=60):
    """d/da or d/db of I_x(a, b) = x**a / B(a, b) sum_n (1-b)_n x**n / (n! (a+n)), for
    x <= 1/2 (and by I_x(a, b) = 1 - I_(1-x)(b, a) above)."""
    if x > 0.5:
        with localcontext() as ctx:
            ctx.prec = 80
            y = 1 - Decimal(x)
        return -decimal_betainc_d(b, a, y, not wrt_a, prec)
    with localcontext() as ctx:
        ctx.prec = prec
        a, b, x = Decimal(a), Decimal(b), Decimal(x)
        lx = x.ln()
        pre = (a * lx - d_lgamma(a, prec) - d_lgamma(b, prec) + d_lgamma(a + b, prec)).exp()
        c, dc = Decimal(1), Decimal(0)  # (1-b)_n x**n / n! and its b-derivative
        s, s_a, s_b = 1 / a, -1 / a**2, Decimal(0)
        n = 0
        while True:
            n += 1
            dc = dc * (n - b) * x / n - c * x / n
            c = c * (n - b) * x / n
            s += c / (a + n)
            s_a -= c / (a + n) ** 2
            s_b += dc / (a + n)
            if n > 10 and abs(c) + abs(dc) < Decimal(10) ** -45 * (abs(s) + abs(s_a) + abs(s_b)):
                break
        if wrt_a:
            return float(pre * (s * (lx - d_psi(a, prec) + d_psi(a + b, prec)) + s_a))
        return float(pre * (s * (d_psi(a + b, prec) - d_psi(b, prec)) + s_b))


# --- the numerical kernels against the references ----------------------------------------


def gamma_points():
    rows = []
    for k in (0.1, 0.3, 1.0, 2.5, 7.0, 20.0, 50.0, 150.0, 1000.0):
        s = math.sqrt(k)
        for x in (1e-6, 1e-3, 0.1 * k, 0.5 * k, k - s, k, k + 1, k + s, 2 * k + 1, 3 * k + 5, k + 30):
            if x > 0:
                rows.append((k, x))
    return np.array(rows).T


def beta_points():
    vals = (0.1, 0.3, 1.0, 2.5, 7.0, 20.0, 50.0)
    xs = (1e-6, 1e-3, 0.02, 0.2, 0.5, 0.8, 0.98, 0.999, 1 - 1e-6)
    rows = [(a, b, x) for a in vals for b in vals for x in (*xs, a / (a + b), (a + 1) / (a + b + 2))]
    return np.array(rows).T


def test_gammainc_dk_against_finite_differences():
    k, x = gamma_points()
    assert_rel(psm.gammainc_dk(k, x), fd_gammainc_dk(k, x), 2e-9)


def test_gammaincc_grad_is_minus_gammainc_grad():
    k, x = gamma_points()
    kv, xv = pt.dvector("k"), pt.dvector("x")
    f = function([kv, xv], [pt.gammainc_grad(kv, xv), pt.gammaincc_grad(kv, xv)])
    lower, upper = f(k, x)
    np.testing.assert_array_equal(lower, -upper)
    np.testing.assert_array_equal(lower, psm.gammainc_dk(k, x))


@pytest.mark.parametrize("wrt_a", [True, False])
def test_betainc_dab_against_finite_differences(wrt_a):
    a, b, x = beta_points()
    assert_rel(psm.betainc_dab(a, b, x, wrt_a), fd_betainc_d(a, b, x, wrt_a), 2e-9)


GAMMA_DECIMAL = [
    (0.1, 1e-6),
    (0.5, 0.2),
    (1.0, 1.0),
    (2.5, 1.7),
    (3.0, 3.9),
    (7.0, 30.0),
    (20.0, 15.0),
    (50.0, 80.0),
    (150.0, 0.5),
    (0.3, 40.0),
]


@pytest.mark.parametrize(("k", "x"), GAMMA_DECIMAL)
def test_gammainc_dk_against_decimal_series(k, x):
    prec = 50 + int(max(0.0, x - k) / 2.3)  # the series cancels down to exp(-(x - k))
    want = decimal_gammainc_dk(k, x, prec)
    assert_rel(psm.gammainc_dk(k, x), want, 1e-13)


BETA_DECIMAL = [
    (0.1, 0.1, 0.5),
    (0.5, 50.0, 0.01),
    (2.5, 3.5, 0.3),
    (2.5, 3.5, 0.8),
    (50.0, 0.1, 0.999),
    (20.0, 20.0, 0.45),
    (50.0, 50.0, 0.6),
    (1.0, 7.0, 1e-6),
    (7.0, 1.0, 1 - 1e-6),
    (0.3, 2.0, 0.98),
]


@pytest.mark.parametrize(("a", "b", "x"), BETA_DECIMAL)
@pytest.mark.parametrize("wrt_a", [True, False])
def test_betainc_dab_against_decimal_series(a, b, x, wrt_a):
    want = decimal_betainc_d(a, b, x, wrt_a, prec=int(60 + max(a, b)))  # alternating terms
    assert_rel(psm.betainc_dab(a, b, x, wrt_a), want, 1e-13)


def test_large_shape_parameters():
    """Near x = k (a/(a+b)) the loops take about sqrt(k) steps; far beyond the tested range."""
    for k in (1e4, 1e5):
        x = k + math.sqrt(k) * np.array([-3.0, -1.0, 0.0, 0.5, 2.0])
        assert_rel(psm.gammainc_dk(k, x), fd_gammainc_dk(k, x), 1e-8)
    for a, b in ((1e3, 1e3), (2e3, 5.0), (3.0, 4e3), (1e4, 0.5)):
        sd = math.sqrt(a * b / ((a + b) ** 2 * (a + b + 1)))
        x = a / (a + b) + sd * np.array([-2.0, -0.5, 0.0, 0.5, 2.0])
        x = x[(x > 0) & (x < 1)]
        for wrt_a in (True, False):
            assert_rel(psm.betainc_dab(a, b, x, wrt_a), fd_betainc_d(a, b, x, wrt_a), 1e-8)


def test_fallback_when_the_loops_do_not_finish(monkeypatch):
    """Elements not done in _MAX_STEPS steps are finished by differences of SciPy's function."""
    k = np.array([200.0, 1e3, 1e4, 1e3])
    x = np.array([201.0, 990.0, 1e4 + 50, 1100.0])
    a = np.array([300.0, 1e3, 2e3, 500.0])
    b = np.array([300.0, 30.0, 1.5, 2e3])
    y = a / (a + b) + np.array([0.01, -0.005, -1e-4, 0.002])
    full = [psm.gammainc_dk(k, x), psm.betainc_dab(a, b, y, True), psm.betainc_dab(a, b, y, False)]
    monkeypatch.setattr(incomplete, "_MAX_STEPS", 15)
    short = [psm.gammainc_dk(k, x), psm.betainc_dab(a, b, y, True), psm.betainc_dab(a, b, y, False)]
    for f, s in zip(full, short):
        assert not np.array_equal(f, s)  # the fallback did run
        assert_rel(s, f, 1e-9)


# --- special values, domains, dtypes -----------------------------------------------------


def test_gammainc_dk_special_values():
    got = psm.gammainc_dk(
        [0.0, 0.0, 2.0, 2.0, 3.0, -1.0, 2.0, np.nan, 2.0, np.inf, 0.0],
        [0.5, 3.0, 0.0, np.inf, 1e-300, 1.0, -1.0, 1.0, np.nan, 1.0, 0.0],
    )
    # k = 0: P(0, x) = 1 and d/dk P(0, x) = -E1(x); x = 0 or inf: P does not depend on k
    want = [-sp.exp1(0.5), -sp.exp1(3.0), 0.0, 0.0]
    np.testing.assert_allclose(got[:4], want, rtol=1e-14)
    assert got[4] == 0  # about x**k: underflows
    assert np.isnan(got[5:]).all()


def test_betainc_dab_special_values():
    a = [2.0, 2.0, 0.0, 2.0, -1.0, np.inf, 2.0, np.nan, 2.0]
    b = [3.0, 3.0, 1.0, 0.0, 1.0, 1.0, 3.0, 1.0, 3.0]
    x = [0.0, 1.0, 0.5, 0.5, 0.5, 0.5, 1.5, 0.5, np.nan]
    for wrt_a in (True, False):
        got = psm.betainc_dab(a, b, x, wrt_a)
        np.testing.assert_array_equal(got[:2], [0.0, 0.0])
        assert np.isnan(got[2:]).all()


def test_kernels_broadcast_and_keep_scalars():
    k = np.array([[0.5], [3.0], [40.0]])
    x = np.array([0.2, 3.0, 40.0, 100.0])
    got = psm.gammainc_dk(k, x)
    assert got.shape == (3, 4)
    np.testing.assert_array_equal(got, [[psm.gammainc_dk(kk, xx) for xx in x] for kk in k[:, 0]])
    assert isinstance(psm.gammainc_dk(2.0, 1.0), np.float64)
    assert isinstance(psm.betainc_dab(2.0, 3.0, 0.4, True), np.float64)
    assert psm.gammainc_dk(np.zeros((0, 3)), 1.0).shape == (0, 3)
    assert psm.betainc_dab(np.zeros(0), 1.0, 0.5, False).shape == (0,)


@pytest.mark.parametrize(
    ("dtypes", "out"),
    [
        (("float64", "float64"), "float64"),
        (("float32", "float32"), "float32"),
        (("float32", "float64"), "float64"),
        (("float16", "float16"), "float16"),
        (("int8", "float32"), "float32"),
        (("int64", "float32"), "float64"),
        (("int8", "int16"), "float32"),
    ],
)
def test_output_dtypes_and_impl(dtypes, out):
    """As their parents: the float dtype of the inputs' promotion; ``impl`` returns it."""
    ops = [(ps.gammainc_grad, 2), (ps.gammaincc_grad, 2), (ps.betainc_grad_a, 3), (ps.betainc_grad_b, 3)]
    for op, nin in ops:
        types = [ps.get_scalar_type(d) for d in (dtypes + dtypes[-1:])[:nin]]
        node = op(*(t() for t in types)).owner
        assert node.outputs[0].type.dtype == out, op
        parent = {2: ps.gammainc, 3: ps.betainc}[nin]
        assert parent(*(t() for t in types)).type.dtype == out
        values = [np.array([1, 2], dtype=t.dtype) for t in types]
        if nin == 3:  # x in [0, 1]
            x_dtype = np.dtype(types[2].dtype)
            values[2] = np.array([0.25, 0.5] if x_dtype.kind == "f" else [0, 1], dtype=x_dtype)
        for as_array in (True, False):
            args = values if as_array else [v[1] for v in values]
            with np.errstate(all="ignore"):
                result = node.op.impl(*args)
            assert np.asarray(result).dtype == out and np.ndim(result) == (1 if as_array else 0), op
    with pytest.raises(TypeError):
        ps.gammainc_grad(ps.complex128(), ps.float64())
    with pytest.raises(TypeError):
        ps.betainc_grad_a(ps.float64(), ps.float64(), ps.complex64())


def test_float32_inputs_are_computed_in_float64():
    k = np.array([0.5, 2.5, 30.0], dtype="float32")
    x = np.array([0.1, 3.0, 29.0], dtype="float32")
    got = ps.gammainc_grad.impl(k, x)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, psm.gammainc_dk(k.astype(float), x.astype(float)).astype("float32"))


# --- the ops -----------------------------------------------------------------------------


def test_op_identity_and_names():
    assert ps.betainc_grad_a == psm.BetaIncGrad(True, ps.upgrade_to_float_no_complex, name="betainc_grad_a")
    assert ps.betainc_grad_a != ps.betainc_grad_b
    assert hash(ps.betainc_grad_a) != hash(ps.betainc_grad_b)
    assert ps.gammainc_grad != ps.gammaincc_grad
    assert [str(op) for op in (ps.polygamma, ps.gammainc_grad, ps.betainc_grad_a, ps.betainc_grad_b)] == [
        "polygamma",
        "gammainc_grad",
        "betainc_grad_a",
        "betainc_grad_b",
    ]
    p, q, x = ps.float64("p"), ps.float64("q"), ps.float64("x")
    assert ps.betainc_grad(p, q, x, True).owner.op is ps.betainc_grad_a  # PyTensor's spelling
    assert ps.betainc_grad(p, q, x, False).owner.op is ps.betainc_grad_b


def test_polygamma_values_and_types():
    x = np.array([0.3, 1.0, 2.5, 10.0, -1.5])
    n = pt.lvector("n")
    xv = pt.dvector("x")
    f = function([n, xv], pt.polygamma(n, xv))
    for order in range(5):
        np.testing.assert_allclose(f(np.full(5, order), x), sp.polygamma(order, x), rtol=1e-14)
    # negative or fractional orders: NaN
    assert np.isnan(pt.polygamma(np.array([-1, -2]), np.array([1.0, 1.0])).eval()).all()
    assert np.isnan(pt.polygamma(2.5, 1.0).eval())
    # the dtype of x decides (PyTensor's rule); n any real dtype
    assert ps.polygamma(ps.int64(), ps.float32()).type.dtype == "float32"
    assert ps.polygamma(ps.int8(), ps.int8()).type.dtype == "float32"
    assert ps.polygamma(ps.int8(), ps.int64()).type.dtype == "float64"
    assert ps.polygamma(ps.uint8(), ps.float16()).type.dtype == "float16"
    for bad in ((ps.complex64(), ps.float64()), (ps.int8(), ps.complex128())):
        with pytest.raises(TypeError):
            ps.polygamma(*bad)
    assert ps.polygamma.impl(np.int8(2), np.float32(1.5)).dtype == np.float32


def test_polygamma_gradient():
    x = pt.dvector("x")
    n = pt.lvector("n")
    cost = pt.sum(pt.polygamma(n, x))
    g = grad(cost, x)
    xv, nv = np.array([0.4, 1.5, 7.0]), np.array([0, 1, 3])
    np.testing.assert_allclose(g.eval({x: xv, n: nv}), sp.polygamma(nv + 1, xv), rtol=1e-13)
    # the order is an integer: its gradient is undefined
    with pytest.raises(NullTypeGradError, match="undefined"):
        grad(cost, n)
    (gn,) = ps.polygamma.grad([ps.int64("n"), ps.float64("x")], [ps.float64("g")])[:1]
    assert isinstance(gn.type, NullType) and "integer values" in gn.type.why_null


def test_tri_gamma_gradient_is_polygamma_2():
    x = ps.float64("x")
    (term,) = ps.tri_gamma.grad([x], [ps.float64("g")])
    assert term.owner.inputs[1].owner.op is ps.polygamma
    xv = pt.dvector("x")
    v = np.array([0.2, 1.0, 3.3, 25.0, -0.5])
    np.testing.assert_allclose(
        grad(pt.sum(pt.tri_gamma(xv)), xv).eval({xv: v}), sp.polygamma(2, v), rtol=1e-13
    )
    # int input: the real derivative, in floatX
    iv = pt.ivector("i")
    g = grad(pt.sum(pt.tri_gamma(iv)), iv)
    np.testing.assert_allclose(g.eval({iv: np.array([1, 2, 5], "int32")}), sp.polygamma(2, [1.0, 2.0, 5.0]))


# --- gradients of the parent ops ----------------------------------------------------------


def _symbolic(build, values, wrt, dtype="float64"):
    xs = [pt.vector(f"x{i}", dtype=dtype) for i in range(len(values))]
    gs = grad(pt.sum(build(*xs)), [xs[i] for i in wrt])
    f = function(xs, gs, on_unused_input="ignore")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return [np.asarray(v) for v in f(*(np.asarray(v, dtype=dtype) for v in values))]


def test_gammainc_gradients_in_k_against_finite_differences():
    k, x = gamma_points()
    want = fd_gammainc_dk(k, x)
    (gk,) = _symbolic(pt.gammainc, [k, x], [0])
    assert_rel(gk, want, 2e-9)
    (gk,) = _symbolic(pt.gammaincc, [k, x], [0])
    assert_rel(gk, -want, 2e-9)


def test_betainc_gradients_in_a_and_b_against_finite_differences():
    a, b, x = beta_points()
    ga, gb = _symbolic(pt.betainc, [a, b, x], [0, 1])
    assert_rel(ga, fd_betainc_d(a, b, x, True), 2e-9)
    assert_rel(gb, fd_betainc_d(a, b, x, False), 2e-9)


@pytest.mark.parametrize("name", ["gammainc", "gammaincc", "betainc"])
def test_float32_gradients(name):
    """float32 in, float32 out, within float32 rounding of the float64 values."""
    rng = np.random.default_rng(1)
    if name == "betainc":
        values = [rng.uniform(0.2, 30, 40), rng.uniform(0.2, 30, 40), rng.uniform(0.01, 0.99, 40)]
        build = pt.betainc
    else:
        values = [rng.uniform(0.2, 40, 40), rng.uniform(0.01, 60, 40)]
        build = getattr(pt, name)
    values = [v.astype("float32") for v in values]
    wrt = list(range(len(values)))
    got = _symbolic(build, values, wrt, "float32")
    want = _symbolic(build, [v.astype("float64") for v in values], wrt, "float64")
    for g, w in zip(got, want):
        assert g.dtype == np.float32
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=1e-30)
    # and the float64 value at the float32 points agrees with finite differences
    if name == "betainc":
        a, b, x = (v.astype(float) for v in values)
        assert_rel(want[0], fd_betainc_d(a, b, x, True), 2e-9)
    else:
        k, x = (v.astype(float) for v in values)
        assert_rel(want[0], fd_gammainc_dk(k, x) * (1 if name == "gammainc" else -1), 2e-9)


VERIFY = {
    "gammainc": (pt.gammainc, [(0.2, 30), (0.05, 40)]),
    "gammaincc": (pt.gammaincc, [(0.2, 30), (0.05, 40)]),
    "betainc": (pt.betainc, [(0.2, 40), (0.2, 40), (0.02, 0.98)]),
    "tri_gamma": (pt.tri_gamma, [(0.2, 20)]),
    "polygamma": (lambda x: pt.polygamma(3, x), [(0.2, 20)]),
    "gammainc_grad_x": (lambda x: pt.gammainc_grad(3.5, x), [(0.05, 10)]),
    "gammaincc_grad_x": (lambda x: pt.gammaincc_grad(0.7, x), [(0.05, 10)]),
    "betainc_grad_a_x": (lambda x: pt.betainc_grad_a(2.5, 4.0, x), [(0.02, 0.98)]),
    "betainc_grad_b_x": (lambda x: pt.betainc_grad_b(0.6, 3.0, x), [(0.02, 0.98)]),
}


@pytest.mark.parametrize("name", sorted(VERIFY))
def test_verify_grad(name):
    """verify_grad (random projections, finite differences) with respect to every input,
    broadcast against each other."""
    build, domains = VERIFY[name]
    rng = np.random.default_rng(7)
    shapes = [(3, 4)] if len(domains) == 1 else [(3, 1), (1, 4), (3, 4)][: len(domains)]
    values = [rng.uniform(lo, hi, shape) for (lo, hi), shape in zip(domains, shapes)]
    verify_grad(build, values, rng=rng)


@pytest.mark.parametrize("name", ["gammainc", "gammaincc", "betainc"])
def test_verify_grad_float32(name):
    build, domains = VERIFY[name]
    rng = np.random.default_rng(8)
    values = [rng.uniform(max(lo, 0.5), min(hi, 10), 6).astype("float32") for lo, hi in domains]
    if name == "betainc":
        values[2] = rng.uniform(0.1, 0.9, 6).astype("float32")
    verify_grad(build, values, rng=rng)


def test_mixed_second_derivatives():
    """d/dx of the shape derivatives is closed-form: against differences in x."""
    k, x = pt.dvector("k"), pt.dvector("x")
    (gk,) = grad(pt.sum(pt.gammainc(k, x)), [k])
    gkx = grad(pt.sum(gk), x)
    kv, xv = np.array([0.5, 2.5, 12.0, 40.0]), np.array([0.3, 2.0, 15.0, 33.0])
    want = richardson(lambda t: psm.gammainc_dk(kv, t), xv, 1e-3 * xv)
    np.testing.assert_allclose(gkx.eval({k: kv, x: xv}), want, rtol=1e-9)

    a, b = pt.dvector("a"), pt.dvector("b")
    av, bv, yv = np.array([0.5, 2.5, 30.0]), np.array([3.0, 0.7, 20.0]), np.array([0.2, 0.7, 0.55])
    for i, wrt_a in ((0, True), (1, False)):
        gab = grad(pt.sum(pt.betainc(a, b, x)), [a, b])[i]
        gx = grad(pt.sum(gab), x)
        want = richardson(lambda t, w=wrt_a: psm.betainc_dab(av, bv, t, w), yv, 1e-4)
        np.testing.assert_allclose(gx.eval({a: av, b: bv, x: yv}), want, rtol=1e-8)


def test_second_derivative_in_the_shape_is_not_implemented():
    k, x = pt.dvector("k"), pt.dvector("x")
    (gk,) = grad(pt.sum(pt.gammainc(k, x)), [k])
    with pytest.raises(NullTypeGradError, match="not implemented"):
        grad(pt.sum(gk), k)
    a, b = pt.dvector("a"), pt.dvector("b")
    ga, gb = grad(pt.sum(pt.betainc(a, b, x)), [a, b])
    for g in (ga, gb):
        for wrt in (a, b):
            with pytest.raises(NullTypeGradError, match="shape parameters"):
                grad(pt.sum(g), wrt)


def test_gradient_through_a_fused_graph():
    """gammainc and betainc inside an elementwise chain (fused into one Composite)."""
    k, x = pt.dvector("k"), pt.dvector("x")
    cost = pt.sum(pt.exp(-pt.gammainc(k * 2.0, x + 1.0)) * pt.betainc(k, x + 0.5, pt.sigmoid(x)))
    gk, gx = grad(cost, [k, x])
    kv, xv = np.array([0.7, 1.9, 4.0]), np.array([-0.3, 0.8, 2.2])
    f = function([k, x], [gk, gx])
    got_k, got_x = f(kv, xv)

    def value(kk, xx):
        return np.exp(-sp.gammainc(kk * 2.0, xx + 1.0)) * sp.betainc(kk, xx + 0.5, sp.expit(xx))

    np.testing.assert_allclose(got_k, richardson(lambda t: value(t, xv), kv, 1e-3), rtol=1e-8)
    np.testing.assert_allclose(got_x, richardson(lambda t: value(kv, t), xv, 1e-3), rtol=1e-8)


def test_integer_shape_parameters_get_the_real_gradient():
    k, x = pt.ivector("k"), pt.dvector("x")
    g = grad(pt.sum(pt.gammainc(k, x)), k)
    kv, xv = np.array([1, 3, 10], "int32"), np.array([0.5, 2.0, 12.0])
    np.testing.assert_allclose(g.eval({k: kv, x: xv}), psm.gammainc_dk(kv.astype(float), xv), rtol=1e-13)
