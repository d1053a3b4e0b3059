"""scan's forward API against NumPy loops: sequences and taps, recurrent outputs and
taps, non-sequences, n_steps rules, go_backwards, several outputs, shared-variable
updates, random draws, nested scans, zero-length loops, until, the views, and the
build-time errors."""

from __future__ import annotations

import numpy as np
import pytest

import arignote
import arignote.tensor as pt
from arignote.scan.basic import scan as scan_at_path
from arignote.scan.op import Scan
from arignote.scan.utils import until

RNG = np.random.default_rng(0)


def f64(x):
    return pt.constant(np.float64(x))


def test_top_level_names():
    assert arignote.scan is scan_at_path
    for name in ("map", "reduce", "foldl", "foldr"):
        assert callable(getattr(arignote, name))
    from arignote.scan.checkpoints import scan_checkpoints
    from arignote.scan.views import foldl, foldr, map, reduce

    assert arignote.map is map and arignote.reduce is reduce and arignote.foldl is foldl
    assert arignote.foldr is foldr and callable(scan_checkpoints)


def test_sequence_and_recurrence_match_numpy_loop():
    x = pt.dmatrix("x")
    h0 = pt.dvector("h0")
    W = pt.dmatrix("W")
    hs, updates = arignote.scan(
        lambda xt, h, W: pt.tanh(xt + pt.dot(h, W)), sequences=[x], outputs_info=[h0], non_sequences=[W]
    )
    assert updates == {}
    f = arignote.function([x, h0, W], hs)
    xv, h0v, Wv = RNG.normal(size=(6, 3)), RNG.normal(size=3), RNG.normal(size=(3, 3))
    h, expected = h0v, []
    for t in range(6):
        h = np.tanh(xv[t] + h @ Wv)
        expected.append(h)
    np.testing.assert_allclose(f(xv, h0v, Wv), np.array(expected))


def test_sequence_taps():
    v = pt.dvector("v")
    zs, _ = arignote.scan(lambda a, b, c: a + 10 * b + 100 * c, sequences=[{"input": v, "taps": [-2, 0, 1]}])
    xv = np.arange(8.0)
    expected = [xv[t - 2] + 10 * xv[t] + 100 * xv[t + 1] for t in range(2, 7)]
    np.testing.assert_allclose(arignote.function([v], zs)(xv), expected)
    only_ahead, _ = arignote.scan(lambda a: a, sequences=[{"input": v, "taps": [1]}])
    np.testing.assert_allclose(arignote.function([v], only_ahead)(xv), xv[1:])


@pytest.mark.parametrize("taps", [[-2, -1], [-1, -2], [-3, -1]])
def test_recurrent_taps_in_the_given_order(taps):
    init = pt.dvector("init")
    ws, _ = arignote.scan(lambda a, b: a - 2 * b, outputs_info=[{"initial": init, "taps": taps}], n_steps=5)
    L = -min(taps)
    iv = RNG.normal(size=L)
    hist = list(iv)
    for _ in range(5):
        a, b = (hist[len(hist) + tap] for tap in taps)
        hist.append(a - 2 * b)
    np.testing.assert_allclose(arignote.function([init], ws)(iv), hist[L:])


def test_several_outputs_fib_and_nit_sot():
    x0 = pt.dscalar("x0")
    (a, b, sq), _ = arignote.scan(lambda x, y: [y, x + y, x * x], outputs_info=[x0, x0, None], n_steps=5)
    av, bv, sqv = arignote.function([x0], [a, b, sq])(1.0)
    x, y, A, B, S = 1.0, 1.0, [], [], []
    for _ in range(5):
        S.append(x * x)
        x, y = y, x + y
        A.append(x)
        B.append(y)
    np.testing.assert_allclose(av, A)
    np.testing.assert_allclose(bv, B)
    np.testing.assert_allclose(sqv, S)


def test_n_steps_rules():
    k = pt.iscalar("k")
    x0 = pt.dscalar("x0")
    xs, _ = arignote.scan(lambda x: x * 2, outputs_info=[x0], n_steps=k)
    f = arignote.function([x0, k], xs)
    np.testing.assert_allclose(f(1.0, 3), [2.0, 4.0, 8.0])
    # zero or negative: no step, an empty result (PyTensor's rule)
    assert f(1.0, 0).shape == (0,) and f(1.0, -2).shape == (0,)
    v = pt.dvector("v")
    ys, _ = arignote.scan(lambda a: a * 2, sequences=[v], n_steps=k)
    g = arignote.function([v, k], ys)
    np.testing.assert_allclose(g(np.arange(5.0), 2), [0.0, 2.0])  # n_steps shorter
    np.testing.assert_allclose(g(np.arange(3.0), 10), [0.0, 2.0, 4.0])  # the sequence shorter


