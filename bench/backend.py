"""Call time of compute-bound workloads: arignote's tiers against PyTensor (Numba) and JAX.

Workloads (``--cases``), float64:

* ``ew``: ``exp(-x**2) * sin(y) + log1p(abs(z))``, vectors of 1e6 (transcendental-bound);
* ``arith``: ``(x * y + x) * (y - 2.5) + x * x``, vectors of 1e6 (arithmetic: fusion pays);
* ``sum1``: ``X.sum(axis=1)``, ``max0``: ``X.max(axis=0)``, ``softmax1``:
  ``softmax(X, axis=1)``, ``X`` of 4000x4000;
* ``fsum1``: ``(X * X - X).sum(axis=1)``, a reduction of a fused input, 4000x4000;
* ``eight_schools``, ``hierarchical``: a model's log-density and its gradient (``models.py``:
  the non-centred eight schools model; varying intercepts ``a[g]`` over 80,000 observations
  in 50 groups), the graphs dominated by per-node overhead; ``logistic``: a logistic
  regression's cost and gradient (1000x100), ``mlp_step``: a training step of a float32
  784-512-10 tanh MLP with softmax cross-entropy (batch 256: loss and updated parameters).
  Here the arignote rows add the
  whole graph as one Numba function (``"NUMBA"``: forced) and NumPy is the log-density and
  its gradient written by hand; printed in µs (the median of batches of calls; ms in
  ``--json``).

arignote runs as tier 1 (``NumbaLinker(jit="never")``: generated Python calling NumPy), as
per-node kernels forced (``"NUMBA_KERNELS"``), as the whole graph in one Numba function
(``"NUMBA"``) and as FAST_RUN after its background compiles settled (the tiered default: a
per-node kernel where the cost model says it pays, then after 32 calls the whole graph if a
trial measures it faster). PyTensor 3 runs in
its default (Numba) mode, JAX with ``jax.jit``; they run in the interpreter given by
``--peer-python`` (this script with ``--peer``) when not importable here. Each number is the
median of ``--calls`` calls after one warm-up call, in ms. Also prints NumPy's per-op and
Numba's per-op costs (``--ops``), the numbers behind the cost model in
``arignote/link/numba/kernels.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import models
from _common import ensure_repo_importable, environment, importable

N = 1_000_000
M = 4000


def _inputs(case: str) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    if case in ("ew", "arith"):
        return {k: rng.normal(size=N) for k in "xyz"[: 3 if case == "ew" else 2]}
    return {"X": rng.normal(size=(M, M))}


def _expr(case: str, m: Any, special: Any, **v: Any) -> Any:
    if case == "ew":
        return m.exp(-(v["x"] ** 2)) * m.sin(v["y"]) + m.log1p(abs(v["z"]))
    if case == "arith":
        x, y = v["x"], v["y"]
        return (x * y + x) * (y - 2.5) + x * x
    X = v["X"]
    if case == "sum1":
        return X.sum(axis=1)
    if case == "max0":
        return X.max(axis=0)
    if case == "fsum1":
        return (X * X - X).sum(axis=1)
    if case == "softmax1":
        return special.softmax(X, axis=1)
    raise ValueError(case)


CASES = (
    "ew",
    "arith",
    "sum1",
    "max0",
    "fsum1",
    "softmax1",
    "eight_schools",
    "hierarchical",
    "logistic",
    "mlp_step",
)
MODEL_CASES = models.MODEL_CASES
_HIER = models.hierarchical_inputs()


def _numpy_model(case: str) -> Callable[[], Any]:
    """The model's log-density and gradient written by hand in NumPy."""
    if case == "eight_schools":
        y, s = models.Y8, models.S8
        mu, lt, z = (np.asarray(a, float) for a in models.EIGHT_SCHOOLS_ARGS)

        def f() -> tuple:
            tau = np.exp(lt)
            r = (y - (mu + tau * z)) / s
            q = (tau / 5.0) ** 2
            logp = -0.5 * (r * r).sum() - 0.5 * (z * z).sum() - 0.5 * (mu / 5.0) ** 2 - np.log1p(q) + lt
            rs = r / s
            return logp, rs.sum() - mu / 25.0, tau * (rs * z).sum() - 2 * q / (1 + q) + 1, tau * rs - z

        return f
    if case == "logistic":
        w, b, X, y = models.logistic_args()

        def f() -> tuple:
            z = X @ w + b
            cost = (np.log1p(np.exp(-z)) + (1.0 - y) * z).mean()
            r = (1.0 / (1.0 + np.exp(-z)) - y) / len(y)
            return cost, X.T @ r, r.sum()

        return f
    if case == "mlp_step":
        W1, b1, W2, b2, x, t = models.mlp_args()

        def f() -> tuple:
            h = np.tanh(x @ W1 + b1)
            logits = h @ W2 + b2
            m = logits.max(axis=1, keepdims=True)
            e = np.exp(logits - m)
            s = e.sum(axis=1, keepdims=True)
            loss = (np.log(s[:, 0]) + m[:, 0] - (t * logits).sum(axis=1)).mean()
            dl = (e / s - t) / np.float32(len(x))
            dh = (dl @ W2.T) * (1 - h * h)
            grads = (x.T @ dh, dh.sum(axis=0), h.T @ dl, dl.sum(axis=0))
            return loss, *[p - np.float32(0.1) * g for p, g in zip((W1, b1, W2, b2), grads)]

        return f
    d = _HIER
    g, x, y, groups = d["g"], d["x"], d["y"], d["groups"]
    n = len(y)
    a, b, mu_a, lt, ls = models.hierarchical_args()

    def f() -> tuple:
        tau, sigma = np.exp(lt), np.exp(ls)
        r = (y - (a[g] + b * x)) / sigma
        u = (a - mu_a) / tau
        logp = -0.5 * (r * r).sum() - n * ls - 0.5 * (u * u).sum() - groups * lt - 0.5 * mu_a**2 - 0.5 * b**2
        rs = r / sigma
        da = np.bincount(g, rs, groups) - u / tau
        return logp, da, (rs * x).sum() - b, (u / tau).sum() - mu_a, (u * u).sum() - groups, (r * r).sum() - n

    return f


