"""Special functions built from elementwise ones (``tensor.special``'s ``beta``, ``betaln``,
``poch``, ``factorial``, ``logit``, ``xlogy``, ``xlog1py``): their values follow
``scipy.special`` (checked against it) and their gradients come from their parts.

>>> import numpy as np
>>> import arignote.tensor as pt
>>> a, b = pt.dvector("a"), pt.dvector("b")
>>> np.round(betaln(a, b).eval({a: np.array([2.0]), b: np.array([3.0])}), 6)
array([-2.484907])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from arignote.configdefaults import config
from arignote.graph.basic import Variable
from arignote.scalar.special import LAST_BETA_POLE, STIRLING_FROM, STIRLING_SERIES
from arignote.scalar.type import discrete_types
from arignote.tensor.conversion import as_tensor_variable
from arignote.tensor.ufuncs import (
    abs,
    cast,
    ceil,
    cos,
    eq,
    exp,
    gammaln,
    ge,
    gt,
    isinf,
    isnan,
    le,
    log,
    log1p,
    lt,
    mod,
    neq,
    round_half_to_even,
    sin,
    switch,
    xlogy0,
)
from arignote.tensor.ufuncs import (
    gamma as gamma_fn,
)

__all__ = ["beta", "betaln", "factorial", "logit", "poch", "xlog1py", "xlogy"]


def _gamma_sign(x: Variable) -> Variable:
    """The sign of Gamma(x): 1 for x > 0; on (-k, -k + 1), (-1)**k (the poles give +-inf
    anyway). Piecewise constant, so it adds nothing to gradients."""
    # (the parity of finite negative x only: mod(inf, 2) would warn, and +-inf gives 1)
    k = ceil(-switch(lt(x, 0) & gt(x, -np.inf), x, 0))
    return switch(gt(x, 0), 1.0, 1.0 - 2.0 * mod(k, 2.0))


def _const(value: float, like: Variable) -> Variable:
    """``value`` as a constant of ``like``'s float dtype (a Python float would be float64 and
    upcast a float32 computation)."""
    dtype = like.type.dtype if like.type.dtype.startswith("float") else config.floatX
    return as_tensor_variable(np.asarray(value, dtype=dtype))


def _stirling_tail(x: Variable) -> Variable:
    """``gammaln(x) - ((x - 1/2) log x - x + log(2 pi) / 2)`` for ``x >= STIRLING_FROM``."""
    r = 1 / x
    r2 = r * r
    tail = _const(STIRLING_SERIES[-1], x)
    for c in reversed(STIRLING_SERIES[:-1]):
        tail = _const(c, x) + r2 * tail
    return r * tail


def _stirling_log_ratio(u: Variable, m: Variable) -> Variable:
    """``gammaln(u + m) - gammaln(u)`` from Stirling's series, for ``u`` and ``u + m`` at least
    ``STIRLING_FROM``: ``m log u + (u + m - 1/2) log1p(m / u) - m`` plus the series' tails,
    where the difference of the two large log-Gammas would cancel to nothing."""
    half = _const(0.5, u)
    return m * log(u) + (u + m - half) * log1p(m / u) - m + _stirling_tail(u + m) - _stirling_tail(u)


def _nonpositive_integer(x: Variable) -> Variable:
    """Where ``x`` is 0, -1, -2, ...: the poles of Gamma."""
    return le(x, 0) & eq(x, ceil(x))


def _parity_sign(n: Variable) -> Variable:
    """``(-1)**n`` for an integer-valued ``n`` (of any sign)."""
    return 1.0 - 2.0 * mod(n, 2.0)


_LAST_BETA_POLE = LAST_BETA_POLE  # (see there)


def _beta_poles(a: Variable, b: Variable) -> tuple[Variable, ...]:
    """Where ``a`` or ``b`` is a pole of Gamma, ``B(a, b)`` as SciPy takes it: with ``p``
    the pole (``a`` if both are) and ``q`` the other argument, an integer ``q`` with
    ``p + q <= 0`` puts a pole of ``Gamma(p + q)`` against it, and the limit is
    ``(-1)**q B(1 - p - q, q)``, finite for ``q > 0``, else ``(-1)**q inf``; any other
    pole (and any below ``_LAST_BETA_POLE``) gives ``+inf``.

    Returns ``(pole, finite, sign, x, y)``: where ``finite``, ``B(a, b) = sign B(x, y)``
    with ``x, y > 0``; where ``pole`` but not ``finite``, ``sign * inf``. Elsewhere ``x, y``
    are 1 and ``sign`` 1 (so that branches not taken stay finite, gradients too)."""
    pa = _nonpositive_integer(a)
    pole = pa | _nonpositive_integer(b)
    p, q = switch(pa, a, b), switch(pa, b, a)
    # (q above the last pole too: SciPy takes no limit at q = -inf, nor -1e10; p <= -q, not
    # p + q <= 0, which would overflow or be inf - inf)
    reduced = pole & eq(q, ceil(q)) & le(p, -q) & ge(p, _LAST_BETA_POLE) & ge(q, _LAST_BETA_POLE)
    finite = reduced & gt(q, 0)
    sign = _parity_sign(switch(reduced, q, 0))
    pf, qf = switch(finite, p, -1), switch(finite, q, 1)
    return pole, finite, sign, 1 - pf - qf, qf


def _gammaln(x: Variable) -> Variable:
    """``gammaln``, with ``-log |x|`` where ``0 < |x| < 1e-300``: there the two agree to
    rounding (the next term is Euler's constant times ``x``), and SciPy's ``gammaln`` is inf
    below 5.6e-309 (where ``1 / x`` overflows)."""
    tiny = lt(abs(x), 1e-300) & neq(x, 0)
    return switch(tiny, -log(abs(switch(tiny, x, 1))), gammaln(x))


def _beta_infinite(a: Variable, b: Variable, pole: Variable) -> tuple[Variable, Variable]:
    """Where one argument is ``+inf`` and neither a pole of Gamma: ``(infinite, o)``, ``o``
    the other argument there (else 1). ``B(inf, o)`` is the limit of ``Gamma(o) a**-o``:
    0 for ``o > 0``, ``+-inf`` (the sign of ``Gamma(o)``) for ``o < 0``, NaN for ``o`` inf
    or NaN, as in SciPy."""
    inf_a = eq(a, np.inf)
    infinite = (inf_a | eq(b, np.inf)) & ~pole
    return infinite, switch(infinite, switch(inf_a, b, a), _const(1.0, a + b))


def _betaln_infinite(o: Variable) -> Variable:
    """``log |B(inf, o)|`` (see :func:`_beta_infinite`)."""
    inf = _const(np.inf, o)  # (of o's dtype: Python's inf alone would make float64)
    return switch(isnan(o) | isinf(o), _const(np.nan, o), switch(gt(o, 0), -inf, inf))


def _betaln_regular(a: Variable, b: Variable) -> Variable:
    """``log |B(a, b)|`` away from the poles of Gamma(a) and Gamma(b) (see :func:`betaln`)."""
    # (one comparison orders both, so that on a tie x is a and y is b, each with its own
    # gradient; minimum and maximum would both give theirs to a)
    in_order = le(a, b)
    x, y = switch(in_order, a, b), switch(in_order, b, a)
    # (Stirling's series for Gamma(y) and Gamma(x + y): a negative x too, off the poles)
    far = ge(x + y, STIRLING_FROM) & ge(y, STIRLING_FROM)
    # each branch computed on inputs that are valid for it, so that the branch not taken
    # gives neither NaN values nor NaN gradients
    xs, ys = switch(far, x, _const(1.0, x)), switch(far, y, _const(STIRLING_FROM, y))
    xn, yn = switch(far, _const(1.0, x), x), switch(far, _const(1.0, y), y)
    return switch(
        far, gammaln(xs) - _stirling_log_ratio(ys, xs), _gammaln(xn) + _gammaln(yn) - _gammaln(xn + yn)
    )


def betaln(a: Any, b: Any) -> Variable:
    """``log |B(a, b)|`` = ``gammaln(a) + gammaln(b) - gammaln(a + b)``
    (``scipy.special.betaln``).

    Where the larger argument ``y`` and the sum ``x + y`` are at least ``STIRLING_FROM``, the
    difference ``gammaln(y) - gammaln(x + y)`` of two nearly equal large numbers is taken
    from Stirling's series instead (``-x log y - (x + y - 1/2) log1p(x / y) + x`` plus the
    series' tails), so that ``betaln(0.5, 1e300)`` is -344.8 and not 0 (and
    ``betaln(-2.5, 1e300)`` 1726.9). At a pole of
    ``Gamma(a)`` or ``Gamma(b)`` it is SciPy's limit: ``betaln(-3, 3) = log(1/3)`` (a pole
    of ``Gamma(a + b)`` against it), else ``inf``."""
    a, b = as_tensor_variable(a), as_tensor_variable(b)
    pole, finite, _, x, y = _beta_poles(a, b)
    infinite, o = _beta_infinite(a, b, pole)
    one = _const(1.0, a + b)
    safe = pole | infinite
    regular = _betaln_regular(switch(safe, one, a), switch(safe, one, b))
    regular = switch(infinite, _betaln_infinite(o), regular)
    return switch(finite, _betaln_regular(x, y), switch(pole, np.inf, regular))


def beta(a: Any, b: Any) -> Variable:
    """The beta function ``B(a, b) = Gamma(a) Gamma(b) / Gamma(a + b)``
    (``scipy.special.beta``), computed as ``exp(betaln(a, b))`` with the sign of the
    Gammas, so that large arguments do not overflow; at the poles of ``Gamma(a)`` and
    ``Gamma(b)``, SciPy's limits (``beta(-3, 3) = -1/3``, ``beta(-1, 2) = inf``)."""
    a, b = as_tensor_variable(a), as_tensor_variable(b)
    pole, _, pole_sign, _, _ = _beta_poles(a, b)
    infinite, o = _beta_infinite(a, b, pole)
    one = _const(1.0, a + b)
    safe = pole | infinite
    a_s, b_s = switch(safe, one, a), switch(safe, one, b)
    # (at a pole of Gamma(a + b) alone B is a zero, whose sign SciPy takes from Gamma(a) Gamma(b))
    top_sign = switch(_nonpositive_integer(a_s + b_s), 1.0, _gamma_sign(a_s + b_s))
    sign = switch(infinite, _gamma_sign(o), _gamma_sign(a_s) * _gamma_sign(b_s) * top_sign)
    sign = switch(pole, pole_sign, sign)
    return sign * _exp(betaln(a, b))


