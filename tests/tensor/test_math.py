"""``arignote.tensor.math`` against NumPy/SciPy: every scalar op as an elementwise function
over dtypes, shapes (0-d, empty, broadcast) and static/unknown shapes; the reductions
(sum, prod, max, min, all, any, argmax/argmin, mean, var, std, logsumexp) with their
dtypes, axes and keepdims; ``switch``, ``clip``, ``isnan``/``isinf``, ``isclose``/
``allclose`` and ``cast``; and the errors for bad input.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import scipy.special as sp

import arignote.scalar as ps
import arignote.tensor as pt
from arignote.configdefaults import config
from arignote.tensor.math import Argmax, Argmin, Max, Prod, Sum
from tests.tensor.utils import assert_infer_shape

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

rng = np.random.default_rng(2024)

_INT_TO_FLOAT = {"bool": "float32", "int8": "float32", "uint8": "float32", "int16": "float32"}


def upgrade_to_float(dtype: str) -> str:
    """PyTensor's rule (measured): small ints to float32, wider ints to float64."""
    if dtype in _INT_TO_FLOAT:
        return _INT_TO_FLOAT[dtype]
    if dtype in ("int32", "int64", "uint16", "uint32", "uint64"):
        return "float64"
    return dtype


def tensor(dtype: str, shape: tuple, name: str = "x") -> Any:
    return pt.tensor(name, dtype=dtype, shape=shape)


def sample(dtype: str, shape: tuple, lo: float = -2.0, hi: float = 2.0) -> np.ndarray:
    """Random values of ``dtype`` in ``[lo, hi]`` (integers: the integers in that range)."""
    if dtype == "bool":
        return rng.integers(0, 2, size=shape).astype(bool)
    kind = np.dtype(dtype).kind
    if kind in "iu":
        info = np.iinfo(dtype)
        low, high = max(math.ceil(lo), info.min), min(math.floor(hi), info.max)
        high = max(high, low)  # no integer of the dtype in range (uint below 0): the nearest
        return rng.integers(low, high + 1, size=shape).astype(dtype)
    values = rng.uniform(lo, hi, size=shape)
    if kind == "c":
        values = values + 1j * rng.uniform(lo, hi, size=shape)
    return values.astype(dtype)


def tolerance(dtype: str) -> dict[str, float]:
    return {
        "float16": {"rtol": 2e-3, "atol": 2e-3},
        "float32": {"rtol": 2e-5, "atol": 1e-6},
        "complex64": {"rtol": 2e-5, "atol": 1e-6},
    }.get(dtype, {"rtol": 1e-12, "atol": 1e-13})


def assert_matches(got: Any, ref: Any, dtype: str) -> None:
    assert isinstance(got, np.ndarray), type(got)
    assert got.dtype == dtype, (got.dtype, dtype)
    ref = np.asarray(ref)
    assert got.shape == ref.shape
    if np.dtype(dtype).kind in "biu":
        np.testing.assert_array_equal(got, ref.astype(dtype))
    else:
        np.testing.assert_allclose(got, ref, equal_nan=True, **tolerance(dtype))


def reference(fn: Callable, values: list[np.ndarray], out_dtype: str) -> np.ndarray:
    """``fn`` computed by NumPy/SciPy in float64 (or in the output dtype for discrete results)."""
    kind = np.dtype(out_dtype).kind
    with np.errstate(all="ignore"):
        if kind in "fc":
            wide = "complex128" if kind == "c" or any(v.dtype.kind == "c" for v in values) else "float64"
            res = fn(*(v.astype(wide) for v in values))
        else:
            res = fn(*values)
        return np.asarray(res).astype(out_dtype)


# --- unary elementwise functions ------------------------------------------------------------

# name: (reference, lo, hi, kind); kind "float": the float upgrade of the input; "same":
# the input's dtype; "bool": bool; "round": floats only; "nobool": the input's, bool illegal.
UNARY: dict[str, tuple[Callable, float, float, str]] = {
    "neg": (np.negative, -3, 3, "nobool"),
    "abs": (np.abs, -3, 3, "same"),
    "sign": (np.sign, -3, 3, "nobool"),
    "sqr": (np.square, -3, 3, "same"),
    "sqrt": (np.sqrt, 0, 4, "float"),
    "reciprocal": (np.reciprocal, 1, 4, "float"),
    "exp": (np.exp, -3, 3, "float"),
    "exp2": (np.exp2, -3, 3, "float"),
    "expm1": (np.expm1, -3, 3, "float"),
    "log": (np.log, 0.1, 5, "float"),
    "log2": (np.log2, 0.1, 5, "float"),
    "log10": (np.log10, 0.1, 5, "float"),
    "log1p": (np.log1p, -0.9, 5, "float"),
    "sin": (np.sin, -3, 3, "float"),
    "cos": (np.cos, -3, 3, "float"),
    "tan": (np.tan, -1.2, 1.2, "float"),
    "arcsin": (np.arcsin, -1, 1, "float"),
    "arccos": (np.arccos, -1, 1, "float"),
    "arctan": (np.arctan, -3, 3, "float"),
    "sinh": (np.sinh, -3, 3, "float"),
    "cosh": (np.cosh, -3, 3, "float"),
    "tanh": (np.tanh, -3, 3, "float"),
    "arcsinh": (np.arcsinh, -3, 3, "float"),
    "arccosh": (np.arccosh, 1, 4, "float"),
    "arctanh": (np.arctanh, -0.9, 0.9, "float"),
    "deg2rad": (np.deg2rad, -180, 180, "float"),
    "rad2deg": (np.rad2deg, -3, 3, "float"),
    "floor": (np.floor, -3, 3, "float"),
    "ceil": (np.ceil, -3, 3, "float"),
    "trunc": (np.trunc, -3, 3, "float"),
    "round_half_to_even": (np.round, -3, 3, "round"),
    "round_half_away_from_zero": (lambda x: np.sign(x) * np.floor(np.abs(x) + 0.5), -3, 3, "round"),
    "erf": (sp.erf, -2, 2, "float"),
    "erfc": (sp.erfc, -2, 2, "float"),
    "erfcx": (sp.erfcx, -2, 5, "float"),
    "erfinv": (sp.erfinv, -0.9, 0.9, "float"),
    "erfcinv": (sp.erfcinv, 0.1, 1.9, "float"),
    "gamma": (sp.gamma, 0.5, 4, "float"),
    "gammaln": (sp.gammaln, 0.5, 10, "float"),
    "psi": (sp.psi, 0.5, 4, "float"),
    "tri_gamma": (lambda x: sp.polygamma(1, x), 0.5, 4, "float"),
    "sigmoid": (sp.expit, -5, 5, "float"),
    "softplus": (lambda x: np.logaddexp(0, x), -5, 5, "float"),
    "log1mexp": (lambda x: np.log(-np.expm1(x)), -5, -0.1, "float"),
    "xlogx": (lambda x: sp.xlogy(x, x), 0, 3, "float"),
    "i0": (sp.i0, -3, 3, "float"),
    "i1": (sp.i1, -3, 3, "float"),
    "j0": (sp.j0, -3, 3, "float"),
    "j1": (sp.j1, -3, 3, "float"),
    "isnan": (np.isnan, -3, 3, "bool"),
    "isinf": (np.isinf, -3, 3, "bool"),
    "identity": (lambda x: x, -3, 3, "same"),
    "conj": (np.conj, -3, 3, "same"),
    "invert": (np.invert, -5, 5, "bitwise"),
}
UNARY_DTYPES = ["float64", "float32", "float16", "int8", "int64", "uint8", "bool"]


