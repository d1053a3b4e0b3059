"""The mode of the tests that check what FAST_RUN's rewrites do.

A whole test run may pick its default mode (``ARIGNOTE_FLAGS=mode=FAST_COMPILE``, ``NUMBA``,
...). A test of a fast_run rewrite (a fused kernel, a Gemm, an in-place update, a stable
form) must still see that rewrite run, yet should run on the run's linker: so it compiles
with :func:`fast_run_mode`, the default mode when that mode runs FAST_RUN's rewrites, else
FAST_RUN's rewrites on the default mode's linker (under FAST_COMPILE: the reference VM).
"""

from __future__ import annotations

from typing import Any

import arignote
from arignote.compile.mode import Mode, get_default_mode


def fast_run_mode() -> Mode:
    """The default mode if it runs FAST_RUN's rewrites, else those rewrites on its linker."""
    mode = get_default_mode()
    if "fast_run" in mode.query.include:
        return mode
    return Mode(linker=mode.linker, optimizer="fast_run", name=f"{mode.name}+fast_run")


def function(*args: Any, mode: Any = None, **kwargs: Any) -> Any:
    """``arignote.function``, compiled with :func:`fast_run_mode` unless ``mode`` is given."""
    return arignote.function(*args, mode=fast_run_mode() if mode is None else mode, **kwargs)
