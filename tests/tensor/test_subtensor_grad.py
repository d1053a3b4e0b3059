"""Gradients, pushforwards and batching rules of the Subtensor family: pullbacks against
central finite differences (float64 and float32), pushforwards against finite-difference
Jacobian-vector products, the vectorised jacobian without the Batched fallback."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import arignote.tensor as pt
from arignote import function
from arignote.gradient import DisconnectedInputError, grad, jacobian
from arignote.graph.replace import batch_graph
from arignote.graph.traversal import apply_ancestors, graph_inputs
from arignote.tensor.batching import Batched
from arignote.tensor.indexing.advanced import (
    AdvancedIncSubtensor,
    AdvancedIncSubtensor1,
    AdvancedSubtensor,
    AdvancedSubtensor1,
)
from arignote.tensor.indexing.increments import sum_increments
from arignote.tensor.subtensor import IncSubtensor, Subtensor
from tests.tensor.test_grad_ops import _check_pushforward, check_grad

DTYPES = ["float64", "float32"]


def rand(*shape: int, seed: int = 0, dtype: str = "float64") -> np.ndarray:
    return np.random.default_rng(seed).normal(size=shape).astype(dtype)


def mat(name: str, dtype: str, ndim: int = 2) -> Any:
    return pt.tensor(name, dtype=dtype, shape=(None,) * ndim)


# --- pullbacks -----------------------------------------------------------------------------

INDEXINGS = {
    "int": lambda x: x[1],
    "negative_int": lambda x: x[-1, 2],
    "slice": lambda x: x[1:3, ::2],
    "negative_step": lambda x: x[::-1, -1:0:-2],
    "new_axes": lambda x: x[None, 1:, None, 0],
    "ellipsis": lambda x: x[..., 1],
    "rows_with_repeats": lambda x: x[[0, 2, 0, 0]],
    "columns_with_repeats": lambda x: x[:, [3, 3, 1]],
    "pairs_with_repeats": lambda x: x[[0, 0, 2], [1, 1, 3]],
    "matrix_index": lambda x: x[np.array([[0, 1], [1, 1]])],
    "mask": lambda x: x[np.array([[True, False, True, False], [False, False, True, True], [True] * 4])],
    "row_mask": lambda x: x[np.array([True, False, True]), 1:],
    "separated": lambda x: x[[0, 2], ::-1][:, [1, 1]],
    "separated_by_slice": lambda x: x[None][[0], :, [3, 3]],
    "take_wrap": lambda x: pt.take(x, [[5, -1], [1, 1]], axis=1, mode="wrap"),
    "take_flat": lambda x: pt.take(x, [11, 0, 11]),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", sorted(INDEXINGS))
def test_indexing_grad(case: str, dtype: str) -> None:
    x = mat("x", dtype)
    xv = rand(3, 4, dtype=dtype)
    got = check_grad(INDEXINGS[case], [(x, xv)])
    if "repeats" in case:  # repeats accumulate
        assert np.abs(got[0]).max() > 0


def test_symbolic_index_grad() -> None:
    x = mat("x", "float64", 3)
    i, a, c = pt.lscalar("i"), pt.lscalar("a"), pt.lscalar("c")
    iv = pt.lvector("iv")
    m = pt.tensor("m", dtype="bool", shape=(None,))
    xv = rand(3, 4, 5)
    check_grad(lambda x, i, a, c: x[i, a::c], [(x, xv), (i, -1), (a, 3), (c, -2)], wrt=[0])
    check_grad(lambda x, iv, i: x[iv, :, i], [(x, xv), (iv, np.array([2, 0, 2])), (i, 1)], wrt=[0])
    check_grad(lambda x, m: x[:, m], [(x, xv), (m, np.array([True, False, False, True]))], wrt=[0])


INCS = {
    "basic_inc": lambda x, y: pt.inc_subtensor(x[1:, ::-2], y),
    "basic_set": lambda x, y: pt.set_subtensor(x[1:, ::-2], y),
    "int_inc": lambda x, y: pt.inc_subtensor(x[-1], y),
    "int_set": lambda x, y: pt.set_subtensor(x[-1], y),
    "rows_inc_repeats": lambda x, y: pt.inc_subtensor(x[[0, 2, 0]], y),
    "rows_set": lambda x, y: pt.set_subtensor(x[[2, 0]], y),
    "pairs_inc_repeats": lambda x, y: pt.inc_subtensor(x[[0, 0, 1], [3, 3, 2]], y),
    "pairs_set": lambda x, y: pt.set_subtensor(x[[0, 1], [3, 2]], y),
    "cols_inc": lambda x, y: pt.inc_subtensor(x[:, [1, 1]], y),
    "mask_set": lambda x, y: pt.set_subtensor(x[np.array([True, False, True])], y),
}
# y's shape per case (its broadcast version is tested separately)
INC_Y = {
    "basic_inc": (2, 2),
    "basic_set": (2, 2),
    "int_inc": (4,),
    "int_set": (4,),
    "rows_inc_repeats": (3, 4),
    "rows_set": (2, 4),
    "pairs_inc_repeats": (3,),
    "pairs_set": (2,),
    "cols_inc": (3, 2),
    "mask_set": (2, 4),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", sorted(INCS))
def test_inc_set_grad(case: str, dtype: str) -> None:
    x = mat("x", dtype)
    y = mat("y", dtype, len(INC_Y[case]))
    gx, gy = check_grad(
        INCS[case], [(x, rand(3, 4, dtype=dtype)), (y, rand(*INC_Y[case], seed=1, dtype=dtype))]
    )
    if "set" in case:  # the written part of x does not reach the output
        assert (gx == 0).any()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "build, y_shape",
    [
        (lambda x, y: pt.inc_subtensor(x[1:, ::2], y), (2,)),
        (lambda x, y: pt.set_subtensor(x[1:, ::2], y), (1, 2)),
        (lambda x, y: pt.inc_subtensor(x[:, 1], y), ()),
        (lambda x, y: pt.inc_subtensor(x[[0, 0]], y), (1,)),
        (lambda x, y: pt.set_subtensor(x[[2, 0]], y), (4,)),
        (lambda x, y: pt.inc_subtensor(x[:, [3, 3, 0]], y), (3, 1)),
        (lambda x, y: pt.inc_subtensor(x[[0, 1], [0, 1]], y), ()),
    ],
)
def test_broadcast_value_grad(build: Any, y_shape: tuple, dtype: str) -> None:
    """The gradient of a broadcast ``y`` sums over the dimensions it was broadcast along."""
    x = mat("x", dtype)
    y = pt.tensor("y", dtype=dtype, shape=y_shape)
    check_grad(build, [(x, rand(3, 4, dtype=dtype)), (y, rand(*y_shape, seed=3, dtype=dtype))])


def test_mixed_dtype_value_grad() -> None:
    x = mat("x", "float32")
    y = pt.dvector("y")
    out = pt.inc_subtensor(x[0], y)
    gy = grad(pt.sum(out * 3.0), y)
    assert gy.type.dtype == "float64"
    np.testing.assert_allclose(gy.eval({x: np.zeros((2, 3), "float32"), y: np.zeros(3)}), [3, 3, 3])


@pytest.mark.parametrize("dtype", DTYPES)
def test_reused_subexpression_grad(dtype: str) -> None:
    """Slices of one intermediate, in two places: every gradient term reaches ``x``."""

    def build(x: Any) -> Any:
        b = x[1:] + x[:-1]
        return b[::2] * b[1::2]

    x = mat("x", dtype, 1)
    check_grad(build, [(x, rand(9, dtype=dtype))])


# --- many reads at constant places: one increment --------------------------------------


def _one_increment(g: Any) -> Any:
    """The gradient's node, which must be one vectorized increment of zeros."""
    node = g.owner
    assert isinstance(node.op, AdvancedIncSubtensor1), node
    assert not [n for n in apply_ancestors([g]) if isinstance(n.op, IncSubtensor)]
    return node


