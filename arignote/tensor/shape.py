"""Shapes as graph values: Shape, Shape_i, SpecifyShape and Reshape.

>>> import arignote.tensor as pt
>>> x = pt.dmatrix("x")
>>> y = pt.specify_shape(x, (2, None))
>>> y.type
TensorType(float64, shape=(2, None))
"""

from __future__ import annotations

from collections.abc import Sequence
from types import EllipsisType
from typing import TYPE_CHECKING, Any

import numpy as np

from arignote.configdefaults import config
from arignote.graph.basic import Apply, Constant, Variable
from arignote.graph.null_type import disconnected_type, is_disconnected
from arignote.graph.op import Op
from arignote.graph.replace import register_batch_rule
from arignote.tensor.conversion import (
    NotScalarConstantError,
    as_tensor_variable,
    constant,
    get_underlying_scalar_constant_value,
    register_constant_rule,
)
from arignote.tensor.elemwise import DimShuffle, normalize_axis
from arignote.tensor.type import TensorType
from arignote.tensor.type_other import NoneConst, NoneTypeT
from arignote.tensor.ufuncs import cast

if TYPE_CHECKING:
    from arignote.tensor.variable import TensorVariable

__all__ = [
    "ShapeError",
    "ShapeValueType",
    "Shape",
    "Shape_i",
    "SpecifyShape",
    "Reshape",
    "MakeVector",
    "shape",
    "shape_i",
    "specify_shape",
    "reshape",
    "shape_tuple",
    "make_vector",
    "flatten",
    "shape_padleft",
    "shape_padright",
    "shape_padaxis",
    "specify_broadcastable",
    "get_vector_length",
    "is_flat",
]

#: what an entry of a shape argument may be (``specify_shape``, ``reshape``): a length, a
#: symbolic length, ``None`` (unknown) or ``...``
ShapeValueType = None | EllipsisType | np.integer | int | Variable


class ShapeError(ValueError):
    """An ``infer_shape`` cannot express an output's shape; callers use the output's
    computed shape instead (the shape-inference protocol's fallback)."""


# --- gradient helpers (shared by the pullbacks of the tensor Ops) ---------------------------


def _grad_like(g: Variable, x: Variable) -> Variable:
    """``g``, a gradient term for ``x``, in ``x``'s dtype (when ``x`` is a float) and with
    ``x``'s static length-1 dimensions, so it adds up with the other terms for ``x``."""
    g = as_tensor_variable(g)
    xk, gk = np.dtype(x.type.dtype).kind, np.dtype(g.type.dtype).kind
    if g.type.dtype != x.type.dtype and (xk == "c" or (xk == "f" and gk == "f")):
        g = g.astype(x.type.dtype)
    ones = [d for d, (xs, gs) in enumerate(zip(x.type.shape, g.type.shape)) if xs == 1 and gs != 1]
    if ones:
        g = specify_shape(g, tuple(1 if d in ones else None for d in range(g.type.ndim)))
    return g


def _zero_grad(x: Variable) -> Variable:
    """A zero gradient for ``x``: zeros shaped like it, in its dtype if float else floatX."""
    kind = np.dtype(x.type.dtype).kind
    dtype = x.type.dtype if kind in "fc" else config.floatX
    if not isinstance(x.type, TensorType) and hasattr(x, "zeros_like"):
        return x.zeros_like(dtype=dtype)  # another Type's own zeros (a sparse matrix's)
    # the method, not alloc.zeros_like: alloc's Ops use these helpers for their own rules
    return as_tensor_variable(x).zeros_like(dtype=dtype)


class Shape(Op):
    """The shape of a tensor, as an int64 vector."""

    __props__ = ()

    def make_node(self, x: Any) -> Apply:
        x = as_tensor_variable(x)
        return Apply(self, [x], [TensorType("int64", (x.type.ndim,))()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        output_storage[0][0] = np.asarray(inputs[0].shape, dtype="int64")

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list[tuple]:
        return [(node.inputs[0].type.ndim,)]

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        return [[False]]  # only the shape is read, not the elements

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        """No gradient: the elements of the input are not read."""
        return [disconnected_type()]

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], eval_points: Sequence[Variable]
    ) -> list:
        return [disconnected_type()]


_shape = Shape()


def shape(x: Any) -> Variable:
    """The symbolic shape of ``x`` (an int64 vector)."""
    return _shape(x)


