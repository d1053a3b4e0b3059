"""The scalar ops of ``arignote.scalar.basic`` against NumPy, over every dtype each accepts:
values on arrays (through ``impl``, broadcasting), on NumPy scalars and through ``.eval()``,
output dtypes, edge points (0, -0.0, negatives, inf, nan, large), and errors."""

from __future__ import annotations

import decimal
import functools
import itertools
import math
import pickle

import numpy as np
import pytest

import arignote.scalar as ps
from arignote.configdefaults import config
from arignote.scalar.basic import Cast
from arignote.scalar.type import discrete_types, get_scalar_type, integer_types
from tests.scalar.oracle import ALL_DTYPES, check_op, edge_values


def _round_half_away(x):
    def one(v):
        if not math.isfinite(v):
            return v
        r = float(decimal.Decimal(v).to_integral_value(rounding=decimal.ROUND_HALF_UP))
        return math.copysign(r, v) if r == 0 else r

    return np.vectorize(one, otypes=[x.dtype])(x)


UNARY = {
    "neg": np.negative,
    "reciprocal": lambda x: 1 / x,
    "abs": np.abs,
    "sign": np.sign,
    "sqr": np.square,
    "sqrt": np.sqrt,
    "invert": np.invert,
    "floor": np.floor,
    "ceil": np.ceil,
    "trunc": np.trunc,
    "round_half_to_even": np.round,
    "round_half_away_from_zero": _round_half_away,
    "exp": np.exp,
    "exp2": np.exp2,
    "expm1": np.expm1,
    "log": np.log,
    "log2": np.log2,
    "log10": np.log10,
    "log1p": np.log1p,
    "sin": np.sin,
    "cos": np.cos,
    "tan": np.tan,
    "arcsin": np.arcsin,
    "arccos": np.arccos,
    "arctan": np.arctan,
    "sinh": np.sinh,
    "cosh": np.cosh,
    "tanh": np.tanh,
    "arcsinh": np.arcsinh,
    "arccosh": np.arccosh,
    "arctanh": np.arctanh,
    "deg2rad": np.deg2rad,
    "rad2deg": np.rad2deg,
    "identity": lambda x: x,
    "real": np.real,
    "imag": np.imag,
    "angle": np.angle,
    "conj": np.conj,
    "isnan": np.isnan,
    "isinf": np.isinf,
}

# every op must accept at least these dtypes
LEGAL = {
    "neg": ["int8", "uint8", "int64", "float16", "float32", "float64", "complex64"],
    "sign": ["int8", "uint16", "float32", "float64"],
    "invert": ["bool", "int8", "uint8", "int64", "uint64"],
    "floor": ["bool", "int8", "int32", "float16", "float32", "float64"],
    "round_half_to_even": ["float16", "float32", "float64"],
    "round_half_away_from_zero": ["float16", "float32", "float64"],
    "sqr": ["bool", "int8", "float32", "complex128"],
}
# and refuse these
ILLEGAL = {
    "neg": ["bool"],
    "sign": ["bool", "complex64", "complex128"],
    "invert": ["float32", "float64", "complex64"],
    "floor": ["complex64"],
    "ceil": ["complex128"],
    "trunc": ["complex64"],
    "round_half_to_even": ["bool", "int8", "int64", "complex64"],
    "round_half_away_from_zero": ["bool", "uint8", "complex128"],
    "deg2rad": ["complex64"],
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary(name):
    op = getattr(ps, name)
    accepted = [d for d in ALL_DTYPES if check_op(op, UNARY[name], [d])]
    assert set(LEGAL.get(name, ["int8", "float32", "float64"])) <= set(accepted), accepted
    assert not set(ILLEGAL.get(name, [])) & set(accepted), accepted


BINARY = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "true_div": np.true_divide,
    "int_div": np.floor_divide,
    "mod": np.mod,
    "pow": np.power,
    "maximum": np.maximum,
    "minimum": np.minimum,
    "eq": np.equal,
    "neq": np.not_equal,
    "lt": np.less,
    "le": np.less_equal,
    "gt": np.greater,
    "ge": np.greater_equal,
    "and_": np.bitwise_and,
    "or_": np.bitwise_or,
    "xor": np.bitwise_xor,
    "arctan2": np.arctan2,
    "second": lambda a, b: np.broadcast_to(b, np.broadcast_shapes(np.shape(a), np.shape(b))),
    "complex": lambda a, b: a + 1j * b,
    "complex_from_polar": lambda r, t: r * np.exp(1j * t),
}

