"""RavelMultiIndex, UnravelIndex and the triangle index helpers against NumPy: values,
dtypes, static shapes, infer_shape, modes and orders, disconnected gradients, batching
and errors."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import arignote.tensor as pt
from arignote import function
from arignote.gradient import DisconnectedInputError, grad
from arignote.graph.replace import batch_graph
from arignote.graph.traversal import apply_ancestors
from arignote.tensor.batching import Batched
from arignote.tensor.index_utils import RavelMultiIndex, UnravelIndex
from tests.tensor.utils import assert_infer_shape

INT_DTYPES = ["int64", "int32", "int8", "uint16"]


# --- unravel_index ---------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", INT_DTYPES)
@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("ind_shape", [(), (4,), (2, 3), (0,)])
def test_unravel_index_matches_numpy(dtype, order, ind_shape):
    dims = (3, 4, 5)
    iv = np.random.default_rng(0).integers(0, 60, size=ind_shape).astype(dtype)
    i = pt.tensor("i", dtype=dtype, shape=(None,) * len(ind_shape))
    outs = pt.unravel_index(i, dims, order=order)
    expected = np.unravel_index(iv, dims, order=order)
    assert len(outs) == 3
    got = function([i], list(outs))(iv)
    for o, g, e in zip(outs, got, expected):
        assert o.type.dtype == "int64" and g.dtype == np.int64
        np.testing.assert_array_equal(g, e)
    assert_infer_shape(outs[1], {i: iv})
    static = pt.tensor("s", dtype=dtype, shape=ind_shape)
    assert all(o.type.shape == ind_shape for o in pt.unravel_index(static, dims))


def test_unravel_index_symbolic_dims():
    i = pt.lvector("i")
    n = pt.lscalar("n")
    rows, cols = pt.unravel_index(i, (n, 4))
    f = function([i, n], [rows, cols])
    np.testing.assert_array_equal(f(np.array([5, 11]), 3), np.unravel_index([5, 11], (3, 4)))
    d = pt.tensor("d", dtype="int64", shape=(2,))
    got = function([i, d], list(pt.unravel_index(i, d)))(np.array([5]), np.array([2, 3]))
    np.testing.assert_array_equal(got, np.unravel_index([5], (2, 3)))


def test_unravel_index_errors():
    i = pt.lvector("i")
    with pytest.raises(ValueError, match="out of bounds"):
        pt.unravel_index(i, (3, 4))[0].eval({i: np.array([12])})
    with pytest.raises(TypeError, match="indices must be an integer tensor"):
        pt.unravel_index(pt.dvector("v"), (3, 4))
    with pytest.raises(ValueError, match="not known statically"):
        pt.unravel_index(i, pt.lvector("d"))
    with pytest.raises(TypeError, match="dims entry 0 must be an integer tensor"):
        pt.unravel_index(i, (2.0, 3))
    with pytest.raises(ValueError, match="order must be 'C' or 'F'"):
        pt.unravel_index(i, (3, 4), order="K")
    assert str(UnravelIndex("F")) == "UnravelIndex{order='F'}"


# --- ravel_multi_index -----------------------------------------------------------------------


@pytest.mark.parametrize("dtype", INT_DTYPES)
@pytest.mark.parametrize("order", ["C", "F"])
def test_ravel_multi_index_matches_numpy(dtype, order):
    rng = np.random.default_rng(1)
    dims = (3, 4, 5)
    idx = [rng.integers(0, n, size=(2, 3)).astype(dtype) for n in dims]
    vars_ = [pt.tensor(f"i{k}", dtype=dtype, shape=(None, None)) for k in range(3)]
    out = pt.ravel_multi_index(vars_, dims, order=order)
    got = function(vars_, out)(*idx)
    expected = np.ravel_multi_index(idx, dims, order=order)
    assert out.type.dtype == "int64" and got.dtype == np.int64
    np.testing.assert_array_equal(got, expected)
    assert_infer_shape(out, dict(zip(vars_, idx)))


@pytest.mark.parametrize("mode", ["wrap", "clip", ("clip", "wrap")])
def test_ravel_multi_index_modes(mode):
    a, b = pt.lvector("a"), pt.lvector("b")
    av, bv = np.array([5, -1, 2]), np.array([-7, 9, 3])
    got = pt.ravel_multi_index((a, b), (3, 4), mode=mode).eval({a: av, b: bv})
    np.testing.assert_array_equal(got, np.ravel_multi_index((av, bv), (3, 4), mode=mode))


def test_ravel_multi_index_broadcasts_like_numpy():
    a = pt.tensor("a", dtype="int64", shape=(None, 1))
    b = pt.tensor("b", dtype="int64", shape=(None,))
    c = pt.lscalar("c")
    av, bv, cv = np.array([[0], [2]]), np.array([1, 3, 0]), 1
    out = pt.ravel_multi_index((a, b, c), (3, 4, 2))
    assert out.type.ndim == 2
    np.testing.assert_array_equal(
        out.eval({a: av, b: bv, c: cv}), np.ravel_multi_index((av, bv, cv), (3, 4, 2))
    )
    assert_infer_shape(out, {a: av, b: bv, c: cv})
    s = pt.tensor("s", dtype="int64", shape=(2, 1))
    t = pt.tensor("t", dtype="int64", shape=(3,))
    assert pt.ravel_multi_index((s, t), (3, 4)).type.shape == (2, 3)
    assert pt.ravel_multi_index((pt.lscalar("x"), pt.lscalar("y")), (3, 4)).type.shape == ()
    # a length not known statically may be 1 at run time: NumPy broadcasts it
    u = pt.lvector("u")
    got = pt.ravel_multi_index((u, t), (3, 4)).eval({u: np.array([2]), t: np.array([0, 1, 2])})
    np.testing.assert_array_equal(got, [8, 9, 10])


def test_ravel_multi_index_errors():
    a, b = pt.lvector("a"), pt.lvector("b")
    with pytest.raises(ValueError, match="invalid entry in coordinates array"):
        pt.ravel_multi_index((a, b), (3, 4)).eval({a: np.array([5]), b: np.array([0])})
    with pytest.raises(TypeError, match="multi_index must be a tuple or list"):
        pt.ravel_multi_index(pt.lmatrix("m"), (3, 4))
    with pytest.raises(TypeError, match="index 1 must be an integer tensor"):
        pt.ravel_multi_index((a, pt.dvector("v")), (3, 4))
    with pytest.raises(ValueError, match="dims has 3 entries but 2 index arrays"):
        pt.ravel_multi_index((a, b), (3, 4, 5))
    with pytest.raises(ValueError, match="mode must be one of"):
        pt.ravel_multi_index((a, b), (3, 4), mode="nope")
    with pytest.raises(ValueError, match="3 modes for 2 index arrays"):
        pt.ravel_multi_index((a, b), (3, 4), mode=("wrap",) * 3)
    with pytest.raises(ValueError, match="do not broadcast"):
        s = pt.tensor("s", dtype="int64", shape=(2,))
        pt.ravel_multi_index((s, pt.tensor("t", dtype="int64", shape=(3,))), (3, 4))
    d = pt.lvector("d")
    with pytest.raises(ValueError, match="has 3 entries for 2 index arrays"):
        pt.ravel_multi_index((a, b), d).eval({a: [0], b: [0], d: np.array([3, 4, 5])})
    assert str(RavelMultiIndex("clip", "F")) == "RavelMultiIndex{mode='clip', order='F'}"


def test_round_trip_and_module_path():
    extra_ops = importlib.import_module("arignote.tensor.extra_ops")
    assert extra_ops.ravel_multi_index is pt.ravel_multi_index and extra_ops.UnravelIndex is UnravelIndex
    i = pt.lvector("i")
    back = pt.ravel_multi_index(pt.unravel_index(i, (4, 5), order="F"), (4, 5), order="F")
    iv = np.array([0, 7, 19, 3])
    np.testing.assert_array_equal(back.eval({i: iv}), iv)


def test_indices_are_disconnected():
    i = pt.lvector("i")
    rows, cols = pt.unravel_index(i, (3, 4))
    with pytest.raises(DisconnectedInputError):
        grad(pt.sum(rows * 1.5), i)
    with pytest.raises(DisconnectedInputError):
        grad(pt.sum(pt.ravel_multi_index((i, i), (4, 4)) * 1.5), i)
    node = rows.owner
    assert node.op.connection_pattern(node) == [[False, False], [False, False]]


# --- batching --------------------------------------------------------------------------------


def _ops(v):
    return [n.op for n in apply_ancestors([v])]


def test_batch_rules():
    i = pt.lvector("i")
    j = pt.lscalar("j")
    rows = pt.lmatrix("rows")
    (cols,) = batch_graph([pt.unravel_index(i, (3, 4))[1]], {i: rows})
    assert not any(isinstance(op, Batched) for op in _ops(cols))
    rv = np.array([[0, 5, 11], [3, 4, 7]])
    np.testing.assert_array_equal(cols.eval({rows: rv}), np.unravel_index(rv, (3, 4))[1])
    # a batched 0-d entry next to an unbatched vector: the batch must not meet the core axis
    js = pt.lvector("js")
    (flat,) = batch_graph([pt.ravel_multi_index((j, i), (3, 4))], {j: js})
    assert not any(isinstance(op, Batched) for op in _ops(flat))
    jv, iv = np.array([0, 2]), np.array([1, 2, 3])
    got = function([js, i], flat)(jv, iv)
    np.testing.assert_array_equal(got, [np.ravel_multi_index((jj, iv), (3, 4)) for jj in jv])


# --- triangles -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "n, k, m", [(4, 0, None), (3, 1, 4), (3, -1, 2), (0, 0, None), (-2, 0, None), (3, 5, 3)]
)
def test_triangle_indices_match_numpy(n, k, m):
    for ours, theirs in ((pt.tril_indices, np.tril_indices), (pt.triu_indices, np.triu_indices)):
        got = [v.eval() for v in ours(n, k, m)]
        for g, e in zip(got, theirs(n, k, m)):
            assert g.dtype == np.int64
            np.testing.assert_array_equal(g, e)


def test_triangle_indices_symbolic_and_from():
    n, k = pt.lscalar("n"), pt.lscalar("k")
    f = function([n, k], [*pt.tril_indices(n, k), *pt.triu_indices(n, k, 3)])
    for nv, kv in ((3, 0), (4, -1), (2, 2)):
        got = f(nv, kv)
        for g, e in zip(got, [*np.tril_indices(nv, kv), *np.triu_indices(nv, kv, 3)]):
            np.testing.assert_array_equal(g, e)
    a = pt.dmatrix("a")
    av = np.zeros((3, 5))
    for ours, theirs in (
        (pt.tril_indices_from, np.tril_indices_from),
        (pt.triu_indices_from, np.triu_indices_from),
    ):
        for g, e in zip(function([a], list(ours(a, 1)))(av), theirs(av, 1)):
            np.testing.assert_array_equal(g, e)
    with pytest.raises(ValueError, match="must be 2-d"):
        pt.tril_indices_from(pt.dvector("v"))
    with pytest.raises(ValueError, match="must be 2-d"):
        pt.triu_indices_from(pt.dtensor3("t"))
    basic = importlib.import_module("arignote.tensor.basic")
    assert basic.triu_indices_from is pt.triu_indices_from
