"""Random variables under ``mode="JAX"``: every distribution draws values of the right
shape, dtype and distribution (moments against NumPy's), a seed gives the same draws, and a
shared generator moves on from call to call (its state kept as a JAX key on the device)."""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")

import arignote  # noqa: E402
import arignote.tensor as pt  # noqa: E402
from arignote.link.jax.dispatch.random import (  # noqa: E402
    CORE_SAMPLERS,
    HOST_DRAWN,
    SAMPLERS,
    generator_to_key,
    key_to_generator,
)
from arignote.tensor.random import basic as rv  # noqa: E402
from arignote.tensor.random.op import RandomVariable  # noqa: E402

N = 4000

#: name -> a draw of N values given the generator
CASES = {
    "uniform": lambda r: pt.random.uniform(1.0, 3.0, size=N, rng=r),
    "triangular": lambda r: pt.random.triangular(0.0, 1.0, 3.0, size=N, rng=r),
    "beta": lambda r: pt.random.beta(2.0, 5.0, size=N, rng=r),
    "normal": lambda r: pt.random.normal(1.0, 2.0, size=N, rng=r),
    "halfnormal": lambda r: pt.random.halfnormal(0.5, 2.0, size=N, rng=r),
    "lognormal": lambda r: pt.random.lognormal(0.1, 0.5, size=N, rng=r),
    "gamma": lambda r: pt.random.gamma(3.0, scale=2.0, size=N, rng=r),
    "pareto": lambda r: pt.random.pareto(5.0, 2.0, size=N, rng=r),
    "gumbel": lambda r: pt.random.gumbel(1.0, 2.0, size=N, rng=r),
    "exponential": lambda r: pt.random.exponential(2.0, size=N, rng=r),
    "weibull": lambda r: pt.random.weibull(2.0, size=N, rng=r),
    "logistic": lambda r: pt.random.logistic(1.0, 2.0, size=N, rng=r),
    "vonmises": lambda r: pt.random.vonmises(0.5, 2.0, size=N, rng=r),
    "cauchy_median": lambda r: pt.random.cauchy(1.0, 2.0, size=N, rng=r),
    "halfcauchy_median": lambda r: pt.random.halfcauchy(1.0, 2.0, size=N, rng=r),
    "invgamma": lambda r: pt.random.invgamma(5.0, 2.0, size=N, rng=r),
    "wald": lambda r: pt.random.wald(1.5, 3.0, size=N, rng=r),
    "truncexpon": lambda r: pt.random.truncexpon(2.0, 1.0, 0.5, size=N, rng=r),
    "t": lambda r: pt.random.t(8.0, 1.0, 2.0, size=N, rng=r),
    "laplace": lambda r: pt.random.laplace(1.0, 2.0, size=N, rng=r),
    "gengamma": lambda r: pt.random.gengamma(4.0, 2.0, 1.5, size=N, rng=r),
    "poisson": lambda r: pt.random.poisson(4.0, size=N, rng=r),
    "geometric": lambda r: pt.random.geometric(0.3, size=N, rng=r),
    "hypergeometric": lambda r: pt.random.hypergeometric(7, 5, 6, size=N, rng=r),
    "bernoulli": lambda r: pt.random.bernoulli(0.3, size=N, rng=r),
    "binomial": lambda r: pt.random.binomial(10, 0.3, size=N, rng=r),
    "negative_binomial": lambda r: pt.random.negative_binomial(5, 0.4, size=N, rng=r),
    "beta_binomial": lambda r: pt.random.betabinom(10, 2.0, 3.0, size=N, rng=r),
    "integers": lambda r: pt.random.integers(-3, 7, size=N, rng=r),
    "categorical": lambda r: pt.random.categorical(np.array([0.2, 0.5, 0.3]), size=N, rng=r),
}


def test_distributions_match_the_reference() -> None:
    """One function draws from every distribution (one compilation); each sample has the
    reference's dtype and shape, and the same distribution: means (medians for the Cauchy
    laws, which have none) and spreads agree with the reference VM's draws."""
    rng = arignote.shared(np.random.default_rng(1), name="rng")
    names = sorted(CASES)
    draws = [CASES[name](rng) for name in names]
    got = arignote.function([], draws, mode="JAX")()
    want = arignote.function([], draws, mode="FAST_COMPILE")()
    for name, a, b in zip(names, got, want):
        assert a.dtype == b.dtype and a.shape == b.shape == (N,), name
        if name.endswith("_median"):
            q_a, q_b = np.percentile(a, [25, 50, 75]), np.percentile(b, [25, 50, 75])
            assert np.allclose(q_a, q_b, atol=0.2 * (q_b[2] - q_b[0])), (name, q_a, q_b)
            continue
        se = np.std(b) / np.sqrt(N)
        assert abs(np.mean(a) - np.mean(b)) < 6 * se + 1e-9, (name, np.mean(a), np.mean(b))
        assert abs(np.std(a) - np.std(b)) < 0.15 * np.std(b) + 1e-9, (name, np.std(a), np.std(b))