class Shape_i(Op):
    """The length of dimension ``i`` of a tensor, as an int64 0-d tensor."""

    __props__ = ("i",)

    def __init__(self, i: int):
        if not isinstance(i, (int, np.integer)) or i < 0:
            raise TypeError(f"Shape_i needs a non-negative int, got {i!r}")
        self.i = int(i)

    def make_node(self, x: Any) -> Apply:
        x = as_tensor_variable(x)
        if self.i >= x.type.ndim:
            raise ValueError(f"{self}: {x} of Type {x.type} has only {x.type.ndim} dimension(s)")
        return Apply(self, [x], [TensorType("int64", ())()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        output_storage[0][0] = np.asarray(inputs[0].shape[self.i], dtype="int64")

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list[tuple]:
        return [()]

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        return [[False]]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        """No gradient: the elements of the input are not read."""
        return [disconnected_type()]

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], eval_points: Sequence[Variable]
    ) -> list:
        return [disconnected_type()]


def shape_i(x: Any, i: int) -> Variable:
    """Length of dimension ``i`` of ``x``: a constant when it is known statically."""
    x = as_tensor_variable(x)
    static = x.type.shape[i]
    if static is not None:
        return constant(np.int64(static))
    return Shape_i(i % max(1, x.type.ndim))(x)


def dim_length(x: Variable, d: int) -> Any:
    """The length of ``x`` on dimension ``d``: a Python int when static (so static shape
    arithmetic stays static), else a 0-d int64 ``Shape_i`` Variable."""
    s = x.type.shape[d]
    return s if s is not None else Shape_i(d % max(1, x.type.ndim))(x)


def shape_tuple(x: Any) -> tuple:
    """The shape of ``x`` as a tuple: Python ints where static, symbolic scalars elsewhere."""
    x = as_tensor_variable(x)
    return tuple(s if s is not None else Shape_i(i)(x) for i, s in enumerate(x.type.shape))


class MakeVector(Op):
    """A vector built from 0-d tensors of one dtype."""

    __props__ = ("dtype",)

    def __init__(self, dtype: str = "int64"):
        self.dtype = np.dtype(dtype).name

    def make_node(self, *inputs: Any) -> Apply:
        inputs = [as_tensor_variable(i) for i in inputs]
        for i, v in enumerate(inputs):
            if v.type.ndim != 0:
                raise TypeError(f"MakeVector input {i} must be 0-d, got {v.type}")
            if v.type.dtype != self.dtype:
                if isinstance(v, Constant) and np.can_cast(v.data, self.dtype, "same_kind"):
                    inputs[i] = constant(np.asarray(v.data).astype(self.dtype))
                elif np.can_cast(v.type.dtype, self.dtype, "safe"):
                    from arignote.tensor.ufuncs import cast

                    inputs[i] = cast(v, self.dtype)  # a lossless upcast
                else:
                    raise TypeError(
                        f"MakeVector{{{self.dtype}}} input {i} has dtype {v.type.dtype}, which does not "
                        f"fit {self.dtype} without loss"
                    )
        return Apply(self, inputs, [TensorType(self.dtype, (len(inputs),))()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        output_storage[0][0] = np.asarray(inputs, dtype=self.dtype).reshape(len(inputs))

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list[tuple]:
        return [(len(node.inputs),)]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        """Entry ``i`` of the output gradient for input ``i`` (zeros for an integer vector)."""
        (g,) = output_grads
        if np.dtype(self.dtype).kind in "biu":
            return [_zero_grad(i) for i in inputs]  # an integer-valued output: zero gradient
        if not inputs:
            return []
        from arignote.tensor.join import _unpack_vector

        entries = _unpack_vector(as_tensor_variable(g), len(inputs))
        return [_grad_like(e, i) for e, i in zip(entries, inputs)]

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], eval_points: Sequence[Variable]
    ) -> list:
        """The vector of the entries' tangents (zeros where an entry has none)."""
        from arignote.tensor.ufuncs import cast

        if np.dtype(self.dtype).kind in "biu" or all(is_disconnected(e) for e in eval_points):
            return [disconnected_type()]
        parts = [
            _zero_grad(i) if is_disconnected(e) else as_tensor_variable(e)
            for i, e in zip(inputs, eval_points)
        ]
        return [MakeVector(self.dtype)(*(cast(p, self.dtype) for p in parts))]


def make_vector(*values: Any, dtype: str | None = None) -> Variable:
    """A vector of 0-d values (the common dtype unless ``dtype`` is given)."""
    vals = [as_tensor_variable(v) for v in values]
    if dtype is None:
        dtype = np.result_type(*(v.type.dtype for v in vals)).name if vals else "int64"
    return MakeVector(dtype)(*vals)


