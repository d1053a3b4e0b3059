"""Making new arrays: ``Alloc`` (a value broadcast to a shape), ``Eye``, ``Repeat``, and
the NumPy-style helpers built on them (``zeros``, ``ones``, ``full``, ``*_like``, ``eye``,
``identity_like``, ``tile``, ``repeat``, ``tri``, ``tril``, ``triu``). Evenly spaced
values (``arange``, ``linspace``...) are in :mod:`arignote.tensor.ranges`.

Lengths are 0-d integer tensors (Python ints, NumPy integers or symbolic scalars). A
length known when the graph is built becomes a static length of the output's Type.

>>> import arignote.tensor as pt
>>> n = pt.lscalar("n")
>>> pt.zeros((n, 3)).type
TensorType(float64, shape=(None, 3))
>>> pt.tri(2).eval()
array([[1., 0.],
       [1., 1.]])
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from arignote.configdefaults import config
from arignote.graph.basic import Apply, Constant, Variable
from arignote.graph.null_type import disconnected_type, is_disconnected
from arignote.graph.op import Op
from arignote.graph.replace import register_batch_rule
from arignote.tensor.axes import expand_dims
from arignote.tensor.conversion import (
    as_tensor_variable,
    constant,
)
from arignote.tensor.elemwise import DimShuffle, normalize_axis
from arignote.tensor.ranges import arange
from arignote.tensor.reductions import sum as tensor_sum
from arignote.tensor.shape import (
    _as_length,
    _grad_like,
    _is_int_dtype,
    _static_int,
    batch_length,
    flatten,
    reshape,
    shape_i,
    shape_tuple,
)
from arignote.tensor.type import TensorType
from arignote.tensor.ufuncs import cast, fill, ge, mul, neg, switch

__all__ = [
    "Alloc",
    "alloc",
    "zeros",
    "ones",
    "full",
    "zeros_like",
    "ones_like",
    "full_like",
    "Eye",
    "eye",
    "identity_like",
    "Repeat",
    "repeat",
    "tile",
    "tri",
    "tril",
    "triu",
]


# --- lengths -------------------------------------------------------------------------------


def _mul_lengths(a: Any, b: Any) -> Variable:
    """``a * b`` for lengths (ints or 0-d integer Variables), computed in int64."""
    return mul(cast(as_tensor_variable(a), "int64"), cast(as_tensor_variable(b), "int64"))


def _check_non_negative(what: str, lengths: Sequence[Variable]) -> list[int | None]:
    static = [_static_int(s) for s in lengths]
    for i, s in enumerate(static):
        if s is not None and s < 0:
            raise ValueError(f"{what}: length {i} is {s}; lengths must be non-negative")
    return static


def _shape_entries(shape: Any, what: str) -> list:
    """The entries of a shape given as an int, a sequence, or a 0-d / 1-d tensor."""
    if isinstance(shape, Variable):
        shape = as_tensor_variable(shape)
        if shape.type.ndim == 0:
            return [shape]
        if shape.type.ndim != 1:
            raise TypeError(f"{what}: the shape must be an int, a sequence or a vector, got {shape.type}")
        from arignote.tensor.join import _unpack_vector

        n = shape.type.shape[0]
        if n is None:
            raise ValueError(
                f"{what}: the length of the shape vector {shape} is not known statically; "
                "use specify_shape(shape, (ndim,)) or pass a tuple"
            )
        return _unpack_vector(shape, n)
    if np.ndim(shape) == 0:
        return [shape]
    return list(shape)


# --- Alloc ---------------------------------------------------------------------------------


class Alloc(Op):
    """A new array of the shape ``shape`` filled with ``value`` (broadcast NumPy-style).

    ``Alloc()(value, *shape)``: ``value`` is right-aligned with the output dimensions;
    where its length is not statically 1 it must equal the output length (a length of 1
    that the Type does not declare is not broadcast at run time, as in ``Elemwise``).

    >>> import arignote.tensor as pt
    >>> v = pt.dvector("v")
    >>> y = pt.alloc(v, 2, 3)
    >>> y.type
    TensorType(float64, shape=(2, 3))
    >>> y.eval({v: [1.0, 2.0, 3.0]})
    array([[1., 2., 3.],
           [1., 2., 3.]])
    """

    __props__ = ()

    #: outputs with more elements than this are not constant-folded (see do_constant_folding)
    fold_limit = 1 << 12

    def make_node(self, value: Any, *shape: Any) -> Apply:
        value = as_tensor_variable(value)
        lengths = [_as_length(s, f"Alloc: length {i}") for i, s in enumerate(shape)]
        if value.type.ndim > len(lengths):
            raise TypeError(
                f"Alloc: the value {value} of Type {value.type} has {value.type.ndim} dimensions, "
                f"more than the {len(lengths)} lengths given"
            )
        static = _check_non_negative("Alloc", lengths)
        new_dims = len(lengths) - value.type.ndim
        out_shape = list(static)
        for j, v_len in enumerate(value.type.shape):
            d = new_dims + j
            if static[d] is None:
                if v_len != 1:
                    out_shape[d] = v_len
            elif v_len is not None and v_len != 1 and v_len != static[d]:
                raise ValueError(
                    f"Alloc: the value {value} of Type {value.type} has length {v_len} at its "
                    f"dimension {j}, which cannot be broadcast to the output length {static[d]} "
                    f"(output dimension {d})"
                )
        return Apply(self, [value, *lengths], [TensorType(value.type.dtype, tuple(out_shape))()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        v, *sh = inputs
        shape = tuple(int(s) for s in sh)
        bad = [d for d, s in enumerate(shape) if s < 0]
        if bad:
            raise ValueError(
                f"Alloc: negative length {shape[bad[0]]} for output dimension {bad[0]} (shape {shape})"
            )
        v_static = node.inputs[0].type.shape
        offset = len(shape) - v.ndim
        for j, (v_len, static) in enumerate(zip(v.shape, v_static)):
            out_len = shape[offset + j]
            if v_len != out_len and static != 1:
                hint = ""
                if v_len == 1:
                    hint = (
                        " A length of 1 broadcasts only where the value's Type says so statically; "
                        "use specify_shape or a broadcastable value."
                    )
                raise ValueError(
                    f"Alloc: the value of shape {v.shape} does not fit the shape {shape}: its dimension "
                    f"{j} has length {v_len}, the output length is {out_len}.{hint}"
                )
        cell = output_storage[0]
        out = cell[0]
        if out is not None and out.shape == shape and out.dtype == v.dtype and out.flags.writeable:
            out[...] = v
        elif v.size == 1 and not v.any():
            cell[0] = np.zeros(shape, dtype=v.dtype)
        else:
            out = np.empty(shape, dtype=v.dtype)
            out[...] = v
            cell[0] = out

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list[tuple]:
        static = node.outputs[0].type.shape
        return [tuple(s if s is not None else length for s, length in zip(static, node.inputs[1:]))]

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        return [[True], *([False] for _ in node.inputs[1:])]

    def do_constant_folding(self, fgraph: Any, node: Apply) -> bool:
        """Fold only small outputs that no lifting rewrite or graph output wants as an Alloc.

        A big folded constant costs memory for the whole life of the function, and a
        constant graph output is copied on every call; Elemwise, DimShuffle, Alloc and
        Join clients can absorb the Alloc instead.
        """
        out = node.outputs[0]
        if fgraph is not None:
            from arignote.graph.fg import Output
            from arignote.tensor.elemwise import DimShuffle, Elemwise
            from arignote.tensor.join import Join

            for client, _ in getattr(fgraph, "clients", {}).get(out, ()):
                if isinstance(client.op, (Output, Elemwise, DimShuffle, Alloc, Join)):
                    return False
        if any(s is None for s in out.type.shape):
            return False
        return math.prod(out.type.shape) <= self.fold_limit

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        """The gradient summed over the dimensions ``value`` was broadcast along (the new
        leading ones and its static 1s); the lengths only shape the output: disconnected."""
        value, *lengths = inputs
        g = as_tensor_variable(output_grads[0])
        lead = g.type.ndim - value.type.ndim
        if lead:
            g = tensor_sum(g, axis=tuple(range(lead)))
        ones = [d for d, (vs, gs) in enumerate(zip(value.type.shape, g.type.shape)) if vs == 1 and gs != 1]
        if ones:
            g = tensor_sum(g, axis=ones, keepdims=True)
        return [_grad_like(g, value), *(disconnected_type() for _ in lengths)]

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], eval_points: Sequence[Variable]
    ) -> list:
        if is_disconnected(eval_points[0]):
            return [disconnected_type()]
        return [self(eval_points[0], *inputs[1:])]


alloc = Alloc()


def full(shape: Any, fill_value: Any, dtype: Any = None) -> Variable:
    """An array of ``shape`` filled with ``fill_value`` (its dtype unless ``dtype``).

    >>> import arignote.tensor as pt
    >>> pt.full((2,), 7).eval()
    array([7, 7], dtype=int8)
    """
    fill_value = as_tensor_variable(fill_value)
    if dtype is not None:
        fill_value = cast(fill_value, dtype)
    return alloc(fill_value, *_shape_entries(shape, "full"))


def zeros(shape: Any, dtype: Any = None) -> Variable:
    """An array of ``shape`` filled with zeros (``floatX`` unless ``dtype``)."""
    dtype = config.floatX if dtype is None else dtype
    return alloc(constant(np.zeros((), dtype=dtype)), *_shape_entries(shape, "zeros"))


def ones(shape: Any, dtype: Any = None) -> Variable:
    """An array of ``shape`` filled with ones (``floatX`` unless ``dtype``)."""
    dtype = config.floatX if dtype is None else dtype
    return alloc(constant(np.ones((), dtype=dtype)), *_shape_entries(shape, "ones"))


def full_like(a: Any, fill_value: Any, dtype: Any = None) -> Variable:
    """An array shaped like ``a`` filled with ``fill_value``.

    As in PyTensor, the dtype is ``fill_value``'s (not ``a``'s) unless ``dtype`` is given.
    """
    a = as_tensor_variable(a)
    fill_value = as_tensor_variable(fill_value)
    if dtype is not None:
        fill_value = cast(fill_value, dtype)
    return fill(a, fill_value)


def zeros_like(model: Any, dtype: Any = None, opt: bool = False) -> Variable:
    """Zeros shaped like ``model`` (its dtype unless ``dtype``).

    ``opt=True`` returns a plain constant when that has ``model``'s Type (0-d models).
    """
    model = as_tensor_variable(model)
    zero = constant(np.zeros((), dtype=model.type.dtype if dtype is None else dtype))
    if opt and zero.type == model.type:
        return zero
    return fill(model, zero)


def ones_like(model: Any, dtype: Any = None, opt: bool = False) -> Variable:
    """Ones shaped like ``model`` (its dtype unless ``dtype``)."""
    model = as_tensor_variable(model)
    one = constant(np.ones((), dtype=model.type.dtype if dtype is None else dtype))
    if opt and one.type == model.type:
        return one
    return fill(model, one)


# --- Eye -----------------------------------------------------------------------------------


class Eye(Op):
    """An ``n`` x ``m`` matrix of ``dtype`` with ones on diagonal ``k`` (``numpy.eye``).

    >>> import arignote.tensor as pt
    >>> pt.eye(2, 3, k=1, dtype="int32").eval()
    array([[0, 1, 0],
           [0, 0, 1]], dtype=int32)
    """

    __props__ = ("dtype",)

    def __init__(self, dtype: Any = None):
        self.dtype = np.dtype(config.floatX if dtype is None else dtype).name

    def make_node(self, n: Any, m: Any, k: Any) -> Apply:
        n = _as_length(n, "Eye: the number of rows n")
        m = _as_length(m, "Eye: the number of columns m")
        k = _as_length(k, "Eye: the diagonal k")
        static = _check_non_negative("Eye", [n, m])
        return Apply(self, [n, m, k], [TensorType(self.dtype, tuple(static))()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        n, m, k = (int(v) for v in inputs)
        if n < 0 or m < 0:
            raise ValueError(f"Eye: the shape ({n}, {m}) has a negative length")
        output_storage[0][0] = np.eye(n, m, k, dtype=self.dtype)

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list[tuple]:
        static = node.outputs[0].type.shape
        return [tuple(s if s is not None else v for s, v in zip(static, node.inputs[:2]))]

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        return [[False], [False], [False]]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        """No gradient: the integer inputs choose the shape and the diagonal, and the values
        are constant ones and zeros."""
        return [disconnected_type() for _ in inputs]

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], eval_points: Sequence[Variable]
    ) -> list:
        return [disconnected_type()]


def eye(n: Any, m: Any = None, k: Any = 0, dtype: Any = None) -> Variable:
    """A 2-d array with ones on diagonal ``k`` and zeros elsewhere (``floatX`` by default)."""
    return Eye(dtype)(n, n if m is None else m, k)


def identity_like(x: Any, dtype: Any = None) -> Variable:
    """An identity matrix with the first two lengths of ``x`` (``x``'s dtype by default)."""
    x = as_tensor_variable(x)
    if x.type.ndim < 2:
        raise ValueError(f"identity_like needs a tensor of at least 2 dimensions, got {x} of Type {x.type}")
    rows, cols = shape_tuple(x)[:2]
    return eye(rows, cols, 0, dtype=x.type.dtype if dtype is None else dtype)


# --- ARange --------------------------------------------------------------------------------


# --- Repeat --------------------------------------------------------------------------------


class Repeat(Op):
    """Each slice of ``x`` along ``axis`` repeated ``repeats[i]`` times (``numpy.repeat``
    with a vector of repeats, one per slice).

    >>> import numpy as np
    >>> import arignote.tensor as pt
    >>> x = pt.dmatrix("x")
    >>> y = pt.repeat(x, [2, 1], axis=0)
    >>> y.eval({x: np.array([[1.0, 2.0], [3.0, 4.0]])})
    array([[1., 2.],
           [1., 2.],
           [3., 4.]])
    """

    __props__ = ("axis",)

    def __init__(self, axis: int):
        if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool) or axis < 0:
            raise TypeError(
                f"Repeat: axis must be a non-negative int (use repeat() for others), got {axis!r}"
            )
        self.axis = int(axis)

    def make_node(self, x: Any, repeats: Any) -> Apply:
        x = as_tensor_variable(x)
        repeats = as_tensor_variable(repeats)
        if self.axis >= x.type.ndim:
            raise np.exceptions.AxisError(
                f"{self}: axis {self.axis} is out of range for {x} of Type {x.type}"
            )
        if repeats.type.ndim != 1 or not _is_int_dtype(repeats.type.dtype):
            raise TypeError(
                f"{self}: repeats must be an integer vector, got {repeats} of Type {repeats.type}"
            )
        if repeats.type.dtype == "uint64":
            raise TypeError(f"{self}: repeats of dtype uint64 are not supported; cast them to int64")
        if repeats.type.dtype != "int64":
            repeats = cast(repeats, "int64")
        x_len, n_rep = x.type.shape[self.axis], repeats.type.shape[0]
        if x_len is not None and n_rep is not None and n_rep not in (1, x_len):
            raise ValueError(
                f"{self}: repeats has {n_rep} entries but {x} of Type {x.type} has length {x_len} "
                f"on axis {self.axis} (one entry per slice, or a single entry)"
            )
        out_len = None
        if isinstance(repeats, Constant):
            data = repeats.data
            if (data < 0).any():
                raise ValueError(f"{self}: repeats must be non-negative, got {data.tolist()}")
            if n_rep != 1:
                out_len = int(data.sum())
            elif x_len is not None:
                out_len = int(data[0]) * x_len
        shape = list(x.type.shape)
        shape[self.axis] = out_len
        return Apply(self, [x, repeats], [TensorType(x.type.dtype, tuple(shape))()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        x, repeats = inputs
        length = x.shape[self.axis]
        if len(repeats) != length and node.inputs[1].type.shape[0] != 1:
            raise ValueError(
                f"{self}: repeats has {len(repeats)} entries, but the input has length {length} on "
                f"axis {self.axis} (shape {x.shape})"
            )
        if (repeats < 0).any():
            raise ValueError(f"{self}: repeats must be non-negative, got {repeats.tolist()}")
        output_storage[0][0] = np.repeat(x, repeats, axis=self.axis)

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list[tuple]:
        out = list(shapes[0])
        repeats = node.inputs[1]
        total = tensor_sum(repeats)
        if repeats.type.shape[0] == 1:
            total = total * out[self.axis]
        static = node.outputs[0].type.shape[self.axis]
        out[self.axis] = static if static is not None else total
        return [tuple(out)]

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        return [[True], [False]]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        """Each slice of ``x`` gets the sum of the gradient over its copies; ``repeats``
        only sets how many copies there are (disconnected)."""
        x, repeats = inputs
        g = as_tensor_variable(output_grads[0])
        gx = RepeatGrad(self.axis)(g, repeats, shape_tuple(x)[self.axis])
        return [_grad_like(gx, x), disconnected_type()]

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], eval_points: Sequence[Variable]
    ) -> list:
        if is_disconnected(eval_points[0]):
            return [disconnected_type()]
        return [self(eval_points[0], inputs[1])]


