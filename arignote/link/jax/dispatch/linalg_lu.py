"""JAX implementations of the LU factorisations (:mod:`arignote.tensor.linalg.lu`) and of
``Lstsq`` (:mod:`arignote.tensor.linalg.composed`).

``Lstsq``'s residuals are empty unless ``a`` has full column rank and more rows than
columns, a length that depends on the rank when ``a`` is tall: under ``jax.jit`` a tall
``a`` must have full column rank (checked when the function runs).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsl
import numpy as np

from arignote.graph.basic import Apply
from arignote.link.jax.dispatch.basic import jax_funcify
from arignote.link.jax.dispatch.static import as_dtype, concrete, is_tracer, raise_unless
from arignote.tensor.linalg.composed import Lstsq
from arignote.tensor.linalg.lu import LU, LUFactor, PivotToPermutations

__all__: list[str] = []


def _dtypes(node: Apply) -> list[Any]:
    return [o.type.numpy_dtype for o in node.outputs]


@jax_funcify.register(LU)
def _lu(op: LU, node: Apply | None = None, **kwargs: Any) -> Callable[..., Any]:
    dtypes = _dtypes(node)

    def lu(a: Any) -> tuple:
        a = as_dtype(a, dtypes[-1])
        if op.permute_l:
            pl, u = jsl.lu(a, permute_l=True)
            return pl.astype(dtypes[0]), u.astype(dtypes[1])
        p, low, u = jsl.lu(a)
        if op.p_indices:  # a = L[p] U: p is the inverse of the rows P^T picks
            _, _, perm = jax.lax.linalg.lu(a)
            return jnp.argsort(perm).astype(dtypes[0]), low.astype(dtypes[1]), u.astype(dtypes[2])
        return p.astype(dtypes[0]), low.astype(dtypes[1]), u.astype(dtypes[2])

    return lu


@jax_funcify.register(LUFactor)
def _lu_factor(op: LUFactor, node: Apply | None = None, **kwargs: Any) -> Callable[..., Any]:
    dtypes = _dtypes(node)

    def lu_factor(a: Any) -> tuple:
        lu_, piv = jsl.lu_factor(as_dtype(a, dtypes[0]))
        return lu_.astype(dtypes[0]), piv.astype(dtypes[1])

    return lu_factor


@jax_funcify.register(PivotToPermutations)
def _pivots(op: PivotToPermutations, node: Apply | None = None, **kwargs: Any) -> Callable[..., Any]:
    def pivot_to_permutation(piv: Any) -> Any:
        piv = as_dtype(piv, "int32")
        perm = jax.lax.linalg.lu_pivots_to_permutation(piv, piv.shape[0])
        return (jnp.argsort(perm) if op.inverse else perm).astype("int64")

    return pivot_to_permutation


@jax_funcify.register(Lstsq)
def _lstsq(op: Lstsq, node: Apply | None = None, **kwargs: Any) -> Callable[..., Any]:
    dtypes = _dtypes(node)

    def lstsq(a: Any, b: Any, rcond: Any) -> tuple:
        a, b = as_dtype(a, dtypes[0]), as_dtype(b, dtypes[0])
        rc = float(concrete(rcond, node, "rcond"))
        x, _, rank, s = jnp.linalg.lstsq(a, b, rcond=None if np.isnan(rc) else rc)
        m, n = a.shape
        residuals = jnp.sum(jnp.abs(b - a @ x) ** 2, axis=0).reshape(-1).astype(dtypes[1])
        if m <= n:
            residuals = jnp.zeros((0,), dtype=dtypes[1])
        elif not is_tracer(rank):
            if int(rank) < n:
                residuals = jnp.zeros((0,), dtype=dtypes[1])
        else:  # under jit the residuals' length must not depend on the rank: full rank it is
            raise_unless(
                rank == n,
                f"{op} (node {node}): under jax.jit a tall matrix must have full column rank (NumPy "
                "gives no residuals otherwise, a length that depends on the values)",
            )
        return x.astype(dtypes[0]), residuals, as_dtype(rank, dtypes[2]), s.astype(dtypes[3])

    return lstsq