@pytest.mark.parametrize("mode", ["FAST_RUN", "FAST_COMPILE", "NUMBA"])
def test_zero_length_sequences_and_shapes(mode):
    if mode == "NUMBA":
        pytest.importorskip("numba")
    m = pt.dmatrix("m")
    ys, _ = arignote.scan(lambda a: pt.outer(a, a), sequences=[m])
    g = arignote.function([m], [ys, ys.sum(axis=0)], mode=mode)
    # no step: the rows are shaped as a step's would be (shape inference of the step), so
    # that a sum over the steps is a matrix of zeros, as with JAX's lax.scan
    empty, total = g(np.ones((0, 3)))
    assert empty.shape == (0, 3, 3)
    np.testing.assert_array_equal(total, np.zeros((3, 3)))
    assert g(np.ones((2, 3)))[0].shape == (2, 3, 3)
    # a step that returns a non-sequence as it is (the loop-invariant product moved out)
    v, k = pt.dvector("v"), pt.iscalar("k")
    zs, _ = arignote.scan(lambda v: pt.outer(v, v), non_sequences=[v], n_steps=k)
    assert arignote.function([v, k], zs, mode=mode)(np.ones(4), 0).shape == (0, 4, 4)
    # a length that depends on the values of the step's inputs: unknown, 0
    xs = pt.lvector("xs")
    rs, _ = arignote.scan(lambda x: pt.arange(x), sequences=[xs])
    assert arignote.function([xs], rs, mode=mode)(np.zeros(0, dtype="int64")).shape == (0, 0)
    k = pt.iscalar("k")
    hs, _ = arignote.scan(lambda h: h * 2, outputs_info=[m], n_steps=k)
    assert arignote.function([m, k], hs)(np.ones((2, 3)), 0).shape == (0, 2, 3)


def test_go_backwards():
    q = pt.dvector("q")
    x0 = pt.dscalar("x0")
    ys, _ = arignote.scan(lambda a, b: a + b, sequences=[q], outputs_info=[x0], go_backwards=True)
    np.testing.assert_allclose(arignote.function([q, x0], ys)(np.arange(4.0), 0.0), [3.0, 5.0, 6.0, 6.0])


def test_until_stops_after_the_true_step():
    x0 = pt.dscalar("x0")
    ys, _ = arignote.scan(lambda a: (a * 2, until(a > 10)), outputs_info=[x0], n_steps=10)
    np.testing.assert_allclose(arignote.function([x0], ys)(1.0), [2.0, 4.0, 8.0, 16.0, 32.0])
    np.testing.assert_allclose(arignote.function([x0], ys)(100.0), [200.0])


def test_shared_variable_updates_in_the_loop():
    s = arignote.shared(np.float64(0.0), name="s")
    q = pt.dvector("q")
    ys, up = arignote.scan(lambda a: (a + s, {s: s + 1}), sequences=[q])
    assert list(up) == [s]
    f = arignote.function([q], ys, updates=up)
    np.testing.assert_allclose(f(np.ones(3)), [1.0, 2.0, 3.0])
    assert s.get_value() == 3.0
    assert f(np.ones(0)).shape == (0,) and s.get_value() == 3.0


def test_shared_variable_read_only_is_an_implicit_non_sequence():
    W = arignote.shared(np.arange(3.0), name="W")
    q = pt.dvector("q")
    ys, up = arignote.scan(lambda a: a * W, sequences=[q])
    assert up == {}
    np.testing.assert_allclose(arignote.function([q], ys)(np.array([1.0, 2.0])), [[0, 1, 2], [0, 2, 4]])


def test_outer_variable_captured_by_the_step():
    q = pt.dvector("q")
    c = pt.dscalar("c")
    ys, _ = arignote.scan(lambda a: a * c, sequences=[q])
    np.testing.assert_allclose(arignote.function([q, c], ys)(np.arange(3.0), 2.0), [0.0, 2.0, 4.0])


def test_random_stream_inside_the_loop():
    srng = pt.random.RandomStream(1)
    q = pt.dvector("q")
    ys, up = arignote.scan(lambda a: a + srng.normal(), sequences=[q])
    assert len(up) == 1
    f = arignote.function([q], ys, updates=up)
    first, second = f(np.zeros(4)), f(np.zeros(4))
    assert len(set(first.tolist())) == 4  # a new draw each step
    assert not np.allclose(first, second)  # and the generator moved on between calls