class RepeatGrad(Op):
    """The transpose of :class:`Repeat`: ``RepeatGrad(axis)(g, repeats, n)`` sums each run of
    ``repeats[i]`` consecutive slices of ``g`` along ``axis`` into slice ``i`` of a result
    of length ``n`` there (``repeats`` of static length 1 stands for ``n`` equal entries).
    It is the pullback of ``Repeat``, and ``Repeat`` is its pullback.
    """

    __props__ = ("axis",)

    def __init__(self, axis: int):
        self.axis = int(axis)

    def make_node(self, g: Any, repeats: Any, n: Any) -> Apply:
        g = as_tensor_variable(g)
        repeats = as_tensor_variable(repeats)
        n = _as_length(n, f"{self}: the length n")
        if self.axis >= g.type.ndim:
            raise np.exceptions.AxisError(
                f"{self}: axis {self.axis} is out of range for {g} of Type {g.type}"
            )
        if repeats.type.ndim != 1 or not _is_int_dtype(repeats.type.dtype):
            raise TypeError(
                f"{self}: repeats must be an integer vector, got {repeats} of Type {repeats.type}"
            )
        shape = list(g.type.shape)
        shape[self.axis] = _static_int(n)
        return Apply(self, [g, repeats, n], [TensorType(g.type.dtype, tuple(shape))()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        g, repeats, n = inputs
        n = int(n)
        repeats = np.asarray(repeats, dtype="int64")
        if node.inputs[1].type.shape[0] == 1:  # one entry for every slice, as in Repeat
            repeats = np.full(n, repeats[0], dtype="int64")
        if repeats.shape[0] != n or int(repeats.sum()) != g.shape[self.axis]:
            raise ValueError(
                f"{self}: repeats {repeats.tolist()} do not fit a gradient of shape {g.shape} "
                f"for {n} slices on axis {self.axis}"
            )
        shape = list(g.shape)
        shape[self.axis] = n
        out = np.zeros(shape, dtype=g.dtype)
        filled = np.flatnonzero(repeats)  # slices with at least one copy
        if filled.size:
            starts = (np.cumsum(repeats) - repeats)[filled]
            where: list = [slice(None)] * g.ndim
            where[self.axis] = filled
            out[tuple(where)] = np.add.reduceat(g, starts, axis=self.axis)
        output_storage[0][0] = out

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list[tuple]:
        out = list(shapes[0])
        out[self.axis] = node.inputs[2]
        return [tuple(out)]

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        return [[True], [False], [False]]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        g, repeats, _ = inputs
        h = as_tensor_variable(output_grads[0])
        return [_grad_like(Repeat(self.axis)(h, repeats), g), disconnected_type(), disconnected_type()]

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], eval_points: Sequence[Variable]
    ) -> list:
        if is_disconnected(eval_points[0]):
            return [disconnected_type()]
        return [self(eval_points[0], *inputs[1:])]

    def __str__(self) -> str:
        return f"RepeatGrad{{axis={self.axis}}}"


