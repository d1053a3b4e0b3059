"""The incomplete gamma and beta functions as scalar ops: regularized (``gammainc``,
``gammaincc``, ``betainc``) with their derivatives in the shape parameters (series and
continued fractions accurate to ~1e-13), non-regularized (``gammal``, ``gammau``), and the
inverses (``gammaincinv``, ``gammainccinv``, ``betaincinv``, differentiated by the implicit
function theorem).

>>> from arignote.scalar import basic as ps
>>> x = ps.float64("x")
>>> round(float(gammaincinv(2.0, x).eval({x: 0.5})), 6)  # gammainc(2, y) == 0.5
1.678347
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from arignote.graph.basic import Variable
from arignote.graph.null_type import grad_not_implemented
from arignote.lazy import LazyAttribute, lazy_module
from arignote.scalar.basic import (
    _const,
    _in_precision,
    add,
    eq,
    exp,
    log,
    log1p,
    mul,
    neg,
    sub,
    switch,
    true_div,
)
from arignote.scalar.op import ScalarOp, upgrade_to_float_no_complex
from arignote.scalar.scipy_impl import _Float64Impl, _SciPyImpl
from arignote.scalar.special import FloatNary, _float_args, gamma, gammaln, psi, xlogy0

# SciPy is imported on first use (see arignote.lazy)
sp = lazy_module("scipy.special")

__all__ = [
    "betainc_dab",
    "betainc_grad",
    "gammainc_dk",
    "BetaInc",
    "BetaIncGrad",
    "BetaIncInv",
    "GammaInc",
    "GammaIncC",
    "GammaIncCGrad",
    "GammaIncCInv",
    "GammaIncGrad",
    "GammaIncInv",
    "GammaL",
    "GammaU",
    "betainc",
    "betainc_grad_a",
    "betainc_grad_b",
    "betaincinv",
    "gammainc",
    "gammainc_grad",
    "gammaincc",
    "gammaincc_grad",
    "gammainccinv",
    "gammaincinv",
    "gammal",
    "gammau",
]


_TOL = 2 * np.finfo(np.float64).eps  # converged: the last step changed the result by at most this, relatively


_MAX_STEPS = 10_000


_HALF_LOG_2PI = 0.5 * np.log(2 * np.pi)


# B_2j / (2j (2j - 1)) and B_2j / (2j): the asymptotic series of log gamma and of psi; eight
# terms reach float64 precision from z = 10 on
_LGAMMA_SERIES = (1 / 12, -1 / 360, 1 / 1260, -1 / 1680, 1 / 1188, -691 / 360360, 1 / 156, -3617 / 122400)


_PSI_SERIES = (1 / 12, -1 / 120, 1 / 252, -1 / 240, 1 / 132, -691 / 32760, 1 / 12, -3617 / 8160)


def _in_powers(z: np.ndarray, coefficients: Sequence[float]) -> np.ndarray:
    """``sum_j c_j z**(-2j)`` (j from 0)."""
    r2 = 1 / (z * z)
    acc = np.zeros_like(r2)
    for c in reversed(coefficients):
        acc = acc * r2 + c
    return acc


def _lgamma_correction(z: np.ndarray) -> np.ndarray:
    """``gammaln(z) - ((z - 1/2) log z - z + log(2 pi) / 2)`` for ``z >= 10``."""
    return _in_powers(z, _LGAMMA_SERIES) / z


def _psi_tail(z: np.ndarray) -> np.ndarray:
    """``psi(z) - log(z) + 1 / (2 z)`` for ``z >= 10``."""
    return -_in_powers(z, _PSI_SERIES) / (z * z)


def _log1pmx(u: np.ndarray, one_plus_u: np.ndarray) -> np.ndarray:
    """``log1p(u) - u``, to full precision near 0 (about ``-u**2 / 2``) and, given ``1 + u``
    computed to full relative precision, near ``u = -1`` too."""
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.log(one_plus_u) - u
    small = np.abs(u) < 0.5
    if small.any():
        # s = u / (2 + u): log1p(u) = 2 atanh(s) = 2 (s + s**3/3 + ...) and u = 2s / (1 - s);
        # |s| <= 1/3, so 21 terms of the odd series are exact to float64
        s = u[small] / (2 + u[small])
        s2 = s * s
        poly = np.zeros_like(s)
        for j in range(20, -1, -1):
            poly = poly * s2 + 1 / (2 * j + 3)
        out[small] = -2 * s2 / (1 - s) + 2 * s * s2 * poly
    return out


def _log_minus_psi(x: np.ndarray, z: np.ndarray) -> np.ndarray:
    """``log(x) - psi(z)``, without the cancellation of the two where ``x`` is near ``z``."""
    big = z >= 10
    zb = np.where(big, z, 10.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(big, np.log(x / zb) + 0.5 / zb - _psi_tail(zb), np.log(x) - sp.psi(z))


def _psi_diff(z: np.ndarray, d: np.ndarray) -> np.ndarray:
    """``psi(z + d) - psi(z)``, to full relative precision when ``d`` is small beside ``z``."""
    big = (z >= 10) & (z + d >= 10)
    zb, db = np.where(big, z, 10.0), np.where(big, d, 0.0)
    asym = np.log1p(db / zb) + db / (2 * zb * (zb + db)) + (_psi_tail(zb + db) - _psi_tail(zb))
    return np.where(big, asym, sp.psi(z + d) - sp.psi(z))


def _log_gamma_prefactor(k: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``log(x**k exp(-x) / gamma(k + 1))``. For ``k >= 10`` as
    ``k log1pmx((x - k) / k) - log(2 pi k) / 2 - correction(k)`` (Stirling): the direct
    form subtracts numbers of size ``k log k`` and loses their rounding errors."""
    out = np.empty(k.shape)
    big = k >= 10
    kb, xb = k[big], x[big]
    out[big] = (
        kb * _log1pmx((xb - kb) / kb, xb / kb) - 0.5 * np.log(kb) - _HALF_LOG_2PI - _lgamma_correction(kb)
    )
    ks, xs = k[~big], x[~big]
    out[~big] = sp.xlogy(ks, xs) - xs - sp.gammaln(ks + 1)
    return out


