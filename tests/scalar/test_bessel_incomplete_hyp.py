"""Bessel functions of real order, hyp2f1, Owen's T, the incomplete gamma functions and the
inverses of the regularized incomplete gamma and beta functions
(``arignote.scalar.bessel``, ``incomplete``, ``hypergeometric``, lifted as ``pt.jv``, ``pt.hyp2f1``, ...): values against
SciPy (and independent series at the points where SciPy is not the reference), dtypes,
gradients against finite differences (float64 and float32, complex arguments too), the
derivative of hyp2f1 in its parameters against exact polynomials, decimal series and
Richardson differences, pushforwards, errors.
"""

from __future__ import annotations

import math
from decimal import Decimal, localcontext

import numpy as np
import pytest
import scipy.special as sp

import arignote.scalar as ps
import arignote.tensor as pt
import arignote.tensor.math as ptm
from arignote.compile.function import function
from arignote.gradient import NullTypeGradError, grad, jacobian
from arignote.scalar.hypergeometric import hyp2f1_dparams
from arignote.scalar.incomplete import _richardson
from arignote.tensor.ufuncs import hyp2f1_grad_a, hyp2f1_grad_b, hyp2f1_grad_c
from tests.tensor.test_grad_ops import _check_pushforward, check_grad
from tests.tensor.utils import assert_infer_shape

ERR = {"all": "ignore"}


def run(out, *pairs):
    """Evaluate ``out`` with the variables of ``pairs`` set to their values."""
    return function([v for v, _ in pairs], out)(*(val for _, val in pairs))


def tensors(dtype, *values):
    """One vector Variable per array of ``values`` (cast to ``dtype``), paired with it."""
    return [(pt.vector(dtype=dtype), np.asarray(v, dtype=dtype)) for v in values]


# --- values --------------------------------------------------------------------------------

V = np.array([0.0, 0.5, 1.0, 2.3, 7.0, -1.5])
X = np.array([0.0, 0.3, 1.0, 4.5, 30.0, 700.0])

