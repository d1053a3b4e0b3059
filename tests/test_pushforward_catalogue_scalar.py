"""Pushforward catalogue, part 3: every scalar op, lifted to tensors by ``Elemwise``.

Elemwise's pushforward replays the scalar op's pullback with a unit cotangent; the pullback
route transposes the same pullback, so finite differences (in float64) are what catch a
scalar rule that is wrong. Each case evaluates ``pt.<name>`` on 5 points of the op's domain
(away from kinks and poles), with float inputs; integer-valued results (comparisons, rounding,
bitwise ops) must get zero tangents on both routes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import arignote.scalar as ps
import arignote.tensor as pt
import arignote.tensor.ufuncs as pse
from arignote.tensor.elemwise import Elemwise
from tests.test_pushforward_catalogue_harness import (
    Builder,
    Case,
    case_params,
    integer_outputs,
    run_case,
    run_each_input,
    run_integer_outputs,
    several_inputs,
)

N = 5  # points per case


class Dom:
    """Where an input's values are drawn: uniform in ``[lo, hi)``, or the given ``values``;
    ``dtype="int64"`` for an integer input (no tangent)."""

    def __init__(self, lo: float = -2.0, hi: float = 2.0, values: Any = None, dtype: str | None = None):
        self.lo, self.hi, self.values, self.dtype = lo, hi, values, dtype

    def draw(self, rng: np.random.Generator, dtype: str) -> np.ndarray:
        if self.values is not None:
            return np.asarray(self.values, dtype=self.dtype or dtype)
        return rng.uniform(self.lo, self.hi, size=N).astype(self.dtype or dtype)


REAL = Dom()
POS = Dom(0.3, 3.0)
UNIT = Dom(-0.9, 0.9)  # inside (-1, 1)
PROB = Dom(0.1, 0.9)  # inside (0, 1)
AWAY = Dom(values=[-1.7, -0.6, 0.4, 1.3, 2.2])  # clear of 0 and of the integers (kinks, jumps)


# Elemwise has no direct pushforward where complex values are involved (a pullback's partial is
# the conjugate derivative, and conj, real, abs, complex(x, y) are not holomorphic): it declines
# and Rop takes the pullback route, which these cases check against finite differences.
COMPLEX = {"rop_not_implemented": True}


def sc(fn: Callable[..., Any], *domains: Dom, undefined: tuple = (), seed: int = 0, **kw: Any) -> Builder:
    """A case ``fn(*inputs)`` with one vector input per domain; ``undefined``: the positions
    of the inputs whose derivative the op leaves not implemented. ``kw`` goes to the Case."""

    def build(dtype: str) -> Case:
        rng = np.random.default_rng(seed)
        names = "xyzwv"
        inputs = [pt.tensor(names[i], dtype=d.dtype or dtype, shape=(None,)) for i, d in enumerate(domains)]
        values = [d.draw(rng, dtype) for d in domains]
        out = fn(*inputs)
        outs = list(out) if isinstance(out, (list, tuple)) else [out]
        return Case(inputs, values, outs, undefined=[inputs[i] for i in undefined], seed=seed, **kw)

    return build


def power_loop(n: Any, x: Any, a: Any) -> Any:
    """``x * a ** n`` by a ScalarLoop of ``x``'s dtype (no derivative, as in PyTensor)."""
    sx, sa = ps.get_scalar_type(x.dtype)("x"), ps.get_scalar_type(x.dtype)("a")
    return Elemwise(ps.ScalarLoop(init=[sx], update=[ps.mul(sx, sa)], constant=[sa]))(n, x, a)


def as_bool(x: Any) -> Any:
    return pt.gt(x, 0.0)


def as_int(x: Any) -> Any:
    return pt.cast(x, "int64")


BASIC = "arignote.scalar.basic."
SPECIAL = "arignote.scalar.special."
INCOMPLETE = "arignote.scalar.incomplete."
BESSEL = "arignote.scalar.bessel."
HYPERGEOMETRIC = "arignote.scalar.hypergeometric."

