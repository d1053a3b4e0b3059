"""Making sparse Variables: constructors (``csr_matrix``, ``csc_matrix``), constants, and
``as_sparse_variable`` / ``as_sparse_or_tensor_variable``, which every sparse Op's
``make_node`` uses on its inputs.

>>> import numpy as np
>>> import scipy.sparse as sp
>>> from arignote.sparse.conversion import as_sparse_variable, csr_matrix
>>> csr_matrix("x", dtype="float32").type
SparseTensorType(csr, float32, shape=(None, None))
>>> as_sparse_variable(sp.csc_matrix(np.eye(2))).format
'csc'
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as scipy_sparse

from arignote.configdefaults import config
from arignote.graph.basic import Apply, Constant, Variable
from arignote.sparse.type import SparseTensorType, all_dtypes
from arignote.tensor.conversion import as_tensor_variable
from arignote.tensor.type import TensorType

__all__ = [
    "as_sparse",
    "as_sparse_or_tensor_variable",
    "as_sparse_variable",
    "as_symbolic_sparse",
    "constant",
    "csc_dmatrix",
    "csc_fmatrix",
    "csc_matrix",
    "csr_dmatrix",
    "csr_fmatrix",
    "csr_matrix",
    "matrix",
]


def _is_sparse(x: Any) -> bool:
    """Whether a value is a scipy sparse matrix (not a dense array)."""
    return scipy_sparse.issparse(x)


def _is_sparse_variable(x: Any) -> bool:
    """Whether ``x`` is a Variable of a SparseTensorType."""
    return isinstance(getattr(x, "type", None), SparseTensorType)


def _is_dense_variable(x: Any) -> bool:
    """Whether ``x`` is a Variable of a (dense) TensorType."""
    return isinstance(getattr(x, "type", None), TensorType)


def constant(x: Any, name: str | None = None) -> Constant:
    """A sparse Constant holding (a copy of) the CSR/CSC matrix ``x``."""
    if not scipy_sparse.issparse(x):
        raise TypeError(f"sparse.constant needs a scipy.sparse matrix, got {type(x).__name__}")
    if x.format not in ("csr", "csc"):
        raise TypeError(
            f"sparse.constant: the {x.format} format is not supported; convert it with .tocsr() or .tocsc()"
        )
    x = SparseTensorType.format_cls[x.format](x, copy=True)
    return SparseTensorType(x.format, x.dtype).make_constant(x, name=name)


def as_sparse_variable(x: Any, name: str | None = None, ndim: int | None = None, **kwargs: Any) -> Variable:
    """``x`` as a sparse Variable: sparse Variables as they are, scipy CSR/CSC matrices as
    constants; anything else (a dense Variable or array) is a ``TypeError`` that says how
    to make it sparse."""
    if isinstance(x, Apply):
        if len(x.outputs) != 1:
            raise ValueError(f"as_sparse_variable: {x} has several outputs; pick one")
        x = x.outputs[0]
    if isinstance(x, Variable):
        if not isinstance(x.type, SparseTensorType):
            raise TypeError(
                f"Expected a sparse Variable, got {x} of Type {x.type}; make it sparse with "
                "arignote.sparse.csr_from_dense or csc_from_dense"
            )
        return x
    if scipy_sparse.issparse(x):
        return constant(x, name=name)
    raise TypeError(
        f"Cannot make a sparse Variable of {type(x).__name__}; give a scipy.sparse csr/csc matrix or "
        "a sparse Variable"
    )


as_sparse = as_sparse_variable


def as_sparse_or_tensor_variable(x: Any, name: str | None = None) -> Variable:
    """``x`` as a sparse Variable if it is sparse (symbolically or as a scipy matrix),
    else as a tensor Variable."""
    if _is_sparse_variable(x) or scipy_sparse.issparse(x):
        return as_sparse_variable(x, name)
    return as_tensor_variable(x, name)


def matrix(format: str, name: str | None = None, dtype: Any = None) -> Variable:
    """A new sparse input Variable of ``format`` (``"csr"``/``"csc"``), dtype floatX by default."""
    return SparseTensorType(format, config.floatX if dtype is None else dtype)(name)


def csc_matrix(name: str | None = None, dtype: Any = None) -> Variable:
    """A new CSC sparse input Variable (dtype floatX by default)."""
    return matrix("csc", name, dtype)


def csr_matrix(name: str | None = None, dtype: Any = None) -> Variable:
    """A new CSR sparse input Variable (dtype floatX by default)."""
    return matrix("csr", name, dtype)


csc_dmatrix = SparseTensorType("csc", "float64")
csr_dmatrix = SparseTensorType("csr", "float64")
csc_fmatrix = SparseTensorType("csc", "float32")
csr_fmatrix = SparseTensorType("csr", "float32")


def _upcast_dtype(*dtypes: str) -> str:
    """The dtype of an operation on these dtypes, as NumPy promotes them."""
    out = np.result_type(*dtypes).name
    if out not in all_dtypes:  # bool/float16 have no sparse arithmetic here
        raise TypeError(f"sparse: no sparse matrix of dtype {out} (from {dtypes}); cast an operand")
    return out


def as_symbolic_sparse(x: Any, **kwargs: Any) -> Variable:
    """A ``scipy.sparse`` CSR/CSC matrix (or a sparse Variable) as a sparse Variable: what
    ``as_symbolic`` does with sparse values (see :func:`as_sparse_variable`)."""
    return as_sparse_variable(x, **kwargs)
