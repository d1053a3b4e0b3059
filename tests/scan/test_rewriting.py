"""The scan rewrite rules, structurally (they fired) and numerically (same values as the
unrewritten graph); the loop's profile; vectorize_graph of a scan."""

from __future__ import annotations

import numpy as np

import arignote
import arignote.tensor as pt
from arignote.compile.mode import Mode
from arignote.graph.replace import vectorize_graph
from arignote.scan.op import Scan
from tests.modes import function  # FAST_RUN's rewrites, on the run's linker

RNG = np.random.default_rng(3)


def _scans(f):
    return [n for n in f.maker.fgraph.apply_nodes if isinstance(n.op, Scan)]


def _unrewritten(inputs, outputs):
    return function(inputs, outputs, mode=Mode(optimizer=None))


def test_last_value_keeps_only_the_last_rows():
    x0 = pt.dscalar("x0")
    xs, _ = arignote.scan(lambda x: x * 1.01 + 1.0, outputs_info=[x0], n_steps=1000)
    f = function([x0], xs[-1])
    (node,) = _scans(f)
    assert node.op.info.keep == (1,)
    assert node.outputs[0].type.shape[0] == 1
    assert float(f(0.5)) == float(_unrewritten([x0], xs[-1])(0.5))


def test_two_taps_back_keep_two_rows_and_full_use_keeps_all():
    init = pt.dvector("init")
    xs, _ = arignote.scan(lambda a, b: a + b, outputs_info=[{"initial": init, "taps": [-2, -1]}], n_steps=10)
    f = function([init], [xs[-1], xs[-2]])
    (node,) = _scans(f)
    assert node.op.info.keep == (2,)
    np.testing.assert_allclose(f(np.array([1.0, 1.0])), [144.0, 89.0])
    g = function([init], [xs[-1], xs.sum()])
    (node,) = _scans(g)
    assert node.op.info.keep == (0,)


def test_shared_update_keeps_only_its_last_value():
    s = arignote.shared(np.zeros(3), name="s")
    q = pt.dvector("q")
    ys, up = arignote.scan(lambda a: (a * 2, {s: s + a}), sequences=[q])
    f = function([q], ys, updates=up)
    (node,) = _scans(f)
    assert node.op.info.keep[0] == 1
    np.testing.assert_allclose(f(np.arange(4.0)), np.arange(4.0) * 2)
    np.testing.assert_allclose(s.get_value(), np.full(3, 6.0))


def test_invariants_pushed_out_of_the_loop():
    x, h0, W = pt.dmatrix("x"), pt.dvector("h0"), pt.dmatrix("W")
    hs, _ = arignote.scan(
        lambda xt, h, W: pt.tanh(xt + pt.dot(h, pt.exp(W).T)),
        sequences=[x],
        outputs_info=[h0],
        non_sequences=[W],
    )
    f = function([x, h0, W], hs)
    (node,) = _scans(f)
    inner_ops = {type(n.op).__name__ for n in node.op.fn.maker.fgraph.apply_nodes}
    assert "Exp" not in str(inner_ops) and not any("Transpose" in o for o in inner_ops)
    # W itself is read only by what was pushed out: no longer an input of the loop
    assert W not in node.inputs and node.op.info.n_non_seqs == 1
    args = [RNG.normal(size=(4, 3)), RNG.normal(size=3), RNG.normal(size=(3, 3))]
    np.testing.assert_allclose(f(*args), _unrewritten([x, h0, W], hs)(*args))


def test_unused_outputs_removed():
    x0 = pt.dscalar("x0")
    (a, b, c), _ = arignote.scan(lambda x, y: [y, x + y, x * 3], outputs_info=[x0, x0, None], n_steps=5)
    f = function([x0], c)
    (node,) = _scans(f)
    # c needs x, x needs y (its update reads y): only the nit-sot output b's state... all stay but c
    assert node.op.info.n_rec == 2 and node.op.info.n_nit_sot == 1
    g = function([x0], b)
    (node,) = _scans(g)
    assert node.op.info.n_nit_sot == 0
    np.testing.assert_allclose(g(1.0), [2.0, 3.0, 5.0, 8.0, 13.0])
    h = function([x0], a)
    np.testing.assert_allclose(h(1.0), [1.0, 2.0, 3.0, 5.0, 8.0])


def test_independent_state_removed():
    x0 = pt.dscalar("x0")
    (a, b), _ = arignote.scan(lambda x, y: [x * 2, y + 1], outputs_info=[x0, x0], n_steps=4)
    f = function([x0], a)
    (node,) = _scans(f)
    assert node.op.info.n_rec == 1
    np.testing.assert_allclose(f(1.0), [2.0, 4.0, 8.0, 16.0])


def test_profile_reports_time_per_step():
    x0 = pt.dscalar("x0")
    xs, _ = arignote.scan(lambda x: x + 1, outputs_info=[x0], n_steps=20, profile=True, name="count")
    f = function([x0], xs)
    f(0.0)
    (node,) = _scans(f)
    text = node.op.loop_summary()
    assert "Scan{count" in text and "20 step(s)" in text and "per step" in text
    assert node.op.fn.profile is not None


def test_vectorize_graph_of_a_scan():
    x, x0 = pt.dvector("x"), pt.dscalar("x0")
    ys, _ = arignote.scan(lambda a, h: h * 0.5 + a, sequences=[x], outputs_info=[x0])
    X, X0 = pt.dmatrix("X"), pt.dvector("X0")
    Y = vectorize_graph(ys, {x: X, x0: X0})
    Xv, X0v = RNG.normal(size=(3, 4)), RNG.normal(size=3)
    single = function([x, x0], ys)
    np.testing.assert_allclose(function([X, X0], Y)(Xv, X0v), [single(r, h) for r, h in zip(Xv, X0v)])


def test_loops_over_the_same_sequence_merged():
    x = pt.dvector("x")
    sq, _ = arignote.scan(lambda a: a * a, sequences=[x])
    cs, _ = arignote.scan(lambda a, acc: acc + a, sequences=[x], outputs_info=[pt.constant(np.float64(0.0))])
    f = function([x], [sq, cs])
    (node,) = _scans(f)
    assert node.op.info.n_rec == 1 and node.op.info.n_nit_sot == 1
    xv = RNG.normal(size=6)
    out = f(xv)
    np.testing.assert_allclose(out[0], xv**2)
    np.testing.assert_allclose(out[1], np.cumsum(xv))


def test_dependent_loops_not_merged():
    x = pt.dvector("x")
    sq, _ = arignote.scan(lambda a: a * a, sequences=[x])
    s2, _ = arignote.scan(lambda a, b: a + b.sum(), sequences=[x], non_sequences=[sq])
    f = function([x], s2)
    assert len(_scans(f)) == 2
    xv = RNG.normal(size=4)
    np.testing.assert_allclose(f(xv), xv + (xv**2).sum())


def test_dprint_of_a_profiled_function_shows_time_per_step():
    x0 = pt.dscalar("x0")
    xs, _ = arignote.scan(lambda x: x + 1, outputs_info=[x0], n_steps=30)
    f = function([x0], xs, profile=True)
    f(0.0)
    text = arignote.dprint(f, file="str")
    assert "[30 steps," in text and "us/step]" in text
    plain = function([x0], xs)
    plain(0.0)
    assert "us/step" not in arignote.dprint(plain, file="str")
