"""arignote.tensor.basic: constants and conversions, scalar<->tensor, static constant
values, and the layout helpers (transpose, matrix_transpose, expand_dims, squeeze,
flatten, swapaxes, moveaxis)."""

from __future__ import annotations

import numpy as np
import pytest

import arignote.tensor as pt
from arignote.configdefaults import config
from arignote.graph.basic import Apply
from arignote.scalar.type import ScalarType
from arignote.tensor.basic import (
    NotScalarConstantError,
    ScalarFromTensor,
    TensorFromScalar,
    as_tensor,
    as_tensor_variable,
    constant,
    expand_dims,
    flatten,
    get_underlying_scalar_constant_value,
    matrix_transpose,
    moveaxis,
    scalar_from_tensor,
    squeeze,
    swapaxes,
    tensor_from_scalar,
    transpose,
)
from arignote.tensor.elemwise import DimShuffle
from arignote.tensor.shape import Shape_i, SpecifyShape
from arignote.tensor.type import TensorType
from arignote.tensor.variable import TensorConstant, TensorVariable
from tests.tensor.utils import assert_infer_shape

RNG = np.random.default_rng(7)
V234 = RNG.normal(size=(2, 3, 4))

# --- constant ----------------------------------------------------------------------------


class TestConstantDtypes:
    @pytest.mark.parametrize(
        "value, dtype",
        [
            (0, "int8"),
            (3, "int8"),
            (127, "int8"),
            (-128, "int8"),
            (128, "int16"),
            (-129, "int16"),
            (300, "int16"),
            (2**15, "int32"),
            (2**31 - 1, "int32"),
            (2**31, "int64"),
            (-(2**63), "int64"),
            (2**63, "uint64"),  # NumPy's choice for what int64 cannot hold
        ],
    )
    def test_python_ints_take_the_smallest_int_dtype(self, value, dtype):
        c = constant(value)
        assert c.dtype == dtype
        assert c.data == value
        assert c.type.shape == ()

    def test_python_int_too_large(self):
        with pytest.raises(OverflowError, match="does not fit in any 64-bit integer dtype"):
            constant(2**64)

    @pytest.mark.parametrize(
        "value, dtype",
        [
            (3.0, "float32"),
            (0.5, "float32"),
            (-2.25, "float32"),
            (0.1, "float64"),
            (1e40, "float64"),  # overflows float32
            (1e-50, "float64"),
            (float("nan"), "float64"),  # as PyTensor 3: NaN is not "equal" to its float32
            (float("inf"), "float32"),
            (-float("inf"), "float32"),
        ],
    )
    def test_python_floats_float32_when_exact(self, value, dtype):
        c = constant(value)
        assert c.dtype == dtype
        np.testing.assert_array_equal(c.data, np.asarray(value, dtype=dtype))

    def test_python_floats_with_floatx_float32(self):
        with config.change_flags(floatX="float32"):
            c = constant(0.1)
            assert c.dtype == "float32"
            assert c.data == np.float32(0.1)
            assert constant(1e40).dtype == "float64"  # would overflow
            assert (pt.vector() * 0.1).dtype == "float32"

    def test_python_complex(self):
        c = constant(1 + 2j)
        assert c.dtype == "complex128"
        assert c.data == 1 + 2j

    @pytest.mark.parametrize(
        "value",
        [
            np.float64(0.5),
            np.float32(0.1),
            np.int64(3),
            np.uint8(3),
            np.bool_(True),
            np.complex64(1j),
            np.float16(1.5),
        ],
    )
    def test_numpy_scalars_keep_their_dtype(self, value):
        c = constant(value)
        assert c.dtype == value.dtype.name
        assert c.type.shape == ()
        assert c.data == value

    @pytest.mark.parametrize("dtype", ["int16", "uint32", "float32", "complex64", "bool"])
    def test_numpy_arrays_keep_their_dtype_and_shape(self, dtype):
        a = np.ones((2, 3), dtype=dtype)
        c = constant(a)
        assert c.type == TensorType(dtype, (2, 3))
        np.testing.assert_array_equal(c.data, a)

    @pytest.mark.parametrize(
        "value, dtype, shape",
        [
            ([1, 2, 3], "int64", (3,)),  # NumPy's default dtypes, as in PyTensor 3
            ([1, 2.5], "float64", (2,)),
            ((0.5, 0.25), "float64", (2,)),
            ([[1, 2], [3, 4]], "int64", (2, 2)),
            ([1, 2**40], "int64", (2,)),
            ([1j, 2], "complex128", (2,)),
            ([True, False], "bool", (2,)),
            ([np.float32(1), np.float32(2)], "float32", (2,)),
        ],
    )
    def test_lists_and_tuples(self, value, dtype, shape):
        c = constant(value)
        assert c.dtype == dtype
        assert c.type.shape == shape
        np.testing.assert_array_equal(c.data, np.asarray(value))

    def test_empty_sequences_are_floatx(self):
        assert constant([]).type == TensorType(config.floatX, (0,))
        assert constant(()).type == TensorType(config.floatX, (0,))
        with config.change_flags(floatX="float32"):
            assert constant([]).dtype == "float32"

    def test_lists_with_python_floats_upcast_float32_tensors(self):
        assert (pt.fvector() + [1.0, 2.0]).dtype == "float64"
        assert (pt.ivector() + [1, 2]).dtype == "int64"

    def test_ragged_lists(self):
        with pytest.raises(ValueError, match="inhomogeneous"):
            constant([[1, 2], [3]])


