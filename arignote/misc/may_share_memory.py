"""Whether two values may share memory, for NumPy arrays and ``scipy.sparse`` matrices."""

from __future__ import annotations

from typing import Any

import numpy as np

from arignote.lazy import loaded_module

__all__ = ["may_share_memory"]


def _buffers(value: Any) -> list[np.ndarray] | None:
    if isinstance(value, np.ndarray):
        return [value]
    sparse = loaded_module("scipy.sparse")  # (no sparse matrix exists before it is imported)
    if sparse is not None and sparse.issparse(value):
        return [getattr(value, name) for name in ("data", "indices", "indptr") if hasattr(value, name)]
    return None


def may_share_memory(a: Any, b: Any, raise_other_type: bool = True) -> bool:
    """Whether ``a`` and ``b`` may share memory: NumPy arrays (``numpy.may_share_memory``)
    and sparse matrices (through their data, index and pointer arrays), in any pairing.

    Another kind of value is a ``TypeError`` (naming it) with ``raise_other_type=True``,
    else it shares nothing (``False``).

    >>> import numpy as np, scipy.sparse
    >>> x = np.arange(6.0)
    >>> may_share_memory(x, x[2:]), may_share_memory(x, x.copy())
    (True, False)
    >>> m = scipy.sparse.csr_matrix(np.eye(3))
    >>> may_share_memory(m, m.data), may_share_memory(m, 3, raise_other_type=False)
    (True, False)
    """
    parts_a, parts_b = _buffers(a), _buffers(b)
    for value, parts in ((a, parts_a), (b, parts_b)):
        if parts is None:
            if raise_other_type:
                raise TypeError(
                    "may_share_memory takes NumPy arrays and scipy.sparse matrices, "
                    f"got {type(value).__name__} {value!r}"
                )
            return False
    return any(np.may_share_memory(x, y) for x in parts_a for y in parts_b)
