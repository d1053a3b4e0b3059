"""TensorType: construction, printing, type relations, filter, value comparisons, memory,
and the variable constructors (``tensor``, ``matrix``, ``dmatrix``, ``dscalars`` ...)."""

from __future__ import annotations

import pickle
import re

import numpy as np
import pytest

import arignote.tensor as pt
from arignote.configdefaults import config
from arignote.graph.basic import Variable
from arignote.tensor.shape import SpecifyShape
from arignote.tensor.type import TensorType, values_eq_approx_tolerances
from arignote.tensor.variable import TensorConstant, TensorVariable

# --- construction ------------------------------------------------------------------------


class TestConstruction:
    def test_dtype_and_shape(self):
        t = TensorType("float64", (2, None))
        assert t.dtype == "float64"
        assert t.shape == (2, None)
        assert t.ndim == 2
        assert t.broadcastable == (False, False)
        assert t.numpy_dtype == np.dtype("float64")

    def test_static_ones_are_broadcastable(self):
        assert TensorType("float64", (2, 1, None, 1)).broadcastable == (False, True, False, True)

    @pytest.mark.parametrize(
        "dtype, expected",
        [
            ("int16", "int16"),
            (np.float32, "float32"),
            (np.dtype("uint8"), "uint8"),
            ("bool", "bool"),
            ("complex64", "complex64"),
        ],
    )
    def test_dtype_spellings(self, dtype, expected):
        assert TensorType(dtype, ()).dtype == expected

    def test_floatx_dtype_follows_config(self):
        assert TensorType("floatX", ()).dtype == config.floatX
        with config.change_flags(floatX="float32"):
            assert TensorType("floatX", ()).dtype == "float32"

    def test_shape_entries_are_normalised(self):
        t = TensorType("int8", (np.int64(3), None))
        assert t.shape == (3, None)
        assert type(t.shape[0]) is int

    def test_broadcastable_flags_are_accepted(self):
        # PyTensor 2's spelling: True means a static 1, False an unknown length
        assert TensorType("float64", broadcastable=(True, False)).shape == (1, None)
        assert TensorType("float64", (True, False)).shape == (1, None)

    def test_shape_and_broadcastable_together_is_an_error(self):
        with pytest.raises(ValueError, match="either shape or broadcastable"):
            TensorType("float64", shape=(1,), broadcastable=(True,))

    @pytest.mark.parametrize("bad", [(-1,), (2.0,), ("a",), ((2,),)])
    def test_bad_shape_entries(self, bad):
        with pytest.raises(TypeError, match="non-negative ints or None"):
            TensorType("float64", bad)

    @pytest.mark.parametrize("bad", [3, "ab"])
    def test_shape_must_be_a_tuple(self, bad):
        with pytest.raises(TypeError, match="tuple of ints and Nones"):
            TensorType("float64", bad)

    def test_shape_is_required(self):
        with pytest.raises(TypeError, match="needs a shape"):
            TensorType("float64")

    @pytest.mark.parametrize("bad", ["floa", "object", "U3", (2, None)])
    def test_bad_dtype(self, bad):
        with pytest.raises(TypeError, match="dtype"):
            TensorType(bad, (None,))

    def test_call_makes_a_tensor_variable(self):
        t = TensorType("float64", (2, None))
        v = t("v")
        assert isinstance(v, TensorVariable)
        assert v.type is t
        assert v.name == "v"
        assert v.owner is None
        assert t.make_variable().type is t

    def test_clone(self):
        t = TensorType("float64", (2, None))
        assert t.clone(dtype="int32") == TensorType("int32", (2, None))
        assert t.clone(shape=(None,)) == TensorType("float64", (None,))
        assert t.clone(broadcastable=(True, False)) == TensorType("float64", (1, None))
        assert t.clone() == t

    def test_scalar_type(self):
        from arignote.scalar.type import ScalarType

        assert TensorType("int16", (None,)).scalar_type() == ScalarType("int16")