def repeat(a: Any, repeats: Any, axis: int | None = None) -> Variable:
    """``numpy.repeat``: ``repeats`` (a scalar, or one entry per slice) copies of each slice
    of ``a`` along ``axis`` (of the flattened ``a`` when ``axis`` is None)."""
    a = as_tensor_variable(a)
    if axis is None:
        a = flatten(a)
        axis = 0
    else:
        axis = normalize_axis(axis, a.type.ndim)[0]  # type: ignore[index]
    repeats = as_tensor_variable(repeats)
    if not _is_int_dtype(repeats.type.dtype) or repeats.type.dtype == "uint64":
        raise TypeError(f"repeat: repeats must be integers, got {repeats} of Type {repeats.type}")
    if repeats.type.ndim > 1:
        raise ValueError(
            f"repeat: repeats must be a scalar or a vector, got {repeats} of Type {repeats.type}"
        )
    if repeats.type.shape == (1,):
        repeats = repeats.dimshuffle(())
    if repeats.type.ndim == 1:
        return Repeat(axis)(a, repeats)
    static = _static_int(repeats)
    if static is not None and static < 0:
        raise ValueError(f"repeat: repeats must be non-negative, got {static}")
    lengths = list(shape_tuple(a))
    value = expand_dims(a, axis + 1)
    target = [*lengths[: axis + 1], repeats, *lengths[axis + 1 :]]
    if static is not None and isinstance(lengths[axis], int):
        merged: Any = lengths[axis] * static
    else:
        merged = _mul_lengths(lengths[axis], repeats)
    return reshape(alloc(value, *target), [*lengths[:axis], merged, *lengths[axis + 1 :]])


