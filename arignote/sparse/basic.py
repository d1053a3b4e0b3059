"""PyTensor's ``pytensor.sparse.basic`` path: the sparse Types' Variables, constructors and
Ops, re-exported from where they live (``conversion``, ``construction``, ``structure``,
``arithmetic``, ``structured``, ``products``, ``variable``)."""

from arignote.sparse.arithmetic import *  # noqa: F403
from arignote.sparse.arithmetic import __all__ as _arithmetic
from arignote.sparse.construction import *  # noqa: F403
from arignote.sparse.construction import __all__ as _construction
from arignote.sparse.conversion import *  # noqa: F403
from arignote.sparse.conversion import __all__ as _conversion
from arignote.sparse.conversion import _is_dense_variable, _is_sparse, _is_sparse_variable
from arignote.sparse.products import *  # noqa: F403
from arignote.sparse.products import __all__ as _products
from arignote.sparse.structure import *  # noqa: F403
from arignote.sparse.structure import __all__ as _structure
from arignote.sparse.structured import *  # noqa: F403
from arignote.sparse.structured import __all__ as _structured
from arignote.sparse.type import *  # noqa: F403
from arignote.sparse.type import __all__ as _type
from arignote.sparse.variable import *  # noqa: F403
from arignote.sparse.variable import __all__ as _variable

__all__ = [
    *_arithmetic,
    *_construction,
    *_conversion,
    *_products,
    *_structure,
    *_structured,
    *_type,
    *_variable,
    "_is_dense_variable",
    "_is_sparse",
    "_is_sparse_variable",
]
