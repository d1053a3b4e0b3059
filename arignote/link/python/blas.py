"""The Python backend's thunks for Dot, Gemm, Gemv and Ger: one BLAS call each.

Dot, Gemm and Gemv run in NumPy's BLAS (``np.dot``: ``?gemm``, ``?gemv``, ``?dot``, the
library NumPy's own products use); Ger in SciPy's (``?ger``, a rank-1 update NumPy has no
routine for). NumPy passes a C- or F-contiguous operand to BLAS as it is (with the
transpose flag for a C-ordered one), and copies only a strided view; its call costs less
than SciPy's wrapper. Where NumPy and SciPy bundle two OpenBLAS builds, NumPy's may be
the newer: measured on the project's 2-core machine (NumPy 2.4's OpenBLAS 0.3.31 against
SciPy 1.17's 0.3.30, one thread, CPU time), the float32 products of a 784-512-10 MLP's
training step took 5-12% less time in NumPy's, the whole step 5.2 ms instead of 5.5 ms,
and a graph that runs its products where the user's NumPy code runs its own shares that
library's thread pool with it (two pools alternating cost 35-80 ms on 2 cores where each
product alone took 1.4 ms).

Gemm and Gemv compute the product into a fresh array (``alpha`` scales the smaller
operand when it is smaller than the result, else the product), then add ``beta * z``
(``beta * y``): in place (``op.inplace``) into ``z``'s buffer unless that buffer is
read-only or shares memory with an operand (then into the product), as
:func:`_combine` does. ``beta == 0`` never reads ``z`` (``y``), as ``perform`` defines it.
Ger passes a C-contiguous ``A`` transposed (``A.T += alpha * outer(y, x)``, the same
memory), and copies only a strided one; in place it overwrites ``A`` (``overwrite_a``)
under the same conditions. SciPy's routine comes from
:func:`arignote.link.python.fblas.fblas` (SciPy's BLAS extension module, loaded without
importing ``scipy.linalg``) when a Ger node is linked.

A matrix-matrix product (Dot, Gemm) of at least :data:`THREADED_WORK` multiply-adds (a
matrix-vector product or an outer-product update of at least :data:`THREADED_ELEMENTS`
matrix elements) runs under the BLAS thread limit
(:mod:`arignote.link.python.blas_threads`, which lowers NumPy's and SciPy's libraries
both); smaller ones run as they are (OpenBLAS keeps small matrix products in the calling
thread, and a memory-bound matrix-vector product gained nothing from threads here).

Anything unusual at run time (a value that is not an ndarray of the node's dtype, shapes
that do not fit, an empty operand) goes through ``perform``, which raises its errors. The
thunks compute what ``perform`` computes (to rounding: BLAS sums in another order); the
tests check both.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from arignote.graph.basic import Apply, Variable
from arignote.graph.op import Op
from arignote.link.python.blas_threads import limited_call
from arignote.link.python.dispatch import accepts_plain, register_python_thunk
from arignote.link.python.elemwise import _done_flags, _with_attrs
from arignote.link.python.fblas import fblas
from arignote.tensor.gemm import BLAS_DTYPES, Gemm, Gemv, Ger
from arignote.tensor.products import Dot

__all__ = ["dot_thunk", "gemm_thunk", "gemv_thunk", "ger_thunk"]

_ndarray = np.ndarray
_dot = np.dot
_may_share_memory = np.may_share_memory

#: multiply-adds from which a matrix-matrix product runs under the BLAS thread limit
#: (OpenBLAS splits products from about 64**3 / 4 of them)
THREADED_WORK = 1 << 16
#: elements of the matrix from which a matrix-vector product or an outer-product update
#: (and the vectors of a vector dot product) run under the limit: memory-bound, a few µs
#: for 10**5 elements, where setting the limit (~2 µs) costs more than threads did
#: (a 1000x100 ``dgemv``: 21.7 µs with 1 or 2 threads on the 2-core machine)
THREADED_ELEMENTS = 1 << 20


def _run(work: int, routine: Callable, *args: Any, **kwargs: Any) -> Any:
    """``routine(*args, **kwargs)`` (a matrix-matrix product of ``work`` multiply-adds),
    under the BLAS thread limit from :data:`THREADED_WORK`."""
    if work >= THREADED_WORK:
        return limited_call(routine, *args, **kwargs)
    return routine(*args, **kwargs)


def _run2(elements: int, routine: Callable, *args: Any, **kwargs: Any) -> Any:
    """``routine(*args, **kwargs)`` (a level-2 or level-1 routine on a matrix or vectors of
    ``elements``), under the BLAS thread limit from :data:`THREADED_ELEMENTS`."""
    if elements >= THREADED_ELEMENTS:
        return limited_call(routine, *args, **kwargs)
    return routine(*args, **kwargs)


def _routine(name: str, dtype: str) -> Callable:
    """SciPy's ``?<name>`` for ``dtype`` (``s`` float32, ``d`` float64)."""
    return getattr(fblas(), ("s" if dtype == "float32" else "d") + name)


