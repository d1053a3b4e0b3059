"""Cost of building graphs, wrapping them in a FunctionGraph, cloning and sorting them.

For graphs of a trivial Op (a deep chain ``op(op(...op(x)))`` and a balanced binary tree
of a 2-input op), at each size it times, per Apply node:

* ``build``: making the nodes with ``op(...)`` (``Op.__call__`` -> ``make_node`` -> ``Apply``);
* ``FunctionGraph(clone=True)`` (the default) and ``FunctionGraph(clone=False)``;
* ``fg.clone()`` (``check_integrity=True``, the default) and, to split that cost,
  ``fg.clone(check_integrity=False)``;
* ``fg.toposort()``.

The same is measured with PyTensor 3 (the peer), with the same Type and Op written against
``pytensor.graph``, and printed side by side with ``pytensor time / arignote time``.

Run ``python bench/graph_build.py --help`` for the options; bench/README.md says more.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

# bench/ is not a package: find _common next to this file however the script is started
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import (
    PeerProcess,
    TimeLimitExceeded,
    best_of,
    ensure_repo_importable,
    environment,
    extrapolate,
    fmt_ratio,
    fmt_seconds,
    fmt_us,
    importable,
    table,
    timed,
)

LIBS = ("arignote", "pytensor")
SHAPES = ("chain", "tree")
DEFAULT_SIZES = (1_000, 10_000, 40_000, 100_000)

# (key, label); the order of the report
MEASURES = (
    ("build", "build nodes: op(...)"),
    ("fg_clone", "FunctionGraph(ins, outs)  [clone=True]"),
    ("fg_noclone", "FunctionGraph(ins, outs, clone=False)"),
    ("clone", "fg.clone()  [check_integrity=True]"),
    ("clone_nocheck", "fg.clone(check_integrity=False)"),
    ("toposort", "fg.toposort()"),
)

# Targets from the issue, checked against arignote's numbers.
TARGET_BUILD_US = 10.0  # µs per trivial-Op node; PyTensor 3: ~28 µs
TARGET_CLONE_40K_S = 0.5  # s for fg.clone() of a 40k-node graph; PyTensor 3: ~2.6 s
LINEAR_TOLERANCE = 1.5  # per-node cost at the largest size / at the smallest

# Distinct inputs under the tree's n + 1 leaves (--tree-inputs; 0: one input per leaf).
# Few inputs, as in most real graphs; each then has ~n/16 clients. PyTensor is quadratic
# either way: its check_integrity searches each client list ((node, i) in a list), and its
# FunctionGraph checks ``var not in self.inputs`` (a list) for every use of an input.
TREE_INPUTS = 16


def repeats_for(n: int) -> int:
    """Best of a few for small graphs; a single run is enough (and affordable) for big ones."""
    if n <= 2_000:
        return 5
    if n <= 20_000:
        return 3
    if n <= 50_000:
        return 2
    return 1


# --- the trivial Type and Ops, written once against either library -------------------


@dataclass
class Library:
    name: str
    version: str
    FunctionGraph: Any
    type_: Any  # an instance of the trivial Type
    unary: Any  # trivial 1-input Op instance
    binary: Any  # trivial 2-input Op instance


def define_trivial(Apply: Any, Op: Any, Type: Any) -> tuple[Any, Any, Any]:
    """The benchmark's Type and Ops, from one library's ``Apply``, ``Op`` and ``Type``."""

    class Anything(Type):
        def filter(self, data, strict=False, allow_downcast=None):
            return data

        def __eq__(self, other):
            return type(self) is type(other)

        def __hash__(self):
            return hash(type(self))

    class Unary(Op):
        __props__ = ()

        def make_node(self, x):
            return Apply(self, [x], [x.type()])

        def perform(self, node, inputs, output_storage):
            output_storage[0][0] = inputs[0]

    class Binary(Op):
        __props__ = ()

        def make_node(self, x, y):
            return Apply(self, [x, y], [x.type()])

        def perform(self, node, inputs, output_storage):
            output_storage[0][0] = inputs[0]

    return Anything(), Unary(), Binary()


def load_library(name: str) -> Library:
    if name == "arignote":
        ensure_repo_importable()
        import arignote as lib
        from arignote.graph.basic import Apply
        from arignote.graph.fg import FunctionGraph
        from arignote.graph.op import Op
        from arignote.graph.type import Type
    elif name == "pytensor":
        import pytensor as lib
        from pytensor.graph.basic import Apply
        from pytensor.graph.fg import FunctionGraph
        from pytensor.graph.op import Op
        from pytensor.graph.type import Type
    else:
        raise ValueError(f"unknown library {name!r}; expected one of {LIBS}")
    t, unary, binary = define_trivial(Apply, Op, Type)
    return Library(name, getattr(lib, "__version__", "?"), FunctionGraph, t, unary, binary)


# --- graph builders (each times only the op applications) ----------------------------


def build_chain(lib: Library, n: int, disable_gc: bool) -> tuple[float, tuple[list, Any]]:
    x = lib.type_("x")
    op = lib.unary

    def run() -> Any:
        v = x
        for _ in range(n):
            v = op(v)
        return v

    dt, out = timed(run, disable_gc)
    return dt, ([x], out)


def build_tree(lib: Library, n: int, disable_gc: bool) -> tuple[float, tuple[list, Any]]:
    """A balanced binary reduction over ``n + 1`` leaves: exactly ``n`` nodes, depth ~log2(n).

    The leaves cycle over ``TREE_INPUTS`` input Variables (all ``n + 1`` distinct with
    ``TREE_INPUTS = 0``). The inputs are made before the clock starts; only the ``n`` op
    applications count.
    """
    k = TREE_INPUTS if TREE_INPUTS > 0 else n + 1
    inputs = [lib.type_(f"x{i}") for i in range(min(k, n + 1))]
    leaves = [inputs[i % len(inputs)] for i in range(n + 1)]
    op = lib.binary

    def run() -> Any:
        level = leaves
        while len(level) > 1:
            nxt = [op(level[i], level[i + 1]) for i in range(0, len(level) - 1, 2)]
            if len(level) % 2:
                nxt.append(level[-1])
            level = nxt
        return level[0]

    dt, out = timed(run, disable_gc)
    return dt, (inputs, out)


BUILDERS: dict[str, Callable[[Library, int, bool], tuple[float, tuple[list, Any]]]] = {
    "chain": build_chain,
    "tree": build_tree,
}


# --- the measurements ----------------------------------------------------------------


def measure(
    lib: Library, shape: str, n: int, disable_gc: bool, history: dict, max_seconds: float
) -> list[dict]:
    """All measurements for one library, graph shape and size, as JSON-able records.

    ``history[(shape, key)]`` holds the ``(n, seconds)`` of smaller sizes; a measurement
    whose extrapolated time exceeds ``max_seconds`` is skipped (a peer that is quadratic
    somewhere would otherwise take minutes), and repeats stop once ``max_seconds`` are spent.
    """
    reps = repeats_for(n)
    records: list[dict] = []
    build = BUILDERS[shape]
    FunctionGraph = lib.FunctionGraph

    def record(key: str, seconds: float | None, error: str | None = None, repeats: int = 0) -> None:
        records.append(
            {
                "lib": lib.name,
                "measure": key,
                "shape": shape,
                "n": n,
                "seconds": seconds,
                "us_per_node": None if seconds is None else seconds / n * 1e6,
                "repeats": repeats,
                "error": error,
            }
        )

    def attempt(key: str, run: Callable[[], tuple[float, Any]]) -> Any:
        past = history.setdefault((shape, key), [])
        est = extrapolate(past, n)
        if est is not None and est > max_seconds:
            record(key, None, f"skipped (~{fmt_seconds(est)} est.)")
            return None
        try:
            dt, result, runs = best_of(run, reps, budget=max_seconds, limit=max_seconds * 1.5)
        except TimeLimitExceeded:
            past.append((n, max_seconds * 1.5))  # a lower bound, so bigger sizes are skipped
            record(key, None, f"timeout (>{max_seconds * 1.5:g} s)")
            return None
        except RecursionError:
            record(key, None, "RecursionError")
            return None
        except Exception as err:  # a peer failing is a result to report, not a crash
            record(key, None, type(err).__name__)
            return None
        past.append((n, dt))
        record(key, dt, None, runs)
        return result

    def with_graph() -> tuple[bool, Any]:
        # a function of its own so that the original graph is freed before cloning starts
        graph = attempt("build", lambda: build(lib, n, disable_gc))
        if graph is None:
            return False, None
        inputs, out = graph
        # Neither library changes the nodes a FunctionGraph(clone=False) is made from
        # (clients live in the FunctionGraph), so every repeat can use the same graph.
        attempt("fg_noclone", lambda: timed(lambda: FunctionGraph(inputs, [out], clone=False), disable_gc))
        return True, attempt("fg_clone", lambda: timed(lambda: FunctionGraph(inputs, [out]), disable_gc))

    built, fg = with_graph()
    if not built:
        for key, _ in MEASURES[1:]:
            record(key, None, "no graph")
        return records
    if fg is None:
        for key in ("clone", "clone_nocheck", "toposort"):
            record(key, None, "no FunctionGraph")
        return records
    attempt("clone", lambda: timed(fg.clone, disable_gc))
    attempt("clone_nocheck", lambda: timed(lambda: fg.clone(check_integrity=False), disable_gc))
    attempt("toposort", lambda: timed(fg.toposort, disable_gc))
    return records


class InProcess:
    """Measures one library in this process (keeps its history of sizes for the budget)."""

    where = "in process"

    def __init__(self, name: str, args: argparse.Namespace):
        self.name = name
        self.args = args
        self.lib = load_library(name)
        if name == "pytensor" and args.recursion_limit:
            sys.setrecursionlimit(args.recursion_limit)
        self.history: dict = {}
        self.meta = {
            "lib": name,
            "meta": True,
            "version": self.lib.version,
            "recursion_limit": sys.getrecursionlimit(),
        }
        self.note: str | None = None

    def measure(self, shape: str, n: int) -> list[dict]:
        return measure(self.lib, shape, n, self.args.disable_gc, self.history, self.args.max_seconds)

    def close(self) -> None:
        pass


class InSubprocess:
    """Measures a library in another interpreter (``--serve``), one (shape, n) at a time."""

    def __init__(self, name: str, python: str, args: argparse.Namespace):
        self.name = name
        self.where = f"subprocess: {python}"
        self.peer = PeerProcess(python, os.path.abspath(__file__), ["--serve", name, *_common_args(args)])
        if self.peer.meta is None:
            tail = " | ".join(self.peer.stderr_tail.strip().splitlines()[-3:])
            self.peer.close()
            raise RuntimeError(f"{python} could not measure {name}" + (f": {tail}" if tail else ""))
        self.meta = self.peer.meta
        self.note: str | None = None

    def measure(self, shape: str, n: int) -> list[dict]:
        recs = list(self.peer.request(f"{shape} {n}"))
        if not self.peer.alive and self.note is None:
            tail = " | ".join(self.peer.stderr_tail.strip().splitlines()[-3:])
            self.note = f"the peer process died during {shape} n={n:,}" + (f": {tail}" if tail else "")
            print(self.note, file=sys.stderr)
        return recs

    def close(self) -> None:
        self.peer.close()


def serve(name: str, args: argparse.Namespace) -> int:
    """The peer's side of :class:`InSubprocess`: answer ``shape n`` lines from stdin."""
    runner = InProcess(name, args)
    print(json.dumps(runner.meta), flush=True)
    for line in sys.stdin:
        parts = line.split()
        if len(parts) != 2:
            break
        for rec in runner.measure(parts[0], int(parts[1])):
            print(json.dumps(rec), flush=True)
        print(json.dumps({"done": True}), flush=True)
    return 0


