"""Linear algebra at its edges (issue 11): the gradient of ``det`` at singular matrices,
and what ``solve`` does with a singular system."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import arignote.tensor as pt
from arignote import function, grad
from arignote.gradient import Rop, hessian, verify_grad
from arignote.tensor.linalg.inverse import Cofactor, cofactor_matrix
from arignote.tensor.linalg.solve import CholeskySolve, Solve, SolveTriangular

RNG = np.random.default_rng(20240611)


def cofactors_by_minors(a: np.ndarray) -> np.ndarray:
    """The textbook cofactor matrix: signed determinants of the minors."""
    n = a.shape[0]
    out = np.zeros_like(a)
    for i in range(n):
        for j in range(n):
            minor = np.delete(np.delete(a, i, 0), j, 1)
            out[i, j] = (-1) ** (i + j) * (np.linalg.det(minor) if minor.size else 1.0)
    return out


def det_gradient_by_differences(a: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """Central differences of det (a polynomial: accurate to rounding)."""
    out = np.zeros_like(a)
    for idx in np.ndindex(*a.shape):
        up, down = a.copy(), a.copy()
        up[idx] += eps
        down[idx] -= eps
        out[idx] = (np.linalg.det(up) - np.linalg.det(down)) / (2 * eps)
    return out


def _rank(n: int, r: int) -> np.ndarray:
    return RNG.normal(size=(n, r)) @ RNG.normal(size=(r, n))


SINGULAR = {
    "ones": np.ones((3, 3)),
    "rank n-1 (4x4)": _rank(4, 3),
    "rank n-1 (2x2)": np.array([[1.0, 2.0], [2.0, 4.0]]),
    "zero row": np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0], [4.0, 5.0, 7.0]]),
    "diagonal with one zero": np.diag([2.0, 3.0, 0.0]),
    "rank n-2": _rank(4, 2),
    "zero": np.zeros((3, 3)),
}
NONSINGULAR = {
    "random 4x4": RNG.normal(size=(4, 4)),
    "identity": np.eye(3),
    "1x1": np.array([[-2.5]]),
    "permutation": np.eye(3)[[2, 0, 1]],
}


@pytest.fixture(scope="module")
def det_grad():
    x = pt.dmatrix("x")
    return function([x], grad(pt.linalg.det(x), x))


@pytest.mark.parametrize("name", list(SINGULAR))
def test_the_gradient_of_det_at_singular_matrices(det_grad, name):
    a = SINGULAR[name]
    got = det_grad(a)  # used to raise LinAlgError
    assert np.isfinite(got).all()
    np.testing.assert_allclose(got, cofactors_by_minors(a), atol=1e-10)
    np.testing.assert_allclose(got, det_gradient_by_differences(a), atol=1e-6)
    if np.linalg.matrix_rank(a) <= a.shape[0] - 2:
        np.testing.assert_allclose(got, 0.0, atol=1e-12)
    else:
        assert np.abs(got).max() > 0.1  # rank n-1: the adjugate is not zero


@pytest.mark.parametrize("name", list(NONSINGULAR))
def test_the_gradient_of_det_at_invertible_matrices(det_grad, name):
    a = NONSINGULAR[name]
    got = det_grad(a)
    np.testing.assert_allclose(got, np.linalg.det(a) * np.linalg.inv(a).T, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(got, cofactors_by_minors(a), rtol=1e-10, atol=1e-12)


def test_verify_grad_of_det_near_and_at_singular():
    for a in [RNG.normal(size=(3, 3)), _rank(3, 2), _rank(3, 2) + 1e-9 * np.eye(3)]:
        verify_grad(pt.linalg.det, [a], rng=np.random.default_rng(0))


def test_the_gradient_of_a_batched_det():
    x = pt.dtensor3("x")
    g = function([x], grad(pt.linalg.det(x).sum(), x))
    stack = np.stack([SINGULAR["ones"], NONSINGULAR["identity"], SINGULAR["zero row"], _rank(3, 1)])
    got = g(stack)
    np.testing.assert_allclose(got, np.stack([cofactors_by_minors(a) for a in stack]), atol=1e-10)
    # the NumPy helper takes stacks too
    np.testing.assert_allclose(cofactor_matrix(stack), got, atol=1e-12)


def test_the_gradient_of_det_in_float32():
    x = pt.fmatrix("x")
    gx = grad(pt.linalg.det(x), x)
    assert gx.type.dtype == "float32"
    got = function([x], gx)(np.ones((3, 3), dtype="float32"))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, 0.0, atol=1e-6)


def test_empty_and_one_by_one():
    x = pt.dmatrix("x")
    g = function([x], grad(pt.linalg.det(x), x))
    assert g(np.zeros((0, 0))).shape == (0, 0)
    np.testing.assert_array_equal(g(np.array([[0.0]])), [[1.0]])


def test_the_pushforward_of_det_at_a_singular_matrix():
    x, dx = pt.dmatrix("x"), pt.dmatrix("dx")
    jvp = function([x, dx], Rop(pt.linalg.det(x), x, dx))
    a, d = SINGULAR["rank n-1 (4x4)"], RNG.normal(size=(4, 4))
    expected = (np.linalg.det(a + 1e-6 * d) - np.linalg.det(a - 1e-6 * d)) / 2e-6
    np.testing.assert_allclose(jvp(a, d), expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(jvp(a, d), (cofactors_by_minors(a) * d).sum(), atol=1e-10)


def test_second_derivatives_at_an_invertible_matrix():
    x = pt.dmatrix("x")
    a = RNG.normal(size=(3, 3))
    h = function([x], hessian(pt.linalg.det(x), x))(a)
    # d cof(X)[i, j] / dX[k, l] by differences of the cofactor matrix
    eps = 1e-6
    ref = np.zeros((3, 3, 3, 3))
    for k, m in np.ndindex(3, 3):
        up, down = a.copy(), a.copy()
        up[k, m] += eps
        down[k, m] -= eps
        ref[..., k, m] = (cofactors_by_minors(up) - cofactors_by_minors(down)) / (2 * eps)
    np.testing.assert_allclose(np.asarray(h).reshape(3, 3, 3, 3), ref, atol=1e-6)
    verify_grad(lambda m: Cofactor()(m), [a], rng=np.random.default_rng(1))
    dx = pt.dmatrix("dx")
    d = RNG.normal(size=(3, 3))
    jvp = function([x, dx], Rop(Cofactor()(x), x, dx))(a, d)
    np.testing.assert_allclose(jvp, np.tensordot(ref, d, axes=([2, 3], [0, 1])), atol=1e-6)


# -- solve with a singular matrix ----------------------------------------------------------


def test_solve_raises_on_a_singular_matrix_by_default():
    a, b = pt.dmatrix("a"), pt.dvector("b")
    f = function([a, b], pt.linalg.solve(a, b))
    with pytest.raises(
        np.linalg.LinAlgError, match=r"Solve\{gen.*the matrix a of shape \(2, 2\) is singular"
    ):
        f(np.ones((2, 2)), np.ones(2))
    with pytest.raises(np.linalg.LinAlgError, match="on_error='nan'"):
        f(np.zeros((3, 3)), np.ones(3))
    np.testing.assert_allclose(f(np.array([[2.0, 0.0], [0.0, 4.0]]), np.ones(2)), [0.5, 0.25])


def test_solve_on_error_nan_gives_nans():
    a, b = pt.dmatrix("a"), pt.dmatrix("b")
    f = function([a, b], pt.linalg.solve(a, b, on_error="nan"))
    out = f(np.ones((2, 2)), np.ones((2, 3)))
    assert out.shape == (2, 3) and np.isnan(out).all()
    np.testing.assert_allclose(f(2 * np.eye(2), np.ones((2, 3))), np.full((2, 3), 0.5))


def test_a_batch_with_one_singular_system():
    a, b = pt.dtensor3("a"), pt.dmatrix("b")
    stack = np.stack([np.eye(2), np.ones((2, 2)), 2 * np.eye(2)])
    rhs = np.ones((3, 2))
    with pytest.raises(np.linalg.LinAlgError, match="is singular"):
        function([a, b], pt.linalg.solve(a, b, b_ndim=1))(stack, rhs)
    out = function([a, b], pt.linalg.solve(a, b, b_ndim=1, on_error="nan"))(stack, rhs)
    np.testing.assert_allclose(out[0], [1.0, 1.0])
    assert np.isnan(out[1]).all()
    np.testing.assert_allclose(out[2], [0.5, 0.5])


def test_solve_assume_pos_names_positive_definiteness():
    a, b = pt.dmatrix("a"), pt.dvector("b")
    f = function([a, b], pt.linalg.solve(a, b, assume_a="pos"))
    with pytest.raises(np.linalg.LinAlgError, match=r"Solve\{pos.* is not positive definite"):
        f(np.array([[1.0, 2.0], [2.0, 1.0]]), np.ones(2))
    g = function([a, b], pt.linalg.solve(a, b, assume_a="pos", on_error="nan"))
    assert np.isnan(g(np.array([[1.0, 2.0], [2.0, 1.0]]), np.ones(2))).all()


def test_triangular_solves_take_the_option_too():
    a, b = pt.dmatrix("a"), pt.dvector("b")
    zero_diag = np.array([[1.0, 0.0], [1.0, 0.0]])
    with pytest.raises(np.linalg.LinAlgError, match=r"SolveTriangular.*zero on its diagonal"):
        pt.linalg.solve_triangular(a, b, lower=True, on_error="raise").eval({a: zero_diag, b: np.ones(2)})
    with pytest.raises(np.linalg.LinAlgError, match="SolveTriangular"):
        pt.linalg.solve(a, b, assume_a="lower triangular").eval({a: zero_diag, b: np.ones(2)})
    nan = pt.linalg.solve(a, b, assume_a="lower triangular", on_error="nan").eval(
        {a: zero_diag, b: np.ones(2)}
    )
    assert np.isnan(nan).all()


def test_the_gradient_of_solve_follows_the_choice():
    a, b = pt.dmatrix("a"), pt.dvector("b")
    for on_error in ("raise", "nan"):
        x = pt.linalg.solve(a, b, on_error=on_error)
        ga, gb = grad(x.sum(), [a, b])
        f = function([a, b], [ga, gb])
        good = np.array([[2.0, 1.0], [0.0, 1.0]])
        np.testing.assert_allclose(f(good, np.ones(2))[1], np.linalg.solve(good.T, np.ones(2)))
        if on_error == "raise":
            with pytest.raises(np.linalg.LinAlgError, match="singular"):
                f(np.ones((2, 2)), np.ones(2))
        else:
            assert all(np.isnan(v).all() for v in f(np.ones((2, 2)), np.ones(2)))


def test_on_error_is_a_prop():
    assert Solve() == Solve(on_error="raise") != Solve(on_error="nan")
    assert hash(Solve(on_error="nan")) == hash(Solve(on_error="nan"))
    assert SolveTriangular() == SolveTriangular(on_error="raise") != SolveTriangular(on_error="nan")
    assert CholeskySolve() == CholeskySolve(on_error="raise") != CholeskySolve(on_error="nan")
    assert str(SolveTriangular(b_ndim=1)) == "SolveTriangular{lower=False, b_ndim=1}"
    assert "on_error='nan'" in str(CholeskySolve(on_error="nan"))
    assert str(Solve(b_ndim=1)) == "Solve{gen, lower=False, b_ndim=1}"
    assert "on_error='nan'" in str(Solve(on_error="nan"))
    assert pickle.loads(pickle.dumps(Solve(on_error="nan"))) == Solve(on_error="nan")
    with pytest.raises(ValueError, match="on_error must be 'raise' or 'nan'"):
        Solve(on_error="ignore")
    with pytest.raises(ValueError, match="on_error must be 'raise' or 'nan'"):
        pt.linalg.solve(pt.dmatrix(), pt.dvector(), on_error="warn")


# -- every solver raises on a singular matrix by default, as SciPy and PyTensor do --------


def test_solve_triangular_raises_by_default_naming_the_op():
    a, b = pt.dmatrix("a"), pt.dvector("b")
    zero_diag = np.array([[1.0, 0.0], [1.0, 0.0]])
    f = function([a, b], pt.linalg.solve_triangular(a, b, lower=True))
    with pytest.raises(np.linalg.LinAlgError, match=r"SolveTriangular\{lower=True.*is singular"):
        f(zero_diag, np.ones(2))
    with pytest.raises(np.linalg.LinAlgError, match="on_error='nan'"):  # says how to get NaNs
        f(zero_diag, np.ones(2))
    for trans in (0, 1):  # the transposed solve too
        g = function([a, b], pt.linalg.solve_triangular(a, b, lower=True, trans=trans))
        with pytest.raises(np.linalg.LinAlgError, match="SolveTriangular"):
            g(zero_diag, np.ones(2))
    # a unit diagonal is never singular: the zero is not read
    h = function([a, b], pt.linalg.solve_triangular(a, b, lower=True, unit_diagonal=True))
    np.testing.assert_allclose(h(zero_diag, np.ones(2)), [1.0, 0.0])
    nan = function([a, b], pt.linalg.solve_triangular(a, b, lower=True, on_error="nan"))
    assert np.isnan(nan(zero_diag, np.ones(2))).all()


@pytest.mark.parametrize("lower", [True, False])
def test_cho_solve_raises_by_default_naming_the_op(lower):
    c, b = pt.dmatrix("c"), pt.dmatrix("b")
    factor = np.array([[2.0, 0.0], [1.0, 0.0]]) if lower else np.array([[2.0, 1.0], [0.0, 0.0]])
    f = function([c, b], pt.linalg.cho_solve((c, lower), b))
    with pytest.raises(np.linalg.LinAlgError, match=r"CholeskySolve\{.*is singular.*on_error='nan'"):
        f(factor, np.ones((2, 3)))
    nan = function([c, b], pt.linalg.cho_solve((c, lower), b, on_error="nan"))
    assert np.isnan(nan(factor, np.ones((2, 3)))).all()
    good = np.array([[2.0, 0.0], [1.0, 3.0]])
    good = good if lower else good.T
    a = good @ good.T if lower else good.T @ good
    np.testing.assert_allclose(f(good, np.ones((2, 3))), np.linalg.solve(a, np.ones((2, 3))))


def test_a_batch_of_triangular_systems_with_one_singular():
    a, b = pt.dtensor3("a"), pt.dmatrix("b")
    stack = np.stack([np.eye(2), np.array([[1.0, 0.0], [1.0, 0.0]]), 2 * np.eye(2)])
    with pytest.raises(np.linalg.LinAlgError, match="is singular"):
        function([a, b], pt.linalg.solve_triangular(a, b, lower=True, b_ndim=1))(stack, np.ones((3, 2)))
    out = function([a, b], pt.linalg.solve_triangular(a, b, lower=True, b_ndim=1, on_error="nan"))(
        stack, np.ones((3, 2))
    )
    np.testing.assert_allclose(out[0], [1.0, 1.0])
    assert np.isnan(out[1]).all()
