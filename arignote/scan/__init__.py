"""Loops in symbolic graphs: :func:`scan` and its views (``map``, ``reduce``, ``foldl``,
``foldr``), :class:`~arignote.scan.utils.until` for early stops and
:func:`~arignote.scan.checkpoints.scan_checkpoints` (gradients that recompute segments
to save memory). The :class:`~arignote.scan.op.Scan` Op runs them."""

import arignote.scan.rewriting  # noqa: F401  (registers the scan rewrite rules)
from arignote.scan.basic import scan
from arignote.scan.checkpoints import scan_checkpoints
from arignote.scan.op import Scan
from arignote.scan.utils import until
from arignote.scan.views import foldl, foldr, map, reduce

__all__ = ["Scan", "foldl", "foldr", "map", "reduce", "scan", "scan_checkpoints", "until"]
