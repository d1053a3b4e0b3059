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
trial measures it faster). PyTensor 3 runs in its default (Numba) mode, JAX with
``jax.jit``; with ``--peer-python`` they run in that interpreter (this script with
``--serve``, answering one case at a time), else in this one when importable.

Every call is compiled and warmed up first; then the libraries take turns, case by case, in
``--rounds`` rounds (arignote and NumPy, then the peers; the other way round in every other
round). A round's figure is the median of ``--calls`` calls after one warm-up call (a model
case: of 5 batches of calls adding up to about 10 ms); each printed number is the median of
a library's rounds, in ms. On the project's shared 2-core machine a library's call time moves
by up to 50% between phases lasting seconds to minutes (NumPy's MLP step: 3.1 ms, then 4.5
ms a few seconds later, in one process): taking turns puts every library in the same phases,
where measuring one library after another compared each against another phase of the
machine. Also prints NumPy's per-op and
Numba's per-op costs (``--ops``), the numbers behind the cost model in
``arignote/link/numba/kernels.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import models
from _common import PeerProcess, ensure_repo_importable, environment, importable

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


def _median_ms(fn: Callable[[], Any], calls: int) -> float:
    fn()
    times = []
    for _ in range(calls):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


class _Timed:
    """A prepared call and how one round times it: the median of ``calls`` calls (ms) for
    the array cases; for a model case, whose call takes µs, the median of 5 batches of
    calls adding up to about 10 ms each, per call."""

    def __init__(self, case: str, fn: Callable[[], Any], calls: int):
        self.fn = fn
        self.calls = calls
        self.batch = 0
        if case in MODEL_CASES:
            t0 = time.perf_counter()
            for _ in range(3):
                fn()
            per_call = (time.perf_counter() - t0) / 3
            self.batch = max(3, min(2000, int(0.01 / max(per_call, 1e-7))))

    def round_ms(self) -> float:
        if self.batch:
            return _median_us(self.fn, self.batch, 5) / 1e3
        return _median_ms(self.fn, self.calls)


def _symbolic(case: str, tensor: Any, grad: Callable) -> tuple[list, Any, list]:
    """(inputs, outputs, input values) of a case built with a symbolic library (``tensor``:
    ``arignote.tensor`` or ``pytensor.tensor``, ``grad`` its ``grad``)."""
    if case in MODEL_CASES:
        return models.symbolic_model(case, tensor, grad)
    data = _inputs(case)
    syms = {k: (tensor.vector(k) if v.ndim == 1 else tensor.matrix(k)) for k, v in data.items()}
    return list(syms.values()), _expr(case, tensor, tensor.special, **syms), [data[k] for k in syms]


def prepare_arignote(cases: list[str], calls: int) -> dict[str, dict[str, _Timed]]:
    """arignote's calls of each case in each mode, compiled and settled (FAST_RUN: its
    background kernels compiled and the whole-graph trial over), and NumPy's."""
    ensure_repo_importable()
    import arignote
    import arignote.tensor as pt
    from arignote.compile.mode import Mode
    from arignote.link.numba import NumbaLinker, numba_available, wait_for_kernels

    out: dict[str, dict[str, _Timed]] = {}
    for case in cases:
        modes: dict[str, Any] = {"tier 1": Mode(NumbaLinker(jit="never"), "fast_run")}
        ins, outs, args = _symbolic(case, pt, arignote.grad)
        if case in MODEL_CASES:
            if numba_available():
                modes["NUMBA (whole graph)"] = "NUMBA"
                modes["FAST_RUN settled"] = Mode(NumbaLinker(jit="background"), "fast_run")
            numpy_fn = _numpy_model(case)
        else:
            data = {v.name: a for v, a in zip(ins, args)}  # (NumPy computes on the same arrays)
            if numba_available():
                modes["tier 2 forced"] = "NUMBA_KERNELS"
                modes["NUMBA (whole graph)"] = "NUMBA"
                modes["FAST_RUN settled"] = Mode(NumbaLinker(jit="background", hot_elements=1), "fast_run")

            def numpy_fn(c: str = case, d: dict = data) -> Any:
                return _expr(c, np, _np_special(), **d)

        for name, mode in modes.items():
            f = arignote.function(ins, outs, mode=mode)
            settle = name == "FAST_RUN settled"
            for _ in range(40 if settle else 1):  # (FAST_RUN: the whole graph's probe, then its compile)
                f(*args)
            wait_for_kernels(600)
            for _ in range(110 if settle else 0):  # (the trial: turns of each tier, at most 100 calls)
                f(*args)
            whole = getattr(f.vm, "whole", None)
            if whole is not None and settle:
                print(f"{case}: FAST_RUN's whole graph: {whole.state} {whole.reason}", file=sys.stderr)
            out.setdefault(case, {})[f"arignote {name}"] = _Timed(case, lambda f=f, a=args: f(*a), calls)
        out[case]["numpy"] = _Timed(case, numpy_fn, calls)
    return out