def tile(A: Any, reps: Any) -> Variable:
    """``numpy.tile``: ``A`` repeated ``reps[d]`` times along each dimension ``d``.

    ``reps`` is an int, a sequence of ints / 0-d integer Variables, or an integer vector
    of static length. The shorter of ``A``'s shape and ``reps`` is padded with 1s on the
    left.

    >>> import numpy as np
    >>> import arignote.tensor as pt
    >>> pt.tile(np.array([1, 2]), (2, 2)).eval()
    array([[1, 2, 1, 2],
           [1, 2, 1, 2]])
    """
    A = as_tensor_variable(A)
    entries = _shape_entries(reps, "tile")
    reps_ = [_as_length(r, f"tile: reps[{i}]") for i, r in enumerate(entries)]
    static_reps = [_static_int(r) for r in reps_]
    for i, s in enumerate(static_reps):
        if s is not None and s < 0:
            raise ValueError(f"tile: reps[{i}] is {s}; repetitions must be non-negative")
    out_ndim = max(len(reps_), A.type.ndim)
    reps_all: list = [1] * (out_ndim - len(reps_)) + [
        s if s is not None else r for s, r in zip(static_reps, reps_)
    ]
    if A.type.ndim < out_ndim:
        A = expand_dims(A, tuple(range(out_ndim - A.type.ndim)))
    lengths = list(shape_tuple(A))
    value = expand_dims(A, tuple(range(0, 2 * out_ndim, 2)))
    interleaved = [x for pair in zip(reps_all, lengths) for x in pair]
    tiled = [
        r * n if isinstance(r, int) and isinstance(n, int) else _mul_lengths(r, n)
        for r, n in zip(reps_all, lengths)
    ]
    return reshape(alloc(value, *interleaved), tiled)


