"""Diagonals: ``ExtractDiag`` (a diagonal of a tensor, as a view, like ``numpy.diagonal``)
and its inverse ``AllocDiag`` (a tensor with a given diagonal and zeros elsewhere), and the
helpers built on them: ``diag``, ``diagonal``, ``trace``, ``fill_diagonal`` and
``fill_diagonal_offset``.

Both Ops take the diagonal of axes ``axis1`` and ``axis2`` with ``offset`` (above the main
diagonal when positive): entry ``t`` of it is the element at ``t + max(-offset, 0)`` on
``axis1`` and ``t + max(offset, 0)`` on ``axis2``. The diagonal is the last axis of
``ExtractDiag``'s output (the other axes keep their order), and the last axis of
``AllocDiag``'s input.

>>> import numpy as np
>>> import arignote.tensor as pt
>>> x = pt.tensor("x", dtype="float64", shape=(3, 4))
>>> d = pt.diagonal(x, offset=1)
>>> d.type
TensorType(float64, shape=(3,))
>>> d.eval({x: np.arange(12.0).reshape(3, 4)})
array([ 1.,  6., 11.])
>>> pt.diag(pt.as_tensor([1, 2])).eval()
array([[1, 0],
       [0, 2]])
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from arignote.graph.basic import Apply, Constant, Variable
from arignote.graph.null_type import disconnected_type, is_disconnected
from arignote.graph.op import Op
from arignote.graph.replace import register_batch_rule
from arignote.tensor.alloc import Alloc, zeros_like
from arignote.tensor.conversion import (
    NotScalarConstantError,
    as_tensor_variable,
    constant,
    get_underlying_scalar_constant_value,
)
from arignote.tensor.indexing.basic import set_subtensor
from arignote.tensor.ranges import arange
from arignote.tensor.reductions import sum as tensor_sum
from arignote.tensor.shape import (
    _grad_like,
    _zero_grad,
    dim_length,
    shape_i,
    specify_shape,
)
from arignote.tensor.type import TensorType
from arignote.tensor.ufuncs import cast, maximum, minimum

__all__ = [
    "ExtractDiag",
    "AllocDiag",
    "diag",
    "diagonal",
    "extract_diag",
    "trace",
    "fill_diagonal",
    "fill_diagonal_offset",
]


# --- helpers ---------------------------------------------------------------------------------


def _check_int(value: Any, what: str) -> int:
    """``value`` as a Python int; a TypeError naming ``what`` for anything else (a
    symbolic value included: offsets and axes of these Ops are part of their props)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        hint = " known when the graph is built" if isinstance(value, Variable) else ""
        raise TypeError(f"{what} must be an int{hint}, got {value!r} of type {type(value).__name__}")
    return int(value)


def _two_axes(
    axis1: int, axis2: int, ndim: int, describe: Callable[[], tuple[str, str]], distinct: bool = True
) -> tuple[int, int]:
    """``axis1, axis2`` (ints) made non-negative for an ``ndim``-d tensor; ``distinct``: they
    must name different axes. ``describe()`` gives ``(who, which tensor)`` for the error
    message (called only on an error: formatting them costs more than the check)."""
    for which, ax in (("axis1", axis1), ("axis2", axis2)):
        if not -ndim <= ax < ndim:
            what, subject = describe()
            raise np.exceptions.AxisError(f"{what}: {which}={ax} is out of range for {subject}")
    a1, a2 = axis1 % ndim, axis2 % ndim
    if distinct and a1 == a2:
        what, subject = describe()
        raise ValueError(f"{what}: axis1 and axis2 are the same axis ({a1}) of {subject}")
    return a1, a2


def _axes(op: Any, ndim: int, name: str) -> tuple[int, int]:
    """``op.axis1, op.axis2`` made non-negative for a tensor of ``ndim`` dimensions."""
    return _two_axes(op.axis1, op.axis2, ndim, lambda: (str(op), f"the {ndim}-d {name}"))