# --- report ------------------------------------------------------------------------------


def _key(rec: dict) -> tuple:
    return (rec["lib"], rec["measure"], rec["shape"], rec["n"])


def _cell(rec: dict | None, what: str) -> str:
    if rec is None:
        return "-"
    if rec.get("error"):
        return rec["error"] if what == "s" else "-"
    return fmt_seconds(rec["seconds"]) if what == "s" else fmt_us(rec["us_per_node"])


def report(results: dict, meta: dict, sizes: Sequence[int], shapes: Sequence[str]) -> str:
    peer = meta.get("peer", {})
    out: list[str] = []
    out.append("Graph building, FunctionGraph, clone and toposort: trivial Op, cost per Apply node")
    out.append("=" * 84)
    env = meta["env"]
    load, load_end = env.get("loadavg"), meta.get("loadavg_end")
    load_txt = f", load average {load[0]:.1f} at start" if load else ""
    load_txt += f", {load_end[0]:.1f} at end" if load_end else ""
    out.append(f"python {env['python']} on {env['platform']}, {env['cpu_count']} CPUs{load_txt}")
    out.append(f"arignote {meta['libs'].get('arignote', {}).get('version', '?')} (in process)")
    if peer.get("status") == "measured":
        where = peer.get("where", "?")
        out.append(
            f"pytensor {peer.get('version', '?')} ({where}); recursion limit in effect "
            f"{peer.get('recursion_limit')} ("
            + (
                "set by --recursion-limit)"
                if meta.get("recursion_limit_arg")
                else "as left by `import pytensor`; this script does not change it)"
            )
        )
        if peer.get("note"):
            out.append(f"  note: {peer['note']}")
    else:
        out.append(f"pytensor: {peer.get('status', 'not measured')}")
    out.append(
        "timing: time.perf_counter, best of "
        + ", ".join(f"{repeats_for(n)} at {n:,}" for n in sizes)
        + "; cyclic GC "
        + ("disabled while timing" if meta["disable_gc"] else "enabled (collected before each run)")
    )
    out.append(
        f"budget (--max-seconds {meta['max_seconds']:g}): repeats stop after that long; a measurement "
        "extrapolated from the smaller sizes past it is skipped; one over 1.5x is stopped (timeout)"
    )
    k = meta.get("tree_inputs", TREE_INPUTS)
    leaves = f"over {k} inputs" if k > 0 else "each a distinct input"
    out.append(
        f"graphs: chain = op(op(...op(x))), 1 input; tree = balanced binary reduction of n+1 leaves {leaves}"
    )
    out.append("n = Apply nodes (Output marker nodes not counted); ratio = pytensor time / arignote time")
    out.append("the libraries take turns, one (graph, size) at a time, so load changes hit both alike")
    out.append("")

    headers = ["shape", "n", "arignote", "µs/node", "pytensor", "µs/node", "ratio pt/ag"]
    right = [False, True, True, True, True, True, True]
    for key, label in MEASURES:
        out.append(label)
        rows = []
        for shape in shapes:
            for n in sizes:
                ag = results.get(("arignote", key, shape, n))
                pt = results.get(("pytensor", key, shape, n))
                ratio = None
                if ag and pt and ag.get("seconds") and pt.get("seconds"):
                    ratio = pt["seconds"] / ag["seconds"]
                rows.append(
                    [
                        shape,
                        f"{n:,}",
                        _cell(ag, "s"),
                        _cell(ag, "us"),
                        _cell(pt, "s"),
                        _cell(pt, "us"),
                        fmt_ratio(ratio),
                    ]
                )
        out.append(table(headers, rows, right))
        out.append("")

    out.extend(_growth_section(results, sizes, shapes))
    out.extend(_targets_section(results, sizes, shapes))
    return "\n".join(out)


