"""Numba implementations of arignote's Ops, one module per Op family, registered by Op type
(:func:`numba_funcify`); :mod:`arignote.link.numba.graph` writes a whole FunctionGraph with
them. Importing this package never imports Numba (it writes source text).
"""

from arignote.link.numba.dispatch import (  # noqa: F401  (imported for their registrations)
    diag,
    elemwise,
    join,
    linalg,
    products,
    random,
    shape,
    special,
    subtensor,
)
from arignote.link.numba.dispatch.basic import NoNumbaImpl, NumbaImpl, numba_funcify

__all__ = ["NoNumbaImpl", "NumbaImpl", "numba_funcify"]