class TestConstantArguments:
    def test_explicit_dtype(self):
        c = constant(3, dtype="float32")
        assert c.dtype == "float32" and c.data == 3.0
        assert constant([1, 2], dtype="int8").dtype == "int8"
        assert constant(2, dtype="floatX").dtype == config.floatX
        assert constant(np.arange(3), dtype="float32").dtype == "float32"

    @pytest.mark.parametrize(
        "value, dtype",
        [(3.5, "int32"), (300, "int8"), (-1, "uint8"), ([0.1], "float32"), (1j, "float64")],
    )
    def test_explicit_dtype_must_hold_python_values_exactly(self, value, dtype):
        with pytest.raises(TypeError, match=f"cannot be represented exactly in dtype {dtype}"):
            constant(value, dtype=dtype)

    def test_explicit_dtype_casts_arrays(self):
        # an ndarray with an explicit dtype is an explicit cast (NumPy's astype)
        c = constant(np.array([1.5, 2.5]), dtype="int32")
        np.testing.assert_array_equal(c.data, [1, 2])

    def test_name(self):
        assert constant(2, name="two").name == "two"
        assert constant(2).name is None

    @pytest.mark.parametrize(
        "value, ndim, shape",
        [
            (3, 2, (1, 1)),
            ([1, 2], 2, (1, 2)),
            ([[1, 2]], 1, (2,)),
            ([[[5]]], 0, ()),
            ([1, 2], 1, (2,)),
        ],
    )
    def test_ndim_pads_or_squeezes_on_the_left(self, value, ndim, shape):
        c = constant(value, ndim=ndim)
        assert c.type.shape == shape
        np.testing.assert_array_equal(c.data.ravel(), np.ravel(value))

    def test_ndim_cannot_drop_real_dimensions(self):
        with pytest.raises(ValueError, match=r"Cannot make a 0-d constant from a value of shape \(2,\)"):
            constant([1, 2], ndim=0)

    def test_result_is_a_read_only_copy(self):
        a = np.arange(3.0)
        c = constant(a)
        assert isinstance(c, TensorConstant)
        assert c.data is not a
        assert not c.data.flags.writeable


