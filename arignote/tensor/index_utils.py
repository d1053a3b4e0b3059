"""Index arithmetic: ``RavelMultiIndex`` / ``UnravelIndex`` (between multi-indices and
flat indices, as ``numpy.ravel_multi_index`` and ``numpy.unravel_index``) and the
triangle index helpers ``tril_indices``, ``triu_indices`` and their ``*_from`` forms.

All outputs are int64 positions, so nothing here has a gradient: every input is
disconnected.

>>> import numpy as np
>>> import arignote.tensor as pt
>>> i = pt.lvector("i")
>>> rows, cols = pt.unravel_index(i, (3, 4))
>>> cols.eval({i: np.array([5, 7])})
array([1, 3])
>>> pt.ravel_multi_index((rows, cols), (3, 4)).eval({i: np.array([5, 7])})
array([5, 7])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from arignote.configdefaults import config
from arignote.graph.basic import Apply, Variable
from arignote.graph.null_type import disconnected_type
from arignote.graph.op import Op
from arignote.graph.replace import register_batch_rule
from arignote.scalar.type import upcast
from arignote.tensor.alloc import alloc, tri
from arignote.tensor.axes import expand_dims
from arignote.tensor.conversion import as_tensor_variable, constant
from arignote.tensor.elemwise import DimShuffle, _static_length
from arignote.tensor.ranges import arange, linspace
from arignote.tensor.searching import nonzero
from arignote.tensor.shape import dim_length, make_vector, shape_tuple
from arignote.tensor.type import TensorType
from arignote.tensor.ufuncs import cast, eq, invert, switch

__all__ = [
    "mgrid",
    "ogrid",
    "RavelMultiIndex",
    "UnravelIndex",
    "ravel_multi_index",
    "unravel_index",
    "tril_indices",
    "tril_indices_from",
    "triu_indices",
    "triu_indices_from",
]

_MODES = ("raise", "wrap", "clip")


def _check_order(order: Any, what: str) -> str:
    if order not in ("C", "F"):
        raise ValueError(f"{what}: order must be 'C' or 'F', got {order!r}")
    return order


def _as_index(v: Any, what: str) -> Variable:
    """``v`` as an integer tensor, or a TypeError naming ``what``."""
    t = as_tensor_variable(v)
    if not isinstance(t.type, TensorType) or np.dtype(t.type.dtype).kind not in "iu":
        raise TypeError(f"{what} must be an integer tensor, got {t} of Type {t.type}")
    return t


def _as_dims(dims: Any, what: str) -> Variable:
    """The array shape ``dims`` (a sequence of lengths or an integer vector) as an int64
    vector."""
    if isinstance(dims, (list, tuple)):
        if all(isinstance(d, (int, np.integer)) and not isinstance(d, bool) for d in dims):
            return constant(np.asarray(dims, dtype="int64").reshape(len(dims)))
        parts = [_as_index(d, f"{what}: dims entry {i}") for i, d in enumerate(dims)]
        for i, p in enumerate(parts):
            if p.type.ndim != 0:
                raise TypeError(f"{what}: dims entry {i} must be 0-d, got {p} of Type {p.type}")
        return make_vector(*(cast(p, "int64") for p in parts), dtype="int64")
    d = _as_index(dims, f"{what}: dims")
    if d.type.ndim != 1:
        raise TypeError(f"{what}: dims must be a sequence or an integer vector, got {d} of Type {d.type}")
    return d if d.type.dtype == "int64" else cast(d, "int64")


def _static_broadcast(shapes: Sequence[tuple], what: str) -> tuple:
    """NumPy's broadcast of static shapes (None: unknown length, which may be 1)."""
    ndim = max((len(s) for s in shapes), default=0)
    try:
        return tuple(
            _static_length([s[len(s) - d] for s in shapes if len(s) >= d], ndim - d, ())
            for d in range(ndim, 0, -1)
        )
    except ValueError:
        raise ValueError(f"{what}: the index arrays of shapes {list(shapes)} do not broadcast") from None


def _symbolic_broadcast(shapes: Sequence[tuple]) -> tuple:
    """The broadcast of run-time shapes: per dimension, the first length that is not 1."""
    ndim = max((len(s) for s in shapes), default=0)
    out = []
    for d in range(ndim, 0, -1):
        acc: Any = 1
        for s in shapes:
            if len(s) >= d:
                n = s[len(s) - d]
                if isinstance(acc, (int, np.integer)) and acc == 1:
                    acc = n
                elif not (isinstance(n, (int, np.integer)) and n == 1):
                    acc = switch(eq(acc, 1), n, acc)
        out.append(acc)
    return tuple(out)


def _no_grads(node_inputs: Sequence[Variable]) -> list:
    return [disconnected_type() for _ in node_inputs]


# --- RavelMultiIndex -------------------------------------------------------------------------