def _growth_section(results: dict, sizes: Sequence[int], shapes: Sequence[str]) -> list[str]:
    if len(sizes) < 2:
        return []
    lo, hi = sizes[0], sizes[-1]
    out = [f"Growth: µs/node at each size; growth = µs/node at {hi:,} / at {lo:,} (1.0 = linear)"]
    headers = ["measure", "shape", "lib", *(f"{n:,}" for n in sizes), "growth"]
    right = [False, False, False, *([True] * len(sizes)), True]
    rows = []
    for key, _ in MEASURES:
        for shape in shapes:
            for lib in LIBS:
                recs = [results.get((lib, key, shape, n)) for n in sizes]
                if all(r is None for r in recs):
                    continue
                growth = _growth(recs[0], recs[-1])
                rows.append([key, shape, lib, *(_cell(r, "us") for r in recs), fmt_ratio(growth)])
    out.append(table(headers, rows, right))
    out.append("")
    return out


def _growth(first: dict | None, last: dict | None) -> float | None:
    if first and last and first.get("us_per_node") and last.get("us_per_node"):
        return last["us_per_node"] / first["us_per_node"]
    return None


def _targets_section(results: dict, sizes: Sequence[int], shapes: Sequence[str]) -> list[str]:
    def verdict(ok: bool | None) -> str:
        return "n/a " if ok is None else ("PASS" if ok else "MISS")

    out = ["Targets (arignote)"]
    # 1. build
    for shape in shapes:
        recs = [results.get(("arignote", "build", shape, n)) for n in sizes]
        per = [r["us_per_node"] for r in recs if r and r.get("us_per_node")]
        worst = max(per) if per else None
        pt = [results.get(("pytensor", "build", shape, n)) for n in sizes]
        pt_per = [r["us_per_node"] for r in pt if r and r.get("us_per_node")]
        pt_txt = f"; pytensor here {min(pt_per):.1f}-{max(pt_per):.1f}" if pt_per else ""
        out.append(
            f"  [{verdict(None if worst is None else worst <= TARGET_BUILD_US)}] build a trivial-Op node "
            f"<= {TARGET_BUILD_US:g} µs (PyTensor 3: ~28 µs): {shape} worst "
            f"{'-' if worst is None else f'{worst:.2f}'} µs/node over {len(per)} sizes{pt_txt}"
        )
    # 2. clone at 40k
    for shape in shapes:
        rec = results.get(("arignote", "clone", shape, 40_000))
        pt = results.get(("pytensor", "clone", shape, 40_000))
        s = rec.get("seconds") if rec else None
        pt_txt = f"; pytensor here {_cell(pt, 's')}" if pt else ""
        if rec is None:
            txt = "not measured (add 40000 to --sizes)"
        else:
            txt = _cell(rec, "s")
        out.append(
            f"  [{verdict(None if s is None else s < TARGET_CLONE_40K_S)}] fg.clone() of a 40k-node "
            f"FunctionGraph < {TARGET_CLONE_40K_S:g} s (PyTensor 3: ~2.6 s): {shape} {txt}{pt_txt}"
        )
    # 3. linear growth
    if len(sizes) >= 2:
        lo, hi = sizes[0], sizes[-1]
        worst_key, worst = None, None
        for key, _ in MEASURES:
            for shape in shapes:
                g = _growth(
                    results.get(("arignote", key, shape, lo)), results.get(("arignote", key, shape, hi))
                )
                if g is not None and (worst is None or g > worst):
                    worst_key, worst = f"{key}/{shape}", g
        ok = None if worst is None else worst <= LINEAR_TOLERANCE
        out.append(
            f"  [{verdict(ok)}] roughly linear growth (per-node cost at {hi:,} <= {LINEAR_TOLERANCE:g}x "
            f"that at {lo:,}, every measure): worst {fmt_ratio(worst)} ({worst_key})"
        )
    return out


