"""MonitorMode: hooks before and after every node."""

from __future__ import annotations

import numpy as np
import pytest

import arignote
import arignote.tensor as pt
from arignote.compile import MonitorMode
from arignote.compile.debug.monitormode import detect_nan
from arignote.ifelse import ifelse


def test_hooks_see_every_node_in_order_with_its_values():
    events = []

    def pre(fgraph, i, node, fn):
        events.append(("pre", i, node, [c[0] for c in fn.inputs], [c[0] for c in fn.outputs]))

    def post(fgraph, i, node, fn):
        assert fgraph.toposort()[i] is node
        events.append(("post", i, node, [c[0] for c in fn.inputs], [np.copy(c[0]) for c in fn.outputs]))

    x = pt.dvector("x")
    f = arignote.function([x], pt.exp(x).sum() * 3.0, mode=MonitorMode(pre, post, optimizer=None))
    value = np.array([0.0, 1.0])
    assert np.isclose(f(value), 3 * np.exp(value).sum())
    topo = f.maker.fgraph.toposort()
    assert [e[:2] for e in events] == [(k, i) for i in range(len(topo)) for k in ("pre", "post")]
    exp_post = next(e for e in events if e[0] == "post" and str(e[2].op) == "Exp")
    np.testing.assert_array_equal(exp_post[3][0], value)  # the node's input
    np.testing.assert_allclose(exp_post[4][0], np.exp(value))  # and its output, once it ran
    events.clear()
    f(value)
    assert len(events) == 2 * len(topo)  # every call


def test_the_default_optimizer_is_fast_run_and_queries_keep_the_hooks():
    calls = []
    mode = MonitorMode(post_func=lambda fgraph, i, node, fn: calls.append(str(node.op)))
    x = pt.dvector("x")
    f = arignote.function([x], pt.log(1 + pt.exp(x)), mode=mode)  # rewritten to softplus
    np.testing.assert_allclose(f(np.array([1000.0])), [1000.0])
    assert calls and len(calls) == len(f.maker.fgraph.toposort())
    other = mode.excluding("fusion")
    assert isinstance(other, MonitorMode) and other.post_func is mode.post_func
    assert mode.query.include == {"fast_run"}
    with pytest.raises(TypeError, match="pre_func must be callable"):
        MonitorMode(pre_func=3)
    with pytest.raises(ValueError, match="runs the reference VM"):
        MonitorMode(linker="pygen")


def test_lazy_nodes_are_seen_once_per_call():
    seen = []
    a, b = pt.dscalar("a"), pt.dscalar("b")
    c = pt.dscalar("c")
    out = ifelse(pt.gt(c, 0), pt.exp(a), pt.log(b))
    mode = MonitorMode(
        pre_func=lambda fg, i, node, fn: seen.append(("pre", str(node.op))),
        post_func=lambda fg, i, node, fn: seen.append(("post", str(node.op))),
        optimizer=None,
    )
    f = arignote.function([a, b, c], out, mode=mode)
    assert np.isclose(f(0.0, 1.0, 1.0), 1.0)
    names = [name for _, name in seen]
    assert "Log" not in names  # the branch not taken did not run
    ifelse_events = [kind for kind, name in seen if name.startswith("if{")]
    assert ifelse_events == ["pre", "post"]


def test_detect_nan(capsys):
    x = pt.dvector("x")
    f = arignote.function([x], pt.log(x) * 2.0, mode=MonitorMode(post_func=detect_nan, optimizer=None))
    with np.errstate(invalid="ignore"):
        f(np.array([-1.0]))
    out = capsys.readouterr().out
    assert "*** NaN detected in output 0 of node" in out and "Log" in out
    f(np.array([1.0]))
    assert capsys.readouterr().out == ""