# --- equality, hashing, printing ---------------------------------------------------------


class TestEqualityAndPrinting:
    def test_value_equality_and_hash(self):
        a = TensorType("float64", (2, None))
        b = TensorType("float64", (2, None))
        assert a == b
        assert hash(a) == hash(b)
        assert len({a, b}) == 1

    @pytest.mark.parametrize(
        "other",
        [
            TensorType("float32", (2, None)),
            TensorType("float64", (2, 1)),
            TensorType("float64", (None, None)),
            TensorType("float64", (2, None, None)),
        ],
    )
    def test_inequality(self, other):
        assert TensorType("float64", (2, None)) != other

    def test_name_does_not_change_equality(self):
        assert TensorType("float64", (None,), name="x") == TensorType("float64", (None,))

    def test_not_equal_to_other_types(self):
        from arignote.scalar.type import ScalarType

        assert TensorType("float64", ()) != ScalarType("float64")
        assert TensorType("float64", ()) != "float64"

    @pytest.mark.parametrize(
        "shape, text",
        [
            ((), "Scalar(float64, shape=())"),
            ((None,), "Vector(float64, shape=(?,))"),
            ((3,), "Vector(float64, shape=(3,))"),
            ((2, None), "Matrix(float64, shape=(2, ?))"),
            ((None, None, 1), "Tensor3(float64, shape=(?, ?, 1))"),
            ((None,) * 5, "Tensor5(float64, shape=(?, ?, ?, ?, ?))"),
        ],
    )
    def test_str(self, shape, text):
        assert str(TensorType("float64", shape)) == text

    def test_repr(self):
        assert repr(TensorType("float64", (2, None))) == "TensorType(float64, shape=(2, None))"
        assert repr(TensorType("int8", ())) == "TensorType(int8, shape=())"

    def test_named_type_prints_its_name(self):
        assert str(TensorType("float64", (None,), name="foo")) == "foo"

    def test_variable_str(self):
        assert str(pt.dmatrix()) == "<Matrix(float64, shape=(?, ?))>"
        assert repr(pt.dmatrix()) == "<Matrix(float64, shape=(?, ?))>"
        assert str(pt.dmatrix("x")) == "x"

    def test_pickle_round_trip(self):
        t = TensorType("int32", (1, None))
        t2 = pickle.loads(pickle.dumps(t))
        assert t2 == t
        assert t2.broadcastable == (True, False)


# --- in_same_class / is_super / convert_variable / filter_variable -----------------------


