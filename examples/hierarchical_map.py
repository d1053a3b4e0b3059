"""The MAP estimate of a hierarchical model: logp and its gradient compiled once, SciPy optimizes.

Run: python examples/hierarchical_map.py

Observations ``y`` fall into groups; each group has its own mean, drawn around a common
mean ``mu`` with spread ``tau``; the observations scatter around their group's mean with
spread ``sigma``. Written non-centred (group mean = ``mu + tau * z``) and with the scales
on the log scale (with their Jacobian terms), the log density is smooth and its maximum
(the MAP estimate) is finite. ``function`` compiles the negative log density and its
gradient into one callable that ``scipy.optimize.minimize`` calls with ``jac=True``.
"""

import numpy as np
import scipy.optimize

import arignote
import arignote.tensor as pt

LOG_2PI = float(np.log(2 * np.pi))


def normal_logpdf(x, mu, sigma):
    return -0.5 * ((x - mu) / sigma) ** 2 - pt.log(sigma) - 0.5 * LOG_2PI


def halfnormal_logpdf(x, scale):
    return normal_logpdf(x, 0.0, scale) + np.log(2.0)


def make_data(rng: np.random.Generator, groups: int = 8, per_group: int = 20):
    group_means = 1.0 + 0.7 * rng.normal(size=groups)
    group = np.repeat(np.arange(groups), per_group)
    y = group_means[group] + 0.5 * rng.normal(size=group.size)
    return y, group


def compile_neg_logp(groups: int):
    """One compiled function: flat parameter vector -> (-logp, -dlogp/dtheta)."""
    theta = pt.dvector("theta")  # [mu, log_tau, log_sigma, z_1..z_groups]
    y = pt.dvector("y")
    group = pt.lvector("group")
    mu, log_tau, log_sigma, z = theta[0], theta[1], theta[2], theta[3 : 3 + groups]
    tau, sigma = pt.exp(log_tau), pt.exp(log_sigma)

    logp = (
        normal_logpdf(mu, 0.0, 5.0)
        + halfnormal_logpdf(tau, 2.0)
        + log_tau  # Jacobian of tau = exp(log_tau)
        + halfnormal_logpdf(sigma, 2.0)
        + log_sigma
        + pt.sum(normal_logpdf(z, 0.0, 1.0))
        + pt.sum(normal_logpdf(y, mu + tau * z[group], sigma))
    )
    neg = -logp
    return arignote.function([theta, y, group], [neg, arignote.grad(neg, theta)])


def find_map(y: np.ndarray, group: np.ndarray):
    groups = int(group.max()) + 1
    f = compile_neg_logp(groups)
    start = np.zeros(3 + groups)
    result = scipy.optimize.minimize(f, start, args=(y, group), jac=True, method="L-BFGS-B", tol=1e-10)
    return result, f


def main() -> None:
    rng = np.random.default_rng(1)
    y, group = make_data(rng)
    result, _ = find_map(y, group)
    mu, log_tau, log_sigma = result.x[:3]
    print(f"converged: {result.success} after {result.nit} iterations ({result.nfev} calls)")
    print(f"mu = {mu:.3f}, tau = {np.exp(log_tau):.3f}, sigma = {np.exp(log_sigma):.3f}")
    print(f"group means: {np.round(mu + np.exp(log_tau) * result.x[3:], 3)}")
    print(f"log density at the MAP: {-result.fun:.4f}")


if __name__ == "__main__":
    main()
