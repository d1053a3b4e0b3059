"""Shapes as graph values: Shape, Shape_i, SpecifyShape and Reshape.

>>> import arignote.tensor as pt
>>> x = pt.dmatrix("x")
>>> y = pt.specify_shape(x, (2, None))
>>> y.type
TensorType(float64, shape=(2, None))
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from arignote.graph.basic import Apply, Constant, Variable
from arignote.graph.op import Op
from arignote.tensor.basic import (
    NotScalarConstantError,
    as_tensor_variable,
    constant,
    get_underlying_scalar_constant_value,
)
from arignote.tensor.type import TensorType
from arignote.tensor.type_other import NoneConst, NoneTypeT

__all__ = [
    "ShapeError",
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
]


class ShapeError(ValueError):
    """An ``infer_shape`` cannot express an output's shape; callers use the output's
    computed shape instead (the shape-inference protocol's fallback)."""


# --- gradient helpers (shared by the pullbacks of the tensor Ops) ---------------------------


def _grad_like(g: Variable, x: Variable) -> Variable:
    """``g``, a gradient term for ``x``, in ``x``'s dtype (when ``x`` is a float) and with
    ``x``'s static length-1 dimensions, so it adds up with the other terms for ``x``."""
    from arignote.tensor.math import cast

    g = as_tensor_variable(g)
    xk, gk = np.dtype(x.type.dtype).kind, np.dtype(g.type.dtype).kind
    if g.type.dtype != x.type.dtype and (xk == "c" or (xk == "f" and gk == "f")):
        g = cast(g, x.type.dtype)
    ones = [d for d, (xs, gs) in enumerate(zip(x.type.shape, g.type.shape)) if xs == 1 and gs != 1]
    if ones:
        g = specify_shape(g, tuple(1 if d in ones else None for d in range(g.type.ndim)))
    return g


def _zero_grad(x: Variable) -> Variable:
    """A zero gradient for ``x``: zeros shaped like it, in its dtype if float else floatX."""
    from arignote.configdefaults import config
    from arignote.tensor.alloc import zeros_like

    kind = np.dtype(x.type.dtype).kind
    return zeros_like(x, dtype=x.type.dtype if kind in "fc" else config.floatX)


def _disconnected(v: Any) -> bool:
    from arignote.gradient import DisconnectedType

    return isinstance(getattr(v, "type", None), DisconnectedType)


def _no_grad() -> Variable:
    """A "no gradient here" marker (:func:`arignote.gradient.disconnected_type`)."""
    from arignote.gradient import disconnected_type

    return disconnected_type()


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
        return [_no_grad()]

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], eval_points: Sequence[Variable]
    ) -> list:
        return [_no_grad()]


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
        return [_no_grad()]

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], eval_points: Sequence[Variable]
    ) -> list:
        return [_no_grad()]


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
                    from arignote.tensor.math import cast

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
        from arignote.tensor.math import cast

        if np.dtype(self.dtype).kind in "biu" or all(_disconnected(e) for e in eval_points):
            return [_no_grad()]
        parts = [
            _zero_grad(i) if _disconnected(e) else as_tensor_variable(e) for i, e in zip(inputs, eval_points)
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
        return [_grad_like(specify_shape(g, spec), x), *(_no_grad() for _ in lengths)]

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], eval_points: Sequence[Variable]
    ) -> list:
        if _disconnected(eval_points[0]):
            return [_no_grad()]
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
        from arignote.tensor.math import prod, switch

        if not any(s is None for s in node.outputs[0].type.shape):
            return [tuple(node.outputs[0].type.shape)]
        entries = [_vector_entry(node.inputs[1], i) for i in range(self.ndim)]
        total = prod(as_tensor_variable(list(shapes[0]) or [1]).astype("int64"))
        known = prod(switch(as_tensor_variable(entries) < 0, 1, as_tensor_variable(entries)))
        return [tuple(switch(e < 0, total // known, e) for e in entries)]

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        return [[True], [False]]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        """The gradient reshaped back to the input's shape; the shape is disconnected."""
        x, _ = inputs
        (g,) = output_grads
        return [_grad_like(reshape(g, shape_tuple(x)), x), _no_grad()]

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], eval_points: Sequence[Variable]
    ) -> list:
        if _disconnected(eval_points[0]):
            return [_no_grad()]
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


# PyTensor users import these from ``pytensor.tensor.shape``; they live in shape_utils.py,
# which needs this module first, so they are looked up on first use.
_FROM_SHAPE_UTILS = frozenset(
    ["shape_padleft", "shape_padright", "shape_padaxis", "specify_broadcastable", "get_vector_length"]
)


def __getattr__(name: str) -> Any:
    if name in _FROM_SHAPE_UTILS:
        from arignote.tensor import shape_utils

        return getattr(shape_utils, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
