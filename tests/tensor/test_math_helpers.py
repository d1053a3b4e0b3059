"""NumPy-named aliases, finiteness, logaddexp, integer division helpers,
nan_to_num, ptp, median, cov, extrema helpers, batched products, constants — against NumPy."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import arignote.tensor as pt
import arignote.tensor.math as ptm
from arignote import function
from tests.tensor.test_grad_ops import check_grad

RNG = np.random.default_rng(11)


def ev(out, givens=None):
    return out.eval(givens or {})


# --- aliases and module paths --------------------------------------------------------------


@pytest.mark.parametrize(
    "name, op",
    [
        ("equal", np.equal),
        ("not_equal", np.not_equal),
        ("greater", np.greater),
        ("greater_equal", np.greater_equal),
        ("less", np.less),
        ("less_equal", np.less_equal),
    ],
)
def test_comparison_aliases(name, op):
    a, b = pt.dvector("a"), pt.ivector("b")
    A, B = np.array([1.0, 2.0, np.nan, 4.0]), np.array([1, 3, 0, 2], dtype="int32")
    out = getattr(pt, name)(a, b)
    assert out.type.dtype == "bool"
    np.testing.assert_array_equal(ev(out, {a: A, b: B}), op(A, B))


def test_names_are_reachable_under_pytensor_paths():
    for name in [
        "isfinite", "isposinf", "isneginf", "equal", "not_equal", "greater", "greater_equal", "less",
        "less_equal", "logaddexp", "divmod", "floor_div", "ceil_intdiv", "iround", "sgn", "conjugate",
        "nan_to_num", "ptp", "median", "cov", "max_and_argmax", "largest", "smallest",
    ]:  # fmt: skip
        assert getattr(ptm, name) is getattr(pt, name), name
    assert pt.floor_div is pt.int_div and pt.equal is pt.eq
    assert (pt.e, pt.pi, pt.euler_gamma) == (np.e, np.pi, np.euler_gamma)
    assert pt.inf == np.inf and np.isnan(pt.nan)


# --- finiteness ----------------------------------------------------------------------------

SPECIAL = np.array([0.0, -1.5, np.inf, -np.inf, np.nan, 3.0])


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("fn", ["isfinite", "isposinf", "isneginf"])
def test_finiteness_floats(fn, dtype):
    x = pt.vector("x", dtype=dtype)
    out = getattr(pt, fn)(x)
    assert out.type.dtype == "bool"
    X = SPECIAL.astype(dtype)
    np.testing.assert_array_equal(ev(out, {x: X}), getattr(np, fn)(X))
    empty = np.zeros(0, dtype=dtype)
    assert ev(out, {x: empty}).shape == (0,)


@pytest.mark.parametrize("dtype", ["int8", "uint16", "int64", "bool"])
def test_finiteness_discrete(dtype):
    x = pt.matrix("x", dtype=dtype)
    X = RNG.integers(0, 2, size=(2, 3)).astype(dtype)
    for fn in ("isfinite", "isposinf", "isneginf"):
        got = ev(getattr(pt, fn)(x), {x: X})
        np.testing.assert_array_equal(got, getattr(np, fn)(X))
        assert got.dtype == bool


def test_isfinite_complex_and_0d():
    z = pt.zscalar("z")
    for v in (1 + 2j, complex(np.inf, 0), complex(0, np.nan)):
        assert ev(pt.isfinite(z), {z: v}) == np.isfinite(v)
    with pytest.raises(TypeError, match="isposinf.*complex"):
        pt.isposinf(z)
    with pytest.raises(TypeError, match="isneginf.*complex"):
        pt.isneginf(pt.cvector())


# --- logaddexp -----------------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # exp overflows to inf on the way, as intended
def test_logaddexp_two_inputs_matches_numpy_with_infinities():
    a, b = pt.dvector("a"), pt.dvector("b")
    vals = np.array([-np.inf, np.inf, 0.0, 800.0, -800.0, np.nan, 1e308])
    A, B = np.meshgrid(vals, vals)
    A, B = A.ravel(), B.ravel()
    with np.errstate(invalid="ignore"):
        expected = np.logaddexp(A, B)
    np.testing.assert_allclose(ev(pt.logaddexp(a, b), {a: A, b: B}), expected)


@pytest.mark.parametrize("n", [1, 3, 4])
def test_logaddexp_many_inputs_broadcast(n):
    xs = [pt.dmatrix(f"x{i}") if i % 2 == 0 else pt.dvector(f"x{i}") for i in range(n)]
    vals = [RNG.normal(size=(2, 3)) * 300 if i % 2 == 0 else RNG.normal(size=3) * 300 for i in range(n)]
    expected = vals[0] + 0.0 * vals[-1]
    for v in vals[1:]:
        expected = np.logaddexp(expected, v)
    got = ev(pt.logaddexp(*xs), dict(zip(xs, vals)))
    np.testing.assert_allclose(got, np.broadcast_to(expected, (2, 3)), rtol=1e-12)


@pytest.mark.parametrize(
    "dtypes, out",
    [(("int8", "int8"), "float32"), (("int32", "int8"), "float64"), (("float32", "float32"), "float32")],
)
def test_logaddexp_dtypes(dtypes, out):
    xs = [pt.vector(dtype=d) for d in dtypes]
    y = pt.logaddexp(*xs)
    assert y.type.dtype == out
    vals = [np.array([1, 2], dtype=d) for d in dtypes]
    expected = np.logaddexp(*(v.astype("float64") for v in vals))
    np.testing.assert_allclose(ev(y, dict(zip(xs, vals))), expected, rtol=1e-6)


def test_logaddexp_errors_and_grad():
    with pytest.raises(TypeError, match="at least one"):
        pt.logaddexp()
    with pytest.raises(TypeError, match="logaddexp is not defined for complex"):
        pt.logaddexp(pt.dvector(), pt.zvector())
    for dtype in ("float64", "float32"):
        a, b = pt.vector("a", dtype=dtype), pt.vector("b", dtype=dtype)
        check_grad(lambda a, b: pt.logaddexp(a, b, a * 0.5), [(a, [0.3, -2.0, 5.0]), (b, [0.1, 1.0, 5.0])])


# --- integer division helpers --------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["int8", "int64", "float64"])
def test_divmod(dtype):
    a, b = pt.vector("a", dtype=dtype), pt.vector("b", dtype=dtype)
    A = np.array([7, -7, 7, -7, 0], dtype=dtype)
    B = np.array([2, 2, -2, -3, 5], dtype=dtype)
    q, r = pt.divmod(a, b)
    eq_, er = np.divmod(A, B)
    np.testing.assert_array_equal(ev(q, {a: A, b: B}), eq_)
    np.testing.assert_array_equal(ev(r, {a: A, b: B}), er)
    np.testing.assert_array_equal(ev(pt.floor_div(a, b), {a: A, b: B}), np.floor_divide(A, B))


@pytest.mark.parametrize("dtype", ["int8", "int32", "int64", "uint8"])
def test_ceil_intdiv(dtype):
    a, b = pt.vector("a", dtype=dtype), pt.vector("b", dtype=dtype)
    if dtype == "uint8":
        A, B = np.array([7, 6, 0, 255], dtype=dtype), np.array([2, 3, 4, 2], dtype=dtype)
    else:
        A, B = np.array([7, -7, 7, -7, 6, 0], dtype=dtype), np.array([2, 2, -2, -3, 3, 4], dtype=dtype)
    out = pt.ceil_intdiv(a, b)
    assert out.type.dtype == dtype
    np.testing.assert_array_equal(ev(out, {a: A, b: B}), -(-A.astype("int64") // B))


def test_ceil_intdiv_is_exact_for_large_int64():
    a = pt.lscalar("a")
    big = np.int64(2**62 + 1)
    assert ev(pt.ceil_intdiv(a, np.int64(2)), {a: big}) == 2**61 + 1


@pytest.mark.parametrize("mode", [None, "half_to_even", "half_away_from_zero"])
def test_iround(mode):
    x = pt.fvector("x")
    X = np.array([0.5, 1.5, -0.5, -2.5, 2.4], dtype="float32")
    out = pt.iround(x, mode)
    assert out.type.dtype == "int64"
    expected = np.round(X) if mode != "half_away_from_zero" else np.sign(X) * np.floor(np.abs(X) + 0.5)
    np.testing.assert_array_equal(ev(out, {x: X}), expected.astype("int64"))
    assert pt.iround(pt.ivector()).type.dtype == "int64"


def test_sgn_warns_and_is_sign():
    x = pt.dvector("x")
    with pytest.warns(FutureWarning, match="sign"):
        out = pt.sgn(x)
    np.testing.assert_array_equal(ev(out, {x: np.array([-2.0, 0.0, 3.0])}), [-1.0, 0.0, 1.0])


def test_conjugate():
    z, r = pt.zvector("z"), pt.ivector("r")
    Z = np.array([1 + 2j, -3j])
    np.testing.assert_array_equal(ev(pt.conjugate(z), {z: Z}), np.conjugate(Z))
    assert pt.conjugate(r).type.dtype == "int32"
    np.testing.assert_array_equal(ev(pt.conjugate(r), {r: np.array([1, -2], dtype="int32")}), [1, -2])


# --- nan_to_num ----------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("kw", [{}, {"nan": 0.1, "posinf": 5, "neginf": -7.5}])
def test_nan_to_num(dtype, kw):
    x = pt.vector("x", dtype=dtype)
    X = SPECIAL.astype(dtype)
    out = pt.nan_to_num(x, **kw)
    assert out.type.dtype == dtype
    got = ev(out, {x: X})
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got, np.nan_to_num(X, **kw))


def test_nan_to_num_complex_int_symbolic_and_errors():
    z = pt.zvector("z")
    Z = np.array([complex(np.nan, np.inf), complex(-np.inf, 1.0)])
    np.testing.assert_array_equal(ev(pt.nan_to_num(z, nan=2.0), {z: Z}), np.nan_to_num(Z, nan=2.0))
    i = pt.bvector("i")
    assert pt.nan_to_num(i) is i
    x, v = pt.dvector("x"), pt.dscalar("v")
    np.testing.assert_array_equal(
        ev(pt.nan_to_num(x, nan=v), {x: SPECIAL, v: -1.0}), np.nan_to_num(SPECIAL, nan=-1.0)
    )
    with pytest.raises(TypeError, match="nan_to_num: nan must be a scalar"):
        pt.nan_to_num(x, nan=pt.dvector())
    check_grad(lambda x: pt.nan_to_num(x * 2.0), [(x, [0.5, -1.0, 3.0])])


# --- ptp, median ---------------------------------------------------------------------------


@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 1)])
@pytest.mark.parametrize("dtype", ["float64", "int8"])
def test_ptp(axis, dtype):
    x = pt.matrix("x", dtype=dtype)
    X = RNG.integers(-100, 100, size=(3, 4)).astype(dtype)
    out = pt.ptp(x, axis=axis)
    assert out.type.dtype == dtype
    np.testing.assert_array_equal(ev(out, {x: X}), np.ptp(X, axis=axis))
    kept = ev(pt.ptp(x, axis=axis, keepdims=True), {x: X})
    np.testing.assert_array_equal(kept, np.ptp(X, axis=axis, keepdims=True))


@pytest.mark.parametrize("shape", [(5,), (4,), (3, 4), (2, 3, 5), ()])
@pytest.mark.parametrize("axis", [None, 0, -1, (0, -1)])
def test_median_values(shape, axis):
    if (len(shape) < 2 and isinstance(axis, tuple)) or (not shape and axis is not None):
        return
    x = pt.tensor("x", dtype="float64", shape=(None,) * len(shape))
    X = RNG.normal(size=shape)
    got = ev(pt.median(x, axis=axis), {x: X})
    np.testing.assert_allclose(got, np.median(X, axis=axis), rtol=1e-14)
    kept = ev(pt.median(x, axis=axis, keepdims=True), {x: X})
    np.testing.assert_allclose(kept, np.median(X, axis=axis, keepdims=True), rtol=1e-14)


@pytest.mark.parametrize("dtype, out", [("int8", "float32"), ("int64", "float64"), ("float32", "float32")])
def test_median_dtypes_and_no_overflow(dtype, out):
    x = pt.vector("x", dtype=dtype)
    y = pt.median(x)
    assert y.type.dtype == out
    X = np.array([100, 120, 110, 127], dtype=dtype)  # the two middle ones overflow int8 if added
    np.testing.assert_allclose(ev(y, {x: X}), np.median(X.astype("float64")))


def test_median_nan_static_shape_and_errors():
    x = pt.tensor("x", dtype="float64", shape=(3, 4))
    y = pt.median(x, axis=1)
    assert y.type.shape == (3,)
    X = RNG.normal(size=(3, 4))
    X[1, 2] = np.nan
    np.testing.assert_array_equal(ev(y, {x: X}), np.median(X, axis=1))
    with pytest.raises(ValueError, match="out of bounds"):
        pt.median(x, axis=2)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("n", [3, 4])
def test_median_of_complex_orders_as_numpy(dtype, n):
    # as PyTensor's, complex input has a complex median; NumPy orders by real then imaginary part
    z = pt.tensor("z", dtype=dtype, shape=(2, None))
    Z = (RNG.integers(-2, 3, size=(2, n)) + 1j * RNG.normal(size=(2, n))).astype(dtype)
    for axis in [None, 1]:
        out = pt.median(z, axis=axis)
        assert out.type.dtype == dtype
        got = ev(out, {z: Z})
        assert got.dtype == np.dtype(dtype)
        np.testing.assert_allclose(got, np.median(Z, axis=axis), rtol=1e-6)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_median_grad(dtype):
    x = pt.matrix("x", dtype=dtype)
    X = np.array([[0.3, -1.2, 2.5, 0.9], [1.1, 0.2, -0.4, 3.0], [0.0, 2.2, 1.4, -2.0]])
    check_grad(lambda x: pt.median(x, axis=1), [(x, X)])
    check_grad(lambda x: pt.median(x, axis=0), [(x, X)])


# --- cov -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"rowvar": False},
        {"bias": True},
        {"ddof": 3},
        {"fweights": np.array([1, 2, 1, 3, 1])},
        {"aweights": np.array([0.5, 1.0, 2.0, 1.5, 0.1])},
        {"fweights": np.array([1, 2, 1, 3, 1]), "aweights": np.array([0.5, 1.0, 2.0, 1.5, 0.1]), "ddof": 2},
    ],
)
def test_cov_matches_numpy(kw):
    m = pt.dmatrix("m")
    M = RNG.normal(size=(3, 5))
    if kw.get("rowvar") is False:
        M = M.T.copy()
        kw = {**kw}
    got = ev(pt.cov(m, **kw), {m: M})
    np.testing.assert_allclose(got, np.cov(M, **kw), rtol=1e-12)


def test_cov_vector_y_dtypes_and_complex():
    v, w = pt.fvector("v"), pt.ivector("w")
    V, W = RNG.normal(size=6).astype("float32"), RNG.integers(0, 9, size=6).astype("int32")
    out = pt.cov(v)
    assert out.type.dtype == "float64" and out.type.ndim == 0
    np.testing.assert_allclose(ev(out, {v: V}), np.cov(V), rtol=1e-6)
    both = pt.cov(v, w)
    np.testing.assert_allclose(ev(both, {v: V, w: W}), np.cov(V, W), rtol=1e-6)
    z = pt.zmatrix("z")
    Z = RNG.normal(size=(2, 4)) + 1j * RNG.normal(size=(2, 4))
    assert pt.cov(z).type.dtype == "complex128"
    np.testing.assert_allclose(ev(pt.cov(z), {z: Z}), np.cov(Z), rtol=1e-12)


def test_cov_errors():
    m = pt.dmatrix("m")
    with pytest.raises(ValueError, match="cov: m must have 1 or 2"):
        pt.cov(pt.dtensor3())
    with pytest.raises(TypeError, match="cov: fweights must be integers"):
        pt.cov(m, fweights=pt.dvector())
    with pytest.raises(ValueError, match="cov: aweights must be a vector"):
        pt.cov(m, aweights=pt.dmatrix())
    f = pt.lvector("f")
    fn = function([m, f], pt.cov(m, fweights=f))
    with pytest.raises(ValueError, match="cov: fweights must be non-negative"):
        fn(np.ones((2, 3)), np.array([1, -1, 2]))
    with pytest.raises(ValueError, match="cov: aweights must be non-negative"):
        pt.cov(m, aweights=[1.0, -2.0])


@pytest.mark.parametrize("dtype", ["float64"])
def test_cov_grad(dtype):
    m = pt.matrix("m", dtype=dtype)
    check_grad(lambda m: pt.cov(m, aweights=[1.0, 2.0, 0.5, 1.0]), [(m, RNG.normal(size=(2, 4)))])


# --- extrema -------------------------------------------------------------------------------


def test_max_and_argmax():
    x = pt.dmatrix("x")
    X = RNG.normal(size=(3, 4))
    for axis in (None, 0, 1):
        mx, am = pt.max_and_argmax(x, axis=axis)
        np.testing.assert_array_equal(ev(mx, {x: X}), np.max(X, axis=axis))
        np.testing.assert_array_equal(ev(am, {x: X}), np.argmax(X, axis=axis))
    mx, am = pt.max_and_argmax(x, axis=1, keepdims=True)
    assert ev(am, {x: X}).shape == (3, 1)


def test_largest_smallest():
    a, b, c = pt.dvector("a"), pt.dmatrix("b"), pt.dvector("c")
    A, B = np.array([1.0, 5.0, np.nan]), np.array([[2.0, 3.0, 1.0], [0.0, 9.0, 2.0]])
    np.testing.assert_array_equal(ev(pt.largest(a, b), {a: A, b: B}), np.where(A > B, A, B))
    np.testing.assert_array_equal(ev(pt.smallest(a, b), {a: A, b: B}), np.where(A < B, A, B))
    C = np.array([0.0, 7.0, 1.0])
    three = {a: A[:2], c: C[:2], b: B}
    np.testing.assert_array_equal(ev(pt.largest(a, c, b[0, :2]), three), [2.0, 7.0])
    np.testing.assert_array_equal(ev(pt.smallest(a, c, b[0, :2]), three), [0.0, 3.0])
    assert ev(pt.largest(a), {a: A[:2]}).tolist() == [1.0, 5.0]
    with pytest.raises(TypeError, match="largest needs at least one"):
        pt.largest()


# --- batched products ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "sa, sb, spec",
    [
        ((3, 2, 4), (3, 4, 5), "bij,bjk->bik"),
        ((3, 2, 4), (3, 4), "bij,bj->bi"),
        ((3, 4), (3, 4, 5), "bj,bjk->bk"),
        ((3, 4), (3, 4), "bj,bj->b"),
    ],
)
def test_batched_dot(sa, sb, spec):
    a = pt.tensor("a", dtype="float64", shape=(None,) * len(sa))
    b = pt.tensor("b", dtype="float64", shape=(None,) * len(sb))
    A, B = RNG.normal(size=sa), RNG.normal(size=sb)
    out = pt.batched_dot(a, b)
    np.testing.assert_allclose(ev(out, {a: A, b: B}), np.einsum(spec, A, B), rtol=1e-12)
    check_grad(pt.batched_dot, [(a, A), (b, B)])


def test_batched_tensordot():
    x, y = pt.dtensor4("x"), pt.dtensor3("y")
    X, Y = RNG.normal(size=(2, 3, 4, 5)), RNG.normal(size=(2, 4, 5))
    out = pt.batched_tensordot(x, y, axes=[[2, 3], [1, 2]])
    expected = np.stack([np.tensordot(X[i], Y[i], axes=[[1, 2], [0, 1]]) for i in range(2)])
    np.testing.assert_allclose(ev(out, {x: X, y: Y}), expected, rtol=1e-12)
    out2 = pt.batched_tensordot(x, y, axes=2)
    np.testing.assert_allclose(ev(out2, {x: X, y: Y}), expected, rtol=1e-12)
    with pytest.raises(ValueError, match="batch axis 0"):
        pt.batched_tensordot(x, y, axes=[[0], [1]])
    with pytest.raises(TypeError, match="batched_dot: a must have a leading batch"):
        pt.batched_dot(pt.dscalar(), y)


def test_no_warnings_from_building():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pt.median(pt.dvector())
        pt.cov(pt.dmatrix())
