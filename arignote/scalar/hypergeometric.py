"""The Gauss hypergeometric function ``hyp2f1`` as a scalar op (SciPy's values), with its
gradient in the argument (``d/dz hyp2f1 = ab/c hyp2f1(a+1, b+1, c+1, z)``) and in the
parameters (the differentiated defining series, :func:`hyp2f1_dparams`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from arignote.graph.basic import Variable
from arignote.graph.null_type import grad_not_implemented
from arignote.lazy import LazyAttribute, lazy_module
from arignote.scalar.basic import _chain, _in_precision, add, mul, neg, true_div
from arignote.scalar.incomplete import _MAX_STEPS, _TOL, _richardson
from arignote.scalar.op import ScalarOp
from arignote.scalar.scipy_impl import _out_dtypes, _real_params_complex_arg, _SciPyImpl

# SciPy is imported on first use (see arignote.lazy)
sp = lazy_module("scipy.special")

__all__ = [
    "Hyp2F1",
    "Hyp2F1Grad",
    "hyp2f1",
    "hyp2f1_dparams",
    "hyp2f1_grad_a",
    "hyp2f1_grad_b",
    "hyp2f1_grad_c",
]


_HYP_STEPS = _MAX_STEPS // 2  # the series costs more per step than the fractions of math.py


def _hyp2f1_series(a: np.ndarray, b: np.ndarray, c: np.ndarray, z: np.ndarray) -> tuple:
    """``F = sum_n t_n`` (``t_0 = 1``, ``t_(n+1) = t_n (a+n)(b+n) z / ((c+n)(n+1))``) and its
    derivatives in ``a, b, c`` (``dt_(n+1) = dt_n r_n + t_n dr_n``, which stays right where a
    factor ``a+n`` is 0), for 1-d arrays with ``|z| < 1``. A problem is done once, twice in a
    row, past the last sign change of the factors, the step ratio ``rho`` is below 1 and the
    last terms bound the tail (``|term| / (1 - rho)``) below ``_TOL`` times the sum of the
    terms' magnitudes. Returns ``F``, the derivatives (shape ``(3, n)``) and a mask of the
    problems not done in ``_HYP_STEPS`` steps."""
    size = a.shape[0]
    F = np.ones(size, dtype=z.dtype)
    D = np.zeros((3, size), dtype=z.dtype)
    failed = np.zeros(size, dtype=bool)
    if not size:
        return F, D, failed
    keep = np.arange(size)
    start = np.floor(np.maximum(np.maximum(np.abs(a), np.abs(b)), np.abs(c))) + 2
    t, dt, s, ds = F.copy(), D.copy(), F.copy(), D.copy()
    mag, dmag = np.ones(size), np.zeros((3, size))
    calm = np.zeros(size, dtype=bool)
    for n in range(_HYP_STEPS):
        an, bn, cn = a + n, b + n, c + n
        q = z / (cn * (n + 1))
        r = an * bn * q
        dt = np.stack([dt[0] * r + t * bn * q, dt[1] * r + t * an * q, dt[2] * r - t * r / cn])
        t = t * r
        s, ds = s + t, ds + dt
        mag, dmag = mag + np.abs(t), dmag + np.abs(dt)
        rho = np.abs(r)
        room = _TOL * (1 - rho)
        small = (n + 1 >= start) & (rho < 1) & (np.abs(t) <= room * mag)
        small &= np.all(np.abs(dt) + np.abs(t) * (dmag > 0) <= room * dmag, axis=0)
        finished = (t == 0) & np.all(dt == 0, axis=0)  # a terminated polynomial, derivatives too
        done = (small & calm) | finished
        calm = small
        if done.any():
            F[keep[done]], D[:, keep[done]] = s[done], ds[:, done]
            live = ~done
            keep = keep[live]
            if keep.size == 0:
                return F, D, failed
            a, b, c, z, start, t, s, mag, calm = (v[live] for v in (a, b, c, z, start, t, s, mag, calm))
            dt, ds, dmag = dt[:, live], ds[:, live], dmag[:, live]
    failed[keep] = True
    return F, D, failed


def _hyp2f1_pfaff(a: np.ndarray, b: np.ndarray, c: np.ndarray, z: np.ndarray) -> tuple:
    """The derivatives through Pfaff's ``F(a, b; c; z) = (1-z)**(-a) F(a, c-b; c; z/(z-1))``
    (for ``|z / (z-1)| < 1``, i.e. ``Re z < 1/2``): with ``G`` the series there and ``G1, G2,
    G3`` its derivatives in its parameters, ``dF/da = (1-z)**(-a) (G1 - log(1-z) G)``, ``dF/db
    = -(1-z)**(-a) G2``, ``dF/dc = (1-z)**(-a) (G2 + G3)``."""
    G, dG, failed = _hyp2f1_series(a, c - b, c, z / (z - 1))
    log1mz = np.log1p(-z)
    pre = np.exp(-a * log1mz)
    return np.stack([pre * (dG[0] - log1mz * G), -pre * dG[1], pre * (dG[1] + dG[2])]), failed


def _hyp2f1_gauss(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """The derivatives at ``z = 1`` from Gauss's ``F(a, b; c; 1) = gamma(c) gamma(c-a-b) /
    (gamma(c-a) gamma(c-b))`` (``c - a - b > 0``; NaN elsewhere)."""
    with np.errstate(all="ignore"):
        F = np.where(c - a - b > 0, sp.hyp2f1(a, b, c, 1.0), np.nan)
        s = sp.psi(c - a - b)
        return np.stack(
            [
                F * (sp.psi(c - a) - s),
                F * (sp.psi(c - b) - s),
                F * (sp.psi(c) + s - sp.psi(c - a) - sp.psi(c - b)),
            ]
        )


def _hyp2f1_fd(a: np.ndarray, b: np.ndarray, c: np.ndarray, z: np.ndarray) -> np.ndarray:
    """The fallback: Richardson-extrapolated central differences of SciPy's ``hyp2f1`` in each
    parameter, with a step shrunk where ``F`` moves fast with it (near ``z = 1`` it varies like
    ``(1-z)**(c-a-b)``)."""
    with np.errstate(all="ignore"):
        shrink = np.maximum(1.0, np.abs(np.log(np.abs(1 - z))))
        out = []
        for i, p in enumerate((a, b, c)):
            h = 0.01 * np.maximum(1.0, np.abs(p)) / shrink

            def f(step: np.ndarray, i: int = i) -> np.ndarray:
                args = [a, b, c]
                args[i] = args[i] + step
                return sp.hyp2f1(*args, z)

            out.append(_richardson(f, h))
    return np.stack(out)


def hyp2f1_dparams(a: Any, b: Any, c: Any, z: Any) -> np.ndarray:
    """The derivatives of ``hyp2f1(a, b, c, z)`` in ``a``, ``b`` and ``c`` (stacked on a first
    axis of length 3) in float64, or complex128 for a complex ``z``; elementwise with
    broadcasting.

    The defining series differentiated term by term where ``|z| < 1`` and ``|z| <=
    |z/(z-1)|``; the series of Pfaff's transformation where ``|z/(z-1)| < 1`` (all real ``z <
    0``); Gauss's formula at ``z = 1``. Elsewhere (``|z| >= 1`` with ``Re z >= 1/2``), where a
    series has not converged in its step budget (``|z|`` within about ``1e-3`` of 1, or a
    parameter beyond about ``5e3``) or gave a non-finite value for a finite ``hyp2f1``:
    Richardson-extrapolated central differences of SciPy's ``hyp2f1`` (about ``1e-10``
    relative). NaN where ``hyp2f1`` is not defined (a real ``z > 1``).
    """
    dtype = np.complex128 if np.iscomplexobj(np.asarray(z)) else np.float64
    a, b, c = (np.asarray(v, dtype=np.float64) for v in (a, b, c))
    z = np.asarray(z, dtype=dtype)
    a, b, c, z = np.broadcast_arrays(a, b, c, z)
    shape = a.shape
    a, b, c, z = (v.ravel() for v in (a, b, c, z))
    out = np.full((3, a.size), np.nan, dtype=dtype)
    with np.errstate(all="ignore"):
        w = z / (z - 1)
        ok = ~(np.isnan(a) | np.isnan(b) | np.isnan(c) | np.isnan(z))
        # a series runs past its largest parameter before it may stop: too far is left to the fallback
        reach = np.maximum.reduce([np.abs(a), np.abs(b), np.abs(c), np.abs(c - b)]) < _HYP_STEPS - 2
        direct = ok & reach & (np.abs(z) < 1) & (np.abs(z) <= np.abs(w))
        pfaff = ok & reach & ~direct & (np.abs(w) < 1)
        gauss = ok & (z == 1)
        fallback = ok & ~(direct | pfaff | gauss)
        if direct.any():
            _F, d, bad = _hyp2f1_series(a[direct], b[direct], c[direct], z[direct])
            out[:, direct] = d
            fallback[np.flatnonzero(direct)[bad]] = True
        if pfaff.any():
            d, bad = _hyp2f1_pfaff(a[pfaff], b[pfaff], c[pfaff], z[pfaff])
            out[:, pfaff] = d
            fallback[np.flatnonzero(pfaff)[bad]] = True
        if gauss.any():
            out[:, gauss] = _hyp2f1_gauss(a[gauss], b[gauss], c[gauss])
        # a series that overflowed or met a pole where hyp2f1 itself is finite
        odd = np.flatnonzero((direct | pfaff) & ~np.all(np.isfinite(out), axis=0))
        fallback[odd[np.isfinite(sp.hyp2f1(a[odd], b[odd], c[odd], z[odd]))]] = True
        if fallback.any():
            out[:, fallback] = _hyp2f1_fd(a[fallback], b[fallback], c[fallback], z[fallback])
    return out.reshape((3, *shape))


class Hyp2F1(_SciPyImpl, ScalarOp):
    """The Gauss hypergeometric function ``2F1(a, b; c; z) = sum_n (a)_n (b)_n / (c)_n z**n /
    n!`` (analytically continued; real ``a, b, c``, real or complex ``z``)."""

    nin = 4
    ufunc = LazyAttribute("scipy.special", "hyp2f1")

    def impl(self, *args: Any) -> Any:
        a, b, c, z = (np.asarray(x) for x in args)
        # SciPy's hyp2f1 crashes the process (SciPy 1.17) at a real NaN z with c == a >= 2**53
        # and 0 < b < 1. There 2F1(a, b; a; z) = (1 - z)**-b is NaN (SciPy's value below
        # 2**53), so those elements get NaN and SciPy gets z = 0 in their place.
        crash = np.isnan(z) & np.isreal(z) & (c == a) & (a >= 2.0**53) & (b > 0) & (b < 1)
        if not np.any(crash):
            return super().impl(*args)
        result = np.asarray(super().impl(a, b, c, np.where(crash, np.zeros((), z.dtype), z)))
        return np.where(crash, np.asarray(np.nan, result.dtype), result)[()]

    def L_op(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], grads: Sequence[Variable]
    ) -> list:
        a, b, c, z = inputs
        (g,) = grads
        af, bf, cf, zf = _in_precision(self, inputs)
        d_params = [op(af, bf, cf, zf) for op in (hyp2f1_grad_a, hyp2f1_grad_b, hyp2f1_grad_c)]
        # d/dz F(a, b; c; z) = a b / c F(a+1, b+1; c+1; z)
        d_z = mul(true_div(mul(af, bf), cf), hyp2f1(add(af, 1), add(bf, 1), add(cf, 1), zf))
        return [*(_chain(g, d, x) for d, x in zip(d_params, (a, b, c))), _chain(g, d_z, z)]


class Hyp2F1Grad(ScalarOp):
    """The derivative of ``hyp2f1(a, b, c, z)`` in parameter ``wrt`` (0: ``a``, 1: ``b``, 2:
    ``c``); see :func:`hyp2f1_dparams`."""

    nin = 4
    __props__ = ("wrt", "output_types_preference", "name")

    def __init__(self, wrt: int, output_types_preference: Any = None, name: str | None = None):
        if wrt not in (0, 1, 2):
            raise ValueError(f"Hyp2F1Grad: wrt must be 0 (a), 1 (b) or 2 (c), got {wrt!r}")
        super().__init__(output_types_preference, name=name)
        self.wrt = wrt

    def impl(self, *args: Any) -> Any:
        dtype, _ = _out_dtypes(args)
        return np.asarray(hyp2f1_dparams(*args)[self.wrt]).astype(dtype)[()]

    def __str__(self) -> str:
        return self.name

    def L_op(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], grads: Sequence[Variable]
    ) -> list:
        (g,) = grads
        a, b, c, z = _in_precision(self, inputs)
        # d/dz dF/dp = d/dp (a b / c F(a+1, b+1; c+1; z)): the product rule, dF/dp of the
        # shifted function by this op again
        ratio = true_div(mul(a, b), c)
        shifted = (add(a, 1), add(b, 1), add(c, 1), z)
        factor = (true_div(b, c), true_div(a, c), neg(true_div(ratio, c)))[self.wrt]
        d_z = add(mul(factor, hyp2f1(*shifted)), mul(ratio, self(*shifted)))
        why = "The second derivatives of hyp2f1 in its parameters are not implemented."
        terms = [grad_not_implemented(self, i, x, why) for i, x in enumerate(inputs[:3])]
        return [*terms, _chain(g, d_z, inputs[3])]


hyp2f1 = Hyp2F1(_real_params_complex_arg, name="hyp2f1")


hyp2f1_grad_a = Hyp2F1Grad(0, _real_params_complex_arg, name="hyp2f1_grad_a")


hyp2f1_grad_b = Hyp2F1Grad(1, _real_params_complex_arg, name="hyp2f1_grad_b")


hyp2f1_grad_c = Hyp2F1Grad(2, _real_params_complex_arg, name="hyp2f1_grad_c")
