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
system CBLAS). Its address is registered with LLVM under a name of ours
(:data:`GEMM_NAMES`), which the function's IR calls, when this module is imported: before
Numba loads a cached function that calls it. The result is a new C-contiguous array (on huge
pages from 4 MiB, :mod:`arignote.link.numba.hugepages`); operands that are neither C- nor
F-contiguous are copied first (BLAS reads either layout as it is). :data:`FOUND` says whether
the library was found; where it was not, :func:`matmul` is Numba's ``np.dot``. NumPy's BLAS
build is part of every compiled function's cache key
(:func:`arignote.link.numba.cache.environment_key`), so a function compiled against one
library is never loaded where another one is.

This module imports Numba: only generated modules import it.
"""

from __future__ import annotations

import ctypes

import llvmlite.binding as llvm
import llvmlite.ir as ir
import numba
import numpy as np
from numba.core import cgutils, types
from numba.extending import intrinsic

from arignote.link.numba.hugepages import empty

__all__ = ["FOUND", "GEMM_NAMES", "SYMBOLS", "matmul"]

#: (name of ``cblas_sgemm``, of ``cblas_dgemm``, bits of their integers), tried in order in
#: the library NumPy's extension module links
SYMBOLS = (
    ("scipy_cblas_sgemm64_", "scipy_cblas_dgemm64_", 64),  # NumPy 2's wheels (scipy-openblas64)
    ("cblas_sgemm64_", "cblas_dgemm64_", 64),  # NumPy 1.26's wheels (openblas64_)
    ("cblas_sgemm", "cblas_dgemm", 32),  # a system CBLAS (OpenBLAS, MKL, ...)
)
#: the names the generated IR calls (float32, float64)
GEMM_NAMES = ("arignote_numpy_sgemm", "arignote_numpy_dgemm")
_ROW_MAJOR, _NO_TRANS, _TRANS = 101, 111, 112


def _register() -> int:
    """Register NumPy's ``cblas_?gemm`` under :data:`GEMM_NAMES`; their integers' bits, or 0
    where none of :data:`SYMBOLS` is there."""
    try:
        lib = ctypes.CDLL(np._core._multiarray_umath.__file__)
    except (OSError, AttributeError):
        return 0
    for s_name, d_name, bits in SYMBOLS:
        s_fn, d_fn = getattr(lib, s_name, None), getattr(lib, d_name, None)
        if s_fn is not None and d_fn is not None:
            for ours, fn in zip(GEMM_NAMES, (s_fn, d_fn)):
                llvm.add_symbol(ours, ctypes.cast(fn, ctypes.c_void_p).value)
            return bits
    return 0


_BITS = _register()
#: whether NumPy's BLAS was found (else :func:`matmul` is Numba's ``np.dot``)
FOUND = _BITS != 0


@intrinsic
def _gemm(typingctx: object, ta: types.Type, tb: types.Type, m: types.Type, n: types.Type, k: types.Type,
          a: types.Type, lda: types.Type, b: types.Type, ldb: types.Type, c: types.Type) -> tuple:  # fmt: skip
    """``C = A @ B`` (row-major; ``ta``/``tb`` 111 or 112: each operand as it is or
    transposed) by NumPy's ``cblas_?gemm`` with ``alpha = 1``, ``beta = 0``; ``a``, ``b``,
    ``c`` the arrays, ``ldc = n``."""
    if not isinstance(c, types.Array) or c.dtype not in (types.float32, types.float64):
        return None
    sig = types.void(
        types.int32, types.int32, types.intp, types.intp, types.intp, a, types.intp, b, types.intp, c
    )
    single = c.dtype == types.float32

    def codegen(context: object, builder: ir.IRBuilder, signature: object, args: list) -> None:
        ta_, tb_, m_, n_, k_, a_, lda_, b_, ldb_, c_ = args
        fty = ir.FloatType() if single else ir.DoubleType()
        ity = ir.IntType(_BITS or 64)
        i32 = ir.IntType(32)
        ptr = fty.as_pointer()
        fnty = ir.FunctionType(
            ir.VoidType(), [i32, i32, i32, ity, ity, ity, fty, ptr, ity, ptr, ity, fty, ptr, ity]
        )
        fn = cgutils.get_or_insert_function(builder.module, fnty, GEMM_NAMES[0 if single else 1])

        def data(ary_type: types.Array, value: ir.Value) -> ir.Value:
            return context.make_array(ary_type)(context, builder, value).data

        def as_int(v: ir.Value) -> ir.Value:
            return builder.trunc(v, ity) if ity.width < 64 else v

        one, zero = ir.Constant(fty, 1.0), ir.Constant(fty, 0.0)
        builder.call(
            fn,
            [
                ir.Constant(i32, _ROW_MAJOR), ta_, tb_, as_int(m_), as_int(n_), as_int(k_),
                one, data(signature.args[5], a_), as_int(lda_), data(signature.args[7], b_), as_int(ldb_),
                zero, data(signature.args[9], c_), as_int(n_),
            ],
        )  # fmt: skip

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

else:

    @numba.njit(nogil=True)
    def matmul(a, b):  # type: ignore[no-untyped-def]
        return np.dot(a, b)