CASES = {
    "jv": (sp.jv, (V, X)),
    "iv": (sp.iv, (V, X)),
    "ive": (sp.ive, (V, X)),
    "kv": (sp.kv, (V, X)),
    "kve": (sp.kve, (V, X)),
    "owens_t": (sp.owens_t, ([-2.0, 0.0, 0.5, 1.0, 3.0, np.inf], [0.3, 1.0, -2.0, 0.0, 10.0, 1.0])),
    "gammal": (
        lambda k, x: sp.gammainc(k, x) * sp.gamma(k),
        ([0.5, 1.0, 2.5, 7.0, 3.0, 1.0], X[:5].tolist() + [np.inf]),
    ),
    "gammau": (
        lambda k, x: sp.gammaincc(k, x) * sp.gamma(k),
        ([0.5, 1.0, 2.5, 7.0, 3.0, 1.0], X[:5].tolist() + [np.inf]),
    ),
    "gammaincinv": (sp.gammaincinv, ([0.5, 1.0, 2.5, 7.0, 30.0, 2.0], [0.0, 0.1, 0.5, 0.99, 0.3, 1.0])),
    "gammainccinv": (sp.gammainccinv, ([0.5, 1.0, 2.5, 7.0, 30.0, 2.0], [0.0, 0.1, 0.5, 0.99, 0.3, 1.0])),
    "betaincinv": (
        sp.betaincinv,
        ([0.5, 1.0, 2.5, 7.0, 30.0, 2.0], [2.0, 0.3, 1.0, 4.0, 0.5, 2.0], [0.0, 0.1, 0.5, 0.99, 0.3, 1.0]),
    ),
    "hyp2f1": (
        sp.hyp2f1,
        (
            [0.5, 1.0, -2.0, 1.5, 0.3, 1.0],
            [1.5, 1.0, 1.3, 2.0, 0.7, 1.0],
            [2.5, 2.0, 0.7, 4.0, 1.9, 2.0],
            [0.3, -0.9, 5.0, 1.0, -30.0, 0.999],
        ),
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_values_match_scipy(name, dtype):
    ref, args = CASES[name]
    pairs = tensors(dtype, *args)
    out = getattr(pt, name)(*(v for v, _ in pairs))
    assert out.type.dtype == dtype
    got = run(out, *pairs)
    assert got.dtype == dtype
    with np.errstate(**ERR):
        want = ref(*(np.asarray(a, dtype="float64") for a in args))
        if dtype == "float32":
            want = want.astype("float32")  # overflow where float32 does
    rtol = 1e-12 if dtype == "float64" else 2e-6
    np.testing.assert_allclose(got, want, rtol=rtol, atol=0, equal_nan=True)


def test_tensor_names_are_the_same_elemwise_as_pytensor_paths():
    for name in CASES:
        assert getattr(pt, name) is getattr(ptm, name)
        assert isinstance(getattr(pt, name), pt.Elemwise)
    for name in ("kn", "chi2sf"):
        assert getattr(pt, name) is getattr(ptm, name)


def test_broadcasting_empty_and_zero_d():
    v, x = pt.dscalar("v"), pt.dmatrix("x")
    out = pt.jv(v, x)
    assert out.type.shape == (None, None)
    xs = np.linspace(0.1, 9.0, 12).reshape(3, 4)
    np.testing.assert_allclose(run(out, (v, 1.7), (x, xs)), sp.jv(1.7, xs), rtol=1e-13)
    assert run(out, (v, 1.7), (x, np.zeros((0, 4)))).shape == (0, 4)
    assert float(run(pt.owens_t(v, pt.constant(0.5)), (v, 0.25))) == pytest.approx(
        sp.owens_t(0.25, 0.5), rel=1e-14
    )
    a, b, c, z = pt.dvector("a"), pt.dcol("b"), pt.dscalar("c"), pt.dmatrix("z")
    h = pt.hyp2f1(a, b, c, z)
    vals = {a: np.array([0.5, 1.5]), b: np.array([[1.0], [2.0], [0.5]]), c: 2.5, z: np.full((3, 2), 0.25)}
    assert_infer_shape(h, vals)
    np.testing.assert_allclose(h.eval(vals), sp.hyp2f1(vals[a], vals[b], 2.5, vals[z]), rtol=1e-14)


def test_edge_points():
    x = pt.dvector("x")
    k = pt.dvector("k")
    # gammau(0, x) is E1(x) (gammaincc(0, x) * gamma(0) would be 0 * inf)
    xs = np.array([0.1, 1.0, 5.0])
    np.testing.assert_allclose(run(pt.gammau(0.0, x), (x, xs)), sp.exp1(xs), rtol=1e-14)
    # Owen's T: T(0, a) = atan(a) / (2 pi), T(h, 0) = 0
    a = np.array([-3.0, 0.2, 1.0, 50.0])
    np.testing.assert_allclose(run(pt.owens_t(0.0, x), (x, a)), np.arctan(a) / (2 * np.pi), rtol=1e-14)
    assert not run(pt.owens_t(x, 0.0), (x, a)).any()
    # Bessel functions at 0 and of negative argument (integer orders)
    np.testing.assert_array_equal(run(pt.jv(k, 0.0), (k, np.array([0.0, 1.0, 2.0]))), [1.0, 0.0, 0.0])
    assert run(pt.kv(k, 0.0), (k, np.array([0.0, 1.5]))).tolist() == [np.inf, np.inf]
    np.testing.assert_allclose(run(pt.iv(3.0, x), (x, -xs)), -sp.iv(3, xs), rtol=1e-14)
    np.testing.assert_allclose(run(pt.ive(2.0, x), (x, -xs)), sp.ive(2, xs), rtol=1e-14)
    # ive, kve stay finite where iv overflows and kv underflows
    big = np.array([800.0, 1e4])
    assert np.isinf(run(pt.iv(1.0, x), (x, big))).all()
    np.testing.assert_allclose(run(pt.ive(1.0, x), (x, big)), sp.ive(1, big), rtol=1e-14)
    np.testing.assert_allclose(run(pt.kve(1.0, x), (x, big)), sp.kve(1, big), rtol=1e-14)
    # the inverses at the ends of [0, 1]
    p = np.array([0.0, 1.0])
    np.testing.assert_array_equal(run(pt.gammaincinv(2.0, x), (x, p)), [0.0, np.inf])
    np.testing.assert_array_equal(run(pt.gammainccinv(2.0, x), (x, p)), [np.inf, 0.0])
    np.testing.assert_array_equal(run(pt.betaincinv(2.0, 3.0, x), (x, p)), [0.0, 1.0])
    # NaN in, NaN out
    assert np.isnan(run(pt.hyp2f1(x, 1.0, 2.0, 0.5), (x, np.array([np.nan])))).all()


def test_gammal_gammau_where_gamma_overflows():
    """gamma(k) overflows for k > 171.6; the product is still representable. References:
    the finite sum for an integer k (upper), and the series ``x**k e**-x sum_n x**n /
    (k)_(n+1)`` (lower), both summed in logs."""
    k, x = pt.dscalar("k"), pt.dscalar("x")
    # Gamma(200, 1000) = x**199 e**-x sum_j 199! / (199 - j)! x**-j
    terms, t = [], 1.0
    for j in range(200):
        terms.append(t)
        t *= (199 - j) / 1000.0
    upper = math.exp(199 * math.log(1000.0) - 1000.0 + math.log(math.fsum(terms)))
    assert float(run(pt.gammau(k, x), (k, 200.0), (x, 1000.0))) == pytest.approx(upper, rel=1e-12)
    terms, t = [], 1.0 / 172
    for n in range(200):
        terms.append(t)
        t *= 50.0 / (172 + n + 1)
    lower = math.exp(172 * math.log(50.0) - 50.0 + math.log(math.fsum(terms)))
    assert math.isinf(sp.gamma(172.0))  # gamma(172) overflows
    assert float(run(pt.gammal(k, x), (k, 172.0), (x, 50.0))) == pytest.approx(lower, rel=1e-12)


def test_inverses_invert():
    k, p = pt.dvector("k"), pt.dvector("p")
    ks, probs = np.array([0.3, 1.0, 4.0, 50.0]), np.array([0.01, 0.3, 0.7, 0.999])
    y = run(pt.gammaincinv(k, p), (k, ks), (p, probs))
    np.testing.assert_allclose(sp.gammainc(ks, y), probs, rtol=1e-12)
    y = run(pt.gammainccinv(k, p), (k, ks), (p, probs))
    np.testing.assert_allclose(sp.gammaincc(ks, y), probs, rtol=1e-12)
    y = run(pt.betaincinv(k, 2.5, p), (k, ks), (p, probs))
    np.testing.assert_allclose(sp.betainc(ks, 2.5, y), probs, rtol=1e-12)


def test_kn_and_chi2sf():
    n, x = pt.ivector("n"), pt.dvector("x")
    ns, xs = np.array([0, 1, 3], dtype="int32"), np.array([0.5, 2.0, 9.0])
    np.testing.assert_allclose(run(pt.kn(n, x), (n, ns), (x, xs)), sp.kn(ns, xs), rtol=1e-13)
    k = pt.dvector("k")
    with pytest.warns(FutureWarning, match="gammaincc"):
        out = pt.chi2sf(x, k)
    np.testing.assert_allclose(
        run(out, (x, xs), (k, np.array([1.0, 3.0, 10.0]))), sp.chdtrc([1, 3, 10], xs), rtol=1e-13
    )
    with pytest.warns(FutureWarning):
        assert pt.chi2sf(pt.bvector(), pt.bvector()).dtype == "float64"  # k / 2 of int8: float64
    # a Python number k is divided by Python (k / 2 is the float32 constant 0.5): a float32 x
    # keeps a float32 result, as in PyTensor
    xf = pt.fvector("xf")
    with pytest.warns(FutureWarning):
        out = pt.chi2sf(xf, 1)
    assert out.dtype == "float32"
    np.testing.assert_allclose(out.eval({xf: xs.astype("float32")}), sp.chdtrc(1, xs), rtol=1e-6)


def test_chi2sf_edges_as_scipys_chdtrc():
    """chi2sf on a grid of edges gives SciPy's chdtrc: NaN for x < 0 (the least subnormal
    too, whose half is -0.0, where gammaincc is 1), 1 at x = 0, NaN for k <= 0 or NaN."""
    from arignote.configdefaults import config

    edges = np.array([-np.inf, -1.0, -5e-324, -0.0, 0.0, 1e-300, 0.5, 1.0, 3.0, 100.0, 1e300, np.inf, np.nan])
    if config.mode == "JAX":
        edges = edges[edges != -5e-324]  # (XLA flushes subnormals to 0)
    xs, ks = (np.ravel(g) for g in np.meshgrid(edges, edges))
    x, k = pt.dvector("x"), pt.dvector("k")
    with pytest.warns(FutureWarning):
        out = pt.chi2sf(x, k)
    with np.errstate(all="raise", under="ignore"):
        got = function([x, k], out)(xs, ks)
    want = sp.chdtrc(ks, xs)
    atol = 0.0
    if config.mode == "JAX":
        # (JAX's own gammaincc differs from SciPy's at k / 2 of 5e299 and inf, and gives
        # 3.5e-14 where SciPy gives 3e-298, at k = 1e-300 and x = 1e300)
        got, want = got[np.abs(ks) < 1e300], want[np.abs(ks) < 1e300]
        atol = 1e-13
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=atol)


# --- dtypes and errors ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("dtypes", "out"),
    [
        (("int8", "int8"), "float32"),
        (("int16", "float16"), "float32"),
        (("int32", "float32"), "float64"),
        (("float16", "float16"), "float16"),
        (("float32", "complex64"), "complex64"),
        (("float64", "complex64"), "complex128"),
        (("int8", "complex128"), "complex128"),
    ],
)
def test_bessel_dtypes(dtypes, out):
    for op in (ps.jv, ps.iv, ps.ive, ps.kv, ps.kve):
        assert op(*(ps.get_scalar_type(d)() for d in dtypes)).type.dtype == out
    assert pt.jv(*(pt.vector(dtype=d) for d in dtypes)).type.dtype == out


