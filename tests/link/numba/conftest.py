"""Fixtures of the Numba tier's tests."""

from __future__ import annotations

import os

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