def _log_beta_prefactor(p: np.ndarray, q: np.ndarray, y: np.ndarray, ym: np.ndarray) -> np.ndarray:
    """``log(y**p ym**q / (p B(p, q)))``, ``ym`` being ``1 - y`` (each given to full relative
    precision). Where ``p, q >= 10``, as ``p log1pmx(u) + q log1pmx(v) + ...`` with
    ``u = y (p+q) / p - 1`` and ``v = -p u / q`` (Stirling for the gammas); where one of them
    is, ``log B`` from the difference ``gammaln(l + s) - gammaln(l)`` in Stirling's form:
    the direct forms subtract numbers of size ``(p+q) log(p+q)``."""
    out = np.empty(p.shape)
    lo, hi = np.minimum(p, q), np.maximum(p, q)
    both = lo >= 10
    one = (hi >= 10) & ~both
    neither = ~(both | one)
    with np.errstate(divide="ignore", invalid="ignore"):
        pb, qb, yb, ymb = p[both], q[both], y[both], ym[both]
        s = pb + qb
        u = (yb * s - pb) / pb
        out[both] = (
            pb * _log1pmx(u, yb * s / pb)
            + qb * _log1pmx(-pb * u / qb, ymb * s / qb)
            + 0.5 * np.log(pb * qb / s)
            - _HALF_LOG_2PI
            + _lgamma_correction(s)
            - _lgamma_correction(pb)
            - _lgamma_correction(qb)
            - np.log(pb)
        )
        small, large = lo[one], hi[one]
        # gammaln(large + small) - gammaln(large)
        rise = (
            (large - 0.5) * np.log1p(small / large)
            + small * np.log(large + small)
            - small
            + _lgamma_correction(large + small)
            - _lgamma_correction(large)
        )
        p1, q1 = p[one], q[one]
        out[one] = sp.xlogy(p1, y[one]) + sp.xlogy(q1, ym[one]) - np.log(p1) - sp.gammaln(small) + rise
        p0, q0 = p[neither], q[neither]
        out[neither] = sp.xlogy(p0, y[neither]) + sp.xlogy(q0, ym[neither]) - np.log(p0) - sp.betaln(p0, q0)
    return out


