"""The scalar operations: arithmetic, comparison and logic, rounding, exponentials and
logarithms, trigonometry, casts and complex parts.

Each op's ``impl`` is written with NumPy functions, so it computes elementwise on arrays
as well as on scalars (``Elemwise`` relies on that); output dtypes follow the op's
output types preference (see :mod:`arignote.scalar.op`). Special functions are in
:mod:`arignote.scalar.math`; fused bodies in :mod:`arignote.scalar.composite`.

>>> from arignote.scalar import basic as ps
>>> x = ps.float32("x")
>>> y = ps.exp(x) + 1
>>> y.type, y.owner.op
(ScalarType(float32), add)
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np

from arignote.configdefaults import config
from arignote.graph.basic import Variable
from arignote.graph.null_type import disconnected_type
from arignote.scalar.op import (
    BinaryScalarOp,
    ScalarOp,
    UnaryScalarOp,
    bool_out,
    complex_out,
    float_dtype_for,
    floatX_out,
    same_out,
    same_out_float_only,
    same_out_nobool,
    specific_out,
    transfer_type,
    upcast_out,
    upcast_out_min8,
    upcast_out_no_complex,
    upcast_out_nobool,
    upgrade_to_float,
    upgrade_to_float_no_complex,
)
from arignote.scalar.type import (
    ScalarConstant,
    ScalarType,
    ScalarVariable,
    as_scalar,
    complex_types,
    constant,
    continuous_types,
    discrete_types,
    float_types,
    get_scalar_type,
    integer_types,
    upcast,
)

# --- named scalar types and variable constructors ----------------------------------------

bool_ = get_scalar_type("bool")
int8, int16, int32, int64 = (get_scalar_type(d) for d in ("int8", "int16", "int32", "int64"))
uint8, uint16, uint32, uint64 = (get_scalar_type(d) for d in ("uint8", "uint16", "uint32", "uint64"))
float16, float32, float64 = (get_scalar_type(d) for d in ("float16", "float32", "float64"))
complex64, complex128 = get_scalar_type("complex64"), get_scalar_type("complex128")


def scalar(name: str | None = None, dtype: str = "floatX") -> ScalarVariable:
    """A new scalar input Variable (``dtype`` defaults to ``config.floatX``)."""
    return get_scalar_type(dtype)(name)  # type: ignore[return-value]


class FloatUnary(UnaryScalarOp):
    """A unary op whose result is a float wide enough for its input (ints included).

    ``impl`` returns exactly that dtype (``Composite`` bodies rely on it): integers are
    computed in it, and a result in another dtype (SciPy has no float16 loops) is cast.
    """

    def impl(self, a: Any) -> Any:
        dtype = np.asarray(a).dtype
        if dtype.kind in "biu":  # compute in the float dtype the output will have
            out_dtype = np.dtype(float_dtype_for(dtype.name))
            result = self.ufunc(a, dtype=out_dtype)
        else:
            out_dtype = dtype
            result = self.ufunc(a)
        if result.dtype != out_dtype:
            result = result.astype(out_dtype)
        return result


# --- gradient helpers --------------------------------------------------------------------
# Gradient rules are scalar graphs built from the op's inputs and output gradients; Elemwise
# replays them on tensors. Conventions (PyTensor's): a gradient term is never integer-typed;
# an op with an integer-valued output (comparisons, rounding, integer arithmetic) passes a
# zero gradient; for a complex input ``z`` the term is ``dC/d(Re z) + 1j * dC/d(Im z)``, so a
# holomorphic ``f`` with derivative ``d`` gives ``g * conj(d)``, and a real input of an op
# with a complex output gets the real part of its term.


def _grad_dtype(x: Variable) -> str:
    """The dtype of a gradient term for ``x``: its own, or ``floatX`` for bool/int."""
    dtype = x.type.dtype
    return dtype if dtype in continuous_types else config.floatX


def _zeros(x: Variable) -> ScalarVariable:
    """A zero gradient for ``x`` (``second(x, 0)``: elementwise it has ``x``'s shape)."""
    return second(x, constant(0, dtype=_grad_dtype(x)))


def _is_complex(v: Variable) -> bool:
    return v.type.dtype in complex_types


def _is_discrete(v: Variable) -> bool:
    return v.type.dtype in discrete_types


def _real(x: Variable) -> ScalarVariable:
    """``x`` computed in a float dtype when it is bool/int (``x * x`` of an int8 overflows)."""
    return cast(x, float_dtype_for(x.type.dtype)) if _is_discrete(x) else x


def _in_precision(op: ScalarOp, inputs: Sequence[Variable]) -> list[ScalarVariable]:
    """``inputs`` cast to the precision ``op`` computes in (its output's; the matching real
    dtype for the real inputs of a complex result): a float32 constant beside a float64
    input must not make the rule float32."""
    (out,) = op.output_types([i.type for i in inputs])
    dtype = out.dtype if out.dtype in continuous_types else float_dtype_for(out.dtype)
    real_dtype = {"complex64": "float32", "complex128": "float64"}.get(dtype, dtype)
    return [cast(x, dtype if _is_complex(x) else real_dtype) for x in inputs]


def _const(value: Any, *like: Variable) -> ScalarConstant:
    """``value`` as a real constant as precise as the promotion of ``like`` (a float32 rule
    stays float32; a complex64 one uses a float32 constant)."""
    dtype = upcast(*(float_dtype_for(v.type.dtype) for v in like))
    return constant(value, dtype={"complex64": "float32", "complex128": "float64"}.get(dtype, dtype))


def _int_valued(op: ScalarOp, inputs: Sequence[Variable]) -> bool:
    """True when an output of ``op`` on ``inputs`` has a bool/int dtype."""
    return any(t.dtype in discrete_types for t in op.output_types([i.type for i in inputs]))


def _fit(term: Variable, x: Variable) -> Variable:
    """``term`` as a term for ``x``: its real part when ``x`` is real and ``term`` complex."""
    return real(term) if _is_complex(term) and not _is_complex(x) else term


def _chain(g: Variable, d: Variable, x: Variable) -> Variable:
    """``g`` times the derivative ``d`` of a holomorphic function of ``x``."""
    return _fit(mul(g, conj(d) if _is_complex(d) else d), x)


def _chain_div(g: Variable, d: Variable, x: Variable) -> Variable:
    """``g`` divided by ``d``, the reciprocal of a derivative (``g / conj(d)``)."""
    return _fit(true_div(g, conj(d) if _is_complex(d) else d), x)


class _ZeroGrad:
    """Mixin: integer-valued outputs (comparisons, rounding, ...): zero gradient for every
    input (``f(x + eps) == f(x)`` almost everywhere)."""

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        return [_zeros(x) for x in inputs]


# --- arithmetic --------------------------------------------------------------------------


class Add(ScalarOp):
    """``a + b + ...`` (any number of inputs)."""

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        if _int_valued(self, inputs):
            return [_zeros(x) for x in inputs]
        (g,) = output_grads
        return [_fit(g, x) for x in inputs]

    ufunc = np.add
    commutative = associative = True
    identity = 0

    def impl(self, *inputs: Any) -> Any:
        return functools.reduce(np.add, inputs)


class Mul(ScalarOp):
    """``a * b * ...`` (any number of inputs)."""

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        if _int_valued(self, inputs):
            return [_zeros(x) for x in inputs]
        (g,) = output_grads
        terms = []
        for i, x in enumerate(inputs):
            others = [_real(y) for j, y in enumerate(inputs) if j != i]
            if not others:
                terms.append(_fit(g, x))
            elif any(_is_complex(y) for y in others):
                terms.append(_chain(g, mul(*others) if len(others) > 1 else others[0], x))
            else:
                terms.append(_fit(mul(g, *others), x))
        return terms

    ufunc = np.multiply
    commutative = associative = True
    identity = 1

    def impl(self, *inputs: Any) -> Any:
        return functools.reduce(np.multiply, inputs)


class Sub(BinaryScalarOp):
    """``a - b``."""

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        if _int_valued(self, inputs):
            return [_zeros(x) for x in inputs]
        x, y = inputs
        (g,) = output_grads
        return [_fit(g, x), _fit(neg(g), y)]

    ufunc = np.subtract


class TrueDiv(BinaryScalarOp):
    """``a / b``; two integers give a ``floatX`` result (as in PyTensor)."""

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        x, y = inputs
        (g,) = output_grads
        xf, yf = _in_precision(self, inputs)
        # d(x/y)/dx = 1/y, d(x/y)/dy = -x/y**2
        return [_chain_div(g, yf, x), _chain(neg(g), true_div(xf, sqr(yf)), y)]

    def output_types(self, types: Any) -> list[ScalarType]:
        if all(t.dtype in discrete_types for t in types):
            return floatX_out(*types)
        return super().output_types(types)

    def impl(self, a: Any, b: Any) -> Any:
        if np.asarray(a).dtype.kind in "biu" and np.asarray(b).dtype.kind in "biu":
            return np.true_divide(a, b, dtype=config.floatX)  # the output dtype, not float64
        return np.true_divide(a, b)


def _check_int_divisor(op: ScalarOp, a: Any, b: Any) -> None:
    if np.asarray(b).dtype.kind in "biu" and np.asarray(a).dtype.kind in "biu" and np.any(np.equal(b, 0)):
        raise ZeroDivisionError(f"{op}: integer division by zero (NumPy would silently give 0)")


def _keep_bool(result: Any, a: Any, b: Any) -> Any:
    # NumPy computes bool // bool and bool % bool in int8; the output type is bool
    if result.dtype == np.int8 and np.asarray(a).dtype == np.bool_ and np.asarray(b).dtype == np.bool_:
        return result.astype(np.bool_)
    return result


class IntDiv(_ZeroGrad, BinaryScalarOp):
    """``a // b``: division rounded towards minus infinity; an integer divisor of 0 is an error.

    Integer-valued, so its gradient is zero (as PyTensor's).
    """

    def impl(self, a: Any, b: Any) -> Any:
        _check_int_divisor(self, a, b)
        return _keep_bool(np.floor_divide(a, b), a, b)


class Mod(BinaryScalarOp):
    """``a % b`` with the sign of ``b`` (Python's and NumPy's rule); integer ``b`` of 0 is an error."""

    def impl(self, a: Any, b: Any) -> Any:
        _check_int_divisor(self, a, b)
        return _keep_bool(np.mod(a, b), a, b)

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        if _int_valued(self, inputs):
            return [_zeros(x) for x in inputs]
        # a % b == a - b * floor(a / b), and the floor is locally constant
        a, _b = inputs
        (g,) = output_grads
        return [_fit(g, a), mul(neg(g), int_div(*_in_precision(self, inputs)))]


class Pow(BinaryScalarOp):
    """``a ** b``; an integer base to a negative integer power is an error (NumPy's)."""

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        if _int_valued(self, inputs):
            return [_zeros(x) for x in inputs]
        x, y = inputs
        (g,) = output_grads
        xf, yf = _in_precision(self, inputs)
        gx = _chain(g, mul(yf, pow(xf, sub(yf, 1))), x)
        # d(x**y)/dy = log(x) * x**y; 0 at x == 0 (as PyTensor), where 0**y is flat for y > 0
        gy = _chain(g, mul(log(xf), pow(xf, yf)), y)
        return [gx, switch(eq(x, 0), 0, gy)]

    ufunc = np.power


class Neg(UnaryScalarOp):
    """``-a``."""

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        (x,) = inputs
        if _is_discrete(x):
            return [_zeros(x)]
        return [neg(output_grads[0])]

    ufunc = np.negative


class Reciprocal(UnaryScalarOp):
    """``1 / a`` (in float for integer inputs)."""

    def impl(self, a: Any) -> Any:
        dtype = np.asarray(a).dtype
        if dtype.kind in "biu":
            return np.true_divide(1, a, dtype=float_dtype_for(dtype.name))
        return np.reciprocal(a)

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        (x,) = inputs
        (g,) = output_grads
        return [_chain_div(neg(g), sqr(_real(x)), x)]


class Abs(UnaryScalarOp):
    """``|a|``; a complex input gives its float magnitude."""

    ufunc = np.abs

    def output_types(self, types: Any) -> list[ScalarType]:
        (t,) = types
        if t.dtype in complex_types:
            return [float32 if t.dtype == "complex64" else float64]
        return [t]

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        (x,) = inputs
        (g,) = output_grads
        if _is_discrete(x):
            return [_zeros(x)]
        if _is_complex(x):  # d|z| = Re(conj(z / |z|) dz): the term is g * z / |z| (0 at 0)
            r = abs(x)
            return [mul(g, true_div(x, switch(eq(r, 0), 1, r)))]
        return [mul(g, sign(x))]  # the subgradient 0 at 0


class Sign(_ZeroGrad, UnaryScalarOp):
    """-1, 0 or 1 (NaN stays NaN)."""

    ufunc = np.sign

    def output_types(self, types: Any) -> list[ScalarType]:
        (t,) = types
        if t.dtype == "bool" or t.dtype in complex_types:
            raise TypeError(f"sign is not defined for {t.dtype} inputs")
        return [t]


class Sqr(UnaryScalarOp):
    """``a * a`` (for bool: ``a``, as ``a & a``)."""

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        (x,) = inputs
        if _is_discrete(x):
            return [_zeros(x)]
        return [_chain(output_grads[0], mul(2, x), x)]

    @staticmethod
    def ufunc(a: Any) -> Any:
        # np.square has no bool loop (it gives int8); multiply is logical and on bools
        return np.multiply(a, a)


class Sqrt(FloatUnary):
    """Square root (NaN for negative reals)."""

    ufunc = np.sqrt

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        (x,) = inputs
        (g,) = output_grads
        return [_chain_div(g, mul(_const(2, x), sqrt(x)), x)]


class Maximum(BinaryScalarOp):
    """The larger of ``a`` and ``b``; NaN if either is NaN."""

    ufunc = np.maximum
    commutative = associative = True

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        if _int_valued(self, inputs):
            return [_zeros(x) for x in inputs]
        # the gradient goes to the chosen input; on a tie, to the first (as PyTensor's);
        # where either is NaN (the result is NaN), to the second
        x, y = inputs
        (g,) = output_grads
        first = ge(x, y)
        return [switch(first, g, 0), switch(first, 0, g)]


class Minimum(BinaryScalarOp):
    """The smaller of ``a`` and ``b``; NaN if either is NaN."""

    ufunc = np.minimum
    commutative = associative = True

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        if _int_valued(self, inputs):
            return [_zeros(x) for x in inputs]
        x, y = inputs
        (g,) = output_grads
        first = le(x, y)
        return [switch(first, g, 0), switch(first, 0, g)]


class Clip(ScalarOp):
    """``a`` limited to ``[lo, hi]``."""

    nin = 3

    def impl(self, a: Any, lo: Any, hi: Any) -> Any:
        return np.minimum(np.maximum(a, lo), hi)

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        if _int_valued(self, inputs):
            return [_zeros(x) for x in inputs]
        # the result is minimum(maximum(a, lo), hi): whichever input it equals gets the
        # gradient, a on the bounds (ties go to the first input, as for maximum/minimum);
        # switches, not and_: the bitwise ops have no gradient, and this graph may be
        # differentiated again
        a, lo, hi = inputs
        (g,) = output_grads
        ga = switch(lt(a, lo), 0, switch(gt(a, hi), 0, g))
        glo = switch(lt(a, lo), switch(gt(lo, hi), 0, g), 0)
        ghi = switch(gt(maximum(a, lo), hi), g, 0)
        return [ga, glo, ghi]


add = Add(upcast_out, name="add")
mul = Mul(upcast_out, name="mul")
sub = Sub(upcast_out_nobool, name="sub")
true_div = TrueDiv(upcast_out, name="true_div")
int_div = IntDiv(upcast_out_no_complex, name="int_div")
mod = Mod(upcast_out_no_complex, name="mod")
pow = Pow(upcast_out_min8, name="pow")
neg = Neg(same_out_nobool, name="neg")
reciprocal = Reciprocal(upgrade_to_float, name="reciprocal")
abs = Abs(same_out, name="abs")
sign = Sign(same_out, name="sign")
sqr = Sqr(same_out, name="sqr")
sqrt = Sqrt(upgrade_to_float, name="sqrt")
maximum = Maximum(upcast_out, name="maximum")
minimum = Minimum(upcast_out, name="minimum")
clip = Clip(upcast_out_no_complex, name="clip")

# --- comparison and logic ----------------------------------------------------------------


class Comparison(_ZeroGrad, BinaryScalarOp):
    """A comparison: always a bool result (complex numbers compare as NumPy orders them:
    lexicographically, real part first). Its gradient is zero."""

    def output_types(self, types: Any) -> list[ScalarType]:
        return bool_out(*types)


class EQ(Comparison):
    ufunc = np.equal
    commutative = True


class NEQ(Comparison):
    ufunc = np.not_equal
    commutative = True


class LT(Comparison):
    ufunc = np.less


class LE(Comparison):
    ufunc = np.less_equal


class GT(Comparison):
    ufunc = np.greater


class GE(Comparison):
    ufunc = np.greater_equal


class BitwiseOp(ScalarOp):
    """Logical on bools, bitwise on integers; floats are an error."""

    def output_types(self, types: Any) -> list[ScalarType]:
        bad = [t.dtype for t in types if t.dtype not in discrete_types]
        if bad:
            raise TypeError(f"{self} needs bool or integer inputs, got {', '.join(bad)}")
        (out,) = upcast_out(*types)
        if out.dtype not in discrete_types:
            raise TypeError(
                f"{self}: {', '.join(t.dtype for t in types)} have no common integer dtype "
                f"(NumPy promotes them to {out.dtype}); cast one of them first"
            )
        return [out]

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        # As PyTensor: zero, not undefined. Their inputs are bool/int values (usually masks
        # built from comparisons, whose own gradient is zero), and an undefined term here
        # would make `switch((x > 0) & (x < 1), f(x), 0)` impossible to differentiate.
        return [_zeros(x) for x in inputs]


class AND(BitwiseOp):
    nin = 2
    ufunc = np.bitwise_and
    commutative = associative = True


class OR(BitwiseOp):
    nin = 2
    ufunc = np.bitwise_or
    commutative = associative = True


class XOR(BitwiseOp):
    nin = 2
    ufunc = np.bitwise_xor
    commutative = associative = True


class Invert(BitwiseOp):
    nin = 1
    ufunc = np.invert


class Switch(ScalarOp):
    """``a if cond else b``, elementwise (``cond`` of any dtype; nonzero is true)."""

    nin = 3

    def output_types(self, types: Any) -> list[ScalarType]:
        return upcast_out(*types[1:])

    def impl(self, cond: Any, a: Any, b: Any) -> Any:
        return np.where(cond, a, b)

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        cond, a, b = inputs
        if _int_valued(self, inputs):
            return [_zeros(cond), _zeros(a), _zeros(b)]
        (g,) = output_grads
        # the condition is connected, but taken as locally constant (as PyTensor does):
        # cond + eps selects the same branch
        return [_zeros(cond), _fit(switch(cond, g, 0), a), _fit(switch(cond, 0, g), b)]


class IsNan(_ZeroGrad, UnaryScalarOp):
    ufunc = np.isnan


class IsInf(_ZeroGrad, UnaryScalarOp):
    ufunc = np.isinf


eq = EQ(name="eq")
neq = NEQ(name="neq")
lt = LT(name="lt")
le = LE(name="le")
gt = GT(name="gt")
ge = GE(name="ge")
and_ = AND(name="and_")
or_ = OR(name="or_")
xor = XOR(name="xor")
invert = Invert(name="invert")
switch = Switch(name="switch")
isnan = IsNan(bool_out, name="isnan")
isinf = IsInf(bool_out, name="isinf")

# --- rounding ----------------------------------------------------------------------------


class Floor(_ZeroGrad, FloatUnary):
    ufunc = np.floor


class Ceil(_ZeroGrad, FloatUnary):
    ufunc = np.ceil


class Trunc(_ZeroGrad, FloatUnary):
    ufunc = np.trunc


class RoundHalfToEven(_ZeroGrad, UnaryScalarOp):
    """Round to nearest, ties to even (NumPy's ``round``)."""

    ufunc = np.rint


class RoundHalfAwayFromZero(_ZeroGrad, UnaryScalarOp):
    """Round to nearest, ties away from zero (C's ``round``)."""

    def impl(self, a: Any) -> Any:
        t = np.trunc(a)
        # a - trunc(a) is exact in floating point, so the tie test is too
        return np.where(np.abs(a - t) >= 0.5, t + np.sign(a), t).astype(np.asarray(a).dtype)[()]


floor = Floor(upgrade_to_float_no_complex, name="floor")
ceil = Ceil(upgrade_to_float_no_complex, name="ceil")
trunc = Trunc(upgrade_to_float_no_complex, name="trunc")
round_half_to_even = RoundHalfToEven(same_out_float_only, name="round_half_to_even")
round_half_away_from_zero = RoundHalfAwayFromZero(same_out_float_only, name="round_half_away_from_zero")

# --- exponentials, logarithms, trigonometry ----------------------------------------------


class Exp(FloatUnary):
    ufunc = np.exp

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        (x,) = inputs
        (g,) = output_grads
        return [_chain(g, exp(x), x)]


class Exp2(FloatUnary):
    ufunc = np.exp2

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        (x,) = inputs
        (g,) = output_grads
        return [_chain(g, mul(exp2(x), _const(np.log(2.0), x)), x)]


class Expm1(FloatUnary):
    ufunc = np.expm1

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        (x,) = inputs
        (g,) = output_grads
        return [_chain(g, exp(x), x)]


class Log(FloatUnary):
    ufunc = np.log

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        (x,) = inputs
        (g,) = output_grads
        return [_chain_div(g, _real(x), x)]


class Log2(FloatUnary):
    ufunc = np.log2

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        (x,) = inputs
        (g,) = output_grads
        return [_chain_div(g, mul(_real(x), _const(np.log(2.0), x)), x)]


class Log10(FloatUnary):
    ufunc = np.log10

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        (x,) = inputs
        (g,) = output_grads
        return [_chain_div(g, mul(_real(x), _const(np.log(10.0), x)), x)]


class Log1p(FloatUnary):
    ufunc = np.log1p

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        (x,) = inputs
        (g,) = output_grads
        return [_chain_div(g, add(_real(x), 1), x)]


class Sin(FloatUnary):
    ufunc = np.sin

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        (x,) = inputs
        (g,) = output_grads
        return [_chain(g, cos(x), x)]


class Cos(FloatUnary):
    ufunc = np.cos

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        (x,) = inputs
        (g,) = output_grads
        return [_chain(neg(g), sin(x), x)]


class Tan(FloatUnary):
    ufunc = np.tan

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        (x,) = inputs
        (g,) = output_grads
        return [_chain_div(g, sqr(cos(x)), x)]


def _one_minus_sqr(x: Variable) -> Variable:
    """``1 - x**2`` as ``(1 - x) * (1 + x)``: no cancellation near 1."""
    x = _real(x)
    return mul(sub(1, x), add(1, x))


class ArcSin(FloatUnary):
    ufunc = np.arcsin

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        (x,) = inputs
        (g,) = output_grads
        return [_chain_div(g, sqrt(_one_minus_sqr(x)), x)]


class ArcCos(FloatUnary):
    ufunc = np.arccos

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        (x,) = inputs
        (g,) = output_grads
        return [_chain_div(neg(g), sqrt(_one_minus_sqr(x)), x)]


class ArcTan(FloatUnary):
    ufunc = np.arctan

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        (x,) = inputs
        (g,) = output_grads
        return [_chain_div(g, add(1, sqr(_real(x))), x)]


class Sinh(FloatUnary):
    ufunc = np.sinh

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        (x,) = inputs
        (g,) = output_grads
        return [_chain(g, cosh(x), x)]


class Cosh(FloatUnary):
    ufunc = np.cosh

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        (x,) = inputs
        (g,) = output_grads
        return [_chain(g, sinh(x), x)]


class Tanh(FloatUnary):
    ufunc = np.tanh

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        (x,) = inputs
        (g,) = output_grads
        return [_chain(g, sub(1, sqr(tanh(x))), x)]


class ArcSinh(FloatUnary):
    ufunc = np.arcsinh

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        (x,) = inputs
        (g,) = output_grads
        return [_chain_div(g, sqrt(add(sqr(_real(x)), 1)), x)]


class ArcCosh(FloatUnary):
    ufunc = np.arccosh

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        (x,) = inputs
        (g,) = output_grads
        xf = _real(x)  # sqrt(x - 1) * sqrt(x + 1): no cancellation near 1, right for complex
        return [_chain_div(g, mul(sqrt(sub(xf, 1)), sqrt(add(xf, 1))), x)]


class ArcTanh(FloatUnary):
    ufunc = np.arctanh

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        (x,) = inputs
        (g,) = output_grads
        return [_chain_div(g, _one_minus_sqr(x), x)]


class Deg2Rad(FloatUnary):
    ufunc = np.deg2rad

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        (x,) = inputs
        (g,) = output_grads
        return [mul(g, _const(np.pi / 180, x))]


class Rad2Deg(FloatUnary):
    ufunc = np.rad2deg

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        (x,) = inputs
        (g,) = output_grads
        return [mul(g, _const(180 / np.pi, x))]


class ArcTan2(BinaryScalarOp):
    """The angle of the point ``(b, a)``: ``arctan(a / b)`` in the right quadrant."""

    def impl(self, a: Any, b: Any) -> Any:
        dtypes = [float_dtype_for(np.asarray(v).dtype.name) for v in (a, b)]
        return np.arctan2(a, b, dtype=np.result_type(*dtypes))

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        (g,) = output_grads
        af, bf = _in_precision(self, inputs)
        # d/da = b / (a**2 + b**2), d/db = -a / (a**2 + b**2)
        g_r2 = true_div(g, add(sqr(af), sqr(bf)))
        return [mul(g_r2, bf), mul(neg(g_r2), af)]


exp = Exp(upgrade_to_float, name="exp")
exp2 = Exp2(upgrade_to_float, name="exp2")
expm1 = Expm1(upgrade_to_float, name="expm1")
log = Log(upgrade_to_float, name="log")
log2 = Log2(upgrade_to_float, name="log2")
log10 = Log10(upgrade_to_float, name="log10")
log1p = Log1p(upgrade_to_float, name="log1p")
sin = Sin(upgrade_to_float, name="sin")
cos = Cos(upgrade_to_float, name="cos")
tan = Tan(upgrade_to_float, name="tan")
arcsin = ArcSin(upgrade_to_float, name="arcsin")
arccos = ArcCos(upgrade_to_float, name="arccos")
arctan = ArcTan(upgrade_to_float, name="arctan")
sinh = Sinh(upgrade_to_float, name="sinh")
cosh = Cosh(upgrade_to_float, name="cosh")
tanh = Tanh(upgrade_to_float, name="tanh")
arcsinh = ArcSinh(upgrade_to_float, name="arcsinh")
arccosh = ArcCosh(upgrade_to_float, name="arccosh")
arctanh = ArcTanh(upgrade_to_float, name="arctanh")
# NumPy has no complex loops for these
deg2rad = Deg2Rad(upgrade_to_float_no_complex, name="deg2rad")
rad2deg = Rad2Deg(upgrade_to_float_no_complex, name="rad2deg")
arctan2 = ArcTan2(upgrade_to_float_no_complex, name="arctan2")

# --- casts, identity, second -------------------------------------------------------------


class Cast(UnaryScalarOp):
    """Convert to ``o_type``'s dtype (C semantics: floats to ints truncate)."""

    __props__ = ("o_type",)

    def __init__(self, o_type: ScalarType, name: str | None = None):
        if not isinstance(o_type, ScalarType):
            raise TypeError(f"Cast needs a ScalarType, got {o_type!r}")
        super().__init__(specific_out(o_type), name=name or f"convert_to_{o_type.dtype}")
        self.o_type = o_type

    def output_types(self, types: Any) -> list[ScalarType]:
        (t,) = types
        if t.dtype in complex_types and self.o_type.dtype not in complex_types:
            raise TypeError(
                f"Casting {t.dtype} to {self.o_type.dtype} would drop the imaginary part; "
                "use real(), imag(), abs() or angle() first"
            )
        return super().output_types(types)

    def impl(self, a: Any) -> Any:
        return np.asarray(a).astype(self.o_type.dtype)[()]

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        (x,) = inputs
        (g,) = output_grads
        if self.o_type.dtype in discrete_types:
            return [_zeros(x)]  # an integer-valued result
        # a float result: the gradient flows back, to an integer input too (as if it were
        # a float), in the input's precision; a real input of a complex cast gets the real part
        return [cast(_fit(g, x), _grad_dtype(x))]

    def __str__(self) -> str:
        return f"Cast{{{self.o_type.dtype}}}"


_casts = {
    dtype: Cast(get_scalar_type(dtype)) for dtype in ("bool", *integer_types, *float_types, *complex_types)
}
convert_to_bool = _casts["bool"]
convert_to_int8, convert_to_int16 = _casts["int8"], _casts["int16"]
convert_to_int32, convert_to_int64 = _casts["int32"], _casts["int64"]
convert_to_uint8, convert_to_uint16 = _casts["uint8"], _casts["uint16"]
convert_to_uint32, convert_to_uint64 = _casts["uint32"], _casts["uint64"]
convert_to_float16, convert_to_float32 = _casts["float16"], _casts["float32"]
convert_to_float64 = _casts["float64"]
convert_to_complex64, convert_to_complex128 = _casts["complex64"], _casts["complex128"]


def cast(x: Any, dtype: str) -> ScalarVariable:
    """``x`` as a scalar of ``dtype`` (no op when it already is)."""
    x = as_scalar(x)
    dtype = get_scalar_type(dtype).dtype
    if x.type.dtype == dtype:
        return x
    return _casts[dtype](x)


class Identity(UnaryScalarOp):
    """Returns its input."""

    def impl(self, a: Any) -> Any:
        return a

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        (x,) = inputs
        return [_zeros(x) if _is_discrete(x) else output_grads[0]]


class Second(BinaryScalarOp):
    """Returns ``b``; elementwise, ``b`` broadcast to ``a``'s shape (``fill``)."""

    def impl(self, a: Any, b: Any) -> Any:
        return np.broadcast_to(b, np.broadcast_shapes(np.shape(a), np.shape(b))) if np.ndim(a) else b

    def connection_pattern(self, node: Any) -> list[list[bool]]:
        return [[False], [True]]  # the values of ``a`` are never read, only its shape

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        _a, b = inputs
        (g,) = output_grads
        # as PyTensor: ``a`` is disconnected; an integer ``b`` gets a zero gradient
        return [disconnected_type(), _zeros(b) if _is_discrete(b) else g]


identity = Identity(same_out, name="identity")
second = Second(transfer_type(1), name="second")

# --- complex numbers ---------------------------------------------------------------------


def _real_of(*types: ScalarType) -> list[ScalarType]:
    (t,) = types
    return [{"complex64": float32, "complex128": float64}.get(t.dtype, t)]


# np.real, np.imag and np.angle are plain functions, not ufuncs: as class attributes they
# would become methods, hence staticmethod


# Gradients with respect to a complex z are dC/d(Re z) + 1j * dC/d(Im z) (PyTensor's
# convention), for a real cost C.


class Real(UnaryScalarOp):
    ufunc = staticmethod(np.real)

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        (x,) = inputs
        (g,) = output_grads
        if _is_complex(x):
            return [cast(complex(g, 0), x.type.dtype)]
        return [_zeros(x) if _is_discrete(x) else g]


class Imag(UnaryScalarOp):
    ufunc = staticmethod(np.imag)

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        (x,) = inputs
        (g,) = output_grads
        if _is_complex(x):
            return [cast(complex(0, g), x.type.dtype)]
        return [_zeros(x)]  # the imaginary part of a real number is 0, whatever it is


class Angle(UnaryScalarOp):
    """The argument of a complex number (0 or pi for reals); float64 always, as in PyTensor."""

    def impl(self, a: Any) -> Any:
        return np.angle(np.asarray(a, dtype=np.result_type(a, np.float64)))

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        (z,) = inputs
        (g,) = output_grads
        if not _is_complex(z):
            return [_zeros(z)]  # 0 or pi: locally constant
        # angle = arctan2(y, x): d/dx = -y / |z|**2, d/dy = x / |z|**2, so the term is
        # g * 1j * z / |z|**2; 0 at z == 0
        x, y = real(z), imag(z)
        r2 = add(sqr(x), sqr(y))
        g_r2 = true_div(g, switch(eq(r2, 0), 1, r2))
        return [cast(complex(mul(neg(g_r2), y), mul(g_r2, x)), z.type.dtype)]


class Conj(UnaryScalarOp):
    ufunc = np.conj

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        (x,) = inputs
        (g,) = output_grads
        if _is_discrete(x):
            return [_zeros(x)]
        return [conj(g) if _is_complex(x) else g]


def _complex_parts_out(*types: ScalarType) -> list[ScalarType]:
    bad = [t.dtype for t in types if t.dtype in complex_types]
    if bad:
        raise TypeError(
            f"complex parts must be real, got {', '.join(bad)} (take real()/imag()/abs()/angle() first)"
        )
    return complex_out(*types)


class Complex(BinaryScalarOp):
    """``a + 1j * b`` from the real part ``a`` and imaginary part ``b``."""

    def impl(self, a: Any, b: Any) -> Any:
        real_dtype = _real_dtype_of(a, b)
        return np.asarray(a, dtype=real_dtype) + 1j * np.asarray(b, dtype=real_dtype)

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        (g,) = output_grads
        return [real(g), imag(g)] if _is_complex(g) else [g, _zeros(inputs[1])]


class ComplexFromPolar(BinaryScalarOp):
    """``r * exp(1j * theta)``."""

    def impl(self, r: Any, theta: Any) -> Any:
        real_dtype = _real_dtype_of(r, theta)
        return np.asarray(r, dtype=real_dtype) * np.exp(1j * np.asarray(theta, dtype=real_dtype))

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        (g,) = output_grads
        # z = r cos(theta) + 1j r sin(theta); with g = gx + 1j gy:
        # dC/dr = gx cos + gy sin, dC/dtheta = r (gy cos - gx sin)
        gx, gy = (real(g), imag(g)) if _is_complex(g) else (g, _zeros(g))
        rf, tf = _in_precision(self, inputs)
        c, s = cos(tf), sin(tf)
        gr = add(mul(gx, c), mul(gy, s))
        gtheta = mul(rf, sub(mul(gy, c), mul(gx, s)))
        return [gr, gtheta]


def _real_dtype_of(*args: Any) -> str:
    """The float dtype whose complex is the output of ``complex(*args)`` (see ``complex_out``)."""
    (out,) = complex_out(*(get_scalar_type(np.asarray(a).dtype) for a in args))
    return "float32" if out.dtype == "complex64" else "float64"


def _conj_out(*types: ScalarType) -> list[ScalarType]:
    (t,) = types
    return [int8] if t.dtype == "bool" else [t]  # np.conj has no bool loop (nor has PyTensor)


real = Real(_real_of, name="real")
imag = Imag(_real_of, name="imag")
angle = Angle(specific_out(float64), name="angle")
conj = Conj(_conj_out, name="conj")
complex = Complex(_complex_parts_out, name="complex")
complex_from_polar = ComplexFromPolar(_complex_parts_out, name="complex_from_polar")

__all__ = [
    name
    for name, value in list(globals().items())
    if not name.startswith("_") and (isinstance(value, (ScalarOp, ScalarType)) or name in ("cast", "scalar"))
]
__all__ += ["ScalarOp", "FloatUnary", "Cast", "Comparison", "BitwiseOp"]
# the Op classes too (PyTensor exports them: isinstance(op, ps.Exp), ps.Add(...))
__all__ += [
    n for n, v in list(globals().items()) if isinstance(v, type) and issubclass(v, ScalarOp) and n[0] != "_"
]
