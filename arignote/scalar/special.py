"""Special functions as scalar ops (SciPy's implementations): the error functions, the gamma
function and its logarithmic derivatives, Owen's T, and numerically careful forms
(``softplus``, ``log1mexp``, ``sigmoid``, ``xlogx``, ``xlogy0``). The incomplete gamma
and beta functions are in :mod:`arignote.scalar.incomplete`, the Bessel functions in
:mod:`arignote.scalar.bessel`, ``hyp2f1`` in :mod:`arignote.scalar.hypergeometric`.

>>> from arignote.scalar import basic as ps
>>> from arignote.scalar.special import softplus
>>> x = ps.float64("x")
>>> float(softplus(x).eval({x: 1000.0}))  # log(1 + exp(1000)) without overflow
1000.0
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from arignote.graph.basic import Variable
from arignote.graph.null_type import grad_not_implemented, grad_undefined
from arignote.lazy import LazyAttribute, lazy_module
from arignote.scalar.basic import (
    FloatUnary,
    _chain,
    _const,
    _in_precision,
    _real,
    add,
    and_,
    as_scalar,
    ceil,
    eq,
    exp,
    ge,
    gt,
    invert,
    isinf,
    isnan,
    le,
    log,
    log1p,
    lt,
    mul,
    neg,
    neq,
    or_,
    sqr,
    sub,
    switch,
    true_div,
)
from arignote.scalar.basic import abs as abs_
from arignote.scalar.basic import expm1 as _expm1
from arignote.scalar.op import ScalarOp, float_dtype_for, upgrade_to_float, upgrade_to_float_no_complex
from arignote.scalar.scipy_impl import _Float64Impl, _half
from arignote.scalar.type import ScalarType, complex_types, get_scalar_type, upcast

# SciPy is imported on first use (see arignote.lazy)
sp = lazy_module("scipy.special")

__all__ = [
    "Erf",
    "Erfc",
    "Erfcinv",
    "Erfcx",
    "Erfinv",
    "Gamma",
    "GammaLn",
    "Log1mexp",
    "OwensT",
    "Owens_t",
    "PolyGamma",
    "Psi",
    "Sigmoid",
    "Softplus",
    "TriGamma",
    "betaln",
    "erf",
    "erfc",
    "erfcx",
    "erfinv",
    "erfcinv",
    "gamma",
    "gammaln",
    "psi",
    "tri_gamma",
    "polygamma",
    "sigmoid",
    "softplus",
    "log1mexp",
    "log1pexp",
    "xlogx",
    "xlogy0",
    "owens_t",
]


def _float_args(*args: Any) -> tuple[Any, str]:
    """The arguments and the float dtype they are computed in (ints widened as outputs are)."""
    dtype = np.result_type(*(float_dtype_for(np.asarray(a).dtype.name) for a in args)).name
    return args, dtype


class FloatNary(ScalarOp):
    """A special function of several real arguments, computed in their common float dtype
    (and returned in it: SciPy has no float16 loops)."""

    def impl(self, *args: Any) -> Any:
        args, dtype = _float_args(*args)
        result = self.ufunc(*(np.asarray(a, dtype=dtype) for a in args))
        return result if result.dtype == dtype else result.astype(dtype)


class Erf(FloatUnary):
    ufunc = LazyAttribute("scipy.special", "erf")

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        (x,) = inputs
        (g,) = output_grads
        return [_chain(g, mul(_const(2 / np.sqrt(np.pi), x), exp(neg(sqr(_real(x))))), x)]


class Erfc(FloatUnary):
    ufunc = LazyAttribute("scipy.special", "erfc")

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        (x,) = inputs
        (g,) = output_grads
        return [_chain(g, mul(_const(-2 / np.sqrt(np.pi), x), exp(neg(sqr(_real(x))))), x)]


class Erfcx(FloatUnary):
    """``exp(x**2) * erfc(x)``, accurate where ``erfc`` underflows."""

    ufunc = LazyAttribute("scipy.special", "erfcx")

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        (x,) = inputs
        (g,) = output_grads
        # d/dx erfcx(x) = 2 x erfcx(x) - 2 / sqrt(pi)
        return [mul(g, sub(mul(2, _real(x), erfcx(x)), _const(2 / np.sqrt(np.pi), x)))]


class Erfinv(FloatUnary):
    ufunc = LazyAttribute("scipy.special", "erfinv")

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        (x,) = inputs
        (g,) = output_grads
        return [mul(g, _const(np.sqrt(np.pi) / 2, x), exp(sqr(erfinv(x))))]


class Erfcinv(FloatUnary):
    ufunc = LazyAttribute("scipy.special", "erfcinv")

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        (x,) = inputs
        (g,) = output_grads
        return [mul(g, _const(-np.sqrt(np.pi) / 2, x), exp(sqr(erfcinv(x))))]


class Gamma(FloatUnary):
    ufunc = LazyAttribute("scipy.special", "gamma")

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        (x,) = inputs
        (g,) = output_grads
        return [_chain(g, mul(gamma(x), psi(x)), x)]


class GammaLn(FloatUnary):
    """``log|gamma(x)|``."""

    ufunc = LazyAttribute("scipy.special", "gammaln")

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        (x,) = inputs
        (g,) = output_grads
        return [mul(g, psi(x))]


class Psi(FloatUnary):
    """The digamma function, ``d/dx log gamma(x)``."""

    ufunc = LazyAttribute("scipy.special", "psi")

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        (x,) = inputs
        (g,) = output_grads
        if x.type.dtype in ("complex64", "complex128"):
            return [grad_not_implemented(self, 0, x, "tri_gamma has no complex implementation.")]
        return [mul(g, tri_gamma(x))]


class TriGamma(FloatUnary):
    """The trigamma function, ``d/dx psi(x)``."""

    @staticmethod
    def ufunc(x: Any, dtype: Any = None) -> Any:
        x = np.asarray(x, dtype=dtype) if dtype is not None else np.asarray(x)
        return sp.polygamma(1, x).astype(x.dtype if x.dtype.kind == "f" else np.float64)

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        (x,) = inputs
        (g,) = output_grads
        return [mul(g, polygamma(2, x))]


def _polygamma_out(n: ScalarType, x: ScalarType) -> list[ScalarType]:
    """The float dtype of ``x`` (that of ``n`` does not matter)."""
    if n.dtype in complex_types:
        raise TypeError(f"polygamma: the order n must be real, got {n.dtype}")
    return upgrade_to_float_no_complex(x)


class PolyGamma(ScalarOp):
    """``polygamma(n, x)``: the ``n``-th derivative of ``psi`` (``n = 0``: ``psi``, ``n = 1``:
    ``tri_gamma``), for an integer order ``n >= 0`` (NaN for a negative or fractional
    ``n``); computed in float64 (``scipy.special.polygamma``) and returned in the float
    dtype of ``x``.

    PyTensor rejects an ``n`` of a float dtype; here a float ``n`` holding an integer works
    (the rule that gives constant inputs the output's dtype turns a constant ``2`` into
    ``2.0``).
    """

    nin = 2

    def impl(self, n: Any, x: Any) -> Any:
        x = np.asarray(x)
        dtype = float_dtype_for(x.dtype.name)
        n = np.asarray(n)
        with np.errstate(all="ignore"):
            order = n.astype(np.int64)
            bad = (n < 0) | (order != n)
            result = np.where(bad, np.nan, sp.polygamma(np.where(bad, 0, order), x.astype(np.float64)))
        return result.astype(dtype)[()]

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        n, x = inputs
        (g,) = output_grads
        return [
            grad_undefined(self, 0, n, "The order n of polygamma takes integer values only."),
            mul(g, polygamma(add(n, 1), x)),
        ]


class Sigmoid(FloatUnary):
    """``1 / (1 + exp(-x))`` without overflow."""

    @staticmethod
    def ufunc(x: Any, dtype: Any = None) -> Any:
        # SciPy's expit, computed the same way with NumPy, so that the commonest activation
        # does not import scipy.special (~0.2 s) at a process's first compile: with
        # e = exp(-|x|), 1 / (1 + e) for x >= 0 and e / (1 + e) below (no overflow, no
        # cancellation in either tail; NaN stays NaN). Narrower floats are computed in
        # float64 and rounded once.
        x = np.asarray(x, dtype=dtype) if dtype is not None else np.asarray(x)
        wide = x.astype(np.float64) if x.dtype.kind == "f" and x.dtype.itemsize < 8 else x
        e = np.exp(-np.abs(wide))
        d = e + np.ones((), e.dtype)
        out = np.where(wide >= 0, np.ones((), e.dtype) / d, e / d)
        return out.astype(x.dtype) if wide is not x else out

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        (x,) = inputs
        (g,) = output_grads
        # s (1 - s), as s(x) s(-x): 1 - s(x) loses every digit for large x
        return [mul(g, sigmoid(x), sigmoid(neg(_real(x))))]


class Softplus(FloatUnary):
    """``log(1 + exp(x))`` without overflow (exact to rounding for large ``|x|``)."""

    @staticmethod
    def ufunc(x: Any, dtype: Any = None) -> Any:
        x = np.asarray(x, dtype=dtype) if dtype is not None else np.asarray(x)
        return np.logaddexp(np.zeros((), x.dtype), x)

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        (x,) = inputs
        (g,) = output_grads
        return [mul(g, sigmoid(x))]


class Log1mexp(FloatUnary):
    """``log(1 - exp(x))`` for ``x <= 0``, accurate near 0 and for very negative ``x``."""

    @staticmethod
    def ufunc(x: Any, dtype: Any = None) -> Any:
        x = np.asarray(x, dtype=dtype) if dtype is not None else np.asarray(x)
        # (silent as SciPy's functions: expm1 overflows for large x > 0, where the value is NaN)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            near_zero = x > -np.log(np.asarray(2, x.dtype))
            return np.where(near_zero, np.log(-np.expm1(x)), np.log1p(-np.exp(x)))

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        (x,) = inputs
        (g,) = output_grads
        # d/dx log(1 - exp(x)) = -1 / expm1(-x); -inf at 0 (where it would give +inf)
        d = true_div(-1, _expm1(neg(_real(x))))
        return [mul(g, switch(isinf(d), _const(-np.inf, x), d))]


class XLogX(FloatUnary):
    """``x * log(x)``, 0 at ``x == 0``."""

    @staticmethod
    def ufunc(x: Any, dtype: Any = None) -> Any:
        x = np.asarray(x, dtype=dtype) if dtype is not None else np.asarray(x)
        return sp.xlogy(x, x)

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        (x,) = inputs
        (g,) = output_grads
        return [_chain(g, add(log(x), 1), x)]


class XLogY0(FloatNary):
    """``x * log(y)``, 0 wherever ``x == 0`` (even if ``y`` is 0 or NaN, as PyTensor's
    ``xlogy0``; ``scipy.special.xlogy`` gives NaN for a NaN ``y``).

    Its dtype is that of ``x * log(y)``: ``x`` is not widened to a float first, so an
    int8 ``x`` with a float16 ``y`` gives float16 (as PyTensor's ``xlogy0``).
    """

    nin = 2
    ufunc = LazyAttribute("scipy.special", "xlogy")

    def impl(self, x: Any, y: Any) -> Any:
        x, y = np.asarray(x), np.asarray(y)
        dtype = np.result_type(x.dtype, float_dtype_for(y.dtype.name))
        compute = np.float32 if dtype == np.float16 else dtype
        x = x.astype(compute)
        result = np.where(x == 0, np.zeros((), compute), sp.xlogy(x, y.astype(compute)))[()]
        return result if result.dtype == dtype else result.astype(dtype)

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        x, _y = inputs
        (g,) = output_grads
        # d/dx = log(y); d/dy = x / y, 0 where x == 0 (the function is 0 there for every y)
        xf, yf = _in_precision(self, inputs)
        return [mul(g, log(yf)), switch(eq(x, 0), 0, mul(g, true_div(xf, yf)))]


# --- derivatives of the incomplete gamma and beta functions in their shape parameters ----
# These have no closed form. They are computed in float64, elementwise over arrays (every
# loop runs on the elements not yet converged), by a series or by a continued fraction
# differentiated term by term, each where it converges fast and without cancellation.
# Against 40- to 130-digit decimal sums of the defining series, over k in [0, 1e4] and x
# in [1e-8, k + 300] for gammainc, and a, b in [0.1, 50] with x in [1e-10, 1 - 1e-9] for
# betainc: relative error below 1e-13 (typically 1e-15; the loss grows with the size of
# the exponent of x**k exp(-x), about eps * k log(x), where the result is tiny). Elements a
# loop has not finished in _MAX_STEPS steps (k beyond about 1e6 near x = k, a or b beyond
# about 1e5) are finished by Richardson-extrapolated central differences of SciPy's
# function (agreeing with the loops to about 1e-11 where both run).


def _xlogy0_out(x: ScalarType, y: ScalarType) -> list[ScalarType]:
    """The dtype of ``x * log(y)``."""
    (log_y,) = upgrade_to_float(y)
    return [get_scalar_type(upcast(x.dtype, log_y.dtype))]


erf = Erf(upgrade_to_float, name="erf")
erfc = Erfc(upgrade_to_float, name="erfc")
erfcx = Erfcx(upgrade_to_float_no_complex, name="erfcx")
erfinv = Erfinv(upgrade_to_float_no_complex, name="erfinv")
erfcinv = Erfcinv(upgrade_to_float_no_complex, name="erfcinv")
gamma = Gamma(upgrade_to_float, name="gamma")
gammaln = GammaLn(upgrade_to_float_no_complex, name="gammaln")
psi = Psi(upgrade_to_float, name="psi")
tri_gamma = TriGamma(upgrade_to_float_no_complex, name="tri_gamma")
polygamma = PolyGamma(_polygamma_out, name="polygamma")
sigmoid = Sigmoid(upgrade_to_float_no_complex, name="sigmoid")
softplus = Softplus(upgrade_to_float_no_complex, name="softplus")
log1mexp = Log1mexp(upgrade_to_float_no_complex, name="log1mexp")
log1pexp = softplus
# SciPy's xlogy has complex loops (sigmoid, softplus, gammaln, ... have none)
xlogx = XLogX(upgrade_to_float, name="xlogx")
xlogy0 = XLogY0(_xlogy0_out, name="xlogy0")


class OwensT(_Float64Impl, ScalarOp):
    """Owen's T function ``T(h, a) = 1/(2 pi) int_0^a exp(-h**2 (1 + t**2) / 2) / (1 + t**2) dt``."""

    ufunc = LazyAttribute("scipy.special", "owens_t")

    def L_op(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], grads: Sequence[Variable]
    ) -> list:
        (g,) = grads
        h, a = _in_precision(self, inputs)
        h2 = sqr(h)
        one_a2 = add(1, sqr(a))
        # dT/dh = -exp(-h**2 / 2) erf(a h / sqrt 2) / (2 sqrt(2 pi))
        d_h = mul(
            _const(-1 / (2 * np.sqrt(2 * np.pi)), h),
            exp(neg(_half(h2))),
            erf(mul(_const(1 / np.sqrt(2), h), a, h)),
        )
        # dT/da = exp(-h**2 (1 + a**2) / 2) / (2 pi (1 + a**2))
        d_a = true_div(exp(neg(_half(mul(h2, one_a2)))), mul(_const(2 * np.pi, a), one_a2))
        return [mul(g, d_h), mul(g, d_a)]