# --- triangles -----------------------------------------------------------------------------


def tri(N: Any, M: Any = None, k: Any = 0, dtype: Any = None) -> Variable:
    """An ``N`` x ``M`` array with ones at and below diagonal ``k`` (``numpy.tri``).

    >>> import arignote.tensor as pt
    >>> pt.tri(3, 2, dtype="int8").eval()
    array([[1, 0],
           [1, 1],
           [1, 1]], dtype=int8)
    """
    dtype = config.floatX if dtype is None else dtype
    M = N if M is None else M
    N, M = _as_length(N, "tri: N"), _as_length(M, "tri: M")
    k = _as_length(k, "tri: k")
    static_m, static_k = _static_int(M), _static_int(k)
    if static_m is not None and static_k is not None:
        # Python ints keep the column count static.
        cols = arange(-static_k, static_m - static_k)
    else:
        k64 = cast(k, "int64")
        cols = arange(neg(k64), cast(M, "int64") - k64)
    mask = ge(expand_dims(arange(_static_or(N)), 1), expand_dims(cols, 0))
    return cast(mask, dtype)


def _static_or(v: Variable) -> Any:
    s = _static_int(v)
    return v if s is None else s


def _triangle(m: Any, k: Any, what: str, lower: bool) -> Variable:
    m = as_tensor_variable(m)
    if m.type.ndim == 0:
        raise ValueError(f"{what} needs a tensor of at least 1 dimension, got {m} of Type {m.type}")
    # a vector of length n is NumPy's n x n matrix with that vector on every row
    rows, cols = shape_tuple(m)[-2:] if m.type.ndim >= 2 else shape_tuple(m) * 2
    zero = constant(np.zeros((), dtype=m.type.dtype))
    if lower:
        return switch(tri(rows, cols, k, dtype="bool"), m, zero)
    below = k - 1 if isinstance(k, (int, np.integer)) else as_tensor_variable(k) - 1
    return switch(tri(rows, cols, below, dtype="bool"), zero, m)


