"""JAX implementations of the factorisation and the solvers of :mod:`arignote.tensor.linalg`
(``decompositions.Cholesky``, ``solve.py``, ``matrix_functions.Expm``, ``operands.RuntimeCheck``).

arignote's ``on_error`` is kept: LAPACK inside JAX does not raise for a singular (or, for
Cholesky, an indefinite) matrix but leaves infinities or NaNs, so a non-finite result from
finite inputs is the failure: ``on_error="nan"`` turns the whole result into NaNs, and
``on_error="raise"`` raises ``numpy.linalg.LinAlgError`` naming the Op (at once outside
``jax.jit``; inside, the call fails with that message when the values arrive). Only the
entries of ``A`` that SciPy reads are read (one triangle for the symmetric solvers and
Cholesky, three diagonals for ``'tridiagonal'``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax.numpy as jnp
import jax.scipy.linalg as jsl
import numpy as np

from arignote.graph.basic import Apply
from arignote.link.jax.dispatch.basic import jax_funcify
from arignote.link.jax.dispatch.nlinalg import _symmetric_from
from arignote.link.jax.dispatch.static import raise_unless
from arignote.tensor.linalg.decompositions import Cholesky
from arignote.tensor.linalg.matrix_functions import Expm
from arignote.tensor.linalg.operands import RuntimeCheck
from arignote.tensor.linalg.solve import CholeskySolve, SolveBase, SolveTriangular

__all__ = ["on_error"]


def _all_finite(*arrays: Any) -> Any:
    ok = jnp.bool_(True)
    for a in arrays:
        ok = ok & jnp.all(jnp.isfinite(a))
    return ok


def on_error(op: Any, result: Any, inputs: tuple, failure: str) -> Any:
    """``result`` of ``op``, with arignote's ``on_error`` applied to a failure (a non-finite
    result from finite inputs, or NaN input for ``on_error="nan"``)."""
    solved = _all_finite(result)
    if op.on_error == "nan":
        return jnp.where(solved, result, jnp.nan).astype(result.dtype)
    shapes = tuple(tuple(np.shape(a)) for a in inputs)
    raise_unless(
        solved | ~_all_finite(*inputs),
        f"{op}: the matrix a of shape {shapes[0]} {failure}",
        error=np.linalg.LinAlgError,
    )
    return result


@jax_funcify.register(Cholesky)
def _cholesky(op: Cholesky, node: Apply | None = None, **kwargs: Any) -> Callable[..., Any]:
    lower, dtype = op.lower, node.outputs[0].type.numpy_dtype

    def cholesky(x: Any) -> Any:
        x = jnp.asarray(x).astype(dtype)
        if op.on_error == "raise" and op.check_finite:
            raise_unless(_all_finite(x), f"Cholesky: the input (shape {x.shape}) contains NaN or infinity")
        out = jsl.cholesky(x, lower=lower)  # LAPACK reads the triangle on the `lower` side
        return on_error(op, out, (x,), "is not positive definite")

    return cholesky


def _tridiagonal(a: Any) -> Any:
    n = a.shape[-1]
    band = jnp.abs(jnp.arange(n)[:, None] - jnp.arange(n)[None, :]) <= 1
    return jnp.where(band, a, jnp.zeros((), a.dtype))


def _solver(op: SolveBase) -> Callable[[Any, Any], Any]:
    """The JAX solve of ``a x = b`` that ``op`` stands for (SciPy's reading of ``a``)."""
    lower = op.lower
    if isinstance(op, SolveTriangular):
        unit = op.unit_diagonal
        return lambda a, b: jsl.solve_triangular(a, b, lower=lower, unit_diagonal=unit)
    if isinstance(op, CholeskySolve):

        def cho_solve(c: Any, b: Any) -> Any:
            # a zero on the diagonal of the factor: singular (SciPy's cho_solve would divide by it)
            singular = jnp.any(jnp.diagonal(c) == 0)
            x = jsl.cho_solve((c, lower), b)
            return jnp.where(singular, jnp.inf, x).astype(x.dtype)

        return cho_solve
    assume_a = op.assume_a
    if assume_a == "diagonal":
        return lambda a, b: b / (jnp.diagonal(a) if b.ndim == 1 else jnp.diagonal(a)[:, None])
    if assume_a == "tridiagonal":
        return lambda a, b: jnp.linalg.solve(_tridiagonal(a), b)
    if assume_a in ("sym", "her"):
        return lambda a, b: jnp.linalg.solve(_symmetric_from(a, lower), b)
    if assume_a == "pos":

        def pos_solve(a: Any, b: Any) -> Any:
            factor = jsl.cholesky(_symmetric_from(a, lower), lower=True)
            return jsl.cho_solve((factor, True), b)

        return pos_solve
    return jnp.linalg.solve  # 'gen' and 'banded' (SciPy finds the band; the answer is the same)


@jax_funcify.register(SolveBase)  # Solve, SolveTriangular, CholeskySolve
def _solve(op: SolveBase, node: Apply | None = None, **kwargs: Any) -> Callable[..., Any]:
    dtype = node.outputs[0].type.numpy_dtype
    solver = _solver(op)
    failure = op._failure()

    def solve(a: Any, b: Any) -> Any:
        a, b = jnp.asarray(a).astype(dtype), jnp.asarray(b).astype(dtype)
        if a.size == 0 or b.size == 0:
            return jnp.zeros(b.shape, dtype)
        return on_error(op, solver(a, b).astype(dtype), (a, b), failure)

    return solve


@jax_funcify.register(Expm)
def _expm(op: Expm, node: Apply | None = None, **kwargs: Any) -> Callable[..., Any]:
    dtype = node.outputs[0].type.numpy_dtype
    return lambda a: jsl.expm(jnp.asarray(a).astype(dtype)).astype(dtype)


@jax_funcify.register(RuntimeCheck)
def _runtime_check(op: RuntimeCheck, node: Apply | None = None, **kwargs: Any) -> Callable[..., Any]:
    what, condition = op.what, op.condition

    def check(x: Any, ref: Any) -> Any:
        if condition == "zeros":
            raise_unless(~jnp.any(ref), f"{what}: its cotangent there is not zero")
            return x
        m, n = np.shape(ref)[-2:]  # static in JAX: checked when the function is traced
        if condition == "square" and m != n:
            raise ValueError(f"{what}: a square matrix, got shape {np.shape(ref)}")
        if condition == "tall" and m < n:
            raise ValueError(f"{what}: at least as many rows as columns, got shape {np.shape(ref)}")
        return x

    return check
