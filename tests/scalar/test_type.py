"""ScalarType, its filter, Python-number dtypes, ``upcast`` and the output type preferences;
ScalarVariable operators and ScalarConstant."""

from __future__ import annotations

import functools
import pickle

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import arignote.scalar as ps
from arignote.configdefaults import config
from arignote.graph.basic import Variable
from arignote.scalar import op as sop
from arignote.scalar.type import (
    ScalarConstant,
    ScalarType,
    ScalarVariable,
    all_types,
    as_scalar,
    complex_types,
    constant,
    continuous_types,
    discrete_types,
    float_types,
    get_scalar_type,
    integer_types,
    python_scalar_dtype,
    upcast,
)

ALL = list(all_types)

# --- construction, equality ----------------------------------------------------------------


def test_type_groups():
    assert len(ALL) == 14 == len(set(ALL))
    assert set(discrete_types) | set(continuous_types) == set(ALL)
    assert not set(discrete_types) & set(continuous_types)
    assert set(integer_types) == {f"{u}int{b}" for u in ("", "u") for b in (8, 16, 32, 64)}
    assert float_types == ("float16", "float32", "float64")
    assert complex_types == ("complex64", "complex128")


@pytest.mark.parametrize("dtype", ALL)
def test_every_dtype(dtype):
    t = ScalarType(dtype)
    assert t.dtype == dtype
    assert t.numpy_dtype == np.dtype(dtype)
    assert t == ScalarType(np.dtype(dtype)) == ScalarType(np.dtype(dtype).type)
    assert hash(t) == hash(ScalarType(dtype))
    assert str(t) == dtype
    assert repr(t) == f"ScalarType({dtype})"
    assert get_scalar_type(dtype) is get_scalar_type(np.dtype(dtype))
    assert t.ndim == 0 and t.shape == () and t.broadcastable == ()
    assert pickle.loads(pickle.dumps(t)) == t


def test_dtype_spellings():
    assert ScalarType("float").dtype == "float64"
    assert ScalarType(int).dtype == "int64"
    assert ScalarType(bool).dtype == "bool"
    with config.change_flags(floatX="float32"):
        assert ScalarType("floatX").dtype == "float32"
    assert ScalarType("floatX").dtype == config.floatX


@pytest.mark.parametrize("bad", [None, "str", "object", "datetime64[s]", "longdouble", "int128", 3, "floatx"])
def test_bad_dtype(bad):
    with pytest.raises(TypeError, match="dtype"):
        ScalarType(bad)


def test_types_differ_by_dtype():
    assert ScalarType("float32") != ScalarType("float64")
    assert ScalarType("int8") != ScalarType("uint8")
    assert ScalarType("float32").in_same_class(ScalarType("float32"))
    assert not ScalarType("float32").in_same_class(ScalarType("float64"))
    assert ScalarType("float32").convert_variable(ps.float64()) is None


def test_make_variable_and_constant():
    x = ps.float32("x")
    assert isinstance(x, ScalarVariable) and x.name == "x" and x.dtype == "float32"
    c = ps.int8.make_constant(3)
    assert isinstance(c, ScalarConstant) and c.data == 3 and c.dtype == "int8"
    assert ps.scalar("y").type == get_scalar_type(config.floatX)
    assert ps.scalar("y", dtype="int16").type == ps.int16


def test_memory_and_size():
    t = ScalarType("float32")
    a = np.float32(1)
    assert t.may_share_memory(a, a) is False
    assert t.get_size(t.get_shape_info(a)) == 4
    assert ScalarType("complex128").get_size(ScalarType("complex128").get_shape_info(np.complex128(1))) == 16


# --- filter --------------------------------------------------------------------------------


def test_filter_returns_numpy_scalar_of_dtype():
    for dtype in ALL:
        v = ScalarType(dtype).filter(1)
        assert isinstance(v, np.generic) and v.dtype == dtype and v == 1


def test_filter_strict():
    t = ScalarType("float32")
    v = np.float32(1.5)
    assert t.filter(v, strict=True) is v
    for bad in (1.5, np.float64(1.5), np.array(1.5, dtype="float32"), 1, "1.5"):
        with pytest.raises(TypeError, match="strict"):
            t.filter(bad, strict=True)
    assert t.is_valid_value(v) and not t.is_valid_value(1.5)
    assert t.is_valid_value(1.5, strict=False)


