"""More of ``pytensor.tensor.basic``: NumPy's gathers (``take_along_axis``, ``choose``,
``nonzero_values``), permutations of the last axis (``permute_row_elements``,
``inverse_permutation``) and the index grids ``mgrid`` / ``ogrid``.

All are built from indexing (advanced ``x[...]``), ``argsort`` and ``alloc``, so their
gradients are those of the indexing Ops.

>>> import numpy as np
>>> import arignote.tensor as pt
>>> x = pt.dmatrix("x")
>>> i = pt.lmatrix("i")
>>> pt.take_along_axis(x, i, axis=1).eval({x: np.array([[1.0, 2.0], [3.0, 4.0]]), i: np.array([[1], [0]])})
array([[2.],
       [3.]])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

import arignote.tensor as pt
from arignote.configdefaults import config
from arignote.graph.basic import Variable
from arignote.scalar.type import upcast
from arignote.tensor.basic import as_tensor_variable, expand_dims, flatten
from arignote.tensor.elemwise import normalize_axis
from arignote.tensor.extra_ops_more import check_values
from arignote.tensor.shape import dim_length

# Loaded on first use by arignote.tensor.basic: the other tensor modules (but shape_utils,
# which needs only basic's own helpers) are used through ``pt`` when a graph is built.
__all__ = [
    "take_along_axis",
    "choose",
    "nonzero_values",
    "permute_row_elements",
    "inverse_permutation",
    "mgrid",
    "ogrid",
    "is_flat",
    "stacklists",
]


def _check_int(v: Variable, what: str) -> Variable:
    if np.dtype(v.type.dtype).kind not in "biu":
        raise TypeError(f"{what} must be integers, got {v} of Type {v.type}")
    return pt.cast(v, "int64") if v.type.dtype == "bool" else v


def _broadcast_together(tensors: Sequence[Variable], what: str) -> list[Variable]:
    """The tensors broadcast to their common shape (:func:`pt.broadcast_arrays`), or a
    ValueError naming ``what`` and the shapes."""
    try:
        return list(pt.broadcast_arrays(*tensors))
    except ValueError:
        shapes = ", ".join(str(t.type.shape) for t in tensors)
        raise ValueError(f"{what}: shapes {shapes} cannot be broadcast together") from None


def take_along_axis(arr: Any, indices: Any, axis: int | None = 0) -> Variable:
    """``numpy.take_along_axis``: ``out[..., j, ...] = arr[..., indices[..., j, ...], ...]``
    along ``axis``; ``indices`` has ``arr``'s number of dimensions and the other axes
    broadcast. ``axis=None`` works on the flattened ``arr`` (``indices`` a vector).
    Negative indices count from the end.
    """
    arr, indices = as_tensor_variable(arr), as_tensor_variable(indices)
    indices = _check_int(indices, "take_along_axis: indices")
    if axis is None:
        arr, axis = flatten(arr), 0
    if arr.type.ndim != indices.type.ndim:
        raise ValueError(
            f"take_along_axis: indices ({indices.type}) must have as many dimensions as arr ({arr.type})"
        )
    (axis,) = normalize_axis(axis, arr.type.ndim, "take_along_axis: axis")  # type: ignore[misc]
    ndim = arr.type.ndim
    index: list[Any] = []
    for d in range(ndim):
        if d == axis:
            index.append(indices)
        else:  # the position along d itself, shaped to broadcast along d only
            others = tuple(k for k in range(ndim) if k != d)
            index.append(expand_dims(pt.arange(dim_length(arr, d)), others))
    return arr[tuple(index)]


def choose(a: Any, choices: Any, mode: str = "raise") -> Variable:
    """``numpy.choose``: for every element of the integer tensor ``a``, the element at the
    same place of ``choices[a]``. ``choices`` is a sequence of tensors or one tensor whose
    first axis lists them; ``a`` and the choices broadcast together.

    ``mode``: ``"raise"`` (an index outside ``[0, n)`` is an error at run time), ``"wrap"``
    (taken modulo ``n``) or ``"clip"`` (clipped to ``[0, n - 1]``).
    """
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"choose: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
    a = _check_int(as_tensor_variable(a), "choose: a")
    if isinstance(choices, (list, tuple)):
        if not choices:
            raise ValueError("choose: choices is empty")
        items = [as_tensor_variable(c) for c in choices]
        dtype = upcast(*(c.type.dtype for c in items))
        a, *items = _broadcast_together([a, *(pt.cast(c, dtype) for c in items)], "choose")
        stacked = pt.stack(items)
        n: Any = len(items)
    else:
        stacked = as_tensor_variable(choices)
        if stacked.type.ndim == 0:
            raise ValueError(
                f"choose: choices must list the choices along its first axis, got the 0-d {stacked}"
            )
        n = dim_length(stacked, 0)
        probe = stacked[0]  # the shape of one choice, broadcast with a's
        a, _ = _broadcast_together([a, probe], "choose")
        stacked = pt.alloc(stacked, n, *(dim_length(a, d) for d in range(a.type.ndim)))
    a = pt.cast(a, "int64")
    if mode == "wrap":
        a = pt.mod(a, n)
    elif mode == "clip":
        a = pt.clip(a, 0, n - 1)
    else:
        a = check_values(
            a, pt.and_(pt.ge(a, 0), pt.lt(a, n)), "choose: an index is outside [0, len(choices))"
        )
    return take_along_axis(stacked, expand_dims(a, 0), axis=0)[0]


def nonzero_values(a: Any) -> Variable:
    """The nonzero elements of ``a``, in the order of the flattened ``a``
    (``a.flatten()[flatnonzero(a)]``)."""
    a = as_tensor_variable(a)
    return flatten(a)[pt.flatnonzero(a)]


def permute_row_elements(x: Any, y: Any, inverse: bool = False) -> Variable:
    """``x`` with the elements of its last axis reordered by the permutation(s) ``y``:
    ``out[..., i] = x[..., y[..., i]]``; with ``inverse=True``, ``out[..., y[..., i]] =
    x[..., i]``. The leading axes of ``x`` and ``y`` broadcast together, so one permutation
    can reorder every row, or each row its own. ``y`` is assumed to be a permutation (not
    checked; an index out of range is an error)."""
    x, y = as_tensor_variable(x), as_tensor_variable(y)
    y = _check_int(y, "permute_row_elements: y")
    for what, v in (("x", x), ("y", y)):
        if v.type.ndim == 0:
            raise TypeError(f"permute_row_elements: {what} must have at least one dimension, got {v.type}")
    x, y = _broadcast_together([x, y], "permute_row_elements")
    if inverse:
        y = pt.argsort(y, axis=-1)
    return take_along_axis(x, y, axis=-1)


def inverse_permutation(perm: Any) -> Variable:
    """The inverse of the permutation(s) of ``range(n)`` along the last axis of ``perm``:
    ``out[..., perm[..., i]] = i``, in ``perm``'s dtype. ``perm`` is not checked to be a
    permutation."""
    perm = as_tensor_variable(perm)
    _check_int(perm, "inverse_permutation: perm")
    if perm.type.ndim == 0:
        raise TypeError(f"inverse_permutation: perm must have at least one dimension, got {perm.type}")
    return pt.cast(pt.argsort(perm, axis=-1), perm.type.dtype)


class _NdGrid:
    """``mgrid[...]`` / ``ogrid[...]``: index grids from slices (``numpy.mgrid``).

    Each slice ``start:stop:step`` is ``arange(start, stop, step)``; a complex step
    ``nj`` means ``n`` points from ``start`` to ``stop`` inclusive (``linspace``). One
    slice gives one vector; several give a list of tensors, one per slice, broadcast to
    the full grid (``mgrid``) or left with length-1 axes elsewhere (``ogrid``). All share
    the common dtype of the ranges.
    """

    def __init__(self, sparse: bool):
        self.sparse = sparse

    def __repr__(self) -> str:
        return "ogrid" if self.sparse else "mgrid"

    @staticmethod
    def _range(s: Any) -> Variable:
        if not isinstance(s, slice):
            raise TypeError(f"mgrid/ogrid: index with slices (start:stop:step), got {s!r}")
        if s.stop is None:
            raise ValueError(f"mgrid/ogrid: a slice needs a stop value, got {s!r}")
        start = 0 if s.start is None else s.start
        step = 1 if s.step is None else s.step
        if isinstance(step, complex):
            num = int(abs(step))
            return pt.linspace(start, s.stop, num, dtype=config.floatX)
        return pt.arange(start, s.stop, step)

    def __getitem__(self, key: Any) -> Any:
        slices = key if isinstance(key, tuple) else (key,)
        ranges = [self._range(s) for s in slices]
        if len(ranges) == 1:
            return ranges[0]
        dtype = upcast(*(r.type.dtype for r in ranges))
        k = len(ranges)
        shaped = [
            expand_dims(pt.cast(r, dtype), tuple(j for j in range(k) if j != i)) for i, r in enumerate(ranges)
        ]
        if self.sparse:
            return shaped
        full = [dim_length(r, 0) for r in ranges]
        return [pt.alloc(r, *full) for r in shaped]


mgrid = _NdGrid(sparse=False)
ogrid = _NdGrid(sparse=True)


def is_flat(var: Any, ndim: int = 1) -> bool:
    """Whether ``var`` has ``ndim`` dimensions (after a ``flatten(ndim)``, say)."""
    return as_tensor_variable(var).type.ndim == ndim


def stacklists(arg: Any) -> Any:
    """Nested lists of tensors (scalars, say) stacked into one tensor of the same nesting.

    >>> import arignote.tensor as pt
    >>> a, b, c, d = pt.dscalars("abcd")
    >>> m = stacklists([[a, b], [c, d]])
    >>> m.eval({a: 1.0, b: 2.0, c: 3.0, d: 4.0})
    array([[1., 2.],
           [3., 4.]])
    """
    from arignote.tensor.join import stack

    if isinstance(arg, (tuple, list)):
        return stack([stacklists(a) for a in arg])
    return arg
