"""``pytensor.tensor.slinalg``'s path: SciPy's linear algebra (Cholesky, the solves,
``eigvalsh``, ``expm``, SciPy's ``qr``). Each is defined in its home in
:mod:`arignote.tensor.linalg` (``decompositions``, ``solve``, ``matrix_functions``); this
module only re-exports them.

>>> import numpy as np
>>> import arignote.tensor as pt
>>> from arignote.tensor.slinalg import cholesky
>>> x = pt.dmatrix("x")
>>> cholesky(x).eval({x: np.array([[4.0, 2.0], [2.0, 3.0]])})
array([[2.        , 0.        ],
       [1.        , 1.41421356]])
"""

from arignote.tensor.linalg.composed import (
    block_diag,
    solve_continuous_lyapunov,
    solve_discrete_lyapunov,
    solve_sylvester,
)
from arignote.tensor.linalg.decompositions import (
    QR,
    Cholesky,
    Eigh,
    Eigvalsh,
    cholesky,
    cholesky_reduce,
    eigvalsh,
    qr,
)
from arignote.tensor.linalg.lu import (
    LU,
    LUFactor,
    PivotToPermutations,
    lu,
    lu_factor,
    lu_solve,
    pivot_to_permutation,
)
from arignote.tensor.linalg.matrix_functions import Expm, expm
from arignote.tensor.linalg.riccati import solve_discrete_are
from arignote.tensor.linalg.schur import QZ, Schur, ordqz, qz, schur
from arignote.tensor.linalg.solve import (
    CholeskySolve,
    Solve,
    SolveBase,
    SolveTriangular,
    cho_solve,
    solve,
    solve_triangular,
)

__all__ = [
    "QR",
    "Cholesky",
    "CholeskySolve",
    "Eigh",
    "Eigvalsh",
    "Expm",
    "Solve",
    "SolveBase",
    "SolveTriangular",
    "cho_solve",
    "cholesky",
    "cholesky_reduce",
    "eigvalsh",
    "expm",
    "qr",
    "solve",
    "solve_triangular",
    "block_diag",
    "solve_continuous_lyapunov",
    "solve_discrete_lyapunov",
    "solve_sylvester",
    "LU",
    "LUFactor",
    "PivotToPermutations",
    "lu",
    "lu_factor",
    "lu_solve",
    "pivot_to_permutation",
    "QZ",
    "Schur",
    "ordqz",
    "qz",
    "schur",
    "solve_discrete_are",
]
