"""Join, Split and the stacking helpers, checked against NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import arignote.tensor as pt
from arignote.graph.basic import Constant
from arignote.tensor.join import Join, Split
from arignote.tensor.shape import MakeVector
from tests.tensor.utils import assert_infer_shape

DTYPES = ["float32", "float64", "int8", "int32", "int64", "uint8", "bool"]


def _value(dtype: str, shape: tuple, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(shape) > 0.5
    return (rng.random(shape) * 10).astype(dtype)


# --- Join ----------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype_a", DTYPES)
@pytest.mark.parametrize("dtype_b", ["float64", "int16", "bool"])
def test_join_dtypes_upcast_like_numpy(dtype_a, dtype_b):
    a = pt.tensor("a", dtype=dtype_a, shape=(None, 3))
    b = pt.tensor("b", dtype=dtype_b, shape=(None, 3))
    va, vb = _value(dtype_a, (2, 3)), _value(dtype_b, (1, 3), seed=1)
    out = pt.join(0, a, b)
    expected = np.concatenate([va, vb])
    assert out.type.dtype == expected.dtype.name
    got = out.eval({a: va, b: vb})
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize(
    "shapes, axis",
    [
        ([(2,), (3,)], 0),
        ([(2, 3), (4, 3), (1, 3)], 0),
        ([(2, 3), (2, 0), (2, 1)], 1),
        ([(2, 3), (2, 1)], -1),
        ([(2, 3, 4), (2, 1, 4)], -2),
        ([(0, 3), (0, 3)], 0),
        ([(1, 2), (1, 2)], 0),
    ],
)
def test_join_values_static_shapes_and_infer_shape(shapes, axis):
    values = [_value("float64", s, seed=i) for i, s in enumerate(shapes)]
    expected = np.concatenate(values, axis=axis)
    # static inputs: the output shape is static
    static_vars = [pt.tensor(f"s{i}", dtype="float64", shape=s) for i, s in enumerate(shapes)]
    out = pt.join(axis, *static_vars)
    assert out.type.shape == expected.shape
    np.testing.assert_array_equal(out.eval(dict(zip(static_vars, values))), expected)
    # unknown lengths: checked at run time, and infer_shape computes them
    dyn = [pt.tensor(f"d{i}", dtype="float64", shape=(None,) * len(s)) for i, s in enumerate(shapes)]
    out = pt.join(axis, *dyn)
    assert out.type.shape == (None,) * len(shapes[0])
    givens = dict(zip(dyn, values))
    np.testing.assert_array_equal(out.eval(givens), expected)
    assert_infer_shape(out, givens)


def test_join_static_shape_mixes_known_and_unknown():
    a = pt.tensor("a", dtype="float64", shape=(3, None))
    b = pt.tensor("b", dtype="float32", shape=(None, 2))
    assert pt.join(-1, a, b).type.shape == (3, None)
    assert pt.join(0, a, b).type.shape == (None, 2)
    assert pt.join(0, a, b).type.dtype == "float64"
    c = pt.tensor("c", dtype="float64", shape=(3, 2))
    assert pt.join(1, a, c).type.shape == (3, None)  # an axis sum needs every length
    assert pt.join(0, c, c).type.shape == (6, 2)


def test_join_negative_constant_axis_is_normalised():
    x = pt.dmatrix("x")
    node = pt.join(-1, x, x).owner
    assert isinstance(node.inputs[0], Constant) and int(node.inputs[0].data) == 1
    assert isinstance(node.op, Join) and Join() == Join() and str(Join()) == "Join"
    assert node.op.connection_pattern(node) == [[False], [True], [True]]


def test_join_symbolic_axis():
    ax = pt.lscalar("ax")
    x = pt.dmatrix("x")
    y = pt.dmatrix("y")
    out = pt.join(ax, x, y)
    assert out.type.shape == (None, None)
    vx, vy = np.ones((2, 3)), np.zeros((2, 3))
    for axis in (0, 1, -1, -2):
        givens = {x: vx, y: vy, ax: axis}
        np.testing.assert_array_equal(out.eval(givens), np.concatenate([vx, vy], axis=axis))
        assert_infer_shape(out, givens)
    with pytest.raises(ValueError, match="axis 2 is out of range for 2-d inputs"):
        out.eval({x: vx, y: vy, ax: 2})


def test_join_single_tensor_and_constants():
    x = pt.dvector("x")
    assert pt.join(0, x) is x
    out = pt.join(0, np.array([1, 2]), np.array([3.5]))
    np.testing.assert_array_equal(out.eval(), np.array([1.0, 2.0, 3.5]))
    single = Join()(0, x)  # the Op itself accepts one tensor
    assert single.type.shape == (None,)
    assert_infer_shape(single, {x: np.ones(3)})


def test_join_errors():
    x = pt.dmatrix("x")
    with pytest.raises(ValueError, match="no tensors to join"):
        Join()(0)
    with pytest.raises(TypeError, match=r"input 1 .* is 0-d.*use stack"):
        pt.join(0, pt.dvector("v"), pt.dscalar("s"))
    with pytest.raises(TypeError, match=r"input 0 is 2-d, input 1 .* is 1-d"):
        pt.join(0, x, pt.dvector("v"))
    with pytest.raises(ValueError, match="axis 2 is out of range for 2-d inputs"):
        pt.join(2, x, x)
    with pytest.raises(ValueError, match="axis -3 is out of range"):
        pt.join(-3, x, x)
    with pytest.raises(TypeError, match="axis must be a 0-d integer"):
        pt.join(1.0, x, x)
    with pytest.raises(TypeError, match="axis must be an integer, got the bool"):
        pt.join(True, x, x)
    a = pt.tensor("a", dtype="float64", shape=(2, 3))
    b = pt.tensor("b", dtype="float64", shape=(2, 4))
    with pytest.raises(ValueError, match="on dimension 1: input 0 has 3, input 1 has 4"):
        pt.join(0, a, b)
    # a static 1 does not broadcast
    with pytest.raises(ValueError, match="on dimension 1"):
        pt.join(0, a, pt.tensor("r", dtype="float64", shape=(1, 1)))
    y = pt.dmatrix("y")
    with pytest.raises(ValueError, match="input 0 has length 3 on dimension 1, input 1 has 2"):
        pt.join(0, x, y).eval({x: np.ones((2, 3)), y: np.ones((2, 2))})


def test_concatenate():
    x, y = pt.dmatrix("x"), pt.dmatrix("y")
    vx, vy = np.ones((2, 3)), np.arange(4.0).reshape(2, 2)
    np.testing.assert_array_equal(
        pt.concatenate([x, y], axis=1).eval({x: vx, y: vy}), np.concatenate([vx, vy], 1)
    )
    np.testing.assert_array_equal(pt.concatenate((x,)).eval({x: vx}), vx)
    with pytest.raises(TypeError, match=r"write concatenate\(\[x, y\]\)"):
        pt.concatenate(x, y)


# --- stack ---------------------------------------------------------------------------------


def test_stack_scalars_make_a_vector():
    a, b = pt.dscalar("a"), pt.iscalar("b")
    out = pt.stack([a, b])
    assert isinstance(out.owner.op, MakeVector)
    assert out.type.dtype == "float64" and out.type.shape == (2,)
    np.testing.assert_array_equal(out.eval({a: 1.5, b: 2}), [1.5, 2.0])
    c = pt.bscalar("c")
    out = pt.stack([c, 3, np.int16(4)])
    assert out.type.dtype == "int16"
    assert all(isinstance(i, Constant) for i in out.owner.inputs[1:])  # constants are cast in place
    np.testing.assert_array_equal(out.eval({c: -1}), np.array([-1, 3, 4], dtype="int16"))
    one = pt.stack([a])
    assert one.type.shape == (1,)
    np.testing.assert_array_equal(one.eval({a: 2.0}), [2.0])
    assert pt.stack([a, a], axis=-1).type.shape == (2,)
    with pytest.raises(ValueError, match="out of bounds"):
        pt.stack([a, a], axis=1)


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3])
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_stack_tensors(axis, dtype):
    xs = [pt.tensor(f"x{i}", dtype=dtype, shape=(None, 3)) for i in range(3)]
    values = [_value(dtype, (2, 3), seed=i) for i in range(3)]
    out = pt.stack(xs, axis=axis)
    expected = np.stack(values, axis=axis)
    assert out.type.dtype == dtype
    assert out.type.shape == tuple(n if n == 3 else None for n in expected.shape)
    givens = dict(zip(xs, values))
    np.testing.assert_array_equal(out.eval(givens), expected)
    assert_infer_shape(out, givens)


def test_stack_static_shapes_and_errors():
    a = pt.tensor("a", dtype="float64", shape=(2, 3))
    assert pt.stack([a, a, a], axis=1).type.shape == (2, 3, 3)
    assert pt.stack([a]).type.shape == (1, 2, 3)
    with pytest.raises(ValueError, match="no tensors to stack"):
        pt.stack([])
    with pytest.raises(TypeError, match="list or tuple"):
        pt.stack(a)
    with pytest.raises(ValueError, match=r"input 0 is 2-d, input 1 .* is 1-d"):
        pt.stack([a, pt.dvector("v")])
    with pytest.raises(ValueError, match="out of bounds"):
        pt.stack([a, a], axis=3)


def test_as_tensor_variable_of_lists_uses_stack():
    x, y = pt.dvector("x"), pt.dvector("y")
    out = pt.as_tensor_variable([x, y])
    assert out.type.shape == (2, None)
    np.testing.assert_array_equal(out.eval({x: [1.0, 2.0], y: [3.0, 4.0]}), [[1.0, 2.0], [3.0, 4.0]])
    a, b = pt.dscalar("a"), pt.dscalar("b")
    m = pt.as_tensor_variable([[a, b], [b, a]])
    assert m.type.shape == (2, 2)
    np.testing.assert_array_equal(m.eval({a: 1.0, b: 2.0}), [[1.0, 2.0], [2.0, 1.0]])


def test_horizontal_vertical_stack():
    x, y = pt.dmatrix("x"), pt.fmatrix("y")
    vx, vy = np.ones((2, 3)), np.zeros((2, 3), dtype="float32")
    h = pt.horizontal_stack(x, y)
    v = pt.vertical_stack(x, y, x)
    np.testing.assert_array_equal(h.eval({x: vx, y: vy}), np.hstack([vx, vy]))
    np.testing.assert_array_equal(v.eval({x: vx, y: vy}), np.vstack([vx, vy, vx]))
    with pytest.raises(ValueError, match="at least two tensors"):
        pt.horizontal_stack(x)
    with pytest.raises(ValueError, match="every input must be 2-d; input 1"):
        pt.vertical_stack(x, pt.dvector("v"))


# --- Split ---------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "shape, sizes, axis",
    [((5,), [2, 3], 0), ((5,), [5], 0), ((4, 6), [1, 0, 5], 1), ((4, 6), [3, 1], -2), ((0, 2), [0, 0], 0)],
)
def test_split_values_and_static_shapes(dtype, shape, sizes, axis):
    value = _value(dtype, shape)
    expected = np.split(value, np.cumsum(sizes)[:-1], axis=axis)
    x = pt.tensor("x", dtype=dtype, shape=shape)
    outs = pt.split(x, sizes, len(sizes), axis=axis)
    assert [o.type.shape for o in outs] == [e.shape for e in expected]
    for o, e in zip(outs, expected):
        got = o.eval({x: value})
        assert got.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(got, e)
    dyn = pt.tensor("d", dtype=dtype, shape=(None,) * len(shape))
    outs = pt.split(dyn, sizes, axis=axis)
    for o, e in zip(outs, expected):
        np.testing.assert_array_equal(o.eval({dyn: value}), e)
    assert_infer_shape(outs[0], {dyn: value})


def test_split_symbolic_sizes_and_axis():
    x = pt.dmatrix("x")
    value = np.arange(12.0).reshape(3, 4)
    s = pt.lvector("s")
    a, b = pt.split(x, s, 2, axis=1)
    assert a.type.shape == (None, None)
    givens = {x: value, s: [1, 3]}
    np.testing.assert_array_equal(a.eval(givens), value[:, :1])
    np.testing.assert_array_equal(b.eval(givens), value[:, 1:])
    assert_infer_shape(a, givens)
    n = pt.lscalar("n")
    a, b = pt.split(pt.tensor("y", dtype="float64", shape=(3, 4)), [n, 2], axis=1)
    assert a.type.shape == (3, None) and b.type.shape == (3, 2)
    ax = pt.lscalar("ax")
    parts = pt.split(x, [1, 2], axis=ax)
    assert parts[0].type.shape == (None, None)
    for axis in (0, -1):
        other = value if axis == 0 else value[:, :3]
        givens = {x: other, ax: axis}
        for o, e in zip(parts, np.split(other, [1], axis=axis)):
            np.testing.assert_array_equal(o.eval(givens), e)
        assert_infer_shape(parts[1], givens)


def test_split_op_props_views_and_connection_pattern():
    assert Split(2) == Split(2) and Split(2) != Split(3)
    assert str(Split(3)) == "Split{3}"
    assert Split(2).view_map == {0: [0], 1: [0]}
    x = pt.dvector("x")
    node = pt.split(x, [1, 1])[0].owner
    assert node.op.connection_pattern(node) == [[True, True], [False, False], [False, False]]
    one = pt.split(x, [3])
    assert isinstance(one, list) and len(one) == 1


def test_split_errors():
    x = pt.tensor("x", dtype="float64", shape=(5,))
    with pytest.raises(ValueError, match=r"sizes \[2, 2\] sum to 4, but .* has length 5 on axis 0"):
        pt.split(x, [2, 2])
    with pytest.raises(ValueError, match="split size 1 is -1"):
        pt.split(x, [6, -1])
    with pytest.raises(ValueError, match="splits has 2 entries, expected 3"):
        pt.split(x, [2, 3], 3)
    with pytest.raises(ValueError, match="axis 1 is out of range for 1-d inputs"):
        pt.split(x, [2, 3], axis=1)
    with pytest.raises(TypeError, match="cannot split the 0-d"):
        pt.split(pt.dscalar("s"), [1])
    with pytest.raises(TypeError, match="split sizes must be an integer vector"):
        pt.split(x, np.array([2.0, 3.0]), 2)
    with pytest.raises(TypeError, match="split size 0 must be a 0-d integer"):
        pt.split(x, [2.5, 3])
    with pytest.raises(ValueError, match="pass n_splits"):
        pt.split(x, pt.lvector("s"))
    with pytest.raises(TypeError, match="positive int"):
        Split(0)
    y, s = pt.dvector("y"), pt.lvector("s")
    a, _ = pt.split(y, s, 2)
    with pytest.raises(ValueError, match=r"sizes \[1, 1\] sum to 2, but the input has length 3"):
        a.eval({y: np.ones(3), s: [1, 1]})
    with pytest.raises(ValueError, match="non-negative"):
        a.eval({y: np.ones(3), s: [4, -1]})
    with pytest.raises(ValueError, match="splits has 3 entries, expected 2"):
        a.eval({y: np.ones(3), s: [1, 1, 1]})


@pytest.mark.parametrize(
    "build",
    [
        lambda x: pt.join(2, x, x),
        lambda x: pt.join(-3, x, x),
        lambda x: pt.concatenate([x, x], axis=2),
        lambda x: pt.stack([x, x], axis=3),
        lambda x: pt.split(x, [1, 1], 2, axis=3),
    ],
)
def test_an_axis_out_of_range_is_numpys_axis_error(build):
    """NumPy's AxisError, as PyTensor raises: code catching ValueError or IndexError works."""
    x = pt.dmatrix("x")
    with pytest.raises(np.exceptions.AxisError, match="out of (range|bounds)"):
        build(x)