@pytest.mark.parametrize("dtype", DTYPES)
def test_reads_at_many_constant_places_give_one_increment(dtype: str) -> None:
    x = mat("x", dtype, 1)
    places = [3, 0, -1, 3, 5, 2, 7, 1, 3, -4]  # negative and repeated places
    cost = sum(x[k] * float(i + 1) for i, k in enumerate(places))
    g = grad(cost, x)
    node = _one_increment(g)
    assert g.type == x.type
    assert sorted(node.inputs[2].data) == sorted(places)  # (in the order the pass met them)
    want = np.zeros(8, dtype)
    np.add.at(want, places, np.arange(1.0, len(places) + 1))
    np.testing.assert_array_equal(g.eval({x: rand(8, dtype=dtype)}), want)


def test_symbolic_terms_and_other_terms_are_kept() -> None:
    x = pt.dvector("x")
    w = pt.dscalar("w")
    cost = sum(x[k] * w ** (k + 1) for k in range(9)) + (x * x).sum()  # stacked values, one other term
    g = grad(cost, x)
    assert any(isinstance(n.op, AdvancedIncSubtensor1) for n in apply_ancestors([g]))
    assert not [n for n in apply_ancestors([g]) if isinstance(n.op, IncSubtensor)]
    xv, wv = rand(9), 0.7
    want = 2 * xv + wv ** np.arange(1.0, 10.0)
    np.testing.assert_allclose(function([x, w], g)(xv, wv), want, rtol=1e-14)


