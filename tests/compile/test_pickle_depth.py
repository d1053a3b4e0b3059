"""Graphs, FunctionGraphs and compiled functions of any depth pickle and unpickle without
recursion (issue 11): 125 nodes deep used to raise RecursionError."""

from __future__ import annotations

import copy
import gc
import pickle

import numpy as np
import pytest

import arignote.tensor as pt
from arignote import Mode, function, shared
from arignote.compile import mode as mode_module
from arignote.graph import pickling
from arignote.graph.basic import equal_computations
from arignote.graph.fg import FunctionGraph

DEPTHS = [125, 1000, pytest.param(100_000, marks=pytest.mark.slow)]


def _chain(depth: int):
    """``depth`` nodes deep: sin and + of one constant, alternately, after ``x + s``.
    A few intermediates are named or tagged."""
    x = pt.dvector("x")
    s = shared(np.array([0.1, -0.2]), name="s")
    c = pt.constant(np.array([0.5, 0.25]), name="c")
    y = x + s
    marked = {}
    for i in range(depth - 1):
        y = pt.sin(y) if i % 2 else y + c
        if i % 997 == 0:
            y.name = f"v{i}"
            y.tag.mark = i
            marked[i] = y
    return x, s, c, y, marked


def _reference(xv: np.ndarray, sv: np.ndarray, depth: int) -> np.ndarray:
    y = xv + sv
    c = np.array([0.5, 0.25])
    for i in range(depth - 1):
        y = np.sin(y) if i % 2 else y + c
    return y


def _walk(y):
    """Every Variable on the main chain, from ``y`` down (iteratively)."""
    out = []
    while y.owner is not None:
        out.append(y)
        y = y.owner.inputs[0]
    return out


@pytest.fixture(scope="module")
def chains():
    """One graph per depth, built once for the module (building 100k nodes takes seconds)."""
    cache: dict = {}

    def get(depth: int):
        if depth not in cache:
            cache[depth] = _chain(depth)
        return cache[depth]

    return get


@pytest.mark.parametrize("depth", DEPTHS)
def test_a_deep_variable_graph_round_trips(chains, depth):
    x, s, c, y, marked = chains(depth)
    x2, s2, c2, y2 = pickle.loads(pickle.dumps((x, s, c, y)))
    assert equal_computations([y], [y2], [x, s], [x2, s2])
    chain2 = _walk(y2)
    assert len(chain2) == len(_walk(y)) == depth
    # names and tags come back; the one constant and the shared variable stay one object each
    named = {v.name: v for v in chain2 if v.name is not None}
    assert set(named) == {f"v{i}" for i in marked}
    assert all(named[f"v{i}"].tag.mark == i for i in marked)
    adds = [v.owner for v in chain2 if v.owner.inputs[1:] and v.owner.inputs[1].name == "c"]
    assert adds and all(n.inputs[1] is c2 for n in adds)
    assert chain2[-1].owner.inputs[1] is s2
    assert x2.name == "x" and s2.name == "s"
    np.testing.assert_array_equal(s2.get_value(), s.get_value())
    # the table of the pickle is gone, and the collector is on again
    assert not pickling._live()
    assert gc.isenabled()


@pytest.mark.parametrize("depth", [125, 1000])
def test_a_deep_variable_graph_computes_the_same_after_loading(chains, depth):
    x, s, _, y, _ = chains(depth)
    x2, y2 = pickle.loads(pickle.dumps((x, y)))
    xv = np.array([0.3, 0.7])
    np.testing.assert_allclose(y2.eval({x2: xv}), _reference(xv, s.get_value(), depth))
    np.testing.assert_allclose(y2.eval({x2: xv}), y.eval({x: xv}))


@pytest.mark.parametrize("depth", DEPTHS)
def test_a_deep_function_graph_round_trips(chains, depth):
    x, s, _, y, _ = chains(depth)
    fg = FunctionGraph([x, s], [y, pt.exp(y)])
    fg2 = pickle.loads(pickle.dumps(fg))
    assert len(fg2.apply_nodes) == len(fg.apply_nodes) == depth + 1
    assert equal_computations(fg.outputs, fg2.outputs, fg.inputs, fg2.inputs)
    assert all(v in fg2.variables for v in fg2.inputs)
    # clients are those of the loaded nodes, and the features are attached again
    out = fg2.outputs[0]
    assert [n.op for n, _ in fg2.clients[out]] == [n.op for n, _ in fg.clients[fg.outputs[0]]]
    assert all(n in fg2.apply_nodes for n, _ in fg2.clients[fg2.inputs[0]])
    assert [type(f) for f in fg2._features] == [type(f) for f in fg._features]
    assert "_pickle_order" not in fg2.__dict__
    fg2.replace(fg2.outputs[1], pt.log(out))  # it is a working graph
    assert fg2.outputs[1].owner.op == pt.log(out).owner.op
    if depth <= 1000:
        fg2.check_integrity()


