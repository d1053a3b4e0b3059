"""interpolate: interp against numpy.interp; interpolate1d's methods against a direct NumPy
reading of their definitions; gradients; errors."""

from __future__ import annotations

import numpy as np
import pytest

import arignote.tensor as pt
import arignote.tensor.interpolate as pti
from tests.tensor.test_grad_ops import check_grad

RNG = np.random.default_rng(2)
XP = np.array([-1.0, 0.0, 0.5, 2.0, 3.5])
FP = np.array([2.0, -1.0, 0.0, 4.0, 1.0])
QUERIES = np.array([-3.0, -1.0, -0.5, 0.0, 0.25, 0.5, 1.9, 2.0, 3.5, 3.6, 10.0, np.nan])


def ev(out, givens=None):
    return out.eval(givens or {})


def test_module_path():
    assert pt.interpolate is pti and pt.interp is pti.interp and pt.interpolate1d is pti.interpolate1d


@pytest.mark.parametrize("left, right", [(None, None), (-7.0, 9.0)])
@pytest.mark.parametrize("shape", [(12,), (3, 4), ()])
def test_interp_matches_numpy(left, right, shape):
    x = pt.tensor("x", dtype="float64", shape=(None,) * len(shape))
    X = QUERIES.reshape(shape) if shape else np.float64(0.25)
    got = ev(pt.interp(x, XP, FP, left=left, right=right), {x: X})
    np.testing.assert_array_equal(got, np.interp(X, XP, FP, left=left, right=right))


def test_interp_float32_symbolic_data_single_point_and_complex():
    x, xp, fp = pt.fvector("x"), pt.fvector("xp"), pt.fvector("fp")
    vals = {x: QUERIES.astype("float32"), xp: XP.astype("float32"), fp: FP.astype("float32")}
    out = pt.interp(x, xp, fp)
    assert out.type.dtype == "float32"
    np.testing.assert_allclose(
        ev(out, vals), np.interp(*(v.astype("float64") for v in vals.values())), rtol=1e-6
    )
    one = np.array([1.0])
    q = pt.dvector("q")
    np.testing.assert_array_equal(
        ev(pt.interp(q, one, [5.0], left=0.0, right=9.0), {q: np.array([0.0, 1.0, 2.0])}),
        np.interp([0.0, 1.0, 2.0], one, [5.0], left=0.0, right=9.0),
    )
    zp = FP + 1j * FP[::-1]
    np.testing.assert_allclose(ev(pt.interp(q, XP, zp), {q: QUERIES[:-1]}), np.interp(QUERIES[:-1], XP, zp))


def test_interp_period():
    x = pt.dvector("x")
    xp = np.array([190.0, -190.0, 350.0, -350.0])
    fp = np.array([5.0, 10.0, 3.0, 4.0])
    X = np.array([-180.0, -170.0, -185.0, 185.0, -10.0, -5.0, 0.0, 365.0, 10.0])
    np.testing.assert_allclose(ev(pt.interp(x, xp, fp, period=360), {x: X}), np.interp(X, xp, fp, period=360))
    with pytest.raises(ValueError, match="period must be a scalar"):
        pt.interp(x, xp, fp, period=[1.0, 2.0])


def test_interp_errors():
    x = pt.dvector("x")
    with pytest.raises(ValueError, match="xp must be a vector"):
        pt.interp(x, [[0.0, 1.0]], [0.0, 1.0])
    with pytest.raises(ValueError, match="3 x-coordinates and 2 values"):
        pt.interp(x, [0.0, 1.0, 2.0], [0.0, 1.0])


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_interp_grad(dtype):
    x, fp, xp = pt.vector("x", dtype=dtype), pt.vector("fp", dtype=dtype), pt.vector("xp", dtype=dtype)
    X = np.array([-2.0, -0.5, 0.2, 1.0, 2.9, 5.0])  # none on a data point: differentiable
    check_grad(lambda x, xp, fp: pt.interp(x, xp, fp), [(x, X), (xp, XP), (fp, FP)])


# --- interpolate1d -------------------------------------------------------------------------


def _reference(x, y, q, method, left, right, extrapolate):
    """interpolate1d's methods read directly off their definitions, point by point."""
    order = np.argsort(x)
    x, y = x[order], y[order]
    n = len(x)
    out = []
    for t in q:
        idx = int(np.searchsorted(x, t))
        j = min(max(idx, 1), n - 1)
        if method == "linear":
            v = y[j - 1] + (t - x[j - 1]) * (y[j] - y[j - 1]) / (x[j] - x[j - 1])
        elif method == "nearest":
            v = y[j - 1] if t - x[j - 1] <= x[j] - t else y[j]
        elif method == "first":
            v = y[min(max(idx - 1, 0), n - 1)]
        elif method == "last":
            v = y[min(idx, n - 1)]
        else:
            v = (y[j - 1] + y[j]) / 2
        if not extrapolate:
            v = (y[0] if left is None else left) if idx == 0 else v
            v = (y[-1] if right is None else right) if idx == n else v
        out.append(v)
    return np.array(out)


@pytest.mark.parametrize("method", ["linear", "nearest", "first", "last", "mean"])
@pytest.mark.parametrize(
    "extrapolate, left, right", [(True, None, None), (False, None, None), (False, -5.0, 8.0)]
)
def test_interpolate1d_methods(method, extrapolate, left, right):
    perm = RNG.permutation(len(XP))  # unsorted data: sorted first
    f = pt.interpolate1d(
        XP[perm], FP[perm], method=method, left_pad=left, right_pad=right, extrapolate=extrapolate
    )
    q = pt.dvector("q")
    Q = QUERIES[:-1]
    got = ev(f(q), {q: Q})
    np.testing.assert_allclose(got, _reference(XP, FP, Q, method, left, right, extrapolate), rtol=1e-14)
    m = pt.dmatrix("m")  # queries of any shape
    np.testing.assert_allclose(ev(f(m), {m: Q.reshape(1, -1)})[0], got)


def test_interpolate1d_symbolic_data_grad_and_errors():
    x, y = pt.dvector("x"), pt.dvector("y")
    f = pt.interpolate1d(x, y)
    q = pt.dvector("q")
    np.testing.assert_allclose(ev(f(q), {x: XP, y: FP, q: np.array([0.25, 5.0])}), [-0.5, -2.0])
    check_grad(lambda y, q: pt.interpolate1d(XP, y)(q), [(y, FP), (q, np.array([0.2, 1.0, 4.0]))])
    with pytest.raises(ValueError, match="unknown method 'liner'.*did you mean 'linear'"):
        pt.interpolate1d(x, y, method="liner")
    with pytest.raises(ValueError, match="interpolate1d: x must be a vector"):
        pt.interpolate1d(pt.dmatrix(), y)
    with pytest.raises(ValueError, match="2 x-coordinates and 3 values"):
        pt.interpolate1d([0.0, 1.0], [0.0, 1.0, 2.0])
