"""The special functions of :mod:`arignote.scalar.special_extra` on tensors (elementwise,
with broadcasting), and ``kn`` / ``chi2sf`` built from them; re-exported by
:mod:`arignote.tensor.math` and ``arignote.tensor`` (``pt.hyp2f1``, ``pt.jv``, ...).

>>> import numpy as np
>>> import arignote.tensor as pt
>>> x = pt.dvector("x")
>>> pt.kve(0.5, x).eval({x: np.array([1.0, 100.0])})
array([1.25331414, 0.12533141])
"""

from __future__ import annotations

import warnings
from typing import Any

import arignote.scalar.special_extra as pse
from arignote.graph.basic import Variable
from arignote.tensor.elemwise import Elemwise

__all__ = [
    "hyp2f1",
    "jv",
    "iv",
    "ive",
    "kv",
    "kve",
    "kn",
    "owens_t",
    "gammal",
    "gammau",
    "gammaincinv",
    "gammainccinv",
    "betaincinv",
    "chi2sf",
]

hyp2f1 = Elemwise(pse.hyp2f1)
hyp2f1_grad_a = Elemwise(pse.hyp2f1_grad_a)
hyp2f1_grad_b = Elemwise(pse.hyp2f1_grad_b)
hyp2f1_grad_c = Elemwise(pse.hyp2f1_grad_c)
jv = Elemwise(pse.jv)
iv = Elemwise(pse.iv)
ive = Elemwise(pse.ive)
kv = Elemwise(pse.kv)
kve = Elemwise(pse.kve)
owens_t = Elemwise(pse.owens_t)
gammal = Elemwise(pse.gammal)
gammau = Elemwise(pse.gammau)
gammaincinv = Elemwise(pse.gammaincinv)
gammainccinv = Elemwise(pse.gammainccinv)
betaincinv = Elemwise(pse.betaincinv)


def kn(n: Any, x: Any) -> Variable:
    """The modified Bessel function of the second kind of order ``n``: ``kv(n, x)`` (as in
    PyTensor, ``n`` may be any real, not only an integer)."""
    return kv(n, x)


def chi2sf(x: Any, k: Any) -> Variable:
    """The survival function of the chi-squared distribution with ``k`` degrees of freedom at
    ``x``: ``gammaincc(k / 2, x / 2)``. Deprecated (as in PyTensor): write that instead."""
    from arignote.tensor.math import gammaincc, true_div

    warnings.warn("chi2sf is deprecated; use gammaincc(k / 2, x / 2)", FutureWarning, stacklevel=2)
    return gammaincc(true_div(k, 2), true_div(x, 2))
