"""``pytensor.npy_2_compat``'s path: :func:`old_np_unique`, ``np.unique`` with the results
NumPy 1.x gave (the inverse indices of a flattened unique are 1-d, whatever the input's
shape), for code written against them.

>>> import numpy as np
>>> values, inverse = old_np_unique(np.array([[3, 1], [1, 3]]), return_inverse=True)
>>> values, inverse
(array([1, 3]), array([1, 0, 0, 1]))
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["old_np_unique"]


def old_np_unique(
    arr: Any,
    return_index: bool = False,
    return_inverse: bool = False,
    return_counts: bool = False,
    axis: int | None = None,
) -> Any:
    """``np.unique`` as NumPy 1.x returned it: with ``axis=None`` the inverse is 1-d (NumPy 2
    gives it the input's shape), with an axis it is 1-d along that axis."""
    res = np.unique(
        arr, return_index=return_index, return_inverse=return_inverse, return_counts=return_counts, axis=axis
    )
    if not return_inverse:
        return res
    res = list(res)
    k = 1 + int(return_index)
    res[k] = np.asarray(res[k]).reshape(-1)
    return tuple(res)