class RavelMultiIndex(Op):
    """Flat indices into an array of shape ``dims`` from one index array per dimension
    (``numpy.ravel_multi_index``): ``RavelMultiIndex(mode, order)(*multi_index, dims)``.

    The index arrays broadcast against each other. ``mode`` says what an index out of
    range does (``"raise"``: an error; ``"wrap"``, ``"clip"``), one for all dimensions or
    a tuple of one per dimension; ``order`` is ``"C"`` (row-major) or ``"F"``.
    """

    __props__ = ("mode", "order")

    def __init__(self, mode: str | Sequence[str] = "raise", order: str = "C"):
        modes = (mode,) if isinstance(mode, str) else tuple(mode)
        if not modes or any(m not in _MODES for m in modes):
            raise ValueError(
                f"RavelMultiIndex: mode must be one of {_MODES} or a tuple of them, got {mode!r}"
            )
        self.mode = mode if isinstance(mode, str) else modes
        self.order = _check_order(order, "RavelMultiIndex")

    def make_node(self, *inputs: Any) -> Apply:
        if len(inputs) < 2:
            raise TypeError(f"{self}: expected the index arrays and dims, got {len(inputs)} input(s)")
        *index, dims = inputs
        index = [_as_index(i, f"{self}: index {k}") for k, i in enumerate(index)]
        dims = _as_dims(dims, str(self))
        n = dims.type.shape[0]
        if n is not None and n != len(index):
            raise ValueError(f"{self}: dims has {n} entries but {len(index)} index arrays were given")
        if not isinstance(self.mode, str) and len(self.mode) != len(index):
            raise ValueError(f"{self}: {len(self.mode)} modes for {len(index)} index arrays")
        shape = _static_broadcast([i.type.shape for i in index], str(self))
        return Apply(self, [*index, dims], [TensorType("int64", shape)()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        *index, dims = inputs
        if len(dims) != len(index):
            raise ValueError(
                f"{self}: dims {tuple(dims)} has {len(dims)} entries for {len(index)} index arrays"
            )
        try:
            flat = np.ravel_multi_index(
                tuple(np.asarray(i, dtype=np.intp) for i in index),
                tuple(int(d) for d in dims),
                mode=self.mode,
                order=self.order,
            )
        except ValueError as err:
            raise ValueError(f"{self}: {err} (dims {tuple(int(d) for d in dims)})") from None
        output_storage[0][0] = np.asarray(flat, dtype="int64")

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list[tuple]:
        static = node.outputs[0].type.shape
        computed = _symbolic_broadcast(shapes[:-1])
        return [tuple(s if s is not None else c for s, c in zip(static, computed))]

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        return [[False] for _ in node.inputs]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        """No gradient: the inputs are positions."""
        return _no_grads(inputs)

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], eval_points: Sequence[Variable]
    ) -> list:
        return [disconnected_type()]

    def __str__(self) -> str:
        return f"RavelMultiIndex{{mode={self.mode!r}, order={self.order!r}}}"


@register_batch_rule(RavelMultiIndex)
def _batch_ravel_multi_index(op: RavelMultiIndex, node: Apply, args: list, flags: list) -> list | None:
    *index, dims = args
    if flags[-1]:
        return None  # a batch of shapes: no single call does it
    ndim = node.outputs[0].type.ndim
    lined_up = []
    for i, batched in zip(index, flags[:-1]):
        core = i.type.ndim - 1 if batched else i.type.ndim
        if batched and core < ndim:  # the batch axis first, then room to broadcast the core
            order = [0, *["x"] * (ndim - core), *range(1, core + 1)]
            i = DimShuffle(input_ndim=i.type.ndim, new_order=order)(i)
        lined_up.append(i)
    return [(op(*lined_up, dims), True)]


# --- UnravelIndex ----------------------------------------------------------------------------


class UnravelIndex(Op):
    """One index array per dimension of an array of shape ``dims`` from flat indices into
    it (``numpy.unravel_index``): ``UnravelIndex(order)(indices, dims)`` has one output per
    entry of ``dims`` (whose length must be known statically), each shaped like
    ``indices``. An index out of range is an error.
    """

    __props__ = ("order",)

    def __init__(self, order: str = "C"):
        self.order = _check_order(order, "UnravelIndex")

    def make_node(self, indices: Any, dims: Any) -> Apply:
        indices = _as_index(indices, f"{self}: indices")
        dims = _as_dims(dims, str(self))
        n = dims.type.shape[0]
        if n is None:
            raise ValueError(
                f"{self}: the length of dims {dims} is not known statically; it sets the number of outputs"
            )
        out_type = TensorType("int64", indices.type.shape)
        return Apply(self, [indices, dims], [out_type() for _ in range(n)])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        indices, dims = inputs
        shape = tuple(int(d) for d in dims)
        if len(shape) != len(node.outputs):
            raise ValueError(f"{self}: dims {shape} has {len(shape)} entries, expected {len(node.outputs)}")
        try:
            result = np.unravel_index(np.asarray(indices, dtype=np.intp), shape, order=self.order)
        except ValueError as err:
            raise ValueError(f"{self}: {err} (dims {shape})") from None
        for cell, r in zip(output_storage, result):
            cell[0] = np.asarray(r, dtype="int64")

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list[tuple]:
        return [tuple(shapes[0])] * len(node.outputs)

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        return [[False] * len(node.outputs) for _ in node.inputs]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        """No gradient: the inputs are positions."""
        return _no_grads(inputs)

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], eval_points: Sequence[Variable]
    ) -> list:
        return [disconnected_type() for _ in outputs]

    def __str__(self) -> str:
        return f"UnravelIndex{{order={self.order!r}}}"


