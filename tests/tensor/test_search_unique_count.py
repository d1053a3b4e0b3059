"""CheckValues, searchsorted, unique, bincount (Ops) and diff, compress,
bartlett, geomspace, logspace — against NumPy; shapes, gradients, pushforwards, batching,
errors."""

from __future__ import annotations

import numpy as np
import pytest

import arignote
import arignote.tensor as pt
import arignote.tensor.extra_ops as pt_extra
from arignote import function
from arignote.gradient import DisconnectedType, disconnected_type, grad
from arignote.graph.replace import batch_graph
from arignote.tensor.batching import Batched
from arignote.tensor.checks import CheckValues, check_values
from arignote.tensor.searching import Bincount, SearchsortedOp, Unique
from tests.tensor.test_grad_ops import _check_pushforward, check_grad
from tests.tensor.utils import assert_infer_shape

RNG = np.random.default_rng(5)


def ev(out, givens=None):
    return out.eval(givens or {})


def test_reachable_under_extra_ops():
    for name in (
        "searchsorted",
        "unique",
        "bincount",
        "diff",
        "compress",
        "bartlett",
        "geomspace",
        "logspace",
    ):
        assert getattr(pt_extra, name) is getattr(pt, name)


# --- CheckValues ---------------------------------------------------------------------------


def test_check_values_passes_and_fails_with_the_offending_values():
    x = pt.dvector("x")
    y = check_values(x, pt.ge(x, 0), "x must be non-negative")
    assert isinstance(y.owner.op, CheckValues)
    fn = function([x], y * 2)
    np.testing.assert_array_equal(fn(np.array([1.0, 2.0])), [2.0, 4.0])
    with pytest.raises(ValueError, match=r"x must be non-negative; got np.float64\(-3.0\) at \(1,\)"):
        fn(np.array([1.0, -3.0]))
    s = pt.dscalar("s")
    with pytest.raises(ValueError, match="s must be small; got"):
        check_values(s, pt.lt(s, 1), "s must be small").eval({s: 5.0})
    with pytest.raises(TypeError, match="condition must be a bool"):
        CheckValues("m")(x, x)


def test_check_values_on_constants_fails_at_build_time():
    with pytest.raises(ValueError, match="positive please"):
        check_values(pt.constant([1.0, -1.0]), pt.gt(pt.constant([1.0, -1.0]), 0), "positive please")
    c = pt.constant([1.0, 2.0])
    assert check_values(c, pt.gt(c, 0), "never") is c


def test_check_values_grad_shape_pushforward_batch():
    x = pt.dvector("x")
    y = CheckValues("bad")(x, pt.ge(x, 0))
    check_grad(lambda x: CheckValues("bad")(x, pt.ge(x, 0)) ** 2, [(x, [1.0, 2.0, 3.0])])
    assert_infer_shape(y, {x: np.ones(4)})
    _check_pushforward(y, [x], [np.array([1.0, 2.0])], [np.array([0.5, -1.0]), None])
    xs = pt.dmatrix("xs")
    (yb,) = batch_graph([y], {x: xs})
    np.testing.assert_array_equal(ev(yb, {xs: np.ones((2, 3))}), np.ones((2, 3)))
    with pytest.raises(ValueError, match="bad"):
        ev(yb, {xs: -np.ones((2, 3))})


# --- searchsorted --------------------------------------------------------------------------


@pytest.mark.parametrize("side", ["left", "right"])
@pytest.mark.parametrize("vshape", [(), (5,), (2, 3), (0,)])
@pytest.mark.parametrize("dtype", ["float64", "float32", "int32"])
def test_searchsorted_matches_numpy(side, vshape, dtype):
    x = pt.vector("x", dtype=dtype)
    v = pt.tensor("v", dtype=dtype, shape=(None,) * len(vshape))
    X = np.sort(RNG.integers(-5, 5, size=8)).astype(dtype)  # ties: left and right differ
    V = RNG.integers(-6, 6, size=vshape).astype(dtype)
    out = pt.searchsorted(x, v, side=side)
    assert out.type.dtype == "int64" and out.type.ndim == len(vshape)
    got = ev(out, {x: X, v: V})
    np.testing.assert_array_equal(got, np.searchsorted(X, V, side=side))
    assert got.dtype == np.int64