@pytest.mark.parametrize(
    ("dtype", "value", "expected"),
    [
        ("int8", 3, 3),
        ("int8", 3.0, 3),
        ("int8", np.float32(-4.0), -4),
        ("int8", True, 1),
        ("int8", np.int64(127), 127),
        ("int16", 300, 300),
        ("uint8", 255, 255),
        ("uint64", 2**64 - 1, 2**64 - 1),
        ("int64", -(2**63), -(2**63)),
        ("float32", 0.5, 0.5),
        ("float32", 2**24, 2**24),
        ("float64", 2**53, 2**53),
        ("float64", 2**70, 2.0**70),
        ("float16", 0.25, 0.25),
        ("complex64", 1.5, 1.5),
        ("complex128", 1 + 2j, 1 + 2j),
        ("float64", 1 + 0j, 1.0),
        ("bool", 1, True),
        ("bool", np.float64(0), False),
        ("float32", np.array(1.5), 1.5),
        ("int32", np.array(7, dtype="int64"), 7),
    ],
)
def test_filter_lossless(dtype, value, expected):
    v = ScalarType(dtype).filter(value)
    assert v.dtype == dtype
    assert v == expected


@pytest.mark.parametrize(
    ("dtype", "value"),
    [
        ("int8", 300),  # overflow
        ("int8", -129),
        ("uint8", -1),
        ("uint64", -1),
        ("int64", 2**63),
        ("int8", 3.5),
        ("int8", float("nan")),
        ("int8", float("inf")),
        ("bool", 2),
        ("bool", 0.5),
        ("float32", 2**24 + 1),
        ("float32", np.float64(0.1)),
        ("float16", 0.1),
        ("float64", 1 + 2j),  # would drop the imaginary part
        ("float64", 2**70 + 1),
        ("float64", 10**400),
        ("int64", 2**70),
        ("complex64", np.complex128(0.1 + 0.1j)),
    ],
)
def test_filter_refuses_lossy(dtype, value):
    with pytest.raises(TypeError, match=r"exactly|does not fit"):
        ScalarType(dtype).filter(value)


def test_filter_allow_downcast():
    assert ScalarType("int8").filter(300, allow_downcast=True) == 44  # wraps as C does
    assert ScalarType("int8").filter(3.7, allow_downcast=True) == 3
    assert ScalarType("float32").filter(0.1, allow_downcast=True) == np.float32(0.1)
    assert ScalarType("float64").filter(2**70 + 1, allow_downcast=True) == 2.0**70
    with pytest.raises(TypeError):
        ScalarType("float32").filter(0.1, allow_downcast=False)


def test_filter_floatX_rule_for_python_floats():
    t32 = ScalarType("float32")
    with pytest.raises(TypeError, match="allow_downcast"):
        t32.filter(0.1)  # floatX is float64: no rounding allowed
    with config.change_flags(floatX="float32"):
        assert t32.filter(0.1) == np.float32(0.1)  # a Python float may round into floatX
        assert t32.filter(np.float64(0.1)) == np.float32(0.1)  # np.float64 is a float (as PyTensor)
        with pytest.raises(TypeError):
            t32.filter(0.1, allow_downcast=False)  # unless refused explicitly
        with pytest.raises(TypeError):
            t32.filter(1e300)  # overflow to inf is not rounding
        assert np.isinf(t32.filter(float("inf")))
        with pytest.raises(TypeError):
            ScalarType("float16").filter(0.1)  # only floatX gets the rule
    # NaN is kept (it is equal to NaN for this purpose)
    assert np.isnan(t32.filter(float("nan")))


@pytest.mark.parametrize("bad", ["1.5", b"1", None, object(), [1.0], (1, 2), {1: 2}, np.array(["a"])[0]])
def test_filter_non_numeric(bad):
    with pytest.raises(TypeError, match=r"non-numeric|array|scalar"):
        ScalarType("float64").filter(bad)


@pytest.mark.parametrize("bad", [np.zeros(3), np.zeros((1, 1)), [1, 2], np.zeros(0)])
def test_filter_arrays(bad):
    with pytest.raises(TypeError, match="array of shape"):
        ScalarType("float64").filter(bad)


