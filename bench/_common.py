"""Helpers shared by the scripts in ``bench/``: timing, running a peer library in another
interpreter, and plain-text tables.

Nothing here imports arignote or a peer library, so a script can run in an environment
that has only one of them (or only its own subprocess protocol).
"""

from __future__ import annotations

import contextlib
import gc
import importlib.util
import json
import os
import platform
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def ensure_repo_importable() -> None:
    """Make ``import arignote`` work from a checkout that is not installed."""
    if importlib.util.find_spec("arignote") is None and REPO_ROOT not in sys.path:
        sys.path.insert(0, REPO_ROOT)


def importable(module: str) -> bool:
    """Whether ``import module`` would find something (without importing it)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


# --- timing ---------------------------------------------------------------------------


@contextlib.contextmanager
def quiet_gc(disable: bool) -> Iterator[None]:
    """Collect garbage before a timed region; with ``disable``, keep the GC off inside it.

    By default the cyclic GC stays on while timing: users pay for it when they build big
    graphs, so it belongs in the number.
    """
    gc.collect()
    was_enabled = gc.isenabled()
    if disable:
        gc.disable()
    try:
        yield
    finally:
        if disable and was_enabled:
            gc.enable()


def timed(fn: Callable[[], Any], disable_gc: bool = False) -> tuple[float, Any]:
    """``(seconds, result)`` of one call of ``fn`` (``time.perf_counter``)."""
    with quiet_gc(disable_gc):
        t0 = time.perf_counter()
        result = fn()
        dt = time.perf_counter() - t0
    return dt, result


def best_of(run: Callable[[], tuple[float, Any]], repeats: int) -> tuple[float, Any]:
    """Call ``run`` (which returns ``(seconds, result)``) ``repeats`` times.

    Returns the smallest time and the result of the last call. The result of one call is
    dropped before the next starts, so two large graphs are never alive at once.
    """
    best = float("inf")
    result = None
    for _ in range(max(1, repeats)):
        result = None
        dt, result = run()
        best = min(best, dt)
    return best, result


# --- environment ----------------------------------------------------------------------


def environment() -> dict[str, Any]:
    return {
        "python": sys.version.split()[0],
        "executable": sys.executable,
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
    }


# --- peer in another interpreter ------------------------------------------------------


class PeerRun:
    """Run ``python script args...`` and read the JSON records it prints, one per line.

    Records are read as they come, so a peer that dies half way (a crash, a timeout)
    still leaves the records it had written; ``returncode`` and ``stderr_tail`` say what
    happened.
    """

    def __init__(self, python: str, script: str, args: Sequence[str], timeout: float = 900.0):
        self.cmd = [python, script, *args]
        self.timeout = timeout
        self.returncode: int | None = None
        self.stderr_tail = ""

    def records(self) -> Iterator[dict]:
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        with subprocess.Popen(
            self.cmd,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=REPO_ROOT,
        ) as proc:
            assert proc.stdout is not None and proc.stderr is not None
            killer = threading.Timer(self.timeout, proc.kill)
            killer.daemon = True
            killer.start()
            stderr_lines: list[str] = []
            drainer = threading.Thread(target=stderr_lines.extend, args=(proc.stderr,), daemon=True)
            drainer.start()
            try:
                for line in proc.stdout:
                    line = line.strip()
                    if line.startswith("{"):
                        with contextlib.suppress(json.JSONDecodeError):
                            yield json.loads(line)
                proc.wait()
            finally:
                killer.cancel()
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
            drainer.join(timeout=5)
            self.returncode = proc.returncode
            self.stderr_tail = "".join(stderr_lines[-20:])


# --- formatting -----------------------------------------------------------------------


def fmt_seconds(s: float | None) -> str:
    if s is None:
        return "-"
    if s >= 1:
        return f"{s:.2f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.1f} ms"
    return f"{s * 1e6:.0f} µs"


def fmt_us(us: float | None) -> str:
    if us is None:
        return "-"
    return f"{us:.2f}" if us < 10 else f"{us:.1f}"


def fmt_ratio(r: float | None) -> str:
    return "-" if r is None else f"{r:.1f}x"


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[bool] | None = None) -> str:
    """A plain-text table; ``right[i]`` right-aligns column ``i`` (numbers)."""
    cols = len(headers)
    right = list(right) if right is not None else [False] * cols
    widths = [max(len(str(r[i])) for r in [headers, *rows]) for i in range(cols)]

    def line(cells: Sequence[str]) -> str:
        out = []
        for i, cell in enumerate(cells):
            cell = str(cell)
            out.append(cell.rjust(widths[i]) if right[i] else cell.ljust(widths[i]))
        return "  ".join(out).rstrip()

    sep = "  ".join("-" * w for w in widths)
    return "\n".join([line(headers), sep, *(line(r) for r in rows)])
