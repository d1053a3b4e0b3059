"""Per-call overhead of a compiled function with one tiny input.

The graph is ``x + 1`` on a 0-d array and on a 3-element vector: the work is nothing, so
the time per call is what calling costs (checking the input, running the graph's glue,
returning the output). Measured in the same run:

* NumPy: ``x + 1.0`` called directly (the floor);
* arignote: ``function([x], x + 1)`` called with and without ``trust_input=True``, and its
  graph runner alone (``f.vm()``, the input already in place) to split the cost;
* PyTensor 3 (the peer): the same function in its default mode (Numba) and with its Python
  linker (``Mode(linker="py")``), with and without ``trust_input=True``;
* JAX: ``jax.jit(lambda x: x + 1)`` called on the NumPy input, with ``block_until_ready``.

PyTensor and JAX run in this process when importable, otherwise in the interpreter given by
``--peer-python`` (which runs this script with ``--serve``), taking turns with the
in-process measurements so a change in load hits all alike. Each number is the best of
``--rounds`` rounds, each round the best of ``--repeats`` loops of ``--number`` calls.
Run ``python bench/call_overhead.py --help``; bench/README.md says more.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import PeerProcess, ensure_repo_importable, environment, fmt_ratio, fmt_us, importable, table

CASES = {"scalar": (), "vector3": (3,)}

# (lib, variant, label): the order of the report
ROWS = (
    ("numpy", "direct", "NumPy: x + 1.0 called directly"),
    ("arignote", "default", "arignote: f(x)"),
    ("arignote", "trust", "arignote: f(x), trust_input=True"),
    ("arignote", "vm", "arignote: the graph alone, f.vm()"),
    ("pytensor", "default", "PyTensor: f(x)  [default mode]"),
    ("pytensor", "trust", "PyTensor: f(x), trust_input=True  [default mode]"),
    ("pytensor", "py", "PyTensor: f(x)  [linker=py]"),
    ("pytensor", "py_trust", "PyTensor: f(x), trust_input=True  [linker=py]"),
    ("jax", "jit", "JAX: jit(x + 1)(x).block_until_ready()"),
)


def per_call(fn: Callable[[], Any], number: int, repeats: int) -> float:
    """Best seconds per call over ``repeats`` loops of ``number`` calls."""
    fn()  # warm up (first-call compilation, caches)
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - t0) / number)
    return best


def make_input(case: str) -> Any:
    import numpy as np

    return np.arange(1.0, 1.0 + int(np.prod(CASES[case]))).reshape(CASES[case])


# --- what each library measures -------------------------------------------------------


def numpy_calls(case: str) -> dict[str, tuple[Callable[[], Any], Any]]:
    a = make_input(case)
    return {"direct": (lambda: a + 1.0, a + 1.0)}


def arignote_calls(case: str) -> dict[str, tuple[Callable[[], Any], Any]]:
    ensure_repo_importable()
    import arignote
    import arignote.tensor as pt

    a = make_input(case)
    x = pt.tensor("x", dtype="float64", shape=(None,) * a.ndim)
    f = arignote.function([x], x + 1)
    ft = arignote.function([x], x + 1, trust_input=True)
    ft(a)  # the input cell now holds a: f.vm() alone recomputes from it
    return {
        "default": (lambda: f(a), f(a)),
        "trust": (lambda: ft(a), ft(a)),
        "vm": (ft.vm, ft(a)),
    }


def pytensor_calls(case: str) -> dict[str, tuple[Callable[[], Any], Any]]:
    import pytensor
    import pytensor.tensor as pt
    from pytensor.compile.mode import Mode

    a = make_input(case)
    x = pt.tensor("x", dtype="float64", shape=(None,) * a.ndim)
    calls = {}
    for variant, mode, trust in (
        ("default", None, False),
        ("trust", None, True),
        ("py", Mode(linker="py"), False),
        ("py_trust", Mode(linker="py"), True),
    ):
        f = pytensor.function([x], x + 1, mode=mode, trust_input=trust)
        calls[variant] = (lambda f=f: f(a), f(a))
    return calls


def jax_calls(case: str) -> dict[str, tuple[Callable[[], Any], Any]]:
    import jax

    jax.config.update("jax_platforms", "cpu")
    a = make_input(case)
    f = jax.jit(lambda x: x + 1)
    return {"jit": (lambda: f(a).block_until_ready(), f(a))}


CALLS = {"numpy": numpy_calls, "arignote": arignote_calls, "pytensor": pytensor_calls, "jax": jax_calls}


def version_of(lib: str) -> str:
    if lib == "arignote":
        ensure_repo_importable()
    module = __import__(lib)
    return getattr(module, "__version__", "?")


class Runner:
    """Measures some libraries in this process, one case at a time."""

    def __init__(self, libs: Sequence[str], args: argparse.Namespace):
        self.libs = list(libs)
        self.args = args
        self.calls: dict[tuple[str, str], dict] = {}
        self.meta = {lib: version_of(lib) for lib in self.libs}

    def measure(self, case: str) -> list[dict]:
        import numpy as np

        expected = make_input(case) + 1.0
        records = []
        for lib in self.libs:
            if (lib, case) not in self.calls:
                try:
                    self.calls[lib, case] = CALLS[lib](case)
                except Exception as err:  # a library failing is a result, not a crash
                    self.calls[lib, case] = {"error": f"{type(err).__name__}: {err}"}
            calls = self.calls[lib, case]
            if "error" in calls:
                records.append({"lib": lib, "case": case, "variant": "*", "error": calls["error"]})
                continue
            for variant, (fn, result) in calls.items():
                rec = {"lib": lib, "case": case, "variant": variant}
                if not np.allclose(np.asarray(result), expected):
                    rec["error"] = f"wrong result {np.asarray(result)!r}"
                else:
                    rec["seconds"] = per_call(fn, self.args.number, self.args.repeats)
                records.append(rec)
        return records

    def close(self) -> None:
        pass


class InSubprocess:
    """The peer libraries in another interpreter (``--serve``), one case per request."""

    def __init__(self, python: str, libs: Sequence[str], args: argparse.Namespace):
        script = os.path.abspath(__file__)
        opts = ["--number", str(args.number), "--repeats", str(args.repeats)]
        self.peer = PeerProcess(python, script, ["--serve", ",".join(libs), *opts])
        if self.peer.meta is None:
            tail = " | ".join(self.peer.stderr_tail.strip().splitlines()[-3:])
            self.peer.close()
            raise RuntimeError(f"{python} could not start" + (f": {tail}" if tail else ""))
        self.meta = self.peer.meta["versions"]
        self.libs = list(self.meta)

    def measure(self, case: str) -> list[dict]:
        return list(self.peer.request(case))

    def close(self) -> None:
        self.peer.close()


def serve(libs: Sequence[str], args: argparse.Namespace) -> int:
    """The peer's side of :class:`InSubprocess`: answer one case name per stdin line."""
    present = [lib for lib in libs if importable(lib)]
    runner = Runner(present, args)
    print(json.dumps({"meta": True, "versions": runner.meta, "python": sys.executable}), flush=True)
    for line in sys.stdin:
        case = line.strip()
        if case:
            for rec in runner.measure(case):
                print(json.dumps(rec), flush=True)
        print(json.dumps({"done": True}), flush=True)
    return 0


