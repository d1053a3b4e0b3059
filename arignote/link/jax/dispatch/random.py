"""JAX functions of the random variables (:mod:`arignote.tensor.random`).

In a JAX function a generator is a JAX key (a typed ``jax.random`` key): the linker converts a
``numpy.random.Generator`` to one (:func:`~arignote.link.jax.linker.generator_to_key`: the
same generator state always gives the same key, so a seed gives reproducible draws), and a
key back to a Generator where the host needs one. A random variable splits its key: one part
draws, the other is the generator's next state (the node's first output), so draws chained
through ``next_rng`` and shared generators updated with it move on from call to call.

Draws come from ``jax.random``'s samplers, with the parameterisations of NumPy/SciPy that
the reference uses (``scale`` of the exponential, ``b``/``scale`` of the Pareto, ...); they
follow the same distributions as the reference's, not the same numbers. The few without a
``jax.random`` sampler (:data:`HOST_DRAWN`: von Mises, hypergeometric, permutations and
choices of rows) draw on the host with the Op's own NumPy ``rng_fn``, fed a Generator seeded
from the key: still reproducible, under ``jit`` on every device.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from arignote.graph.basic import Apply
from arignote.link.jax.dispatch.basic import jax_funcify, jax_typify
from arignote.link.jax.dispatch.static import as_dtype, kept_errors, static_input
from arignote.link.jax.dispatch.tensor_basic import static_ints
from arignote.tensor.random import basic as rv
from arignote.tensor.random.op import DefaultGeneratorMakerOp, RandomVariable

__all__ = ["CORE_SAMPLERS", "HOST_DRAWN", "SAMPLERS", "generator_to_key", "key_to_generator"]


@jax_typify.register(np.random.Generator)
def generator_to_key(gen: np.random.Generator, **kwargs: Any) -> jax.Array:
    """The JAX key standing for ``gen``'s state: drawn from a copy of it, so the generator
    is unchanged and the same state always gives the same key."""
    bits = copy.deepcopy(gen).integers(0, 2**32, size=2, dtype=np.uint32)
    return jax.random.wrap_key_data(as_dtype(bits, jnp.uint32))


def key_to_generator(key: Any) -> np.random.Generator:
    """A ``numpy.random.Generator`` seeded from a JAX key's bits (the host value of a key a
    shared generator holds after a JAX call): deterministic, so runs stay reproducible."""
    return _seeded_generator(jax.random.key_data(key))


def _seeded_generator(key_data: Any) -> np.random.Generator:
    return np.random.default_rng(np.asarray(key_data).astype(np.uint64))


# --- samplers: (key, shape, dtype, *params broadcast to shape's batch) -> draws ---------------


def _normal(key: Any, shape: tuple, dtype: Any, loc: Any, scale: Any) -> Any:
    return loc + scale * jax.random.normal(key, shape, dtype)


def _halfnormal(key: Any, shape: tuple, dtype: Any, loc: Any, scale: Any) -> Any:
    return loc + scale * jnp.abs(jax.random.normal(key, shape, dtype))


def _uniform(key: Any, shape: tuple, dtype: Any, low: Any, high: Any) -> Any:
    return low + (high - low) * jax.random.uniform(key, shape, dtype)


def _wald(key: Any, shape: tuple, dtype: Any, mean: Any, scale: Any) -> Any:
    # Michael, Schucany and Haas: the root of a chi-square(1) transform, then a coin flip
    k1, k2 = jax.random.split(key)
    y = jax.random.normal(k1, shape, dtype) ** 2
    mu_y = mean * y
    x = mean + mean * mu_y / (2 * scale) - mean / (2 * scale) * jnp.sqrt(4 * mu_y * scale + mu_y**2)
    u = jax.random.uniform(k2, shape, dtype)
    return jnp.where(u <= mean / (mean + x), x, mean**2 / x)


def _truncexpon(key: Any, shape: tuple, dtype: Any, b: Any, loc: Any, scale: Any) -> Any:
    u = jax.random.uniform(key, shape, dtype)
    return loc + scale * -jnp.log1p(-u * -jnp.expm1(-b))


def _gengamma(key: Any, shape: tuple, dtype: Any, alpha: Any, p: Any, lambd: Any) -> Any:
    g = jax.random.gamma(key, jnp.broadcast_to(alpha / p, shape), shape, dtype)
    return lambd * g ** (1 / p)


def _negative_binomial(key: Any, shape: tuple, dtype: Any, n: Any, p: Any) -> Any:
    k1, k2 = jax.random.split(key)
    rate = jax.random.gamma(k1, jnp.broadcast_to(n, shape).astype(jnp.float64), shape) * (1 - p) / p
    return jax.random.poisson(k2, rate, shape)


def _beta_binomial(key: Any, shape: tuple, dtype: Any, n: Any, a: Any, b: Any) -> Any:
    k1, k2 = jax.random.split(key)
    prob = jax.random.beta(k1, jnp.broadcast_to(a, shape), jnp.broadcast_to(b, shape), shape)
    return jax.random.binomial(k2, jnp.broadcast_to(n, shape).astype(jnp.float64), prob, shape)


def _float(x: Any) -> Any:
    x = jnp.asarray(x)
    return x if jnp.issubdtype(x.dtype, jnp.floating) else x.astype(jnp.float64)


#: distribution class -> sampler(key, shape, dtype, *params)
SAMPLERS: dict[type, Callable[..., Any]] = {
    rv.UniformRV: _uniform,
    rv.TriangularRV: lambda k, s, d, left, mode, right: jax.random.triangular(k, left, mode, right, s, d),
    rv.BetaRV: lambda k, s, d, a, b: jax.random.beta(k, a, b, s, d),
    rv.NormalRV: _normal,
    rv.HalfNormalRV: _halfnormal,
    rv.LogNormalRV: lambda k, s, d, mean, sigma: jnp.exp(_normal(k, s, d, mean, sigma)),
    rv.GammaRV: lambda k, s, d, shape, scale: scale * jax.random.gamma(k, jnp.broadcast_to(shape, s), s, d),
    rv.ParetoRV: lambda k, s, d, b, scale: scale * jax.random.pareto(k, jnp.broadcast_to(b, s), s, d),
    rv.GumbelRV: lambda k, s, d, loc, scale: loc + scale * jax.random.gumbel(k, s, d),
    rv.ExponentialRV: lambda k, s, d, scale: scale * jax.random.exponential(k, s, d),
    rv.WeibullRV: lambda k, s, d, a: jax.random.weibull_min(k, 1.0, jnp.broadcast_to(a, s), s, d),
    rv.LogisticRV: lambda k, s, d, loc, scale: loc + scale * jax.random.logistic(k, s, d),
    rv.CauchyRV: lambda k, s, d, loc, scale: loc + scale * jax.random.cauchy(k, s, d),
    rv.HalfCauchyRV: lambda k, s, d, loc, scale: loc + scale * jnp.abs(jax.random.cauchy(k, s, d)),
    rv.InvGammaRV: lambda k, s, d, shape, scale: (
        scale / jax.random.gamma(k, jnp.broadcast_to(shape, s), s, d)
    ),
    rv.WaldRV: _wald,
    rv.TruncExponentialRV: _truncexpon,
    rv.StudentTRV: lambda k, s, d, df, loc, scale: (
        loc + scale * jax.random.t(k, jnp.broadcast_to(df, s), s, d)
    ),
    rv.LaplaceRV: lambda k, s, d, loc, scale: loc + scale * jax.random.laplace(k, s, d),
    rv.GenGammaRV: _gengamma,
    rv.PoissonRV: lambda k, s, d, lam: jax.random.poisson(k, jnp.broadcast_to(lam, s), s),
    rv.GeometricRV: lambda k, s, d, p: jax.random.geometric(k, jnp.broadcast_to(p, s), s),
    rv.BernoulliRV: lambda k, s, d, p: jax.random.bernoulli(k, jnp.broadcast_to(p, s), s),
    rv.BinomialRV: lambda k, s, d, n, p: jax.random.binomial(k, _float(jnp.broadcast_to(n, s)), p, s),
    rv.NegBinomialRV: _negative_binomial,
    rv.BetaBinomialRV: _beta_binomial,
    rv.IntegersRV: lambda k, s, d, low, high: jax.random.randint(k, s, low, high, d),
}


def _mvnormal(key: Any, batch: tuple, dtype: Any, mean: Any, cov: Any) -> Any:
    return jax.random.multivariate_normal(key, mean, cov, batch, dtype, method="svd")


def _dirichlet(key: Any, batch: tuple, dtype: Any, alphas: Any) -> Any:
    return jax.random.dirichlet(key, jnp.broadcast_to(alphas, (*batch, alphas.shape[-1])), batch, dtype)


def _categorical(key: Any, batch: tuple, dtype: Any, p: Any) -> Any:
    with np.errstate(divide="ignore"):
        logits = jnp.log(p)
    return jax.random.categorical(key, logits, axis=-1, shape=batch)


def _multinomial(key: Any, batch: tuple, dtype: Any, n: Any, p: Any) -> Any:
    p = jnp.broadcast_to(p, (*batch, p.shape[-1]))
    n = _float(jnp.broadcast_to(n, batch))
    return jax.random.multinomial(key, n, p, shape=(*batch, p.shape[-1]))


#: distributions with core dimensions: class -> sampler(key, batch shape, dtype, *params)
CORE_SAMPLERS: dict[type, Callable[..., Any]] = {
    rv.MvNormalRV: _mvnormal,
    rv.DirichletRV: _dirichlet,
    rv.CategoricalRV: _categorical,
    rv.MultinomialRV: _multinomial,
}

#: distributions drawn on the host by the Op's NumPy ``rng_fn`` (no ``jax.random`` sampler)
HOST_DRAWN: tuple[type, ...] = (
    rv.VonMisesRV,
    rv.HyperGeometricRV,
    rv.ChoiceWithReplacement,
    rv.ChoiceWithoutReplacement,
    rv.PermutationRV,
)


def _size_tuple(node: Apply, size: Any) -> tuple[int, ...] | None:
    """The ``size`` given to the draw (None: none), known when compiling: the node's
    constant, else the value itself when concrete."""
    c = static_input(node, 1)
    if c is not None:
        return None if c.dtype == object else tuple(int(v) for v in c.reshape(-1))
    return None if size is None else static_ints(size, node, "the size")


def _batch_shape(op: RandomVariable, node: Apply, size: Any, params: tuple) -> tuple[int, ...]:
    """The batch shape of the draws: ``size`` when given, else the parameters' broadcast."""
    given = _size_tuple(node, size)
    if given is not None:
        return given
    batch_ndim = node.outputs[1].type.ndim - op.ndim_supp
    shapes = [jnp.shape(p)[: jnp.ndim(p) - nd] for p, nd in zip(params, op.ndims_params)]
    return tuple(jnp.broadcast_shapes(*shapes)) if shapes else (1,) * batch_ndim


