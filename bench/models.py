"""Small statistical models for the call-overhead workloads of ``bench/backend.py``: each a
log-density written once against an array library (``lib``: arignote.tensor, numpy or
jax.numpy), and the data it closes over. Nothing here imports a library itself.
"""

from __future__ import annotations

from typing import Any

import numpy as np

Y8 = np.array([28.0, 8.0, -3.0, 7.0, -1.0, 1.0, 18.0, 12.0])
S8 = np.array([15.0, 10.0, 16.0, 11.0, 9.0, 11.0, 10.0, 18.0])


def eight_schools_logp(mu: Any, log_tau: Any, z: Any, lib: Any) -> Any:
    """The non-centred eight schools model."""
    tau = lib.exp(log_tau)
    theta = mu + tau * z
    return (
        (-0.5 * ((Y8 - theta) / S8) ** 2).sum()
        - 0.5 * (z**2).sum()
        - 0.5 * (mu / 5.0) ** 2
        - lib.log1p((tau / 5.0) ** 2)
        + log_tau
    )


EIGHT_SCHOOLS_ARGS = (np.array(0.5), np.array(0.1), np.linspace(-1, 1, 8))


def hierarchical_data(n: int = 80_000, groups: int = 50) -> dict[str, np.ndarray]:
    """A varying-intercept regression's data: group index, covariate and outcome."""
    rng = np.random.default_rng(0)
    g = rng.integers(0, groups, n)
    x = rng.normal(size=n)
    y = 1.0 + 0.5 * x + rng.normal(size=n)
    return {"g": g, "x": x, "y": y, "groups": groups}


def hierarchical_logp(a: Any, b: Any, mu_a: Any, log_tau: Any, log_sigma: Any, data: dict, lib: Any) -> Any:
    """Varying intercepts ``a[g]`` (an integer-index gather), a common slope ``b``."""
    n, groups = len(data["y"]), data["groups"]
    tau, sigma = lib.exp(log_tau), lib.exp(log_sigma)
    mean = a[data["g"]] + b * data["x"]
    return (
        (-0.5 * ((data["y"] - mean) / sigma) ** 2).sum()
        - n * log_sigma
        + (-0.5 * ((a - mu_a) / tau) ** 2).sum()
        - groups * log_tau
        - 0.5 * mu_a**2
        - 0.5 * b**2
    )


def hierarchical_args(groups: int = 50) -> tuple:
    return (np.linspace(-0.5, 0.5, groups), np.array(0.2), np.array(0.1), np.array(0.0), np.array(0.0))
