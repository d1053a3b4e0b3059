"""Matrix assumptions, at ``pytensor.assumptions``'s path: declare that a matrix is diagonal,
triangular, symmetric, positive definite, orthogonal, a selection or a permutation
(:func:`assume`), or let the graph show it (``pt.eye``, ``pt.diag(v)``, ``cholesky``,
``x @ x.T``, ...), and the linear algebra rewrites use it: ``solve`` with a diagonal matrix
becomes a division, with a triangular one a triangular solve, with a positive definite one a
Cholesky-based solve; ``inv``, ``det`` and ``cholesky`` of a diagonal matrix work on its
diagonal; ``inv`` of an orthogonal matrix is its transpose.

Homes: :mod:`~arignote.assumptions.core` (keys, facts, the feature),
:mod:`~arignote.assumptions.specify` (:func:`assume`), :mod:`~arignote.assumptions.rules`
(what Ops say), and the rewrites in :mod:`arignote.tensor.rewriting.linalg`.

>>> import numpy as np
>>> import arignote, arignote.tensor as pt
>>> from arignote.assumptions import assume
>>> a = pt.dmatrix("a")
>>> f = arignote.function([a], pt.linalg.det(assume(a, lower_triangular=True)))
>>> [str(n.op) for n in f.maker.fgraph.toposort()]
['ExtractDiag{offset=0, axis1=0, axis2=1, view=True}', 'Prod{axis=0}']
>>> float(f(np.array([[2.0, 0.0], [5.0, 3.0]])))
6.0
"""

from arignote.assumptions import rules  # noqa: F401  (registers what Ops say)
from arignote.assumptions.core import (
    ALL_KEYS,
    DIAGONAL,
    IMPLIES,
    LOWER_TRIANGULAR,
    ORTHOGONAL,
    PERMUTATION,
    POSITIVE_DEFINITE,
    SELECTION,
    SYMMETRIC,
    UPPER_TRIANGULAR,
    AssumptionFeature,
    AssumptionKey,
    ConflictingAssumptionsError,
    FactState,
    assumption_tags,
    check_assumption,
    register_assumption,
    register_constant_inference,
    register_implies,
    summarize_assumptions,
)
from arignote.assumptions.specify import SpecifyAssumptions, assume, specify_assumption_rule

__all__ = [
    "ALL_KEYS",
    "DIAGONAL",
    "IMPLIES",
    "LOWER_TRIANGULAR",
    "ORTHOGONAL",
    "PERMUTATION",
    "POSITIVE_DEFINITE",
    "SELECTION",
    "SYMMETRIC",
    "UPPER_TRIANGULAR",
    "AssumptionFeature",
    "AssumptionKey",
    "ConflictingAssumptionsError",
    "FactState",
    "SpecifyAssumptions",
    "assume",
    "assumption_tags",
    "check_assumption",
    "register_assumption",
    "register_constant_inference",
    "register_implies",
    "specify_assumption_rule",
    "summarize_assumptions",
]
