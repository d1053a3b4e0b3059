"""Rewrite rules for tensor graphs, one module per topic; importing this registers them
(arignote.tensor does)."""

from arignote.tensor.rewriting import blas, elemwise, fusion, inplace, math, shape, stability, subtensor  # noqa: F401
