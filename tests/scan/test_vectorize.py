"""``vectorize_graph`` of a scan: one batched loop (a Scan whose step is vectorised), not a
per-row fallback; values against NumPy loops over the rows."""

from __future__ import annotations

import numpy as np
import pytest

import arignote
import arignote.tensor as pt
from arignote.graph.replace import vectorize_graph
from arignote.scan.op import Scan
from arignote.scan.utils import until
from arignote.tensor.batching import Batched

RNG = np.random.default_rng(7)


def _nodes(outputs) -> list:
    from arignote.graph.traversal import io_toposort

    outs = outputs if isinstance(outputs, list) else [outputs]
    return io_toposort([], outs)


def _one_batched_scan(outputs) -> Scan:
    nodes = _nodes(outputs)
    assert not any(isinstance(n.op, Batched) for n in nodes)  # not the per-row fallback
    (scan,) = [n.op for n in nodes if isinstance(n.op, Scan)]
    return scan


def test_sequence_initial_value_and_non_sequence_batched() -> None:
    x, h0, w = pt.dmatrix("x"), pt.dvector("h0"), pt.dmatrix("w")
    hs, _ = arignote.scan(
        lambda xt, h, w: pt.tanh(pt.dot(h, w) + xt), sequences=[x], outputs_info=[h0], non_sequences=[w]
    )
    X, H0, W = pt.dtensor3("X"), pt.dmatrix("H0"), pt.dtensor3("W")
    HS = vectorize_graph(hs, {x: X, h0: H0, w: W})
    scan = _one_batched_scan(HS)
    assert scan.inner_inputs[0].type.ndim == 2  # each step works on the whole batch
    B, T, D = 3, 5, 4
    Xv, H0v, Wv = RNG.normal(size=(B, T, D)), RNG.normal(size=(B, D)), RNG.normal(size=(B, D, D)) * 0.5
    got = arignote.function([X, H0, W], HS)(Xv, H0v, Wv)
    want = np.empty((B, T, D))
    for r in range(B):
        h = H0v[r]
        for t in range(T):
            h = np.tanh(h @ Wv[r] + Xv[r, t])
            want[r, t] = h
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_only_the_non_sequence_batched_makes_the_state_batched() -> None:
    x0, a = pt.dscalar("x0"), pt.dscalar("a")
    xs, _ = arignote.scan(lambda x, a: x * a + 1.0, outputs_info=[x0], non_sequences=[a], n_steps=6)
    A = pt.dvector("A")
    XS = vectorize_graph(xs, {a: A})
    _one_batched_scan(XS)
    Av = np.array([0.5, -1.0, 2.0])
    got = arignote.function([x0, A], XS)(0.25, Av)
    want = np.empty((3, 6))
    for r, av in enumerate(Av):
        x = 0.25
        for t in range(6):
            x = x * av + 1.0
            want[r, t] = x
    np.testing.assert_allclose(got, want)


def test_taps_unbatched_outputs_and_a_state_batched_by_its_initial_value_alone() -> None:
    x = pt.dvector("x")
    f0 = pt.dvector("f0")  # two initial rows of a second-order recurrence
    c0 = pt.dscalar("c0")

    def step(xm1, xt, fm2, fm1, c):
        return fm1 + fm2 * 0.5 + xt - xm1, c * 2.0, xt * 3.0

    (fs, cs, ys), _ = arignote.scan(
        step,
        sequences=[{"input": x, "taps": [-1, 0]}],
        outputs_info=[{"initial": f0, "taps": [-2, -1]}, c0, None],
    )
    F0, C0 = pt.dmatrix("F0"), pt.dvector("C0")
    FS, CS, YS = vectorize_graph([fs, cs, ys], {f0: F0, c0: C0})
    scan = _one_batched_scan([FS, CS, YS])
    assert scan.inner_outputs[2].type.ndim == 0  # reads nothing batched: not batched in the loop
    xv = RNG.normal(size=6)
    F0v, C0v = RNG.normal(size=(2, 2)), np.array([1.0, -3.0])
    got_f, got_c, got_y = arignote.function([x, F0, C0], [FS, CS, YS])(xv, F0v, C0v)
    assert got_f.shape == (2, 5) and got_c.shape == (2, 5)
    for r in range(2):
        f = list(F0v[r])
        c = C0v[r]
        for t in range(1, 6):
            f.append(f[-1] + f[-2] * 0.5 + xv[t] - xv[t - 1])
            c = c * 2.0
            np.testing.assert_allclose(got_f[r, t - 1], f[-1])
            np.testing.assert_allclose(got_c[r, t - 1], c)
    np.testing.assert_allclose(got_y, np.stack([xv[1:] * 3.0] * 2))  # (repeated over the batch)