def test_values_eq():
    t = ScalarType("float64")
    assert t.values_eq(np.float64("nan"), np.float64("nan"))
    assert t.values_eq(1.0, 1.0) and not t.values_eq(1.0, 1.0 + 1e-12)
    assert t.values_eq_approx(1.0, 1.0 + 1e-12)
    assert not t.values_eq_approx(1.0, 1.1)
    assert t.values_eq_approx(np.float64("nan"), np.float64("nan"))
    assert not t.values_eq_approx(1.0, 1.0 + 1e-12, rtol=0, atol=0)  # 0 means 0
    t32 = ScalarType("float32")
    assert t32.values_eq_approx(np.float32(1), np.float32(1 + 1e-6))
    ti = ScalarType("int8")
    assert ti.values_eq(np.int8(3), np.int8(3)) and not ti.values_eq_approx(np.int8(3), np.int8(4))


# --- dtype of Python numbers ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "dtype"),
    [
        (0, "int8"),
        (3, "int8"),
        (-128, "int8"),
        (127, "int8"),
        (128, "int16"),
        (300, "int16"),
        (-129, "int16"),
        (2**15, "int32"),
        (2**31, "int64"),
        (-(2**63), "int64"),
        (2**63, "uint64"),
        (2**64 - 1, "uint64"),
        (3.0, "float32"),
        (0.5, "float32"),
        (-0.0, "float32"),
        (0.1, "float64"),
        (1e300, "float64"),
        (float("inf"), "float32"),  # exactly representable (as PyTensor)
        (float("nan"), "float64"),  # NaN equals nothing, so it is not "exact" in float32 (as PyTensor)
        (1j, "complex128"),
        (complex(1, 0), "complex128"),
    ],
)
def test_python_scalar_dtype(value, dtype):
    assert python_scalar_dtype(value) == dtype
    assert constant(value).dtype == dtype


@pytest.mark.parametrize(
    ("value", "dtype"),
    [(0.1, "float32"), (3.0, "float32"), (1e300, "float64"), (float("nan"), "float32"), (3, "int8")],
)
def test_python_scalar_dtype_floatX_float32(value, dtype):
    with config.change_flags(floatX="float32"):
        assert python_scalar_dtype(value) == dtype


def test_python_scalar_dtype_errors():
    with pytest.raises(OverflowError, match="64-bit"):
        python_scalar_dtype(2**64)
    with pytest.raises(OverflowError):
        python_scalar_dtype(-(2**63) - 1)
    for b in (True, False):
        with pytest.raises(TypeError, match=r"bool.*int\(x\)"):
            python_scalar_dtype(b)
    with pytest.raises(TypeError, match="not a Python number"):
        python_scalar_dtype("3")


def test_numpy_scalars_keep_their_dtype():
    # np.float64 subclasses float; its dtype is still float64, never narrowed
    assert constant(np.float64(0.5)).dtype == "float64"
    assert constant(np.int64(3)).dtype == "int64"
    assert constant(np.bool_(True)).dtype == "bool"
    assert constant(np.float16(1)).dtype == "float16"
    assert constant(np.array(2, dtype="uint16")).dtype == "uint16"
    assert constant(3, dtype="float32").dtype == "float32"
    assert constant(0.1, dtype="float32").data == np.float32(0.1)
    with pytest.raises(TypeError):
        constant(300, dtype="int8")


# --- upcast --------------------------------------------------------------------------------

dtype_st = st.sampled_from(ALL)


@given(dtype_st, dtype_st)
def test_upcast_is_numpy_promotion(a, b):
    assert upcast(a, b) == np.result_type(a, b).name == np.promote_types(a, b).name
    # what NumPy computes on values of these dtypes
    assert upcast(a, b) == (np.ones((), a) + np.ones((), b)).dtype.name


@given(st.lists(dtype_st, min_size=1, max_size=5))
def test_upcast_folds_left_to_right(dtypes):
    """``upcast(a, b, c)`` is the dtype of ``(a + b) + c``, as NumPy computes a chain (and as
    PyTensor's upcast does); NumPy's promotion is not associative, so this is not always
    ``numpy.result_type(a, b, c)``."""
    assert upcast(*dtypes) == functools.reduce(np.promote_types, map(np.dtype, dtypes)).name
    values = [np.ones((), d) for d in dtypes]
    assert upcast(*dtypes) == functools.reduce(np.add, values).dtype.name


