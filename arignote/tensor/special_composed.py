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
from arignote.scalar.special import STIRLING_FROM, STIRLING_SERIES
from arignote.scalar.type import discrete_types
from arignote.tensor.conversion import as_tensor_variable
from arignote.tensor.ufuncs import (
    cast,
    ceil,
    eq,
    exp,
    gammaln,
    ge,
    gt,
    isnan,
    le,
    log,
    log1p,
    lt,
    mod,
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
    k = ceil(-x)
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


def betaln(a: Any, b: Any) -> Variable:
    """``log |B(a, b)|`` = ``gammaln(a) + gammaln(b) - gammaln(a + b)``
    (``scipy.special.betaln``).

    For positive arguments of which the larger, ``y``, is at least ``STIRLING_FROM``, the
    difference ``gammaln(y) - gammaln(x + y)`` of two nearly equal large numbers is taken
    from Stirling's series instead (``-x log y - (x + y - 1/2) log1p(x / y) + x`` plus the
    series' tails), so that ``betaln(0.5, 1e300)`` is -344.8 and not 0."""
    a, b = as_tensor_variable(a), as_tensor_variable(b)
    # (one comparison orders both, so that on a tie x is a and y is b, each with its own
    # gradient; minimum and maximum would both give theirs to a)
    in_order = le(a, b)
    x, y = switch(in_order, a, b), switch(in_order, b, a)
    far = gt(x, 0) & ge(y, STIRLING_FROM)
    # each branch computed on inputs that are valid for it, so that the branch not taken
    # gives neither NaN values nor NaN gradients
    xs, ys = switch(far, x, _const(1.0, x)), switch(far, y, _const(STIRLING_FROM, y))
    half = _const(0.5, ys)
    ratio = (
        -xs * log(ys) - (xs + ys - half) * log1p(xs / ys) + xs + _stirling_tail(ys) - _stirling_tail(xs + ys)
    )
    return switch(far, gammaln(xs) + ratio, gammaln(a) + gammaln(b) - gammaln(a + b))


def beta(a: Any, b: Any) -> Variable:
    """The beta function ``B(a, b) = Gamma(a) Gamma(b) / Gamma(a + b)``
    (``scipy.special.beta``), computed as ``exp(betaln(a, b))`` with the sign of the
    Gammas, so that large arguments do not overflow."""
    a, b = as_tensor_variable(a), as_tensor_variable(b)
    sign = _gamma_sign(a) * _gamma_sign(b) * _gamma_sign(a + b)
    return sign * exp(betaln(a, b))


def poch(z: Any, m: Any) -> Variable:
    """The Pochhammer symbol (rising factorial) ``Gamma(z + m) / Gamma(z)``
    (``scipy.special.poch``), computed through ``gammaln`` with the signs of the Gammas."""
    z, m = as_tensor_variable(z), as_tensor_variable(m)
    sign = _gamma_sign(z + m) * _gamma_sign(z)
    return sign * exp(gammaln(z + m) - gammaln(z))


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
