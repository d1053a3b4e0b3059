"""More special functions as scalar ops: Bessel functions of real order (``jv``, ``iv``,
``ive``, ``kv``, ``kve``), the Gauss hypergeometric function ``hyp2f1``, Owen's T function,
the non-regularized incomplete gamma functions (``gammal``, ``gammau``) and the inverses of
the regularized incomplete gamma and beta functions (``gammaincinv``, ``gammainccinv``,
``betaincinv``). Values are SciPy's.

Gradients: in the argument, the closed forms (Bessel recurrences, ``d/dz hyp2f1 = ab/c
hyp2f1(a+1, b+1, c+1, z)``, the inverse-function rule for the inverses); in the shape
parameters of the incomplete gamma and beta functions, their derivative ops (the inverses
by the implicit function theorem); in the parameters of ``hyp2f1``, its differentiated
defining series (:func:`hyp2f1_dparams`). The derivative of a Bessel function in its order
has no closed form: ``grad_not_implemented`` names it.

>>> from arignote.scalar import basic as ps
>>> x = ps.float64("x")
>>> round(float(gammaincinv(2.0, x).eval({x: 0.5})), 6)  # gammainc(2, y) == 0.5
1.678347
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import scipy.special as sp

from arignote.graph.basic import Variable
from arignote.graph.null_type import grad_not_implemented
from arignote.scalar.basic import (
    _chain,
    _const,
    _in_precision,
    _is_complex,
    add,
    conj,
    exp,
    mul,
    neg,
    real,
    sign,
    sqr,
    sub,
    true_div,
)
from arignote.scalar.math import (
    _MAX_STEPS,
    _TOL,
    _beta_density,
    _gamma_density,
    _richardson,
    betainc_grad_a,
    betainc_grad_b,
    erf,
    gamma,
    gammainc_grad,
    gammaincc_grad,
    psi,
)
from arignote.scalar.op import ScalarOp, upgrade_to_float, upgrade_to_float_no_complex
from arignote.scalar.type import ScalarType, complex_types, get_scalar_type

__all__ = [
    "hyp2f1",
    "hyp2f1_grad_a",
    "hyp2f1_grad_b",
    "hyp2f1_grad_c",
    "hyp2f1_dparams",
    "jv",
    "iv",
    "ive",
    "kv",
    "kve",
    "owens_t",
    "gammal",
    "gammau",
    "gammaincinv",
    "gammainccinv",
    "betaincinv",
]

_REAL_OF = {"complex64": "float32", "complex128": "float64"}


def _real_params_complex_arg(*types: ScalarType) -> list[ScalarType]:
    """The float dtype of the inputs (PyTensor's ``upgrade_to_float``), complex when the
    last input (the argument) is: SciPy's Bessel and hypergeometric functions take a
    complex argument but only real orders and parameters."""
    for i, t in enumerate(types[:-1]):
        if t.dtype in complex_types:
            raise TypeError(
                f"input {i} (an order or parameter) must be real, got {t.dtype}; only the last "
                "input (the argument) may be complex"
            )
    return upgrade_to_float(*types)


def _out_dtypes(args: Sequence[Any]) -> tuple[str, str]:
    """The output dtype for these NumPy arguments (as the types rule gives it) and the
    matching real dtype (the orders and parameters are computed in it)."""
    (out,) = upgrade_to_float(*(get_scalar_type(np.asarray(a).dtype.name) for a in args))
    return out.dtype, _REAL_OF.get(out.dtype, out.dtype)


class _SciPyImpl:
    """Mixin of the scalar ops below: ``impl`` by a SciPy ufunc in the output's precision:
    the parameters in the real dtype, the argument (last input) in the output dtype, the
    result cast back (SciPy has no float16 loops)."""

    def impl(self, *args: Any) -> Any:
        dtype, real_dtype = _out_dtypes(args)
        *params, arg = args
        with np.errstate(all="ignore"):
            result = self.ufunc(
                *(np.asarray(p, dtype=real_dtype) for p in params), np.asarray(arg, dtype=dtype)
            )
        return result if result.dtype == dtype else result.astype(dtype)


def _order_not_implemented(op: ScalarOp, v: Variable) -> Variable:
    return grad_not_implemented(
        op, 0, v, f"The derivative of {op} in its order v has no closed form (and no scalar op computes it)."
    )


def _half(x: Variable) -> Variable:
    return mul(_const(0.5, x), x)


# --- Bessel functions of real order -----------------------------------------------------------


class _Bessel(_SciPyImpl):
    """Mixin of the scalar ops below, Bessel functions ``f(v, x)`` of real order ``v``: the
    derivative in ``x`` (``derivative``) is a recurrence in the neighbouring orders; in ``v``
    there is none."""

    nin = 2
    #: ``(v, x, out) -> df/dx``, given by each function below
    derivative: Callable[[Variable, Variable, Variable], Variable]

    def L_op(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], grads: Sequence[Variable]
    ) -> list:
        v, x = inputs
        (g,) = grads
        vf, xf = _in_precision(self, inputs)
        return [_order_not_implemented(self, v), _chain(g, self.derivative(vf, xf, outputs[0]), x)]


class Jv(_Bessel, ScalarOp):
    """The Bessel function of the first kind ``J_v(x)`` of real order ``v``."""

    ufunc = sp.jv

    def derivative(self, v: Variable, x: Variable, out: Variable) -> Variable:
        # J_v' = (J_(v-1) - J_(v+1)) / 2
        return _half(sub(jv(sub(v, 1), x), jv(add(v, 1), x)))


class Iv(_Bessel, ScalarOp):
    """The modified Bessel function of the first kind ``I_v(x)`` of real order ``v``."""

    ufunc = sp.iv

    def derivative(self, v: Variable, x: Variable, out: Variable) -> Variable:
        # I_v' = (I_(v-1) + I_(v+1)) / 2
        return _half(add(iv(sub(v, 1), x), iv(add(v, 1), x)))


class Ive(_Bessel, ScalarOp):
    """``ive(v, x) = iv(v, x) * exp(-|Re x|)``, which neither overflows nor underflows for
    large ``|x|``."""

    ufunc = sp.ive

    def L_op(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], grads: Sequence[Variable]
    ) -> list:
        v, _x = inputs
        (g,) = grads
        (out,) = outputs
        vf, xf = _in_precision(self, inputs)
        # d = A dx + B d(Re x): A = I_v' exp(-|Re x|) = (ive(v-1) + ive(v+1)) / 2 (holomorphic
        # part), B = -sign(Re x) ive(v, x) (from the scaling)
        a = _half(add(ive(sub(vf, 1), xf), ive(add(vf, 1), xf)))
        b = neg(mul(sign(real(xf) if _is_complex(xf) else xf), out))
        if not _is_complex(xf):
            return [_order_not_implemented(self, v), mul(g, add(a, b))]
        # a non-holomorphic function: the term is g conj(A) + Re(g conj(B))
        return [_order_not_implemented(self, v), add(mul(g, conj(a)), real(mul(g, conj(b))))]


class Kv(_Bessel, ScalarOp):
    """The modified Bessel function of the second kind ``K_v(x)`` of real order ``v``."""

    ufunc = sp.kv

    def derivative(self, v: Variable, x: Variable, out: Variable) -> Variable:
        # K_v' = -(K_(v-1) + K_(v+1)) / 2
        return neg(_half(add(kv(sub(v, 1), x), kv(add(v, 1), x))))


class Kve(_Bessel, ScalarOp):
    """``kve(v, x) = kv(v, x) * exp(x)``, which does not underflow for large ``x``."""

    ufunc = sp.kve

    def derivative(self, v: Variable, x: Variable, out: Variable) -> Variable:
        # (K_v e^x)' = K_v' e^x + K_v e^x = kve(v, x) - (kve(v-1, x) + kve(v+1, x)) / 2
        return sub(out, _half(add(kve(sub(v, 1), x), kve(add(v, 1), x))))


# --- Owen's T and the incomplete gamma functions ----------------------------------------------


class _Float64Impl:
    """Mixin of the scalar ops below: ``impl`` computes a real special function of two
    arguments in float64 (``compute``, SciPy's) and returns it in the output dtype."""

    nin = 2

    def impl(self, *args: Any) -> Any:
        dtype, _ = _out_dtypes(args)
        with np.errstate(all="ignore"):
            result = np.asarray(self.compute(*(np.asarray(a, dtype=np.float64) for a in args)))
        return result.astype(dtype)[()]

    def compute(self, *args: np.ndarray) -> np.ndarray:
        return self.ufunc(*args)


class OwensT(_Float64Impl, ScalarOp):
    """Owen's T function ``T(h, a) = 1/(2 pi) int_0^a exp(-h**2 (1 + t**2) / 2) / (1 + t**2) dt``."""

    ufunc = sp.owens_t

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


# --- inverses of the regularized incomplete gamma and beta functions ----------------------------
# y = f^-1(k, p) solves f(k, y) = p: dy/dp = 1 / (df/dy) and dy/dk = -(df/dk) / (df/dy), the
# derivatives taken at (k, y), y being the op's output.


class GammaIncInv(_SciPyImpl, ScalarOp):
    """The inverse in ``x`` of ``gammainc(k, x)``: ``y`` with ``gammainc(k, y) == p``."""

    nin = 2
    ufunc = sp.gammaincinv
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

    ufunc = sp.gammainccinv
    sign = -1


class BetaIncInv(_SciPyImpl, ScalarOp):
    """The inverse in ``x`` of ``betainc(a, b, x)``: ``y`` with ``betainc(a, b, y) == p``."""

    nin = 3
    ufunc = sp.betaincinv

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


# --- the Gauss hypergeometric function -----------------------------------------------------------

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
    ufunc = sp.hyp2f1

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


jv = Jv(_real_params_complex_arg, name="jv")
iv = Iv(_real_params_complex_arg, name="iv")
ive = Ive(_real_params_complex_arg, name="ive")
kv = Kv(_real_params_complex_arg, name="kv")
kve = Kve(_real_params_complex_arg, name="kve")
owens_t = OwensT(upgrade_to_float_no_complex, name="owens_t")
gammal = GammaL(upgrade_to_float_no_complex, name="gammal")
gammau = GammaU(upgrade_to_float_no_complex, name="gammau")
gammaincinv = GammaIncInv(upgrade_to_float_no_complex, name="gammaincinv")
gammainccinv = GammaIncCInv(upgrade_to_float_no_complex, name="gammainccinv")
betaincinv = BetaIncInv(upgrade_to_float_no_complex, name="betaincinv")
hyp2f1 = Hyp2F1(_real_params_complex_arg, name="hyp2f1")
hyp2f1_grad_a = Hyp2F1Grad(0, _real_params_complex_arg, name="hyp2f1_grad_a")
hyp2f1_grad_b = Hyp2F1Grad(1, _real_params_complex_arg, name="hyp2f1_grad_b")
hyp2f1_grad_c = Hyp2F1Grad(2, _real_params_complex_arg, name="hyp2f1_grad_c")
