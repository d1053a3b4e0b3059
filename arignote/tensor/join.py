"""Joining and splitting tensors: ``Join`` (``join``, ``concatenate``, ``stack``,
``horizontal_stack``, ``vertical_stack``) and ``Split`` (``split``).

The join axis is an input of the node (a 0-d integer tensor), as in PyTensor; a constant
axis gives the output a static shape where the inputs' static lengths allow it. Lengths
on the other axes must agree: a static 1 does not broadcast against another length.

>>> import numpy as np
>>> import arignote.tensor as pt
>>> x = pt.tensor("x", dtype="float64", shape=(2, None))
>>> y = pt.tensor("y", dtype="float32", shape=(3, 4))
>>> z = pt.concatenate([x, y])
>>> z.type
TensorType(float64, shape=(5, 4))
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from arignote.graph.basic import Apply, Constant, Variable
from arignote.graph.null_type import disconnected_type, is_disconnected
from arignote.graph.op import Op
from arignote.graph.replace import register_batch_rule
from arignote.scalar.type import upcast
from arignote.tensor.alloc import broadcast_batch
from arignote.tensor.axes import expand_dims
from arignote.tensor.conversion import (
    NotScalarConstantError,
    _as_tensor_variable,
    _flatten,
    as_tensor_variable,
    constant,
    get_underlying_scalar_constant_value,
)
from arignote.tensor.elemwise import normalize_axis
from arignote.tensor.shape import (
    MakeVector,
    _grad_like,
    _zero_grad,
    batch_length,
    make_vector,
    shape_i,
)
from arignote.tensor.type import TensorType
from arignote.tensor.ufuncs import add, cast, eq, ge, lt, switch

__all__ = [
    "Join",
    "join",
    "concatenate",
    "stack",
    "horizontal_stack",
    "vertical_stack",
    "Split",
    "split",
    "stacklists",
]


def _as_axis(axis: Any, what: str) -> Variable:
    """``axis`` as a 0-d integer tensor, or a TypeError naming ``what``."""
    if isinstance(axis, (bool, np.bool_)):
        raise TypeError(f"{what}: axis must be an integer, got the bool {axis!r}")
    a = as_tensor_variable(axis)
    if a.type.ndim != 0 or np.dtype(a.type.dtype).kind not in "iu":
        raise TypeError(f"{what}: axis must be a 0-d integer, got {a} of Type {a.type}")
    return a


def _constant_axis(axis: Variable, ndim: int, what: str) -> tuple[Variable, int | None]:
    """The axis normalised to ``[0, ndim)`` when it is a constant, and its value (or None)."""
    try:
        value = int(get_underlying_scalar_constant_value(axis))
    except NotScalarConstantError:
        return axis, None
    if not -ndim <= value < ndim:
        raise np.exceptions.AxisError(f"{what}: axis {value} is out of range for {ndim}-d inputs")
    if value < 0 or not isinstance(axis, Constant):
        value %= ndim
        axis = constant(np.asarray(value, dtype=axis.type.dtype))
    return axis, value


def _runtime_axis(axis: Any, ndim: int, what: str) -> int:
    value = int(axis)
    if not -ndim <= value < ndim:
        raise np.exceptions.AxisError(f"{what}: axis {value} is out of range for {ndim}-d inputs")
    return value % ndim


def _add_lengths(lengths: Sequence[Any]) -> Any:
    """The sum of lengths: an int when all are ints, else a 0-d int64 Variable."""
    if all(isinstance(n, (int, np.integer)) for n in lengths):
        return int(np.sum(lengths, dtype="int64"))
    total = cast(as_tensor_variable(lengths[0]), "int64")
    for n in lengths[1:]:
        total = add(total, cast(as_tensor_variable(n), "int64"))
    return total


def _entry_int(v: Variable) -> int | None:
    try:
        return int(get_underlying_scalar_constant_value(v))
    except NotScalarConstantError:
        return None


# --- Join ----------------------------------------------------------------------------------


class Join(Op):
    """Concatenate tensors along an axis (``numpy.concatenate``).

    ``Join()(axis, *tensors)``: the tensors have the same number of dimensions (at least
    one) and the same lengths except on ``axis``; the output dtype is their common
    (upcast) dtype.

    >>> import numpy as np
    >>> import arignote.tensor as pt
    >>> a, b = pt.dvector("a"), pt.dvector("b")
    >>> pt.join(0, a, b).eval({a: np.array([1.0]), b: np.array([2.0, 3.0])})
    array([1., 2., 3.])
    """

    __props__ = ()

    def make_node(self, axis: Any, *tensors: Any) -> Apply:
        if not tensors:
            raise ValueError("Join: no tensors to join")
        axis = _as_axis(axis, "Join")
        tensors = tuple(as_tensor_variable(t) for t in tensors)
        for i, t in enumerate(tensors):
            if t.type.ndim == 0:
                raise TypeError(
                    f"Join: input {i} ({t}) is 0-d; only tensors of at least one dimension can be "
                    "joined (use stack for scalars)"
                )
        ndim = tensors[0].type.ndim
        for i, t in enumerate(tensors):
            if t.type.ndim != ndim:
                raise TypeError(
                    f"Join: all inputs must have the same number of dimensions; input 0 is {ndim}-d, "
                    f"input {i} ({t}) is {t.type.ndim}-d"
                )
        axis, static_axis = _constant_axis(axis, ndim, "Join")
        if static_axis is None:
            shape: list = [None] * ndim
            if len(tensors) == 1:
                shape = list(tensors[0].type.shape)
        else:
            shape = []
            for d in range(ndim):
                lengths = [t.type.shape[d] for t in tensors]
                if d == static_axis:
                    shape.append(None if None in lengths else sum(lengths))
                    continue
                known = {n for n in lengths if n is not None}
                if len(known) > 1:
                    detail = ", ".join(f"input {i} has {n}" for i, n in enumerate(lengths) if n is not None)
                    raise ValueError(
                        f"Join: the inputs must have the same length on every dimension except the "
                        f"join axis {static_axis}; on dimension {d}: {detail}"
                    )
                shape.append(known.pop() if known else None)
        dtype = upcast(*(t.type.dtype for t in tensors))
        return Apply(self, [axis, *tensors], [TensorType(dtype, tuple(shape))()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        axis, *arrays = inputs
        ndim = arrays[0].ndim
        axis = _runtime_axis(axis, ndim, "Join")
        first = arrays[0].shape
        for i, arr in enumerate(arrays[1:], 1):
            for d in range(ndim):
                if d != axis and arr.shape[d] != first[d]:
                    shapes = ", ".join(str(a.shape) for a in arrays)
                    raise ValueError(
                        f"Join: cannot join along axis {axis}: input 0 has length {first[d]} on "
                        f"dimension {d}, input {i} has {arr.shape[d]} (input shapes: {shapes})"
                    )
        output_storage[0][0] = np.concatenate(arrays, axis=axis, dtype=node.outputs[0].type.numpy_dtype)

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list[tuple]:
        axis = node.inputs[0]
        ishapes = shapes[1:]
        static = node.outputs[0].type.shape
        ndim = len(static)
        static_axis = _entry_int(axis)
        out: list = []
        for d in range(ndim):
            if static[d] is not None:
                out.append(static[d])
                continue
            total = _add_lengths([s[d] for s in ishapes])
            # on the other dimensions, any input's length will do: a static one if there is one
            other = next((s[d] for s in ishapes if isinstance(s[d], (int, np.integer))), ishapes[0][d])
            if static_axis is not None:
                out.append(total if d == static_axis % ndim else other)
            else:
                join_dim = switch(ge(axis, 0), axis, axis + ndim)
                out.append(switch(eq(join_dim, d), total, other))
        return [tuple(out)]

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        return [[False], *([True] for _ in node.inputs[1:])]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        """The output gradient split along the axis by the inputs' lengths; the axis only
        chooses where the pieces go (disconnected)."""
        axis, *tensors = inputs
        g = as_tensor_variable(output_grads[0])
        ndim = g.type.ndim
        static_axis = _entry_int(axis)
        sizes: list
        if static_axis is not None:
            sizes = [shape_i(t, static_axis % ndim) for t in tensors]
        else:  # the length of each input on a symbolic axis: pick it out of its shape
            join_dim = switch(lt(axis, 0), axis + ndim, axis)
            sizes = []
            for t in tensors:
                size: Any = constant(np.int64(0))
                for d in range(ndim):
                    size = add(size, switch(eq(join_dim, d), shape_i(t, d), 0))
                sizes.append(size)
        pieces = Split(len(tensors))(g, axis, sizes, return_list=True)
        return [disconnected_type(), *(_grad_like(p, t) for p, t in zip(pieces, tensors))]

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], eval_points: Sequence[Variable]
    ) -> list:
        axis, *tensors = inputs
        evs = eval_points[1:]
        if all(is_disconnected(e) for e in evs):
            return [disconnected_type()]
        parts = [_zero_grad(t) if is_disconnected(e) else e for t, e in zip(tensors, evs)]
        return [self(axis, *parts)]


_join = Join()


def join(axis: Any, *tensors: Any) -> Variable:
    """Concatenate ``tensors`` along ``axis`` (a single tensor is returned as it is)."""
    if len(tensors) == 1:
        return as_tensor_variable(tensors[0])
    return _join(axis, *tensors)


def concatenate(tensor_list: Sequence[Any], axis: Any = 0) -> Variable:
    """``numpy.concatenate``-style :func:`join`: ``concatenate([a, b], axis=1)``."""
    if not isinstance(tensor_list, (list, tuple)):
        raise TypeError(
            f"concatenate: the tensors must be given as a list or tuple, got {type(tensor_list).__name__}; "
            "write concatenate([x, y]), not concatenate(x, y)"
        )
    return join(axis, *tensor_list)


def _is_0d(t: Any) -> bool:
    if isinstance(t, Variable):
        return isinstance(t.type, TensorType) and t.type.ndim == 0
    return np.ndim(t) == 0 and not isinstance(t, (list, tuple))


def stack(tensors: Sequence[Any], axis: int = 0) -> Variable:
    """Stack equally shaped tensors along a new ``axis`` (``numpy.stack``).

    0-d inputs make a vector through ``MakeVector`` (cast to their common dtype).

    >>> import arignote.tensor as pt
    >>> a, b = pt.dscalar("a"), pt.lscalar("b")
    >>> v = pt.stack([a, b])
    >>> v.type, v.eval({a: 1.5, b: 2})
    (TensorType(float64, shape=(2,)), array([1.5, 2. ]))
    """
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(f"stack: the tensors must be given as a list or tuple, got {type(tensors).__name__}")
    if not tensors:
        raise ValueError("stack: no tensors to stack")
    if all(_is_0d(t) for t in tensors):
        normalize_axis(axis, 1)
        parts = [as_tensor_variable(t) for t in tensors]
        if len(parts) == 1:
            return expand_dims(parts[0], 0)
        dtype = upcast(*(p.type.dtype for p in parts))
        return MakeVector(dtype)(*(_cast_scalar(p, dtype) for p in parts))
    parts = [as_tensor_variable(t) for t in tensors]
    ndim = parts[0].type.ndim
    for i, p in enumerate(parts):
        if p.type.ndim != ndim:
            raise ValueError(
                f"stack: all inputs must have the same number of dimensions; input 0 is {ndim}-d, "
                f"input {i} ({p}) is {p.type.ndim}-d"
            )
    new_axis = normalize_axis(axis, ndim + 1)[0]  # type: ignore[index]
    return join(new_axis, *(expand_dims(p, new_axis) for p in parts))


def _cast_scalar(p: Variable, dtype: str) -> Variable:
    if isinstance(p, Constant) and p.type.dtype != dtype:
        return constant(np.asarray(p.data, dtype=dtype))
    return cast(p, dtype)


def _two_d(args: Sequence[Any], what: str) -> list[Variable]:
    if len(args) < 2:
        raise ValueError(f"{what} needs at least two tensors, got {len(args)}")
    out = []
    for i, a in enumerate(args):
        t = as_tensor_variable(a)
        if t.type.ndim != 2:
            raise ValueError(f"{what}: every input must be 2-d; input {i} ({t}) has Type {t.type}")
        out.append(t)
    return out


def horizontal_stack(*args: Any) -> Variable:
    """Join 2-d tensors side by side (along axis 1)."""
    return concatenate(_two_d(args, "horizontal_stack"), axis=1)


def vertical_stack(*args: Any) -> Variable:
    """Join 2-d tensors one above the other (along axis 0)."""
    return concatenate(_two_d(args, "vertical_stack"), axis=0)


# --- Split ---------------------------------------------------------------------------------


class Split(Op):
    """Cut ``x`` along ``axis`` into ``len_splits`` pieces of the lengths in ``splits``.

    ``Split(n)(x, axis, splits)``: ``splits`` is an integer vector of ``n`` non-negative
    lengths summing to the length of ``x`` on ``axis``. The outputs are views of ``x``.

    >>> import numpy as np
    >>> import arignote.tensor as pt
    >>> x = pt.dvector("x")
    >>> a, b = pt.split(x, [1, 2], 2)
    >>> b.eval({x: np.array([1.0, 2.0, 3.0])})
    array([2., 3.])
    """

    __props__ = ("len_splits",)

    def __init__(self, len_splits: int):
        if not isinstance(len_splits, (int, np.integer)) or isinstance(len_splits, bool) or len_splits < 1:
            raise TypeError(f"Split: the number of splits must be a positive int, got {len_splits!r}")
        self.len_splits = int(len_splits)
        self.view_map = {i: [0] for i in range(self.len_splits)}

    def make_node(self, x: Any, axis: Any, splits: Any) -> Apply:
        x = as_tensor_variable(x)
        if x.type.ndim == 0:
            raise TypeError(f"{self}: cannot split the 0-d {x}; the input must have at least one dimension")
        axis = _as_axis(axis, str(self))
        splits = _as_splits(splits, str(self))
        n = splits.type.shape[0]
        if n is not None and n != self.len_splits:
            raise ValueError(f"{self}: splits has {n} entries, expected {self.len_splits}")
        axis, static_axis = _constant_axis(axis, x.type.ndim, str(self))
        sizes = _static_entries(splits, self.len_splits)
        for i, s in enumerate(sizes):
            if s is not None and s < 0:
                raise ValueError(f"{self}: split size {i} is {s}; sizes must be non-negative")
        if static_axis is None:
            shapes = [(None,) * x.type.ndim] * self.len_splits
        else:
            length = x.type.shape[static_axis]
            if length is not None and None not in sizes and sum(sizes) != length:  # type: ignore[arg-type]
                raise ValueError(
                    f"{self}: the split sizes {sizes} sum to {sum(sizes)}, but {x} of Type {x.type} "  # type: ignore[arg-type]
                    f"has length {length} on axis {static_axis}"
                )
            shapes = []
            for s in sizes:
                shp = list(x.type.shape)
                shp[static_axis] = s
                shapes.append(tuple(shp))
        outputs = [TensorType(x.type.dtype, shp)() for shp in shapes]
        return Apply(self, [x, axis, splits], outputs)

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        x, axis, splits = inputs
        axis = _runtime_axis(axis, x.ndim, str(self))
        if len(splits) != self.len_splits:
            raise ValueError(f"{self}: splits has {len(splits)} entries, expected {self.len_splits}")
        if (splits < 0).any():
            raise ValueError(f"{self}: split sizes must be non-negative, got {splits.tolist()}")
        if splits.sum() != x.shape[axis]:
            raise ValueError(
                f"{self}: the split sizes {splits.tolist()} sum to {splits.sum()}, but the input has "
                f"length {x.shape[axis]} on axis {axis} (shape {x.shape})"
            )
        pieces = np.split(x, np.cumsum(splits[:-1]), axis=axis)
        for cell, piece in zip(output_storage, pieces):
            cell[0] = piece

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list[tuple]:
        _, axis, splits = node.inputs
        xshape = shapes[0]
        ndim = len(xshape)
        static_axis = _entry_int(axis)
        sizes = _unpack_vector(splits, self.len_splits)
        out = []
        for o, size in zip(node.outputs, sizes):
            shp = []
            for d in range(ndim):
                if o.type.shape[d] is not None:
                    shp.append(o.type.shape[d])
                elif static_axis is not None:
                    shp.append(size if d == static_axis % ndim else xshape[d])
                else:
                    split_dim = switch(ge(axis, 0), axis, axis + ndim)
                    shp.append(
                        switch(
                            eq(split_dim, d),
                            cast(size, "int64"),
                            cast(as_tensor_variable(xshape[d]), "int64"),
                        )
                    )
            out.append(tuple(shp))
        return out

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        n = len(node.outputs)
        return [[True] * n, [False] * n, [False] * n]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        """The output gradients joined back along the axis (zeros for pieces the cost does
        not use); the axis and the sizes are disconnected."""
        x, axis, _ = inputs
        parts = [_zero_grad(o) if is_disconnected(g) else g for o, g in zip(outputs, output_grads)]
        return [_grad_like(join(axis, *parts), x), disconnected_type(), disconnected_type()]

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], eval_points: Sequence[Variable]
    ) -> list:
        if is_disconnected(eval_points[0]):
            return [disconnected_type() for _ in outputs]
        return self(eval_points[0], *inputs[1:], return_list=True)

    def __str__(self) -> str:
        return f"Split{{{self.len_splits}}}"


def _as_splits(splits: Any, what: str) -> Variable:
    """The split sizes as an integer vector (a list may mix ints and 0-d Variables)."""
    if isinstance(splits, (list, tuple)):
        parts = []
        for i, s in enumerate(splits):
            p = as_tensor_variable(s)
            if p.type.ndim != 0 or np.dtype(p.type.dtype).kind not in "iu":
                raise TypeError(f"{what}: split size {i} must be a 0-d integer, got {p} of Type {p.type}")
            parts.append(p)
        if all(isinstance(p, Constant) for p in parts):
            return constant(np.asarray([p.data for p in parts], dtype="int64").reshape(len(parts)))
        return MakeVector("int64")(*(cast(p, "int64") for p in parts))
    v = as_tensor_variable(splits)
    if v.type.ndim != 1 or np.dtype(v.type.dtype).kind not in "iu":
        raise TypeError(f"{what}: the split sizes must be an integer vector, got {v} of Type {v.type}")
    return v


def _static_entries(v: Variable, n: int) -> list[int | None]:
    """The entries of a vector that are known statically (None for the others)."""
    if isinstance(v, Constant):
        return [int(e) for e in v.data.reshape(-1)[:n]] + [None] * max(0, n - v.data.size)
    if v.owner is not None and isinstance(v.owner.op, MakeVector):
        return [_entry_int(e) for e in v.owner.inputs]
    return [None] * n


def _unpack_vector(v: Variable, n: int) -> list[Variable]:
    """The ``n`` entries of the vector ``v`` as 0-d Variables (``Split`` does the work
    when they are not visible in the graph)."""
    if isinstance(v, Constant):
        return [constant(e) for e in v.data.reshape(-1)]
    if v.owner is not None and isinstance(v.owner.op, MakeVector):
        return list(v.owner.inputs)
    pieces = Split(n)(v, 0, constant(np.ones(n, dtype="int64")), return_list=True)
    return [p.dimshuffle(()) for p in pieces]


def split(x: Any, splits_size: Any, n_splits: int | None = None, axis: Any = 0) -> list[Variable]:
    """Cut ``x`` along ``axis`` into pieces of the lengths ``splits_size``.

    ``n_splits`` (the number of pieces) is needed only when ``splits_size`` is a vector
    whose length is not known statically.
    """
    if n_splits is None:
        if isinstance(splits_size, (list, tuple)):
            n_splits = len(splits_size)
        else:
            sv = as_tensor_variable(splits_size)
            n_splits = sv.type.shape[0] if sv.type.ndim == 1 else None
            if n_splits is None:
                raise ValueError(
                    f"split: the number of pieces is not known statically from {sv} of Type {sv.type}; "
                    "pass n_splits"
                )
    return Split(n_splits)(x, axis, splits_size, return_list=True)


def stacklists(arg: Any) -> Any:
    """Nested lists of tensors (scalars, say) stacked into one tensor of the same nesting.

    >>> import arignote.tensor as pt
    >>> a, b, c, d = pt.dscalars("abcd")
    >>> m = stacklists([[a, b], [c, d]])
    >>> m.eval({a: 1.0, b: 2.0, c: 3.0, d: 4.0})
    array([[1., 2.],
           [3., 4.]])
    """
    if isinstance(arg, (tuple, list)):
        return stack([stacklists(a) for a in arg])
    return arg


# --- batching rules (vectorize_graph's node step) ---------------------------------------


def _static_axis(axis: Variable, ndim: int) -> int | None:
    try:
        a = int(get_underlying_scalar_constant_value(axis))
    except (NotScalarConstantError, TypeError, ValueError):
        return None
    return a % ndim if -ndim <= a < ndim else None


@register_batch_rule(Join)
def _batch_join(op: Op, node: Apply, args: list, flags: list) -> list | None:
    axis, *tensors = args
    if flags[0]:
        return None
    a = _static_axis(axis, node.outputs[0].type.ndim)
    if a is None:
        return None
    n = next(batch_length(t) for t, f in zip(tensors, flags[1:]) if f)
    stacked = [t if f else broadcast_batch(t, n) for t, f in zip(tensors, flags[1:])]
    return [(op(a + 1, *stacked), True)]


@register_batch_rule(Split)
def _batch_split(op: Op, node: Apply, args: list, flags: list) -> list | None:
    x, axis, splits = args
    if flags[1] or flags[2]:
        return None
    a = _static_axis(axis, node.inputs[0].type.ndim)
    if a is None:
        return None
    return [(o, True) for o in op(x, a + 1, splits, return_list=True)]


# --- sequences holding Variables, as tensors ----------------------------------------------------


@_as_tensor_variable.register(list)
@_as_tensor_variable.register(tuple)
def _sequence_as_tensor(x: Sequence, name: str | None, ndim: int | None, dtype: Any) -> Variable:
    """A list or tuple holding Variables: a vector of its scalars (``make_vector``), or the
    stack of its tensors; without Variables, a constant."""
    if not any(isinstance(v, Variable) for v in _flatten(x)):
        return constant(x, name=name, ndim=ndim, dtype=dtype)
    parts = [as_tensor_variable(v) for v in x]
    if all(p.type.ndim == 0 for p in parts):
        return make_vector(*parts)
    return stack(parts)
