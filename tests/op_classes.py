"""Every Op class arignote defines, for the suite-wide tests that hold a promise about each
one (a gradient rule, a pushforward case, a backend registration)."""

from __future__ import annotations

import importlib
import pkgutil
import sys

import arignote
from arignote.graph.op import Op

#: optional dependencies: a module needing one that is not installed is skipped
OPTIONAL = frozenset({"jax", "jaxlib", "numba", "llvmlite"})


def import_all() -> None:
    """Import every module of arignote, so that every Op class exists (modules of a
    backend whose optional dependency is not installed are left out, and only those)."""

    for info in pkgutil.walk_packages(arignote.__path__, "arignote.", onerror=_skip_optional):
        try:
            importlib.import_module(info.name)
        except ModuleNotFoundError as err:
            if not _optional(err):
                raise


def _optional(err: ModuleNotFoundError) -> bool:
    return (err.name or "").split(".")[0] in OPTIONAL


def _skip_optional(name: str) -> None:
    """walk_packages' error hook: a package that failed to import (its subpackages are not
    walked) is an error unless an optional dependency is what is missing."""
    err = sys.exc_info()[1]
    if not (isinstance(err, ModuleNotFoundError) and _optional(err)):
        raise err  # type: ignore[misc]


def qualname(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def subclasses(base: type) -> set[type]:
    """Every subclass of ``base``, at any depth."""
    seen: set[type] = set()
    todo = [base]
    while todo:
        for sub in todo.pop().__subclasses__():
            if sub not in seen:
                seen.add(sub)
                todo.append(sub)
    return seen


def all_op_classes() -> dict[str, type]:
    """Every Op subclass defined in arignote's modules (all imported), by dotted name."""
    import_all()
    return {qualname(c): c for c in subclasses(Op) if c.__module__.startswith("arignote.")}
