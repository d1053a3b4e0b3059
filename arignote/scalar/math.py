"""Special functions as scalar ops (SciPy's implementations), numerically careful forms
(``softplus``, ``log1mexp``, ``sigmoid``) included.

>>> from arignote.scalar import basic as ps
>>> from arignote.scalar.math import softplus
>>> x = ps.float64("x")
>>> float(softplus(x).eval({x: 1000.0}))  # log(1 + exp(1000)) without overflow
1000.0
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.special as sp

from arignote.scalar.basic import FloatUnary
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


class Erfc(FloatUnary):
    ufunc = sp.erfc


class Erfcx(FloatUnary):
    """``exp(x**2) * erfc(x)``, accurate where ``erfc`` underflows."""

    ufunc = sp.erfcx


class Erfinv(FloatUnary):
    ufunc = sp.erfinv


class Erfcinv(FloatUnary):
    ufunc = sp.erfcinv


class Gamma(FloatUnary):
    ufunc = sp.gamma


class GammaLn(FloatUnary):
    """``log|gamma(x)|``."""

    ufunc = sp.gammaln


class Psi(FloatUnary):
    """The digamma function, ``d/dx log gamma(x)``."""

    ufunc = sp.psi


class TriGamma(FloatUnary):
    """The trigamma function, ``d/dx psi(x)``."""

    @staticmethod
    def ufunc(x: Any, dtype: Any = None) -> Any:
        x = np.asarray(x, dtype=dtype) if dtype is not None else np.asarray(x)
        return sp.polygamma(1, x).astype(x.dtype if x.dtype.kind == "f" else np.float64)


class Sigmoid(FloatUnary):
    """``1 / (1 + exp(-x))`` without overflow."""

    ufunc = sp.expit


class Softplus(FloatUnary):
    """``log(1 + exp(x))`` without overflow (exact to rounding for large ``|x|``)."""

    @staticmethod
    def ufunc(x: Any, dtype: Any = None) -> Any:
        x = np.asarray(x, dtype=dtype) if dtype is not None else np.asarray(x)
        return np.logaddexp(np.zeros((), x.dtype), x)


class Log1mexp(FloatUnary):
    """``log(1 - exp(x))`` for ``x <= 0``, accurate near 0 and for very negative ``x``."""

    @staticmethod
    def ufunc(x: Any, dtype: Any = None) -> Any:
        x = np.asarray(x, dtype=dtype) if dtype is not None else np.asarray(x)
        with np.errstate(divide="ignore", invalid="ignore"):
            near_zero = x > -np.log(np.asarray(2, x.dtype))
            return np.where(near_zero, np.log(-np.expm1(x)), np.log1p(-np.exp(x)))


class XLogX(FloatUnary):
    """``x * log(x)``, 0 at ``x == 0``."""

    @staticmethod
    def ufunc(x: Any, dtype: Any = None) -> Any:
        x = np.asarray(x, dtype=dtype) if dtype is not None else np.asarray(x)
        return sp.xlogy(x, x)


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


def _xlogy0_out(x: ScalarType, y: ScalarType) -> list[ScalarType]:
    """The dtype of ``x * log(y)``."""
    (log_y,) = upgrade_to_float(y)
    return [get_scalar_type(upcast(x.dtype, log_y.dtype))]


class GammaInc(FloatNary):
    """The regularized lower incomplete gamma function ``P(k, x)``."""

    nin = 2
    ufunc = sp.gammainc


class GammaIncC(FloatNary):
    """The regularized upper incomplete gamma function ``Q(k, x)``."""

    nin = 2
    ufunc = sp.gammaincc


class BetaInc(FloatNary):
    """The regularized incomplete beta function ``I_x(a, b)`` (arguments ``a, b, x``)."""

    nin = 3
    ufunc = sp.betainc


class I0(FloatUnary):
    ufunc = sp.i0


class I1(FloatUnary):
    ufunc = sp.i1


class J0(FloatUnary):
    ufunc = sp.j0


class J1(FloatUnary):
    ufunc = sp.j1


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