def _diag_start(k: Any) -> tuple[Any, Any]:
    """Where diagonal ``k`` starts: ``(row, column)``, ints or (for a symbolic ``k``) Variables."""
    if isinstance(k, int):
        return max(-k, 0), max(k, 0)
    return maximum(-k, 0), maximum(k, 0)


def _diag_len(n1: int | None, n2: int | None, k: int) -> int | None:
    """The length of diagonal ``k`` of an ``n1 x n2`` block, when the lengths tell it."""
    row0, col0 = _diag_start(k)
    if n1 is not None and n2 is not None:
        return max(0, min(n1 - row0, n2 - col0))
    if (n1 is not None and n1 - row0 <= 0) or (n2 is not None and n2 - col0 <= 0):
        return 0
    return None


def _symbolic_diag_len(n1: Any, n2: Any, k: Any) -> Variable:
    """The length of diagonal ``k`` of an ``n1 x n2`` block, as an int64 Variable."""
    row0, col0 = _diag_start(k)
    n1, n2 = (cast(as_tensor_variable(n), "int64") for n in (n1, n2))
    return maximum(0, minimum(n1 - row0, n2 - col0))


def _alloc_shape(ndim: int, a1: int, a2: int, size: Any, rest: Sequence[Any]) -> list[Any]:
    """The shape of an ``AllocDiag`` output: ``size`` on the diagonal axes ``a1, a2`` and
    the input's leading lengths ``rest``, in order, on the other axes."""
    shape = [size] * ndim
    for d, s in zip([d for d in range(ndim) if d not in (a1, a2)], rest):
        shape[d] = s
    return shape


def _linear_pushforward(op: Op, inputs: Sequence[Variable], eval_points: Sequence[Variable]) -> list:
    """The tangent of a linear one-input Op: the Op applied to the input's tangent (none
    for an integer input, which has no tangent)."""
    (t,) = eval_points
    if is_disconnected(t) or not _is_float(inputs[0]):
        return [disconnected_type()]
    return [op(t)]


def _is_float(v: Variable) -> bool:
    return np.dtype(v.type.dtype).kind in "fc"


# --- ExtractDiag -----------------------------------------------------------------------------


class ExtractDiag(Op):
    """Diagonal ``offset`` of axes ``axis1`` and ``axis2`` of a tensor (``numpy.diagonal``).

    The output drops those two axes and appends the diagonal as its last axis. With
    ``view`` (the default) it is a read-only view of the input, as NumPy returns it;
    ``view=False`` copies.

    >>> import numpy as np
    >>> import arignote.tensor as pt
    >>> x = pt.dtensor3("x")
    >>> y = ExtractDiag(offset=0, axis1=1, axis2=2)(x)
    >>> y.eval({x: np.arange(8.0).reshape(2, 2, 2)})
    array([[0., 3.],
           [4., 7.]])
    """

    __props__ = ("offset", "axis1", "axis2", "view")

    def __init__(self, offset: int = 0, axis1: int = 0, axis2: int = 1, view: bool = True):
        self.offset = _check_int(offset, "ExtractDiag: offset")
        self.axis1 = _check_int(axis1, "ExtractDiag: axis1")
        self.axis2 = _check_int(axis2, "ExtractDiag: axis2")
        self.view = bool(view)
        self.view_map = {0: [0]} if self.view else {}

    def make_node(self, x: Any) -> Apply:
        x = as_tensor_variable(x)
        if x.type.ndim < 2:
            raise ValueError(f"{self}: the input {x} of Type {x.type} needs at least 2 dimensions")
        a1, a2 = _axes(self, x.type.ndim, "input")
        shp = x.type.shape
        rest = [s for d, s in enumerate(shp) if d not in (a1, a2)]
        length = _diag_len(shp[a1], shp[a2], self.offset)
        return Apply(self, [x], [TensorType(x.type.dtype, (*rest, length))()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        d = np.diagonal(inputs[0], self.offset, self.axis1, self.axis2)
        output_storage[0][0] = d if self.view else d.copy()

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list[tuple]:
        (xshape,) = shapes
        a1, a2 = _axes(self, len(xshape), "input")
        rest = [s for d, s in enumerate(xshape) if d not in (a1, a2)]
        length = node.outputs[0].type.shape[-1]
        if length is None:
            length = _symbolic_diag_len(xshape[a1], xshape[a2], self.offset)
        return [(*rest, length)]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        """The cotangent written on the same diagonal of zeros shaped like the input:
        ``AllocDiag`` of it, cut or padded with zeros to the input's lengths."""
        (x,) = inputs
        if not _is_float(x):
            return [_zero_grad(x)]
        g = as_tensor_variable(output_grads[0])
        a1, a2 = _axes(self, x.type.ndim, "input")
        k = self.offset
        full = AllocDiag(axis1=a1, axis2=a2, offset=k)(g)
        n1, n2 = x.type.shape[a1], x.type.shape[a2]
        if n1 is not None and n1 == n2 and k == 0:
            return [_grad_like(full, x)]  # a square block: the diagonal fills it exactly
        return [_grad_like(_embed_diagonal_block(full, x, a1, a2), x)]

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], eval_points: Sequence[Variable]
    ) -> list:
        return _linear_pushforward(self, inputs, eval_points)

    def __str__(self) -> str:
        return (
            f"ExtractDiag{{offset={self.offset}, axis1={self.axis1}, axis2={self.axis2}, view={self.view}}}"
        )


