"""``pytensor.basic``'s path: :func:`as_symbolic`, which turns a Python or NumPy value into the
matching graph Variable (tensors for arrays and numbers, slices for slices, ``NoneConst`` for
None); another kind of value gets a converter with ``symbolic_converters.register(cls)``.

>>> import numpy as np
>>> as_symbolic(np.arange(3)).type
TensorType(int64, shape=(3,))
>>> as_symbolic(slice(1, None)).data
slice(1, None, None)
"""

from __future__ import annotations

import functools
from typing import Any

from arignote.graph.basic import Variable
from arignote.tensor.conversion import as_tensor_variable
from arignote.tensor.type_other import NoneConst, SliceConstant, make_slice, slicetype

__all__ = ["as_symbolic", "symbolic_converters"]


@functools.singledispatch
def symbolic_converters(x: Any, **kwargs: Any) -> Variable:
    """The converter of one kind of value (dispatched on its class); the default makes a
    tensor (``as_tensor_variable``, which raises a TypeError naming what it cannot take)."""
    return as_tensor_variable(x, **kwargs)


@symbolic_converters.register(slice)
def _slice(x: slice, **kwargs: Any) -> Variable:
    bounds = (x.start, x.stop, x.step)
    if any(isinstance(b, Variable) for b in bounds):
        return make_slice(x)
    return SliceConstant(slicetype, x)


@symbolic_converters.register(type(None))
def _none(x: None, **kwargs: Any) -> Variable:
    return NoneConst


def as_symbolic(x: Any, name: str | None = None, **kwargs: Any) -> Variable:
    """``x`` as a graph Variable: a Variable is returned as it is; anything else is converted
    by :data:`symbolic_converters` (``kwargs`` such as ``ndim`` or ``dtype`` go to the
    converter) and named ``name``."""
    if isinstance(x, Variable):
        return x
    out = symbolic_converters(x, **kwargs)
    if name is not None and out is not NoneConst:
        out.name = name
    return out
