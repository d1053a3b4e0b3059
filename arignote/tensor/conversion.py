"""Making tensors from values: constants (with the dtype rules for Python numbers),
``as_tensor_variable``, the scalar<->tensor Ops, and what is known statically of a value
(``get_underlying_scalar_constant_value``).

>>> import arignote.tensor as pt
>>> pt.constant(3).dtype, pt.constant(3.0).dtype, pt.constant(0.1).dtype
('int8', 'float32', 'float64')
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from arignote.configdefaults import config
from arignote.graph.basic import Apply, Constant, Variable
from arignote.graph.op import Op
from arignote.graph.replace import register_batch_rule
from arignote.scalar.type import ScalarType, get_scalar_type, python_scalar_dtype
from arignote.tensor.type import TensorType

if TYPE_CHECKING:  # the classes are attached to TensorType by arignote.tensor.variable
    from arignote.tensor.variable import TensorConstant, TensorVariable

__all__ = [
    "NotScalarConstantError",
    "TensorLike",
    "ScalarFromTensor",
    "TensorFromScalar",
    "as_tensor",
    "as_tensor_variable",
    "constant",
    "get_scalar_constant_value",
    "get_underlying_scalar_constant_value",
    "is_literal_constant",
    "literal_constant",
    "register_constant_rule",
    "scalar_from_tensor",
    "tensor_from_scalar",
]


#: what :func:`as_tensor_variable` accepts: a Variable, a sequence of them (stacked), or any
#: array-like value (made a constant); PyTensor 3's annotation for tensor arguments
TensorLike = Variable | Sequence[Variable] | ArrayLike


class NotScalarConstantError(Exception):
    """The Variable is not a constant scalar (so its value is not known statically)."""


def _python_dtype(data: Any) -> str | None:
    """The dtype of a bare Python number (``None`` for anything else, NumPy scalars included:
    they keep their own dtype). A Python ``bool`` is an error."""
    if isinstance(data, np.generic):
        return None  # np.float64 subclasses float, but keeps its dtype
    if isinstance(data, (bool, int, float, complex)):
        return python_scalar_dtype(data)  # raises for bool: ambiguous
    return None


def _check_sequence(data: Any) -> None:
    """Reject lists/tuples mixing Python bools with numbers (an ambiguous dtype)."""
    flat = _flatten(data)
    bools = [v for v in flat if isinstance(v, bool)]
    if bools and len(bools) != len(flat):
        raise TypeError(
            f"Mixed Python bools and numbers in {data!r}: the dtype is ambiguous; "
            "use numbers, or a NumPy bool array"
        )


def constant(x: Any, name: str | None = None, ndim: int | None = None, dtype: Any = None) -> TensorConstant:
    """A :class:`TensorConstant` holding ``x``.

    A Python int gets the smallest int dtype holding it, a Python float float32 when
    exact (any float that fits, when floatX is float32) else float64. Lists and tuples
    get NumPy's dtype (int64/float64; an empty one is floatX), and NumPy values keep
    theirs. A Python ``bool`` is rejected (use ``numpy.bool_``). An explicit ``dtype``
    must hold a Python value exactly. ``ndim`` left-pads (or squeezes leading 1s) to
    that many dimensions.
    """
    return _make_constant(x, name, ndim, dtype)


def literal_constant(x: Any, ndim: int | None = None, dtype: Any = None) -> TensorConstant:
    """The constant for a Python number written in an expression (``x * 2.0``).

    Such numbers are the constants users write most: the same value gives the same
    (immutable) constant, which is cheaper to build and to merge. It is marked as a literal
    (``is_literal_constant``) so that ``debugprint`` gives each of its uses its own id, as
    it would to the separate constants PyTensor makes. :func:`constant` always makes a new
    one, as in PyTensor.
    """
    if type(x) not in (int, float):
        return _make_constant(x, None, ndim, dtype)
    key = (type(x), x, math.copysign(1.0, x), ndim, dtype, config.floatX)
    cached = _scalar_constants.get(key)
    if cached is not None:
        return cached
    result = _make_constant(x, None, ndim, dtype)
    result.tag.literal = True
    if len(_scalar_constants) > 4096:
        _scalar_constants.clear()
    _scalar_constants[key] = result
    return result


def is_literal_constant(var: Any) -> bool:
    """Whether ``var`` is a shared constant made by :func:`literal_constant`."""
    tag = getattr(var, "_tag", None)  # read without making a tag
    return tag is not None and isinstance(var, Constant) and getattr(tag, "literal", False)


_scalar_constants: dict = {}


def _make_constant(x: Any, name: str | None, ndim: int | None, dtype: Any) -> TensorConstant:
    if isinstance(x, Variable):
        raise TypeError(f"constant() needs a value, got the symbolic Variable {x}")
    if isinstance(x, bool):
        raise TypeError(
            f"A Python bool ({x}) is not accepted as a tensor constant: write numpy.bool_({x}) "
            "(or numpy.array(...)) for a boolean tensor, or int(...) for 0/1"
        )
    if isinstance(x, (list, tuple)):
        _check_sequence(x)
    if dtype is not None:
        dtype = np.dtype(dtype).name if dtype != "floatX" else config.floatX
        if isinstance(x, np.ndarray):
            arr = x.astype(dtype, copy=False)
        else:
            orig = np.asarray(x)
            if orig.dtype.kind not in "biufc":
                raise TypeError(
                    f"Cannot make a tensor constant from {type(x).__name__} (NumPy dtype {orig.dtype})"
                )
            try:
                with np.errstate(all="ignore"):
                    arr = np.asarray(x, dtype=dtype)
            except (OverflowError, TypeError, ValueError):  # NumPy 2: 300 into int8, 1j into float
                arr = None
            if arr is None or not _same_values(orig, arr):
                raise TypeError(f"Value {x!r} cannot be represented exactly in dtype {dtype}")
    else:
        auto = _python_dtype(x)
        if auto is not None:
            with np.errstate(all="ignore"):
                arr = np.asarray(x, dtype=auto)  # rounds to float32 on purpose when floatX is
        else:
            arr = np.asarray(x)
            if arr.size == 0 and isinstance(x, (list, tuple)):
                arr = arr.astype(config.floatX)
    if arr.dtype.kind not in "biufc":
        raise TypeError(f"Cannot make a tensor constant from {type(x).__name__} (NumPy dtype {arr.dtype})")
    if ndim is not None:
        if arr.ndim > ndim:
            extra = arr.ndim - ndim
            if any(s != 1 for s in arr.shape[:extra]):
                raise ValueError(f"Cannot make a {ndim}-d constant from a value of shape {arr.shape}")
            arr = arr.reshape(arr.shape[extra:])
        elif arr.ndim < ndim:
            arr = arr.reshape((1,) * (ndim - arr.ndim) + arr.shape)
    ttype = TensorType(arr.dtype, arr.shape)
    return ttype.constant_type(ttype, arr, name=name)


def _same_values(a: np.ndarray, b: np.ndarray) -> bool:
    with np.errstate(all="ignore"):
        try:
            return bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
        except TypeError:
            return False


def as_tensor_variable(
    x: Any, name: str | None = None, ndim: int | None = None, **kwargs: Any
) -> TensorVariable:
    """``x`` as a tensor Variable: tensor Variables as they are, scalar Variables through
    :func:`tensor_from_scalar`, lists holding Variables stacked, everything else as a
    constant.

    ``ndim`` adjusts the number of dimensions: leading broadcastable dimensions are
    added or dropped (any other mismatch is an error); ``dtype=`` casts a constant and
    must match a Variable's dtype.
    """
    dtype = kwargs.pop("dtype", None)
    if kwargs:
        raise TypeError(f"as_tensor_variable: unexpected arguments {sorted(kwargs)}")
    return _as_tensor_variable(x, name, ndim, dtype)


@functools.singledispatch
def _as_tensor_variable(x: Any, name: str | None, ndim: int | None, dtype: Any) -> TensorVariable:
    """:func:`as_tensor_variable` by the Python type of ``x`` (PyTensor's extension point:
    a module registers the kinds of values it knows how to turn into tensors; sequences
    holding Variables are registered by :mod:`arignote.tensor.join`, which stacks them)."""
    if name is None:
        return literal_constant(x, ndim=ndim, dtype=dtype)
    return constant(x, name=name, ndim=ndim, dtype=dtype)


@_as_tensor_variable.register(Apply)
def _apply_as_tensor(x: Apply, name: str | None, ndim: int | None, dtype: Any) -> TensorVariable:
    return _as_tensor_variable(x.default_output(), name, ndim, dtype)


@_as_tensor_variable.register(Variable)
def _variable_as_tensor(x: Variable, name: str | None, ndim: int | None, dtype: Any) -> TensorVariable:
    if isinstance(x.type, ScalarType):
        x = tensor_from_scalar(x)
    elif not isinstance(x.type, TensorType):
        raise TypeError(f"Cannot use {x} of Type {x.type} as a tensor")
    if ndim is not None and x.type.ndim != ndim:
        if x.type.ndim < ndim:  # pad on the left with broadcastable dimensions
            return x.dimshuffle(["x"] * (ndim - x.type.ndim) + list(range(x.type.ndim)))
        if all(b for b in x.type.broadcastable[: x.type.ndim - ndim]):
            return x.dimshuffle(list(range(x.type.ndim - ndim, x.type.ndim)))
        raise ValueError(
            f"{x} of Type {x.type} is {x.type.ndim}-d and its leading dimensions are not "
            f"broadcastable; a {ndim}-d tensor is needed here"
        )
    if dtype is not None and x.type.dtype != np.dtype(dtype).name:
        raise TypeError(f"{x} has dtype {x.type.dtype}, expected {np.dtype(dtype).name}")
    return x  # type: ignore[return-value]


as_tensor = as_tensor_variable


def _flatten(items: Sequence) -> list:
    out, stack = [], list(items)
    while stack:
        v = stack.pop()
        if isinstance(v, (list, tuple)):
            stack.extend(v)
        else:
            out.append(v)
    return out


# --- scalar <-> tensor -------------------------------------------------------------------


class TensorFromScalar(Op):
    """A 0-d tensor holding a scalar's value."""

    __props__ = ()

    def make_node(self, s: Any) -> Apply:
        if not isinstance(getattr(s, "type", None), ScalarType):
            raise TypeError(f"TensorFromScalar needs a scalar Variable, got {s!r}")
        return Apply(self, [s], [TensorType(s.type.dtype, ())()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        output_storage[0][0] = np.asarray(inputs[0], dtype=node.outputs[0].type.dtype)

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list[tuple]:
        return [()]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        """The gradient as a scalar (in the input's dtype when that is a float)."""
        return [_scalar_grad(output_grads[0], inputs[0])]

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], eval_points: Sequence[Variable]
    ) -> list:
        (e,) = eval_points
        if isinstance(getattr(e, "type", None), ScalarType):
            return [tensor_from_scalar(e)]
        return [e]  # already a tensor, or disconnected


