"""Hashing sparse matrices by value, at ``pytensor.sparse.utils``'s path."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse

from arignote.utils import hash_from_code

__all__ = ["hash_from_code", "hash_from_sparse"]


def hash_from_sparse(data: Any) -> str:
    """A hex digest of a ``scipy.sparse`` CSR or CSC matrix's value: its format, shape, dtype
    and stored entries (in canonical order: equal matrices stored differently, e.g. with
    unsorted indices or explicit zeros, hash the same).

    >>> import numpy as np, scipy.sparse as sp
    >>> a = sp.csr_matrix(np.eye(3))
    >>> hash_from_sparse(a) == hash_from_sparse(a.copy()), hash_from_sparse(a) == hash_from_sparse(2 * a)
    (True, False)
    """
    if not scipy.sparse.issparse(data) or data.format not in ("csr", "csc"):
        raise TypeError(f"hash_from_sparse takes a scipy.sparse CSR or CSC matrix, got {type(data).__name__}")
    canonical = data.copy()
    canonical.eliminate_zeros()
    canonical.sum_duplicates()  # also sorts the indices
    parts = [
        canonical.format.encode(),
        str(canonical.shape).encode(),
        str(canonical.dtype).encode(),
        np.ascontiguousarray(canonical.indptr, dtype=np.int64).tobytes(),
        np.ascontiguousarray(canonical.indices, dtype=np.int64).tobytes(),
        np.ascontiguousarray(canonical.data).tobytes(),
    ]
    return hash_from_code(b"|".join(parts))
