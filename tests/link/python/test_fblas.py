"""SciPy's BLAS wrappers loaded from their extension module's file
(:mod:`arignote.link.python.fblas`): the same routines as ``scipy.linalg.blas``, and the usual
import where the file is not found. (That a fresh process's products leave ``scipy.linalg``
unimported is checked in ``tests/test_import_cost.py``.)"""

from __future__ import annotations

import importlib.util
import sys

import numpy as np
import pytest
import scipy.linalg.blas

from arignote.link.python import fblas as fblas_mod


def test_loaded_from_its_file_it_is_scipys_module() -> None:
    module = fblas_mod.load_from_file()
    assert module is not None  # (SciPy's wheels on Linux, macOS and Windows have the file)
    assert module.__file__ == scipy.linalg.blas._fblas.__file__
    rng = np.random.default_rng(0)
    a, x = rng.normal(size=(5, 3)), rng.normal(size=3)
    np.testing.assert_array_equal(module.dgemv(2.0, a, x), scipy.linalg.blas.dgemv(2.0, a, x))
    b32 = rng.normal(size=(3, 4)).astype("float32")
    a32 = a.astype("float32")
    got = module.sgemm(1.0, a32, b32)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, scipy.linalg.blas.sgemm(1.0, a32, b32))


def test_fblas_is_the_imported_module_once_scipy_linalg_is_imported(monkeypatch) -> None:
    monkeypatch.setattr(fblas_mod, "_module", None)
    assert fblas_mod.fblas() is sys.modules[fblas_mod.MODULE]
    assert fblas_mod.fblas() is fblas_mod.fblas()


def test_a_missing_file_falls_back_to_the_import(monkeypatch) -> None:
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None)
    assert fblas_mod.load_from_file() is None
    monkeypatch.setattr(fblas_mod, "_module", None)
    monkeypatch.delitem(sys.modules, fblas_mod.MODULE)  # (restored after the test)
    monkeypatch.setattr(fblas_mod, "load_from_file", lambda: None)
    module = fblas_mod.fblas()
    assert module is sys.modules[fblas_mod.MODULE]
    assert module.ddot(np.ones(3), np.arange(3.0)) == pytest.approx(3.0)


def test_a_module_without_the_routines_is_not_taken(monkeypatch, tmp_path) -> None:
    """A SciPy laid out otherwise (no ``linalg/_fblas`` extension file) gives None."""
    (tmp_path / "linalg").mkdir()
    spec = importlib.util.spec_from_file_location("scipy", tmp_path / "__init__.py")
    spec.submodule_search_locations = [str(tmp_path)]
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: spec)
    assert fblas_mod.load_from_file() is None