@given(dtype_st, dtype_st)
def test_upcast_symmetric_and_idempotent(a, b):
    assert upcast(a, b) == upcast(b, a)
    assert upcast(a, a) == a
    assert upcast(a, upcast(a, b)) == upcast(a, b)
    assert ScalarType(a).upcast(ScalarType(b)) == upcast(a, b)


def test_upcast_is_not_associative():
    assert upcast("int16", "uint16", "float16") == "float64"  # int32 + float16
    assert upcast("uint16", "float16", "int16") == "float32"  # float32 + int16
    assert np.result_type("int16", "uint16", "float16") == "float32"


def test_upcast_examples():
    assert upcast("int8", "uint8") == "int16"
    assert upcast("int64", "uint64") == "float64"
    assert upcast("int32", "float32") == "float64"
    assert upcast("int16", "float16") == "float32"
    assert upcast("bool", "bool") == "bool"
    assert upcast("float32", "complex64") == "complex64"
    assert upcast("float64", "complex64") == "complex128"
    with config.change_flags(floatX="float32"):
        assert upcast("floatX", "int8") == "float32"
    with pytest.raises(TypeError):
        upcast("float32", "object")
    with pytest.raises(TypeError):
        upcast()


# --- output type preferences --------------------------------------------------------------

T = get_scalar_type


def test_upcast_out_family():
    assert sop.upcast_out(T("int8"), T("float32")) == [T("float32")]
    assert sop.upcast_out(T("bool"), T("bool")) == [T("bool")]
    with pytest.raises(TypeError, match="bool"):
        sop.upcast_out_nobool(T("bool"), T("bool"))
    assert sop.upcast_out_nobool(T("bool"), T("int8")) == [T("int8")]
    assert sop.upcast_out_min8(T("bool"), T("bool")) == [T("int8")]
    assert sop.upcast_out_min8(T("bool"), T("uint16")) == [T("uint16")]
    with pytest.raises(TypeError, match="complex"):
        sop.upcast_out_no_complex(T("complex64"), T("float32"))
    assert sop.upcast_out_no_complex(T("int8"), T("uint8")) == [T("int16")]


def test_same_out_family():
    assert sop.same_out(T("uint16"), T("float64")) == [T("uint16")]
    with pytest.raises(TypeError, match="bool"):
        sop.same_out_nobool(T("bool"))
    assert sop.same_out_nobool(T("int8")) == [T("int8")]
    with pytest.raises(TypeError, match="complex"):
        sop.same_out_nocomplex(T("complex128"))
    assert sop.same_out_nocomplex(T("float16")) == [T("float16")]
    for bad in ("int8", "bool", "complex64"):
        with pytest.raises(TypeError, match="float"):
            sop.same_out_float_only(T(bad))
    assert sop.same_out_float_only(T("float32")) == [T("float32")]


@pytest.mark.parametrize(
    ("dtype", "expected"),
    [
        ("bool", "float32"),
        ("int8", "float32"),
        ("uint8", "float32"),
        ("int16", "float32"),
        ("uint16", "float32"),
        ("int32", "float64"),
        ("uint32", "float64"),
        ("int64", "float64"),
        ("uint64", "float64"),
        ("float16", "float16"),
        ("float32", "float32"),
        ("float64", "float64"),
        ("complex64", "complex64"),
        ("complex128", "complex128"),
    ],
)
def test_upgrade_to_float(dtype, expected):
    assert sop.upgrade_to_float(T(dtype)) == [T(expected)]
    assert sop.float_dtype_for(dtype) == expected
    # up to 32 bits, the float holds every value of the integer type exactly
    if dtype in integer_types and np.iinfo(dtype).bits <= 32:
        info = np.iinfo(dtype)
        assert np.finfo(expected).nmant + 1 >= info.bits - (info.min < 0)
    if dtype in complex_types:
        with pytest.raises(TypeError, match="complex"):
            sop.upgrade_to_float_no_complex(T(dtype))
    else:
        assert sop.upgrade_to_float_no_complex(T(dtype)) == [T(expected)]


def test_upgrade_to_float_binary():
    assert sop.upgrade_to_float(T("int8"), T("float16")) == [T("float32")]
    assert sop.upgrade_to_float(T("int32"), T("float32")) == [T("float64")]
    assert sop.upgrade_to_float(T("uint8"), T("complex64")) == [T("complex64")]
    assert sop.upgrade_to_float64(T("int8")) == [T("float64")]
    assert sop.upgrade_to_float64(T("complex64")) == [T("complex128")]


