"""The distributions: one :class:`RandomVariable` (or helper function) per distribution.

Every call takes the distribution's parameters (broadcast together, as in NumPy), then
``size`` (None, an int, a tuple, or an integer vector of known length), ``rng`` (a
random generator variable; a fresh unseeded one if omitted), ``dtype`` and
``return_next_rng``. Continuous draws are ``config.floatX``, discrete ones int64.
Draws are those of ``numpy.random.Generator`` (via ``scipy.stats`` for the
distributions NumPy lacks), so a seed gives the same numbers as NumPy:

>>> import numpy as np
>>> import arignote
>>> import arignote.tensor as pt
>>> rng = arignote.shared(np.random.default_rng(12))
>>> x = pt.random.poisson([1.0, 10.0], size=(3, 2), rng=rng)
>>> bool((x.eval() == np.random.default_rng(12).poisson([1.0, 10.0], size=(3, 2))).all())
True
"""

from __future__ import annotations

import warnings
from typing import Any, Literal

import numpy as np

from arignote.graph.basic import Variable
from arignote.tensor.conversion import (
    NotScalarConstantError,
    as_tensor_variable,
    get_underlying_scalar_constant_value,
)
from arignote.tensor.random.op import RandomVariable, _vector_entries
from arignote.tensor.random.utils import normalize_size_param, static_size_entries
from arignote.tensor.shape import ShapeError, shape, shape_i, shape_tuple, specify_shape
from arignote.tensor.ufuncs import sqrt

__all__ = [
    "bernoulli",
    "beta",
    "betabinom",
    "binomial",
    "categorical",
    "cauchy",
    "chisquare",
    "choice",
    "dirichlet",
    "exponential",
    "gamma",
    "gengamma",
    "geometric",
    "gumbel",
    "halfcauchy",
    "halfnormal",
    "hypergeometric",
    "integers",
    "invgamma",
    "laplace",
    "logistic",
    "lognormal",
    "multinomial",
    "multivariate_normal",
    "nbinom",
    "negative_binomial",
    "normal",
    "pareto",
    "permutation",
    "poisson",
    "standard_normal",
    "t",
    "triangular",
    "truncexpon",
    "uniform",
    "vonmises",
    "wald",
    "weibull",
]


def _stats() -> Any:
    import scipy.stats  # slow to import: only when a SciPy-backed draw first runs

    return scipy.stats


def _unbatched(x: np.ndarray, core_ndim: int) -> np.ndarray | None:
    """``x`` without its batch dimensions when they are all of length 1 (a parameter
    broadcast along the batch, not batched), else None."""
    nb = x.ndim - core_ndim
    if all(s == 1 for s in x.shape[:nb]):
        return x.reshape(x.shape[nb:])
    return None


