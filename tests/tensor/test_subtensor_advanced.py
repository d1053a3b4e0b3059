"""Integer-array and boolean-mask indexing, their inc/set forms and take: values, static
shapes and inferred shapes against NumPy, which Op is built, and the errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import arignote.tensor as pt
from arignote import function
from arignote.tensor.indexing.advanced import (
    AdvancedIncSubtensor,
    AdvancedIncSubtensor1,
    AdvancedSubtensor,
    AdvancedSubtensor1,
    advanced_inc_subtensor,
    advanced_inc_subtensor1,
    advanced_set_subtensor,
    advanced_subtensor,
)
from tests.tensor.utils import assert_infer_shape

XV = np.arange(4 * 5 * 6, dtype="float64").reshape(4, 5, 6)
MASK0 = XV[:, 0, 0] > 20
MASK01 = XV[:, :, 0] > 20
MASK12 = XV[0] % 4 == 1

ADVANCED_INDICES = [
    [0, 2],
    [-1, 0, -1],
    ([0, 0, 3], slice(None)),
    (slice(None), [1, -1]),
    ([0, 1], [2, 3]),
    ([0, 1], slice(None), [2, 3]),
    (0, slice(None), [0, 1]),
    (slice(None), 0, [0, 1]),
    (np.array([[0, 1], [2, 3]]),),
    (np.array([[0], [3]]), slice(1, None), np.array([1, 2, 5])),
    (MASK0,),
    (MASK01,),
    (slice(None), MASK12),
    (MASK0, 1, [1, 2, 3]),
    (MASK0, 1, [4]),
    (True,),
    (False,),
    (0, True),
    (0, True, [0, 1]),
    (None, [0, 1]),
    ([0, 1], None, [0, 1]),
    ([0, 1], None),
    (slice(None), [0], Ellipsis, [0]),
    (Ellipsis, [0], [0]),
    ([[0], [1]], slice(None), 0),
    (slice(None), [[0], [1]], 1),
    (slice(None), [[0], [1]], slice(1, None)),
    ([],),
    (np.array([], dtype="int32"), 0),
    (slice(None, None, -1), [4, 0], slice(None, None, 2)),
    ([1], Ellipsis),
    (np.uint8(1), np.array([4, 1], dtype="uint16")),
]


@pytest.mark.parametrize("index", ADVANCED_INDICES, ids=repr)
def test_advanced_index_values_and_static_shape(index: Any) -> None:
    expected = XV[index]
    xs = pt.tensor("xs", dtype="float64", shape=(4, 5, 6))
    xn = pt.tensor("xn", dtype="float64", shape=(None, None, None))
    for x in (xs, xn):
        out = x[index]
        assert isinstance(out.owner.op, (AdvancedSubtensor, AdvancedSubtensor1))
        got = out.eval({x: XV})
        assert got.shape == expected.shape
        np.testing.assert_array_equal(got, expected)
        assert out.type.ndim == expected.ndim
    assert xs[index].type.shape == expected.shape  # constant indices, static lengths: all static


def test_which_op() -> None:
    x = pt.dmatrix("x")
    iv = pt.lvector("iv")
    for out in (x[iv], x[iv, :], x[iv, ...], x[[1, 2]], x[np.array([1])]):
        assert isinstance(out.owner.op, AdvancedSubtensor1), out
    for out in (x[:, iv], x[iv, iv], x[pt.lmatrix("im")], x[x > 0], x[iv, 0], x[None, iv]):
        assert isinstance(out.owner.op, AdvancedSubtensor), out
    assert x[iv].owner.op == x[iv].owner.op
    assert x[:, iv].owner.op == x[:, iv].owner.op


def test_symbolic_index_tensors() -> None:
    x = pt.tensor3("x", dtype="float64")
    im = pt.lmatrix("im")
    iv = pt.ivector("iv")
    mask = pt.tensor("mask", dtype="bool", shape=(None, None))
    i = pt.lscalar("i")
    b = pt.lscalar("b")
    cases = [
        (x[im], {im: np.array([[0, 3], [1, 1]])}, lambda: XV[np.array([[0, 3], [1, 1]])]),
        (x[:, iv, i], {iv: np.array([4, 0], "int32"), i: -1}, lambda: XV[:, [4, 0], -1]),
        (x[iv, b:, iv], {iv: np.array([3, 1], "int32"), b: 2}, lambda: XV[[3, 1], 2:, [3, 1]]),
        (x[mask], {mask: MASK01}, lambda: XV[MASK01]),
        (x[1, mask], {mask: MASK12}, lambda: XV[1, MASK12]),
        (x[mask, iv], {mask: MASK01, iv: np.array([5], "int32")}, lambda: XV[MASK01, [5]]),
        (x[[0, 1], None, i:], {i: 1}, lambda: XV[[0, 1], None, 1:]),
    ]
    for out, vals, expected in cases:
        givens = {x: XV, **vals}
        got = function(list(givens), out)(*givens.values())
        np.testing.assert_array_equal(got, expected())
        assert_infer_shape(out, givens)


def test_advanced_subtensor1_infer_shape() -> None:
    x = pt.dmatrix("x")
    iv = pt.lvector("iv")
    assert_infer_shape(x[iv], {x: np.zeros((4, 3)), iv: np.array([0, 0, 3, 1, 2])})


def test_static_shapes() -> None:
    x = pt.tensor("x", dtype="float32", shape=(None, 3))
    iv = pt.tensor("iv", dtype="int64", shape=(5,))
    assert x[iv].type.shape == (5, 3)
    assert x[[0, 0]].type.shape == (2, 3)
    assert x[:, iv].type.shape == (None, 5)
    assert x[pt.lmatrix("m")].type.shape == (None, None, 3)
    assert x[x > 0].type.shape == (None,)
    assert x[:, np.array([True, False, True])].type.shape == (None, 2)
    assert x[np.array([[0], [1]]), [0, 1, 2]].type.shape == (2, 3)
    assert x[[0], None, iv].type.shape == (5, 1)


def test_advanced_helpers() -> None:
    x = pt.dmatrix("x")
    xv = np.arange(12.0).reshape(3, 4)
    out = advanced_subtensor(x, [0, 2])
    assert isinstance(out.owner.op, AdvancedSubtensor)
    np.testing.assert_array_equal(out.eval({x: xv}), xv[[0, 2]])
    got = advanced_inc_subtensor(x, 1.0, [0, 0], slice(None)).eval({x: xv})
    expected = xv.copy()
    np.add.at(expected, ([0, 0], slice(None)), 1.0)
    np.testing.assert_array_equal(got, expected)
    got = advanced_set_subtensor(x, -1.0, slice(None), [3]).eval({x: xv})
    expected = xv.copy()
    expected[:, [3]] = -1
    np.testing.assert_array_equal(got, expected)
    got = advanced_inc_subtensor1(x, np.ones(4), pt.constant(np.array([2, 2]))).eval({x: xv})
    expected = xv.copy()
    expected[2] += 2
    np.testing.assert_array_equal(got, expected)


# --- errors --------------------------------------------------------------------------------


def test_mask_of_the_wrong_shape() -> None:
    x = pt.tensor("x", dtype="float64", shape=(4, None))
    with pytest.raises(IndexError, match="boolean index did not match.*axis 0.*length 4.*length 3"):
        x[np.array([True, False, True])]
    m = pt.tensor("m", dtype="bool", shape=(None,))
    f = function([x, m], x[:, m])
    with pytest.raises(
        IndexError, match=r"AdvancedSubtensor\{:, mask\}: boolean index did not match.*shape \(4, 3\)"
    ):
        f(np.zeros((4, 3)), np.array([True, False]))


def test_out_of_bounds_arrays() -> None:
    x = pt.tensor("x", dtype="float64", shape=(3, 2))
    with pytest.raises(IndexError, match="index 3 is out of bounds for axis 0 with size 3"):
        x[[0, 3]]
    with pytest.raises(IndexError, match="index -3 is out of bounds for axis 1 with size 2"):
        x[:, [-3]]
    xd = pt.dmatrix("xd")
    iv = pt.lvector("iv")
    f = function([xd, iv], xd[iv])
    with pytest.raises(
        IndexError, match=r"AdvancedSubtensor1: index 5 is out of bounds for axis 0 with size 3"
    ):
        f(np.zeros((3, 2)), np.array([0, 5]))
    with pytest.raises(IndexError, match="index -4 is out of bounds for axis 0 with size 3"):
        f(np.zeros((3, 2)), np.array([-4]))
    g = function([xd, iv], xd[1:, iv])
    with pytest.raises(IndexError, match="out of bounds for axis 1 with size 2"):
        g(np.zeros((3, 2)), np.array([2]))
    h = function([xd, iv], pt.inc_subtensor(xd[iv], 1.0))
    with pytest.raises(IndexError, match="AdvancedIncSubtensor1: index 3 is out of bounds"):
        h(np.zeros((3, 2)), np.array([3]))


def test_index_arrays_that_do_not_broadcast() -> None:
    x = pt.dmatrix("x")
    with pytest.raises(IndexError, match=r"could not be broadcast together with shapes \(2,\) \(3,\)"):
        x[[0, 1], [0, 1, 2]]
    a, b = pt.lvector("a"), pt.lvector("b")
    f = function([x, a, b], x[a, b])
    with pytest.raises(IndexError, match="broadcast"):
        f(np.zeros((3, 3)), np.array([0, 1]), np.array([0, 1, 2]))


def test_bad_index_arrays() -> None:
    x = pt.dmatrix("x")
    with pytest.raises(IndexError, match="array of dtype float64"):
        x[np.array([0.0, 1.0])]
    with pytest.raises(IndexError, match="dtype float64"):
        x[pt.dvector("f")]
    with pytest.raises(TypeError, match="ambiguous"):
        x[[True, 0]]
    with pytest.raises(TypeError, match="integer vector"):
        AdvancedSubtensor1()(x, pt.lmatrix())
    with pytest.raises(IndexError, match="too many indices"):
        x[[0], [0], [0]]
    with pytest.raises(IndexError, match="too many indices"):
        x[np.ones((2, 2, 2), bool)]


def test_bad_op_construction() -> None:
    """The idx_list of the advanced Ops is checked like the basic one."""
    with pytest.raises(TypeError, match=r"slice .* must have int, 0-d integer TensorType or None parts"):
        AdvancedSubtensor((slice(pt.dscalar().type, None), pt.lvector().type))
    with pytest.raises(TypeError, match="must have int"):
        AdvancedIncSubtensor((slice(True, None), pt.lvector().type))
    with pytest.raises(ValueError, match="slice step cannot be zero"):
        AdvancedSubtensor((slice(None, None, 0), pt.lvector().type))
    with pytest.raises(TypeError, match="index entries must be integer or boolean"):
        AdvancedSubtensor((pt.dvector().type,))
    with pytest.raises(TypeError, match=r"invalid index entry 1\.5: expected an int, a slice"):
        AdvancedSubtensor((1.5,))
    with pytest.raises(IndexError, match="single ellipsis"):
        AdvancedSubtensor((Ellipsis, Ellipsis))
    x = pt.dmatrix("x")
    with pytest.raises(IndexError, match=r"AdvancedSubtensor\{idx, idx, idx\}: too many indices for x"):
        AdvancedSubtensor((pt.lvector().type,) * 3)(x, *(pt.lvector() for _ in range(3)))
    with pytest.raises(TypeError, match="index input 0.*expects a 1-d int64"):
        AdvancedSubtensor((pt.lvector().type,))(x, pt.ivector())
    # props with an idx_list: equal Ops hash alike, and every prop counts
    op = AdvancedIncSubtensor((slice(1, None), pt.lvector().type), ignore_duplicates=True)
    same = AdvancedIncSubtensor((slice(1, None), pt.lvector().type), ignore_duplicates=True)
    assert op == same and hash(op) == hash(same)
    assert op != AdvancedIncSubtensor((slice(1, None), pt.lvector().type))


# --- inc / set ----------------------------------------------------------------------------


INC_CASES = [
    ([0, 0, 2], (6,)),
    ([0, 0, 2], (3, 6)),
    (([1, 1], slice(None)), (2, 1)),
    ((slice(None), [5, 5, 0]), (3,)),
    (([0, 1, 1], [2, 2, 2]), (3,)),
    ((np.array([[0], [0]]), [1, 1]), (2, 2)),
    ((MASK01[:, 0],), (6,)),
    ((slice(None), MASK12[0]), ()),
    ((2, [0, 0, 3]), ()),
    (([3, -1],), (1, 1)),
]


@pytest.mark.parametrize("index, y_shape", INC_CASES, ids=repr)
@pytest.mark.parametrize("mode", ["inc", "set", "inc_ignore_duplicates"])
def test_advanced_inc_and_set_values(index: Any, y_shape: tuple, mode: str) -> None:
    xv = np.arange(24.0).reshape(4, 6)
    yv = np.random.default_rng(0).normal(size=y_shape)
    x = pt.dmatrix("x")
    y = pt.tensor("y", dtype="float64", shape=tuple(1 if s == 1 else None for s in y_shape))
    if mode == "set":
        out = pt.set_subtensor(x[index], y)
    else:
        out = pt.inc_subtensor(x[index], y, ignore_duplicates=mode != "inc")
    assert isinstance(out.owner.op, (AdvancedIncSubtensor, AdvancedIncSubtensor1))
    expected = xv.copy()
    if mode == "set":
        expected[index] = yv
    elif mode == "inc":
        np.add.at(expected, index, yv)  # every repeat adds
    else:
        expected[index] += yv  # the last repeat wins
    before = xv.copy()
    got = function([x, y], out)(xv, yv)
    np.testing.assert_allclose(got, expected)
    np.testing.assert_array_equal(xv, before)
    assert_infer_shape(out, {x: xv, y: yv})


def test_inc_op_choice() -> None:
    x = pt.dmatrix("x")
    out = pt.inc_subtensor(x[[0, 0]], 1.0)
    assert isinstance(out.owner.op, AdvancedIncSubtensor1)
    assert not out.owner.op.set_instead_of_inc
    out = pt.inc_subtensor(x[[0, 0]], 1.0, ignore_duplicates=True)
    assert isinstance(out.owner.op, AdvancedIncSubtensor) and out.owner.op.ignore_duplicates
    out = pt.set_subtensor(x[[0, 0]], 1.0)
    assert isinstance(out.owner.op, AdvancedIncSubtensor1) and out.owner.op.set_instead_of_inc
    out = pt.inc_subtensor(x[:, [1]], 1.0, inplace=True)
    assert out.owner.op.inplace and out.owner.op.destroy_map == {0: [0]}


def test_advanced_inc_errors() -> None:
    x = pt.tensor("x", dtype="float64", shape=(4, 3))
    with pytest.raises(ValueError, match=r"value of shape \(2,\).*indexed shape \(2, 3\)"):
        pt.inc_subtensor(x[[0, 1]], np.ones(2))
    with pytest.raises(ValueError, match=r"value of shape \(4,\).*indexed shape \(2,\)"):
        pt.set_subtensor(x[[0, 1], [0, 1]], np.ones(4))
    with pytest.raises(TypeError, match="upcast"):
        pt.inc_subtensor(pt.lmatrix("li")[[0]], pt.dvector("d"))
    # a set casts the value to x's dtype, as PyTensor's
    li, d = pt.lmatrix("li"), pt.dvector("d")
    got = function([li, d], pt.set_subtensor(li[[0]], d))(np.zeros((2, 2), "int64"), np.array([1.5, -2.5]))
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, [[1, -2], [0, 0]])
    xd = pt.dmatrix("xd")
    y = pt.dvector("y")
    f = function([xd, y], pt.set_subtensor(xd[:, [0, 2]], y))
    with pytest.raises(
        ValueError, match=r"cannot set the indexed part of shape \(2, 2\) with a value of shape \(3,\)"
    ):
        f(np.zeros((2, 3)), np.ones(3))
    np.testing.assert_array_equal(f(np.zeros((2, 3)), np.array([1.0, 2.0])), [[1, 0, 2], [1, 0, 2]])


# --- take ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "indices",
    [np.array(1), np.array([2, 0, 2]), np.array([[1, -1], [0, 0]]), np.array([], dtype=int)],
    ids=lambda a: f"indices{a.shape}",
)
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_take_matches_numpy(indices: np.ndarray, axis: Any) -> None:
    a = pt.tensor3("a", dtype="float64")
    av = np.arange(3 * 4 * 3.0).reshape(3, 4, 3)
    out = pt.take(a, indices, axis=axis)
    expected = np.take(av, indices, axis=axis)
    got = out.eval({a: av})
    assert got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(a.take(indices, axis=axis).eval({a: av}), expected)


@pytest.mark.parametrize("mode", ["wrap", "clip"])
def test_take_modes(mode: str) -> None:
    a = pt.dmatrix("a")
    i = pt.lvector("i")
    av = np.arange(12.0).reshape(3, 4)
    iv = np.array([-7, -1, 0, 5, 11])
    f = function([a, i], [pt.take(a, i, axis=1, mode=mode), pt.take(a, i, mode=mode)])
    got1, got2 = f(av, iv)
    np.testing.assert_array_equal(got1, np.take(av, iv, axis=1, mode=mode))
    np.testing.assert_array_equal(got2, np.take(av, iv, mode=mode))


def test_take_errors_and_ops() -> None:
    a = pt.dmatrix("a")
    assert isinstance(pt.take(a, pt.lvector("i"), axis=0).owner.op, AdvancedSubtensor1)
    assert isinstance(pt.take(a, pt.lvector("i"), axis=1).owner.op, AdvancedSubtensor)
    with pytest.raises(TypeError, match="indices must be integers"):
        pt.take(a, pt.dvector("f"))
    with pytest.raises(ValueError, match="mode must be"):
        pt.take(a, [0], mode="nearest")
    with pytest.raises(ValueError, match="out of bounds"):
        pt.take(a, [0], axis=2)
    with pytest.raises(IndexError, match="out of bounds"):
        function([a], pt.take(a, [7], axis=1))(np.zeros((2, 3)))
    np.testing.assert_array_equal(pt.take(a, [True, False], axis=1).eval({a: np.eye(2)}), [[0, 1], [1, 0]])
    u = np.array([5, 1], dtype="uint64")
    np.testing.assert_array_equal(
        pt.take(a, u, axis=1, mode="wrap").eval({a: np.eye(3)}), np.take(np.eye(3), u, axis=1, mode="wrap")
    )


def test_inc_with_a_mask_of_the_wrong_shape() -> None:
    x = pt.dmatrix("x")
    m = pt.tensor("m", dtype="bool", shape=(None,))
    f = function([x, m], pt.inc_subtensor(x[m], 1.0))
    with pytest.raises(IndexError, match="boolean index did not match.*axis 0.*length 3.*length 2"):
        f(np.zeros((3, 2)), np.array([True, False]))
    np.testing.assert_array_equal(f(np.zeros((2, 2)), np.array([False, True])), [[0, 0], [1, 1]])