def unary_out_dtype(kind: str, dtype: str) -> str | None:
    """The output dtype, or None where the input dtype is illegal."""
    if kind == "float":
        return upgrade_to_float(dtype)
    if kind == "same":
        return dtype
    if kind == "bool":
        return "bool"
    if kind == "round":
        return dtype if dtype.startswith("float") else None
    if kind == "nobool":
        return None if dtype == "bool" else dtype
    if kind == "bitwise":
        return dtype if np.dtype(dtype).kind in "biu" else None
    raise AssertionError(kind)


@pytest.mark.parametrize("dtype", UNARY_DTYPES)
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_elementwise_matches_numpy(name: str, dtype: str) -> None:
    ref_fn, lo, hi, kind = UNARY[name]
    fn = getattr(pt, name)
    x = tensor(dtype, (None, 3))
    out_dtype = unary_out_dtype(kind, dtype)
    if name == "conj" and dtype == "bool":
        out_dtype = "bool"  # real input is returned itself, as PyTensor's (NumPy's conj: int8)
    if out_dtype is None:
        with pytest.raises(TypeError, match=dtype):
            fn(x)
        return
    out = fn(x)
    assert out.dtype == out_dtype
    assert out.type.shape == (None, 3)
    value = sample(dtype, (4, 3), lo, hi)
    got = out.eval({x: value})
    assert_matches(got, reference(ref_fn, [value], out_dtype), out_dtype)


def test_conj_of_real_input_is_the_input() -> None:
    for dtype in ["bool", "int8", "float32"]:
        x = tensor(dtype, (2, 3))
        assert pt.conj(x) is x and x.conj() is x and pt.math.conjugate(x) is x
    z = tensor("complex64", (3,))
    value = sample("complex64", (3,))
    got = pt.conj(z).eval({z: value})
    assert pt.conj(z).dtype == "complex64"
    assert_matches(got, np.conj(value), "complex64")


@pytest.mark.parametrize("shape", [(), (0,), (0, 3), (2, 0, 1)])
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_elementwise_0d_and_empty(name: str, shape: tuple) -> None:
    ref_fn, lo, hi, kind = UNARY[name]
    dtype = "int64" if kind == "bitwise" else "float64"
    x = tensor(dtype, tuple(None if s != 1 else 1 for s in shape))
    out = getattr(pt, name)(x)
    value = sample(dtype, shape, lo, hi)
    got = out.eval({x: value})
    assert_matches(got, reference(ref_fn, [value], out.dtype), out.dtype)
    if out is not x:  # conj of real input is the input itself: no node to infer
        assert_infer_shape(out, {x: value})


@pytest.mark.parametrize(
    "name", ["exp", "log", "sqrt", "sin", "tanh", "abs", "neg", "conj", "sqr", "reciprocal"]
)
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_unary_elementwise_complex(name: str, dtype: str) -> None:
    x = tensor(dtype, (None,))
    out = getattr(pt, name)(x)
    expected = {"complex64": "float32", "complex128": "float64"}[dtype] if name == "abs" else dtype
    assert out.dtype == expected
    value = sample(dtype, (5,), 0.5, 2)
    ref_fn = UNARY[name][0]
    assert_matches(out.eval({x: value}), reference(ref_fn, [value], expected), expected)


@pytest.mark.parametrize("name", ["real", "imag", "angle"])
def test_complex_parts(name: str) -> None:
    z = tensor("complex128", (None,), "z")
    value = sample("complex128", (5,))
    out = getattr(pt, name)(z)
    assert out.dtype == "float64"
    assert_matches(out.eval({z: value}), getattr(np, name)(value), "float64")
    c = pt.complex(pt.dvector("re"), pt.dvector("im"))
    assert c.dtype == "complex128"
    re, im = sample("float64", (3,)), sample("float64", (3,))
    got = c.eval({c.owner.inputs[0]: re, c.owner.inputs[1]: im})
    assert_matches(got, re + 1j * im, "complex128")
    r, t = pt.fvector("r"), pt.fvector("t")
    polar = pt.complex_from_polar(r, t)
    assert polar.dtype == "complex64"
    rv, tv = sample("float32", (3,), 0, 2), sample("float32", (3,))
    assert_matches(polar.eval({r: rv, t: tv}), rv * np.exp(1j * tv.astype("f8")), "complex64")


def test_real_valued_ops_reject_complex() -> None:
    z = tensor("complex128", (None,), "z")
    for fn in [pt.floor, pt.sigmoid, pt.gammaln, pt.erfinv, pt.sign, pt.round]:
        with pytest.raises(TypeError, match="complex"):
            fn(z)


# --- binary elementwise functions -----------------------------------------------------------

