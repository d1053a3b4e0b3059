"""JAX implementations of the matrix decompositions and inverses of
:mod:`arignote.tensor.linalg` (``decompositions.py``, ``inverse.py``): eigenproblems, SVD,
QR, determinants, inverses.

These Ops are core Ops on one matrix (a stack of them is a ``Blockwise``, whose JAX function
``vmap``-s these). Results are cast to the dtypes of the node's outputs, which follow
arignote's rules (e.g. ``Eig`` is always complex, where JAX's ``eig`` is too). The inverse of
a singular matrix raises ``numpy.linalg.LinAlgError``, as NumPy's does (LAPACK inside JAX
leaves infinities: the check runs on the host when the values arrive).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax.numpy as jnp
import jax.scipy.linalg as jsl
import numpy as np

from arignote.graph.basic import Apply
from arignote.link.jax.dispatch.basic import jax_funcify
from arignote.link.jax.dispatch.linalg_host import on_host
from arignote.link.jax.dispatch.static import raise_unless
from arignote.tensor.linalg.decompositions import QR, SVD, Eig, Eigh, Eigvalsh
from arignote.tensor.linalg.inverse import Cofactor, Det, MatrixInverse, MatrixPinv, SLogDet

__all__: list[str] = []


def out_dtypes(node: Apply) -> list[Any]:
    """The NumPy dtypes of the node's outputs."""
    return [o.type.numpy_dtype for o in node.outputs]


