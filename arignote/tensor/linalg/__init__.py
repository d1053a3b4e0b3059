"""Linear algebra, as ``pytensor.tensor.linalg``: ``import arignote.tensor as pt`` then
``pt.linalg.solve(a, b)``, ``pt.linalg.inv(x)``, ... This package's ``__init__`` only
re-exports; the homes are ``operands`` (LAPACK dtypes, matrices and stacks),
``decompositions``, ``solve``, ``inverse`` and ``matrix_functions``.

Every function takes a matrix or a stack of matrices (``(..., m, n)``, batch dimensions
broadcast as in NumPy) and has exact gradients (pullbacks) unless noted:

- factorisations: :func:`cholesky`, :func:`qr` (SciPy's, ``mode="full"`` by default),
  :func:`svd`, :func:`eigh`, :func:`eigvalsh`, :func:`eig` (complex, no gradient)
- solvers: :func:`solve` (``assume_a`` ``'gen'``, ``'sym'``, ``'pos'``, ``'diagonal'``,
  ``'tridiagonal'``, ``'banded'``, triangular), :func:`solve_triangular`,
  :func:`cho_solve`
- inverses and summaries: :func:`inv` (:func:`matrix_inverse`), :func:`pinv`,
  :func:`det`, :func:`slogdet`, :func:`trace`, :func:`norm`
- Schur forms (SciPy's, no gradient, as in PyTensor): :func:`schur`, :func:`qz`,
  :func:`ordqz`; the discrete Riccati equation :func:`solve_discrete_are`; the tridiagonal
  LU factorisation and solve :func:`tridiagonal_lu_factor`, :func:`tridiagonal_lu_solve`
- products: :func:`expm`, :func:`matrix_power`, :func:`matrix_dot`

The Ops behind them (``Cholesky``, ``Solve``, ``SVD``, ...) act on single matrices; the
functions wrap them in ``Blockwise`` for stacks.

>>> import numpy as np
>>> import arignote.tensor as pt
>>> a = pt.dmatrix("a")
>>> b = pt.dvector("b")
>>> pt.linalg.solve(a, b).eval({a: np.array([[2.0, 0.0], [0.0, 4.0]]), b: np.array([1.0, 1.0])})
array([0.5 , 0.25])
"""

from arignote.tensor.linalg.composed import (
    Lstsq,
    block_diag,
    kron,
    lstsq,
    solve_continuous_lyapunov,
    solve_discrete_lyapunov,
    solve_sylvester,
    tensorinv,
    tensorsolve,
)
from arignote.tensor.linalg.decompositions import (
    QR,
    SVD,
    Cholesky,
    Eig,
    Eigh,
    Eigvalsh,
    cholesky,
    eig,
    eigh,
    eigvalsh,
    qr,
    svd,
)
from arignote.tensor.linalg.inverse import (
    Det,
    MatrixInverse,
    MatrixPinv,
    SLogDet,
    det,
    inv,
    matrix_inverse,
    pinv,
    slogdet,
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
from arignote.tensor.linalg.matrix_functions import Expm, expm, matrix_dot, matrix_power, norm, trace
from arignote.tensor.linalg.riccati import SolveDiscreteARE, solve_discrete_are
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
from arignote.tensor.linalg.tridiagonal import (
    LUFactorTridiagonal,
    SolveLUFactorTridiagonal,
    tridiagonal_lu_factor,
    tridiagonal_lu_solve,
)

__all__ = [
    "QR",
    "SVD",
    "Cholesky",
    "CholeskySolve",
    "Det",
    "Eig",
    "Eigh",
    "Eigvalsh",
    "Expm",
    "MatrixInverse",
    "MatrixPinv",
    "SLogDet",
    "Solve",
    "SolveBase",
    "SolveTriangular",
    "cho_solve",
    "cholesky",
    "det",
    "eig",
    "eigh",
    "eigvalsh",
    "expm",
    "inv",
    "matrix_dot",
    "matrix_inverse",
    "matrix_power",
    "norm",
    "pinv",
    "qr",
    "slogdet",
    "solve",
    "solve_triangular",
    "svd",
    "trace",
    "Lstsq",
    "block_diag",
    "kron",
    "lstsq",
    "solve_continuous_lyapunov",
    "solve_discrete_lyapunov",
    "solve_sylvester",
    "tensorinv",
    "tensorsolve",
    "LU",
    "LUFactor",
    "PivotToPermutations",
    "lu",
    "lu_factor",
    "lu_solve",
    "pivot_to_permutation",
    "QZ",
    "Schur",
    "SolveDiscreteARE",
    "LUFactorTridiagonal",
    "SolveLUFactorTridiagonal",
    "ordqz",
    "qz",
    "schur",
    "solve_discrete_are",
    "tridiagonal_lu_factor",
    "tridiagonal_lu_solve",
]
