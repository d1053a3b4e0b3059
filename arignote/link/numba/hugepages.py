"""Arrays that generated Numba code allocates, on transparent huge pages as NumPy's are.

On Linux, NumPy asks the kernel for huge pages (``madvise(MADV_HUGEPAGE)``) on every array of
4 MiB or more, and systems set transparent huge pages to ``madvise`` by default, so those
arrays fault in 2 MiB at a time. Numba's ``np.empty`` takes its memory from ``malloc`` with
no such advice: 4 KiB pages, one fault each. Arrays of more than 32 MiB are mapped afresh on
every allocation (glibc's mmap threshold stops there: :mod:`arignote.link.python.heap`), so a
whole-graph function returning a 4000x4000 float64 array paid 31,251 page faults a call,
against 591 for the same array from NumPy: the 4000x4000 softmax took 85 ms as one Numba
function, 22 ms on tier 1 with its kernel; filling such an array in Numba took 54 ms, 14 ms
with the advice.

:func:`empty` is ``np.empty`` with that advice for arrays of :data:`HUGE_BYTES` or more (the
page-aligned part of the block; the kernel backs each aligned 2 MiB of it with a huge page).
The whole-graph writer (:mod:`arignote.link.numba.graph`) calls it for every ``np.empty`` of
its source, under the name ``graph.EMPTY_NAME``. ``madvise`` is declared in the function's LLVM IR and
resolved in the process like libm's functions, so a function calling it is cached on disk as
any other. Elsewhere than Linux, :func:`empty` is ``np.empty``.

This module imports Numba: only generated modules import it.
"""

from __future__ import annotations

import sys

import llvmlite.ir as ir
import numba
import numpy as np
from numba.core import cgutils, types
from numba.extending import intrinsic

__all__ = ["HUGE_BYTES", "empty"]

#: bytes from which an array is advised onto huge pages (NumPy's threshold)
HUGE_BYTES = 1 << 22
_PAGE = 4096
_MADV_HUGEPAGE = 14  # (Linux, every architecture)


@intrinsic
def _madvise(typingctx: object, address: types.Type, length: types.Type) -> tuple:
    """``madvise(address, length, MADV_HUGEPAGE)``; its result (an error where the kernel has
    no transparent huge pages) is ignored."""
    sig = types.int32(types.intp, types.intp)

    def codegen(context: object, builder: ir.IRBuilder, signature: object, args: list) -> ir.Value:
        void_p = ir.IntType(8).as_pointer()
        fnty = ir.FunctionType(ir.IntType(32), [void_p, ir.IntType(64), ir.IntType(32)])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "madvise")
        addr, n = args
        return builder.call(
            fn, [builder.inttoptr(addr, void_p), n, ir.Constant(ir.IntType(32), _MADV_HUGEPAGE)]
        )

    return sig, codegen


if sys.platform.startswith("linux"):

    @numba.njit(inline="always", nogil=True)
    def empty(shape, dtype):  # type: ignore[no-untyped-def]  # (Numba: typed at the call)
        a = np.empty(shape, dtype)
        n = a.nbytes
        if n >= HUGE_BYTES:
            p = a.ctypes.data
            start = (p + (_PAGE - 1)) & ~(_PAGE - 1)
            if p + n > start:
                _madvise(start, p + n - start)
        return a

else:

    @numba.njit(inline="always", nogil=True)
    def empty(shape, dtype):  # type: ignore[no-untyped-def]
        return np.empty(shape, dtype)
