"""The Subtensor rules (arignote/tensor/rewriting/subtensor.py): each is checked to fire
(the compiled graph) and to compute what the graph as written computes."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import arignote
import arignote.tensor as pt
from arignote.graph.fg import FunctionGraph
from arignote.graph.rewriting.basic import apply_node_rewriters
from arignote.tensor.indexing.basic import IncSubtensor
from arignote.tensor.rewriting.subtensor import (
    local_inc_subtensor_of_length_one_dims,
    local_subtensor_of_length_one_dims,
    local_subtensor_of_shape,
    local_subtensor_of_static_shape,
    local_useless_subtensor,
)
from arignote.tensor.shape import Shape, Shape_i, reshape
from arignote.tensor.subtensor import Subtensor
from arignote.tensor.type import tensor, tensor3
from tests.modes import function  # FAST_RUN's rewrites, on the run's linker

UNREWRITTEN = arignote.Mode(optimizer=None)


def _ops(f: Any) -> list:
    return [n.op for n in f.maker.fgraph.toposort()]


def test_the_rules_track_subtensor() -> None:
    for rule in (local_subtensor_of_static_shape, local_subtensor_of_shape, local_useless_subtensor):
        assert rule.tracks == (Subtensor,)


def test_shape_of_index_becomes_shape_i() -> None:
    x = tensor3("x", dtype="float64")
    f = function([x], [x.shape[0], x.shape[-1]])
    ops = _ops(f)
    assert Shape_i(0) in ops and Shape_i(2) in ops
    assert not any(isinstance(op, (Subtensor, Shape)) for op in ops)
    assert [int(v) for v in f(np.zeros((2, 3, 4)))] == [2, 4]
    unrewritten = function([x], [x.shape[0], x.shape[-1]], mode=UNREWRITTEN)
    assert any(isinstance(op, Subtensor) for op in _ops(unrewritten))
    assert [int(v) for v in unrewritten(np.zeros((2, 3, 4)))] == [2, 4]


def test_static_length_of_shape_becomes_a_constant() -> None:
    x = tensor("x", dtype="float64", shape=(2, None))
    y = x.shape[0] * x.shape[1]
    f = function([x], y)
    assert not any(isinstance(op, (Subtensor, Shape)) for op in _ops(f))
    assert [type(op) for op in _ops(f)].count(Shape_i) == 1
    assert int(f(np.zeros((2, 5)))) == 10 == int(function([x], y, mode=UNREWRITTEN)(np.zeros((2, 5))))


def test_useless_subtensor_is_removed() -> None:
    x = pt.dmatrix("x")
    for out in (x[:] * 2, x[::1, :] * 2, x[:, ::1] * 2):
        f = function([x], out)
        assert not any(isinstance(op, Subtensor) for op in _ops(f))
        xv = np.arange(6.0).reshape(2, 3)
        np.testing.assert_array_equal(f(xv), xv * 2)
        np.testing.assert_array_equal(function([x], out, mode=UNREWRITTEN)(xv), xv * 2)
    f = function([x], x[::-1] * 2)  # not a full slice: kept
    assert any(isinstance(op, Subtensor) for op in _ops(f))
    np.testing.assert_array_equal(f(np.arange(4.0).reshape(2, 2)), [[4, 6], [0, 2]])


def _rewritten(rule: Any, inputs: list, out: Any) -> tuple[FunctionGraph, int]:
    fg = FunctionGraph(list(inputs), [out])
    return fg, apply_node_rewriters(fg, [rule])


def test_indexing_a_length_one_dimension_at_0_drops_it() -> None:
    x = pt.fmatrix("x")
    m = x.max(axis=1, keepdims=True)  # (n, 1) by its Type
    xv = np.random.default_rng(0).normal(size=(4, 3)).astype("float32")
    for out in (m[:, 0], m[:, -1], m[:, 0] + m[:, -1]):
        fg, n = _rewritten(local_subtensor_of_length_one_dims, [x], out)
        assert n >= 1 and not any(isinstance(nd.op, Subtensor) for nd in fg.apply_nodes)
        f = function([x], out)
        assert not any(isinstance(op, Subtensor) for op in _ops(f))
        want = function([x], out, mode=UNREWRITTEN)(xv)
        np.testing.assert_array_equal(f(xv), want)
        assert f(xv).dtype == "float32"
    np.testing.assert_array_equal(function([x], m[:, 0])(xv), xv.max(axis=1))
    # both dimensions of length 1, and a 3-d value with a full slice after the index
    y = tensor("y", dtype="float64", shape=(1, 1))
    np.testing.assert_array_equal(function([y], y[0, -1])(np.array([[2.5]])), 2.5)
    z = tensor("z", dtype="float64", shape=(None, 1, None))
    zv = np.arange(6.0).reshape(2, 1, 3)
    f = function([z], z[:, 0, :])
    assert not any(isinstance(op, Subtensor) for op in _ops(f))
    np.testing.assert_array_equal(f(zv), zv[:, 0, :])


def test_indexing_other_places_or_lengths_is_kept() -> None:
    x = pt.dmatrix("x")  # length 1 only at run time: the Subtensor stays (and checks)
    y = tensor("y", dtype="float64", shape=(None, 1))
    for inputs, out in (([x], x[:, 0]), ([y], y[1:, 0]), ([y], y[0])):
        fg, n = _rewritten(local_subtensor_of_length_one_dims, inputs, out)
        assert n == 0
    with pytest.raises(IndexError):  # an empty x has no place 0: still raises
        function([x], x[:, 0])(np.ones((2, 0)))
    with pytest.raises(IndexError, match="out of bounds"):  # y[:, 1] is refused when built
        y[:, 1]


@pytest.mark.parametrize("set_instead_of_inc", [False, True])
def test_an_increment_into_a_length_one_dimension_is_an_elemwise(set_instead_of_inc: bool) -> None:
    x = tensor("x", dtype="float32", shape=(None, 1))
    y = pt.fvector("y")
    write = pt.set_subtensor if set_instead_of_inc else pt.inc_subtensor
    out = write(x[:, 0], y)
    fg, n = _rewritten(local_inc_subtensor_of_length_one_dims, [x, y], out)
    assert n == 1 and not any(isinstance(nd.op, IncSubtensor) for nd in fg.apply_nodes)
    f = function([x, y], out)
    assert not any(isinstance(op, IncSubtensor) for op in _ops(f))
    xv = np.arange(4.0, dtype="float32").reshape(4, 1)
    yv = np.linspace(-1, 1, 4).astype("float32")
    want = xv.copy()
    if set_instead_of_inc:
        want[:, 0] = yv
    else:
        want[:, 0] += yv
    got = f(xv, yv)
    assert got.dtype == "float32" and got.shape == (4, 1)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(xv, np.arange(4.0).reshape(4, 1))  # the input is kept
    with pytest.raises(ValueError):  # a y of another length still raises
        f(xv, np.ones(3, "float32"))


def test_increments_that_broadcast_or_need_a_cast() -> None:
    x = tensor("x", dtype="float64", shape=(None, 1, 3))
    xv = np.arange(6.0).reshape(2, 1, 3)
    cases = [
        (pt.dscalar("s"), np.float64(2.5)),  # y broadcast over the whole part
        (pt.dvector("v"), np.array([1.0, 2.0, 3.0])),  # y fills the part's last dimension
        (pt.fmatrix("w"), np.ones((2, 3), "float32")),  # float32 into float64: x + y is float64
    ]
    for y, yv in cases:
        out = pt.inc_subtensor(x[:, 0], y)
        f = function([x, y], out)
        assert not any(isinstance(op, IncSubtensor) for op in _ops(f))
        want = xv.copy()
        want[:, 0] += yv
        np.testing.assert_array_equal(f(xv, yv), want)
    # float64 into a float32 x: x + y would be float64, so the increment stays
    xf = tensor("xf", dtype="float32", shape=(None, 1))
    out = pt.inc_subtensor(xf[:, 0], pt.dvector("d"))
    fg, n = _rewritten(local_inc_subtensor_of_length_one_dims, [xf, *out.owner.inputs[1:2]], out)
    assert n == 0


def test_the_gradient_of_a_kept_dims_max_has_no_increment() -> None:
    """``m[:, 0]`` of ``m = x.max(axis=1, keepdims=True)``, used twice (the log-sum-exp of a
    softmax): its gradient adds an increment of ``m``'s column into ``m``'s other gradient,
    which is now one Elemwise; the gradient is what the unrewritten graph gives."""
    x = pt.dmatrix("x")
    m = x.max(axis=1, keepdims=True)
    lse = pt.log(pt.exp(x - m).sum(axis=1)) + m[:, 0]
    g = arignote.grad(lse.sum(), x)
    f = function([x], g)
    assert not any(isinstance(op, (Subtensor, IncSubtensor)) for op in _ops(f))
    xv = np.random.default_rng(1).normal(size=(5, 4))
    e = np.exp(xv - xv.max(axis=1, keepdims=True))
    np.testing.assert_allclose(f(xv), e / e.sum(axis=1, keepdims=True), rtol=1e-12)
    np.testing.assert_allclose(function([x], g, mode=UNREWRITTEN)(xv), f(xv), rtol=1e-12)


def test_shape_entries_in_graphs() -> None:
    x = pt.dmatrix("x")
    out = reshape(x, (x.shape[1], x.shape[0]))
    got = function([x], out)(np.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(got, np.arange(6.0).reshape(3, 2))


# --- gather_indexed_terms ---------------------------------------------------------------------


def _kinds(f: Any) -> list[str]:
    return sorted(type(op).__name__ for op in _ops(f))


def test_a_sum_of_indexed_terms_is_one_gather() -> None:
    from arignote.tensor.indexing.advanced import AdvancedSubtensor1

    x = pt.dvector("x")
    y = x[0] * 1.0
    for i in range(1, 40):
        y = y + x[i] * float(i + 1)
    f = function([x], y)
    ops = _ops(f)
    assert sum(isinstance(op, AdvancedSubtensor1) for op in ops) == 1
    assert not any(isinstance(op, Subtensor) for op in ops) and len(ops) <= 3
    v = np.linspace(-1.0, 1.0, 40)
    np.testing.assert_allclose(f(v), v @ np.arange(1.0, 41.0), rtol=1e-13)
    np.testing.assert_allclose(f(v), function([x], y, mode=UNREWRITTEN)(v), rtol=1e-13)


def test_gathered_terms_keep_the_other_terms_and_places() -> None:
    # two vectors, repeated and negative places, plain reads, a float32 scale, and terms
    # the rule leaves (a product used twice, a read at a symbolic place, another op)
    x, w = pt.dvectors("x", "w")
    k = pt.lscalar("k")
    shared_term = x[2] * 3.0
    terms = [x[i % 5 - 2] * np.float32(0.5 * i) for i in range(12)]
    terms += [w[j] for j in (0, 1, 1, 3, 4, 5, 6, 7, -1)]
    terms += [shared_term, x[k], pt.exp(w[2])]
    y = pt.add(*terms) + shared_term
    f = function([x, w, k], y)
    assert sum(type(op).__name__ == "AdvancedSubtensor1" for op in _ops(f)) == 2
    xv, wv = np.linspace(-1.0, 1.0, 6), np.linspace(0.5, 2.0, 9)
    want = (
        sum(xv[i % 5 - 2] * np.float32(0.5 * i) for i in range(12))
        + sum(wv[j] for j in (0, 1, 1, 3, 4, 5, 6, 7, -1))
        + 2 * xv[2] * 3.0
        + xv[4]
        + np.exp(wv[2])
    )
    np.testing.assert_allclose(f(xv, wv, 4), want, rtol=1e-13)
    # an out-of-range place still raises, as the indexing written did
    with pytest.raises(IndexError):
        f(np.zeros(2), wv, 0)


def test_few_terms_integers_and_vectors_are_not_gathered() -> None:
    x = pt.dvector("x")
    few = pt.add(*[x[i] * 2.0 for i in range(7)])
    n = pt.lvector("n")
    ints = pt.add(*[n[i] * 2 for i in range(10)])
    m = pt.dmatrix("m")
    rows = pt.add(*[m[i] * 2.0 for i in range(10)])  # vector terms: elementwise already
    for inputs, out in (([x], few), ([n], ints), ([m], rows)):
        f = function(inputs, out)
        assert not any(type(op).__name__ == "AdvancedSubtensor1" for op in _ops(f))
    np.testing.assert_array_equal(function([n], ints)(np.arange(10)), 90)


def test_rows_by_an_index_array_become_a_row_gather_and_scatter() -> None:
    from arignote.tensor.indexing.advanced import (
        AdvancedIncSubtensor,
        AdvancedIncSubtensor1,
        AdvancedSubtensor,
        AdvancedSubtensor1,
    )

    E, tok = pt.dmatrix("E"), pt.lmatrix("tok")
    rng = np.random.default_rng(3)
    table = rng.standard_normal((7, 3))
    tokens = np.array([[0, 6, -1, 2], [2, 2, -7, 5]])  # repeats and negative indices
    g = rng.standard_normal((2, 4, 3))
    looked_up = E[tok]
    f = function([E, tok], [looked_up, *arignote.grad((looked_up * g).sum(), [E])])
    kinds = {type(op) for op in _ops(f)}
    assert AdvancedSubtensor1 in kinds and AdvancedIncSubtensor1 in kinds
    assert not kinds & {AdvancedSubtensor, AdvancedIncSubtensor}
    got, grad = f(table, tokens)
    np.testing.assert_array_equal(got, table[tokens])
    want = np.zeros_like(table)
    np.add.at(want, tokens, g)  # (rows of x: the same order, the same sums)
    np.testing.assert_array_equal(grad, want)
    # set and increment with a value of the indexed shape, on a 3-d x and a 3-d index
    x, i3 = pt.dtensor3("x"), pt.ltensor3("i")
    y = pt.tensor("y", dtype="float64", shape=(None,) * 5)
    xs, ys = rng.standard_normal((5, 2, 3)), rng.standard_normal((2, 2, 2, 2, 3))
    idx = np.array([[[0, 4], [4, 1]], [[2, 2], [0, 3]]])
    inc = function([x, y, i3], [pt.inc_subtensor(x[i3], y), pt.set_subtensor(x[i3], y)])
    assert not {type(op) for op in _ops(inc)} & {AdvancedIncSubtensor}
    got_inc, got_set = inc(xs, ys, idx)
    want_inc, want_set = xs.copy(), xs.copy()
    np.add.at(want_inc, idx, ys)
    want_set[idx] = ys  # (repeated rows: the last write wins, in C order of the index)
    np.testing.assert_array_equal(got_inc, want_inc)
    np.testing.assert_array_equal(got_set, want_set)
    with pytest.raises(IndexError):
        f(table, np.array([[0, 7]]))


def test_a_value_broadcast_along_the_index_keeps_the_general_increment() -> None:
    from arignote.tensor.indexing.advanced import AdvancedIncSubtensor

    x, tok = pt.dmatrix("x"), pt.lmatrix("tok")
    row = pt.dvector("row")  # one row for every index: broadcast along the index dims
    f = function([x, tok, row], pt.inc_subtensor(x[tok], row))
    assert any(isinstance(op, AdvancedIncSubtensor) for op in _ops(f))
    xs, tokens, r = np.zeros((4, 2)), np.array([[0, 1], [1, 3]]), np.array([1.0, 2.0])
    want = xs.copy()
    np.add.at(want, tokens, r)
    np.testing.assert_array_equal(f(xs, tokens, r), want)
