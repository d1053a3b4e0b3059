"""The distributions: exact draws against NumPy / SciPy, dtypes, shapes, statistics, errors."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as st

import arignote
import arignote.tensor as pt
from arignote.configdefaults import config

SEED = 20240611


def draw(fn, *args, seed=SEED, **kwargs):
    """One evaluation of ``fn(*args, rng=<shared default_rng(seed)>, **kwargs)``."""
    rng = arignote.shared(np.random.default_rng(seed))
    return arignote.function([], fn(*args, rng=rng, **kwargs))()


def ref_rng(seed=SEED):
    return np.random.default_rng(seed)


P3 = np.array([0.2, 0.3, 0.5])
COV = np.array([[2.0, 0.5], [0.5, 1.0]])

# (name, distribution, args, kwargs, what NumPy / SciPy draws from the same generator)
SAME_AS_NUMPY = [
    ("normal", pt.random.normal, (np.arange(3.0), 2.0), {"size": (2, 3)},
     lambda g: g.normal(np.arange(3.0), 2.0, size=(2, 3))),
    ("normal-default", pt.random.normal, (), {}, lambda g: g.normal()),
    ("standard_normal", pt.random.standard_normal, (), {"size": 4}, lambda g: g.normal(size=4)),
    ("uniform", pt.random.uniform, (-1.0, 2.0), {"size": (4,)}, lambda g: g.uniform(-1.0, 2.0, size=4)),
    ("integers", pt.random.integers, (3, 10), {"size": 5}, lambda g: g.integers(3, 10, size=5)),
    ("integers-high-only", pt.random.integers, (10,), {}, lambda g: g.integers(0, 10)),
    ("binomial", pt.random.binomial, (10, [0.2, 0.7]), {"size": (3, 2)},
     lambda g: g.binomial(10, [0.2, 0.7], size=(3, 2))),
    ("poisson", pt.random.poisson, ([1.0, 5.0],), {}, lambda g: g.poisson([1.0, 5.0])),
    ("geometric", pt.random.geometric, (0.3,), {"size": 4}, lambda g: g.geometric(0.3, size=4)),
    ("hypergeometric", pt.random.hypergeometric, (10, 5, 4), {"size": 3},
     lambda g: g.hypergeometric(10, 5, 4, size=3)),
    ("beta", pt.random.beta, (2.0, 3.0), {"size": 3}, lambda g: g.beta(2.0, 3.0, size=3)),
    ("gamma", pt.random.gamma, (2.0,), {"scale": 3.0, "size": 3}, lambda g: g.gamma(2.0, 3.0, size=3)),
    ("exponential", pt.random.exponential, (2.0,), {"size": 3}, lambda g: g.exponential(2.0, size=3)),
    ("laplace", pt.random.laplace, (1.0, 2.0), {"size": 3}, lambda g: g.laplace(1.0, 2.0, size=3)),
    ("logistic", pt.random.logistic, (1.0, 2.0), {"size": 3}, lambda g: g.logistic(1.0, 2.0, size=3)),
    ("lognormal", pt.random.lognormal, (0.5, 0.2), {"size": 3}, lambda g: g.lognormal(0.5, 0.2, size=3)),
    ("weibull", pt.random.weibull, (1.5,), {"size": 3}, lambda g: g.weibull(1.5, size=3)),
    ("wald", pt.random.wald, (1.0, 2.0), {"size": 3}, lambda g: g.wald(1.0, 2.0, size=3)),
    ("vonmises", pt.random.vonmises, (0.5, 2.0), {"size": 3}, lambda g: g.vonmises(0.5, 2.0, size=3)),
    ("triangular", pt.random.triangular, (0.0, 1.0, 3.0), {"size": 3},
     lambda g: g.triangular(0.0, 1.0, 3.0, size=3)),
    ("chisquare", pt.random.chisquare, (3,), {"size": 3}, lambda g: g.chisquare(3, size=3)),
    ("invgamma", pt.random.invgamma, (2.0, 4.0), {"size": 3}, lambda g: 1 / g.gamma(2.0, 0.25, size=3)),
    ("dirichlet", pt.random.dirichlet, ([1.0, 2.0, 3.0],), {"size": 2},
     lambda g: g.dirichlet([1.0, 2.0, 3.0], size=2)),
    ("multinomial", pt.random.multinomial, (10, P3), {"size": 2}, lambda g: g.multinomial(10, P3, size=2)),
    ("choice-replace", pt.random.choice, (10,), {"size": 4}, lambda g: g.choice(10, size=4)),
    ("choice-no-replace", pt.random.choice, (10,), {"size": 4, "replace": False},
     lambda g: g.choice(10, size=4, replace=False)),
    ("choice-no-replace-p", pt.random.choice, (np.arange(5.0),), {"size": 3, "replace": False, "p": [0.1, 0.2, 0.3, 0.2, 0.2]},
     lambda g: g.choice(np.arange(5.0), size=3, replace=False, p=[0.1, 0.2, 0.3, 0.2, 0.2])),
    ("choice-rows", pt.random.choice, (np.arange(12.0).reshape(4, 3),), {"size": 2},
     lambda g: g.choice(np.arange(12.0).reshape(4, 3), size=2)),
    ("permutation", pt.random.permutation, (np.arange(5),), {}, lambda g: g.permutation(np.arange(5))),
    ("permutation-int", pt.random.permutation, (6,), {}, lambda g: g.permutation(6)),
    ("halfnormal", pt.random.halfnormal, (1.0, 2.0), {"size": 3},
     lambda g: st.halfnorm.rvs(1.0, 2.0, size=3, random_state=g)),
    ("t", pt.random.t, (3.0, 1.0, 2.0), {"size": 3}, lambda g: st.t.rvs(3.0, 1.0, 2.0, size=3, random_state=g)),
    ("cauchy", pt.random.cauchy, (1.0, 2.0), {"size": 3}, lambda g: st.cauchy.rvs(1.0, 2.0, size=3, random_state=g)),
    ("halfcauchy", pt.random.halfcauchy, (1.0, 2.0), {"size": 3},
     lambda g: st.halfcauchy.rvs(1.0, 2.0, size=3, random_state=g)),
    ("gumbel", pt.random.gumbel, (1.0, 2.0), {"size": 3}, lambda g: st.gumbel_r.rvs(1.0, 2.0, size=3, random_state=g)),
    ("pareto", pt.random.pareto, (2.0, 3.0), {"size": 3},
     lambda g: st.pareto.rvs(2.0, scale=3.0, size=3, random_state=g)),
    ("bernoulli", pt.random.bernoulli, ([0.1, 0.9],), {"size": (3, 2)},
     lambda g: st.bernoulli.rvs([0.1, 0.9], size=(3, 2), random_state=g)),
    ("negative_binomial", pt.random.negative_binomial, (5, 0.4), {"size": 4},
     lambda g: st.nbinom.rvs(5, 0.4, size=4, random_state=g)),
]  # fmt: skip


@pytest.mark.parametrize("case", SAME_AS_NUMPY, ids=[c[0] for c in SAME_AS_NUMPY])
def test_same_draws_as_numpy(case):
    _, fn, args, kwargs, reference = case
    got = draw(fn, *args, **kwargs)
    expected = np.asarray(reference(ref_rng()))
    assert got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)


def test_multivariate_normal_draws():
    """mean + L z, with L the Cholesky factor (or the SVD / eigh square root) of cov."""
    mean = np.array([1.0, -1.0])
    z = ref_rng().normal(size=(3, 2))
    got = draw(pt.random.multivariate_normal, mean, COV, size=(3,))
    np.testing.assert_allclose(got, z @ np.linalg.cholesky(COV).T + mean, rtol=1e-12)
    u, s, _ = np.linalg.svd(COV)
    got = draw(pt.random.multivariate_normal, mean, COV, size=(3,), method="svd")
    np.testing.assert_allclose(got, z @ (u * np.sqrt(s)).T + mean, rtol=1e-12)
    got = draw(pt.random.multivariate_normal, mean, COV, size=(3,), method="eigh")
    assert got.shape == (3, 2)


def test_categorical_draws_invert_the_cdf():
    u = ref_rng().uniform(size=6)
    expected = np.searchsorted(np.cumsum(P3), u)
    np.testing.assert_array_equal(draw(pt.random.categorical, P3, size=6), expected)
    a = np.array([10.0, 20.0, 30.0])
    np.testing.assert_array_equal(draw(pt.random.choice, a, size=6, p=P3), a[expected])


def test_successive_calls_follow_numpy():
    rng = arignote.shared(np.random.default_rng(SEED))
    next_rng, x = pt.random.normal(size=2, rng=rng, return_next_rng=True)
    final_rng, k = pt.random.integers(0, 100, size=3, rng=next_rng, return_next_rng=True)
    f = arignote.function([], [x, k], updates={rng: final_rng})
    g = ref_rng()
    for _ in range(3):
        xs, ks = f()
        np.testing.assert_array_equal(xs, g.normal(size=2))
        np.testing.assert_array_equal(ks, g.integers(0, 100, size=3))


# --- dtypes ----------------------------------------------------------------------------------

CONTINUOUS = ["normal", "uniform", "beta", "lognormal", "halfnormal", "exponential", "laplace", "cauchy"]
DISCRETE = ["poisson", "binomial", "bernoulli", "geometric", "negative_binomial", "integers", "categorical"]


def test_output_dtypes():
    assert pt.random.normal().dtype == config.floatX
    assert pt.random.beta(1.0, 1.0).dtype == config.floatX
    assert pt.random.dirichlet([1.0, 1.0]).dtype == config.floatX
    assert pt.random.multivariate_normal(np.zeros(2), np.eye(2)).dtype == config.floatX
    for rv in (pt.random.poisson(1.0), pt.random.binomial(3, 0.5), pt.random.bernoulli(0.5)):
        assert rv.dtype == "int64"
    assert pt.random.integers(5).dtype == pt.random.categorical(P3).dtype == "int64"
    assert pt.random.multinomial(3, P3).dtype == "int64"
    assert pt.random.negative_binomial(3, 0.5).dtype == pt.random.hypergeometric(3, 3, 2).dtype == "int64"
    # choice and permutation keep the dtype of what they draw from
    assert pt.random.choice(np.arange(3.0)).dtype == "float64"
    assert pt.random.permutation(np.arange(3, dtype="int32")).dtype == "int32"


def test_floatx_is_read_when_the_node_is_built():
    with config.change_flags(floatX="float32"):
        x = pt.random.normal(size=3)
    assert x.dtype == "float32"
    assert draw(pt.random.normal, size=3, dtype="float32").dtype == np.float32


def test_dtype_argument():
    x = pt.random.normal(dtype="float32")
    assert x.dtype == "float32" and x.owner.op.dtype == "float32"
    assert draw(pt.random.integers, 5, size=3, dtype="int32").dtype == np.int32
    with pytest.raises(ValueError, match="Cannot change the dtype of a normal random variable"):
        pt.random.normal(dtype="int32")
    with pytest.raises(ValueError, match="from int64 to float64"):
        pt.random.poisson(3.0, dtype="float64")


# --- shapes ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "make, static, value_shape",
    [
        (lambda: pt.random.normal(np.zeros(3), np.ones((2, 1))), (2, 3), (2, 3)),
        (lambda: pt.random.normal(np.zeros(3), np.ones((2, 1)), size=(4, 2, 3)), (4, 2, 3), (4, 2, 3)),
        (lambda: pt.random.normal(size=5), (5,), (5,)),
        (lambda: pt.random.normal(size=()), (), ()),
        (lambda: pt.random.uniform(np.zeros((1, 3)), 1.0, size=(0, 3)), (0, 3), (0, 3)),
        (lambda: pt.random.categorical(np.full((2, 3), 1 / 3), size=(5, 2)), (5, 2), (5, 2)),
        (lambda: pt.random.categorical(np.full((2, 3), 1 / 3)), (2,), (2,)),
        (lambda: pt.random.multinomial([4, 5], P3), (2, 3), (2, 3)),
        (lambda: pt.random.multinomial([4, 5], np.stack([P3, P3]), size=(6, 2)), (6, 2, 3), (6, 2, 3)),
        (lambda: pt.random.multivariate_normal(np.zeros((4, 2)), COV, size=(5, 4)), (5, 4, 2), (5, 4, 2)),
        (lambda: pt.random.multivariate_normal(np.zeros(2), np.stack([COV] * 3)), (3, 2), (3, 2)),
        (lambda: pt.random.dirichlet(np.ones((2, 3))), (2, 3), (2, 3)),
        (lambda: pt.random.dirichlet(np.ones((2, 3)), size=(4, 2)), (4, 2, 3), (4, 2, 3)),
        (lambda: pt.random.choice(np.arange(12.0).reshape(4, 3), size=(2, 5)), (2, 5, 3), (2, 5, 3)),
        (lambda: pt.random.choice(np.arange(12.0).reshape(4, 3), size=(2,), replace=False), (2, 3), (2, 3)),
        (lambda: pt.random.choice(8, size=(2, 3), replace=False), (2, 3), (2, 3)),
        (lambda: pt.random.permutation(np.ones((4, 3))), (4, 3), (4, 3)),
        (lambda: pt.random.permutation(5, size=(3,)), (3, 5), (3, 5)),
        (lambda: pt.random.permutation(np.ones((2, 4)), size=(3, 2)), (3, 2, 2, 4), (3, 2, 2, 4)),
    ],
)
def test_static_and_computed_shapes(make, static, value_shape):
    x = make()
    assert x.type.shape == static
    assert np.shape(x.eval()) == value_shape


def test_batched_draws_use_each_parameter():
    x = draw(pt.random.normal, np.array([0.0, 100.0, 1000.0]), 1e-3, size=(4, 3))
    np.testing.assert_allclose(x, np.broadcast_to([0.0, 100.0, 1000.0], (4, 3)), atol=0.05)
    mean = np.array([[0.0, 0.0], [50.0, -50.0]])
    y = draw(pt.random.multivariate_normal, mean, 1e-6 * np.eye(2), size=(3, 2))
    np.testing.assert_allclose(y, np.broadcast_to(mean, (3, 2, 2)), atol=0.05)
    counts = draw(pt.random.multinomial, np.array([5, 50]), np.array([[1.0, 0.0], [0.0, 1.0]]))
    np.testing.assert_array_equal(counts, [[5, 0], [0, 50]])
    rows = draw(pt.random.dirichlet, np.array([[1e6, 1.0], [1.0, 1e6]]), size=(3, 2))
    np.testing.assert_allclose(rows, np.broadcast_to([[1.0, 0.0], [0.0, 1.0]], (3, 2, 2)), atol=0.05)


def test_symbolic_size():
    n = pt.lscalar("n")
    rng = arignote.shared(np.random.default_rng(SEED))
    x = pt.random.normal(np.zeros(3), 1.0, size=(n, 3), rng=rng)
    assert x.type.shape == (None, 3)
    f = arignote.function([n], x)
    np.testing.assert_array_equal(f(4), ref_rng().normal(np.zeros(3), 1.0, size=(4, 3)))
    y = pt.random.uniform(size=n, rng=rng)
    assert y.type.ndim == 1 and arignote.function([n], y)(7).shape == (7,)
    sz = pt.lvector("sz")
    z = pt.random.uniform(size=pt.specify_shape(sz, (2,)), rng=rng)
    assert z.type.ndim == 2 and arignote.function([sz], z)(np.array([2, 5])).shape == (2, 5)
    w = pt.random.uniform(size=pt.as_tensor(np.array([3, 2], dtype="int32")), rng=rng)
    assert w.type.shape == (3, 2)


# --- statistics ------------------------------------------------------------------------------

N = 10_000


@pytest.mark.parametrize(
    "fn, args, kwargs, mean, var",
    [
        (pt.random.normal, (3.0, 2.0), {}, 3.0, 4.0),
        (pt.random.uniform, (-1.0, 3.0), {}, 1.0, 16 / 12),
        (pt.random.gamma, (2.0,), {"scale": 3.0}, 6.0, 18.0),
        (pt.random.beta, (2.0, 5.0), {}, 2 / 7, 10 / (49 * 8)),
        (pt.random.exponential, (2.0,), {}, 2.0, 4.0),
        (pt.random.lognormal, (0.0, 0.5), {}, np.exp(0.125), (np.exp(0.25) - 1) * np.exp(0.25)),
        (pt.random.laplace, (1.0, 2.0), {}, 1.0, 8.0),
        (pt.random.t, (6.0,), {}, 0.0, 1.5),
        (pt.random.halfnormal, (0.0, 2.0), {}, 2 * np.sqrt(2 / np.pi), 4 * (1 - 2 / np.pi)),
        (pt.random.poisson, (4.0,), {}, 4.0, 4.0),
        (pt.random.negative_binomial, (5, 0.4), {}, 7.5, 18.75),
    ],
)
def test_moments(fn, args, kwargs, mean, var):
    x = draw(fn, *args, size=N, **kwargs)
    se_mean = np.sqrt(var / N)
    assert abs(x.mean() - mean) < 5 * se_mean
    assert abs(x.var() / var - 1) < 0.1


def test_choice_without_replacement_is_distinct_and_weighted():
    x = draw(pt.random.choice, 50, size=(50,), replace=False)
    assert sorted(x.tolist()) == list(range(50))
    p = np.array([0.0, 0.5, 0.0, 0.5])
    y = draw(pt.random.choice, np.array([1.0, 2.0, 3.0, 4.0]), size=(2,), replace=False, p=p)
    assert sorted(y.tolist()) == [2.0, 4.0]
    z = draw(pt.random.choice, np.array([1.0, 2.0, 3.0, 4.0]), size=(500,), p=p)
    assert set(z.tolist()) == {2.0, 4.0}


def test_permutation_is_a_permutation():
    rows = np.arange(12).reshape(4, 3)
    x = draw(pt.random.permutation, rows)
    assert sorted(map(tuple, x.tolist())) == sorted(map(tuple, rows.tolist()))
    batch = draw(pt.random.permutation, 6, size=(5,))
    assert all(sorted(r) == list(range(6)) for r in batch.tolist())


def test_bernoulli_and_categorical_frequencies():
    b = draw(pt.random.bernoulli, 0.3, size=N)
    assert set(np.unique(b)) <= {0, 1} and abs(b.mean() - 0.3) < 0.025
    c = draw(pt.random.categorical, P3, size=N)
    np.testing.assert_allclose(np.bincount(c, minlength=3) / N, P3, atol=0.025)


# --- gamma's parametrisation -----------------------------------------------------------------


def test_gamma_shape_scale_and_deprecated_rate():
    by_scale = draw(pt.random.gamma, 2.0, scale=0.25, size=3)
    with pytest.warns(FutureWarning, match="rate"):
        by_rate = draw(pt.random.gamma, 2.0, 4.0, size=3)  # the second positional is the rate
    np.testing.assert_allclose(by_rate, by_scale)
    np.testing.assert_array_equal(by_scale, ref_rng().gamma(2.0, 0.25, size=3))
    with pytest.raises(ValueError, match="give the scale"):
        pt.random.gamma(2.0)
    with pytest.raises(ValueError, match="not both"):
        pt.random.gamma(2.0, rate=1.0, scale=1.0)
    with pytest.warns(FutureWarning):
        symbolic = pt.random.gamma(2.0, rate=pt.dscalar("r"))
    assert symbolic.type.ndim == 0


# --- errors ----------------------------------------------------------------------------------


def test_parameter_ndim_errors():
    with pytest.raises(ValueError, match=r"parameter 1 \(cov\) must have at least 2 dimension"):
        pt.random.multivariate_normal(np.zeros(3), np.ones(3))
    with pytest.raises(ValueError, match=r"parameter 0 \(alphas\) must have at least 1"):
        pt.random.dirichlet(1.0)
    with pytest.raises(ValueError, match=r"parameter 0 \(p\) must have at least 1"):
        pt.random.categorical(0.5)
    with pytest.raises(
        ValueError, match=r"core dimension 'n' .* length 3 in parameter 0 \(mean\) but 2 in parameter 1"
    ):
        pt.random.multivariate_normal(np.zeros(3), np.eye(2))
    with pytest.raises(ValueError, match="p must be a vector"):
        pt.random.choice(5, p=np.ones((2, 3)))
    with pytest.raises(ValueError):  # p has another length than a
        pt.random.choice(np.arange(4.0), p=np.ones(3) / 3)
    with pytest.raises(TypeError, match="takes 2 distribution parameters, got 3"):
        pt.random.normal.make_node(None, None, 0.0, 1.0, 2.0)
    with pytest.raises(TypeError, match="unexpected arguments"):
        pt.random.normal(0.0, 1.0, sizes=3)


def _runtime_error(x, *inputs_and_values):
    ins = list(inputs_and_values[::2])
    f = arignote.function(ins, x)
    with pytest.raises(Exception) as info:
        f(*inputs_and_values[1::2])
    notes = "\n".join(getattr(info.value, "__notes__", []))
    return info.value, notes


def test_invalid_parameter_values_raise_numpy_errors_naming_the_node():
    rng = arignote.shared(np.random.default_rng(0))
    s = pt.dscalar("s")
    err, notes = _runtime_error(pt.random.normal(0.0, s, rng=rng), s, -1.0)
    assert isinstance(err, ValueError) and "scale < 0" in str(err)
    assert 'Apply node that caused the error: normal_rv{"(),()->()"}' in notes
    lam = pt.dvector("lam")
    err, notes = _runtime_error(pt.random.poisson(lam, rng=rng), lam, np.array([1.0, -1.0]))
    assert isinstance(err, ValueError) and "poisson_rv" in notes
    p = pt.dscalar("p")
    err, notes = _runtime_error(pt.random.binomial(5, p, rng=rng), p, 1.5)
    assert isinstance(err, ValueError) and "binomial_rv" in notes
    cov = pt.dmatrix("cov")
    err, notes = _runtime_error(pt.random.multivariate_normal(np.zeros(2), cov, rng=rng), cov, -np.eye(2))
    assert isinstance(err, np.linalg.LinAlgError) and "multivariate_normal_rv" in notes


def test_runtime_core_length_mismatch():
    rng = arignote.shared(np.random.default_rng(0))
    mu, cov = pt.dvector("mu"), pt.dmatrix("cov")
    err, notes = _runtime_error(
        pt.random.multivariate_normal(mu, cov, rng=rng), mu, np.zeros(3), cov, np.eye(2)
    )
    assert isinstance(err, ValueError)
    assert "parameter 1 (cov) has shape (2, 2)" in str(err) and "as in parameter 0 (mean)" in str(err)


def test_runtime_size_mismatch_with_parameters():
    rng = arignote.shared(np.random.default_rng(0))
    m = pt.dvector("m")
    err, notes = _runtime_error(pt.random.normal(m, 1.0, size=(2, 3), rng=rng), m, np.zeros(4))
    assert isinstance(err, ValueError) and "normal_rv" in notes
    p = pt.dmatrix("p")
    err, _ = _runtime_error(pt.random.categorical(p, size=(1,), rng=rng), p, np.full((2, 3), 1 / 3))
    assert isinstance(err, ValueError) and "does not fit" in str(err)