def tril(m: Any, k: Any = 0) -> Variable:
    """``m`` with the elements above diagonal ``k`` set to zero (over the last two axes; a
    vector is first repeated into a square matrix, as ``numpy.tril`` does)."""
    return _triangle(m, k, "tril", lower=True)


def triu(m: Any, k: Any = 0) -> Variable:
    """``m`` with the elements below diagonal ``k`` set to zero (over the last two axes; a
    vector is first repeated into a square matrix, as ``numpy.triu`` does)."""
    return _triangle(m, k, "triu", lower=False)


# --- batching rules (vectorize_graph's node step) ---------------------------------------


@register_batch_rule(Alloc)
def _batch_alloc(op: Op, node: Apply, args: list, flags: list) -> list | None:
    value, *shape = args
    if any(flags[1:]):
        return None
    vnd = value.type.ndim - 1
    pad = len(shape) - vnd
    if pad:  # line the value's dimensions up with the output's, after the batch one
        value = DimShuffle(input_ndim=vnd + 1, new_order=[0, *["x"] * pad, *range(1, vnd + 1)])(value)
    return [(alloc(value, batch_length(value), *shape), True)]


def broadcast_batch(v: Variable, n: Any) -> Variable:
    """``v`` repeated ``n`` times along a new leading (batch) dimension."""
    shape = [s if s is not None else shape_i(v, d) for d, s in enumerate(v.type.shape)]
    return alloc(v, n, *shape)
