"""Module-level Ops made with ``as_op`` (a test module: pickled Ops are loaded by name)."""

import numpy as np

import arignote.tensor as pt
from arignote.compile.ops import as_op


@as_op(itypes=[pt.dvector], otypes=[pt.dvector])
def np_cumsum(a):
    return np.cumsum(a)
