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
import math
import os
import platform
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def ensure_repo_importable() -> None:
    """Make ``import arignote`` import this checkout's package: a script measures the code
    beside it, even where another checkout is installed (editable) in the environment."""
    if "arignote" in sys.modules:
        return
    if REPO_ROOT in sys.path:
        sys.path.remove(REPO_ROOT)
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


class TimeLimitExceeded(BaseException):
    """Raised inside a run that went past :func:`time_limit` (a BaseException, so that no
    ``except Exception`` in the measured library swallows it)."""


@contextlib.contextmanager
def time_limit(seconds: float | None) -> Iterator[None]:
    """Interrupt the body with :class:`TimeLimitExceeded` after ``seconds`` (wall clock).

    Uses ``SIGALRM``, so it only works in the main thread on POSIX; elsewhere it does
    nothing and the body runs to the end.
    """
    usable = (
        seconds is not None
        and hasattr(signal, "setitimer")
        and threading.current_thread() is threading.main_thread()
    )
    if not usable:
        yield
        return

    def on_alarm(signum: int, frame: Any) -> None:
        raise TimeLimitExceeded(f"over {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def timed(fn: Callable[[], Any], disable_gc: bool = False) -> tuple[float, Any]:
    """``(seconds, result)`` of one call of ``fn`` (``time.perf_counter``)."""
    with quiet_gc(disable_gc):
        t0 = time.perf_counter()
        result = fn()
        dt = time.perf_counter() - t0
    return dt, result


def best_of(
    run: Callable[[], tuple[float, Any]],
    repeats: int,
    budget: float | None = None,
    limit: float | None = None,
) -> tuple[float, Any, int]:
    """Call ``run`` (which returns ``(seconds, result)``) up to ``repeats`` times.

    Returns the smallest time, the result of the last call and the number of calls. Stops
    early once the calls so far took ``budget`` seconds (there is always one call). A call
    running past ``limit`` seconds is interrupted: if it was the first,
    :class:`TimeLimitExceeded` propagates, otherwise the earlier calls count. The result of
    one call is dropped before the next starts, so two large graphs are never alive at once.
    """
    best = float("inf")
    spent = 0.0
    result = None
    runs = 0
    while runs < max(1, repeats):
        result = None
        try:
            with time_limit(limit):
                dt, result = run()
        except TimeLimitExceeded:
            if runs == 0:
                raise
            break
        runs += 1
        best = min(best, dt)
        spent += dt
        if budget is not None and spent >= budget:
            break
    return best, result, runs


def extrapolate(history: Sequence[tuple[int, float]], n: int) -> float | None:
    """Guess the time at size ``n`` from earlier ``(size, seconds)`` points.

    The growth exponent is taken from the last two points (clamped to [1, 2.5]); with
    one point, growth is assumed linear. ``None`` without history.
    """
    if not history:
        return None
    n1, t1 = history[-1]
    p = 1.0
    if len(history) >= 2:
        n0, t0 = history[-2]
        if t0 > 0 and t1 > 0 and n1 > n0:
            p = min(2.5, max(1.0, math.log(t1 / t0) / math.log(n1 / n0)))
    return t1 * (n / n1) ** p


# --- environment ----------------------------------------------------------------------


def environment() -> dict[str, Any]:
    return {
        "python": sys.version.split()[0],
        "executable": sys.executable,
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "loadavg": os.getloadavg() if hasattr(os, "getloadavg") else None,
    }


# --- peer in another interpreter ------------------------------------------------------


class PeerProcess:
    """A peer measured in another interpreter, one request at a time.

    ``python script args...`` must answer on stdout with JSON records, one per line: first
    a record with ``"meta": true`` once it is ready, then, for each line the parent writes
    to its stdin, the records of that request followed by one with ``"done": true``.
    Taking turns with the in-process measurements this way means a change in the
    machine's load hits both libraries alike. A peer that dies leaves ``alive`` false;
    ``stderr_tail`` says why.
    """

    def __init__(self, python: str, script: str, args: Sequence[str], timeout: float = 900.0):
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        self.proc = subprocess.Popen(
            [python, script, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            bufsize=1,
            env=env,
            cwd=REPO_ROOT,
        )
        self._stderr: list[str] = []
        threading.Thread(target=self._stderr.extend, args=(self.proc.stderr,), daemon=True).start()
        self._killer = threading.Timer(timeout, self.proc.kill)
        self._killer.daemon = True
        self._killer.start()
        self.alive = True
        self.meta: dict | None = None
        for rec in self._read_until(lambda r: bool(r.get("meta"))):
            self.meta = rec

    def _read_until(self, last: Callable[[dict], bool]) -> Iterator[dict]:
        assert self.proc.stdout is not None
        while self.alive:
            line = self.proc.stdout.readline()
            if not line:
                self.alive = False
                break
            line = line.strip()
            if not line.startswith("{"):
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                continue
            yield rec
            if last(rec):
                return

    def request(self, line: str) -> Iterator[dict]:
        """Send one request line; yield its records (the final ``done`` record excluded)."""
        if not self.alive:
            return
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(line + "\n")
            self.proc.stdin.flush()
        except OSError:
            self.alive = False
            return
        for rec in self._read_until(lambda r: bool(r.get("done"))):
            if not rec.get("done"):
                yield rec

    @property
    def stderr_tail(self) -> str:
        return "".join(self._stderr[-20:])

    def close(self) -> int | None:
        with contextlib.suppress(OSError):
            if self.proc.stdin is not None:
                self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._killer.cancel()
        return self.proc.returncode


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