def test_several_batch_dimensions_and_a_gradient() -> None:
    x, h0 = pt.dvector("x"), pt.dscalar("h0")
    hs, _ = arignote.scan(lambda xt, h: h * 0.9 + xt**2, sequences=[x], outputs_info=[h0])
    total = hs.sum()
    g = arignote.grad(total, x)  # the gradient is a scan too: vectorised the same way
    X = pt.dtensor3("X")  # (2, 3) batch of sequences of 4
    TOT, G = vectorize_graph([total, g], {x: X})
    Xv = RNG.normal(size=(2, 3, 4))
    got_t, got_g = arignote.function([X, h0], [TOT, G])(Xv, 0.5)
    single = arignote.function([x, h0], [total, g])
    for i in range(2):
        for j in range(3):
            t, gr = single(Xv[i, j], 0.5)
            np.testing.assert_allclose(got_t[i, j], t)
            np.testing.assert_allclose(got_g[i, j], gr)


def test_until_on_unbatched_values_stays_one_loop() -> None:
    x0, a = pt.dscalar("x0"), pt.dvector("a")
    # the stop depends on the step count only (through an unbatched state)
    (xs, ks), _ = arignote.scan(
        lambda x, k, a: (x * a, k + 1, until(k + 1 >= 3)),
        outputs_info=[pt.zeros(2) + x0, pt.constant(np.int64(0))],
        non_sequences=[a],
        n_steps=10,
    )
    A = pt.dmatrix("A")
    XS = vectorize_graph(xs, {a: A})
    _one_batched_scan(XS)
    Av = RNG.normal(size=(4, 2))
    got = arignote.function([x0, A], XS)(1.5, Av)
    np.testing.assert_allclose(got, np.stack([1.5 * np.stack([r, r**2, r**3]) for r in Av]))


def test_batched_stop_condition_falls_back_to_a_loop_per_row() -> None:
    x0, lim = pt.dscalar("x0"), pt.dscalar("lim")
    xs, _ = arignote.scan(
        lambda x, lim: (x * 2.0, until(x * 2.0 > lim)), outputs_info=[x0], non_sequences=[lim], n_steps=20
    )
    LIM = pt.dvector("LIM")
    last = vectorize_graph(xs[-1], {lim: LIM})
    assert any(isinstance(n.op, Batched) for n in _nodes(last))
    # (rows stopping at different steps would give rows of different lengths)
    np.testing.assert_allclose(arignote.function([x0, LIM], last)(1.0, np.array([3.0, 3.5])), [4.0, 4.0])


@pytest.mark.parametrize("go_backwards", [False, True])
def test_map_and_reverse_against_numpy(go_backwards: bool) -> None:
    v, s = pt.dvector("v"), pt.dscalar("s")
    cs, _ = arignote.scan(
        lambda e, acc, s: acc + e * s,
        sequences=[v],
        outputs_info=[pt.constant(np.float64(0.0))],
        non_sequences=[s],
        go_backwards=go_backwards,
    )
    V, S = pt.dmatrix("V"), pt.dvector("S")
    CS = vectorize_graph(cs, {v: V, s: S})
    _one_batched_scan(CS)
    Vv, Sv = RNG.normal(size=(3, 7)), np.array([1.0, 2.0, -0.5])
    rows = Vv[:, ::-1] if go_backwards else Vv
    np.testing.assert_allclose(arignote.function([V, S], CS)(Vv, Sv), np.cumsum(rows * Sv[:, None], axis=1))
