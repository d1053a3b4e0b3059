"""kron, block_diag, tensorinv, tensorsolve, lstsq, solve_sylvester and the Lyapunov
solvers: NumPy/SciPy are the oracles; gradients by finite differences."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sl

import arignote
import arignote.tensor as pt
from arignote.gradient import NullTypeGradError, verify_grad
from arignote.tensor import linalg

RNG = np.random.default_rng(42)


def test_kron_matches_numpy():
    cases = [((2, 2), (3,)), ((2, 3), (4, 2)), ((2, 3, 4), (4, 2)), ((3,), (2, 2))]
    for sa, sb in cases:
        a, b = RNG.normal(size=sa), RNG.normal(size=sb)
        np.testing.assert_allclose(linalg.kron(a, b).eval(), np.kron(a, b))
    x, y = pt.dmatrix("x"), pt.dmatrix("y")
    assert linalg.kron(x, y).type.ndim == 2
    with pytest.raises(TypeError, match="must sum to 3 or more"):
        linalg.kron(pt.dvector(), pt.dvector())
    verify_grad(linalg.kron, [RNG.normal(size=(2, 3)), RNG.normal(size=(2, 2))], rng=RNG)


def test_block_diag_matches_scipy():
    a, b, c = RNG.normal(size=(2, 2)), RNG.normal(size=(1, 3)), np.arange(4, dtype="int64").reshape(2, 2)
    out = linalg.block_diag(a, b, c)
    assert out.type.dtype == "float64"
    np.testing.assert_allclose(out.eval(), sl.block_diag(a, b, c))
    assert pt.slinalg.block_diag is linalg.block_diag
    with pytest.raises(TypeError, match="input 1 .* must be a matrix"):
        linalg.block_diag(a, pt.dvector())
    verify_grad(lambda x, y: linalg.block_diag(x, y), [a, b], rng=RNG)


def test_tensorinv_and_tensorsolve_match_numpy():
    t = RNG.normal(size=(2, 3, 6))
    np.testing.assert_allclose(linalg.tensorinv(t, ind=2).eval(), np.linalg.tensorinv(t, ind=2))
    t4 = RNG.normal(size=(4, 2, 2))
    np.testing.assert_allclose(linalg.tensorinv(t4, ind=1).eval(), np.linalg.tensorinv(t4, ind=1))
    with pytest.raises(ValueError, match="ind must be an int"):
        linalg.tensorinv(t, ind=0)
    a, b = RNG.normal(size=(2, 3, 6)), RNG.normal(size=(2, 3))
    np.testing.assert_allclose(linalg.tensorsolve(a, b).eval(), np.linalg.tensorsolve(a, b))
    a2 = RNG.normal(size=(6, 2, 3))
    np.testing.assert_allclose(
        linalg.tensorsolve(a2, b, axes=0).eval(), np.linalg.tensorsolve(a2, b, axes=(0,))
    )
    verify_grad(lambda x: linalg.tensorinv(x, ind=1), [t4], rng=RNG)
    verify_grad(linalg.tensorsolve, [a, b], rng=RNG)


@pytest.mark.parametrize("shape_a, shape_b", [((5, 3), (5,)), ((5, 3), (5, 2)), ((3, 5), (3,))])
def test_lstsq_matches_numpy(shape_a, shape_b):
    a, b = RNG.normal(size=shape_a), RNG.normal(size=shape_b)
    x, residuals, rank, s = linalg.lstsq(a, b)
    ref = np.linalg.lstsq(a, b)
    for got, want in zip((x, residuals, rank, s), ref):
        np.testing.assert_allclose(got.eval(), want, atol=1e-12)
    assert rank.type.dtype == "int32" and x.type.shape == (shape_a[1], *shape_b[1:])


def test_lstsq_rank_deficient_rcond_and_gradient():
    a = np.array([[1.0, 2.0], [2.0, 4.0], [0.0, 0.0]])  # rank 1
    b = np.array([1.0, 2.0, 3.0])
    got = [v.eval() for v in linalg.lstsq(a, b)]
    ref = np.linalg.lstsq(a, b)
    assert got[2] == 1 and got[1].shape == (0,)
    np.testing.assert_allclose(got[0], ref[0])
    np.testing.assert_array_equal(linalg.lstsq(a, b, 0.9)[2].eval(), np.linalg.lstsq(a, b, rcond=0.9)[2])
    verify_grad(lambda m, v: linalg.lstsq(m, v)[0], [RNG.normal(size=(4, 2)), RNG.normal(size=4)], rng=RNG)
    x = pt.dmatrix("x")
    with pytest.raises(NullTypeGradError, match="no gradient here"):
        arignote.grad(linalg.lstsq(x, pt.dvector())[3].sum(), x)


def test_sylvester_and_lyapunov_match_scipy():
    A = RNG.normal(size=(3, 3)) * 0.4
    B = RNG.normal(size=(2, 2))
    Q3, C = RNG.normal(size=(3, 3)), RNG.normal(size=(3, 2))
    np.testing.assert_allclose(
        linalg.solve_sylvester(A, B, C).eval(), sl.solve_sylvester(A, B, C), atol=1e-10
    )
    np.testing.assert_allclose(
        linalg.solve_continuous_lyapunov(A, Q3).eval(), sl.solve_continuous_lyapunov(A, Q3), atol=1e-10
    )
    for method in ("direct", "bilinear"):
        np.testing.assert_allclose(
            linalg.solve_discrete_lyapunov(A, Q3, method=method).eval(),
            sl.solve_discrete_lyapunov(A, Q3),
            atol=1e-10,
        )
    with pytest.raises(ValueError, match="method must be"):
        linalg.solve_discrete_lyapunov(A, Q3, method="other")
    verify_grad(linalg.solve_sylvester, [A, B, C], rng=RNG)
    verify_grad(linalg.solve_continuous_lyapunov, [A, Q3], rng=RNG)
    verify_grad(linalg.solve_discrete_lyapunov, [A, Q3], rng=RNG)