class SpecifyShape(Op):
    """Returns its input, asserting its shape: ``specify_shape(x, (2, None))``.

    The output's static shape combines the input's and the specified lengths; at run
    time a length that disagrees is an error naming the dimension.
    """

    __props__ = ()
    view_map = {0: [0]}

    def make_node(self, x: Any, *shape: Any) -> Apply:
        x = as_tensor_variable(x)
        if len(shape) != x.type.ndim:
            raise ValueError(f"specify_shape: {x} is {x.type.ndim}-d but {len(shape)} lengths were given")
        dims = []
        static = []
        for d, s in enumerate(shape):
            if s is None or (isinstance(s, Variable) and isinstance(s.type, NoneTypeT)):
                dims.append(NoneConst)
                static.append(x.type.shape[d])
                continue
            sv = as_tensor_variable(s)
            if sv.type.ndim != 0 or sv.type.dtype[:3] not in ("int", "uin"):
                raise TypeError(f"specify_shape: length {d} must be an integer scalar, got {sv.type}")
            try:
                value = int(get_underlying_scalar_constant_value(sv))
            except NotScalarConstantError:
                value = None
            if value is not None and x.type.shape[d] is not None and value != x.type.shape[d]:
                raise ValueError(
                    f"specify_shape: dimension {d} of {x} is statically {x.type.shape[d]}, cannot specify {value}"
                )
            dims.append(sv)
            static.append(value if value is not None else x.type.shape[d])
        return Apply(self, [x, *dims], [TensorType(x.type.dtype, tuple(static))()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        x, *shape = inputs
        if x.ndim != len(shape):
            raise ValueError(f"SpecifyShape: expected a {len(shape)}-d value, got shape {x.shape}")
        bad = [(d, x.shape[d], int(s)) for d, s in enumerate(shape) if s is not None and x.shape[d] != s]
        if bad:
            detail = ", ".join(f"dimension {d} is {got}, expected {want}" for d, got, want in bad)
            raise ValueError(f"SpecifyShape: value of shape {x.shape} does not match: {detail}")
        output_storage[0][0] = x

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list[tuple]:
        xshape = shapes[0]
        return [tuple(xs if isinstance(s.type, NoneTypeT) else s for xs, s in zip(xshape, node.inputs[1:]))]

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        return [[True], *([[False]] * (len(node.inputs) - 1))]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        """The gradient passes through, with the same shape asserted; lengths are disconnected."""
        x, *lengths = inputs
        (g,) = output_grads
        spec = tuple(None if isinstance(s.type, NoneTypeT) else s for s in lengths)
        return [_grad_like(specify_shape(g, spec), x), *(disconnected_type() for _ in lengths)]

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], eval_points: Sequence[Variable]
    ) -> list:
        if is_disconnected(eval_points[0]):
            return [disconnected_type()]
        return [self(eval_points[0], *inputs[1:])]


_specify_shape = SpecifyShape()


def specify_shape(x: Any, shape: Any) -> Variable:
    """``x``, with its shape asserted to be ``shape`` (a tuple of ints / scalars / None).

    Already-known lengths are not asserted again; if nothing is left to assert, ``x`` is
    returned unchanged.
    """
    x = as_tensor_variable(x)
    if isinstance(shape, (int, np.integer)) or (
        isinstance(shape, Variable) and getattr(shape.type, "ndim", 0) == 0
    ):
        shape = (shape,)
    if isinstance(shape, Variable):
        raise TypeError("specify_shape: give the shape as a tuple of ints, 0-d Variables or None")
    shape = tuple(shape)
    if len(shape) == x.type.ndim and all(
        s is None or (isinstance(s, (int, np.integer)) and x.type.shape[d] == s) for d, s in enumerate(shape)
    ):
        return x
    return _specify_shape(x, *shape)