def _cast_results(node: Apply, fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` with its result(s) cast to the dtypes of the node's outputs (and its input to
    the first output's dtype when that is a float: integer matrices are computed in floats)."""
    dtypes = out_dtypes(node)
    work = dtypes[0] if dtypes[0].kind in "fc" else None

    def run(*args: Any) -> Any:
        if work is not None:
            args = (jnp.asarray(args[0]).astype(work), *args[1:])
        result = fn(*args)
        if len(dtypes) == 1:
            return jnp.asarray(result).astype(dtypes[0])
        return tuple(jnp.asarray(r).astype(d) for r, d in zip(result, dtypes))

    return run


def _symmetric_from(a: Any, lower: bool) -> Any:
    """The symmetric (Hermitian) matrix that the triangle of ``a`` on the ``lower`` side
    describes (LAPACK reads only that triangle)."""
    if lower:
        low = jnp.tril(a)
        return low + jnp.conj(jnp.tril(a, -1)).T
    up = jnp.triu(a)
    return up + jnp.conj(jnp.triu(a, 1)).T


@jax_funcify.register(Eigh)
def _eigh(op: Eigh, node: Apply | None = None, **kwargs: Any) -> Callable[..., Any]:
    lower = op.lower
    w_dtype, v_dtype = out_dtypes(node)

    def eigh(a: Any) -> tuple:
        a = jnp.asarray(a).astype(v_dtype)
        w, v = jnp.linalg.eigh(_symmetric_from(a, lower), symmetrize_input=False)
        return w.astype(w_dtype), v.astype(v_dtype)

    return eigh


@jax_funcify.register(Eigvalsh)
def _eigvalsh(op: Eigvalsh, node: Apply | None = None, **kwargs: Any) -> Callable[..., Any]:
    lower = op.lower
    (w_dtype,) = out_dtypes(node)
    work = jnp.result_type(node.inputs[0].type.numpy_dtype, jnp.float32)

    def eigvalsh(a: Any) -> Any:
        a = jnp.asarray(a).astype(work)
        return jnp.linalg.eigvalsh(_symmetric_from(a, lower), symmetrize_input=False).astype(w_dtype)

    return eigvalsh


@jax_funcify.register(Eig)
def _eig(op: Eig, node: Apply | None = None, **kwargs: Any) -> Callable[..., Any]:
    # JAX computes eig on the CPU only (LAPACK geev), as NumPy does
    dtype = out_dtypes(node)[0]
    work = jnp.result_type(node.inputs[0].type.numpy_dtype, jnp.float32)

    def eig(a: Any) -> tuple:
        w, v = jnp.linalg.eig(jnp.asarray(a).astype(work))
        return w.astype(dtype), v.astype(dtype)

    return eig


@jax_funcify.register(SVD)
def _svd(op: SVD, node: Apply | None = None, **kwargs: Any) -> Callable[..., Any]:
    full, uv = op.full_matrices, op.compute_uv
    dtypes = out_dtypes(node)
    work = dtypes[0] if uv else jnp.result_type(node.inputs[0].type.numpy_dtype, jnp.float32)

    def svd(a: Any) -> Any:
        result = jnp.linalg.svd(jnp.asarray(a).astype(work), full_matrices=full, compute_uv=uv)
        if not uv:
            return result.astype(dtypes[0])
        return tuple(r.astype(d) for r, d in zip(result, dtypes))

    return svd


@jax_funcify.register(QR)
def _qr(op: QR, node: Apply | None = None, **kwargs: Any) -> Callable[..., Any]:
    if op.mode == "raw":  # LAPACK's Householder form: JAX has no public geqrf, SciPy computes it
        return on_host(op, node, lambda op, shapes: op._shapes(*shapes[0], min(shapes[0])))
    mode, pivoting = op.mode, op.pivoting
    dtypes = out_dtypes(node)

    def qr(a: Any) -> Any:
        result = jsl.qr(jnp.asarray(a).astype(dtypes[0]), mode=mode, pivoting=pivoting)
        if mode == "r" and not pivoting:
            (result,) = result if isinstance(result, tuple) else (result,)
            return result.astype(dtypes[0])
        return tuple(r.astype(d) for r, d in zip(result, dtypes))

    return qr


@jax_funcify.register(MatrixInverse)
def _inv(op: MatrixInverse, node: Apply | None = None, **kwargs: Any) -> Callable[..., Any]:
    inverse = _cast_results(node, jnp.linalg.inv)

    def inv(x: Any) -> Any:
        out = inverse(x)
        # NumPy raises for a singular matrix, as the reference does; LAPACK inside JAX leaves
        # infinities or NaNs: a non-finite inverse of a finite matrix is that failure
        raise_unless(
            jnp.all(jnp.isfinite(out)) | ~jnp.all(jnp.isfinite(x)),
            f"MatrixInverse: the matrix of shape {tuple(np.shape(x))} is singular",
            error=np.linalg.LinAlgError,
        )
        return out

    return inv


@jax_funcify.register(MatrixPinv)
def _pinv(op: MatrixPinv, node: Apply | None = None, **kwargs: Any) -> Callable[..., Any]:
    hermitian = op.hermitian
    return _cast_results(node, lambda a: jnp.linalg.pinv(a, hermitian=hermitian))


@jax_funcify.register(Det)
def _det(op: Det, node: Apply | None = None, **kwargs: Any) -> Callable[..., Any]:
    return _cast_results(node, jnp.linalg.det)


@jax_funcify.register(SLogDet)
def _slogdet(op: SLogDet, node: Apply | None = None, **kwargs: Any) -> Callable[..., Any]:
    return _cast_results(node, lambda a: tuple(jnp.linalg.slogdet(a)))


def cofactor(x: Any) -> Any:
    """The cofactor matrix ``det(X) X^-T`` of a real square matrix, from an SVD, so that it is
    exact for singular matrices too: with ``X = U diag(s) V^T``, the cofactor is
    ``det(U) det(V^T) U diag(prod_{j != i} s_j) V^T``."""
    n = x.shape[-1]
    if n == 0:
        return jnp.zeros_like(x)
    u, s, vh = jnp.linalg.svd(x)
    ones = jnp.ones((1,), dtype=s.dtype)
    before = jnp.cumprod(jnp.concatenate([ones, s[:-1]]))  # prod of s[:i]
    after = jnp.cumprod(jnp.concatenate([ones, s[:0:-1]]))[::-1]  # prod of s[i+1:]
    sign = jnp.linalg.det(u) * jnp.linalg.det(vh)  # each is +-1
    return sign * ((u * (before * after)[None, :]) @ vh)


@jax_funcify.register(Cofactor)
def _cofactor(op: Cofactor, node: Apply | None = None, **kwargs: Any) -> Callable[..., Any]:
    return _cast_results(node, cofactor)