def _compiled(chains, depth: int):
    x, s, _, y, _ = chains(depth)
    mode = None if depth <= 1000 else Mode(optimizer=None)  # 100k: rewriting alone is slow
    return x, s, function([x], [y, y.sum()], updates={s: s + 1}, mode=mode, name="deep")


@pytest.mark.parametrize("depth", DEPTHS)
def test_a_deep_compiled_function_round_trips_and_keeps_updating(chains, depth, monkeypatch):
    x, s, f = _compiled(chains, depth)
    s.set_value(np.array([0.1, -0.2]))
    blob = pickle.dumps((f, s))
    # loading relinks the stored, rewritten graph: no rewrite runs again
    monkeypatch.setattr(mode_module.RewriteQuery, "__call__", _forbidden)
    g, s2 = pickle.loads(blob)
    monkeypatch.undo()
    assert g.name == "deep" and g.get_shared() == [s2] and s2 is not s
    xv = np.array([0.3, 0.7])
    for k in range(2):  # the copy's own shared variable moves on, the original's does not
        expected = _reference(xv, np.array([0.1, -0.2]) + k, depth)
        got = g(xv)
        np.testing.assert_allclose(got[0], expected, rtol=1e-12)
        np.testing.assert_allclose(got[1], expected.sum(), rtol=1e-12)
        np.testing.assert_allclose(s2.get_value(), np.array([0.1, -0.2]) + k + 1)
    np.testing.assert_array_equal(s.get_value(), [0.1, -0.2])
    first = f(xv)
    np.testing.assert_allclose(first[0], _reference(xv, np.array([0.1, -0.2]), depth), rtol=1e-12)
    assert not pickling._live() and gc.isenabled()


def _forbidden(*args, **kwargs):
    raise AssertionError("unpickling ran the rewrites again")


def test_identity_is_kept_across_one_pickle():
    # an intermediate pickled alone and inside a bigger graph is one object after loading
    x = pt.dvector("x")
    y = x
    for _ in range(500):
        y = pt.exp(y)
    z = y * 2
    for _ in range(500):
        z = pt.sin(z)
    for objs in [(y, z), (z, y), (z.owner, y, z), (y.owner, z.owner)]:
        loaded = pickle.loads(pickle.dumps(objs))
        by_id = {id(o): o2 for o, o2 in zip(objs, loaded)}
        y2 = by_id[id(y)] if id(y) in by_id else by_id[id(y.owner)].outputs[0]
        z2 = by_id[id(z)] if id(z) in by_id else by_id[id(z.owner)].outputs[0]
        if id(z) in by_id and id(z.owner) in by_id:
            assert by_id[id(z.owner)].outputs[0] is z2
        v = z2
        while v.owner.op != (y * 2).owner.op:
            v = v.owner.inputs[0]
        assert v.owner.inputs[0] is y2


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_every_protocol(protocol):
    x = pt.dscalar("x")
    y = x
    for _ in range(1000):
        y = pt.cos(y)
    x2, y2 = pickle.loads(pickle.dumps((x, y), protocol=protocol))
    assert equal_computations([y], [y2], [x], [x2])
    assert float(y2.eval({x2: 0.5})) == float(y.eval({x: 0.5}))


def test_deepcopy_and_copy_of_a_deep_graph():
    x = pt.dvector("x")
    y = x
    for _ in range(5000):
        y = pt.exp(y)
    y.name = "top"
    x2, y2 = copy.deepcopy((x, y))
    assert equal_computations([y], [y2], [x], [x2]) and y2.name == "top"
    assert y2.owner.outputs[0] is y2  # the copy is one consistent graph
    shallow = copy.copy(y)
    assert shallow is not y and shallow.owner is y.owner and shallow.name == "top"
    node = copy.copy(y.owner)
    assert node is not y.owner and node.inputs == y.owner.inputs and node.op == y.owner.op
    assert not pickling._live()


def test_pickling_a_deep_graph_with_gc_off_leaves_it_off():
    x = pt.dvector("x")
    y = x
    for _ in range(2000):
        y = pt.exp(y)
    gc.disable()
    try:
        pickle.loads(pickle.dumps(y))
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_relinking_a_loaded_function_pauses_the_collector(monkeypatch):
    # the relink allocates a cell, a thunk and closures per node and frees none: the
    # collector is paused for it, by any linker and outside pickle.loads too
    from arignote.compile.executor import Function
    from arignote.compile.maker import FunctionMaker

    x = pt.dvector("x")
    f = function([x], pt.exp(x) + 1, name="relinked")
    seen = []
    link = FunctionMaker.link

    def spy(self, containers):
        seen.append(gc.isenabled())
        return link(self, containers)

    monkeypatch.setattr(FunctionMaker, "link", spy)
    g = Function.__new__(Function)
    g.__setstate__(f.__getstate__())  # a relink outside a load
    h = pickle.loads(pickle.dumps(f))
    assert seen == [False, False] and gc.isenabled()
    for fn in (g, h):
        np.testing.assert_allclose(fn(np.zeros(2)), [2.0, 2.0])