def _host_draw(op: RandomVariable, node: Apply) -> Callable:
    """Draws by ``op.rng_fn`` on the host, with a Generator seeded from the key."""
    dtype = np.dtype(node.outputs[1].type.dtype)

    def draw(key: Any, size: Any, *params: Any) -> Any:
        size_t = _size_tuple(node, size)
        shape = _static_output_shape(node, size_t, params, op)

        def host(key_data: Any, *values: Any) -> Any:
            values = [np.asarray(v) for v in values]
            draws = op.rng_fn(_seeded_generator(key_data), *values, size_t)
            return np.asarray(draws, dtype=dtype).reshape(shape)

        spec = jax.ShapeDtypeStruct(shape, dtype)
        return jax.pure_callback(
            kept_errors(host), spec, jax.random.key_data(key), *params, vmap_method="sequential"
        )

    return draw


def _static_output_shape(node: Apply, size: tuple | None, params: tuple, op: RandomVariable) -> tuple:
    """The draws' shape: the Type's where static, else computed by the Op's shape rule
    on the (static) shapes of the parameters."""
    static = node.outputs[1].type.shape
    if all(s is not None for s in static):
        return tuple(static)
    core = op._supp_shape_from_params(list(node.inputs[2:]), [tuple(jnp.shape(p)) for p in params])
    core = tuple(int(c) for c in core)
    batch = size if size is not None else _batch_shape(op, node, None, params)
    return (*batch, *core)