# name: (reference, a range, b range, kind); kind "upcast": NumPy's promotion of the two
# dtypes; "truediv": as upcast but two discrete inputs give floatX; "cmp": bool; "bitwise":
# bool/int only; "float": the promotion of the float upgrades; "pow": upcast, bool to int8.
BINARY: dict[str, tuple[Callable, tuple, tuple, str]] = {
    "add": (np.add, (-3, 3), (-3, 3), "upcast"),
    "sub": (np.subtract, (-3, 3), (-3, 3), "upcast"),
    "mul": (np.multiply, (-3, 3), (-3, 3), "upcast"),
    "true_div": (np.true_divide, (-3, 3), (1, 3), "truediv"),
    "int_div": (np.floor_divide, (-5, 5), (1, 3), "upcast"),
    "mod": (np.mod, (-5, 5), (1, 3), "upcast"),
    "pow": (np.power, (0, 3), (0, 3), "pow"),
    "maximum": (np.maximum, (-3, 3), (-3, 3), "upcast"),
    "minimum": (np.minimum, (-3, 3), (-3, 3), "upcast"),
    "eq": (np.equal, (-1, 1), (-1, 1), "cmp"),
    "neq": (np.not_equal, (-1, 1), (-1, 1), "cmp"),
    "lt": (np.less, (-2, 2), (-2, 2), "cmp"),
    "le": (np.less_equal, (-2, 2), (-2, 2), "cmp"),
    "gt": (np.greater, (-2, 2), (-2, 2), "cmp"),
    "ge": (np.greater_equal, (-2, 2), (-2, 2), "cmp"),
    "and_": (np.bitwise_and, (-5, 5), (-5, 5), "bitwise"),
    "or_": (np.bitwise_or, (-5, 5), (-5, 5), "bitwise"),
    "xor": (np.bitwise_xor, (-5, 5), (-5, 5), "bitwise"),
    "arctan2": (np.arctan2, (-3, 3), (-3, 3), "float"),
    "gammainc": (sp.gammainc, (0.5, 3), (0, 3), "float"),
    "gammaincc": (sp.gammaincc, (0.5, 3), (0, 3), "float"),
    "xlogy0": (sp.xlogy, (0, 3), (0.1, 3), "float"),
}
BINARY_DTYPES = [
    ("float64", "float64"),
    ("float32", "float32"),
    ("float16", "float16"),
    ("int8", "float32"),
    ("int32", "float64"),
    ("int64", "int64"),
    ("int8", "uint8"),
    ("bool", "bool"),
]


def binary_out_dtype(kind: str, d1: str, d2: str) -> str | None:
    up = np.result_type(d1, d2).name
    if kind == "upcast":
        return up
    if kind == "truediv":
        return "float64" if np.dtype(up).kind in "biu" else up
    if kind == "cmp":
        return "bool"
    if kind == "bitwise":
        return up if np.dtype(up).kind in "biu" else None
    if kind == "float":
        return np.result_type(upgrade_to_float(d1), upgrade_to_float(d2)).name
    if kind == "pow":
        return "int8" if up == "bool" else up
    raise AssertionError(kind)


@pytest.mark.parametrize("d1, d2", BINARY_DTYPES)
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_elementwise_matches_numpy(name: str, d1: str, d2: str) -> None:
    ref_fn, (alo, ahi), (blo, bhi), kind = BINARY[name]
    fn = getattr(pt, name)
    x, y = tensor(d1, (None, None), "x"), tensor(d2, (None,), "y")
    out_dtype = binary_out_dtype(kind, d1, d2)
    if name == "sub" and d1 == d2 == "bool":
        out_dtype = None  # NumPy has no boolean subtraction either
    if out_dtype is None:
        with pytest.raises(TypeError):
            fn(x, y)
        return
    out = fn(x, y)
    assert out.dtype == out_dtype
    assert out.type.shape == (None, None)
    a, b = sample(d1, (2, 3), alo, ahi), sample(d2, (3,), blo, bhi)
    if d2 == "bool" and name in ("true_div", "int_div", "mod"):
        b = np.ones(3, bool)
    got = out.eval({x: a, y: b})
    if kind in ("upcast", "pow", "truediv") and np.dtype(out_dtype).kind in "biu":
        ref = ref_fn(a.astype(out_dtype), b.astype(out_dtype))
    else:
        ref = reference(ref_fn, [a, b], out_dtype)
    assert_matches(got, ref, out_dtype)
    assert_infer_shape(out, {x: a, y: b})


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_elementwise_static_and_0d(name: str) -> None:
    _, (alo, ahi), (blo, bhi), kind = BINARY[name]
    d = "int64" if kind == "bitwise" else "float64"
    x, y = tensor(d, (1, 3), "x"), tensor(d, (), "y")
    out = getattr(pt, name)(x, y)
    assert out.type.shape == (1, 3)
    a, b = sample(d, (1, 3), alo, ahi), sample(d, (), blo, bhi)
    assert_matches(out.eval({x: a, y: b}), reference(BINARY[name][0], [a, b], out.dtype), out.dtype)
    e = tensor(d, (0, None), "e")
    empty = getattr(pt, name)(e, x)
    assert empty.type.shape == (0, 3)
    assert empty.eval({e: np.zeros((0, 3), d), x: a}).shape == (0, 3)


def test_ternary_betainc_and_python_scalars() -> None:
    a, b, x = pt.dvector("a"), pt.dscalar("b"), pt.dmatrix("x")
    out = pt.betainc(a, b, x)
    assert out.type.shape == (None, None)
    av, bv, xv = sample("float64", (3,), 0.5, 3), np.float64(1.5), sample("float64", (2, 3), 0, 1)
    assert_matches(out.eval({a: av, b: bv, x: xv}), sp.betainc(av, bv, xv), "float64")
    f = pt.fvector("f")
    # Python numbers are constants of the smallest fitting dtype: they do not upcast float32
    assert (f * 2).dtype == "float32" and (f + 1.5).dtype == "float32"
    assert (f * 0.1).dtype == "float64"
    assert (pt.bvector("i") + 1000).dtype == "int16"


def test_pytensor_aliases() -> None:
    assert pt.true_divide is pt.true_div and pt.floor_divide is pt.int_div
    assert pt.bitwise_and is pt.and_ and pt.bitwise_not is pt.invert
    assert pt.expit is pt.sigmoid and pt.log1pexp is pt.softplus and pt.digamma is pt.psi
    assert pt.fill is pt.second and pt.power is pt.pow and pt.where is pt.switch
    assert pt.tensor_copy is pt.identity and pt.square is pt.sqr