def _median_us(fn: Callable[[], Any], batch: int = 100, reps: int = 15) -> float:
    """Median over ``reps`` batches of ``batch`` calls, per call, in µs."""
    for _ in range(batch):
        fn()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(batch):
            fn()
        times.append((time.perf_counter() - t0) / batch)
    return statistics.median(times) * 1e6


def run_arignote_models(cases: list[str]) -> dict[str, dict[str, float]]:
    ensure_repo_importable()
    import arignote
    import arignote.tensor as pt
    from arignote.compile.mode import Mode
    from arignote.link.numba import NumbaLinker, numba_available, wait_for_kernels

    out: dict[str, dict[str, float]] = {}
    for case in cases:
        ins, outs, args = models.symbolic_model(case, pt, arignote.grad)
        modes = {"tier 1": Mode(NumbaLinker(jit="never"), "fast_run")}
        if numba_available():
            modes["NUMBA (whole graph)"] = "NUMBA"
            modes["FAST_RUN settled"] = Mode(NumbaLinker(jit="background"), "fast_run")
        for name, mode in modes.items():
            f = arignote.function(ins, outs, mode=mode)
            for _ in range(40):  # (FAST_RUN: the probe times a call, then compiles)
                f(*args)
            wait_for_kernels(600)
            for _ in range(10):  # (the trial: each tier timed)
                f(*args)
            whole = getattr(f.vm, "whole", None)
            if whole is not None and name == "FAST_RUN settled":
                print(f"{case}: FAST_RUN's whole graph: {whole.state} {whole.reason}", file=sys.stderr)
            out.setdefault(case, {})[f"arignote {name}"] = _median_us(lambda f=f, a=args: f(*a)) / 1e3
        out[case]["numpy"] = _median_us(_numpy_model(case)) / 1e3
    return out