class ScalarFromTensor(Op):
    """The scalar held by a 0-d tensor."""

    __props__ = ()

    def make_node(self, t: Any) -> Apply:
        t = as_tensor_variable(t)
        if t.type.ndim != 0:
            raise TypeError(f"ScalarFromTensor needs a 0-d tensor, got {t.type}")
        return Apply(self, [t], [get_scalar_type(t.type.dtype)()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        output_storage[0][0] = inputs[0][()]

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list[tuple]:
        return [()]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        """The gradient as a 0-d tensor (in the input's dtype when that is a float)."""
        (g,) = output_grads
        if isinstance(getattr(g, "type", None), ScalarType):
            g = tensor_from_scalar(g)
        if isinstance(getattr(g, "type", None), TensorType):
            xk, gk = np.dtype(inputs[0].type.dtype).kind, np.dtype(g.type.dtype).kind
            if g.type.dtype != inputs[0].type.dtype and (xk == "c" or (xk == "f" and gk == "f")):
                g = g.astype(inputs[0].type.dtype)  # a term in the input's float dtype
            return [g]
        return [g]  # disconnected or undefined

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], eval_points: Sequence[Variable]
    ) -> list:
        (e,) = eval_points
        if isinstance(getattr(e, "type", None), TensorType):
            return [scalar_from_tensor(e)]
        return [e]


