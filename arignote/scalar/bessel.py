"""Bessel functions as scalar ops: of order 0 and 1 (``i0``, ``i1``, ``j0``, ``j1``) and of
real order (``jv``, ``iv``, ``ive``, ``kv``, ``kve``; values are SciPy's). Gradients in the
argument are the recurrences; the derivative in the order has no closed form
(``grad_not_implemented`` names it)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from arignote.graph.basic import Variable
from arignote.lazy import LazyAttribute
from arignote.scalar.basic import (
    FloatUnary,
    _chain,
    _const,
    _in_precision,
    _is_complex,
    _real,
    add,
    conj,
    eq,
    mul,
    neg,
    real,
    sign,
    sub,
    switch,
    true_div,
)
from arignote.scalar.op import ScalarOp, upgrade_to_float_no_complex
from arignote.scalar.scipy_impl import _half, _order_not_implemented, _real_params_complex_arg, _SciPyImpl

__all__ = [
    "I0",
    "I1",
    "Iv",
    "Ive",
    "J0",
    "J1",
    "Jv",
    "Kv",
    "Kve",
    "i0",
    "i1",
    "iv",
    "ive",
    "j0",
    "j1",
    "jv",
    "kv",
    "kve",
]


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

    ufunc = LazyAttribute("scipy.special", "jv")

    def derivative(self, v: Variable, x: Variable, out: Variable) -> Variable:
        # J_v' = (J_(v-1) - J_(v+1)) / 2
        return _half(sub(jv(sub(v, 1), x), jv(add(v, 1), x)))


class Iv(_Bessel, ScalarOp):
    """The modified Bessel function of the first kind ``I_v(x)`` of real order ``v``."""

    ufunc = LazyAttribute("scipy.special", "iv")

    def derivative(self, v: Variable, x: Variable, out: Variable) -> Variable:
        # I_v' = (I_(v-1) + I_(v+1)) / 2
        return _half(add(iv(sub(v, 1), x), iv(add(v, 1), x)))


class Ive(_Bessel, ScalarOp):
    """``ive(v, x) = iv(v, x) * exp(-|Re x|)``, which neither overflows nor underflows for
    large ``|x|``."""

    ufunc = LazyAttribute("scipy.special", "ive")

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

    ufunc = LazyAttribute("scipy.special", "kv")

    def derivative(self, v: Variable, x: Variable, out: Variable) -> Variable:
        # K_v' = -(K_(v-1) + K_(v+1)) / 2
        return neg(_half(add(kv(sub(v, 1), x), kv(add(v, 1), x))))


class Kve(_Bessel, ScalarOp):
    """``kve(v, x) = kv(v, x) * exp(x)``, which does not underflow for large ``x``."""

    ufunc = LazyAttribute("scipy.special", "kve")

    def derivative(self, v: Variable, x: Variable, out: Variable) -> Variable:
        # (K_v e^x)' = K_v' e^x + K_v e^x = kve(v, x) - (kve(v-1, x) + kve(v+1, x)) / 2
        return sub(out, _half(add(kve(sub(v, 1), x), kve(add(v, 1), x))))


jv = Jv(_real_params_complex_arg, name="jv")


iv = Iv(_real_params_complex_arg, name="iv")


ive = Ive(_real_params_complex_arg, name="ive")


kv = Kv(_real_params_complex_arg, name="kv")


kve = Kve(_real_params_complex_arg, name="kve")


def _over_x_at_0(f0: Variable, f1: Variable, x: Variable, zero_value: float) -> Variable:
    """``f0 - f1 / x``, ``zero_value`` at ``x == 0`` (its limit; no 0/0 computed there)."""
    xf = _real(x)
    at_zero = eq(xf, 0)
    safe_x = switch(at_zero, 1, xf)
    return switch(at_zero, _const(zero_value, x), sub(f0, true_div(f1, safe_x)))


class I0(FloatUnary):
    ufunc = LazyAttribute("scipy.special", "i0")

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        (x,) = inputs
        (g,) = output_grads
        return [mul(g, i1(x))]


class I1(FloatUnary):
    ufunc = LazyAttribute("scipy.special", "i1")

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        (x,) = inputs
        (g,) = output_grads
        # i1'(x) = i0(x) - i1(x) / x, 1/2 at 0
        return [mul(g, _over_x_at_0(i0(x), i1(x), x, 0.5))]


class J0(FloatUnary):
    ufunc = LazyAttribute("scipy.special", "j0")

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        (x,) = inputs
        (g,) = output_grads
        return [mul(neg(g), j1(x))]


class J1(FloatUnary):
    ufunc = LazyAttribute("scipy.special", "j1")

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list:
        (x,) = inputs
        (g,) = output_grads
        # j1'(x) = j0(x) - j1(x) / x, 1/2 at 0
        return [mul(g, _over_x_at_0(j0(x), j1(x), x, 0.5))]


i0 = I0(upgrade_to_float_no_complex, name="i0")


i1 = I1(upgrade_to_float_no_complex, name="i1")


j0 = J0(upgrade_to_float_no_complex, name="j0")


j1 = J1(upgrade_to_float_no_complex, name="j1")
