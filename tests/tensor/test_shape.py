"""Shape, Shape_i, SpecifyShape, Reshape, MakeVector and shape_tuple against NumPy."""

import numpy as np
import pytest

import arignote
import arignote.tensor as pt
from arignote.graph.basic import Constant
from arignote.tensor.shape import MakeVector, Reshape, Shape, Shape_i, ShapeError, SpecifyShape, make_vector
from arignote.tensor.type_other import NoneConst
from tests.tensor.utils import assert_infer_shape


def test_shape_vector():
    x = pt.tensor3("x")
    s = pt.shape(x)
    assert isinstance(s.owner.op, Shape)
    assert s.type == pt.TensorType("int64", (3,))
    np.testing.assert_array_equal(s.eval({x: np.zeros((2, 0, 5))}), [2, 0, 5])
    assert s.eval({x: np.zeros((2, 0, 5))}).dtype == np.int64
    assert_infer_shape(s, {x: np.zeros((2, 3, 4))})


def test_shape_of_0d():
    x = pt.dscalar("x")
    assert pt.shape(x).type.shape == (0,)
    assert pt.shape(x).eval({x: 1.0}).shape == (0,)


def test_shape_i_and_static_lengths():
    x = pt.tensor("x", shape=(3, None))
    n1 = pt.shape_i(x, 1)
    assert isinstance(n1.owner.op, Shape_i) and n1.owner.op.i == 1
    assert int(n1.eval({x: np.ones((3, 7))})) == 7
    n0 = pt.shape_i(x, 0)
    assert isinstance(n0, Constant) and int(n0.data) == 3
    assert_infer_shape(n1, {x: np.ones((3, 7))})
    assert str(Shape_i(1)) == "Shape_i{i=1}"


def test_shape_i_errors():
    with pytest.raises(ValueError, match="only 2 dimension"):
        Shape_i(2)(pt.dmatrix())
    with pytest.raises(TypeError, match="non-negative int"):
        Shape_i(-1)


def test_shape_tuple_mixes_static_and_symbolic():
    x = pt.tensor("x", shape=(2, None, 1))
    st = pt.shape_tuple(x)
    assert st[0] == 2 and st[2] == 1
    assert int(st[1].eval({x: np.ones((2, 5, 1))})) == 5


def test_x_shape_property_and_size():
    x = pt.dmatrix("x")
    v = np.zeros((4, 5))
    np.testing.assert_array_equal(x.shape.eval({x: v}), [4, 5])
    assert int(x.size.eval({x: v})) == 20


class TestSpecifyShape:
    def test_seed_narrowing_example(self):
        v1 = pt.TensorType("float64", (2, None))()
        v2 = pt.TensorType("float64", (2, 1))()
        assert v1.type.filter_variable(v2) is v2
        v3 = v2.type.filter_variable(v1)
        assert str(v3) == "SpecifyShape.0"
        assert isinstance(v3.owner.op, SpecifyShape)
        assert v3.owner.inputs[0] is v1
        assert [int(c.data) for c in v3.owner.inputs[1:]] == [2, 1]
        assert v3.type == v2.type  # the static shape is (2, 1), as the seed's note wishes

    def test_values_pass_through_and_mismatch_is_reported(self):
        x = pt.dmatrix("x")
        y = pt.specify_shape(x, (2, None))
        assert y.type.shape == (2, None)
        value = np.arange(6.0).reshape(2, 3)
        np.testing.assert_array_equal(y.eval({x: value}), value)
        with pytest.raises(ValueError, match="dimension 0 is 3, expected 2"):
            y.eval({x: np.ones((3, 3))})

    def test_none_dims_use_noneconst(self):
        x = pt.dmatrix("x")
        y = pt.specify_shape(x, (None, 4))
        assert y.owner.inputs[1] is NoneConst
        assert y.type.shape == (None, 4)
        assert_infer_shape(y, {x: np.ones((3, 4))})

    def test_symbolic_length(self):
        x = pt.dvector("x")
        n = pt.lscalar("n")
        y = pt.specify_shape(x, (n,))
        assert y.type.shape == (None,)
        assert y.eval({x: np.ones(3), n: 3}).shape == (3,)
        with pytest.raises(ValueError, match="expected 4"):
            y.eval({x: np.ones(3), n: 4})

    def test_nothing_to_assert_returns_input(self):
        x = pt.tensor("x", shape=(2, None))
        assert pt.specify_shape(x, (2, None)) is x
        assert pt.specify_shape(x, (None, None)) is x

    def test_bad_specifications(self):
        x = pt.tensor("x", shape=(2, None))
        with pytest.raises(ValueError, match="statically 2, cannot specify 3"):
            pt.specify_shape(x, (3, None))
        with pytest.raises(ValueError, match="2-d but 1 lengths"):
            pt.specify_shape(x, (2,))
        with pytest.raises(TypeError, match="integer scalar"):
            pt.specify_shape(x, (2, 1.5))

    def test_view_and_connection_pattern(self):
        x = pt.dmatrix("x")
        y = pt.specify_shape(x, (2, 2))
        assert y.owner.op.view_map == {0: [0]}
        assert y.owner.op.connection_pattern(y.owner) == [[True], [False], [False]]


