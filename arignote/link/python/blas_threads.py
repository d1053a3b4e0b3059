"""How many threads the BLAS behind arignote's matrix products may use during a call.

The Python backend's products (:mod:`arignote.link.python.blas`) run in NumPy's OpenBLAS
(its outer-product updates in SciPy's), the Numba backend's matrix-matrix products in NumPy's
too (:mod:`arignote.link.numba.numpy_blas`), its matrix-vector ones (``np.dot`` in a compiled
function) in SciPy's. OpenBLAS splits a product over its thread pool, whose workers busy-wait between products. On a machine with few cores and
other work running, a product then waits for a worker the system has descheduled: measured on
this project's 2-core machine under a load average of 1.5-2.5, a float32 MLP training step
(784-512-10, batch 256; five products of ~100 MFLOP between elementwise work) took a median
of 60 ms with 2 BLAS threads and 7 ms with 1, and the same step written in NumPy 12-40 ms
against 5.3 ms; the best calls with 2 threads were faster (3 ms), the usual ones never.

On the same machine with nothing else running, 2 threads are what pays: the step took
3.3 ms with no limit and 5.5 ms with 1 (NumPy 3.1 ms, JAX 3.9 ms). So a compiled function's
products run with at most :func:`blas_thread_limit` threads, by default no limit:

* ``ARIGNOTE_BLAS_THREADS`` (read once): a positive integer (``1`` on a machine whose cores
  are oversubscribed), or ``0`` for no limit (the BLAS library's own count);
* unset: no limit.

:func:`set_blas_thread_limit` changes it at run time. The limit is set on the libraries
(NumPy's and SciPy's, :func:`blas_thread_controls`; one where both use the same) only for the
product's duration (:func:`limited_call`; nested and concurrent calls restore each library's
own count once, when the last one ends), so BLAS calls outside compiled functions keep them.
Without a controllable OpenBLAS (another BLAS library, e.g. MKL or Accelerate) nothing
changes: :func:`blas_thread_control` (SciPy's) and :func:`numpy_blas_thread_control` are
then None.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from arignote.link.python.fblas import fblas

__all__ = [
    "blas_thread_control",
    "blas_thread_controls",
    "blas_thread_limit",
    "limited_call",
    "numpy_blas_thread_control",
    "set_blas_thread_limit",
]

#: (set, get) symbol names of OpenBLAS's thread count, as SciPy's bundled OpenBLAS (32- and
#: 64-bit integer builds) and a system OpenBLAS name them
_SYMBOLS = (
    ("scipy_openblas_set_num_threads", "scipy_openblas_get_num_threads"),
    ("scipy_openblas_set_num_threads64_", "scipy_openblas_get_num_threads64_"),
    ("openblas_set_num_threads", "openblas_get_num_threads"),
)

_UNSET: Any = object()
_control: Any = _UNSET
_numpy_control: Any = _UNSET
_controls: Any = _UNSET
_with_scipy = False
#: SciPy's BLAS extension module: while it is not loaded, nothing runs in its library
_SCIPY_BLAS = "scipy.linalg._fblas"
_limit: Any = _UNSET
_lock = threading.Lock()
_depth = 0
#: (setter, count to restore) of each library lowered by the outermost limited_call
_saved: list = []


def blas_thread_control() -> tuple[Callable[[int], Any], Callable[[], int]] | None:
    """``(set, get)`` of the thread count of the BLAS library SciPy's BLAS wrappers call
    (found once), or None when it is not an OpenBLAS with those functions."""
    global _control
    if _control is _UNSET:
        try:
            path = fblas().__file__
        except AttributeError:  # (a module without a file: no library to ask)
            path = None
        _control = None if path is None else _find_control(path)
    return _control


def _find_control(path: str) -> tuple[Callable[[int], Any], Callable[[], int]] | None:
    """``(set, get)`` of the thread count of the OpenBLAS that the shared library at ``path``
    links (dlsym searches its dependencies), or None."""
    try:
        lib = ctypes.CDLL(path)
    except OSError:
        return None
    for set_name, get_name in _SYMBOLS:
        setter = getattr(lib, set_name, None)
        getter = getattr(lib, get_name, None)
        if setter is not None and getter is not None:
            # (no argtypes: ctypes passes a Python int as a C int, and checks cost 0.2 µs)
            setter.restype = None
            getter.restype = ctypes.c_int
            return setter, getter
    return None


def numpy_blas_thread_control() -> tuple[Callable[[int], Any], Callable[[], int]] | None:
    """``(set, get)`` of the thread count of the BLAS library NumPy's products call (found
    once), or None when it is not an OpenBLAS with those functions."""
    global _numpy_control
    if _numpy_control is _UNSET:
        _numpy_control = _find_control(np._core._multiarray_umath.__file__)
    return _numpy_control


def blas_thread_controls() -> list[tuple[Callable[[int], Any], Callable[[], int]]]:
    """The ``(set, get)`` pairs :func:`limited_call` lowers: NumPy's library's, and SciPy's
    once its BLAS module is loaded (until then nothing runs in it, and looking it up would
    load it), once where both are the same library (a BLAS both link)."""
    global _controls, _with_scipy
    if _controls is _UNSET or (not _with_scipy and _SCIPY_BLAS in sys.modules):
        _with_scipy = _SCIPY_BLAS in sys.modules
        found: list = []
        seen: set = set()
        for control in (numpy_blas_thread_control(), blas_thread_control() if _with_scipy else None):
            if control is None:
                continue
            address = ctypes.cast(control[0], ctypes.c_void_p).value
            if address not in seen:
                seen.add(address)
                found.append(control)
        _controls = found
    return _controls


def _default_limit() -> int | None:
    raw = os.environ.get("ARIGNOTE_BLAS_THREADS", "").strip()
    if raw:
        try:
            n = int(raw)
        except ValueError:
            raise ValueError(
                f"ARIGNOTE_BLAS_THREADS must be a whole number (0: no limit), got {raw!r}"
            ) from None
        if n < 0:
            raise ValueError(f"ARIGNOTE_BLAS_THREADS must be 0 or more (0: no limit), got {n}")
        return n or None
    return None


def blas_thread_limit() -> int | None:
    """The most threads a compiled function's matrix products use (None: no limit).

    >>> from arignote.link.python.blas_threads import blas_thread_limit, set_blas_thread_limit
    >>> before = blas_thread_limit()
    >>> set_blas_thread_limit(1)
    >>> blas_thread_limit()
    1
    >>> set_blas_thread_limit(before)
    """
    global _limit
    if _limit is _UNSET:
        _limit = _default_limit()
    return _limit


def set_blas_thread_limit(n: int | None) -> None:
    """Limit a compiled function's matrix products to ``n`` BLAS threads (None: no limit,
    the BLAS library's own count). Takes effect at the next product."""
    global _limit
    if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 1):
        raise ValueError(f"set_blas_thread_limit: n must be a positive int or None, got {n!r}")
    _limit = n


def limited_call(fn: Callable, *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)`` with each BLAS library's thread count at most
    :func:`blas_thread_limit` meanwhile (the call as it is when there is no limit)."""
    global _depth, _saved
    limit = _limit if _limit is not _UNSET else blas_thread_limit()
    if limit is None:
        return fn(*args, **kwargs)
    controls = _controls
    if controls is _UNSET or (not _with_scipy and _SCIPY_BLAS in sys.modules):
        controls = blas_thread_controls()
    if not controls:
        return fn(*args, **kwargs)
    with _lock:  # (the first call in lowers the counts, the last one out restores them)
        if _depth == 0:
            saved = []
            for setter, getter in controls:
                count = getter()
                if count > limit:
                    setter(limit)
                    saved.append((setter, count))
            _saved = saved
        _depth += 1
    try:
        return fn(*args, **kwargs)
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                for setter, count in _saved:
                    setter(count)
                _saved = []