def test_explicit_generator_carried_through():
    rng = arignote.shared(np.random.default_rng(5), name="rng")

    def step(r):
        next_r, x = pt.random.normal(0.0, 1.0, rng=r, return_next_rng=True)
        return next_r, x

    (rngs, xs), _ = arignote.scan(step, outputs_info=[rng, None], n_steps=4)
    values = arignote.function([], xs)()
    expected = np.random.default_rng(5)
    np.testing.assert_allclose(values, [expected.normal() for _ in range(4)])


def test_nested_scans():
    m = pt.dmatrix("m")

    def row_sum(row):
        inner, _ = arignote.scan(lambda a, acc: acc + a, sequences=[row], outputs_info=[f64(0.0)])
        return inner[-1]

    ys, _ = arignote.scan(row_sum, sequences=[m])
    mv = RNG.normal(size=(3, 4))
    np.testing.assert_allclose(arignote.function([m], ys)(mv), mv.sum(axis=1))


def test_views():
    q = pt.dvector("q")
    x0 = pt.dscalar("x0")
    sq = arignote.map(lambda v: v * v, q, return_updates=False)
    r, _ = arignote.reduce(lambda a, b: a + b, sequences=[q], outputs_info=[x0])
    fl = arignote.foldl(lambda a, b: b - a, q, x0, return_updates=False)
    fr = arignote.foldr(lambda a, b: b - a, q, x0, return_updates=False)
    qv = np.array([1.0, 2.0, 4.0])
    out = arignote.function([q, x0], [sq, r, fl, fr])(qv, 0.5)
    np.testing.assert_allclose(out[0], qv**2)
    assert float(out[1]) == 7.5
    acc = 0.5
    for a in qv:
        acc = acc - a
    assert float(out[2]) == acc
    acc = 0.5
    for a in qv[::-1]:
        acc = acc - a
    assert float(out[3]) == acc


def test_return_forms():
    q = pt.dvector("q")
    only = arignote.scan(lambda a: a * 2, sequences=[q], return_updates=False)
    assert only.type.ndim == 1
    listed, _ = arignote.scan(lambda a: a * 2, sequences=[q], return_list=True)
    assert isinstance(listed, list) and len(listed) == 1


def test_one_compiled_inner_function_reused():
    x0 = pt.dscalar("x0")
    xs, _ = arignote.scan(lambda x: x + 1, outputs_info=[x0], n_steps=50)
    # (FAST_RUN: the Python loop, which keeps loop_stats; a whole-graph Numba function runs
    # its own compiled loop)
    f = arignote.function([x0], xs, mode="FAST_RUN")
    f(0.0)
    node = next(n for n in f.maker.fgraph.apply_nodes if isinstance(n.op, Scan))
    fn = node.op.fn
    f(1.0)
    assert node.op.fn is fn
    assert node.op.loop_stats["steps"] == 100 and node.op.loop_stats["calls"] == 2


def test_infer_shape_without_running():
    q = pt.dvector("q")
    x0 = pt.dvector("x0")
    ys, _ = arignote.scan(lambda a, h: h + a, sequences=[q], outputs_info=[x0])
    f = arignote.function([q, x0], ys.shape)
    assert not any(isinstance(n.op, Scan) for n in f.maker.fgraph.apply_nodes)
    np.testing.assert_array_equal(f(np.arange(4.0), np.zeros(4)), [4, 4])


# --- errors --------------------------------------------------------------------------------------


def test_error_wrong_number_of_outputs_names_the_function():
    x0 = pt.dscalar("x0")

    def two(a):
        return [a, a]

    with pytest.raises(ValueError, match=r"two .*returned 2 output\(s\), but outputs_info has 1 entry"):
        arignote.scan(two, outputs_info=[x0], n_steps=3)


def test_error_output_not_a_variable():
    with pytest.raises(TypeError, match="output 0 of the step function .* is str"):
        arignote.scan(lambda: "nope", n_steps=3)


def test_error_dtype_mismatch_says_how_to_fix():
    x0 = pt.dscalar("x0")
    with pytest.raises(
        TypeError, match=r"output 0 .*dtype float32 where the initial value has dtype float64.*pt.cast"
    ):
        arignote.scan(lambda a: pt.cast(a, "float32"), outputs_info=[x0], n_steps=3)


