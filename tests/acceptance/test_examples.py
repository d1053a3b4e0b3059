"""The newcomer's examples in ``examples/`` run as scripts, and compute what NumPy/SciPy compute."""

import importlib.util
import itertools
import pathlib
import runpy
import sys

import numpy as np
import pytest
import scipy.optimize
import scipy.stats

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"example_{name}", ROOT / "examples" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


@pytest.mark.parametrize("name", ["logistic_regression", "hierarchical_map", "rnn_scan"])
def test_example_runs_as_a_script(name, capsys):
    runpy.run_path(str(ROOT / "examples" / f"{name}.py"), run_name="__main__")
    out = capsys.readouterr().out
    assert out.count("\n") >= 3, out


# --- logistic regression ----------------------------------------------------------------------


def test_logistic_regression_matches_numpy_gradient_descent():
    ex = _load("logistic_regression")
    x, y = ex.make_data(np.random.default_rng(0))
    steps, lr = 120, 0.5
    w_ours, b_ours, costs, predict = ex.train(x, y, steps=steps, lr=lr)

    # the same full-batch gradient descent, by hand in NumPy
    w, b = np.zeros(x.shape[1]), 0.0
    np_costs = []
    for _ in range(steps):
        p = _sigmoid(x @ w + b)
        np_costs.append(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)) + 0.01 * np.sum(w**2))
        residual = (p - y) / len(y)
        w, b = w - lr * (x.T @ residual + 0.02 * w), b - lr * residual.sum()
    np.testing.assert_allclose(costs, np_costs, rtol=1e-10)
    np.testing.assert_allclose(w_ours, w, rtol=1e-9)
    np.testing.assert_allclose(b_ours, b, rtol=1e-9)

    assert costs[-1] < 0.6 * costs[0]
    assert all(later <= earlier + 1e-12 for earlier, later in itertools.pairwise(costs))
    predicted = predict(x)
    assert predicted.dtype == bool
    np.testing.assert_array_equal(predicted, _sigmoid(x @ w + b) > 0.5)
    assert np.mean(predicted == y) >= 0.85


# --- hierarchical MAP -------------------------------------------------------------------------


def _np_neg_logp(theta, y, group):
    groups = int(group.max()) + 1
    mu, log_tau, log_sigma, z = theta[0], theta[1], theta[2], theta[3 : 3 + groups]
    tau, sigma = np.exp(log_tau), np.exp(log_sigma)
    logp = (
        scipy.stats.norm.logpdf(mu, 0.0, 5.0)
        + scipy.stats.halfnorm.logpdf(tau, scale=2.0)
        + log_tau
        + scipy.stats.halfnorm.logpdf(sigma, scale=2.0)
        + log_sigma
        + scipy.stats.norm.logpdf(z).sum()
        + scipy.stats.norm.logpdf(y, mu + tau * z[group], sigma).sum()
    )
    return -logp


def test_hierarchical_logp_and_gradient_match_scipy():
    ex = _load("hierarchical_map")
    y, group = ex.make_data(np.random.default_rng(1))
    f = ex.compile_neg_logp(int(group.max()) + 1)
    theta = np.random.default_rng(5).normal(scale=0.5, size=11)
    value, grad = f(theta, y, group)
    np.testing.assert_allclose(value, _np_neg_logp(theta, y, group), rtol=1e-9)
    numeric = scipy.optimize.approx_fprime(theta, _np_neg_logp, 1e-6, y, group)
    np.testing.assert_allclose(grad, numeric, rtol=1e-4, atol=1e-4)


def test_hierarchical_map_matches_scipy_optimum():
    ex = _load("hierarchical_map")
    y, group = ex.make_data(np.random.default_rng(1))
    result, f = ex.find_map(y, group)
    assert result.success, result.message
    # the oracle: SciPy's own densities, minimized from another start with numerical gradients
    oracle = scipy.optimize.minimize(
        _np_neg_logp, np.full(11, 0.1), args=(y, group), method="BFGS", options={"gtol": 1e-8}
    )
    np.testing.assert_allclose(result.fun, oracle.fun, rtol=1e-8)
    np.testing.assert_allclose(result.x, oracle.x, atol=2e-3)
    # the gradient vanishes at the optimum found
    assert np.max(np.abs(f(result.x, y, group)[1])) < 1e-3


# --- RNN with scan ----------------------------------------------------------------------------


def _np_rnn_loss_and_grads(p, x, target):
    """The forward loop and back-propagation through time, by hand."""
    T, hidden = len(x), len(p["h0"])
    hs = np.empty((T, hidden))
    h = p["h0"]
    for t in range(T):
        h = np.tanh(x[t] @ p["W_in"] + h @ p["W_h"] + p["b"])
        hs[t] = h
    err = hs @ p["w_out"] - target
    loss = np.mean(err**2)
    g = {k: np.zeros_like(v) for k, v in p.items()}
    d_pred = 2.0 * err / T
    g["w_out"] = hs.T @ d_pred
    dh_next = np.zeros(hidden)
    for t in reversed(range(T)):
        dh = d_pred[t] * p["w_out"] + dh_next
        da = dh * (1.0 - hs[t] ** 2)
        h_prev = hs[t - 1] if t > 0 else p["h0"]
        g["W_in"] += np.outer(x[t], da)
        g["W_h"] += np.outer(h_prev, da)
        g["b"] += da
        dh_next = da @ p["W_h"].T
    g["h0"] = dh_next
    return loss, g


def test_rnn_forward_and_gradient_match_a_numpy_loop():
    ex = _load("rnn_scan")
    x, target = ex.make_signal(40)
    params = ex.init_params(np.random.default_rng(3), hidden=6)
    shared, names, value_and_grads, train_step = ex.build(params, lr=0.05, momentum=0.9)
    loss, *grads = value_and_grads(x, target)
    np_loss, np_grads = _np_rnn_loss_and_grads(params, x, target)
    np.testing.assert_allclose(loss, np_loss, rtol=1e-12)
    for name, g in zip(names, grads):
        np.testing.assert_allclose(g, np_grads[name], rtol=1e-9, atol=1e-12, err_msg=name)

    # training: the first step applies -lr * grad (the velocity starts at zero) ...
    losses = [float(train_step(x, target))]
    for name in names:
        np.testing.assert_allclose(
            shared[name].get_value(), params[name] - 0.05 * np_grads[name], rtol=1e-9, atol=1e-12
        )
    # ... and a few steps make the loss fall
    losses += [float(train_step(x, target)) for _ in range(30)]
    assert losses[0] == pytest.approx(np_loss, rel=1e-12)
    assert losses[-1] < 0.5 * losses[0]