def test_searchsorted_sorter_shape_and_errors():
    x, v, s = pt.dvector("x"), pt.dvector("v"), pt.lvector("s")
    X = RNG.normal(size=6)
    V = RNG.normal(size=4)
    out = pt.searchsorted(x, v, sorter=s)
    np.testing.assert_array_equal(
        ev(out, {x: X, v: V, s: np.argsort(X)}), np.searchsorted(X, V, sorter=np.argsort(X))
    )
    assert_infer_shape(out, {x: X, v: V, s: np.argsort(X)})
    assert pt.searchsorted(x, pt.tensor(dtype="float64", shape=(2, 3))).type.shape == (2, 3)
    fn = function([x, v, s], out)
    with pytest.raises(ValueError, match="sorter has length 2, x has length 6"):
        fn(X, V, np.array([0, 1]))
    with pytest.raises(ValueError, match="sorter holds an index out of range"):
        fn(X, V, np.array([0, 1, 2, 3, 4, 9]))
    with pytest.raises(TypeError, match="x must be a vector"):
        pt.searchsorted(pt.dmatrix(), v)
    with pytest.raises(TypeError, match="sorter must be an integer vector"):
        pt.searchsorted(x, v, sorter=pt.dvector())
    with pytest.raises(ValueError, match="side must be 'left' or 'right'"):
        pt.searchsorted(x, v, side="middle")


def test_searchsorted_grad_is_zero_and_sorter_disconnected():
    x, v, s = pt.dvector("x"), pt.dvector("v"), pt.lvector("s")
    out = pt.searchsorted(x, v, sorter=s)
    gx, gv = grad(pt.sum(out * 1.0), [x, v])
    fn = function([x, v, s], [gx, gv], on_unused_input="ignore")
    got_x, got_v = fn(np.array([0.0, 1.0, 2.0]), np.array([0.5, 3.0]), np.array([0, 1, 2]))
    np.testing.assert_array_equal(got_x, np.zeros(3))
    np.testing.assert_array_equal(got_v, np.zeros(2))
    assert out.owner.op.connection_pattern(out.owner) == [[True], [True], [False]]
    tangents = [pt.constant(np.ones(3)), pt.constant(np.ones(2)), disconnected_type()]
    (jvp,) = out.owner.op.pushforward(out.owner.inputs, out.owner.outputs, tangents)
    assert isinstance(jvp.type, DisconnectedType)  # integer positions do not move
    assert str(SearchsortedOp("right")) == "SearchsortedOp{side=right}"


def test_searchsorted_batching():
    x, v = pt.dvector("x"), pt.dvector("v")
    X = np.array([0.0, 1.0, 2.0, 3.0])
    out = pt.searchsorted(x, v)
    vs = pt.dmatrix("vs")
    (ob,) = batch_graph([out], {v: vs})
    assert isinstance(ob.owner.op, SearchsortedOp)
    Vs = RNG.normal(size=(3, 4)) * 2
    np.testing.assert_array_equal(ev(ob, {x: X, vs: Vs}), np.searchsorted(X, Vs))
    xs = pt.dmatrix("xs")
    (ox,) = batch_graph([out], {x: xs})
    assert isinstance(ox.owner.op, Batched)  # a batch of sorted vectors is looped over
    Xs = np.sort(RNG.normal(size=(3, 4)), axis=1)
    V = RNG.normal(size=4)
    np.testing.assert_array_equal(ev(ox, {xs: Xs, v: V}), [np.searchsorted(r, V) for r in Xs])


# --- unique --------------------------------------------------------------------------------