class TestConstantErrors:
    @pytest.mark.parametrize("value", [True, False])
    def test_python_bool_is_rejected_with_a_hint(self, value):
        with pytest.raises(TypeError, match=rf"Python bool \({value}\).*numpy.bool_"):
            constant(value)
        with pytest.raises(TypeError, match="Python bool"):
            as_tensor_variable(value)

    def test_mixed_bools_and_numbers(self):
        with pytest.raises(TypeError, match="Mixed Python bools and numbers"):
            constant([True, 2])
        with pytest.raises(TypeError, match="Mixed Python bools and numbers"):
            as_tensor_variable([[1.0], [False]], dtype="float64")

    @pytest.mark.parametrize(
        "value, what",
        [
            ("abc", "str"),
            (None, "NoneType"),
            (object(), "object"),
            ({"a": 1}, "dict"),
            (np.array(["a"]), "ndarray"),
            (np.datetime64("2020-01-01"), "datetime64"),
        ],
    )
    def test_non_numeric(self, value, what):
        with pytest.raises(TypeError, match=f"Cannot make a tensor constant from {what}"):
            constant(value)

    def test_non_numeric_with_dtype(self):
        with pytest.raises(TypeError, match="Cannot make a tensor constant from str"):
            constant("1", dtype="float64")

    def test_variables_are_not_values(self):
        with pytest.raises(TypeError, match="needs a value, got the symbolic Variable"):
            constant(pt.dscalar())


# --- as_tensor_variable ------------------------------------------------------------------


class TestAsTensorVariable:
    def test_tensor_variables_pass_through(self):
        x = pt.dmatrix()
        assert as_tensor_variable(x) is x
        assert as_tensor(x) is x
        assert as_tensor_variable(x, ndim=2) is x
        assert as_tensor_variable(x, dtype="float64") is x

    def test_apply_nodes_give_their_default_output(self):
        x = pt.dmatrix()
        y = x * 2
        assert as_tensor_variable(y.owner) is y

    def test_values_become_constants(self):
        c = as_tensor_variable([1.0, 2.0], name="c")
        assert isinstance(c, TensorConstant)
        assert c.name == "c"
        assert c.type == TensorType("float64", (2,))
        assert as_tensor_variable(3).dtype == "int8"

    def test_dtype_for_values(self):
        assert as_tensor_variable(3, dtype="float64").type == TensorType("float64", ())
        assert as_tensor_variable(np.array([1, 2]), dtype="float32").type == TensorType("float32", (2,))
        with pytest.raises(TypeError, match="cannot be represented exactly"):
            as_tensor_variable([1.5], dtype="int32")

    def test_dtype_for_variables_must_match(self):
        with pytest.raises(TypeError, match="has dtype float64, expected float32"):
            as_tensor_variable(pt.dvector(), dtype="float32")

    def test_ndim_pads_variables_on_the_left(self):
        v = pt.dvector()
        out = as_tensor_variable(v, ndim=3)
        assert out.type.shape == (1, 1, None)
        assert isinstance(out.owner.op, DimShuffle)

    def test_ndim_drops_leading_broadcastable_dimensions(self):
        t = pt.tensor(dtype="float64", shape=(1, 1, None))
        assert as_tensor_variable(t, ndim=1).type.shape == (None,)
        assert as_tensor_variable(pt.row(), ndim=1).type.shape == (None,)

    def test_ndim_cannot_drop_other_dimensions(self):
        with pytest.raises(ValueError, match="is 2-d and its leading dimensions are not broadcastable"):
            as_tensor_variable(pt.dmatrix(), ndim=1)

    def test_ndim_for_values(self):
        assert as_tensor_variable(2.0, ndim=1).type.shape == (1,)

    def test_scalar_variables_go_through_tensor_from_scalar(self):
        s = ScalarType("int16")("s")
        t = as_tensor_variable(s)
        assert isinstance(t.owner.op, TensorFromScalar)
        assert t.type == TensorType("int16", ())
        assert t.eval({s: 3}) == 3

    def test_lists_of_scalar_variables_make_a_vector(self):
        a, b = pt.dscalar("a"), pt.dscalar("b")
        v = as_tensor_variable([a, b, 1.0])
        assert v.type.shape == (3,)
        np.testing.assert_array_equal(v.eval({a: 1.5, b: 2.5}), [1.5, 2.5, 1.0])

    def test_lists_of_tensor_variables_are_stacked(self):
        a, b = pt.dvector("a"), pt.dvector("b")
        m = as_tensor_variable([a, b])
        assert m.ndim == 2
        np.testing.assert_array_equal(m.eval({a: np.ones(2), b: np.zeros(2)}), [[1, 1], [0, 0]])

    def test_other_types_are_rejected(self):
        from arignote.graph.type import Type

        class Opaque(Type):
            def filter(self, data, strict=False, allow_downcast=None):
                return data

        with pytest.raises(TypeError, match="Cannot use .* of Type Opaque as a tensor"):
            as_tensor_variable(Opaque()())

    def test_unexpected_keywords(self):
        with pytest.raises(TypeError, match="unexpected arguments"):
            as_tensor_variable(1, shape=(1,))

    @pytest.mark.parametrize("value", ["abc", None])
    def test_bad_values(self, value):
        with pytest.raises(TypeError, match="Cannot make a tensor constant"):
            as_tensor_variable(value)


