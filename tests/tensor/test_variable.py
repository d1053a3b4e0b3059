"""TensorVariable and TensorConstant: operators, metadata, layout and reduction methods,
truth-value errors, constant data and signatures."""

from __future__ import annotations

import operator

import numpy as np
import pytest

import arignote.tensor as pt
import arignote.tensor.math as ptm
from arignote.graph.basic import Constant, Variable
from arignote.tensor.elemwise import DimShuffle, Elemwise
from arignote.tensor.type import TensorType
from arignote.tensor.variable import TensorConstant, TensorConstantSignature, TensorVariable

RNG = np.random.default_rng(42)
XV = RNG.uniform(0.5, 2.0, size=(3, 4))
YV = RNG.uniform(0.5, 2.0, size=(3, 4))
IV = np.array([[5, -3, 0, 7], [1, 2, -8, 4], [9, 6, 3, -1]], dtype="int32")
JV = np.array([[2, 3, 1, 5], [4, 1, 3, 2], [7, 2, 2, 3]], dtype="int32")


def ev(out, givens):
    return out.eval(givens)


# --- metadata ----------------------------------------------------------------------------


class TestMetadata:
    def test_properties(self):
        x = TensorType("int16", (2, None, 1))("x")
        assert x.dtype == "int16"
        assert x.ndim == 3
        assert x.broadcastable == (False, False, True)
        assert x.type.shape == (2, None, 1)

    def test_symbolic_shape(self):
        x = pt.tensor3("x")
        s = x.shape
        assert isinstance(s, TensorVariable)
        assert s.type == TensorType("int64", (3,))
        np.testing.assert_array_equal(ev(s, {x: np.zeros((2, 3, 4))}), [2, 3, 4])

    def test_size(self):
        x = pt.dmatrix("x")
        assert x.size.type == TensorType("int64", ())
        assert ev(x.size, {x: XV}) == XV.size

    def test_identity_equality_and_hash(self):
        x, y = pt.dmatrix("x"), pt.dmatrix("x")
        same = x
        assert x == same
        assert x != y
        assert (x == y) is False  # == is identity, not a symbolic comparison
        assert (x != y) is True
        assert hash(x) == hash(same)
        assert len({x, y, same}) == 2

    def test_unknown_attribute(self):
        with pytest.raises(AttributeError, match="has no attribute 'foo'"):
            pt.dmatrix().foo
        assert not hasattr(pt.dmatrix(), "definitely_not_a_method")


# --- operators ---------------------------------------------------------------------------

BINARY = [
    (operator.add, ptm.add, np.add),
    (operator.sub, ptm.sub, np.subtract),
    (operator.mul, ptm.mul, np.multiply),
    (operator.truediv, ptm.true_div, np.true_divide),
    (operator.floordiv, ptm.int_div, np.floor_divide),
    (operator.mod, ptm.mod, np.mod),
    (operator.pow, ptm.pow, np.power),
]


