"""Draw the benchmark results as one picture: each peer's time over arignote's, per workload.

Run from the repository root, after the benchmarks wrote their ``--json`` files::

    python bench/plot.py                      # bench/last_run/*.json -> bench/last_run/summary.svg
    python bench/plot.py a.json b.json --out picture.png

Needs matplotlib (``pip install -e ".[plot]"``). Reads the JSON written by ``call_overhead.py``,
``grad_run.py``, ``scan.py`` and ``backend.py`` (each file's kind is recognised by its
contents; other files are skipped with a note). For every workload it draws one bar per peer
(NumPy, PyTensor 3, JAX) from 1 to that peer's call time divided by arignote's, on a
logarithmic axis: a bar to the right of 1 means arignote's call is faster, to the left
slower. arignote's own time is written beside each workload's name. ``--table`` prints the
same ratios as text instead of drawing.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "last_run"
PEERS = ("numpy", "pytensor", "jax")
LABELS = {"numpy": "NumPy", "pytensor": "PyTensor 3 (default mode)", "jax": "JAX (jit)"}
COLORS = {"numpy": "#4c72b0", "pytensor": "#dd8452", "jax": "#55a868"}


@dataclass
class Workload:
    """One row of the picture: call seconds per library (``arignote`` and the peers present)."""

    group: str
    name: str
    seconds: dict[str, float] = field(default_factory=dict)

    def ratio(self, peer: str) -> float | None:
        ours, theirs = self.seconds.get("arignote"), self.seconds.get(peer)
        if not ours or not theirs:
            return None
        return theirs / ours


def _keep_best(seconds: dict[str, float], lib: str, value: Any) -> None:
    if isinstance(value, int | float) and value > 0 and math.isfinite(value):
        seconds[lib] = min(value, seconds.get(lib, math.inf))


def _rows(group: str, named: dict[str, dict[str, float]]) -> list[Workload]:
    return [Workload(group, name, secs) for name, secs in named.items() if "arignote" in secs]


def from_call_overhead(data: dict) -> list[Workload]:
    """``call_overhead.py --json``: the time of one call on tiny inputs."""
    pick = {("numpy", "direct"), ("arignote", "default"), ("pytensor", "default"), ("jax", "jit")}
    named: dict[str, dict[str, float]] = {}
    for rec in data["records"]:
        if (rec.get("lib"), rec.get("variant")) in pick:
            _keep_best(named.setdefault(rec["case"], {}), rec["lib"], rec.get("seconds"))
    return _rows("call overhead (tiny inputs)", named)


def from_grad_run(data: dict) -> list[Workload]:
    """``grad_run.py --json``: a model's cost and gradient (NumPy's gradient written by hand)."""
    pick = {("numpy", "hand"), ("arignote", "default"), ("pytensor", "numba"), ("jax", "jit")}
    named: dict[str, dict[str, float]] = {}
    for rec in data["records"]:
        if rec.get("kind") == "time" and (rec.get("lib"), rec.get("variant")) in pick:
            _keep_best(named.setdefault(rec["model"], {}), rec["lib"], rec.get("call"))
    return _rows("cost + gradient", named)


def from_scan(data: dict) -> list[Workload]:
    """``scan.py --json``: loops written as scan (JAX: ``lax.scan``); no NumPy row."""
    named: dict[str, dict[str, float]] = {}
    settled = {r["case"] for r in data["records"] if r.get("lib") == "arignote (settled)" and "call" in r}
    for rec in data["records"]:
        lib = rec.get("lib")
        # arignote as a user runs it many times: the default mode once settled, where measured
        if lib == "arignote (settled)" or (lib == "arignote" and rec["case"] not in settled):
            _keep_best(named.setdefault(rec["case"], {}), "arignote", rec.get("call"))
        elif lib in ("pytensor", "jax"):
            _keep_best(named.setdefault(rec["case"], {}), lib, rec.get("call"))
    return _rows("scan loops", named)


def from_backend(data: dict) -> list[Workload]:
    """``backend.py --json``: compute-bound elementwise and reduction graphs (median ms)."""
    columns = {"numpy": "numpy", "pytensor (numba)": "pytensor", "jax": "jax"}
    named: dict[str, dict[str, float]] = {}
    for case, row in data["median_ms"].items():
        secs = named.setdefault(case, {})
        # arignote as a user runs it: FAST_RUN after its background kernels settled (tier 1
        # where Numba is not installed)
        ours = row.get("arignote FAST_RUN settled", row.get("arignote tier 1"))
        _keep_best(secs, "arignote", ours / 1e3 if ours else None)
        for column, lib in columns.items():
            if row.get(column):
                _keep_best(secs, lib, row[column] / 1e3)
    return _rows("compute-bound (1e6 values, 4000² matrices)", named)


def workloads_of(data: dict) -> list[Workload] | None:
    """The workloads of one benchmark's JSON output, or None for a file of another kind."""
    if "median_ms" in data:
        return from_backend(data)
    records = data.get("records")
    if not isinstance(records, list):
        return None
    if "where" in data:
        return from_call_overhead(data)
    if any(rec.get("kind") == "time" and "model" in rec for rec in records):
        return from_grad_run(data)
    if any("case" in rec and "call" in rec for rec in records):
        return from_scan(data)
    return None