# Special functions computed by series or continued fractions are accurate to ~1e-10, so
# their central differences (eps 1e-6) are good to ~1e-4 relative.
LOOSE = (1e-4, 1e-5)
HYP = (Dom(0.2, 1.5), Dom(0.2, 1.5), Dom(1.6, 3.0), Dom(-0.6, 0.6))  # a, b, c, z: the series converges

SCALAR_CASES: dict[str, list[Builder]] = {
    # arithmetic
    BASIC + "Add": [sc(pt.add, REAL, REAL)],
    BASIC + "Sub": [sc(pt.sub, REAL, REAL)],
    BASIC + "Mul": [
        sc(pt.mul, REAL, REAL),
        sc(lambda x, i: pt.mul(x, i), REAL, Dom(values=[1, -2, 0, 3, 5], dtype="int64")),
    ],
    BASIC + "TrueDiv": [sc(pt.true_div, REAL, POS)],
    BASIC + "IntDiv": [sc(pt.int_div, POS, Dom(values=[0.7, 1.1, 1.9, 0.45, 2.3]))],
    BASIC + "Mod": [
        sc(pt.mod, Dom(values=[2.3, -1.7, 5.2, 0.4, 3.3]), Dom(values=[1.1, 0.9, 2.0, 0.7, -1.6]))
    ],
    BASIC + "Neg": [sc(pt.neg, REAL)],
    BASIC + "Reciprocal": [sc(pt.reciprocal, POS)],
    BASIC + "Pow": [
        sc(pt.pow, POS, REAL),
        sc(lambda x, i: pt.pow(x, i), REAL, Dom(values=[2, 3, 0, 1, 4], dtype="int64")),
    ],
    BASIC + "Sqr": [sc(pt.sqr, REAL)],
    BASIC + "Sqrt": [sc(pt.sqrt, POS)],
    BASIC + "Abs": [sc(pt.abs, AWAY), sc(lambda x, y: pt.abs(pt.complex(x, y)), REAL, REAL, **COMPLEX)],
    BASIC + "Sign": [sc(pt.sign, AWAY)],
    BASIC + "Maximum": [sc(pt.maximum, REAL, REAL, seed=1)],
    BASIC + "Minimum": [sc(pt.minimum, REAL, REAL, seed=2)],
    BASIC + "Clip": [
        sc(
            lambda x, lo, hi: pt.clip(x, lo, hi),
            Dom(values=[-2.0, -0.5, 0.3, 1.6, 3.0]),
            Dom(-1.2, -0.8),
            Dom(1.0, 1.4),
        )
    ],
    BASIC + "Switch": [sc(lambda c, a, b: pt.switch(as_bool(c), a, b), AWAY, REAL, REAL)],
    BASIC + "Second": [sc(pt.second, REAL, REAL)],
    BASIC + "Identity": [sc(pt.tensor_copy, REAL)],
    # float32 rounding of the result: a wide finite-difference step (the case is linear)
    BASIC + "Cast": [
        sc(lambda x: pt.cast(x, "float32") * np.float32(3), REAL, fd_eps=1e-2, fd_tol=(1e-4, 1e-4)),
        sc(lambda x: pt.cast(x, "int16"), AWAY),
    ],
    # rounding: piecewise constant
    BASIC + "Ceil": [sc(pt.ceil, AWAY)],
    BASIC + "Floor": [sc(pt.floor, AWAY)],
    BASIC + "Trunc": [sc(pt.trunc, AWAY)],
    BASIC + "RoundHalfToEven": [sc(pt.round_half_to_even, AWAY)],
    BASIC + "RoundHalfAwayFromZero": [sc(pt.round_half_away_from_zero, AWAY)],
    # comparisons and predicates: bool results
    BASIC + "EQ": [sc(pt.eq, REAL, REAL)],
    BASIC + "NEQ": [sc(pt.neq, REAL, REAL)],
    BASIC + "LT": [sc(pt.lt, REAL, REAL)],
    BASIC + "LE": [sc(pt.le, REAL, REAL)],
    BASIC + "GT": [sc(pt.gt, REAL, REAL)],
    BASIC + "GE": [sc(pt.ge, REAL, REAL)],
    BASIC + "IsNan": [sc(lambda x: pt.isnan(pt.switch(pt.gt(x, 0.0), x, np.nan)), REAL)],
    BASIC + "IsInf": [sc(lambda x: pt.isinf(pt.switch(pt.gt(x, 0.0), x, -np.inf)), REAL)],
    # bitwise / logical, on values computed from floats
    BASIC + "AND": [sc(lambda x, y: pt.and_(as_bool(x), as_bool(y)), REAL, REAL)],
    BASIC + "OR": [sc(lambda x, y: pt.or_(as_int(x), as_int(y)), AWAY, REAL)],
    BASIC + "XOR": [sc(lambda x, y: pt.xor(as_bool(x), as_bool(y)), REAL, REAL)],
    BASIC + "Invert": [sc(lambda x: pt.invert(as_int(x)), AWAY)],
    # exponentials, logarithms, trigonometry
    BASIC + "Exp": [sc(pt.exp, REAL)],
    BASIC + "Exp2": [sc(pt.exp2, REAL)],
    BASIC + "Expm1": [sc(pt.expm1, REAL)],
    BASIC + "Log": [sc(pt.log, POS)],
    BASIC + "Log2": [sc(pt.log2, POS)],
    BASIC + "Log10": [sc(pt.log10, POS)],
    BASIC + "Log1p": [sc(pt.log1p, Dom(-0.7, 2.0))],
    BASIC + "Sin": [sc(pt.sin, REAL)],
    BASIC + "Cos": [sc(pt.cos, REAL)],
    BASIC + "Tan": [sc(pt.tan, Dom(-1.2, 1.2))],
    BASIC + "ArcSin": [sc(pt.arcsin, UNIT)],
    BASIC + "ArcCos": [sc(pt.arccos, UNIT)],
    BASIC + "ArcTan": [sc(pt.arctan, REAL)],
    BASIC + "ArcTan2": [sc(pt.arctan2, REAL, AWAY)],
    BASIC + "Sinh": [sc(pt.sinh, REAL)],
    BASIC + "Cosh": [sc(pt.cosh, REAL)],
    BASIC + "Tanh": [sc(pt.tanh, REAL)],
    BASIC + "ArcSinh": [sc(pt.arcsinh, REAL)],
    BASIC + "ArcCosh": [sc(pt.arccosh, Dom(1.2, 3.0))],
    BASIC + "ArcTanh": [sc(pt.arctanh, UNIT)],
    BASIC + "Deg2Rad": [sc(pt.deg2rad, REAL)],
    BASIC + "Rad2Deg": [sc(pt.rad2deg, REAL)],
    # complex numbers, made from float inputs
    BASIC + "Complex": [sc(lambda x, y: pt.complex(x, y) * pt.complex(y, x), REAL, REAL, **COMPLEX)],
    BASIC + "ComplexFromPolar": [sc(pt.complex_from_polar, POS, REAL, **COMPLEX)],
    BASIC + "Conj": [sc(lambda x, y: pt.conj(pt.complex(x, y)) * pt.complex(y, y), REAL, REAL, **COMPLEX)],
    BASIC + "Real": [sc(lambda x, y: pt.real(pt.complex(x, y) ** 2), REAL, REAL, **COMPLEX)],
    BASIC + "Imag": [sc(lambda x, y: pt.imag(pt.complex(x, y) ** 2), REAL, REAL, **COMPLEX)],
    BASIC + "Angle": [sc(lambda x, y: pt.angle(pt.complex(x, y)), REAL, AWAY, **COMPLEX)],
    # special functions
    SPECIAL + "Erf": [sc(pt.erf, REAL)],
    SPECIAL + "Erfc": [sc(pt.erfc, REAL)],
    SPECIAL + "Erfcx": [sc(pt.erfcx, REAL)],
    SPECIAL + "Erfinv": [sc(pt.erfinv, UNIT)],
    SPECIAL + "Erfcinv": [sc(pt.erfcinv, Dom(0.2, 1.8))],
    SPECIAL + "Gamma": [sc(pt.gamma, POS)],
    SPECIAL + "GammaLn": [sc(pt.gammaln, POS)],
    SPECIAL + "Psi": [sc(pt.psi, POS)],
    SPECIAL + "TriGamma": [sc(pt.tri_gamma, POS)],
    SPECIAL + "PolyGamma": [
        sc(lambda n, x: pt.polygamma(n, x), Dom(values=[0, 1, 2, 1, 3], dtype="int64"), POS)
    ],
    SPECIAL + "Sigmoid": [sc(pt.sigmoid, REAL)],
    SPECIAL + "Softplus": [sc(pt.softplus, REAL)],
    SPECIAL + "Log1mexp": [sc(pt.log1mexp, Dom(-3.0, -0.2))],
    SPECIAL + "XLogX": [sc(pt.xlogx, POS)],
    SPECIAL + "XLogY0": [sc(pt.xlogy0, REAL, POS)],
    BESSEL + "I0": [sc(pt.i0, REAL)],
    BESSEL + "I1": [sc(pt.i1, REAL)],
    BESSEL + "J0": [sc(pt.j0, REAL)],
    BESSEL + "J1": [sc(pt.j1, REAL)],
    INCOMPLETE + "GammaInc": [sc(pt.gammainc, POS, POS, fd_tol=LOOSE)],
    INCOMPLETE + "GammaIncC": [sc(pt.gammaincc, POS, POS, fd_tol=LOOSE)],
    # the derivatives in the shape/order parameters that have no closed form are not implemented
    INCOMPLETE + "GammaIncGrad": [sc(pt.gammainc_grad, Dom(0.5, 3.0), POS, undefined=(0,), fd_tol=LOOSE)],
    INCOMPLETE + "GammaIncCGrad": [sc(pt.gammaincc_grad, Dom(0.5, 3.0), POS, undefined=(0,), fd_tol=LOOSE)],
    INCOMPLETE + "BetaInc": [sc(pt.betainc, POS, POS, PROB, fd_tol=LOOSE)],
    INCOMPLETE + "BetaIncGrad": [
        sc(pt.betainc_grad_a, Dom(0.5, 3.0), Dom(0.5, 3.0), PROB, undefined=(0, 1), fd_tol=LOOSE),
        sc(pt.betainc_grad_b, Dom(0.5, 3.0), Dom(0.5, 3.0), PROB, undefined=(0, 1), fd_tol=LOOSE),
    ],
    INCOMPLETE + "BetaIncInv": [sc(pt.betaincinv, Dom(0.5, 3.0), Dom(0.5, 3.0), PROB, fd_tol=LOOSE)],
    INCOMPLETE + "GammaIncInv": [sc(pt.gammaincinv, Dom(0.5, 3.0), PROB, fd_tol=LOOSE)],
    INCOMPLETE + "GammaIncCInv": [sc(pt.gammainccinv, Dom(0.5, 3.0), PROB, fd_tol=LOOSE)],
    INCOMPLETE + "GammaL": [sc(pt.gammal, POS, POS, fd_tol=LOOSE)],
    INCOMPLETE + "GammaU": [sc(pt.gammau, POS, POS, fd_tol=LOOSE)],
    HYPERGEOMETRIC + "Hyp2F1": [sc(pt.hyp2f1, *HYP, fd_tol=LOOSE)],
    HYPERGEOMETRIC + "Hyp2F1Grad": [
        sc(pse.hyp2f1_grad_a, *HYP, undefined=(0, 1, 2), fd_tol=LOOSE),
        sc(pse.hyp2f1_grad_c, *HYP, undefined=(0, 1, 2), fd_tol=LOOSE),
    ],
    BESSEL + "Iv": [sc(pt.iv, Dom(0.2, 2.0), POS, undefined=(0,), fd_tol=LOOSE)],
    BESSEL + "Ive": [sc(pt.ive, Dom(0.2, 2.0), POS, undefined=(0,), fd_tol=LOOSE)],
    BESSEL + "Jv": [sc(pt.jv, Dom(0.2, 2.0), POS, undefined=(0,), fd_tol=LOOSE)],
    BESSEL + "Kv": [sc(pt.kv, Dom(0.2, 2.0), POS, undefined=(0,), fd_tol=LOOSE)],
    BESSEL + "Kve": [sc(pt.kve, Dom(0.2, 2.0), POS, undefined=(0,), fd_tol=LOOSE)],
    SPECIAL + "OwensT": [sc(pt.owens_t, REAL, REAL, fd_tol=LOOSE)],
    "arignote.scalar.loop.ScalarLoop": [
        # the loop's inputs have no derivative; the tangent flows through the sum's other term
        sc(
            lambda n, x, a, y: power_loop(n, x, a) + y,
            Dom(values=[0, 1, 2, 3, 1], dtype="int64"),
            POS,
            POS,
            REAL,
            undefined=(1, 2),
        )
    ],
}