def test_fixed_outputs():
    assert sop.float_out(T("int8")) == [T("float64")]
    assert sop.int_out(T("float32")) == [T("int64")]
    assert sop.bool_out(T("float32"), T("int8")) == [T("bool")]
    assert sop.floatX_out(T("int8")) == [T(config.floatX)]
    with config.change_flags(floatX="float32"):
        assert sop.floatX_out(T("int8")) == [T("float32")]
    assert sop.complex_out(T("float32"), T("float32")) == [T("complex64")]
    assert sop.complex_out(T("int16"), T("uint16")) == [T("complex128")]  # they promote to int32
    assert sop.complex_out(T("float64"), T("int8")) == [T("complex128")]


def test_transfer_type_and_specific_out():
    tt = sop.transfer_type(1, T("int8"))
    assert tt(T("float32"), T("uint16")) == [T("uint16"), T("int8")]
    assert tt == sop.transfer_type(1, T("int8")) and hash(tt) == hash(sop.transfer_type(1, T("int8")))
    assert tt != sop.transfer_type(0, T("int8"))
    assert "transfer_type" in repr(tt)
    so = sop.specific_out(T("int16"))
    assert so(T("float64")) == [T("int16")]
    assert so == sop.specific_out(T("int16")) != sop.specific_out(T("int32"))
    assert hash(so) == hash(sop.specific_out(T("int16")))
    assert "int16" in repr(so)


def test_output_types_preference_must_be_callable():
    with pytest.raises(TypeError, match="callable"):
        sop.ScalarOp("upcast_out")


def test_output_types_preference_result_is_checked():
    bad = sop.UnaryScalarOp(lambda t: [t, t], name="two_outs")
    with pytest.raises(TypeError, match="expected 1"):
        bad(ps.float32())
    with pytest.raises(NotImplementedError, match="output_types"):
        sop.UnaryScalarOp(name="nopref")(ps.float32())


# --- ScalarVariable ------------------------------------------------------------------------


def test_variable_operators():
    x, y = ps.float32("x"), ps.float32("y")
    cases = {
        "add": x + y,
        "sub": x - y,
        "mul": x * y,
        "true_div": x / y,
        "int_div": x // y,
        "mod": x % y,
        "pow": x**y,
        "lt": x < y,
        "le": x <= y,
        "gt": x > y,
        "ge": x >= y,
    }
    for name, out in cases.items():
        assert out.owner.op is getattr(ps, name)
        assert out.owner.inputs == [x, y]
    assert (-x).owner.op is ps.neg
    assert abs(x).owner.op is ps.abs
    i, j = ps.int8("i"), ps.int8("j")
    assert (i & j).owner.op is ps.and_
    assert (i | j).owner.op is ps.or_
    assert (i ^ j).owner.op is ps.xor
    assert (~i).owner.op is ps.invert


