"""Rewrite rules for tensor graphs, one module per topic; importing this registers them
(arignote.tensor does)."""

from arignote.tensor.rewriting import elemwise, fusion, math, shape, stability, subtensor  # noqa: F401
