"""Fixtures of the Numba tier's tests."""

from __future__ import annotations

import getpass
import os
import tempfile
from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def empty_kernel_cache(tmp_path_factory: pytest.TempPathFactory):
    """An empty kernel cache for the module's tests, as CI starts from; a cache the
    developer points ``ARIGNOTE_CACHE_DIR`` at is left alone (and used)."""
    if os.environ.get("ARIGNOTE_CACHE_DIR"):
        yield None
        return
    d = tmp_path_factory.mktemp("arignote-cache")
    os.environ["ARIGNOTE_CACHE_DIR"] = str(d)
    yield d
    del os.environ["ARIGNOTE_CACHE_DIR"]


@pytest.fixture(scope="module")
def kept_kernel_cache():
    """A kernel cache kept between test runs, for tests that check what compiled code
    computes rather than how a cold cache fills: a large graph's kernel (a loop and its
    gradient: ~10 s of CPU to compile) compiles once per machine and version of the code,
    and later runs load it. It lives in the system's temporary directory, one per user
    (``python -m arignote.cache`` clears the developer's own cache, not this one: remove
    the folder); entries are keyed by their text and environment, so a stale one is never
    read. A cache the developer points ``ARIGNOTE_CACHE_DIR`` at is left alone (and used)."""
    if os.environ.get("ARIGNOTE_CACHE_DIR"):
        yield None
        return
    d = Path(tempfile.gettempdir()) / f"arignote-test-kernels-{getpass.getuser()}"
    d.mkdir(exist_ok=True)
    os.environ["ARIGNOTE_CACHE_DIR"] = str(d)
    yield d
    del os.environ["ARIGNOTE_CACHE_DIR"]
