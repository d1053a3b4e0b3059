"""Matrix products in generated Numba code through NumPy's BLAS, not SciPy's.

Numba's ``np.dot`` calls SciPy's BLAS (``scipy.linalg.cython_blas``). NumPy's wheels and
SciPy's bundle two OpenBLAS builds, each with its own thread pool, whose workers busy-wait
for a while after each product. Tier 1 and the user's own NumPy code run their products in
NumPy's (:mod:`arignote.link.python.blas`); a whole-graph function calling SciPy's then makes
two pools spin on the same cores. Measured on this project's 2-core machine, a float32 MLP
step (784-512-10, batch 256) taking turns with the same step on tier 1: 5.7 ms a call for the
whole-graph function, 4.0 for tier 1, against 2.8-3.3 each alone; FAST_RUN's trial, which
takes such turns, measured both so.

:func:`matmul` is ``np.dot`` of two float32 or float64 matrices of one dtype, computed by
``cblas_?gemm`` of the BLAS library NumPy's own products call, found in NumPy's extension
module (:data:`SYMBOLS`: OpenBLAS as NumPy's wheels bundle it, with 64-bit integers, or a
system CBLAS); :func:`matvec` is ``np.dot`` of a matrix and a vector (``cblas_?gemv``), and
``np.dot(x, B)`` is ``matvec(B.T, x)``. Their addresses are registered with LLVM under names
of ours (``arignote_numpy_sgemm`` and so on), which the functions' IR calls, when this module
is imported: before Numba loads a cached function that calls them. The result is a new
C-contiguous array (on huge pages from 4 MiB, :mod:`arignote.link.numba.hugepages`); a
matrix that is neither C- nor F-contiguous is copied first (BLAS reads either layout as it
is), a vector whose elements are not adjacent too. :data:`FOUND` says whether the library
was found; where it was not, :func:`matmul` and :func:`matvec` are Numba's ``np.dot``.
NumPy's BLAS build is part of every compiled function's cache key
(:func:`arignote.link.numba.cache.environment_key`), so a function compiled against one
library is never loaded where another one is.

This module imports Numba: only generated modules import it.
"""

from __future__ import annotations

import ctypes
from typing import Any

import llvmlite.binding as llvm
import llvmlite.ir as ir
import numba
import numpy as np
from numba.core import cgutils, types
from numba.extending import intrinsic

from arignote.link.numba.hugepages import empty

__all__ = ["FOUND", "SYMBOLS", "matmul", "matvec"]

#: (prefix, suffix, bits of the integers) of the CBLAS names (``{prefix}cblas_sgemm{suffix}``
#: and so on), tried in order in the library NumPy's extension module links
SYMBOLS = (
    ("scipy_", "64_", 64),  # NumPy 2's wheels (scipy-openblas64)
    ("", "64_", 64),  # NumPy 1.26's wheels (openblas64_)
    ("", "", 32),  # a system CBLAS (OpenBLAS, MKL, ...)
)
_ROUTINES = ("sgemm", "dgemm", "sgemv", "dgemv")
_ROW_MAJOR, _NO_TRANS, _TRANS = 101, 111, 112


def _ours(routine: str) -> str:
    """The name the generated IR calls for NumPy's ``cblas_<routine>``."""
    return f"arignote_numpy_{routine}"


def _register() -> int:
    """Register NumPy's CBLAS routines under :func:`_ours` names; their integers' bits, or 0
    where no naming of :data:`SYMBOLS` has them all."""
    try:
        lib = ctypes.CDLL(np._core._multiarray_umath.__file__)
    except (OSError, AttributeError):
        return 0
    for prefix, suffix, bits in SYMBOLS:
        found = [getattr(lib, f"{prefix}cblas_{r}{suffix}", None) for r in _ROUTINES]
        if all(fn is not None for fn in found):
            for routine, fn in zip(_ROUTINES, found):
                llvm.add_symbol(_ours(routine), ctypes.cast(fn, ctypes.c_void_p).value)
            return bits
    return 0


_BITS = _register()
#: whether NumPy's BLAS was found (else :func:`matmul` and :func:`matvec` are ``np.dot``)
FOUND = _BITS != 0


def _cblas(builder: ir.IRBuilder, routine: str, args: list[tuple[str, ir.Value]]) -> None:
    """Call NumPy's ``cblas_<routine>`` with ``args``, each (kind, value): ``"enum"`` (an
    int32), ``"int"`` (an intp, made the library's integer), ``"float"`` (a constant of the
    routine's float type) or ``"ptr"`` (an array's data)."""
    fty = _ftype(routine[0])
    ity = ir.IntType(_BITS or 64)
    types_ = {"enum": ir.IntType(32), "int": ity, "float": fty, "ptr": fty.as_pointer()}
    fnty = ir.FunctionType(ir.VoidType(), [types_[kind] for kind, _ in args])
    fn = cgutils.get_or_insert_function(builder.module, fnty, _ours(routine))
    values = []
    for kind, v in args:
        if kind == "int" and ity.width < 64:
            v = builder.trunc(v, ity)
        elif kind == "ptr":
            v = builder.bitcast(v, types_["ptr"])
        values.append(v)
    builder.call(fn, values)


def _ftype(t: str) -> ir.Type:
    """The LLVM float type of ``"s"`` or ``"d"``."""
    return ir.FloatType() if t == "s" else ir.DoubleType()


def _data(context: Any, builder: ir.IRBuilder, ary_type: types.Array, value: ir.Value) -> ir.Value:
    """The data pointer of an array value."""
    return context.make_array(ary_type)(context, builder, value).data


