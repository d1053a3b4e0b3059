"""PyTensor's ``pytensor.sparse.math`` path: the arithmetic, comparisons, structured
elementwise functions, sums and products of sparse matrices, re-exported from where they
live."""

from arignote.sparse.arithmetic import *  # noqa: F403
from arignote.sparse.arithmetic import __all__ as _arithmetic
from arignote.sparse.comparison import *  # noqa: F403
from arignote.sparse.comparison import __all__ as _comparison
from arignote.sparse.products import *  # noqa: F403
from arignote.sparse.products import __all__ as _products
from arignote.sparse.structured import *  # noqa: F403
from arignote.sparse.structured import __all__ as _structured

__all__ = [*_arithmetic, *_comparison, *_products, *_structured]
