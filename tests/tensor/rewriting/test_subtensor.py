"""The Subtensor rules (arignote/tensor/rewriting/subtensor.py): each is checked to fire
(the compiled graph) and to compute what the graph as written computes."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import arignote
import arignote.tensor as pt
from arignote import function
from arignote.tensor.rewriting.subtensor import (
    local_subtensor_of_shape,
    local_subtensor_of_static_shape,
    local_useless_subtensor,
)
from arignote.tensor.shape import Shape, Shape_i, reshape
from arignote.tensor.subtensor import Subtensor
from arignote.tensor.type import tensor, tensor3

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