def _cf_with_derivative(coefs: Any, c: np.ndarray, s: np.ndarray) -> tuple:
    """The continued fraction ``K = a1 / (b1 + a2 / (b2 + ...))`` and its derivative ``dK``
    in a parameter, for 1-D arrays of problems.

    ``coefs(n, keep)`` gives ``a_n, da_n, b_n, db_n`` (``n`` from 1) for the problems ``keep``
    (indices) still running. The convergents ``A_n / B_n`` follow the forward recurrence
    ``X_n = b_n X_(n-1) + a_n X_(n-2)``, their derivatives its derivative; all are rescaled
    each step (``K`` and ``dK`` are ratios). The caller uses ``c K + s dK``: a problem is done
    once, twice in a row, a step changed ``K`` by at most ``_TOL |K|`` and ``s dK`` by at most
    ``_TOL (|s dK| + |c K|)``. Returns ``K``, ``dK`` and a mask of the problems not done in
    ``_MAX_STEPS`` steps.
    """
    size = c.shape[0]
    K, dK = np.zeros(size), np.zeros(size)
    keep = np.arange(size)
    if not size:
        return K, dK, np.zeros(0, dtype=bool)
    x1, x0, y1, y0 = np.zeros(size), np.ones(size), np.ones(size), np.zeros(size)  # A, B
    dx1, dx0, dy1, dy0 = (np.zeros(size) for _ in range(4))
    k_prev, dk_prev = np.full(size, np.inf), np.full(size, np.inf)
    calm = np.zeros(size, dtype=bool)
    weight = np.abs(c) / np.where(s == 0, 1.0, np.abs(s))
    for n in range(1, _MAX_STEPS + 1):
        a, da, b, db = coefs(n, keep)
        x2, y2 = b * x1 + a * x0, b * y1 + a * y0
        dx2 = db * x1 + b * dx1 + da * x0 + a * dx0
        dy2 = db * y1 + b * dy1 + da * y0 + a * dy0
        scale = np.maximum(np.abs(x2), np.abs(y2))
        scale = np.where(scale == 0, 1.0, 1 / scale)
        x0, x1, y0, y1 = x1 * scale, x2 * scale, y1 * scale, y2 * scale
        dx0, dx1, dy0, dy1 = dx1 * scale, dx2 * scale, dy1 * scale, dy2 * scale
        with np.errstate(divide="ignore", invalid="ignore"):
            k = x1 / y1
            dk = (dx1 - k * dy1) / y1
        ok = (np.abs(k - k_prev) <= _TOL * np.abs(k)) & (
            np.abs(dk - dk_prev) <= _TOL * (np.abs(dk) + weight * np.abs(k))
        )
        done, calm, k_prev, dk_prev = ok & calm, ok, k, dk
        if done.any():
            K[keep[done]], dK[keep[done]] = k[done], dk[done]
            live = ~done
            keep = keep[live]
            if keep.size == 0:
                break
            x0, x1, y0, y1, dx0, dx1, dy0, dy1, k_prev, dk_prev, calm, weight = (
                v[live] for v in (x0, x1, y0, y1, dx0, dx1, dy0, dy1, k_prev, dk_prev, calm, weight)
            )
    failed = np.zeros(size, dtype=bool)
    if keep.size:  # not done in _MAX_STEPS steps
        failed[keep] = True
        K[keep], dK[keep] = k_prev, dk_prev
    return K, dK, failed


def _gammainc_dk_series(k: np.ndarray, x: np.ndarray) -> tuple:
    """dP/dk for ``0 < x < k + 1``. ``P = sum_n t_n`` with ``t_n = x**(k+n) exp(-x) /
    gamma(k+n+1)``, so ``dP/dk = sum_n t_n (log x - psi(k+n+1))``. Each term is ``r = x /
    (k+n+1) < 1`` times the last and ``|log x - psi|`` grows by ``1 / (k+n)`` a step: the sum
    stops once that bound on its whole tail is at most ``_TOL`` times the sum."""
    size = k.shape[0]
    out = np.zeros(size)
    keep = np.arange(size)
    if not size:
        return out, np.zeros(0, dtype=bool)
    t = np.exp(_log_gamma_prefactor(k, x))
    gap = _log_minus_psi(x, k + 1)  # log x - psi(k + n + 1)
    d = t * gap
    for n in range(1, _MAX_STEPS + 1):
        kn = k + n
        t = t * (x / kn)
        gap = gap - 1 / kn
        d = d + t * gap
        r = x / (kn + 1)
        with np.errstate(divide="ignore", invalid="ignore"):
            tail = t * r / (1 - r) * (np.abs(gap) + 1 / ((1 - r) * kn))
        done = (r < 1) & (tail <= _TOL * np.abs(d))
        if done.any():
            out[keep[done]] = d[done]
            live = ~done
            keep = keep[live]
            if keep.size == 0:
                break
            k, x, t, gap, d = (v[live] for v in (k, x, t, gap, d))
    failed = np.zeros(size, dtype=bool)
    failed[keep] = True
    return out, failed


