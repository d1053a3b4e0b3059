"""Tensors: ``import arignote.tensor as pt`` (the array language users write in)."""

from arignote.tensor import linalg, optimize, signal, special
from arignote.tensor.alloc import *  # noqa: F403
from arignote.tensor.basic import *  # noqa: F403
from arignote.tensor.basic_extra import *  # noqa: F403
from arignote.tensor.diag import *  # noqa: F403
from arignote.tensor.einsum import *  # noqa: F403
from arignote.tensor.elemwise import CAReduce, DimShuffle, Elemwise
from arignote.tensor.extra_ops import *  # noqa: F403
from arignote.tensor.extra_ops_more import *  # noqa: F403
from arignote.tensor.functional import vectorize
from arignote.tensor.index_utils import *  # noqa: F403
from arignote.tensor.interpolate import *  # noqa: F403
from arignote.tensor.join import *  # noqa: F403
from arignote.tensor.math import *  # noqa: F403
from arignote.tensor.math import (
    abs,
    all,
    any,
    max,
    min,
    pow,
    round,
    sum,
)
from arignote.tensor.math_extra import *  # noqa: F403
from arignote.tensor.pad import *  # noqa: F403
from arignote.tensor.products import *  # noqa: F403
from arignote.tensor.shape import *  # noqa: F403
from arignote.tensor.shape_utils import *  # noqa: F403
from arignote.tensor.sort import *  # noqa: F403
from arignote.tensor.subtensor import *  # noqa: F403
from arignote.tensor.type import *  # noqa: F403
from arignote.tensor.type import TensorType
from arignote.tensor.variable import TensorConstant, TensorVariable

__all__ = [
    "CAReduce",
    "DimShuffle",
    "Elemwise",
    "TensorConstant",
    "TensorType",
    "TensorVariable",
    "abs",
    "all",
    "blas",
    "linalg",
    "random",
    "any",
    "max",
    "min",
    "optimize",
    "pow",
    "round",
    "signal",
    "special",
    "sum",
    "vectorize",
    "grad",
    "hessian",
    "jacobian",
    "pack",
    "unpack",
    "reshape",
]
import arignote.tensor.rewriting  # noqa: F401  (registers the tensor rules)
from arignote.gradient import grad, hessian, jacobian  # PyTensor has them here too
from arignote.tensor import (
    blas,  # after math: it re-exports from math_extra
    random,
)

# ``pytensor.tensor.reshape`` is a module (pack, unpack, ...) and ``pt.reshape`` the function:
# importing the module binds its name here, so the function is bound again after it
from arignote.tensor.reshape import pack, unpack
from arignote.tensor.shape import reshape
from arignote.tensor.sharedvar import TensorSharedVariable  # noqa: F401  (registers shared())
