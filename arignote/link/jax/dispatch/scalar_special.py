"""JAX functions of the special-function scalar ops: :mod:`arignote.scalar.special`,
``bessel``, ``incomplete`` and ``hypergeometric``.

Those with a ``jax.scipy.special`` namesake (``erf``, ``gammaln``, ``gammainc``, ``i0``,
...) are found by name (:func:`~arignote.link.jax.dispatch.scalar.jax_ufunc`);
the ones below are written with ``jax.numpy``/``jax.scipy``. A few have no JAX formula at all
(:data:`HOST_COMPUTED`: Bessel functions of real order, the inverse incomplete gamma and beta
functions, the hypergeometric function, the derivatives of the incomplete gamma/beta and
hypergeometric functions in their parameters): they run their SciPy ``impl`` on the host through ``jax.pure_callback``, which
works under ``jit`` on every device at the cost of a round trip of the values.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax.numpy as jnp
import jax.scipy.special as jss
import numpy as np

from arignote.graph.basic import Apply
from arignote.link.jax.dispatch.basic import jax_funcify
from arignote.link.jax.dispatch.scalar import _register, host_elementwise
from arignote.scalar import bessel, hypergeometric, incomplete, special
from arignote.scalar.op import ScalarOp

__all__ = ["HOST_COMPUTED"]

#: scalar op classes computed on the host by their SciPy ``impl`` (no JAX formula)
HOST_COMPUTED: tuple[type, ...] = (
    bessel.Jv,
    bessel.Iv,
    bessel.Ive,
    bessel.Kv,
    bessel.Kve,
    bessel.J0,
    bessel.J1,
    incomplete.GammaIncGrad,
    incomplete.GammaIncCGrad,
    incomplete.BetaIncGrad,
    incomplete.GammaIncInv,
    incomplete.GammaIncCInv,
    incomplete.BetaIncInv,
    # (jax.scipy's hyp2f1 never returns for a or c of 1e15 and more, and is off elsewhere:
    # hyp2f1(1e5, 0.5, 1e5, -3) is 0.5, where the series diverges, SciPy's NaN)
    hypergeometric.Hyp2F1,
    hypergeometric.Hyp2F1Grad,
)


def _funcify_on_host(op: ScalarOp, node: Apply | None = None, **kwargs: Any) -> Callable:
    return host_elementwise(op, node)


for _cls in HOST_COMPUTED:
    jax_funcify.register(_cls)(_funcify_on_host)


_SQRT2 = np.sqrt(2.0)


def _erfcinv(y: Any) -> Any:
    # erfc(x) = 2 * ndtr(-x * sqrt(2)): exact in the tail, where erfinv(1 - y) loses digits
    # JAX's ndtri has no float16 loop: float16 is computed in float32 (the node's function
    # casts the result back to the output's dtype)
    y = jnp.asarray(y)
    if y.dtype == jnp.float16:
        y = y.astype(jnp.float32)
    return -jss.ndtri(y / 2) / _SQRT2


def _psi(x: Any) -> Any:
    # SciPy's value at the pole 0 is an infinity of the sign of -x (JAX's digamma: NaN)
    return jnp.where(x == 0, jnp.copysign(jnp.inf, -x), jss.digamma(x))


def _trigamma(x: Any) -> Any:
    return jss.polygamma(1, x)


def _polygamma(n: Any, x: Any) -> Any:
    order = jnp.round(n)
    bad = (n < 0) | (order != n)
    safe = jnp.where(bad, 0, order).astype(jnp.int64)
    # at the poles (x = 0, -1, -2, ...) SciPy gives (-1)**(n+1) * inf for n >= 1
    pole = (x <= 0) & (x == jnp.round(x))
    at_pole = jnp.where(safe % 2 == 1, jnp.inf, -jnp.inf)
    value = jnp.where(safe == 0, _psi(x), jnp.where(pole, at_pole, jss.polygamma(safe, x)))
    return jnp.where(bad, jnp.nan, value)


def _softplus(x: Any) -> Any:
    return jnp.logaddexp(jnp.zeros((), x.dtype), x)


def _log1mexp(x: Any) -> Any:
    near_zero = x > -jnp.log(jnp.asarray(2, x.dtype))
    return jnp.where(near_zero, jnp.log(-jnp.expm1(x)), jnp.log1p(-jnp.exp(x)))


def _xlogx(x: Any) -> Any:
    return jss.xlogy(x, x)


def _xlogy0(x: Any, y: Any) -> Any:
    return jnp.where(x == 0, jnp.zeros((), x.dtype), jss.xlogy(x, y))


def _scaled_by_gamma(k: Any, regularized: Any) -> Any:
    g = jss.gamma(k)
    out = g * regularized
    big = ~jnp.isfinite(g) & (k > 0) & (regularized > 0)
    logs = jnp.log(jnp.where(big, regularized, 1.0)) + jss.gammaln(k)
    return jnp.where(big, jnp.exp(logs), out)


def _gammal(k: Any, x: Any) -> Any:
    return _scaled_by_gamma(k, jss.gammainc(k, x))


def _gammau(k: Any, x: Any) -> Any:
    return jnp.where(k == 0, jss.exp1(x), _scaled_by_gamma(k, jss.gammaincc(k, x)))


_register(special.Erfcinv, _erfcinv)
_register(special.Psi, _psi)
_register(special.TriGamma, _trigamma)
_register(special.PolyGamma, _polygamma)
_register(special.Softplus, _softplus)
_register(special.Sigmoid, jss.expit)
_register(special.Log1mexp, _log1mexp)
_register(special.XLogX, _xlogx)
_register(special.XLogY0, _xlogy0)
_register(incomplete.GammaL, _gammal)
_register(incomplete.GammaU, _gammau)