def _peer_calls(case: str, calls: int) -> dict[str, _Timed]:
    """The peers' calls of one case (PyTensor 3 in its default mode, ``jax.jit``), compiled
    and called once; those that cannot be imported left out."""
    out: dict[str, _Timed] = {}
    if importable("pytensor"):
        import pytensor
        import pytensor.tensor as ptt

        ins, outs, args = _symbolic(case, ptt, pytensor.grad)
        f = pytensor.function(ins, outs)
        f(*args)
        out["pytensor (numba)"] = _Timed(case, lambda f=f, a=args: f(*a), calls)
    if importable("jax"):
        import jax
        import jax.numpy as jnp

        jax.config.update("jax_enable_x64", True)
        if case in MODEL_CASES:
            fn, jargs = models.jax_model(case, jax)
        else:
            data = _inputs(case)
            names = list(data)
            fn = jax.jit(lambda *a, case=case, names=names: _expr(case, jnp, jax.nn, **dict(zip(names, a))))
            jargs = [jnp.asarray(data[k]) for k in names]
        jax.block_until_ready(fn(*jargs))
        out["jax"] = _Timed(case, lambda fn=fn, a=jargs: jax.block_until_ready(fn(*a)), calls)
    return out


def serve(cases: list[str], calls: int) -> None:
    """The peer's side of ``--peer-python``: each stdin line names a case; its peers' calls
    are made on the first request, and each request answers one round's times."""
    prepared: dict[str, dict[str, _Timed]] = {}
    print(json.dumps({"meta": True}), flush=True)
    for line in sys.stdin:
        case = line.strip()
        if case:
            if case not in prepared:
                prepared[case] = _peer_calls(case, calls)
            for lib, timed in prepared[case].items():
                print(json.dumps({"case": case, "lib": lib, "ms": timed.round_ms()}), flush=True)
        print(json.dumps({"done": True}), flush=True)


class _np_special:
    @staticmethod
    def softmax(X: np.ndarray, axis: int) -> np.ndarray:
        e = np.exp(X - X.max(axis=axis, keepdims=True))
        return e / e.sum(axis=axis, keepdims=True)


