"""Gradient rules of the scalar ops (``arignote.scalar.basic``, ``.math``, ``Composite``).

Every rule is exercised the way users reach it: ``grad`` of ``sum(op(x, ...))`` over
tensors (through ``Elemwise``), compared with central finite differences of the forward
op computed in float64: several random points of the op's domain, edge points, float64
(tight) and float32 (looser). Integer-valued ops have exactly zero gradients; bitwise
ops have zero ones (as PyTensor); complex ops follow PyTensor's convention (the gradient with
respect to ``z`` is ``dC/d(Re z) + 1j dC/d(Im z)``), checked through real inputs.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.special as sp

import arignote.scalar as ps
import arignote.tensor as pt
from arignote.configdefaults import config
from arignote.gradient import DisconnectedInputError, NullTypeGradError, disconnected_type, grad
from arignote.graph.basic import Constant, Variable
from arignote.graph.null_type import NullType
from arignote.graph.traversal import io_toposort
from arignote.scalar.composite import Composite
from arignote.tensor.elemwise import Elemwise

N = 6  # points per check

# --- finite differences ------------------------------------------------------------------


def _forward(build, dtype="float64"):
    """``build``'s output (elementwise, not summed) as a function of float64 arrays."""
    cache: dict = {}

    def f(*values):
        n = len(values)
        if n not in cache:
            xs = [pt.vector(f"x{k}", dtype=dtype) for k in range(n)]
            cache[n] = (xs, build(*xs))
        xs, out = cache[n]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return np.asarray(
                out.eval({x: np.asarray(v, dtype=dtype) for x, v in zip(xs, values)}), dtype="float64"
            )

    return f


def numeric_grads(build, values, wrt=None):
    """d out_i / d input_k,i for each input k in ``wrt``: a 4th-order central difference
    in float64, every element at once (the ops are elementwise)."""
    f = _forward(build)
    values = [np.asarray(v, dtype="float64") for v in values]
    wrt = range(len(values)) if wrt is None else wrt
    result = {}
    for k in wrt:
        h = 1e-4 * np.maximum(1.0, np.abs(values[k]))

        def at(step, k=k, h=h):
            shifted = list(values)
            shifted[k] = values[k] + step * h
            return f(*shifted)

        result[k] = (-at(2) + 8 * at(1) - 8 * at(-1) + at(-2)) / (12 * h)
    return result


def symbolic_grads(build, values, dtypes, wrt=None):
    """The gradients of ``sum(build(*xs))`` by ``grad``, evaluated at ``values``."""
    xs = [pt.vector(f"x{k}", dtype=d) for k, d in enumerate(dtypes)]
    wrt = list(range(len(values))) if wrt is None else list(wrt)
    cost = pt.sum(build(*xs))
    gs = grad(cost, [xs[k] for k in wrt])
    given = {x: np.asarray(v, dtype=d) for x, v, d in zip(xs, values, dtypes)}
    out = {}
    for k, g in zip(wrt, gs):
        assert g.type.dtype == (dtypes[k] if dtypes[k].startswith(("float", "complex")) else config.floatX)
        assert g.type.ndim == 1
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            out[k] = np.asarray(g.eval({x: v for x, v in given.items() if x in _inputs_of(g)}))
        assert out[k].shape == given[xs[k]].shape
    return out


def _inputs_of(v: Variable) -> set:
    return {
        i
        for node in io_toposort([], [v])
        for i in node.inputs
        if i.owner is None and not isinstance(i, Constant)
    }


def check_grad(build, values, dtype="float64", wrt=None, rtol=None, atol=None):
    """The symbolic gradient of ``sum(build(...))`` matches finite differences."""
    values = [np.asarray(v, dtype="float64") for v in values]
    if dtype == "float32":
        values = [v.astype("float32").astype("float64") for v in values]  # exactly representable
    num = numeric_grads(build, values, wrt)
    sym = symbolic_grads(build, values, [dtype] * len(values), wrt)
    rtol = rtol if rtol is not None else (1e-7 if dtype == "float64" else 2e-3)
    atol = atol if atol is not None else (1e-9 if dtype == "float64" else 1e-5)
    for k in num:
        np.testing.assert_allclose(sym[k], num[k], rtol=rtol, atol=atol, err_msg=f"input {k}")


# --- the ops and their domains -----------------------------------------------------------


def U(lo, hi):
    return ("uniform", lo, hi)


