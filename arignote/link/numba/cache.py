"""The disk cache of compiled kernels: content-addressed, lock-free, shared by processes.

A kernel is a generated module (:mod:`arignote.link.numba.kernels`) stored as
``<dir>/kernels/k_<key>.py``, where ``key`` hashes the kernel's text (its structure, dtypes,
ranks, broadcastable patterns, layout: never a constant's value) together with
:func:`environment_key` (arignote, NumPy, Numba and Python versions, the CPU's features).
Numba's own ``cache=True`` keys a function on its source file, so importing that file
compiles the kernel once and later imports load the machine code from the ``__pycache__``
folder next to it. A file is never rewritten once there (its mtime is part of Numba's
key): it is written to a temporary file and renamed into place (atomic), and so is the
``k_<key>.ok`` marker the compiling process writes once the kernel loaded. No lock: two
processes compiling the same kernel write the same bytes, and the last rename wins.

The first line of a kernel file carries the hash of the rest, so a truncated or corrupt
entry is detected (:func:`read_entry`) and removed with what Numba stored for it
(:func:`remove_entry`); the caller then rebuilds it.

The directory is ``$ARIGNOTE_CACHE_DIR``, else ``$XDG_CACHE_HOME/arignote``, else
``~/.cache/arignote``. ``python -m arignote.cache`` (or ``arignote-cache``) shows its size
and clears it. Nothing here imports Numba.

>>> import tempfile, os
>>> d = tempfile.mkdtemp()
>>> os.environ["ARIGNOTE_CACHE_DIR"] = d
>>> path = write_entry("abc123", "X = 1\\n")
>>> read_entry("abc123")
'X = 1\\n'
>>> info()["kernels"]
1
>>> clear()
1
>>> del os.environ["ARIGNOTE_CACHE_DIR"]
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import platform
import sys
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "cache_dir",
    "kernel_dir",
    "environment_key",
    "entry_path",
    "write_entry",
    "read_entry",
    "mark_ready",
    "is_ready",
    "remove_entry",
    "info",
    "clear",
    "main",
]

_HEADER = "# arignote kernel sha256="


def cache_dir() -> Path:
    """The cache directory (created on first use by the writers)."""
    env = os.environ.get("ARIGNOTE_CACHE_DIR")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return Path(xdg) / "arignote" if xdg else Path.home() / ".cache" / "arignote"


def kernel_dir() -> Path:
    return cache_dir() / "kernels"


def _version(dist: str) -> str:
    """The installed version of ``dist``: from the name of the first ``<dist>-<version>.dist-info``
    folder on ``sys.path`` (where ``importlib.metadata`` looks first; importing it costs ~15 ms
    in a fresh process, the first compile's whole budget), else from ``importlib.metadata``
    (other layouts), else ``"none"``."""
    prefix, suffix = f"{dist}-", ".dist-info"
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:  # (a zip file, a missing folder)
            continue
        found = [n for n in names if n.startswith(prefix) and n.endswith(suffix)]
        if found:
            return min(found)[len(prefix) : -len(suffix)]
    import importlib.metadata  # (slow to import: only for what the folder names do not say)

    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "none"


@functools.cache
def _cpu_features() -> str:
    """The CPU's model and feature flags (Linux: ``/proc/cpuinfo``), else the platform's."""
    try:
        with open("/proc/cpuinfo") as f:
            fields = {}
            for line in f:
                name, _, value = line.partition(":")
                name = name.strip()
                if name in ("flags", "model name", "Features") and name not in fields:
                    fields[name] = value.strip()
                if not line.strip() and fields:
                    break
        return repr(sorted(fields.items()))
    except OSError:
        return f"{platform.machine()} {platform.processor()}"


def _numpy_blas() -> str:
    """The BLAS library NumPy was built with (its name, version and configuration): a
    whole-graph function calls its ``cblas_?gemm`` by symbol (:mod:`.numpy_blas`)."""
    try:
        blas = np.__config__.CONFIG["Build Dependencies"]["blas"]
        return " ".join(str(blas.get(k)) for k in ("name", "version", "openblas configuration"))
    except (AttributeError, KeyError, TypeError):
        return "unknown"


@functools.cache
def environment_key() -> str:
    """What besides a kernel's text decides its machine code: library versions (NumPy's BLAS
    included) and CPU."""
    parts = [
        _version("arignote"),
        np.__version__,
        _numpy_blas(),
        _version("numba"),
        _version("llvmlite"),
        sys.version.split()[0],
        platform.machine(),
        _cpu_features(),
    ]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def entry_key(text_key: str) -> str:
    """The cache key of a kernel whose text hashes to ``text_key``, in this environment."""
    return hashlib.sha256(f"{text_key}:{environment_key()}".encode()).hexdigest()[:32]


def entry_path(key: str) -> Path:
    return kernel_dir() / f"k_{key}.py"


def _atomic_write(path: Path, data: str) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder and a rename,
    so a reader sees the whole file or none."""
    import tempfile  # (~8 ms to import: only when a kernel is written)

    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        with_suppressed_remove(tmp)
        raise


