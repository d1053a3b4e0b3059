"""Small statistical models for the call-overhead workloads of ``bench/backend.py``: each a
log-density written once against an array library (``lib``: arignote.tensor, numpy or
jax.numpy), and the data it closes over. Nothing here imports a library itself.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
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


def logistic_data(n: int = 1000, d: int = 100) -> tuple:
    """Inputs of a logistic regression: features ``X`` (n x d) and 0/1 labels ``y``."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(n, d))
    y = (X @ rng.normal(size=d) + rng.normal(size=n) > 0).astype("float64")
    return X, y


def logistic_cost(w: Any, b: Any, X: Any, y: Any, lib: Any) -> Any:
    """The mean negative log-likelihood of labels ``y`` under ``sigmoid(X @ w + b)``."""
    z = lib.dot(X, w) + b
    return (lib.log1p(lib.exp(-z)) + (1.0 - y) * z).mean()


def logistic_args() -> tuple:
    return (np.zeros(100), np.array(0.0), *logistic_data())


def mlp_data(batch: int = 256, n_in: int = 784, n_out: int = 10) -> tuple:
    """float32 inputs ``x`` (batch x n_in) and one-hot targets ``t`` of an MLP."""
    rng = np.random.default_rng(2)
    x = rng.normal(size=(batch, n_in)).astype("float32")
    t = np.eye(n_out, dtype="float32")[rng.integers(0, n_out, batch)]
    return x, t


def mlp_loss(W1: Any, b1: Any, W2: Any, b2: Any, x: Any, t: Any, lib: Any) -> Any:
    """Softmax cross-entropy of a one-hidden-layer tanh MLP."""
    h = lib.tanh(lib.dot(x, W1) + b1)
    logits = lib.dot(h, W2) + b2
    m = logits.max(axis=1, keepdims=True)
    lse = lib.log(lib.exp(logits - m).sum(axis=1)) + m[:, 0]
    return (lse - (t * logits).sum(axis=1)).mean()


def mlp_args(n_in: int = 784, n_hidden: int = 512, n_out: int = 10) -> tuple:
    rng = np.random.default_rng(3)
    W1 = (rng.normal(size=(n_in, n_hidden)) * 0.03).astype("float32")
    W2 = (rng.normal(size=(n_hidden, n_out)) * 0.03).astype("float32")
    return (W1, np.zeros(n_hidden, "float32"), W2, np.zeros(n_out, "float32"), *mlp_data())


# --- the model cases of the benchmarks, one definition for every library ------------------

#: the inputs differentiated (the first n; None: all) and, for a training step, the rate
N_PARAMS = {"logistic": 2, "mlp_step": 4}
RATE = {"mlp_step": 0.1}
MODEL_CASES = ("eight_schools", "hierarchical", "logistic", "mlp_step")


@functools.cache
def hierarchical_inputs() -> dict[str, np.ndarray]:
    """``hierarchical_data()``, made once per process."""
    return hierarchical_data()


@functools.cache
def case_args(case: str) -> tuple:
    """The input values of a model case, made once per process."""
    if case == "eight_schools":
        return EIGHT_SCHOOLS_ARGS
    return {"logistic": logistic_args, "mlp_step": mlp_args}.get(case, hierarchical_args)()


def model(case: str, lib: Any) -> tuple[Callable, tuple]:
    """(logp or loss of the inputs, input values) of a model case, for ``lib``."""
    if case == "eight_schools":
        fn = eight_schools_logp
    elif case == "logistic":
        fn = logistic_cost
    elif case == "mlp_step":
        fn = mlp_loss
    else:
        return (lambda *a: hierarchical_logp(*a, data=hierarchical_inputs(), lib=lib)), case_args(case)
    return (lambda *a: fn(*a, lib=lib)), case_args(case)


def outputs(case: str, value: Any, params: list, grads: list) -> list:
    """The model's outputs: the value and the gradients, or for a training step the value
    and the updated parameters."""
    rate = RATE.get(case)
    if rate is None:
        return [value, *grads]
    # (the rate in the parameters' dtype: a Python float would make float32 updates float64)
    return [value, *[p - np.asarray(rate, p.dtype) * g for p, g in zip(params, grads)]]


def symbolic_model(case: str, tensor: Any, grad: Callable) -> tuple[list, list, tuple]:
    """(inputs, outputs, input values) of a model case built with a symbolic library:
    ``tensor`` is ``arignote.tensor`` or ``pytensor.tensor``, ``grad`` its ``grad``."""
    logp_of, args = model(case, tensor)
    ins = [
        tensor.tensor(f"i{k}", dtype=str(np.asarray(a).dtype), shape=(None,) * np.ndim(a))
        for k, a in enumerate(args)
    ]
    logp = logp_of(*ins)
    params = ins[: N_PARAMS.get(case)]
    return ins, outputs(case, logp, params, grad(logp, params)), args


def jax_model(case: str, jax: Any) -> tuple[Callable, list]:
    """(the jitted value-and-gradient step, input values) of a model case in JAX."""
    logp_of, args = model(case, jax.numpy)
    n = N_PARAMS.get(case) or len(args)

    def step(*a: Any) -> Any:
        value, grads = jax.value_and_grad(logp_of, argnums=tuple(range(n)))(*a)
        return outputs(case, value, list(a[:n]), list(grads))

    return jax.jit(step), [np.asarray(a) for a in args]