# --- scalar <-> tensor -------------------------------------------------------------------


class TestScalarTensor:
    @pytest.mark.parametrize("dtype", ["int8", "uint16", "float32", "float64", "complex64", "bool"])
    def test_tensor_from_scalar(self, dtype):
        s = ScalarType(dtype)("s")
        t = tensor_from_scalar(s)
        assert isinstance(t, TensorVariable)
        assert t.type == TensorType(dtype, ())
        out = t.eval({s: 1})
        assert isinstance(out, np.ndarray) and out.shape == () and out.dtype == dtype
        assert out == 1

    @pytest.mark.parametrize("dtype", ["int8", "float32", "float64", "bool"])
    def test_scalar_from_tensor(self, dtype):
        t = TensorType(dtype, ())("t")
        s = scalar_from_tensor(t)
        assert s.type == ScalarType(dtype)
        out = s.eval({t: np.asarray(1, dtype=dtype)})
        assert np.ndim(out) == 0 and out.dtype == dtype and out == 1

    def test_round_trip(self):
        t = pt.dscalar("t")
        back = tensor_from_scalar(scalar_from_tensor(t))
        assert back.type == t.type
        assert back.eval({t: 2.5}) == 2.5

    def test_scalar_from_tensor_accepts_values(self):
        assert scalar_from_tensor(3).type == ScalarType("int8")

    def test_errors(self):
        with pytest.raises(TypeError, match="TensorFromScalar needs a scalar Variable"):
            tensor_from_scalar(pt.dscalar())
        with pytest.raises(TypeError, match="ScalarFromTensor needs a 0-d tensor, got Vector"):
            scalar_from_tensor(pt.dvector())

    def test_ops_are_equal_by_value(self):
        assert TensorFromScalar() == tensor_from_scalar
        assert ScalarFromTensor() == scalar_from_tensor
        assert hash(TensorFromScalar()) == hash(tensor_from_scalar)

    def test_infer_shape(self):
        s = ScalarType("float64")("s")
        t = tensor_from_scalar(s)
        assert t.owner.op.infer_shape(None, t.owner, [()]) == [()]
        u = pt.dscalar("u")
        assert_infer_shape(tensor_from_scalar(scalar_from_tensor(u)), {u: 1.0})


# --- get_underlying_scalar_constant_value ------------------------------------------------