# name: (build, domains of the inputs, inputs to differentiate (None: all))
SMOOTH = {
    # arithmetic
    "add": (lambda a, b: a + b, [U(-5, 5), U(-5, 5)], None),
    "add3": (lambda a, b, c: pt.add(a, b, c), [U(-5, 5)] * 3, None),
    "sub": (lambda a, b: a - b, [U(-5, 5), U(-5, 5)], None),
    "mul": (lambda a, b: a * b, [U(-5, 5), U(-5, 5)], None),
    "mul3": (lambda a, b, c: pt.mul(a, b, c), [U(-3, 3)] * 3, None),
    "true_div": (lambda a, b: a / b, [U(-5, 5), U(0.5, 5)], None),
    "true_div_neg": (lambda a, b: a / b, [U(-5, 5), U(-5, -0.5)], None),
    "pow": (lambda a, b: a**b, [U(0.2, 3), U(-2.5, 2.5)], None),
    "mod": (pt.mod, [U(-5, 5), U(0.7, 3)], None),
    "mod_neg": (pt.mod, [U(-5, 5), U(-3, -0.7)], None),
    "neg": (pt.neg, [U(-5, 5)], None),
    "reciprocal": (pt.reciprocal, [U(0.3, 5)], None),
    "reciprocal_neg": (pt.reciprocal, [U(-5, -0.3)], None),
    "abs": (pt.abs, [U(-5, 5)], None),
    "sqr": (pt.sqr, [U(-5, 5)], None),
    "sqrt": (pt.sqrt, [U(0.1, 10)], None),
    "maximum": (pt.maximum, [U(-5, 5), U(-5, 5)], None),
    "minimum": (pt.minimum, [U(-5, 5), U(-5, 5)], None),
    "clip": (pt.clip, [U(-5, 5), U(-3, -1), U(1, 3)], None),
    "switch": (lambda c, a, b: pt.switch(pt.gt(c, 0), a, b), [U(-1, 1), U(-5, 5), U(-5, 5)], None),
    # exponentials and logarithms
    "exp": (pt.exp, [U(-5, 5)], None),
    "exp2": (pt.exp2, [U(-5, 5)], None),
    "expm1": (pt.expm1, [U(-5, 5)], None),
    "log": (pt.log, [U(0.1, 10)], None),
    "log2": (pt.log2, [U(0.1, 10)], None),
    "log10": (pt.log10, [U(0.1, 10)], None),
    "log1p": (pt.log1p, [U(-0.9, 10)], None),
    # trigonometry
    "sin": (pt.sin, [U(-6, 6)], None),
    "cos": (pt.cos, [U(-6, 6)], None),
    "tan": (pt.tan, [U(-1.4, 1.4)], None),
    "arcsin": (pt.arcsin, [U(-0.95, 0.95)], None),
    "arccos": (pt.arccos, [U(-0.95, 0.95)], None),
    "arctan": (pt.arctan, [U(-10, 10)], None),
    "arctan2": (pt.arctan2, [U(-3, 3), U(0.5, 3)], None),
    "arctan2_left": (pt.arctan2, [U(0.5, 3), U(-3, -0.5)], None),
    "sinh": (pt.sinh, [U(-5, 5)], None),
    "cosh": (pt.cosh, [U(-5, 5)], None),
    "tanh": (pt.tanh, [U(-3, 3)], None),
    "arcsinh": (pt.arcsinh, [U(-10, 10)], None),
    "arccosh": (pt.arccosh, [U(1.1, 10)], None),
    "arctanh": (pt.arctanh, [U(-0.9, 0.9)], None),
    "deg2rad": (pt.deg2rad, [U(-360, 360)], None),
    "rad2deg": (pt.rad2deg, [U(-6, 6)], None),
    # casts, identity, second
    "cast_float32": (lambda a: pt.cast(a, "float32") * 1.5, [U(-5, 5)], None),
    "cast_float64": (lambda a: pt.cast(a, "float64") * 1.5, [U(-5, 5)], None),
    "identity": (pt.identity, [U(-5, 5)], None),
    "second": (pt.second, [U(-5, 5), U(-5, 5)], [1]),
    # special functions
    "erf": (pt.erf, [U(-3, 3)], None),
    "erfc": (pt.erfc, [U(-3, 3)], None),
    "erfcx": (pt.erfcx, [U(-2, 10)], None),
    "erfinv": (pt.erfinv, [U(-0.95, 0.95)], None),
    "erfcinv": (pt.erfcinv, [U(0.05, 1.95)], None),
    "gamma": (pt.gamma, [U(0.5, 5)], None),
    "gamma_neg": (pt.gamma, [U(-2.8, -2.2)], None),
    "gammaln": (pt.gammaln, [U(0.5, 20)], None),
    "psi": (pt.psi, [U(0.5, 10)], None),
    "tri_gamma": (pt.tri_gamma, [U(0.5, 10)], None),
    "polygamma": (lambda a: pt.polygamma(3, a), [U(0.5, 10)], None),
    "sigmoid": (pt.sigmoid, [U(-10, 10)], None),
    "softplus": (pt.softplus, [U(-10, 10)], None),
    "log1mexp": (pt.log1mexp, [U(-5, -0.05)], None),
    "xlogx": (pt.xlogx, [U(0.05, 5)], None),
    "xlogy0": (pt.xlogy0, [U(-2, 2), U(0.1, 5)], None),
    "gammainc": (pt.gammainc, [U(0.5, 5), U(0.1, 6)], None),
    "gammaincc": (pt.gammaincc, [U(0.5, 5), U(0.1, 6)], None),
    "betainc": (pt.betainc, [U(0.5, 5), U(0.5, 5), U(0.05, 0.95)], None),
    # the derivatives in the shape parameters: their x-derivatives (the k-, a-, b-ones are
    # not implemented)
    "gammainc_grad": (pt.gammainc_grad, [U(0.5, 5), U(0.1, 6)], [1]),
    "gammaincc_grad": (pt.gammaincc_grad, [U(0.5, 5), U(0.1, 6)], [1]),
    "betainc_grad_a": (pt.betainc_grad_a, [U(0.5, 5), U(0.5, 5), U(0.05, 0.95)], [2]),
    "betainc_grad_b": (pt.betainc_grad_b, [U(0.5, 5), U(0.5, 5), U(0.05, 0.95)], [2]),
    "i0": (pt.i0, [U(-5, 5)], None),
    "i1": (pt.i1, [U(-5, 5)], None),
    "j0": (pt.j0, [U(-10, 10)], None),
    "j1": (pt.j1, [U(-10, 10)], None),
}

# points kept away from the op's kinks (the finite difference straddles them otherwise)
AWAY = {
    "mod": lambda a, b: np.abs(a / b - np.round(a / b)) > 0.05,
    "mod_neg": lambda a, b: np.abs(a / b - np.round(a / b)) > 0.05,
    "abs": lambda a: np.abs(a) > 0.05,
    "maximum": lambda a, b: np.abs(a - b) > 0.05,
    "minimum": lambda a, b: np.abs(a - b) > 0.05,
    "clip": lambda a, lo, hi: (np.abs(a - lo) > 0.05) & (np.abs(a - hi) > 0.05),
    "switch": lambda c, a, b: np.abs(c) > 0.05,
    "xlogy0": lambda a, b: np.abs(a) > 0.05,
}

# the finite difference of a float32 cast sees its rounding
F64_RTOL = {"cast_float32": 1e-3}
# float32: inputs (and so outputs) lose digits; these need more room
F32_RTOL = {"gamma_neg": 1e-2, "tan": 5e-3, "erfinv": 5e-3, "erfcinv": 5e-3, "betainc": 5e-3}


def sample(name, seed):
    build, domains, wrt = SMOOTH[name]
    rng = np.random.default_rng(seed)
    keep = AWAY.get(name)
    values = [rng.uniform(lo, hi, size=4 * N) for _, lo, hi in domains]
    if keep is not None:
        ok = keep(*values)
        values = [v[ok] for v in values]
    return build, [v[:N] for v in values], wrt


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("name", sorted(SMOOTH))
def test_grad_float64(name, seed):
    build, values, wrt = sample(name, seed)
    check_grad(build, values, "float64", wrt, rtol=F64_RTOL.get(name))


@pytest.mark.parametrize("name", sorted(SMOOTH))
def test_grad_float32(name):
    build, values, wrt = sample(name, 7)
    check_grad(build, values, "float32", wrt, rtol=F32_RTOL.get(name))