def test_hyp2f1_dtypes():
    f32, c64, f64 = (ps.get_scalar_type(d)() for d in ("float32", "complex64", "float64"))
    assert ps.hyp2f1(f32, f32, f32, f32).type.dtype == "float32"
    assert ps.hyp2f1(f32, f32, f32, c64).type.dtype == "complex64"
    assert ps.hyp2f1(f64, f32, f32, c64).type.dtype == "complex128"
    assert ps.hyp2f1(ps.int8(), ps.int8(), ps.int8(), ps.int8()).type.dtype == "float32"
    with pytest.raises(TypeError, match=r"input 1 \(an order or parameter\) must be real, got complex64"):
        ps.hyp2f1(f32, c64, f32, f32)


def test_float16_values():
    x = pt.vector(dtype="float16")
    xs = np.array([0.5, 1.0, 3.0], dtype="float16")
    got = run(pt.kve(pt.constant(np.float16(1)), x), (x, xs))
    assert got.dtype == "float16"
    np.testing.assert_allclose(got, sp.kve(1, xs.astype("float32")).astype("float16"), rtol=1e-3)


@pytest.mark.parametrize("name", ["jv", "ive", "kve", "hyp2f1"])
def test_complex_argument_values(name):
    ref, args = CASES[name]
    *params, _ = args
    zs = np.array([0.3 + 0.4j, -0.5 + 0.1j, 2.0 - 1.5j, 0.0 + 0.0j, -0.2 - 0.6j, 0.5j])
    ptypes = [pt.dvector() for _ in params]
    z = pt.zvector("z")
    out = getattr(pt, name)(*ptypes, z)
    assert out.type.dtype == "complex128"
    got = run(out, *zip(ptypes, (np.asarray(p) for p in params)), (z, zs))
    with np.errstate(**ERR):
        np.testing.assert_allclose(got, ref(*params, zs), rtol=1e-12, equal_nan=True)


