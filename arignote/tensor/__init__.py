"""Tensors: ``import arignote.tensor as pt`` (the array language users write in).

This package only re-exports: every name is defined in one home module of
``arignote.tensor`` (listed below), and PyTensor's module paths (``pt.basic``,
``pt.math``, ``pt.extra_ops``, ``pt.shape``, ``pt.subtensor``...) are kept as modules
that re-export too.
"""

from numpy import e, euler_gamma, inf, nan, pi

from arignote.gradient import grad, hessian, jacobian  # PyTensor has them here too
from arignote.graph.type import transfer
from arignote.tensor import (
    basic,
    batching,
    blas,
    exceptions,  # registers how tensors are batched (vectorize_graph)
    extra_ops,
    linalg,
    math,
    nlinalg,
    optimize,
    random,
    rewriting,  # registers the tensor rules
    signal,
    slinalg,
    special,
    subtensor,
)
from arignote.tensor.alloc import *
from arignote.tensor.axes import *
from arignote.tensor.blas import *
from arignote.tensor.checks import *
from arignote.tensor.conversion import *
from arignote.tensor.cumulative import *
from arignote.tensor.diag import *
from arignote.tensor.einsum import *
from arignote.tensor.elemwise import *
from arignote.tensor.functional import vectorize
from arignote.tensor.index_utils import *
from arignote.tensor.indexing.advanced import *
from arignote.tensor.indexing.basic import *
from arignote.tensor.interpolate import *
from arignote.tensor.join import *
from arignote.tensor.pad import *
from arignote.tensor.products import *
from arignote.tensor.ranges import *
from arignote.tensor.reductions import *
from arignote.tensor.searching import *
from arignote.tensor.shape import *
from arignote.tensor.shape_utils import *
from arignote.tensor.sharedvar import TensorSharedVariable
from arignote.tensor.sort import *
from arignote.tensor.statistics import *
from arignote.tensor.type import *
from arignote.tensor.type_other import NoneConst, NoneSliceConst, make_slice, none_type_t, slicetype
from arignote.tensor.ufuncs import *
from arignote.tensor.variable import *

# ``pytensor.tensor.reshape`` is a module (pack, unpack, ...) and ``pt.reshape`` the function:
# importing the module binds its name here, so the function is bound again after it
# isort: off
from arignote.tensor.reshape import pack, unpack
from arignote.tensor.shape import reshape
# isort: on