def test_few_reads_stay_a_sum_of_increments() -> None:
    x = pt.dvector("x")
    g = grad(x[0] * 2.0 + x[2] * 3.0 + x[0], x)  # fewer than POINTS_FROM terms: as written
    assert g.owner.op.scalar_op.__class__.__name__ == "Add"
    assert all(isinstance(i.owner.op, IncSubtensor) for i in g.owner.inputs)
    np.testing.assert_array_equal(g.eval({x: rand(3)}), [3.0, 0.0, 3.0])


def test_reused_reads_at_constant_places() -> None:
    """``b = sum of reads; c = b + b``: each read's term arrives twice."""
    x = pt.dvector("x")
    b = sum(x[k] * (k + 1.0) for k in range(10))
    c = b + b
    g = grad(c * c, x)
    xv = rand(10)
    bv = float(np.dot(xv, np.arange(1.0, 11.0)))
    np.testing.assert_allclose(g.eval({x: xv}), 8 * bv * np.arange(1.0, 11.0), rtol=1e-13)


def test_sum_increments_only_into_zeros() -> None:
    x = pt.dvector("x")
    into_x = [pt.inc_subtensor(x[k], 1.0) for k in range(8)]
    assert sum_increments(into_x) is None  # x is not zeros: the increments do not commute
    zeros = pt.zeros_like(x)
    total = sum_increments([pt.inc_subtensor(zeros[k % 3], 1.0) for k in range(8)])
    assert isinstance(total.owner.op, AdvancedIncSubtensor1)
    np.testing.assert_array_equal(total.eval({x: rand(4)}), [3.0, 3.0, 2.0, 0.0])


def test_indices_are_disconnected() -> None:
    x = pt.dmatrix("x")
    i = pt.lscalar("i")
    iv = pt.lvector("iv")
    for out, idx in [(x[i, 1:], i), (x[iv], iv), (x[:, iv], iv), (pt.inc_subtensor(x[i], 1.0), i)]:
        assert out.owner.op.connection_pattern(out.owner)[0] == [True]
        assert all(row == [False] for row in out.owner.op.connection_pattern(out.owner)[-1:])
        with pytest.raises(DisconnectedInputError):
            grad(pt.sum(out), idx)
        zero = grad(pt.sum(out), idx, disconnected_inputs="ignore")
        assert float(np.sum(zero.eval({idx: 0} if idx is i else {idx: np.array([0])}))) == 0.0


def test_integer_tensor_gradient_is_zero() -> None:
    x = pt.lmatrix("x")
    f = pt.dscalar("f")
    cost = pt.sum(x[0] * f) + pt.sum(pt.inc_subtensor(x[[1]], 2) * f)
    g = grad(cost, f)
    assert float(g.eval({x: np.ones((2, 2), "int64"), f: 1.0})) == 2.0 + 8.0


# --- pushforwards ----------------------------------------------------------------------------


def test_pushforwards() -> None:
    x = pt.dmatrix("x")
    y = pt.dmatrix("y")
    v = pt.dvector("v")
    xv, tx = rand(3, 4), rand(3, 4, seed=5)
    yv, ty = rand(2, 2, seed=6), rand(2, 2, seed=7)
    vv, tv = rand(4, seed=8), rand(4, seed=9)
    i = pt.lscalar("i")
    _check_pushforward(x[1:, ::-2], [x], [xv], [tx])
    _check_pushforward(x[i, ::-1], [x, i], [xv, 2], [tx, None])
    _check_pushforward(x[[0, 0, 2]], [x], [xv], [tx, None])
    _check_pushforward(x[[0, 2], 1:], [x], [xv], [tx, None])
    for op in (pt.inc_subtensor, pt.set_subtensor):
        out = op(x[1:, ::2], y)
        assert isinstance(out.owner.op, IncSubtensor)
        _check_pushforward(out, [x, y], [xv, yv], [tx, ty])
        _check_pushforward(out, [x, y], [xv, yv], [None, ty])
        _check_pushforward(out, [x, y], [xv, yv], [tx, None])
        out = op(x[[0, 0, 2]], v)
        assert isinstance(out.owner.op, AdvancedIncSubtensor1)
        _check_pushforward(out, [x, v], [xv, vv], [tx, tv, None])
        _check_pushforward(out, [x, v], [xv, vv], [None, tv, None])
        _check_pushforward(out, [x, v], [xv, vv], [tx, None, None])
        out = op(x[[0, 2], [1, 1]], v[:2])
        assert isinstance(out.owner.op, AdvancedIncSubtensor)
        _check_pushforward(out, [x, v], [xv, vv], [tx, tv[:2], None, None])
        _check_pushforward(out, [x, v], [xv, vv], [tx, None, None, None])
        _check_pushforward(out, [x, v], [xv, vv], [None, tv[:2], None, None])