class TestUnderlyingScalarConstant:
    @pytest.mark.parametrize(
        "make, value",
        [
            (lambda: 3, 3),
            (lambda: np.array([[4.5]]), 4.5),
            (lambda: constant(3), 3),
            (lambda: constant([7]), 7),
            (lambda: constant([[2, 2], [2, 2]]), 2),  # all elements equal
            (lambda: constant(2).dimshuffle("x", "x"), 2),
            (lambda: constant(2) + constant(3), 5),
            (lambda: (constant(2) * 3 - 1) / 2, 2.5),
            (lambda: pt.cast(constant(2), "float64"), 2.0),
            (lambda: tensor_from_scalar(scalar_from_tensor(constant(6))), 6),
            (lambda: Shape_i(0)(pt.tensor(dtype="float64", shape=(3, None))), 3),
            (lambda: pt.tensor(dtype="float64", shape=(3, None, 5)).shape[0], 3),
            (lambda: pt.tensor(dtype="float64", shape=(3, None, 5)).shape[-1], 5),
        ],
    )
    def test_known_values(self, make, value):
        got = get_underlying_scalar_constant_value(make())
        assert got == value
        assert np.ndim(got) == 0

    def test_dtype_is_kept(self):
        assert get_underlying_scalar_constant_value(constant(3)).dtype == np.int8
        assert get_underlying_scalar_constant_value(pt.cast(constant(2), "float32")).dtype == np.float32

    @pytest.mark.parametrize(
        "make, match",
        [
            (lambda: pt.dscalar("x"), "x is not a constant"),
            (lambda: constant([3, 4]), "holds 2 different values"),
            (lambda: constant(np.zeros((0,))), "not a numeric scalar"),
            (lambda: constant(2) + pt.dscalar(), "is not a constant"),
            (lambda: Shape_i(1)(pt.tensor(dtype="float64", shape=(3, None))), "not known statically"),
            (lambda: pt.tensor(dtype="float64", shape=(3, None)).shape[1], "computed by Subtensor"),
            (lambda: pt.tensor(dtype="float64", shape=(3, 4)).shape[0:1], "computed by Subtensor"),
            (lambda: pt.dvector().sum(), "computed by"),
            (lambda: np.array([3, 4]), "not a numeric scalar"),
            (lambda: "a", "not a numeric scalar"),
            (lambda: None, "not a numeric scalar"),
        ],
    )
    def test_unknown_values(self, make, match):
        with pytest.raises(NotScalarConstantError, match=match):
            get_underlying_scalar_constant_value(make())

    def test_reshape_keeps_a_static_length_read_from_the_shape(self):
        x = pt.tensor("x", dtype="float64", shape=(3, None, 4))
        assert pt.reshape(x, (x.shape[0], -1)).type.shape == (3, None)

    def test_elemwise_flag(self):
        v = constant(2) + constant(3)
        with pytest.raises(NotScalarConstantError):
            get_underlying_scalar_constant_value(v, elemwise=False)

    def test_only_process_constants(self):
        assert get_underlying_scalar_constant_value(constant(2), only_process_constants=True) == 2
        with pytest.raises(NotScalarConstantError):
            get_underlying_scalar_constant_value(constant(2).dimshuffle("x"), only_process_constants=True)

    def test_max_recur_limits_elemwise_nesting(self):
        v = ((constant(2) + 1) + 1) + 1
        assert get_underlying_scalar_constant_value(v) == 5
        with pytest.raises(NotScalarConstantError):
            get_underlying_scalar_constant_value(v, max_recur=2)

    def test_raise_not_constant(self):
        x = pt.dscalar()
        assert get_underlying_scalar_constant_value(x, raise_not_constant=False) is x

    def test_long_dimshuffle_chains(self):
        v = constant(5)
        for _ in range(2000):
            v = v.dimshuffle("x").dimshuffle()
        assert get_underlying_scalar_constant_value(v) == 5


# --- layout helpers ----------------------------------------------------------------------


def t234(name="x"):
    return pt.tensor(name, dtype="float64", shape=(2, 3, None))