PAIRS = [(d, d) for d in ALL_DTYPES] + [
    ("int8", "float32"),
    ("float32", "int8"),
    ("uint8", "int8"),
    ("int16", "uint16"),
    ("int32", "float32"),
    ("int64", "uint64"),
    ("uint64", "uint8"),
    ("bool", "int8"),
    ("int8", "bool"),
    ("bool", "float32"),
    ("float16", "int16"),
    ("float32", "float64"),
    ("float64", "float16"),
    ("complex64", "float64"),
    ("float32", "complex128"),
]


def _keep(name):
    """The points each binary op promises nothing for (checked elsewhere)."""

    def both_discrete(a, b):
        return a.dtype.name in discrete_types and b.dtype.name in discrete_types

    if name in ("int_div", "mod"):
        return lambda a, b: b != 0 if both_discrete(a, b) else np.ones((), bool)
    if name == "pow":
        return lambda a, b: b >= 0 if both_discrete(a, b) else np.ones((), bool)
    return None


# every op must accept at least these pairs
BINARY_LEGAL = {
    "add": ["bool", "int8", "uint64", "float16", "float32", "complex64"],
    "sub": ["int8", "uint8", "float32", "complex128"],
    "and_": ["bool", "int8", "uint8", "int64", "uint64"],
    "or_": ["bool", "int8", "uint16"],
    "xor": ["bool", "int32", "uint64"],
    "lt": ["bool", "int8", "float32", "complex64"],
    "int_div": ["bool", "int8", "uint8", "float32", "float64"],
    "complex": ["int8", "float32", "float64"],
}
BINARY_ILLEGAL = {
    "sub": ["bool"],
    "and_": ["float32", "complex64"],
    "or_": ["float64"],
    "xor": ["float16"],
    "int_div": ["complex64"],
    "mod": ["complex128"],
    "arctan2": ["complex64"],
    "complex": ["complex64", "complex128"],
}


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary(name):
    op = getattr(ps, name)
    accepted = [pair for pair in PAIRS if check_op(op, BINARY[name], pair, keep=_keep(name))]
    same = {a for a, b in accepted if a == b}
    assert set(BINARY_LEGAL.get(name, ["int8", "float32", "float64"])) <= same, accepted
    assert not set(BINARY_ILLEGAL.get(name, [])) & same, accepted


def test_variadic_add_mul():
    dtypes = ["int8", "float32", "uint8"]
    values = [
        np.array([1, -2, 3], "int8"),
        np.array([0.5, np.inf, -1e30], "float32"),
        np.array([0, 7], "uint8"),
    ]
    for op, ref in ((ps.add, np.add), (ps.mul, np.multiply)):
        assert check_op(op, lambda *a, ref=ref: functools.reduce(ref, a), dtypes, values=values)
        assert op(ps.int8(), ps.int8(), ps.int8(), ps.int8()).type.dtype == "int8"
        assert op(ps.int8()).type.dtype == "int8"  # one input: itself
    with pytest.raises(TypeError, match="at least one"):
        ps.add()


TERNARY_SETS = [
    ("float32", "float32", "float32"),
    ("float64", "float64", "float64"),
    ("int8", "int8", "int8"),
    ("uint8", "int16", "float32"),
    ("float16", "float16", "float16"),
    ("int64", "int64", "int64"),
]


def test_clip():
    small = [
        np.array([-np.inf, -2.0, 0.0, 0.5, 3.0, np.nan]),
        np.array([-1.0, 0.0, np.nan]),
        np.array([1.0, 2.0]),
    ]
    for dtypes in TERNARY_SETS:
        values = [v.astype(d) for v, d in zip(small, dtypes)] if "int" not in "".join(dtypes) else None
        assert check_op(ps.clip, np.clip, dtypes, values=values)
    # lo > hi gives hi, as np.clip
    x = ps.float64("x")
    assert ps.clip(x, 2.0, 1.0).eval({x: 0.0}) == 1.0
    with pytest.raises(TypeError, match="complex"):
        ps.clip(ps.complex64(), ps.complex64(), ps.complex64())


def test_switch():
    for cond in ("bool", "int8", "float32"):
        for a, b in (("float32", "float32"), ("int8", "float64"), ("bool", "bool"), ("complex64", "int8")):
            values = [edge_values(cond)[:4], edge_values(a)[:5], edge_values(b)[-3:]]
            assert check_op(ps.switch, np.where, (cond, a, b), values=values)
    c, a, b = ps.bool_("c"), ps.int8("a"), ps.float32("b")
    assert ps.switch(c, a, b).type.dtype == "float32"
    assert ps.switch(c, a, b).eval({c: True, a: 3, b: 1.5}) == 3.0
    assert ps.switch(c, a, b).eval({c: False, a: 3, b: 1.5}) == 1.5