# --- batching ------------------------------------------------------------------------------


def _nodes(v: Any) -> list:
    return list(apply_ancestors([v]))


def _rowwise(out: Any, x: Any, xs: Any, xsv: np.ndarray, givens: dict) -> None:
    """``vectorize_graph`` of ``out`` over rows ``xs`` of ``x``: no Batched node, and each
    row of the result equals ``out`` computed for that row."""
    (batched,) = batch_graph([out], {x: xs})
    assert not any(isinstance(n.op, Batched) for n in _nodes(batched)), [str(n.op) for n in _nodes(batched)]
    inputs = [xs, *givens]
    got = function(inputs, batched, on_unused_input="ignore")(xsv, *givens.values())
    single = function([x, *givens], out, on_unused_input="ignore")
    for r in range(xsv.shape[0]):
        np.testing.assert_allclose(got[r], single(xsv[r], *givens.values()))


BATCH_CASES = {
    "subtensor": lambda x, y, i: x[i, ::-2],
    "inc_subtensor_x": lambda x, y, i: pt.inc_subtensor(x[1:, i], y[0, :2]),
    "set_subtensor_y": lambda x, y, i: pt.set_subtensor(y[1:, i], x[0, :2]),
    "inc_broadcast_y": lambda x, y, i: pt.inc_subtensor(y[:, :2], x[0, 0]),
    "adv1": lambda x, y, i: x[[2, 0, 2]],
    "adv1_inc_x": lambda x, y, i: pt.inc_subtensor(x[[0, 0]], y[1]),
    "adv1_set_y": lambda x, y, i: pt.set_subtensor(y[[2, 0]], x[:2]),
    "adv": lambda x, y, i: x[:, [3, 1]],
    "adv_int_array": lambda x, y, i: x[1, [3, 0]],
    "adv_new_axis": lambda x, y, i: x[None, [0, 1], [2, 3]],
    "adv_separated_x": lambda x, y, i: x[[1, 0], None, [0, 3]],
    "adv_mask": lambda x, y, i: x[np.array([True, False, True])],
    "adv_inc_x": lambda x, y, i: pt.inc_subtensor(x[[0, 0], [1, 1]], y[0, :2]),
    "adv_set_y_separated": lambda x, y, i: pt.set_subtensor(y[[0, 1], None, [2, 3]], x[:2, :1]),
    "adv_inc_y_cols": lambda x, y, i: pt.inc_subtensor(y[:, [0, 0, 3]], x[:, :3]),
}


@pytest.mark.parametrize("case", sorted(BATCH_CASES))
def test_batch_rules(case: str) -> None:
    x = pt.dmatrix("x")
    y = pt.dmatrix("y")
    i = pt.lscalar("i")
    out = BATCH_CASES[case](x, y, i)
    others = {v: val for v, val in [(y, rand(3, 4, seed=2)), (i, 1)] if v in _inputs(out)}
    _rowwise(out, x, pt.tensor3("xs"), rand(3, 3, 4, seed=1), others)


def _inputs(v: Any) -> list:
    return [i for i in graph_inputs([v]) if i.owner is None and not hasattr(i, "data")]


