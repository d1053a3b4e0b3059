"""In place: the increments of a gradient of many indexed terms become one chain written
into one buffer; nothing protected is overwritten; values equal the graph as written."""

from __future__ import annotations

import itertools

import numpy as np

import arignote
import arignote.tensor as pt
from arignote import function
from arignote.tensor.indexing.advanced import AdvancedIncSubtensor1
from arignote.tensor.indexing.basic import IncSubtensor
from arignote.tensor.rewriting.inplace import inc_subtensor_inplace
from arignote.tensor.rewriting.subtensor import serialize_increments_into_zeros

UNREWRITTEN = arignote.Mode(optimizer=None)
INCREMENTS = (IncSubtensor, AdvancedIncSubtensor1)


def _increments(f):
    return [n for n in f.maker.fgraph.toposort() if isinstance(n.op, INCREMENTS)]


def test_the_rules_track_the_increments():
    assert set(inc_subtensor_inplace.tracks) >= {IncSubtensor, AdvancedIncSubtensor1}


def test_the_gradient_of_indexed_terms_is_one_chain_written_in_place():
    v = pt.dvector("v")
    cost = sum(v[i] * (i + 1) for i in range(50))
    g = arignote.grad(cost, v)
    f = function([v], g)
    incs = _increments(f)
    assert len(incs) == 50 and all(n.op.inplace for n in incs)
    for a, b in itertools.pairwise(incs):  # each increments the previous one's buffer
        assert b.inputs[0] is a.outputs[0]
    value = np.linspace(0.0, 1.0, 50)
    np.testing.assert_array_equal(f(value), np.arange(1.0, 51.0))
    np.testing.assert_array_equal(f(value), function([v], g, mode=UNREWRITTEN)(value))


def test_serializing_keeps_the_other_terms():
    v, w = pt.dvector("v"), pt.dvector("w")
    out = pt.inc_subtensor(pt.zeros_like(v)[1], 2.0) + pt.inc_subtensor(pt.zeros_like(v)[[0, 0]], w[:2]) + w
    f = function([v, w], out)
    assert not [n for n in f.maker.fgraph.toposort() if type(n.op).__name__ == "Add"]
    vals = np.zeros(3), np.array([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(f(*vals), function([v, w], out, mode=UNREWRITTEN)(*vals))
    assert serialize_increments_into_zeros.name == "serialize_increments_into_zeros"


def test_set_subtensor_is_not_serialized():
    v = pt.dvector("v")
    out = pt.set_subtensor(pt.zeros_like(v)[[0, 0]], pt.as_tensor([1.0, 2.0])) + v
    f = function([v], out)
    np.testing.assert_array_equal(f(np.ones(2)), function([v], out, mode=UNREWRITTEN)(np.ones(2)))


def test_an_input_is_never_overwritten():
    x = pt.dvector("x")
    out = pt.inc_subtensor(x[0], 1.0)
    f = function([x], out)
    assert not any(n.op.inplace for n in _increments(f))
    value = np.zeros(3)
    f(value)
    assert value.tolist() == [0.0, 0.0, 0.0]


def test_an_intermediate_read_elsewhere_is_copied_first_or_ordered():
    x = pt.dvector("x")
    y = pt.exp(x)
    out = pt.inc_subtensor(y[0], 1.0) + y  # y is read by the add too
    f = function([x], out)
    value = np.zeros(3)
    np.testing.assert_allclose(f(value), [3.0, 2.0, 2.0])


def test_shared_variable_update_in_place_keeps_values():
    w = arignote.shared(np.zeros(4), name="w")
    i = pt.lscalar("i")
    f = function([i], [], updates={w: pt.inc_subtensor(w[i], 1.0)})
    f(1)
    f(1)
    f(3)
    np.testing.assert_array_equal(w.get_value(), [0.0, 2.0, 0.0, 1.0])
