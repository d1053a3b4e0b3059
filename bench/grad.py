"""Cost of building gradient graphs, and their size, for a few models.

For each model and size it times ``grad(cost, params)`` (building the gradient graph,
nothing compiled) and counts Apply nodes: the forward graph, the whole gradient graph
(the forward nodes it uses included), the nodes the gradient added, and how many of
those a merge (CSE) pass removes (work the gradient built twice). The models:

* ``mlp``: a tanh MLP of ``size`` hidden layers of 256 units on 784 inputs, 10 classes,
  softmax cross-entropy (``log_softmax``) on a one-hot target, mean over the batch;
* ``chain``: ``y = sin(y) * 0.5 + y * 0.5`` repeated ``size`` times on a vector (3 nodes
  per step, so the graph is ``3 * size`` deep);
* ``reduce``: ``size`` blocks of reductions of ``h = x * w_k`` for a matrix ``x``: max over
  rows, log-sum-exp and mean of squares over columns, product over rows;
* ``gp``: the negative log marginal likelihood of a Gaussian process with ``size`` additive
  RBF kernels (lengthscale and variance each) on 1-d inputs: Cholesky factor, two
  triangular solves, log-determinant from the factor's diagonal (linear algebra Ops);
* ``embed``: ``size`` layers of an embedding lookup ``E_k[tokens]`` (integer-array
  indexing), a slice ``h[:, 1:] - h[:, :-1]`` and a set_subtensor of the first column
  (indexing Ops and their gradients).

The same models are built with PyTensor 3 (the peer), in this process when it can be
imported, else in ``--peer-python`` (which runs this script with ``--serve``), and shown
side by side with the ratio PyTensor time / arignote time.

    python bench/grad.py --peer-python /tmp/benchenv/bin/python
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import (
    PeerProcess,
    TimeLimitExceeded,
    best_of,
    ensure_repo_importable,
    environment,
    fmt_ratio,
    fmt_seconds,
    importable,
    table,
    timed,
)

LIBS = ("arignote", "pytensor")
MODELS: dict[str, tuple[int, ...]] = {
    "mlp": (4, 16),
    "chain": (300, 3_000, 30_000),
    "reduce": (10, 50),
    "gp": (1, 8),
    "embed": (2, 16),
}


class Library:
    """The parts of one library the models use (both spell them the same way)."""

    def __init__(self, name: str):
        self.name = name
        if name == "arignote":
            ensure_repo_importable()
            import arignote as lib
            import arignote.tensor as pt
            from arignote.gradient import grad
            from arignote.graph.fg import FunctionGraph
            from arignote.graph.rewriting.basic import merge_graph
            from arignote.graph.traversal import io_toposort

            def merge(fg: Any) -> None:
                merge_graph(fg)

        elif name == "pytensor":
            import pytensor as lib
            import pytensor.tensor as pt
            from pytensor.gradient import grad
            from pytensor.graph.fg import FunctionGraph
            from pytensor.graph.rewriting.basic import MergeOptimizer
            from pytensor.graph.traversal import io_toposort

            def merge(fg: Any) -> None:
                MergeOptimizer().rewrite(fg)

        else:
            raise ValueError(f"unknown library {name!r}")
        self.version = getattr(lib, "__version__", "?")
        self.pt, self.grad, self.FunctionGraph, self.merge, self.io_toposort = (
            pt,
            grad,
            FunctionGraph,
            merge,
            io_toposort,
        )


# --- the models: (inputs, cost, params) ------------------------------------------------------


def model_mlp(lib: Library, layers: int) -> tuple[list, Any, list]:
    pt = lib.pt
    x = pt.matrix("x", dtype="float64", shape=(None, 784))
    y = pt.matrix("y", dtype="float64", shape=(None, 10))
    widths = [784, *([256] * layers), 10]
    params = []
    h = x
    for k, (n_in, n_out) in enumerate(itertools.pairwise(widths)):
        w = pt.matrix(f"W{k}", dtype="float64", shape=(n_in, n_out))
        b = pt.vector(f"b{k}", dtype="float64", shape=(n_out,))
        params += [w, b]
        z = pt.dot(h, w) + b
        h = pt.tanh(z) if k < layers else z
    logp = pt.special.log_softmax(h, axis=1)
    cost = -pt.mean(pt.sum(y * logp, axis=1))
    return [x, y, *params], cost, params


def model_chain(lib: Library, depth: int) -> tuple[list, Any, list]:
    pt = lib.pt
    x = pt.vector("x", dtype="float64")
    y = x
    for _ in range(depth):
        y = pt.sin(y) * 0.5 + y * 0.5
    return [x], pt.sum(y), [x]


def model_reduce(lib: Library, blocks: int) -> tuple[list, Any, list]:
    pt = lib.pt
    x = pt.matrix("x", dtype="float64")
    ws = [pt.vector(f"w{k}", dtype="float64") for k in range(blocks)]
    cost = None
    for w in ws:
        h = x * w
        term = (
            pt.max(h, axis=0).sum()
            + pt.mean(pt.log(pt.sum(pt.exp(h), axis=1)))
            + pt.sum(pt.mean(h**2, axis=1))
            + pt.sum(pt.prod(h, axis=0))
        )
        cost = term if cost is None else cost + term
    return [x, *ws], cost, [x, *ws]


def model_gp(lib: Library, kernels: int) -> tuple[list, Any, list]:
    pt = lib.pt
    x = pt.vector("x", dtype="float64")
    y = pt.vector("y", dtype="float64")
    d2 = (x[:, None] - x[None, :]) ** 2
    params, k = [], None
    for j in range(kernels):
        ell, var = pt.scalar(f"ell{j}", dtype="float64"), pt.scalar(f"var{j}", dtype="float64")
        params += [ell, var]
        term = var * pt.exp(-0.5 * d2 / ell**2)
        k = term if k is None else k + term
    k = k + 1e-3 * pt.eye(x.shape[0])
    chol = pt.linalg.cholesky(k)
    v = pt.linalg.solve_triangular(chol, y, lower=True)
    cost = 0.5 * pt.sum(v**2) + pt.sum(pt.log(pt.diagonal(chol)))
    return [x, y, *params], cost, params


def model_embed(lib: Library, layers: int) -> tuple[list, Any, list]:
    pt = lib.pt
    tokens = pt.matrix("tokens", dtype="int64")
    params, h = [], None
    for j in range(layers):
        table_ = pt.matrix(f"E{j}", dtype="float64", shape=(1000, 32))
        params.append(table_)
        e = table_[tokens][:, j:]  # (batch, seq - j, 32): h is one shorter per layer
        h = e if h is None else h + e
        h = pt.tanh(h[:, 1:] - h[:, :-1])
        h = pt.set_subtensor(h[:, 0], 0.0)
    return [tokens, *params], pt.sum(h**2), params


BUILDERS: dict[str, Callable[[Library, int], tuple[list, Any, list]]] = {
    "mlp": model_mlp,
    "chain": model_chain,
    "reduce": model_reduce,
    "gp": model_gp,
    "embed": model_embed,
}


def repeats_for(model: str, size: int) -> int:
    if model == "chain":
        return 3 if size <= 3_000 else 1
    return 5


def measure(lib: Library, model: str, size: int, max_seconds: float) -> dict:
    rec: dict = {"lib": lib.name, "model": model, "size": size, "error": None}
    try:
        inputs, cost, params = BUILDERS[model](lib, size)
    except RecursionError:
        rec["error"] = "RecursionError (model)"
        return rec
    rec["fwd_nodes"] = len(lib.io_toposort(inputs, [cost]))

    def run() -> tuple[float, Any]:
        return timed(lambda: lib.grad(cost, params))

    try:
        seconds, grads, runs = best_of(
            run, repeats_for(model, size), budget=max_seconds, limit=max_seconds * 2
        )
    except TimeLimitExceeded:
        rec["error"] = f"timeout (>{max_seconds * 2:g} s)"
        return rec
    except RecursionError:
        rec["error"] = "RecursionError"
        return rec
    except Exception as err:  # a failure is a result to report
        rec["error"] = f"{type(err).__name__}: {str(err)[:80]}"
        return rec
    rec["seconds"], rec["repeats"] = seconds, runs
    forward = set(lib.io_toposort(inputs, [cost]))
    everything = lib.io_toposort(inputs, list(grads))
    rec["grad_nodes"] = len(everything)
    rec["new_nodes"] = sum(1 for n in everything if n not in forward)
    try:
        # duplicates the gradient built: what merging removes from the whole gradient
        # graph, less what it removes from the forward graph alone
        removed = []
        for outs in ([cost], list(grads)):
            fg = lib.FunctionGraph(inputs, outs, clone=True)
            before = len(fg.apply_nodes)
            lib.merge(fg)
            removed.append(before - len(fg.apply_nodes))
        rec["merged_away"] = removed[1] - removed[0]
    except RecursionError:
        rec["merged_away"] = "RecursionError"
    except Exception as err:
        rec["merged_away"] = type(err).__name__
    return rec


# --- peer and driver -------------------------------------------------------------------------


def serve(name: str, max_seconds: float) -> int:
    lib = Library(name)
    print(
        json.dumps(
            {"meta": True, "lib": name, "version": lib.version, "recursion_limit": sys.getrecursionlimit()}
        ),
        flush=True,
    )
    for line in sys.stdin:
        parts = line.split()
        if len(parts) != 2:
            break
        print(json.dumps(measure(lib, parts[0], int(parts[1]), max_seconds)), flush=True)
        print(json.dumps({"done": True}), flush=True)
    return 0


def _num(v: Any) -> str:
    return f"{v:,}" if isinstance(v, int) else ("-" if v is None else str(v))


def report(results: dict, plan: list, meta: dict) -> str:
    env = meta["env"]
    load = env.get("loadavg")
    out = [
        "Gradient graphs: time to build grad(cost, params) and the size of what it builds",
        "=" * 80,
        f"python {env['python']}, {env['cpu_count']} CPUs"
        + (f", load average {load[0]:.1f} at start" if load else ""),
        f"arignote {meta.get('arignote', '?')}; pytensor {meta.get('pytensor', 'not measured')}",
        "time: best of 5 (chain: 3, or 1 from 30,000 steps), time.perf_counter; ratio = pytensor / arignote",
        "nodes: fwd = forward graph; grad = whole gradient graph (forward nodes it uses included);",
        "new = nodes the gradient added; dup = duplicates among them (what a merge (CSE) pass removes",
        "from the gradient graph beyond what it removes from the forward graph alone)",
        "",
    ]
    headers = [
        "model",
        "size",
        "fwd",
        "arignote",
        "grad",
        "new",
        "dup",
        "pytensor",
        "grad",
        "new",
        "dup",
        "ratio",
    ]
    right = [False, True, True, True, True, True, True, True, True, True, True, True]
    rows = []
    for model, size in plan:
        ag = results.get(("arignote", model, size), {})
        pt = results.get(("pytensor", model, size), {})

        def cell(rec: dict) -> list[str]:
            if not rec:
                return ["-", "-", "-", "-"]
            if rec.get("error"):
                return [rec["error"], "-", "-", "-"]
            return [
                fmt_seconds(rec.get("seconds")),
                _num(rec.get("grad_nodes")),
                _num(rec.get("new_nodes")),
                _num(rec.get("merged_away")),
            ]

        ratio = None
        if ag.get("seconds") and pt.get("seconds"):
            ratio = pt["seconds"] / ag["seconds"]
        fwd = ag.get("fwd_nodes", pt.get("fwd_nodes"))
        rows.append([model, f"{size:,}", _num(fwd), *cell(ag), *cell(pt), fmt_ratio(ratio)])
    out.append(table(headers, rows, right))
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", default=",".join(MODELS), help="comma-separated (default: %(default)s)")
    p.add_argument("--peer-python", metavar="PATH", help="interpreter with pytensor installed")
    p.add_argument("--only", choices=LIBS, help="measure one library only")
    p.add_argument("--max-seconds", type=float, default=30.0, help="time budget per measurement")
    p.add_argument("--json", metavar="PATH", help="also write the records here")
    p.add_argument("--serve", choices=LIBS, help="internal: measure for a parent process")
    args = p.parse_args(argv)
    if args.serve:
        return serve(args.serve, args.max_seconds)
    plan = [(m, s) for m in args.models.split(",") for s in MODELS[m]]
    runners: dict[str, Any] = {}
    meta: dict = {"env": environment()}
    if args.only != "pytensor":
        runners["arignote"] = Library("arignote")
        meta["arignote"] = runners["arignote"].version
    if args.only != "arignote":
        if importable("pytensor"):
            runners["pytensor"] = Library("pytensor")
            meta["pytensor"] = f"{runners['pytensor'].version} (in process)"
        elif args.peer_python:
            peer = PeerProcess(args.peer_python, os.path.abspath(__file__), ["--serve", "pytensor"])
            if peer.meta is None:
                print(f"pytensor could not start: {peer.stderr_tail}", file=sys.stderr)
            else:
                runners["pytensor"] = peer
                meta["pytensor"] = f"{peer.meta.get('version')} (subprocess: {args.peer_python})"
    results: dict = {}
    for model, size in plan:
        for name, runner in runners.items():  # the libraries take turns, model by model
            if isinstance(runner, PeerProcess):
                recs = list(runner.request(f"{model} {size}"))
                rec = recs[0] if recs else {"lib": name, "model": model, "size": size, "error": "peer died"}
            else:
                rec = measure(runner, model, size, args.max_seconds)
            results[(name, model, size)] = rec
            what = rec.get("error") or fmt_seconds(rec.get("seconds"))
            print(f"  {name} {model} {size:,}: {what}", file=sys.stderr, flush=True)
    for runner in runners.values():
        if isinstance(runner, PeerProcess):
            runner.close()
    print(report(results, plan, meta))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"meta": meta, "records": list(results.values())}, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
