"""The JAX backend runs the Schur/QZ decompositions, the discrete Riccati solver and the
tridiagonal LU Ops (SciPy on the host through ``jax.pure_callback``) as the reference VM does,
under ``jax.jit`` and over batches."""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")

import arignote  # noqa: E402
import arignote.tensor as pt  # noqa: E402
from arignote.tensor import linalg  # noqa: E402

RNG = np.random.default_rng(7)


def _both(inputs, outputs, *values):
    ref = arignote.function(inputs, outputs, mode="FAST_COMPILE")(*values)
    got = arignote.function(inputs, outputs, mode="JAX")(*values)
    return ref, got


def _check(ref, got):
    for r, g in zip(ref, got):
        assert r.dtype == g.dtype and r.shape == g.shape
        np.testing.assert_allclose(g, r, rtol=1e-10, atol=1e-12)


def test_schur_and_qz_in_jax():
    a, b = pt.dmatrices("a", "b")
    outs = [*linalg.schur(a), *linalg.schur(a, output="complex", sort="iuc"), *linalg.ordqz(a, b, sort="ouc")]
    _check(*_both([a, b], outs, RNG.normal(size=(4, 4)), RNG.normal(size=(4, 4))))


def test_riccati_and_its_gradient_in_jax():
    A, B, Q, R = (pt.dmatrix(k) for k in "ABQR")
    x = linalg.solve_discrete_are(A, B, Q, R)
    outs = [x, *arignote.grad(x.sum(), [A, B])]
    c = RNG.normal(size=(3, 3))
    values = (0.5 * RNG.normal(size=(3, 3)), RNG.normal(size=(3, 2)), c @ c.T + np.eye(3), np.eye(2))
    _check(*_both([A, B, Q, R], outs, *values))


def test_tridiagonal_batched_in_jax():
    a, b = pt.dtensor3("a"), pt.dmatrix("b")
    fac = linalg.tridiagonal_lu_factor(a)
    x = linalg.tridiagonal_lu_solve(fac, b, b_ndim=1)
    mats = np.stack([np.diag(RNG.normal(size=5) + 4) + np.diag(np.ones(4), 1) + np.diag(np.ones(4), -1)] * 2)
    _check(*_both([a, b], [*fac, x], mats, RNG.normal(size=(2, 5))))