class TestRelations:
    def test_in_same_class_is_dtype_and_broadcastable_pattern(self):
        t = TensorType("float64", (2, None))
        assert t.in_same_class(TensorType("float64", (3, None)))  # only 1s matter
        assert t.in_same_class(TensorType("float64", (None, None)))
        assert not t.in_same_class(TensorType("float64", (2, 1)))
        assert not t.in_same_class(TensorType("float32", (2, None)))
        assert not t.in_same_class(TensorType("float64", (2, None, None)))
        assert not t.in_same_class(pt.dvector().type)

    def test_in_same_class_with_other_types(self):
        from arignote.scalar.type import ScalarType

        assert not TensorType("float64", ()).in_same_class(ScalarType("float64"))

    @pytest.mark.parametrize(
        "sup, sub, expected",
        [
            ((2, None), (2, 1), True),
            ((2, None), (2, 5), True),
            ((None, None), (2, 1), True),
            ((2, 1), (2, None), False),
            ((2, None), (3, None), False),
            ((2, None), (2, None), True),
            ((None,), (None, None), False),
            ((), (), True),
        ],
    )
    def test_is_super(self, sup, sub, expected):
        assert TensorType("float64", sup).is_super(TensorType("float64", sub)) is expected

    def test_is_super_needs_same_dtype(self):
        assert not pt.dvector().type.is_super(pt.fvector().type)
        assert not pt.fvector().type.is_super(pt.dvector().type)

    def test_is_super_of_the_prefixed_types(self):
        # the seed's check: x.type.is_super(lvector) / x.type.in_same_class(lvector)
        assert pt.lvector().type.is_super(pt.lvector)
        assert pt.lvector().type.in_same_class(pt.lvector)
        assert not pt.ivector().type.is_super(pt.lvector)

    def test_convert_variable_returns_the_same_variable_when_specific_enough(self):
        v = TensorType("float64", (2, 1))()
        assert TensorType("float64", (2, None)).convert_variable(v) is v

    def test_convert_variable_narrows_with_specify_shape(self):
        v = TensorType("float64", (2, None))()
        out = TensorType("float64", (2, 1)).convert_variable(v)
        assert isinstance(out.owner.op, SpecifyShape)
        assert out.owner.inputs[0] is v
        assert out.type == TensorType("float64", (2, 1))

    def test_convert_variable_combines_partial_shapes(self):
        v = TensorType("float64", (None, 3))()
        out = TensorType("float64", (2, None)).convert_variable(v)
        assert out.type.shape == (2, 3)
        assert TensorType("float64", (2, None)).is_super(out.type)

    @pytest.mark.parametrize(
        "target, source",
        [
            (TensorType("float64", (3, None)), TensorType("float64", (2, None))),  # conflicting
            (TensorType("float32", (None,)), TensorType("float64", (None,))),  # dtype
            (TensorType("float64", (None,)), TensorType("float64", (None, None))),  # ndim
        ],
    )
    def test_convert_variable_refuses_incompatible(self, target, source):
        assert target.convert_variable(source()) is None

    def test_convert_variable_of_other_type_kinds(self):
        from arignote.scalar.type import ScalarType

        assert pt.dscalar().type.convert_variable(ScalarType("float64")()) is None

    def test_filter_variable_keeps_more_specific(self):
        v2 = TensorType("float64", (2, 1))()
        assert TensorType("float64", (2, None)).filter_variable(v2) is v2

    def test_filter_variable_narrows(self):
        v1 = TensorType("float64", (2, None))()
        v3 = TensorType("float64", (2, 1)).filter_variable(v1)
        assert isinstance(v3.owner.op, SpecifyShape)
        assert v3.type.shape == (2, 1)
        np.testing.assert_array_equal(v3.eval({v1: np.ones((2, 1))}), np.ones((2, 1)))
        with pytest.raises(ValueError, match="dimension 1 is 3, expected 1"):
            v3.eval({v1: np.ones((2, 3))})

    def test_filter_variable_without_conversion(self):
        with pytest.raises(TypeError, match="Cannot convert Type Matrix"):
            pt.row().type.filter_variable(pt.matrix(), allow_convert=False)

    @pytest.mark.parametrize(
        "target, source",
        [
            (pt.dmatrix, pt.fmatrix),
            (pt.dvector, pt.dmatrix),
            (TensorType("float64", (3, None)), TensorType("float64", (2, None))),
        ],
    )
    def test_filter_variable_errors_name_both_types(self, target, source):
        pattern = f"Cannot convert Type {re.escape(str(source))}.* into Type {re.escape(str(target))}"
        with pytest.raises(TypeError, match=pattern):
            target.filter_variable(source())

    def test_filter_variable_of_values_makes_constants(self):
        c = pt.dmatrix.filter_variable(np.ones((2, 2), dtype="int32"))
        assert isinstance(c, TensorConstant)
        assert c.type == TensorType("float64", (2, 2))  # a constant's shape is fully known
        c = TensorType("float64", (2,)).filter_variable([1, 2])
        np.testing.assert_array_equal(c.data, [1.0, 2.0])
        assert c.dtype == "float64"
        assert pt.dscalar.filter_variable(1).type == pt.dscalar

    @pytest.mark.parametrize(
        "target, value, match",
        [
            (pt.dvector, 1.0, "Wrong number of dimensions"),
            (TensorType("float64", (3,)), [1, 2], r"static shape \(3,\)"),
            (pt.ivector, [1.5], "cannot hold the value"),
            (pt.dvector, ["a"], "numeric data"),
        ],
    )
    def test_filter_variable_of_bad_values(self, target, value, match):
        with pytest.raises(TypeError, match=match):
            target.filter_variable(value)


