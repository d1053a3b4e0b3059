"""Scan in JAX (one ``jax.lax.scan``): taps, sequences, non-sequences, kept last rows, a
symbolic number of steps, compared with the reference VM; a while loop's length depends on
the values (eager only), and a random generator as a state is refused with the node named."""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")

import arignote  # noqa: E402
import arignote.tensor as pt  # noqa: E402
from arignote import function  # noqa: E402
from arignote.link.jax.dispatch import JAXNodeError  # noqa: E402
from arignote.scan.utils import until  # noqa: E402
from tests.link.jax.evaluate import REFERENCE, check_nodes  # noqa: E402


def same_as_reference(inputs, outputs, values) -> None:
    want = function(inputs, outputs, mode=REFERENCE)(*values)
    got = function(inputs, outputs, mode="JAX")(*values)
    for g, w in zip(got, want):
        assert np.shape(g) == np.shape(w)
        np.testing.assert_allclose(g, w, rtol=1e-12)


X0, SEQ, A = pt.dscalar("x0"), pt.dvector("seq"), pt.dscalar("a")


def test_recurrence_over_a_sequence_with_a_non_sequence() -> None:
    ys, _ = arignote.scan(lambda s, x, a: x * a + s, sequences=[SEQ], outputs_info=[X0], non_sequences=[A])
    same_as_reference([SEQ, X0, A], [ys, ys[-1]], [np.arange(5.0), 1.0, 0.5])


def test_recurrent_taps_and_a_constant_number_of_steps() -> None:
    init = pt.dvector("init")
    fib, _ = arignote.scan(
        lambda x1, x2: x1 + x2, outputs_info=[{"initial": init, "taps": [-2, -1]}], n_steps=6
    )
    same_as_reference([init], [fib], [np.array([1.0, 1.0])])


def test_sequence_taps_and_an_output_not_fed_back() -> None:
    ys, _ = arignote.scan(lambda s0, s1: s0 * s1, sequences=[{"input": SEQ, "taps": [0, 1]}])
    same_as_reference([SEQ], [ys], [np.arange(5.0)])


def test_a_symbolic_number_of_steps_and_matrix_rows() -> None:
    n, m = pt.lscalar("n"), pt.dmatrix("m")
    ys, _ = arignote.scan(lambda x: x + 1.0, outputs_info=[X0], n_steps=n)
    same_as_reference([X0, n], [ys], [0.5, 4])
    sums, _ = arignote.scan(lambda row, acc: acc + row.sum(), sequences=[m], outputs_info=[X0])
    same_as_reference([m, X0], [sums], [np.arange(6.0).reshape(3, 2), 0.0])


def test_a_while_loop_runs_eagerly_and_names_the_node_under_jit() -> None:
    ys, _ = arignote.scan(lambda x: (x * 2, until(x * 2 > 10)), outputs_info=[X0], n_steps=100)
    check_nodes([X0], [ys], [1.0])  # node by node: the Scan gets concrete values
    with pytest.raises(JAXNodeError, match="while"):
        function([X0], [ys], mode="JAX")(1.0)


def test_a_loop_of_a_generator_state_alone_gives_the_last_key() -> None:
    from arignote.scan.op import Scan
    from arignote.scan.utils import ScanInfo

    rng = arignote.shared(np.random.default_rng(0))
    g = rng.type()
    next_g = pt.random.normal(rng=g).owner.outputs[0]
    op = Scan([g], [next_g], ScanInfo(seq_taps=(), rec_taps=((-1,),), n_nit_sot=0, n_non_seqs=0))
    out = op(pt.constant(np.int64(3)), rng)
    first, again = (arignote.function([], out, mode="JAX")() for _ in range(2))
    assert isinstance(first, np.random.Generator)
    assert first.bit_generator.state == again.bit_generator.state  # the same state, the same key
    assert first.bit_generator.state != rng.get_value().bit_generator.state  # moved on


def _with_keep(out, keep: tuple) -> list:
    """The outputs of ``out``'s Scan node rebuilt with ``keep`` (the last rows only)."""
    from arignote.graph.traversal import io_toposort
    from arignote.scan.op import Scan

    (node,) = [n for n in io_toposort([], [out]) if isinstance(n.op, Scan)]
    op = node.op.with_info(node.op.info.with_keep(keep))
    return op(*node.inputs, return_list=True)