class TestTranspose:
    @pytest.mark.parametrize("axes", [None, (1, 0, 2), (2, 0, 1), (-1, 0, 1), [0, 2, 1]])
    def test_values_and_static_shape(self, axes):
        x = t234()
        y = transpose(x, axes)
        expected = np.transpose(V234, axes)
        perm = axes if axes is not None else (2, 1, 0)
        assert y.type.shape == tuple((2, 3, None)[a] for a in perm)
        np.testing.assert_array_equal(y.eval({x: V234}), expected)
        assert_infer_shape(y, {x: V234})

    def test_identity_permutation_returns_the_input(self):
        x = t234()
        assert transpose(x, (0, 1, 2)) is x
        v = pt.dvector()
        assert transpose(v) is v

    def test_values_are_accepted(self):
        np.testing.assert_array_equal(transpose([[1, 2], [3, 4]]).eval(), [[1, 3], [2, 4]])

    @pytest.mark.parametrize(
        "axes, match", [((0, 1), "not a permutation"), ((0, 0, 1), "repeated"), ((0, 1, 5), "out of bounds")]
    )
    def test_bad_axes(self, axes, match):
        with pytest.raises(ValueError, match=match):
            transpose(t234(), axes)

    def test_matrix_transpose(self):
        x = t234()
        y = matrix_transpose(x)
        assert y.type.shape == (2, None, 3)
        np.testing.assert_array_equal(y.eval({x: V234}), np.swapaxes(V234, -1, -2))
        m = pt.dmatrix("m")
        np.testing.assert_array_equal(matrix_transpose(m).eval({m: V234[0]}), V234[0].T)

    def test_matrix_transpose_needs_two_dimensions(self):
        with pytest.raises(ValueError, match="at least 2 dimensions, got Vector"):
            matrix_transpose(pt.dvector())


class TestSwapMove:
    @pytest.mark.parametrize("a1, a2", [(0, 2), (2, 0), (-1, 0), (1, 1), (0, -2)])
    def test_swapaxes(self, a1, a2):
        x = t234()
        y = swapaxes(x, a1, a2)
        np.testing.assert_array_equal(y.eval({x: V234}), np.swapaxes(V234, a1, a2))
        static = np.swapaxes(np.empty((2, 3, 1)), a1, a2).shape
        assert y.type.shape == tuple(None if n == 1 else n for n in static)

    def test_swapaxes_static_shape(self):
        assert swapaxes(t234(), 0, 2).type.shape == (None, 3, 2)
        x = t234()
        assert swapaxes(x, 1, 1) is x

    def test_swapaxes_bad_axis(self):
        with pytest.raises(ValueError, match="axis 3 is out of bounds"):
            swapaxes(t234(), 0, 3)

    @pytest.mark.parametrize(
        "src, dst",
        [(0, -1), (-1, 0), ((0, 1), (-1, -2)), (2, 0), ((0, 2), (2, 0)), ((2, 0), (0, 1)), ([1], [1])],
    )
    def test_moveaxis(self, src, dst):
        x = t234()
        y = moveaxis(x, src, dst)
        expected = np.moveaxis(V234, src, dst)
        np.testing.assert_array_equal(y.eval({x: V234}), expected)
        static = np.moveaxis(np.empty((2, 3, 1)), src, dst).shape
        assert y.type.shape == tuple(None if s == 1 else s for s in static)

    @pytest.mark.parametrize(
        "src, dst, match",
        [
            ((0, 1), 0, "same number of axes"),
            (3, 0, "source 3 is out of bounds"),
            (0, -4, "destination -4 is out of bounds"),
            ((0, 0), (1, 2), "repeated source"),
            ((0, 1), (2, 2), "repeated destination"),
        ],
    )
    def test_moveaxis_errors(self, src, dst, match):
        with pytest.raises(ValueError, match=match):
            moveaxis(t234(), src, dst)


