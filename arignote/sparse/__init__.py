"""Symbolic sparse matrices (CSR and CSC, values are ``scipy.sparse`` matrices).

Not imported by ``import arignote`` (as in PyTensor): ``from arignote import sparse``.
``sparse.csr_matrix("x")`` / ``sparse.csc_matrix("x")`` make inputs; ``dense_from_sparse``
(``x.toarray()``), ``csr_from_dense``/``csc_from_dense`` convert; ``csm_properties`` and
``CSR``/``CSC`` take a matrix apart and build one; ``add``, ``multiply``, ``neg``,
``transpose``, ``sp_sum``, ``structured_dot``, ``dot``, ``true_dot`` and the structured
elementwise functions (``structured_add``, ``structured_sigmoid``, ...) compute; ``x[...]``
indexes; ``shared(csr_matrix)`` makes a sparse shared variable. Every Op
has a gradient: with respect to a sparse input it is sparse, and structured Ops give
structured gradients (only the stored entries get one).

>>> import numpy as np
>>> import scipy.sparse as sp
>>> import arignote
>>> import arignote.tensor as pt
>>> from arignote import sparse
>>> x = sparse.csr_matrix("x", dtype="float64")
>>> w = pt.dvector("w")
>>> cost = pt.sum(sparse.dot(x, w) ** 2)
>>> f = arignote.function([x, w], arignote.grad(cost, x))
>>> a = sp.csr_matrix(np.array([[0.0, 1.0], [2.0, 0.0]]))
>>> f(a, np.array([1.0, 1.0]))
array([[2., 2.],
       [4., 4.]])
"""

from arignote.sparse import (
    rewriting,  # noqa: F401 - registers the sparse rewrites
    utils,  # noqa: F401 - pytensor.sparse.utils
)
from arignote.sparse.basic import *  # noqa: F403
from arignote.sparse.basic import __all__ as _basic
from arignote.sparse.sharedvar import SparseTensorSharedVariable, shared, sparse_constructor
from arignote.sparse.sparse_grad import AdvancedSubtensor1SparseGrad, sparse_grad
from arignote.sparse.type import SparseTensorType

__all__ = [
    *_basic,
    "AdvancedSubtensor1SparseGrad",
    "sparse_grad",
    "SparseTensorSharedVariable",
    "SparseTensorType",
    "shared",
    "sparse_constructor",
]