owens_t = OwensT(upgrade_to_float_no_complex, name="owens_t")
Owens_t = OwensT  # PyTensor's name of the class


#: SciPy's beta and betaln take their limits at the poles of Gamma only above this one (as C
#: ints); at the poles below (-1e10, -inf) they are +inf
LAST_BETA_POLE = -(2.0**31 - 2)

#: from this larger argument and sum on, betaln takes the difference of the two large log-Gammas
#: from Stirling's series (these five terms: at 10 the next one is 2e-14 of the result)
STIRLING_FROM = 10.0
STIRLING_SERIES = (1 / 12, -1 / 360, 1 / 1260, -1 / 1680, 1 / 1188)


def _stirling_tail(x: Variable) -> Variable:
    """``gammaln(x) - ((x - 1/2) log x - x + log(2 pi) / 2)`` for ``x >= STIRLING_FROM``."""
    r = true_div(_const(1.0, x), x)
    r2 = mul(r, r)
    tail = _const(STIRLING_SERIES[-1], x)
    for c in reversed(STIRLING_SERIES[:-1]):
        tail = add(_const(c, x), mul(r2, tail))
    return mul(r, tail)


def _betaln_regular(a: Variable, b: Variable) -> Variable:
    """``log |B(a, b)|`` away from the poles of Gamma(a) and Gamma(b) (see :func:`betaln`)."""
    in_order = le(a, b)
    x, y = switch(in_order, a, b), switch(in_order, b, a)
    far = and_(ge(add(x, y), _const(STIRLING_FROM, y)), ge(y, _const(STIRLING_FROM, y)))
    xs, ys = switch(far, x, _const(1.0, x)), switch(far, y, _const(STIRLING_FROM, y))
    xn, yn = switch(far, _const(1.0, x), x), switch(far, _const(1.0, y), y)
    spread = mul(sub(add(xs, ys), _const(0.5, ys)), log1p(true_div(xs, ys)))
    ratio = add(sub(neg(mul(xs, log(ys))), spread), xs)
    ratio = sub(add(ratio, _stirling_tail(ys)), _stirling_tail(add(xs, ys)))
    return switch(far, add(gammaln(xs), ratio), sub(add(_gammaln(xn), _gammaln(yn)), _gammaln(add(xn, yn))))


