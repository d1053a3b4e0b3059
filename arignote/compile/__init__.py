"""Compilation: ``function``, shared variables, modes, profiling and debugging modes."""

from arignote.compile import ops  # noqa: F401  (pytensor.compile.ops, as a submodule attribute)
from arignote.compile.aliasing import Supervisor, add_supervisor_to_fgraph
from arignote.compile.builders import OpFromGraph
from arignote.compile.debug.dump import PrintCurrentFunctionGraph, function_dump
from arignote.compile.debug.monitormode import MonitorMode
from arignote.compile.executor import Function
from arignote.compile.function import function
from arignote.compile.io import In, Out, SymbolicInput, SymbolicOutput
from arignote.compile.maker import FunctionMaker, UnusedInputError
from arignote.compile.mode import (
    FAST_COMPILE,
    FAST_RUN,
    JAX,
    NUMBA,
    NUMBA_KERNELS,
    OPT_FAST_COMPILE,
    OPT_FAST_RUN,
    OPT_MERGE,
    OPT_NONE,
    Mode,
    get_default_mode,
    get_mode,
    optdb,
    predefined_linkers,
    predefined_modes,
    predefined_optimizers,
    register_linker,
    register_mode,
    register_optimizer,
)
from arignote.compile.ops import (
    DeepCopyOp,
    FromFunctionOp,
    ViewOp,
    as_op,
    deep_copy_op,
    view_op,
    wrap_py,
)
from arignote.compile.profiling import ProfileStats
from arignote.compile.rebuild import rebuild_collect_shared
from arignote.graph.shared import SharedVariable, shared, shared_constructor

__all__ = [
    "Supervisor",
    "add_supervisor_to_fgraph",
    "PrintCurrentFunctionGraph",
    "function_dump",
    "DeepCopyOp",
    "FromFunctionOp",
    "OpFromGraph",
    "ViewOp",
    "as_op",
    "deep_copy_op",
    "view_op",
    "wrap_py",
    "FAST_COMPILE",
    "FAST_RUN",
    "JAX",
    "NUMBA",
    "NUMBA_KERNELS",
    "Function",
    "FunctionMaker",
    "OPT_FAST_COMPILE",
    "OPT_FAST_RUN",
    "OPT_MERGE",
    "OPT_NONE",
    "ProfileStats",
    "optdb",
    "predefined_linkers",
    "predefined_modes",
    "predefined_optimizers",
    "register_linker",
    "register_optimizer",
    "MonitorMode",
    "In",
    "Mode",
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