def _verify_grad():
    from arignote import gradient

    fn = getattr(gradient, "verify_grad", None)
    if fn is None:
        pytest.skip("arignote.gradient.verify_grad is not there yet")
    return fn


@pytest.mark.parametrize("name", sorted(SMOOTH))
def test_grad_with_broadcasting(name):
    """Through ``verify_grad`` (random projections of the output), with inputs broadcast
    against each other: each term is summed back to its input's shape."""
    verify_grad = _verify_grad()
    build, domains, wrt = SMOOTH[name]
    n = len(domains)
    shapes = [(3, 4)] if n == 1 else [(3, 1), (1, 4), (3, 4)][:n]
    rng = np.random.default_rng(11)
    values = [rng.uniform(lo, hi, size=shape) for (_, lo, hi), shape in zip(domains, shapes)]
    wrt = list(range(n)) if wrt is None else wrt

    def fun(*xs):
        given = dict(zip(wrt, xs))
        return build(*(given[k] if k in given else pt.constant(values[k]) for k in range(n)))

    verify_grad(fun, [values[k] for k in wrt], rng=rng)


# --- edge points -------------------------------------------------------------------------

# name: (build, inputs, expected gradient of each input: values, "fd" (finite differences) or
# "skip"; None: all "fd")
EDGES = {
    "abs_at_0": (pt.abs, [[0.0, -0.0]], [[0.0, 0.0]]),
    "i1_at_0": (pt.i1, [[0.0, 1e-300]], [[0.5, 0.5]]),
    "j1_at_0": (pt.j1, [[0.0, -1e-300]], [[0.5, 0.5]]),
    "i0_at_0": (pt.i0, [[0.0]], [[0.0]]),
    "j0_at_0": (pt.j0, [[0.0]], [[0.0]]),
    "sqrt_large": (pt.sqrt, [[1e6, 1e12]], [[0.5e-3, 0.5e-6]]),
    "log_large_small": (pt.log, [[1e-8, 1e8]], [[1e8, 1e-8]]),
    "log1p_tiny": (pt.log1p, [[1e-12, -1e-12]], [[1 / (1 + 1e-12), 1 / (1 - 1e-12)]]),
    "expm1_tiny": (pt.expm1, [[1e-12, 0.0]], [[np.exp(1e-12), 1.0]]),
    "exp_very_negative": (pt.exp, [[-700.0, -800.0]], [[np.exp(-700.0), 0.0]]),
    "sigmoid_large": (pt.sigmoid, [[-40.0, 40.0, 800.0]], [[sp.expit(-40.0), sp.expit(-40.0), 0.0]]),
    "sigmoid_very_large": (pt.sigmoid, [[-700.0, 700.0]], [[np.exp(-700.0), np.exp(-700.0)]]),
    "softplus_large": (pt.softplus, [[-50.0, 50.0, 1000.0]], [[sp.expit(-50.0), 1.0, 1.0]]),
    "tanh_large": (pt.tanh, [[20.0, -20.0]], [[0.0, 0.0]]),
    "erfcx_large": (pt.erfcx, [[1e3, 30.0]], None),
    "erfcx_very_negative": (pt.erfcx, [[-20.0]], [[-40.0 * sp.erfcx(-20.0) - 2 / np.sqrt(np.pi)]]),
    "erf_large": (pt.erf, [[30.0, -30.0]], [[0.0, 0.0]]),
    "log1mexp_at_0": (pt.log1mexp, [[0.0, -1e-10]], [[-np.inf, -1 / np.expm1(1e-10)]]),
    "xlogx_small": (pt.xlogx, [[1e-10, 1.0]], [[np.log(1e-10) + 1, 1.0]]),
    # where x == 0, xlogy0 is 0 for every y: d/dy is 0 (even at y == 0)
    "xlogy0_x0": (pt.xlogy0, [[0.0, 0.0], [2.0, 0.0]], [[np.log(2.0), -np.inf], [0.0, 0.0]]),
    # P(k, 0) = 0 for every k > 0
    "gammainc_x0": (pt.gammainc, [[1.0, 3.0], [0.0, 0.0]], [[0.0, 0.0], [1.0, 0.0]]),
    "gammaincc_x0": (pt.gammaincc, [[1.0, 3.0], [0.0, 0.0]], [[0.0, 0.0], [-1.0, 0.0]]),
    # P(k, x) -> 1 as x grows: every derivative vanishes
    "gammainc_x_large": (pt.gammainc, [[2.0, 0.5], [800.0, np.inf]], [[0.0, 0.0], [0.0, 0.0]]),
    # P(0, x) = 1 for x > 0 and d/dk P(0, x) = -E1(x)
    "gammainc_k0": (pt.gammainc, [[0.0, 0.0], [0.5, 3.0]], [[-sp.exp1(0.5), -sp.exp1(3.0)], "skip"]),
    # I_x(1, 1) = x, I_x(1, 2) = 1 - (1 - x)**2, I_x(2, 1) = x**2; I_0 = 0 and I_1 = 1 for
    # every a, b
    "betainc_ends": (
        pt.betainc,
        [[1.0, 1.0, 2.0], [1.0, 2.0, 1.0], [0.0] * 3],
        [[0.0] * 3, [0.0] * 3, [1.0, 2.0, 0.0]],
    ),
    "betainc_at_1": (pt.betainc, [[1.0, 2.5], [1.0, 0.5], [1.0, 1.0]], [[0.0, 0.0], [0.0, 0.0], "skip"]),
    # I_x(a, 1) = x**a: d/da = x**a log x; I_x(1, b) = 1 - (1-x)**b: d/db = -(1-x)**b log(1-x)
    "betainc_b_is_1": (
        pt.betainc,
        [[2.5, 0.7], [1.0, 1.0], [0.3, 0.6]],
        [[0.3**2.5 * np.log(0.3), 0.6**0.7 * np.log(0.6)], "fd", "fd"],
    ),
    "betainc_a_is_1": (
        pt.betainc,
        [[1.0, 1.0], [3.5, 0.4], [0.3, 0.6]],
        ["fd", [-(0.7**3.5) * np.log(0.7), -(0.4**0.4) * np.log(0.4)], "fd"],
    ),
    # ties: the first input gets the gradient (PyTensor's rule)
    "maximum_tie": (pt.maximum, [[1.0, -2.0], [1.0, -2.0]], [[1.0, 1.0], [0.0, 0.0]]),
    "minimum_tie": (pt.minimum, [[1.0, -2.0], [1.0, -2.0]], [[1.0, 1.0], [0.0, 0.0]]),
    "maximum_nan": (pt.maximum, [[np.nan, 1.0], [1.0, np.nan]], [[0.0, 0.0], [1.0, 1.0]]),
    "relu_at_0": (lambda a: pt.maximum(a, 0.0), [[0.0, -1.0, 1.0]], [[1.0, 0.0, 1.0]]),
    # clip: a gets it inside [lo, hi], bounds included; lo / hi where a is clipped
    "clip_bounds": (
        pt.clip,
        [[-1.0, 1.0, -5.0, 5.0, 0.0], [-1.0] * 5, [1.0] * 5],
        [[1.0, 1.0, 0.0, 0.0, 1.0], [0.0, 0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0, 0.0]],
    ),
    # lo > hi: the result is hi (minimum(maximum(a, lo), hi))
    "clip_empty": (pt.clip, [[0.0, 5.0], [2.0, 2.0], [1.0, 1.0]], [[0.0, 0.0], [0.0, 0.0], [1.0, 1.0]]),
    "pow_base_0": (lambda a, b: a**b, [[0.0, 0.0], [2.0, 3.0]], [[0.0, 0.0], [0.0, 0.0]]),
    "pow_negative_base": (lambda a, b: a**b, [[-2.0, -3.0], [2.0, 3.0]], [[-4.0, 27.0], "skip"]),
    "switch_nan_branch": (
        lambda c, a, b: pt.switch(pt.gt(c, 0), a, b),
        [[1.0, -1.0], [np.nan, 2.0], [3.0, np.nan]],
        [[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]],
    ),
    "arcsin_near_1": (pt.arcsin, [[1 - 1e-10]], [[1 / np.sqrt((1e-10) * (2 - 1e-10))]]),
    "arccosh_near_1": (pt.arccosh, [[1 + 1e-10]], [[1 / np.sqrt(1e-10 * (2 + 1e-10))]]),
}