# --- filter ------------------------------------------------------------------------------


class TestFilter:
    def test_exact_ndarray_is_returned_unchanged(self):
        a = np.ones((2, 3))
        assert pt.dmatrix.filter(a) is a
        assert pt.dmatrix.filter(a, strict=True) is a

    def test_non_contiguous_views_are_accepted(self):
        a = np.ones((3, 4))[:, ::2]
        assert pt.dmatrix.filter(a, strict=True) is a

    @pytest.mark.parametrize(
        "value", [[[1, 2]], [[1.5, 2.0]], np.ones((2, 2), "int32"), np.ones((1, 1), "float32")]
    )
    def test_lossless_upcasts(self, value):
        out = pt.dmatrix.filter(value)
        assert type(out) is np.ndarray
        assert out.dtype == np.float64
        np.testing.assert_array_equal(out, np.asarray(value, dtype="float64"))

    @pytest.mark.parametrize(
        "ttype, value",
        [
            (pt.ivector, np.array([True, False])),
            (pt.fvector, np.array([1, 2], dtype="int16")),
            (pt.zvector, np.array([1.0])),
            (pt.lvector, np.array([1], dtype="uint32")),
            (TensorType("bool", (None,)), [1, 0]),  # Python values that keep their value
            (pt.bvector, [1, -128]),
            (pt.ivector, [1.0, 2.0]),
        ],
    )
    def test_conversions_that_keep_values(self, ttype, value):
        out = ttype.filter(value)
        assert out.dtype == ttype.dtype
        np.testing.assert_array_equal(out, np.asarray(value))

    @pytest.mark.parametrize(
        "value, got",
        [
            (np.ones((2, 2), dtype="float32"), "ndarray of dtype float32"),
            ([[1.0]], "list"),
            (np.float64(1.0), "float64"),
        ],
    )
    def test_strict_needs_an_ndarray_of_the_dtype(self, value, got):
        with pytest.raises(TypeError, match=rf"\(strict\) expects an ndarray of dtype float64, got {got}"):
            pt.dmatrix.filter(value, strict=True)

    def test_strict_still_checks_the_shape(self):
        with pytest.raises(TypeError, match="Wrong number of dimensions"):
            pt.dmatrix.filter(np.ones(3), strict=True)

    @pytest.mark.parametrize(
        "ttype, value",
        [
            (pt.fvector, np.array([0.5])),  # an ndarray downcast, even an exact one
            (pt.fvector, np.array([np.nan])),
            (pt.bvector, np.array([1])),
            (pt.bvector, np.array([1], dtype="uint8")),
            (pt.dvector, np.array([1j])),
            (TensorType("bool", (None,)), np.array([1.0])),
            (pt.irow, np.ones((1, 3))),
        ],
    )
    def test_array_downcasts_need_allow_downcast(self, ttype, value):
        with pytest.raises(TypeError, match=f"cannot hold ndarray of dtype {value.dtype}.*allow_downcast"):
            ttype.filter(value)
        out = ttype.filter(value, allow_downcast=True)
        assert out.dtype == ttype.dtype

    @pytest.mark.parametrize(
        "ttype, value, becomes",
        [
            (pt.bvector, [300], "[44]"),
            (TensorType("uint8", (None,)), [-1], "[255]"),
            (pt.ivector, [1.5], "[1]"),
            (pt.fvector, [2**30 + 1], "[1073741824.0]"),
        ],
    )
    def test_lossy_python_values_are_rejected(self, ttype, value, becomes):
        with pytest.raises(
            TypeError, match=r"cannot hold the value .* exactly \(it would become " + re.escape(becomes)
        ):
            ttype.filter(value)
        with pytest.raises(TypeError, match="allow_downcast"):
            ttype.filter(value, allow_downcast=False)

    def test_allow_downcast_wraps_like_numpy(self):
        np.testing.assert_array_equal(pt.bvector.filter([300], allow_downcast=True), [44])
        out = pt.fvector.filter(np.array([0.1]), allow_downcast=True)
        assert out.dtype == np.float32
        np.testing.assert_array_equal(out, np.float32([0.1]))

    def test_nan_and_inf_survive_lossless_checks(self):
        out = pt.fvector.filter([float("nan"), float("inf"), -float("inf"), 1.0])
        assert out.dtype == np.float32
        np.testing.assert_array_equal(out, np.float32([np.nan, np.inf, -np.inf, 1.0]))
        out = pt.dvector.filter([float("nan")])
        assert np.isnan(out[0])

    def test_python_floats_into_floatx(self):
        # allow_downcast=None lets a Python float be rounded to floatX (and only floatX)
        with config.change_flags(floatX="float32"):
            out = pt.fscalar.filter(0.1)
            assert out.dtype == np.float32
            assert out == np.float32(0.1)
            with pytest.raises(TypeError, match="cannot hold the value 0.1 exactly"):
                pt.fscalar.filter(0.1, allow_downcast=False)
            with pytest.raises(TypeError, match="cannot hold ndarray of dtype float64"):
                pt.fvector.filter(np.array([0.1]))
        with pytest.raises(TypeError, match="cannot hold the value 0.1 exactly"):
            pt.fscalar.filter(0.1)  # float32 is not floatX here

    def test_scalars_into_0d(self):
        out = pt.dscalar.filter(3)
        assert out.shape == () and out.dtype == np.float64 and out == 3.0
        assert pt.dscalar.filter(np.float64(1.5)) == 1.5
        assert pt.lscalar.filter(2**40) == 2**40

    @pytest.mark.parametrize(
        "value, shape",
        [(np.ones(2), (2,)), (np.ones((2, 2, 2)), (2, 2, 2)), (1.0, ())],
    )
    def test_wrong_number_of_dimensions(self, value, shape):
        with pytest.raises(TypeError, match=rf"Wrong number of dimensions: .* expects 2, got {len(shape)}"):
            pt.dmatrix.filter(value)

    @pytest.mark.parametrize(
        "ttype, value, dim, want, got",
        [
            (TensorType("float64", (2, None)), np.ones((3, 2)), 0, 2, 3),
            (pt.irow, np.ones((2, 3), dtype="int32"), 0, 1, 2),
            (pt.dcol, np.ones((4, 2)), 1, 1, 2),
            (TensorType("float64", (2, 0)), np.ones((2, 1)), 1, 0, 1),
        ],
    )
    def test_static_shape_mismatch(self, ttype, value, dim, want, got):
        with pytest.raises(TypeError, match=rf"dimension {dim}: expected {want}, got {got}"):
            ttype.filter(value)
        with pytest.raises(TypeError, match="static shape"):
            ttype.filter(value, allow_downcast=True)

    def test_static_shape_match(self):
        t = TensorType("float64", (2, None))
        assert t.filter(np.ones((2, 5))).shape == (2, 5)
        assert t.filter(np.ones((2, 0))).shape == (2, 0)

    @pytest.mark.parametrize(
        "value, what",
        [
            ([["a"]], "list with NumPy dtype <U1"),
            (np.array([[object()]]), "ndarray with NumPy dtype object"),
            (None, "NoneType"),
            ({}, "dict"),
            ("1.0", "str"),
        ],
    )
    def test_non_numeric_data(self, value, what):
        with pytest.raises(TypeError, match=f"expects numeric data, got {what}"):
            pt.dmatrix.filter(value)

    def test_symbolic_variables_are_not_data(self):
        with pytest.raises(TypeError, match="symbolic Variable"):
            pt.dvector.filter(pt.dvector())

    def test_ndarray_subclasses_become_plain_arrays(self):
        out = pt.dvector.filter(np.ma.array([1.0, 2.0]))
        assert type(out) is np.ndarray

    def test_python_bools_are_numbers_inside_data(self):
        # data (not graph constants): a list of bools is a bool array, losslessly upcast
        np.testing.assert_array_equal(pt.dvector.filter([True, False]), [1.0, 0.0])

    def test_is_valid_value(self):
        assert pt.irow.is_valid_value(np.ones((1, 3), dtype="int32"))
        assert not pt.irow.is_valid_value(np.ones((1, 3), dtype="int64"))
        assert not pt.irow.is_valid_value(np.ones((2, 3), dtype="int32"))
        assert not pt.irow.is_valid_value([[1, 2]])  # strict by default
        assert pt.irow.is_valid_value([[1, 2]], strict=False)