def _gammaincc_dk_cf(k: np.ndarray, x: np.ndarray) -> tuple:
    """dQ/dk for ``x >= k + 1``, from Legendre's continued fraction ``Gamma(k, x) =
    x**k exp(-x) K`` with ``K = 1 / (x+1-k - 1(1-k) / (x+3-k - 2(2-k) / (x+5-k - ...)))``.
    With ``t = x**k exp(-x) / gamma(k+1)``, ``Q = k t K`` and ``dQ/dk = t (c K + k dK/dk)``
    where ``c = k (log x - psi(k+1)) + 1`` (from ``k psi(k) = k psi(k+1) - 1``, which holds
    at ``k = 0`` too: there dQ/dk = E1(x))."""
    t = np.exp(_log_gamma_prefactor(k, x))
    c = k * _log_minus_psi(x, k + 1) + 1

    def coefs(n: int, keep: np.ndarray) -> tuple:
        kk, xx = k[keep], x[keep]
        m = n - 1
        a = np.ones_like(kk) if n == 1 else m * (kk - m)
        return a, np.full_like(kk, float(m)), xx + 2 * m + 1 - kk, np.full_like(kk, -1.0)

    K, dK, failed = _cf_with_derivative(coefs, c, k)
    return t * (c * K + k * dK), failed


def _richardson(f: Any, h: np.ndarray) -> np.ndarray:
    """``f'(0)`` from central differences with steps ``h, h/2, h/4``, extrapolated to sixth
    order (Richardson)."""
    d = [(f(s) - f(-s)) / (2 * s) for s in (h, h / 2, h / 4)]
    d1, d2 = (4 * d[1] - d[0]) / 3, (4 * d[2] - d[1]) / 3
    return (16 * d2 - d1) / 15


def _as_float64_arrays(*args: Any) -> tuple:
    arrays = np.broadcast_arrays(*(np.asarray(a, dtype=np.float64) for a in args))
    return arrays[0].shape, [a.ravel() for a in arrays]


def gammainc_dk(k: Any, x: Any) -> Any:
    """``d/dk gammainc(k, x)`` (the regularized lower incomplete gamma function) in float64,
    elementwise with broadcasting; NaN outside ``k >= 0, x >= 0`` and for an infinite ``k``;
    0 at ``x == 0`` (``k > 0``) and at ``x == inf``.

    A series for ``x < k + 1``, a continued fraction for ``Q = 1 - P`` otherwise (see the
    accuracy note above); near ``x = k`` they take about ``8 sqrt(k)`` and ``2 sqrt(k)``
    steps, away from it fewer.
    """
    shape, (k, x) = _as_float64_arrays(k, x)
    out = np.full(k.shape, np.nan)
    ok = (k >= 0) & (x >= 0) & (k < np.inf)
    out[ok & (((x == 0) & (k > 0)) | (x == np.inf))] = 0.0
    todo = ok & (x > 0) & (x < np.inf)
    lower = x < k + 1
    failed = np.zeros(k.shape, dtype=bool)
    for sel, method, sign in ((todo & lower, _gammainc_dk_series, 1), (todo & ~lower, _gammaincc_dk_cf, -1)):
        if sel.any():
            d, bad = method(k[sel], x[sel])
            out[sel] = sign * d
            failed[np.flatnonzero(sel)[bad]] = True
    if failed.any():  # k beyond about 1e6 near x = k
        kf, xf = k[failed], x[failed]
        with np.errstate(all="ignore"):
            # differentiate the smaller of P and Q (SciPy has each to full relative precision);
            # P moves with k on a scale sqrt(k), and its log at a rate about log(x / k)
            small = sp.gammainc(kf, xf) < 0.5
            scale = np.minimum(np.minimum(np.sqrt(kf), kf), 1 / np.abs(np.log(xf / kf)))
            out[failed] = _richardson(
                lambda h: np.where(small, sp.gammainc(kf + h, xf), -sp.gammaincc(kf + h, xf)), 0.01 * scale
            )
    return out.reshape(shape)[()]


