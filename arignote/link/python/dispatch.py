"""The Python backend's dispatcher: which thunk runs a node, chosen by the type of its Op.

:func:`python_thunk` is a ``functools.singledispatch`` keyed by Op type, with the seeds'
``make_thunk`` signature (the Op first). Its default is the Op's own
``make_thunk``, so every Op runs (through ``perform``, or through a ``make_thunk`` of its
own, as :class:`~arignote.ifelse.IfElse`'s lazy thunk); an Op family with a faster Python
thunk registers it here, from the backend's side, with :func:`register_python_thunk`.

The rest of the package asks this module what a node runs on (:func:`impl_name`), so that
nothing falls back to ``perform`` silently: the profile flags those nodes and ``dprint`` of
a compiled function marks them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from arignote.graph.basic import Apply, Variable
from arignote.graph.op import Op, has_own_thunk

__all__ = [
    "accepts_plain",
    "OWN_THUNK",
    "PERFORM",
    "PYTHON",
    "has_fast_impl",
    "impl_name",
    "python_thunk",
    "register_python_thunk",
    "registered_ops",
]

#: :func:`impl_name` of a node run by a thunk registered with the Python backend
PYTHON = "python"
#: :func:`impl_name` of a node run by the Op's own ``make_thunk`` (an override of it)
OWN_THUNK = "make_thunk"
#: :func:`impl_name` of a node run by the generic thunk over ``Op.perform`` (the slow path)
PERFORM = "perform"


@functools.singledispatch
def python_thunk(
    op: Op,
    node: Apply,
    storage_map: dict,
    compute_map: dict | None,
    no_recycling: Sequence[Variable],
    impl: str | None = None,
) -> Callable:
    """A zero-argument thunk computing ``node`` (an Apply of ``op``) in the Python backend.

    The arguments are those of ``Op.make_thunk(node, storage_map, compute_map,
    no_recycling, impl)``, and so is the contract of the thunk: it reads its inputs'
    storage cells, sets its outputs' cells and (given a ``compute_map``) their compute
    flags. The default is ``op.make_thunk(...)``: the generic thunk over ``perform``, or
    the Op's own override of ``make_thunk``, which every registration honours too.
    Registered thunks take the decisions ``perform`` takes on each call once, here, at link
    time.
    """
    return op.make_thunk(node, storage_map, compute_map, no_recycling, impl)


def accepts_plain(base: type) -> Callable[[Op], bool]:
    """The usual ``accepts`` of a registration for ``base``: an instance whose ``perform``
    is ``base``'s (a subclass may redefine it), that takes no params and keeps
    ``Op.make_thunk`` (an override of it is the Op's own thunk, which wins)."""

    def accepts(op: Op) -> bool:
        cls = type(op)
        return cls.perform is base.perform and not has_own_thunk(op) and not hasattr(op, "get_params")

    return accepts


# registered Op type -> which of its instances the registration runs without ``perform``
_accepts: dict[type, Callable[[Op], bool]] = {}


def register_python_thunk(op_type: type, accepts: Callable[[Op], bool] | None = None) -> Callable:
    """Decorator: ``fn(op, node, storage_map, compute_map, no_recycling, impl)`` makes the
    thunks of the nodes whose Op is an instance of ``op_type`` (subclasses included).

    ``accepts(op)`` says which of those Ops ``fn`` gives a thunk of its own (default: all);
    the others, and nodes asked for another implementation or with an output to clear
    before each run (``no_recycling``), get ``op.make_thunk(...)`` without ``fn`` being
    called (a subclass that redefines ``perform`` or ``make_thunk``, say).
    :func:`has_fast_impl` reports it.
    """

    def decorator(fn: Callable) -> Callable:
        if accepts is None:
            python_thunk.register(op_type)(fn)
            return fn

        @functools.wraps(fn)
        def guarded(
            op: Op,
            node: Apply,
            storage_map: dict,
            compute_map: dict | None,
            no_recycling: Sequence[Variable],
            impl: str | None = None,
        ) -> Callable:
            # the registration's thunk only where it computes what perform does: an Op it
            # accepts, the Python implementation asked for, and no output to be cleared
            # before each run (the thunks keep buffers between runs)
            if (
                impl not in (None, "py")
                or not accepts(op)
                or (no_recycling and any(v in no_recycling for v in node.outputs))
            ):
                return op.make_thunk(node, storage_map, compute_map, no_recycling, impl)
            return fn(op, node, storage_map, compute_map, no_recycling, impl)

        python_thunk.register(op_type)(guarded)
        _accepts[op_type] = accepts
        return fn

    return decorator


def _registered_base(op_type: type) -> type | None:
    """The class of ``op_type``'s MRO whose registration :func:`python_thunk` uses."""
    registry = python_thunk.registry
    for cls in op_type.__mro__:
        if cls in registry:
            return None if cls is object else cls
    return None


def has_fast_impl(op: Any) -> bool:
    """Whether the Python backend runs nodes of ``op`` through a thunk registered for its
    type (a registration's ``accepts`` decides for the Op itself), not the generic
    ``perform`` thunk nor the Op's own ``make_thunk``."""
    if has_own_thunk(op):
        return False  # the Op's own thunk wins over any registration
    base = _registered_base(type(op))
    if base is None:
        return False
    accepts = _accepts.get(base)
    return accepts is None or bool(accepts(op))


def impl_name(op: Any) -> str:
    """What runs nodes of ``op`` in the Python backend: :data:`PYTHON` (a registered
    thunk), :data:`OWN_THUNK` (the Op overrides ``make_thunk``) or :data:`PERFORM` (the
    generic thunk over ``perform``: the slow path)."""
    if has_fast_impl(op):
        return PYTHON
    if has_own_thunk(op):
        return OWN_THUNK
    return PERFORM


def registered_ops() -> tuple[type, ...]:
    """The Op classes with a thunk registered with the Python backend, by name."""
    return tuple(
        sorted((cls for cls in python_thunk.registry if cls is not object), key=lambda c: c.__qualname__)
    )