def _embed_diagonal_block(full: Variable, x: Variable, a1: int, a2: int) -> Variable:
    """``full`` (an ``AllocDiag`` output: ``S x S`` on axes ``a1, a2``) placed in zeros
    shaped like ``x``. Every nonzero of ``full`` lies inside ``x``'s lengths, so cutting
    it to ``min(S, n)`` on each axis keeps them all; the rest of ``x``'s block stays 0."""
    size = shape_i(full, a1)
    index: list[Any] = [slice(None)] * x.type.ndim
    for a in (a1, a2):
        n = x.type.shape[a]
        s = full.type.shape[a]
        if n is not None and s is not None:
            index[a] = slice(0, min(n, s))
        else:
            index[a] = slice(0, minimum(size, shape_i(x, a)))
    key = tuple(index)
    return set_subtensor(zeros_like(x, dtype=full.type.dtype)[key], full[key])


# --- AllocDiag -------------------------------------------------------------------------------


class AllocDiag(Op):
    """A tensor of zeros with the last axis of the input on diagonal ``offset`` of the
    output axes ``axis1`` and ``axis2`` (the inverse of :class:`ExtractDiag`).

    The output has one more dimension than the input; its two diagonal axes have the
    length ``n + |offset|`` (``n``: the input's last length) and the input's other axes,
    in order, fill the remaining output axes.

    >>> import numpy as np
    >>> import arignote.tensor as pt
    >>> v = pt.dvector("v")
    >>> AllocDiag(axis1=0, axis2=1, offset=-1)(v).eval({v: np.array([1.0, 2.0])})
    array([[0., 0., 0.],
           [1., 0., 0.],
           [0., 2., 0.]])
    """

    __props__ = ("axis1", "axis2", "offset")

    def __init__(self, *, axis1: int = 0, axis2: int = 1, offset: int = 0):
        self.axis1 = _check_int(axis1, "AllocDiag: axis1")
        self.axis2 = _check_int(axis2, "AllocDiag: axis2")
        self.offset = _check_int(offset, "AllocDiag: offset")

    def make_node(self, x: Any) -> Apply:
        x = as_tensor_variable(x)
        if x.type.ndim < 1:
            raise ValueError(f"{self}: the input {x} of Type {x.type} needs at least 1 dimension")
        ndim = x.type.ndim + 1
        a1, a2 = _axes(self, ndim, "output")
        n = x.type.shape[-1]
        size = None if n is None else n + abs(self.offset)
        shape = _alloc_shape(ndim, a1, a2, size, x.type.shape[:-1])
        return Apply(self, [x], [TensorType(x.type.dtype, shape)()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        (x,) = inputs
        ndim = x.ndim + 1
        a1, a2 = self.axis1 % ndim, self.axis2 % ndim  # checked by make_node
        out = np.zeros(
            _alloc_shape(ndim, a1, a2, x.shape[-1] + abs(self.offset), x.shape[:-1]), dtype=x.dtype
        )
        # the diagonal axes moved last (a writable view of out), then written at once
        block = np.moveaxis(out, (a1, a2), (-2, -1))
        t = np.arange(x.shape[-1])
        row0, col0 = _diag_start(self.offset)
        block[..., t + row0, t + col0] = x
        output_storage[0][0] = out

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list[tuple]:
        (xshape,) = shapes
        ndim = len(xshape) + 1
        a1, a2 = _axes(self, ndim, "output")
        size: Any = node.outputs[0].type.shape[a1]
        if size is None:
            size = cast(as_tensor_variable(xshape[-1]), "int64") + abs(self.offset)
        return [tuple(_alloc_shape(ndim, a1, a2, size, xshape[:-1]))]

    def do_constant_folding(self, fgraph: Any, node: Apply) -> bool:
        """Fold only small outputs: the output has about ``n`` times more elements than
        the input, and a folded constant lives as long as the compiled function."""
        shape = node.outputs[0].type.shape
        return None not in shape and int(np.prod(shape)) <= Alloc.fold_limit

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        """The same diagonal of the cotangent (the rest of the output is constant)."""
        (x,) = inputs
        if not _is_float(x):
            return [_zero_grad(x)]
        g = as_tensor_variable(output_grads[0])
        return [_grad_like(ExtractDiag(self.offset, self.axis1, self.axis2, view=False)(g), x)]

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], eval_points: Sequence[Variable]
    ) -> list:
        return _linear_pushforward(self, inputs, eval_points)

    def __str__(self) -> str:
        return f"AllocDiag{{offset={self.offset}, axis1={self.axis1}, axis2={self.axis2}}}"


