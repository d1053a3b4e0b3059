"""The Python backend's thunks for Gemm, Gemv, Ger and Dot: one call of ``scipy.linalg.blas``.

BLAS works on column-major (Fortran-order) matrices. A C-contiguous matrix is the
Fortran-order transpose of itself, so no operand is copied for its layout: a C-contiguous
operand is passed transposed with the ``trans`` flag set, and where the output (``z``, or
``A`` for Ger) is C-contiguous the thunk computes its transpose instead
(``C.T = op(y.T) @ op(x.T)``), which writes the same memory. Only a matrix that is neither
C- nor F-contiguous (a strided view) is copied first.

In place (``op.inplace``), the routine overwrites the first input's buffer
(``overwrite_c``/``overwrite_y``/``overwrite_a``), unless that buffer is read-only or shares
memory with an operand (BLAS would read what it has already written): a copy is updated
then. ``beta == 0`` never reads ``z`` (``y``), as ``perform`` defines it.

Dot runs through SciPy's BLAS too (``?gemm``, ``?gemv``, ``?dot`` for operands of one float
dtype): NumPy and SciPy each bundle an OpenBLAS with its own thread pool, and a graph that
alternates between the two pools pays for it (measured on 2 cores: a 256x784 by 784x512
float32 product followed by the same product in the other library took 35-80 ms, against
1.4 ms each alone), so every product of a compiled graph uses one pool.

A matrix-matrix product (Dot, Gemm) of fewer than :data:`THREADED_WORK` multiply-adds, and
a matrix-vector or vector-vector Dot of fewer than :data:`CALLING_THREAD_ELEMENTS` matrix
(vector) elements, runs through ``np.dot``, as ``perform`` computes it: OpenBLAS keeps such a product in the
calling thread, so no thread pool wakes up in either library, NumPy's call costs less than
SciPy's wrapper, and a graph whose products are all small never loads SciPy's BLAS. SciPy's
routines come from :func:`arignote.link.python.fblas.fblas`, which loads SciPy's BLAS
extension module without importing ``scipy.linalg`` (~3 ms, where the import costs ~0.13 s of
CPU, which a fresh process's first call would pay); Gemm's and Dot's are looked up at their
first use.

A matrix-matrix product of at least :data:`THREADED_WORK` multiply-adds (a matrix-vector
product or an outer-product update of at least :data:`THREADED_ELEMENTS` matrix elements)
runs under the BLAS thread limit
(:mod:`arignote.link.python.blas_threads`: one thread where the process has at most 2 CPUs);
smaller ones run as they are (OpenBLAS keeps small matrix products in one thread, and a
memory-bound matrix-vector product gained nothing from threads here).

Anything unusual at run time (a value that is not an ndarray of the node's dtype, shapes
that do not fit, an empty operand, which SciPy's wrappers reject) goes through ``perform``, which raises its errors. The thunks compute what
``perform`` computes (to rounding: BLAS sums in another order); the tests check both.
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
_may_share_memory = np.may_share_memory

#: multiply-adds from which a matrix-matrix product runs under the BLAS thread limit
#: (OpenBLAS splits products from about 64**3 / 4 of them)
THREADED_WORK = 1 << 16
#: elements of the matrix from which a matrix-vector product or an outer-product update
#: (and the vectors of a vector dot product) run under the limit: memory-bound, a few µs
#: for 10**5 elements, where setting the limit (~2 µs) costs more than threads did
#: (a 1000x100 ``dgemv``: 21.7 µs with 1 or 2 threads on the 2-core machine)
THREADED_ELEMENTS = 1 << 20
#: elements of the matrix (of each vector) under which a matrix-vector (vector-vector) Dot
#: runs through ``np.dot``: OpenBLAS keeps such products in the calling thread (it splits
#: ``?gemv`` and ``?dot`` from about 10**4 elements), as it does small matrix-matrix ones
CALLING_THREAD_ELEMENTS = 1 << 12


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


class _LazyRoutine:
    """:func:`_routine`, looked up (SciPy's BLAS imported) at its first call."""

    __slots__ = ("dtype", "fn", "name")

    def __init__(self, name: str, dtype: str):
        self.name, self.dtype, self.fn = name, dtype, None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        fn = self.fn
        if fn is None:
            fn = self.fn = _routine(self.name, self.dtype)
        return fn(*args, **kwargs)


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
    gemm = _LazyRoutine("gemm", dtype.name)
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
            beta = float(beta)
            alpha = float(alpha)
            work = z.size * x.shape[1]
            if work < THREADED_WORK:  # in the calling thread: NumPy's dot, as perform
                prod = np.dot(x, y)
                if alpha != 1.0:
                    prod *= alpha
                if inplace and z.flags.writeable and _apart(z, x) and _apart(z, y):
                    if beta == 0.0:
                        z[...] = prod
                    else:
                        if beta != 1.0:
                            z *= beta
                        z += prod
                    cout[0] = z
                else:
                    if beta != 0.0:
                        prod += z if beta == 1.0 else beta * z
                    cout[0] = prod
            elif inplace or beta != 0.0:
                overwrite = (
                    inplace and z.flags.writeable and not (_may_share_memory(z, x) or _may_share_memory(z, y))
                )
                if z.flags.f_contiguous:
                    a, ta = _fortran(x)
                    b, tb = _fortran(y)
                    res = _run(
                        work, gemm, alpha, a, b, beta, z, trans_a=ta, trans_b=tb, overwrite_c=overwrite
                    )
                    cout[0] = z if res is z else res
                else:  # C-contiguous (a strided z is copied first): compute z.T
                    if not z.flags.c_contiguous:
                        z = np.ascontiguousarray(z)
                        overwrite = True  # the copy is the thunk's own
                    zt = z.T
                    a, ta = _fortran(y.T)
                    b, tb = _fortran(x.T)
                    res = _run(
                        work, gemm, alpha, a, b, beta, zt, trans_a=ta, trans_b=tb, overwrite_c=overwrite
                    )
                    cout[0] = z if res is zt else res.T
            else:  # beta == 0: z is not read; a new C-ordered result
                a, ta = _fortran(y.T)
                b, tb = _fortran(x.T)
                cout[0] = _run(work, gemm, alpha, a, b, trans_a=ta, trans_b=tb).T
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
    """``?gemv`` with ``beta``, ``y`` and ``overwrite_y`` (in place); a C-contiguous ``A``
    passed transposed with ``trans=1``."""
    dtype = node.outputs[0].type.numpy_dtype
    gemv = _routine("gemv", dtype.name)
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
            beta = float(beta)
            a, trans = _fortran(A)
            if inplace or beta != 0.0:
                overwrite = (
                    inplace
                    and y.flags.writeable
                    and y.flags.c_contiguous
                    and not (_may_share_memory(y, A) or _may_share_memory(y, x))
                )
                res = _run2(A.size, gemv, float(alpha), a, x, beta, y, trans=trans, overwrite_y=overwrite)
                cout[0] = y if res is y else res
            else:
                cout[0] = _run2(A.size, gemv, float(alpha), a, x, trans=trans)
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
    """``?gemm`` (matrix-matrix, a C-ordered result), ``?gemv`` (matrix-vector) or ``?dot``
    (vector-vector) where both operands have the output's dtype, float32 or float64; else
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
    gemm, gemv, dot = (_LazyRoutine(name, dtype.name) for name in ("gemm", "gemv", "dot"))

    def thunk() -> None:
        x, y = cx[0], cy[0]
        if not _usual(dtype, x, y) or x.shape[-1] != y.shape[0] or not (x.size and y.size):
            perform(node, [x, y], out_cells)
        elif kind == (2, 2) and x.size * y.shape[1] < THREADED_WORK:  # (see the module's doc)
            cout[0] = np.dot(x, y)
        elif kind != (2, 2) and (x.size if kind[0] == 2 else y.size) < CALLING_THREAD_ELEMENTS:
            cout[0] = np.asarray(np.dot(x, y), dtype=dtype)
        elif kind == (2, 2):
            a, ta = _fortran(y.T)
            b, tb = _fortran(x.T)
            cout[0] = _run(x.size * y.shape[1], gemm, 1.0, a, b, trans_a=ta, trans_b=tb).T
        elif kind == (2, 1):
            a, trans = _fortran(x)
            cout[0] = _run2(x.size, gemv, 1.0, a, y, trans=trans)
        elif kind == (1, 2):
            a, trans = _fortran(y.T)
            cout[0] = _run2(y.size, gemv, 1.0, a, x, trans=trans)
        else:
            cout[0] = np.asarray(_run2(x.size, dot, x, y), dtype=dtype)
        for flag in flags:
            flag[0] = True

    return _finish_thunk(thunk, op, in_cells, out_cells)