def _finish_thunk(thunk: Any, op: Op, in_cells: list[list], out_cells: list[list]) -> Any:
    """``thunk`` with ``Op.make_py_thunk``'s attributes; it always sets its output cell."""
    thunk.sets_outputs = True
    return _with_attrs(thunk, op, in_cells, out_cells)


def _fortran(m: np.ndarray) -> tuple[np.ndarray, int]:
    """``(f, trans)``: ``f`` Fortran-ordered with ``op(f) == m`` (``trans`` 1: ``f.T``);
    a copy only for a matrix neither C- nor F-contiguous."""
    flags = m.flags
    if flags.f_contiguous:
        return m, 0
    if flags.c_contiguous:
        return m.T, 1
    return np.asfortranarray(m), 0


def _usual(dtype: np.dtype, *values: Any) -> bool:
    """Whether every value is an ndarray of ``dtype`` (the usual case)."""
    for v in values:  # noqa: SIM110 (a loop, not all() of a generator: this runs at every call)
        if type(v) is not _ndarray or v.dtype != dtype:
            return False
    return True


def _apart(z: np.ndarray, a: np.ndarray) -> bool:
    """Whether ``z`` and ``a`` share no memory: certain without ``np.may_share_memory``
    (about 1 µs) when ``z`` owns its buffer and ``a`` owns another one or is a view of an
    array that does."""
    if a is z:
        return False
    if z.base is None:
        b = a.base
        if b is None or (b is not z and type(b) is _ndarray and b.base is None):
            return True
    return not _may_share_memory(z, a)


def _combine(z: np.ndarray, prod: np.ndarray, beta: float, inplace: bool, *operands: Any) -> np.ndarray:
    """``beta * z + prod`` (``prod`` fresh, of ``z``'s dtype; ``beta == 0``: ``z`` is not
    read): written into ``z`` in place where ``z`` is writable and shares no memory with an
    operand (as BLAS's in-place routines require), else into ``prod``."""
    if inplace and z.flags.writeable and all(_apart(z, a) for a in operands):
        if beta == 0.0:
            z[...] = prod
        else:
            if beta != 1.0:
                z *= beta
            z += prod
        return z
    if beta != 0.0:
        prod += z if beta == 1.0 else beta * z
    return prod


@register_python_thunk(Gemm, accepts=accepts_plain(Gemm))
def gemm_thunk(
    op: Gemm,
    node: Apply,
    storage_map: dict,
    compute_map: dict | None,
    no_recycling: Sequence[Variable],
    impl: str | None = None,
) -> Any:
    """``?gemm`` with ``beta``, ``c`` and ``overwrite_c`` (in place); operands and output
    in their own memory order (``trans_a``/``trans_b``, see the module)."""
    dtype = node.outputs[0].type.numpy_dtype
    in_cells = [storage_map[v] for v in node.inputs]
    cz, ca, cx, cy, cb = in_cells
    (cout,) = out_cells = [storage_map[node.outputs[0]]]
    flags = _done_flags(node, compute_map)
    inplace = op.inplace
    perform = op.perform

    def slow() -> None:
        perform(node, [c[0] for c in in_cells], out_cells)

    def thunk() -> None:
        z, alpha, x, y, beta = cz[0], ca[0], cx[0], cy[0], cb[0]
        if (
            not _usual(dtype, z, x, y)
            or x.shape[1] != y.shape[0]
            or z.shape != (x.shape[0], y.shape[1])
            or not (z.size and x.size and y.size)
        ):
            slow()
        else:
            alpha = float(alpha)
            x0, y0 = x, y
            if alpha != 1.0 and min(x.size, y.size) < z.size:
                # (alpha scales the smaller operand: one pass fewer over the result)
                if x.size <= y.size:
                    x = np.multiply(x, alpha, dtype=dtype)
                else:
                    y = np.multiply(y, alpha, dtype=dtype)
                alpha = 1.0
            prod = _run(z.size * x.shape[1], _dot, x, y)  # (fresh: z may alias x or y)
            if alpha != 1.0:
                prod *= alpha
            cout[0] = _combine(z, prod, float(beta), inplace, x0, y0)
        for flag in flags:
            flag[0] = True

    return _finish_thunk(thunk, op, in_cells, out_cells)