# --- targeted edge cases -------------------------------------------------------------------


def test_integer_division_by_zero_is_an_error():
    for dtype in ("int8", "uint8", "int64", "uint64", "bool"):
        a, b = get_scalar_type(dtype)("a"), get_scalar_type(dtype)("b")
        for op in (ps.int_div, ps.mod):
            with pytest.raises(ZeroDivisionError, match="division by zero"):
                op(a, b).eval({a: 1, b: 0})
            with pytest.raises(ZeroDivisionError):
                op.impl(np.array([1, 2], dtype), np.array([1, 0], dtype))
    a, b = ps.int8("a"), ps.int8("b")
    with pytest.raises(ZeroDivisionError):
        (a // 0).eval({a: 3})
    with pytest.raises(ZeroDivisionError):
        (a % b).eval({a: 3, b: 0})


def test_float_division_by_zero_follows_ieee():
    x, y = ps.float32("x"), ps.float32("y")
    with np.errstate(all="ignore"):
        assert ps.int_div(x, y).eval({x: 1.0, y: 0.0}) == np.inf
        assert np.isnan(ps.mod(x, y).eval({x: 1.0, y: 0.0}))
        assert (x / y).eval({x: -1.0, y: 0.0}) == -np.inf
        assert np.isnan((x / y).eval({x: 0.0, y: 0.0}))
        # an integer dividend with a float divisor: a float result, IEEE
        i = ps.int8("i")
        assert ps.int_div(i, y).eval({i: 1, y: 0.0}) == np.inf
        # int / int is a true division into a float: 1/0 is inf
        j = ps.int8("j")
        assert (i / j).eval({i: 1, j: 0}) == np.inf
        assert ps.reciprocal(i).eval({i: 0}) == np.inf


def test_int_div_and_mod_signs():
    a, b = ps.int8("a"), ps.int8("b")
    for x, y in itertools.product([7, -7, 0], [2, -2]):
        assert ps.int_div(a, b).eval({a: x, b: y}) == x // y
        assert ps.mod(a, b).eval({a: x, b: y}) == x % y
    f, g = ps.float64("f"), ps.float64("g")
    assert ps.mod(f, g).eval({f: -7.5, g: 2.0}) == -7.5 % 2.0
    assert ps.int_div(f, g).eval({f: -7.5, g: 2.0}) == -7.5 // 2.0


def test_true_div_of_integers_is_floatX():
    i, j = ps.int8("i"), ps.int8("j")
    assert (i / j).type.dtype == "float64"
    assert (i / j).eval({i: 1, j: 3}) == 1 / 3
    with config.change_flags(floatX="float32"):
        out = i / j
        assert out.type.dtype == "float32"
        value = out.eval({i: 1, j: 3})
        assert value.dtype == "float32" and value == np.float32(1 / 3)
        # impl computes in floatX too, so a Composite's intermediate value has the node's dtype
        assert ps.true_div.impl(np.arange(1, 4, dtype="int16"), np.int8(3)).dtype == "float32"
    assert (ps.int8() / ps.float32()).type.dtype == "float32"


def test_integer_pow():
    a, b = ps.int8("a"), ps.int8("b")
    assert (a**b).eval({a: 2, b: 6}) == 64
    assert (a**b).eval({a: 2, b: 7}) == -128  # wraps, as NumPy
    with pytest.raises(ValueError, match="negative integer powers"):
        (a**b).eval({a: 2, b: -1})
    assert ps.pow(ps.bool_(), ps.bool_()).type.dtype == "int8"
    f = ps.float32("f")
    assert (f**b).eval({f: 2.0, b: -1}) == 0.5


def test_integer_wraparound():
    a = ps.int8("a")
    assert (-a).eval({a: -128}) == -128
    assert abs(a).eval({a: -128}) == -128
    assert (a + 1).eval({a: 127}) == -128
    u = ps.uint8("u")
    assert (-u).eval({u: 1}) == 255
    assert ps.sqr(u).eval({u: 16}) == 0


def test_rounding_ties():
    x = ps.float64("x")
    ties = [-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.49999999999999994, -0.49999999999999994, 2**52 + 0.5]
    for v in ties:
        assert ps.round_half_to_even(x).eval({x: v}) == np.round(v)
        assert ps.round_half_away_from_zero(x).eval({x: v}) == _round_half_away(np.array([v]))[0], v
    assert ps.round_half_away_from_zero(x).eval({x: 2.5}) == 3.0
    assert ps.round_half_away_from_zero(x).eval({x: -2.5}) == -3.0
    assert ps.round_half_to_even(x).eval({x: 2.5}) == 2.0
    assert math.copysign(1, ps.round_half_away_from_zero(x).eval({x: -0.4})) == -1  # -0.0
    f16 = ps.float16("h")
    assert ps.round_half_away_from_zero(f16).eval({f16: np.float16(1.5)}) == 2


def test_signed_zero_and_nan():
    x = ps.float64("x")
    assert math.copysign(1, (-x).eval({x: 0.0})) == -1
    assert math.copysign(1, ps.trunc(x).eval({x: -0.5})) == -1
    assert np.isnan(ps.sign(x).eval({x: np.nan}))
    assert ps.sign(x).eval({x: -0.0}) == 0
    assert np.isnan(ps.maximum(x, 1.0).eval({x: np.nan}))
    assert np.isnan(ps.minimum(1.0, x).eval({x: np.nan}))
    with np.errstate(divide="ignore"):
        assert ps.reciprocal(x).eval({x: -0.0}) == -np.inf
    assert ps.lt(x, 1.0).eval({x: np.nan}) == np.False_
    assert ps.neq(x, x).eval({x: np.nan}) == np.True_


def test_complex_comparisons_are_lexicographic():
    a, b = ps.complex128("a"), ps.complex128("b")
    assert ps.lt(a, b).eval({a: 1 + 5j, b: 2 + 0j})
    assert ps.lt(a, b).eval({a: 1 + 1j, b: 1 + 2j})
    assert not ps.ge(a, b).eval({a: 1 + 1j, b: 1 + 2j})


def test_bitwise_errors():
    with pytest.raises(TypeError, match="no common integer dtype"):
        ps.and_(ps.int64(), ps.uint64())
    with pytest.raises(TypeError, match="bool or integer"):
        ps.or_(ps.float32(), ps.int8())
    with pytest.raises(TypeError, match="bool or integer"):
        ~ps.float64()
    i, b = ps.int8("i"), ps.bool_("b")
    assert (i & b).eval({i: 3, b: np.True_}) == 1  # bool is 0/1, as NumPy
    assert (~b).eval({b: np.True_}) == np.False_  # logical not on bools
    assert (~i).eval({i: 0}) == -1


def test_complex_parts():
    z = ps.complex64("z")
    value = np.complex64(3 - 4j)
    assert ps.real(z).eval({z: value}) == 3 and ps.real(z).type.dtype == "float32"
    assert ps.imag(z).eval({z: value}) == -4 and ps.imag(z).type.dtype == "float32"
    assert abs(z).eval({z: value}) == 5 and abs(z).type.dtype == "float32"
    assert ps.conj(z).eval({z: value}) == 3 + 4j and ps.conj(z).type.dtype == "complex64"
    angle = ps.angle(z)
    assert angle.type.dtype == "float64"  # always float64, as PyTensor
    assert np.isclose(angle.eval({z: value}), np.angle(value))
    x, y = ps.float32("x"), ps.float32("y")
    c = ps.complex(x, y)
    assert c.type.dtype == "complex64"
    assert c.eval({x: 1.5, y: -2.0}) == 1.5 - 2j
    polar = ps.complex_from_polar(x, y)
    assert np.isclose(polar.eval({x: 2.0, y: np.float32(np.pi / 2)}), 2j, atol=1e-6)
    assert ps.complex(ps.int16(), ps.uint16()).type.dtype == "complex128"
    with pytest.raises(TypeError, match="must be real"):
        ps.complex(z, x)
    assert ps.angle(ps.float32("r")).eval({"r": -1.0}) == np.pi


def test_identity_and_second():
    x, y = ps.int8("x"), ps.float32("y")
    assert ps.identity(x).type == x.type
    assert ps.identity(x).eval({x: 5}) == 5
    s = ps.second(x, y)
    assert s.type == y.type and s.eval({x: 1, y: 2.5}) == 2.5
    # on arrays, second broadcasts its second input to the shape of both (fill)
    out = ps.second.impl(np.zeros((2, 3)), np.float32(7))
    assert out.shape == (2, 3) and (out == 7).all()


# --- casts ---------------------------------------------------------------------------------


@pytest.mark.parametrize("target", ALL_DTYPES)
def test_cast(target):
    for source in ALL_DTYPES:
        x = get_scalar_type(source)("x")
        if source.startswith("complex") and not target.startswith("complex"):
            with pytest.raises(TypeError, match="imaginary part"):
                ps.cast(x, target)
            continue
        out = ps.cast(x, target)
        assert out.type.dtype == target
        if source == target:
            assert out is x  # no op
            continue
        assert isinstance(out.owner.op, Cast)
        values = edge_values(source)
        if source[0] in "fc" and target in integer_types:  # float to int: only what fits
            info = np.iinfo(target)
            real = np.real(values).astype("float64")
            values = values[np.isfinite(real) & (real >= info.min) & (real <= info.max)]
        assert check_op(out.owner.op, lambda a, t=target: a.astype(t), [source], values=[values], native=True)


def test_cast_ops():
    assert ps.convert_to_int8 == Cast(ps.int8)
    assert hash(ps.convert_to_int8) == hash(Cast(ps.int8))
    assert ps.convert_to_int8 != ps.convert_to_int16
    assert str(ps.convert_to_float32) == "Cast{float32}"
    assert ps.convert_to_int8.o_type == ps.int8
    with pytest.raises(TypeError, match="ScalarType"):
        Cast("int8")
    x = ps.float64("x")
    assert ps.cast(x, "int8").eval({x: -3.7}) == -3  # C semantics: truncation
    assert ps.cast(x, "bool").eval({x: 0.1}) == np.True_
    assert ps.cast(3, "float32").type.dtype == "float32"
    with config.change_flags(floatX="float32"):
        assert ps.cast(x, "floatX").type.dtype == "float32"
    with pytest.raises(TypeError):
        ps.cast(x, "str")
    assert pickle.loads(pickle.dumps(ps.convert_to_uint16)) == ps.convert_to_uint16


# --- ops as objects ------------------------------------------------------------------------


def test_op_equality_hash_pickle_str():
    assert ps.add == pickle.loads(pickle.dumps(ps.add))
    assert hash(ps.exp) == hash(pickle.loads(pickle.dumps(ps.exp)))
    assert ps.add != ps.mul
    assert str(ps.add) == "add" and str(ps.true_div) == "true_div"
    assert ps.add.commutative and ps.add.associative and ps.add.identity == 0
    assert ps.mul.identity == 1
    assert not ps.sub.commutative


def test_arity_errors():
    with pytest.raises(TypeError, match="takes 1 input"):
        ps.exp(ps.float32(), ps.float32())
    with pytest.raises(TypeError, match="takes 2 input"):
        ps.sub(ps.float32())
    with pytest.raises(TypeError, match="takes 3 input"):
        ps.clip(ps.float32(), ps.float32())


def test_bad_inputs_name_the_problem():
    x = ps.float32("x")
    with pytest.raises(TypeError, match="not a number"):
        ps.add(x, "1")
    with pytest.raises(TypeError, match="not a number"):
        x * None
    with pytest.raises(TypeError, match="bool"):
        x - True
    with pytest.raises(TypeError, match="shape"):
        ps.add(x, np.ones(3))
    with pytest.raises(TypeError, match=r"Bad value for input x.*non-numeric"):
        ps.exp(x).eval({x: "0.5"})
    with pytest.raises(TypeError, match=r"Bad value for input x.*array of shape"):
        ps.exp(x).eval({x: np.ones(2, "float32")})
    with pytest.raises(TypeError, match="bool inputs"):
        -ps.bool_()
    with pytest.raises(TypeError, match="bool"):
        ps.sub(ps.bool_(), ps.bool_())


def test_infer_shape():
    x = ps.float32("x")
    node = ps.exp(x).owner
    assert node.op.infer_shape(None, node, [()]) == [()]


def test_every_op_pickles_and_has_a_name():
    from arignote.scalar import basic

    ops = [getattr(basic, n) for n in basic.__all__ if isinstance(getattr(basic, n), ps.ScalarOp)]
    assert len(ops) > 60
    for op in ops:
        clone = pickle.loads(pickle.dumps(op))
        assert clone == op and hash(clone) == hash(op), op
        assert str(op) and " " not in str(op)


def test_op_classes_and_pytensor_aliases_are_exported():
    import arignote.scalar as scalar_module

    assert isinstance(scalar_module.exp, scalar_module.Exp) and isinstance(
        scalar_module.add, scalar_module.Add
    )
    assert isinstance(scalar_module.gammaln, scalar_module.GammaLn)
    assert scalar_module.Owens_t is scalar_module.OwensT
    assert (
        scalar_module.scalar_maximum is scalar_module.maximum
        and scalar_module.ScalarMaximum is scalar_module.Maximum
    )
    assert scalar_module.scalar_abs is scalar_module.abs and scalar_module.floor_div is scalar_module.int_div