def run_peer_models(cases: list[str]) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    if importable("pytensor"):
        import pytensor
        import pytensor.tensor as ptt

        for case in cases:
            ins, outs, args = models.symbolic_model(case, ptt, pytensor.grad)
            f = pytensor.function(ins, outs)
            out.setdefault(case, {})["pytensor (numba)"] = _median_us(lambda f=f, a=args: f(*a)) / 1e3
    if importable("jax"):
        import jax

        jax.config.update("jax_enable_x64", True)
        for case in cases:
            fn, jargs = models.jax_model(case, jax)
            out.setdefault(case, {})["jax"] = (
                _median_us(lambda fn=fn, a=jargs: jax.block_until_ready(fn(*a))) / 1e3
            )
    return out


def _median_ms(fn: Callable[[], Any], calls: int) -> float:
    fn()
    times = []
    for _ in range(calls):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


def run_arignote(cases: list[str], calls: int) -> dict[str, dict[str, float]]:
    out = run_arignote_models([c for c in cases if c in MODEL_CASES])
    cases = [c for c in cases if c not in MODEL_CASES]
    if not cases:
        return out
    ensure_repo_importable()
    import arignote
    import arignote.tensor as pt
    from arignote.compile.mode import Mode
    from arignote.link.numba import NumbaLinker, numba_available, wait_for_kernels

    modes = {"tier 1": Mode(NumbaLinker(jit="never"), "fast_run")}
    if numba_available():
        modes["tier 2 forced"] = "NUMBA_KERNELS"
        modes["NUMBA (whole graph)"] = "NUMBA"
        modes["FAST_RUN settled"] = Mode(NumbaLinker(jit="background", hot_elements=1), "fast_run")
    for case in cases:
        data = _inputs(case)
        syms = {k: (pt.vector(k) if v.ndim == 1 else pt.matrix(k)) for k, v in data.items()}
        expr = _expr(case, pt, pt.special, **syms)
        args = [data[k] for k in syms]
        for name, mode in modes.items():
            f = arignote.function(list(syms.values()), expr, mode=mode)
            settle = name == "FAST_RUN settled"
            for _ in range(40 if settle else 1):  # (FAST_RUN: the whole graph's probe, then its compile)
                f(*args)
            wait_for_kernels(600)
            for _ in range(10 if settle else 0):  # (the trial: each tier timed)
                f(*args)
            whole = getattr(f.vm, "whole", None)
            if whole is not None and settle:
                print(f"{case}: FAST_RUN's whole graph: {whole.state} {whole.reason}", file=sys.stderr)
            out.setdefault(case, {})[f"arignote {name}"] = _median_ms(lambda f=f, a=args: f(*a), calls)
        out[case]["numpy"] = _median_ms(lambda c=case, d=data: _expr(c, np, _np_special(), **d), calls)
    return out


class _np_special:
    @staticmethod
    def softmax(X: np.ndarray, axis: int) -> np.ndarray:
        e = np.exp(X - X.max(axis=axis, keepdims=True))
        return e / e.sum(axis=axis, keepdims=True)


def run_peers(cases: list[str], calls: int) -> dict[str, dict[str, float]]:
    out = run_peer_models([c for c in cases if c in MODEL_CASES])
    cases = [c for c in cases if c not in MODEL_CASES]
    if importable("pytensor"):
        import pytensor
        import pytensor.tensor as ptt

        for case in cases:
            data = _inputs(case)
            syms = {k: (ptt.vector(k) if v.ndim == 1 else ptt.matrix(k)) for k, v in data.items()}
            f = pytensor.function(list(syms.values()), _expr(case, ptt, ptt.special, **syms))
            args = [data[k] for k in syms]
            out.setdefault(case, {})["pytensor (numba)"] = _median_ms(lambda f=f, a=args: f(*a), calls)
    if importable("jax"):
        import jax
        import jax.numpy as jnp

        jax.config.update("jax_enable_x64", True)
        for case in cases:
            data = _inputs(case)
            names = list(data)
            fn = jax.jit(lambda *a, case=case, names=names: _expr(case, jnp, jax.nn, **dict(zip(names, a))))
            args = [jnp.asarray(data[k]) for k in names]
            out.setdefault(case, {})["jax"] = _median_ms(
                lambda fn=fn, a=args: fn(*a).block_until_ready(), calls
            )
    return out


