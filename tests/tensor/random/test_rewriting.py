"""The random variables' rewrites (arignote.tensor.random.rewriting): each lift is checked
structurally (the index, DimShuffle or size moved into the parameters) and by value: the
draws keep their shape and each position keeps its distribution, seen with a scale so small
that a draw equals its mean, with a mean that differs at every position."""

from __future__ import annotations

import numpy as np
import pytest

import arignote
import arignote.tensor as pt
from arignote.graph.fg import FunctionGraph
from arignote.graph.rewriting.basic import in2out
from arignote.graph.rewriting.utils import rewrite_graph
from arignote.tensor.elemwise import DimShuffle
from arignote.tensor.indexing.advanced import AdvancedSubtensor, AdvancedSubtensor1
from arignote.tensor.indexing.basic import Subtensor
from arignote.tensor.random.op import RandomVariable
from arignote.tensor.random.rewriting import (
    is_rv_used_in_graph,
    local_dimshuffle_rv_lift,
    local_rv_size_lift,
    local_subtensor_rv_lift,
    random_make_inplace,
    sidestep_unused_rng_consumer,
)

TINY = 1e-12
INDEXING = (Subtensor, AdvancedSubtensor1, AdvancedSubtensor)


def _ops(out):
    return [type(n.op) for n in arignote.graph.traversal.applys_between([], [out])]


def _rv_is_last(out) -> bool:
    """The draw is the output (or under a SpecifyShape that keeps its static type)."""
    node = out.owner
    while type(node.op).__name__ == "SpecifyShape":
        node = node.inputs[0].owner
    return isinstance(node.op, RandomVariable)


def _lift(out, rewrite):
    return rewrite_graph(out, include=(), custom_rewrite=rewrite)


def test_the_module_is_at_pytensors_path_and_holds_the_inplace_rule():
    import arignote.tensor.random.rewriting.basic as home

    assert random_make_inplace is home.random_make_inplace
    assert arignote.tensor.random.rewriting.local_rv_size_lift is local_rv_size_lift


@pytest.mark.parametrize(
    "index",
    [
        lambda x: x[1],
        lambda x: x[:, 1:],
        lambda x: x[::-1, 2],
        lambda x: x[np.array([2, 0, 2])],
        lambda x: x[np.array([1, 0]), np.array([0, 3])],
        lambda x: x[:, np.array([3, 3, 0])],
    ],
)
def test_subtensor_lift_moves_the_index_into_the_parameters(index):
    mu = pt.dmatrix("mu")
    mu_v = np.arange(12.0).reshape(3, 4) * 10
    draws = pt.random.normal(mu, TINY, size=(3, 4))
    out = index(draws)
    want = index(mu_v)
    before = out.eval({mu: mu_v})
    lifted = _lift(out, local_subtensor_rv_lift)
    assert _rv_is_last(lifted) and not any(issubclass(t, INDEXING) for t in _ops(lifted)[-1:])
    got = lifted.eval({mu: mu_v})
    assert got.shape == before.shape == want.shape
    np.testing.assert_allclose(got, want, atol=1e-9)
    np.testing.assert_allclose(before, want, atol=1e-9)


def test_subtensor_lift_broadcasts_parameters_without_size():
    mu = pt.dvector("mu")  # (4,)
    scale = pt.tensor("scale", shape=(None, 1))  # the batch shape (3, 4) comes from both
    out = pt.random.normal(mu, scale)[2, 1:3]
    lifted = _lift(out, local_subtensor_rv_lift)
    assert _rv_is_last(lifted)
    got = lifted.eval({mu: np.array([1.0, 2.0, 3.0, 4.0]), scale: np.full((3, 1), TINY)})
    np.testing.assert_allclose(got, [2.0, 3.0], atol=1e-9)


def test_subtensor_lift_keeps_the_support_dimensions_of_a_multivariate_draw():
    mean = pt.dmatrix("mean")  # (batch 3, core 2)
    cov = np.eye(2) * TINY
    out = pt.random.multivariate_normal(mean, cov)[np.array([2, 0])]
    lifted = _lift(out, local_subtensor_rv_lift)
    assert _rv_is_last(lifted)
    mean_v = np.arange(6.0).reshape(3, 2)
    np.testing.assert_allclose(lifted.eval({mean: mean_v}), mean_v[[2, 0]], atol=1e-5)
    # indexing the support dimension is not lifted
    inner = pt.random.multivariate_normal(mean, cov)[0, 1]
    assert not _rv_is_last(_lift(inner, local_subtensor_rv_lift))


