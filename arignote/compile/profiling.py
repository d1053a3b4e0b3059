"""ProfileStats, from its old path: the code is in :mod:`arignote.compile.debug.profiling`
(PyTensor 3's ``pytensor.compile.debug.profiling``); this module keeps imports from
``arignote.compile.profiling`` working."""

# Besides __all__, the other names this module had (the private ones: what pickles of
# profiles made before the move refer to)
from arignote.compile.debug import profiling as _impl
from arignote.compile.debug.profiling import *  # noqa: F403
from arignote.compile.debug.profiling import PERFORM as PERFORM
from arignote.compile.debug.profiling import _Bytes as _Bytes
from arignote.compile.debug.profiling import _Graph as _Graph
from arignote.compile.debug.profiling import _Unhashable as _Unhashable

__all__ = _impl.__all__
