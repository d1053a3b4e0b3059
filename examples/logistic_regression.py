"""Logistic regression trained by gradient descent, with the parameters in shared variables.

Run: python examples/logistic_regression.py

The classic first program: the weights live in shared variables, one compiled function
computes the cost and applies a gradient step through ``updates=`` (each call trains), and
a second compiled function predicts. Prints the cost as it falls and the accuracy reached.
"""

import numpy as np

import arignote
import arignote.tensor as pt


def make_data(rng: np.random.Generator, n: int = 400, features: int = 5):
    """Points labelled by a noisy linear rule (so the classes are nearly separable)."""
    true_w = rng.normal(size=features)
    x = rng.normal(size=(n, features))
    logits = x @ true_w + 0.5 + 0.3 * rng.normal(size=n)
    return x, (logits > 0).astype("float64")


def train(x_data: np.ndarray, y_data: np.ndarray, steps: int = 300, lr: float = 0.5):
    """Trains by full-batch gradient descent; returns (w, b, costs, predict)."""
    features = x_data.shape[1]
    x = pt.dmatrix("x")
    y = pt.dvector("y")
    w = arignote.shared(np.zeros(features), name="w")
    b = arignote.shared(0.0, name="b")

    p = pt.sigmoid(x @ w + b)  # probability of class 1
    # cross-entropy, written plainly: the rewrites make it numerically stable (softplus forms)
    cost = -pt.mean(y * pt.log(p) + (1 - y) * pt.log(1 - p)) + 0.01 * pt.sum(w**2)
    gw, gb = arignote.grad(cost, [w, b])

    train_step = arignote.function([x, y], cost, updates=[(w, w - lr * gw), (b, b - lr * gb)])
    predict = arignote.function([x], p > 0.5)

    costs = [float(train_step(x_data, y_data)) for _ in range(steps)]
    return w.get_value(), b.get_value(), costs, predict


def main() -> None:
    rng = np.random.default_rng(0)
    x_data, y_data = make_data(rng)
    w, b, costs, predict = train(x_data, y_data)
    accuracy = np.mean(predict(x_data) == y_data)
    for step in (0, 10, 100, len(costs) - 1):
        print(f"step {step:3d}: cost {costs[step]:.4f}")
    print(f"weights {np.round(w, 3)}, bias {float(b):.3f}")
    print(f"training accuracy: {accuracy:.3f}")


if __name__ == "__main__":
    main()
