"""Rewrite rules for tensor graphs, one module per topic; importing this registers them
(arignote.tensor does)."""

from arignote.tensor.rewriting import (  # noqa: F401
    blas,
    elemwise,
    fusion,
    inplace,
    linalg,
    math,
    products,
    reductions,
    shape,
    stability,
    subtensor,
)