class TestExpandDimsSqueeze:
    @pytest.mark.parametrize("axis", [0, 1, -1, 3, (0, 2), (-1, 0), (1, -1), [0, 1, 2]])
    def test_expand_dims(self, axis):
        x = t234()
        y = expand_dims(x, axis)
        expected = np.expand_dims(V234, axis)
        assert y.type.shape == tuple(
            None if s == 4 else s for s in np.expand_dims(np.empty((2, 3, 4)), axis).shape
        )
        assert all(y.type.broadcastable[a] for a in np.atleast_1d(axis))
        np.testing.assert_array_equal(y.eval({x: V234}), expected)
        assert_infer_shape(y, {x: V234})

    def test_expand_dims_of_a_scalar(self):
        s = pt.dscalar("s")
        assert expand_dims(s, 0).type.shape == (1,)
        assert expand_dims(s, (0, 1)).type.shape == (1, 1)

    @pytest.mark.parametrize(
        "axis, match", [(5, "out of bounds"), ((0, 0), "repeated"), (1.5, "must be an int")]
    )
    def test_expand_dims_errors(self, axis, match):
        with pytest.raises((ValueError, TypeError), match=match):
            expand_dims(t234(), axis)

    def test_squeeze_all_broadcastable(self):
        x = pt.tensor("x", dtype="float64", shape=(1, None, 1, 3))
        val = np.ones((1, 5, 1, 3))
        y = squeeze(x)
        assert y.type.shape == (None, 3)
        np.testing.assert_array_equal(y.eval({x: val}), np.squeeze(val))
        assert_infer_shape(y, {x: val})

    def test_squeeze_nothing_returns_the_input(self):
        m = pt.dmatrix()
        assert squeeze(m) is m

    @pytest.mark.parametrize("axis", [0, 2, -2, (0, 2)])
    def test_squeeze_axis(self, axis):
        x = pt.tensor("x", dtype="float64", shape=(1, None, 1, 3))
        val = np.ones((1, 5, 1, 3))
        y = squeeze(x, axis)
        np.testing.assert_array_equal(y.eval({x: val}), np.squeeze(val, axis))

    def test_squeeze_unknown_length_is_checked_at_run_time(self):
        # PyTensor 3: squeezing a dimension of unknown length asserts it is 1
        m = pt.dmatrix("m")
        y = squeeze(m, 0)
        assert y.type.shape == (None,)
        assert isinstance(y.owner.inputs[0].owner.op, SpecifyShape)
        np.testing.assert_array_equal(y.eval({m: np.ones((1, 3))}), np.ones(3))
        with pytest.raises(ValueError, match="dimension 0 is 2, expected 1"):
            y.eval({m: np.ones((2, 3))})

    def test_squeeze_statically_long_dimension(self):
        with pytest.raises(ValueError, match="squeeze: cannot squeeze .* dimension 0 has length 2, not 1"):
            squeeze(t234(), 0)

    def test_squeeze_bad_axis(self):
        with pytest.raises(ValueError, match="out of bounds"):
            squeeze(pt.row(), 2)


class TestFlatten:
    @pytest.mark.parametrize("ndim", [1, 2, 3])
    def test_values(self, ndim):
        x = pt.tensor3("x")
        y = flatten(x, ndim)
        assert y.ndim == ndim
        expected = V234.reshape(V234.shape[: ndim - 1] + (-1,))
        np.testing.assert_array_equal(y.eval({x: V234}), expected)

    def test_static_shape(self):
        assert flatten(t234(), 2).type.shape == (2, None)
        assert flatten(pt.tensor(dtype="float64", shape=(2, 3, 4)), 1).type.shape in ((24,), (None,))

    def test_scalar(self):
        s = pt.dscalar("s")
        y = flatten(s)
        assert y.ndim == 1
        np.testing.assert_array_equal(y.eval({s: 2.0}), [2.0])

    @pytest.mark.parametrize("ndim", [0, 4, -1])
    def test_bad_ndim(self, ndim):
        with pytest.raises(ValueError, match=f"ndim={ndim} is not between 1 and 3"):
            flatten(pt.tensor3(), ndim)

    def test_is_a_reshape(self):
        from arignote.tensor.shape import Reshape

        y = flatten(pt.tensor3(), 2)
        assert isinstance(y.owner, Apply) and isinstance(y.owner.op, Reshape)
