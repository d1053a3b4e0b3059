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
from arignote.link.jax.dispatch import JAXNodeError, jax_funcify  # noqa: E402
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


def test_a_random_generator_state_is_refused() -> None:
    from arignote.scan.op import Scan
    from arignote.scan.utils import ScanInfo

    rng = arignote.shared(np.random.default_rng(0))
    g = rng.type()
    next_g = pt.random.normal(rng=g).owner.outputs[0]
    op = Scan([g], [next_g], ScanInfo(seq_taps=(), rec_taps=((-1,),), n_nit_sot=0, n_non_seqs=0))
    out = op(pt.constant(np.int64(3)), rng)
    with pytest.raises(NotImplementedError, match="random generator"):
        jax_funcify(out.owner.op, node=out.owner)
