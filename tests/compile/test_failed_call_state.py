"""A call that fails changes no state: shared variables, random generators included, keep
the values they had before it, in every mode (FAST_RUN draws from a generator in place
and may update arrays in place, so it must put them back), and saving what a failure
would put back costs no copy of a large array when no node can fail after the in-place
write."""

from __future__ import annotations

import numpy as np
import pytest

import arignote
import arignote.tensor as pt
from arignote import In, function, shared
from arignote.tensor.checks import check_values
from arignote.tensor.random.utils import RandomStream

MODES = ["FAST_COMPILE", "FAST_RUN"]


def _reference_draws(seed: int, n: int) -> list[np.ndarray]:
    srng = RandomStream(seed=seed)
    g = function([], srng.normal(size=(3,)))
    return [g() for _ in range(n)]


@pytest.mark.parametrize("mode", MODES)
def test_a_failed_check_after_a_draw_leaves_the_stream_unchanged(mode):
    srng = RandomStream(seed=7)
    x = pt.dscalar("x")
    y = check_values(srng.normal(size=(3,)) + x, pt.gt(x, 0), "x must be positive")
    f = function([x], y, mode=mode)
    if mode == "FAST_RUN":  # the case that needs putting back: the draw is in place
        assert any(node.op.destroy_map for node in f.maker.fgraph.apply_nodes)
    ref = _reference_draws(7, 3)
    np.testing.assert_allclose(f(1.0) - 1.0, ref[0], rtol=1e-12)
    with pytest.raises(ValueError, match="x must be positive"):
        f(-1.0)
    np.testing.assert_allclose(f(1.0) - 1.0, ref[1], rtol=1e-12)  # as if the failure never was
    with pytest.raises(ValueError):
        f(-2.0)
    np.testing.assert_allclose(f(1.0) - 1.0, ref[2], rtol=1e-12)


@pytest.mark.parametrize("mode", MODES)
def test_a_bad_shape_downstream_of_a_draw_leaves_the_generator_unchanged(mode):
    rng = shared(np.random.default_rng(3), name="rng")
    v = pt.dvector("v")
    draws = pt.random.uniform(size=(4,), rng=rng)
    f = function([v], draws * v, updates={rng: draws.owner.outputs[0]}, mode=mode)
    ref = np.random.default_rng(3)
    np.testing.assert_array_equal(f(np.ones(4)), ref.uniform(size=4))
    state = rng.get_value().bit_generator.state
    with pytest.raises(ValueError):
        f(np.ones(3))  # the product fails after the draw
    assert rng.get_value().bit_generator.state == state
    np.testing.assert_array_equal(f(np.ones(4)), ref.uniform(size=4))


@pytest.mark.parametrize("mode", MODES)
def test_an_array_updated_in_place_is_put_back_when_a_later_node_fails(mode):
    a = shared(np.zeros(5), name="a")
    b = shared(np.zeros(5), name="b")
    i = pt.lscalar("i")
    f = function(
        [i],
        [],
        updates={a: pt.inc_subtensor(a[1:3], 1.0), b: pt.inc_subtensor(b[i], 1.0)},
        mode=mode,
    )
    f(0)
    with pytest.raises(IndexError):
        f(10)  # b[10] fails, after a's update ran (in place in FAST_RUN)
    np.testing.assert_array_equal(a.get_value(), [0, 1, 1, 0, 0])
    np.testing.assert_array_equal(b.get_value(), [1, 0, 0, 0, 0])
    f(1)
    np.testing.assert_array_equal(a.get_value(), [0, 2, 2, 0, 0])


def test_no_copy_is_made_when_the_in_place_update_is_the_last_node():
    big = shared(np.zeros(1_000_000), name="big")
    x = pt.dscalar("x")
    f = function([x], [], updates={big: pt.inc_subtensor(big[:10], x)}, mode="FAST_RUN")
    plan = f._rollback
    assert plan == [(big.container.storage, False)]  # saved by nothing: it cannot be half-done
    value = big.get_value(borrow=True)
    f(1.0)
    assert big.get_value(borrow=True) is value and value[0] == 1.0  # updated in place


def test_a_generator_is_saved_by_its_state_not_copied():
    srng = RandomStream(seed=1)
    f = function([], srng.normal(size=(2,)) * 2, mode="FAST_RUN")
    (entry,) = f._rollback
    gen = srng.state_updates[0][0].get_value(borrow=True)
    f()
    assert srng.state_updates[0][0].get_value(borrow=True) is gen and entry[0][0] is gen