# --- values_eq, values_eq_approx ---------------------------------------------------------


class TestValuesEq:
    def test_values_eq(self):
        t = pt.dvector
        assert t.values_eq(np.array([1.0, 2.0]), np.array([1.0, 2.0]))
        assert not t.values_eq(np.array([1.0, 2.0]), np.array([1.0, 2.0 + 1e-12]))
        assert not t.values_eq(np.array([1.0]), np.array([1.0, 1.0]))
        assert not t.values_eq(np.array([1.0]), np.array([1.0], dtype="float32"))

    def test_values_eq_nan(self):
        assert pt.dvector.values_eq(np.array([np.nan, 1.0]), np.array([np.nan, 1.0]))
        assert not pt.dvector.values_eq(np.array([np.nan]), np.array([1.0]))
        assert pt.zvector.values_eq(np.array([np.nan + 1j]), np.array([np.nan + 1j]))

    def test_values_eq_ints(self):
        a = np.array([1, 2], dtype="int32")
        assert pt.ivector.values_eq(a, a.copy())
        assert not pt.ivector.values_eq(a, a + 1)

    def test_dtype_tolerances(self):
        # PyTensor 3's defaults
        assert values_eq_approx_tolerances["float16"] == (1e-3, 1e-3)
        assert values_eq_approx_tolerances["float32"] == (1e-5, 1e-5)
        assert values_eq_approx_tolerances["float64"] == (1e-5, 1e-8)

    @pytest.mark.parametrize(
        "dtype, close, far",
        [
            ("float64", 1.000002, 1.00002),
            ("float32", 1.000005, 1.0002),
            ("float16", 1.0, 1.004),
            ("complex128", 1.000002 + 0j, 1.00002 + 0j),
        ],
    )
    def test_values_eq_approx_per_dtype(self, dtype, close, far):
        t = TensorType(dtype, (None,))
        one = np.array([1.0], dtype=dtype)
        assert t.values_eq_approx(one, np.array([close], dtype=dtype))
        assert not t.values_eq_approx(one, np.array([far], dtype=dtype))

    def test_values_eq_approx_explicit_tolerances(self):
        t = pt.dvector
        assert t.values_eq_approx(np.array([1.0]), np.array([1.1]), rtol=0.2)
        assert not t.values_eq_approx(np.array([1.0]), np.array([1.1]), rtol=0.01)
        assert t.values_eq_approx(np.array([0.0]), np.array([0.05]), atol=0.1)

    def test_values_eq_approx_shapes_and_dtypes_must_match(self):
        assert not pt.dvector.values_eq_approx(np.ones(2), np.ones(3))
        assert not pt.dvector.values_eq_approx(np.array([1.0]), np.array([1.0], dtype="float32"))

    def test_values_eq_approx_ints_are_exact(self):
        a = np.array([1], dtype="int32")
        assert pt.ivector.values_eq_approx(a, a.copy())
        assert not pt.ivector.values_eq_approx(a, a + 1)

    def test_values_eq_approx_nan_and_inf(self):
        t = pt.dvector
        nan, inf = np.nan, np.inf
        assert t.values_eq_approx(np.array([nan, 1.0]), np.array([nan, 1.0]))
        assert not t.values_eq_approx(np.array([nan]), np.array([1.0]))
        assert t.values_eq_approx(np.array([nan]), np.array([1.0]), allow_remove_nan=True)
        assert t.values_eq_approx(np.array([inf, -inf]), np.array([inf, -inf]))
        assert not t.values_eq_approx(np.array([inf]), np.array([-inf]))
        assert not t.values_eq_approx(np.array([inf]), np.array([1.0]))
        assert t.values_eq_approx(np.array([inf]), np.array([1.0]), allow_remove_inf=True)

    def test_values_eq_approx_empty(self):
        assert pt.dvector.values_eq_approx(np.array([]), np.array([]))

    def test_seed_example_sum_versus_multiplication(self):
        # "a + a + a + a + a + a might not actually produce the exact same output as 6 * a"
        a = np.array([0.1])
        six = a + a + a + a + a + a
        assert not pt.dvector.values_eq(six, 6 * a)
        assert pt.dvector.values_eq_approx(six, 6 * a)