class Reshape(Op):
    """``x`` with a new shape of ``ndim`` dimensions (one length may be -1)."""

    __props__ = ("ndim",)
    view_map = {0: [0]}

    def __init__(self, ndim: int):
        self.ndim = int(ndim)

    def make_node(self, x: Any, shp: Any) -> Apply:
        x = as_tensor_variable(x)
        shp = as_tensor_variable(shp, ndim=1)
        if shp.type.dtype[:3] not in ("int", "uin"):
            raise TypeError(f"Reshape: the new shape must be integers, got {shp.type}")
        if shp.type.shape[0] is not None and shp.type.shape[0] != self.ndim:
            raise ValueError(f"Reshape{{{self.ndim}}}: the shape vector has {shp.type.shape[0]} entries")
        static: list = [None] * self.ndim
        if isinstance(shp, Constant):
            vals = [int(v) for v in shp.data]
            if sum(v == -1 for v in vals) > 1 or any(v < -1 for v in vals):
                raise ValueError(f"reshape: invalid shape {tuple(vals)} (at most one -1, no other negatives)")
            static = [None if v == -1 else v for v in vals]
            if -1 in vals and all(s is not None for s in x.type.shape):
                known = int(np.prod([v for v in vals if v != -1]))
                total = int(np.prod(x.type.shape))
                if known == 0 or total % known:
                    raise ValueError(f"cannot reshape {x.type} to {tuple(vals)}")
                static[vals.index(-1)] = total // known
            elif (
                all(s is not None for s in x.type.shape)
                and -1 not in vals
                and int(np.prod(x.type.shape)) != int(np.prod(vals))
            ):
                raise ValueError(f"cannot reshape {x.type} (static shape {x.type.shape}) to {tuple(vals)}")
        elif shp.owner is not None and isinstance(shp.owner.op, MakeVector):
            for d, v in enumerate(shp.owner.inputs):
                try:
                    val = int(get_underlying_scalar_constant_value(v))
                except NotScalarConstantError:
                    continue
                static[d] = val if val >= 0 else None
        return Apply(self, [x, shp], [TensorType(x.type.dtype, tuple(static))()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        x, shp = inputs
        if len(shp) != self.ndim:
            raise ValueError(f"Reshape{{{self.ndim}}}: got a shape with {len(shp)} entries: {tuple(shp)}")
        try:
            output_storage[0][0] = np.reshape(x, tuple(int(s) for s in shp))
        except ValueError as err:
            raise ValueError(
                f"Cannot reshape an array of shape {x.shape} to {tuple(int(s) for s in shp)}: {err}"
            ) from None

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list[tuple]:
        from arignote.tensor.reductions import prod
        from arignote.tensor.ufuncs import maximum, switch

        if not any(s is None for s in node.outputs[0].type.shape):
            return [tuple(node.outputs[0].type.shape)]
        entries = [_vector_entry(node.inputs[1], i) for i in range(self.ndim)]
        total = prod(as_tensor_variable(list(shapes[0]) or [1]).astype("int64"))
        known = prod(switch(as_tensor_variable(entries) < 0, 1, as_tensor_variable(entries)))
        # both branches of the switch are computed: a 0 among the lengths must not divide
        return [tuple(switch(e < 0, total // maximum(known, 1), e) for e in entries)]

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        return [[True], [False]]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        """The gradient reshaped back to the input's shape; the shape is disconnected."""
        x, _ = inputs
        (g,) = output_grads
        return [_grad_like(reshape(g, shape_tuple(x)), x), disconnected_type()]

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], eval_points: Sequence[Variable]
    ) -> list:
        if is_disconnected(eval_points[0]):
            return [disconnected_type()]
        return [self(eval_points[0], inputs[1])]


def _vector_entry(vec: Variable, i: int) -> Variable:
    """Entry ``i`` of a constant or MakeVector vector (what Reshape's shape usually is)."""
    if isinstance(vec, Constant):
        return constant(np.int64(vec.data[i]))
    if vec.owner is not None and isinstance(vec.owner.op, MakeVector):
        return vec.owner.inputs[i]
    # The shape-inference protocol: ShapeError means "ask the computed output instead".
    raise ShapeError(f"the entries of {vec} are not known symbolically")


def reshape(x: Any, newshape: Any, ndim: int | None = None) -> Variable:
    """``x`` reshaped to ``newshape`` (a tuple of ints / 0-d integer Variables, or a vector)."""
    x = as_tensor_variable(x)
    if isinstance(newshape, (int, np.integer)):
        newshape = (newshape,)
    if isinstance(newshape, Variable):
        shp = as_tensor_variable(newshape, ndim=1)
    else:
        parts = list(newshape)
        if all(isinstance(p, (int, np.integer)) for p in parts):
            shp = constant(np.asarray(parts, dtype="int64"), ndim=1)
        else:
            shp = make_vector(
                *[
                    constant(np.int64(p))
                    if isinstance(p, (int, np.integer))
                    else as_tensor_variable(p).astype("int64")
                    for p in parts
                ],
                dtype="int64",
            )
    if ndim is None:
        if shp.type.shape[0] is None:
            raise ValueError("reshape: give ndim= when the new shape's length is not known statically")
        ndim = shp.type.shape[0]
    return Reshape(ndim)(x, shp)


def flatten(x: Any, ndim: int = 1) -> TensorVariable:
    """Keep the first ``ndim - 1`` dimensions and merge the rest into one."""
    x = as_tensor_variable(x)
    if not 1 <= ndim <= max(1, x.type.ndim):
        raise ValueError(f"flatten: ndim={ndim} is not between 1 and {max(1, x.type.ndim)} for {x.type}")
    from arignote.tensor.shape import reshape, shape_i

    if ndim == 1:
        return reshape(x, (-1,))
    # the kept lengths: static ints where known, else Shape_i (no indexing of x.shape)
    return reshape(x, [shape_i(x, i) for i in range(ndim - 1)] + [-1])


def _int_arg(value: Any, what: str) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{what} must be an int, got {value!r} of type {type(value).__name__}")
    return int(value)


def _n_ones(n_ones: Any, what: str) -> int:
    n = _int_arg(n_ones, f"{what}: n_ones")
    if n < 0:
        raise ValueError(f"{what}: n_ones must be non-negative, got {n}")
    return n


def shape_padleft(t: Any, n_ones: int = 1) -> Variable:
    """``t`` with ``n_ones`` length-1 dimensions added in front."""
    t = as_tensor_variable(t)
    n = _n_ones(n_ones, "shape_padleft")
    if n == 0:
        return t
    return DimShuffle(input_ndim=t.type.ndim, new_order=["x"] * n + list(range(t.type.ndim)))(t)


def shape_padright(t: Any, n_ones: int = 1) -> Variable:
    """``t`` with ``n_ones`` length-1 dimensions added at the end."""
    t = as_tensor_variable(t)
    n = _n_ones(n_ones, "shape_padright")
    if n == 0:
        return t
    return DimShuffle(input_ndim=t.type.ndim, new_order=list(range(t.type.ndim)) + ["x"] * n)(t)


def shape_padaxis(t: Any, axis: int) -> Variable:
    """``t`` with a length-1 dimension inserted at ``axis`` (``numpy.expand_dims``; a
    negative ``axis`` counts from the end of the result)."""
    t = as_tensor_variable(t)
    axis = _int_arg(axis, "shape_padaxis: axis")
    ndim = t.type.ndim + 1
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(
            f"shape_padaxis: axis {axis} is out of range [-{ndim}, {ndim}) for {t} of Type {t.type}"
        )
    axis %= ndim
    order = [*range(axis), "x", *range(axis, t.type.ndim)]
    return DimShuffle(input_ndim=t.type.ndim, new_order=order)(t)


def specify_broadcastable(x: Any, *axes: int) -> Variable:
    """``x`` with the dimensions ``axes`` declared of length 1 (checked at run time when
    the length is not known statically); with no ``axes``, ``x`` itself.

    >>> import arignote.tensor as pt
    >>> pt.specify_broadcastable(pt.dmatrix("x"), 0).type.shape
    (1, None)
    """
    x = as_tensor_variable(x)
    if not axes:
        return x
    for a in axes:
        _int_arg(a, "specify_broadcastable: axis")
    dims = normalize_axis(list(axes), x.type.ndim, "specify_broadcastable: axis") or ()
    bad = [d for d in dims if x.type.shape[d] not in (None, 1)]
    if bad:
        detail = ", ".join(f"dimension {d} has length {x.type.shape[d]}" for d in bad)
        raise ValueError(f"specify_broadcastable: {x} of Type {x.type} cannot be broadcastable: {detail}")
    return specify_shape(x, tuple(1 if d in dims else None for d in range(x.type.ndim)))


def get_vector_length(v: Any) -> int:
    """The length of the vector ``v``, known when the graph is built; a ValueError when it
    is not (a TypeError when ``v`` is not a vector).

    >>> import arignote.tensor as pt
    >>> pt.get_vector_length(pt.dmatrix("x").shape)
    2
    """
    v = as_tensor_variable(v)
    if not isinstance(v.type, TensorType) or v.type.ndim != 1:
        raise TypeError(f"get_vector_length: the argument must be a vector, got {v} of Type {v.type}")
    for _ in range(1000):  # through chains of SpecifyShape; each step looks at one node
        if v.type.shape[0] is not None:
            return int(v.type.shape[0])
        node = v.owner
        if node is None:
            break
        if isinstance(node.op, Shape):
            return node.inputs[0].type.ndim
        if isinstance(node.op, MakeVector):
            return len(node.inputs)
        if not isinstance(node.op, SpecifyShape):
            break
        v = node.inputs[0]
    raise ValueError(f"get_vector_length: the length of {v} (Type {v.type}) is not known statically")


def is_flat(var: Any, ndim: int = 1) -> bool:
    """Whether ``var`` has ``ndim`` dimensions (after a ``flatten(ndim)``, say)."""
    return as_tensor_variable(var).type.ndim == ndim


def _is_int_dtype(dtype: str) -> bool:
    return np.dtype(dtype).kind in "iu"


def _as_length(value: Any, what: str) -> Variable:
    """``value`` as a 0-d integer tensor, or a TypeError naming ``what``."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{what} must be an integer, got the bool {value!r}")
    try:
        v = as_tensor_variable(value)
    except (TypeError, ValueError) as err:
        raise TypeError(f"{what} must be a 0-d integer, got {value!r} ({err})") from None
    if v.type.ndim != 0 or not _is_int_dtype(v.type.dtype):
        hint = ""
        if v.type.ndim == 1 and what.startswith("Alloc"):
            hint = " (give the lengths as separate arguments: alloc(value, *shape))"
        raise TypeError(f"{what} must be a 0-d integer, got {v} of Type {v.type}{hint}")
    return v


def _static_int(v: Variable) -> int | None:
    """The value of a 0-d integer Variable when it is known statically, else None."""
    try:
        return int(get_underlying_scalar_constant_value(v))
    except NotScalarConstantError:
        pass
    node = v.owner
    if node is not None and isinstance(node.op, Shape_i):
        return node.inputs[0].type.shape[node.op.i]
    return None


# --- batching rules (vectorize_graph's node step) ---------------------------------------


def _as_int64(n: Any) -> Any:
    return n if isinstance(n, int) else cast(n, "int64")


@register_batch_rule(Reshape)
def _batch_reshape(op: Op, node: Apply, args: list, flags: list) -> list | None:
    x, shp = args
    if flags[1]:
        return None
    n = _as_int64(batch_length(x))
    if hasattr(shp, "data"):
        entries = [int(s) for s in np.asarray(shp.data).reshape(-1)]
        new_shape = make_vector(*[n, *entries], dtype="int64") if not isinstance(n, int) else None
        if new_shape is None:
            from arignote.tensor.conversion import constant

            new_shape = constant(np.asarray([n, *entries], dtype="int64"))
    elif shp.owner is not None and isinstance(shp.owner.op, MakeVector):
        new_shape = make_vector(n, *shp.owner.inputs, dtype="int64")
    else:
        from arignote.tensor.join import join  # Join is built on this module's Ops

        new_shape = join(0, make_vector(n, dtype="int64"), cast(shp, "int64"))
    return [(Reshape(op.ndim + 1)(x, new_shape), True)]


@register_batch_rule(SpecifyShape)
def _batch_specify_shape(op: Op, node: Apply, args: list, flags: list) -> list | None:
    x, *lengths = args
    if any(flags[1:]):
        return None
    spec = [None, *(None if isinstance(s.type, NoneTypeT) else s for s in lengths)]
    return [(specify_shape(x, spec), True)]


@register_batch_rule(Shape)
def _batch_shape(op: Op, node: Apply, args: list, flags: list) -> list:
    (x,) = args
    return [(make_vector(*(shape_i(x, d + 1) for d in range(x.type.ndim - 1)), dtype="int64"), False)]


@register_batch_rule(Shape_i)
def _batch_shape_i(op: Op, node: Apply, args: list, flags: list) -> list:
    return [(Shape_i(op.i + 1)(args[0]), False)]


def batch_length(v: Variable) -> Any:
    """The length of ``v``'s leading (batch) dimension: a Python int if static, else a Variable."""
    return dim_length(v, 0)


# --- what get_underlying_scalar_constant_value sees through ---------------------------------


@register_constant_rule(Shape_i)
def _constant_of_shape_i(op: Shape_i, node: Apply, look: Any) -> Any:
    """A static length is known; any other is not."""
    length = node.inputs[0].type.shape[op.i]
    if length is None:
        raise NotScalarConstantError(f"dimension {op.i} of {node.inputs[0]} is not known statically")
    return np.int64(length)
