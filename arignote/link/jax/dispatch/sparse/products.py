"""JAX functions of :mod:`arignote.sparse.products`: products with sparse operands (BCOO
values: see :mod:`~arignote.link.jax.dispatch.sparse.values`).

A BCOO times a dense array is ``jax.experimental.sparse``'s product, computed from the
stored entries (a sparse times a dense matrix costs the entries times the columns, not
the dense product's time); the product of two BCOO matrices is a BCOO whose number of
entries is a bound known when tracing. A dense product that the Type says is sparse
(``true_dot``) becomes a BCOO with the zeros left out.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax.numpy as jnp

from arignote.graph.basic import Apply, Constant
from arignote.link.jax.dispatch.basic import jax_funcify
from arignote.link.jax.dispatch.sparse.values import (
    BCOO,
    constant_bcoo,
    coordinates,
    dense,
    from_dense,
    from_parts,
    is_sparse,
    keeps_entries,
    with_data,
)
from arignote.sparse.products import Dot, SamplingDot, StructuredDot, StructuredDotGrad, TrueDot, Usmm

keeps_entries(SamplingDot)


def _check_inner(op: Any, a: Any, b: Any) -> None:
    if a.shape[-1] != b.shape[0]:  # (static shapes: raised while tracing)
        raise ValueError(
            f"{op}: shapes {a.shape} and {b.shape} are not aligned ({a.shape[-1]} != {b.shape[0]})"
        )


def _product(op: Any, node: Apply) -> Callable[[Any, Any], Any]:
    """``x @ y`` as the output Type wants it: a BCOO for a sparse output, else dense, of the
    output's dtype.

    A constant CSC ``x`` times a dense ``y`` is computed from the BCOO of ``x.T`` (CSR, the
    same arrays), as ``(yᵀ x.T)ᵀ``: a gradient's ``dot(X.T, g)``, whose ``X.T`` constant
    folding made a CSC constant, then uses the entries of the forward ``dot(X, w)`` and the
    program holds them once (as JAX's own gradient of ``X @ w`` does)."""
    out = node.outputs[0]
    sparse_out, dtype = is_sparse(out), out.type.dtype
    x_var = node.inputs[0]
    if (
        isinstance(x_var, Constant)
        and getattr(x_var.data, "format", None) == "csc"
        and not sparse_out
        and not is_sparse(node.inputs[1])
    ):
        x_t = x_var.data.T
        transposed = constant_bcoo(x_t)

        def product_by_transpose(x: Any, y: Any) -> Any:
            _check_inner(op, x, y)
            y = dense(y)
            z = y @ transposed if y.ndim == 1 else (y.T @ transposed).T
            return dense(z).astype(dtype)

        product_by_transpose.matrix = x_t  # (its BCOO is shared while the matrix lives)
        return product_by_transpose

    def product(x: Any, y: Any) -> Any:
        _check_inner(op, x, y)
        z = x @ y
        if sparse_out:
            z = z if isinstance(z, BCOO) else from_dense(z)
            return with_data(z, z.data.astype(dtype))
        return dense(z).astype(dtype)

    return product


@jax_funcify.register(StructuredDot)
@jax_funcify.register(Dot)
@jax_funcify.register(TrueDot)
def _dot(op: Any, node: Apply | None = None, **kwargs: Any) -> Callable:
    return _product(op, node)


@jax_funcify.register(StructuredDotGrad)
def _structured_dot_grad(op: StructuredDotGrad, node: Apply | None = None, **kwargs: Any) -> Callable:
    fmt, dtype = op.format, node.outputs[0].type.dtype

    def structured_dot_grad(indices: Any, indptr: Any, b: Any, g: Any) -> Any:
        b, g = dense(b), dense(g)
        entries = from_parts(jnp.zeros(len(indices)), indices, indptr, (g.shape[0], b.shape[0]), fmt)
        rows, cols = coordinates(entries)
        return jnp.sum(g[rows] * b[cols], axis=-1).astype(dtype)

    return structured_dot_grad


@jax_funcify.register(SamplingDot)
def _sampling_dot(op: SamplingDot, node: Apply | None = None, **kwargs: Any) -> Callable:
    dtype = node.outputs[0].type.dtype

    def sampling_dot(x: Any, y: Any, p: BCOO) -> BCOO:
        if x.shape[1] != y.shape[1] or (x.shape[0], y.shape[0]) != p.shape:
            raise ValueError(
                f"{op}: x {x.shape} @ y.T {y.shape[::-1]} does not have the pattern's shape {p.shape}"
            )
        rows, cols = coordinates(p)  # (a padding entry's product is gathered clamped, and ignored)
        values = jnp.sum(x[rows] * y[cols], axis=-1)
        return with_data(p, (p.data * values).astype(dtype))

    return sampling_dot


@jax_funcify.register(Usmm)
def _usmm(op: Usmm, node: Apply | None = None, **kwargs: Any) -> Callable:
    dtype = node.outputs[0].type.dtype

    def usmm(alpha: Any, x: Any, y: Any, z: Any) -> Any:
        _check_inner(op, x, y)
        return (alpha * dense(x @ y) + z).astype(dtype)

    return usmm