@pytest.mark.parametrize("name", ["owens_t", "gammal", "gammau", "gammaincinv", "gammainccinv", "betaincinv"])
def test_complex_inputs_refused(name):
    op = getattr(ps, name)
    args = [ps.float64() for _ in range(op.nin)]
    args[-1] = ps.complex128()
    with pytest.raises(TypeError, match="complex"):
        op(*args)


def test_complex_order_refused():
    with pytest.raises(TypeError, match=r"input 0 \(an order or parameter\) must be real"):
        pt.jv(pt.zvector(), pt.dvector())


def test_hyp2f1_grad_wrt_is_checked():
    from arignote.scalar.hypergeometric import Hyp2F1Grad

    with pytest.raises(ValueError, match="wrt must be 0"):
        Hyp2F1Grad(3)


# --- gradients ----------------------------------------------------------------------------------

GRAD_CASES = {
    # name: (argument values, which are differentiated)
    "jv": (([1.3, 0.0, 2.0, 2.0], [0.5, 2.0, 7.5, -3.0]), [1]),
    "iv": (([1.3, 0.0, 2.0, 2.0], [0.5, 2.0, 7.5, -3.0]), [1]),
    "ive": (([1.3, 0.0, 2.0, 2.0], [0.5, 2.0, 7.5, -3.0]), [1]),
    "kv": (([1.3, 0.0, 2.0, 0.5], [0.5, 2.0, 7.5, 3.0]), [1]),
    "kve": (([1.3, 0.0, 2.0, 0.5], [0.5, 2.0, 7.5, 30.0]), [1]),
    "owens_t": (([-1.2, 0.3, 2.0, 0.0], [0.5, -1.5, 3.0, 1.0]), [0, 1]),
    "gammal": (([0.7, 2.5, 5.0, 1.0], [0.4, 3.0, 6.5, 1.0]), [0, 1]),
    "gammau": (([0.7, 2.5, 5.0, 1.0], [0.4, 3.0, 6.5, 1.0]), [0, 1]),
    "gammaincinv": (([0.8, 2.0, 6.0, 1.0], [0.2, 0.5, 0.9, 0.6]), [0, 1]),
    "gammainccinv": (([0.8, 2.0, 6.0, 1.0], [0.2, 0.5, 0.9, 0.6]), [0, 1]),
    "betaincinv": (([0.8, 2.0, 5.0, 1.0], [1.5, 3.0, 0.9, 1.0], [0.2, 0.5, 0.9, 0.3]), [0, 1, 2]),
    "hyp2f1": (
        ([0.3, 1.2, -0.7, 0.5], [0.8, 2.1, 1.5, 1.0], [1.7, 3.3, 2.2, 2.5], [0.4, -2.5, 0.85, 0.0]),
        [0, 1, 2, 3],
    ),
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_gradients_by_finite_differences(name, dtype):
    values, wrt = GRAD_CASES[name]
    check_grad(getattr(pt, name), tensors(dtype, *values), wrt=wrt)


@pytest.mark.parametrize("op", [hyp2f1_grad_a, hyp2f1_grad_b, hyp2f1_grad_c])
def test_hyp2f1_parameter_derivatives_differentiate_in_z(op):
    values = ([0.3, 1.2, -0.7], [0.8, 2.1, 1.5], [1.7, 3.3, 2.2], [0.4, -2.5, 0.6])
    check_grad(op, tensors("float64", *values), wrt=[3])


@pytest.mark.parametrize(("name", "nin"), [("jv", 2), ("iv", 2), ("ive", 2), ("kv", 2), ("kve", 2)])
def test_order_gradient_not_implemented(name, nin):
    v, x = pt.dvector("v"), pt.dvector("x")
    with pytest.raises(NullTypeGradError, match="order v has no closed form"):
        grad(getattr(pt, name)(v, x).sum(), v)


def test_second_parameter_derivative_of_hyp2f1_not_implemented():
    a = pt.dscalar("a")
    d = grad(pt.hyp2f1(a, 1.0, 2.0, 0.5), a)
    with pytest.raises(NullTypeGradError, match="second derivatives of hyp2f1"):
        grad(d, a)


def _complex_fd_grad(f, z, w, eps=1e-6):
    """``dC/dRe z + 1j dC/dIm z`` of ``C = sum(Re(w f(z)))`` by central differences."""
    out = np.zeros(z.shape, dtype=complex)
    for i in range(z.size):
        for unit in (1.0, 1j):
            step = np.zeros(z.shape, dtype=complex)
            step[i] = eps * unit
            diff = np.sum(np.real(w * (f(z + step) - f(z - step)))) / (2 * eps)
            out[i] += diff * unit
    return out


@pytest.mark.parametrize("name", ["jv", "iv", "ive", "kve", "kv"])
def test_gradient_in_a_complex_argument(name):
    ref = getattr(sp, name)
    z = pt.zvector("z")
    zs = np.array([0.7 + 0.4j, -1.3 + 0.5j, 2.0 - 1.5j])
    w = np.array([0.3 - 1.1j, 1.0 + 0.2j, -0.4 + 0.9j])
    cost = pt.sum(pt.real(getattr(pt, name)(1.4, z) * pt.constant(w)))
    got = function([z], grad(cost, z))(zs)
    np.testing.assert_allclose(got, _complex_fd_grad(lambda v: ref(1.4, v), zs, w), rtol=1e-7)


def test_hyp2f1_gradient_with_a_complex_argument():
    a, z = pt.dscalar("a"), pt.zvector("z")
    zs = np.array([0.3 + 0.4j, -0.8 - 0.5j])
    w = np.array([0.3 - 1.1j, 1.0 + 0.2j])
    cost = pt.sum(pt.real(pt.hyp2f1(a, 1.5, 2.5, z) * pt.constant(w)))
    ga, gz = function([a, z], grad(cost, [a, z]))(0.6, zs)
    np.testing.assert_allclose(gz, _complex_fd_grad(lambda v: sp.hyp2f1(0.6, 1.5, 2.5, v), zs, w), rtol=1e-7)
    fa = lambda s: np.sum(np.real(w * sp.hyp2f1(0.6 + s, 1.5, 2.5, zs)))  # noqa: E731
    assert float(ga) == pytest.approx(_richardson(fa, 0.01), rel=1e-9)


def test_pushforwards():
    k, p = pt.dvector("k"), pt.dvector("p")
    vals = [np.array([0.8, 2.0, 6.0]), np.array([0.2, 0.5, 0.9])]
    tangents = [np.array([0.3, -1.0, 0.5]), np.array([1.0, 0.2, -0.4])]
    for name in ("gammaincinv", "gammal", "owens_t"):
        _check_pushforward(getattr(pt, name)(k, p), [k, p], vals, tangents)
    a, z = pt.dvector("a"), pt.dvector("z")
    out = pt.hyp2f1(a, 1.5, 2.5, z)
    _check_pushforward(
        out, [a, z], [np.array([0.5, -0.7]), np.array([0.3, -2.0])], [[0.4, 1.0], None, None, [1.0, -0.5]]
    )


def test_jacobian_batches_through_the_gradients():
    k, p = pt.dvector("k"), pt.dvector("p")
    out = pt.gammaincinv(k, p)
    jk, jp = function([k, p], jacobian(out, [k, p]))(np.array([0.8, 2.0]), np.array([0.2, 0.5]))
    y = sp.gammaincinv([0.8, 2.0], [0.2, 0.5])
    density = np.exp((np.array([0.8, 2.0]) - 1) * np.log(y) - y - sp.gammaln([0.8, 2.0]))
    np.testing.assert_allclose(jp, np.diag(1 / density), rtol=1e-12)
    assert jk[0, 1] == 0 and jk[1, 0] == 0


# --- hyp2f1 in its parameters ----------------------------------------------------------------


def _fd_dparams(a, b, c, z):
    out = []
    for i in range(3):

        def f(s, i=i):
            args = [a, b, c]
            args[i] = args[i] + s
            return sp.hyp2f1(*args, z)

        out.append(_richardson(f, 0.01 * np.maximum(1.0, np.abs([a, b, c][i]))))
    return np.array(out)


@pytest.mark.parametrize(
    "z",
    [0.0, 0.2, 0.6, 0.95, -0.5, -3.0, -40.0, 1.0, 0.5 + 0.5j, -2.0 + 1.0j, 0.9 + 0.6j, 0.999],
)
def test_hyp2f1_dparams_against_differences(z):
    a = np.array([0.5, 1.3, -0.4, 2.0, 0.2])
    b = np.array([1.5, 0.7, 1.1, -1.5, 0.9])
    c = np.array([2.5, 3.1, 1.7, 4.5, 1.3])
    got = hyp2f1_dparams(a, b, c, z)
    want = _fd_dparams(a, b, c, np.complex128(z) if isinstance(z, complex) else z)
    assert got.shape == (3, 5)
    np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-10 * np.max(np.abs(want)))


