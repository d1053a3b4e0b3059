"""SciPy's modules, imported when first used rather than by ``import arignote``.

``scipy.special`` alone costs ~0.2 s to import (``scipy.linalg`` and ``scipy.sparse`` about as
much, most of it shared SciPy machinery), more than the rest of ``import arignote``; most
programs never run an Op that needs them. Two tools defer the import to the first use:

* :func:`lazy_module`: a stand-in for a module, ``sp = lazy_module("scipy.special")``, whose
  first attribute access (``sp.psi(z)``) imports the module and fills the stand-in with its
  names: later accesses cost what they cost on the module itself.
* :class:`LazyAttribute`: a class attribute (``ufunc = LazyAttribute("scipy.special", "erf")``)
  that imports the module the first time it is read, then replaces itself on its class with the
  value: ``self.ufunc`` in ``perform`` is a plain class-attribute lookup from then on.

A name the installed SciPy does not have raises, at first use: the module's ``AttributeError``
from :func:`lazy_module`, an :class:`ImportError` naming the function and the SciPy version
from :class:`LazyAttribute` (an ``AttributeError`` there would read as "no such class
attribute" to ``getattr(op, "ufunc", None)``).

>>> sp = lazy_module("scipy.special")
>>> float(sp.gammaln(5.0))  # log(4!)
3.1780538303479458
>>> class Op:
...     ufunc = LazyAttribute("scipy.special", "erf")
>>> float(Op().ufunc(0.0)), type(Op.__dict__["ufunc"]).__name__
(0.0, 'ufunc')
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any

__all__ = ["LazyAttribute", "lazy_module", "loaded_module"]


def _resolve(module_name: str, name: str) -> Any:
    module = importlib.import_module(module_name)
    try:
        return getattr(module, name)
    except AttributeError:
        top = sys.modules.get(module_name.partition(".")[0])
        version = getattr(top, "__version__", "unknown version")
        raise ImportError(
            f"{module_name}.{name} is needed here, but the installed {module_name} "
            f"({module_name.partition('.')[0]} {version}) has no {name!r}: upgrade it"
        ) from None


def _check_not_own(module_name: str) -> None:
    # the layering test can see only plain imports: arignote's own modules are imported so
    if module_name.partition(".")[0] == __name__.partition(".")[0]:
        raise ValueError(
            f"{module_name!r}: arignote's own modules are imported at the top of a file, "
            "not through arignote.lazy (which defers third-party imports)"
        )


def loaded_module(name: str) -> types.ModuleType | None:
    """The module ``name`` if something has imported it already, else None (a value can only
    be, e.g., a ``scipy.sparse`` matrix once ``scipy.sparse`` has been imported)."""
    return sys.modules.get(name)


def lazy_module(name: str) -> types.ModuleType:
    """A stand-in for module ``name`` that imports it on first attribute access (see the
    module docstring).

    The stand-in is a plain module object with a ``__getattr__`` (PEP 562). The first access
    imports the module, copies its namespace into the stand-in and removes that hook: from then
    on a name is read as from the module itself, at the same speed (the interpreter does not
    specialise attribute reads on a module that has a ``__getattr__``), and a name the module
    lacks raises its usual ``AttributeError``.
    """
    _check_not_own(name)
    stand_in = types.ModuleType(name, f"{name}, imported on first use (arignote.lazy)")

    def __getattr__(attr: str) -> Any:
        module = importlib.import_module(name)
        namespace = vars(stand_in)
        namespace.update(vars(module))  # first, so that another thread never sees it half-done
        namespace.pop("__getattr__", None)  # (ours, or the module's own, copied over it)
        return getattr(module, attr)

    stand_in.__getattr__ = __getattr__  # type: ignore[attr-defined]
    return stand_in


class LazyAttribute:
    """A class attribute whose value is ``module_name.name``, imported when first read (see
    the module docstring)."""

    def __init__(self, module_name: str, name: str) -> None:
        _check_not_own(module_name)
        self.module_name = module_name
        self.name = name
        self.owner: type | None = None
        self.attr = name

    def __set_name__(self, owner: type, attr: str) -> None:
        self.owner = owner
        self.attr = attr

    def __get__(self, obj: Any, objtype: type | None = None) -> Any:
        value = _resolve(self.module_name, self.name)
        if self.owner is not None:
            # a plain function stored on a class would become a method: keep it unbound
            stored = staticmethod(value) if isinstance(value, types.FunctionType) else value
            setattr(self.owner, self.attr, stored)
        return value

    def __repr__(self) -> str:
        return f"<{self.module_name}.{self.name}, imported on first use>"