def describe_runs(paths: Iterable[Path]) -> str:
    """A line saying where the numbers come from: CPU count and the load average seen."""
    cpus, loads = set(), []
    for path in paths:
        data = json.loads(Path(path).read_text())
        meta = data.get("meta", data)
        env = meta.get("env", meta) if isinstance(meta, dict) else {}
        if env.get("cpu_count"):
            cpus.add(env["cpu_count"])
        if env.get("loadavg"):
            loads.append(env["loadavg"][0])
    where = f"{'/'.join(str(c) for c in sorted(cpus))}-core CPU" if cpus else "this machine"
    load = f", load average {min(loads):.1f}-{max(loads):.1f}" if loads else ""
    return f"call times on {where}{load}; the number beside each workload is arignote's"


def load(paths: Iterable[Path]) -> list[Workload]:
    """Every workload of the given files, in the order: overhead, compute, gradient, scan."""
    order = ["call overhead", "compute-bound", "cost + gradient", "scan loops"]
    found: list[Workload] = []
    for path in paths:
        rows = workloads_of(json.loads(Path(path).read_text()))
        if rows is None:
            print(f"{path}: not the JSON of a benchmark plot.py knows; skipped", file=sys.stderr)
            continue
        found += rows

    def rank(w: Workload) -> int:
        return next((i for i, prefix in enumerate(order) if w.group.startswith(prefix)), len(order))

    return sorted(found, key=rank)  # stable: each file's own order inside a group


def _fmt_seconds(s: float) -> str:
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if s >= scale:
            return f"{s / scale:.3g} {unit}"
    return f"{s / 1e-9:.3g} ns"


def text_table(workloads: list[Workload]) -> str:
    lines = [f"{'workload':44s} {'arignote':>10s} " + " ".join(f"{p:>9s}" for p in PEERS)]
    for w in workloads:
        ratios = [w.ratio(p) for p in PEERS]
        cells = " ".join(f"{r:9.2f}" if r else f"{'-':>9s}" for r in ratios)
        lines.append(f"{w.group[:24] + ': ' + w.name:44s} {_fmt_seconds(w.seconds['arignote']):>10s} {cells}")
    return "\n".join(lines)


def draw(workloads: list[Workload], out: Path, title: str | None = None) -> None:
    """Writes the picture (the format from ``out``'s suffix: .svg, .png, .pdf)."""
    import matplotlib  # lazy: an optional dependency, needed only to draw

    matplotlib.use("Agg")
    matplotlib.rcParams["svg.fonttype"] = "none"  # text stays text: a small, searchable SVG
    import matplotlib.pyplot as plt

    if not workloads:
        raise ValueError("no workloads to draw: give plot.py the benchmarks' --json files")
    bar, gap = 0.26, 0.5
    ys, labels, y = [], [], 0.0
    group_starts: list[tuple[float, str]] = []
    for i, w in enumerate(workloads):
        if i == 0 or w.group != workloads[i - 1].group:
            y += gap if i else 0.0
            group_starts.append((y, w.group))
            y += 0.7
        ys.append(y)
        labels.append(f"{w.name}  ({_fmt_seconds(w.seconds['arignote'])})")
        y += 1.0
    fig, ax = plt.subplots(figsize=(8.0, 0.34 * y + 1.4))
    ratios = [r for w in workloads for p in PEERS if (r := w.ratio(p))]
    lo, hi = min([*ratios, 1.0]), max([*ratios, 1.0])
    for k, peer in enumerate(PEERS):
        offset = (k - 1) * bar
        pts = [(yy + offset, w.ratio(peer)) for yy, w in zip(ys, workloads) if w.ratio(peer)]
        if pts:
            ax.barh(
                [p[0] for p in pts],
                [p[1] - 1.0 for p in pts],
                left=1.0,
                height=bar * 0.92,
                color=COLORS[peer],
                label=LABELS[peer],
            )
    ax.axvline(1.0, color="black", linewidth=1.0)
    ax.set_xscale("log")
    ax.set_xlim(lo / 1.6, hi * 1.6)
    ax.set_yticks(ys, labels, fontsize=8.5)
    for gy, name in group_starts:
        ax.text(lo / 1.55, gy - 0.05, name, fontsize=9, fontweight="bold", va="center")
    ax.set_ylim(y - 0.4, -0.6)
    ax.set_xlabel("peer's call time ÷ arignote's  (right of 1: arignote is faster; log scale)")
    ax.grid(axis="x", which="both", color="#dddddd", linewidth=0.6)
    ax.set_axisbelow(True)
    ax.legend(loc="lower right", fontsize=8, framealpha=0.9)
    if title:
        ax.set_title(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument(
        "files", nargs="*", type=Path, help="benchmark JSON files (default: bench/last_run/*.json)"
    )
    p.add_argument("--out", type=Path, default=RESULTS / "summary.svg", help="the picture to write")
    p.add_argument("--title", default=None)
    p.add_argument("--table", action="store_true", help="print the ratios as text; draw nothing")
    a = p.parse_args(argv)
    files = a.files or sorted(RESULTS.glob("*.json"))
    workloads = load(files)
    if a.table:
        print(text_table(workloads))
        return
    draw(workloads, a.out, a.title if a.title is not None else describe_runs(files))
    print(f"wrote {a.out} ({len(workloads)} workloads from {len(files)} files)")


if __name__ == "__main__":
    main()