@register_batch_rule(TensorFromScalar, ScalarFromTensor)
def _batch_scalar_tensor(op: Op, node: Apply, args: list, flags: list) -> list | None:
    """A batch of scalars is a vector of them, and so is a batch of 0-d tensors: the batched
    value goes through unchanged (vectorize_graph batches scalar outputs, as of
    ``optimize.root``'s success flag, into such vectors)."""
    (value,) = args
    if not flags[0]:
        return None
    value = as_tensor_variable(value)
    if value.type.ndim != 1:
        return None
    if value.type.dtype != node.outputs[0].type.dtype:
        value = value.astype(node.outputs[0].type.dtype)
    return [(value, True)]


def _scalar_grad(g: Any, s: Variable) -> Any:
    """The 0-d tensor gradient ``g`` as a scalar for the scalar ``s`` (cast to ``s``'s float
    dtype; an integer ``s`` gets a float gradient, zero when ``g`` is)."""
    if not isinstance(getattr(g, "type", None), TensorType):
        return g  # disconnected or undefined: passed on as it is
    kind = np.dtype(s.type.dtype).kind
    if kind in "fc" and g.type.dtype != s.type.dtype:
        g = g.astype(s.type.dtype)
    return scalar_from_tensor(g)


tensor_from_scalar = TensorFromScalar()
scalar_from_tensor = ScalarFromTensor()


