"""How long a fresh process takes to import arignote, and to set up a first model.

Each figure is a fresh interpreter (``python -c ...``) timed from outside, whole process
(interpreter start included), N times after one warm-up run that also writes the ``.pyc``
files; the rows take turns. Rows:

* ``python``: an empty interpreter (the floor every row includes);
* ``numpy``: ``import numpy`` (arignote needs it);
* ``arignote``: ``import arignote``;
* ``arignote logreg``: import, build a logistic regression's cost and gradient, compile
  them (FAST_RUN) and call once: what a script pays before its first result;
* ``arignote arith``: the same for a graph of NumPy arithmetic and a mean with its gradient
  (no SciPy-backed Op: nothing is imported on first use);
* with ``--peer-python``: ``import pytensor`` and ``import jax`` in that interpreter.

    python bench/import_time.py [-n 15] [--peer-python /path/to/bin/python] [--json out.json]

The load average is printed with the figures: on a shared machine, quote the medians from a
quiet run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

from _common import REPO_ROOT, environment, table

LOGREG = """
import numpy as np, arignote, arignote.tensor as pt
X = pt.matrix("X"); y = pt.vector("y"); w = pt.vector("w"); b = pt.scalar("b")
p = pt.sigmoid(X @ w + b)
cost = -(y * pt.log(p) + (1 - y) * pt.log1p(-p)).mean()
f = arignote.function([X, y, w, b], [cost, *arignote.grad(cost, [w, b])])
rng = np.random.default_rng(0)
f(rng.normal(size=(100, 5)), (rng.random(100) > 0.5).astype(float), np.zeros(5), 0.0)
"""

ARITH = """
import numpy as np, arignote, arignote.tensor as pt
x = pt.dvector("x"); y = pt.dvector("y")
c = ((x * y - 1) ** 2).mean()
f = arignote.function([x, y], [c, *arignote.grad(c, [x])])
f(np.ones(3), np.ones(3))
"""


def run_once(python: str, code: str, env: dict[str, str]) -> float:
    """Wall seconds of ``python -c code`` in a fresh process."""
    start = time.perf_counter()
    done = subprocess.run([python, "-c", code], env=env, cwd=REPO_ROOT, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{python} -c {code!r} failed:\n{done.stderr[-2000:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("-n", type=int, default=15, help="fresh processes per row (default 15)")
    parser.add_argument("--peer-python", help="an interpreter with PyTensor and JAX installed")
    parser.add_argument("--json", help="write the figures to this file")
    args = parser.parse_args()

    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # the warm-up run writes .pyc files, as an install does
    env["PYTHONPATH"] = os.pathsep.join(p for p in (REPO_ROOT, env.get("PYTHONPATH")) if p)
    rows: list[tuple[str, str, str]] = [
        ("python", sys.executable, "pass"),
        ("numpy", sys.executable, "import numpy"),
        ("arignote", sys.executable, "import arignote"),
        ("arignote logreg", sys.executable, LOGREG),
        ("arignote arith", sys.executable, ARITH),
    ]
    if args.peer_python:
        rows += [("pytensor", args.peer_python, "import pytensor"), ("jax", args.peer_python, "import jax")]

    times: dict[str, list[float]] = {name: [] for name, _, _ in rows}
    load_before = os.getloadavg()[0]
    for _name, python, code in rows:  # the warm-up round (it writes the .pyc files)
        run_once(python, code, env)
    for _ in range(args.n):  # the rows take turns, so a change in the machine's load hits all
        for name, python, code in rows:
            times[name].append(run_once(python, code, env))
    load_after = os.getloadavg()[0]
    results = {
        name: {"min": min(t), "median": statistics.median(t), "max": max(t)} for name, t in times.items()
    }

    base = results["arignote"]["median"]
    print(
        table(
            ["import", "min ms", "median ms", "max ms", "median / arignote's"],
            [
                [name, *(f"{1e3 * r[k]:.0f}" for k in ("min", "median", "max")), f"{r['median'] / base:.2f}"]
                for name, r in results.items()
            ],
            right=[False, True, True, True, True],
        )
    )
    print(f"{args.n} fresh processes per row; load average {load_before:.2f} before, {load_after:.2f} after")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"environment": environment(), "n": args.n, "seconds": results}, f, indent=1)


if __name__ == "__main__":
    main()
