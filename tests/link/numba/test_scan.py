"""Scan loops compiled whole under the Numba tier, against the Python loop (``mode="PYTHON"``).

The loops with a stop condition, with outputs kept only as their last rows and the RNN's
gradient (whose accumulators keep their last row) run inside the whole-graph Numba function;
a loop that carries a random generator stays on the Python loop, with the same draws. Few
graphs, each holding several loops: a Numba compile costs seconds (about 10 s of CPU for
the RNN's gradient), so the module keeps its kernels between runs (``kept_kernel_cache``):
a first run compiles them, later runs load them.
"""

from __future__ import annotations

import numpy as np
import pytest

import arignote
import arignote.tensor as pt
from arignote.gradient import grad
from arignote.scan.op import Scan
from arignote.scan.utils import until

numba = pytest.importorskip("numba")


pytestmark = pytest.mark.usefixtures("kept_kernel_cache")


def _pair(inputs, outputs):
    """The function under the Numba tier (its whole graph compiled) and the Python loop's."""
    f = arignote.function(inputs, outputs, mode="NUMBA")
    assert f.vm.whole.state == "in use", f.vm.whole.reason
    return f, arignote.function(inputs, outputs, mode="PYTHON")


def _scans_of(f) -> list[Scan]:
    return [n.op for n in f.maker.fgraph.toposort() if isinstance(n.op, Scan)]


def _same(got, want, rtol=1e-12):
    for k, (g, w) in enumerate(zip(got, want)):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype and g.shape == w.shape, (k, g.dtype, w.dtype, g.shape, w.shape)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol, err_msg=f"output {k}")


def test_stop_conditions_and_last_rows_compiled():
    x0, lim, a = pt.dscalar("x0"), pt.dscalar("lim"), pt.dscalar("a")
    M, M2, acc0, y0 = pt.dmatrix("M"), pt.dmatrix("M2"), pt.dvector("acc0"), pt.dvector("y0")
    n, m = pt.lscalar("n"), pt.lscalar("m")
    # stops after the first step whose condition holds (that step included), or after n
    doubling, _ = arignote.scan(lambda x: (x * 2, until(x * 2 > lim)), outputs_info=[x0], n_steps=n)
    # a vector state and a stacked output (not fed back), over a matrix's rows, stopping early
    (accs, sums), _ = arignote.scan(
        lambda row, acc: ([acc + row, pt.sum(row**2)], until(pt.sum(acc + row) > lim)),
        sequences=[M],
        outputs_info=[acc0, None],
    )
    # only the last rows read: the loops keep a ring of them (m >= 3 steps: rows to read)
    xs, _ = arignote.scan(lambda x, a: x * a + 1.0, outputs_info=[x0], non_sequences=[a], n_steps=m)
    fib, _ = arignote.scan(
        lambda y2, y1: y1 + 0.5 * y2, outputs_info=[{"initial": y0, "taps": [-2, -1]}], n_steps=m
    )
    (states, rows), _ = arignote.scan(
        lambda row, acc: [acc * 0.5 + row, pt.exp(row)], sequences=[M2], outputs_info=[acc0, None]
    )
    # a stop condition and the last row only
    last_doubling, _ = arignote.scan(lambda x: (x * 3, until(x * 3 > lim)), outputs_info=[x0], n_steps=n)
    ins = [x0, lim, a, M, M2, acc0, y0, n, m]
    outs = [doubling, accs, sums, xs[-1], fib[-1], fib[-3], states[-1], rows[-2], last_doubling[-1]]
    f, ref = _pair(ins, outs)
    infos = [op.info for op in _scans_of(f)]
    assert sum(i.as_while for i in infos) == 3 and sum(any(i.keep) for i in infos) == 4
    source = f.vm.whole.source
    assert "if stop:" in source and "% " in source
    rng = np.random.default_rng(5)
    mat = rng.normal(size=(6, 3)) + 0.5
    y0 = np.array([0.5, -1.0])
    cases = [(1.0, 10.0, 50, 3), (1.0, 1e9, 7, 9), (11.0, 10.0, 4, 4), (1.0, 10.0, 1, 20), (1.0, 10.0, 0, 5)]
    for x, limit, steps, kept in cases:
        _same(
            f(x, limit, 0.9, mat, mat[:kept], np.zeros(3), y0, steps, kept),
            ref(x, limit, 0.9, mat, mat[:kept], np.zeros(3), y0, steps, kept),
        )
    # no row of the matrix: zero steps, empty outputs of the Python loop's shapes
    args = [1.0, 10.0, 0.9, np.zeros((0, 3)), mat, np.zeros(3), y0, 3, 3]
    _same(f(*args), ref(*args))


