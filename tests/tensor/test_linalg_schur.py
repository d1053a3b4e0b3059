"""Schur and QZ decompositions, the discrete Riccati solver and the tridiagonal LU Ops,
against SciPy; gradients by finite differences where they exist; errors for bad input."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg

import arignote
import arignote.tensor as pt
from arignote.gradient import verify_grad
from arignote.tensor.linalg import (
    QZ,
    LUFactorTridiagonal,
    Schur,
    SolveDiscreteARE,
    ordqz,
    qz,
    schur,
    solve_discrete_are,
    tridiagonal_lu_factor,
    tridiagonal_lu_solve,
)

RNG = np.random.default_rng(42)


def _tridiagonal(n: int, rng: np.random.Generator = RNG) -> np.ndarray:
    return (
        np.diag(rng.normal(size=n) + 4.0)
        + np.diag(rng.normal(size=n - 1), 1)
        + np.diag(rng.normal(size=n - 1), -1)
    )


# --- Schur -----------------------------------------------------------------------------------


@pytest.mark.parametrize("output", ["real", "complex"])
@pytest.mark.parametrize("sort", [None, "lhp", "iuc"])
def test_schur_matches_scipy(output, sort):
    a = RNG.normal(size=(5, 5))
    x = pt.dmatrix("x")
    t, z = schur(x, output=output, sort=sort)
    assert t.type.dtype == ("float64" if output == "real" else "complex128")
    got_t, got_z = arignote.function([x], [t, z])(a)
    want_t, want_z, *_ = scipy.linalg.schur(a, output=output, sort=sort)
    np.testing.assert_allclose(got_t, want_t, atol=1e-12)
    np.testing.assert_allclose(got_z, want_z, atol=1e-12)
    np.testing.assert_allclose(got_z @ got_t @ got_z.conj().T, a, atol=1e-10)


def test_schur_of_a_stack_and_float32():
    a = RNG.normal(size=(3, 4, 4)).astype("float32")
    x = pt.tensor3("x", dtype="float32")
    t, z = schur(x)
    assert t.type.dtype == "float32" and t.type.ndim == 3
    got_t, got_z = arignote.function([x], [t, z])(a)
    for k in range(3):
        np.testing.assert_allclose(got_z[k] @ got_t[k] @ got_z[k].T, a[k], atol=1e-4)


def test_schur_static_shape_and_shape_inference():
    x = pt.tensor("x", shape=(4, 4))
    t, z = schur(x)
    assert t.type.shape == (4, 4) and z.type.shape == (4, 4)
    y = pt.dmatrix("y")
    f = arignote.function([y], schur(y)[0].shape)
    assert not any(isinstance(n.op, Schur) for n in f.maker.fgraph.apply_nodes)
    np.testing.assert_array_equal(f(np.eye(3)), [3, 3])


def test_schur_errors():
    with pytest.raises(ValueError, match="output must be 'real' or 'complex'"):
        schur(pt.dmatrix(), output="imaginary")
    with pytest.raises(ValueError, match="sort must be None or one of"):
        schur(pt.dmatrix(), sort="up")
    with pytest.raises(ValueError, match="A must be square"):
        schur(pt.tensor("a", shape=(2, 3)))
    with pytest.raises(ValueError, match="at least 2-d"):
        schur(pt.dvector("v"))
    x = pt.dmatrix("x")
    with pytest.raises(
        ValueError, match="schur: A must be a square matrix, got an array of shape \\(2, 3\\)"
    ):
        arignote.function([x], schur(x)[0])(np.ones((2, 3)))
    with pytest.raises(Exception, match="Schur"):  # no gradient, as in PyTensor
        arignote.grad(schur(x)[0].sum(), x)


# --- QZ --------------------------------------------------------------------------------------


@pytest.mark.parametrize("output", ["real", "complex"])
def test_qz_matches_scipy(output):
    a, b = RNG.normal(size=(4, 4)), RNG.normal(size=(4, 4))
    x, y = pt.dmatrices("x", "y")
    outs = qz(x, y, output=output)
    assert len(outs) == 4
    got = arignote.function([x, y], outs)(a, b)
    for g, w in zip(got, scipy.linalg.qz(a, b, output=output)):
        np.testing.assert_allclose(g, w, atol=1e-12)
    aa, bb, q, z = got
    np.testing.assert_allclose(q @ aa @ z.conj().T, a, atol=1e-10)
    np.testing.assert_allclose(q @ bb @ z.conj().T, b, atol=1e-10)


@pytest.mark.parametrize("sort", ["lhp", "rhp", "iuc", "ouc"])
@pytest.mark.parametrize("output", ["real", "complex"])
def test_ordqz_matches_scipy(sort, output):
    a, b = RNG.normal(size=(5, 5)), RNG.normal(size=(5, 5))
    x, y = pt.dmatrices("x", "y")
    outs = ordqz(x, y, sort=sort, output=output)
    assert [o.type.ndim for o in outs] == [2, 2, 1, 1, 2, 2]
    assert outs[2].type.dtype == "complex128"
    got = arignote.function([x, y], outs)(a, b)
    for g, w in zip(got, scipy.linalg.ordqz(a, b, sort=sort, output=output)):
        np.testing.assert_allclose(g, w, atol=1e-10)


def test_qz_with_eigenvalues_and_no_sort_keeps_qzs_order():
    a, b = RNG.normal(size=(4, 4)), RNG.normal(size=(4, 4))
    x, y = pt.dmatrices("x", "y")
    aa, bb, alpha, beta, q, z = arignote.function([x, y], qz(x, y, return_eigenvalues=True))(a, b)
    for g, w in zip((aa, bb, q, z), scipy.linalg.qz(a, b)):
        np.testing.assert_allclose(g, w, atol=1e-10)
    np.testing.assert_allclose(
        np.sort_complex(alpha / beta), np.sort_complex(scipy.linalg.eigvals(a, b)), atol=1e-8
    )


def test_qz_errors():
    x = pt.dmatrix("x")
    with pytest.raises(ValueError, match="same size"):
        qz(pt.tensor("a", shape=(2, 2)), pt.tensor("b", shape=(3, 3)))
    with pytest.raises(ValueError, match="output must be"):
        qz(x, x, output="other")
    with pytest.raises(TypeError, match="QZ: A must be a matrix"):
        QZ()(pt.dtensor3(), x)
    y = pt.dmatrix("y")
    f = arignote.function([x, y], qz(x, y)[0])
    with pytest.raises(ValueError, match="same shape"):
        f(np.eye(2), np.eye(3))
    with pytest.raises(Exception, match="QZ"):
        arignote.grad(qz(x, y)[0].sum(), x)


# --- the discrete Riccati equation -----------------------------------------------------------


def _dare_problem(m: int = 3, n: int = 2, rng: np.random.Generator = RNG):
    a = 0.6 * rng.normal(size=(m, m))
    b = rng.normal(size=(m, n))
    c = rng.normal(size=(m, m))
    q = c @ c.T + np.eye(m)
    d = rng.normal(size=(n, n))
    r = d @ d.T + np.eye(n)
    return a, b, q, r


def test_solve_discrete_are_matches_scipy_and_solves_the_equation():
    a, b, q, r = _dare_problem()
    A, B, Q, R = (pt.dmatrix(k) for k in "ABQR")
    x = arignote.function([A, B, Q, R], solve_discrete_are(A, B, Q, R))(a, b, q, r)
    np.testing.assert_allclose(x, scipy.linalg.solve_discrete_are(a, b, q, r), rtol=1e-10)
    gain = np.linalg.solve(r + b.T @ x @ b, b.T @ x @ a)
    np.testing.assert_allclose(a.T @ x @ a - x - a.T @ x @ b @ gain + q, 0.0, atol=1e-9)


def test_solve_discrete_are_gradients_by_finite_differences():
    a, b, q, r = _dare_problem(rng=np.random.default_rng(3))
    w = np.random.default_rng(4).normal(size=(3, 3))

    def cost(A, B, Q, R):
        # Q and R enter symmetrised: the solver reads symmetric matrices
        return (solve_discrete_are(A, B, (Q + Q.T) / 2, (R + R.T) / 2) * w).sum()

    verify_grad(cost, [a, b, q, r], rng=np.random.default_rng(5), eps=1e-6, abs_tol=1e-5, rel_tol=1e-5)


def test_solve_discrete_are_batched():
    probs = [_dare_problem() for _ in range(2)]
    a, b, q, r = (np.stack(p) for p in zip(*probs))
    A, B, Q, R = (pt.dtensor3(k) for k in "ABQR")
    x = arignote.function([A, B, Q, R], solve_discrete_are(A, B, Q, R))(a, b, q, r)
    for k in range(2):
        np.testing.assert_allclose(x[k], scipy.linalg.solve_discrete_are(*probs[k]), rtol=1e-10)


def test_solve_discrete_are_errors():
    with pytest.raises(ValueError, match="B's columns and R"):
        SolveDiscreteARE()(
            pt.tensor("a", shape=(3, 3)),
            pt.tensor("b", shape=(3, 2)),
            pt.tensor("q", shape=(3, 3)),
            pt.tensor("r", shape=(3, 3)),
        )
    A, B, Q, R = (pt.dmatrix(k) for k in "ABQR")
    f = arignote.function([A, B, Q, R], solve_discrete_are(A, B, Q, R))
    with pytest.raises(ValueError, match="A must be m x m, B m x n"):
        f(np.eye(3), np.ones((2, 2)), np.eye(3), np.eye(2))


# --- tridiagonal LU --------------------------------------------------------------------------


@pytest.mark.parametrize("b_ndim", [1, 2])
@pytest.mark.parametrize("transposed", [False, True])
def test_tridiagonal_lu_solve_matches_numpy(b_ndim, transposed):
    a = _tridiagonal(6)
    b = RNG.normal(size=(6,) if b_ndim == 1 else (6, 3))
    A, Bv = pt.dmatrix("A"), pt.tensor("b", shape=(None,) * b_ndim)
    x = tridiagonal_lu_solve(tridiagonal_lu_factor(A), Bv, b_ndim=b_ndim, transposed=transposed)
    got = arignote.function([A, Bv], x)(a, b)
    np.testing.assert_allclose(got, np.linalg.solve(a.T if transposed else a, b), rtol=1e-10)


def test_tridiagonal_lu_factor_matches_lapack():
    a = _tridiagonal(5)
    A = pt.dmatrix("A")
    outs = tridiagonal_lu_factor(A)
    assert [o.type.dtype for o in outs] == ["float64"] * 4 + ["int32"]
    got = arignote.function([A], outs)(a)
    want = scipy.linalg.lapack.dgttrf(np.diag(a, -1), np.diag(a), np.diag(a, 1))[:5]
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_tridiagonal_static_lengths_and_batches():
    A = pt.tensor("A", shape=(2, 5, 5))
    dl, d, du, du2, ipiv = tridiagonal_lu_factor(A)
    assert dl.type.shape == (2, 4) and d.type.shape == (2, 5) and du2.type.shape == (2, 3)
    a = np.stack([_tridiagonal(5), _tridiagonal(5)])
    b = RNG.normal(size=(2, 5))
    Bv = pt.dmatrix("b")
    x = arignote.function([A, Bv], tridiagonal_lu_solve((dl, d, du, du2, ipiv), Bv, b_ndim=1))(a, b)
    for k in range(2):
        np.testing.assert_allclose(x[k], np.linalg.solve(a[k], b[k]), rtol=1e-10)


@pytest.mark.parametrize("transposed", [False, True])
def test_tridiagonal_small_sizes(transposed):
    # 1 x 1 and 2 x 2 (SciPy's gttrf wrapper refuses these; both pivoting branches of 2 x 2)
    A, Bv = pt.dmatrix("A"), pt.dvector("b")
    fac = tridiagonal_lu_factor(A)
    f = arignote.function([A, Bv], tridiagonal_lu_solve(fac, Bv, b_ndim=1, transposed=transposed))
    for a in ([[4.0]], [[2.0, 1.0], [1.0, 3.0]], [[0.5, 1.0], [3.0, 2.0]], [[0.0, 1.0], [2.0, 5.0]]):
        a = np.array(a)
        b = np.arange(1.0, len(a) + 1)
        np.testing.assert_allclose(f(a, b), np.linalg.solve(a.T if transposed else a, b), rtol=1e-12)
    ipiv = arignote.function([A], fac[4])
    np.testing.assert_array_equal(ipiv(np.array([[0.5, 1.0], [3.0, 2.0]])), [2, 2])
    np.testing.assert_array_equal(ipiv(np.array([[2.0, 1.0], [1.0, 3.0]])), [1, 2])


def test_tridiagonal_solve_gradient_in_b():
    a = _tridiagonal(4)
    fac = tridiagonal_lu_factor(pt.constant(a))
    verify_grad(lambda b: tridiagonal_lu_solve(fac, b, b_ndim=2), [RNG.normal(size=(4, 2))], rng=RNG)
    verify_grad(
        lambda b: tridiagonal_lu_solve(fac, b, b_ndim=1, transposed=True), [RNG.normal(size=4)], rng=RNG
    )
    A = pt.dmatrix("A")
    with pytest.raises(Exception, match="LUFactorTridiagonal"):
        arignote.grad(tridiagonal_lu_solve(tridiagonal_lu_factor(A), pt.ones(3), b_ndim=1).sum(), A)


def test_tridiagonal_errors():
    A = pt.dmatrix("A")
    with pytest.raises(ValueError, match="lengths n-1, n, n-1"):
        LUFactorTridiagonal()(pt.tensor("dl", shape=(3,)), pt.tensor("d", shape=(5,)), pt.dvector())
    with pytest.raises(ValueError, match="b_ndim must be 1 or 2"):
        tridiagonal_lu_solve(tridiagonal_lu_factor(A), pt.dvector(), b_ndim=3)
    with pytest.raises(TypeError, match="5 outputs of tridiagonal_lu_factor"):
        tridiagonal_lu_solve(tridiagonal_lu_factor(A)[:3], pt.dvector(), b_ndim=1)
    with pytest.raises(TypeError, match="ipiv must be an integer vector"):
        dl, d, du, du2, _ = tridiagonal_lu_factor(A)
        tridiagonal_lu_solve((dl, d, du, du2, d), pt.dvector(), b_ndim=1)
    with pytest.raises(ValueError, match="b .* must have 4 rows"):
        tridiagonal_lu_solve(
            tridiagonal_lu_factor(pt.tensor("a", shape=(4, 4))), pt.tensor("b", shape=(3,)), b_ndim=1
        )
    f = arignote.function([A], tridiagonal_lu_factor(A))
    with pytest.raises(np.linalg.LinAlgError, match="singular"):
        f(np.zeros((3, 3)))
    Bv = pt.dvector("b")
    g = arignote.function([A, Bv], tridiagonal_lu_solve(tridiagonal_lu_factor(A), Bv, b_ndim=1))
    with pytest.raises(ValueError, match="b has 2 rows"):
        g(_tridiagonal(3), np.ones(2))