def _decimal_dparams(a, b, c, z, terms=400):
    """The defining series and its derivatives (``dt_n = t_n sum_j 1/(p+j)``, each term a
    product of rationals) in 40-digit decimal arithmetic."""
    with localcontext() as ctx:
        ctx.prec = 40
        a, b, c, z = (Decimal(v) for v in (a, b, c, z))
        t, sa, sb, sc = Decimal(1), Decimal(0), Decimal(0), Decimal(0)
        ha = hb = hc = Decimal(0)  # sum_j<n 1 / (p + j)
        for n in range(terms):
            sa, sb, sc = sa + t * ha, sb + t * hb, sc - t * hc
            ha, hb, hc = ha + 1 / (a + n), hb + 1 / (b + n), hc + 1 / (c + n)
            t = t * (a + n) * (b + n) / ((c + n) * (n + 1)) * z
        return [float(sa), float(sb), float(sc)]


@pytest.mark.parametrize(
    ("a", "b", "c", "z"), [(0.5, 1.5, 2.5, 0.5), (1.25, -0.75, 0.5, 0.75), (3.5, 2.0, 6.25, -0.5)]
)
def test_hyp2f1_dparams_against_decimal_series(a, b, c, z):
    np.testing.assert_allclose(hyp2f1_dparams(a, b, c, z), _decimal_dparams(a, b, c, z), rtol=1e-13)