def _exp(x: Variable) -> Variable:
    """``exp(x)``, ``inf`` without an overflow warning where it overflows."""
    big = gt(x, np.log(np.finfo(x.type.dtype).max))
    return switch(big, np.inf, exp(switch(big, 0, x)))


def _sinpi(x: Variable) -> Variable:
    """``sin(pi x)`` for finite ``x``, reduced exactly first (``x - 2 round(x / 2)`` and
    ``+-1 - r`` are exact in binary floating point), so that it keeps its digits near the
    integers, where ``sin(pi * x)`` would not."""
    r = x - 2 * round_half_to_even(x / 2)  # in [-1, 1]
    near_one = gt(abs(r), 0.5)
    return sin(_const(np.pi, x) * switch(near_one, switch(gt(r, 0), 1 - r, -1 - r), r))


def _log_gamma_ratio(u: Variable, m: Variable, v: Variable) -> tuple[Variable, Variable]:
    """``(log |Gamma(v) / Gamma(u)|, its sign)`` for ``u`` and ``v = u + m`` off the poles
    (``v`` given, where ``u + m`` would round; where ``u`` and ``v`` are at least ``STIRLING_FROM``, the
    difference of the log-Gammas comes from Stirling's series, with ``m`` itself, as in
    :func:`betaln`: ``gammaln(1e300 + 0.5) - gammaln(1e300)`` would be 0, not 345.4)."""
    # (not where v < u / 2: there m / u nears -1, m - (v - u) is not 0 after rounding, and
    # the log-Gammas do not cancel anyway)
    far = ge(u, STIRLING_FROM) & ge(v, STIRLING_FROM) & ge(v, 0.5 * u)
    uf, mf = switch(far, u, STIRLING_FROM), switch(far, m, 0)
    un, vn = switch(far, 1, u), switch(far, 1, v)
    near = _gammaln(vn) - _gammaln(un)
    return switch(far, _stirling_log_ratio(uf, mf), near), _gamma_sign(vn) * _gamma_sign(un)