def run_ops() -> None:
    """NumPy's and Numba's ns per element of single ops on 1e6 float64 and float32 (the cost
    model): Numba's libm call and, where it has one, arignote's vectorised function in the
    same loop (in float64 for float32 elements, rounded once, as the kernels compute)."""
    import numba

    ensure_repo_importable()
    from arignote.link.numba import scalar_math, vecmath

    for dtype in ("float64", "float32"):
        x = (np.random.default_rng(0).random(N) + 0.5).astype(dtype)
        o = np.empty(N, dtype)

        def loop(expr: str, x: np.ndarray = x, o: np.ndarray = o) -> Callable[[], Any]:
            ns: dict = {"np": np, "numba": numba, "vecmath": vecmath}
            exec(scalar_math.TANH, ns)
            exec(f"def k(x, o):\n    for i in range(x.shape[0]):\n        o[i] = {expr}\n", ns)
            k = numba.njit(ns["k"], error_model="numpy")
            k(x, o)
            return lambda: k(x, o)

        print(dtype)
        for name in ("exp", "log", "log1p", "sin", "cos", "tanh", "sqrt", "multiply"):
            ufunc = getattr(np, name)
            t_np = _median_ms(lambda u=ufunc, x=x: u(x) if u is not np.multiply else u(x, x), 9)
            t_nb = _median_ms(loop(f"np.{name}(x[i])" if name != "multiply" else "x[i] * x[i]"), 9)
            line = f"  {name:9s} numpy {t_np * 1e6 / N:5.2f} ns/elem   numba {t_nb * 1e6 / N:5.2f} ns/elem"
            ours = f"vecmath.{name}" if hasattr(vecmath, name) else None
            if name == "tanh":
                ours = scalar_math.TANH_NAME
            if ours:
                t_vm = _median_ms(loop(f"np.{dtype}({ours}(np.float64(x[i])))"), 9)
                line += f"   arignote's (vectorised) {t_vm * 1e6 / N:5.2f} ns/elem"
            print(line)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--cases", default=",".join(CASES))
    p.add_argument("--calls", type=int, default=7)
    p.add_argument("--rounds", type=int, default=5, help="rounds in which every library takes its turn")
    p.add_argument("--peer-python", default=None)
    p.add_argument("--serve", action="store_true", help="(internal) measure the peers on request")
    p.add_argument("--ops", action="store_true", help="print the per-op costs and exit")
    p.add_argument("--json", metavar="PATH", help="also write the results and the environment here")
    a = p.parse_args()
    cases = a.cases.split(",")
    if a.ops:
        run_ops()
        return
    if a.serve:
        serve(cases, a.calls)
        return
    ours = prepare_arignote(cases, a.calls)
    peer = None
    local: dict[str, dict[str, _Timed]] = {}
    if a.peer_python:  # (the peer interpreter has both; else what this one has)
        peer = PeerProcess(a.peer_python, os.path.abspath(__file__), ["--serve", "--calls", str(a.calls)])
        if peer.meta is None:
            print(f"the peer did not start: {peer.stderr_tail}", file=sys.stderr)
            peer = None
    elif importable("pytensor") or importable("jax"):
        local = {case: _peer_calls(case, a.calls) for case in cases}
    times: dict[str, dict[str, list[float]]] = {case: {} for case in cases}
    for r in range(a.rounds):
        for case in cases:
            turns = [("ours", None), ("peers", None)]
            for who, _ in turns if r % 2 == 0 else turns[::-1]:  # (who goes first alternates)
                if who == "ours":
                    for lib, timed in {**ours[case], **local.get(case, {})}.items():
                        times[case].setdefault(lib, []).append(timed.round_ms())
                elif peer is not None:
                    for rec in peer.request(case):
                        times[case].setdefault(rec["lib"], []).append(rec["ms"])
    if peer is not None:
        if not peer.alive:
            print(peer.stderr_tail, file=sys.stderr)
        peer.close()
    merged = {case: {lib: statistics.median(v) for lib, v in row.items()} for case, row in times.items()}
    print(
        f"median call, ms; models in µs; the median of {a.rounds} rounds in which each library "
        f"took its turn (load average {os.getloadavg()[0]:.1f}, {os.cpu_count()} cores)"
    )
    for case in cases:
        scale = 1e3 if case in MODEL_CASES else 1.0  # (models: µs)
        print(f"{case:9s} " + "  ".join(f"{k}: {v * scale:7.2f}" for k, v in merged[case].items()))
    if a.json:
        meta = {"env": environment(), "calls": a.calls, "rounds": a.rounds}
        with open(a.json, "w") as fh:
            json.dump({"meta": meta, "median_ms": merged}, fh, indent=1)


if __name__ == "__main__":
    main()