# The abstract bases of the scalar ops: nothing to build.
SCALAR_SKIP: dict[str, str] = {
    "arignote.scalar.op.UnaryScalarOp": "abstract base of the one-input scalar ops",
    "arignote.scalar.op.BinaryScalarOp": "abstract base of the two-input scalar ops",
    BASIC + "FloatUnary": "abstract base of the float functions of one input",
    BASIC + "Comparison": "abstract base of EQ, NEQ, LT, LE, GT, GE (each has a case)",
    BASIC + "BitwiseOp": "abstract base of AND, OR, XOR, Invert (each has a case)",
    SPECIAL + "FloatNary": "abstract base of the float special functions of several inputs",
    # Composite has its own (multi-output) case in test_pushforward_catalogue_linalg.py
    "arignote.scalar.composite.Composite": "covered by the Elemwise cases (a fused multi-output Composite)",
}

SCALAR_XFAIL: dict[str, str] = {}
SCALAR_XFAIL_EACH: dict[str, str] = {}
SCALAR_XFAIL_INT: dict[str, str] = {}

F32 = ["Exp[0]", "TrueDiv[0]", "Pow[0]", "Sigmoid[0]", "ArcTan2[0]", "Switch[0]"]


@pytest.mark.parametrize("name, builder", case_params(SCALAR_CASES, SCALAR_XFAIL))
def test_scalar_pushforward_matches_pullback(name: str, builder: Builder) -> None:
    run_case(name, builder)


@pytest.mark.parametrize("name, builder", case_params(SCALAR_CASES, SCALAR_XFAIL_EACH, keep=several_inputs))
def test_scalar_pushforward_matches_pullback_each_input(name: str, builder: Builder) -> None:
    run_each_input(name, builder)


@pytest.mark.parametrize("name, builder", [p for p in case_params(SCALAR_CASES, SCALAR_XFAIL) if p.id in F32])
def test_scalar_pushforward_matches_pullback_float32(name: str, builder: Builder) -> None:
    run_case(name, builder, "float32")


@pytest.mark.parametrize("name, builder", case_params(SCALAR_CASES, SCALAR_XFAIL_INT, keep=integer_outputs))
def test_scalar_integer_outputs_disconnected_alike(name: str, builder: Builder) -> None:
    run_integer_outputs(name, builder)
