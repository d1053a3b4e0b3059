"""Sparse shared variables: ``arignote.shared(csr_matrix)`` (once ``arignote.sparse`` is
imported) or ``sparse.shared(value)`` holds a CSR/CSC matrix that compiled functions read
and may update.

>>> import numpy as np
>>> import scipy.sparse as sp
>>> import arignote
>>> from arignote import sparse
>>> w = sparse.shared(sp.csr_matrix(np.eye(2)), name="w")
>>> step = arignote.function([], [], updates={w: w * 2.0})
>>> _ = step()
>>> w.get_value().toarray()
array([[2., 0.],
       [0., 2.]])
"""

from __future__ import annotations

from typing import Any

import scipy.sparse as scipy_sparse

from arignote.graph.shared import SharedVariable, shared_constructor
from arignote.sparse.type import SparseTensorType
from arignote.sparse.variable import _sparse_py_operators

__all__ = ["SparseTensorSharedVariable", "shared", "sparse_constructor"]


class SparseTensorSharedVariable(_sparse_py_operators, SharedVariable):
    """A shared variable holding a CSR/CSC matrix; usable like any sparse Variable."""


@shared_constructor
def sparse_constructor(
    value: Any,
    name: str | None = None,
    strict: bool = False,
    allow_downcast: bool | None = None,
    format: str | None = None,
    shape: tuple | None = None,
    **kwargs: Any,
) -> SparseTensorSharedVariable:
    """A sparse shared variable of ``value``'s format (or ``format``: the value is converted)
    and dtype; its static shape is unknown unless ``shape=`` is given."""
    if kwargs:
        raise TypeError(f"unexpected arguments {sorted(kwargs)}")
    if not scipy_sparse.issparse(value):
        raise TypeError(f"sparse shared variables hold scipy.sparse matrices, not {type(value).__name__}")
    format = value.format if format is None else format
    if format not in ("csr", "csc"):
        raise TypeError(
            f"sparse shared variables hold csr or csc matrices, not {format}; convert the value first"
        )
    value = SparseTensorType.format_cls[format](value)
    stype = SparseTensorType(format, value.dtype, (None, None) if shape is None else shape)
    return SparseTensorSharedVariable(
        name=name, type=stype, value=value, strict=strict, allow_downcast=allow_downcast
    )


def shared(
    value: Any,
    name: str | None = None,
    strict: bool = False,
    allow_downcast: bool | None = None,
    **kwargs: Any,
) -> SparseTensorSharedVariable:
    """A sparse shared variable holding (a copy of, unless ``borrow=True``) ``value``."""
    if not kwargs.pop("borrow", False):
        value = value.copy() if scipy_sparse.issparse(value) else value
    var = sparse_constructor(value, name=name, strict=strict, allow_downcast=allow_downcast, **kwargs)
    var.tag.is_shared = True
    return var