def _betainc_cf(p: np.ndarray, q: np.ndarray, y: np.ndarray, ym: np.ndarray, wrt_p: bool) -> tuple:
    """``d/dp`` (``wrt_p``) or ``d/dq`` of ``I_y(p, q)`` from the continued fraction
    ``I_y(p, q) = t / (1 + d1 / (1 + d2 / (1 + ...)))``, ``t = y**p (1-y)**q / (p B(p, q))``,
    ``d_(2m+1) = -(p+m)(p+q+m) y / ((p+2m)(p+2m+1))``, ``d_(2m) = m (q-m) y / ((p+2m-1)(p+2m))``
    (fast where ``y < (p+1) / (p+q+2)``): with ``K`` its value, ``dI = t (K dlog(t) + dK)``
    (the differentiated fraction of Boik and Robison-Cox, 1998)."""
    t = np.exp(_log_beta_prefactor(p, q, y, ym))
    with np.errstate(divide="ignore"):
        # dlog(t)/dp = log y - 1/p - psi(p) + psi(p+q), and 1/p + psi(p) = psi(p+1)
        c = np.log(y) + _psi_diff(p + 1, q - 1) if wrt_p else np.log(ym) + _psi_diff(q, p)

    def coefs(n: int, keep: np.ndarray) -> tuple:
        pp, qq, yy = p[keep], q[keep], y[keep]
        one, zero = np.ones_like(pp), np.zeros_like(pp)
        if n == 1:
            return one, zero, one, zero
        j = n - 1  # a_n is d_j
        m = j // 2
        if j % 2:
            d = -(pp + m) * (pp + qq + m) * yy / ((pp + 2 * m) * (pp + 2 * m + 1))
            if wrt_p:
                dd = d * (1 / (pp + m) + 1 / (pp + qq + m) - 1 / (pp + 2 * m) - 1 / (pp + 2 * m + 1))
            else:
                dd = d / (pp + qq + m)
        else:
            den = (pp + 2 * m - 1) * (pp + 2 * m)
            d = m * (qq - m) * yy / den
            dd = -d * (1 / (pp + 2 * m - 1) + 1 / (pp + 2 * m)) if wrt_p else m * yy / den
        return d, dd, one, zero

    K, dK, failed = _cf_with_derivative(coefs, c, np.ones_like(c))
    return t * (c * K + dK), failed


def _betainc_dab_fd(a: np.ndarray, b: np.ndarray, x: np.ndarray, wrt_a: bool) -> np.ndarray:
    """The fallback of :func:`betainc_dab`: Richardson-extrapolated central differences of
    SciPy's ``betainc`` (or ``betaincc``, whichever is the smaller: SciPy has each to full
    relative precision) in ``a`` (``wrt_a``) or ``b``."""
    u, v = (a, b) if wrt_a else (b, a)
    with np.errstate(all="ignore"):
        small = sp.betainc(a, b, x) < 0.5
        # the scale on which I moves with u: the mean of its Beta distribution moves one
        # standard deviation when u moves by about sqrt(u (u+v) / v); and log(I) moves at a
        # rate about log(x) (log(1 - x) for b)
        scale = np.minimum(np.minimum(np.sqrt(u * (u + v) / v), u), 1 / np.abs(np.log(x if wrt_a else 1 - x)))

        def f(h: np.ndarray) -> np.ndarray:
            a2, b2 = (a + h, b) if wrt_a else (a, b + h)
            return np.where(small, sp.betainc(a2, b2, x), -sp.betaincc(a2, b2, x))

        return _richardson(f, 0.01 * scale)


