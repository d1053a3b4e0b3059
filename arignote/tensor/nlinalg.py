"""``pytensor.tensor.nlinalg``'s path: NumPy's linear algebra (inverses, determinants, the
decompositions with NumPy's signatures, ``trace``, ``norm``, ``matrix_power``...). Each is
defined in its home in :mod:`arignote.tensor.linalg` (``inverse``, ``decompositions``,
``matrix_functions``); this module only re-exports them (``qr`` is NumPy's:
:func:`arignote.tensor.linalg.decompositions.numpy_qr`).

>>> import numpy as np
>>> import arignote.tensor as pt
>>> from arignote.tensor.nlinalg import det
>>> x = pt.dmatrix("x")
>>> float(det(x).eval({x: np.array([[2.0, 0.0], [1.0, 3.0]])}))
6.0
"""

from arignote.tensor.linalg.composed import Lstsq, kron, lstsq, tensorinv, tensorsolve
from arignote.tensor.linalg.decompositions import QR, SVD, Eig, Eigh, eig, eigh, svd
from arignote.tensor.linalg.decompositions import numpy_qr as qr
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
from arignote.tensor.linalg.matrix_functions import matrix_dot, matrix_power, norm, trace

__all__ = [
    "QR",
    "SVD",
    "Det",
    "Eig",
    "Eigh",
    "MatrixInverse",
    "MatrixPinv",
    "SLogDet",
    "det",
    "eig",
    "eigh",
    "inv",
    "matrix_dot",
    "matrix_inverse",
    "matrix_power",
    "norm",
    "pinv",
    "qr",
    "slogdet",
    "svd",
    "trace",
    "Lstsq",
    "kron",
    "lstsq",
    "tensorinv",
    "tensorsolve",
]