def _gammaln(x: Variable) -> Variable:
    """``gammaln``, with ``-log |x|`` where ``0 < |x| < 1e-300`` (as the tensor betaln's)."""
    tiny = and_(lt(abs_(x), _const(1e-300, x)), neq(x, _const(0.0, x)))
    return switch(tiny, neg(log(abs_(switch(tiny, x, _const(1.0, x))))), gammaln(x))


def _nonpositive_integer(x: Variable) -> Variable:
    """Where ``x`` is 0, -1, -2, ...: the poles of Gamma."""
    return and_(le(x, _const(0.0, x)), eq(x, ceil(x)))


def betaln(a: Any, b: Any) -> Variable:
    """``log |B(a, b)|`` on scalars (``scipy.special.betaln``), as
    :func:`arignote.tensor.special.betaln` computes it on tensors: the log-Gamma formula,
    with the difference of the two large log-Gammas taken from Stirling's series where the
    larger argument and the sum are at least ``STIRLING_FROM``, and SciPy's limits at the poles
    of Gamma(a) and Gamma(b): with ``p`` the pole and ``q`` the other argument,
    ``betaln(1 - p - q, q)`` for an integer ``q > 0`` with ``p + q <= 0``, else ``inf``."""
    a, b = as_scalar(a), as_scalar(b)
    pa = _nonpositive_integer(a)
    pole = or_(pa, _nonpositive_integer(b))
    p, q = switch(pa, a, b), switch(pa, b, a)
    last = _const(LAST_BETA_POLE, q)
    in_range = and_(ge(p, last), ge(q, last))
    reduced = and_(and_(pole, eq(q, ceil(q))), and_(le(p, neg(q)), in_range))
    finite = and_(reduced, gt(q, _const(0.0, q)))
    one = _const(1.0, add(a, b))
    pf, qf = switch(finite, p, neg(one)), switch(finite, q, one)
    # where one argument is +inf (and no pole): log |B| -> -inf for the other > 0, +inf below
    inf_a = eq(a, _const(np.inf, a))
    infinite = and_(or_(inf_a, eq(b, _const(np.inf, b))), invert(pole))
    o = switch(inf_a, b, a)
    inf = _const(np.inf, one)
    at_inf = switch(
        or_(isnan(o), isinf(o)), _const(np.nan, one), switch(gt(o, _const(0.0, o)), neg(inf), inf)
    )
    # (each branch on inputs valid for it, so that the branches not taken stay finite)
    safe = or_(pole, infinite)
    regular = switch(infinite, at_inf, _betaln_regular(switch(safe, one, a), switch(safe, one, b)))
    return switch(finite, _betaln_regular(sub(sub(one, pf), qf), qf), switch(pole, inf, regular))
