"""The Python backend's row increment (``AdvancedIncSubtensor1`` summing rows by
``bincount``) against ``perform`` (``numpy.add.at``): the same values (exactly, into zeros),
the same errors, and ``perform`` wherever the fast path does not apply."""

from __future__ import annotations

import numpy as np
import pytest

import arignote.tensor as pt
from arignote.link.python import has_fast_impl, impl_name, indexing, python_thunk
from arignote.link.python.indexing import MIN_ROWS, TOUCHED_ONLY, inc_rows
from arignote.tensor.indexing.advanced import AdvancedIncSubtensor1

RNG = np.random.default_rng(11)


def _run(op, x, y, i):
    """The backend's thunk and ``perform`` on the same values: (thunk's, perform's)."""
    xv, yv, iv = pt.as_tensor(x).type(), pt.as_tensor(y).type(), pt.as_tensor(i).type()
    node = op.make_node(xv, yv, iv)
    storage = {v: [None] for v in (*node.inputs, *node.outputs)}
    compute = {v: [False] for v in (*node.inputs, *node.outputs)}
    thunk = python_thunk(node.op, node, storage, compute, [], None)
    for v, value in zip(node.inputs, (x.copy(), y, i)):
        storage[v][0] = value
    thunk()
    got = storage[node.outputs[0]][0]
    want = [[None]]
    op.perform(node, [x.copy(), y, i], want)
    return got, want[0][0]


@pytest.mark.parametrize(
    ("rows", "n_index", "shape"),
    [(1000, 2048, (32,)), (50, 500, (2, 3)), (100_000, 64, (4,)), (7, MIN_ROWS, (1,))],
)
def test_rows_summed_into_zeros_are_exactly_add_at(rows, n_index, shape, monkeypatch):
    calls = []
    monkeypatch.setattr(indexing, "inc_rows", lambda *a: calls.append(1) or inc_rows(*a))
    x = np.zeros((rows, *shape))
    y = RNG.standard_normal((n_index, *shape))
    i = RNG.integers(-rows, rows, n_index)  # repeats, and negative places
    got, want = _run(AdvancedIncSubtensor1(), x, y, i)
    assert calls  # (the fast path ran)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def test_the_touched_rows_path_and_the_full_table_path_agree():
    i = RNG.integers(0, 40, 100).astype(np.uint32)  # (an unsigned index)
    y = RNG.standard_normal((100, 3))
    x = RNG.standard_normal((40 * TOUCHED_ONLY * 10, 3))  # the table much longer than the index
    got = inc_rows(x, y, i, inplace=False)
    want = x.copy()
    np.add.at(want, i, y)
    np.testing.assert_allclose(got, want, rtol=1e-14, atol=1e-14)
    short = x[:40].copy()
    got = inc_rows(short, y, i, inplace=True)
    assert got is short  # in place: the table itself
    np.testing.assert_allclose(got, want[:40], rtol=1e-14, atol=1e-14)


def test_float32_and_nonzero_tables():
    x = RNG.standard_normal((30, 8)).astype(np.float32)
    y = RNG.standard_normal((200, 8)).astype(np.float32)
    i = RNG.integers(0, 30, 200)
    got, want = _run(AdvancedIncSubtensor1(), x, y, i)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_what_the_fast_path_leaves_to_perform():
    # a short index, a vector table, an integer table, a broadcast value: add.at's answer
    cases = [
        (np.zeros((5, 2)), np.ones((3, 2)), np.array([0, 0, 4])),
        (np.zeros(9), np.ones(60), RNG.integers(0, 9, 60)),
        (np.zeros((9, 2), dtype=np.int64), np.ones((60, 2), dtype=np.int64), RNG.integers(0, 9, 60)),
        (np.zeros((9, 2)), np.ones((1, 2)), RNG.integers(0, 9, 60)),
    ]
    for x, y, i in cases:
        got, want = _run(AdvancedIncSubtensor1(), x, y, i)
        np.testing.assert_array_equal(got, want)


def test_an_index_out_of_bounds_raises_perform_s_error():
    x, y = np.zeros((10, 2)), np.ones((60, 2))
    i = np.zeros(60, dtype=np.int64)
    i[7] = 10
    with pytest.raises(IndexError) as fast:
        _run(AdvancedIncSubtensor1(), x, y, i)
    with pytest.raises(IndexError) as reference:
        AdvancedIncSubtensor1().perform(
            AdvancedIncSubtensor1().make_node(pt.dmatrix(), pt.dmatrix(), pt.lvector()), [x, y, i], [[None]]
        )
    assert str(fast.value) == str(reference.value)


def test_set_is_not_taken_and_the_profile_names_the_backend():
    assert has_fast_impl(AdvancedIncSubtensor1()) and impl_name(AdvancedIncSubtensor1()) == "python"
    assert not has_fast_impl(AdvancedIncSubtensor1(set_instead_of_inc=True))