# The batch dimension is a new leading axis: both Ops shift their axes by one. AllocDiag
# gives its input's leading axes to the output's non-diagonal axes in order, so the batch
# lands on output axis 0 once both diagonal axes are moved past it.


@register_batch_rule(ExtractDiag)
def _batch_extract_diag(op: ExtractDiag, node: Apply, args: list, flags: list) -> list:
    a1, a2 = _axes(op, node.inputs[0].type.ndim, "input")
    return [(ExtractDiag(op.offset, a1 + 1, a2 + 1, op.view)(args[0]), True)]


@register_batch_rule(AllocDiag)
def _batch_alloc_diag(op: AllocDiag, node: Apply, args: list, flags: list) -> list:
    a1, a2 = _axes(op, node.outputs[0].type.ndim, "output")
    return [(AllocDiag(axis1=a1 + 1, axis2=a2 + 1, offset=op.offset)(args[0]), True)]


# --- functions -------------------------------------------------------------------------------


def diagonal(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Variable:
    """Diagonal ``offset`` of the axes ``axis1`` and ``axis2`` of ``a``, as the last axis
    of the result (``numpy.diagonal``; a view of ``a``).

    >>> import numpy as np
    >>> import arignote.tensor as pt
    >>> x = pt.dmatrix("x")
    >>> pt.diagonal(x, -1).eval({x: np.arange(9.0).reshape(3, 3)})
    array([3., 7.])
    """
    a = as_tensor_variable(a)
    offset = _check_int(offset, "diagonal: offset")
    ndim = a.type.ndim
    if ndim < 2:
        raise ValueError(f"diagonal: {a} of Type {a.type} has {ndim} dimension(s); it needs at least 2")
    axis1, axis2 = _check_int(axis1, "diagonal: axis1"), _check_int(axis2, "diagonal: axis2")
    a1, a2 = _two_axes(axis1, axis2, ndim, lambda: ("diagonal", f"{a} of Type {a.type}"))
    if a1 > a2:  # the same diagonal, read from the other axis: one canonical Op for both
        a1, a2, offset = a2, a1, -offset
    return ExtractDiag(offset, a1, a2)(a)


def extract_diag(x: Any) -> Variable:
    """The main diagonal of the first two axes of ``x`` (:func:`diagonal` with its defaults)."""
    return diagonal(x)


def alloc_diag(x: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Variable:
    """The last axis of ``x`` placed on diagonal ``offset`` of axes ``axis1`` and ``axis2``
    of a new tensor of zeros (one dimension more than ``x``): :class:`AllocDiag`."""
    x = as_tensor_variable(x)
    ndim = x.type.ndim + 1
    # equal axes are left to AllocDiag, whose error names the Op
    axis1, axis2 = _check_int(axis1, "alloc_diag: axis1"), _check_int(axis2, "alloc_diag: axis2")
    a1, a2 = _two_axes(axis1, axis2, ndim, lambda: ("alloc_diag", f"the {ndim}-d output"), distinct=False)
    return AllocDiag(axis1=a1, axis2=a2, offset=_check_int(offset, "alloc_diag: offset"))(x)


def diag(v: Any, k: int = 0) -> Variable:
    """``numpy.diag``: for a vector, the square matrix with it on diagonal ``k``; for a
    matrix, its diagonal ``k`` as a vector.

    >>> import arignote.tensor as pt
    >>> pt.diag(pt.as_tensor([[1.0, 2.0], [3.0, 4.0]]), k=1).eval()
    array([2.])
    """
    v = as_tensor_variable(v)
    k = _check_int(k, "diag: k")
    if v.type.ndim == 1:
        return AllocDiag(axis1=0, axis2=1, offset=k)(v)
    if v.type.ndim == 2:
        return diagonal(v, k)
    raise ValueError(f"diag: the input must be 1-d or 2-d, got {v} of Type {v.type}")


def trace(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Variable:
    """``numpy.trace``: the sum along diagonal ``offset`` of axes ``axis1`` and ``axis2``
    (small integers and bools sum in int64, unsigned ones in uint64, as NumPy does).

    For the trace of the last two axes of a stack of matrices see
    :func:`arignote.tensor.linalg.trace`.

    >>> import numpy as np
    >>> import arignote.tensor as pt
    >>> x = pt.dmatrix("x")
    >>> pt.trace(x).eval({x: np.arange(9.0).reshape(3, 3)})
    array(12.)
    """
    return tensor_sum(diagonal(a, offset, axis1, axis2), axis=-1)


# --- writing a diagonal ----------------------------------------------------------------------


def _fill_value(a: Variable, val: Any, what: str) -> Variable:
    """``val`` as a 0-d tensor of ``a``'s dtype, or a TypeError when it does not fit."""
    val = as_tensor_variable(val)
    if val.type.ndim != 0:
        raise TypeError(f"{what}: val must be a scalar (0-d), got {val} of Type {val.type}")
    dtype = a.type.dtype
    if val.type.dtype == dtype:
        return val
    if isinstance(val, Constant):
        # a constant fits when it converts exactly (0.5 into float32, 3 into uint8)
        data = np.asarray(val.data)
        if data.dtype.kind != "c" or np.dtype(dtype).kind == "c":
            with np.errstate(all="ignore"):
                converted = data.astype(dtype)
            if np.array_equal(converted, data, equal_nan=data.dtype.kind in "fc"):
                return constant(converted)
    elif np.can_cast(val.type.dtype, dtype, "safe"):
        return cast(val, dtype)
    raise TypeError(
        f"{what}: val of dtype {val.type.dtype} cannot be written into {a} of dtype {dtype} "
        f"without loss; cast one of them first"
    )


def fill_diagonal(a: Any, val: Any) -> Variable:
    """A copy of ``a`` with the scalar ``val`` on its main diagonal (``numpy.fill_diagonal``
    without ``wrap``): ``a[i, i]`` for ``i < min(a.shape)`` of a matrix, ``a[i, i, ..., i]``
    of a tensor of 3 or more dimensions (which must all have the same length).

    ``val`` must fit ``a``'s dtype without loss.

    >>> import numpy as np
    >>> import arignote.tensor as pt
    >>> x = pt.dmatrix("x")
    >>> pt.fill_diagonal(x, 5.0).eval({x: np.zeros((3, 2))})
    array([[5., 0.],
           [0., 5.],
           [0., 0.]])
    """
    a = as_tensor_variable(a)
    if a.type.ndim < 2:
        raise TypeError(f"fill_diagonal: a must have at least 2 dimensions, got {a} of Type {a.type}")
    val = _fill_value(a, val, "fill_diagonal")
    if a.type.ndim == 2:
        n1, n2 = a.type.shape
        n = min(n1, n2) if n1 is not None and n2 is not None else minimum(dim_length(a, 0), dim_length(a, 1))
        r = arange(n)
        return set_subtensor(a[r, r], val)
    known = {s for s in a.type.shape if s is not None}
    if len(known) > 1:
        raise ValueError(
            f"fill_diagonal: all dimensions of a tensor of 3 or more dimensions must have the same "
            f"length; {a} has Type {a.type}"
        )
    n = known.pop() if known else shape_i(a, 0)
    if None in a.type.shape:
        a = specify_shape(a, (n,) * a.type.ndim)  # a run-time error names the length that differs
    r = arange(n)
    return set_subtensor(a[(r,) * a.type.ndim], val)


def _as_offset(offset: Any, what: str) -> Variable | int:
    """``offset`` as an int (when known statically) or a 0-d integer tensor."""
    if isinstance(offset, (bool, np.bool_)):
        raise TypeError(f"{what}: offset must be an integer, got the bool {offset!r}")
    off = as_tensor_variable(offset)
    if off.type.ndim != 0 or np.dtype(off.type.dtype).kind not in "iu":
        raise TypeError(f"{what}: offset must be a 0-d integer, got {off} of Type {off.type}")
    try:
        return int(get_underlying_scalar_constant_value(off))
    except NotScalarConstantError:
        return cast(off, "int64")


def fill_diagonal_offset(a: Any, val: Any, offset: Any) -> Variable:
    """A copy of the matrix ``a`` with the scalar ``val`` on diagonal ``offset`` (above the
    main diagonal when positive); ``offset`` may be symbolic. A diagonal outside the
    matrix leaves it unchanged.

    >>> import numpy as np
    >>> import arignote.tensor as pt
    >>> x = pt.dmatrix("x")
    >>> pt.fill_diagonal_offset(x, 1.0, -1).eval({x: np.zeros((3, 3))})
    array([[0., 0., 0.],
           [1., 0., 0.],
           [0., 1., 0.]])
    """
    a = as_tensor_variable(a)
    if a.type.ndim != 2:
        raise TypeError(f"fill_diagonal_offset: a must be a matrix, got {a} of Type {a.type}")
    val = _fill_value(a, val, "fill_diagonal_offset")
    k = _as_offset(offset, "fill_diagonal_offset")
    length: Any = _diag_len(*a.type.shape, k) if isinstance(k, int) else None
    if length is None:
        length = _symbolic_diag_len(dim_length(a, 0), dim_length(a, 1), k)
    row0, col0 = _diag_start(k)
    t = arange(length, dtype="int64")
    return set_subtensor(a[t + row0, t + col0], val)
