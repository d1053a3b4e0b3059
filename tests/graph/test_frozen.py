"""Frozen graphs (FrozenApply, FrozenFunctionGraph) and PyTensor 3's traversal helpers."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import arignote
import arignote.scalar as ps
import arignote.tensor as pt
from arignote.graph.basic import FrozenApply, NominalVariable
from arignote.graph.fg import AbstractFunctionGraph, FrozenFunctionGraph, FunctionGraph
from arignote.graph.traversal import (
    explicit_graph_inputs,
    toposort_with_orderings,
    truncated_graph_inputs,
    variable_ancestors,
    walk_toposort,
)
from arignote.graph.utils import MissingInputError


def _graph():
    x, y = pt.dvector("x"), pt.dvector("y")
    return x, y, [pt.exp(x) * y + 2.0, pt.exp(x).sum()]


def test_frozen_apply_is_interned_and_immutable():
    a = NominalVariable(0, pt.dvector().type)
    assert a is NominalVariable(0, pt.dvector().type)
    node = FrozenApply(pt.exp, (a,), (a.type,))
    assert node is FrozenApply(pt.exp, [a], [a.type])
    assert node is not FrozenApply(pt.exp, (a,), (pt.fvector().type,))  # output Types are keyed
    assert isinstance(node.inputs, tuple) and isinstance(node.outputs, tuple)
    with pytest.raises(TypeError):
        node.inputs[0] = a
    assert node.clone() is node
    # equal constants (different objects) give one node
    c1, c2 = pt.constant(np.arange(3.0)), pt.constant(np.arange(3.0))
    assert FrozenApply(pt.add, (a, c1), (a.type,)) is FrozenApply(pt.add, (a, c2), (a.type,))


def test_frozen_function_graphs_of_equal_graphs_are_equal():
    x, y, outs = _graph()
    a = FunctionGraph([x, y], outs).freeze()
    x2, y2, outs2 = _graph()
    b = FrozenFunctionGraph([x2, y2], outs2)
    assert isinstance(a, AbstractFunctionGraph) and isinstance(FunctionGraph([x], [x]), AbstractFunctionGraph)
    assert a == b and hash(a) == hash(b) and {a: 1}[b] == 1
    assert all(p is q for p, q in zip(a.outputs, b.outputs))
    # the shared exp(x) is one node, used by both outputs
    exp_nodes = [n for n in a.toposort() if n.op == pt.exp]
    assert len(exp_nodes) == 1 and len(a.clients[exp_nodes[0].outputs[0]]) == 2
    assert a.inputs == (NominalVariable(0, x.type), NominalVariable(1, y.type))
    assert len(a.apply_nodes) == len(a.toposort()) and set(a.inputs) <= a.variables
    assert [str(n.op) for n, _ in a.clients[a.outputs[1]]] == ["Output{idx=1}"]
    # swapped inputs, or a different computation: not equal
    assert FrozenFunctionGraph([y2, x2], outs2) != a
    assert FrozenFunctionGraph([x2, y2], [pt.exp(x2) * y2 + 3.0, pt.exp(x2).sum()]) != a


def test_bind_and_unfreeze_compute_the_graph():
    x, y, outs = _graph()
    frozen = FrozenFunctionGraph([x, y], outs)
    u, v = pt.dvector("u"), pt.dvector("v")
    bound = frozen.bind([u, v])
    xv, yv = np.array([0.0, 1.0]), np.array([2.0, 3.0])
    f = arignote.function([u, v], bound)
    got = f(xv, yv)
    np.testing.assert_allclose(got[0], np.exp(xv) * yv + 2.0)
    np.testing.assert_allclose(got[1], np.exp(xv).sum())
    assert frozen.bind({frozen.inputs[0]: u, frozen.inputs[1]: v})[1].owner.op == bound[1].owner.op
    with pytest.raises(KeyError, match="no Variable given for input"):
        frozen.bind({frozen.inputs[0]: u})
    with pytest.raises(ValueError, match="2 inputs, got 1"):
        frozen.bind([u])
    fg = frozen.unfreeze()
    assert isinstance(fg, FunctionGraph) and not isinstance(fg.outputs[0].owner, FrozenApply)
    fg.replace(fg.outputs[1], fg.outputs[1] * 2.0)  # mutable again
    assert fg.freeze() != frozen
    assert pickle.loads(pickle.dumps(frozen)) == frozen


def test_a_root_that_is_not_an_input_is_an_error():
    x, y, outs = _graph()
    with pytest.raises(MissingInputError, match="y .* is needed by the outputs but is not among the inputs"):
        FrozenFunctionGraph([x], outs)
    with pytest.raises(ValueError, match="given twice"):
        FrozenFunctionGraph([x, x], [x])
    with pytest.raises(TypeError, match="must be a Variable with no owner"):
        FrozenFunctionGraph([outs[0]], outs)


def test_frozen_scalar_graphs():
    x, y = ps.float64("x"), ps.float64("y")
    a = FunctionGraph([x, y], [ps.add(x, y)]).freeze()
    assert a == FunctionGraph([x, y], [ps.add(x, y)]).freeze()
    assert a != FunctionGraph([x, y], [ps.mul(x, y)]).freeze()


# -- traversal ------------------------------------------------------------------------------


def test_truncated_graph_inputs():
    x, y = pt.dscalar("x"), pt.dscalar("y")
    n = pt.exp(x)
    o = pt.log(n)
    assert truncated_graph_inputs([o]) == [o]  # nothing to keep: the output itself
    assert truncated_graph_inputs([o], [n]) == [n]
    c1 = pt.exp(x)
    c2 = pt.sin(c1)
    o = pt.cos(c2)
    assert truncated_graph_inputs([o], [c1, c2]) == [c2, c1]  # one depends on the other: both
    c = pt.exp(x)
    other = pt.tan(y)
    o = pt.sin(c) + other
    assert truncated_graph_inputs([o], [c]) == [other, c]  # the closest independent variable
    assert truncated_graph_inputs([pt.sin(c)], [c, pt.cos(y)]) == [c]  # a disconnected one: no
    o2 = pt.tan(y)
    assert truncated_graph_inputs([pt.cos(c2), o2], [c1, c2]) == [o2, c2, c1]  # a disconnected output
    o = pt.sin(c)
    assert truncated_graph_inputs([o], [c, o]) == [o, c]
    # what it returns suffices to compute the outputs
    out = pt.sin(c) * other + c
    ins = truncated_graph_inputs([out], [c])
    assert set(ins) == {c, other}
    values = {c: 0.5, other: 2.0}
    f = arignote.function(ins, out)
    assert np.isclose(f(*(values[v] for v in ins)), np.sin(0.5) * 2.0 + 0.5)


def test_traversal_helpers_of_pytensor_3():
    x = pt.dvector("x")
    k = pt.constant(2.0)
    s = arignote.shared(np.ones(2), name="s")
    z = (x * k + s).sum()
    assert list(explicit_graph_inputs(z)) == [x]
    assert set(variable_ancestors([z])) >= {x, k, s, z}
    assert x not in set(variable_ancestors([z], blockers=[z.owner.inputs[0]]))
    deps = {"a": ["b", "c"], "b": ["c"], "c": []}
    assert list(walk_toposort(["a"], deps.get)) == ["c", "b", "a"]
    a = pt.exp(x)
    b = pt.sin(x)
    out = a + b
    order = list(toposort_with_orderings([out], blockers=[x], orderings={a.owner: [b.owner]}))
    assert order.index(b.owner) < order.index(a.owner) and order[-1] is out.owner
