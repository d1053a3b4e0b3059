"""DebugMode, from its old path: the code is in :mod:`arignote.compile.debug.debugmode`
(PyTensor 3's ``pytensor.compile.debug.debugmode``); this module keeps imports from
``arignote.compile.debugmode`` working."""

# Besides __all__, the other names this module had (the private ones: what pickles of
# DebugModeErrors and DebugMode functions made before the move refer to)
from arignote.compile.debug import debugmode as _impl
from arignote.compile.debug.debugmode import *  # noqa: F403
from arignote.compile.debug.debugmode import make_checked_vm as make_checked_vm
from arignote.compile.debug.errors import _rebuild_error as _rebuild_error
from arignote.compile.debug.rewrites import _ReplacementTracker as _ReplacementTracker
from arignote.compile.debug.rewrites import graph_signature as graph_signature
from arignote.compile.debug.values import PREALLOCATED_KINDS as PREALLOCATED_KINDS

__all__ = _impl.__all__