@jax_funcify.register(RandomVariable)
def _funcify_random_variable(op: RandomVariable, node: Apply | None = None, **kwargs: Any) -> Callable:
    if node is None:
        raise ValueError("a random variable's JAX function needs its node")
    cls = type(op)
    dtype = np.dtype(node.outputs[1].type.dtype)
    if cls in HOST_DRAWN:
        draw = _host_draw(op, node)

        def host_rv(key: Any, size: Any, *params: Any) -> tuple:
            next_key, sub = jax.random.split(key)
            return next_key, draw(sub, size, *params)

        return host_rv
    if cls in SAMPLERS:
        sampler, core = SAMPLERS[cls], False
    elif cls in CORE_SAMPLERS:
        sampler, core = CORE_SAMPLERS[cls], True
    else:
        raise NotImplementedError(
            f"{cls.__name__} ({op}) has no JAX sampler: register one with "
            f"arignote.link.jax.dispatch.jax_funcify.register({cls.__name__})"
        )
    # floats are drawn in the output's dtype; integer draws get it as theirs
    work = dtype

    def random_variable(key: Any, size: Any, *params: Any) -> tuple:
        if dtype.kind == "f":  # (integer parameters of a float distribution)
            params = tuple(as_dtype(p, dtype) for p in params)
        batch = _batch_shape(op, node, size, params)
        next_key, sub = jax.random.split(key)
        if core:
            draws = sampler(sub, batch, work, *params)
        else:
            params = tuple(jnp.broadcast_to(p, batch) for p in params)
            draws = sampler(sub, batch, work, *params)
        return next_key, jnp.asarray(draws).astype(dtype)

    return random_variable


@jax_funcify.register(DefaultGeneratorMakerOp)
def _funcify_default_rng(op: DefaultGeneratorMakerOp, node: Apply | None = None, **kwargs: Any) -> Callable:
    def default_rng(seed: Any) -> Any:
        if seed is None:
            raise ValueError(
                "default_rng(None) draws fresh entropy on every call, which a compiled JAX "
                "function cannot do: give a seed, or pass a generator as an input"
            )
        try:
            value = np.asarray(seed)
        except Exception:  # a traced seed (a function input): JAX's own key from it
            return jax.random.key(jnp.asarray(seed).reshape(-1)[0])
        seed_value = int(value) if value.ndim == 0 else [int(s) for s in value]
        return generator_to_key(np.random.default_rng(seed_value))

    return default_rng
