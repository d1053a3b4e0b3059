"""Special functions (``arignote.scalar.math``) against SciPy, and the numerically careful
forms (softplus, log1mexp, sigmoid, xlogx, xlogy0) against 600-digit decimal arithmetic."""

from __future__ import annotations

import decimal
import math
import warnings

import numpy as np
import pytest
import scipy.special as sp

import arignote.scalar as ps
import arignote.scalar.math as psm
import arignote.tensor as pt
from arignote.compile.function import function
from arignote.scalar.type import get_scalar_type
from tests.scalar.oracle import ALL_DTYPES, check_op, edge_values

CTX = decimal.Context(prec=600, traps=[decimal.InvalidOperation])  # 1 + exp(-1000) is exact


def _decimal_fn(fn):
    """A float64 reference computed with 600-digit decimals (inf/nan handled by ``fn``)."""

    def one(v):
        if math.isnan(v):
            return math.nan
        return float(fn(CTX.create_decimal_from_float(float(v)) if math.isfinite(v) else v))

    def vectorized(x):
        return np.vectorize(one, otypes=["float64"])(np.asarray(x, dtype="float64"))

    return vectorized


def _softplus(d):
    if isinstance(d, float):  # +-inf
        return d if d > 0 else 0.0
    if d > 1000:  # softplus(d) = d + log1p(exp(-d)), and exp(-1000) is far below float64's ulp
        return d
    return CTX.ln(CTX.add(1, CTX.exp(d)))


def _sigmoid(d):
    if isinstance(d, float):
        return 1.0 if d > 0 else 0.0
    return CTX.divide(1, CTX.add(1, CTX.exp(CTX.minus(d))))


def _log1mexp(d):
    if isinstance(d, float):
        return -0.0 if d < 0 else math.nan
    if d > 0:
        return math.nan
    if d == 0:
        return -math.inf
    return CTX.ln(CTX.subtract(1, CTX.exp(d)))


def _xlogx(d):
    if isinstance(d, float):
        return math.inf if d > 0 else math.nan
    if d < 0:
        return math.nan
    if d == 0:
        return 0.0
    return CTX.multiply(d, CTX.ln(d))


