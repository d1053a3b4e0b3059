"""The Python backend's thunk for CAReduce: the NumPy reduction ``perform`` calls, chosen
once at link time (see :mod:`~arignote.link.python.elemwise` for the protocol)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from arignote.graph.basic import Apply, Variable
from arignote.graph.op import Op
from arignote.link.python.dispatch import accepts_plain, register_python_thunk
from arignote.link.python.elemwise import (
    _OUT_ELLIPSIS,
    _done_flags,
    _ndarray,
    _with_attrs,
)
from arignote.tensor.elemwise import CAReduce

__all__ = ["careduce_thunk"]

_plain_careduce_class = accepts_plain(CAReduce)


def _plain_careduce(op: Op) -> bool:
    """A plain CAReduce whose scalar op has a NumPy ufunc (its ``reduce`` is what runs)."""
    return _plain_careduce_class(op) and isinstance(op.scalar_op.ufunc, np.ufunc)


@register_python_thunk(CAReduce, accepts=_plain_careduce)
def careduce_thunk(
    op: CAReduce,
    node: Apply,
    storage_map: dict,
    compute_map: dict | None,
    no_recycling: Sequence[Variable],
    impl: str | None = None,
) -> Any:
    """A thunk calling the scalar op's ufunc's ``reduce`` directly, with what
    ``CAReduce.perform`` looks up resolved once for the node."""
    op.prepare_node(node, storage_map, compute_map, "py")
    in_cells = [storage_map[v] for v in node.inputs]
    (i0,) = in_cells
    out_cells = [storage_map[v] for v in node.outputs]
    (o0,) = out_cells
    (f0,) = _done_flags(node, compute_map)
    perform = op.perform
    reduce = op.scalar_op.ufunc.reduce
    axis = op.axis
    acc = op.acc_dtype or None
    odt = node.outputs[0].type.numpy_dtype
    zero_d = node.outputs[0].type.ndim == 0 and _OUT_ELLIPSIS
    no_identity = op.scalar_op.identity is None

    def thunk() -> None:
        x = i0[0]
        if type(x) is not _ndarray or (no_identity and x.size == 0):
            perform(node, [x], out_cells)  # (an empty reduction without identity raises)
        else:
            res = reduce(x, axis, acc, out=...) if zero_d else reduce(x, axis, acc)
            if type(res) is not _ndarray or res.dtype is not odt:
                res = np.asarray(res).astype(odt, copy=False)
                if np.may_share_memory(res, x):
                    res = res.copy()
            o0[0] = res
        f0[0] = True

    # perform too sets its output (or raises), and copies a result that could alias x
    thunk.sets_outputs = thunk.fresh_outputs = True
    return _with_attrs(thunk, op, in_cells, out_cells)


# -- in place ---------------------------------------------------------------------------------
#
# With ``inplace_pattern`` {output k: input i} the NumPy call computing output k writes it
# straight into input i's buffer (``out=``), which nothing reads afterwards (DestroyHandler).
# A permission, not a duty: where no ufunc can (an op's ``impl``, a read-only target), the
# output is the fresh result, as correct and cheaper than ``perform``'s copy into input i.