# --- memory ------------------------------------------------------------------------------


class TestMemory:
    def test_may_share_memory(self):
        a = np.ones(4)
        assert TensorType.may_share_memory(a, a)
        assert pt.dvector.may_share_memory(a, a[1:])
        assert not pt.dvector.may_share_memory(a, np.ones(4))
        assert not pt.dvector.may_share_memory(a, 1.0)
        assert not pt.dvector.may_share_memory([1.0], [1.0])

    @pytest.mark.parametrize(
        "ttype, shape, nbytes",
        [
            (pt.dmatrix, (2, 3), 48),
            (pt.fmatrix, (2, 3), 24),
            (pt.zvector, (4,), 64),
            (TensorType("bool", (None,)), (5,), 5),
            (pt.dscalar, (), 8),
            (pt.dmatrix, (0, 3), 0),
        ],
    )
    def test_shape_info_and_size(self, ttype, shape, nbytes):
        value = np.zeros(shape, dtype=ttype.dtype)
        info = ttype.get_shape_info(value)
        assert info == shape
        assert ttype.get_size(info) == nbytes == value.nbytes

    def test_value_zeros(self):
        z = pt.ivector.value_zeros((3,))
        assert z.dtype == np.int32
        np.testing.assert_array_equal(z, [0, 0, 0])