def _floats(c: types.Type) -> str | None:
    """``"s"`` or ``"d"`` for an array of float32 or float64, else None."""
    if isinstance(c, types.Array) and c.dtype in (types.float32, types.float64):
        return "s" if c.dtype == types.float32 else "d"
    return None


@intrinsic
def _gemm(typingctx: object, ta: types.Type, tb: types.Type, m: types.Type, n: types.Type, k: types.Type,
          a: types.Type, lda: types.Type, b: types.Type, ldb: types.Type, c: types.Type) -> tuple:  # fmt: skip
    """``C = A @ B`` (row-major; ``ta``/``tb`` 111 or 112: each operand as it is or
    transposed) by NumPy's ``cblas_?gemm`` with ``alpha = 1``, ``beta = 0``, ``ldc = n``."""
    t = _floats(c)
    if t is None:
        return None
    sig = types.void(
        types.int32, types.int32, types.intp, types.intp, types.intp, a, types.intp, b, types.intp, c
    )

    def codegen(context: object, builder: ir.IRBuilder, signature: object, args: list) -> None:
        ta_, tb_, m_, n_, k_, a_, lda_, b_, ldb_, c_ = args

        def data(i: int, v: ir.Value) -> ir.Value:
            return _data(context, builder, signature.args[i], v)

        _cblas(builder, t + "gemm", [
            ("enum", ir.Constant(ir.IntType(32), _ROW_MAJOR)), ("enum", ta_), ("enum", tb_),
            ("int", m_), ("int", n_), ("int", k_), ("float", ir.Constant(_ftype(t), 1.0)),
            ("ptr", data(5, a_)), ("int", lda_), ("ptr", data(7, b_)), ("int", ldb_),
            ("float", ir.Constant(_ftype(t), 0.0)), ("ptr", data(9, c_)), ("int", n_),
        ])  # fmt: skip

    return sig, codegen


@intrinsic
def _gemv(typingctx: object, ta: types.Type, m: types.Type, n: types.Type, a: types.Type, lda: types.Type,
          x: types.Type, y: types.Type) -> tuple:  # fmt: skip
    """``y = A @ x`` (``A`` row-major ``m`` x ``n``; ``ta`` 112: ``A.T @ x``) by NumPy's
    ``cblas_?gemv`` with ``alpha = 1``, ``beta = 0`` and unit strides."""
    t = _floats(y)
    if t is None:
        return None
    sig = types.void(types.int32, types.intp, types.intp, a, types.intp, x, y)

    def codegen(context: object, builder: ir.IRBuilder, signature: object, args: list) -> None:
        ta_, m_, n_, a_, lda_, x_, y_ = args

        def data(i: int, v: ir.Value) -> ir.Value:
            return _data(context, builder, signature.args[i], v)

        one = context.get_constant(types.intp, 1)
        _cblas(builder, t + "gemv", [
            ("enum", ir.Constant(ir.IntType(32), _ROW_MAJOR)), ("enum", ta_), ("int", m_), ("int", n_),
            ("float", ir.Constant(_ftype(t), 1.0)), ("ptr", data(3, a_)), ("int", lda_),
            ("ptr", data(5, x_)), ("int", one), ("float", ir.Constant(_ftype(t), 0.0)),
            ("ptr", data(6, y_)), ("int", one),
        ])  # fmt: skip

    return sig, codegen


@numba.njit(nogil=True)
def _layout(x):  # type: ignore[no-untyped-def]  # (Numba: typed at the call)
    """(x or a C-contiguous copy, whether BLAS reads it transposed, its leading dimension)."""
    rows, cols = x.shape
    size = x.itemsize
    s0, s1 = x.strides
    if (s1 == size or cols <= 1) and (s0 == cols * size or rows <= 1):
        return x, False, max(cols, 1)
    if (s0 == size or rows <= 1) and (s1 == rows * size or cols <= 1):
        return x, True, max(rows, 1)
    x = np.ascontiguousarray(x)
    return x, False, max(cols, 1)


if FOUND:

    @numba.njit(nogil=True)
    def matmul(a, b):  # type: ignore[no-untyped-def]
        m, k = a.shape
        n = b.shape[1]
        out = empty((m, n), a.dtype)
        if m == 0 or n == 0:
            return out
        if k == 0:
            out[:] = 0
            return out
        a, ta, lda = _layout(a)
        b, tb, ldb = _layout(b)
        _gemm(
            np.int32(_TRANS if ta else _NO_TRANS),
            np.int32(_TRANS if tb else _NO_TRANS),
            m,
            n,
            k,
            a,
            lda,
            b,
            ldb,
            out,
        )
        return out

    @numba.njit(nogil=True)
    def matvec(a, x):  # type: ignore[no-untyped-def]
        m, k = a.shape
        out = empty(m, a.dtype)
        if m == 0:
            return out
        if k == 0:
            out[:] = 0
            return out
        a, ta, lda = _layout(a)
        if x.strides[0] != x.itemsize:
            x = np.ascontiguousarray(x)
        # (a transposed layout: A is the row-major k x m matrix A.T, read transposed)
        if ta:
            _gemv(np.int32(_TRANS), k, m, a, lda, x, out)
        else:
            _gemv(np.int32(_NO_TRANS), m, k, a, lda, x, out)
        return out

else:

    @numba.njit(nogil=True)
    def matmul(a, b):  # type: ignore[no-untyped-def]
        return np.dot(a, b)

    @numba.njit(nogil=True)
    def matvec(a, x):  # type: ignore[no-untyped-def]
        return np.dot(a, x)