@pytest.mark.parametrize("z", [0.5, -4.0, 3.0])
def test_hyp2f1_dparams_of_a_polynomial(z):
    """``F(-2, b; c; z) = 1 - 2bz/c + b(b+1) z**2 / (c(c+1))``: a polynomial for every z, so
    are its b- and c-derivatives (the series terminates; its derivative in a does not)."""
    b, c = 1.5, 2.0
    db = -2 * z / c + (2 * b + 1) * z**2 / (c * (c + 1))
    dc = 2 * b * z / c**2 - b * (b + 1) * z**2 * (2 * c + 1) / (c * (c + 1)) ** 2
    got = hyp2f1_dparams(-2.0, b, c, z)
    np.testing.assert_allclose(got[1:], [db, dc], rtol=1e-9)
    if z < 1:
        np.testing.assert_allclose(got[0], _fd_dparams(-2.0, b, c, z)[0], rtol=1e-9)


def test_hyp2f1_dparams_edges():
    # nan in, nan out; z > 1 (not a polynomial): no real value
    assert np.isnan(hyp2f1_dparams(np.nan, 1.0, 2.0, 0.5)).all()
    assert not np.isfinite(hyp2f1_dparams(0.5, 1.5, 2.5, 2.0)).any()
    # at z = 0 F is 1 whatever the parameters
    np.testing.assert_array_equal(hyp2f1_dparams([0.5, 3.0], 1.0, 2.0, 0.0), np.zeros((3, 2)))
    # z = 1 with c - a - b <= 0: F diverges
    assert np.isnan(hyp2f1_dparams(1.0, 1.0, 2.0, 1.0)).all()
    assert hyp2f1_dparams(np.zeros((2, 0)), 1.0, 2.0, 0.5).shape == (3, 2, 0)
    # c = -3 is a pole, but a = -2 ends the series first: F = 1 - 2bz/c + b(b+1) z**2 / (c(c+1));
    # the series meets 0/0 in its c-derivative, the differences fill in
    b, c, z = 1.0, -3.0, 0.5
    db = -2 * z / c + (2 * b + 1) * z**2 / (c * (c + 1))
    dc = 2 * b * z / c**2 - b * (b + 1) * z**2 * (2 * c + 1) / (c * (c + 1)) ** 2
    np.testing.assert_allclose(hyp2f1_dparams(-2.0, b, c, z)[1:], [db, dc], rtol=1e-9)


