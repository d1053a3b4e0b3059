"""JAX functions of the products: :mod:`arignote.tensor.products` (Dot, MatMul) and the BLAS
forms of :mod:`arignote.tensor.gemm` (Gemm, Gemv, Ger).

The JAX mode does not run the BLAS rewrites (XLA calls its own BLAS for ``jnp.dot``), but a
graph built with those Ops, or compiled with ``Mode(linker="jax")`` and FAST_RUN's rewrites,
still runs: each is its formula in ``jnp``. Products are computed in the output's dtype, as
the reference computes them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax.numpy as jnp
import numpy as np

from arignote.graph.basic import Apply
from arignote.link.jax.dispatch.basic import jax_funcify
from arignote.link.jax.dispatch.static import as_dtype
from arignote.tensor.gemm import Gemm, Gemv, Ger
from arignote.tensor.products import Dot, MatMul

__all__: list[str] = []


def _out_dtype(node: Apply | None) -> np.dtype | None:
    return np.dtype(node.outputs[0].type.dtype) if node is not None else None


@jax_funcify.register(Dot)
def _funcify_dot(op: Dot, node: Apply | None = None, **kwargs: Any) -> Callable:
    dtype = _out_dtype(node)

    def dot(x: Any, y: Any) -> Any:
        return jnp.dot(as_dtype(x, dtype), as_dtype(y, dtype))

    return dot


@jax_funcify.register(MatMul)
def _funcify_matmul(op: MatMul, node: Apply | None = None, **kwargs: Any) -> Callable:
    dtype = _out_dtype(node)

    def matmul(x: Any, y: Any) -> Any:
        return jnp.matmul(as_dtype(x, dtype), as_dtype(y, dtype))

    return matmul


def _update(target: Any, prod: Any, beta: Any) -> Any:
    """``beta * target + prod``; ``target`` not read where ``beta == 0`` (a NaN there is
    ignored, as BLAS does)."""
    return jnp.where(beta == 0, prod, beta * target + prod)


@jax_funcify.register(Gemm)
@jax_funcify.register(Gemv)
def _funcify_gemm(op: Gemm | Gemv, node: Apply | None = None, **kwargs: Any) -> Callable:
    """``beta * target + alpha * dot(a, b)``: Gemm's (matrix ``b``) and Gemv's (vector)."""
    dtype = _out_dtype(node)

    def gemm(target: Any, alpha: Any, a: Any, b: Any, beta: Any) -> Any:
        prod = jnp.dot(as_dtype(a, dtype), as_dtype(b, dtype)) * jnp.asarray(alpha, dtype)
        return _update(jnp.asarray(target, dtype), prod, jnp.asarray(beta, dtype))

    return gemm


@jax_funcify.register(Ger)
def _funcify_ger(op: Ger, node: Apply | None = None, **kwargs: Any) -> Callable:
    dtype = _out_dtype(node)

    def ger(A: Any, alpha: Any, x: Any, y: Any) -> Any:
        prod = jnp.outer(as_dtype(x, dtype), as_dtype(y, dtype)) * jnp.asarray(alpha, dtype)
        return jnp.asarray(A, dtype) + prod

    return ger