FLAGS = [
    (False, False, False),
    (True, False, False),
    (False, True, False),
    (False, False, True),
    (True, True, True),
]


def _np_unique(X, flags, axis):
    res = np.unique(X, return_index=flags[0], return_inverse=flags[1], return_counts=flags[2], axis=axis)
    res = list(res) if isinstance(res, tuple) else [res]
    if flags[1] and axis is None:
        k = 1 + flags[0]
        res[k] = res[k].reshape(-1)  # PyTensor's layout: the inverse over the flattened input
    return res


@pytest.mark.parametrize("flags", FLAGS)
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
@pytest.mark.parametrize("dtype", ["int32", "float64"])
def test_unique_matches_numpy(flags, axis, dtype):
    x = pt.matrix("x", dtype=dtype)
    X = RNG.integers(0, 3, size=(4, 3)).astype(dtype)
    X[2] = X[0]  # a repeated row
    X[:, 2] = X[:, 1]  # and a repeated column
    outs = pt.unique(x, *flags, axis=axis)
    outs = outs if isinstance(outs, list) else [outs]
    expected = _np_unique(X, flags, axis)
    assert len(outs) == len(expected)
    for o, e in zip(outs, expected):
        got = ev(o, {x: X})
        assert got.dtype == e.dtype
        np.testing.assert_array_equal(got, e)
        assert_infer_shape(o, {x: X})


def test_unique_types_nan_bool_empty_and_0d():
    x = pt.tensor("x", dtype="float64", shape=(2, 3))
    u, idx, inv, cnt = pt.unique(x, True, True, True)
    assert [o.type.shape for o in (u, idx, inv, cnt)] == [(None,), (None,), (6,), (None,)]
    assert [o.type.dtype for o in (idx, inv, cnt)] == ["int64"] * 3
    rows, inv0 = pt.unique(x, return_inverse=True, axis=0)
    assert rows.type.shape == (None, 3) and inv0.type.shape == (2,)
    v = pt.dvector("v")
    np.testing.assert_array_equal(ev(pt.unique(v), {v: np.array([np.nan, 1.0, np.nan])}), [1.0, np.nan])
    b = pt.vector("b", dtype="bool")
    np.testing.assert_array_equal(ev(pt.unique(b), {b: np.array([True, False, True])}), [False, True])
    assert ev(pt.unique(v), {v: np.zeros(0)}).shape == (0,)
    s = pt.lscalar("s")
    np.testing.assert_array_equal(ev(pt.unique(s), {s: 4}), [4])
    with pytest.raises(ValueError, match="out of bounds"):
        pt.unique(x, axis=2)
    with pytest.raises(TypeError, match="axis must be None or an int"):
        Unique(axis=1.5)
    assert str(Unique(True, axis=0)) == "Unique{return_index, axis=0}"


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_unique_grad_goes_to_first_occurrences(dtype):
    x = pt.vector("x", dtype=dtype)
    check_grad(lambda x: pt.unique(x) * pt.arange(1, 6), [(x, [3.0, -1.0, 2.0, 0.5, 7.0])])
    m = pt.matrix("m", dtype=dtype)
    check_grad(lambda m: pt.unique(m, axis=0) ** 2, [(m, [[1.0, 2.0], [0.5, 3.0], [2.0, -1.0]])])
    check_grad(lambda m: pt.unique(m, axis=1) ** 2, [(m, [[1.0, 2.0], [0.5, 3.0], [2.0, -1.0]])])
    # with ties, the gradient lands on the first copy only
    g = grad(pt.sum(pt.unique(x) * pt.arange(1, 3)), x)
    np.testing.assert_array_equal(ev(g, {x: np.array([5.0, 2.0, 5.0], dtype=dtype)}), [2.0, 1.0, 0.0])
    i = pt.lvector("i")
    gi = grad(pt.sum(pt.unique(i, return_counts=True)[1] * 1.0), i)
    np.testing.assert_array_equal(ev(gi, {i: np.array([1, 1])}), [0.0, 0.0])