# --- driver ------------------------------------------------------------------------------


def _progress(rec: dict) -> None:
    if rec.get("meta") or rec["measure"] != "build":
        return
    what = rec["error"] or f"built at {rec['us_per_node']:.2f} µs/node"
    print(f"  {rec['lib']} {rec['shape']} n={rec['n']:,}: {what}", file=sys.stderr, flush=True)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument(
        "--sizes",
        default=",".join(str(n) for n in DEFAULT_SIZES),
        help="comma-separated node counts (default: %(default)s; 40000 is the clone target's size)",
    )
    p.add_argument("--shapes", default=",".join(SHAPES), help="chain,tree (default: both)")
    p.add_argument("--only", choices=LIBS, help="measure one library only")
    p.add_argument(
        "--peer-python",
        metavar="PATH",
        help="interpreter that has pytensor installed, used when this one cannot import it",
    )
    p.add_argument("--json", metavar="PATH", help="also write every record (and the environment) here")
    p.add_argument(
        "--jsonl",
        action="store_true",
        help="print one JSON record per line on stdout instead of the table",
    )
    p.add_argument(
        "--serve",
        choices=LIBS,
        help="internal: measure this library for a parent process, one 'shape n' line of stdin at a time",
    )
    p.add_argument(
        "--recursion-limit",
        type=int,
        default=None,
        help="sys.setrecursionlimit for the PyTensor measurements (default: leave it as it is)",
    )
    p.add_argument("--disable-gc", action="store_true", help="turn the cyclic GC off inside timed regions")
    p.add_argument(
        "--tree-inputs",
        type=int,
        default=TREE_INPUTS,
        help="distinct inputs under the tree's n+1 leaves; 0: every leaf its own input "
        "(default: %(default)s)",
    )
    p.add_argument(
        "--max-seconds",
        type=float,
        default=15.0,
        help="skip a measurement whose time, extrapolated from the smaller sizes, exceeds this; "
        "stop repeating once this is spent (default: %(default)s)",
    )
    p.add_argument(
        "--profile",
        type=int,
        metavar="N",
        help="instead of the benchmark, cProfile arignote's build, FunctionGraph and clone at N nodes",
    )
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    args = p.parse_args(argv)
    args.sizes = sorted({int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()})
    args.shapes = [s for s in args.shapes.split(",") if s.strip()]
    for s in args.shapes:
        if s not in SHAPES:
            p.error(f"unknown shape {s!r}; expected {SHAPES}")
    return args