@pytest.mark.parametrize("name", sorted(EDGES))
def test_grad_edge_points(name):
    build, values, expected = EDGES[name]
    values = [np.asarray(v, dtype="float64") for v in values]
    expected = expected or ["fd"] * len(values)
    wrt = [k for k, e in enumerate(expected) if not (isinstance(e, str) and e == "skip")]
    sym = symbolic_grads(build, values, ["float64"] * len(values), wrt)
    for k in wrt:
        want = expected[k]
        if isinstance(want, str):
            want = numeric_grads(build, values, [k])[k]
        np.testing.assert_allclose(sym[k], want, rtol=1e-6, atol=0, err_msg=f"input {k}")


# --- integer-valued outputs: zero gradients ----------------------------------------------

ZERO = {
    "floor": pt.floor,
    "ceil": pt.ceil,
    "trunc": pt.trunc,
    "round_half_to_even": pt.round_half_to_even,
    "round_half_away_from_zero": pt.round_half_away_from_zero,
    "sign": pt.sign,
    "int_div": lambda a: pt.int_div(a, 0.7),
    "int_div_rhs": lambda a: pt.int_div(2.5, a),
    "isnan": lambda a: pt.cast(pt.isnan(a), "float64"),
    "isinf": lambda a: pt.cast(pt.isinf(a), "float64"),
    "eq": lambda a: pt.cast(pt.eq(a, 0.5), "float64"),
    "neq": lambda a: pt.cast(pt.neq(a, 0.5), "float64"),
    "lt": lambda a: pt.cast(pt.lt(a, 0.5), "float64"),
    "le": lambda a: pt.cast(pt.le(a, 0.5), "float64"),
    "gt": lambda a: pt.cast(pt.gt(a, 0.5), "float64"),
    "ge": lambda a: pt.cast(pt.ge(a, 0.5), "float64"),
    "comparison_rhs": lambda a: pt.cast(pt.lt(0.5, a), "float64"),
    "cast_to_int": lambda a: pt.cast(pt.cast(a, "int32"), "float64"),
    "cast_to_bool": lambda a: pt.cast(pt.cast(a, "bool"), "float64"),
    "switch_condition": lambda a: pt.switch(a, 1.0, 2.0),
    "angle_of_real": pt.angle,
    "imag_of_real": pt.imag,
}


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", sorted(ZERO))
def test_integer_valued_outputs_have_zero_gradient(name, dtype):
    x = pt.vector("x", dtype=dtype)
    g = grad(pt.sum(ZERO[name](x)), x)
    assert g.type.dtype == dtype and g.type.ndim == 1
    value = np.array([-2.3, -0.4, 0.0, 0.6, 3.5], dtype=dtype)
    np.testing.assert_array_equal(g.eval({x: value}), np.zeros(5, dtype))


@pytest.mark.parametrize(
    "build",
    [
        lambda a, b: a + b,
        lambda a, b: a * b,
        lambda a, b: a - b,
        lambda a, b: a // b,
        lambda a, b: a % b,
        lambda a, b: a**b,
        pt.maximum,
        pt.minimum,
        lambda a, b: pt.clip(a, b, 10),
        lambda a, b: pt.switch(a, a, b),
        lambda a, b: -a + pt.abs(b),
        lambda a, b: pt.sqr(a) + pt.identity(b),
        lambda a, b: pt.conj(a) + pt.real(b),
    ],
)
def test_integer_arithmetic_has_zero_gradient(build):
    a, b = pt.ivector("a"), pt.ivector("b")
    out = build(a, b)
    assert out.type.dtype.startswith(("int", "uint"))
    ga, gb = grad(pt.sum(pt.cast(out, "float64")), [a, b])
    for g in (ga, gb):
        assert g.type.dtype == config.floatX
    values = {a: np.array([3, -2, 5], "int32"), b: np.array([2, 3, 1], "int32")}
    for g in (ga, gb):
        np.testing.assert_array_equal(g.eval({v: values[v] for v in _inputs_of(g)}), np.zeros(3))