def test_round_modes() -> None:
    x = pt.dvector("x")
    v = np.array([0.5, 1.5, 2.5, -0.5, -1.5, 0.49999999999999994])
    np.testing.assert_array_equal(pt.round(x).eval({x: v}), np.round(v))
    np.testing.assert_array_equal(
        pt.round(x, "half_away_from_zero").eval({x: v}), [1.0, 2.0, 3.0, -1.0, -2.0, 0.0]
    )
    i = pt.ivector("i")
    assert pt.round(i) is i  # integers are already round
    with pytest.raises(ValueError, match="mode must be"):
        pt.round(x, "half_up")


def test_inputs_of_every_kind() -> None:
    x = pt.dvector("x")
    s = ps.float64("s")
    assert pt.add(x, [1, 2, 3]).type.shape == (3,)
    out = pt.mul(x, s, np.float32(2), 3)
    assert out.dtype == "float64"
    np.testing.assert_array_equal(out.eval({x: np.ones(2), s: 0.5}), [3.0, 3.0])


def test_integer_division_by_zero_is_an_error() -> None:
    i, j = pt.ivector("i"), pt.ivector("j")
    a, b = np.array([1, 2, 3], "int32"), np.array([1, 0, 2], "int32")
    for out in [i // j, i % j, pt.int_div(i, j), pt.mod(i, j)]:
        with pytest.raises(ZeroDivisionError, match="integer division by zero"):
            out.eval({i: a, j: b})
    np.testing.assert_array_equal((i // j).eval({i: a, j: b + (b == 0)}), [1, 2, 1])
    # floats follow IEEE: inf and nan, no error
    x, y = pt.dvector("x"), pt.dvector("y")
    got = (x // y).eval({x: np.array([1.0, -1.0, 0.0]), y: np.zeros(3)})
    np.testing.assert_array_equal(got, np.floor_divide([1.0, -1.0, 0.0], 0.0))
    got = (i / j).eval({i: a, j: b})
    assert got.dtype == "float64" and np.isinf(got[1])


def test_integer_to_negative_power_is_an_error() -> None:
    i, j = pt.ivector("i"), pt.ivector("j")
    with pytest.raises(ValueError, match="negative integer powers"):
        (i**j).eval({i: np.array([2], "int32"), j: np.array([-1], "int32")})


# --- switch / where, clip, isnan / isinf ----------------------------------------------------


@pytest.mark.parametrize("cond_dtype", ["bool", "int8", "float64"])
def test_switch_broadcasts_like_numpy_where(cond_dtype: str) -> None:
    c = tensor(cond_dtype, (None, 1), "c")
    a = pt.fvector("a")
    b = pt.dscalar("b")
    out = pt.switch(c, a, b)
    assert out.dtype == "float64" and out.type.shape == (None, None)
    assert str(out.owner.op) == "Switch"
    cv = sample(cond_dtype, (4, 1), -1, 1)
    av, bv = sample("float32", (3,)), np.float64(7.5)
    got = out.eval({c: cv, a: av, b: bv})
    assert_matches(got, np.where(cv, av, bv), "float64")
    assert_infer_shape(out, {c: cv, a: av, b: bv})
    assert pt.where is pt.switch or pt.where(c, a, b).owner.op == out.owner.op


def test_switch_branch_dtypes_and_shapes() -> None:
    x = pt.ivector("x")
    out = pt.switch(pt.gt(x, 0), x, 0)
    assert out.dtype == "int32"
    np.testing.assert_array_equal(out.eval({x: np.array([-1, 2, 0], "int32")}), [0, 2, 0])
    y = tensor("float64", (3,), "y")
    assert pt.switch(tensor("bool", (None,), "c"), y, 0.0).type.shape == (3,)
    with pytest.raises(ValueError, match="Incompatible static shapes"):
        pt.switch(tensor("bool", (2,), "c"), y, 0.0)
    with pytest.raises(ValueError, match="shape mismatch"):
        pt.switch(tensor("bool", (None,), "c"), y, 0.0).eval({"c": np.ones(2, bool), y: np.zeros(3)})


@pytest.mark.parametrize("dtype", ["float64", "float32", "int32", "uint8"])
def test_clip(dtype: str) -> None:
    x = tensor(dtype, (None, None))
    lo, hi = tensor(dtype, (None,), "lo"), tensor(dtype, (), "hi")
    out = pt.clip(x, lo, hi)
    assert out.dtype == dtype
    xv = sample(dtype, (2, 3), 0, 10)
    lov, hiv = sample(dtype, (3,), 2, 4), np.asarray(6, dtype)
    assert_matches(out.eval({x: xv, lo: lov, hi: hiv}), np.clip(xv, lov, hiv), dtype)
    assert_infer_shape(out, {x: xv, lo: lov, hi: hiv})
    c = pt.clip(x, 1, 5)  # 1 and 5 are int8 constants: uint8 is upcast to int16, as in PyTensor
    expected = np.result_type(dtype, "int8").name
    assert c.dtype == expected
    assert_matches(c.eval({x: xv}), np.clip(xv, 1, 5), expected)
    assert_matches(x.clip(1, 5).eval({x: xv}), np.clip(xv, 1, 5), expected)


def test_isnan_isinf() -> None:
    x = pt.dvector("x")
    v = np.array([0.0, np.nan, np.inf, -np.inf, 1e308 * 10, -0.0])
    np.testing.assert_array_equal(pt.isnan(x).eval({x: v}), np.isnan(v))
    np.testing.assert_array_equal(pt.isinf(x).eval({x: v}), np.isinf(v))
    i = pt.ivector("i")
    assert pt.isnan(i).dtype == "bool"
    assert not pt.isinf(i).eval({i: np.array([1, 2], "int32")}).any()
    z = tensor("complex128", (None,), "z")
    zv = np.array([1 + 1j, complex(np.nan, 0), complex(0, np.inf)])
    np.testing.assert_array_equal(pt.isnan(z).eval({z: zv}), np.isnan(zv))
    np.testing.assert_array_equal(pt.isinf(z).eval({z: zv}), np.isinf(zv))


# --- isclose / allclose ---------------------------------------------------------------------

SPECIAL = np.array([0.0, -0.0, 1.0, 1.0 + 1e-9, 1e10, 1.00001e10, np.inf, -np.inf, np.nan, 1e-300, -1.0, 5.0])


@pytest.mark.parametrize("equal_nan", [False, True])
@pytest.mark.parametrize("rtol, atol", [(1e-5, 1e-8), (0.0, 0.0), (1e-2, 0.5)])
def test_isclose_matches_numpy_on_special_values(equal_nan: bool, rtol: float, atol: float) -> None:
    x, y = pt.dvector("x"), pt.dmatrix("y")
    a = SPECIAL
    b = SPECIAL[:, None] * np.ones_like(SPECIAL)[None, :]  # every pair (b_i, a_j)
    out = pt.isclose(x, y, rtol=rtol, atol=atol, equal_nan=equal_nan)
    assert out.dtype == "bool" and out.type.shape == (None, None)
    got = out.eval({x: a, y: b})
    np.testing.assert_array_equal(got, np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))
    allc = pt.allclose(x, y, rtol=rtol, atol=atol, equal_nan=equal_nan)
    assert allc.dtype == "bool" and allc.type.shape == ()
    for row in range(len(SPECIAL)):
        expected = np.allclose(a, b[row], rtol=rtol, atol=atol, equal_nan=equal_nan)
        assert bool(allc.eval({x: a, y: b[row : row + 1]})) == expected


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int64", "bool", "float32"])
def test_isclose_discrete_and_float32(dtype: str) -> None:
    x, y = tensor(dtype, (None,), "x"), tensor(dtype, (None,), "y")
    if dtype == "bool":
        a, b = np.array([True, False, True]), np.array([True, True, False])
    elif dtype == "float32":
        a = np.array([1.0, 1.0, np.inf, np.nan], "float32")
        b = np.array([1.0 + 1e-6, 1.1, np.inf, np.nan], "float32")
    else:
        info = np.iinfo(dtype)
        # 0 and min: the difference wraps around in the integer dtype; NumPy compares as floats
        a = np.array([0, info.max, 3, info.min], dtype)
        b = np.array([info.min, info.max, 4, 0], dtype)
    got = pt.isclose(x, y).eval({x: a, y: b})
    np.testing.assert_array_equal(got, np.isclose(a, b))
    assert bool(pt.allclose(x, y).eval({x: a, y: b})) == np.allclose(a, b)
    assert bool(pt.allclose(x, x).eval({x: a})) == np.allclose(a, a)


def test_isclose_broadcasts_and_is_symbolic() -> None:
    x = pt.dvector("x")
    out = pt.isclose(x, 1.0)
    v = np.array([1.0, 1.0 + 1e-7, 2.0])
    np.testing.assert_array_equal(out.eval({x: v}), np.isclose(v, 1.0))
    assert_infer_shape(out, {x: v})
    assert bool(pt.allclose(x, x + 1e-12).eval({x: v}))
    assert not bool(pt.allclose(x, x + 1).eval({x: v}))
    assert bool(pt.allclose(x, x).eval({x: np.zeros(0)}))


# --- cast -----------------------------------------------------------------------------------

CAST_DTYPES = [
    "bool",
    "int8",
    "uint8",
    "int16",
    "int32",
    "int64",
    "float16",
    "float32",
    "float64",
    "complex64",
]


@pytest.mark.parametrize("src", CAST_DTYPES)
@pytest.mark.parametrize("dst", CAST_DTYPES)
def test_cast_matches_numpy_astype(src: str, dst: str) -> None:
    x = tensor(src, (None,))
    if src.startswith("complex") and not dst.startswith("complex"):
        with pytest.raises(TypeError, match="complex"):
            pt.cast(x, dst)
        return
    out = pt.cast(x, dst)
    if src == dst:
        assert out is x
        return
    assert out.dtype == dst and out.type.shape == (None,)
    assert str(out.owner.op) == f"Cast{{{dst}}}"
    value = sample(src, (6,), 0, 100)  # in range of every destination
    assert_matches(out.eval({x: value}), value.astype(dst), dst)


def test_cast_special_cases() -> None:
    x = pt.dvector("x")
    got = pt.cast(x, "int8").eval({x: np.array([1.7, -2.5, 0.0])})
    np.testing.assert_array_equal(got, [1, -2, 0])  # truncation, as C and NumPy
    np.testing.assert_array_equal(
        pt.cast(x, "bool").eval({x: np.array([0.0, 0.5, np.nan])}), [False, True, True]
    )
    assert pt.cast(pt.ivector("i"), "floatX").dtype == config.floatX
    assert pt.cast(x, np.float32).dtype == "float32"
    assert x.astype("int64").dtype == "int64"
    with pytest.raises(TypeError):
        pt.cast(x, "str")
    s = pt.cast(pt.dscalar("s"), "float32")
    assert s.type.shape == () and s.eval({"s": 1.5}) == np.float32(1.5)


# --- reductions: sum, prod, max, min, all, any -----------------------------------------------

REDUCE_DTYPES = ["bool", "int8", "int32", "int64", "uint8", "float16", "float32", "float64", "complex64"]


def sum_dtypes(dtype: str) -> tuple[str, str]:
    """(output, accumulator) of sum/prod, as measured on PyTensor 3."""
    if dtype in ("bool", "int8", "int16", "int32", "int64"):
        return "int64", "int64"
    if dtype.startswith("uint"):
        return "uint64", "uint64"
    return dtype, {"float16": "float32", "float32": "float64", "complex64": "complex128"}.get(dtype, dtype)


REDUCTIONS: dict[str, tuple[Callable, Callable]] = {
    # name: (arignote function, NumPy reference taking (value, axis, dtype))
    "sum": (pt.sum, lambda v, axis: np.sum(v, axis=axis, dtype=sum_dtypes(v.dtype.name)[1])),
    "prod": (pt.prod, lambda v, axis: np.prod(v, axis=axis, dtype=sum_dtypes(v.dtype.name)[1])),
    "max": (pt.max, lambda v, axis: np.max(v, axis=axis)),
    "min": (pt.min, lambda v, axis: np.min(v, axis=axis)),
    "all": (pt.all, lambda v, axis: np.all(v, axis=axis)),
    "any": (pt.any, lambda v, axis: np.any(v, axis=axis)),
}


def reduction_out_dtype(name: str, dtype: str) -> str | None:
    if name in ("sum", "prod"):
        return sum_dtypes(dtype)[0]
    if name in ("all", "any"):
        return "bool"
    if name == "min" and dtype.startswith("complex"):
        return None
    return dtype


@pytest.mark.parametrize("dtype", REDUCE_DTYPES)
@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reduction_dtypes(name: str, dtype: str) -> None:
    fn, _ = REDUCTIONS[name]
    x = tensor(dtype, (None, None))
    expected = reduction_out_dtype(name, dtype)
    if expected is None:
        with pytest.raises(TypeError, match="complex"):
            fn(x)
        return
    out = fn(x)
    assert out.dtype == expected
    if name in ("sum", "prod"):
        assert out.owner.op.acc_dtype == sum_dtypes(dtype)[1]


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", [None, 0, -1, (0, 2), (2, 0, 1), ()])
@pytest.mark.parametrize("dtype", ["bool", "int8", "uint8", "float16", "float32", "float64"])
@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reduction_values_and_static_shapes(name: str, dtype: str, axis: Any, keepdims: bool) -> None:
    fn, ref_fn = REDUCTIONS[name]
    x = tensor(dtype, (2, None, 4))
    out = fn(x, axis=axis, keepdims=keepdims)
    # (a product of 24 values up to 3 in size overflows float16 where the float64 reference
    # does not; the values are drawn from the module's generator, so which draw a test gets
    # depends on the order tests run in)
    bound = 1.5 if name == "prod" else 3
    value = sample(dtype, (2, 3, 4), -bound, bound)
    axes = tuple(range(3)) if axis is None else tuple(a % 3 for a in np.atleast_1d(axis).tolist())
    if keepdims:
        static = tuple(1 if d in axes else s for d, s in enumerate(x.type.shape))
    else:
        static = tuple(s for d, s in enumerate(x.type.shape) if d not in axes)
    assert out.type.shape == static
    got = out.eval({x: value})
    ref = ref_fn(value, axis)
    if keepdims:
        ref = np.expand_dims(ref, axes) if axes else ref
    assert_matches(got, ref, out.dtype)
    assert_infer_shape(out, {x: value})


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reduction_of_0d(name: str) -> None:
    fn, ref_fn = REDUCTIONS[name]
    x = pt.dscalar("x")
    for axis in [None, (), 0, -1]:
        if axis in (0, -1):
            with pytest.raises(ValueError, match="out of bounds for a tensor of 0 dimension"):
                fn(x, axis=axis)
            continue
        out = fn(x, axis=axis, keepdims=True)
        assert out.type.shape == ()
        assert_matches(out.eval({x: 2.5}), ref_fn(np.float64(2.5), axis), out.dtype)


@pytest.mark.parametrize("name, identity", [("sum", 0), ("prod", 1), ("all", True), ("any", False)])
def test_reduction_over_empty_axes_gives_the_identity(name: str, identity: Any) -> None:
    fn, _ = REDUCTIONS[name]
    x = pt.dmatrix("x")
    value = np.zeros((0, 3))
    got = fn(x).eval({x: value})
    assert got.shape == () and got == identity
    got = fn(x, axis=0).eval({x: value})
    np.testing.assert_array_equal(got, np.full(3, identity))
    assert fn(x, axis=1).eval({x: value}).shape == (0,)
    i = pt.imatrix("i")
    assert fn(i).eval({i: np.zeros((3, 0), "int32")}) == identity


@pytest.mark.parametrize("fn", [pt.max, pt.min, pt.argmax, pt.argmin])
def test_max_min_over_empty_axes_is_a_clear_error(fn: Callable) -> None:
    x = pt.dmatrix("x")
    value = np.zeros((0, 3))
    with pytest.raises(ValueError, match="empty"):
        fn(x).eval({x: value})
    with pytest.raises(ValueError, match="empty"):
        fn(x, axis=0).eval({x: value})
    assert fn(x, axis=1).eval({x: value}).shape == (0,)  # the empty axis is kept, not reduced


@pytest.mark.parametrize(
    "fn",
    [
        pt.sum,
        pt.prod,
        pt.max,
        pt.min,
        pt.all,
        pt.any,
        pt.argmax,
        pt.argmin,
        pt.mean,
        pt.var,
        pt.std,
        pt.logsumexp,
    ],
)
def test_reduction_axis_errors(fn: Callable) -> None:
    x = pt.dmatrix("x")
    with pytest.raises(ValueError, match="axis 2 is out of bounds for a tensor of 2 dimension"):
        fn(x, axis=2)
    with pytest.raises(ValueError, match="axis -3 is out of bounds"):
        fn(x, axis=-3)
    with pytest.raises(ValueError, match="repeated axis"):
        fn(x, axis=(0, 0))
    with pytest.raises(ValueError, match="repeated axis"):
        fn(x, axis=(1, -1))
    with pytest.raises(TypeError, match="axis must be"):
        fn(x, axis=0.5)


def test_sum_and_prod_do_not_overflow_small_ints() -> None:
    i8, u8 = tensor("int8", (None,), "i8"), tensor("uint8", (None,), "u8")
    assert pt.sum(i8).eval({i8: np.full(3, 100, "int8")}) == 300
    assert pt.sum(u8).eval({u8: np.full(3, 255, "uint8")}) == 765
    assert pt.prod(i8).eval({i8: np.full(3, 100, "int8")}) == 10**6
    b = tensor("bool", (None,), "b")
    assert pt.sum(b).eval({b: np.ones(300, bool)}) == 300


def test_sum_float32_accumulates_in_float64() -> None:
    f = pt.fvector("f")
    value = np.array([2.0**24, 1.0, 1.0], "float32")
    out = pt.sum(f)
    assert out.dtype == "float32" and out.owner.op.acc_dtype == "float64"
    assert out.eval({f: value}) == np.float32(2.0**24 + 2)  # float32 accumulation loses both 1s
    h = tensor("float16", (None,), "h")
    # float16 accumulates in float32: 2048 + 1 + 1 is 2048 in float16 steps, 2050 here
    out = pt.sum(h)
    assert out.dtype == "float16" and out.owner.op.acc_dtype == "float32"
    assert out.eval({h: np.array([2048, 1, 1], "float16")}) == np.float16(2050)


def test_sum_dtype_and_acc_dtype_arguments() -> None:
    x = pt.dmatrix("x")
    v = sample("float64", (2, 3))
    out = pt.sum(x, dtype="float32")
    assert out.dtype == "float32"
    assert_matches(out.eval({x: v}), v.sum().astype("float32"), "float32")
    i = tensor("int8", (None,), "i")
    out = pt.sum(i, dtype="int8")
    assert out.dtype == "int8" and out.owner.op.acc_dtype == "int64"
    out = pt.sum(i, acc_dtype="float64")
    assert out.owner.op.acc_dtype == "float64" and out.dtype == "int64"
    f = pt.fvector("f")
    out = pt.prod(f, acc_dtype="float64", dtype="float64")
    assert out.dtype == "float64"
    assert pt.sum(x, dtype="floatX", acc_dtype="floatX").eval({x: v}).dtype == config.floatX
    with pytest.raises(TypeError, match="precision would be lost"):
        pt.sum(x, acc_dtype="float32")
    with pytest.raises(TypeError, match="precision would be lost"):
        pt.prod(pt.lvector("l"), acc_dtype="int32")
    # a float accumulator for integers is accepted at any precision, as PyTensor's
    big = tensor("int64", (3,), "big")
    out = pt.sum(big, acc_dtype="float32")
    assert out.dtype == "int64" and out.owner.op.acc_dtype == "float32"
    values = np.array([2**24, 1, 1], "int64")
    got = out.eval({big: values})
    assert got.dtype == np.int64
    assert got == values.sum(dtype=np.float32).astype(np.int64)
    assert str(pt.sum(x, axis=0, acc_dtype="float64").owner.op) == "Sum{axis=0}"


@pytest.mark.parametrize(
    "build, text",
    [
        (lambda x: pt.sum(x, axis=0), "Sum{axis=0}"),
        (lambda x: pt.max(x, axis=1), "Max{axis=1}"),
        (lambda x: pt.sum(x), "Sum{axes=None}"),
        (lambda x: pt.all(x), "All{axes=None}"),
        (lambda x: pt.any(x, axis=-1), "Any{axis=2}"),
        (lambda x: pt.prod(x, axis=(0, 2)), "Prod{axes=[0, 2]}"),
        (lambda x: pt.min(x, axis=(-1, 0)), "Min{axes=[0, 2]}"),
        (lambda x: pt.argmax(x, axis=0), "Argmax{axis=(0,)}"),
        (lambda x: pt.argmin(x), "Argmin{axis=None}"),
    ],
)
def test_reduction_str(build: Callable, text: str) -> None:
    assert str(build(pt.tensor3("x")).owner.op) == text


def test_reduction_ops_resolve_negative_axes() -> None:
    x = pt.tensor3("x")
    value = sample("float64", (2, 3, 4))
    for op, ref in [
        (Sum(axis=-1), value.sum(-1)),
        (Prod(axis=(-1, 0)), value.prod((0, 2))),
        (Max(axis=-2), value.max(1)),
    ]:
        out = op(x)
        assert all(a >= 0 for a in out.owner.op.axis)
        assert out.type.ndim == ref.ndim
        np.testing.assert_allclose(out.eval({x: value}), ref)
    out = Argmax(axis=-1)(x)
    assert out.owner.op.axis == (2,) and out.type.ndim == 2
    np.testing.assert_array_equal(out.eval({x: value}), value.argmax(-1))
    out = Argmin(axis=1)(x)
    np.testing.assert_array_equal(out.eval({x: value}), value.argmin(1))


def test_max_min_nan_and_bool() -> None:
    x = pt.dvector("x")
    v = np.array([1.0, np.nan, 3.0])
    assert np.isnan(pt.max(x).eval({x: v})) and np.isnan(pt.min(x).eval({x: v}))
    b = tensor("bool", (None,), "b")
    assert pt.max(b).eval({b: np.array([False, True])}) == np.True_
    assert pt.min(b).dtype == "bool"
    z = tensor("complex128", (None,), "z")
    zv = np.array([1 + 2j, 1 + 3j, 0 + 5j])
    assert pt.max(z).eval({z: zv}) == np.max(zv)


def test_variable_methods() -> None:
    x = pt.dmatrix("x")
    v = sample("float64", (2, 3))
    for name in ["sum", "prod", "max", "min", "mean", "var", "std", "argmax", "argmin", "all", "any"]:
        got = getattr(x, name)(axis=0).eval({x: v})
        np.testing.assert_allclose(got, getattr(np, name)(v, axis=0), err_msg=name)


# --- argmax / argmin ------------------------------------------------------------------------


def np_arg(fn: Callable, value: np.ndarray, axis: Any) -> np.ndarray:
    """NumPy's arg-extremum over several axes: move them last and flatten them."""
    if axis is None:
        return fn(value)
    axes = sorted(a % value.ndim for a in np.atleast_1d(axis).tolist())
    keep = [d for d in range(value.ndim) if d not in axes]
    moved = np.transpose(value, keep + axes).reshape([value.shape[d] for d in keep] + [-1])
    return fn(moved, axis=-1)


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", [None, 0, -1, (0, 2), (2, 0), (0, 1, 2), (1,)])
@pytest.mark.parametrize("dtype", ["float64", "float32", "int8", "uint8", "bool"])
@pytest.mark.parametrize("which", ["argmax", "argmin"])
def test_argmax_argmin(which: str, dtype: str, axis: Any, keepdims: bool) -> None:
    x = tensor(dtype, (2, None, 4))
    out = getattr(pt, which)(x, axis=axis, keepdims=keepdims)
    assert out.dtype == "int64"
    axes = tuple(range(3)) if axis is None else tuple(a % 3 for a in np.atleast_1d(axis).tolist())
    if keepdims:
        assert out.type.shape == tuple(1 if d in axes else s for d, s in enumerate(x.type.shape))
    else:
        assert out.type.shape == tuple(s for d, s in enumerate(x.type.shape) if d not in axes)
    value = sample(dtype, (2, 3, 4), -3, 3)  # small ranges: ties are common, the first wins
    ref = np_arg(getattr(np, which), value, axis)
    if keepdims:
        ref = np.expand_dims(ref, axes)
    assert_matches(out.eval({x: value}), ref, "int64")
    assert_infer_shape(out, {x: value})


def test_argmax_nan_and_0d() -> None:
    x = pt.dvector("x")
    v = np.array([1.0, np.nan, 3.0, np.nan])
    assert pt.argmax(x).eval({x: v}) == np.argmax(v) == 1
    assert pt.argmin(x).eval({x: v}) == np.argmin(v)
    s = pt.dscalar("s")
    assert pt.argmax(s).eval({s: 4.0}) == 0
    assert pt.argmax(s, keepdims=True).type.shape == ()


def test_argmax_gradient_is_zero() -> None:
    # as in PyTensor 3 and the seeds' argmax example: connected, with a zero gradient
    from arignote.gradient import grad

    x = pt.dmatrix("x")
    g = grad(pt.sum(pt.argmax(x, axis=0) * 1.0), x)
    np.testing.assert_array_equal(g.eval({x: np.ones((2, 3))}), np.zeros((2, 3)))


# --- mean, var, std -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "dtype, expected",
    [
        ("bool", "float64"),
        ("int8", "float64"),
        ("int64", "float64"),
        ("uint8", "float64"),
        ("float16", "float16"),
        ("float32", "float32"),
        ("float64", "float64"),
        ("complex64", "complex64"),
        ("complex128", "complex128"),
    ],
)
@pytest.mark.parametrize("axis", [None, 1, (0, 2), -1])
def test_mean(dtype: str, expected: str, axis: Any) -> None:
    x = tensor(dtype, (None, 3, None))
    out = pt.mean(x, axis=axis)
    assert out.dtype == expected
    value = sample(dtype, (2, 3, 4), -3, 3)
    assert_matches(
        out.eval({x: value}),
        np.mean(value.astype("complex128" if "complex" in dtype else "float64"), axis=axis),
        expected,
    )
    assert_infer_shape(out, {x: value})
    kd = pt.mean(x, axis=axis, keepdims=True)
    assert kd.type.ndim == 3
    assert_matches(
        kd.eval({x: value}),
        np.mean(value.astype("complex128" if "complex" in dtype else "float64"), axis=axis, keepdims=True),
        expected,
    )


def test_mean_special_cases() -> None:
    h = tensor("float16", (None,), "h")
    # the float16 sum (100000) would overflow: the mean is summed in float32
    assert pt.mean(h).eval({h: np.full(10000, 10, "float16")}) == np.float16(10)
    x = pt.dmatrix("x")
    assert np.isnan(pt.mean(x).eval({x: np.zeros((0, 3))}))
    assert pt.mean(pt.ivector("i"), dtype="float32").dtype == "float32"
    f = pt.fvector("f")
    assert pt.mean(f, dtype="float64").dtype == "float64"
    assert pt.mean(x, axis=(0, 1), keepdims=True).type.shape == (1, 1)


@pytest.mark.parametrize("ddof", [0, 1, 2])
@pytest.mark.parametrize("axis", [None, 0, -1, (0, 2)])
@pytest.mark.parametrize("dtype", ["float64", "float32", "int32", "complex128"])
def test_var_std(dtype: str, axis: Any, ddof: int) -> None:
    x = tensor(dtype, (None, None, 5))
    value = sample(dtype, (3, 4, 5), -3, 3)
    wide = value.astype("complex128" if "complex" in dtype else "float64")
    expected = {"float32": "float32", "complex128": "float64"}.get(dtype, "float64")
    for fn, ref in [(pt.var, np.var), (pt.std, np.std)]:
        for keepdims in (False, True):
            out = fn(x, axis=axis, ddof=ddof, keepdims=keepdims)
            assert out.dtype == expected
            assert_matches(out.eval({x: value}), ref(wide, axis=axis, ddof=ddof, keepdims=keepdims), expected)
        assert_infer_shape(out, {x: value})


def test_var_corrected_and_ddof_too_large() -> None:
    x = pt.dvector("x")
    v = sample("float64", (5,))
    np.testing.assert_allclose(pt.var(x, corrected=True).eval({x: v}), np.var(v, ddof=1))
    np.testing.assert_allclose(pt.std(x, corrected=True).eval({x: v}), np.std(v, ddof=1))
    got = pt.var(x, ddof=5).eval({x: v})  # n - ddof == 0: inf, as NumPy
    assert np.isinf(got) and np.isinf(np.var(v, ddof=5))
    assert pt.var(x, axis=0).type.shape == ()


# --- logsumexp ------------------------------------------------------------------------------


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", [None, 0, -1, (0, 2)])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_logsumexp_matches_scipy(dtype: str, axis: Any, keepdims: bool) -> None:
    x = tensor(dtype, (2, None, 4))
    out = pt.logsumexp(x, axis=axis, keepdims=keepdims)
    assert out.dtype == dtype
    value = sample(dtype, (2, 3, 4), -5, 5)
    ref = sp.logsumexp(value.astype("float64"), axis=axis, keepdims=keepdims)
    assert out.type.ndim == np.ndim(ref)
    if keepdims:
        axes = range(3) if axis is None else np.atleast_1d(axis) % 3
        assert all(out.type.shape[a] == 1 for a in axes)
    assert_matches(out.eval({x: value}), ref, dtype)
    assert_infer_shape(out, {x: value})


def test_logsumexp_is_stable() -> None:
    x = pt.dmatrix("x")
    lse = pt.logsumexp(x, axis=1)
    v = np.array(
        [
            [1e3, 1e3, 1e3],
            [-1e3, -1e3, -1e3],
            [-np.inf, -np.inf, -np.inf],
            [-np.inf, 0.0, -np.inf],
            [np.inf, 0.0, -np.inf],
            [np.nan, 0.0, 1.0],
            [1e308, 1e308, 0.0],
        ]
    )
    got = lse.eval({x: v})
    ref = sp.logsumexp(v, axis=1)
    np.testing.assert_allclose(got, ref, equal_nan=True)
    assert got[0] == pytest.approx(1e3 + np.log(3))
    assert got[2] == -np.inf and got[4] == np.inf and np.isnan(got[5])
    assert pt.logsumexp(x).eval({x: np.array([[1e3, 1e3]])}) == pytest.approx(1e3 + np.log(2))
    i = pt.ivector("i")
    out = pt.logsumexp(i)
    assert out.dtype == "float64"
    np.testing.assert_allclose(out.eval({i: np.array([1, 2, 3], "int32")}), sp.logsumexp([1, 2, 3]))
    with pytest.raises(ValueError, match="empty"):
        pt.logsumexp(x).eval({x: np.zeros((0, 2))})
