"""A model's log-density and its gradient, evaluated over a batch of parameter values that is
sharded across devices with ``jax.sharding``.

arignote builds the graph and its exact gradient; :func:`arignote.link.jax.jax_function`
turns them into a pure JAX function; ``jax.vmap`` batches it and ``jax.jit`` compiles it for
inputs split along the batch axis over every device (``NamedSharding``): each device computes
its share, and the results stay sharded the same way.

Run it on a machine with several accelerators as it is. On a CPU, XLA can pretend to have
several devices; this script asks for two when ``XLA_FLAGS`` is not set (it must be set
before JAX starts)::

    python examples/jax_sharding.py
    XLA_FLAGS=--xla_force_host_platform_device_count=4 python examples/jax_sharding.py
"""

from __future__ import annotations

import os

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=2")

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

import arignote
import arignote.tensor as pt
from arignote.link.jax import jax_function

# The eight schools model (non-centred): y_j ~ N(mu + tau * z_j, sigma_j), z_j ~ N(0, 1),
# mu ~ N(0, 5), log(tau) with a half-Cauchy(5) prior on tau.
Y = np.array([28.0, 8.0, -3.0, 7.0, -1.0, 1.0, 18.0, 12.0])
SIGMA = np.array([15.0, 10.0, 16.0, 11.0, 9.0, 11.0, 10.0, 18.0])


def model() -> tuple[list, list]:
    """The graph: inputs (mu, log_tau, z) and outputs (logp and its three gradients)."""
    mu, log_tau, z = pt.dscalar("mu"), pt.dscalar("log_tau"), pt.dvector("z")
    tau = pt.exp(log_tau)
    theta = mu + tau * z
    logp = (
        (-0.5 * ((Y - theta) / SIGMA) ** 2).sum()
        - 0.5 * (z**2).sum()
        - 0.5 * (mu / 5.0) ** 2
        - pt.log1p((tau / 5.0) ** 2)
        + log_tau  # the Jacobian of tau = exp(log_tau)
    )
    return [mu, log_tau, z], [logp, *arignote.grad(logp, [mu, log_tau, z])]


def main(batch: int = 64, seed: int = 0) -> dict:
    inputs, outputs = model()
    logp_and_grad = jax_function(outputs, inputs)
    devices = jax.devices()
    mesh = Mesh(np.array(devices), ("batch",))
    by_row = NamedSharding(mesh, P("batch"))

    rng = np.random.default_rng(seed)
    mu = rng.normal(size=batch)
    log_tau = rng.normal(size=batch)
    z = rng.normal(size=(batch, 8))
    sharded = [jax.device_put(v, by_row) for v in (mu, log_tau, z)]

    batched = jax.jit(jax.vmap(logp_and_grad), out_shardings=by_row)
    logp, d_mu, d_log_tau, d_z = batched(*sharded)

    # the same numbers, one draw at a time, from arignote's own compiled function
    f = arignote.function(inputs, outputs, mode="JAX")
    want = [f(mu[k], log_tau[k], z[k]) for k in range(batch)]
    got = [logp, d_mu, d_log_tau, d_z]
    err = max(
        float(np.max(np.abs(np.asarray(g) - np.stack([w[i] for w in want])))) for i, g in enumerate(got)
    )
    return {
        "devices": len(devices),
        "shards": len(logp.sharding.device_set),
        "batch": batch,
        "max_abs_difference": err,
        "mean_logp": float(np.mean(np.asarray(logp))),
    }


if __name__ == "__main__":
    result = main()
    for key, value in result.items():
        print(f"{key}: {value}")
