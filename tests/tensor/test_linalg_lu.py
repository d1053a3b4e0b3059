"""lu, lu_factor, lu_solve and pivot_to_permutation: SciPy is the oracle; gradients by
finite differences."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sl

import arignote.tensor as pt
from arignote.gradient import verify_grad
from arignote.tensor import linalg

RNG = np.random.default_rng(7)
A = RNG.normal(size=(4, 4))


@pytest.mark.parametrize("kwargs", [{}, {"permute_l": True}, {"p_indices": True}])
def test_lu_matches_scipy(kwargs):
    got = [v.eval() for v in linalg.lu(A, **kwargs)]
    for g, r in zip(got, sl.lu(A, **kwargs)):
        np.testing.assert_allclose(g, r)
    with pytest.raises(ValueError, match="cannot both be True"):
        linalg.lu(A, permute_l=True, p_indices=True)
    with pytest.raises(ValueError, match="must be square"):
        linalg.lu(np.ones((2, 3)))


def test_lu_factor_solve_and_pivots_match_scipy():
    lu_, piv = linalg.lu_factor(A)
    ref = sl.lu_factor(A)
    np.testing.assert_allclose(lu_.eval(), ref[0])
    np.testing.assert_array_equal(piv.eval(), ref[1])
    b, bm = RNG.normal(size=4), RNG.normal(size=(4, 3))
    for rhs in (b, bm):
        for trans in (0, 1):
            np.testing.assert_allclose(
                linalg.lu_solve((lu_, piv), rhs, trans=trans).eval(), sl.lu_solve(ref, rhs, trans=trans)
            )
    perm = linalg.pivot_to_permutation(piv).eval()
    np.testing.assert_allclose(A[perm], (np.tril(ref[0], -1) + np.eye(4)) @ np.triu(ref[0]))
    np.testing.assert_array_equal(linalg.pivot_to_permutation(piv, inverse=True).eval(), np.argsort(perm))
    p = pt.ivector("p")
    with pytest.raises(ValueError, match="pivot 5 at 0 is out of range for length 2"):
        linalg.pivot_to_permutation(p).eval({p: np.array([5, 1], dtype="int32")})
    with pytest.raises(TypeError, match="integer vector"):
        linalg.pivot_to_permutation(pt.dvector())


def test_lu_gradients():
    verify_grad(lambda x: linalg.lu(x)[1] + linalg.lu(x)[2] ** 2, [A], rng=RNG)
    verify_grad(lambda x: linalg.lu(x, permute_l=True)[0] ** 2, [A], rng=RNG)
    verify_grad(lambda x: linalg.lu(x, p_indices=True)[2], [A], rng=RNG)
    verify_grad(lambda x: linalg.lu_factor(x)[0], [A], rng=RNG)
    b = RNG.normal(size=4)
    verify_grad(lambda x, y: linalg.lu_solve(linalg.lu_factor(x), y), [A, b], rng=RNG)
    verify_grad(lambda x, y: linalg.lu_solve(linalg.lu_factor(x), y, trans=True), [A, b], rng=RNG)
