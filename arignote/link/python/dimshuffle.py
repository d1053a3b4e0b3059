"""The Python backend's thunk for DimShuffle: the view ``perform`` makes, chosen once at
link time (see :mod:`~arignote.link.python.elemwise` for the protocol)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from arignote.graph.basic import Apply, Variable
from arignote.link.python.dispatch import accepts_plain, register_python_thunk
from arignote.link.python.elemwise import (
    _done_flags,
    _ndarray,
    _with_attrs,
)
from arignote.tensor.elemwise import DimShuffle

__all__ = ["dimshuffle_thunk"]

_plain_dimshuffle = accepts_plain(DimShuffle)


@register_python_thunk(DimShuffle, accepts=_plain_dimshuffle)
def dimshuffle_thunk(
    op: DimShuffle,
    node: Apply,
    storage_map: dict,
    compute_map: dict | None,
    no_recycling: Sequence[Variable],
    impl: str | None = None,
) -> Any:
    """A thunk making ``DimShuffle.perform``'s view, its steps chosen once for the node."""
    op.prepare_node(node, storage_map, compute_map, "py")
    in_cells = [storage_map[v] for v in node.inputs]
    (i0,) = in_cells
    out_cells = [storage_map[v] for v in node.outputs]
    (o0,) = out_cells
    (f0,) = _done_flags(node, compute_map)
    perform = op.perform
    perm = tuple(op.shuffle + op.drop)
    n_keep = len(op.shuffle)
    identity = op.shuffle == list(range(op.input_ndim))
    n_aug = len(op.augment)

    if op.input_ndim == 0 and not op.augment:  # perform hands a 0-d input on as it is

        def view(x: np.ndarray) -> np.ndarray:
            return x

    elif op.augment and (op.input_ndim == 0 or (identity and not op.drop)):
        # nothing moves: add the new length-1 dimensions (``np.expand_dims`` is a reshape)
        if op.augment == list(range(n_aug)):  # on the left
            ones = (1,) * n_aug

            def view(x: np.ndarray) -> np.ndarray:
                return x.reshape(ones + x.shape)

        elif op.augment == list(range(op.input_ndim, op.input_ndim + n_aug)):  # on the right
            ones = (1,) * n_aug

            def view(x: np.ndarray) -> np.ndarray:
                return x.reshape(x.shape + ones)

        else:
            order = [None if d == "x" else d for d in op.new_order]

            def view(x: np.ndarray) -> np.ndarray:
                sh = x.shape
                return x.reshape([1 if d is None else sh[d] for d in order])

    elif not op.drop and not op.augment:

        def view(x: np.ndarray) -> np.ndarray:
            return x.transpose(perm)

    elif not op.augment:

        def view(x: np.ndarray) -> np.ndarray:
            res = x.transpose(perm)
            return res.reshape(res.shape[:n_keep])

    else:

        def view(x: np.ndarray) -> np.ndarray:
            res = x.transpose(perm)
            if op.drop:
                res = res.reshape(res.shape[:n_keep])
            return np.expand_dims(res, op.augment)

    def thunk() -> None:
        x = i0[0]
        if type(x) is _ndarray:
            o0[0] = view(x)
        else:
            perform(node, [x], out_cells)  # (which sets the output, or raises)
        f0[0] = True

    thunk.sets_outputs = True
    return _with_attrs(thunk, op, in_cells, out_cells)