UNARY = {
    "erf": sp.erf,
    "erfc": sp.erfc,
    "erfcx": sp.erfcx,
    "erfinv": sp.erfinv,
    "erfcinv": sp.erfcinv,
    "gamma": sp.gamma,
    "gammaln": sp.gammaln,
    "psi": sp.psi,
    "tri_gamma": lambda x: sp.polygamma(1, x),
    "i0": sp.i0,
    "i1": sp.i1,
    "j0": sp.j0,
    "j1": sp.j1,
    "sigmoid": _decimal_fn(_sigmoid),
    "softplus": _decimal_fn(_softplus),
    "log1pexp": _decimal_fn(_softplus),
    "log1mexp": _decimal_fn(_log1mexp),
    "xlogx": _decimal_fn(_xlogx),
}
# SciPy has complex loops for these
COMPLEX_OK = {
    "erf": sp.erf,
    "erfc": sp.erfc,
    "gamma": sp.gamma,
    "psi": sp.psi,
    "xlogx": lambda z: sp.xlogy(z, z),
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_special(name):
    op = getattr(psm, name)
    real = [d for d in ALL_DTYPES if not d.startswith("complex")]
    accepted = [d for d in real if check_op(op, UNARY[name], [d])]
    assert accepted == real  # bool and every int are computed in a wide enough float
    for d in ("complex64", "complex128"):
        if name in COMPLEX_OK:
            assert check_op(op, COMPLEX_OK[name], [d])
        else:
            with pytest.raises(TypeError, match="complex"):
                op(get_scalar_type(d)())


def test_int_inputs_use_wide_enough_floats():
    assert psm.gamma(ps.int8()).type.dtype == "float32"
    assert psm.gamma(ps.int32()).type.dtype == "float64"
    assert psm.erf(ps.bool_()).type.dtype == "float32"
    i = ps.int32("i")
    # 2**24 + 1 is not a float32: computing in float32 would lose it
    assert psm.xlogx(i).eval({i: 2**24 + 1}) == (2**24 + 1) * math.log(2**24 + 1)


def test_float16_is_computed_and_returned_as_float16():
    h = ps.float16("h")
    for op in (psm.erf, psm.gamma, psm.sigmoid, psm.erfinv, psm.j0):
        out = op(h)
        assert out.type.dtype == "float16"
        assert op.impl(np.ones(3, "float16")).dtype == "float16"
        assert out.eval({h: np.float16(0.5)}).dtype == "float16"


BINARY = {
    "gammainc": sp.gammainc,
    "gammaincc": sp.gammaincc,
    "xlogy0": lambda x, y: np.where(x == 0, 0.0, x * np.log(y)),
}
PAIRS = [
    ("float32", "float32"),
    ("float64", "float64"),
    ("float16", "float16"),
    ("int8", "float32"),
    ("int32", "float32"),
    ("bool", "float64"),
    ("uint8", "uint8"),
    ("int64", "int64"),
    ("float64", "float32"),
]


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_special(name):
    op = getattr(psm, name)
    for pair in PAIRS:
        assert check_op(op, BINARY[name], pair), pair


def test_xlogy0_dtypes_and_zero():
    x, y = ps.float64("x"), ps.float64("y")
    out = psm.xlogy0(x, y)
    assert out.eval({x: 0.0, y: 0.0}) == 0.0
    assert out.eval({x: 0.0, y: np.inf}) == 0.0
    assert out.eval({x: 0.0, y: np.nan}) == 0.0  # x == 0 wins, as PyTensor's xlogy0 (not SciPy's xlogy)
    assert out.eval({x: 0.0, y: -1.0}) == 0.0
    assert np.isnan(out.eval({x: np.nan, y: 1.0}))
    assert out.eval({x: 2.0, y: 0.0}) == -np.inf
    # the dtype of x * log(y): an int8 x does not widen a float16 y (as PyTensor)
    assert psm.xlogy0(ps.int8(), ps.float16()).type.dtype == "float16"
    assert psm.xlogy0(ps.int16(), ps.float16()).type.dtype == "float32"
    assert psm.xlogy0(ps.int32(), ps.int8()).type.dtype == "float64"
    z = ps.complex128("z")
    assert np.isclose(psm.xlogy0(z, z).eval({z: 1j}), sp.xlogy(1j, 1j))
    i8, h = ps.int8("i8"), ps.float16("h")
    value = psm.xlogy0(i8, h).eval({i8: 3, h: np.float16(2)})
    assert value.dtype == "float16" and np.isclose(value, 3 * np.log(2), rtol=1e-3)


def test_xlogx_complex():
    z = ps.complex64("z")
    assert psm.xlogx(z).type.dtype == "complex64"
    np.testing.assert_allclose(
        psm.xlogx(z).eval({z: np.complex64(1 + 1j)}), sp.xlogy(1 + 1j, 1 + 1j), rtol=1e-6
    )


def test_betainc():
    positive = np.array([0.5, 1.0, 2.5, 10.0])
    xs = np.array([0.0, 0.1, 0.5, 0.9, 1.0, -0.5, 1.5, np.nan])
    for dtypes in (("float64",) * 3, ("float32",) * 3, ("float16",) * 3, ("int8", "int8", "float32")):
        values = [positive.astype(dtypes[0]), positive.astype(dtypes[1]), xs.astype(dtypes[2])]
        if dtypes[0] == "int8":
            values[0] = values[1] = np.array([1, 2, 10], "int8")
        assert check_op(psm.betainc, sp.betainc, dtypes, values=values)
    with pytest.raises(TypeError, match="complex"):
        psm.betainc(ps.complex64(), ps.float32(), ps.float32())


def test_numerically_careful_forms():
    x = ps.float64("x")
    assert psm.softplus(x).eval({x: 1000.0}) == 1000.0
    assert psm.softplus(x).eval({x: -1000.0}) == 0.0
    assert psm.softplus(x).eval({x: -50.0}) == pytest.approx(math.exp(-50), rel=1e-15)
    assert psm.log1pexp is psm.softplus
    assert psm.log1mexp(x).eval({x: -1e-20}) == pytest.approx(math.log(1e-20), rel=1e-15)
    assert psm.log1mexp(x).eval({x: -100.0}) == pytest.approx(-math.exp(-100), rel=1e-15)
    with np.errstate(divide="ignore"):
        assert psm.log1mexp(x).eval({x: 0.0}) == -np.inf
    with np.errstate(invalid="ignore"):
        assert np.isnan(psm.log1mexp(x).eval({x: 1.0}))
    assert psm.sigmoid(x).eval({x: -1000.0}) == 0.0
    assert psm.sigmoid(x).eval({x: 1000.0}) == 1.0
    assert psm.sigmoid(x).eval({x: -40.0}) == pytest.approx(math.exp(-40), rel=1e-14)
    assert psm.erfcx(x).eval({x: 30.0}) == pytest.approx(sp.erfcx(30.0), rel=1e-15)  # erfc underflows
    assert psm.xlogx(x).eval({x: 0.0}) == 0.0
    f = ps.float32("f")
    assert psm.softplus(f).eval({f: 100.0}) == np.float32(100.0)
    assert psm.log1mexp(f).eval({f: np.float32(-1e-10)}) == pytest.approx(math.log(1e-10), rel=1e-6)


def test_tri_gamma():
    x = ps.float32("x")
    value = psm.tri_gamma(x).eval({x: 1.0})
    assert value.dtype == "float32" and value == pytest.approx(math.pi**2 / 6, rel=1e-6)


def test_special_ops_are_named_and_pickle():
    import pickle

    for name in sorted(UNARY) + sorted(BINARY) + ["betainc"]:
        op = getattr(psm, name)
        assert pickle.loads(pickle.dumps(op)) == op
    assert str(psm.gammaln) == "gammaln"
    assert str(psm.softplus) == "softplus"


def test_edge_values_of_gamma_family():
    x = ps.float64("x")
    with np.errstate(all="ignore"):
        assert psm.gamma(x).eval({x: 5.0}) == 24.0
        assert np.isinf(psm.gamma(x).eval({x: 0.0}))
        assert psm.gammaln(x).eval({x: 1e300}) == pytest.approx(sp.gammaln(1e300))
        assert psm.psi(x).eval({x: 1.0}) == pytest.approx(-np.euler_gamma)
        np.testing.assert_equal(psm.gammainc(x, x).eval({x: 0.0}), sp.gammainc(0.0, 0.0))
    a, y = ps.float64("a"), ps.float64("y")
    total = psm.gammainc(a, y) + psm.gammaincc(a, y)
    for av, yv in ((0.5, 0.1), (3.0, 2.0), (10.0, 30.0)):
        assert total.eval({a: av, y: yv}) == pytest.approx(1.0)
    assert edge_values("float64").size > 20


def test_log1mexp_edges_are_silent():
    """log1mexp on the edges: -0.0 and 0 give -inf, x > 0 NaN (1e308 too, where expm1
    overflows), -inf gives -0.0; with no warning (as SciPy's functions give none)."""
    x = pt.dvector("x")
    # (no subnormals: XLA flushes them to 0)
    xs = np.array([-np.inf, -1e308, -800.0, -1.0, -1e-300, -0.0, 0.0, 1e-300, 1.0, 1e308, np.inf, np.nan])
    f = function([x], pt.log1mexp(x))
    with np.errstate(all="raise", under="ignore"), warnings.catch_warnings():
        warnings.simplefilter("error")
        got = f(xs)
    with np.errstate(all="ignore"):
        want = np.where(xs > -np.log(2), np.log(-np.expm1(xs)), np.log1p(-np.exp(xs)))
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.signbit(got[~np.isnan(want)]), np.signbit(want[~np.isnan(want)]))
    # (rtol: under JAX, XLA's log1p(-exp(-1)) is 3 ulps off NumPy's)
    np.testing.assert_allclose(got, want, rtol=4e-15)