@register_python_thunk(Gemv, accepts=accepts_plain(Gemv))
def gemv_thunk(
    op: Gemv,
    node: Apply,
    storage_map: dict,
    compute_map: dict | None,
    no_recycling: Sequence[Variable],
    impl: str | None = None,
) -> Any:
    """``alpha * dot(A, x)`` in NumPy's BLAS (``?gemv``), then ``beta * y`` added: into
    ``y``'s buffer in place (see :func:`_combine`), else into the product."""
    dtype = node.outputs[0].type.numpy_dtype
    in_cells = [storage_map[v] for v in node.inputs]
    cy, ca, cA, cx, cb = in_cells
    (cout,) = out_cells = [storage_map[node.outputs[0]]]
    flags = _done_flags(node, compute_map)
    inplace = op.inplace
    perform = op.perform

    def thunk() -> None:
        y, alpha, A, x, beta = cy[0], ca[0], cA[0], cx[0], cb[0]
        if not _usual(dtype, y, A, x) or A.shape != (y.shape[0], x.shape[0]) or not A.size:
            perform(node, [c[0] for c in in_cells], out_cells)
        else:
            prod = _run2(A.size, _dot, A, x)
            alpha = float(alpha)
            if alpha != 1.0:
                prod *= alpha
            cout[0] = _combine(y, prod, float(beta), inplace, A, x)
        for flag in flags:
            flag[0] = True

    return _finish_thunk(thunk, op, in_cells, out_cells)


@register_python_thunk(Ger, accepts=accepts_plain(Ger))
def ger_thunk(
    op: Ger,
    node: Apply,
    storage_map: dict,
    compute_map: dict | None,
    no_recycling: Sequence[Variable],
    impl: str | None = None,
) -> Any:
    """``?ger`` with ``a`` and ``overwrite_a`` (in place); a C-contiguous ``A`` updated as
    its transpose (``A.T += alpha * outer(y, x)``)."""
    dtype = node.outputs[0].type.numpy_dtype
    ger = _routine("ger", dtype.name)
    in_cells = [storage_map[v] for v in node.inputs]
    cA, ca, cx, cy = in_cells
    (cout,) = out_cells = [storage_map[node.outputs[0]]]
    flags = _done_flags(node, compute_map)
    inplace = op.inplace
    perform = op.perform

    def thunk() -> None:
        A, alpha, x, y = cA[0], ca[0], cx[0], cy[0]
        if not _usual(dtype, A, x, y) or A.shape != (x.shape[0], y.shape[0]) or not A.size:
            perform(node, [c[0] for c in in_cells], out_cells)
        else:
            alpha = float(alpha)
            overwrite = (
                inplace and A.flags.writeable and not (_may_share_memory(A, x) or _may_share_memory(A, y))
            )
            if A.flags.f_contiguous:
                res = _run2(A.size, ger, alpha, x, y, a=A, overwrite_a=overwrite)
                cout[0] = A if res is A else res
            else:
                if not A.flags.c_contiguous:
                    A = np.ascontiguousarray(A)
                    overwrite = True  # the copy is the thunk's own
                At = A.T
                res = _run2(A.size, ger, alpha, y, x, a=At, overwrite_a=overwrite)
                cout[0] = A if res is At else res.T
        for flag in flags:
            flag[0] = True

    return _finish_thunk(thunk, op, in_cells, out_cells)


@register_python_thunk(Dot, accepts=accepts_plain(Dot))
def dot_thunk(
    op: Dot,
    node: Apply,
    storage_map: dict,
    compute_map: dict | None,
    no_recycling: Sequence[Variable],
    impl: str | None = None,
) -> Any:
    """``np.dot`` (NumPy's BLAS: ``?gemm``, ``?gemv``, ``?dot``) where both operands have the
    output's dtype, float32 or float64, under the thread limit from the module's sizes; else
    (mixed or other dtypes) ``perform``."""
    in_cells = [storage_map[v] for v in node.inputs]
    (cout,) = out_cells = [storage_map[node.outputs[0]]]
    xv, yv = node.inputs
    dtype = node.outputs[0].type.numpy_dtype
    if dtype.name not in BLAS_DTYPES or xv.type.dtype != dtype.name or yv.type.dtype != dtype.name:
        return op.make_thunk(node, storage_map, compute_map, no_recycling, impl)
    flags = _done_flags(node, compute_map)
    cx, cy = in_cells
    perform = op.perform
    kind = (xv.type.ndim, yv.type.ndim)

    def thunk() -> None:
        x, y = cx[0], cy[0]
        if not _usual(dtype, x, y) or x.shape[-1] != y.shape[0] or not (x.size and y.size):
            perform(node, [x, y], out_cells)
        elif kind == (2, 2):
            cout[0] = _run(x.size * y.shape[1], _dot, x, y)
        elif kind == (2, 1):
            cout[0] = _run2(x.size, _dot, x, y)
        elif kind == (1, 2):
            cout[0] = _run2(y.size, _dot, x, y)
        else:
            cout[0] = np.asarray(_run2(x.size, _dot, x, y), dtype=dtype)
        for flag in flags:
            flag[0] = True

    return _finish_thunk(thunk, op, in_cells, out_cells)