def test_rnn_gradient_compiled_matches_the_python_loop():
    x, h0 = pt.tensor3("x", dtype="float64"), pt.dmatrix("h0")
    W, U = pt.dmatrix("W"), pt.dmatrix("U")
    hs, _ = arignote.scan(
        lambda xt, h, W, U: pt.tanh(pt.dot(xt, U) + pt.dot(h, W)),
        sequences=[x],
        outputs_info=[h0],
        non_sequences=[W, U],
    )
    cost = (hs**2).mean()
    f, ref = _pair([x, h0, W, U], [cost, *grad(cost, [W, U, h0])])
    assert any(any(op.info.keep) for op in _scans_of(f))  # (the gradient's accumulators)
    rng = np.random.default_rng(0)
    for T in (5, 1):
        args = [
            rng.normal(size=(T, 2, 3)),
            rng.normal(size=(2, 3)),
            rng.normal(size=(3, 3)),
            rng.normal(size=(3, 3)),
        ]
        _same(f(*args), ref(*args))


def test_a_loop_carrying_a_random_generator_stays_on_the_python_loop():
    from arignote.tensor.random.utils import RandomStream

    srng = RandomStream(seed=7)
    x0 = pt.dscalar("x0")
    xs, updates = arignote.scan(lambda x: x + srng.normal(0.0, 1.0), outputs_info=[x0], n_steps=5)
    f = arignote.function([x0], xs, updates=updates, mode="NUMBA")
    assert f.vm.whole.state.startswith("tier 1") and "RandomGeneratorType" in f.vm.whole.reason
    srng2 = RandomStream(seed=7)
    ys, updates2 = arignote.scan(lambda x: x + srng2.normal(0.0, 1.0), outputs_info=[x0], n_steps=5)
    g = arignote.function([x0], ys, updates=updates2, mode="PYTHON")
    # the same stream, call after call
    for _ in range(2):
        np.testing.assert_array_equal(f(0.0), g(0.0))


def test_a_profiled_loop_stays_on_the_python_loop():
    # the Python loop is what fills the profile asked for: compiled, it would report 0 steps
    x0 = pt.dscalar("x0")
    xs, _ = arignote.scan(lambda x: x + 1, outputs_info=[x0], n_steps=20, profile=True, name="count")
    f = arignote.function([x0], xs, mode="NUMBA")
    assert f.vm.whole.state.startswith("tier 1") and "profile=True" in f.vm.whole.reason
    np.testing.assert_array_equal(f(0.0), np.arange(1.0, 21.0))
    (op,) = _scans_of(f)
    assert op.loop_stats["steps"] == 20 and "20 step(s)" in op.loop_summary()


def test_a_compiled_step_gets_read_only_and_strided_inputs_made_contiguous_once_per_call(monkeypatch):
    # the rows of a transposed sequence are strided and a non-sequence may be a read-only
    # array: the Python loop gives its whole-graph Numba step writeable C-contiguous copies
    # made once per call, instead of a refused call and copies at every step
    import arignote.link.numba.whole as whole

    copies = []
    real = whole._contiguous
    monkeypatch.setattr(whole, "_contiguous", lambda v: copies.append(v) or real(v))
    X, h0, c = pt.dmatrix("X"), pt.dvector("h0"), pt.dvector("c")
    hs, _ = arignote.scan(
        lambda x, h, c: pt.tanh(x * c + h),
        sequences=[X.T],
        outputs_info=[h0],
        non_sequences=[c],
        mode="NUMBA",
    )
    f = arignote.function([X, h0, c], hs, mode="FAST_RUN")  # (tier 1 outside: the Python loop)
    Xv, h = np.random.default_rng(0).normal(size=(3, 40)), np.array([0.1, 0.2, 0.3])
    cv = np.array([1.5, -2.0, 0.25])
    cv.flags.writeable = False
    got = f(Xv, h, cv)
    (op,) = _scans_of(f)
    assert op.fn.vm.whole.state == "in use", op.fn.vm.whole.reason
    want = []
    for row in Xv.T:
        h = np.tanh(row * cv + h)
        want.append(h)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert not copies