def test_dimshuffle_lift_moves_the_transpose_into_the_parameters():
    mu = pt.dmatrix("mu")
    mu_v = np.arange(6.0).reshape(2, 3)
    out = pt.random.normal(mu, TINY).T[None]
    assert isinstance(out.owner.op, DimShuffle)
    lifted = _lift(out, local_dimshuffle_rv_lift)
    assert _rv_is_last(lifted)
    assert isinstance(lifted.owner.inputs[2].owner.op, DimShuffle)  # mu.T[None]
    np.testing.assert_allclose(lifted.eval({mu: mu_v}), mu_v.T[None], atol=1e-9)


def test_dimshuffle_lift_with_size_reorders_the_size():
    mu = pt.dvector("mu")
    out = pt.random.normal(mu, TINY, size=(2, 3)).dimshuffle(1, "x", 0)
    lifted = _lift(out, local_dimshuffle_rv_lift)
    assert _rv_is_last(lifted)
    got = lifted.eval({mu: np.array([1.0, 2.0, 3.0])})
    assert got.shape == (3, 1, 2)
    np.testing.assert_allclose(got[:, 0, 0], [1.0, 2.0, 3.0], atol=1e-9)


def test_dimshuffle_lift_leaves_support_dimensions_and_drops_alone():
    mean = pt.dmatrix("mean")
    moved = pt.random.multivariate_normal(mean, np.eye(2)).T  # swaps batch and support
    assert not _rv_is_last(_lift(moved, local_dimshuffle_rv_lift))
    dropped = pt.random.normal(0.0, 1.0, size=(1, 3)).dimshuffle(1)
    assert not _rv_is_last(_lift(dropped, local_dimshuffle_rv_lift))


def test_lifts_leave_draws_that_something_else_reads():
    mu = pt.dvector("mu")
    draws = pt.random.normal(mu, 1.0, size=(2, 3))
    both = [draws[0], draws.sum()]
    fg = FunctionGraph(outputs=both)
    assert is_rv_used_in_graph(draws_in(fg), fg.outputs[0].owner, fg)
    in2out(local_subtensor_rv_lift).rewrite(fg)
    assert any(issubclass(t, Subtensor) for t in (type(n.op) for n in fg.apply_nodes))
    # a shape read does not count
    shaped = pt.random.normal(mu, 1.0, size=(2, 3))
    fg = FunctionGraph(outputs=[shaped[0], shaped.shape[0]], clone=False)
    node = fg.outputs[0].owner
    assert not is_rv_used_in_graph(shaped, node, fg)


def draws_in(fg):
    return next(n.outputs[1] for n in fg.apply_nodes if isinstance(n.op, RandomVariable))


def test_size_lift_broadcasts_parameters_and_keeps_the_draws():
    mu = pt.dvector("mu")
    out = pt.random.normal(mu, 2.0, size=(4, 3), rng=arignote.shared(np.random.default_rng(5)))
    lifted = _lift(out, local_rv_size_lift)
    node = lifted.owner
    while not isinstance(node.op, RandomVariable):
        node = node.inputs[0].owner
    assert node.inputs[1].type.__class__.__name__ == "NoneTypeT"
    mu_v = np.array([1.0, -1.0, 0.5])
    got = lifted.eval({mu: mu_v})
    assert got.shape == (4, 3)
    # NumPy draws broadcast parameters in the same order as a size: the same numbers
    np.testing.assert_allclose(got, np.random.default_rng(5).normal(mu_v, 2.0, size=(4, 3)))


def test_size_lift_of_a_multivariate_draw():
    mean = pt.dvector("mean")
    out = pt.random.multivariate_normal(mean, np.eye(2) * TINY, size=(3,))
    lifted = _lift(out, local_rv_size_lift)
    got = lifted.eval({mean: np.array([4.0, -4.0])})
    np.testing.assert_allclose(got, np.tile([4.0, -4.0], (3, 1)), atol=1e-5)


def test_a_draw_nobody_reads_is_sidestepped_in_the_pipeline():
    rng = arignote.shared(np.random.default_rng(3), name="rng")
    first = pt.random.normal(0.0, 1.0, size=(2,), rng=rng)
    second = pt.random.normal(0.0, 1.0, size=(2,), rng=first.owner.outputs[0])
    f = arignote.function([], second)
    assert sum(isinstance(n.op, RandomVariable) for n in f.maker.fgraph.apply_nodes) == 1
    np.testing.assert_allclose(f(), np.random.default_rng(3).normal(size=2))
    kept = arignote.function([], second, mode=arignote.get_mode("FAST_RUN").excluding("random_unsafe"))
    assert sum(isinstance(n.op, RandomVariable) for n in kept.maker.fgraph.apply_nodes) == 2
    ref = np.random.default_rng(3)
    ref.normal(size=2)
    np.testing.assert_allclose(kept(), ref.normal(size=2))
    fg = FunctionGraph(outputs=[first.owner.outputs[0]], clone=False)
    assert sidestep_unused_rng_consumer.transform(fg, first.owner) == {first.owner.outputs[0]: rng}
