"""Evenly spaced values: ``arange`` (the ``ARange`` Op), ``linspace``, ``logspace``,
``geomspace``, the ``mgrid``/``ogrid`` index grids and the ``bartlett`` window."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from arignote.configdefaults import config
from arignote.graph.basic import Apply, Constant, Variable
from arignote.graph.null_type import disconnected_type, is_disconnected
from arignote.graph.op import Op
from arignote.scalar.type import upcast
from arignote.tensor.axes import expand_dims, moveaxis
from arignote.tensor.checks import _is_int, check_values
from arignote.tensor.conversion import as_tensor_variable, constant
from arignote.tensor.elemwise import normalize_axis
from arignote.tensor.reductions import sum as tensor_sum
from arignote.tensor.shape import (
    _as_length,
    _grad_like,
    _is_int_dtype,
    _static_int,
    _zero_grad,
    shape_tuple,
)
from arignote.tensor.type import TensorType
from arignote.tensor.ufuncs import abs as tensor_abs
from arignote.tensor.ufuncs import (
    and_,
    cast,
    ceil,
    eq,
    fill,
    floor,
    gt,
    int_div,
    log10,
    maximum,
    neg,
    power,
    second,
    sign,
    switch,
)

__all__ = ["ARange", "arange", "bartlett", "geomspace", "linspace", "logspace"]


class ARange(Op):
    """``numpy.arange(start, stop, step)`` as an array of ``dtype``.

    >>> import arignote.tensor as pt
    >>> n = pt.lscalar("n")
    >>> r = pt.arange(n)
    >>> r.type, r.eval({n: 3})
    (TensorType(int64, shape=(None,)), array([0, 1, 2]))
    """

    __props__ = ("dtype",)

    def __init__(self, dtype: Any):
        self.dtype = np.dtype(dtype).name

    def make_node(self, start: Any, stop: Any, step: Any) -> Apply:
        args = []
        for what, v in (("start", start), ("stop", stop), ("step", step)):
            t = as_tensor_variable(v)
            if t.type.ndim != 0 or np.dtype(t.type.dtype).kind not in "iuf":
                raise TypeError(f"ARange: {what} must be a 0-d integer or float, got {t} of Type {t.type}")
            args.append(t)
        length = None
        if all(isinstance(a, Constant) for a in args):
            values = [a.data[()] for a in args]
            if values[2] == 0:
                raise ValueError("ARange: step is 0")
            length = _arange_length(*values)
        return Apply(self, args, [TensorType(self.dtype, (length,))()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        start, stop, step = (v.item() for v in inputs)
        if step == 0:
            raise ValueError(f"ARange: step is 0 (start={start}, stop={stop})")
        output_storage[0][0] = np.arange(start, stop, step, dtype=self.dtype)

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list[tuple]:
        static = node.outputs[0].type.shape[0]
        if static is not None:
            return [(static,)]
        start, stop, step = node.inputs
        if all(_is_int_dtype(v.type.dtype) and v.type.dtype != "uint64" for v in node.inputs):
            start, stop, step = (cast(v, "int64") for v in (start, stop, step))
            n = neg(int_div(start - stop, step))  # ceil((stop - start) / step)
        else:
            diff = cast(stop, "float64") - cast(start, "float64")
            n = cast(ceil(diff / cast(step, "float64")), "int64")
        return [(maximum(n, 0),)]

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        return [[True], [False], [True]]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        """``out[i] = start + i * step``: ``start`` gets ``sum(g)``, ``step`` gets
        ``sum(g * i)``; ``stop`` only sets the length (disconnected). An integer ``arange``
        is a step function of ``start`` and ``step``: zero gradients."""
        start, _, step = inputs
        if _is_int_dtype(self.dtype) or self.dtype == "bool":
            return [_zero_grad(start), disconnected_type(), _zero_grad(step)]
        g = as_tensor_variable(output_grads[0])
        (n,) = shape_tuple(outputs[0])
        index = cast(arange(n), g.type.dtype)
        return [
            _grad_like(tensor_sum(g), start),
            disconnected_type(),
            _grad_like(tensor_sum(g * index), step),
        ]

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], eval_points: Sequence[Variable]
    ) -> list:
        """``dstart + i * dstep`` (nothing for an integer ``arange``)."""
        d_start, _, d_step = eval_points
        if _is_int_dtype(self.dtype) or (is_disconnected(d_start) and is_disconnected(d_step)):
            return [disconnected_type()]
        out = outputs[0]
        tangent = out.zeros_like()  # the method: alloc is built on this module
        if not is_disconnected(d_start):
            tangent = tangent + cast(d_start, self.dtype)
        if not is_disconnected(d_step):
            (n,) = shape_tuple(out)
            tangent = tangent + cast(arange(n), self.dtype) * cast(d_step, self.dtype)
        return [tangent]


def arange(start: Any, stop: Any = None, step: Any = 1, dtype: Any = None) -> Variable:
    """Evenly spaced values in ``[start, stop)`` (``arange(stop)`` counts from 0).

    The default dtype follows PyTensor: the common dtype of the arguments, with integers
    widened to int64 (uint64 for unsigned ones).
    """
    if stop is None:
        start, stop = 0, start
    start, stop, step = (as_tensor_variable(v) for v in (start, stop, step))
    if dtype is None:
        dtype = upcast(start.type.dtype, stop.type.dtype, step.type.dtype)
        kind = np.dtype(dtype).kind
        if kind == "i":
            dtype = "int64"
        elif kind == "u":
            dtype = "uint64"
    else:
        dtype = np.dtype(dtype).name
    op = _arange_ops.get(dtype)
    if op is None:
        op = _arange_ops[dtype] = ARange(dtype)
    return op(start, stop, step)


def _linspace_num(num: Any) -> Variable:
    """``linspace``'s ``num`` as a 0-d integer. A float-typed ``num`` (``5.0``, a float
    scalar) is accepted, as PyTensor accepts it, when its value is a whole number: checked
    now for a constant, at run time otherwise."""
    if isinstance(num, float) or (
        isinstance(num, (Variable, np.floating)) and as_tensor_variable(num).type.dtype.startswith("float")
    ):
        value = as_tensor_variable(num)
        if value.type.ndim != 0:
            raise TypeError(f"linspace: num must be a 0-d integer or float, got {value} of Type {value.type}")
        if isinstance(value, Constant):
            number = float(value.data)
            if not number.is_integer():
                raise ValueError(f"linspace: num must be a whole number, got {number!r}")
            return as_tensor_variable(np.int64(number))
        value = check_values(value, eq(value, floor(value)), "linspace: num must be a whole number")
        return cast(value, "int64")
    return _as_length(num, "linspace: num")


def linspace(
    start: Any,
    stop: Any,
    num: Any = 50,
    endpoint: bool = True,
    retstep: bool = False,
    dtype: Any = None,
    axis: int = 0,
) -> Any:
    """``num`` evenly spaced values from ``start`` to ``stop`` (``numpy.linspace``).

    ``start`` and ``stop`` may be arrays (broadcast together); the samples then run along
    ``axis`` of the result. ``num`` is an integer, or a float whose value is whole (as
    PyTensor accepts). The values are computed in float64 and cast to ``dtype``
    (``floatX`` by default); ``retstep=True`` also returns the spacing.

    >>> import arignote.tensor as pt
    >>> pt.linspace(0, 1, 5).eval()
    array([0.  , 0.25, 0.5 , 0.75, 1.  ])
    """
    dtype = config.floatX if dtype is None else dtype
    start = cast(as_tensor_variable(start), "float64")
    stop = cast(as_tensor_variable(stop), "float64")
    num = _linspace_num(num)
    static_num = _static_int(num)
    if static_num is not None and static_num < 0:
        raise ValueError(f"linspace: num must be non-negative, got {static_num}")
    start, stop = fill(stop, start), fill(start, stop)  # broadcast the two together
    ndim = start.type.ndim
    out_axis = normalize_axis(axis, ndim + 1)[0]  # type: ignore[index]
    div = num - 1 if endpoint else num
    delta = stop - start
    step = switch(gt(div, 0), delta / cast(maximum(div, 1), "float64"), constant(np.float64(np.nan)))
    index = arange(num)
    steps = cast(expand_dims(index, tuple(range(1, ndim + 1))) if ndim else index, "float64")
    samples = expand_dims(start, 0) + steps * switch(gt(div, 0), expand_dims(step, 0), 0.0)
    if endpoint:
        last = eq(index, num - 1) & gt(num, 1)
        samples = switch(
            expand_dims(last, tuple(range(1, ndim + 1))) if ndim else last, expand_dims(stop, 0), samples
        )
    if out_axis != 0:
        samples = moveaxis(samples, 0, out_axis)
    if _is_int_dtype(np.dtype(dtype).name):
        samples = floor(samples)  # NumPy rounds down to integers (not toward zero)
    samples = cast(samples, dtype)
    if retstep:
        return samples, cast(step, dtype)
    return samples


def bartlett(M: Any) -> Variable:
    """The Bartlett (triangular) window of ``M`` points, peaking at 1 in the middle and 0
    at both ends (``numpy.bartlett``): float64; empty for ``M < 1``, ``[1.0]`` for 1."""
    M = as_tensor_variable(M)
    if M.type.ndim != 0 or not _is_int(M):
        raise TypeError(f"bartlett: M must be an integer scalar, got {M} of Type {M.type}")
    M = cast(M, "int64")
    n = cast(arange(maximum(M, 0)), "float64")
    half = cast(maximum(M - 1, 1), "float64") / 2.0
    window = 1.0 - tensor_abs(n - half) / half
    return switch(gt(M, 1), window, 1.0)


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
    exponent = linspace(start, stop, num, endpoint=endpoint, dtype="float64", axis=axis)
    base = cast(as_tensor_variable(base), "float64")
    if base.type.ndim:
        base = expand_dims(base, normalize_axis(axis, exponent.type.ndim)[0])  # type: ignore[index]
    return cast(power(base, exponent), dtype)


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
    start, stop = cast(start, "float64"), cast(stop, "float64")
    start, stop = second(stop, start), second(start, stop)  # broadcast together
    signs = sign(start)
    logs = linspace(log10(start * signs), log10(stop * signs), num, endpoint=endpoint, dtype="float64")
    samples = power(10.0, logs) * signs
    index = arange(num)
    if start.type.ndim:
        index = expand_dims(index, tuple(range(1, start.type.ndim + 1)))
    samples = switch(eq(index, 0), start, samples)  # the ends exactly, not 10**log10(.)
    if endpoint:
        samples = switch(and_(eq(index, num - 1), gt(num, 1)), stop, samples)
    out_axis = normalize_axis(axis, samples.type.ndim)[0]  # type: ignore[index]
    if out_axis:
        samples = moveaxis(samples, 0, out_axis)
    return cast(samples, dtype)


def _arange_length(start: Any, stop: Any, step: Any) -> int:
    """``len(numpy.arange(start, stop, step))`` without building the array."""
    if all(isinstance(v, (int, np.integer)) for v in (start, stop, step)):
        return max(-((int(start) - int(stop)) // int(step)), 0)
    return max(math.ceil((float(stop) - float(start)) / float(step)), 0)


#: one ARange Op per dtype, shared by every arange call
_arange_ops: dict[str, ARange] = {}
