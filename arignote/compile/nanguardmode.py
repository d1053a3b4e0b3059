"""NanGuardMode, from its old path: the code is in :mod:`arignote.compile.debug.nanguardmode`
(PyTensor 3's ``pytensor.compile.debug.nanguardmode``); this module keeps imports from
``arignote.compile.nanguardmode`` working."""

# Besides __all__, the other names this module had
from arignote.compile.debug import nanguardmode as _impl
from arignote.compile.debug.nanguardmode import *  # noqa: F403
from arignote.compile.debug.nanguardmode import BIG_THRESHOLD as BIG_THRESHOLD
from arignote.compile.debug.nanguardmode import find_problems as find_problems

__all__ = _impl.__all__
