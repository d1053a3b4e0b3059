"""Special functions as scalar ops (SciPy's implementations), numerically careful forms
(``softplus``, ``log1mexp``, ``sigmoid``) included.

>>> from arignote.scalar import basic as ps
>>> from arignote.scalar.math import softplus
>>> x = ps.float64("x")
>>> float(softplus(x).eval({x: 1000.0}))  # log(1 + exp(1000)) without overflow
1000.0
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy.special as sp

from arignote.graph.basic import Variable
from arignote.scalar.basic import (
    FloatUnary,
    _chain,
    _const,
    _in_precision,
    _not_implemented,
    _real,
    add,
    eq,
    exp,
    isinf,
    log,
    mul,
    neg,
    sqr,
    sub,
    switch,
    true_div,
)
from arignote.scalar.basic import expm1 as _expm1
from arignote.scalar.op import ScalarOp, float_dtype_for, upgrade_to_float, upgrade_to_float_no_complex
from arignote.scalar.type import ScalarType, get_scalar_type, upcast

__all__ = [
    "erf",
    "erfc",
    "erfcx",
    "erfinv",
    "erfcinv",
    "gamma",
    "gammaln",
    "psi",
    "tri_gamma",
    "gammainc",
    "gammaincc",
    "sigmoid",
    "softplus",
    "log1mexp",
    "log1pexp",
    "xlogx",
    "xlogy0",
    "betainc",
    "i0",
    "i1",
    "j0",
    "j1",
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
    ufunc = sp.erf

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        (x,) = inputs
        (g,) = output_grads
        return [_chain(g, mul(_const(2 / np.sqrt(np.pi), x), exp(neg(sqr(_real(x))))), x)]


class Erfc(FloatUnary):
    ufunc = sp.erfc

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        (x,) = inputs
        (g,) = output_grads
        return [_chain(g, mul(_const(-2 / np.sqrt(np.pi), x), exp(neg(sqr(_real(x))))), x)]


class Erfcx(FloatUnary):
    """``exp(x**2) * erfc(x)``, accurate where ``erfc`` underflows."""

    ufunc = sp.erfcx

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        (x,) = inputs
        (g,) = output_grads
        # d/dx erfcx(x) = 2 x erfcx(x) - 2 / sqrt(pi)
        return [mul(g, sub(mul(2, _real(x), erfcx(x)), _const(2 / np.sqrt(np.pi), x)))]


class Erfinv(FloatUnary):
    ufunc = sp.erfinv

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        (x,) = inputs
        (g,) = output_grads
        return [mul(g, _const(np.sqrt(np.pi) / 2, x), exp(sqr(erfinv(x))))]


class Erfcinv(FloatUnary):
    ufunc = sp.erfcinv

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        (x,) = inputs
        (g,) = output_grads
        return [mul(g, _const(-np.sqrt(np.pi) / 2, x), exp(sqr(erfcinv(x))))]


class Gamma(FloatUnary):
    ufunc = sp.gamma

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        (x,) = inputs
        (g,) = output_grads
        return [_chain(g, mul(gamma(x), psi(x)), x)]


class GammaLn(FloatUnary):
    """``log|gamma(x)|``."""

    ufunc = sp.gammaln

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        (x,) = inputs
        (g,) = output_grads
        return [mul(g, psi(x))]


class Psi(FloatUnary):
    """The digamma function, ``d/dx log gamma(x)``."""

    ufunc = sp.psi

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        (x,) = inputs
        (g,) = output_grads
        if x.type.dtype in ("complex64", "complex128"):
            return [_not_implemented(self, 0, x, "tri_gamma has no complex implementation.")]
        return [mul(g, tri_gamma(x))]


class TriGamma(FloatUnary):
    """The trigamma function, ``d/dx psi(x)``."""

    @staticmethod
    def ufunc(x: Any, dtype: Any = None) -> Any:
        x = np.asarray(x, dtype=dtype) if dtype is not None else np.asarray(x)
        return sp.polygamma(1, x).astype(x.dtype if x.dtype.kind == "f" else np.float64)

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        (x,) = inputs
        return [_not_implemented(self, 0, x, "It is polygamma(2, x), for which there is no scalar op.")]


class Sigmoid(FloatUnary):
    """``1 / (1 + exp(-x))`` without overflow."""

    ufunc = sp.expit

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
        with np.errstate(divide="ignore", invalid="ignore"):
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
    ufunc = sp.xlogy

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


_GAMMAINC_K = (
    "The derivative in the shape parameter k needs a series (PyTensor sums it in a "
    "loop op), for which there is no scalar op here."
)


def _gamma_density(k: Variable, x: Variable) -> Variable:
    """``x**(k-1) exp(-x) / gamma(k)``: the x-derivative of ``gammainc(k, x)``, in logs
    (``xlogy0`` makes ``0**0 == 1``); ``k`` and ``x`` are floats of one dtype."""
    return exp(sub(sub(xlogy0(sub(k, 1), x), x), gammaln(k)))


def _xlogy0_out(x: ScalarType, y: ScalarType) -> list[ScalarType]:
    """The dtype of ``x * log(y)``."""
    (log_y,) = upgrade_to_float(y)
    return [get_scalar_type(upcast(x.dtype, log_y.dtype))]


class GammaInc(FloatNary):
    """The regularized lower incomplete gamma function ``P(k, x)``."""

    nin = 2
    ufunc = sp.gammainc

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        k, _x = inputs
        (g,) = output_grads
        return [
            _not_implemented(self, 0, k, _GAMMAINC_K),
            mul(g, _gamma_density(*_in_precision(self, inputs))),
        ]


class GammaIncC(FloatNary):
    """The regularized upper incomplete gamma function ``Q(k, x)``."""

    nin = 2
    ufunc = sp.gammaincc

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        k, _x = inputs
        (g,) = output_grads
        return [
            _not_implemented(self, 0, k, _GAMMAINC_K),
            mul(neg(g), _gamma_density(*_in_precision(self, inputs))),
        ]


class BetaInc(FloatNary):
    """The regularized incomplete beta function ``I_x(a, b)`` (arguments ``a, b, x``)."""

    nin = 3
    ufunc = sp.betainc

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        a, b, _x = inputs
        (g,) = output_grads
        why = (
            "The derivatives in the shape parameters need hypergeometric series (PyTensor "
            "sums them in a loop op), for which there is no scalar op here."
        )
        af, bf, xf = _in_precision(self, inputs)
        # d/dx = x**(a-1) (1-x)**(b-1) / B(a, b), in logs; xlogy0 makes 0**0 == 1
        log_beta = sub(add(gammaln(af), gammaln(bf)), gammaln(add(af, bf)))
        log_density = sub(add(xlogy0(sub(af, 1), xf), xlogy0(sub(bf, 1), sub(1, xf))), log_beta)
        return [
            _not_implemented(self, 0, a, why),
            _not_implemented(self, 1, b, why),
            mul(g, exp(log_density)),
        ]


def _over_x_at_0(f0: Variable, f1: Variable, x: Variable, zero_value: float) -> Variable:
    """``f0 - f1 / x``, ``zero_value`` at ``x == 0`` (its limit; no 0/0 computed there)."""
    xf = _real(x)
    at_zero = eq(xf, 0)
    safe_x = switch(at_zero, 1, xf)
    return switch(at_zero, _const(zero_value, x), sub(f0, true_div(f1, safe_x)))


class I0(FloatUnary):
    ufunc = sp.i0

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        (x,) = inputs
        (g,) = output_grads
        return [mul(g, i1(x))]


class I1(FloatUnary):
    ufunc = sp.i1

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        (x,) = inputs
        (g,) = output_grads
        # i1'(x) = i0(x) - i1(x) / x, 1/2 at 0
        return [mul(g, _over_x_at_0(i0(x), i1(x), x, 0.5))]


class J0(FloatUnary):
    ufunc = sp.j0

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        (x,) = inputs
        (g,) = output_grads
        return [mul(neg(g), j1(x))]


class J1(FloatUnary):
    ufunc = sp.j1

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        (x,) = inputs
        (g,) = output_grads
        # j1'(x) = j0(x) - j1(x) / x, 1/2 at 0
        return [mul(g, _over_x_at_0(j0(x), j1(x), x, 0.5))]


erf = Erf(upgrade_to_float, name="erf")
erfc = Erfc(upgrade_to_float, name="erfc")
erfcx = Erfcx(upgrade_to_float_no_complex, name="erfcx")
erfinv = Erfinv(upgrade_to_float_no_complex, name="erfinv")
erfcinv = Erfcinv(upgrade_to_float_no_complex, name="erfcinv")
gamma = Gamma(upgrade_to_float, name="gamma")
gammaln = GammaLn(upgrade_to_float_no_complex, name="gammaln")
psi = Psi(upgrade_to_float, name="psi")
tri_gamma = TriGamma(upgrade_to_float_no_complex, name="tri_gamma")
gammainc = GammaInc(upgrade_to_float_no_complex, name="gammainc")
gammaincc = GammaIncC(upgrade_to_float_no_complex, name="gammaincc")
sigmoid = Sigmoid(upgrade_to_float_no_complex, name="sigmoid")
softplus = Softplus(upgrade_to_float_no_complex, name="softplus")
log1mexp = Log1mexp(upgrade_to_float_no_complex, name="log1mexp")
log1pexp = softplus
# SciPy's xlogy has complex loops (sigmoid, softplus, gammaln, ... have none)
xlogx = XLogX(upgrade_to_float, name="xlogx")
xlogy0 = XLogY0(_xlogy0_out, name="xlogy0")
betainc = BetaInc(upgrade_to_float_no_complex, name="betainc")
i0 = I0(upgrade_to_float_no_complex, name="i0")
i1 = I1(upgrade_to_float_no_complex, name="i1")
j0 = J0(upgrade_to_float_no_complex, name="j0")
j1 = J1(upgrade_to_float_no_complex, name="j1")
