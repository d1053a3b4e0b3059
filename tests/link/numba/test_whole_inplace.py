"""The whole-graph function writes in place where the graph's Ops destroy an input that the
call itself made (an in-place Elemwise, an increment into a fresh array), never into a
graph input, a constant, a view of one, or an input another input of the node shares."""

from __future__ import annotations

import numpy as np
import pytest

import arignote
import arignote.tensor as pt
from arignote import In
from arignote.compile.mode import Mode
from arignote.link.numba.dispatch.basic import overwritable
from arignote.tensor.indexing.basic import IncSubtensor

numba = pytest.importorskip("numba")

pytestmark = pytest.mark.usefixtures("empty_kernel_cache")


def _destroyers(f):
    return [n for n in f.maker.fgraph.toposort() if getattr(n.op, "destroy_map", None)]


def test_in_place_on_values_made_in_the_call_and_never_on_inputs():
    x, y = pt.dmatrix("x"), pt.dmatrix("y")
    h = pt.exp(x) * y  # made in the call
    g = pt.tanh(h[:, 1:] - h[:, :-1])  # a fused Elemwise on views of h
    z = pt.set_subtensor(g[:, 0], 0.0)  # an increment into the fresh g
    out = (z**2).sum() + pt.inc_subtensor(pt.zeros_like(x)[:, 1:], z).sum()
    inputs = [x, y]
    f = arignote.function(inputs, [out, z], mode="NUMBA")
    assert f.vm.whole.state == "in use", f.vm.whole.reason
    nodes = _destroyers(f)
    increments = [n for n in nodes if isinstance(n.op, IncSubtensor)]
    assert increments and all(overwritable(n, 0) for n in increments)  # (into arrays made in the call)
    # tanh(h[:, 1:] - h[:, :-1]) in place of h[:, 1:]: a loop writing h[:, j + 1] would then
    # read it as h[:, :-1]'s next column (NumPy buffers overlapping operands; a loop does not)
    (overlapping,) = [n for n in nodes if n.inputs[0].owner.op.__class__.__name__ == "Subtensor"]
    assert not overwritable(overlapping, 0)
    source = f.vm.whole.plan.source
    assert "    o = x\n" in source and "o = x.copy()" not in source
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((4, 6)), rng.standard_normal((4, 6))
    a0, b0 = a.copy(), b.copy()
    ref = arignote.function(inputs, [out, z], mode=Mode("vm", "fast_run"))
    for _ in range(3):  # (calls after calls: nothing left over from an earlier one)
        got, want = f(a, b), ref(a, b)
        for g_, w in zip(got, want):
            np.testing.assert_allclose(g_, w, rtol=1e-12)
    np.testing.assert_array_equal(a, a0)
    np.testing.assert_array_equal(b, b0)


def test_a_mutable_input_and_a_constant_are_not_written_by_the_whole_graph():
    x = pt.dvector("x")
    f = arignote.function([In(x, mutable=True)], pt.exp(x) + 1, mode="NUMBA")
    nodes = _destroyers(f)
    assert nodes and all(n.inputs[0] is f.maker.fgraph.inputs[0] for n in nodes)  # x itself
    assert not any(overwritable(n, 0) for n in nodes)
    a = np.arange(3.0)
    np.testing.assert_allclose(f(a), np.exp(np.arange(3.0)) + 1)
    np.testing.assert_array_equal(a, np.arange(3.0))  # (allowed to change; the function does not)


def test_what_is_not_overwritable():
    x, y = pt.dmatrix("x"), pt.dmatrix("y")
    e = pt.exp(x)
    node = (e + y).owner
    assert overwritable(node, 0)  # exp(x): made in the call
    assert not overwritable(node, 1)  # y: a graph input
    assert overwritable((x.sum(axis=0) + y[0]).owner, 0)  # a reduction's new array
    assert overwritable((e[:, 1:] * 2).owner, 0)  # a view of one made in the call
    same = (e + e.T).owner  # another input is a view of the same memory
    assert not overwritable(same, 0)
    s = pt.exp(pt.dscalar("s"))
    assert not overwritable((s + 1).owner, 0)  # a 0-d value is a Numba scalar
    c = pt.constant(np.ones((2, 2)))
    assert not overwritable((c + x).owner, 0)