class TestArithmetic:
    @pytest.mark.parametrize("pyop, op, npop", BINARY, ids=[b[2].__name__ for b in BINARY])
    def test_binary(self, pyop, op, npop):
        x, y = pt.dmatrix("x"), pt.dmatrix("y")
        z = pyop(x, y)
        assert isinstance(z.owner.op, Elemwise)
        assert z.owner.op == op
        assert z.owner.inputs == [x, y]
        np.testing.assert_allclose(ev(z, {x: XV, y: YV}), npop(XV, YV))

    @pytest.mark.parametrize("pyop, op, npop", BINARY, ids=[b[2].__name__ for b in BINARY])
    def test_reflected_with_python_number(self, pyop, op, npop):
        x = pt.dmatrix("x")
        z = pyop(3, x)
        assert z.owner.op == op
        assert z.owner.inputs[1] is x
        const = z.owner.inputs[0]
        assert isinstance(const.owner.op, DimShuffle)
        assert const.owner.inputs[0].data == 3
        np.testing.assert_allclose(ev(z, {x: XV}), npop(3, XV))

    @pytest.mark.parametrize("pyop, op, npop", BINARY, ids=[b[2].__name__ for b in BINARY])
    def test_with_python_number_on_the_right(self, pyop, op, npop):
        x = pt.dmatrix("x")
        z = pyop(x, 2.0)
        assert z.owner.op == op and z.owner.inputs[0] is x
        np.testing.assert_allclose(ev(z, {x: XV}), npop(XV, 2.0))

    @pytest.mark.parametrize("pyop, op, npop", BINARY, ids=[b[2].__name__ for b in BINARY])
    def test_integer_operands(self, pyop, op, npop):
        i, j = pt.imatrix("i"), pt.imatrix("j")
        z = pyop(i, j) if npop is not np.power else pyop(i, abs(j))
        jv = JV if npop is not np.power else np.abs(JV)
        expected = npop(IV, jv)
        out = ev(z, {i: IV, j: JV})
        assert out.dtype == expected.dtype
        np.testing.assert_array_equal(out, expected)

    @pytest.mark.parametrize("pyop, _op, npop", BINARY, ids=[b[2].__name__ for b in BINARY])
    def test_ndarray_on_the_left_defers_to_the_variable(self, pyop, _op, npop):
        x = pt.dmatrix("x")
        z = pyop(YV, x)
        assert isinstance(z, TensorVariable)  # not an object array of graph nodes
        np.testing.assert_allclose(ev(z, {x: XV}), npop(YV, XV))

    def test_numpy_scalar_on_the_left(self):
        x = pt.fvector("x")
        z = np.float32(2.0) * x
        assert isinstance(z, TensorVariable)
        assert z.dtype == "float32"

    @pytest.mark.parametrize(
        "pyop, op, npop",
        [(operator.neg, ptm.neg, np.negative), (operator.abs, ptm.abs, np.abs)],
    )
    def test_unary(self, pyop, op, npop):
        x = pt.dmatrix("x")
        z = pyop(x)
        assert z.owner.op == op and z.owner.inputs == [x]
        np.testing.assert_array_equal(ev(z, {x: XV - 1}), npop(XV - 1))

    def test_invert(self):
        i = pt.imatrix("i")
        z = ~i
        assert z.owner.op == ptm.invert
        np.testing.assert_array_equal(ev(z, {i: IV}), ~IV)
        b = pt.tensor("b", dtype="bool", shape=(None,))
        np.testing.assert_array_equal(ev(~b, {b: np.array([True, False])}), [False, True])

    @pytest.mark.parametrize(
        "pyop, op, npop",
        [
            (operator.lt, ptm.lt, np.less),
            (operator.le, ptm.le, np.less_equal),
            (operator.gt, ptm.gt, np.greater),
            (operator.ge, ptm.ge, np.greater_equal),
        ],
    )
    def test_comparisons(self, pyop, op, npop):
        x, y = pt.dmatrix("x"), pt.dmatrix("y")
        z = pyop(x, y)
        assert z.owner.op == op
        assert z.dtype == "bool"
        np.testing.assert_array_equal(ev(z, {x: XV, y: YV}), npop(XV, YV))
        # with a number, and reflected (1 < x is x > 1)
        np.testing.assert_array_equal(ev(pyop(x, 1.0), {x: XV}), npop(XV, 1.0))
        np.testing.assert_array_equal(ev(pyop(1.0, x), {x: XV}), npop(1.0, XV))

    def test_comparison_with_ndarray_on_the_left(self):
        x = pt.dvector("x")
        z = np.array([1.0, 2.0]) < x
        assert isinstance(z, TensorVariable)
        np.testing.assert_array_equal(ev(z, {x: np.array([0.0, 3.0])}), [False, True])

    @pytest.mark.parametrize(
        "pyop, op, npop",
        [
            (operator.and_, ptm.and_, np.bitwise_and),
            (operator.or_, ptm.or_, np.bitwise_or),
            (operator.xor, ptm.xor, np.bitwise_xor),
        ],
    )
    def test_bitwise(self, pyop, op, npop):
        i, j = pt.imatrix("i"), pt.imatrix("j")
        z = pyop(i, j)
        assert z.owner.op == op
        np.testing.assert_array_equal(ev(z, {i: IV, j: JV}), npop(IV, JV))
        r = pyop(6, i)
        assert r.owner.op == op and r.owner.inputs[1] is i
        np.testing.assert_array_equal(ev(r, {i: IV}), npop(6, IV))
        b, c = pt.tensor(dtype="bool", shape=(2,)), pt.tensor(dtype="bool", shape=(2,))
        bv, cv = np.array([True, False]), np.array([True, True])
        np.testing.assert_array_equal(ev(pyop(b, c), {b: bv, c: cv}), npop(bv, cv))

    def test_matmul(self):
        x, y = pt.dmatrix("x"), pt.dmatrix("y")
        z = x @ y.T
        np.testing.assert_allclose(ev(z, {x: XV, y: YV}), XV @ YV.T)
        r = YV.T @ x  # reflected, from an ndarray
        assert isinstance(r, TensorVariable)
        np.testing.assert_allclose(ev(r, {x: XV}), YV.T @ XV)

    def test_dot_method(self):
        x, v = pt.dmatrix("x"), pt.dvector("v")
        np.testing.assert_allclose(ev(x.dot(v), {x: XV, v: np.ones(4)}), XV.dot(np.ones(4)))

    def test_result_dtypes_follow_the_constant_rules(self):
        assert (pt.fvector() * 2.0).dtype == "float32"  # 2.0 fits float32
        assert (pt.fvector() * 0.1).dtype == "float64"  # 0.1 does not
        assert (pt.bvector() + 1).dtype == "int8"
        assert (pt.bvector() + 300).dtype == "int16"
        assert (pt.ivector() / 2).dtype == "float64"
        assert (pt.ivector() // 2).dtype == "int32"
        assert (pt.fvector() + np.float64(0.5)).dtype == "float64"  # NumPy scalars keep theirs

    @pytest.mark.parametrize(
        "other, match",
        [
            ("a", "Cannot make a tensor constant from str"),
            (None, "Cannot make a tensor constant from NoneType"),
            (True, "Python bool"),
            (object(), "Cannot make a tensor constant from object"),
        ],
    )
    def test_bad_operands(self, other, match):
        x = pt.dvector()
        with pytest.raises(TypeError, match=match):
            x + other
        with pytest.raises(TypeError, match=match):
            other * x

    def test_incompatible_static_shapes(self):
        a, b = pt.tensor(shape=(2, 3)), pt.tensor(shape=(3, 3))
        with pytest.raises(ValueError, match="Incompatible static shapes at dimension 0"):
            a + b

    def test_broadcasting_follows_static_ones(self):
        r, m = pt.tensor(shape=(1, 3)), pt.tensor(shape=(4, 3))
        assert (r + m).type.shape == (4, 3)
        assert (pt.row() + pt.col()).type.shape == (None, None)


# --- truth value, iteration --------------------------------------------------------------


class TestTruthValue:
    def test_if_raises(self):
        x = pt.dscalar("x")
        with pytest.raises(TypeError, match="truth value of the symbolic x is unknown"):
            if x:
                pass

    def test_bool_of_comparison_raises(self):
        x = pt.dscalar("x")
        with pytest.raises(TypeError, match="truth value"):
            bool(x < 2)
        with pytest.raises(TypeError, match="switch"):
            _ = 1 if x > 0 else 0

    def test_chained_comparisons_and_boolean_operators_raise(self):
        x = pt.dscalar("x")
        with pytest.raises(TypeError, match="truth value"):
            0 < x < 1
        with pytest.raises(TypeError, match="truth value"):
            x and x

    def test_constants_too(self):
        with pytest.raises(TypeError, match="truth value"):
            bool(pt.constant(1))

    def test_len_and_iteration(self):
        v = pt.dvector("v")
        with pytest.raises(TypeError, match=r"len\(\) of the symbolic v is unknown"):
            len(v)
        with pytest.raises(TypeError, match="Cannot iterate"):
            list(v)
        with pytest.raises(TypeError, match="Cannot iterate"):
            a, b = v
        with pytest.raises(TypeError, match="Cannot iterate over the 0-d"):
            list(pt.dscalar("s"))

    def test_unpacking_a_static_length(self):
        v = pt.tensor("v", shape=(2,))
        a, b = v
        assert a.type.shape == () and a.type.dtype == v.type.dtype
        value = np.array([3.0, 4.0], dtype=v.type.dtype)
        assert (float(a.eval({v: value})), float(b.eval({v: value}))) == (3.0, 4.0)
        with pytest.raises(ValueError, match="not enough values to unpack"):
            a, b, c = v
        # the first axis of a tensor of any rank; a shape vector, whose length is its ndim
        m = pt.tensor("m", shape=(3, None))
        rows = list(m)
        assert len(rows) == 3 and rows[2].type.shape == (None,)
        n_rows, n_cols = pt.dmatrix("x").shape
        x = n_rows.owner.inputs[0].owner.inputs[0]
        assert int(n_cols.eval({x: np.zeros((2, 5))})) == 5
        with pytest.raises(TypeError, match=r"Cannot iterate over the symbolic .*first axis"):
            list(pt.tensor("w", shape=(None, 2)))


# --- layout ------------------------------------------------------------------------------


class TestLayout:
    def test_T(self):
        x = pt.tensor(dtype="float64", shape=(2, None, 1))
        xt = x.T
        assert xt.type.shape == (1, None, 2)
        val = np.arange(6.0).reshape(2, 3, 1)
        np.testing.assert_array_equal(ev(xt, {x: val}), val.T)

    def test_T_of_vectors_and_scalars_is_the_variable(self):
        v, s = pt.dvector(), pt.dscalar()
        assert v.T is v
        assert s.T is s

    def test_mT(self):
        x = pt.tensor(dtype="float64", shape=(5, 2, None))
        assert x.mT.type.shape == (5, None, 2)
        val = RNG.normal(size=(5, 2, 3))
        np.testing.assert_array_equal(ev(x.mT, {x: val}), np.swapaxes(val, -1, -2))
        with pytest.raises(ValueError, match="at least 2 dimensions"):
            pt.dvector().mT

    @pytest.mark.parametrize("axes", [(), ((2, 0, 1),), (2, 0, 1), ((1, 2, 0),), (-1, 0, 1)])
    def test_transpose(self, axes):
        x = pt.tensor3("x")
        val = RNG.normal(size=(2, 3, 4))
        flat = axes[0] if len(axes) == 1 else axes
        expected = np.transpose(val, flat or None)
        np.testing.assert_array_equal(ev(x.transpose(*axes), {x: val}), expected)

    @pytest.mark.parametrize(
        "axes, match",
        [((0, 0, 1), "repeated axis"), ((0, 1), "not a permutation"), ((0, 1, 3), "axis 3 is out of bounds")],
    )
    def test_transpose_bad_axes(self, axes, match):
        with pytest.raises(ValueError, match=match):
            pt.tensor3().transpose(*axes)

    @pytest.mark.parametrize(
        "pattern, shape",
        [
            ((1, "x", 0), (4, 1, 3)),
            (((1, 0),), (4, 3)),
            (("x", 0, 1), (1, 3, 4)),
            (([0, 1, "x"],), (3, 4, 1)),
        ],
    )
    def test_dimshuffle(self, pattern, shape):
        x = pt.tensor(dtype="float64", shape=(3, 4))
        y = x.dimshuffle(*pattern)
        assert y.type.shape == shape
        assert ev(y, {x: XV}).shape == shape

    def test_dimshuffle_can_drop_only_broadcastable_dims(self):
        r = pt.row()
        assert r.dimshuffle(1).type.shape == (None,)
        with pytest.raises(ValueError, match="cannot drop dimension 0"):
            pt.dmatrix().dimshuffle(1)

    @pytest.mark.parametrize(
        "args, expected_shape, static",
        [
            (((4, 3),), (4, 3), (4, 3)),
            ((4, 3), (4, 3), (4, 3)),
            (([2, 6],), (2, 6), (2, 6)),
            ((-1,), (12,), (None,)),
            (((2, -1),), (2, 6), (2, None)),
        ],
    )
    def test_reshape(self, args, expected_shape, static):
        x = pt.dmatrix("x")
        y = x.reshape(*args)
        assert y.type.shape == static
        np.testing.assert_array_equal(ev(y, {x: XV}), XV.reshape(expected_shape))

    def test_reshape_symbolic_shape(self):
        x, n = pt.dmatrix("x"), pt.lscalar("n")
        y = x.reshape((n, -1))
        assert y.ndim == 2
        assert ev(y, {x: XV, n: 6}).shape == (6, 2)

    @pytest.mark.parametrize("method", ["flatten", "ravel"])
    def test_flatten(self, method):
        x = pt.tensor3("x")
        val = RNG.normal(size=(2, 3, 4))
        y = getattr(x, method)()
        assert y.ndim == 1
        np.testing.assert_array_equal(ev(y, {x: val}), val.ravel())

    def test_flatten_ndim(self):
        x = pt.tensor3("x")
        val = RNG.normal(size=(2, 3, 4))
        np.testing.assert_array_equal(ev(x.flatten(2), {x: val}), val.reshape(2, 12))
        np.testing.assert_array_equal(ev(x.flatten(3), {x: val}), val)
        s = pt.tensor(dtype="float64", shape=(2, None, 4))
        assert s.flatten(2).type.shape == (2, None)

    def test_squeeze(self):
        x = pt.tensor(dtype="float64", shape=(1, None, 1))
        val = np.ones((1, 3, 1))
        assert x.squeeze().type.shape == (None,)
        assert x.squeeze(0).type.shape == (None, 1)
        np.testing.assert_array_equal(ev(x.squeeze(), {x: val}), val.squeeze())

    def test_swapaxes(self):
        x = pt.tensor(dtype="float64", shape=(2, 3, None))
        assert x.swapaxes(0, 2).type.shape == (None, 3, 2)
        val = RNG.normal(size=(2, 3, 4))
        np.testing.assert_array_equal(ev(x.swapaxes(0, -1), {x: val}), np.swapaxes(val, 0, -1))

    @pytest.mark.parametrize("dtype", ["int32", "float32", "bool", "complex128", "uint8"])
    def test_astype(self, dtype):
        x = pt.dmatrix("x")
        y = x.astype(dtype)
        assert y.dtype == dtype
        assert y.type.shape == x.type.shape
        out = ev(y, {x: XV * 3})
        assert out.dtype == dtype
        np.testing.assert_array_equal(out, (XV * 3).astype(dtype))

    def test_astype_same_dtype(self):
        x = pt.dmatrix("x")
        assert x.astype("float64").dtype == "float64"

    def test_copy(self):
        x = pt.dmatrix("x")
        c = x.copy()
        assert c is not x and c.type == x.type
        assert c.owner is not None
        assert x.copy(name="c").name == "c"
        out = ev(c, {x: XV})
        np.testing.assert_array_equal(out, XV)


# --- reductions --------------------------------------------------------------------------

REDUCTIONS = ["sum", "prod", "mean", "min", "max"]


class TestReductions:
    @pytest.mark.parametrize("name", REDUCTIONS)
    @pytest.mark.parametrize("axis", [None, 0, 1, (0, 1), -1])
    def test_values(self, name, axis):
        x = pt.dmatrix("x")
        y = getattr(x, name)(axis=axis)
        expected = getattr(np, name)(XV, axis=axis)
        assert y.ndim == np.ndim(expected)
        np.testing.assert_allclose(ev(y, {x: XV}), expected)

    @pytest.mark.parametrize("name", [*REDUCTIONS, "var", "std", "any", "all"])
    def test_keepdims(self, name):
        x = pt.dmatrix("x")
        y = getattr(x, name)(axis=1, keepdims=True)
        assert y.type.shape == (None, 1)
        expected = getattr(np, name)(XV, axis=1, keepdims=True)
        np.testing.assert_allclose(ev(y, {x: XV}), expected)

    @pytest.mark.parametrize("name", ["var", "std"])
    @pytest.mark.parametrize("axis", [None, 0, 1])
    def test_var_std(self, name, axis):
        x = pt.dmatrix("x")
        np.testing.assert_allclose(ev(getattr(x, name)(axis=axis), {x: XV}), getattr(np, name)(XV, axis=axis))
        np.testing.assert_allclose(
            ev(getattr(x, name)(axis=axis, ddof=1), {x: XV}), getattr(np, name)(XV, axis=axis, ddof=1)
        )

    @pytest.mark.parametrize("name", ["argmin", "argmax"])
    @pytest.mark.parametrize("axis", [None, 0, 1])
    def test_argmin_argmax(self, name, axis):
        x = pt.dmatrix("x")
        y = getattr(x, name)(axis=axis)
        assert y.dtype == "int64"
        np.testing.assert_array_equal(ev(y, {x: XV}), getattr(np, name)(XV, axis=axis))

    @pytest.mark.parametrize("name", ["any", "all"])
    @pytest.mark.parametrize("axis", [None, 0, 1])
    def test_any_all(self, name, axis):
        i = pt.imatrix("i")
        y = getattr(i, name)(axis=axis)
        assert y.dtype == "bool"
        np.testing.assert_array_equal(ev(y, {i: IV}), getattr(np, name)(IV, axis=axis))

    def test_integer_sum_and_prod_accumulate_widely(self):
        b = pt.bvector("b")
        assert b.sum().dtype == "int64"
        assert b.prod().dtype == "int64"
        assert b.mean().dtype == "float64"
        val = np.full(100, 100, dtype="int8")
        assert ev(b.sum(), {b: val}) == 10_000

    def test_sum_dtype_argument(self):
        x = pt.fvector("x")
        assert x.sum(dtype="float64").dtype == "float64"
        assert x.sum().dtype == "float32"

    def test_bad_axis(self):
        with pytest.raises(ValueError, match="axis 2 is out of bounds"):
            pt.dmatrix().sum(axis=2)


# --- elementwise methods -----------------------------------------------------------------


class TestElementwiseMethods:
    def test_clip(self):
        x = pt.dmatrix("x")
        np.testing.assert_array_equal(ev(x.clip(0.8, 1.5), {x: XV}), np.clip(XV, 0.8, 1.5))

    def test_round(self):
        x = pt.dvector("x")
        val = np.array([0.5, 1.5, 2.5, -0.5, 2.4])
        np.testing.assert_array_equal(ev(x.round(), {x: val}), np.round(val))  # half to even
        np.testing.assert_array_equal(
            ev(x.round("half_away_from_zero"), {x: val}), np.sign(val) * np.floor(np.abs(val) + 0.5)
        )

    @pytest.mark.parametrize(
        "name, npfn",
        [
            ("exp", np.exp),
            ("exp2", np.exp2),
            ("expm1", np.expm1),
            ("log", np.log),
            ("log2", np.log2),
            ("log10", np.log10),
            ("log1p", np.log1p),
            ("sqrt", np.sqrt),
            ("sqr", np.square),
            ("sin", np.sin),
            ("cos", np.cos),
            ("tan", np.tan),
            ("arcsin", np.arcsin),
            ("arccos", np.arccos),
            ("arctan", np.arctan),
            ("sinh", np.sinh),
            ("cosh", np.cosh),
            ("tanh", np.tanh),
            ("arcsinh", np.arcsinh),
            ("arctanh", np.arctanh),
            ("floor", np.floor),
            ("ceil", np.ceil),
            ("trunc", np.trunc),
            ("sign", np.sign),
            ("neg", np.negative),
            ("reciprocal", np.reciprocal),
            ("deg2rad", np.deg2rad),
            ("rad2deg", np.rad2deg),
            ("isnan", np.isnan),
            ("isinf", np.isinf),
            ("sigmoid", lambda v: 1 / (1 + np.exp(-v))),
            ("softplus", lambda v: np.log1p(np.exp(v))),
        ],
    )
    def test_unary_math_methods(self, name, npfn):
        x = pt.dvector("x")
        val = np.array([0.1, 0.5, 0.9])
        y = getattr(x, name)()
        assert y.owner.op == getattr(ptm, name)
        np.testing.assert_allclose(ev(y, {x: val}), npfn(val), rtol=1e-12)

    def test_arccosh(self):
        x = pt.dvector("x")
        np.testing.assert_allclose(ev(x.arccosh(), {x: np.array([1.5, 3.0])}), np.arccosh([1.5, 3.0]))

    def test_complex_parts(self):
        z = pt.zvector("z")
        val = np.array([1 + 2j, -3 - 1j])
        assert z.real.dtype == "float64" and z.imag.dtype == "float64"
        np.testing.assert_array_equal(ev(z.real, {z: val}), val.real)
        np.testing.assert_array_equal(ev(z.imag, {z: val}), val.imag)
        np.testing.assert_array_equal(ev(z.conj(), {z: val}), val.conj())
        np.testing.assert_array_equal(ev(z.conjugate(), {z: val}), val.conj())

    def test_fill(self):
        x = pt.dmatrix("x")
        np.testing.assert_array_equal(ev(x.fill(3.0), {x: XV}), np.full_like(XV, 3.0))


# --- methods backed by other modules (wiring only) ----------------------------------------


class TestDelegatedMethods:
    """These methods are thin wrappers: each builds the same graph as its function."""

    @pytest.mark.parametrize(
        "method, args, fn",
        [
            ("sort", (), "sort"),
            ("argsort", (0,), "argsort"),
            ("cumsum", (), "cumsum"),
            ("cumprod", (1,), "cumprod"),
            ("repeat", (2, 0), "repeat"),
            ("zeros_like", (), "zeros_like"),
            ("ones_like", ("int8",), "ones_like"),
        ],
    )
    def test_same_graph_as_the_function(self, method, args, fn):
        from arignote.graph.basic import equal_computations

        x = pt.dmatrix("x")
        assert equal_computations([getattr(x, method)(*args)], [getattr(pt, fn)(x, *args)])

    def test_nonzero(self):
        x = pt.dmatrix("x")
        out = x.nonzero()
        assert len(out) == 2
        val = np.array([[0.0, 1.0], [2.0, 0.0]])
        for got, want in zip(out, np.nonzero(val)):
            np.testing.assert_array_equal(ev(got, {x: val}), want)

    def test_get_underlying_scalar_constant(self):
        assert (pt.constant(2) + 3).get_underlying_scalar_constant() == 5


# --- eval --------------------------------------------------------------------------------


class TestEval:
    def test_eval_with_inputs(self):
        x, y = pt.dmatrix("x"), pt.dmatrix("y")
        np.testing.assert_allclose((x * y + 1).eval({x: XV, y: YV}), XV * YV + 1)

    def test_eval_of_constants_needs_no_inputs(self):
        out = (pt.constant(2) + 3).eval()
        assert out == 5 and out.dtype == np.int8

    def test_eval_filters_inputs(self):
        x = pt.dvector("x")
        out = (x * 2).eval({x: [1, 2]})
        np.testing.assert_array_equal(out, [2.0, 4.0])
        with pytest.raises(TypeError, match="Wrong number of dimensions"):
            (x * 2).eval({x: [[1.0]]})

    def test_eval_runtime_shape_mismatch(self):
        x, y = pt.dvector("x"), pt.dvector("y")
        with pytest.raises(ValueError, match="shape mismatch"):
            (x + y).eval({x: np.ones(2), y: np.ones(3)})


# --- TensorConstant ----------------------------------------------------------------------


class TestTensorConstant:
    def test_is_a_constant_with_operators(self):
        c = pt.constant([1.0, 2.0])
        assert isinstance(c, TensorConstant) and isinstance(c, Constant) and isinstance(c, Variable)
        assert c.owner is None
        np.testing.assert_array_equal((c * 2).eval(), [2.0, 4.0])
        assert c.value is c.data

    def test_data_is_read_only_and_not_aliased(self):
        a = np.ones(3)
        c = pt.constant(a)
        assert not c.data.flags.writeable
        a[0] = 5.0
        assert c.data[0] == 1.0
        with pytest.raises(ValueError, match="read-only"):
            c.data[0] = 2.0

    def test_type_gets_the_full_static_shape(self):
        c = TensorConstant(TensorType("float64", (None, None)), np.ones((2, 3)))
        assert c.type.shape == (2, 3)

    def test_bad_data_for_the_type(self):
        with pytest.raises(TypeError, match="static shape"):
            TensorConstant(TensorType("float64", (3,)), np.ones(2))
        with pytest.raises(TypeError, match="cannot hold ndarray of dtype float64"):
            TensorConstant(TensorType("int8", (None,)), np.ones(2))

    def test_clone_is_itself(self):
        c = pt.constant(1.5)
        assert c.clone() is c

    @pytest.mark.parametrize(
        "value, text",
        [
            (2, "2"),
            (2.5, "2.5"),
            (np.float32(2.5), "2.5"),
            (-1j, "(-0-1j)"),
            ([1.0, 2.0], "[1. 2.]"),
            ([1, 2, 3], "[1 2 3]"),
            (np.arange(6).reshape(2, 3), "[[0 1 2] [3 4 5]]"),
            (np.zeros(30), "[0. 0. 0. ... 0. 0. 0.]"),
            (np.arange(11), "[ 0  1  2 ... 8  9 10]"),
            (np.array([np.nan, 1.0]), "[nan  1.]"),
            (np.array([True, False]), "[ True False]"),
        ],
    )
    def test_str(self, value, text):
        assert str(pt.constant(value)) == text

    def test_str_of_a_named_constant(self):
        assert str(pt.constant(2, name="two")) == "two{2}"

    def test_repr(self):
        assert repr(pt.constant(2)) == "TensorConstant(TensorType(int8, shape=()), data=array(2, dtype=int8))"
        assert repr(pt.constant(np.ones((2, 2)))) == (
            "TensorConstant(TensorType(float64, shape=(2, 2)), data=array([[1. ... [1., 1.]]))"
        )

    def test_signature_equality(self):
        a, b = pt.constant([1.0, 2.0]), pt.constant([1.0, 2.0])
        assert a is not b
        assert a.signature() == b.signature()
        assert hash(a.signature()) == hash(b.signature())
        assert a.equals(b)
        assert isinstance(a.signature(), TensorConstantSignature)

    def test_signature_is_nan_safe(self):
        a, b = pt.constant(np.array([np.nan, 1.0])), pt.constant(np.array([np.nan, 1.0]))
        assert a.signature() == b.signature()
        assert hash(a.signature()) == hash(b.signature())
        assert a.equals(b)

    @pytest.mark.parametrize(
        "a, b",
        [
            (np.float32(1), np.float64(1)),  # dtype
            ([1.0, 2.0], [1.0, 3.0]),  # values
            ([[1.0, 2.0]], [1.0, 2.0]),  # shape
            (0.0, -0.0),  # different bits: 1/x differs
            (np.array([np.nan]), np.array([1.0])),
        ],
    )
    def test_signature_inequality(self, a, b):
        assert pt.constant(a).signature() != pt.constant(b).signature()
        assert not pt.constant(a).equals(pt.constant(b))

    def test_signature_of_large_constants(self):
        big = np.arange(10_000.0)
        other = big.copy()
        other[5001] = -1.0  # not in the hashed sample: equality still tells them apart
        sa, sb = pt.constant(big).signature(), pt.constant(other).signature()
        assert sa != sb
        assert pt.constant(big).signature() == sa

    def test_truth_value_errors(self):
        c = pt.constant(2)
        with pytest.raises(TypeError, match="truth value"):
            if c:
                pass


# --- PyTensor 3's remaining methods (its docstring examples call them) --------------------


class TestMoreMethods:
    def test_searchsorted(self):
        x = pt.dvector("x")
        v = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
        assert ev(x.searchsorted(3), {x: v}) == np.searchsorted(v, 3)
        q = np.array([0.5, 3.0, 9.0])
        for side in ("left", "right"):
            np.testing.assert_array_equal(
                ev(x.searchsorted(q, side=side), {x: v}), np.searchsorted(v, q, side)
            )
        s = np.array([3.0, 1.0, 2.0])
        got = ev(x.searchsorted(q, sorter=pt.argsort(x)), {x: s})
        np.testing.assert_array_equal(got, np.searchsorted(s, q, sorter=np.argsort(s)))

    def test_compress_follows_numpy(self):
        x = pt.dmatrix("x")
        c = pt.bvector("c")
        for axis in (None, 0, 1):
            cond = np.array([1, 0, 1], dtype="int8")
            got = ev(x.compress(c, axis=axis), {x: XV[:, :3], c: cond})
            np.testing.assert_array_equal(got, XV[:, :3].compress(cond, axis=axis))

    def test_choose(self):
        i = pt.ivector("i")
        a, b = pt.dvector("a"), pt.dvector("b")
        iv, av, bv = np.array([0, 1, 1, 0], dtype="int32"), XV[0], YV[0]
        np.testing.assert_array_equal(ev(i.choose([a, b]), {i: iv, a: av, b: bv}), np.choose(iv, [av, bv]))
        iv = np.array([0, 3, -1, 2], dtype="int32")
        got = ev(i.choose([a, b], mode="wrap"), {i: iv, a: av, b: bv})
        np.testing.assert_array_equal(got, np.choose(iv, [av, bv], mode="wrap"))

    def test_nonzero_values_and_ptp(self):
        x = pt.imatrix("x")
        np.testing.assert_array_equal(ev(x.nonzero_values(), {x: IV}), IV.flatten()[np.flatnonzero(IV)])
        for axis in (None, 0, 1):
            got = ev(x.ptp(axis=axis), {x: IV})
            np.testing.assert_array_equal(got, np.ptp(IV, axis=axis))
            assert got.dtype == IV.dtype
        assert x.ptp(axis=1, keepdims=True).type.shape == (None, 1)

    @pytest.mark.parametrize("L", [1, 2, 3, 0.5, np.inf, -np.inf, 0])
    @pytest.mark.parametrize("axis", [None, 0, 1])
    def test_norm_against_numpy(self, L, axis):
        x = pt.dmatrix("x")
        xv = XV - 1.0
        xv[0, 1] = 0.0
        got = ev(x.norm(L, axis=axis), {x: xv})
        if axis is None:
            want = np.linalg.norm(xv.ravel(), L)
        else:
            want = np.linalg.norm(xv, L, axis=axis)
        np.testing.assert_allclose(got, want)
        kept = ev(x.norm(L, axis=axis, keepdims=True), {x: xv})
        np.testing.assert_allclose(kept, np.reshape(want, (1, 1) if axis is None else kept.shape))
        assert kept.ndim == 2

    def test_norm_dtypes_and_bad_order(self):
        assert pt.dvector("x").norm(2).dtype == "float64"
        assert pt.fvector("x").norm(2).dtype == "float32"
        with pytest.raises(TypeError, match="L must be a Python or NumPy number"):
            pt.dvector("x").norm("fro")
        with pytest.raises(ValueError, match="L must not be NaN"):
            pt.dvector("x").norm(np.nan)

    def test_owner_op(self):
        x = pt.dvector("x")
        y = x * 2
        assert x.owner_op is None and x.owner_op_and_inputs == (None,)
        assert y.owner_op is y.owner.op
        op, *inputs = y.owner_op_and_inputs
        assert op is y.owner.op and inputs == y.owner.inputs
        assert pt.constant(1.0).owner_op is None

    def test_unique_value(self):
        assert pt.constant(np.full((2, 3), 4.0)).unique_value == 4.0
        assert pt.constant(np.array([[7]])).unique_value == 7
        assert pt.constant(np.arange(3)).unique_value is None
        assert pt.constant(np.zeros(0)).unique_value is None
        assert pt.constant(np.array([np.nan, np.nan])).unique_value is None
        value = pt.constant(np.ones(2)).unique_value
        with pytest.raises((ValueError, TypeError)):
            value[...] = 2.0  # read-only


# -- NumPy-named unary methods (x.exp(), ...) ------------------------------------------------


@pytest.mark.parametrize(
    "name, x",
    [
        ("exp", [0.5, -1.0]),
        ("log1p", [0.5, 2.0]),
        ("arccos", [0.5, -0.25]),
        ("arctanh", [0.5, -0.25]),
        ("trunc", [1.7, -1.7]),
        ("deg2rad", [180.0, 90.0]),
        ("rad2deg", [np.pi, 1.0]),
        ("exp2", [3.0, -1.0]),
    ],
)
def test_unary_methods_compute_as_numpy(name, x):
    v = pt.dvector("v")
    method = getattr(v, name)
    assert method.__name__ == name and name in dir(v)  # a real method, listed by dir()
    np.testing.assert_allclose(method().eval({v: np.array(x)}), getattr(np, name)(np.array(x)))


def test_unary_methods_on_constants_and_shared():
    import arignote

    data = np.array([0.25, 4.0])
    np.testing.assert_allclose(pt.constant(data).sqrt().eval(), np.sqrt(data))
    np.testing.assert_allclose(arignote.shared(data).log10().eval(), np.log10(data))
    with pytest.raises(AttributeError, match="no attribute 'expp'"):
        pt.dvector().expp  # (a misspelt name is still an AttributeError)
