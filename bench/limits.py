"""How close the large workloads of ``backend.py`` come to this machine's limits.

A call on large arrays is bounded by memory bandwidth (a reduction reads its input once; an
elementwise map reads its inputs and writes its output) or by the floating-point rate (the
matrix products of the MLP step). This script measures both limits here, with NumPy and the
BLAS NumPy uses, on one thread and on all cores:

* **read**: ``np.add.reduce`` of a 256 MiB float64 array (bytes read per second);
* **read + write**: ``np.add(a, b, out=c)`` on three 128 MiB arrays (bytes read and written
  per second: the traffic of an elementwise map);
* **peak FLOP rate**: ``np.dot`` of 2048x2048 matrices, float64 and float32, with the BLAS's
  own threads (what a product can reach here; not the CPU's theoretical peak).

All cores run as a split over threads (NumPy releases the GIL in these loops). Then, for the
workloads of a ``backend.py --json`` run (default ``bench/last_run/backend.json``), it gives
the compulsory traffic (every input read once, every output written once) or the products'
FLOPs, the rate arignote's FAST_RUN call reached, and its fraction of the limit, beside the
best peer's. Run from the repository root::

    python bench/limits.py [--backend-json PATH] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import REPO_ROOT, environment

MIB = 1 << 20
M = 4000  # backend.py's matrices are M x M, its vectors 1e6
N = 1_000_000
F64, F32 = 8, 4

#: case -> (kind, amount, what): kind "read" (bytes read), "rw" (bytes read and written) or
#: "flop" (float32 FLOPs of the matrix products)
WORKLOADS: dict[str, tuple[str, float, str]] = {
    "ew": ("rw", 4 * N * F64, "3 vectors read, 1 written"),
    "arith": ("rw", 3 * N * F64, "2 vectors read, 1 written"),
    "sum1": ("read", M * M * F64, "the matrix read once"),
    "max0": ("read", M * M * F64, "the matrix read once"),
    "fsum1": ("read", M * M * F64, "the matrix read once"),
    "softmax1": ("rw", 2 * M * M * F64, "the matrix read once, written once"),
    # x @ W1 and its two gradients' products (dW1 = x.T @ dz; no dx), and the three of W2
    "mlp_step": ("flop", 2 * (2 * 256 * 784 * 512) + 3 * (2 * 256 * 512 * 10), "the 5 products"),
}


def _best(fn: Callable[[], object], reps: int) -> float:
    fn()
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def _split(
    pool: ThreadPoolExecutor | None, threads: int, n: int, piece: Callable[[int, int], object]
) -> None:
    if pool is None:
        piece(0, n)
        return
    bounds = [n * k // threads for k in range(threads + 1)]
    futures = [pool.submit(piece, bounds[k], bounds[k + 1]) for k in range(1, threads)]
    piece(bounds[0], bounds[1])
    for f in futures:
        f.result()


def _bandwidths(threads: int, reps: int) -> dict[str, float]:
    big = np.random.default_rng(0).random(256 * MIB // F64)
    a, b = big[: big.size // 2], big[big.size // 2 :]
    c = np.empty_like(a)
    rows = big.reshape(4096, -1)
    row_sums = np.empty(4096)

    def read(lo: int, hi: int) -> None:
        np.add.reduce(rows[lo:hi], axis=1, out=row_sums[lo:hi])

    def rw(lo: int, hi: int) -> None:
        np.add(a[lo:hi], b[lo:hi], out=c[lo:hi])

    out = {}
    for label, t in (("1 thread", 1), (f"{threads} threads", threads)):
        pool = ThreadPoolExecutor(t - 1) if t > 1 else None
        try:
            out[f"read, {label}"] = big.nbytes / _best(lambda p=pool, t=t: _split(p, t, 4096, read), reps)
            out[f"read + write, {label}"] = (
                3 * a.nbytes / _best(lambda p=pool, t=t: _split(p, t, a.size, rw), reps)
            )
        finally:
            if pool is not None:
                pool.shutdown()
    return out


def measure_machine(threads: int, reps: int = 7) -> dict[str, float]:
    """The limits (bytes or FLOPs per second), on one thread and on ``threads``."""
    out = _bandwidths(threads, reps)
    for dt in ("float64", "float32"):
        x = np.random.default_rng(1).random((2048, 2048)).astype(dt)
        out[f"peak FLOP rate, {dt}"] = 2 * 2048**3 / _best(lambda x=x: np.dot(x, x), 3)
    return out


def _limit_of(kind: str, limits: dict[str, float], threads: int) -> tuple[str, float]:
    name = {
        "read": f"read, {threads} threads",
        "rw": f"read + write, {threads} threads",
        "flop": "peak FLOP rate, float32",
    }[kind]
    return name, limits[name]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--backend-json", default=os.path.join(REPO_ROOT, "bench", "last_run", "backend.json"))
    p.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    p.add_argument("--json", metavar="PATH", help="also write the limits and the table here")
    a = p.parse_args()
    limits = measure_machine(max(1, a.threads))
    print(f"this machine's limits (load average {os.getloadavg()[0]:.1f}, {os.cpu_count()} cores):")
    for name, value in limits.items():
        unit = "GFLOP/s" if "FLOP" in name else "GB/s"
        print(f"  {name:28s} {value / 1e9:8.1f} {unit}")
    with open(a.backend_json) as fh:
        timings = json.load(fh)["median_ms"]
    print(
        f"\nworkloads of {os.path.relpath(a.backend_json)} (arignote: FAST_RUN settled; peer: the best other)"
    )
    header = f"{'case':10s}{'traffic or work':>18s}  {'arignote':>10s} {'rate':>14s} {'of limit':>9s}   {'best peer':>22s} {'of limit':>9s}"
    print(header)
    rows = []
    for case, (kind, amount, what) in WORKLOADS.items():
        row = timings.get(case)
        if not row or "arignote FAST_RUN settled" not in row:
            continue
        limit_name, limit = _limit_of(kind, limits, a.threads)
        ours = row["arignote FAST_RUN settled"] / 1e3
        peers = {k: v / 1e3 for k, v in row.items() if not k.startswith("arignote")}
        peer, peer_s = min(peers.items(), key=lambda kv: kv[1]) if peers else ("", float("nan"))
        unit, scale = ("GFLOP/s", 1e9) if kind == "flop" else ("GB/s", 1e9)
        size = f"{amount / 1e6:.0f} MFLOP" if kind == "flop" else f"{amount / MIB:.0f} MiB"
        rate = amount / ours
        print(
            f"{case:10s}{size:>18s}  {ours * 1e3:8.2f}ms {rate / scale:9.1f} {unit:4s} {rate / limit:8.0%}"
            f"   {peer:>13s} {peer_s * 1e3:6.2f}ms {amount / peer_s / limit:8.0%}"
        )
        rows.append(
            {
                "case": case,
                "counted": what,
                "amount": amount,
                "kind": kind,
                "limit": limit_name,
                "arignote_s": ours,
                "arignote_fraction": rate / limit,
                "best_peer": peer,
                "best_peer_s": peer_s,
                "best_peer_fraction": amount / peer_s / limit,
            }
        )
    print("\ntraffic counted: " + "; ".join(f"{c}: {w}" for c, (_, _, w) in WORKLOADS.items()))
    if a.json:
        with open(a.json, "w") as fh:
            json.dump({"env": environment(), "limits": limits, "workloads": rows}, fh, indent=1)


if __name__ == "__main__":
    main()