def _common_args(args: argparse.Namespace) -> list[str]:
    """The options a peer process needs to measure exactly what this one does."""
    out = ["--max-seconds", str(args.max_seconds), "--tree-inputs", str(args.tree_inputs)]
    if args.recursion_limit:
        out += ["--recursion-limit", str(args.recursion_limit)]
    if args.disable_gc:
        out.append("--disable-gc")
    return out


def make_peer(args: argparse.Namespace) -> tuple[InProcess | InSubprocess | None, dict]:
    """PyTensor in process if importable, else through ``--peer-python``, else nothing."""
    if importable("pytensor"):
        try:
            return InProcess("pytensor", args), {"status": "measured"}
        except Exception as err:
            return None, {"status": f"import failed here: {type(err).__name__}: {err}"}
    if args.peer_python:
        if not os.path.exists(args.peer_python):
            return None, {"status": f"--peer-python {args.peer_python} does not exist"}
        try:
            return InSubprocess("pytensor", args.peer_python, args), {"status": "measured"}
        except RuntimeError as err:
            return None, {"status": str(err)}
    status = f"not installed in {sys.executable} (pass --peer-python PATH to use another interpreter)"
    return None, {"status": status}


def main(argv: Sequence[str] | None = None) -> int:
    global TREE_INPUTS
    args = parse_args(argv)
    TREE_INPUTS = args.tree_inputs
    if args.serve:
        return serve(args.serve, args)
    if args.profile:
        for shape in args.shapes:
            print(profile_arignote(args.profile, shape, top=20))
        return 0
    records: list[dict] = []
    meta: dict = {
        "env": environment(),
        "disable_gc": args.disable_gc,
        "tree_inputs": args.tree_inputs,
        "recursion_limit_arg": args.recursion_limit,
        "max_seconds": args.max_seconds,
        "libs": {},
        "peer": {},
    }

    def emit(rec: dict) -> None:
        if args.jsonl:
            print(json.dumps(rec), flush=True)
        if rec.get("meta"):
            meta["libs"][rec["lib"]] = {k: v for k, v in rec.items() if k not in ("lib", "meta")}
            return
        records.append(rec)
        if not args.quiet:
            _progress(rec)

    runners: list[InProcess | InSubprocess] = []
    if args.only != "pytensor":
        runners.append(InProcess("arignote", args))
    if args.only != "arignote":
        peer, meta["peer"] = make_peer(args)
        if peer is None:
            print(f"pytensor: {meta['peer']['status']}; measuring arignote alone", file=sys.stderr)
        else:
            runners.append(peer)
            meta["peer"]["where"] = peer.where
    for runner in runners:
        emit(runner.meta)
    # Take turns, size by size, so that a change in the machine's load hits both libraries.
    try:
        for shape in args.shapes:
            for n in args.sizes:
                for runner in runners:
                    for rec in runner.measure(shape, n):
                        emit(rec)
    finally:
        for runner in runners:
            runner.close()
    for runner in runners:
        if runner.note:
            meta["peer"]["note"] = runner.note
    if "pytensor" in meta["libs"]:
        meta["peer"].update(meta["libs"]["pytensor"])
    meta["loadavg_end"] = os.getloadavg() if hasattr(os, "getloadavg") else None

    if args.json:
        with open(args.json, "w") as f:
            json.dump({"meta": meta, "records": records}, f, indent=1)
    if not args.jsonl:
        results = {_key(r): r for r in records}
        print(report(results, meta, args.sizes, args.shapes))
    return 0