def betainc_dab(a: Any, b: Any, x: Any, wrt_a: bool) -> Any:
    """``d/da`` (``wrt_a``) or ``d/db`` of ``betainc(a, b, x)`` (the regularized incomplete
    beta function ``I_x(a, b)``) in float64, elementwise with broadcasting; NaN outside
    ``a > 0, b > 0, 0 <= x <= 1`` and for infinite ``a`` or ``b``; 0 at ``x`` 0 and 1.

    The continued fraction for ``I_x(a, b)``, or for ``I_(1-x)(b, a) = 1 - I_x(a, b)``
    where ``x > (a+1) / (a+b+2)`` (see the accuracy note above). Where the fraction so
    chosen has a first parameter at least 20 times its second it converges slowly (in about
    ``sqrt(p)`` to ``p / q`` steps), and the other one converges in a few dozen; that one is
    used unless the value it computes is above 0.95 (its derivative would then lose digits
    to cancellation).
    """
    shape, (a, b, x) = _as_float64_arrays(a, b, x)
    out = np.full(a.shape, np.nan)
    ok = (a > 0) & (b > 0) & (a < np.inf) & (b < np.inf) & (x >= 0) & (x <= 1)
    out[ok & ((x == 0) | (x == 1))] = 0.0
    todo = np.flatnonzero(ok & (x > 0) & (x < 1))
    a, b, x = a[todo], b[todo], x[todo]
    swap = x > (a + 1) / (a + b + 2)
    if todo.size:
        p, q = np.where(swap, b, a), np.where(swap, a, b)
        value = sp.betainc(a, b, x)  # (SciPy's betaincc costs 10 times more)
        computed = np.where(swap, 1 - value, value)
        swap ^= (p >= 20 * q) & (computed >= 0.05)
    result = np.empty(a.shape)
    failed = np.zeros(a.shape, dtype=bool)
    for flip in (False, True):
        sel = swap == flip
        if not sel.any():
            continue
        if flip:  # I_x(a, b) = 1 - I_(1-x)(b, a)
            d, bad = _betainc_cf(b[sel], a[sel], 1 - x[sel], x[sel], not wrt_a)
        else:
            d, bad = _betainc_cf(a[sel], b[sel], x[sel], 1 - x[sel], wrt_a)
        result[sel] = -d if flip else d
        failed[np.flatnonzero(sel)[bad]] = True
    if failed.any():  # a or b beyond about 1e5
        result[failed] = _betainc_dab_fd(a[failed], b[failed], x[failed], wrt_a)
    out[todo] = result
    return out.reshape(shape)[()]


def _gamma_density(k: Variable, x: Variable) -> Variable:
    """``x**(k-1) exp(-x) / gamma(k)``: the x-derivative of ``gammainc(k, x)``, in logs
    (``xlogy0`` makes ``0**0 == 1``); ``k`` and ``x`` are floats of one dtype."""
    return exp(sub(sub(xlogy0(sub(k, 1), x), x), gammaln(k)))


def _beta_density(a: Variable, b: Variable, x: Variable) -> Variable:
    """``x**(a-1) (1-x)**(b-1) / B(a, b)``: the x-derivative of ``betainc(a, b, x)``, in logs
    (``xlogy0`` makes ``0**0 == 1``); ``a``, ``b`` and ``x`` are floats of one dtype."""
    log_beta = sub(add(gammaln(a), gammaln(b)), gammaln(add(a, b)))
    return exp(sub(add(xlogy0(sub(a, 1), x), xlogy0(sub(b, 1), sub(1, x))), log_beta))


def _times_log_term(density: Variable, log_term: Variable) -> Variable:
    """``density * log_term``, 0 where the density is (at an end of the domain, where the
    log term is infinite)."""
    return switch(eq(density, 0), 0, mul(density, log_term))


class GammaInc(FloatNary):
    """The regularized lower incomplete gamma function ``P(k, x)``."""

    nin = 2
    ufunc = LazyAttribute("scipy.special", "gammainc")

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        (g,) = output_grads
        kf, xf = _in_precision(self, inputs)
        return [mul(g, gammainc_grad(kf, xf)), mul(g, _gamma_density(kf, xf))]


class GammaIncC(FloatNary):
    """The regularized upper incomplete gamma function ``Q(k, x)``."""

    nin = 2
    ufunc = LazyAttribute("scipy.special", "gammaincc")

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        (g,) = output_grads
        kf, xf = _in_precision(self, inputs)
        return [mul(g, gammaincc_grad(kf, xf)), mul(neg(g), _gamma_density(kf, xf))]


