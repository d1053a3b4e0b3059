"""Generator variables: the Type, shared generators, symbolic ones, and the method API."""

from __future__ import annotations

import copy
import warnings

import numpy as np
import pytest

import arignote
import arignote.tensor as pt
from arignote.tensor.random.type import RandomGeneratorType, random_generator_type
from arignote.tensor.random.var import (
    RandomGeneratorSharedVariable,
    RandomGeneratorVariable,
    rng,
    shared_rng,
)

# --- the Type --------------------------------------------------------------------------------


def test_type_filter():
    g = np.random.default_rng(0)
    assert random_generator_type.filter(g) is g
    assert RandomGeneratorType() == random_generator_type and hash(RandomGeneratorType()) == hash(
        random_generator_type
    )
    rebuilt = random_generator_type.filter(g.bit_generator.state)
    assert isinstance(rebuilt, np.random.Generator) and rebuilt.normal() == copy.deepcopy(g).normal()
    with pytest.raises(TypeError, match="expected a numpy.random.Generator"):
        random_generator_type.filter(g.bit_generator.state, strict=True)
    with pytest.raises(TypeError, match="RandomState is not supported"):
        random_generator_type.filter(np.random.RandomState(0))
    with pytest.raises(TypeError, match="expected a numpy.random.Generator"):
        random_generator_type.filter(np.zeros(3))
    with pytest.raises(TypeError, match="bit generator"):
        random_generator_type.filter({"bit_generator": "Nope", "state": {}})
    with pytest.raises(TypeError, match="not a valid PCG64 state"):
        random_generator_type.filter({"bit_generator": "PCG64", "state": {}})
    assert not random_generator_type.is_valid_value(3)


def test_type_values_eq_and_memory():
    a, b = np.random.default_rng(1), np.random.default_rng(1)
    assert random_generator_type.values_eq(a, b)
    assert random_generator_type.values_eq(a, b.bit_generator.state)
    b.normal()
    assert not random_generator_type.values_eq(a, b)
    philox = np.random.Generator(np.random.Philox(1))
    assert random_generator_type.values_eq(philox, copy.deepcopy(philox))
    assert not random_generator_type.values_eq(a, philox)
    assert random_generator_type.may_share_memory(a, np.random.Generator(a.bit_generator))
    assert not random_generator_type.may_share_memory(a, b)
    assert str(random_generator_type) == "RandomGeneratorType"


# --- shared generators -----------------------------------------------------------------------


def test_shared_constructor():
    g = np.random.default_rng(2)
    s = arignote.shared(g, name="s")
    assert isinstance(s, RandomGeneratorSharedVariable) and s.type == random_generator_type
    assert s.get_value(borrow=True) is not g  # copied
    assert str(s) == "s"
    g.normal()  # the caller's generator moving on does not move the shared one
    assert s.get_value().normal() == np.random.default_rng(2).normal()
    b = arignote.shared(g, borrow=True)
    assert b.get_value(borrow=True) is g
    with pytest.raises(TypeError, match="RandomState is not supported"):
        arignote.shared(np.random.RandomState(0))
    with pytest.raises(TypeError, match="unexpected arguments"):
        arignote.shared(np.random.default_rng(), shape=(2,))
    # numbers still make tensor shared variables
    assert arignote.shared(np.zeros(2)).type.ndim == 1


def test_shared_rng_and_set_value():
    s = shared_rng(seed=5, name="s")
    x = pt.random.normal(rng=s)
    f = arignote.function([], x, updates={s: x.owner.outputs[0]})
    first = f()
    assert first == np.random.default_rng(5).normal()
    s.set_value(seed=5)
    assert f() == first
    s.set_value(np.random.default_rng(5))
    assert f() == first
    with pytest.raises(ValueError, match="not both"):
        s.set_value(np.random.default_rng(), seed=1)
    with pytest.raises(ValueError, match="a generator or a seed"):
        shared_rng()
    with pytest.raises(ValueError, match="not both"):
        shared_rng(np.random.default_rng(), seed=3)
    with pytest.raises(TypeError, match="expected a numpy.random.Generator"):
        shared_rng(3)
    with pytest.raises(TypeError, match="expected a numpy.random.Generator"):
        s.set_value(np.zeros(2))


def test_symbolic_rng_input():
    r = rng("r")
    assert isinstance(r, RandomGeneratorVariable) and r.name == "r" and r.owner is None
    next_r, x = r.uniform(size=2)
    f = arignote.function([r], [next_r, x])
    g = np.random.default_rng(6)
    g1, a = f(g)
    g2, b = f(g1)
    ref = np.random.default_rng(6)
    np.testing.assert_array_equal(a, ref.uniform(size=2))
    np.testing.assert_array_equal(b, ref.uniform(size=2))
    with pytest.raises(TypeError, match="RandomGeneratorType"):
        f(np.zeros(2))


# --- the method API --------------------------------------------------------------------------


def test_methods_return_next_rng_and_draws():
    s = shared_rng(seed=7)
    next_s, x = s.normal(1.0, 2.0, size=(2,))
    assert isinstance(next_s, RandomGeneratorVariable) and next_s is x.owner.outputs[0]
    final, k = next_s.integers(0, 5)
    f = arignote.function([], [x, k], updates={s: final})
    ref = np.random.default_rng(7)
    xs, ks = f()
    np.testing.assert_array_equal(xs, ref.normal(1.0, 2.0, size=2))
    assert ks == ref.integers(0, 5)
    assert RandomGeneratorVariable.normal.__name__ == "normal"


def test_reusing_a_generator_warns():
    s = shared_rng(seed=8)
    s.normal()
    with pytest.warns(UserWarning, match="already used"):
        s.uniform()
    fresh = shared_rng(seed=8)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _, x = fresh.normal()
        x.owner.outputs[0].normal()  # the next state is a new generator: no warning


def test_as_rng_passes_generator_variables_and_explains_the_rest():
    from arignote.tensor.random.type import as_rng

    sym = pt.random.rng("r")
    assert as_rng(sym) is sym
    shared_gen = pt.random.shared_rng(np.random.default_rng(0))
    assert as_rng(shared_gen) is shared_gen
    with pytest.raises(TypeError, match="must not be None"):
        as_rng(None)
    with pytest.raises(TypeError, match="shared_rng"):
        as_rng(np.random.default_rng(0))
    with pytest.raises(TypeError, match="expected a random generator Variable, got TensorVariable"):
        as_rng(pt.dvector("x"))
