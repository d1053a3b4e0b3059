"""The whole-graph Numba function of graphs with linear algebra and diagonals (Cholesky,
triangular solves, Eye, ARange, ExtractDiag, AllocDiag) against the reference VM: values, the
triangle each factor and solve reads, and the failures that tier 1 computes (NaNs or the
reference's error) when the compiled function raises."""

from __future__ import annotations

import numpy as np
import pytest

import arignote
import arignote.tensor as pt
from arignote.compile.mode import Mode
from arignote.tensor.linalg.decompositions import Cholesky
from arignote.tensor.linalg.solve import SolveTriangular

numba = pytest.importorskip("numba")

pytestmark = pytest.mark.usefixtures("kept_kernel_cache")


def _pair(inputs, outputs):
    f = arignote.function(inputs, outputs, mode="NUMBA")
    assert f.vm.whole.state == "in use", f.vm.whole.reason
    return f, arignote.function(inputs, outputs, mode=Mode("vm", "fast_run"))


def _check(f, ref, args, rtol=1e-10):
    for k, (g, w) in enumerate(zip(f(*args), ref(*args))):
        assert np.asarray(g).dtype == np.asarray(w).dtype and np.shape(g) == np.shape(w), k
        np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol, err_msg=f"output {k}")


@pytest.fixture(scope="module")
def factor_and_solves():
    a, b, B = pt.dmatrix("a"), pt.dvector("b"), pt.dmatrix("B")
    k = pt.lscalar("k")
    low = Cholesky(lower=True)(a)
    up = Cholesky(lower=False)(a)
    outs = [
        low,
        up,
        SolveTriangular(lower=True, b_ndim=1)(low, b),
        SolveTriangular(lower=False, b_ndim=2)(up, B),
        SolveTriangular(lower=True, unit_diagonal=True, b_ndim=2)(low, B),
        pt.eye(a.shape[0], a.shape[1] + 1, k, dtype="float64"),
        pt.arange(k, a.shape[0] * 2, 2),
        pt.diagonal(low, 1),
        pt.diag(b, -1),  # AllocDiag
    ]
    return _pair([a, b, B, k], outs)


def _spd(n, seed=0):
    m = np.random.default_rng(seed).normal(size=(n, n))
    return m @ m.T + n * np.eye(n)


def test_values_and_the_triangles_read(factor_and_solves):
    f, ref = factor_and_solves
    a = _spd(5)
    rng = np.random.default_rng(1)
    args = [a, rng.normal(size=5), rng.normal(size=(5, 3)), np.asarray(1)]
    _check(f, ref, args)
    np.testing.assert_allclose(f(*args)[0] @ f(*args)[0].T, a)
    # each factor reads one triangle: garbage in the other changes nothing
    noisy = np.tril(a) + np.triu(np.full((5, 5), 7.0), 1)
    np.testing.assert_allclose(f(noisy, *args[1:])[0], f(*args)[0])
    _check(f, ref, [noisy, *args[1:]])
    for k in (-6, -2, 0, 3, 8):  # diagonals inside and outside the matrix
        _check(f, ref, [a, *args[1:3], np.asarray(k)])
    _check(f, ref, [np.zeros((0, 0)), np.zeros(0), np.zeros((0, 2)), np.asarray(0)])


def test_failures_are_computed_by_tier_1(factor_and_solves):
    f, ref = factor_and_solves
    rng = np.random.default_rng(2)
    args = [-_spd(4), rng.normal(size=4), rng.normal(size=(4, 2)), np.asarray(0)]
    # not positive definite: the factor's on_error="nan" gives NaNs, and the solves of a
    # NaN factor NaNs, as the reference computes them
    got, want = f(*args), ref(*args)
    assert np.isnan(got[0]).all() and np.isnan(want[0]).all()
    _check(f, ref, args)
    nan_in = [_spd(4), *args[1:]]
    nan_in[0][0, 0] = np.nan
    _check(f, ref, nan_in)
    a, b = pt.dmatrix("a"), pt.dvector("b")
    g, g_ref = _pair([a, b], [SolveTriangular(lower=True, b_ndim=1)(a, b)])
    singular = np.tril(_spd(3))
    singular[1, 1] = 0.0
    with pytest.raises(np.linalg.LinAlgError) as want_err:
        g_ref(singular, np.ones(3))
    with pytest.raises(np.linalg.LinAlgError) as got_err:
        g(singular, np.ones(3))
    assert str(got_err.value) == str(want_err.value)


def test_a_small_gaussian_process_runs_whole_and_matches():
    x, y = pt.dvector("x"), pt.dvector("y")
    ell, var, noise = pt.dscalar("ell"), pt.dscalar("var"), pt.dscalar("noise")
    d = x[:, None] - x[None, :]
    K = var * pt.exp(-0.5 * (d / ell) ** 2) + noise * pt.eye(x.shape[0])
    L = pt.linalg.cholesky(K)
    alpha = pt.linalg.solve_triangular(L, y, lower=True)
    logp = -0.5 * (alpha**2).sum() - pt.log(pt.diagonal(L)).sum()
    f, ref = _pair([x, y, ell, var, noise], [logp, *arignote.grad(logp, [ell, var, noise])])
    rng = np.random.default_rng(3)
    xv = np.sort(rng.uniform(0, 5, 12))
    args = [xv, np.sin(xv), np.asarray(1.3), np.asarray(0.8), np.asarray(0.1)]
    _check(f, ref, args, rtol=1e-9)
    # the value against NumPy's own
    Kv = 0.8 * np.exp(-0.5 * ((xv[:, None] - xv[None, :]) / 1.3) ** 2) + 0.1 * np.eye(12)
    Lv = np.linalg.cholesky(Kv)
    av = np.linalg.solve(Lv, np.sin(xv))
    np.testing.assert_allclose(f(*args)[0], -0.5 * av @ av - np.log(np.diag(Lv)).sum(), rtol=1e-10)