def poch(z: Any, m: Any) -> Variable:
    """The Pochhammer symbol (rising factorial) ``Gamma(z + m) / Gamma(z)``
    (``scipy.special.poch``), computed through ``gammaln`` with the signs of the Gammas.

    Where ``z + m < 0`` and ``z < 0`` or ``m`` is an integer, it is taken by the reflection
    formula as ``S Gamma(1 - z) / Gamma(1 - z - m)``, ``S`` being ``(-1)**m`` for an integer
    ``m`` and ``sin(pi z) / sin(pi (z + m))`` otherwise: the sum ``z + m`` is not rounded
    onto a pole (``poch(1e-300, -1) = -1``, ``poch(1e-10, -2) = 1 / ((z - 1)(z - 2))``), and
    large negative ``z`` keep their digits (``poch(-1e10 - 0.5, 1) = z``). Where ``z`` and
    ``z + m`` are large, the ratio comes from Stirling's series (as in :func:`betaln`):
    ``poch(1e300, 0.5)`` is ``1e150``.

    At the poles, SciPy's values: where ``z`` and ``z + m`` are both poles (``m`` an integer)
    the ratio's limit, by the same formula (``poch(-3, 3) = -6``, the product
    ``z (z + 1) ... (z + m - 1)``); where only ``z`` is, 0; where only ``z + m`` is, ``inf``.
    ``poch(z, 0)`` is 1 for every ``z`` (NaN too), ``poch(z, inf)`` is ``inf`` times the sign
    of ``1 / Gamma(z)``, ``poch(inf, m)`` is ``inf`` for ``m > 0`` and 0 for ``m < 0``;
    other infinities (``z = -inf``, ``m = -inf``, ``poch(inf, inf)``) and NaNs give NaN."""
    z, m = as_tensor_variable(z), as_tensor_variable(m)
    finite = ~(isinf(z) | isnan(z) | isinf(m) | isnan(m))
    # (each branch on inputs valid for it, see betaln; Python numbers keep the inputs' dtype,
    # so that the result's is gammaln's of it, as before)
    zf, mf = switch(finite, z, 1), switch(finite, m, 1)
    top = zf + mf
    m_int = eq(mf, ceil(mf))
    z_int = eq(zf, ceil(zf))
    pz = _nonpositive_integer(zf)
    # (for an integer m, z + m is a pole only with z an integer: 1e-300 - 1 rounds to one)
    ptop = switch(m_int, z_int & le(zf, -mf), ~z_int & _nonpositive_integer(top))
    both = pz & ptop
    # reflected: S Gamma(1 - z) / Gamma(1 - z - m), 1 - z - m > 1 (also the limit at both poles)
    reflect = both | (~pz & ~ptop & lt(top, 0) & (lt(zf, 0) | m_int))
    zr, mr = switch(reflect, zf, 0), switch(reflect, mf, 0)
    # (1 - (z + m): z + m is exact where it cancels, poch(-1e300, 1e300) = Gamma(1e300 + 1))
    log_r, sign_r = _log_gamma_ratio(1 - (zr + mr), mr, 1 - zr)
    s_z, s_top = _sinpi(switch(reflect & ~m_int, zr, 0.5)), _sinpi(switch(reflect & ~m_int, zr + mr, 0.5))
    # (sin(pi z) / sin(pi (z + m)) is (-1)**m for an integer m; a quotient of two logs would
    # lose the digits of a tiny sin: computed directly, it is at most 1 / sin(pi ulp) in size)
    # For an integer m, (-1)**m, with the derivative of the quotient in m, -S pi cot(pi z)
    # (its derivative in z is 0), carried by m - round(m), which is 0 with derivative 1
    # (rounding's is 0); cot(pi z) only where |z| >= 1e-300 (beyond, it would overflow, and
    # 0 * inf be NaN) and off the poles.
    zc = switch(reflect & m_int & ~both & ge(abs(zr), 1e-300), zr, 0.5)
    r = zc - 2 * round_half_to_even(zc / 2)
    cot = cos(_const(np.pi, zc) * r) / _sinpi(zc)
    # (of the rounded m: mod's derivative is 1, the parity's must be 0)
    parity = _parity_sign(round_half_to_even(switch(m_int, mr, 0)))
    s_int = parity * (1 - _const(np.pi, zc) * cot * (mr - round_half_to_even(mr)))
    s = switch(m_int, s_int, s_z / s_top)
    reflected = s * sign_r * _exp(log_r)
    regular = ~pz & ~ptop & ~reflect
    zg, mg = switch(regular, zf, 1), switch(regular, mf, 0)
    log_g, sign_g = _log_gamma_ratio(zg, mg, zg + mg)
    value = switch(reflect, reflected, switch(pz, 0.0, switch(ptop, np.inf, sign_g * _exp(log_g))))
    # the infinities and NaNs (see above)
    nan = as_tensor_variable(np.asarray(np.nan, dtype=value.type.dtype))  # (Python's: float64)
    regular_z = lt(z, 0) & ~_nonpositive_integer(z)  # (finite: -inf is taken for a pole)
    m_inf = switch(gt(z, 0) & ~isinf(z), np.inf, nan)
    m_inf = switch(regular_z, _gamma_sign(switch(regular_z, z, 1)) * np.inf, m_inf)
    z_inf = switch(gt(m, 0), np.inf, 0.0)
    edge = switch(eq(m, np.inf), m_inf, switch(eq(z, np.inf) & ~isinf(m) & ~isnan(m), z_inf, nan))
    # a pole z gives 0 whatever m is (NaN and +-inf too), as in SciPy
    edge = switch(_nonpositive_integer(z) & gt(z, -np.inf), 0.0, edge)
    return switch(eq(m, 0), 1.0, switch(finite, value, edge))


