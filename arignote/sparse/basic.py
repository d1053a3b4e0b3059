"""PyTensor's ``pytensor.sparse.basic`` path: the sparse Types' Variables, constructors and
Ops, re-exported from where they live (``conversion``, ``construction``, ``structure``,
``arithmetic``, ``structured``, ``products``, ``indexing``, ``joining``, ``variable``)."""

from arignote.sparse.arithmetic import *  # noqa: F403
from arignote.sparse.arithmetic import __all__ as _arithmetic
from arignote.sparse.comparison import *  # noqa: F403
from arignote.sparse.comparison import __all__ as _comparison
from arignote.sparse.construction import *  # noqa: F403
from arignote.sparse.construction import __all__ as _construction
from arignote.sparse.conversion import *  # noqa: F403
from arignote.sparse.conversion import __all__ as _conversion
from arignote.sparse.conversion import _is_dense_variable, _is_sparse, _is_sparse_variable
from arignote.sparse.indexing import *  # noqa: F403
from arignote.sparse.indexing import __all__ as _indexing
from arignote.sparse.joining import *  # noqa: F403
from arignote.sparse.joining import __all__ as _joining
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
    *_comparison,
    *_construction,
    *_conversion,
    *_indexing,
    *_joining,
    *_products,
    *_structure,
    *_structured,
    *_type,
    *_variable,
    "_is_dense_variable",
    "_is_sparse",
    "_is_sparse_variable",
]