def test_sign_and_int_div_zero_at_jumps():
    x = pt.dvector("x")
    g = grad(pt.sum(pt.sign(x) + pt.floor(x) + x // 1.0), x)
    np.testing.assert_array_equal(g.eval({x: np.array([0.0, 1.0, -1.0])}), np.zeros(3))


# --- integer inputs of real functions: the gradient is the real one ----------------------

INT_INPUT = {
    "exp": (pt.exp, np.exp),  # exp(100) overflows float32 (the result of exp(int8)): inf is right
    "sqrt": (pt.sqrt, lambda v: 0.5 / np.sqrt(v)),
    "log": (pt.log, lambda v: 1 / v),
    "sin": (pt.sin, np.cos),
    "arctan": (pt.arctan, lambda v: 1 / (1 + v * v)),
    "reciprocal": (pt.reciprocal, lambda v: -1 / (v * v)),
    "sigmoid": (pt.sigmoid, lambda v: sp.expit(v) * sp.expit(-v)),
    "erf": (pt.erf, lambda v: 2 / np.sqrt(np.pi) * np.exp(-v * v)),
    "gammaln": (pt.gammaln, sp.psi),
    "true_div_by_int": (lambda a: 3.0 / a, lambda v: -3.0 / (v * v)),
    "int_over_int": (lambda a: a / pt.constant(np.int8(3)), lambda v: np.full_like(v, 1 / 3)),
    "mul_float": (lambda a: a * 2.5, lambda v: np.full_like(v, 2.5)),
    "pow_float_exponent": (lambda a: a**1.5, lambda v: 1.5 * v**0.5),
    "float_pow_int": (lambda a: 1.5**a, lambda v: np.log(1.5) * 1.5**v),
    "cast_to_float": (lambda a: pt.cast(a, "float64") * 0.5, lambda v: np.full_like(v, 0.5)),
    "arctan2": (lambda a: pt.arctan2(a, 2), lambda v: 2 / (v * v + 4)),
    "switch_branch": (lambda a: pt.switch(pt.gt(a, 5), a * 1.0, 0.0), lambda v: (v > 5).astype(float)),
}


@pytest.mark.parametrize("dtype", ["int8", "int32", "uint8", "int64"])
@pytest.mark.parametrize("name", sorted(INT_INPUT))
def test_integer_inputs_get_the_real_gradient(name, dtype):
    build, deriv = INT_INPUT[name]
    x = pt.vector("x", dtype=dtype)
    g = grad(pt.sum(build(x)), x)
    assert g.type.dtype == config.floatX
    # 100 * 100 overflows int8: the rules must not compute polynomials in the input's dtype
    value = np.array([1, 2, 7, 100], dtype=dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # exp(100) overflows float32
        want = deriv(value.astype("float64"))
        if np.dtype(dtype).itemsize <= 2:  # computed in float32
            want = want.astype("float32")
        got = g.eval({x: value})
    # wider ints compute in float64 (with float32 constants, as 1.5)
    narrow = np.dtype(dtype).itemsize <= 2
    np.testing.assert_allclose(got, want, rtol=1e-5 if narrow else 1e-7, atol=1e-40 if narrow else 0)


# --- bitwise ops: zero gradients (as PyTensor) -------------------------------------------

BITWISE = {
    "and_": lambda a, b: pt.and_(a, b),
    "or_": lambda a, b: pt.or_(a, b),
    "xor": lambda a, b: pt.xor(a, b),
    "invert": lambda a, b: pt.invert(a) + b,
}


@pytest.mark.parametrize("name", sorted(BITWISE))
@pytest.mark.parametrize("dtype", ["int32", "bool"])
def test_bitwise_gradients_are_zero(name, dtype):
    a, b = pt.vector("a", dtype=dtype), pt.vector("b", dtype=dtype)
    cost = pt.sum(pt.cast(BITWISE[name](a, b), "float64"))
    g = grad(cost, a)
    value = np.array([1, 0, 1], dtype=dtype)
    np.testing.assert_array_equal(g.eval({a: value, b: value}, on_unused_input="ignore"), [0.0, 0.0, 0.0])


def test_mask_built_with_and_is_differentiable():
    x = pt.dvector("x")
    cost = pt.sum(pt.switch(pt.and_(pt.gt(x, 0), pt.lt(x, 1)), x * x, 0))
    g = grad(cost, x)
    np.testing.assert_allclose(g.eval({x: np.array([-1.0, 0.5, 2.0])}), [0.0, 1.0, 0.0])


# --- not implemented ---------------------------------------------------------------------

# second derivatives in the shape parameters (no closed form)
NOT_IMPLEMENTED = {
    "gammainc_grad_k": (pt.gammainc_grad, 0, "second derivative in k"),
    "gammaincc_grad_k": (pt.gammaincc_grad, 0, "second derivative in k"),
    "betainc_grad_a_a": (lambda a, b: pt.betainc_grad_a(a, b, 0.5), 0, "shape parameters"),
    "betainc_grad_a_b": (lambda a, b: pt.betainc_grad_a(a, b, 0.5), 1, "shape parameters"),
    "betainc_grad_b_a": (lambda a, b: pt.betainc_grad_b(a, b, 0.5), 0, "shape parameters"),
    "betainc_grad_b_b": (lambda a, b: pt.betainc_grad_b(a, b, 0.5), 1, "shape parameters"),
    "gammainc_k_twice": (lambda k, x: grad(pt.sum(pt.gammainc(k, x)), k), 0, "second derivative in k"),
}


@pytest.mark.parametrize("name", sorted(NOT_IMPLEMENTED))
def test_not_implemented_gradients(name):
    build, k, why = NOT_IMPLEMENTED[name]
    xs = [pt.dvector("a"), pt.dvector("b")]
    cost = pt.sum(build(*xs))
    with pytest.raises(NullTypeGradError, match="not implemented"):
        grad(cost, xs[k])
    g = grad(cost, xs[k], null_gradients="return")
    assert isinstance(g.type, NullType) and why in g.type.why_null


def test_gradient_wrt_the_other_input_is_still_there():
    k, x = pt.dvector("k"), pt.dvector("x")
    g = grad(pt.sum(pt.gammainc(k, x)), x)
    kv, xv = np.array([2.0, 3.5]), np.array([1.0, 2.0])
    want = np.exp(-xv + (kv - 1) * np.log(xv) - sp.gammaln(kv))
    np.testing.assert_allclose(g.eval({k: kv, x: xv}), want, rtol=1e-12)


# --- second, identity, cast --------------------------------------------------------------


def test_second_first_input_is_disconnected():
    x, y = pt.dvector("x"), pt.dvector("y")
    cost = pt.sum(pt.second(x, y))
    with pytest.raises(DisconnectedInputError):
        grad(cost, x)
    assert ps.second.connection_pattern(None) == [[False], [True]]


def test_second_broadcasts_and_sums_back():
    x, y = pt.dmatrix("x"), pt.dscalar("y")
    g = grad(pt.sum(pt.second(x, y)), y)
    assert float(g.eval({x: np.zeros((3, 4)), y: 2.0})) == 12.0


def test_second_integer_value_gets_zero():
    x, y = pt.dvector("x"), pt.ivector("y")
    g = grad(pt.sum(pt.cast(pt.second(x, y), "float64")), y)
    np.testing.assert_array_equal(g.eval({y: np.array([1, 2], "int32")}), [0.0, 0.0])


@pytest.mark.parametrize(
    ("src", "dst"), [("float64", "float32"), ("float32", "float64"), ("int16", "float32")]
)
def test_cast_gradient_in_the_input_precision(src, dst):
    x = pt.vector("x", dtype=src)
    g = grad(pt.sum(pt.cast(x, dst) * 3), x)
    assert g.type.dtype == (src if src.startswith("float") else config.floatX)
    np.testing.assert_array_equal(g.eval({x: np.array([1, 2], dtype=src)}), [3.0, 3.0])


def test_scalar_rules_keep_float32():
    # constants in the rules are of the input's precision: no float64 creeps in
    x, g = ps.float32("x"), ps.float32("g")
    for op in (ps.exp2, ps.log10, ps.deg2rad, ps.sqrt, ps.erf, ps.erfcinv, ps.log1mexp, ps.i1, ps.tri_gamma):
        (term,) = op.grad([x], [g])
        assert term.type.dtype == "float32", op
    for op in (ps.gammainc, ps.gammaincc):
        assert [t.type.dtype for t in op.grad([x, x], [g])] == ["float32"] * 2, op
    assert [t.type.dtype for t in ps.betainc.grad([x, x, x], [g])] == ["float32"] * 3


# --- complex numbers ---------------------------------------------------------------------
# a real cost of real inputs through complex intermediates: finite differences check the
# convention (the gradient with respect to z is dC/dRe z + 1j dC/dIm z) end to end


def _through(f, wr=1.3, wi=-0.7):
    def build(x, y):
        w = f(pt.complex(x, y))
        if w.type.dtype.startswith("complex"):
            return pt.real(w) * wr + pt.imag(w) * wi
        return w

    return build


COMPLEX = {
    "complex_real": _through(pt.real),
    "complex_imag": _through(pt.imag),
    "complex_parts": _through(lambda z: z),
    "abs": _through(pt.abs),
    "angle": _through(pt.angle),
    "conj": _through(pt.conj),
    "neg": _through(pt.neg),
    "add_real": _through(lambda z: z + 2.0),
    "mul": _through(lambda z: z * z),
    "mul_const": _through(lambda z: z * pt.complex(0.3, -1.2)),
    "true_div": _through(lambda z: 1.5 / (z + 3.0)),
    "true_div_num": _through(lambda z: z / pt.complex(0.3, -1.2)),
    "pow": _through(lambda z: z**3),
    "sqr": _through(pt.sqr),
    "sqrt": _through(pt.sqrt),
    "reciprocal": _through(pt.reciprocal),
    "exp": _through(pt.exp),
    "exp2": _through(pt.exp2),
    "expm1": _through(pt.expm1),
    "log": _through(pt.log),
    "log2": _through(pt.log2),
    "log10": _through(pt.log10),
    "log1p": _through(pt.log1p),
    "sin": _through(pt.sin),
    "cos": _through(pt.cos),
    "tan": _through(pt.tan),
    "arcsin": _through(pt.arcsin),
    "arccos": _through(pt.arccos),
    "arctan": _through(pt.arctan),
    "sinh": _through(pt.sinh),
    "cosh": _through(pt.cosh),
    "tanh": _through(pt.tanh),
    "arcsinh": _through(pt.arcsinh),
    "arccosh": _through(pt.arccosh),
    "arctanh": _through(pt.arctanh),
    "erf": _through(pt.erf),
    "erfc": _through(pt.erfc),
    "gamma": _through(pt.gamma),
    "xlogx": _through(pt.xlogx),
    "cast_complex": _through(lambda z: pt.cast(z, "complex64")),
    "abs_of_exp": _through(lambda z: pt.abs(pt.exp(z))),
    "identity": _through(pt.identity),
}


@pytest.mark.parametrize("name", sorted(COMPLEX))
def test_complex_gradients(name):
    rng = np.random.default_rng(3)
    values = [
        rng.uniform(0.3, 1.5, N) * rng.choice([-1, 1], N),
        rng.uniform(0.3, 1.5, N) * rng.choice([-1, 1], N),
    ]
    # the finite difference of a complex64 cast sees its rounding
    rtol = 2e-3 if name == "cast_complex" else 1e-7
    check_grad(COMPLEX[name], values, rtol=rtol, atol=1e-5 if name == "cast_complex" else None)


def test_complex_from_polar_gradient():
    def build(r, theta):
        z = pt.complex_from_polar(r, theta)
        return pt.real(z) * 1.3 - pt.imag(z) * 0.4

    rng = np.random.default_rng(4)
    check_grad(build, [rng.uniform(0.2, 3, N), rng.uniform(-3, 3, N)])


def test_real_input_of_complex_ops_gets_a_real_gradient():
    x = pt.dvector("x")
    for f in (lambda v: pt.abs(v * pt.complex(1.0, 2.0)), lambda v: pt.real(pt.cast(v, "complex128") ** 2)):
        g = grad(pt.sum(f(x)), x)
        assert g.type.dtype == "float64"
    g = grad(pt.sum(pt.real(x) + pt.conj(x)), x)
    np.testing.assert_array_equal(g.eval({x: np.array([1.0, -2.0])}), [2.0, 2.0])


def test_abs_and_angle_of_complex_zero():
    x, y = pt.dvector("x"), pt.dvector("y")
    z = pt.complex(x, y)
    gx, gy = grad(pt.sum(pt.abs(z) + pt.angle(z)), [x, y])
    zero = {x: np.zeros(2), y: np.zeros(2)}
    np.testing.assert_array_equal(gx.eval(zero), [0.0, 0.0])
    np.testing.assert_array_equal(gy.eval(zero), [0.0, 0.0])


def test_psi_of_complex_is_not_implemented():
    x, y = pt.dvector("x"), pt.dvector("y")
    with pytest.raises(NullTypeGradError, match="complex"):
        grad(pt.sum(pt.real(pt.psi(pt.complex(x, y)))), x)


# --- Composite ---------------------------------------------------------------------------


def _fused(build, n, dtypes=None):
    """``build`` on scalars as one Composite."""
    dtypes = dtypes or ["float64"] * n
    s_in = [ps.scalar(f"s{k}", dtype=d) for k, d in enumerate(dtypes)]
    s_out = build(*s_in)
    comp = Composite(s_in, s_out if isinstance(s_out, list) else [s_out])
    return comp


COMPOSITES = {
    "poly": (lambda a, b: a * a * b + ps.exp(a) / (b + 3.0), 2),
    "shared_subexpression": (lambda a, b: ps.sin(a * b) * ps.cos(a * b) + a * b, 2),
    "special": (lambda a: ps.sigmoid(a) * ps.softplus(-a) + ps.erf(a) * ps.tanh(a), 1),
    "maximum_clip": (lambda a, b: ps.maximum(a, b) * ps.clip(a, -0.5, 0.5) + ps.minimum(a * 2, b), 2),
    "switch": (lambda a, b: ps.switch(ps.gt(a, b), a * b, ps.sqr(b)), 2),
    "integer_step": (lambda a, b: ps.floor(a) * b + ps.cast(ps.cast(a * 10, "int32"), "float64") * a, 2),
    "second_disconnects": (lambda a, b: a + ps.second(b, 2.0) * a, 2),
    "pow_log": (lambda a, b: ps.pow(ps.abs(a) + 0.5, b) + ps.log1p(ps.abs(b)), 2),
    "arctan2": (lambda a, b: ps.arctan2(a, ps.abs(b) + 0.5), 2),
    "three_inputs": (
        lambda a, b, c: (
            ps.betainc(2.5, 1.5, ps.sigmoid(c * a)) * b + ps.gammainc(3.0, ps.sqr(b) + ps.sqr(c) + 0.1)
        ),
        3,
    ),
    "nested": (
        lambda a, b: (
            Composite([t := ps.float64("t"), u := ps.float64("u")], [ps.exp(t) * u + ps.sqr(t)])(
                a * 0.5, b - a
            )
            * a
        ),
        2,
    ),
}


def _apply(comp, xs):
    return Elemwise(comp)(*xs, return_list=True)


@pytest.mark.parametrize("name", sorted(COMPOSITES))
def test_composite_gradient_equals_unfused(name):
    build, n = COMPOSITES[name]
    comp = _fused(build, n)
    rng = np.random.default_rng(5)
    values = [rng.uniform(-2, 2, N) for _ in range(n)]
    xs = [pt.dvector(f"x{k}") for k in range(n)]
    ys = [pt.dvector(f"y{k}") for k in range(n)]
    # the unfused graph: the same scalar body, replayed op by op on tensors
    unfused = _unfuse(comp, ys)
    g_fused = grad(pt.sum(_apply(comp, xs)[0]), xs, disconnected_inputs="ignore")
    g_unfused = grad(pt.sum(unfused[0]), ys, disconnected_inputs="ignore")
    for gf, gu in zip(g_fused, g_unfused):
        vf = _ev(gf, dict(zip(xs, values)))
        vu = _ev(gu, dict(zip(ys, values)))
        np.testing.assert_allclose(vf, vu, rtol=1e-12, atol=1e-14)
    # and both match finite differences
    check_grad(lambda *t: _apply(comp, t)[0], values, wrt=[0] if name == "second_disconnects" else None)


def _ev(v, values):
    """``v.eval`` given every input's value (a gradient graph may not use them all)."""
    return np.broadcast_to(v.eval(values, on_unused_input="ignore"), next(iter(values.values())).shape)


def _unfuse(comp, ys):
    env = dict(zip(comp.inner_inputs, ys))
    for node in comp.fgraph.toposort():
        args = [env[v] if v in env else pt.constant(v.data, dtype=v.type.dtype) for v in node.inputs]
        outs = Elemwise(node.op)(*args, return_list=True)
        env.update(zip(node.outputs, outs))
    return [env[o] for o in comp.inner_outputs]


def test_composite_gradient_is_scalar_ops_only():
    build, n = COMPOSITES["maximum_clip"]
    comp = _fused(build, n)
    s_in = [ps.float64("a"), ps.float64("b")]
    g = ps.float64("g")
    terms = comp.grad(s_in, [g])
    nodes = io_toposort([*s_in, g], terms)
    assert nodes and all(isinstance(node.op, ps.ScalarOp) for node in nodes)
    leaves = {i for node in nodes for i in node.inputs if i.owner is None}
    assert all(v in (*s_in, g) or isinstance(v, Constant) for v in leaves)


def test_composite_multiple_outputs_one_used():
    a, b = ps.float64("a"), ps.float64("b")
    comp = Composite([a, b], [ps.exp(a) * b, ps.sin(b)])
    x, y = pt.dvector("x"), pt.dvector("y")
    out0, out1 = _apply(comp, [x, y])
    # only the first output: b gets exp(a), a gets exp(a) * b
    gx, gy = grad(pt.sum(out0), [x, y])
    v = {x: np.array([0.5, -1.0]), y: np.array([2.0, 3.0])}
    np.testing.assert_allclose(_ev(gx, v), np.exp(v[x]) * v[y])
    np.testing.assert_allclose(_ev(gy, v), np.exp(v[x]))
    # only the second: a is disconnected
    with pytest.raises(DisconnectedInputError):
        grad(pt.sum(out1), x)
    np.testing.assert_allclose(_ev(grad(pt.sum(out1), y), v), np.cos(v[y]))
    # both
    gx, gy = grad(pt.sum(out0) + 2 * pt.sum(out1), [x, y])
    np.testing.assert_allclose(_ev(gy, v), np.exp(v[x]) + 2 * np.cos(v[y]))


def test_composite_disconnected_and_connection_pattern():
    a, b, c = ps.float64("a"), ps.float64("b"), ps.float64("c")
    comp = Composite([a, b, c], [ps.second(a, b) * 2.0, ps.exp(c)])
    node = comp.make_node(a, b, c)
    assert comp.connection_pattern(node) == [[False, False], [True, False], [False, True]]
    terms = comp.grad([a, b, c], [ps.float64("g"), disconnected_type()])
    assert [type(t.type).__name__ for t in terms] == ["DisconnectedType", "ScalarType", "DisconnectedType"]


def test_composite_same_input_twice():
    a, b = ps.float64("a"), ps.float64("b")
    comp = Composite([a, b], [a * ps.sqr(b)])
    x = ps.float64("x")
    g = ps.float64("g")
    ga, gb = comp.grad([x, x], [g])
    from arignote.scalar.composite import Composite as C

    f = C([x, g], [ga, gb])
    np.testing.assert_allclose(f.impl(3.0, 1.0), (9.0, 18.0))


def test_composite_integer_input_and_output():
    # an int input cast to float gets the real gradient; through the integer-valued a * 2
    # (or a + 1) it gets none
    a, b = ps.int32("a"), ps.float64("b")
    comp = Composite([a, b], [ps.cast(a, "float64") * b * 2 + ps.cast(a * 2, "float64") * b, a + 1])
    x, y = pt.ivector("x"), pt.dvector("y")
    out0, out1 = _apply(comp, [x, y])
    gx, gy = grad(pt.sum(out0) + pt.sum(pt.cast(out1, "float64")), [x, y])
    v = {x: np.array([1, -3], "int32"), y: np.array([0.5, 2.0])}
    assert gx.type.dtype == config.floatX
    np.testing.assert_allclose(_ev(gx, v), 2 * v[y])  # through the float cast: as if real
    np.testing.assert_allclose(_ev(gy, v), 4 * v[x])


def test_composite_not_implemented_inside():
    a, b = ps.float64("a"), ps.float64("b")
    comp = Composite([a, b], [ps.gammainc_grad(ps.exp(a), 2.0) + b])
    x, y = pt.dvector("x"), pt.dvector("y")
    (out,) = _apply(comp, [x, y])
    with pytest.raises(NullTypeGradError, match="second derivative in k"):
        grad(pt.sum(out), x)
    np.testing.assert_allclose(_ev(grad(pt.sum(out), y), {x: np.ones(2), y: np.ones(2)}), [1.0, 1.0])


def test_composite_bitwise_mask_inside():
    # an integer-valued variable passes a zero gradient whatever reaches it, so the
    # undefined gradient of and_ stops at the comparisons
    a = ps.float64("a")
    comp = Composite([a], [ps.switch(ps.and_(ps.gt(a, 0), ps.lt(a, 1)), a * a, 0.0)])
    x = pt.dvector("x")
    g = grad(pt.sum(_apply(comp, [x])[0]), x)
    np.testing.assert_allclose(g.eval({x: np.array([-1.0, 0.5, 2.0])}), [0.0, 1.0, 0.0])


def test_composite_float32():
    comps = {d: _fused(COMPOSITES["special"][0], 1, [d]) for d in ("float32", "float64")}
    rng = np.random.default_rng(6)
    check_grad(lambda t: _apply(comps[t.type.dtype], [t])[0], [rng.uniform(-3, 3, N)], "float32")


def test_composite_gradient_of_gradient():
    # a second derivative: the gradient graph of a Composite is differentiable too
    a = ps.float64("a")
    comp = Composite([a], [ps.sin(a) * ps.exp(a)])
    x = pt.dvector("x")
    (g,) = grad(pt.sum(_apply(comp, [x])[0]), [x])
    (h,) = grad(pt.sum(g), [x])
    v = np.array([0.3, -1.2])
    np.testing.assert_allclose(h.eval({x: v}), 2 * np.cos(v) * np.exp(v), rtol=1e-12)


# --- second derivatives of the rules themselves ------------------------------------------

SECOND = {
    "tanh": (pt.tanh, lambda v: -2 * np.tanh(v) * (1 - np.tanh(v) ** 2)),
    "sigmoid": (pt.sigmoid, lambda v: sp.expit(v) * (1 - sp.expit(v)) * (1 - 2 * sp.expit(v))),
    "softplus": (pt.softplus, lambda v: sp.expit(v) * (1 - sp.expit(v))),
    "gammaln": (pt.gammaln, lambda v: sp.polygamma(1, v)),
    "psi": (pt.psi, lambda v: sp.polygamma(2, v)),
    "tri_gamma": (pt.tri_gamma, lambda v: sp.polygamma(3, v)),
    "clip": (lambda a: pt.clip(a, -1, 1) * a, lambda v: np.where(np.abs(v) <= 1, 2.0, 0.0)),
    "maximum": (lambda a: pt.maximum(a, 0) ** 2, lambda v: np.where(v >= 0, 2.0, 0.0)),
    "abs": (lambda a: pt.abs(a) * a, lambda v: 2 * np.sign(v)),
    "i1": (pt.i1, lambda v: sp.i1(v) - sp.i0(v) / v + 2 * sp.i1(v) / v**2),
}


@pytest.mark.parametrize("name", sorted(SECOND))
def test_second_derivatives(name):
    build, want = SECOND[name]
    x = pt.dvector("x")
    (g,) = grad(pt.sum(build(x)), [x])
    (h,) = grad(pt.sum(g), [x])
    v = np.array([0.3, -1.7, 2.4, 0.9])
    np.testing.assert_allclose(h.eval({x: v}), want(v), rtol=1e-10, atol=1e-12)


def test_every_scalar_op_has_a_rule():
    """No scalar op of arignote.scalar (basic.py and the special function homes) falls back to Op.grad's
    "no gradient" error."""
    import arignote.scalar.basic as psb
    import arignote.scalar.math as psm
    from arignote.graph.op import Op

    ops = {v for m in (psb, psm) for v in vars(m).values() if isinstance(v, ps.ScalarOp)}
    assert len(ops) > 90
    missing = [
        str(op)
        for op in ops
        if all(getattr(type(op), r) is getattr(Op, r) for r in ("grad", "L_op", "pullback"))
    ]
    assert missing == []


def test_verify_grad_agrees_when_available():
    verify_grad = _verify_grad()
    rng = np.random.default_rng(8)
    for f, lo, hi in ((pt.arctanh, -0.9, 0.9), (pt.erfcx, -1, 3), (pt.i1, -3, 3), (pt.xlogx, 0.1, 3)):
        verify_grad(f, [rng.uniform(lo, hi, (3, 2))], rng=rng)
    verify_grad(
        lambda a, b: pt.arctan2(a, b) * pt.maximum(a, b),
        [rng.uniform(0.5, 2, 4), rng.uniform(-2, -0.5, 4)],
        rng=rng,
    )