def test_unique_pushforward():
    x = pt.dvector("x")
    X = np.array([3.0, -1.0, 2.0, 0.5])  # distinct: ties are where unique is not differentiable
    u = pt.unique(x)
    _check_pushforward(u, [x], [X], [np.array([0.1, 0.2, 0.3, 0.4])])
    tie = pt.unique(x).owner.op.pushforward([x], [u], [pt.constant(np.array([0.1, 0.2, 0.3, 0.4]))])[0]
    np.testing.assert_allclose(ev(tie, {x: np.array([3.0, -1.0, 3.0, 0.5])}), [0.2, 0.4, 0.1])
    m = pt.dmatrix("m")
    M = np.array([[1.0, 2.0], [0.5, 3.0], [1.5, 2.0]])
    rows = pt.unique(m, axis=0)
    _check_pushforward(rows, [m], [M], [RNG.normal(size=(3, 2))])


# --- bincount ------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["int8", "int64", "uint16", "bool"])
@pytest.mark.parametrize("minlength", [None, 0, 9])
def test_bincount_counts(dtype, minlength):
    x = pt.vector("x", dtype=dtype)
    X = RNG.integers(0, 2 if dtype == "bool" else 6, size=20).astype(dtype)
    out = pt.bincount(x, minlength=minlength)
    assert out.type.dtype == "int64"
    np.testing.assert_array_equal(ev(out, {x: X}), np.bincount(X, minlength=minlength or 0))
    assert_infer_shape(out, {x: X})
    empty = np.zeros(0, dtype=dtype)
    np.testing.assert_array_equal(ev(out, {x: empty}), np.bincount(empty, minlength=minlength or 0))
    assert_infer_shape(out, {x: empty})


@pytest.mark.parametrize("wdtype", ["float64", "float32", "int32", "bool"])
def test_bincount_weights_and_symbolic_minlength(wdtype):
    x, w, n = pt.lvector("x"), pt.vector("w", dtype=wdtype), pt.lscalar("n")
    X = RNG.integers(0, 5, size=12)
    W = RNG.normal(size=12).astype(wdtype) if wdtype != "bool" else RNG.integers(0, 2, size=12).astype(bool)
    out = pt.bincount(x, weights=w, minlength=n)
    assert out.type.dtype == ("int64" if wdtype == "bool" else wdtype)
    expected = np.bincount(X, W, minlength=8).astype(out.type.dtype)
    np.testing.assert_allclose(ev(out, {x: X, w: W, n: 8}), expected, rtol=1e-6)
    assert_infer_shape(out, {x: X, w: W, n: 3})


def test_bincount_errors():
    x, w = pt.lvector("x"), pt.dvector("w")
    with pytest.raises(TypeError, match="x must be a vector of integers"):
        pt.bincount(pt.dvector())
    with pytest.raises(TypeError, match="x must be a vector of integers"):
        pt.bincount(pt.lmatrix())
    with pytest.raises(TypeError, match="weights must be a vector of real"):
        pt.bincount(x, weights=pt.zvector())
    with pytest.raises(ValueError, match="minlength must not be negative"):
        pt.bincount(x, minlength=-1)
    with pytest.raises(TypeError, match="minlength must be an integer scalar"):
        pt.bincount(x, minlength=2.5)
    fn = function([x, w], pt.bincount(x, w))
    with pytest.raises(ValueError, match="x must be non-negative; got -2 at index 1"):
        fn(np.array([0, -2, 1]), np.ones(3))
    with pytest.raises(ValueError, match="weights have length 2, x has length 3"):
        fn(np.array([0, 2, 1]), np.ones(2))
    n = pt.lscalar("n")
    with pytest.raises(ValueError, match="minlength must not be negative, got -3"):
        pt.bincount(x, minlength=n).eval({x: np.array([1]), n: -3})


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_bincount_grad_and_pushforward(dtype):
    x, w = pt.lvector("x"), pt.vector("w", dtype=dtype)
    X = np.array([2, 0, 2, 3, 0])
    check_grad(lambda x, w: pt.bincount(x, w, minlength=6), [(x, X), (w, RNG.normal(size=5))], wrt=[1])
    out = pt.bincount(x, w)
    assert out.owner.op.connection_pattern(out.owner) == [[False], [False], [True]]
    if dtype == "float64":
        _check_pushforward(out, [x, w], [X, RNG.normal(size=5)], [None, None, RNG.normal(size=5)])
    ints = pt.bincount(x, pt.lvector("iw"))
    (gz,) = grad(pt.sum(ints * 1.0), [ints.owner.inputs[2]])
    assert ev(gz, {ints.owner.inputs[2]: np.ones(5, dtype="int64")}).tolist() == [0.0] * 5
    assert isinstance(out.owner.op, Bincount)


