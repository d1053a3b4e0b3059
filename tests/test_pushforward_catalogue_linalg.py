"""Pushforward catalogue, part 2: linear algebra (slinalg, nlinalg, decompositions, the
run-time check of derivative rules), diagonals, Blockwise (core Ops over batch
dimensions) and Elemwise beyond one scalar op (broadcasting, integer inputs, a fused
multi-output Composite). The checks are in ``test_pushforward_catalogue_harness.py``.

Matrices are drawn well-conditioned: SPD matrices where the Op needs one (cholesky, 'pos'
solves), diagonally dominant ones where it inverts. Ops that read one triangle of a
symmetric matrix (cholesky, eigh, eigvalsh, 'sym'/'pos' solves) are differentiated along
symmetric tangents: their rules are the derivatives on symmetric matrices.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import arignote.scalar as ps
import arignote.tensor as pt
from arignote.scalar.composite import Composite
from arignote.scalar.type import get_scalar_type
from arignote.tensor import linalg as la
from arignote.tensor.blockwise import Blockwise
from arignote.tensor.elemwise import Elemwise
from arignote.tensor.linalg.inverse import Cofactor
from arignote.tensor.linalg.operands import RuntimeCheck, apply_core
from arignote.tensor.products import Dot
from tests.test_pushforward_catalogue_harness import (
    Builder,
    Case,
    case_params,
    rand,
    run_case,
    run_each_input,
    several_inputs,
    spd,
    sym,
)


def M(name: str, dtype: str, batch: int = 0) -> Any:
    """A matrix Variable (a stack of them, with ``batch`` leading dimensions)."""
    return pt.tensor(name, dtype=dtype, shape=(None,) * (2 + batch))


def square(n: int, seed: int = 0, dtype: str = "float64", batch: tuple = ()) -> np.ndarray:
    """A random, diagonally dominant (so well-conditioned) square matrix."""
    return (rand(*batch, n, n, seed=seed) + 2 * n * np.eye(n)).astype(dtype)


def on_matrix(fn: Any, value: Any, tangent: Any = None, batch: int = 0, **kw: Any) -> Builder:
    """A case ``fn(a)`` at ``value(dtype)``, along ``tangent(dtype)`` when given."""

    def build(dtype: str) -> Case:
        a = M("a", dtype, batch)
        out = fn(a)
        outs = list(out) if isinstance(out, (list, tuple)) else [out]
        tangents = None if tangent is None else [tangent(dtype)]
        return Case([a], [value(dtype)], outs, tangents=tangents, **kw)

    return build


def solve_case(fn: Any, a_value: Any, b_shape: tuple, a_tangent: Any = None, b_batch: int = 0) -> Builder:
    """A case ``fn(a, b)``; ``b`` has ``b_shape`` (``b_batch`` of its dimensions are batch)."""

    def build(dtype: str) -> Case:
        a = M("a", dtype, a_value(dtype).ndim - 2)
        b = pt.tensor("b", dtype=dtype, shape=(None,) * len(b_shape))
        tangents = None
        if a_tangent is not None:
            tangents = [a_tangent(dtype), rand(*b_shape, seed=5, dtype=dtype)]
        vals = [a_value(dtype), rand(*b_shape, seed=1, dtype=dtype)]
        return Case([a, b], vals, [fn(a, b)], tangents=tangents)

    return build


def lower_triangular(dtype: str) -> np.ndarray:
    return np.tril(square(3, seed=2)).astype(dtype)


def tridiagonal(dtype: str) -> np.ndarray:
    a = square(4, seed=3)
    return (a * (np.abs(np.subtract.outer(np.arange(4), np.arange(4))) <= 1)).astype(dtype)


def _cho_solve(dtype: str) -> Case:
    c, b = M("c", dtype), pt.tensor("b", dtype=dtype, shape=(None,))
    factor = np.linalg.cholesky(spd(3)).astype(dtype)
    tangents = [np.tril(rand(3, 3, seed=4)).astype(dtype), rand(3, seed=5, dtype=dtype)]
    return Case(
        [c, b], [factor, rand(3, seed=1, dtype=dtype)], [la.cho_solve((c, True), b)], tangents=tangents
    )


def _generalized_eigvalsh(dtype: str) -> Case:
    a, b = M("a", dtype), M("b", dtype)
    tangents = [sym(3, seed=6, dtype=dtype), sym(3, seed=7, dtype=dtype)]
    return Case(
        [a, b],
        [sym(3, seed=1, dtype=dtype), spd(3, seed=2, dtype=dtype)],
        [la.eigvalsh(a, b)],
        tangents=tangents,
    )


def _runtime_check(condition: str, ref_shape: tuple) -> Builder:
    def build(dtype: str) -> Case:
        x, ref = M("x", dtype), M("ref", dtype)
        out = RuntimeCheck(condition, "the check")(pt.exp(x), ref)
        ref_value = np.zeros(ref_shape, dtype)
        return Case([x, ref], [rand(2, 3, dtype=dtype), ref_value], [out], wrt=[x])

    return build


def spd3(dtype: str) -> np.ndarray:
    return spd(3, dtype=dtype)


def sym3(dtype: str) -> np.ndarray:
    return sym(3, seed=9, dtype=dtype)


def sq3(dtype: str) -> np.ndarray:
    return square(3, dtype=dtype)


LINALG_CASES: dict[str, list[Builder]] = {
    "arignote.tensor.linalg.decompositions.Cholesky": [
        on_matrix(la.cholesky, spd3, sym3),
        on_matrix(lambda a: la.cholesky(a, lower=False), spd3, sym3),
    ],
    "arignote.tensor.linalg.solve.CholeskySolve": [_cho_solve],
    "arignote.tensor.linalg.solve.Solve": [
        solve_case(la.solve, sq3, (3, 2)),
        solve_case(la.solve, sq3, (3,)),
        solve_case(lambda a, b: la.solve(a, b, transposed=True), sq3, (3,)),
        solve_case(lambda a, b: la.solve(a, b, assume_a="pos"), spd3, (3, 2), a_tangent=sym3),
        solve_case(lambda a, b: la.solve(a, b, assume_a="sym", lower=True), sym3, (3,), a_tangent=sym3),
        solve_case(
            lambda a, b: la.solve(a, b, assume_a="tridiagonal"),
            tridiagonal,
            (4,),
            a_tangent=lambda d: tridiagonal(d) - square(4, seed=3, dtype=d) * 0.5 * (tridiagonal(d) != 0),
        ),
    ],
    "arignote.tensor.linalg.solve.SolveTriangular": [
        solve_case(
            lambda a, b: la.solve_triangular(a, b, lower=True),
            lower_triangular,
            (3, 2),
            a_tangent=lambda d: np.tril(rand(3, 3, seed=8)).astype(d),
        ),
        solve_case(
            lambda a, b: la.solve_triangular(a, b, lower=True, trans=1),
            lower_triangular,
            (3,),
            a_tangent=lambda d: np.tril(rand(3, 3, seed=8)).astype(d),
        ),
    ],
    "arignote.tensor.linalg.decompositions.Eigvalsh": [
        on_matrix(la.eigvalsh, sym3, sym3),
        _generalized_eigvalsh,
    ],
    "arignote.tensor.linalg.matrix_functions.Expm": [
        on_matrix(la.expm, lambda d: (rand(3, 3) * 0.5).astype(d))
    ],
    "arignote.tensor.linalg.decompositions.Eigh": [
        on_matrix(la.eigh, sym3, lambda d: sym(3, seed=4, dtype=d))
    ],
    "arignote.tensor.linalg.inverse.MatrixInverse": [on_matrix(la.inv, sq3)],
    "arignote.tensor.linalg.inverse.Det": [
        on_matrix(la.det, sq3),
        on_matrix(la.det, lambda d: rand(3, 3, seed=3, dtype=d)),
    ],
    "arignote.tensor.linalg.inverse.Cofactor": [  # the gradient of det (issue 11)
        on_matrix(lambda a: apply_core(Cofactor(), a), sq3),
        on_matrix(lambda a: apply_core(Cofactor(), a), lambda d: rand(3, 3, seed=3, dtype=d)),
    ],
    "arignote.tensor.linalg.inverse.SLogDet": [
        on_matrix(la.slogdet, sq3),
        on_matrix(la.slogdet, lambda d: -square(3, seed=1, dtype=d)),  # negative determinant
    ],
    "arignote.tensor.linalg.inverse.MatrixPinv": [
        on_matrix(la.pinv, lambda d: rand(4, 2, seed=2, dtype=d)),
        on_matrix(la.pinv, lambda d: rand(2, 4, seed=3, dtype=d)),
        on_matrix(lambda a: la.pinv(a, hermitian=True), spd3, sym3),
    ],
    "arignote.tensor.linalg.operands.RuntimeCheck": [
        _runtime_check("square", (2, 2)),
        _runtime_check("tall", (3, 2)),
    ],
}


# --- diagonals ----------------------------------------------------------------------------------

DIAG_CASES: dict[str, list[Builder]] = {
    "arignote.tensor.diag.ExtractDiag": [
        on_matrix(pt.diagonal, lambda d: rand(3, 4, dtype=d)),
        on_matrix(lambda a: pt.diagonal(a, offset=-1), lambda d: rand(3, 4, dtype=d)),
        on_matrix(lambda a: pt.diagonal(a, 1, axis1=2, axis2=0), lambda d: rand(3, 2, 4, dtype=d), batch=1),
    ],
    "arignote.tensor.diag.AllocDiag": [
        on_matrix(lambda a: pt.diag(a[0]), lambda d: rand(2, 3, dtype=d)),
        on_matrix(lambda a: pt.diag(a[1], k=2), lambda d: rand(2, 3, dtype=d)),
    ],
}


# --- Blockwise ---------------------------------------------------------------------------------


def _blockwise_dot(dtype: str) -> Case:
    a, b = M("a", dtype, 1), M("b", dtype)
    op = Blockwise(Dot(), "(m,k),(k,n)->(m,n)")
    vals = [rand(2, 3, 4, dtype=dtype), rand(4, 2, seed=1, dtype=dtype)]
    return Case([a, b], vals, [op(a, b)])


def _blockwise_solve_broadcast(dtype: str) -> Case:
    a, b = M("a", dtype, 1), pt.tensor("b", dtype=dtype, shape=(None, None))
    vals = [square(3, batch=(2,), dtype=dtype), rand(2, 3, seed=1, dtype=dtype)]
    return Case([a, b], vals, [la.solve(a, b, b_ndim=1)])


BLOCKWISE_CASES: dict[str, list[Builder]] = {
    "arignote.tensor.blockwise.Blockwise": [
        on_matrix(la.inv, lambda d: square(3, batch=(2,), dtype=d), batch=1),
        on_matrix(la.slogdet, lambda d: square(3, batch=(2,), dtype=d), batch=1),  # two outputs
        on_matrix(
            la.cholesky, lambda d: spd(3, batch=(2,), dtype=d), lambda d: sym(3, batch=(2,), dtype=d), batch=1
        ),
        on_matrix(
            la.eigh,
            lambda d: sym(3, seed=10, batch=(2,), dtype=d),
            lambda d: sym(3, seed=1, batch=(2,), dtype=d),
            batch=1,
        ),
        _blockwise_dot,
        _blockwise_solve_broadcast,
    ],
}


# --- Elemwise beyond a single scalar op (each scalar op: test_pushforward_catalogue_scalar.py) ---


def _composite(dtype: str) -> Case:
    a, b = get_scalar_type(dtype)("a"), get_scalar_type(dtype)("b")
    op = Elemwise(Composite([a, b], [a * b, ps.exp(a) - ps.sin(b), ps.sqr(a + b)]))
    x, y = pt.tensor("x", dtype=dtype, shape=(None, 1)), pt.tensor("y", dtype=dtype, shape=(None,))
    vals = [rand(3, 1, dtype=dtype), rand(4, seed=1, dtype=dtype)]
    return Case([x, y], vals, op(x, y))


def _broadcasting(dtype: str) -> Case:
    x, y = pt.tensor("x", dtype=dtype, shape=(None, 1)), pt.tensor("y", dtype=dtype, shape=(1, None))
    vals = [rand(3, 1, dtype=dtype), rand(1, 4, seed=1, dtype=dtype)]
    return Case([x, y], vals, [pt.arctan2(x, y) * y])


def _int_input(dtype: str) -> Case:
    x, i = pt.tensor("x", dtype=dtype, shape=(None,)), pt.lvector("i")
    return Case([x, i], [rand(4, dtype=dtype), np.array([1, -2, 3, 0])], [pt.pow(x, i) + pt.mul(x, i)])


ELEMWISE_CASES: dict[str, list[Builder]] = {
    "arignote.tensor.elemwise.Elemwise": [_composite, _broadcasting, _int_input],
}


LINALG_ALL_CASES: dict[str, list[Builder]] = {
    **LINALG_CASES,
    **DIAG_CASES,
    **BLOCKWISE_CASES,
    **ELEMWISE_CASES,
}

LINALG_XFAIL: dict[str, str] = {}
LINALG_XFAIL_EACH: dict[str, str] = {}

F32 = ["Cholesky[0]", "Solve[0]", "MatrixInverse[0]", "Eigh[0]", "Blockwise[1]", "Elemwise[0]", "SLogDet[0]"]


@pytest.mark.parametrize("name, builder", case_params(LINALG_ALL_CASES, LINALG_XFAIL))
def test_pushforward_matches_pullback(name: str, builder: Builder) -> None:
    run_case(name, builder)


@pytest.mark.parametrize(
    "name, builder", case_params(LINALG_ALL_CASES, LINALG_XFAIL_EACH, keep=several_inputs)
)
def test_pushforward_matches_pullback_each_input(name: str, builder: Builder) -> None:
    run_each_input(name, builder)


@pytest.mark.parametrize(
    "name, builder", [p for p in case_params(LINALG_ALL_CASES, LINALG_XFAIL) if p.id in F32]
)
def test_pushforward_matches_pullback_float32(name: str, builder: Builder) -> None:
    run_case(name, builder, "float32")