def run_ops() -> None:
    """NumPy's and Numba's ns per element of single ops on 1e6 float64 (the cost model):
    Numba's libm call and, where it has one, arignote's vectorised function in the same loop."""
    import numba

    ensure_repo_importable()
    from arignote.link.numba import vecmath

    x = np.random.default_rng(0).random(N) + 0.5
    o = np.empty(N)

    def loop(expr: str) -> Callable[[], Any]:
        ns: dict = {"np": np, "vecmath": vecmath}
        exec(f"def k(x, o):\n    for i in range(x.shape[0]):\n        o[i] = {expr}\n", ns)
        k = numba.njit(ns["k"], error_model="numpy")
        k(x, o)
        return lambda: k(x, o)

    for name in ("exp", "log", "log1p", "sin", "cos", "sqrt", "multiply"):
        ufunc = getattr(np, name)
        t_np = _median_ms(lambda u=ufunc: u(x) if u is not np.multiply else u(x, x), 9)
        t_nb = _median_ms(loop(f"np.{name}(x[i])" if name != "multiply" else "x[i] * x[i]"), 9)
        line = f"{name:9s} numpy {t_np * 1e6 / N:5.2f} ns/elem   numba {t_nb * 1e6 / N:5.2f} ns/elem"
        if hasattr(vecmath, name):
            t_vm = _median_ms(loop(f"vecmath.{name}(x[i])"), 9)
            line += f"   arignote's (vectorised) {t_vm * 1e6 / N:5.2f} ns/elem"
        print(line)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--cases", default=",".join(CASES))
    p.add_argument("--calls", type=int, default=7)
    p.add_argument("--peer-python", default=None)
    p.add_argument("--peer", action="store_true", help="(internal) measure the peers, print JSON")
    p.add_argument("--ops", action="store_true", help="print the per-op costs and exit")
    p.add_argument("--json", metavar="PATH", help="also write the results and the environment here")
    a = p.parse_args()
    cases = a.cases.split(",")
    if a.ops:
        run_ops()
        return
    if a.peer:
        print(json.dumps(run_peers(cases, a.calls)))
        return
    results = run_arignote(cases, a.calls)
    peers = {}
    if a.peer_python:  # (the peer interpreter has both; else what this one has)
        cmd = [
            a.peer_python,
            os.path.abspath(__file__),
            "--peer",
            "--cases",
            a.cases,
            "--calls",
            str(a.calls),
        ]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        peers = json.loads(proc.stdout.strip().splitlines()[-1]) if proc.returncode == 0 else {}
        if proc.returncode:
            print(proc.stderr[-2000:], file=sys.stderr)
    elif importable("pytensor") or importable("jax"):
        peers = run_peers(cases, a.calls)
    print(f"median call, ms; models in µs (load average {os.getloadavg()[0]:.1f}, {os.cpu_count()} cores)")
    for case in cases:
        row = {**results.get(case, {}), **peers.get(case, {})}
        scale = 1e3 if case in MODEL_CASES else 1.0  # (models: µs)
        print(f"{case:9s} " + "  ".join(f"{k}: {v * scale:7.2f}" for k, v in row.items()))
    if a.json:
        merged = {case: {**results.get(case, {}), **peers.get(case, {})} for case in cases}
        with open(a.json, "w") as fh:
            json.dump({"meta": {"env": environment(), "calls": a.calls}, "median_ms": merged}, fh, indent=1)


if __name__ == "__main__":
    main()
