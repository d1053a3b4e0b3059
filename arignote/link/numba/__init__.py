"""The Numba backend (tier 2): compiled kernels for fused elementwise loops and reductions,
generated as source (:mod:`~arignote.link.numba.kernels`), cached on disk by content
(:mod:`~arignote.link.numba.cache`) and swapped into the generated Python function of tier 1
(:mod:`~arignote.link.numba.linker`). Importing this package never imports Numba: only
compiling or loading a kernel does, so arignote works without the ``numba`` extra.
"""

from arignote.link.numba.linker import (
    JIT_CHOICES,
    NumbaLinker,
    NumbaMissing,
    load_kernel,
    numba_available,
    wait_for_kernels,
)

__all__ = ["JIT_CHOICES", "NumbaLinker", "NumbaMissing", "load_kernel", "numba_available", "wait_for_kernels"]
