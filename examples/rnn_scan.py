"""A recurrent network written with ``scan``, trained to predict the next value of a signal.

Run: python examples/rnn_scan.py

``scan`` calls the step function once on placeholders and turns it into a loop node; the
gradient is back-propagation through time, taken by ``grad`` like any other. The weights
live in shared variables, and each call of ``train_step`` runs the loop forward and
backward and applies one step of gradient descent (with momentum) through ``updates=``.
"""

import numpy as np

import arignote
import arignote.tensor as pt


def make_signal(steps: int = 60) -> tuple[np.ndarray, np.ndarray]:
    """Inputs (one feature per time step) and the targets: the next value of the signal."""
    t = np.linspace(0.0, 6.0 * np.pi, steps + 1)
    signal = np.sin(t) + 0.5 * np.sin(2.3 * t)
    return signal[:-1, None], signal[1:]


def init_params(rng: np.random.Generator, hidden: int = 12) -> dict[str, np.ndarray]:
    return {
        "W_in": 0.5 * rng.normal(size=(1, hidden)),
        "W_h": 0.3 * rng.normal(size=(hidden, hidden)) / np.sqrt(hidden),
        "b": np.zeros(hidden),
        "w_out": 0.3 * rng.normal(size=hidden),
        "h0": np.zeros(hidden),
    }


def build(params: dict[str, np.ndarray], lr: float = 0.05, momentum: float = 0.9):
    """Shared weights, the symbolic loss, its gradients and the compiled functions."""
    shared = {name: arignote.shared(value, name=name) for name, value in params.items()}
    W_in, W_h, b, w_out, h0 = (shared[k] for k in ("W_in", "W_h", "b", "w_out", "h0"))
    x = pt.dmatrix("x")  # (time, features)
    target = pt.dvector("target")  # (time,)

    def step(x_t, h_prev, W_in, W_h, b):
        return pt.tanh(x_t @ W_in + h_prev @ W_h + b)

    hs, _ = arignote.scan(step, sequences=[x], outputs_info=[h0], non_sequences=[W_in, W_h, b])
    prediction = hs @ w_out  # (time,)
    loss = pt.mean((prediction - target) ** 2)

    names = list(shared)
    grads = arignote.grad(loss, [shared[n] for n in names])
    velocity = {n: arignote.shared(np.zeros_like(params[n]), name=f"v_{n}") for n in names}
    updates = []
    for n, g in zip(names, grads):
        v_new = momentum * velocity[n] - lr * g
        updates += [(velocity[n], v_new), (shared[n], shared[n] + v_new)]

    value_and_grads = arignote.function([x, target], [loss, *grads])
    train_step = arignote.function([x, target], loss, updates=updates)
    return shared, names, value_and_grads, train_step


def main() -> None:
    rng = np.random.default_rng(0)
    x, target = make_signal()
    _, _, _, train_step = build(init_params(rng))
    losses = [float(train_step(x, target)) for _ in range(150)]
    for i in (0, 10, 50, 149):
        print(f"step {i:3d}: loss {losses[i]:.5f}")


if __name__ == "__main__":
    main()