def test_bincount_batching():
    x, w = pt.lvector("x"), pt.dvector("w")
    out = pt.bincount(x, w, minlength=2)
    ws = pt.dmatrix("ws")
    (ob,) = batch_graph([out], {w: ws})
    assert not isinstance(ob.owner.op, Batched)
    X, Ws = np.array([3, 0, 3, 1]), RNG.normal(size=(3, 4))
    np.testing.assert_allclose(ev(ob, {x: X, ws: Ws}), [np.bincount(X, r, minlength=2) for r in Ws])
    np.testing.assert_allclose(
        ev(ob, {x: np.zeros(0, dtype="int64"), ws: np.zeros((2, 0))}), np.zeros((2, 2))
    )
    xs = pt.lmatrix("xs")
    (ox,) = batch_graph([pt.bincount(x, minlength=5)], {x: xs})
    assert isinstance(ox.owner.op, Batched)
    Xs = RNG.integers(0, 5, size=(2, 6))
    np.testing.assert_array_equal(ev(ox, {xs: Xs}), [np.bincount(r, minlength=5) for r in Xs])


# --- diff, compress ------------------------------------------------------------------------


@pytest.mark.parametrize("n", [0, 1, 2, 4])
@pytest.mark.parametrize("axis", [0, -1])
@pytest.mark.parametrize("dtype", ["float64", "int16", "bool"])
def test_diff(n, axis, dtype):
    x = pt.matrix("x", dtype=dtype)
    X = RNG.integers(-3, 3, size=(4, 5)).astype(dtype)
    out = pt.diff(x, n=n, axis=axis)
    got = ev(out, {x: X})
    expected = np.diff(X, n=n, axis=axis)
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)


def test_diff_static_shape_errors_grad():
    x = pt.tensor("x", dtype="float64", shape=(3, 6))
    assert pt.diff(x, n=2).type.shape == (3, 4)
    with pytest.raises(ValueError, match="order n must be a non-negative int"):
        pt.diff(x, n=-1)
    with pytest.raises(ValueError, match="at least one dimensional"):
        pt.diff(pt.dscalar())
    v = pt.dvector("v")
    check_grad(lambda v: pt.diff(v, n=2), [(v, RNG.normal(size=6))])


@pytest.mark.parametrize("axis", [None, 0, 1])
def test_compress(axis):
    x, c = pt.dmatrix("x"), pt.vector("c", dtype="bool")
    X = RNG.normal(size=(3, 4))
    C = np.array([True, False, True])  # shorter than some axes: the rest is left out
    out = pt.compress(c, x, axis=axis)
    np.testing.assert_array_equal(ev(out, {x: X, c: C}), np.compress(C, X, axis=axis))
    i = pt.lvector("i")
    np.testing.assert_array_equal(
        ev(pt.compress(i, x, axis=axis), {x: X, i: np.array([0, 2, 1])}), np.compress([0, 2, 1], X, axis=axis)
    )
    with pytest.raises(ValueError, match="condition must be a vector"):
        pt.compress(pt.bmatrix(), x)
    check_grad(lambda x: pt.compress([True, False, True], x, axis=axis), [(x, X)])


