"""``pytensor.tensor.optimize``'s path: ``minimize``, ``minimize_scalar``, ``root``,
``root_scalar`` and their Ops, whose home is :mod:`arignote.optimize` (inner-graph Ops, in
the layer above compilation)."""

from arignote.optimize import (
    MinimizeOp,
    MinimizeScalarOp,
    RootOp,
    RootScalarOp,
    ScipyWrapperOp,
    minimize,
    minimize_scalar,
    root,
    root_scalar,
)

__all__ = [
    "MinimizeOp",
    "MinimizeScalarOp",
    "RootOp",
    "RootScalarOp",
    "ScipyWrapperOp",
    "minimize",
    "minimize_scalar",
    "root",
    "root_scalar",
]
