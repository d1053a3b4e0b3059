"""The C heap under NumPy's arrays: allocations of a few hundred kB that reuse its pages.

glibc's ``malloc`` serves a block above its *mmap threshold* (128 kB at first) with a fresh
``mmap`` and gives it back to the system when it is freed; it also trims the heap's free top
above twice that threshold. The threshold rises by itself to the size of the largest such
block freed so far, up to 32 MiB. A process that has only freed blocks of a few hundred kB
keeps a low threshold, and a compiled function's intermediates of that size are then mapped
and page-faulted in afresh on every call: the increment of 2,048 rows of 32 into a
1,000-row table (a ``bincount`` over a 512 kB index array, a 256 kB result) took 580 µs a
call, 143 µs once the threshold was raised; the 80,000-observation hierarchical model
spent 2/3 of its call in 593 page faults.

:func:`raise_mmap_threshold` allocates and frees one block just under the cap, once per
process, which raises the threshold as any large array freed in the process would:
intermediates then come from the heap and reuse its pages. The fast backends call it when
they link a graph (the reference VM does not: it is the definition, not the fast path). The
block is never touched, so it costs no page and no time to speak of; the process may keep up
to 64 MiB of freed heap for reuse instead of returning it at once. Elsewhere (another libc)
it is one short-lived allocation.
"""

from __future__ import annotations

import numpy as np

__all__ = ["raise_mmap_threshold"]

_raised = False


def raise_mmap_threshold() -> None:
    """Raise glibc's mmap threshold to its cap, once per process (see the module's doc)."""
    global _raised
    if not _raised:
        _raised = True
        block = np.empty(31 << 20, np.uint8)
        del block
