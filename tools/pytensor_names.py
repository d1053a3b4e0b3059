"""Record PyTensor's public names per module into ``tests/data/pytensor_public_names.json``.

Run with an interpreter that has PyTensor 3 installed (the tests never import PyTensor)::

    /path/to/pytensor-venv/bin/python tools/pytensor_names.py

A module's public names are its ``__all__`` (or what a module-level ``__dir__`` lists) when it
has one, else every name of ``dir(module)``
that does not start with an underscore, less what the module merely imported: modules
other than its own submodules (``np``, ``warnings``, ``pytensor.scalar.printing``), classes and
functions defined outside it and its submodules (``Sequence``, ``reduce``, ``printing.Apply``),
``typing`` helpers (``Any``, ``TYPE_CHECKING``) and the global ``config``. Values that are not
classes or functions (``pi``, ``newaxis``, ``exp``, the ``functools.partial`` constructors such
as ``dmatrices``, the dtype tuples) are kept: a user reads them as the module's. Names that PyTensor
itself lists but cannot import (a broken deprecation alias) are left out. ``tests/test_api_names.py``
checks that arignote's matching module has each name (a submodule, listed apart, by importing it:
whether a package has a submodule as an attribute depends on what was imported before).
"""

from __future__ import annotations

import ast
import collections.abc
import importlib
import inspect
import json
import sys
import types
import typing
import warnings
from pathlib import Path

MODULES = [
    "pytensor",
    "pytensor.scalar",
    "pytensor.tensor",
    "pytensor.tensor.math",
    "pytensor.tensor.special",
    "pytensor.tensor.extra_ops",
    "pytensor.tensor.linalg",
    "pytensor.tensor.nlinalg",
    "pytensor.tensor.slinalg",
    "pytensor.tensor.random",
    "pytensor.tensor.random.basic",
    "pytensor.graph.basic",
    "pytensor.graph.traversal",
    "pytensor.graph.fg",
    "pytensor.compile",
    "pytensor.gradient",
    "pytensor.printing",
    "pytensor.sparse",
    "pytensor.compile.mode",
    "pytensor.compile.maker",
    "pytensor.compile.executor",
    "pytensor.compile.rebuild",
    "pytensor.compile.aliasing",
    "pytensor.compile.builders",
    "pytensor.compile.ops",
    "pytensor.compile.sharedvalue",
    "pytensor.compile.io",
    "pytensor.graph",
    "pytensor.graph.op",
    "pytensor.graph.type",
    "pytensor.graph.replace",
    "pytensor.graph.features",
    "pytensor.graph.utils",
    "pytensor.graph.rewriting.basic",
    "pytensor.graph.rewriting.db",
    "pytensor.graph.rewriting.utils",
    "pytensor.scan",
    "pytensor.scan.basic",
    "pytensor.ifelse",
    "pytensor.raise_op",
    "pytensor.tensor.basic",
    "pytensor.tensor.elemwise",
    "pytensor.tensor.subtensor",
    "pytensor.tensor.shape",
    "pytensor.tensor.variable",
    "pytensor.tensor.type",
    "pytensor.tensor.blockwise",
    "pytensor.tensor.sort",
    "pytensor.tensor.random.op",
    "pytensor.tensor.random.type",
    "pytensor.tensor.random.utils",
    "pytensor.tensor.random.variable",
    "pytensor.tensor.rewriting.basic",
    "pytensor.tensor.signal",
    "pytensor.tensor.einsum",
    "pytensor.tensor.reshape",
    "pytensor.tensor.utils",
    "pytensor.tensor.optimize",
    "pytensor.link.basic",
    "pytensor.link.jax",
    "pytensor.link.jax.dispatch",
    "pytensor.link.jax.ops",
    "pytensor.link.numba",
    "pytensor.assumptions",
    "pytensor.breakpoint",
    "pytensor.npy_2_compat",
    "pytensor.utils",
    "pytensor.compile.debug.debugmode",
    "pytensor.compile.debug.dump",
    "pytensor.compile.debug.monitormode",
    "pytensor.compile.debug.nanguardmode",
    "pytensor.compile.debug.profiling",
    "pytensor.graph.destroyhandler",
    "pytensor.graph.null_type",
    "pytensor.scan.op",
    "pytensor.scan.utils",
    "pytensor.scan.views",
    "pytensor.scan.checkpoints",
    "pytensor.tensor.exceptions",
    "pytensor.tensor.fft",
    "pytensor.tensor.fourier",
    "pytensor.tensor.functional",
    "pytensor.tensor.interpolate",
    "pytensor.tensor.pad",
    "pytensor.tensor.sharedvar",
    "pytensor.tensor.symbolic",
    "pytensor.tensor.type_other",
    "pytensor.tensor.xlogx",
    "pytensor.tensor.blas",
    "pytensor.tensor.random.rewriting",
    "pytensor.sparse.basic",
    "pytensor.sparse.math",
    "pytensor.sparse.type",
    "pytensor.sparse.variable",
    "pytensor.sparse.sharedvar",
    "pytensor.misc.ordered_set",
    "pytensor.misc.frozendict",
    "pytensor.misc.may_share_memory",
    "pytensor.misc.pkl_utils",
]

