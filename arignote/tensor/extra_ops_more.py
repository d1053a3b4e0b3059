"""More of ``pytensor.tensor.extra_ops``: ``searchsorted``, ``unique`` and ``bincount`` (Ops
over NumPy's own), and ``diff``, ``compress``, ``bartlett``, ``geomspace``, ``logspace``
(composed of existing Ops). :class:`CheckValues` is the run-time check the composed
functions use to reject bad values with a clear error.

>>> import numpy as np
>>> import arignote.tensor as pt
>>> x = pt.dvector("x")
>>> pt.searchsorted(x, [0.5, 2.5]).eval({x: np.array([0.0, 1.0, 2.0, 3.0])})
array([1, 3])
>>> pt.bincount(pt.constant(np.array([0, 2, 2]))).eval()
array([1, 0, 2])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

import arignote.tensor as pt
from arignote.configdefaults import config
from arignote.graph.basic import Apply, Constant, Variable
from arignote.graph.op import Op
from arignote.tensor.basic import as_tensor_variable
from arignote.tensor.batching import register_batch_rule
from arignote.tensor.elemwise import normalize_axis
from arignote.tensor.shape import _disconnected, _grad_like, _no_grad, _zero_grad, shape, shape_i
from arignote.tensor.type import TensorType

# The other tensor modules are used through ``pt`` when a graph is built, not at import.
__all__ = ["searchsorted", "unique", "bincount", "diff", "compress", "bartlett", "geomspace", "logspace"]


def _is_int(v: Variable, bool_ok: bool = False) -> bool:
    return np.dtype(v.type.dtype).kind in ("biu" if bool_ok else "iu")


# --- CheckValues ---------------------------------------------------------------------------


class CheckValues(Op):
    """``x`` unchanged (a view), once ``cond`` is true everywhere; otherwise a ValueError
    that starts with ``message``. When ``cond`` has ``x``'s shape the error shows the first
    offending values of ``x`` and where they are.

    The composed functions of this package check their inputs with it where NumPy raises
    (``bincount`` of negative values, ``choose`` with an invalid index, ...).
    """

    __props__ = ("message",)
    view_map = {0: [0]}

    def __init__(self, message: str):
        self.message = str(message)

    def make_node(self, x: Any, cond: Any) -> Apply:
        x, cond = as_tensor_variable(x), as_tensor_variable(cond)
        if cond.type.dtype != "bool":
            raise TypeError(f"{self}: the condition must be a bool tensor, got {cond} of Type {cond.type}")
        return Apply(self, [x, cond], [x.type()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        x, cond = inputs
        if not np.all(cond):
            detail = ""
            if np.shape(cond) == np.shape(x) and np.ndim(x):
                where = np.argwhere(~np.asarray(cond))[:3]
                shown = ", ".join(f"{x[tuple(w)]!r} at {tuple(int(i) for i in w)}" for w in where)
                detail = f"; got {shown}"
            elif np.shape(cond) == np.shape(x):
                detail = f"; got {x!r}"
            raise ValueError(f"{self.message}{detail}")
        output_storage[0][0] = x

    def do_constant_folding(self, fgraph: Any, node: Apply) -> bool:
        return False  # a failing check on constants must fail when the function runs

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list[tuple]:
        return [shapes[0]]

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        return [[True], [False]]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        """The cotangent passes through; the condition is disconnected."""
        return [output_grads[0], _no_grad()]

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], eval_points: Sequence[Variable]
    ) -> list:
        return [_no_grad() if _disconnected(eval_points[0]) else eval_points[0]]

    def __str__(self) -> str:
        return "CheckValues"


@register_batch_rule(CheckValues)
def _batch_check_values(op: CheckValues, node: Apply, args: list, flags: list) -> list:
    return [(op(*args), flags[0])]  # the condition is checked as a whole, batched or not


def check_values(x: Any, cond: Any, message: str) -> Variable:
    """``x``, checked at run time: a ValueError starting with ``message`` unless ``cond``
    holds everywhere. A condition computed from constants only is checked at once (the
    error then comes when the graph is built)."""
    from arignote.graph.traversal import graph_inputs

    x, cond = as_tensor_variable(x), as_tensor_variable(cond)
    if all(isinstance(v, Constant) for v in graph_inputs([cond])):
        value = cond.data if isinstance(cond, Constant) else cond.eval()
        if not np.all(value):
            raise ValueError(message)
        return x
    return CheckValues(message)(x, cond)


# --- searchsorted --------------------------------------------------------------------------


class SearchsortedOp(Op):
    """``numpy.searchsorted(x, v, side, sorter)``: where the elements of ``v`` would go in
    the sorted vector ``x`` (int64, shaped like ``v``). ``sorter`` (optional) holds the
    indices that sort ``x``."""

    __props__ = ("side",)

    def __init__(self, side: str = "left"):
        if side not in ("left", "right"):
            raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
        self.side = side

    def make_node(self, x: Any, v: Any, sorter: Any = None) -> Apply:
        x, v = as_tensor_variable(x), as_tensor_variable(v)
        if x.type.ndim != 1:
            raise TypeError(f"{self}: x must be a vector (1-d), got {x} of Type {x.type}")
        inputs = [x, v]
        if sorter is not None:
            sorter = as_tensor_variable(sorter)
            if sorter.type.ndim != 1 or not _is_int(sorter):
                raise TypeError(
                    f"{self}: sorter must be an integer vector, got {sorter} of Type {sorter.type}"
                )
            inputs.append(sorter)
        return Apply(self, inputs, [TensorType("int64", v.type.shape)()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        x, v, *rest = inputs
        sorter = rest[0] if rest else None
        if sorter is not None:
            if sorter.shape != x.shape:
                raise ValueError(f"{self}: sorter has length {sorter.shape[0]}, x has length {x.shape[0]}")
            if sorter.size and (sorter.min() < 0 or sorter.max() >= x.shape[0]):
                raise ValueError(f"{self}: sorter holds an index out of range for x of length {x.shape[0]}")
        out = np.searchsorted(x, v, side=self.side, sorter=sorter)
        output_storage[0][0] = np.asarray(out, dtype="int64")

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list[tuple]:
        return [shapes[1]]

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        return [[True], [True], [False]][: len(node.inputs)]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        """Zero for ``x`` and ``v``: the positions are a step function of them. The sorter
        is disconnected."""
        return [_zero_grad(inputs[0]), _zero_grad(inputs[1])] + [_no_grad()] * (len(inputs) - 2)

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], eval_points: Sequence[Variable]
    ) -> list:
        return [_no_grad()]  # integer positions do not move

    def __str__(self) -> str:
        return f"SearchsortedOp{{side={self.side}}}"


@register_batch_rule(SearchsortedOp)
def _batch_searchsorted(op: SearchsortedOp, node: Apply, args: list, flags: list) -> list | None:
    if flags[0] or (len(flags) > 2 and flags[2]):
        return None  # a batch of sorted vectors: looped over (Batched)
    return [(op(*args), True)]  # a batch of queries is just more queries


def searchsorted(x: Any, v: Any, side: str = "left", sorter: Any = None) -> Variable:
    """Indices where the elements of ``v`` would be inserted into the sorted vector ``x``
    to keep it sorted (``numpy.searchsorted``).

    ``side="left"`` gives the first suitable index, ``"right"`` the last; ``sorter`` is an
    optional integer vector of indices that sort ``x`` (``argsort(x)``). The result is
    int64 with ``v``'s shape.
    """
    return SearchsortedOp(side)(x, v, sorter)


# --- unique --------------------------------------------------------------------------------


class Unique(Op):
    """``numpy.unique``: the sorted distinct values of ``x`` (distinct slices along ``axis``
    when it is given), and optionally the index of each one's first occurrence, the
    inverse (for every element, or slice, the position of its value in the result) and
    the counts. The integer outputs are int64; with ``axis=None`` the inverse is a vector
    over the flattened ``x`` (as PyTensor's). NaNs count as one value.

    The distinct values are differentiable: each takes the gradient of its first
    occurrence in ``x``.
    """

    __props__ = ("return_index", "return_inverse", "return_counts", "axis")

    def __init__(
        self,
        return_index: bool = False,
        return_inverse: bool = False,
        return_counts: bool = False,
        axis: int | None = None,
    ):
        self.return_index = bool(return_index)
        self.return_inverse = bool(return_inverse)
        self.return_counts = bool(return_counts)
        if axis is not None and (not isinstance(axis, (int, np.integer)) or isinstance(axis, bool)):
            raise TypeError(f"Unique: axis must be None or an int, got {axis!r}")
        self.axis = None if axis is None else int(axis)

    def make_node(self, x: Any) -> Apply:
        x = as_tensor_variable(x)
        if self.axis is not None:
            (axis,) = normalize_axis(self.axis, x.type.ndim, f"{self}: axis")  # type: ignore[misc]
            if axis != self.axis:  # the node's Op has the axis resolved
                return type(self)(self.return_index, self.return_inverse, self.return_counts, axis).make_node(
                    x
                )
        int_vec = TensorType("int64", (None,))
        if self.axis is None:
            values = TensorType(x.type.dtype, (None,))()
            size = None if None in x.type.shape else int(np.prod(x.type.shape, dtype=np.int64))
            inverse = TensorType("int64", (size,))()
        else:
            shape = tuple(None if d == self.axis else s for d, s in enumerate(x.type.shape))
            values = TensorType(x.type.dtype, shape)()
            inverse = TensorType("int64", (x.type.shape[self.axis],))()
        outputs = [values]
        outputs += [int_vec()] if self.return_index else []
        outputs += [inverse] if self.return_inverse else []
        outputs += [int_vec()] if self.return_counts else []
        return Apply(self, [x], outputs)

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        (x,) = inputs
        res = np.unique(
            x,
            return_index=self.return_index,
            return_inverse=self.return_inverse,
            return_counts=self.return_counts,
            axis=self.axis,
        )
        res = res if isinstance(res, tuple) else (res,)
        for k, (cell, value, out) in enumerate(zip(output_storage, res, node.outputs)):
            value = np.asarray(value, dtype=out.type.dtype)
            if k > 0:
                value = value.reshape(-1)  # NumPy 2 shapes the inverse like x when axis is None
            cell[0] = value

    def _count(self, node: Apply) -> Any:
        """The number of distinct values: only known once the node has run."""
        return shape_i(node.outputs[0], 0 if self.axis is None else self.axis)

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list[tuple]:
        (xshape,) = shapes
        count = self._count(node)
        if self.axis is None:
            size: Any = 1
            for s in xshape:
                size = size * s
            out = [(count,)]
            inverse = (size,)
        else:
            out = [tuple(count if d == self.axis else s for d, s in enumerate(xshape))]
            inverse = (xshape[self.axis],)
        out += [(count,)] if self.return_index else []
        out += [inverse] if self.return_inverse else []
        out += [(count,)] if self.return_counts else []
        return out

    def _first_index(self, x: Variable) -> Variable:
        return Unique(True, False, False, self.axis)(x)[1]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        """Each distinct value's cotangent goes to its first occurrence in ``x`` (a
        subgradient where values tie); the integer outputs carry none."""
        (x,) = inputs
        g = output_grads[0]
        if _is_int(x, bool_ok=True) or _disconnected(g):
            return [_zero_grad(x)]
        index = self._first_index(x)
        if self.axis is None:
            gx = pt.inc_subtensor(pt.zeros_like(pt.flatten(x))[index], g)
            return [_grad_like(pt.reshape(gx, shape(x)), x)]
        moved = pt.moveaxis(pt.zeros_like(x), self.axis, 0)
        gx = pt.inc_subtensor(moved[index], pt.moveaxis(g, self.axis, 0))
        return [_grad_like(pt.moveaxis(gx, 0, self.axis), x)]

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], eval_points: Sequence[Variable]
    ) -> list:
        """The values move with the first occurrences: ``v`` gathered at their indices."""
        (x,) = inputs
        (v,) = eval_points
        rest = [_no_grad()] * (len(outputs) - 1)
        if _disconnected(v) or _is_int(x, bool_ok=True):
            return [_no_grad(), *rest]
        index = self._first_index(x)
        if self.axis is None:
            return [pt.flatten(v)[index], *rest]
        return [pt.take(v, index, axis=self.axis), *rest]

    def __str__(self) -> str:
        flags = [n for n in ("return_index", "return_inverse", "return_counts") if getattr(self, n)]
        return f"Unique{{{', '.join([*flags, f'axis={self.axis}'])}}}"


def unique(
    ar: Any,
    return_index: bool = False,
    return_inverse: bool = False,
    return_counts: bool = False,
    axis: int | None = None,
) -> Any:
    """The sorted distinct elements of ``ar`` (``numpy.unique``), of the flattened tensor
    or, with ``axis``, the distinct slices along it.

    With any of ``return_index`` (first occurrences), ``return_inverse`` (how to rebuild
    ``ar`` from the result; a vector over the flattened ``ar`` when ``axis`` is None) and
    ``return_counts``, a list ``[values, *requested]`` in that order.

    >>> import numpy as np
    >>> import arignote.tensor as pt
    >>> x = pt.lvector("x")
    >>> u, counts = pt.unique(x, return_counts=True)
    >>> u.eval({x: np.array([3, 1, 3])}), counts.eval({x: np.array([3, 1, 3])})
    (array([1, 3]), array([1, 2]))
    """
    ar = as_tensor_variable(ar)
    if axis is not None:
        (axis,) = normalize_axis(axis, ar.type.ndim, "unique: axis")  # type: ignore[misc]
    outs = Unique(return_index, return_inverse, return_counts, axis)(ar, return_list=True)
    return outs[0] if len(outs) == 1 else outs


# --- bincount ------------------------------------------------------------------------------


class Bincount(Op):
    """``numpy.bincount(x, weights, minlength)``: how often each value ``0..max(x)`` occurs
    in the non-negative integer vector ``x`` (int64), or the sum of the ``weights`` at its
    occurrences (in the weights' dtype). The inputs are ``x``, ``minlength`` (an integer
    scalar, the least output length) and optionally ``weights``."""

    __props__ = ()

    def make_node(self, x: Any, minlength: Any = 0, weights: Any = None) -> Apply:
        x, minlength = as_tensor_variable(x), as_tensor_variable(minlength)
        if x.type.ndim != 1 or not _is_int(x, bool_ok=True):
            raise TypeError(f"bincount: x must be a vector of integers, got {x} of Type {x.type}")
        if minlength.type.ndim != 0 or not _is_int(minlength):
            raise TypeError(
                f"bincount: minlength must be an integer scalar, got {minlength} of Type {minlength.type}"
            )
        if isinstance(minlength, Constant) and minlength.data < 0:
            raise ValueError(f"bincount: minlength must not be negative, got {minlength.data}")
        inputs, dtype = [x, minlength], "int64"
        if weights is not None:
            weights = as_tensor_variable(weights)
            if weights.type.ndim != 1 or np.dtype(weights.type.dtype).kind not in "biuf":
                raise TypeError(
                    f"bincount: weights must be a vector of real numbers, got {weights} of Type {weights.type}"
                )
            dtype = "int64" if weights.type.dtype == "bool" else weights.type.dtype
            inputs.append(weights)
        return Apply(self, inputs, [TensorType(dtype, (None,))()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        x, minlength, *rest = inputs
        weights = rest[0] if rest else None
        if minlength < 0:
            raise ValueError(f"bincount: minlength must not be negative, got {int(minlength)}")
        if x.size and x.min() < 0:
            i = int(np.argmin(x))
            raise ValueError(f"bincount: x must be non-negative; got {x[i]} at index {i}")
        if weights is not None and weights.shape != x.shape:
            raise ValueError(f"bincount: weights have length {weights.shape[0]}, x has length {x.shape[0]}")
        out = np.bincount(x.astype("int64", copy=False), weights, minlength=int(minlength))
        output_storage[0][0] = out.astype(node.outputs[0].type.dtype, copy=False)

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list[tuple]:
        return [(_bincount_length(*node.inputs[:2]),)]

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        return [[False], [False], [True]][: len(node.inputs)]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        """``weights[i]`` lands in bin ``x[i]``: its gradient is ``g[x[i]]``. ``x`` and
        ``minlength`` only place the values (disconnected)."""
        grads = [_no_grad(), _no_grad()]
        if len(inputs) == 3:
            x, _, w = inputs
            g = output_grads[0]
            if _is_int(w, bool_ok=True) or _disconnected(g):
                grads.append(_zero_grad(w))
            else:
                grads.append(_grad_like(pt.take(g, x), w))
        return grads

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], eval_points: Sequence[Variable]
    ) -> list:
        """Linear in the weights: the bincount of their tangent."""
        if len(inputs) < 3 or _disconnected(eval_points[2]) or _is_int(inputs[2], bool_ok=True):
            return [_no_grad()]
        return [self(inputs[0], inputs[1], eval_points[2])]


def _bincount_length(x: Variable, minlength: Variable) -> Variable:
    """``max(max(x) + 1, minlength)``, also for an empty ``x``."""
    top = pt.max(pt.concatenate([pt.cast(x, "int64"), pt.constant(np.array([-1], dtype="int64"))]))
    return pt.maximum(top + 1, pt.cast(minlength, "int64"))


@register_batch_rule(Bincount)
def _batch_bincount(op: Bincount, node: Apply, args: list, flags: list) -> list | None:
    """A batch of weights for the same ``x``: one bincount with row ``b``'s values shifted
    to the bins ``b * L ...`` (``L`` the output length), cut back into rows."""
    if flags[0] or flags[1] or len(args) < 3:
        return None  # the lengths could differ from row to row: looped over (Batched)
    x, minlength, w = args
    length = _bincount_length(x, minlength)
    rows = pt.shape_i(w, 0)
    shifted = pt.expand_dims(pt.cast(x, "int64"), 0) + pt.expand_dims(pt.arange(rows) * length, 1)
    flat = op(pt.flatten(shifted), rows * length, pt.flatten(w))
    return [(pt.reshape(flat, (rows, length)), True)]


def bincount(x: Any, weights: Any = None, minlength: Any = None, assert_nonneg: bool = False) -> Variable:
    """Occurrences of each value ``0..max(x)`` in the non-negative integer vector ``x``
    (``numpy.bincount``), or with ``weights`` (a vector like ``x``) the sum of the weights
    at each value's occurrences. The result has length ``max(max(x) + 1, minlength)``.

    Counts are int64 (as NumPy's); weighted sums keep the weights' dtype (as PyTensor's).
    Negative values are always an error at run time, as in NumPy; ``assert_nonneg`` is
    accepted for PyTensor's signature and changes nothing.
    """
    return Bincount()(x, 0 if minlength is None else minlength, weights)


# --- diff, compress ------------------------------------------------------------------------


def diff(x: Any, n: int = 1, axis: int = -1) -> Variable:
    """The ``n``-th discrete difference along ``axis`` (``numpy.diff``): ``x[i+1] - x[i]``
    applied ``n`` times (``!=`` for bools, as NumPy)."""
    x = as_tensor_variable(x)
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 0:
        raise ValueError(f"diff: order n must be a non-negative int, got {n!r}")
    if x.type.ndim == 0:
        raise ValueError(f"diff: input must be at least one dimensional, got the 0-d {x}")
    (axis,) = normalize_axis(axis, x.type.ndim, "diff: axis")  # type: ignore[misc]
    head = tuple(slice(None) if d != axis else slice(1, None) for d in range(x.type.ndim))
    tail = tuple(slice(None) if d != axis else slice(None, -1) for d in range(x.type.ndim))
    for _ in range(int(n)):
        x = pt.neq(x[head], x[tail]) if x.type.dtype == "bool" else x[head] - x[tail]
    return x


def compress(condition: Any, x: Any, axis: int | None = None) -> Variable:
    """The slices of ``x`` along ``axis`` (elements of the flattened ``x`` if None) where
    the vector ``condition`` is true (``numpy.compress``). A ``condition`` shorter than
    the axis leaves out the slices past its end."""
    condition = as_tensor_variable(condition)
    if condition.type.ndim != 1:
        raise ValueError(f"compress: condition must be a vector, got {condition} of Type {condition.type}")
    return pt.take(x, pt.flatnonzero(condition), axis=axis)


# --- windows and spacings ------------------------------------------------------------------


def bartlett(M: Any) -> Variable:
    """The Bartlett (triangular) window of ``M`` points, peaking at 1 in the middle and 0
    at both ends (``numpy.bartlett``): float64; empty for ``M < 1``, ``[1.0]`` for 1."""
    M = as_tensor_variable(M)
    if M.type.ndim != 0 or not _is_int(M):
        raise TypeError(f"bartlett: M must be an integer scalar, got {M} of Type {M.type}")
    M = pt.cast(M, "int64")
    n = pt.cast(pt.arange(pt.maximum(M, 0)), "float64")
    half = pt.cast(pt.maximum(M - 1, 1), "float64") / 2.0
    window = 1.0 - pt.abs(n - half) / half
    return pt.switch(pt.gt(M, 1), window, 1.0)


def _stop_num(stop: Any, end: Any, num: Any, steps: Any, what: str) -> tuple[Any, Any]:
    """``stop``/``num`` or their old names ``end``/``steps`` (not both)."""
    if end is not None:
        if stop is not None:
            raise TypeError(f"{what}: give stop or end (its old name), not both")
        stop = end
    if steps is not None:
        num = steps
    if stop is None:
        raise TypeError(f"{what}: missing the stop value")
    return stop, num


def logspace(
    start: Any,
    stop: Any = None,
    num: Any = 50,
    base: Any = 10.0,
    endpoint: bool = True,
    dtype: Any = None,
    axis: int = 0,
    end: Any = None,
    steps: Any = None,
) -> Variable:
    """``num`` numbers from ``base**start`` to ``base**stop``, evenly spaced on a log scale
    (``numpy.logspace``). ``start``, ``stop`` and ``base`` broadcast together; the samples
    run along ``axis``. ``end``/``steps`` are old names of ``stop``/``num``. The dtype is
    ``floatX`` unless given (an integer dtype truncates, as NumPy's)."""
    stop, num = _stop_num(stop, end, num, steps, "logspace")
    dtype = config.floatX if dtype is None else dtype
    exponent = pt.linspace(start, stop, num, endpoint=endpoint, dtype="float64", axis=axis)
    base = pt.cast(as_tensor_variable(base), "float64")
    if base.type.ndim:
        base = pt.expand_dims(base, normalize_axis(axis, exponent.type.ndim)[0])  # type: ignore[index]
    return pt.cast(pt.power(base, exponent), dtype)


def geomspace(
    start: Any,
    stop: Any = None,
    num: Any = 50,
    base: Any = 10.0,
    endpoint: bool = True,
    dtype: Any = None,
    axis: int = 0,
    end: Any = None,
    steps: Any = None,
) -> Variable:
    """``num`` numbers from ``start`` to ``stop`` in geometric progression
    (``numpy.geomspace``): each a constant multiple of the one before. Both ends must
    have the same sign (both negative gives a negative progression) and neither may be 0;
    the ends are returned exactly. ``base`` changes nothing (PyTensor's signature has it);
    the other arguments are as for :func:`logspace`."""
    stop, num = _stop_num(stop, end, num, steps, "geomspace")
    dtype = config.floatX if dtype is None else dtype
    start, stop = as_tensor_variable(start), as_tensor_variable(stop)
    for what, v in (("start", start), ("stop", stop)):
        if isinstance(v, Constant) and np.any(v.data == 0):
            raise ValueError(f"geomspace: a geometric sequence cannot include 0 ({what} is 0)")
    start, stop = pt.cast(start, "float64"), pt.cast(stop, "float64")
    start, stop = pt.second(stop, start), pt.second(start, stop)  # broadcast together
    sign = pt.sign(start)
    logs = pt.linspace(pt.log10(start * sign), pt.log10(stop * sign), num, endpoint=endpoint, dtype="float64")
    samples = pt.power(10.0, logs) * sign
    index = pt.arange(num)
    if start.type.ndim:
        index = pt.expand_dims(index, tuple(range(1, start.type.ndim + 1)))
    samples = pt.switch(pt.eq(index, 0), start, samples)  # the ends exactly, not 10**log10(.)
    if endpoint:
        samples = pt.switch(pt.and_(pt.eq(index, num - 1), pt.gt(num, 1)), stop, samples)
    out_axis = normalize_axis(axis, samples.type.ndim)[0]  # type: ignore[index]
    if out_axis:
        samples = pt.moveaxis(samples, 0, out_axis)
    return pt.cast(samples, dtype)
