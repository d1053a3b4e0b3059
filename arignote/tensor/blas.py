"""What PyTensor keeps in ``pytensor.tensor.blas``: the fused BLAS updates ``Gemm``, ``Gemv``
and ``Ger`` with their instances (``gemm_no_inplace``, ``gemm_inplace``, ``gemv_no_inplace``,
``gemv_inplace``, ``ger``, ``ger_destructive``; ``gemm`` and ``gemv`` are the instances that
return a new array, as in PyTensor; their home is :mod:`arignote.tensor.gemm`,
re-exported here), and the batched products (also, deprecated, in ``pytensor.tensor.math``):
``batched_dot``, ``batched_tensordot``, each the core product vectorised over a leading
batch dimension (``matmul`` and ``vectorize`` are the modern spellings)."""

from __future__ import annotations

from typing import Any

import numpy as np

from arignote.graph.basic import Variable
from arignote.graph.replace import batch_graph
from arignote.tensor.conversion import as_tensor_variable
from arignote.tensor.elemwise import normalize_axis
from arignote.tensor.gemm import Gemm as Gemm
from arignote.tensor.gemm import Gemv as Gemv
from arignote.tensor.gemm import Ger as Ger
from arignote.tensor.gemm import gemm_inplace as gemm_inplace
from arignote.tensor.gemm import gemm_no_inplace as gemm_no_inplace
from arignote.tensor.gemm import gemv_inplace as gemv_inplace
from arignote.tensor.gemm import gemv_no_inplace as gemv_no_inplace
from arignote.tensor.gemm import ger as ger
from arignote.tensor.gemm import ger_destructive as ger_destructive
from arignote.tensor.products import dot, tensordot

# ``from arignote.tensor.blas import *`` (arignote.tensor does) gives the batched products;
# the BLAS Ops are reached through this module, as in PyTensor.
__all__ = ["batched_dot", "batched_tensordot"]

gemm = gemm_no_inplace
gemv = gemv_no_inplace


# --- batched products (deprecated in PyTensor in favour of matmul / vectorize) ------------


def _batched(core: Any, x: Variable, y: Variable) -> Variable:
    cx, cy = x[0].type(), y[0].type()
    (out,) = batch_graph([core(cx, cy)], {cx: x, cy: y})
    return out


def batched_dot(a: Any, b: Any) -> Variable:
    """``dot(a[i], b[i])`` for every ``i`` of the leading (batch) dimension, stacked.

    >>> import arignote.tensor as pt
    >>> pt.batched_dot(pt.dtensor3(), pt.dmatrix()).type
    TensorType(float64, shape=(None, None))
    """
    a, b = as_tensor_variable(a), as_tensor_variable(b)
    for what, v in (("a", a), ("b", b)):
        if v.type.ndim == 0:
            raise TypeError(f"batched_dot: {what} must have a leading batch dimension, got {v.type}")
    return _batched(dot, a, b)


def batched_tensordot(x: Any, y: Any, axes: Any = 2) -> Variable:
    """``tensordot(x[i], y[i], axes)`` for every ``i`` of the leading (batch) dimension.

    ``axes`` is an int (the last ``axes`` of ``x[i]`` with the first of ``y[i]``) or a
    pair of axis lists given in the batched tensors' numbering (they cannot include the
    batch axis 0).
    """
    x, y = as_tensor_variable(x), as_tensor_variable(y)
    for what, v in (("x", x), ("y", y)):
        if v.type.ndim == 0:
            raise TypeError(f"batched_tensordot: {what} must have a leading batch dimension, got {v.type}")
    if isinstance(axes, (int, np.integer)):
        core_axes: Any = int(axes)
    else:
        if len(axes) != 2:
            raise ValueError(f"batched_tensordot: axes must be an int or two lists of axes, got {axes!r}")
        core_axes = []
        for what, v, ax in (("x", x, axes[0]), ("y", y, axes[1])):
            norm = normalize_axis(ax, v.type.ndim)
            if 0 in norm:
                raise ValueError(f"batched_tensordot: the batch axis 0 of {what} cannot be contracted")
            core_axes.append([d - 1 for d in norm])
    return _batched(lambda cx, cy: tensordot(cx, cy, axes=core_axes), x, y)