def get_underlying_scalar_constant_value(
    v: Any,
    *,
    elemwise: bool = True,
    only_process_constants: bool = False,
    max_recur: int = 10,
    raise_not_constant: bool = True,
) -> Any:
    """The value of ``v`` if it is statically a known scalar, else
    :class:`NotScalarConstantError` (or ``v`` itself with ``raise_not_constant=False``).

    Looks through DimShuffles, TensorFromScalar/ScalarFromTensor, ``Shape_i`` of a static
    length and (with ``elemwise``) Elemwise ops (casts, arithmetic) of constant scalars;
    a Constant whose elements are all equal gives that value. ``only_process_constants``
    looks at Constants only. The result is a NumPy scalar. Each Op says how it is seen
    through by a rule next to it (:func:`register_constant_rule`).
    """
    try:
        return _underlying_scalar(v, _Look(elemwise, only_process_constants, max_recur))
    except NotScalarConstantError:
        if raise_not_constant:
            raise
        return v


def get_scalar_constant_value(
    v: Any,
    elemwise: bool = True,
    only_process_constants: bool = False,
    max_recur: int = 10,
    raise_not_constant: bool = True,
) -> Any:
    """The value of the 0-d ``v`` when it is known statically (a NumPy scalar), else
    :class:`NotScalarConstantError` (or ``v`` itself, with ``raise_not_constant=False``).
    A tensor of one or more dimensions is not a scalar, even if it holds one value; see
    :func:`get_underlying_scalar_constant_value` for the rules.

    >>> import arignote.tensor as pt
    >>> int(pt.get_scalar_constant_value(pt.constant(3) + 2))
    5
    """
    ndim = v.type.ndim if isinstance(v, Variable) and isinstance(v.type, TensorType) else np.ndim(v)
    if ndim != 0:
        if raise_not_constant:
            raise NotScalarConstantError(f"get_scalar_constant_value: {v!r} is {ndim}-d, not a scalar")
        return v
    return get_underlying_scalar_constant_value(
        v,
        elemwise=elemwise,
        only_process_constants=only_process_constants,
        max_recur=max_recur,
        raise_not_constant=raise_not_constant,
    )


class _Look:
    """One search for a static value: its options, and the value of an input (one level
    of Elemwise nesting deeper)."""

    __slots__ = ("elemwise", "max_recur", "only_constants")

    def __init__(self, elemwise: bool, only_constants: bool, max_recur: int):
        self.elemwise, self.only_constants, self.max_recur = elemwise, only_constants, max_recur

    def value_of(self, v: Any) -> Any:
        return _underlying_scalar(v, _Look(self.elemwise, self.only_constants, self.max_recur - 1))


#: a rule: ``(op, node, look) ->`` a Variable to look at instead, the value (a NumPy
#: scalar), or ``None`` (not known statically); it may raise NotScalarConstantError
ConstantRule = Callable[[Op, Apply, _Look], Any]


@functools.singledispatch
def _constant_rule(op: Op, node: Apply, look: _Look) -> Any:
    return None


def register_constant_rule(*op_classes: type) -> Callable[[ConstantRule], ConstantRule]:
    """Decorator: how :func:`get_underlying_scalar_constant_value` sees through the
    outputs of Ops of these classes (kept next to each Op)."""

    def register(rule: ConstantRule) -> ConstantRule:
        for cls in op_classes:
            _constant_rule.register(cls)(rule)
        return rule

    return register


def _underlying_scalar(v: Any, look: _Look) -> Any:
    for _ in range(10_000):  # chains of look-through Ops; Elemwise nesting is bounded by max_recur
        if not isinstance(v, Variable):
            arr = np.asarray(v) if not isinstance(v, (bool, np.bool_)) else np.asarray(v, dtype=bool)
            if arr.dtype.kind not in "biufc" or arr.size != 1:
                raise NotScalarConstantError(f"{v!r} is not a numeric scalar")
            return arr.reshape(())[()]
        if isinstance(v, Constant):
            data = np.asarray(v.data)
            if data.dtype.kind not in "biufc" or data.size == 0:
                raise NotScalarConstantError(f"{v} is not a numeric scalar")
            flat = data.reshape(-1)
            if data.size > 1 and not (flat == flat[0]).all():
                raise NotScalarConstantError(f"{v} holds {data.size} different values, not one")
            return flat[0]
        node = v.owner
        if node is None or look.only_constants:
            raise NotScalarConstantError(f"{v} is not a constant")
        seen = _constant_rule(node.op, node, look)
        if seen is None:
            raise NotScalarConstantError(f"{v} is computed by {node.op}; its value is not known statically")
        if not isinstance(seen, Variable):
            return seen
        v = seen
    raise NotScalarConstantError(f"{v}: too deep to be a known constant")


@register_constant_rule(TensorFromScalar, ScalarFromTensor)
def _through_conversion(op: Op, node: Apply, look: _Look) -> Variable:
    return node.inputs[0]
