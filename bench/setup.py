"""Setup time: how long a user waits for a model's first result, from a process that has
imported the library to the first value and gradient in hand.

Three models of ``models.py`` (``--models``): ``logistic`` (cost and gradient, 1000x100),
``mlp_step`` (a float32 784-512-10 training step, batch 256) and ``eight_schools`` (logp
and gradient). Each is built, compiled and called once, in three situations:

* **cold**: a fresh process with empty caches (arignote's kernel cache, PyTensor's compile
  directory and Numba cache, JAX with no persistent compilation cache: its default);
* **disk-warm**: a fresh process with the caches a cold process left on disk (JAX with its
  persistent compilation cache switched on, filled by a cold process of its own);
* **in-process warm**: the same model built, compiled and called again in the process that
  did it cold (what a notebook or a test suite pays the second time).

Each situation is measured ``--runs`` times (a new empty cache each cold run); the table
gives the median, and the import time of each library (median of the fresh processes)
beside it. Modules load from their bytecode, as in an installation (the script compiles
arignote's first; ``PYTHONDONTWRITEBYTECODE`` is dropped for the processes). arignote runs in its default mode (FAST_RUN: the first call runs tier 1 while
Numba kernels compile in the background; the cold process waits for them before it exits,
untimed, so that the disk-warm process can find them). PyTensor 3 in its default mode
(Numba) and JAX ``jit`` run in the interpreter given by ``--peer-python`` when they are not
importable here. The issue's targets: cold at or below JAX's, disk-warm under 0.1 s,
in-process warm under 50 ms. Beside the wall-clock table, the CPU time of the thread that
did the setup (medians), a steadier figure for comparing one library's versions on a
loaded machine.

    python bench/setup.py --peer-python /tmp/benchenv/bin/python [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import models
from _common import REPO_ROOT, ensure_repo_importable, environment, importable, table

LIBS = ("arignote", "pytensor", "jax")
MODELS = ("logistic", "mlp_step", "eight_schools")
TARGETS = {"cold": "<= JAX's", "disk-warm": "< 0.1 s", "in-process warm": "< 50 ms"}


# --- inside a fresh process ------------------------------------------------------------------


def _setup_once(lib: str, case: str, mods: dict) -> tuple[float, float]:
    """Seconds from nothing to the first result of ``case`` (graph, gradient, compile,
    call): wall-clock, and the CPU time of the calling thread."""
    t0 = time.perf_counter()
    c0 = time.thread_time()
    if lib == "jax":
        jax = mods["jax"]
        fn, args = models.jax_model(case, jax)
        jax.block_until_ready(fn(*args))
    else:
        top, tensor = mods["top"], mods["tensor"]
        ins, outs, args = models.symbolic_model(case, tensor, top.grad)
        top.function(ins, outs)(*args)
    return time.perf_counter() - t0, time.thread_time() - c0


def child(lib: str, case: str, again: bool) -> dict:
    """One fresh process's figures: the library's import, the setup, and (``again``) the
    in-process warm setup."""
    t0 = time.perf_counter()
    if lib == "jax":
        import jax

        jax.config.update("jax_enable_x64", True)
        mods = {"jax": jax}
    elif lib == "pytensor":
        import pytensor
        import pytensor.tensor

        mods = {"top": pytensor, "tensor": pytensor.tensor}
    else:
        ensure_repo_importable()
        import arignote
        import arignote.tensor

        mods = {"top": arignote, "tensor": arignote.tensor}
    record = {"lib": lib, "model": case, "import_s": time.perf_counter() - t0}
    models.case_args(case)  # (the data, made before timing)
    record["setup_s"], record["setup_cpu_s"] = _setup_once(lib, case, mods)
    if again:
        record["again_s"], record["again_cpu_s"] = _setup_once(lib, case, mods)
    if lib == "arignote":
        from arignote.link.numba import numba_available, wait_for_kernels

        if numba_available():  # untimed: leave the background kernels on disk
            record["kernels_settled"] = wait_for_kernels(600)
    return record


# --- the parent ------------------------------------------------------------------------------


def _cache_env(lib: str, cache: str, jax_cache: bool) -> dict:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: modules load from their bytecode
    env["ARIGNOTE_CACHE_DIR"] = os.path.join(cache, "arignote")
    env["NUMBA_CACHE_DIR"] = os.path.join(cache, "numba")
    env["PYTENSOR_FLAGS"] = f"base_compiledir={os.path.join(cache, 'pytensor')}"
    if lib == "jax" and jax_cache:
        env["JAX_COMPILATION_CACHE_DIR"] = os.path.join(cache, "jax")
        env["JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"] = "0"
        env["JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES"] = "-1"
    return env


def _run_child(python: str, lib: str, case: str, env: dict, again: bool, timeout: float) -> dict:
    cmd = [python, os.path.abspath(__file__), "--child", lib, case]
    if again:
        cmd.append("--again")
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"no result in {timeout:.0f} s"}
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("{")]
    if done.returncode != 0 or not lines:
        return {"error": (done.stderr.strip().splitlines() or ["no output"])[-1]}
    return json.loads(lines[-1])


def measure(python: str, lib: str, case: str, runs: int, timeout: float) -> dict:
    """The medians of ``runs`` cold, disk-warm and in-process warm setups of one model."""
    found: dict[str, list] = {"cold": [], "disk-warm": [], "in-process warm": [], "import": []}
    cpu: dict[str, list] = {"cold": [], "disk-warm": [], "in-process warm": []}
    for _ in range(runs):
        with tempfile.TemporaryDirectory(prefix="arignote-setup-") as cache:
            cold = _run_child(python, lib, case, _cache_env(lib, cache, False), True, timeout)
            if "error" in cold:
                return {"error": cold["error"]}
            if lib == "jax":  # a cold process that fills JAX's persistent cache (not reported)
                _run_child(python, lib, case, _cache_env(lib, cache, True), False, timeout)
            warm = _run_child(python, lib, case, _cache_env(lib, cache, True), False, timeout)
            if "error" in warm:
                return {"error": warm["error"]}
        found["cold"].append(cold["setup_s"])
        found["in-process warm"].append(cold["again_s"])
        found["disk-warm"].append(warm["setup_s"])
        found["import"] += [cold["import_s"], warm["import_s"]]
        cpu["cold"].append(cold["setup_cpu_s"])
        cpu["in-process warm"].append(cold["again_cpu_s"])
        cpu["disk-warm"].append(warm["setup_cpu_s"])
    return {
        **{k: statistics.median(v) for k, v in found.items()},
        "cpu": {k: statistics.median(v) for k, v in cpu.items()},
    }


def _fmt(s: float | None) -> str:
    if s is None:
        return "-"
    return f"{s * 1e3:.0f} ms" if s < 1 else f"{s:.2f} s"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--libs", default=",".join(LIBS))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds for one process")
    ap.add_argument("--peer-python", help="an interpreter with PyTensor 3 and JAX")
    ap.add_argument("--json", help="write the records and the environment here")
    ap.add_argument("--child", nargs=2, metavar=("LIB", "MODEL"), help=argparse.SUPPRESS)
    ap.add_argument("--again", action="store_true", help=argparse.SUPPRESS)
    opts = ap.parse_args()
    if opts.child:
        print(json.dumps(child(*opts.child, opts.again)), flush=True)
        return

    # arignote's bytecode, as an installation has it (the peers' was written by pip)
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", os.path.join(REPO_ROOT, "arignote")], check=False
    )
    records = []
    for case in opts.models.split(","):
        for lib in opts.libs.split(","):
            python = sys.executable
            if lib != "arignote" and not importable(lib):
                if not opts.peer_python:
                    print(f"{lib}: not installed here (pass --peer-python)", file=sys.stderr)
                    continue
                python = opts.peer_python
            print(f"{case} {lib} ...", file=sys.stderr, flush=True)
            records.append({"model": case, "lib": lib, **measure(python, lib, case, opts.runs, opts.timeout)})

    env = environment()
    print(f"load average {env['loadavg']}; {opts.runs} run(s) each; medians")
    rows = []
    for r in records:
        if "error" in r:
            rows.append([r["model"], r["lib"], f"error: {r['error']}", "", "", ""])
            continue
        rows.append(
            [r["model"], r["lib"], *(_fmt(r[k]) for k in ("cold", "disk-warm", "in-process warm", "import"))]
        )
    print(table(["model", "library", "cold", "disk-warm", "in-process warm", "import"], rows))
    # (steadier than wall-clock on a loaded machine; JAX and PyTensor compile on other
    # threads too, so the figure is a like-for-like A/B of one library, not a comparison)
    for r in records:
        if "cpu" in r:
            print(
                f"{r['model']} {r['lib']}: CPU time of the calling thread, "
                + ", ".join(f"{k} {_fmt(v)}" for k, v in r["cpu"].items())
            )
    print("targets (arignote): " + "; ".join(f"{k} {v}" for k, v in TARGETS.items()))
    if opts.json:
        with open(opts.json, "w") as fh:
            json.dump({"environment": env, "runs": opts.runs, "records": records}, fh, indent=1)


if __name__ == "__main__":
    main()
