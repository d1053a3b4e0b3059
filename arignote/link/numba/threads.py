"""Tier-2 kernel calls split over threads.

Every kernel computes a slice ``start:stop`` of its output's first (for a reduction: first
kept) dimension and releases the GIL (:mod:`arignote.link.numba.kernels`), so a large call
can run as pieces on several threads. Measured on this project's 2-core machine with the
other core idle (``bench/backend.py``): ``exp(-x**2) * sin(y)`` on 2**20 elements took
3.2 ms on one thread and 1.8-2.0 ms on two, a row sum of a 4000x4000 matrix 4.3 and 2.8 ms.
With the other core busy the second thread gains nothing, and a split that waited for it
would lose: so the pieces are claimed, not assigned (:func:`split_call`). The calling
thread takes pieces until none are left and cancels the helpers' tasks that have not started;
a helper that starts late finds fewer pieces or none. A call is then never much slower than
on one thread. A split costs a task handed to a pool and a helper woken on another core:
20-25 µs on this machine (a virtual one, where waking a thread on another core is slow), so
only calls estimated at :data:`SPLIT_NS` or more are split. The estimate is the kernel's
elements times its cost per element (:attr:`~arignote.link.numba.kernels.KernelPlan.costs`),
which overestimates memory-bound loops: measured, ``(x*y + x) * (y - 2.5) + x*x`` (1.8 ns an
element estimated, 0.3 measured) gains from a split from about 400,000 elements, and
``exp(-x**2) * sin(y)`` (about 3 ns an element) from about 60,000; both are calls of about
120-150 µs on one thread.

How many threads (:func:`kernel_threads`): ``ARIGNOTE_KERNEL_THREADS`` (read once; ``1``
keeps every call on the calling thread), else the cores this process may run on, at most
:data:`MAX_THREADS` (only 2 have been measured; memory-bound loops gain little from more).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

__all__ = ["MAX_THREADS", "SPLIT_NS", "kernel_threads", "pieces_for", "split_call"]

#: the most threads a call is split over by default
MAX_THREADS = 4
#: estimated ns of a call (its elements times the kernel's cost per element) from which it is
#: split; each thread's share is at least half of it
SPLIT_NS = 600_000.0
#: pieces per thread: a helper that starts late still finds work
_PIECES_PER_THREAD = 2

_pool: ThreadPoolExecutor | None = None
_pool_size = 0
_threads: int | None = None


def kernel_threads() -> int:
    """The threads a large kernel call may use (see the module's doc)."""
    global _threads
    if _threads is None:
        raw = os.environ.get("ARIGNOTE_KERNEL_THREADS", "").strip()
        if raw:
            try:
                n = int(raw)
            except ValueError:
                n = 0
            if n < 1:
                raise ValueError(f"ARIGNOTE_KERNEL_THREADS must be a positive integer, got {raw!r}")
            _threads = n
        else:
            try:
                cores = len(os.sched_getaffinity(0))
            except AttributeError:  # (not on Linux)
                cores = os.cpu_count() or 1
            _threads = max(1, min(cores, MAX_THREADS))
    return _threads


def pieces_for(threads: int, est_ns: float, rows: int) -> int:
    """How many threads a call of ``rows`` rows estimated at ``est_ns`` is split over
    (1: not split)."""
    if threads < 2 or rows < 2 or est_ns < SPLIT_NS:
        return 1
    return min(threads, rows, int(est_ns // (SPLIT_NS / 2)))


def _forget_pool() -> None:
    # a forked child has none of its parent's threads: it makes its own pool on first use
    global _pool, _pool_size
    _pool, _pool_size = None, 0


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


def _helpers(n: int) -> ThreadPoolExecutor:
    global _pool, _pool_size
    if _pool is None or _pool_size < n:
        from concurrent.futures import ThreadPoolExecutor  # (~5 ms to import: on first split)

        old = _pool
        _pool, _pool_size = ThreadPoolExecutor(n, thread_name_prefix="arignote-kernel"), n
        if old is not None:
            old.shutdown(wait=False)
    return _pool


def split_call(kernel: Callable, args: tuple, rows: int, threads: int) -> bool:
    """``kernel(*args, 0, rows)`` as pieces over ``threads`` threads (the calling one and
    ``threads - 1`` helpers), each piece claimed by whichever thread is free; whether any
    piece asked for tier 1 (the kernels' return value). An error raised by a piece is
    raised here, once no helper runs any more."""
    n = min(rows, threads * _PIECES_PER_THREAD)
    bounds = [rows * k // n for k in range(n + 1)]
    # (claimed with list.pop, which no two threads do at once; the first rows first)
    todo = [(bounds[k], bounds[k + 1]) for k in range(n - 1, -1, -1)]

    def work() -> bool:
        beyond = False
        while todo:
            try:
                lo, hi = todo.pop()
            except IndexError:  # (another thread took the last one)
                break
            beyond = bool(kernel(*args, lo, hi)) or beyond
        return beyond

    pool = _helpers(threads - 1)
    futures = [pool.submit(work) for _ in range(threads - 1)]
    try:
        beyond = work()
    finally:
        pending = [f for f in futures if not f.cancel()]
        for f in pending:  # (started: wait for their pieces, so no write outlives the call)
            f.exception()
    for f in pending:
        beyond = f.result() or beyond
    return beyond