_TYPING_NAMES = set(dir(typing)) | set(dir(collections.abc))


def _imported_names(module: types.ModuleType) -> set[str]:
    """The names that a plain module's source binds by an ``import`` statement.

    A package's ``__init__`` re-exports what it imports on purpose, so this is empty for one;
    a module (``tensor/sort.py``) that imports ``eq`` or ``switch`` for its own use does not
    offer them.
    """
    if hasattr(module, "__path__"):
        return set()
    try:
        tree = ast.parse(inspect.getsource(module))
    except (OSError, TypeError):
        return set()
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom | ast.Import):
            for alias in node.names:
                names.add(alias.asname or alias.name.split(".")[0])
    return names


def _is_own(obj: object, module_name: str, name: str, imported: set[str]) -> bool:
    """Whether ``obj``, found in ``module_name`` (which has no ``__all__``), is that module's.

    Its own are: its submodules, the classes and functions defined in it or in its submodules,
    and values (instances and type aliases) other than the global ``config``, type variables
    (``TypeVar("T")``) and what the module's source imports. What it imported from elsewhere in PyTensor
    (``pytensor.printing.Apply``, ``pytensor.scalar.config``, ``pytensor.tensor.sort.eq``) is not.
    """
    import pytensor

    home = module_name if module_name == "pytensor" else module_name + "."
    if isinstance(obj, types.ModuleType):
        return obj.__name__.startswith(home)
    if inspect.isclass(obj) or inspect.isroutine(obj):
        defined_in = str(getattr(obj, "__module__", "") or "")
        return defined_in == module_name or defined_in.startswith(home)
    if isinstance(obj, typing.TypeVar) or name in imported:
        return False
    return obj is not pytensor.config


def public_names(module_name: str) -> tuple[list[str], list[str]]:
    """The module's public names, and those of them that are its submodules."""
    module = importlib.import_module(module_name)
    names = getattr(module, "__all__", None)
    # a module-level __dir__ (nlinalg, slinalg: names moved to linalg, still importable) lists
    # exactly what the module offers, like __all__
    if names is None and "__dir__" in vars(module):
        names = [n for n in module.__dir__() if not n.startswith("_")]
    has_all = names is not None
    if not has_all:
        names = [n for n in dir(module) if not n.startswith("_") and n not in _TYPING_NAMES]
    imported = set() if has_all else _imported_names(module)
    kept, submodules = [], []
    for name in names:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                obj = getattr(module, name)
        except Exception:  # PyTensor lists it but cannot import it
            continue
        if has_all or _is_own(obj, module_name, name, imported):
            kept.append(name)
            if isinstance(obj, types.ModuleType):
                submodules.append(name)
    return sorted(set(kept)), sorted(set(submodules))


def main() -> None:
    import pytensor

    out = {"pytensor_version": pytensor.__version__, "modules": {}, "submodules": {}}
    for module_name in MODULES:
        out["modules"][module_name], submodules = public_names(module_name)
        if submodules:
            out["submodules"][module_name] = submodules
    path = Path(__file__).resolve().parent.parent / "tests" / "data" / "pytensor_public_names.json"
    path.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    total = sum(len(v) for v in out["modules"].values())
    print(f"wrote {path}: {total} names in {len(MODULES)} modules", file=sys.stderr)


if __name__ == "__main__":
    main()