def test_hyp2f1_dparams_large_parameters_use_differences():
    """Parameters beyond the series' step budget go straight to the differences."""
    got = hyp2f1_dparams(1e4, 0.5, 2e4, 0.3)
    want = [
        _richardson(lambda h, i=i: sp.hyp2f1(*np.add([1e4, 0.5, 2e4], np.eye(3)[i] * h), 0.3), 1.0)
        for i in range(3)
    ]
    np.testing.assert_allclose(got, want, rtol=1e-9)


def test_hyp2f1_nan_argument_where_scipy_crashes():
    """SciPy's hyp2f1 crashes the process at a NaN z with c == a >= 2**53 and 0 < b < 1;
    arignote's gives NaN there ((1 - z)**-b, SciPy's value for smaller a), and SciPy's values
    beside it. Run in a child process, so that a crash fails this test and not the run."""
    import subprocess
    import sys

    code = (
        "import numpy as np, arignote, arignote.tensor as pt\n"
        "v = [pt.dvector(n) for n in 'abcz']\n"
        "f = arignote.function(v, pt.hyp2f1(*v))\n"
        "print(repr(f(*(np.array(x) for x in ([1e20, 1e300, 3.0, 1e20], [0.5, 0.25, 0.5, 0.0],"
        " [1e20, 1e300, 3.0, 1e20], [np.nan, np.nan, np.nan, np.nan]))).tolist()))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    got = np.array(eval(done.stdout.strip(), {"nan": np.nan}))  # (a list of floats)
    # (the last: b == 0, where SciPy gives 1 for any z)
    np.testing.assert_array_equal(got, [np.nan, np.nan, sp.hyp2f1(3.0, 0.5, 3.0, np.nan), 1.0])