def test_reflected_operators_with_python_numbers():
    x = ps.float32("x")
    for expr, op in [
        (2 + x, ps.add),
        (2 - x, ps.sub),
        (2 * x, ps.mul),
        (2 / x, ps.true_div),
        (2 // x, ps.int_div),
        (2 % x, ps.mod),
        (2**x, ps.pow),
    ]:
        assert expr.owner.op is op
        c, v = expr.owner.inputs
        assert isinstance(c, ScalarConstant) and c.data == 2 and c.dtype == "int8" and v is x
        assert expr.dtype == "float32"
    i = ps.int8("i")
    assert (1 & i).owner.inputs[1] is i and (1 | i).owner.op is ps.or_ and (1 ^ i).owner.op is ps.xor


def test_python_constants_in_expressions():
    x, i = ps.float32("x"), ps.int8("i")
    assert (x + 3).dtype == "float32"
    assert (x + 3.0).dtype == "float32"
    assert (x + 0.1).dtype == "float64"  # 0.1 is a float64 constant
    assert (i + 3).dtype == "int8"
    assert (i + 300).dtype == "int16"
    assert (i + 2**40).dtype == "int64"
    assert (i * 1.5).dtype == "float32"
    assert (x + np.float64(0.5)).dtype == "float64"
    with config.change_flags(floatX="float32"):
        assert (x + 0.1).dtype == "float32"
    with pytest.raises(TypeError, match="bool"):
        x + True
    with pytest.raises(OverflowError):
        i + 2**64


def test_eq_is_identity_and_bool_raises():
    x, y = ps.float32("x"), ps.float32("y")
    assert (x == x) is True
    assert (x == y) is False
    assert x != y
    assert ps.eq(x, y).owner.op is ps.eq
    assert len({x, y, x}) == 2
    with pytest.raises(TypeError, match="truth value"):
        if x:
            pass
    with pytest.raises(TypeError, match="truth value"):
        bool(x < y)
    with pytest.raises(TypeError):
        x < y < 3


def test_variable_eval():
    x = ps.float32("x")
    r = ps.exp(x).eval({x: np.float32(0.5)})
    assert isinstance(r, np.float32) and np.isclose(r, np.exp(np.float32(0.5)))
    r = (x + 1).eval({"x": 2.0})
    assert r == 3.0 and r.dtype == "float32"
    with pytest.raises(TypeError):
        (x + 1).eval({x: "a"})


# --- ScalarConstant ------------------------------------------------------------------------


def test_constant_signature():
    nan1, nan2 = constant(np.float64("nan")), constant(np.float64("nan"))
    assert nan1.signature() == nan2.signature() and nan1.equals(nan2)  # NaN constants merge
    pos, neg = constant(0.0), constant(-0.0)
    assert pos.dtype == neg.dtype == "float32"
    assert pos.signature() != neg.signature() and not pos.equals(neg)  # 1/x tells them apart
    assert not constant(np.int8(1)).equals(constant(np.int16(1)))  # types differ
    assert constant(1.5).equals(constant(np.float32(1.5)))
    assert not constant(np.float32(1.5)).equals(constant(np.float64(1.5)))
    assert hash(constant(2).signature()) == hash(constant(2).signature())


def test_constant_str_and_name():
    assert str(constant(2.5)) == "2.5"
    assert str(constant(2.5, name="half")) == "half"
    assert str(constant(np.int8(3))) == "3"
    c = constant(3)
    assert c.owner is None and c.value == 3
    assert c.clone() is c


def test_constant_pickle():
    c = constant(np.float32(1.25), name="c")
    c2 = pickle.loads(pickle.dumps(c))
    assert c2.equals(c) and c2.name == "c" and c2.data.dtype == "float32"


def test_as_scalar():
    x = ps.float64("x")
    assert as_scalar(x) is x
    c = as_scalar(3)
    assert isinstance(c, ScalarConstant) and c.dtype == "int8"
    assert as_scalar(np.array(2.5)).dtype == "float64"
    with pytest.raises(TypeError, match="shape"):
        as_scalar(np.zeros(3))
    with pytest.raises(TypeError, match="shape"):
        as_scalar([1, 2])
    with pytest.raises(TypeError, match="not a number"):
        as_scalar("a")
    with pytest.raises(TypeError, match="not a number"):
        as_scalar(None)
    with pytest.raises(TypeError, match="bool"):
        as_scalar(True)

    class OtherType(ScalarType.__mro__[1]):  # a non-scalar Type
        def filter(self, data, strict=False, allow_downcast=None):
            return data

    with pytest.raises(TypeError, match="as a scalar"):
        as_scalar(Variable(OtherType(), None, None))


def test_scalar_variable_tensor_like_methods():
    """``ndim``, ``astype``, ``zeros_like`` and ``ones_like`` as on a 0-d tensor."""
    y = ps.float64("y")
    assert y.ndim == 0 and ps.constant(2).ndim == 0
    outs = [y.astype("int8"), y.zeros_like(), y.ones_like("int32")]
    assert [o.type.dtype for o in outs] == ["int8", "float64", "int32"]
    got = [o.eval({y: 2.7}) for o in outs]
    assert [np.asarray(g).dtype for g in got] == ["int8", "float64", "int32"]
    assert [np.asarray(g).item() for g in got] == [2, 0.0, 1]


def test_scalar_variable_shape_is_an_empty_int64_vector():
    s = ps.float64("s")
    shape = s.shape
    assert shape.type.dtype == "int64" and shape.type.shape == (0,)
    np.testing.assert_array_equal(shape.eval(), np.zeros(0, dtype=np.int64))
    assert tuple(shape.eval()) == np.shape(np.float64(1.0))  # NumPy's shape of a scalar: ()