def with_suppressed_remove(path: str | Path) -> None:
    with contextlib.suppress(OSError):
        os.remove(path)


def _checksum(body: str) -> str:
    return hashlib.sha256(body.encode()).hexdigest()


def write_entry(key: str, source: str) -> Path:
    """Store a kernel's module text under ``key`` unless a valid entry is there (a file
    is never rewritten: Numba's cache keys on its mtime). Returns its path."""
    path = entry_path(key)
    if read_entry(key) == source:
        return path
    if path.exists():  # corrupt, truncated or different: rebuilt from scratch
        remove_entry(key)
    _atomic_write(path, f"{_HEADER}{_checksum(source)}\n{source}")
    return path


def read_entry(key: str) -> str | None:
    """The module text stored under ``key``, or None when there is none or it is corrupt
    (its first line's hash does not match the rest: a truncated or damaged file)."""
    try:
        text = entry_path(key).read_text()
    except (OSError, UnicodeDecodeError):
        return None
    head, _, body = text.partition("\n")
    if not head.startswith(_HEADER) or head[len(_HEADER) :] != _checksum(body):
        return None
    return body


def mark_ready(key: str) -> None:
    """Record that the kernel under ``key`` compiled and its machine code is in Numba's
    cache (a later process loads it instead of compiling)."""
    _atomic_write(entry_path(key).with_suffix(".ok"), _checksum(read_entry(key) or ""))


def is_ready(key: str) -> bool:
    """Whether the entry is complete: a valid module whose compiled code was stored."""
    body = read_entry(key)
    if body is None:
        return False
    try:
        return entry_path(key).with_suffix(".ok").read_text() == _checksum(body)
    except OSError:
        return False


def remove_entry(key: str) -> None:
    """Remove an entry, its marker and what Numba stored for it."""
    path = entry_path(key)
    with_suppressed_remove(path.with_suffix(".ok"))
    with_suppressed_remove(path)
    pycache = path.parent / "__pycache__"
    if pycache.is_dir():
        for f in pycache.glob(f"{path.stem}.*"):
            with_suppressed_remove(f)


def info() -> dict[str, Any]:
    """The cache's directory, number of kernels and size in bytes."""
    root = cache_dir()
    files = [p for p in root.rglob("*") if p.is_file()] if root.is_dir() else []
    return {
        "dir": str(root),
        "kernels": sum(1 for p in files if p.parent.name == "kernels" and p.suffix == ".py"),
        "bytes": sum(p.stat().st_size for p in files),
    }


def clear() -> int:
    """Remove every kernel (and Numba's files); returns how many kernels there were."""
    import shutil  # (~3 ms to import: only when the cache is cleared)

    n = info()["kernels"]
    shutil.rmtree(kernel_dir(), ignore_errors=True)
    return n


def main(argv: list[str] | None = None) -> int:
    """``python -m arignote.cache [info|clear]``."""
    import argparse  # (the command line's: not imported with the cache)

    parser = argparse.ArgumentParser(prog="arignote-cache", description="arignote's kernel cache")
    parser.add_argument("command", nargs="?", choices=["info", "clear"], default="info")
    args = parser.parse_args(argv)
    if args.command == "clear":
        n = clear()
        print(f"removed {n} kernels from {cache_dir()}")
        return 0
    i = info()
    print(f"{i['dir']}: {i['kernels']} kernels, {i['bytes'] / 1e6:.1f} MB")
    return 0