@pytest.mark.parametrize(
    ("keep", "n", "row"),
    [((1, 1, 1), 7, 3), ((3, 2, 4), 7, 3), ((5, 1, 9), 3, 3), ((0, 2, 0), 4, 3), ((2, 1, 2), 5, None)],
)
def test_kept_last_rows_are_carried_not_stacked(keep, n, row) -> None:
    """Outputs of which only the last rows are kept are carried as a window through the
    loop (no row per step is stored), with the values of the reference VM, also when the
    loop runs fewer steps than the rows kept. (A row that is not a state and whose shape
    the Type leaves unknown is stacked.)"""
    x0, w = pt.dvector("x0"), pt.dmatrix("w")
    seq = pt.tensor("seq", dtype="float64", shape=(None, row))
    (xs, acc, ys), _ = arignote.scan(
        lambda s, x, a, w: (pt.tanh(pt.dot(x, w) + s), a + x.sum(), s * 2.0),
        sequences=[seq],
        outputs_info=[x0, pt.constant(np.float64(0.0)), None],
        non_sequences=[w],
    )
    outs = _with_keep(xs, keep)
    vals = [np.linspace(-1, 1, 3), np.eye(3) * 0.5, np.arange(3.0 * n).reshape(n, 3) / 10]
    same_as_reference([x0, w, seq], outs, vals)
    f = function([x0, w, seq], outs, mode="JAX")
    jaxpr = jax.make_jaxpr(f.vm.traced_function())(*vals).jaxpr
    (scan_eqn,) = [e for e in jaxpr.eqns if e.primitive.name == "scan"]
    # a stacked output has a row per step; a carried window has as many rows as it keeps,
    # which differs from the steps in every case here (read from the shapes, since JAX 0.11
    # no longer says in the equation's parameters which outputs are carried)
    stacked = [v.aval.shape for v in scan_eqn.outvars if v.aval.shape[:1] == (n,)]
    whole = sum(1 for k in keep[:2] if not k) + (1 if not keep[2] or row is None else 0)
    assert len(stacked) == whole  # only the outputs kept whole


def test_gradient_through_a_loop_keeps_one_partial_sum() -> None:
    x, h0, w = pt.dmatrix("x"), pt.dvector("h0"), pt.dmatrix("w")
    hs, _ = arignote.scan(
        lambda xt, h, w: pt.tanh(pt.dot(h, w) + xt), sequences=[x], outputs_info=[h0], non_sequences=[w]
    )
    cost = (hs**2).sum()
    g = arignote.grad(cost, [w, h0])
    rng = np.random.default_rng(3)
    vals = [rng.normal(size=(20, 3)), rng.normal(size=3), rng.normal(size=(3, 3)) * 0.3]
    same_as_reference([x, h0, w], [cost, *g], vals)
    f = function([x, h0, w], [cost, *g], mode="JAX")
    jaxpr = jax.make_jaxpr(f.vm.traced_function())(*vals).jaxpr
    scans = [e for e in jaxpr.eqns if e.primitive.name == "scan"]
    # the weight gradient's partial sums (3 x 3 per step) are never stacked over the steps
    for e in scans:
        assert all(v.aval.shape != (20, 3, 3) for v in e.outvars)


def test_zero_and_negative_step_counts_give_empty_results() -> None:
    """No step: empty results, as in the reference (XLA's CPU compiler of jaxlib 0.10 aborts
    the process on the slice of a concatenation that this compiles to, unless the empty
    result is made afresh: graph.py's ``_fresh_if_empty``)."""
    x0, n = pt.dscalar("x0"), pt.iscalar("n")
    (xs, ys), _ = arignote.scan(lambda x: (x * 2.0, x + 1.0), outputs_info=[x0, None], n_steps=n)
    f = arignote.function([x0, n], [xs, ys], mode="JAX")
    assert [a.tolist() for a in f(1.0, 3)] == [[2.0, 4.0, 8.0], [2.0, 3.0, 5.0]]
    for steps in (0, -1):
        a, b = f(1.0, steps)
        assert a.shape == (0,) and b.shape == (0,) and b.dtype == np.float64
    # rows shaped as a step's, as the reference shapes them
    m = pt.dmatrix("m")
    outer, _ = arignote.scan(lambda a: pt.outer(a, a), sequences=[m])
    for mode in ("JAX", "FAST_COMPILE"):
        assert arignote.function([m], outer, mode=mode)(np.ones((0, 3))).shape == (0, 3, 3)


def test_random_draws_inside_the_loop_carry_a_key() -> None:
    """A generator state in the loop is a JAX key carried step to step: a new draw each
    step, the shared generator moved on between calls, the same draws for the same seed."""

    def build():
        srng = pt.random.RandomStream(1)
        q = pt.dvector("q")
        ys, up = arignote.scan(lambda a: a + srng.normal(), sequences=[q])
        return arignote.function([q], ys, updates=up, mode="JAX")

    f = build()
    first, second = f(np.zeros(500)), f(np.zeros(500))
    assert len(set(first.tolist())) == 500 and not np.allclose(first, second)
    assert abs(first.mean()) < 0.2 and 0.8 < first.std() < 1.2  # standard normal draws
    np.testing.assert_array_equal(build()(np.zeros(500)), first)  # the seed decides


def test_the_gradient_of_a_loop_with_draws_reuses_them() -> None:
    rng = arignote.shared(np.random.default_rng(9), name="rng")

    def step(r, h, w):
        next_r, z = pt.random.normal(0.0, 1.0, rng=r, return_next_rng=True)
        return next_r, h * w * z

    w = pt.dscalar("w")
    (_, hs), _ = arignote.scan(
        step, outputs_info=[rng, pt.constant(np.float64(1.0))], non_sequences=[w], n_steps=4
    )
    vals, g = arignote.function([w], [hs, arignote.grad(hs[-1], w)], mode="JAX")(0.7)
    zs = vals / np.concatenate([[1.0], vals[:-1]]) / 0.7  # the draws, read back from the values
    np.testing.assert_allclose(g, 4 * 0.7**3 * np.prod(zs), rtol=1e-10)
