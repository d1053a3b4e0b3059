"""How compile time grows with graph size: arignote beside PyTensor 3 and JAX, one run.

For graphs of N = 100, 1k, 10k and 100k nodes of four kinds:

* ``sum``: ``v[0]*1 + v[1]*2 + ... + v[k-1]*k``, k = N/3 indexed terms of a vector summed
  (each term an index, a product and a sum: about N nodes);
* ``chain``: ``y = tanh(y * 0.9 + 0.1)`` N/3 times (N elementwise nodes);
* ``sum_grad``/``chain_grad``: the value and the gradient of each with respect to ``x``;

each measurement runs in a fresh process (so that its peak memory is its own) and
reports the seconds to build the graph, to rewrite it, to link it, the first call, the
total (``function()`` plus the first call, what a user waits for), and the process's peak
resident memory. PyTensor is measured in its default mode (Numba JIT) and JAX with
``jax.jit``, each in the interpreter given by ``--peer-python`` when this one cannot
import it. A measurement that runs past ``--max-seconds`` (or fails, e.g. PyTensor's
RecursionError on deep graphs) is reported as such.

    python bench/compile_scaling.py --peer-python /tmp/benchenv/bin/python
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KINDS = ("sum", "chain", "sum_grad", "chain_grad")
SIZES = (100, 1_000, 10_000, 100_000)
LIBS = ("arignote", "pytensor", "jax")


# --- one measurement, in this (fresh) process ----------------------------------------------------


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _terms(kind: str, n: int) -> int:
    """How many terms or links give about ``n`` nodes (a term is ~3 nodes: index, scale, add)."""
    return max(1, n // 3)


def _graph(pt: Any, kind: str, n: int, grad: Callable) -> tuple[list, list]:
    k = _terms(kind, n)
    x = pt.dvector("x")
    if kind.startswith("sum"):
        y = x[0] * 1.0
        for i in range(1, k):
            y = y + x[i] * float(i + 1)
    else:
        y = x
        for _ in range(k):
            y = pt.tanh(y * 0.9 + 0.1)
        y = y.sum()
    outs = [y, grad(y, x)] if kind.endswith("_grad") else [y]
    return [x], outs


def measure_graph_library(lib: str, kind: str, n: int) -> dict:
    if lib == "arignote":
        sys.path.insert(0, REPO_ROOT)
        import arignote as lib_mod
        import arignote.tensor as pt
    else:
        import pytensor as lib_mod
        import pytensor.tensor as pt
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    t0 = time.perf_counter()
    inputs, outputs = _graph(pt, kind, n, lib_mod.grad)
    t_build = time.perf_counter() - t0
    t0 = time.perf_counter()
    f = lib_mod.function(inputs, outputs)
    t_function = time.perf_counter() - t0
    value = np.linspace(0.1, 1.0, _terms(kind, n))
    t0 = time.perf_counter()
    f(value)
    t_first = time.perf_counter() - t0
    rec = {"build": t_build, "function": t_function, "first_call": t_first, "total": t_function + t_first}
    maker = getattr(f, "maker", None)
    if lib == "arignote" and maker is not None:
        rec.update(rewrite=maker.rewrite_time, link=maker.link_time, nodes=len(maker.fgraph.apply_nodes))
    return rec


def measure_jax(kind: str, n: int) -> dict:
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
    k = _terms(kind, n)

    def f(x: Any) -> Any:
        if kind.startswith("sum"):
            y = x[0] * 1.0
            for i in range(1, k):
                y = y + x[i] * float(i + 1)
            return y
        y = x
        for _ in range(k):
            y = jnp.tanh(y * 0.9 + 0.1)
        return y.sum()

    fn = jax.jit(jax.value_and_grad(f)) if kind.endswith("_grad") else jax.jit(f)
    value = jnp.asarray(np.linspace(0.1, 1.0, k))
    t0 = time.perf_counter()
    jax.block_until_ready(fn(value))  # tracing, compiling and the first call
    t_first = time.perf_counter() - t0
    return {"build": 0.0, "function": 0.0, "first_call": t_first, "total": t_first}


def measure_one(lib: str, kind: str, n: int) -> dict:
    rec: dict[str, Any] = {"lib": lib, "kind": kind, "n": n}
    try:
        rec.update(measure_jax(kind, n) if lib == "jax" else measure_graph_library(lib, kind, n))
    except RecursionError:
        rec["error"] = "RecursionError"
    except Exception as err:  # reported, not raised: one failing size must not end the table
        rec["error"] = f"{type(err).__name__}: {str(err)[:80]}"
    rec["peak_mib"] = _peak_mib()
    return rec


# --- the table, from fresh processes ------------------------------------------------------------


def _can_import(python: str, lib: str) -> bool:
    if lib == "arignote":
        return True
    probe = subprocess.run([python, "-c", f"import {lib}"], capture_output=True)
    return probe.returncode == 0


def run_one(python: str, lib: str, kind: str, n: int, max_seconds: float) -> dict:
    cmd = [python, os.path.abspath(__file__), "--one", lib, kind, str(n)]
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=max_seconds, env=env)
    except subprocess.TimeoutExpired:
        return {"lib": lib, "kind": kind, "n": n, "error": f"> {max_seconds:.0f} s"}
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("{")]
    if not lines:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return {"lib": lib, "kind": kind, "n": n, "error": tail[:80]}
    return json.loads(lines[-1])


def _fmt_s(v: Any) -> str:
    if v is None:
        return "-"
    return f"{v * 1e3:.0f} ms" if v < 1 else f"{v:.2f} s"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--one", nargs=3, metavar=("LIB", "KIND", "N"), help=argparse.SUPPRESS)
    p.add_argument("--peer-python", metavar="PATH", help="interpreter with pytensor and jax installed")
    p.add_argument("--sizes", default=",".join(str(s) for s in SIZES))
    p.add_argument("--kinds", default=",".join(KINDS))
    p.add_argument("--libs", default=",".join(LIBS))
    p.add_argument("--max-seconds", type=float, default=120.0, help="per measurement (default 120)")
    p.add_argument("--json", metavar="PATH", help="also write every record here")
    a = p.parse_args()
    if a.one:
        lib, kind, n = a.one
        print(json.dumps(measure_one(lib, kind, int(n))))
        return
    sizes = [int(s) for s in a.sizes.split(",")]
    records = []
    for lib in a.libs.split(","):
        python = sys.executable
        if not _can_import(python, lib):
            if a.peer_python and _can_import(a.peer_python, lib):
                python = a.peer_python
            else:
                print(f"({lib}: not importable here; give --peer-python)")
                continue
        for kind in a.kinds.split(","):
            for n in sizes:
                rec = run_one(python, lib, kind, n, a.max_seconds)
                records.append(rec)
                print(json.dumps(rec), file=sys.stderr)
    print(
        f"\n{'kind':<11}{'N':>8}  {'lib':<9}{'build':>9}{'rewrite':>9}{'link':>9}{'1st call':>10}{'total':>10}{'peak MiB':>10}"
    )
    for r in records:
        if "error" in r:
            print(f"{r['kind']:<11}{r['n']:>8}  {r['lib']:<9}  {r['error']}")
            continue
        print(
            f"{r['kind']:<11}{r['n']:>8}  {r['lib']:<9}{_fmt_s(r['build']):>9}{_fmt_s(r.get('rewrite')):>9}"
            f"{_fmt_s(r.get('link')):>9}{_fmt_s(r['first_call']):>10}{_fmt_s(r['total']):>10}{r['peak_mib']:>10.0f}"
        )
    print(
        "\ntotal = function() + first call (JAX: jit trace + compile + first call); build: making the graph"
    )
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(records, fh, indent=1)


if __name__ == "__main__":
    main()
