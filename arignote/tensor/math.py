"""Elementwise math on tensors, reductions, and the common compound functions.

Every scalar op of :mod:`arignote.scalar` is available here as an ``Elemwise`` (``add``,
``exp``, ``erf``, ...). Reductions (``sum``, ``prod``, ``max``, ``min``, ``all``, ``any``)
are ``CAReduce`` subclasses with NumPy's accumulation dtypes; ``mean``, ``var``, ``std``,
``logsumexp`` are built from them. Products (``dot``, ``matmul``, ``tensordot``,
``outer``) are in :mod:`arignote.tensor.products`.

>>> import numpy as np
>>> import arignote.tensor as pt
>>> x = pt.dvector("x")
>>> float(pt.logsumexp(x).eval({x: np.array([1000.0, 1000.0])}))
1000.6931471805599
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

import numpy as np

import arignote.scalar as ps
from arignote.graph.basic import Apply, Variable
from arignote.graph.op import Op
from arignote.scalar.type import complex_types, discrete_types
from arignote.tensor.basic import as_tensor_variable, constant, expand_dims
from arignote.tensor.elemwise import CAReduce, Elemwise, normalize_axis
from arignote.tensor.products import (  # noqa: F401  (re-exported, as in pytensor.tensor.math)
    Dot,
    MatMul,
    dense_dot,
    dot,
    matmul,
    matvec,
    outer,
    tensordot,
    vecdot,
    vecmat,
)
from arignote.tensor.special_extra import (  # noqa: F401  (re-exported, as in pytensor.tensor.math)
    betaincinv,
    chi2sf,
    gammainccinv,
    gammaincinv,
    gammal,
    gammau,
    hyp2f1,
    iv,
    ive,
    jv,
    kn,
    kv,
    kve,
    owens_t,
)
from arignote.tensor.type import TensorType

# --- elementwise ---------------------------------------------------------------------------

# Each is an Elemwise instance: call it like a function (``add(x, y)``).
add = Elemwise(ps.add)
mul = Elemwise(ps.mul)
sub = Elemwise(ps.sub)
true_div = Elemwise(ps.true_div)
int_div = Elemwise(ps.int_div)
mod = Elemwise(ps.mod)
pow = Elemwise(ps.pow)
neg = Elemwise(ps.neg)
reciprocal = Elemwise(ps.reciprocal)
abs = Elemwise(ps.abs)
sign = Elemwise(ps.sign)
sqr = Elemwise(ps.sqr)
sqrt = Elemwise(ps.sqrt)
maximum = Elemwise(ps.maximum)
minimum = Elemwise(ps.minimum)
eq = Elemwise(ps.eq)
neq = Elemwise(ps.neq)
lt = Elemwise(ps.lt)
le = Elemwise(ps.le)
gt = Elemwise(ps.gt)
ge = Elemwise(ps.ge)
and_ = Elemwise(ps.and_)
or_ = Elemwise(ps.or_)
xor = Elemwise(ps.xor)
invert = Elemwise(ps.invert)
isnan = Elemwise(ps.isnan)
isinf = Elemwise(ps.isinf)
floor = Elemwise(ps.floor)
ceil = Elemwise(ps.ceil)
trunc = Elemwise(ps.trunc)
round_half_to_even = Elemwise(ps.round_half_to_even)
round_half_away_from_zero = Elemwise(ps.round_half_away_from_zero)
exp = Elemwise(ps.exp)
exp2 = Elemwise(ps.exp2)
expm1 = Elemwise(ps.expm1)
log = Elemwise(ps.log)
log2 = Elemwise(ps.log2)
log10 = Elemwise(ps.log10)
log1p = Elemwise(ps.log1p)
sin = Elemwise(ps.sin)
cos = Elemwise(ps.cos)
tan = Elemwise(ps.tan)
arcsin = Elemwise(ps.arcsin)
arccos = Elemwise(ps.arccos)
arctan = Elemwise(ps.arctan)
arctan2 = Elemwise(ps.arctan2)
sinh = Elemwise(ps.sinh)
cosh = Elemwise(ps.cosh)
tanh = Elemwise(ps.tanh)
arcsinh = Elemwise(ps.arcsinh)
arccosh = Elemwise(ps.arccosh)
arctanh = Elemwise(ps.arctanh)
deg2rad = Elemwise(ps.deg2rad)
rad2deg = Elemwise(ps.rad2deg)
real = Elemwise(ps.real)
imag = Elemwise(ps.imag)
angle = Elemwise(ps.angle)
conj = Elemwise(ps.conj)
complex = Elemwise(ps.complex)
complex_from_polar = Elemwise(ps.complex_from_polar)
erf = Elemwise(ps.erf)
erfc = Elemwise(ps.erfc)
erfcx = Elemwise(ps.erfcx)
erfinv = Elemwise(ps.erfinv)
erfcinv = Elemwise(ps.erfcinv)
gamma = Elemwise(ps.gamma)
gammaln = Elemwise(ps.gammaln)
psi = Elemwise(ps.psi)
tri_gamma = Elemwise(ps.tri_gamma)
polygamma = Elemwise(ps.polygamma)
gammainc = Elemwise(ps.gammainc)
gammaincc = Elemwise(ps.gammaincc)
gammainc_grad = Elemwise(ps.gammainc_grad)
gammaincc_grad = Elemwise(ps.gammaincc_grad)
sigmoid = Elemwise(ps.sigmoid)
softplus = Elemwise(ps.softplus)
log1mexp = Elemwise(ps.log1mexp)
xlogx = Elemwise(ps.xlogx)
xlogy0 = Elemwise(ps.xlogy0)
betainc = Elemwise(ps.betainc)
betainc_grad_a = Elemwise(ps.betainc_grad_a)
betainc_grad_b = Elemwise(ps.betainc_grad_b)
i0 = Elemwise(ps.i0)
i1 = Elemwise(ps.i1)
j0 = Elemwise(ps.j0)
j1 = Elemwise(ps.j1)
identity = Elemwise(ps.identity)
second = Elemwise(ps.second)

_switch = Elemwise(ps.switch)
_clip = Elemwise(ps.clip)
log1pexp = softplus
true_divide = divide = true_div
floor_divide = int_div
bitwise_and, bitwise_or, bitwise_xor, bitwise_not = and_, or_, xor, invert
expit = sigmoid
tensor_copy = identity
fill = second
digamma = psi
power = pow
multiply, subtract = mul, sub
negative, absolute = neg, abs
square = sqr


def switch(cond: Any, ift: Any, iff: Any) -> Variable:
    """``ift`` where ``cond`` is true (nonzero), else ``iff``, elementwise with broadcasting."""
    return _switch(cond, ift, iff)


where = switch


def clip(x: Any, min: Any, max: Any) -> Variable:
    """``x`` limited to ``[min, max]`` elementwise."""
    return _clip(x, min, max)


def cast(x: Any, dtype: Any) -> Variable:
    """``x`` converted to ``dtype`` (returned unchanged if it already has it)."""
    x = as_tensor_variable(x)
    dtype = ps.get_scalar_type("floatX" if dtype == "floatX" else dtype).dtype
    if x.type.dtype == dtype:
        return x
    if x.type.dtype in complex_types and dtype not in complex_types:
        raise TypeError(
            f"Casting {x.type} from complex to {dtype} is ambiguous: use real(), imag(), angle() or abs()"
        )
    return _casts[dtype](x)


_casts = {d: Elemwise(ps.basic._casts[d]) for d in ps.basic._casts}


def round(x: Any, mode: str | None = None) -> Variable:
    """Round to the nearest integer value: ``"half_to_even"`` (default, NumPy's) or
    ``"half_away_from_zero"``. Integers are returned as they are."""
    x = as_tensor_variable(x)
    if x.type.dtype in discrete_types:
        return x
    mode = mode or "half_to_even"
    if mode == "half_to_even":
        return round_half_to_even(x)
    if mode == "half_away_from_zero":
        return round_half_away_from_zero(x)
    raise ValueError(f"round: mode must be 'half_to_even' or 'half_away_from_zero', got {mode!r}")


def isclose(a: Any, b: Any, rtol: float = 1e-5, atol: float = 1e-8, equal_nan: bool = False) -> Variable:
    """Symbolic ``numpy.isclose``: ``|a - b| <= atol + rtol * |b|``, infinities equal only
    to themselves, NaNs equal to each other only with ``equal_nan``."""
    a, b = as_tensor_variable(a), as_tensor_variable(b)
    # as numpy.isclose: integers and bools are compared as floats (``a - b`` must not wrap
    # around, and bools have no subtraction)
    a, b = (cast(v, "float64") if v.type.dtype in discrete_types else v for v in (a, b))
    finite_close = le(abs(a - b), atol + rtol * abs(b))
    close = or_(eq(a, b), and_(finite_close, and_(invert(isinf(a)), invert(isinf(b)))))
    if equal_nan:
        close = or_(close, and_(isnan(a), isnan(b)))
    return close


def allclose(a: Any, b: Any, rtol: float = 1e-5, atol: float = 1e-8, equal_nan: bool = False) -> Variable:
    """Symbolic ``numpy.allclose`` (a 0-d bool)."""
    return all(isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))


# --- reductions ----------------------------------------------------------------------------


def _sum_dtypes(idtype: str) -> tuple[str, str]:
    """(output dtype, accumulation dtype) of sum/prod, as NumPy and PyTensor choose them."""
    if idtype == "bool" or idtype in ("int8", "int16", "int32", "int64"):
        return "int64", "int64"
    if idtype in ("uint8", "uint16", "uint32", "uint64"):
        return "uint64", "uint64"
    acc = {"float16": "float32", "float32": "float64", "complex64": "complex128"}.get(idtype, idtype)
    return idtype, acc


class Sum(CAReduce):
    """Sum over ``axis`` (None: all); ints accumulate in int64, float32 in float64."""

    def __init__(self, axis: Any = None, dtype: Any = None, acc_dtype: Any = None):
        super().__init__(ps.add, axis=axis, dtype=dtype, acc_dtype=acc_dtype)

    def make_node(self, x: Any) -> Apply:
        x = as_tensor_variable(x)
        if self.dtype is None or self.acc_dtype is None:
            out, acc = _sum_dtypes(x.type.dtype)
            op = type(self)(self.axis, dtype=self.dtype or out, acc_dtype=self.acc_dtype or acc)
            return op.make_node(x)
        return super().make_node(x)


class Prod(Sum):
    """Product over ``axis``; dtypes as for :class:`Sum`."""

    def __init__(self, axis: Any = None, dtype: Any = None, acc_dtype: Any = None):
        CAReduce.__init__(self, ps.mul, axis=axis, dtype=dtype, acc_dtype=acc_dtype)


class Max(CAReduce):
    """Maximum over ``axis`` (NaN if any element is NaN); empty axes are an error."""

    def __init__(self, axis: Any = None):
        super().__init__(ps.maximum, axis=axis)


class Min(CAReduce):
    """Minimum over ``axis`` (NaN if any element is NaN); empty axes are an error."""

    def __init__(self, axis: Any = None):
        super().__init__(ps.minimum, axis=axis)

    def make_node(self, x: Any) -> Apply:
        x = as_tensor_variable(x)
        if x.type.dtype in complex_types:
            raise TypeError(f"min is not defined for complex {x.type}")
        return super().make_node(x)


class _BoolReduce(CAReduce):
    """A logical reduction (``all``/``any``): NumPy's function, and zero gradients (a
    boolean result is a step function of its input)."""

    _np_fn: Any = None

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        output_storage[0][0] = np.asarray(self._np_fn(inputs[0], axis=self.axis))

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        return [_zero_grad(inputs[0])]

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], eval_points: Sequence[Variable]
    ) -> list:
        return [_no_tangent()]


class All(_BoolReduce):
    """Whether every element over ``axis`` is true (nonzero)."""

    _np_fn = staticmethod(np.all)

    def __init__(self, axis: Any = None):
        CAReduce.__init__(self, ps.and_, axis=axis, dtype="bool")


class Any_(_BoolReduce):
    """Whether any element over ``axis`` is true (nonzero)."""

    _np_fn = staticmethod(np.any)

    def __init__(self, axis: Any = None):
        CAReduce.__init__(self, ps.or_, axis=axis, dtype="bool")

    def __str__(self) -> str:
        return f"Any{{{self._axis_str()}}}"


def _reduce(op: CAReduce, x: Variable, axis: Any, keepdims: bool) -> Variable:
    out = op(x)
    if keepdims:
        axes = normalize_axis(axis, x.type.ndim)
        axes = axes if axes is not None else tuple(range(x.type.ndim))
        if axes:
            out = expand_dims(out, axes)
    return out


def sum(
    x: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False, acc_dtype: Any = None
) -> Variable:
    """Sum over ``axis`` (None: all axes)."""
    x = as_tensor_variable(x)
    return _reduce(
        Sum(normalize_axis(axis, x.type.ndim), dtype=dtype, acc_dtype=acc_dtype), x, axis, keepdims
    )


def prod(
    x: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False, acc_dtype: Any = None
) -> Variable:
    """Product over ``axis`` (None: all axes)."""
    x = as_tensor_variable(x)
    return _reduce(
        Prod(normalize_axis(axis, x.type.ndim), dtype=dtype, acc_dtype=acc_dtype), x, axis, keepdims
    )


def max(x: Any, axis: Any = None, keepdims: bool = False) -> Variable:
    """Maximum over ``axis``."""
    x = as_tensor_variable(x)
    return _reduce(Max(normalize_axis(axis, x.type.ndim)), x, axis, keepdims)


def min(x: Any, axis: Any = None, keepdims: bool = False) -> Variable:
    """Minimum over ``axis``."""
    x = as_tensor_variable(x)
    return _reduce(Min(normalize_axis(axis, x.type.ndim)), x, axis, keepdims)


def all(x: Any, axis: Any = None, keepdims: bool = False) -> Variable:
    """Whether all elements (over ``axis``) are true."""
    x = as_tensor_variable(x)
    return _reduce(All(normalize_axis(axis, x.type.ndim)), x, axis, keepdims)


def any(x: Any, axis: Any = None, keepdims: bool = False) -> Variable:
    """Whether any element (over ``axis``) is true."""
    x = as_tensor_variable(x)
    return _reduce(Any_(normalize_axis(axis, x.type.ndim)), x, axis, keepdims)


def _count(x: Variable, axis: tuple | None) -> Variable:
    from arignote.tensor.shape import shape_i

    axes = range(x.type.ndim) if axis is None else axis
    n: Any = constant(np.int64(1))
    for a in axes:
        n = mul(n, shape_i(x, a))
    return n


def mean(
    x: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False, acc_dtype: Any = None
) -> Variable:
    """Arithmetic mean over ``axis``; integer inputs give ``floatX``."""
    x = as_tensor_variable(x)
    axes = normalize_axis(axis, x.type.ndim)
    # a float16 sum would overflow long before the mean does: sum in float32 (as PyTensor)
    sum_dtype = "float32" if dtype is None and x.type.dtype == "float16" else dtype
    s = sum(x, axis=axes, dtype=sum_dtype, acc_dtype=acc_dtype)
    n = _count(x, axes)
    if s.type.dtype not in discrete_types:
        n = cast(
            n,
            s.type.dtype
            if s.type.dtype not in complex_types
            else {"complex64": "float32"}.get(s.type.dtype, "float64"),
        )
    out = true_div(s, n)
    if dtype is None and x.type.dtype == "float16":
        out = cast(out, "float16")
    if keepdims:
        out = expand_dims(out, axes if axes is not None else tuple(range(x.type.ndim)))
    return out


def var(x: Any, axis: Any = None, ddof: int = 0, keepdims: bool = False, corrected: bool = False) -> Variable:
    """Variance over ``axis``, dividing by ``n - ddof`` (``corrected=True`` means ddof=1)."""
    x = as_tensor_variable(x)
    axes = normalize_axis(axis, x.type.ndim)
    if corrected:
        ddof = 1
    centered = x - mean(x, axis=axes, keepdims=True)
    sq = sqr(abs(centered) if x.type.dtype in complex_types else centered)
    if ddof == 0:
        out = mean(sq, axis=axes)
    else:
        n = _count(x, axes)
        s = sum(sq, axis=axes)
        out = true_div(s, cast(n - ddof, s.type.dtype if s.type.dtype not in discrete_types else "float64"))
    if keepdims:
        out = expand_dims(out, axes if axes is not None else tuple(range(x.type.ndim)))
    return out


def std(x: Any, axis: Any = None, ddof: int = 0, keepdims: bool = False, corrected: bool = False) -> Variable:
    """Standard deviation over ``axis`` (square root of :func:`var`)."""
    return sqrt(var(x, axis=axis, ddof=ddof, keepdims=keepdims, corrected=corrected))


def logsumexp(x: Any, axis: Any = None, keepdims: bool = False) -> Variable:
    """``log(sum(exp(x)))`` over ``axis``, computed without overflow: the maximum is taken
    out first (and infinite maxima are handled so that ``-inf`` rows give ``-inf``)."""
    x = as_tensor_variable(x)
    axes = normalize_axis(axis, x.type.ndim)
    m = max(x, axis=axes, keepdims=True)
    m_safe = switch(isinf(m), 0, m)
    s = sum(exp(x - m_safe), axis=axes, keepdims=True)
    out = log(s) + m_safe
    if not keepdims:
        from arignote.tensor.basic import squeeze

        out = squeeze(out, axes if axes is not None else tuple(range(x.type.ndim)))
    return out


# --- argmax / argmin -----------------------------------------------------------------------


def _zero_grad(x: Variable) -> Variable:
    from arignote.tensor.shape import _zero_grad as zero_grad

    return zero_grad(x)


def _no_tangent() -> Variable:
    from arignote.gradient import disconnected_type

    return disconnected_type()


class Argmax(Op):
    """Index of the maximum over ``axis`` (None: of the flattened array), as int64."""

    __props__ = ("axis",)

    def __init__(self, axis: int | Sequence[int] | None):
        if axis is not None:
            axis = tuple(sorted(int(a) for a in ([axis] if isinstance(axis, (int, np.integer)) else axis)))
        self.axis = axis

    def make_node(self, x: Any) -> Apply:
        x = as_tensor_variable(x)
        if self.axis is not None:
            axis = normalize_axis(self.axis, x.type.ndim)
            if axis != self.axis:  # negative axes: the node gets the op with them resolved
                return type(self)(axis).make_node(x)
        axes = range(x.type.ndim) if self.axis is None else self.axis
        shape = tuple(s for d, s in enumerate(x.type.shape) if d not in axes)
        return Apply(self, [x], [TensorType("int64", shape)()])

    def _arg(self, x: np.ndarray) -> np.ndarray:
        if x.size == 0 and (self.axis is None or builtins.any(x.shape[a] == 0 for a in self.axis)):
            raise ValueError(f"{self}: attempt to take the arg-extremum of an empty axis")
        if self.axis is None:
            return np.asarray(self._np(x.reshape(-1)), dtype="int64")
        keep = [d for d in range(x.ndim) if d not in self.axis]
        moved = np.transpose(x, keep + list(self.axis))
        # the reduced length is spelt out: -1 cannot be resolved when a kept axis is empty
        n = int(np.prod([x.shape[a] for a in self.axis], dtype=np.int64))
        flat = moved.reshape([x.shape[d] for d in keep] + [n])
        return np.asarray(self._np(flat, axis=-1), dtype="int64")

    _np = staticmethod(np.argmax)

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        output_storage[0][0] = self._arg(inputs[0])

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list[tuple]:
        axes = range(node.inputs[0].type.ndim) if self.axis is None else self.axis
        return [tuple(s for d, s in enumerate(shapes[0]) if d not in axes)]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        """Zero: the index is a step function of ``x`` (the seeds' argmax example; the
        elements of ``x`` do decide the output, so the input stays connected)."""
        return [_zero_grad(inputs[0])]

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], eval_points: Sequence[Variable]
    ) -> list:
        return [_no_tangent()]  # an index does not move

    def __str__(self) -> str:
        return f"{type(self).__name__}{{axis={self.axis}}}"


class Argmin(Argmax):
    """Index of the minimum over ``axis``."""

    _np = staticmethod(np.argmin)


def argmax(x: Any, axis: Any = None, keepdims: bool = False) -> Variable:
    """Index of the largest element over ``axis`` (of the flattened array if None)."""
    x = as_tensor_variable(x)
    return _reduce(Argmax(normalize_axis(axis, x.type.ndim)), x, axis, keepdims)


def argmin(x: Any, axis: Any = None, keepdims: bool = False) -> Variable:
    """Index of the smallest element over ``axis`` (of the flattened array if None)."""
    x = as_tensor_variable(x)
    return _reduce(Argmin(normalize_axis(axis, x.type.ndim)), x, axis, keepdims)


# NumPy-named aliases and the compound functions PyTensor keeps in this module
from arignote.tensor.math_extra import (  # noqa: E402, F401
    batched_dot,
    batched_tensordot,
    ceil_intdiv,
    conjugate,
    cov,
    divmod,
    equal,
    floor_div,
    greater,
    greater_equal,
    iround,
    isfinite,
    isneginf,
    isposinf,
    largest,
    less,
    less_equal,
    logaddexp,
    max_and_argmax,
    median,
    nan_to_num,
    not_equal,
    ptp,
    sgn,
    smallest,
)
