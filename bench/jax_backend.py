"""arignote's JAX backend (``mode="JAX"``) against the same workloads written by hand in JAX,
in one run: compile time and call time.

Workloads (``--workloads``): ``eight_schools`` (log-density and gradient of the
non-centred eight schools model), ``hierarchical`` (logp and gradient of a hierarchical
linear regression, 2,000 observations in 50 groups), ``elementwise`` (``exp(x) * sin(y) +
log1p(x * x)`` on 10**6 float64 values), ``reductions`` (sum, max and mean over each axis
of a 1000x1000 matrix), ``softmax`` (row softmax of a 1000x1000 matrix), ``mlp_train``
(one SGD step of a 784-256-10 tanh MLP with a softmax cross-entropy on a batch of 128:
parameters are shared variables, updated on the device, and the hand-written step passes
them through), ``logistic`` (logp and gradient of a logistic regression, 10,000 x 20) and
``sparse_logistic`` (the same model on a sparse 10,000 x 1,000 design matrix storing 1% of
its entries, a constant).

For each workload and implementation:

* compile: arignote: building the graph (its gradient included), ``function(...)``
  (rewrites, linking, tracing) and the first call (XLA's compilation); JAX: ``jax.jit``
  and the first call (tracing, differentiation and XLA's compilation). Each from a new graph or a new function object (nothing cached from an
  earlier compilation), the best of ``--compile-repeats`` rounds that compile every
  implementation in turn.
* call: the best over ``--repeats`` rounds of the mean time of a loop of calls (about
  20 ms), inputs NumPy arrays for both; each round times every implementation of the
  workload in turn, so a change of load on a shared machine weighs on all alike.
  arignote's default returns NumPy arrays (``np.asarray``, zero-copy on CPU); the
  ``arignote_device`` row returns device arrays, as the hand-written function does; every
  call waits for its result (``block_until_ready``). The ``arignote_xla`` row calls the
  program arignote compiled directly, with the arguments it passes it: the graph's cost
  without arignote's Python (its call overhead is ``arignote_device`` less this row).

The summary row per workload gives arignote's call time over JAX's (target: at most 1.10)
and arignote's compile time over JAX's (target: at most 1.20). Results are checked equal
before they are timed. ``--quick`` runs smaller sizes and fewer repeats; ``--out PATH``
writes every record and the environment as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import REPO_ROOT, environment, table
from models import EIGHT_SCHOOLS_ARGS, eight_schools_logp

if REPO_ROOT not in sys.path:
    sys.path.insert(0, REPO_ROOT)

import jax
import jax.numpy as jnp
import scipy.sparse as scipy_sparse
from jax.experimental import sparse as jsparse

import arignote
import arignote.tensor as pt
from arignote import sparse
from arignote.compile.mode import Mode, get_mode
from arignote.link.jax import JAXLinker

WORKLOADS = (
    "eight_schools",
    "hierarchical",
    "elementwise",
    "reductions",
    "softmax",
    "mlp_train",
    "logistic",
    "sparse_logistic",
)


class Workload:
    """``graph()`` -> (inputs, outputs, updates) of arignote; ``hand`` the JAX function;
    ``args`` the inputs' values; ``state``: for a training step, the shared variables the
    graph updates (the hand-written step takes and returns their values)."""

    def __init__(self, name: str, graph: Callable, hand: Callable, args: list, state: list | None = None):
        self.name, self.graph, self.hand, self.args, self.state = name, graph, hand, args, state or []


def eight_schools(quick: bool) -> Workload:
    logp_of = eight_schools_logp

    def graph() -> tuple:
        mu, log_tau, z = pt.dscalar("mu"), pt.dscalar("log_tau"), pt.dvector("z")
        logp = logp_of(mu, log_tau, z, pt)
        return [mu, log_tau, z], [logp, *arignote.grad(logp, [mu, log_tau, z])], None

    def hand(mu: Any, log_tau: Any, z: Any) -> Any:
        value, grads = jax.value_and_grad(lambda *a: logp_of(*a, jnp), argnums=(0, 1, 2))(mu, log_tau, z)
        return (value, *grads)

    return Workload("eight_schools", graph, hand, list(EIGHT_SCHOOLS_ARGS))


def hierarchical(quick: bool) -> Workload:
    n, groups = (500, 20) if quick else (2000, 50)
    rng = np.random.default_rng(0)
    g = rng.integers(0, groups, n)
    onehot = np.eye(groups)[g]  # (the group of each observation, as a design matrix)
    x = rng.normal(size=n)
    y = 1.0 + 0.5 * x + rng.normal(size=n)

    def logp_of(a: Any, b: Any, mu_a: Any, log_tau: Any, log_sigma: Any, lib: Any) -> Any:
        tau, sigma = lib.exp(log_tau), lib.exp(log_sigma)
        mean = lib.dot(onehot, a) + b * x
        return (
            (-0.5 * ((y - mean) / sigma) ** 2).sum()
            - n * log_sigma
            + (-0.5 * ((a - mu_a) / tau) ** 2).sum()
            - groups * log_tau
            - 0.5 * mu_a**2
            - 0.5 * b**2
            + log_tau
            + log_sigma
        )

    def graph() -> tuple:
        a, b, mu_a = pt.dvector("a"), pt.dscalar("b"), pt.dscalar("mu_a")
        log_tau, log_sigma = pt.dscalar("log_tau"), pt.dscalar("log_sigma")
        ins = [a, b, mu_a, log_tau, log_sigma]
        logp = logp_of(*ins, pt)
        return ins, [logp, *arignote.grad(logp, ins)], None

    def hand(*args: Any) -> Any:
        value, grads = jax.value_and_grad(lambda *a: logp_of(*a, jnp), argnums=(0, 1, 2, 3, 4))(*args)
        return (value, *grads)

    args = [np.zeros(groups), np.array(0.2), np.array(0.1), np.array(0.0), np.array(0.0)]
    return Workload("hierarchical", graph, hand, args)


def elementwise(quick: bool) -> Workload:
    n = 10**5 if quick else 10**6
    rng = np.random.default_rng(1)

    def graph() -> tuple:
        x, y = pt.dvector("x"), pt.dvector("y")
        return [x, y], [pt.exp(x) * pt.sin(y) + pt.log1p(x * x)], None

    def hand(x: Any, y: Any) -> Any:
        return (jnp.exp(x) * jnp.sin(y) + jnp.log1p(x * x),)

    return Workload("elementwise", graph, hand, [rng.uniform(size=n), rng.uniform(size=n)])


def reductions(quick: bool) -> Workload:
    n = 300 if quick else 1000
    rng = np.random.default_rng(2)

    def graph() -> tuple:
        x = pt.dmatrix("x")
        return [x], [x.sum(axis=0), x.max(axis=1), x.mean()], None

    def hand(x: Any) -> Any:
        return (x.sum(axis=0), x.max(axis=1), x.mean())

    return Workload("reductions", graph, hand, [rng.normal(size=(n, n))])


def softmax(quick: bool) -> Workload:
    n = 300 if quick else 1000
    rng = np.random.default_rng(3)

    def graph() -> tuple:
        x = pt.dmatrix("x")
        return [x], [pt.special.softmax(x, axis=-1)], None

    def hand(x: Any) -> Any:
        return (jax.nn.softmax(x, axis=-1),)

    return Workload("softmax", graph, hand, [rng.normal(size=(n, n))])


def mlp_train(quick: bool) -> Workload:
    batch, n_in, hidden, n_out = (32, 784, 64, 10) if quick else (128, 784, 256, 10)
    rng = np.random.default_rng(4)
    init = [
        rng.normal(scale=0.05, size=(n_in, hidden)),
        np.zeros(hidden),
        rng.normal(scale=0.05, size=(hidden, n_out)),
        np.zeros(n_out),
    ]
    xv = rng.normal(size=(batch, n_in))
    labels = np.eye(n_out)[rng.integers(0, n_out, batch)]
    lr = 0.1

    def loss_of(w1: Any, b1: Any, w2: Any, b2: Any, x: Any, t: Any, lib: Any, log_softmax: Callable) -> Any:
        h = lib.tanh(lib.dot(x, w1) + b1)
        return -(t * log_softmax(lib.dot(h, w2) + b2)).sum(axis=-1).mean()

    state: list = []

    def graph() -> tuple:
        params = [arignote.shared(v.copy(), name=f"p{k}") for k, v in enumerate(init)]
        state[:] = params
        x, t = pt.dmatrix("x"), pt.dmatrix("t")
        loss = loss_of(*params, x, t, pt, lambda z: pt.special.log_softmax(z, axis=-1))
        grads = arignote.grad(loss, params)
        return [x, t], [loss], {p: p - lr * g for p, g in zip(params, grads)}

    def hand(params: tuple, x: Any, t: Any) -> Any:
        def loss(ps: tuple) -> Any:
            return loss_of(*ps, x, t, jnp, lambda z: jax.nn.log_softmax(z, axis=-1))

        value, grads = jax.value_and_grad(loss)(params)
        return value, tuple(p - lr * g for p, g in zip(params, grads))

    return Workload("mlp_train", graph, hand, [xv, labels], state=[tuple(jnp.asarray(v) for v in init)])


def logistic(quick: bool) -> Workload:
    n, k = (2000, 20) if quick else (10000, 20)
    rng = np.random.default_rng(5)
    xv = rng.normal(size=(n, k))
    yv = (rng.uniform(size=n) < 0.5).astype("float64")

    def logp_of(w: Any, b: Any, lib: Any, softplus: Callable) -> Any:
        eta = lib.dot(xv, w) + b
        return (yv * eta - softplus(eta)).sum() - 0.5 * (w**2).sum()

    def graph() -> tuple:
        w, b = pt.dvector("w"), pt.dscalar("b")
        logp = logp_of(w, b, pt, pt.softplus)
        return [w, b], [logp, *arignote.grad(logp, [w, b])], None

    def hand(w: Any, b: Any) -> Any:
        value, grads = jax.value_and_grad(lambda *a: logp_of(*a, jnp, jax.nn.softplus), argnums=(0, 1))(w, b)
        return (value, *grads)

    return Workload("logistic", graph, hand, [np.zeros(k), np.array(0.0)])


def sparse_logistic(quick: bool) -> Workload:
    """The logistic regression on a sparse design matrix (1% of entries stored), a constant
    of the graph: a BCOO constant inside both programs."""
    n, k = (2000, 200) if quick else (10000, 1000)
    rng = np.random.default_rng(6)
    xs = scipy_sparse.random(n, k, density=0.01, format="csr", random_state=rng, data_rvs=rng.standard_normal)
    xb = jsparse.BCOO.from_scipy_sparse(xs)
    yv = (rng.uniform(size=n) < 0.5).astype("float64")

    def logp_of(eta: Any, w: Any, softplus: Callable) -> Any:
        return (yv * eta - softplus(eta)).sum() - 0.5 * (w**2).sum()

    def graph() -> tuple:
        w, b = pt.dvector("w"), pt.dscalar("b")
        logp = logp_of(sparse.dot(sparse.as_sparse_variable(xs), w) + b, w, pt.softplus)
        return [w, b], [logp, *arignote.grad(logp, [w, b])], None

    def hand(w: Any, b: Any) -> Any:
        value, grads = jax.value_and_grad(
            lambda w, b: logp_of(xb @ w + b, w, jax.nn.softplus), argnums=(0, 1)
        )(w, b)
        return (value, *grads)

    return Workload("sparse_logistic", graph, hand, [np.full(k, 0.01), np.array(0.0)])


BUILDERS = {
    "eight_schools": eight_schools,
    "hierarchical": hierarchical,
    "elementwise": elementwise,
    "reductions": reductions,
    "softmax": softmax,
    "mlp_train": mlp_train,
    "logistic": logistic,
    "sparse_logistic": sparse_logistic,
}


#: the clock every figure is read from: wall time, or with ``--cpu-time`` the CPU time of the
#: process (all its threads; see main's help)
_clock = time.perf_counter


def _block(result: Any) -> Any:
    return jax.block_until_ready(result)


def _interleaved(calls: dict[str, Callable[[], Any]], repeats: int) -> dict[str, float]:
    """Seconds per call of each of ``calls``: the best over ``repeats`` rounds, each round
    timing a loop of every implementation in turn (in an order shuffled per round, so that
    none is always first or always after the same one), so that a change of the machine's
    load weighs on all of them alike."""
    numbers = {name: _calls_for(call) for name, call in calls.items()}
    best = dict.fromkeys(calls, float("inf"))
    order = list(calls)
    shuffle = random.Random(0).shuffle
    for _ in range(repeats):
        shuffle(order)
        for name in order:
            call, n = calls[name], numbers[name]
            t0 = _clock()
            for _ in range(n):
                call()
            best[name] = min(best[name], (_clock() - t0) / n)
    return best


def _calls_for(call: Callable[[], Any], target: float = 0.02) -> int:
    t0 = _clock()
    call()
    dt = max(_clock() - t0, 1e-7)
    return int(min(1000, max(3, target / dt)))


def _compile_hand(w: Workload) -> tuple[float, Callable, Callable, list]:
    """jax.jit of a new function object (no trace or compilation cached from an earlier
    round) and its first call: (seconds, call, call with host results, first results)."""
    args = w.args
    t0 = _clock()
    step = jax.jit(lambda *a: w.hand(*a))
    if w.state:
        first = _block(step(w.state[0], *args))
        seconds = _clock() - t0
        state = {"params": first[1]}

        def hand_call() -> Any:
            value, state["params"] = step(state["params"], *args)
            return _block(value)

        # the same, with the results brought to the host as NumPy arrays (what arignote's
        # default, NumPy outputs, costs on top: the fair peer of the "arignote" row)
        def hand_host_call() -> Any:
            value, state["params"] = step(state["params"], *args)
            return jax.device_get(value)

        return seconds, hand_call, hand_host_call, [np.asarray(first[0])]
    first = _block(step(*args))
    seconds = _clock() - t0

    def plain_call() -> Any:
        return _block(step(*args))

    def plain_host_call() -> Any:
        return jax.device_get(step(*args))

    return seconds, plain_call, plain_host_call, [np.asarray(v) for v in first]


def _compile_arignote(w: Workload, impl: str, mode: Mode, want: list) -> tuple[dict, Any]:
    """A new graph, ``function`` and its first call: (the record's figures, the function)."""
    args = w.args
    t0 = _clock()
    ins, outs, updates = w.graph()
    t_build = _clock() - t0
    t1 = _clock()
    f = arignote.function(ins, outs, updates=updates, mode=mode)
    t_function = _clock() - t1
    got = _block(f(*args))
    compile_s = _clock() - t0
    got = got if isinstance(got, list) else [got]
    for a, b in zip(got, want):
        np.testing.assert_allclose(np.asarray(a), b, rtol=1e-6, atol=1e-9, err_msg=f"{w.name} {impl}")
    figures = {"compile_s": compile_s, "function_s": t_function, "build_s": t_build}
    return figures, f


def measure(w: Workload, opts: argparse.Namespace) -> list[dict]:
    """Compile each implementation ``--compile-repeats`` times, in turn (the best time is
    kept), then time the calls of the last ones, interleaved."""
    modes = {
        "arignote": get_mode("JAX"),
        "arignote_device": Mode(JAXLinker(device_outputs=True), get_mode("JAX").query, name="JAX"),
    }
    records: dict[str, dict] = {
        impl: {"workload": w.name, "impl": impl, "compile_s": float("inf")}
        for impl in ("jax", "jax_host", *modes)
    }
    calls: dict[str, Callable[[], Any]] = {}
    args = w.args
    for _ in range(opts.compile_repeats):
        seconds, calls["jax"], calls["jax_host"], want = _compile_hand(w)
        for impl in ("jax", "jax_host"):
            records[impl]["compile_s"] = min(records[impl]["compile_s"], seconds)
        for impl, mode in modes.items():
            figures, f = _compile_arignote(w, impl, mode, want)
            if figures["compile_s"] < records[impl]["compile_s"]:
                records[impl].update(figures)
            records[impl]["nodes"] = len(f.maker.fgraph.apply_nodes)
            calls[impl] = lambda f=f: _block(f(*args))
            if impl == "arignote_device":
                # the compiled XLA program alone, called with the arguments arignote passes
                # it (the shared variables' values of now): what the graph costs without
                # arignote's Python around it, to tell the two apart
                calls["arignote_xla"] = _xla_call(f.vm)
    records["arignote_xla"] = {**records["arignote_device"], "impl": "arignote_xla"}
    if opts.dump_hlo:
        _dump_hlo(w, f, opts.dump_hlo)
    for impl, seconds in _interleaved(calls, opts.repeats).items():
        records[impl]["call_s"] = seconds
    return list(records.values())


def _xla_call(runner: Any) -> Callable[[], Any]:
    """A call of the program ``runner`` compiled, with the arguments it passes it: copies
    of the shared variables' values of now, the donated ones (updated shared variables)
    replaced by their updates after each call, as arignote's call does."""
    compiled = runner._jit()
    args = [jnp.array(a, copy=True) if k in runner.donations else a for k, a in enumerate(runner._args())]
    pairs = [(i, runner.donations[i]) for i in runner.donate_argnums]

    def xla_call() -> Any:
        _, results = compiled(*args)  # (the program returns whether a check failed, first)
        for i, o in pairs:
            args[i] = results[o]
        return _block(results)

    return xla_call


def _dump_hlo(w: Workload, f: Any, folder: str) -> None:
    """Write the optimised HLO of the hand-written program and of arignote's, as XLA
    compiled them for this device, to ``folder/<workload>.{jax,arignote}.hlo.txt``."""
    os.makedirs(folder, exist_ok=True)
    hand = jax.jit(w.hand)
    lowered = hand.lower(w.state[0], *w.args) if w.state else hand.lower(*w.args)
    runner = f.vm
    programs = {"jax": lowered, "arignote": runner._jit().lower(*runner._args())}
    for name, program in programs.items():
        with open(os.path.join(folder, f"{w.name}.{name}.hlo.txt"), "w") as fh:
            fh.write(program.compile().as_text())


def report(records: list[dict]) -> str:
    by = {(r["workload"], r["impl"]): r for r in records if "call_s" in r}
    rows = []
    for r in records:
        if "error" in r:
            rows.append([r["workload"], r["impl"], "error", r["error"][:60], "", ""])
            continue
        base = by.get((r["workload"], "jax"))
        ratio_call = r["call_s"] / base["call_s"] if base else None
        ratio_compile = r["compile_s"] / base["compile_s"] if base else None
        rows.append(
            [
                r["workload"],
                r["impl"],
                f"{r['call_s'] * 1e6:.1f}",
                f"{ratio_call:.2f}" if ratio_call is not None else "",
                f"{r['compile_s'] * 1e3:.0f}",
                f"{ratio_compile:.2f}" if ratio_compile is not None else "",
            ]
        )
    return table(
        ["workload", "impl", "call µs", "call / jax", "compile ms", "compile / jax"],
        rows,
        [False, False, True, True, True, True],
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workloads", default=",".join(WORKLOADS))
    parser.add_argument("--quick", action="store_true", help="smaller sizes, fewer repeats")
    parser.add_argument("--repeats", type=int, default=None, help="rounds of call timings")
    parser.add_argument(
        "--compile-repeats",
        type=int,
        default=3,
        help="compilations of each implementation (the best is kept)",
    )
    parser.add_argument("--dump-hlo", default=None, metavar="DIR", help="write both optimised programs here")
    parser.add_argument("--out", default=None, help="write the records and the environment as JSON here")
    parser.add_argument(
        "--cpu-time",
        action="store_true",
        help="time with the process's CPU time (all threads) instead of wall time: on a CPU "
        "machine shared with other work, time spent waiting for a core is left out; the JAX "
        "CPU backend's own threads are counted, their time summed (not for an accelerator, "
        "whose work is not the process's CPU time)",
    )
    opts = parser.parse_args(argv)
    global _clock
    _clock = time.process_time if opts.cpu_time else time.perf_counter
    if opts.repeats is None:
        opts.repeats = 3 if opts.quick else 15
    records: list[dict] = []
    for name in opts.workloads.split(","):
        if name not in BUILDERS:
            parser.error(f"unknown workload {name!r}; known: {', '.join(WORKLOADS)}")
        try:
            records.extend(measure(BUILDERS[name](opts.quick), opts))
        except Exception as err:  # a workload that fails is a row, not the end of the run
            records.append({"workload": name, "impl": "arignote", "error": f"{type(err).__name__}: {err}"})
    meta = {
        **environment(),
        "jax": jax.__version__,
        "devices": [str(d) for d in jax.devices()],
        "quick": opts.quick,
        "clock": "process_time" if opts.cpu_time else "perf_counter",
    }
    clock = "CPU time" if opts.cpu_time else "wall time"
    print(f"JAX {jax.__version__} on {meta['devices']}; load average {meta['loadavg']}; {clock}")
    print(report(records))
    if opts.out:
        with open(opts.out, "w") as fh:
            json.dump({"meta": meta, "records": records}, fh, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
