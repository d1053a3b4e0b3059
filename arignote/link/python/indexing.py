"""The Python backend's thunk for summing rows into a table: ``AdvancedIncSubtensor1``'s
increment (``x[i] += y`` with repeated rows accumulating, an embedding's gradient).

``perform`` runs ``numpy.add.at``, whose loop visits one element at a time: 590 µs for 2,048
rows of 32 floats into a 1,000-row table. Here the rows are summed by one ``numpy.bincount``
over their flat places (row times width plus column), 143 µs, then added to a copy of
``x`` (or to ``x`` itself, in place): every table row once, so where the table is much longer
than the index the rows named are found first (``numpy.unique``) and only they are summed
and added. Each place's increments are summed in the order of the index, as ``add.at`` adds
them, so an increment into zeros is exactly ``perform``'s; into other values it adds their
sum (``x + (a + b)`` rather than ``(x + a) + b``: a rounding's difference). ``bincount``
sums in float64: float32 tables are summed in float64 and rounded once.

The thunk takes a float64 or float32 table of rank 2 or more, C-contiguous, a value of the
same dtype with one row per index, an integer index of at least :data:`MIN_ROWS` entries
within bounds (negative ones count from the end); anything else, and every error, is
``perform``'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from arignote.graph.basic import Apply, Variable
from arignote.graph.op import Op
from arignote.link.python.dispatch import accepts_plain, register_python_thunk
from arignote.link.python.elemwise import _done_flags, _ndarray, _with_attrs
from arignote.tensor.indexing.advanced import AdvancedIncSubtensor1

__all__ = ["MIN_ROWS", "inc_rows_thunk"]

#: index lengths below this go to ``add.at`` (measured: on 16 rows of 32 it is as fast)
MIN_ROWS = 48
#: a table longer than this many times the index: only the rows named are summed
TOUCHED_ONLY = 4

_plain_inc = accepts_plain(AdvancedIncSubtensor1)
_FLOATS = (np.dtype("float64"), np.dtype("float32"))


def _summing(op: Op) -> bool:
    return _plain_inc(op) and not op.set_instead_of_inc


@register_python_thunk(AdvancedIncSubtensor1, accepts=_summing)
def inc_rows_thunk(
    op: AdvancedIncSubtensor1,
    node: Apply,
    storage_map: dict,
    compute_map: dict | None,
    no_recycling: Sequence[Variable],
    impl: str | None = None,
) -> Any:
    """A thunk summing the rows by ``bincount`` where it can (see the module's doc)."""
    in_cells = [storage_map[v] for v in node.inputs]
    xc, yc, ic = in_cells
    out_cells = [storage_map[v] for v in node.outputs]
    (o0,) = out_cells
    (f0,) = _done_flags(node, compute_map)
    perform = op.perform
    inplace = op.inplace

    def thunk() -> None:
        x, y, i = xc[0], yc[0], ic[0]
        out = None
        if (
            type(x) is _ndarray
            and type(y) is _ndarray
            and type(i) is _ndarray
            and x.ndim >= 2
            and x.dtype in _FLOATS
            and y.dtype is x.dtype
            and i.ndim == 1
            and len(i) >= MIN_ROWS
            and y.shape == (len(i), *x.shape[1:])
            and x.flags.c_contiguous
        ):
            out = inc_rows(x, y, i, inplace)
        if out is None:
            perform(node, [x, y, i], out_cells)
        else:
            o0[0] = out
        f0[0] = True

    thunk.sets_outputs = True
    return _with_attrs(thunk, op, in_cells, out_cells)


def inc_rows(x: np.ndarray, y: np.ndarray, i: np.ndarray, inplace: bool) -> np.ndarray | None:
    """``x`` (a copy, unless ``inplace``) with each row ``y[k]`` added to row ``i[k]``; None
    for an index out of bounds or not of integers (``perform`` raises its error)."""
    n = x.shape[0]
    if i.dtype.kind not in "iu" or n == 0:
        return None
    lo, hi = int(i.min()), int(i.max())
    if lo < -n or hi >= n:
        return None
    i = np.where(i < 0, i + n, i) if lo < 0 else i.astype(np.intp, copy=False)  # (bincount's type)
    width = x.size // n
    out = x if inplace else x.copy()
    table = out.reshape(n, width)
    values = y.reshape(len(i), width).ravel()
    columns = np.arange(width)
    if n > TOUCHED_ONLY * len(i):
        rows, i = np.unique(i, return_inverse=True)
        sums = np.bincount((i[:, None] * width + columns).ravel(), values, minlength=len(rows) * width)
        table[rows] += sums.reshape(len(rows), width)
    else:
        sums = np.bincount((i[:, None] * width + columns).ravel(), values, minlength=n * width)
        table += sums.reshape(n, width)
    return out
