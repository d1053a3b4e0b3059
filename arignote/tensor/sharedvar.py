"""Tensor shared variables: ``shared(ndarray)`` gives a :class:`TensorSharedVariable`."""

from __future__ import annotations

from typing import Any

import numpy as np

from arignote.graph.shared import SharedVariable, shared_constructor
from arignote.tensor.conversion import _python_dtype
from arignote.tensor.type import TensorType
from arignote.tensor.variable import _tensor_py_operators

__all__ = ["TensorSharedVariable", "tensor_constructor"]


class TensorSharedVariable(_tensor_py_operators, SharedVariable):
    """A shared variable holding an ndarray; usable like any tensor Variable."""


@shared_constructor
def tensor_constructor(
    value: Any,
    name: str | None = None,
    strict: bool = False,
    allow_downcast: bool | None = None,
    shape: tuple | None = None,
    **kwargs: Any,
) -> TensorSharedVariable:
    """Arrays and numbers: the Type's dtype is the value's (Python floats float64, Python
    ints int64, Python bools bool), its static shape unknown unless ``shape=`` is given,
    since values of another shape may be set later."""
    if kwargs:
        raise TypeError(f"unexpected arguments {sorted(kwargs)}")
    if isinstance(value, bool):  # before int: bool is an int
        value = np.asarray(value, dtype="bool")
    elif isinstance(value, float):
        value = np.asarray(value, dtype="float64")
    elif isinstance(value, int):
        value = np.asarray(value, dtype="int64" if _python_dtype(value) != "uint64" else "uint64")
    elif not isinstance(value, np.ndarray):
        value = np.asarray(value)
    if value.dtype.kind not in "biufc":
        raise TypeError(f"tensor shared variables hold numbers, not values of dtype {value.dtype}")
    ttype = TensorType(value.dtype, (None,) * value.ndim if shape is None else shape)
    return TensorSharedVariable(
        name=name, type=ttype, value=value, strict=strict, allow_downcast=allow_downcast
    )