class GammaIncGrad(FloatNary):
    """``d/dk gammainc(k, x)``, the derivative of the regularized lower incomplete gamma
    function in its shape parameter (no closed form: a series or a continued fraction, see
    :func:`gammainc_dk`)."""

    nin = 2
    ufunc = staticmethod(gammainc_dk)
    sign = 1

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        k, _x = inputs
        (g,) = output_grads
        kf, xf = _in_precision(self, inputs)
        # d/dx d/dk P = d/dk (x**(k-1) exp(-x) / gamma(k)) = density (log x - psi(k))
        d_x = _times_log_term(_gamma_density(kf, xf), sub(log(xf), psi(kf)))
        return [
            grad_not_implemented(
                self, 0, k, "The second derivative in k has no closed form, and no scalar op computes it."
            ),
            mul(g, d_x) if self.sign > 0 else mul(neg(g), d_x),
        ]


class GammaIncCGrad(GammaIncGrad):
    """``d/dk gammaincc(k, x) = -d/dk gammainc(k, x)``."""

    sign = -1

    @staticmethod
    def ufunc(k: Any, x: Any) -> Any:
        return -gammainc_dk(k, x)


class BetaInc(FloatNary):
    """The regularized incomplete beta function ``I_x(a, b)`` (arguments ``a, b, x``)."""

    nin = 3
    ufunc = LazyAttribute("scipy.special", "betainc")

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        (g,) = output_grads
        af, bf, xf = _in_precision(self, inputs)
        return [
            mul(g, betainc_grad_a(af, bf, xf)),
            mul(g, betainc_grad_b(af, bf, xf)),
            mul(g, _beta_density(af, bf, xf)),
        ]


class BetaIncGrad(ScalarOp):
    """``d/da`` (``wrt_a``) or ``d/db`` of ``betainc(a, b, x)``, the derivative of the
    regularized incomplete beta function in a shape parameter (no closed form: a
    differentiated continued fraction, see :func:`betainc_dab`)."""

    nin = 3
    __props__ = ("wrt_a", "output_types_preference", "name")

    def __init__(self, wrt_a: bool, output_types_preference: Any = None, name: str | None = None):
        super().__init__(output_types_preference, name=name)
        self.wrt_a = bool(wrt_a)

    def impl(self, a: Any, b: Any, x: Any) -> Any:
        _args, dtype = _float_args(a, b, x)
        result = np.asarray(betainc_dab(a, b, x, self.wrt_a))
        return result.astype(dtype)[()]

    def __str__(self) -> str:
        return self.name

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        a, b, _x = inputs
        (g,) = output_grads
        af, bf, xf = _in_precision(self, inputs)
        # d/dx of the derivative in a (b) is that of the density: density times
        # log x - psi(a) + psi(a+b) (log(1-x) - psi(b) + psi(a+b))
        log_term = log(xf) if self.wrt_a else log1p(neg(xf))
        shape_term = sub(psi(add(af, bf)), psi(af if self.wrt_a else bf))
        why = "Its derivatives in the shape parameters have no closed form, and no scalar op computes them."
        return [
            grad_not_implemented(self, 0, a, why),
            grad_not_implemented(self, 1, b, why),
            mul(g, _times_log_term(_beta_density(af, bf, xf), add(log_term, shape_term))),
        ]


def betainc_grad(p: Any, q: Any, x: Any, wrtp: bool) -> Variable:
    """``d/dp betainc(p, q, x)`` (``wrtp``) or ``d/dq betainc(p, q, x)`` (PyTensor's
    ``betainc_grad``)."""
    return (betainc_grad_a if wrtp else betainc_grad_b)(p, q, x)


gammainc = GammaInc(upgrade_to_float_no_complex, name="gammainc")


gammaincc = GammaIncC(upgrade_to_float_no_complex, name="gammaincc")


gammainc_grad = GammaIncGrad(upgrade_to_float_no_complex, name="gammainc_grad")


gammaincc_grad = GammaIncCGrad(upgrade_to_float_no_complex, name="gammaincc_grad")


betainc = BetaInc(upgrade_to_float_no_complex, name="betainc")


betainc_grad_a = BetaIncGrad(True, upgrade_to_float_no_complex, name="betainc_grad_a")


betainc_grad_b = BetaIncGrad(False, upgrade_to_float_no_complex, name="betainc_grad_b")


