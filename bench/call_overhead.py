"""Per-call overhead of a compiled function on tiny inputs.

The work is nothing, so the time per call is what calling costs (checking the inputs,
running the graph's glue, returning the output). The cases (``--cases``):

* ``scalar``, ``vector3``: ``x + 1`` on a 0-d array and on a 3-element vector;
* ``chain100``: ``y = tanh(y * 0.9)`` 50 times on a 3-element vector (100 elementwise
  nodes): the cost per node of a graph's glue;
* ``mlp``: ``tanh(x @ W + b).sum()`` with ``x`` of shape (4, 8), ``W`` (8, 8) and ``b``
  (8,): a dot, a broadcast add, tanh and a reduction, a small model's forward pass.

Measured in the same run:

* NumPy: the same expression called directly (the floor);
* arignote: ``function(inputs, expr)`` called with and without ``trust_input=True``, and
  its graph runner alone (``f.vm()``, the inputs already in place) to split the cost;
* PyTensor 3 (the peer): the same function in its default mode (Numba) and with its Python
  linker (``Mode(linker="py")``), with and without ``trust_input=True``;
* JAX: ``jax.jit`` of the expression called on the NumPy inputs, with ``block_until_ready``.

For arignote and PyTensor the table also gives the number of Apply nodes in the compiled
graph and the time per node (both fuse elementwise chains into one node).
PyTensor and JAX run in this process when importable, otherwise in the interpreter given
by ``--peer-python`` (which runs this script with ``--serve``), taking turns with the
in-process measurements so a change in load hits all alike. Each number is the best of
``--rounds`` rounds, each round the best of ``--repeats`` loops of ``--number`` calls (fewer
for a slow call: a loop lasts about 0.05 s at most).
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


def _chain(m: Any, x: Any) -> Any:
    for _ in range(50):
        x = m.tanh(x * 0.9)
    return x


# name: (title, input names and shapes, the expression on a module m: numpy, arignote.tensor,
# pytensor.tensor or jax.numpy)
CASES: dict[str, tuple[str, dict[str, tuple[int, ...]], Callable[..., Any]]] = {
    "scalar": ("x + 1, x of shape ()", {"x": ()}, lambda m, x: x + 1),
    "vector3": ("x + 1, x of shape (3,)", {"x": (3,)}, lambda m, x: x + 1),
    "chain100": ("y = tanh(y * 0.9), 50 times, x of shape (3,)", {"x": (3,)}, _chain),
    "mlp": (
        "tanh(x @ W + b).sum(), x (4, 8), W (8, 8), b (8,)",
        {"x": (4, 8), "W": (8, 8), "b": (8,)},
        lambda m, x, W, b: m.tanh(m.dot(x, W) + b).sum(),
    ),
}


LOOP_SECONDS = 0.05

# (lib, variant, label): the order of the report
ROWS = (
    ("numpy", "direct", "NumPy: the expression called directly"),
    ("arignote", "default", "arignote: f(*inputs)"),
    ("arignote", "trust", "arignote: f(*inputs), trust_input=True"),
    ("arignote", "vm", "arignote: the graph alone, f.vm()"),
    ("pytensor", "default", "PyTensor: f(*inputs)  [default mode]"),
    ("pytensor", "trust", "PyTensor: f(*inputs), trust_input=True  [default mode]"),
    ("pytensor", "py", "PyTensor: f(*inputs)  [linker=py]"),
    ("pytensor", "py_trust", "PyTensor: f(*inputs), trust_input=True  [linker=py]"),
    ("jax", "jit", "JAX: jit(expr)(*inputs).block_until_ready()"),
)


def per_call(fn: Callable[[], Any], number: int, repeats: int) -> float:
    """Best seconds per call over ``repeats`` loops of ``number`` calls (fewer where a call
    is slow: a loop lasts about ``LOOP_SECONDS`` at most)."""
    fn()  # warm up (first-call compilation, caches)
    t0 = time.perf_counter()
    fn()
    number = max(1, min(number, int(LOOP_SECONDS / max(time.perf_counter() - t0, 1e-9))))
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - t0) / number)
    return best


def make_inputs(case: str) -> list[Any]:
    import numpy as np

    rng = np.random.default_rng(0)
    out = []
    for shape in CASES[case][1].values():
        size = int(np.prod(shape))
        out.append(np.arange(1.0, 1.0 + size).reshape(shape) if size <= 3 else rng.standard_normal(shape))
    return out


def expected(case: str) -> Any:
    import numpy as np

    return CASES[case][2](np, *make_inputs(case))


# --- what each library measures -------------------------------------------------------
# Each returns {variant: (zero-argument call, its result, Apply nodes in the compiled graph)}.


def numpy_calls(case: str) -> dict[str, tuple[Callable[[], Any], Any, int | None]]:
    import numpy as np

    xs = make_inputs(case)
    expr = CASES[case][2]
    if case in ("scalar", "vector3"):  # the floor, without a wrapper's call (and 1.0: the
        (a,) = xs  # graphs cast their 1 at compile time, NumPy would on every call)
        return {"direct": (lambda: a + 1.0, a + 1.0, None)}
    return {"direct": (lambda: expr(np, *xs), expr(np, *xs), None)}


def _symbolic_inputs(pt: Any, case: str) -> list[Any]:
    return [
        pt.tensor(name, dtype="float64", shape=(None,) * len(shape)) for name, shape in CASES[case][1].items()
    ]


def arignote_calls(case: str) -> dict[str, tuple[Callable[[], Any], Any, int | None]]:
    ensure_repo_importable()
    import arignote
    import arignote.tensor as pt

    xs = make_inputs(case)
    ins = _symbolic_inputs(pt, case)
    out = CASES[case][2](pt, *ins)
    f = arignote.function(ins, out)
    ft = arignote.function(ins, out, trust_input=True)
    n = len(f.maker.fgraph.apply_nodes)
    ft(*xs)  # the input cells now hold xs: f.vm() alone recomputes from them
    return {
        "default": (lambda: f(*xs), f(*xs), n),
        "trust": (lambda: ft(*xs), ft(*xs), n),
        "vm": (ft.vm, ft(*xs), n),
    }


def pytensor_calls(case: str) -> dict[str, tuple[Callable[[], Any], Any, int | None]]:
    import pytensor
    import pytensor.tensor as pt
    from pytensor.compile.mode import Mode

    xs = make_inputs(case)
    ins = _symbolic_inputs(pt, case)
    out = CASES[case][2](pt, *ins)
    calls = {}
    for variant, mode, trust in (
        ("default", None, False),
        ("trust", None, True),
        ("py", Mode(linker="py"), False),
        ("py_trust", Mode(linker="py"), True),
    ):
        f = pytensor.function(ins, out, mode=mode, trust_input=trust)
        calls[variant] = (lambda f=f: f(*xs), f(*xs), len(f.maker.fgraph.apply_nodes))
    return calls


def jax_calls(case: str) -> dict[str, tuple[Callable[[], Any], Any, int | None]]:
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_platforms", "cpu")
    xs = make_inputs(case)
    expr = CASES[case][2]
    f = jax.jit(lambda *args: expr(jnp, *args))
    return {"jit": (lambda: f(*xs).block_until_ready(), f(*xs), None)}


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

        want = expected(case)
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
            for variant, (fn, result, nodes) in calls.items():
                rec = {"lib": lib, "case": case, "variant": variant, "nodes": nodes}
                if not np.allclose(np.asarray(result), want):
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


def report(best: dict, nodes: dict, versions: dict, where: dict, cases: Sequence[str]) -> str:
    out = []
    for lib in ("arignote", "pytensor", "jax", "numpy"):
        if lib in versions:
            out.append(f"{lib} {versions[lib]} ({where[lib]})")
        else:
            out.append(f"{lib}: {where.get(lib, 'not measured')}")
    for case in cases:
        out.append("")
        out.append(f"{CASES[case][0]} (float64): µs per call")
        numpy_s = best.get((case, "numpy", "direct"))
        rows = []
        for lib, variant, label in ROWS:
            rec = best.get((case, lib, variant))
            if rec is None and lib not in versions:
                continue
            if isinstance(rec, str):
                rows.append([label, rec[:60], "-", "-", "-", "-"])
                continue
            if rec is None:
                rows.append([label, "-", "-", "-", "-", "-"])
                continue
            ours = best.get((case, "arignote", "trust" if "trust" in variant else "default"))
            vs_ours = ours / rec if isinstance(ours, float) and lib not in ("arignote", "numpy") else None
            n = nodes.get((case, lib, variant))
            rows.append(
                [
                    label,
                    fmt_us(rec * 1e6),
                    fmt_ratio(rec / numpy_s) if numpy_s else "-",
                    fmt_ratio(vs_ours),
                    "-" if n is None else str(n),
                    fmt_us(rec * 1e6 / n) if n else "-",
                ]
            )
        headers = ["", "µs/call", "vs NumPy", "arignote / this", "nodes", "µs/node"]
        out.append(table(headers, rows, right=[False, True, True, True, True, True]))
    out.append("")
    out.append(
        "vs NumPy: time / NumPy's time. arignote / this: arignote's time (same trust_input) / this "
        "row's time, above 1 when this row is faster. nodes: Apply nodes in the compiled graph; "
        "µs/node: µs/call / nodes."
    )
    return "\n".join(out)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--peer-python", help="interpreter with pytensor (and jax) installed")
    p.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    p.add_argument("--number", type=int, default=2000, help="calls per timed loop (at most)")
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
    nodes: dict = {}
    try:
        for _ in range(args.rounds):
            for case in args.cases:
                for runner in runners:
                    for rec in runner.measure(case):
                        records.append(rec)
                        key = (case, rec["lib"], rec["variant"])
                        nodes[key] = rec.get("nodes")
                        if "error" in rec:
                            best.setdefault(key, rec["error"])
                        elif not isinstance(best.get(key), float) or rec["seconds"] < best[key]:
                            best[key] = rec["seconds"]
    finally:
        for runner in runners:
            runner.close()
    env = environment()
    print(f"python {env['python']} on {env['platform']}, {env['cpu_count']} CPUs, load {env['loadavg']}")
    print(report(best, nodes, versions, where, args.cases))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"env": env, "versions": versions, "where": where, "records": records}, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
