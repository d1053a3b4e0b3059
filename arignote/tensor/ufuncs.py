"""The elementwise functions on tensors (NumPy's ufuncs), each an ``Elemwise`` of a scalar
op of :mod:`arignote.scalar` (``add``, ``exp``, ``erf``, the special functions, ...), with
the functions built directly from them: ``switch``, ``clip``, ``cast``, ``round``,
``isclose``, finiteness tests, ``logaddexp``, ``nan_to_num``. PyTensor's path for them is
:mod:`arignote.tensor.math`.

>>> import numpy as np
>>> import arignote.tensor as pt
>>> x = pt.dvector("x")
>>> float(pt.logaddexp(x, 0.0).eval({x: np.array([1000.0])})[0])
1000.0
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from numpy import e, euler_gamma, inf, nan, pi

import arignote.scalar as ps
from arignote.graph.basic import Variable
from arignote.scalar.type import complex_types, discrete_types, upcast
from arignote.tensor.conversion import as_tensor_variable
from arignote.tensor.elemwise import Elemwise

__all__ = [
    "abs",
    "absolute",
    "add",
    "and_",
    "angle",
    "arccos",
    "arccosh",
    "arcsin",
    "arcsinh",
    "arctan",
    "arctan2",
    "arctanh",
    "betainc",
    "betainc_grad_a",
    "betainc_grad_b",
    "betaincinv",
    "bitwise_and",
    "bitwise_not",
    "bitwise_or",
    "bitwise_xor",
    "cast",
    "ceil",
    "ceil_intdiv",
    "chi2sf",
    "clip",
    "complex",
    "complex_from_polar",
    "conj",
    "conjugate",
    "cos",
    "cosh",
    "deg2rad",
    "digamma",
    "divide",
    "divmod",
    "e",
    "eq",
    "equal",
    "erf",
    "erfc",
    "erfcinv",
    "erfcx",
    "erfinv",
    "euler_gamma",
    "exp",
    "exp2",
    "expit",
    "expm1",
    "fill",
    "floor",
    "floor_div",
    "floor_divide",
    "gamma",
    "gammainc",
    "gammainc_grad",
    "gammaincc",
    "gammaincc_grad",
    "gammainccinv",
    "gammaincinv",
    "gammal",
    "gammaln",
    "gammau",
    "ge",
    "greater",
    "greater_equal",
    "gt",
    "hyp2f1",
    "hyp2f1_grad_a",
    "hyp2f1_grad_b",
    "hyp2f1_grad_c",
    "i0",
    "i1",
    "identity",
    "imag",
    "inf",
    "int_div",
    "invert",
    "iround",
    "isclose",
    "isfinite",
    "isinf",
    "isnan",
    "isneginf",
    "isposinf",
    "iv",
    "ive",
    "j0",
    "j1",
    "jv",
    "kn",
    "kv",
    "kve",
    "le",
    "less",
    "less_equal",
    "log",
    "log10",
    "log1mexp",
    "log1p",
    "log1pexp",
    "log2",
    "logaddexp",
    "lt",
    "maximum",
    "minimum",
    "mod",
    "mul",
    "multiply",
    "nan",
    "nan_to_num",
    "neg",
    "negative",
    "neq",
    "not_equal",
    "or_",
    "owens_t",
    "pi",
    "polygamma",
    "pow",
    "power",
    "psi",
    "rad2deg",
    "real",
    "reciprocal",
    "round",
    "round_half_away_from_zero",
    "round_half_to_even",
    "second",
    "sgn",
    "sigmoid",
    "sign",
    "sin",
    "sinh",
    "softplus",
    "sqr",
    "sqrt",
    "square",
    "sub",
    "subtract",
    "switch",
    "tan",
    "tanh",
    "tensor_copy",
    "tri_gamma",
    "true_div",
    "true_divide",
    "trunc",
    "where",
    "xlogx",
    "xlogy0",
    "xor",
]

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
_conj = Elemwise(ps.conj)
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


# --- special functions ---------------------------------------------------------------------

hyp2f1 = Elemwise(ps.hyp2f1)
hyp2f1_grad_a = Elemwise(ps.hyp2f1_grad_a)
hyp2f1_grad_b = Elemwise(ps.hyp2f1_grad_b)
hyp2f1_grad_c = Elemwise(ps.hyp2f1_grad_c)
jv = Elemwise(ps.jv)
iv = Elemwise(ps.iv)
ive = Elemwise(ps.ive)
kv = Elemwise(ps.kv)
kve = Elemwise(ps.kve)
owens_t = Elemwise(ps.owens_t)
gammal = Elemwise(ps.gammal)
gammau = Elemwise(ps.gammau)
gammaincinv = Elemwise(ps.gammaincinv)
gammainccinv = Elemwise(ps.gammainccinv)
betaincinv = Elemwise(ps.betaincinv)


def kn(n: Any, x: Any) -> Variable:
    """The modified Bessel function of the second kind of order ``n``: ``kv(n, x)`` (as in
    PyTensor, ``n`` may be any real, not only an integer)."""
    return kv(n, x)


def chi2sf(x: Any, k: Any) -> Variable:
    """The survival function of the chi-squared distribution with ``k`` degrees of freedom at
    ``x``: ``gammaincc(k / 2, x / 2)``. Deprecated (as in PyTensor): write that instead."""
    warnings.warn("chi2sf is deprecated; use gammaincc(k / 2, x / 2)", FutureWarning, stacklevel=2)
    # Python's division first: a Python number k stays a number (k=1 gives the constant 0.5,
    # float32, so a float32 x keeps a float32 result, as in PyTensor)
    out = gammaincc(k / 2, x / 2)
    # NaN for x < 0, as SciPy's chdtrc: x / 2 of the least subnormal, -5e-324, would be -0.0
    nan_out = as_tensor_variable(np.asarray(np.nan, dtype=out.type.dtype))
    return switch(lt(x, 0), nan_out, out)


# NumPy's names for the comparisons (the same Elemwise Ops)
equal = eq
not_equal = neq
greater = gt
greater_equal = ge
less = lt
less_equal = le
floor_div = int_div


def _is_discrete(x: Variable) -> bool:
    return x.type.dtype in discrete_types


# --- finiteness ----------------------------------------------------------------------------


def isfinite(a: Any) -> Variable:
    """Whether each element is neither NaN nor infinite (``numpy.isfinite``); integers and
    bools are always finite. A complex number is finite when both its parts are."""
    a = as_tensor_variable(a)
    if _is_discrete(a):
        return a.ones_like(dtype="bool")  # the method: alloc is built on this module
    return and_(invert(isnan(a)), invert(isinf(a)))


def _check_real(x: Variable, what: str) -> None:
    if x.type.dtype in complex_types:
        raise TypeError(f"{what} is not defined for complex input; got {x} of Type {x.type}")


def isposinf(x: Any) -> Variable:
    """Whether each element is ``+inf`` (``numpy.isposinf``; real input only)."""
    x = as_tensor_variable(x)
    _check_real(x, "isposinf")
    return eq(x, np.inf)


def isneginf(x: Any) -> Variable:
    """Whether each element is ``-inf`` (``numpy.isneginf``; real input only)."""
    x = as_tensor_variable(x)
    _check_real(x, "isneginf")
    return eq(x, -np.inf)


# --- elementwise helpers ---------------------------------------------------------------------


def logaddexp(*xs: Any) -> Variable:
    """``log(exp(x1) + exp(x2) + ...)`` elementwise (with broadcasting), computed without
    overflow or underflow: the largest term is factored out first.

    Infinities behave as in ``numpy.logaddexp`` (``logaddexp(-inf, -inf) = -inf``,
    ``logaddexp(inf, x) = inf``). The dtype is that of ``log(exp(x))``: float, integers
    widened to a float.
    """
    if not xs:
        raise TypeError("logaddexp needs at least one input")
    xs_t = [as_tensor_variable(x) for x in xs]
    for x in xs_t:
        _check_real(x, "logaddexp")
    out_dtype = upcast(*(exp(x).type.dtype for x in xs_t))
    xs_t = [cast(x, out_dtype) for x in xs_t]
    m = xs_t[0]
    for x in xs_t[1:]:
        m = maximum(m, x)
    # an infinite maximum cannot be factored out (inf - inf is NaN): factor out 0 instead,
    # which gives inf (some term is +inf) or -inf (all terms are -inf) exactly
    m_safe = switch(isinf(m), 0, m)
    total = exp(xs_t[0] - m_safe)
    for x in xs_t[1:]:
        total = total + exp(x - m_safe)
    return cast(m_safe + log(total), out_dtype)


def divmod(x: Any, y: Any) -> tuple[Variable, Variable]:
    """``(floor_div(x, y), mod(x, y))``, as Python's and NumPy's ``divmod``."""
    return int_div(x, y), mod(x, y)


def ceil_intdiv(a: Any, b: Any) -> Variable:
    """``ceil(a / b)`` for integers, without going through floats (exact for int64):
    the floor division, plus one where the division leaves a remainder."""
    div = int_div(a, b)
    return div + cast(neq(mod(a, b), 0), div.type.dtype)


def iround(a: Any, mode: str | None = None) -> Variable:
    """``a`` rounded (see :func:`arignote.tensor.math.round` for ``mode``) and cast to
    int64."""
    return cast(round(a, mode), "int64")


def sgn(a: Any) -> Variable:
    """Deprecated name of :func:`arignote.tensor.math.sign`."""
    warnings.warn("sgn is deprecated; use sign instead", FutureWarning, stacklevel=2)
    return sign(a)


def conjugate(x: Any) -> Variable:
    """The complex conjugate (``numpy.conjugate``); real input is returned itself, so its
    dtype is kept (a bool stays bool, as PyTensor's, where NumPy's conj gives int8)."""
    x = as_tensor_variable(x)
    return _conj(x) if x.type.dtype.startswith("complex") else x


conj = conjugate


def nan_to_num(x: Any, nan: Any = 0.0, posinf: Any = None, neginf: Any = None) -> Variable:
    """``x`` with NaN replaced by ``nan``, ``+inf`` by ``posinf`` and ``-inf`` by ``neginf``
    (by default the largest and the most negative finite value of ``x``'s dtype).

    As ``numpy.nan_to_num``: the dtype of ``x`` is kept (the replacements are cast to it),
    integers and bools come back unchanged, and complex input is treated part by part.
    The replacements may be symbolic scalars.
    """
    x = as_tensor_variable(x)
    if _is_discrete(x):
        return x
    if x.type.dtype in complex_types:
        re, im = (nan_to_num(part, nan, posinf, neginf) for part in (real(x), imag(x)))
        return complex(re, im)
    info = np.finfo(x.type.dtype)
    big = info.max if posinf is None else posinf
    small = info.min if neginf is None else neginf
    values = [cast(as_tensor_variable(v), x.type.dtype) for v in (nan, big, small)]
    for what, v in zip(("nan", "posinf", "neginf"), values):
        if v.type.ndim:
            raise TypeError(f"nan_to_num: {what} must be a scalar, got {v} of Type {v.type}")
    out = switch(isnan(x), values[0], x)
    out = switch(eq(x, np.inf), values[1], out)
    return switch(eq(x, -np.inf), values[2], out)
