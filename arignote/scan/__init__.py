"""Loops in symbolic graphs: :func:`scan` and its views (``map``, ``reduce``, ``foldl``,
``foldr``), :class:`~arignote.scan.utils.until` for early stops and
:func:`~arignote.scan.checkpoints.scan_checkpoints` (gradients that recompute segments
to save memory). The :class:`~arignote.scan.op.Scan` Op runs them."""

from arignote.scan import basic, checkpoints, grad, op, rewriting, utils, vectorize, views
from arignote.scan.basic import scan
from arignote.scan.checkpoints import scan_checkpoints
from arignote.scan.op import Scan
from arignote.scan.utils import until
from arignote.scan.views import foldl, foldr, map, reduce

# ``arignote.scan`` is this function at the top level (as ``pytensor.scan`` is); its
# submodules hang on it too, so that ``arignote.scan.basic.scan`` and
# ``import arignote.scan.op as m`` work through it
for _module in (basic, checkpoints, grad, op, rewriting, utils, vectorize, views):
    setattr(scan, _module.__name__.rsplit(".", 1)[1], _module)
del _module

__all__ = ["Scan", "foldl", "foldr", "map", "reduce", "scan", "scan_checkpoints", "until"]
