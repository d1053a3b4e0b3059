"""``pytensor.tensor.extra_ops``'s path: cumulative sums and products and ``diff``
(:mod:`arignote.tensor.cumulative`), searching and counting (:mod:`arignote.tensor.searching`),
broadcasting helpers (:mod:`arignote.tensor.shape_utils`), index conversions
(:mod:`arignote.tensor.index_utils`), ``fill_diagonal`` (:mod:`arignote.tensor.diag`) and
the number sequences (:mod:`arignote.tensor.ranges`). This module only re-exports them.

>>> import numpy as np
>>> import arignote.tensor as pt
>>> x = pt.dvector("x")
>>> pt.cumsum(x).eval({x: np.array([1.0, 2.0, 3.0])})
array([1., 3., 6.])
"""

from arignote.tensor.alloc import (
    repeat,
)
from arignote.tensor.axes import (
    expand_dims,
    squeeze,
)
from arignote.tensor.conversion import (
    as_tensor_variable,
)
from arignote.tensor.cumulative import (
    CumOp,
    Flip,
    cumprod,
    cumsum,
    diff,
)
from arignote.tensor.diag import (
    fill_diagonal,
    fill_diagonal_offset,
)
from arignote.tensor.elemwise import (
    normalize_axis,
)
from arignote.tensor.index_utils import (
    RavelMultiIndex,
    UnravelIndex,
    ravel_multi_index,
    unravel_index,
)
from arignote.tensor.ranges import (
    bartlett,
    geomspace,
    linspace,
    logspace,
)
from arignote.tensor.searching import (
    Nonzero,
    Unique,
    bincount,
    compress,
    flatnonzero,
    nonzero,
    searchsorted,
    unique,
)
from arignote.tensor.shape import (
    flatten,
)
from arignote.tensor.shape_utils import (
    broadcast_arrays,
    broadcast_shape,
    broadcast_to,
    concat_with_broadcast,
)

__all__ = [
    "CumOp",
    "Flip",
    "Nonzero",
    "Unique",
    "RavelMultiIndex",
    "UnravelIndex",
    "as_tensor_variable",
    "bartlett",
    "bincount",
    "broadcast_arrays",
    "broadcast_shape",
    "broadcast_to",
    "compress",
    "concat_with_broadcast",
    "cumprod",
    "cumsum",
    "diff",
    "expand_dims",
    "fill_diagonal",
    "fill_diagonal_offset",
    "flatnonzero",
    "flatten",
    "geomspace",
    "linspace",
    "logspace",
    "nonzero",
    "normalize_axis",
    "ravel_multi_index",
    "repeat",
    "searchsorted",
    "squeeze",
    "unique",
    "unravel_index",
]
