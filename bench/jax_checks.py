"""What a check costs a ``mode="JAX"`` call: ``exp(x).sum()`` of ``--size`` values, compiled
without a check, with an ``Assert`` (staged in the program by ``jax.experimental.checkify``,
the program returning whether it held), and the same graph's ``jax_function`` jitted by hand,
whose check is a host callback. NumPy outputs; the best of ``--rounds`` loops of ``--calls``
calls, the three taking turns. Run from the repository root (``pip install -e ".[jax]"``)::

    python bench/jax_checks.py
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import jax

import arignote
import arignote.tensor as pt
from arignote.link.jax import jax_function
from arignote.raise_op import Assert


def _per_call(call: Callable[[], object], calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        call()
    return (time.perf_counter() - start) / calls


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=7)
    opts = parser.parse_args(argv)
    x = pt.dvector("x")
    total = (pt.exp(x) * 2.0).sum()
    checked = Assert("x must be finite")(total, pt.all(pt.isfinite(x)))
    plain = arignote.function([x], total, mode="JAX")
    staged = arignote.function([x], checked, mode="JAX")
    by_hand = jax.jit(jax_function([checked], [x]))
    v = np.linspace(0.0, 1.0, opts.size)
    calls = {
        "no check": lambda: plain(v),
        "check staged (checkify)": lambda: staged(v),
        "check as a host callback": lambda: np.asarray(by_hand(v)[0]),
    }
    for call in calls.values():
        call()
        call()
    best = dict.fromkeys(calls, float("inf"))
    for _ in range(opts.rounds):
        for name, call in calls.items():
            best[name] = min(best[name], _per_call(call, opts.calls))
    print(f"JAX {jax.__version__} on {[str(d) for d in jax.devices()]}; exp(x).sum() of {opts.size} values")
    for name, seconds in best.items():
        print(f"{name:26s} {seconds * 1e6:9.1f} µs per call")
    try:
        staged(np.array([np.inf]))
    except AssertionError as err:
        print("a failed check raises:", type(err).__name__, err)
    return 0


if __name__ == "__main__":
    sys.exit(main())