class TestReshape:
    @pytest.mark.parametrize("newshape", [(3, 2), (6,), (1, 6), (2, -1), (-1, 3, 1)])
    def test_constant_shapes(self, newshape):
        x = pt.dmatrix("x")
        value = np.arange(6.0).reshape(2, 3)
        y = pt.reshape(x, newshape)
        assert isinstance(y.owner.op, Reshape)
        assert y.type.ndim == len(newshape)
        np.testing.assert_array_equal(y.eval({x: value}), value.reshape(newshape))
        assert_infer_shape(y, {x: value})

    def test_static_shape_inferred(self):
        x = pt.tensor("x", shape=(2, 3))
        assert pt.reshape(x, (3, -1)).type.shape == (3, 2)
        assert pt.reshape(pt.dmatrix(), (4, -1)).type.shape == (4, None)

    def test_symbolic_lengths(self):
        x = pt.dvector("x")
        n = pt.lscalar("n")
        y = pt.reshape(x, (n, -1))
        assert y.type.shape == (None, None)
        out = y.eval({x: np.arange(12.0), n: 4})
        np.testing.assert_array_equal(out, np.arange(12.0).reshape(4, -1))
        assert_infer_shape(y, {x: np.arange(12.0), n: 4})

    def test_shape_vector_input_needs_ndim(self):
        x = pt.dvector("x")
        s = pt.lvector("s")
        with pytest.raises(ValueError, match="ndim"):
            pt.reshape(x, s)
        y = pt.reshape(x, s, ndim=2)
        np.testing.assert_array_equal(
            y.eval({x: np.arange(6.0), s: np.array([2, 3])}), np.arange(6.0).reshape(2, 3)
        )
        # the shape vector's entries are not known symbolically: infer_shape says so
        with pytest.raises(ShapeError):
            y.owner.op.infer_shape(None, y.owner, [(6,), (2,)])

    def test_errors(self):
        x = pt.tensor("x", shape=(2, 3))
        with pytest.raises(ValueError, match="cannot reshape"):
            pt.reshape(x, (4, 2))
        with pytest.raises(ValueError, match="at most one -1"):
            pt.reshape(x, (-1, -1))
        with pytest.raises(TypeError, match="integers"):
            pt.reshape(x, pt.dvector(), ndim=1)
        y = pt.reshape(pt.dmatrix("m"), (4, -1))
        with pytest.raises(ValueError, match=r"Cannot reshape an array of shape \(3, 3\)"):
            y.eval({"m": np.ones((3, 3))})

    def test_method_forms(self):
        x = pt.dmatrix("x")
        value = np.arange(6.0).reshape(2, 3)
        np.testing.assert_array_equal(x.reshape(3, 2).eval({x: value}), value.reshape(3, 2))
        np.testing.assert_array_equal(x.reshape((6,)).eval({x: value}), value.reshape(6))
        np.testing.assert_array_equal(x.flatten().eval({x: value}), value.ravel())


class TestMakeVector:
    def test_values_and_dtype(self):
        a, b = pt.lscalar("a"), pt.lscalar("b")
        v = make_vector(a, b, 3)
        assert isinstance(v.owner.op, MakeVector)
        assert v.type == pt.TensorType("int64", (3,))
        np.testing.assert_array_equal(v.eval({a: 1, b: 2}), [1, 2, 3])
        assert_infer_shape(v, {a: 1, b: 2})

    def test_list_of_scalars_becomes_make_vector(self):
        a = pt.dscalar("a")
        v = pt.as_tensor_variable([a, a])
        assert isinstance(v.owner.op, MakeVector)
        np.testing.assert_array_equal(v.eval({a: 2.5}), [2.5, 2.5])

    def test_mixed_int_dtypes_upcast(self):
        i, n = pt.iscalar("i"), pt.lscalar("n")
        v = pt.as_tensor_variable([i, n])
        assert v.type.dtype == "int64"
        np.testing.assert_array_equal(v.eval({i: 2, n: 3}), [2, 3])

    def test_errors(self):
        with pytest.raises(TypeError, match="must be 0-d"):
            MakeVector("float64")(pt.dvector())
        with pytest.raises(TypeError, match="has dtype float64, which does not fit int64"):
            MakeVector("int64")(pt.dscalar())


def test_reshape_shape_with_a_zero_length_does_not_divide_by_zero():
    # infer_shape's switch computes both branches: the -1 branch must not divide by 0
    x = pt.dmatrix("x")
    out = x.reshape((x.shape[0], 0, 5))
    f = arignote.function([x], out.shape)
    np.testing.assert_array_equal(f(np.zeros((2, 0))), [2, 0, 5])
