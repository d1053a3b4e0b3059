"""Compilation: ``function``, shared variables, modes, profiling and debugging modes."""

from typing import Any

from arignote.compile.executor import Function
from arignote.compile.function import function
from arignote.compile.io import In, Out, SymbolicInput, SymbolicOutput
from arignote.compile.maker import FunctionMaker, UnusedInputError
from arignote.compile.mode import FAST_COMPILE, FAST_RUN, Mode, get_default_mode, get_mode, register_mode
from arignote.compile.rebuild import rebuild_collect_shared
from arignote.compile.sharedvalue import SharedVariable, shared, shared_constructor

__all__ = [
    "FAST_COMPILE",
    "FAST_RUN",
    "Function",
    "FunctionMaker",
    "In",
    "Mode",
    "OpFromGraph",
    "Out",
    "SharedVariable",
    "SymbolicInput",
    "SymbolicOutput",
    "UnusedInputError",
    "function",
    "get_default_mode",
    "get_mode",
    "rebuild_collect_shared",
    "register_mode",
    "shared",
    "shared_constructor",
]


def __getattr__(name: str) -> Any:
    # OpFromGraph's module registers tensor rules (shape, batching), so it is imported once
    # arignote.tensor is complete (arignote/__init__ does), not while tensor imports this package
    if name == "OpFromGraph":
        from arignote.compile.builders import OpFromGraph

        return OpFromGraph
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