def test_error_ndim_mismatch():
    x0 = pt.dscalar("x0")
    with pytest.raises(TypeError, match=r"output 0 .*1 dimension\(s\) where the initial value has 0"):
        arignote.scan(lambda a: pt.stack([a, a]), outputs_info=[x0], n_steps=3)


def test_error_static_shape_mismatch_mentions_specify_shape():
    x0 = pt.specify_shape(pt.dvector("x0"), (3,))
    with pytest.raises(TypeError, match="specify_shape"):
        arignote.scan(lambda a: pt.concatenate([a, a]), outputs_info=[x0], n_steps=3)


def test_error_strict_with_unlisted_shared_variable():
    W = arignote.shared(np.ones(2), name="W")
    q = pt.dvector("q")
    with pytest.raises(ValueError, match=r"strict=True.*W"):
        arignote.scan(lambda a: a * W, sequences=[q], strict=True)
    ys, _ = arignote.scan(lambda a, W: a * W, sequences=[q], non_sequences=[W], strict=True)
    np.testing.assert_allclose(arignote.function([q], ys)(np.ones(1)), [[1.0, 1.0]])


def test_error_no_sequences_no_n_steps():
    with pytest.raises(ValueError, match="give sequences or n_steps"):
        arignote.scan(lambda: f64(1.0))


def test_error_state_changes_shape_at_run_time():
    x0 = pt.dvector("x0")
    xs, _ = arignote.scan(lambda a: a[:-1], outputs_info=[x0], n_steps=2)
    f = arignote.function([x0], xs)
    with pytest.raises(ValueError, match="keeps one shape for all steps"):
        f(np.ones(3))


def test_error_positive_recurrent_tap():
    x0 = pt.dvector("x0")
    with pytest.raises(ValueError, match="must be negative"):
        arignote.scan(lambda a: a, outputs_info=[{"initial": x0, "taps": [1]}], n_steps=2)


def test_dprint_shows_the_inner_graph():
    x0 = pt.dscalar("x0")
    xs, _ = arignote.scan(lambda a: a * 2, outputs_info=[x0], n_steps=3, name="doubler")
    text = arignote.dprint(xs, file="str")
    assert "Scan{doubler}" in text and "Inner graphs:" in text and "Mul" in text


def test_the_same_variable_returned_twice():
    q = pt.dvector("q")

    def step(a):
        y = a * 2
        return y, y

    (u, v), _ = arignote.scan(step, sequences=[q])
    out = arignote.function([q], [u, v])(np.arange(3.0))
    np.testing.assert_allclose(out[0], [0.0, 2.0, 4.0])
    np.testing.assert_allclose(out[1], [0.0, 2.0, 4.0])


def test_scan_op_splits_inputs_and_outputs_by_role():
    from arignote.scan.op import Scan

    seq, x0, w = pt.dmatrix("seq"), pt.dvector("x0"), pt.dscalar("w")
    rec, tot = arignote.scan(
        lambda s, r, w: (s * w + r, r.sum()),
        sequences=[seq],
        outputs_info=[x0, None],
        non_sequences=[w],
        return_updates=False,
    )
    node = rec.owner
    while not isinstance(node.op, Scan):
        node = node.inputs[0].owner
    op = node.op
    assert (op.n_outer_inputs, op.n_outer_outputs) == (len(node.inputs), len(node.outputs)) == (4, 2)
    assert op.outer_seqs(node.inputs) == [seq] and op.outer_non_seqs(node.inputs) == [w]
    assert op.outer_nitsot_outs(node.outputs) == [node.outputs[1]]
    (s_t,) = op.inner_seqs(op.inner_inputs)
    (w_in,) = op.inner_non_seqs(op.inner_inputs)
    (total,) = op.inner_nitsot_outs(op.inner_outputs)
    assert s_t.type.ndim == 1 and w_in.type.ndim == 0 and total.type.ndim == 0
    with pytest.raises(ValueError, match="Expected the 4 outer inputs"):
        op.outer_seqs(node.inputs[:2])
    # the roles agree with the values NumPy computes for the loop
    s, x, wv = np.arange(6.0).reshape(3, 2), np.array([1.0, -1.0]), 2.0
    got_rec, got_tot = arignote.function([seq, x0, w], [rec, tot])(s, x, wv)
    states = [x]
    for row in s:
        states.append(row * wv + states[-1])
    np.testing.assert_allclose(got_rec, states[1:])
    np.testing.assert_allclose(got_tot, [st.sum() for st in states[:-1]])