# --- report ---------------------------------------------------------------------------


def report(best: dict, versions: dict, where: dict, cases: Sequence[str]) -> str:
    out = []
    for lib in ("arignote", "pytensor", "jax", "numpy"):
        if lib in versions:
            out.append(f"{lib} {versions[lib]} ({where[lib]})")
        else:
            out.append(f"{lib}: {where.get(lib, 'not measured')}")
    for case in cases:
        shape = CASES[case]
        out.append("")
        out.append(f"x + 1, x of shape {shape} (float64): µs per call")
        numpy_s = best.get((case, "numpy", "direct"))
        rows = []
        for lib, variant, label in ROWS:
            rec = best.get((case, lib, variant))
            if rec is None and lib not in versions:
                continue
            if isinstance(rec, str):
                rows.append([label, rec[:60], "-", "-"])
                continue
            if rec is None:
                rows.append([label, "-", "-", "-"])
                continue
            ours = best.get((case, "arignote", "trust" if "trust" in variant else "default"))
            vs_ours = ours / rec if isinstance(ours, float) and lib not in ("arignote", "numpy") else None
            rows.append(
                [label, fmt_us(rec * 1e6), fmt_ratio(rec / numpy_s) if numpy_s else "-", fmt_ratio(vs_ours)]
            )
        headers = ["", "µs/call", "vs NumPy", "arignote / this"]
        out.append(table(headers, rows, right=[False, True, True, True]))
    out.append("")
    out.append(
        "vs NumPy: time / NumPy's time. arignote / this: arignote's time (same trust_input) / this "
        "row's time, above 1 when this row is faster."
    )
    return "\n".join(out)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--peer-python", help="interpreter with pytensor (and jax) installed")
    p.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    p.add_argument("--number", type=int, default=2000, help="calls per timed loop")
    p.add_argument("--repeats", type=int, default=5, help="timed loops per round")
    p.add_argument("--rounds", type=int, default=3, help="rounds, taking turns between processes")
    p.add_argument("--json", help="write every record and the environment to this file")
    p.add_argument("--serve", help=argparse.SUPPRESS)
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.serve:
        return serve(args.serve.split(","), args)
    peers = ["pytensor", "jax"]
    here = ["numpy", "arignote"] + [lib for lib in peers if importable(lib)]
    runners: list[Runner | InSubprocess] = [Runner(here, args)]
    where = dict.fromkeys(here, "in process")
    versions = dict(runners[0].meta)
    missing = [lib for lib in peers if lib not in here]
    if missing and args.peer_python:
        try:
            sub = InSubprocess(args.peer_python, missing, args)
        except RuntimeError as err:
            for lib in missing:
                where[lib] = str(err)
        else:
            runners.append(sub)
            versions.update(sub.meta)
            for lib in missing:
                where[lib] = f"subprocess: {args.peer_python}" if lib in sub.libs else "not installed there"
    else:
        for lib in missing:
            where[lib] = f"not installed in {sys.executable} (pass --peer-python PATH)"

    records: list[dict] = []
    best: dict = {}
    try:
        for _ in range(args.rounds):
            for case in args.cases:
                for runner in runners:
                    for rec in runner.measure(case):
                        records.append(rec)
                        key = (case, rec["lib"], rec["variant"])
                        if "error" in rec:
                            best.setdefault(key, rec["error"])
                        elif not isinstance(best.get(key), float) or rec["seconds"] < best[key]:
                            best[key] = rec["seconds"]
    finally:
        for runner in runners:
            runner.close()
    env = environment()
    print(f"python {env['python']} on {env['platform']}, {env['cpu_count']} CPUs, load {env['loadavg']}")
    print(report(best, versions, where, args.cases))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"env": env, "versions": versions, "where": where, "records": records}, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