def profile_arignote(n: int, shape: str, top: int) -> str:
    """cProfile of arignote's build, FunctionGraph(clone=True) and fg.clone(), by tottime."""
    import cProfile
    import io
    import pstats

    lib = load_library("arignote")
    build = BUILDERS[shape]
    out: list[str] = []
    state: dict = {}

    def step_build() -> None:
        state["graph"] = build(lib, n, False)[1]

    def step_fg() -> None:
        inputs, o = state.pop("graph")
        state["fg"] = lib.FunctionGraph(inputs, [o])

    def step_clone() -> None:
        state["fg"].clone()

    steps = (("build", step_build), ("FunctionGraph(clone=True)", step_fg), ("fg.clone()", step_clone))
    for label, step in steps:
        prof = cProfile.Profile()
        prof.runcall(step)
        buf = io.StringIO()
        stats = pstats.Stats(prof, stream=buf)
        stats.sort_stats("tottime").print_stats(top)
        out.append(f"=== arignote {label}: {shape}, n={n:,} (cProfile, by tottime) ===")
        text = buf.getvalue()
        out.append(text[text.find("   ncalls") :].rstrip() if "   ncalls" in text else text)
        out.append(f"total: {stats.total_tt:.3f} s (under cProfile)\n")  # type: ignore[attr-defined]
    return "\n".join(out)


if __name__ == "__main__":
    sys.exit(main())
