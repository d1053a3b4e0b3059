"""Every Op class arignote defines, for the suite-wide tests that hold a promise about each
one (a gradient rule, a pushforward case, a backend registration)."""

from __future__ import annotations

import importlib
import pkgutil

import arignote
from arignote.graph.op import Op


def import_all() -> None:
    """Import every module of arignote, so that every Op class exists."""
    for info in pkgutil.walk_packages(arignote.__path__, "arignote."):
        importlib.import_module(info.name)


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