@register_batch_rule(UnravelIndex)
def _batch_unravel_index(op: UnravelIndex, node: Apply, args: list, flags: list) -> list | None:
    if flags[1]:
        return None
    return [(o, True) for o in op(*args, return_list=True)]


def ravel_multi_index(
    multi_index: Sequence[Any], dims: Any, mode: Any = "raise", order: str = "C"
) -> Variable:
    """Flat indices (int64) into an array of shape ``dims`` from the tuple of index arrays
    ``multi_index`` (``numpy.ravel_multi_index``; see :class:`RavelMultiIndex`).

    >>> import arignote.tensor as pt
    >>> pt.ravel_multi_index(([1, 2], [3, 0]), (3, 4)).eval()
    array([7, 8])
    """
    if not isinstance(multi_index, (list, tuple)):
        raise TypeError(
            f"ravel_multi_index: multi_index must be a tuple or list of index arrays, got {type(multi_index).__name__}"
        )
    return RavelMultiIndex(mode, order)(*multi_index, dims)


def unravel_index(indices: Any, dims: Any, order: str = "C") -> tuple[Variable, ...]:
    """One int64 index array per dimension of an array of shape ``dims`` from the flat
    ``indices`` (``numpy.unravel_index``; see :class:`UnravelIndex`)."""
    return tuple(UnravelIndex(order)(indices, dims, return_list=True))


# --- triangles -------------------------------------------------------------------------------


def tril_indices(n: Any, k: Any = 0, m: Any = None) -> tuple[Variable, Variable]:
    """The row and column indices (int64 vectors) of the lower triangle, diagonal ``k``
    and below, of an ``n x m`` matrix (``m`` defaults to ``n``), as ``numpy.tril_indices``.

    >>> import arignote.tensor as pt
    >>> [i.eval() for i in pt.tril_indices(2)]
    [array([0, 1, 1]), array([0, 0, 1])]
    """
    return nonzero(tri(n, m, k, dtype="bool"))  # type: ignore[return-value]


def triu_indices(n: Any, k: Any = 0, m: Any = None) -> tuple[Variable, Variable]:
    """The row and column indices (int64 vectors) of the upper triangle, diagonal ``k``
    and above, of an ``n x m`` matrix (``m`` defaults to ``n``), as ``numpy.triu_indices``."""
    return nonzero(invert(tri(n, m, k - 1, dtype="bool")))  # type: ignore[return-value]


def _matrix_lengths(a: Any, what: str) -> tuple[Any, Any]:
    a = as_tensor_variable(a)
    if a.type.ndim != 2:
        raise ValueError(f"{what}: the input must be 2-d, got {a} of Type {a.type}")
    return shape_tuple(a)  # type: ignore[return-value]


def tril_indices_from(a: Any, k: Any = 0) -> tuple[Variable, Variable]:
    """:func:`tril_indices` for the shape of the matrix ``a``."""
    n, m = _matrix_lengths(a, "tril_indices_from")
    return tril_indices(n, k, m)


def triu_indices_from(a: Any, k: Any = 0) -> tuple[Variable, Variable]:
    """:func:`triu_indices` for the shape of the matrix ``a``."""
    n, m = _matrix_lengths(a, "triu_indices_from")
    return triu_indices(n, k, m)


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
            return linspace(start, s.stop, num, dtype=config.floatX)
        return arange(start, s.stop, step)

    def __getitem__(self, key: Any) -> Any:
        slices = key if isinstance(key, tuple) else (key,)
        ranges = [self._range(s) for s in slices]
        if len(ranges) == 1:
            return ranges[0]
        dtype = upcast(*(r.type.dtype for r in ranges))
        k = len(ranges)
        shaped = [
            expand_dims(cast(r, dtype), tuple(j for j in range(k) if j != i)) for i, r in enumerate(ranges)
        ]
        if self.sparse:
            return shaped
        full = [dim_length(r, 0) for r in ranges]
        return [alloc(r, *full) for r in shaped]


mgrid = _NdGrid(sparse=False)


ogrid = _NdGrid(sparse=True)