def test_batched_indices_fall_back_or_vectorise() -> None:
    x = pt.dmatrix("x")
    iv = pt.lvector("iv")
    ivs = pt.lmatrix("ivs")
    (b,) = batch_graph([x[iv]], {iv: ivs})  # rows of indices into one x: vectorised
    assert not any(isinstance(n.op, Batched) for n in _nodes(b))
    xv = rand(4, 3)
    ivv = np.array([[0, 3], [1, 1]])
    np.testing.assert_array_equal(b.eval({x: xv, ivs: ivv}), xv[ivv])
    xs = pt.tensor3("xs")
    (b,) = batch_graph([x[iv]], {x: xs, iv: ivs})  # both batched
    xsv = rand(2, 4, 3)
    np.testing.assert_array_equal(b.eval({xs: xsv, ivs: ivv}), np.stack([xsv[k][ivv[k]] for k in range(2)]))
    (b,) = batch_graph([x[:, iv]], {iv: ivs})  # batched index of AdvancedSubtensor: the fallback
    assert any(isinstance(n.op, Batched) for n in _nodes(b))
    np.testing.assert_array_equal(b.eval({x: xv, ivs: ivv[:, :1]}), np.stack([xv[:, r] for r in ivv[:, :1]]))


@pytest.mark.parametrize(
    "build",
    [
        lambda x: x[::2] ** 2,
        lambda x: x[[0, 0, 3]] * x[1:4],
        lambda x: pt.set_subtensor(x[1:3], x[:2] ** 2),
        lambda x: pt.inc_subtensor(x[[1, 1]], x[-1]) * x,
        lambda x: x[x.shape[0] - 1 :: -2] * 3,
    ],
)
def test_jacobian_is_vectorised(build: Any) -> None:
    x = pt.dvector("x")
    out = build(x)
    j = jacobian(out, x)
    assert not any(isinstance(n.op, Batched) for n in _nodes(j))
    assert any(
        isinstance(n.op, (IncSubtensor, AdvancedIncSubtensor1, AdvancedIncSubtensor)) for n in _nodes(j)
    )
    xv = rand(5, seed=11)
    f = function([x], out)
    got = function([x], j)(xv)
    eps = 1e-6
    expected = np.stack(
        [(f(xv + eps * np.eye(5)[k]) - f(xv - eps * np.eye(5)[k])) / (2 * eps) for k in range(5)], axis=-1
    )
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-8)


def test_jacobian_of_matrix_indexing_is_vectorised() -> None:
    x = pt.dmatrix("x")
    out = x[[0, 1], [2, 2]] + x[1, ::-1][:2]
    j = jacobian(out, x)
    assert not any(isinstance(n.op, Batched) for n in _nodes(j))
    assert any(isinstance(n.op, (AdvancedSubtensor, Subtensor, AdvancedSubtensor1)) for n in _nodes(out))
    got = j.eval({x: rand(2, 3)})
    expected = np.zeros((2, 2, 3))
    expected[0, 0, 2] = expected[1, 1, 2] = 1
    expected[0, 1, 2] += 1
    expected[1, 1, 1] += 1
    np.testing.assert_array_equal(got, expected)


# --- writes to repeated positions: only the surviving write has a gradient -----------------

SET_WITH_REPEATS = {
    "rows_one_column": (lambda x, y: pt.set_subtensor(x[[1, 1, 2], 2], y), (3,)),
    "rows_matrix_y": (lambda x, y: pt.set_subtensor(x[[0, 2, 0]], y), (3, 4)),
    "pairs": (lambda x, y: pt.set_subtensor(x[[0, 2, 0], [1, 1, 1]], y), (3,)),
    "broadcast_y": (lambda x, y: pt.set_subtensor(x[[2, 2, 2]], y), (4,)),
    "inc_ignoring_duplicates": (
        lambda x, y: pt.inc_subtensor(x[[0, 1, 0], [3, 3, 3]], y, ignore_duplicates=True),
        (3,),
    ),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", list(SET_WITH_REPEATS))
def test_last_write_wins_gradient(case: str, dtype: str) -> None:
    build, y_shape = SET_WITH_REPEATS[case]
    x, y = mat("x", dtype), mat("y", dtype, len(y_shape))
    check_grad(build, [(x, rand(3, 4, seed=1, dtype=dtype)), (y, rand(*y_shape, seed=2, dtype=dtype))])


def test_overwritten_entries_of_y_get_zero_gradient() -> None:
    x, y = pt.dvector("x"), pt.dvector("y")
    out = pt.set_subtensor(x[[1, 1, 2]], y)
    gy = grad((out * np.array([1.0, 2.0, 3.0, 4.0])).sum(), y)
    np.testing.assert_array_equal(gy.eval({x: np.zeros(4), y: np.ones(3)}), [0.0, 2.0, 3.0])