def _scaled_by_gamma(k: np.ndarray, regularized: np.ndarray) -> np.ndarray:
    """``gamma(k) * regularized`` (k > 0), through logs where ``gamma(k)`` overflows while the
    product does not."""
    g = sp.gamma(k)
    out = g * regularized
    big = ~np.isfinite(g) & (k > 0) & (regularized > 0)
    if np.any(big):
        out = np.where(big, np.exp(np.log(np.where(big, regularized, 1.0)) + sp.gammaln(k)), out)
    return out


class GammaL(_Float64Impl, ScalarOp):
    """The lower incomplete gamma function ``gamma(k, x) = int_0^x t**(k-1) exp(-t) dt``
    (``gammainc(k, x) * gamma(k)``)."""

    def compute(self, k: np.ndarray, x: np.ndarray) -> np.ndarray:
        return _scaled_by_gamma(k, sp.gammainc(k, x))

    def L_op(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], grads: Sequence[Variable]
    ) -> list:
        (g,) = grads
        (out,) = outputs
        k, x = _in_precision(self, inputs)
        # d/dk (gamma(k) P) = gamma(k) dP/dk + gamma(k, x) psi(k); d/dx = x**(k-1) exp(-x)
        d_k = add(mul(gamma(k), gammainc_grad(k, x)), mul(out, psi(k)))
        d_x = mul(gamma(k), _gamma_density(k, x))
        return [mul(g, d_k), mul(g, d_x)]


class GammaU(_Float64Impl, ScalarOp):
    """The upper incomplete gamma function ``Gamma(k, x) = int_x^inf t**(k-1) exp(-t) dt``
    (``gammaincc(k, x) * gamma(k)``; ``exp1(x)`` at ``k == 0``)."""

    def compute(self, k: np.ndarray, x: np.ndarray) -> np.ndarray:
        out = _scaled_by_gamma(k, sp.gammaincc(k, x))
        return np.where(k == 0, sp.exp1(x), out)

    def L_op(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], grads: Sequence[Variable]
    ) -> list:
        (g,) = grads
        (out,) = outputs
        k, x = _in_precision(self, inputs)
        d_k = add(mul(gamma(k), gammaincc_grad(k, x)), mul(out, psi(k)))
        d_x = neg(mul(gamma(k), _gamma_density(k, x)))
        return [mul(g, d_k), mul(g, d_x)]


class GammaIncInv(_SciPyImpl, ScalarOp):
    """The inverse in ``x`` of ``gammainc(k, x)``: ``y`` with ``gammainc(k, y) == p``."""

    nin = 2
    ufunc = LazyAttribute("scipy.special", "gammaincinv")
    sign = 1

    def L_op(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], grads: Sequence[Variable]
    ) -> list:
        (g,) = grads
        (y,) = outputs
        k, _p = _in_precision(self, inputs)
        density = _gamma_density(k, y)  # d/dy gammainc(k, y); gammaincc's is its negative
        d_k = neg(true_div(gammainc_grad(k, y), density))  # the same for both inverses
        d_p = true_div(_const(self.sign, k), density)
        return [mul(g, d_k), mul(g, d_p)]


class GammaIncCInv(GammaIncInv):
    """The inverse in ``x`` of ``gammaincc(k, x)``: ``y`` with ``gammaincc(k, y) == q``."""

    ufunc = LazyAttribute("scipy.special", "gammainccinv")
    sign = -1


class BetaIncInv(_SciPyImpl, ScalarOp):
    """The inverse in ``x`` of ``betainc(a, b, x)``: ``y`` with ``betainc(a, b, y) == p``."""

    nin = 3
    ufunc = LazyAttribute("scipy.special", "betaincinv")

    def L_op(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], grads: Sequence[Variable]
    ) -> list:
        (g,) = grads
        (y,) = outputs
        a, b, _p = _in_precision(self, inputs)
        density = _beta_density(a, b, y)
        return [
            mul(g, neg(true_div(betainc_grad_a(a, b, y), density))),
            mul(g, neg(true_div(betainc_grad_b(a, b, y), density))),
            true_div(g, density),
        ]


gammal = GammaL(upgrade_to_float_no_complex, name="gammal")


gammau = GammaU(upgrade_to_float_no_complex, name="gammau")


gammaincinv = GammaIncInv(upgrade_to_float_no_complex, name="gammaincinv")


gammainccinv = GammaIncCInv(upgrade_to_float_no_complex, name="gammainccinv")


betaincinv = BetaIncInv(upgrade_to_float_no_complex, name="betaincinv")
