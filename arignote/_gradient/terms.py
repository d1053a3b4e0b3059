"""The dtype tests and casts that ``grad`` and the gradient Ops share (the zero gradient of
a tensor is :func:`arignote.tensor.shape._zero_grad`).

The vocabulary of terms that are not ordinary values (``DisconnectedType``,
``grad_undefined``, ...) is in :mod:`arignote.graph.null_type`, below every Op.
"""

from __future__ import annotations

import numpy as np

from arignote.graph.basic import Variable
from arignote.tensor.type import TensorType
from arignote.tensor.ufuncs import cast

__all__: list[str] = []


def _is_discrete(v: Variable) -> bool:
    dtype = getattr(v.type, "dtype", None)
    return dtype is not None and np.dtype(dtype).kind in "biu"


def _match_dtype(v: Variable, g: Variable) -> Variable:
    """``g``, a gradient or tangent for ``v``, cast to ``v``'s dtype when both are floats
    that differ (so a float32 graph keeps float32 gradients)."""
    vd = getattr(v.type, "dtype", None)
    gd = getattr(g.type, "dtype", None)
    if vd is None or gd is None or vd == gd:
        return g
    if np.dtype(vd).kind in "fc" and np.dtype(gd).kind in "fc":
        if not isinstance(g.type, TensorType) and hasattr(g, "astype"):
            return g.astype(vd)  # another Type's own cast (a sparse matrix's)
        return cast(g, vd)
    return g