# --- bartlett, logspace, geomspace ---------------------------------------------------------


@pytest.mark.parametrize("M", [-2, 0, 1, 2, 5, 6])
def test_bartlett(M):
    m = pt.lscalar("m")
    got = ev(pt.bartlett(m), {m: M})
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, np.bartlett(M), atol=1e-15)
    np.testing.assert_allclose(ev(pt.bartlett(M)), np.bartlett(M), atol=1e-15)


def test_bartlett_errors():
    with pytest.raises(TypeError, match="M must be an integer scalar"):
        pt.bartlett(pt.dscalar())
    with pytest.raises(TypeError, match="M must be an integer scalar"):
        pt.bartlett(pt.lvector())


@pytest.mark.parametrize("endpoint", [True, False])
@pytest.mark.parametrize("num", [0, 1, 2, 7])
def test_logspace_geomspace_scalars(endpoint, num):
    got = ev(pt.logspace(-1.0, 2.5, num, endpoint=endpoint, dtype="float64"))
    np.testing.assert_allclose(got, np.logspace(-1.0, 2.5, num, endpoint=endpoint), rtol=1e-13)
    got = ev(pt.logspace(0.0, 3.0, num, base=2.0, endpoint=endpoint, dtype="float64"))
    np.testing.assert_allclose(got, np.logspace(0.0, 3.0, num, base=2.0, endpoint=endpoint), rtol=1e-13)
    for a, b in ((1.0, 1000.0), (-2.0, -512.0), (5.0, 0.1)):
        got = ev(pt.geomspace(a, b, num, endpoint=endpoint, dtype="float64"))
        np.testing.assert_allclose(got, np.geomspace(a, b, num, endpoint=endpoint), rtol=1e-13)


def test_logspace_geomspace_arrays_axes_dtypes():
    a, b = pt.dvector("a"), pt.dvector("b")
    A, B = np.array([1.0, 2.0, -3.0]), np.array([100.0, 5.0, -0.5])
    for axis in (0, 1, -1):
        got = ev(pt.geomspace(a, b, 5, axis=axis, dtype="float64"), {a: A, b: B})
        np.testing.assert_allclose(got, np.geomspace(A, B, 5, axis=axis), rtol=1e-13)
        base = np.array([2.0, 10.0, 3.0])
        got = ev(pt.logspace(a, b / 50, 4, base=base, axis=axis, dtype="float64"), {a: A, b: B})
        np.testing.assert_allclose(got, np.logspace(A, B / 50, 4, base=base, axis=axis), rtol=1e-13)
    np.testing.assert_array_equal(
        ev(pt.logspace(0, 3, 4, dtype="int64")), np.logspace(0, 3, 4, dtype="int64")
    )
    np.testing.assert_array_equal(
        ev(pt.geomspace(1, 256, 9, dtype="int32")), np.geomspace(1, 256, 9, dtype="int32")
    )
    assert pt.logspace(0, 1, 3).type.dtype == arignote.config.floatX
    assert pt.geomspace(1, 10, 4).type.shape == (4,)


def test_space_old_names_and_errors():
    np.testing.assert_allclose(ev(pt.logspace(0.0, end=2.0, steps=3, dtype="float64")), [1.0, 10.0, 100.0])
    np.testing.assert_allclose(ev(pt.geomspace(1.0, end=4.0, steps=3, dtype="float64")), [1.0, 2.0, 4.0])
    with pytest.raises(TypeError, match="not both"):
        pt.logspace(0.0, 1.0, end=2.0)
    with pytest.raises(TypeError, match="missing the stop"):
        pt.geomspace(1.0)
    with pytest.raises(ValueError, match="cannot include 0"):
        pt.geomspace(0.0, 10.0)


def test_geomspace_grad():
    a = pt.dscalar("a")
    check_grad(lambda a: pt.geomspace(a, 8.0, 4, dtype="float64") * 1.0, [(a, 2.0)])