# --- constructors ------------------------------------------------------------------------


class TestConstructors:
    @pytest.mark.parametrize(
        "make, shape",
        [
            (pt.scalar, ()),
            (pt.vector, (None,)),
            (pt.matrix, (None, None)),
            (pt.row, (1, None)),
            (pt.col, (None, 1)),
            (pt.tensor3, (None,) * 3),
            (pt.tensor4, (None,) * 4),
            (pt.tensor5, (None,) * 5),
            (pt.tensor6, (None,) * 6),
            (pt.tensor7, (None,) * 7),
        ],
    )
    def test_generic_constructors(self, make, shape):
        v = make("v")
        assert isinstance(v, TensorVariable)
        assert v.name == "v"
        assert v.type == TensorType(config.floatX, shape)
        assert make(dtype="int8").dtype == "int8"
        with config.change_flags(floatX="float32"):
            assert make().dtype == "float32"

    def test_static_shape_keyword(self):
        assert pt.matrix(shape=(2, 3)).type.shape == (2, 3)
        assert pt.vector(shape=(None,)).type.shape == (None,)
        assert pt.tensor3(dtype="int32", shape=(1, None, 4)).type == TensorType("int32", (1, None, 4))

    def test_static_shape_keyword_needs_the_right_length(self):
        with pytest.raises(ValueError, match=r"matrix\(\) makes 2-d variables"):
            pt.matrix(shape=(2,))

    def test_dtype_is_keyword_only(self):
        with pytest.raises(TypeError):
            pt.vector("x", "int8")

    def test_tensor(self):
        x = pt.tensor("x", dtype="int32", shape=(None, 3))
        assert x.type == TensorType("int32", (None, 3))
        assert x.name == "x"
        assert pt.tensor(shape=(2,)).type == TensorType(config.floatX, (2,))
        assert pt.tensor(dtype="float32", broadcastable=(True, False)).type.shape == (1, None)
        with config.change_flags(floatX="float32"):
            assert pt.tensor(shape=(None,)).dtype == "float32"

    def test_tensor_name_must_be_a_string(self):
        with pytest.raises(TypeError, match="name must be a str"):
            pt.tensor((2, 3))

    PREFIXES = {
        "b": "int8",
        "w": "int16",
        "i": "int32",
        "l": "int64",
        "f": "float32",
        "d": "float64",
        "c": "complex64",
        "z": "complex128",
    }
    KINDS = {
        "scalar": (),
        "vector": (None,),
        "matrix": (None, None),
        "row": (1, None),
        "col": (None, 1),
        "tensor3": (None,) * 3,
        "tensor4": (None,) * 4,
    }

    @pytest.mark.parametrize("prefix", list(PREFIXES))
    @pytest.mark.parametrize("kind", list(KINDS))
    def test_prefixed_types(self, prefix, kind):
        t = getattr(pt, prefix + kind)
        assert t == TensorType(self.PREFIXES[prefix], self.KINDS[kind])
        v = t("v")
        assert v.type is t and v.name == "v"

    @pytest.mark.parametrize(
        "name, dtype, shape",
        [
            ("dscalars", "float64", ()),
            ("fvectors", "float32", (None,)),
            ("dmatrices", "float64", (None, None)),
            ("imatrices", "int32", (None, None)),
            ("lrows", "int64", (1, None)),
            ("dcols", "float64", (None, 1)),
            ("itensor3s", "int32", (None,) * 3),
            ("ztensor4s", "complex128", (None,) * 4),
        ],
    )
    def test_prefixed_plurals(self, name, dtype, shape):
        make = getattr(pt, name)
        three = make(3)
        assert len(three) == 3
        assert len({id(v) for v in three}) == 3
        assert all(v.type == TensorType(dtype, shape) and v.name is None for v in three)
        a, b = make("a", "b")
        assert (a.name, b.name) == ("a", "b")
        assert a.type == TensorType(dtype, shape)

    @pytest.mark.parametrize(
        "name, kind",
        [
            ("scalars", "scalar"),
            ("vectors", "vector"),
            ("matrices", "matrix"),
            ("rows", "row"),
            ("cols", "col"),
            ("tensor3s", "tensor3"),
            ("tensor7s", "tensor7"),
        ],
    )
    def test_floatx_plurals(self, name, kind):
        make = getattr(pt, name)
        vs = make(2)
        assert [v.type for v in vs] == [getattr(pt, kind)().type] * 2
        with config.change_flags(floatX="float32"):
            assert make(1)[0].dtype == "float32"

    def test_plural_name_forms(self):
        # PyTensor's conventions: one one-letter name gives one Variable, a string of
        # several letters one Variable per letter, a list one per entry
        x = pt.dscalars("x")
        assert isinstance(x, Variable) and x.name == "x"
        assert [v.name for v in pt.dscalars("xyz")] == ["x", "y", "z"]
        assert [v.name for v in pt.dscalars(["ab", "cd"])] == ["ab", "cd"]
        assert pt.dscalars(0) == []
        assert pt.dscalars() == []
        assert len(pt.dscalars(1)) == 1

    def test_matrix_plural_is_matrices(self):
        assert hasattr(pt, "dmatrices")
        assert not hasattr(pt, "dmatrixs")


def test_to_scalar_type_is_the_element_type():
    assert TensorType("float32", shape=(None, 3)).to_scalar_type().dtype == "float32"
    assert TensorType("int8", shape=()).to_scalar_type() == TensorType("int8", shape=()).scalar_type()
