"""SciPy's Fortran BLAS wrappers (``scipy.linalg._fblas``, the functions that
``scipy.linalg.blas`` re-exports), loaded without importing the ``scipy.linalg`` package.

The Python backend's outer-product updates call SciPy's ``?ger`` (its other products run in
NumPy's BLAS: :mod:`arignote.link.python.blas` says why), and the BLAS thread limit finds
SciPy's OpenBLAS through this module. Importing ``scipy.linalg`` to reach them costs
~0.13 s of CPU on the project's machine, paid by the first call of a fresh process's first
function that needs them (``scipy.linalg``'s package
imports SciPy's array-API layer, ``numpy.testing``, ``numpy.f2py``, ...), most of a model's
setup time. The wrappers themselves are one extension module that needs none of that: loaded
from its file with :class:`importlib.machinery.ExtensionFileLoader` it costs ~3 ms, and it is
the same module, the same routines and the same OpenBLAS as through ``scipy.linalg.blas``.

:func:`fblas` returns it: the module already imported when something imported it, else loaded
from its file (once per process, thread-safe), else, where SciPy's layout differs (no such
file, another platform's loading rules) or the load fails, imported as usual. The interpreter
records the loaded module in ``sys.modules`` under its own name (``scipy`` and
``scipy.linalg`` stay unimported): a later ``import scipy.linalg`` imports SciPy as usual and
finds it there, so both hold the same routine objects.

>>> import numpy as np
>>> blas = fblas()
>>> blas.dgemv(1.0, np.eye(2), np.array([1.0, 2.0])).tolist()
[1.0, 2.0]
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import os
import sys
import threading
import types

__all__ = ["MODULE", "fblas", "load_from_file"]

#: the extension module's import name
MODULE = "scipy.linalg._fblas"
#: routines the Python backend calls: a module without them is not what we want
_NEEDED = ("sgemm", "dgemm", "sgemv", "dgemv", "sger", "dger", "sdot", "ddot")

_lock = threading.Lock()
_module: types.ModuleType | None = None


def fblas() -> types.ModuleType:
    """SciPy's ``_fblas`` extension module (see the module docstring)."""
    module = _module
    if module is None:
        module = _first()
    return module


def _first() -> types.ModuleType:
    global _module
    with _lock:
        if _module is None:
            module = sys.modules.get(MODULE) or load_from_file()
            if module is None:  # the usual import (scipy.linalg and what it imports)
                module = importlib.import_module("scipy.linalg._fblas")
            _module = module
        return _module


def load_from_file() -> types.ModuleType | None:
    """``scipy.linalg._fblas`` loaded from its file (without its packages), or None when
    SciPy is not laid out as expected or the load fails."""
    try:
        spec = importlib.util.find_spec("scipy")  # (a top-level name: finds, imports nothing)
        if spec is None or not spec.submodule_search_locations:
            return None
        folder = os.path.join(spec.submodule_search_locations[0], "linalg")
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            path = os.path.join(folder, "_fblas" + suffix)
            if os.path.isfile(path):
                break
        else:
            return None
        loader = importlib.machinery.ExtensionFileLoader(MODULE, path)
        found = importlib.util.spec_from_file_location(MODULE, path, loader=loader)
        if found is None:
            return None
        module = importlib.util.module_from_spec(found)
        loader.exec_module(module)
    except (ImportError, OSError, ValueError):
        return None
    if not all(hasattr(module, name) for name in _NEEDED):
        return None
    return module
