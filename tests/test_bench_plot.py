"""``bench/plot.py`` reads each benchmark's ``--json`` output into per-workload ratios (the
picture itself needs matplotlib, an optional extra)."""

from __future__ import annotations

import importlib.util
import json
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("bench_plot", ROOT / "bench" / "plot.py")
plot = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = plot
_spec.loader.exec_module(plot)


def test_each_benchmark_format_is_read():
    call_overhead = {
        "env": {"cpu_count": 2, "loadavg": [1.0, 1.0, 1.0]},
        "where": {},
        "records": [
            {"lib": "numpy", "case": "scalar", "variant": "direct", "seconds": 1e-6},
            {"lib": "arignote", "case": "scalar", "variant": "default", "seconds": 2e-6},
            {"lib": "arignote", "case": "scalar", "variant": "default", "seconds": 4e-6},  # a worse round
            {"lib": "arignote", "case": "scalar", "variant": "trust", "seconds": 1e-7},  # not plotted
            {"lib": "pytensor", "case": "scalar", "variant": "default", "seconds": 6e-6},
            {"lib": "jax", "case": "scalar", "variant": "*", "error": "boom"},
        ],
    }
    (w,) = plot.workloads_of(call_overhead)
    assert w.seconds == {"numpy": 1e-6, "arignote": 2e-6, "pytensor": 6e-6}
    assert w.ratio("numpy") == pytest.approx(0.5) and w.ratio("pytensor") == pytest.approx(3.0)
    assert w.ratio("jax") is None

    grad_run = {
        "meta": {},
        "records": [
            {"kind": "compile", "model": "mlp", "lib": "arignote", "variant": "default", "first": 1.0},
            {"kind": "time", "model": "mlp", "lib": "arignote", "variant": "default", "call": 0.01},
            {"kind": "time", "model": "mlp", "lib": "pytensor", "variant": "py", "call": 1.0},  # not plotted
            {"kind": "time", "model": "mlp", "lib": "jax", "variant": "jit", "call": 0.02},
        ],
    }
    (w,) = plot.workloads_of(grad_run)
    assert w.group == "cost + gradient" and w.seconds == {"arignote": 0.01, "jax": 0.02}

    scan = {
        "meta": {},
        "records": [
            {"lib": "arignote", "case": "rnn", "call": 0.1},
            {"lib": "jax", "case": "rnn", "call": 0.05},
        ],
    }
    (w,) = plot.workloads_of(scan)
    assert w.ratio("jax") == pytest.approx(0.5)

    backend = {"meta": {}, "median_ms": {"ew": {"arignote tier 1": 4.0, "numpy": 2.0, "jax": 8.0}}}
    (w,) = plot.workloads_of(backend)
    assert w.seconds == {"arignote": 0.004, "numpy": 0.002, "jax": 0.008}

    assert plot.workloads_of({"something": "else"}) is None


def test_the_recorded_results_load(tmp_path):
    files = sorted((ROOT / "bench" / "last_run").glob("*.json"))
    assert len(files) == 4
    workloads = plot.load(files)
    groups = [w.group.split(" (")[0] for w in workloads]
    assert groups[0] == "call overhead" and groups[-1] == "scan loops"
    assert all(w.seconds["arignote"] > 0 for w in workloads)
    assert "cost + gradient" in plot.text_table(workloads)
    assert "2-core CPU" in plot.describe_runs(files)
    (tmp_path / "other.json").write_text(json.dumps({"x": 1}))
    assert len(plot.load([*files, tmp_path / "other.json"])) == len(workloads)


def test_the_picture_is_drawn(tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "summary.svg"
    plot.main([*map(str, sorted((ROOT / "bench" / "last_run").glob("*.json"))), "--out", str(out)])
    assert out.read_text().lstrip().startswith("<?xml")
