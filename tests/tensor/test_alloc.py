"""Alloc, Eye, ARange, Repeat and the array-making helpers, checked against NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import arignote.tensor as pt
from arignote.configdefaults import config
from arignote.graph.basic import Constant
from arignote.graph.fg import FunctionGraph
from arignote.tensor.alloc import Alloc, Eye, Repeat, alloc
from arignote.tensor.elemwise import Elemwise
from arignote.tensor.ranges import ARange
from tests.tensor.utils import assert_infer_shape

DTYPES = ["float32", "float64", "int8", "int32", "int64", "uint8", "bool"]


def _value(dtype: str, shape: tuple) -> np.ndarray:
    rng = np.random.default_rng(0)
    if dtype == "bool":
        return rng.random(shape) > 0.5
    return (rng.random(shape) * 10).astype(dtype)


# --- Alloc ---------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "vshape, shape",
    [((), (2, 3)), ((3,), (2, 3)), ((1, 3), (4, 3)), ((2, 3), (2, 3)), ((), ()), ((3,), (0, 3)), ((), (5,))],
)
def test_alloc_values_match_broadcast_to(dtype, vshape, shape):
    v = pt.tensor("v", dtype=dtype, shape=vshape)
    value = _value(dtype, vshape)
    out = alloc(v, *shape)
    assert out.type.dtype == dtype
    assert out.type.shape == shape
    got = out.eval({v: value})
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got, np.broadcast_to(value, shape))
    assert_infer_shape(out, {v: value})


def test_alloc_symbolic_lengths():
    n, m = pt.lscalar("n"), pt.iscalar("m")
    v = pt.dvector("v")
    out = pt.alloc(v, n, m)
    assert out.type.shape == (None, None)
    got = out.eval({v: np.arange(3.0), n: 2, m: 3})
    np.testing.assert_array_equal(got, np.broadcast_to(np.arange(3.0), (2, 3)))
    assert_infer_shape(out, {v: np.arange(3.0), n: 2, m: 3})


def test_alloc_static_shape_from_value_and_lengths():
    n = pt.lscalar("n")
    v = pt.tensor("v", dtype="float64", shape=(None, 3))
    assert pt.alloc(v, 2, n).type.shape == (2, 3)  # the value's static length is kept
    b = pt.tensor("b", dtype="float64", shape=(1, None))
    assert pt.alloc(b, n, 4).type.shape == (None, 4)  # a broadcast 1 says nothing
    assert pt.alloc(b, 2, n).type.shape == (2, None)


def test_alloc_zero_fast_path_and_buffer_reuse():
    op = Alloc()
    v = pt.dscalar("v")
    node = op.make_node(v, 2, 2)
    cell = [None]
    op.perform(node, [np.asarray(0.0), np.int8(2), np.int8(2)], [cell])
    np.testing.assert_array_equal(cell[0], np.zeros((2, 2)))
    first = cell[0]
    op.perform(node, [np.asarray(5.0), np.int8(2), np.int8(2)], [cell])
    assert cell[0] is first  # the previous output buffer was reused
    np.testing.assert_array_equal(cell[0], np.full((2, 2), 5.0))


def test_alloc_errors():
    v = pt.dvector("v")
    with pytest.raises(TypeError, match="more than the 1 lengths"):
        pt.alloc(pt.dmatrix("m"), 3)
    with pytest.raises(TypeError, match=r"length 0 must be a 0-d integer.*float"):
        pt.alloc(v, 2.5, 3)
    with pytest.raises(TypeError, match="separate arguments"):
        pt.alloc(v, (2, 3))
    with pytest.raises(TypeError, match=r"length 1 must be .* bool"):
        pt.alloc(v, 2, True)
    with pytest.raises(ValueError, match="length 0 is -2; lengths must be non-negative"):
        pt.alloc(v, -2, 3)
    with pytest.raises(ValueError, match=r"length 3 at its dimension 0.*output length 4"):
        pt.alloc(pt.tensor("w", dtype="float64", shape=(3,)), 2, 4)


def test_alloc_runtime_errors():
    v = pt.dvector("v")
    n = pt.lscalar("n")
    out = pt.alloc(v, n, 3)
    with pytest.raises(ValueError, match="negative length -1"):
        out.eval({v: np.ones(3), n: -1})
    with pytest.raises(ValueError, match="dimension 0 has length 2, the output length is 3"):
        out.eval({v: np.ones(2), n: 2})
    # a length-1 value broadcasts only when its Type says so
    with pytest.raises(ValueError, match="broadcasts only where the value's Type says so"):
        out.eval({v: np.ones(1), n: 2})
    row = pt.tensor("r", dtype="float64", shape=(1,))
    np.testing.assert_array_equal(pt.alloc(row, n, 3).eval({row: [7.0], n: 2}), np.full((2, 3), 7.0))


def test_alloc_props_and_connection_pattern():
    assert Alloc() == Alloc() and hash(Alloc()) == hash(Alloc())
    assert str(Alloc()) == "Alloc"
    node = pt.alloc(pt.dscalar("v"), pt.lscalar("n")).owner
    assert node.op.connection_pattern(node) == [[True], [False]]


def test_alloc_do_constant_folding():
    small = pt.alloc(np.float64(1.0), 2, 3)
    big = pt.alloc(np.float64(1.0), 100, 100)
    assert small.owner.op.do_constant_folding(None, small.owner)
    assert not big.owner.op.do_constant_folding(None, big.owner)
    fg = FunctionGraph([], [small], clone=False)
    assert not small.owner.op.do_constant_folding(fg, small.owner)  # a graph output
    fg = FunctionGraph([], [pt.exp(small)], clone=False)
    assert not small.owner.op.do_constant_folding(fg, small.owner)  # Elemwise can absorb it
    x = pt.dmatrix("x")
    fg = FunctionGraph([x], [pt.sum(small)], clone=False)
    assert small.owner.op.do_constant_folding(fg, small.owner)


# --- zeros / ones / full -------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [None, *DTYPES])
def test_zeros_ones(dtype):
    expected = np.dtype(config.floatX if dtype is None else dtype)
    for fn, np_fn in ((pt.zeros, np.zeros), (pt.ones, np.ones)):
        out = fn((2, 3), dtype=dtype)
        assert out.type.shape == (2, 3) and out.type.dtype == expected.name
        got = out.eval()
        assert got.dtype == expected
        np.testing.assert_array_equal(got, np_fn((2, 3), dtype=expected))


@pytest.mark.parametrize("shape", [3, (), (0,), (2, 0, 3), np.array([2, 3])])
def test_zeros_shape_forms(shape):
    out = pt.zeros(shape)
    np.testing.assert_array_equal(out.eval(), np.zeros(shape))
    assert out.type.shape == np.zeros(shape).shape


def test_zeros_symbolic_shapes():
    n = pt.lscalar("n")
    out = pt.zeros(n, dtype="int32")
    assert out.type.shape == (None,)
    np.testing.assert_array_equal(out.eval({n: 4}), np.zeros(4, dtype="int32"))
    out = pt.ones((n, 2))
    assert out.type.shape == (None, 2)
    assert out.eval({n: 3}).shape == (3, 2)
    # a shape vector of static length (constant, MakeVector, or a symbolic input)
    assert pt.zeros(pt.as_tensor_variable([n, 3])).type.shape == (None, 3)
    vec = pt.tensor("s", dtype="int64", shape=(2,))
    out = pt.ones(vec)
    assert out.type.ndim == 2
    np.testing.assert_array_equal(out.eval({vec: [2, 3]}), np.ones((2, 3)))
    with pytest.raises(ValueError, match="not known statically"):
        pt.zeros(pt.lvector("s"))


@pytest.mark.parametrize(
    "fill_value, dtype, expected",
    [
        (7, None, "int8"),
        (2.5, None, "float32"),
        (np.float64(0.1), None, "float64"),
        (3, "float64", "float64"),
    ],
)
def test_full(fill_value, dtype, expected):
    out = pt.full((2, 2), fill_value, dtype=dtype)
    assert out.type.dtype == expected and out.type.shape == (2, 2)
    np.testing.assert_array_equal(out.eval(), np.full((2, 2), fill_value, dtype=expected))


def test_full_with_array_fill_and_int_shape():
    np.testing.assert_array_equal(pt.full((2, 3), np.arange(3.0)).eval(), np.full((2, 3), np.arange(3.0)))
    np.testing.assert_array_equal(pt.full(3, np.int32(4)).eval(), np.full(3, 4, dtype="int32"))


@pytest.mark.parametrize("dtype", DTYPES)
def test_like_functions(dtype):
    x = pt.tensor("x", dtype=dtype, shape=(None, 3))
    value = _value(dtype, (2, 3))
    z, o = pt.zeros_like(x), pt.ones_like(x)
    assert z.type.dtype == o.type.dtype == dtype
    assert z.type.shape == (None, 3)
    np.testing.assert_array_equal(z.eval({x: value}), np.zeros_like(value))
    np.testing.assert_array_equal(o.eval({x: value}), np.ones_like(value))
    f = pt.full_like(x, 3, dtype="float32")
    assert f.type.dtype == "float32"
    np.testing.assert_array_equal(f.eval({x: value}), np.full((2, 3), 3, dtype="float32"))


def test_like_dtypes_follow_pytensor():
    x = pt.fmatrix("x")
    assert pt.ones_like(x, dtype="int32").type.dtype == "int32"
    assert pt.full_like(x, 2).type.dtype == "int8"  # the fill value's dtype, as in PyTensor
    assert pt.zeros_like(x).owner.op == Elemwise(pt.second.scalar_op)
    s = pt.dscalar("s")
    assert isinstance(pt.zeros_like(s, opt=True), Constant)


# --- Eye -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "n, m, k", [(3, None, 0), (2, 4, 1), (4, 2, -1), (3, 3, 5), (3, 3, -5), (0, 3, 0), (1, 1, 0)]
)
@pytest.mark.parametrize("dtype", [None, "float32", "int64", "bool"])
def test_eye(n, m, k, dtype):
    out = pt.eye(n, m, k, dtype=dtype)
    expected = np.eye(n, m, k, dtype=config.floatX if dtype is None else dtype)
    assert out.type.shape == expected.shape and out.type.dtype == expected.dtype.name
    got = out.eval()
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)
    assert_infer_shape(out, {})


def test_eye_symbolic():
    n, k = pt.lscalar("n"), pt.bscalar("k")
    out = pt.eye(n, 4, k)
    assert out.type.shape == (None, 4)
    np.testing.assert_array_equal(out.eval({n: 3, k: 1}), np.eye(3, 4, 1))
    assert_infer_shape(out, {n: 3, k: 1})
    assert pt.eye(n).type.shape == (None, None)
    assert Eye("float32") == Eye(np.float32) and Eye() == Eye(config.floatX)
    assert str(Eye("int8")) == "Eye{dtype='int8'}"


def test_eye_errors():
    with pytest.raises(ValueError, match="non-negative"):
        pt.eye(-1)
    with pytest.raises(TypeError, match="number of rows n must be a 0-d integer"):
        pt.eye(2.0)
    with pytest.raises(TypeError, match="diagonal k must be a 0-d integer"):
        pt.eye(2, 2, pt.dscalar("k"))
    n = pt.lscalar("n")
    with pytest.raises(ValueError, match="negative length"):
        pt.eye(n).eval({n: -2})


def test_identity_like():
    x = pt.tensor("x", dtype="int32", shape=(2, None))
    out = pt.identity_like(x)
    assert out.type.dtype == "int32" and out.type.shape == (2, None)
    np.testing.assert_array_equal(out.eval({x: np.zeros((2, 3), "int32")}), np.eye(2, 3, dtype="int32"))
    assert pt.identity_like(x, dtype="bool").type.dtype == "bool"
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        pt.identity_like(pt.dvector("v"))


# --- ARange --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        (5,),
        (2, 9),
        (2, 9, 3),
        (9, 2, -2),
        (5, 1),
        (0,),
        (1.0, 3.0),
        (0.0, 1.0, 0.1),
        (0.5, -1.5, -0.3),
        (-3, 3, 4),
    ],
)
def test_arange_constant_values_and_static_length(args):
    out = pt.arange(*args)
    expected = np.arange(*args)
    assert out.type.shape == expected.shape
    got = out.eval()
    np.testing.assert_allclose(got, expected)
    assert got.dtype == out.type.dtype


@pytest.mark.parametrize(
    "args, dtype",
    [
        ((5,), "int64"),
        ((np.int32(3),), "int64"),
        ((np.uint8(3), np.uint8(9), np.uint8(2)), "uint64"),
        ((1.0, 3.0), "float32"),
        ((0, 1, 0.1), "float64"),
        ((np.float32(2.5),), "float32"),
        ((np.int16(2), 7.5), "float32"),
    ],
)
def test_arange_default_dtype_follows_pytensor(args, dtype):
    assert pt.arange(*args).type.dtype == dtype


def test_arange_symbolic_and_infer_shape():
    n, b = pt.lscalar("n"), pt.bscalar("b")
    f = pt.dscalar("f")
    cases = [
        (pt.arange(n), {n: 5}, np.arange(5)),
        (pt.arange(n), {n: -3}, np.arange(-3)),
        (pt.arange(n, 1, -1), {n: 7}, np.arange(7, 1, -1)),
        (pt.arange(1, n, 3), {n: 11}, np.arange(1, 11, 3)),
        (pt.arange(b, n), {b: 2, n: 4}, np.arange(2, 4)),
        (pt.arange(0.5, f, 0.3), {f: 3.0}, np.arange(0.5, 3.0, np.float32(0.3))),
        (pt.arange(f), {f: 2.5}, np.arange(2.5)),
        (pt.arange(f, 0, -0.5), {f: 2.2}, np.arange(2.2, 0, -0.5)),
    ]
    for out, givens, expected in cases:
        assert out.type.shape == (None,)
        got = out.eval(givens)
        assert got.dtype == expected.dtype
        np.testing.assert_allclose(got, expected)
        assert_infer_shape(out, givens)


def test_arange_explicit_dtype_and_props():
    out = pt.arange(4, dtype="float32")
    assert out.type.dtype == "float32"
    np.testing.assert_array_equal(out.eval(), np.arange(4, dtype="float32"))
    assert ARange("int64") == ARange(np.int64)
    assert pt.arange(3).owner.op is pt.arange(4).owner.op
    node = pt.arange(pt.lscalar("n")).owner
    assert node.op.connection_pattern(node) == [[True], [False], [True]]


def test_arange_errors():
    with pytest.raises(ValueError, match="step is 0"):
        pt.arange(0, 5, 0)
    s = pt.lscalar("s")
    with pytest.raises(ValueError, match="step is 0"):
        pt.arange(0, 5, s).eval({s: 0})
    with pytest.raises(TypeError, match="stop must be a 0-d integer or float"):
        pt.arange(pt.dvector("v"))
    with pytest.raises(TypeError, match="start must be a 0-d"):
        pt.arange(pt.zscalar("z"), 3)


# --- linspace ------------------------------------------------------------------------------


@pytest.mark.parametrize("num", [0, 1, 2, 5, 7])
@pytest.mark.parametrize("endpoint", [True, False])
def test_linspace_scalars(num, endpoint):
    out = pt.linspace(-1.5, 4.0, num, endpoint=endpoint)
    expected = np.linspace(-1.5, 4.0, num, endpoint=endpoint)
    assert out.type.shape == (num,) and out.type.dtype == config.floatX
    np.testing.assert_allclose(out.eval(), expected)
    _, step = pt.linspace(-1.5, 4.0, num, endpoint=endpoint, retstep=True)
    _, np_step = np.linspace(-1.5, 4.0, num, endpoint=endpoint, retstep=True)
    np.testing.assert_allclose(step.eval(), np_step)


def test_linspace_symbolic_arrays_axis_dtype():
    num = pt.lscalar("num")
    start = pt.dvector("start")
    out = pt.linspace(start, 10.0, num, axis=-1)
    expected = np.linspace(np.array([0.0, 1.0]), 10.0, 4, axis=-1)
    np.testing.assert_allclose(out.eval({start: [0.0, 1.0], num: 4}), expected)
    out = pt.linspace(-10, 0, 4, dtype="int64")
    np.testing.assert_array_equal(out.eval(), np.linspace(-10, 0, 4, dtype="int64"))  # rounds down
    out = pt.linspace(0, 1, 3, dtype="float32")
    assert out.eval().dtype == np.float32
    with pytest.raises(ValueError, match="num must be non-negative"):
        pt.linspace(0, 1, -1)


def test_linspace_num_may_be_float_typed():
    # PyTensor accepts a float num (5.0, a float scalar) of a whole value
    out = pt.linspace(-1.0, 3.0, 5.0)
    assert out.type.shape == (5,)
    np.testing.assert_allclose(out.eval(), np.linspace(-1.0, 3.0, 5))
    for num_var in (pt.dscalar("n"), pt.fscalar("n")):
        out = pt.linspace(0.0, 1.0, num_var, endpoint=False)
        value = np.asarray(4.0, dtype=num_var.type.dtype)
        np.testing.assert_allclose(out.eval({num_var: value}), np.linspace(0.0, 1.0, 4, endpoint=False))
    n = pt.dscalar("n")
    with pytest.raises(ValueError, match="linspace: num must be a whole number; got array\\(3.7\\)"):
        pt.linspace(0.0, 1.0, n).eval({n: 3.7})
    with pytest.raises(ValueError, match="num must be a whole number, got 5.5"):
        pt.linspace(0, 1, 5.5)
    with pytest.raises(TypeError, match="num must be a 0-d integer or float, got .* Vector"):
        pt.linspace(0, 1, pt.dvector("n"))
    assert pt.extra_ops.linspace is pt.linspace


# --- Repeat / repeat -----------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "shape, repeats, axis",
    [
        ((3,), 2, None),
        ((2, 3), 2, None),
        ((2, 3), 3, 1),
        ((2, 3), [1, 0, 2], 1),
        ((2, 3), [2, 1], 0),
        ((2, 3), [2, 1], -2),
        ((2, 3), 0, 0),
        ((0, 3), 2, 0),
        ((2, 3, 2), [1, 2], -1),
        ((2, 2), [4], 1),
    ],
)
def test_repeat_values(dtype, shape, repeats, axis):
    x = pt.tensor("x", dtype=dtype, shape=(None,) * len(shape))
    value = _value(dtype, shape)
    out = pt.repeat(x, repeats, axis=axis)
    expected = np.repeat(value, repeats, axis=axis)
    got = out.eval({x: value})
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got, expected)
    if out.owner is not None and isinstance(out.owner.op, Repeat):
        assert_infer_shape(out, {x: value})


def test_repeat_static_shapes_and_symbolic():
    x = pt.tensor("x", dtype="float64", shape=(2, 3))
    assert pt.repeat(x, 2, axis=0).type.shape == (4, 3)
    assert pt.repeat(x, [1, 2], axis=0).type.shape == (3, 3)
    assert pt.repeat(x, 2).type.shape == (12,)
    r = pt.lvector("r")
    out = pt.repeat(x, r, axis=1)
    assert out.type.shape == (2, None)
    value = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(out.eval({x: value, r: [0, 1, 3]}), np.repeat(value, [0, 1, 3], axis=1))
    assert_infer_shape(out, {x: value, r: [0, 1, 3]})
    n = pt.bscalar("n")
    out = pt.repeat(x, n, axis=1)
    np.testing.assert_array_equal(out.eval({x: value, n: 2}), np.repeat(value, 2, axis=1))
    assert Repeat(1) == Repeat(1) and Repeat(1) != Repeat(0)
    assert Repeat(0).connection_pattern(out.owner) == [[True], [False]]


def test_repeat_errors():
    x = pt.tensor("x", dtype="float64", shape=(2, 3))
    with pytest.raises(ValueError, match=r"repeats has 2 entries .* length 3 on axis 1"):
        pt.repeat(x, [1, 2], axis=1)
    with pytest.raises(ValueError, match="non-negative"):
        pt.repeat(x, [1, -2], axis=0)
    with pytest.raises(ValueError, match="non-negative"):
        pt.repeat(x, -1, axis=0)
    with pytest.raises(TypeError, match="repeats must be integers"):
        pt.repeat(x, 1.5)
    with pytest.raises(ValueError, match="scalar or a vector"):
        pt.repeat(x, np.ones((2, 2), "int64"))
    with pytest.raises(ValueError, match="out of bounds"):
        pt.repeat(x, 2, axis=2)
    with pytest.raises(TypeError, match="non-negative int"):
        Repeat(-1)
    y, r = pt.dvector("y"), pt.lvector("r")
    out = pt.repeat(y, r)
    with pytest.raises(ValueError, match="repeats has 2 entries, but the input has length 3"):
        out.eval({y: np.ones(3), r: [1, 2]})
    with pytest.raises(ValueError, match="non-negative"):
        out.eval({y: np.ones(2), r: [1, -2]})


# --- tile ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "shape, reps",
    [
        ((3,), 2),
        ((3,), (2, 2)),
        ((2, 3), 2),
        ((2, 3), (2, 1)),
        ((2, 3), (1, 2, 2)),
        ((), 3),
        ((2,), 0),
        ((0, 2), (2, 3)),
    ],
)
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_tile_values_and_static_shape(shape, reps, dtype):
    value = _value(dtype, shape)
    x = pt.tensor("x", dtype=dtype, shape=shape)
    out = pt.tile(x, reps)
    expected = np.tile(value, reps)
    assert out.type.shape == expected.shape
    got = out.eval({x: value})
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got, expected)


def test_tile_symbolic_reps():
    x = pt.dmatrix("x")
    n = pt.lscalar("n")
    value = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(pt.tile(x, (n, 2)).eval({x: value, n: 3}), np.tile(value, (3, 2)))
    reps = pt.tensor("reps", dtype="int32", shape=(2,))
    np.testing.assert_array_equal(pt.tile(x, reps).eval({x: value, reps: [2, 1]}), np.tile(value, (2, 1)))
    with pytest.raises(ValueError, match="not known statically"):
        pt.tile(x, pt.lvector("r"))
    with pytest.raises(ValueError, match="non-negative"):
        pt.tile(x, (2, -1))
    with pytest.raises(TypeError, match=r"reps\[0\] must be a 0-d integer"):
        pt.tile(x, (1.5,))


# --- tri / tril / triu ---------------------------------------------------------------------


@pytest.mark.parametrize("N, M, k", [(3, None, 0), (3, 4, 1), (4, 2, -1), (2, 2, 5), (0, 2, 0)])
def test_tri(N, M, k):
    out = pt.tri(N, M, k, dtype="int32")
    expected = np.tri(N, M, k, dtype="int32")
    assert out.type.shape == expected.shape and out.type.dtype == "int32"
    np.testing.assert_array_equal(out.eval(), expected)
    assert pt.tri(N, M, k).type.dtype == config.floatX


@pytest.mark.parametrize("k", [-2, -1, 0, 1, 3])
@pytest.mark.parametrize("dtype", ["float64", "int32", "bool"])
def test_tril_triu(k, dtype):
    x = pt.tensor("x", dtype=dtype, shape=(None, None, None))
    value = _value(dtype, (2, 3, 4))
    for fn, np_fn in ((pt.tril, np.tril), (pt.triu, np.triu)):
        out = fn(x, k)
        assert out.type.dtype == dtype
        np.testing.assert_array_equal(out.eval({x: value}), np_fn(value, k))


def test_tril_triu_static_and_symbolic():
    m = pt.tensor("m", dtype="float64", shape=(3, 4))
    value = np.full((3, 4), np.nan)
    assert pt.tril(m).type.shape == (3, 4)
    np.testing.assert_array_equal(pt.triu(m, 1).eval({m: value}), np.triu(value, 1))  # zeros, not NaN * 0
    k = pt.lscalar("k")
    np.testing.assert_array_equal(pt.tril(m, k).eval({m: value, k: -1}), np.tril(value, -1))
    np.testing.assert_array_equal(pt.triu(m, k).eval({m: value, k: 2}), np.triu(value, 2))
    with pytest.raises(ValueError, match="tril needs a tensor of at least 1 dimension"):
        pt.tril(pt.dscalar("s"))
    with pytest.raises(ValueError, match="triu needs a tensor of at least 1 dimension"):
        pt.triu(pt.dscalar("s"))


@pytest.mark.parametrize("k", [0, 1, -2, 5])
def test_tril_triu_of_a_vector_is_numpys_square_matrix(k):
    """NumPy repeats a vector into an n x n matrix before masking it (PyTensor too)."""
    v = np.arange(1, 5, dtype="int16")
    x = pt.tensor("x", dtype="int16", shape=(None,))
    for fn, ref in ((pt.tril, np.tril), (pt.triu, np.triu)):
        out = fn(x, k)
        assert out.type.dtype == "int16" and out.type.ndim == 2
        np.testing.assert_array_equal(out.eval({x: v}), ref(v, k))
    assert pt.tril(pt.tensor("s", dtype="float32", shape=(3,))).type.shape == (3, 3)