def factorial(n: Any) -> Variable:
    """``n! = Gamma(n + 1)`` elementwise, as a float; 0 for negative ``n``
    (``scipy.special.factorial`` with ``exact=False``)."""
    n = as_tensor_variable(n)
    return switch(lt(n, 0), 0.0, gamma_fn(n + 1))


def logit(x: Any) -> Variable:
    """``log(x / (1 - x))``, the inverse of ``sigmoid`` (``scipy.special.logit``). Integer
    and bool inputs give ``floatX`` (as their ratio does in PyTensor; float64 by default,
    as SciPy's)."""
    x = as_tensor_variable(x)
    if x.type.dtype in discrete_types:
        x = cast(x, config.floatX)  # before negating: -x would wrap around for unsigned ints
    return log(x) - log1p(-x)


def xlogy(x: Any, y: Any) -> Variable:
    """``x * log(y)``, 0 where ``x == 0`` (``scipy.special.xlogy``: NaN where ``y`` is NaN)."""
    x, y = as_tensor_variable(x), as_tensor_variable(y)
    out = xlogy0(x, y)
    return switch(isnan(y), y.astype(out.type.dtype), out)


def xlog1py(x: Any, y: Any) -> Variable:
    """``x * log1p(y)``, 0 where ``x == 0`` (``scipy.special.xlog1py``: NaN where ``y`` is
    NaN). Where ``x == 0`` the logarithm is taken of 0 instead, so that its gradient stays
    finite there."""
    x, y = as_tensor_variable(x), as_tensor_variable(y)
    zero = eq(x, 0)
    safe_y = switch(zero, 0, y)
    out = switch(zero, 0, x * log1p(safe_y))
    return switch(isnan(y), y.astype(out.type.dtype), out)
