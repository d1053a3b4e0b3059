"""Loops written as ``scan``: arignote against PyTensor 3 and JAX (``lax.scan``) in one run.

Three cases, float64:

* ``rnn``: a tanh RNN, ``h_t = tanh(x_t U + h_{t-1} W)``, T = 1,000 steps, hidden 32,
  batch 16; the function returns the mean of ``h**2`` over all steps and its gradient
  with respect to ``W``, ``U`` and ``h0`` (back-propagation through time);
* ``scalar``: ``x_t = x_{t-1} * a + 1`` for 10,000 steps, returning every ``x_t``;
* ``cumsum``: a cumulative sum of 10,000 numbers written as a scan.

arignote runs in its default mode (the Scan's loop in Python over one compiled inner
function; a step whose values are all 0-d, as in ``scalar`` and ``cumsum``, as one
generated loop on NumPy scalars) and, when JAX is importable here, in ``mode="JAX"`` ("arignote-jax": the Scan
becomes one ``lax.scan``), and when Numba is importable, in ``mode="NUMBA"``
("arignote-numba": the whole graph, the loop included, one Numba function), and the
default mode again once its background work settled ("arignote (settled)": FAST_RUN compiles
the same whole-graph function out of process after 32 calls and keeps it if a trial finds
it faster; "compile" is then the time until it settled).

For each library: "compile" is building the graph, compiling and the first call, the
library already imported, with its compile caches empty: for JAX the first call of the
``jax.jit`` function, which traces and compiles (JAX's persistent cache is off by
default); for PyTensor its default mode, whose JIT compiles at the first call, with empty
PyTensor and Numba caches; for "arignote-numba" an empty ``ARIGNOTE_CACHE_DIR`` (Numba
imported before timing, as the peers' processes import it). With ``--warm-cache``,
"arignote-numba (warm)" is measured again in a new process reading the disk cache the
first measurement filled (what a user's second session pays). "call" is the best of
several calls. Values are checked against a NumPy loop (a mismatch makes the exit
status 1).

With ``--peer-python``, PyTensor and JAX run in that interpreter (this script with
``--serve``, with empty PyTensor and Numba caches), the libraries taking turns case by
case; without it, those importable here run in this process.

    python bench/scan.py --peer-python /tmp/benchenv/bin/python
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import PeerProcess, best_of, ensure_repo_importable, environment, fmt_seconds, importable, table

CASES = ("rnn", "scalar", "cumsum")
T_RNN, HIDDEN, BATCH = 1000, 32, 16
N_SCALAR, N_CUMSUM = 10_000, 10_000
RTOL = 1e-6


def make_data(case: str) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    if case == "rnn":
        return [
            rng.normal(size=(T_RNN, BATCH, HIDDEN)),
            np.zeros((BATCH, HIDDEN)),
            rng.normal(size=(HIDDEN, HIDDEN)) * 0.1,
            rng.normal(size=(HIDDEN, HIDDEN)) * 0.1,
        ]
    if case == "scalar":
        return [np.array(0.5), np.array(0.999)]
    return [rng.normal(size=N_CUMSUM)]


def numpy_reference(case: str, args: list[np.ndarray]) -> list[np.ndarray]:
    if case == "rnn":
        x, h0, W, U = args
        hs = [h0]
        for t in range(T_RNN):
            hs.append(np.tanh(x[t] @ U + hs[-1] @ W))
        H = np.array(hs[1:])
        cost = (H**2).mean()
        gH = 2 * H / H.size
        gW, gU, gh = np.zeros_like(W), np.zeros_like(U), np.zeros_like(h0)
        for t in reversed(range(T_RNN)):
            gz = (gH[t] + gh) * (1 - H[t] ** 2)
            gW += hs[t].T @ gz
            gU += x[t].T @ gz
            gh = gz @ W.T
        return [np.array(cost), gW, gU, gh]
    if case == "scalar":
        x, a = float(args[0]), float(args[1])
        out = np.empty(N_SCALAR)
        for t in range(N_SCALAR):
            x = x * a + 1.0
            out[t] = x
        return [out]
    return [np.cumsum(args[0])]


# --- the libraries ---------------------------------------------------------------------------


def build_arignote(case: str, mode: Any = None) -> Callable:
    import arignote
    import arignote.tensor as pt
    from arignote.gradient import grad

    if case == "rnn":
        x, h0 = pt.tensor3("x", dtype="float64"), pt.dmatrix("h0")
        W, U = pt.dmatrix("W"), pt.dmatrix("U")
        hs, _ = arignote.scan(
            lambda xt, h, W, U: pt.tanh(pt.dot(xt, U) + pt.dot(h, W)),
            sequences=[x],
            outputs_info=[h0],
            non_sequences=[W, U],
        )
        cost = (hs**2).mean()
        return arignote.function([x, h0, W, U], [cost, *grad(cost, [W, U, h0])], mode=mode)
    if case == "scalar":
        x0, a = pt.dscalar("x0"), pt.dscalar("a")
        xs, _ = arignote.scan(
            lambda x, a: x * a + 1.0, outputs_info=[x0], non_sequences=[a], n_steps=N_SCALAR
        )
        return arignote.function([x0, a], xs, mode=mode)
    v = pt.dvector("v")
    cs, _ = arignote.scan(lambda e, acc: acc + e, sequences=[v], outputs_info=[pt.constant(np.float64(0.0))])
    return arignote.function([v], cs, mode=mode)


def build_pytensor(case: str) -> Callable:
    import pytensor
    import pytensor.tensor as pt

    if case == "rnn":
        x, h0 = pt.tensor3("x", dtype="float64"), pt.dmatrix("h0")
        W, U = pt.dmatrix("W"), pt.dmatrix("U")
        hs, _ = pytensor.scan(
            lambda xt, h, W, U: pt.tanh(pt.dot(xt, U) + pt.dot(h, W)),
            sequences=[x],
            outputs_info=[h0],
            non_sequences=[W, U],
        )
        cost = (hs**2).mean()
        return pytensor.function([x, h0, W, U], [cost, *pytensor.grad(cost, [W, U, h0])])
    if case == "scalar":
        x0, a = pt.dscalar("x0"), pt.dscalar("a")
        xs, _ = pytensor.scan(
            lambda x, a: x * a + 1.0, outputs_info=[x0], non_sequences=[a], n_steps=N_SCALAR
        )
        return pytensor.function([x0, a], xs)
    v = pt.dvector("v")
    cs, _ = pytensor.scan(lambda e, acc: acc + e, sequences=[v], outputs_info=[pt.constant(np.float64(0.0))])
    return pytensor.function([v], cs)


def build_jax(case: str) -> Callable:
    import jax
    import jax.numpy as jnp
    from jax import lax

    jax.config.update("jax_enable_x64", True)
    if case == "rnn":

        def cost(W, U, h0, x):
            def step(h, xt):
                h = jnp.tanh(xt @ U + h @ W)
                return h, h

            _, hs = lax.scan(step, h0, x)
            return (hs**2).mean()

        vg = jax.jit(jax.value_and_grad(cost, argnums=(0, 1, 2)))

        def run(x, h0, W, U):
            c, (gW, gU, gh) = vg(W, U, h0, x)
            return [np.asarray(c), np.asarray(gW), np.asarray(gU), np.asarray(gh)]

        return run
    if case == "scalar":

        @jax.jit
        def rec(x0, a):
            def step(x, _):
                x = x * a + 1.0
                return x, x

            return lax.scan(step, x0, None, length=N_SCALAR)[1]

        return lambda x0, a: [np.asarray(rec(x0, a))]

    @jax.jit
    def cums(v):
        def step(acc, e):
            acc = acc + e
            return acc, acc

        return lax.scan(step, jnp.float64(0.0), v)[1]

    return lambda v: [np.asarray(cums(v))]


BUILDERS = {
    "arignote": build_arignote,
    "arignote-jax": lambda case: build_arignote(case, mode="JAX"),
    "arignote-numba": lambda case: build_arignote(case, mode="NUMBA"),
    "arignote-numba (warm)": lambda case: build_arignote(case, mode="NUMBA"),
    "pytensor": build_pytensor,
    "jax": build_jax,
}


def measure(lib: str, case: str, repeats: int) -> dict:
    """Compile (graph, function, first call) and call times of one library on one case."""
    args = make_data(case)
    rec: dict[str, Any] = {"lib": lib, "case": case}
    try:
        t0 = time.perf_counter()
        fn = BUILDERS[lib](case)
        first = fn(*args)
        rec["compile"] = time.perf_counter() - t0
        del first
        _time_calls(rec, fn, case, args, repeats)
    except Exception as err:  # a library that fails a case: an entry in the table
        rec["error"] = f"{type(err).__name__}: {str(err)[:200]}"
    return rec


def _time_calls(rec: dict, fn: Callable, case: str, args: list, repeats: int) -> None:
    """``rec``'s call time (the best of ``repeats`` calls), number of calls and largest
    relative difference from the NumPy loop."""

    def run() -> tuple[float, Any]:
        t = time.perf_counter()
        out = fn(*args)
        return time.perf_counter() - t, out

    rec["call"], out, rec["calls"] = best_of(run, repeats, budget=5.0)
    out = out if isinstance(out, (list, tuple)) else [out]
    ref = numpy_reference(case, args)
    rec["max_err"] = max(
        float(np.max(np.abs(np.asarray(o) - r) / (np.abs(r) + 1.0))) for o, r in zip(out, ref)
    )


#: states of FAST_RUN's whole-graph function that are still on the way (see
#: arignote.link.numba.whole): settling waits while the function is in one of them
UNSETTLED = ("off", "probing", "compiling", "trial")


def measure_settled(case: str, repeats: int, budget: float = 120.0) -> dict:
    """The default mode once its background work settled: called until FAST_RUN's whole-graph
    function (Numba, compiled out of process into the disk cache, then tried against the
    Python loop) is in use or turned down, then timed as :func:`measure` times. What a user
    calling the function many times gets; "compile" is the time to settle."""
    from arignote.link.numba import wait_for_kernels

    args = make_data(case)
    rec: dict[str, Any] = {"lib": "arignote (settled)", "case": case}
    try:
        t0 = time.perf_counter()
        fn = BUILDERS["arignote"](case)
        whole = getattr(fn.vm, "whole", None)
        while time.perf_counter() - t0 < budget:
            fn(*args)
            if whole is None or whole.state not in UNSETTLED:
                break
            if whole.state == "compiling":
                wait_for_kernels(budget)
        rec["compile"] = time.perf_counter() - t0
        rec["state"] = whole.state if whole is not None else "no whole-graph function"
        _time_calls(rec, fn, case, args, repeats)
    except Exception as err:
        rec["error"] = f"{type(err).__name__}: {str(err)[:200]}"
    return rec


def versions(libs: Sequence[str]) -> dict:
    found = {}
    for lib in libs:
        mod = __import__(lib)
        found[lib] = getattr(mod, "__version__", "?")
    return found


def serve(libs: Sequence[str], repeats: int) -> int:
    if any(lib.startswith("arignote") for lib in libs):  # (the warm-cache measurement)
        # (NUMBA_CACHE_DIR left alone: Numba's code for arignote's kernels is where the
        # first measurement put it, beside them in ARIGNOTE_CACHE_DIR)
        ensure_repo_importable()
        import numba  # noqa: F401  (imported before timing, as by the first measurement)

        import arignote.gradient  # noqa: F401

        print(json.dumps({"meta": True, "versions": {}}), flush=True)
    else:
        # empty compile caches: the compile times are cold ones
        os.environ.setdefault("PYTENSOR_FLAGS", f"compiledir={tempfile.mkdtemp(prefix='pytensor-bench-')}")
        os.environ.setdefault("NUMBA_CACHE_DIR", tempfile.mkdtemp(prefix="numba-bench-"))
        print(json.dumps({"meta": True, "versions": versions(libs)}), flush=True)
    for line in sys.stdin:
        case = line.strip()
        for lib in libs:
            rec = (
                measure_settled(case, repeats) if lib == "arignote (settled)" else measure(lib, case, repeats)
            )
            print(json.dumps(rec), flush=True)
        print(json.dumps({"done": True}), flush=True)
    return 0


def report(records: list[dict], meta: dict) -> tuple[str, bool]:
    out = [f"scan benchmark  {meta['env']['platform']}  load {meta['env']['loadavg']}", ""]
    out.append("versions: " + ", ".join(f"{k} {v}" for k, v in meta["versions"].items()))
    bad = False
    rows = []
    by = {(r["lib"], r["case"]): r for r in records}
    for case in CASES:
        ours = by.get(("arignote", case), {})
        peers = [by.get((p, case), {}) for p in ("pytensor", "jax")]
        best_call = min((p["call"] for p in peers if "call" in p), default=None)
        jax_compile = by.get(("jax", case), {}).get("compile")
        libs = ("arignote", "arignote (settled)", "arignote-numba", "arignote-numba (warm)", "arignote-jax")
        for lib in (*libs, "pytensor", "jax"):
            r = by.get((lib, case))
            if r is None:
                continue
            if "error" in r:
                rows.append([case, lib, "-", "-", "-", r["error"][:60]])
                continue
            ok = r["max_err"] <= RTOL
            bad = bad or not ok
            note = "" if ok else f"MISMATCH {r['max_err']:.1e}"
            if lib.startswith("arignote") and best_call is not None:
                note = (note + f" call/best peer {r['call'] / best_call:.2f}").strip()
                if jax_compile:
                    note += f", compile/JAX {r['compile'] / jax_compile:.2f}"
            if "state" in r:
                note = (note + f"; whole graph: {r['state']}").strip("; ")
            rows.append([case, lib, fmt_seconds(r["compile"]), fmt_seconds(r["call"]), str(r["calls"]), note])
        del ours
    out.append(
        table(
            ["case", "library", "compile", "call", "calls", "notes"],
            rows,
            [False, False, True, True, True, False],
        )
    )
    return "\n".join(out), bad


def _in_new_process(lib: str, case: str, repeats: int, cold: bool) -> list[dict]:
    """``lib``'s records of ``case`` measured by this script in a new process (``cold``: with
    an empty ARIGNOTE_CACHE_DIR of its own, else this process's, which earlier measurements
    filled)."""
    saved = os.environ.get("ARIGNOTE_CACHE_DIR")
    if cold:
        os.environ["ARIGNOTE_CACHE_DIR"] = tempfile.mkdtemp(prefix="arignote-bench-")
    try:
        proc = PeerProcess(
            sys.executable, os.path.abspath(__file__), ["--serve", lib, "--repeats", str(repeats)]
        )
    finally:
        if saved is not None:
            os.environ["ARIGNOTE_CACHE_DIR"] = saved
    try:
        return list(proc.request(case))
    finally:
        proc.close()


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--peer-python", metavar="PATH", help="interpreter with pytensor and jax installed")
    p.add_argument("--repeats", type=int, default=7, help="calls timed per case (best of)")
    p.add_argument("--cases", default=",".join(CASES))
    p.add_argument("--json", metavar="PATH", help="also write every record here")
    p.add_argument(
        "--warm-cache",
        action="store_true",
        help="also measure arignote-numba in a new process reading the disk cache the first run filled",
    )
    p.add_argument("--serve", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.serve:
        return serve(args.serve.split(","), args.repeats)
    ensure_repo_importable()
    cases = [c for c in args.cases.split(",") if c]
    # with a peer interpreter, both peers run there: JAX's threads stay out of the
    # process that measures arignote
    local = [] if args.peer_python else [lib for lib in ("pytensor", "jax") if importable(lib)]
    remote = [lib for lib in ("pytensor", "jax") if lib not in local]
    peer = None
    meta: dict = {"env": environment(), "versions": versions(["arignote", *local])}
    import arignote.gradient  # (the builders' imports, made before timing)

    if importable("jax"):
        # imported before timing, as the peer interpreter imports its libraries: the
        # compile times of "arignote-jax" and "jax" both leave out the imports
        import arignote.link.jax  # noqa: F401

        meta["versions"].setdefault("jax", versions(["jax"])["jax"])
    numba_here = importable("numba")
    if numba_here:
        # cold compiles, like the peers' (their caches empty); Numba imported before timing
        import numba  # noqa: F401

        os.environ["ARIGNOTE_CACHE_DIR"] = tempfile.mkdtemp(prefix="arignote-bench-")
        meta["versions"]["numba"] = versions(["numba"])["numba"]
    if remote and args.peer_python:
        peer = PeerProcess(args.peer_python, os.path.abspath(__file__), ["--serve", ",".join(remote)])
        meta["versions"].update((peer.meta or {}).get("versions", {}))
    records = []
    for case in cases:
        records.append(measure("arignote", case, args.repeats))
        if importable("jax"):  # arignote's JAX backend: the Scan as one lax.scan
            records.append(measure("arignote-jax", case, args.repeats))
        if numba_here:  # the whole graph, its loop included, as one Numba function
            records.append(measure("arignote-numba", case, args.repeats))
            if args.warm_cache:  # a new process, the disk cache filled by the line above
                records.extend(_in_new_process("arignote-numba (warm)", case, args.repeats, cold=False))
            # the default mode after its background work, in a new process with an empty
            # cache of its own: its settling time includes the cold compile
            records.extend(_in_new_process("arignote (settled)", case, args.repeats, cold=True))
        records.extend(measure(lib, case, args.repeats) for lib in local)
        if peer is not None:
            records.extend(peer.request(case))
    if peer is not None:
        peer.close()
    text, bad = report(records, meta)
    print(text)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"meta": meta, "records": records}, fh, indent=1)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