def test_functions_without_in_place_state_save_nothing():
    s = shared(np.zeros(3), name="s")
    x = pt.dscalar("x")
    f = function([x], s + x, mode="FAST_RUN")
    assert f._rollback == []


def test_failed_calls_change_nothing_with_eval_of_a_stream():
    # a draw through the public helper (not compiled by hand) also survives a failure
    srng = RandomStream(seed=11)
    u = srng.uniform(size=(2,))
    x = pt.dscalar("x")
    f = arignote.function([x], check_values(u * x, pt.gt(x, 0), "no"), mode="FAST_RUN")
    first = f(1.0)
    srng.seed(11)
    for _ in range(3):
        with pytest.raises(ValueError):
            f(0.0)
    np.testing.assert_array_equal(f(1.0), first)


# -- explicit inputs with an update: In(x, update=...) hold state too --------------------
# (The call gives the value; the update is stored in the input's cell after the call.)


def _counter(mode):
    """``acc`` (an explicit input with an update) gains ``x`` at index 0 on every call; the
    call fails, after the increment ran, when ``x`` is not positive."""
    acc, x = pt.dvector("acc"), pt.dscalar("x")
    new = pt.inc_subtensor(acc[0], x)
    out = check_values(new.sum() + x, pt.gt(x, 0), "x must be positive")
    return function([x, In(acc, update=new)], out, mode=mode)


@pytest.mark.parametrize("mode", MODES)
def test_a_value_passed_to_a_failed_call_does_not_replace_the_state(mode):
    f = _counter(mode)
    f(1.0, np.zeros(3))
    cell = f.input_storage[1].storage
    held = cell[0]
    np.testing.assert_array_equal(held, [1, 0, 0])
    with pytest.raises(ValueError, match="x must be positive"):
        f(-1.0, acc=np.full(3, 100.0))  # in FAST_RUN the increment may run in place first
    assert cell[0] is held  # the very value, not a copy: it was not touched
    np.testing.assert_array_equal(held, [1, 0, 0])
    # a bad argument after the state's: the state is stored first, then the call fails
    with pytest.raises(TypeError):
        f("not a number", acc=np.full(3, 100.0))
    assert cell[0] is held
    np.testing.assert_array_equal(f(1.0, held), 3.0)  # (1 + 1) from the state and x, + x


def test_an_explicit_state_updated_in_place_by_the_last_node_is_not_copied():
    acc, x = pt.dvector("acc"), pt.dscalar("x")
    f = function([x, In(acc, update=pt.inc_subtensor(acc[:10], x))], [], mode="FAST_RUN")
    ((cell, overwritten, copy_arrays),) = f._state
    assert cell is f.input_storage[1].storage and overwritten and not copy_arrays
    value = np.zeros(1_000_000)
    f(1.0, value)
    assert cell[0] is value and value[0] == 1.0  # updated in place, nothing saved


def test_an_explicit_state_that_nothing_overwrites_costs_no_copy():
    acc, x = pt.dvector("acc"), pt.dscalar("x")
    f = function([x, In(acc, update=acc + x)], acc * 2, mode="FAST_COMPILE")
    assert [entry[1:] for entry in f._state] == [(False, False)]  # only the reference is kept
    f(1.0, np.zeros(3))
    np.testing.assert_array_equal(f.input_storage[1].value, [1, 1, 1])
    g = function([x], x + 1)
    assert g._state == [] and not g._guarded  # no state: the plain call path


@pytest.mark.parametrize("mode", MODES)
def test_an_explicit_generator_input_is_put_back_after_a_failed_call(mode):
    rng = pt.random.type.random_generator_type("rng")
    v = pt.dvector("v")
    next_rng, draws = pt.random.uniform(size=(4,), rng=rng).owner.outputs
    f = function([v, In(rng, update=next_rng)], draws * v, mode=mode)
    ref = np.random.default_rng(5)
    np.testing.assert_array_equal(f(np.ones(4), np.random.default_rng(5)), ref.uniform(size=4))
    cell = f.input_storage[1].storage
    gen, state = cell[0], cell[0].bit_generator.state
    with pytest.raises(ValueError):
        f(np.ones(3), gen)  # the product fails after the draw
    assert cell[0] is gen and gen.bit_generator.state == state
    np.testing.assert_array_equal(f(np.ones(4), gen), ref.uniform(size=4))
