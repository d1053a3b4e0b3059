"""``pytensor.tensor.basic``'s path: making tensors (constants, ``as_tensor_variable``, the
scalar<->tensor Ops), allocating (``alloc``, ``zeros``, ``eye``, ``arange``...), joining
(``join``, ``stack``, ``split``), reordering axes (``transpose``, ``expand_dims``...) and
the other names PyTensor keeps here. Each is defined in its home module
(:mod:`arignote.tensor.conversion`, ``alloc``, ``ranges``, ``join``, ``axes``, ``shape``,
``diag``...); this module only re-exports them.

>>> import arignote.tensor as pt
>>> pt.constant(3).dtype, pt.constant(3.0).dtype, pt.constant(0.1).dtype
('int8', 'float32', 'float64')
"""

from arignote.graph.type import register_transfer, transfer
from arignote.tensor.alloc import (
    Alloc,
    Eye,
    Repeat,
    alloc,
    eye,
    full,
    full_like,
    identity_like,
    ones,
    ones_like,
    repeat,
    tile,
    tri,
    tril,
    triu,
    zeros,
    zeros_like,
)
from arignote.tensor.axes import (
    expand_dims,
    matrix_transpose,
    moveaxis,
    squeeze,
    swapaxes,
    transpose,
)
from arignote.tensor.conversion import (
    NotScalarConstantError,
    ScalarFromTensor,
    TensorFromScalar,
    as_tensor,
    as_tensor_variable,
    constant,
    get_scalar_constant_value,
    get_underlying_scalar_constant_value,
    scalar_from_tensor,
    tensor_from_scalar,
)
from arignote.tensor.diag import (
    AllocDiag,
    ExtractDiag,
    alloc_diag,
    diag,
    diagonal,
    extract_diag,
    trace,
)
from arignote.tensor.elemwise import (
    DimShuffle,
    normalize_axis,
)
from arignote.tensor.index_utils import (
    mgrid,
    ogrid,
    tril_indices,
    tril_indices_from,
    triu_indices,
    triu_indices_from,
)
from arignote.tensor.indexing.advanced import (
    choose,
    take_along_axis,
)
from arignote.tensor.join import (
    Join,
    Split,
    concatenate,
    horizontal_stack,
    join,
    split,
    stack,
    stacklists,
    vertical_stack,
)
from arignote.tensor.ranges import (
    ARange,
    arange,
    linspace,
)
from arignote.tensor.searching import (
    flatnonzero,
    nonzero,
    nonzero_values,
)
from arignote.tensor.shape import (
    MakeVector,
    flatten,
    get_vector_length,
    is_flat,
    make_vector,
    shape_padaxis,
    shape_padleft,
    shape_padright,
    specify_broadcastable,
)
from arignote.tensor.shape_utils import (
    atleast_1d,
    atleast_2d,
    atleast_3d,
    atleast_Nd,
    empty,
    empty_like,
    roll,
)
from arignote.tensor.sort import (
    inverse_permutation,
    permute_row_elements,
)
from arignote.tensor.type import (
    TensorType,
)
from arignote.tensor.ufuncs import (
    cast,
    fill,
    identity,
    second,
    switch,
    tensor_copy,
    where,
)
from arignote.tensor.variable import (
    TensorConstant,
    TensorVariable,
)

__all__ = [
    "register_transfer",
    "transfer",
    "ARange",
    "Alloc",
    "AllocDiag",
    "DimShuffle",
    "ExtractDiag",
    "Eye",
    "Join",
    "MakeVector",
    "NotScalarConstantError",
    "Repeat",
    "ScalarFromTensor",
    "Split",
    "TensorConstant",
    "TensorFromScalar",
    "TensorType",
    "TensorVariable",
    "alloc",
    "alloc_diag",
    "arange",
    "as_tensor",
    "as_tensor_variable",
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "atleast_Nd",
    "cast",
    "choose",
    "concatenate",
    "constant",
    "diag",
    "diagonal",
    "empty",
    "empty_like",
    "expand_dims",
    "extract_diag",
    "eye",
    "fill",
    "flatnonzero",
    "flatten",
    "full",
    "full_like",
    "get_scalar_constant_value",
    "get_underlying_scalar_constant_value",
    "get_vector_length",
    "horizontal_stack",
    "identity_like",
    "inverse_permutation",
    "join",
    "linspace",
    "make_vector",
    "matrix_transpose",
    "mgrid",
    "moveaxis",
    "nonzero",
    "nonzero_values",
    "normalize_axis",
    "ogrid",
    "ones",
    "ones_like",
    "permute_row_elements",
    "repeat",
    "roll",
    "scalar_from_tensor",
    "second",
    "shape_padaxis",
    "shape_padleft",
    "shape_padright",
    "specify_broadcastable",
    "split",
    "squeeze",
    "stack",
    "swapaxes",
    "switch",
    "take_along_axis",
    "tensor_from_scalar",
    "tile",
    "trace",
    "transpose",
    "tri",
    "tril",
    "tril_indices",
    "tril_indices_from",
    "triu",
    "triu_indices",
    "triu_indices_from",
    "vertical_stack",
    "where",
    "zeros",
    "zeros_like",
    "identity",
    "is_flat",
    "stacklists",
    "tensor_copy",
]
