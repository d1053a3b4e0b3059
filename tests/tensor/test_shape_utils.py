"""The shape utilities (atleast_*, shape_pad*, specify_broadcastable, broadcast_*,
concat_with_broadcast, join_dims, split_dims, roll, empty*, get_vector_length,
get_scalar_constant_value) against NumPy: values, static shapes, gradients and errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import arignote.tensor as pt
from arignote import function
from arignote.tensor.basic import NotScalarConstantError
from tests.tensor.test_grad_ops import check_grad


def _value(shape: tuple, dtype: str = "float64", seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=shape).astype(dtype)


def _tensor(shape: tuple, name: str = "x", dtype: str = "float64", static: bool = False) -> Any:
    return pt.tensor(name, dtype=dtype, shape=shape if static else (None,) * len(shape))


def test_module_paths_and_newaxis():
    import importlib

    basic = importlib.import_module("arignote.tensor.basic")
    extra_ops = importlib.import_module("arignote.tensor.extra_ops")
    shape = importlib.import_module("arignote.tensor.shape")  # pt.shape is the function

    assert pt.newaxis is None
    assert basic.roll is pt.roll and basic.get_scalar_constant_value is pt.get_scalar_constant_value
    assert (
        extra_ops.broadcast_to is pt.broadcast_to
        and extra_ops.concat_with_broadcast is pt.concat_with_broadcast
    )
    assert shape.shape_padleft is pt.shape_padleft and shape.get_vector_length is pt.get_vector_length
    with pytest.raises(AttributeError):
        shape.no_such_name
    x = pt.dvector("x")
    assert x[pt.newaxis].type.shape == (1, None)


# --- adding dimensions -----------------------------------------------------------------------


def test_atleast_nd():
    s, v, m = pt.dscalar("s"), pt.dvector("v"), pt.dmatrix("m")
    assert pt.atleast_1d(s).type.shape == (1,)
    assert pt.atleast_1d(m) is m
    assert pt.atleast_2d(v).type.shape == (1, None)
    assert pt.atleast_3d(v).type.shape == (1, 1, None)  # PyTensor's left padding
    assert pt.atleast_3d(v, left=False).type.shape == (None, 1, 1)
    assert pt.atleast_Nd(m, n=4).type.shape == (1, 1, None, None)
    assert pt.atleast_Nd(m, n=1) is m
    assert pt.atleast_2d(3).type.shape == (1, 1)
    np.testing.assert_array_equal(pt.atleast_2d(v).eval({v: np.arange(3.0)}), np.atleast_2d(np.arange(3.0)))
    with pytest.raises(TypeError):
        pt.atleast_Nd(v, 3)  # n is keyword-only, as in PyTensor
    with pytest.raises(TypeError, match="n must be an int"):
        pt.atleast_Nd(v, n=2.0)


def test_shape_pads():
    v, m = pt.dvector("v"), pt.dmatrix("m")
    assert pt.shape_padleft(v, 2).type.shape == (1, 1, None)
    assert pt.shape_padright(v, 2).type.shape == (None, 1, 1)
    assert pt.shape_padleft(v, 0) is v and pt.shape_padright(v, 0) is v
    assert pt.shape_padaxis(m, 1).type.shape == (None, 1, None)
    assert pt.shape_padaxis(m, -1).type.shape == (None, None, 1)
    assert pt.shape_padaxis(m, -3).type.shape == (1, None, None)
    mv = _value((2, 3))
    np.testing.assert_array_equal(pt.shape_padaxis(m, 1).eval({m: mv}), np.expand_dims(mv, 1))
    assert pt.shape_padleft(np.zeros(3)).type.shape == (1, 3)
    with pytest.raises(ValueError, match=r"axis 3 is out of range \[-3, 3\)"):
        pt.shape_padaxis(m, 3)
    with pytest.raises(ValueError, match="n_ones must be non-negative"):
        pt.shape_padright(v, -1)


def test_specify_broadcastable():
    m = pt.dmatrix("m")
    assert pt.specify_broadcastable(m) is m
    assert pt.specify_broadcastable(m, 0).type.shape == (1, None)
    assert pt.specify_broadcastable(m, -1, 0).type.shape == (1, 1)
    np.testing.assert_array_equal(pt.specify_broadcastable(m, 0).eval({m: np.ones((1, 3))}), np.ones((1, 3)))
    with pytest.raises(ValueError, match="dimension 0 is 2, expected 1"):
        pt.specify_broadcastable(m, 0).eval({m: np.ones((2, 3))})
    with pytest.raises(ValueError, match="dimension 0 has length 3"):
        pt.specify_broadcastable(pt.tensor("t", dtype="float64", shape=(3, None)), 0)
    with pytest.raises(ValueError, match="out of bounds"):
        pt.specify_broadcastable(m, 2)
    with pytest.raises(TypeError, match="axis must be an int"):
        pt.specify_broadcastable(m, [0, 1])


# --- broadcasting ----------------------------------------------------------------------------

BROADCAST_CASES = [
    [(3,), (2, 3)],
    [(2, 1), (1, 3)],
    [(), (2, 3), (3,)],
    [(1, 1), (4, 1, 5)],
    [(0, 3), (1, 3)],
    [(2, 3)],
]


@pytest.mark.parametrize("shapes", BROADCAST_CASES)
def test_broadcast_shape_and_arrays_match_numpy(shapes):
    values = [_value(s, seed=i) for i, s in enumerate(shapes)]
    expected_shape = np.broadcast_shapes(*shapes)
    # static: the lengths and the output Types are static
    static = [_tensor(s, f"s{i}", static=True) for i, s in enumerate(shapes)]
    assert tuple(int(n.data) for n in pt.broadcast_shape(*static)) == expected_shape
    outs = pt.broadcast_arrays(*static)
    assert all(o.type.shape == expected_shape for o in outs)
    for got, exp in zip(function(static, list(outs))(*values), np.broadcast_arrays(*values)):
        np.testing.assert_array_equal(got, exp)
    # symbolic lengths where NumPy's are not 1; 1s stay static (they broadcast)
    sym = [
        pt.tensor(f"x{i}", dtype="float64", shape=tuple(1 if n == 1 else None for n in s))
        for i, s in enumerate(shapes)
    ]
    lengths = function(sym, list(pt.broadcast_shape(*sym)), on_unused_input="ignore")(*values)
    assert tuple(int(n) for n in lengths) == expected_shape
    for got, exp in zip(
        function(sym, list(pt.broadcast_arrays(*sym)))(*values), np.broadcast_arrays(*values)
    ):
        np.testing.assert_array_equal(got, exp)


def test_broadcast_shape_of_shapes():
    n = pt.lscalar("n")
    assert [int(s.data) for s in pt.broadcast_shape((2, 1), (1, 3), arrays_are_shapes=True)] == [2, 3]
    b = pt.broadcast_shape((1, n), (4, 1), arrays_are_shapes=True)
    assert [int(s.eval({n: 5}, on_unused_input="ignore")) for s in b] == [4, 5]
    assert all(s.type.dtype == "int64" and s.type.ndim == 0 for s in b)
    assert pt.broadcast_shape() == ()
    with pytest.raises(ValueError, match=r"shapes \(2, 3\), \(4, 3\) do not broadcast"):
        pt.broadcast_shape((2, 3), (4, 3), arrays_are_shapes=True)
    with pytest.raises(TypeError, match="must be a tuple of lengths"):
        pt.broadcast_shape(pt.lvector("s"), arrays_are_shapes=True)
    with pytest.raises(TypeError, match="a length must be a 0-d integer"):
        pt.broadcast_shape((2.5,), arrays_are_shapes=True)


def test_broadcast_arrays_keeps_what_already_has_the_shape():
    a = pt.tensor("a", dtype="float64", shape=(2, 3))
    b = pt.tensor("b", dtype="float64", shape=(1, 3))
    ba, bb = pt.broadcast_arrays(a, b)
    assert ba is a and bb.type.shape == (2, 3)
    assert pt.broadcast_arrays(a) == (a,)
    v, m = pt.dvector("v"), pt.dmatrix("m")
    bv, bm = pt.broadcast_arrays(v, m)
    assert bm is m and bv.owner is not None  # m sets every length: only v is copied


def test_broadcast_arrays_mismatch_errors():
    with pytest.raises(ValueError, match="do not broadcast"):
        pt.broadcast_arrays(_tensor((2, 3), "a", static=True), _tensor((4, 3), "b", static=True))
    v, m = pt.dvector("v"), pt.dmatrix("m")
    outs = pt.broadcast_arrays(v, m)
    with pytest.raises(ValueError, match="does not fit"):
        function([v, m], list(outs))(np.zeros(2), np.zeros((2, 3)))


def test_broadcast_to():
    v = pt.dvector("v")
    n = pt.lscalar("n")
    vv = np.arange(3.0)
    out = pt.broadcast_to(v, (2, 3))
    assert out.type.shape == (2, 3)
    np.testing.assert_array_equal(out.eval({v: vv}), np.broadcast_to(vv, (2, 3)))
    assert pt.broadcast_to(v, (n, 3)).type.shape == (None, 3)
    np.testing.assert_array_equal(pt.broadcast_to(v, (n, 3)).eval({v: vv, n: 4}), np.broadcast_to(vv, (4, 3)))
    shape_vec = pt.tensor("shp", dtype="int64", shape=(2,))
    got = pt.broadcast_to(v, shape_vec).eval({v: vv, shape_vec: np.array([2, 3])})
    np.testing.assert_array_equal(got, np.broadcast_to(vv, (2, 3)))
    assert pt.broadcast_to(v, 3).type.ndim == 1
    s = pt.tensor("s", dtype="float64", shape=(1,))
    np.testing.assert_array_equal(pt.broadcast_to(s, (0,)).eval({s: np.ones(1)}), np.zeros(0))


def test_broadcast_to_gradient_sums_the_copies():
    s = pt.tensor("s", dtype="float64", shape=(1, None))
    check_grad(lambda s: pt.broadcast_to(s, (3, 2)) ** 2, [(s, _value((1, 2)))])
    check_grad(lambda s: pt.broadcast_arrays(s, pt.zeros((4, 1)))[0] ** 2, [(s, _value((1, 2)))])


def test_broadcast_to_errors():
    v = pt.dvector("v")
    with pytest.raises(ValueError, match="length 3 on its dimension 0, which does not broadcast to length 4"):
        pt.broadcast_to(pt.tensor("t", dtype="float64", shape=(3,)), (3, 4))
    with pytest.raises(ValueError, match="2-d\\) to the 1-d shape"):
        pt.broadcast_to(pt.dmatrix("m"), (4,))
    with pytest.raises(ValueError, match="not known statically"):
        pt.broadcast_to(v, pt.lvector("shp"))
    with pytest.raises(TypeError, match="a length must be a 0-d integer"):
        pt.broadcast_to(v, (2.0, 3))
    with pytest.raises(ValueError, match="does not fit"):
        pt.broadcast_to(v, (2, 3)).eval({v: np.arange(2.0)})
    with pytest.raises(ValueError, match="does not fit"):  # a 1 broadcasts only when static
        pt.broadcast_to(v, (2, 3)).eval({v: np.arange(1.0)})


@pytest.mark.parametrize(
    "shapes, axis",
    [
        ([(2, 1), (3, 4)], 0),
        ([(1, 2, 1), (3, 1, 4)], 1),
        ([(1, 2), (3, 5)], -1),
        ([(2, 3)], 0),
    ],
)
def test_concat_with_broadcast(shapes, axis):
    values = [_value(s, seed=i) for i, s in enumerate(shapes)]
    ax = axis % len(shapes[0])
    target = list(np.broadcast_shapes(*[tuple(1 if d == ax else n for d, n in enumerate(s)) for s in shapes]))
    expected = np.concatenate(
        [np.broadcast_to(v, (*target[:ax], v.shape[ax], *target[ax + 1 :])) for v in values], axis=ax
    )
    static = [_tensor(s, f"s{i}", static=True) for i, s in enumerate(shapes)]
    out = pt.concat_with_broadcast(static, axis=axis)
    assert out.type.shape == expected.shape
    np.testing.assert_array_equal(function(static, out)(*values), expected)
    sym = [
        pt.tensor(f"x{i}", dtype="float64", shape=tuple(1 if n == 1 else None for n in s))
        for i, s in enumerate(shapes)
    ]
    np.testing.assert_array_equal(function(sym, pt.concat_with_broadcast(sym, axis=axis))(*values), expected)
    check_grad(lambda *xs: pt.concat_with_broadcast(list(xs), axis=axis) ** 2, list(zip(sym, values)))


def test_concat_with_broadcast_errors():
    v, m = pt.dvector("v"), pt.dmatrix("m")
    with pytest.raises(ValueError, match="no tensors"):
        pt.concat_with_broadcast([])
    with pytest.raises(TypeError, match="same number of dimensions"):
        pt.concat_with_broadcast([v, m])
    with pytest.raises(TypeError, match="list or tuple"):
        pt.concat_with_broadcast(v)
    with pytest.raises(ValueError, match=r"shapes \(2, 1\), \(3, 4\) do not broadcast .* axis 1"):
        pt.concat_with_broadcast(
            [_tensor((2, 1), "a", static=True), _tensor((3, 4), "b", static=True)], axis=1
        )
    with pytest.raises(ValueError, match="out of bounds"):
        pt.concat_with_broadcast([v, v], axis=1)


# --- join_dims / split_dims ------------------------------------------------------------------


@pytest.mark.parametrize(
    "start, n, expected",
    [(0, None, (120,)), (1, None, (2, 60)), (1, 2, (2, 12, 5)), (2, None, (2, 3, 20)), (-2, None, (2, 3, 20)),
     (1, 0, (2, 1, 3, 4, 5)), (4, 0, (2, 3, 4, 5, 1)), (1, 1, (2, 3, 4, 5))],
)  # fmt: skip
def test_join_dims(start, n, expected):
    xv = _value((2, 3, 4, 5))
    static = _tensor((2, 3, 4, 5), static=True)
    assert pt.join_dims(static, start, n).type.shape == expected
    x = _tensor((2, 3, 4, 5))
    out = pt.join_dims(x, start, n)
    np.testing.assert_array_equal(out.eval({x: xv}), xv.reshape(expected))
    if n != 1:
        check_grad(lambda x: pt.join_dims(x, start, n) ** 2, [(x, xv)])


def test_join_dims_of_a_scalar_and_of_empty_dims():
    s = pt.dscalar("s")
    assert pt.join_dims(s).type.shape == (1,)
    x = pt.dtensor3("x")
    np.testing.assert_array_equal(pt.join_dims(x, 1).eval({x: np.zeros((2, 0, 3))}), np.zeros((2, 0)))
    with pytest.raises(ValueError, match="cannot join dimensions 3 to 4"):
        pt.join_dims(_tensor((2, 3, 4, 5)), 3, 2)
    with pytest.raises(ValueError, match="out of range"):
        pt.join_dims(x, 5)


@pytest.mark.parametrize(
    "in_shape, shape, axis, expected",
    [
        ((6,), (2, 3), 0, (2, 3)),
        ((6, 4, 6), (2, 3), -1, (6, 4, 2, 3)),
        ((2, 3, 4, 5), (2, -1), 2, (2, 3, 2, 2, 5)),
        ((2, 3, 4), 3, 1, (2, 3, 4)),
        ((1, 3), (), 0, (3,)),
        ((2, 0), (0, 5), 1, (2, 0, 5)),
    ],
)
def test_split_dims(in_shape, shape, axis, expected):
    xv = _value(in_shape)
    static = _tensor(in_shape, static=True)
    assert pt.split_dims(static, shape, axis).type.shape == expected
    x = _tensor(in_shape)
    np.testing.assert_array_equal(pt.split_dims(x, shape, axis).eval({x: xv}), xv.reshape(expected))
    check_grad(lambda x: pt.split_dims(x, shape, axis) ** 2, [(x, xv)])


def test_split_dims_symbolic_and_errors():
    v = pt.dvector("v")
    n = pt.lscalar("n")
    out = pt.split_dims(v, (n, 3))
    assert out.type.shape == (None, 3)
    np.testing.assert_array_equal(out.eval({v: np.arange(6.0), n: 2}), np.arange(6.0).reshape(2, 3))
    shp = pt.tensor("shp", dtype="int64", shape=(2,))
    np.testing.assert_array_equal(
        pt.split_dims(v, shp).eval({v: np.arange(6.0), shp: np.array([3, 2])}), np.arange(6.0).reshape(3, 2)
    )
    x = _tensor((2, 3, 4, 5), static=True)
    with pytest.raises(ValueError, match="length 4, which cannot be split into \\(3, 3\\)"):
        pt.split_dims(x, (3, 3), axis=2)
    with pytest.raises(ValueError, match="cannot be split into \\(\\)"):
        pt.split_dims(x, (), axis=0)
    with pytest.raises(ValueError, match="at most one -1"):
        pt.split_dims(x, (-1, -1), axis=2)
    with pytest.raises(ValueError, match="cannot be split"):
        pt.split_dims(x, (3, -1), axis=2)
    with pytest.raises(ValueError, match="0-d"):
        pt.split_dims(pt.dscalar("s"), (1,))
    with pytest.raises(ValueError, match="Cannot reshape an array of shape \\(5,\\)"):
        pt.split_dims(v, (2, 3)).eval({v: np.arange(5.0)})


# --- roll ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "shape, shift, axis",
    [
        ((5,), 2, None),
        ((3, 4), 1, None),
        ((3, 4), -5, 1),
        ((3, 4), 7, 0),
        ((3, 4), (1, 2), (0, 1)),
        ((3, 4), (1, 2), 1),
        ((3, 4), 1, (0, 1)),
        ((2, 3, 4), (1, -1, 5), (2, 0, 2)),
        ((0, 3), 1, 0),
        ((3, 4), 0, 1),
        ((), 3, None),
    ],
)
def test_roll_matches_numpy(shape, shift, axis):
    xv = _value(shape)
    expected = np.roll(xv, shift, axis)
    static = _tensor(shape, static=True)
    assert pt.roll(static, shift, axis).type.shape == shape
    x = _tensor(shape)
    np.testing.assert_array_equal(pt.roll(x, shift, axis).eval({x: xv}), expected)
    if xv.size:
        check_grad(
            lambda x: pt.roll(x, shift, axis) * pt.constant(np.arange(1.0, xv.size + 1).reshape(shape)),
            [(x, xv)],
        )


def test_roll_symbolic_shift():
    x = pt.dmatrix("x")
    k = pt.lscalar("k")
    f = function([x, k], pt.roll(x, k, axis=1))
    xv = _value((3, 4))
    for shift in range(-9, 10):
        np.testing.assert_array_equal(f(xv, shift), np.roll(xv, shift, axis=1))
    assert f(np.zeros((3, 0)), 3).shape == (3, 0)
    s = pt.tensor("s", dtype="float64", shape=(3, 4))
    assert pt.roll(s, k, 1).type.shape == (3, 4)
    check_grad(lambda x, k: pt.roll(x, k, 0) ** 2, [(x, xv), (k, 2)], wrt=[0])


def test_roll_errors():
    m = pt.dmatrix("m")
    with pytest.raises(TypeError, match="shift must be a 0-d integer"):
        pt.roll(m, 1.5)
    with pytest.raises(ValueError, match="axis 3 is out of bounds"):
        pt.roll(m, 1, 3)
    with pytest.raises(ValueError, match="2 shifts for 3 axes"):
        pt.roll(m, (1, 2), (0, 1, 1))
    with pytest.raises(ValueError, match="0-d"):
        pt.roll(pt.dscalar("s"), 1, 0)


# --- empty -----------------------------------------------------------------------------------


def test_empty_and_empty_like():
    from arignote.configdefaults import config

    e = pt.empty((2, 3))
    assert e.type.shape == (2, 3) and e.type.dtype == config.floatX
    assert e.eval().shape == (2, 3)
    assert pt.empty(3, "int32").type == pt.TensorType("int32", (3,))
    n = pt.lscalar("n")
    assert pt.empty((n, 2), "uint8").eval({n: 4}).shape == (4, 2)
    m = pt.fmatrix("m")
    like = pt.empty_like(m)
    assert like.type.dtype == "float32" and like.type.ndim == 2
    got = pt.empty_like(m, "int8").eval({m: np.zeros((2, 5), "float32")})
    assert got.shape == (2, 5) and got.dtype == np.int8


# --- static facts ----------------------------------------------------------------------------


def test_get_vector_length():
    m = pt.dmatrix("m")
    assert pt.get_vector_length(pt.tensor("v", dtype="float64", shape=(3,))) == 3
    assert pt.get_vector_length(m.shape) == 2
    assert pt.get_vector_length(pt.dtensor3("t").shape[1:]) == 2
    assert pt.get_vector_length([1, 2, 3]) == 3
    assert pt.get_vector_length(np.zeros(4)) == 4
    assert pt.get_vector_length(pt.stack([pt.dscalar("a"), pt.dscalar("b")])) == 2
    assert pt.get_vector_length(pt.specify_shape(pt.lvector("l"), (5,))) == 5
    with pytest.raises(TypeError, match="must be a vector"):
        pt.get_vector_length(m)
    with pytest.raises(TypeError, match="must be a vector"):
        pt.get_vector_length(pt.dscalar("s"))
    with pytest.raises(ValueError, match="not known statically"):
        pt.get_vector_length(pt.dvector("v"))


def test_get_scalar_constant_value():
    s = pt.dscalar("s")
    assert pt.get_scalar_constant_value(pt.constant(3)) == 3
    assert pt.get_scalar_constant_value(np.array(3.0)) == 3.0
    assert pt.get_scalar_constant_value(3) == 3
    assert pt.get_scalar_constant_value(pt.constant(3) + 2) == 5
    assert pt.get_scalar_constant_value(pt.tensor("t", dtype="float64", shape=(3, 4)).shape[1]) == 4
    assert pt.get_scalar_constant_value(s, raise_not_constant=False) is s
    with pytest.raises(NotScalarConstantError):
        pt.get_scalar_constant_value(s)
    with pytest.raises(NotScalarConstantError, match="1-d, not a scalar"):
        pt.get_scalar_constant_value(pt.constant([3.0, 3.0]))
    with pytest.raises(NotScalarConstantError):
        pt.get_scalar_constant_value(pt.constant(3) + 2, only_process_constants=True)
    with pytest.raises(NotScalarConstantError):
        pt.get_scalar_constant_value(pt.constant(3) + 2, elemwise=False)
    v = pt.dvector("v")
    assert pt.get_scalar_constant_value(v, raise_not_constant=False) is v