class ScipyRandomVariable(RandomVariable):
    """A random variable drawn by ``scipy.stats`` (``rng_fn_scipy``) with the node's
    generator. SciPy may drop the broadcast dimensions of a draw without ``size``; they
    are restored here."""

    def rng_fn_scipy(self, rng: np.random.Generator, *args: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define rng_fn_scipy")

    def rng_fn(self, rng: np.random.Generator, *args: Any) -> np.ndarray:
        *params, size = args
        res = np.asarray(self.rng_fn_scipy(rng, *params, size))
        if size is None:
            expected = np.broadcast_shapes(*(np.shape(p) for p in params))
            if res.shape != expected:
                res = np.broadcast_to(res, expected).copy()
        return res


# --- continuous ----------------------------------------------------------------------------


class UniformRV(RandomVariable):
    """Uniform on ``[low, high)``."""

    name = "uniform"
    signature = "(),()->()"
    dtype = "floatX"

    def __call__(self, low: Any = 0.0, high: Any = 1.0, size: Any = None, **kwargs: Any) -> Any:
        return super().__call__(low, high, size=size, **kwargs)


uniform = UniformRV()


class TriangularRV(RandomVariable):
    """Triangular on ``[left, right]`` with its peak at ``mode``."""

    name = "triangular"
    signature = "(),(),()->()"
    dtype = "floatX"

    def __call__(self, left: Any, mode: Any, right: Any, size: Any = None, **kwargs: Any) -> Any:
        return super().__call__(left, mode, right, size=size, **kwargs)


triangular = TriangularRV()


class BetaRV(RandomVariable):
    """Beta with shape parameters ``alpha`` and ``beta`` (both positive)."""

    name = "beta"
    signature = "(),()->()"
    dtype = "floatX"

    def __call__(self, alpha: Any, beta: Any, size: Any = None, **kwargs: Any) -> Any:
        return super().__call__(alpha, beta, size=size, **kwargs)


beta = BetaRV()


class NormalRV(RandomVariable):
    """Normal with mean ``loc`` and standard deviation ``scale``.

    >>> import numpy as np
    >>> import arignote
    >>> rng = arignote.shared(np.random.default_rng(1))
    >>> normal(10.0, 0.5, size=2, rng=rng).eval()
    array([10.1727921 , 10.41080907])
    >>> np.random.default_rng(1).normal(10.0, 0.5, size=2)
    array([10.1727921 , 10.41080907])
    """

    name = "normal"
    signature = "(),()->()"
    dtype = "floatX"

    def __call__(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None, **kwargs: Any) -> Any:
        return super().__call__(loc, scale, size=size, **kwargs)


normal = NormalRV()


def standard_normal(
    *, size: Any = None, rng: Any = None, dtype: Any = None, return_next_rng: bool = False
) -> Any:
    """Normal with mean 0 and standard deviation 1."""
    return normal(0.0, 1.0, size=size, rng=rng, dtype=dtype, return_next_rng=return_next_rng)


class HalfNormalRV(ScipyRandomVariable):
    """Half-normal: ``loc + scale * |z|`` for a standard normal ``z``."""

    name = "halfnormal"
    signature = "(),()->()"
    dtype = "floatX"

    def __call__(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None, **kwargs: Any) -> Any:
        return super().__call__(loc, scale, size=size, **kwargs)

    def rng_fn_scipy(self, rng: np.random.Generator, loc: Any, scale: Any, size: Any) -> Any:
        return _stats().halfnorm.rvs(loc, scale, random_state=rng, size=size)


halfnormal = HalfNormalRV()


class LogNormalRV(RandomVariable):
    """Log-normal: ``exp`` of a normal with mean ``mean`` and standard deviation ``sigma``."""

    name = "lognormal"
    signature = "(),()->()"
    dtype = "floatX"

    def __call__(self, mean: Any = 0.0, sigma: Any = 1.0, size: Any = None, **kwargs: Any) -> Any:
        return super().__call__(mean, sigma, size=size, **kwargs)


lognormal = LogNormalRV()


class GammaRV(RandomVariable):
    """Gamma with ``shape`` and ``scale`` (the Op; :func:`gamma` is the user's entry point)."""

    name = "gamma"
    signature = "(),()->()"
    dtype = "floatX"

    def __call__(self, shape: Any, scale: Any, size: Any = None, **kwargs: Any) -> Any:
        return super().__call__(shape, scale, size=size, **kwargs)


_gamma = GammaRV()


def gamma(shape: Any, rate: Any = None, scale: Any = None, **kwargs: Any) -> Any:
    """Gamma with ``shape`` and ``scale`` (mean ``shape * scale``), as in PyTensor 3.

    Give ``scale`` by keyword. ``rate`` (``1 / scale``; also what a second positional
    argument is) still works but is deprecated (a ``FutureWarning``).

    >>> import numpy as np
    >>> import arignote
    >>> rng = arignote.shared(np.random.default_rng(4))
    >>> bool(gamma(2.0, scale=3.0, rng=rng).eval() == np.random.default_rng(4).gamma(2.0, 3.0))
    True
    """
    if rate is not None and scale is not None:
        raise ValueError("gamma: give either rate or scale, not both")
    if rate is None and scale is None:
        raise ValueError("gamma: give the scale (gamma(shape, scale=...))")
    if rate is not None:
        warnings.warn(
            "gamma's rate argument is deprecated (PyTensor 3): use scale=1/rate", FutureWarning, stacklevel=2
        )
        scale = 1.0 / as_tensor_variable(rate) if isinstance(rate, Variable) else 1.0 / np.asarray(rate)
    return _gamma(shape, scale, **kwargs)


def chisquare(df: Any, size: Any = None, rng: Any = None, return_next_rng: bool = False) -> Any:
    """Chi-square with ``df`` degrees of freedom (a gamma with shape ``df / 2``, scale 2)."""
    return _gamma(as_tensor_variable(df) / 2.0, 2.0, size=size, rng=rng, return_next_rng=return_next_rng)


def rayleigh(scale: Any = 1.0, *, size: Any = None, rng: Any = None, return_next_rng: bool = False) -> Any:
    """Rayleigh with ``scale``: ``scale * sqrt(chisquare(2))``."""
    scale = as_tensor_variable(scale)
    if size is None:
        size = shape(scale)
    next_rng, draws = chisquare(2, size=size, rng=rng, return_next_rng=True)
    out = sqrt(draws) * scale
    return (next_rng, out) if return_next_rng else out


class ParetoRV(ScipyRandomVariable):
    """Pareto with shape ``b`` and minimum ``scale`` (SciPy's ``pareto``)."""

    name = "pareto"
    signature = "(),()->()"
    dtype = "floatX"

    def __call__(self, b: Any, scale: Any = 1.0, size: Any = None, **kwargs: Any) -> Any:
        return super().__call__(b, scale, size=size, **kwargs)

    def rng_fn_scipy(self, rng: np.random.Generator, b: Any, scale: Any, size: Any) -> Any:
        return _stats().pareto.rvs(b, scale=scale, size=size, random_state=rng)


pareto = ParetoRV()


class GumbelRV(ScipyRandomVariable):
    """Gumbel (right-skewed) with location ``loc`` and ``scale``."""

    name = "gumbel"
    signature = "(),()->()"
    dtype = "floatX"

    def __call__(self, loc: Any, scale: Any = 1.0, size: Any = None, **kwargs: Any) -> Any:
        return super().__call__(loc, scale, size=size, **kwargs)

    def rng_fn_scipy(self, rng: np.random.Generator, loc: Any, scale: Any, size: Any) -> Any:
        return _stats().gumbel_r.rvs(loc=loc, scale=scale, size=size, random_state=rng)


gumbel = GumbelRV()


class ExponentialRV(RandomVariable):
    """Exponential with ``scale`` (the mean, ``1 / rate``)."""

    name = "exponential"
    signature = "()->()"
    dtype = "floatX"

    def __call__(self, scale: Any = 1.0, size: Any = None, **kwargs: Any) -> Any:
        return super().__call__(scale, size=size, **kwargs)


exponential = ExponentialRV()


class WeibullRV(RandomVariable):
    """Weibull with ``shape`` (scale 1)."""

    name = "weibull"
    signature = "()->()"
    dtype = "floatX"

    def __call__(self, shape: Any, size: Any = None, **kwargs: Any) -> Any:
        return super().__call__(shape, size=size, **kwargs)


weibull = WeibullRV()


class LogisticRV(RandomVariable):
    """Logistic with location ``loc`` and ``scale``."""

    name = "logistic"
    signature = "(),()->()"
    dtype = "floatX"

    def __call__(self, loc: Any = 0, scale: Any = 1, size: Any = None, **kwargs: Any) -> Any:
        return super().__call__(loc, scale, size=size, **kwargs)


logistic = LogisticRV()


class VonMisesRV(RandomVariable):
    """Von Mises (circular) with mode ``mu`` and concentration ``kappa``, on ``[-pi, pi]``."""

    name = "vonmises"
    signature = "(),()->()"
    dtype = "floatX"

    def __call__(self, mu: Any, kappa: Any, size: Any = None, **kwargs: Any) -> Any:
        return super().__call__(mu, kappa, size=size, **kwargs)


vonmises = VonMisesRV()


class CauchyRV(ScipyRandomVariable):
    """Cauchy with location ``loc`` and ``scale``."""

    name = "cauchy"
    signature = "(),()->()"
    dtype = "floatX"

    def __call__(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None, **kwargs: Any) -> Any:
        return super().__call__(loc, scale, size=size, **kwargs)

    def rng_fn_scipy(self, rng: np.random.Generator, loc: Any, scale: Any, size: Any) -> Any:
        return _stats().cauchy.rvs(loc=loc, scale=scale, random_state=rng, size=size)


cauchy = CauchyRV()


class HalfCauchyRV(ScipyRandomVariable):
    """Half-Cauchy: ``loc + scale * |c|`` for a standard Cauchy ``c``."""

    name = "halfcauchy"
    signature = "(),()->()"
    dtype = "floatX"

    def __call__(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None, **kwargs: Any) -> Any:
        return super().__call__(loc, scale, size=size, **kwargs)

    def rng_fn_scipy(self, rng: np.random.Generator, loc: Any, scale: Any, size: Any) -> Any:
        return _stats().halfcauchy.rvs(loc=loc, scale=scale, random_state=rng, size=size)


halfcauchy = HalfCauchyRV()


class InvGammaRV(RandomVariable):
    """Inverse gamma with ``shape`` and ``scale``: ``1 / gamma(shape, scale=1 / scale)``."""

    name = "invgamma"
    signature = "(),()->()"
    dtype = "floatX"

    def __call__(self, shape: Any, scale: Any, size: Any = None, **kwargs: Any) -> Any:
        return super().__call__(shape, scale, size=size, **kwargs)

    def rng_fn(self, rng: np.random.Generator, shape: Any, scale: Any, size: Any) -> Any:
        return 1 / rng.gamma(shape, 1 / scale, size)


invgamma = InvGammaRV()


class WaldRV(RandomVariable):
    """Wald (inverse Gaussian) with ``mean`` and ``scale``."""

    name = "wald"
    signature = "(),()->()"
    dtype = "floatX"

    def __call__(self, mean: Any = 1.0, scale: Any = 1.0, size: Any = None, **kwargs: Any) -> Any:
        return super().__call__(mean, scale, size=size, **kwargs)


wald = WaldRV()


class TruncExponentialRV(ScipyRandomVariable):
    """Exponential truncated at ``b`` (SciPy's ``truncexpon``), shifted by ``loc``, scaled by ``scale``."""

    name = "truncexpon"
    signature = "(),(),()->()"
    dtype = "floatX"

    def __call__(self, b: Any, loc: Any = 0.0, scale: Any = 1.0, size: Any = None, **kwargs: Any) -> Any:
        return super().__call__(b, loc, scale, size=size, **kwargs)

    def rng_fn_scipy(self, rng: np.random.Generator, b: Any, loc: Any, scale: Any, size: Any) -> Any:
        return _stats().truncexpon.rvs(b, loc=loc, scale=scale, size=size, random_state=rng)


truncexpon = TruncExponentialRV()


class StudentTRV(ScipyRandomVariable):
    """Student's t with ``df`` degrees of freedom, location ``loc`` and ``scale``."""

    name = "t"
    signature = "(),(),()->()"
    dtype = "floatX"

    def __call__(self, df: Any, loc: Any = 0.0, scale: Any = 1.0, size: Any = None, **kwargs: Any) -> Any:
        return super().__call__(df, loc, scale, size=size, **kwargs)

    def rng_fn_scipy(self, rng: np.random.Generator, df: Any, loc: Any, scale: Any, size: Any) -> Any:
        return _stats().t.rvs(df, loc=loc, scale=scale, size=size, random_state=rng)


t = StudentTRV()


class LaplaceRV(RandomVariable):
    """Laplace (double exponential) with location ``loc`` and ``scale``."""

    name = "laplace"
    signature = "(),()->()"
    dtype = "floatX"

    def __call__(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None, **kwargs: Any) -> Any:
        return super().__call__(loc, scale, size=size, **kwargs)


laplace = LaplaceRV()


class GenGammaRV(ScipyRandomVariable):
    """Generalized gamma with ``alpha``, ``p`` and scale ``lambd``."""

    name = "gengamma"
    signature = "(),(),()->()"
    dtype = "floatX"

    def __call__(
        self, alpha: Any = 1.0, p: Any = 1.0, lambd: Any = 1.0, size: Any = None, **kwargs: Any
    ) -> Any:
        return super().__call__(alpha, p, lambd, size=size, **kwargs)

    def rng_fn_scipy(self, rng: np.random.Generator, alpha: Any, p: Any, lambd: Any, size: Any) -> Any:
        return _stats().gengamma.rvs(alpha / p, p, scale=lambd, size=size, random_state=rng)


gengamma = GenGammaRV()


# --- multivariate continuous ------------------------------------------------------------------


class MvNormalRV(RandomVariable):
    """Multivariate normal with ``mean`` (``n``) and covariance ``cov`` (``n x n``).

    A draw is ``mean + A @ z`` for standard normal ``z`` and ``A @ A.T == cov``; ``A``
    comes from ``method``: ``"cholesky"`` (the default; ``cov`` must be positive
    definite), ``"svd"`` or ``"eigh"`` (positive semi-definite ``cov`` works).

    >>> import numpy as np
    >>> import arignote
    >>> rng = arignote.shared(np.random.default_rng(0))
    >>> x = multivariate_normal(np.zeros(2), np.eye(2), size=(5,), rng=rng)
    >>> x.type, str(x.owner.op)
    (TensorType(float64, shape=(5, 2)), 'multivariate_normal_rv{"(n),(n,n)->(n)", cholesky}')
    """

    name = "multivariate_normal"
    signature = "(n),(n,n)->(n)"
    dtype = "floatX"
    __props__ = ("name", "signature", "dtype", "inplace", "method")

    def __init__(self, *args: Any, method: Literal["cholesky", "svd", "eigh"] = "cholesky", **kwargs: Any):
        super().__init__(*args, **kwargs)
        if method not in ("cholesky", "svd", "eigh"):
            raise ValueError(
                f"multivariate_normal: method must be 'cholesky', 'svd' or 'eigh', got {method!r}"
            )
        self.method = method

    __str__ = RandomVariable.__str__

    def __call__(self, mean: Any, cov: Any, size: Any = None, method: Any = None, **kwargs: Any) -> Any:
        if method is not None and method != self.method:
            op = type(self)(**{**self._props_dict(), "method": method})
            return op(mean, cov, size=size, **kwargs)
        return super().__call__(mean, cov, size=size, **kwargs)

    def rng_fn(self, rng: np.random.Generator, mean: np.ndarray, cov: np.ndarray, size: Any) -> np.ndarray:
        if size is None:
            size = np.broadcast_shapes(mean.shape[:-1], cov.shape[:-2])
        if self.method == "cholesky":
            factor = np.linalg.cholesky(cov)
        elif self.method == "svd":
            u, s, _ = np.linalg.svd(cov)
            factor = u * np.sqrt(s)[..., None, :]
        else:
            w, v = np.linalg.eigh(cov)
            factor = v * np.sqrt(w)[..., None, :]
        z = rng.normal(size=(*size, mean.shape[-1]))
        return np.einsum("...ij,...j->...i", factor, z) + mean


multivariate_normal = MvNormalRV(method="cholesky")


class DirichletRV(RandomVariable):
    """Dirichlet with concentrations ``alphas`` (its last dimension): draws on the simplex."""

    name = "dirichlet"
    signature = "(a)->(a)"
    dtype = "floatX"

    def __call__(self, alphas: Any, size: Any = None, **kwargs: Any) -> Any:
        return super().__call__(alphas, size=size, **kwargs)

    def rng_fn(self, rng: np.random.Generator, alphas: np.ndarray, size: Any) -> np.ndarray:
        core = _unbatched(alphas, 1)
        if core is not None:
            return rng.dirichlet(core, size=size if size is not None else alphas.shape[:-1])
        # NumPy's dirichlet takes one vector of concentrations: loop over the batch
        if size is not None:
            alphas = np.broadcast_to(alphas, (*size, alphas.shape[-1]))
        out = np.empty(alphas.shape)
        for idx in np.ndindex(*alphas.shape[:-1]):
            out[idx] = rng.dirichlet(alphas[idx])
        return out


dirichlet = DirichletRV()


# --- discrete ------------------------------------------------------------------------------


class PoissonRV(RandomVariable):
    """Poisson with mean ``lam``."""

    name = "poisson"
    signature = "()->()"
    dtype = "int64"

    def __call__(self, lam: Any = 1.0, size: Any = None, **kwargs: Any) -> Any:
        return super().__call__(lam, size=size, **kwargs)


poisson = PoissonRV()


class GeometricRV(RandomVariable):
    """Geometric: the number of trials up to the first success (success probability ``p``)."""

    name = "geometric"
    signature = "()->()"
    dtype = "int64"

    def __call__(self, p: Any, size: Any = None, **kwargs: Any) -> Any:
        return super().__call__(p, size=size, **kwargs)


geometric = GeometricRV()


class HyperGeometricRV(RandomVariable):
    """Hypergeometric: good items among ``nsample`` drawn without replacement from
    ``ngood`` good and ``nbad`` bad ones."""

    name = "hypergeometric"
    signature = "(),(),()->()"
    dtype = "int64"

    def __call__(self, ngood: Any, nbad: Any, nsample: Any, size: Any = None, **kwargs: Any) -> Any:
        return super().__call__(ngood, nbad, nsample, size=size, **kwargs)


hypergeometric = HyperGeometricRV()


class BernoulliRV(ScipyRandomVariable):
    """Bernoulli: 1 with probability ``p``, else 0."""

    name = "bernoulli"
    signature = "()->()"
    dtype = "int64"

    def __call__(self, p: Any, size: Any = None, **kwargs: Any) -> Any:
        return super().__call__(p, size=size, **kwargs)

    def rng_fn_scipy(self, rng: np.random.Generator, p: Any, size: Any) -> Any:
        return _stats().bernoulli.rvs(p, size=size, random_state=rng)


bernoulli = BernoulliRV()


class BinomialRV(RandomVariable):
    """Binomial: successes in ``n`` trials of success probability ``p``."""

    name = "binomial"
    signature = "(),()->()"
    dtype = "int64"

    def __call__(self, n: Any, p: Any, size: Any = None, **kwargs: Any) -> Any:
        return super().__call__(n, p, size=size, **kwargs)


binomial = BinomialRV()


class NegBinomialRV(ScipyRandomVariable):
    """Negative binomial: failures before the ``n``-th success (success probability ``p``),
    SciPy's ``nbinom`` parametrisation (mean ``n * (1 - p) / p``)."""

    name = "negative_binomial"
    signature = "(),()->()"
    dtype = "int64"

    def __call__(self, n: Any, p: Any, size: Any = None, **kwargs: Any) -> Any:
        return super().__call__(n, p, size=size, **kwargs)

    def rng_fn_scipy(self, rng: np.random.Generator, n: Any, p: Any, size: Any) -> Any:
        return _stats().nbinom.rvs(n, p, size=size, random_state=rng)


nbinom = negative_binomial = NegBinomialRV()


class BetaBinomialRV(ScipyRandomVariable):
    """Beta-binomial: a binomial with ``n`` trials whose probability is ``beta(a, b)``."""

    name = "beta_binomial"
    signature = "(),(),()->()"
    dtype = "int64"

    def __call__(self, n: Any, a: Any, b: Any, size: Any = None, **kwargs: Any) -> Any:
        return super().__call__(n, a, b, size=size, **kwargs)

    def rng_fn_scipy(self, rng: np.random.Generator, n: Any, a: Any, b: Any, size: Any) -> Any:
        return _stats().betabinom.rvs(n, a, b, size=size, random_state=rng)


betabinom = BetaBinomialRV()


class IntegersRV(RandomVariable):
    """Integers uniform on ``[low, high)`` (``integers(high)``: on ``[0, high)``)."""

    name = "integers"
    signature = "(),()->()"
    dtype = "int64"

    def __call__(self, low: Any, high: Any = None, size: Any = None, **kwargs: Any) -> Any:
        if high is None:
            low, high = 0, low
        return super().__call__(low, high, size=size, **kwargs)


integers = IntegersRV()


def _categorical_draws(rng: np.random.Generator, p: np.ndarray, size: tuple | None) -> np.ndarray:
    """Indices drawn with probabilities ``p`` (last axis) by inverting the cumulative sum
    with uniforms; an index past the end (the sum short of 1 by rounding) is the last."""
    shape = p.shape[:-1] if size is None else size
    u = rng.uniform(size=shape)
    cdf = np.cumsum(p, axis=-1)
    if cdf.ndim == 1:
        idx = np.searchsorted(cdf, u)
    else:  # searchsorted (side="left") row by row: how many cumulative sums are below u
        idx = np.sum(cdf < np.asarray(u)[..., None], axis=-1)
    return np.minimum(idx, p.shape[-1] - 1)


class CategoricalRV(RandomVariable):
    """Categorical: index ``i`` with probability ``p[..., i]``."""

    name = "categorical"
    signature = "(p)->()"
    dtype = "int64"

    def __call__(self, p: Any, size: Any = None, **kwargs: Any) -> Any:
        return super().__call__(p, size=size, **kwargs)

    def rng_fn(self, rng: np.random.Generator, p: np.ndarray, size: Any) -> np.ndarray:
        if size is not None:
            if p.ndim - 1 > len(size):
                raise ValueError(f"categorical: size {size} does not fit p of shape {p.shape}")
            for s, ps in zip(reversed(size), reversed(p.shape[:-1])):
                if ps not in (1, s):
                    raise ValueError(f"categorical: size {size} does not fit p of shape {p.shape}")
        core = _unbatched(p, 1)
        return _categorical_draws(
            rng, p if core is None else core, size if size is not None else p.shape[:-1]
        )


categorical = CategoricalRV()


class MultinomialRV(RandomVariable):
    """Multinomial: counts of ``n`` draws among the categories of probabilities ``p``."""

    name = "multinomial"
    signature = "(),(p)->(p)"
    dtype = "int64"

    def __call__(self, n: Any, p: Any, size: Any = None, **kwargs: Any) -> Any:
        return super().__call__(n, p, size=size, **kwargs)

    def rng_fn(self, rng: np.random.Generator, n: np.ndarray, p: np.ndarray, size: Any) -> np.ndarray:
        batch = np.broadcast_shapes(n.shape, p.shape[:-1]) if size is None else tuple(size)
        p_core = _unbatched(p, 1)
        if p_core is not None:  # NumPy broadcasts n (but not a batch of p) against size
            return rng.multinomial(np.broadcast_to(n, batch), p_core)
        n = np.broadcast_to(n, batch)
        p = np.broadcast_to(p, (*batch, p.shape[-1]))
        out = np.empty(p.shape, dtype="int64")
        for idx in np.ndindex(*batch):
            out[idx] = rng.multinomial(n[idx], p[idx])
        return out


multinomial = MultinomialRV()


# --- choice and permutation -------------------------------------------------------------------


class ChoiceWithReplacement(RandomVariable):
    """Rows (entries along axis 0) of ``a`` drawn independently, with probabilities ``p``
    if given: ``a[integers(0, len(a), size)]`` (or categorical indices)."""

    name = "choice_with_replacement"

    def _static_core_shape(self, params: Any) -> tuple:
        super()._static_core_shape(params)  # (checks that p has a's length)
        return tuple(params[0].type.shape[1:])

    def _supp_shape_from_params(self, dist_params: Any, param_shapes: Any = None) -> tuple:
        a_shape = tuple(param_shapes[0]) if param_shapes is not None else shape_tuple(dist_params[0])
        return a_shape[len(a_shape) - self.ndims_params[0] :][1:]

    def rng_fn(self, rng: np.random.Generator, a: np.ndarray, *rest: Any) -> np.ndarray:
        *ps, size = rest
        p = ps[0] if ps else None
        nb = a.ndim - self.ndims_params[0]
        if size is None:
            size = a.shape[:nb] if p is None else np.broadcast_shapes(a.shape[:nb], p.shape[:nb])
        a_core = _unbatched(a, self.ndims_params[0])
        p_core = None if p is None else _unbatched(p, 1)
        if a_core is not None and (p is None or p_core is not None):
            return a_core[self._indices(rng, a_core.shape[0], p_core, size)]
        # a batch of populations (from vectorize_graph): one draw per entry of the batch
        a = np.broadcast_to(a, (*size, *a.shape[nb:]))
        p = None if p is None else np.broadcast_to(p, (*size, p.shape[-1]))
        out = np.empty((*size, *a.shape[len(size) + 1 :]), dtype=a.dtype)
        for idx in np.ndindex(*size):
            out[idx] = a[idx][self._indices(rng, a.shape[len(size)], None if p is None else p[idx], None)]
        return out

    @staticmethod
    def _indices(rng: np.random.Generator, n: int, p: np.ndarray | None, size: Any) -> Any:
        return rng.integers(0, n, size) if p is None else _categorical_draws(rng, p, size)


class ChoiceWithoutReplacement(RandomVariable):
    """Distinct rows of ``a`` (or of ``arange(a)`` for a scalar ``a``), with probabilities
    ``p`` if given. The requested shape is the parameter ``core_shape`` (the draws of one
    call are not independent, so that shape is a core one, not a batch one)."""

    name = "choice_without_replacement"

    @property
    def has_p_param(self) -> bool:
        return len(self.ndims_params) == 3

    def _static_core_shape(self, params: Any) -> tuple:
        super()._static_core_shape(params)  # (checks that p has a's length)
        a, core_shape = params[0], params[-1]
        a_core = a.type.shape[a.type.ndim - self.ndims_params[0] :]
        return (*static_size_entries(core_shape), *a_core[1:])

    def _supp_shape_from_params(self, dist_params: Any, param_shapes: Any = None) -> tuple:
        a, core_shape = dist_params[0], dist_params[-1]
        a_shape = tuple(param_shapes[0]) if param_shapes is not None else shape_tuple(a)
        a_core = a_shape[len(a_shape) - self.ndims_params[0] :]
        return (*_vector_entries(core_shape), *a_core[1:])

    def rng_fn(self, rng: np.random.Generator, *params: Any) -> np.ndarray:
        if self.has_p_param:
            a, p, core_shape, size = params
        else:
            (a, core_shape, size), p = params, None
        core = tuple(int(s) for s in core_shape.reshape(-1, core_shape.shape[-1])[0])
        batch_ndim = a.ndim - self.ndims_params[0]
        if batch_ndim == 0:
            return rng.choice(a, p=p, size=core if core else None, replace=False)
        if size is None:
            size = (
                a.shape[:batch_ndim]
                if p is None
                else np.broadcast_shapes(a.shape[:batch_ndim], p.shape[:batch_ndim])
            )
        a = np.broadcast_to(a, (*size, *a.shape[batch_ndim:]))
        if p is not None:
            p = np.broadcast_to(p, (*size, *p.shape[batch_ndim:]))
        out = np.empty((*size, *core, *a.shape[len(size) + 1 :]), dtype=a.dtype)
        for idx in np.ndindex(*size):
            out[idx] = rng.choice(a[idx], p=None if p is None else p[idx], size=core, replace=False)
        return out


def choice(
    a: Any,
    size: Any = None,
    replace: bool = True,
    p: Any = None,
    rng: Any = None,
    return_next_rng: bool = False,
) -> Any:
    """Entries of ``a`` (along its first axis; ``arange(a)`` for an integer ``a``) drawn
    with or without replacement, with probabilities ``p`` if given.

    >>> import numpy as np
    >>> import arignote
    >>> rng = arignote.shared(np.random.default_rng(0))
    >>> x = choice(10, size=(4,), replace=False, rng=rng)
    >>> x.eval()
    array([2, 4, 5, 7], dtype=int8)
    >>> np.random.default_rng(0).choice(10, size=(4,), replace=False)
    array([2, 4, 5, 7])
    """
    a = as_tensor_variable(a)
    if p is not None:
        p = as_tensor_variable(p)
        if p.type.ndim != 1:
            raise ValueError(
                f"choice: p must be a vector (one probability per entry of a), got Type {p.type}"
            )
        p = specify_shape(p, (a if a.type.ndim == 0 else shape_i(a, 0),))
    if replace or size is None:
        if a.type.ndim == 0:
            if p is None:
                return integers(0, a, size=size, rng=rng, return_next_rng=return_next_rng)
            return categorical(p, size=size, rng=rng, return_next_rng=return_next_rng)
        return _choice_with_replacement(a, p, size, rng, return_next_rng)
    core_shape = normalize_size_param(size)
    n = core_shape.type.shape[0]
    a_dims = [f"a{i}" for i in range(a.type.ndim)]
    idx_dims = [f"s{i}" for i in range(n)]
    out_sig = ",".join(idx_dims + a_dims[1:])
    p_sig = "" if p is None else f",({a_dims[0] if a_dims else 'a'})"
    signature = f"({','.join(a_dims)}){p_sig},({n})->({out_sig})"
    op = ChoiceWithoutReplacement(signature=signature, dtype=a.type.dtype)
    params = (a, core_shape) if p is None else (a, p, core_shape)
    return op(*params, size=None, rng=rng, return_next_rng=return_next_rng)


def _choice_with_replacement(a: Variable, p: Any, size: Any, rng: Any, return_next_rng: bool) -> Any:
    a_dims = [f"a{i}" for i in range(a.type.ndim)]
    p_sig = "" if p is None else f",({a_dims[0]})"
    signature = f"({','.join(a_dims)}){p_sig}->({','.join(a_dims[1:])})"
    op = ChoiceWithReplacement(signature=signature, dtype=a.type.dtype)
    params = (a,) if p is None else (a, p)
    return op(*params, size=size, rng=rng, return_next_rng=return_next_rng)


class PermutationRV(RandomVariable):
    """A random order of the entries of ``x`` along its first core axis (of
    ``arange(x)`` for an integer ``x``)."""

    name = "permutation"

    def _static_core_shape(self, params: Any) -> tuple:
        (x,) = params
        if self.ndims_params[0] == 0:
            try:
                return (int(get_underlying_scalar_constant_value(x)),)
            except NotScalarConstantError:
                return (None,)
        return tuple(x.type.shape[x.type.ndim - self.ndims_params[0] :])

    def _supp_shape_from_params(self, dist_params: Any, param_shapes: Any = None) -> tuple:
        (x,) = dist_params
        if self.ndims_params[0] == 0:
            if x.type.ndim != 0:
                raise ShapeError(f"{self}: the length of a batch of permutations of arange(x) is x[...]")
            return (x.astype("int64"),)
        x_shape = tuple(param_shapes[0]) if param_shapes is not None else shape_tuple(x)
        return x_shape[len(x_shape) - self.ndims_params[0] :]

    def rng_fn(self, rng: np.random.Generator, x: np.ndarray, size: Any) -> np.ndarray:
        batch_ndim = x.ndim - self.ndims_params[0]
        if batch_ndim == 0:
            return rng.permutation(x.item() if self.ndims_params[0] == 0 else x)
        if size is None:
            size = x.shape[:batch_ndim]
        x = np.broadcast_to(x, (*size, *x.shape[batch_ndim:]))
        if self.ndims_params[0] == 0:  # permutations of arange(n): one n for the whole batch
            lengths = np.unique(x)
            if lengths.size > 1:
                raise ValueError(f"permutation: a batch of arange(n) permutations needs one n, got {lengths}")
            n = int(lengths[0]) if lengths.size else 0
            out = np.empty((*size, n), dtype=x.dtype)
            for idx in np.ndindex(*size):
                out[idx] = rng.permutation(n)
            return out
        out = np.empty(x.shape, dtype=x.dtype)
        for idx in np.ndindex(*size):
            out[idx] = rng.permutation(x[idx])
        return out


def permutation(x: Any, size: Any = None, rng: Any = None, return_next_rng: bool = False) -> Any:
    """A random permutation of ``x`` along its first axis (of ``arange(x)`` for an
    integer ``x``); ``size`` asks for a batch of independent ones.

    >>> import numpy as np
    >>> import arignote
    >>> rng = arignote.shared(np.random.default_rng(2))
    >>> permutation(np.arange(5), rng=rng).eval()
    array([2, 4, 3, 0, 1])
    """
    x = as_tensor_variable(x)
    if x.type.ndim == 0:
        signature = "()->(x)"
    else:
        dims = ",".join(f"x{i}" for i in range(x.type.ndim))
        signature = f"({dims})->({dims})"
    op = PermutationRV(signature=signature, dtype=x.type.dtype)
    return op(x, size=size, rng=rng, return_next_rng=return_next_rng)