def test_vector_distributions() -> None:
    rng = arignote.shared(np.random.default_rng(1), name="rng")
    mean = np.array([1.0, -2.0])
    cov = np.array([[2.0, 0.5], [0.5, 1.0]])
    mvn = pt.random.multivariate_normal(mean, cov, size=(N,), rng=rng)
    dirichlet = pt.random.dirichlet(np.array([1.0, 2.0, 3.0]), size=(N,), rng=rng)
    multinomial = pt.random.multinomial(10, np.array([0.2, 0.8]), size=(N,), rng=rng)
    perm = pt.random.permutation(5, rng=rng)
    choice = pt.random.choice(10, size=(4,), replace=False, rng=rng)
    f = arignote.function([], [mvn, dirichlet, multinomial, perm, choice], mode="JAX")
    a, b, c, d, e = f()
    np.testing.assert_allclose(a.mean(0), mean, atol=0.15)
    np.testing.assert_allclose(np.cov(a.T), cov, atol=0.25)
    np.testing.assert_allclose(b.mean(0), [1 / 6, 2 / 6, 3 / 6], atol=0.03)
    np.testing.assert_allclose(b.sum(1), 1.0)
    assert c.dtype == np.int64 and (c.sum(1) == 10).all()
    np.testing.assert_allclose(c.mean(0), [2.0, 8.0], atol=0.2)
    assert sorted(d.tolist()) == list(range(5))
    assert len(set(e.tolist())) == 4 and e.max() < 10


def test_every_distribution_has_a_jax_function() -> None:
    classes = {
        c
        for c in vars(rv).values()
        if isinstance(c, type) and issubclass(c, RandomVariable) and c.__module__ == rv.__name__
    }
    classes = {c for c in classes if getattr(c, "name", None)}
    covered = set(SAMPLERS) | set(CORE_SAMPLERS) | set(HOST_DRAWN)
    assert classes <= covered, sorted(c.__name__ for c in classes - covered)


def test_same_seed_same_draws_and_shared_updates() -> None:
    def make(seed: int):
        rng = arignote.shared(np.random.default_rng(seed), name="rng")
        next_rng, x = rng.normal(size=3)
        return rng, arignote.function([], x, updates={rng: next_rng}, mode="JAX")

    rng_a, f = make(7)
    _, g = make(7)
    _, h = make(8)
    first, second = f(), f()
    assert not np.allclose(first, second)  # the generator moved on
    np.testing.assert_array_equal(first, g())
    np.testing.assert_array_equal(second, g())
    assert not np.allclose(first, h())
    # the state stays a key on the device; read back as a Generator
    assert isinstance(rng_a.container.storage[0], jax.Array)
    assert isinstance(rng_a.get_value(), np.random.Generator)
    # a seed set again restarts the sequence
    rng_a.set_value(np.random.default_rng(7))
    np.testing.assert_array_equal(f(), first)


def test_default_update_and_other_backends_read_the_generator() -> None:
    rng = arignote.shared(np.random.default_rng(3), name="rng")
    x = pt.random.uniform(size=2, rng=rng)
    next_rng = x.owner.outputs[0]
    rng.default_update = next_rng
    f = arignote.function([], x, mode="JAX")
    a, b = f(), f()
    assert not np.allclose(a, b)
    g = arignote.function([], x)  # the reference backend draws from the host Generator
    assert g().shape == (2,)
    assert isinstance(rng.container.storage[0], np.random.Generator)


def test_generator_input_and_output() -> None:
    r = pt.random.rng("r")
    next_r, x = r.normal(size=2)
    f = arignote.function([r], [next_r, x], mode="JAX")
    g0 = np.random.default_rng(5)
    g1, v1 = f(g0)
    assert isinstance(g1, np.random.Generator)
    g1_again, v1_again = f(np.random.default_rng(5))
    np.testing.assert_array_equal(v1, v1_again)
    _, v2 = f(g1)
    assert not np.allclose(v1, v2)


def test_key_round_trip_is_deterministic() -> None:
    key = generator_to_key(np.random.default_rng(11))
    assert generator_to_key(np.random.default_rng(11)).dtype == key.dtype
    a = key_to_generator(key).normal(size=3)
    b = key_to_generator(key).normal(size=3)
    np.testing.assert_array_equal(a, b)


def test_default_rng_op() -> None:
    g = pt.random.default_rng(3)
    x = pt.random.normal(rng=g, size=2)
    f = arignote.function([], x, mode="JAX")
    np.testing.assert_array_equal(f(), f())
