"""The Python backend: the thunks the reference VM runs, one per node, chosen by Op type.

:func:`python_thunk` (a ``functools.singledispatch`` keyed by Op type) gives each node its
thunk; its default is the Op's own ``make_thunk`` (``perform``, the slow path, unless the
Op overrides ``make_thunk``). Op families with a faster Python thunk register it from here
(:mod:`~arignote.link.python.elemwise`, :mod:`~arignote.link.python.dimshuffle`,
:mod:`~arignote.link.python.careduce`, :mod:`~arignote.link.python.blas`,
:mod:`~arignote.link.python.indexing`).

:func:`has_fast_impl` and :func:`registered_ops` say what is covered; :func:`impl_name`
what runs a node (``"python"``, ``"make_thunk"`` or ``"perform"``), which the profile and
``dprint`` of a compiled function report.

>>> import arignote.tensor as pt
>>> from arignote.tensor.elemwise import Elemwise
>>> Elemwise in registered_ops()
True
>>> has_fast_impl(pt.exp(pt.vector()).owner.op), impl_name(pt.exp(pt.vector()).owner.op)
(True, 'python')
"""

# (importing the module registers its thunks)
from arignote.link.python import blas as blas
from arignote.link.python import careduce as careduce
from arignote.link.python import dimshuffle as dimshuffle
from arignote.link.python import elemwise as elemwise
from arignote.link.python import indexing as indexing
from arignote.link.python.dispatch import (
    OWN_THUNK,
    PERFORM,
    PYTHON,
    has_fast_impl,
    impl_name,
    python_thunk,
    register_python_thunk,
    registered_ops,
)

__all__ = [
    "OWN_THUNK",
    "PERFORM",
    "PYTHON",
    "has_fast_impl",
    "impl_name",
    "python_thunk",
    "register_python_thunk",
    "registered_ops",
]
