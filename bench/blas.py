"""BLAS-fused updates: what the Gemm rules save on an MLP training step and a weight update.

Cases (``--cases``):

* ``mlp``: one SGD step of a 784-512-10 MLP (tanh hidden layer, softmax cross-entropy on
  one-hot targets), float32, batch 256: the forward and backward products and the four
  parameter updates, ``w - lr * dot(h.T, d)`` among them;
* ``update``: ``w - 0.1 * dot(x.T, g)`` with 1000x1000 float32 matrices (``0.1`` a float32),
  once as a function's output (``w`` is an input the caller keeps: a new array) and once as
  a shared variable's update (``w`` written in place);
* ``update64``: the same in float64.

Measured in the same run: NumPy written by hand (the floor: ``w -= lr * (x.T @ g)`` for an
update), arignote with its default rewrites and with the BLAS rules excluded
(``Mode.excluding("blas")``: a ``Dot`` and an elementwise update), and, when importable
here or in ``--peer-python`` (run with ``--serve``), PyTensor 3 (default mode) and JAX
(``jax.jit``). Each number is the best of ``--repeats`` calls, in milliseconds.

Run ``python bench/blas.py`` (``--peer-python /tmp/benchenv/bin/python`` for the peers).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import PeerProcess, ensure_repo_importable, environment, importable, table

LR = 0.1
SIZES = {"n_in": 784, "n_hid": 512, "n_out": 10, "batch": 256}


def _best(fn: Callable[[], Any], repeats: int) -> float:
    fn()  # warm up (first call: compilation of a JIT, page faults of fresh buffers)
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best * 1e3


def _mlp_data(dtype: str = "float32") -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    s = SIZES
    labels = rng.integers(0, s["n_out"], size=s["batch"])
    return {
        "x": rng.normal(size=(s["batch"], s["n_in"])).astype(dtype),
        "t": np.eye(s["n_out"], dtype=dtype)[labels],
        "w1": (rng.normal(size=(s["n_in"], s["n_hid"])) * 0.05).astype(dtype),
        "b1": np.zeros(s["n_hid"], dtype),
        "w2": (rng.normal(size=(s["n_hid"], s["n_out"])) * 0.05).astype(dtype),
        "b2": np.zeros(s["n_out"], dtype),
    }


def _update_data(dtype: str) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(1)
    return {k: rng.normal(size=(1000, 1000)).astype(dtype) for k in ("w", "x", "g")}


# --- NumPy by hand -------------------------------------------------------------------------


def numpy_cases(case: str) -> dict[str, Callable[[], Any]]:
    if case == "mlp":
        d = _mlp_data()
        x, t = d["x"], d["t"]
        p = {k: d[k].copy() for k in ("w1", "b1", "w2", "b2")}
        lr = np.float32(LR)
        n = np.float32(x.shape[0])

        def step() -> Any:
            h = np.tanh(x @ p["w1"] + p["b1"])
            z = h @ p["w2"] + p["b2"]
            z = z - z.max(axis=1, keepdims=True)
            e = np.exp(z)
            sm = e / e.sum(axis=1, keepdims=True)
            cost = -(t * np.log(sm)).sum() / n
            dz = (sm - t) / n
            dh = (dz @ p["w2"].T) * (1 - h * h)
            p["w2"] -= lr * (h.T @ dz)
            p["b2"] -= lr * dz.sum(axis=0)
            p["w1"] -= lr * (x.T @ dh)
            p["b1"] -= lr * dh.sum(axis=0)
            return cost

        return {"step": step}
    dtype = "float64" if case == "update64" else "float32"
    d = _update_data(dtype)
    lr = np.asarray(LR, dtype)
    w, x, g = d["w"], d["x"], d["g"]
    ws = w.copy()

    def shared() -> None:
        ws[...] -= lr * (x.T @ g)

    return {"output": lambda: w - lr * (x.T @ g), "shared": shared}


# --- arignote, PyTensor (same API), JAX ----------------------------------------------------


def graph_cases(lib: Any, case: str, mode: Any = None) -> dict[str, Callable[[], Any]]:
    """The cases built with ``lib`` (arignote or pytensor: the same API), compiled in ``mode``."""
    pt = lib.tensor
    if case == "mlp":
        d = _mlp_data()
        x, t = pt.matrix("x", dtype="float32"), pt.matrix("t", dtype="float32")
        params = [lib.shared(d[k].copy(), name=k) for k in ("w1", "b1", "w2", "b2")]
        w1, b1, w2, b2 = params
        h = pt.tanh(pt.dot(x, w1) + b1)
        sm = pt.special.softmax(pt.dot(h, w2) + b2, axis=-1)
        cost = -(t * pt.log(sm)).sum() / np.float32(SIZES["batch"])
        grads = lib.grad(cost, params)
        lr = np.float32(LR)
        f = lib.function([x, t], cost, updates=[(p, p - lr * g) for p, g in zip(params, grads)], mode=mode)
        return {"step": lambda: f(d["x"], d["t"])}
    dtype = "float64" if case == "update64" else "float32"
    d = _update_data(dtype)
    w, x, g = (pt.matrix(k, dtype=dtype) for k in ("w", "x", "g"))
    lr = np.asarray(LR, dtype)
    f_out = lib.function([w, x, g], w - lr * pt.dot(x.T, g), mode=mode)
    ws = lib.shared(d["w"].copy(), name="ws")
    f_sh = lib.function([x, g], [], updates=[(ws, ws - lr * pt.dot(x.T, g))], mode=mode)
    return {"output": lambda: f_out(d["w"], d["x"], d["g"]), "shared": lambda: f_sh(d["x"], d["g"])}


def jax_cases(case: str) -> dict[str, Callable[[], Any]]:
    import jax
    import jax.numpy as jnp

    if case == "mlp":
        d = _mlp_data()
        x, t = jnp.asarray(d["x"]), jnp.asarray(d["t"])

        def loss(p: Any, x: Any, t: Any) -> Any:
            h = jnp.tanh(x @ p[0] + p[1])
            sm = jax.nn.softmax(h @ p[2] + p[3], axis=-1)
            return -(t * jnp.log(sm)).sum() / np.float32(SIZES["batch"])

        @jax.jit
        def step(p: Any, x: Any, t: Any) -> Any:
            c, g = jax.value_and_grad(loss)(p, x, t)
            return c, [a - np.float32(LR) * b for a, b in zip(p, g)]

        state = [[jnp.asarray(d[k]) for k in ("w1", "b1", "w2", "b2")]]

        def run() -> Any:
            c, state[0] = step(state[0], x, t)
            return c.block_until_ready()

        return {"step": run}
    dtype = "float64" if case == "update64" else "float32"
    if dtype == "float64":
        jax.config.update("jax_enable_x64", True)
    d = {k: jnp.asarray(v) for k, v in _update_data(dtype).items()}
    lr = np.asarray(LR, dtype)
    upd = jax.jit(lambda w, x, g: w - lr * (x.T @ g))
    upd_donate = jax.jit(lambda w, x, g: w - lr * (x.T @ g), donate_argnums=0)
    ws = [jnp.array(d["w"])]

    def shared() -> Any:
        ws[0] = upd_donate(ws[0], d["x"], d["g"])
        return ws[0].block_until_ready()

    return {"output": lambda: upd(d["w"], d["x"], d["g"]).block_until_ready(), "shared": shared}


def peer_cases(lib: str, case: str) -> dict[str, Callable[[], Any]]:
    if lib == "jax":
        return jax_cases(case)
    import pytensor

    return graph_cases(pytensor, case)


def serve(libs: Sequence[str], repeats: int) -> int:
    """The peers' side: one case name per stdin line, JSON records back."""
    print(json.dumps({"meta": True, "libs": list(libs)}), flush=True)
    for line in sys.stdin:
        case = line.strip()
        for lib in libs:
            try:
                for variant, fn in peer_cases(lib, case).items():
                    print(json.dumps({"lib": lib, "variant": variant, "ms": _best(fn, repeats)}), flush=True)
            except Exception as err:  # a peer that cannot run a case says why
                print(json.dumps({"lib": lib, "error": f"{type(err).__name__}: {err}"}), flush=True)
        print(json.dumps({"done": True}), flush=True)
    return 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cases", default="mlp,update,update64")
    p.add_argument("--repeats", type=int, default=10)
    p.add_argument("--peer-python", default="/tmp/benchenv/bin/python")
    p.add_argument("--no-peers", action="store_true")
    p.add_argument("--serve", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.serve:
        return serve(args.serve.split(","), args.repeats)

    ensure_repo_importable()
    import arignote

    in_process = [lib for lib in ("pytensor", "jax") if importable(lib)] if not args.no_peers else []
    peer = None
    wanted = [lib for lib in ("pytensor", "jax") if lib not in in_process]
    if not args.no_peers and wanted and os.path.exists(args.peer_python):
        peer = PeerProcess(
            args.peer_python,
            os.path.abspath(__file__),
            ["--serve", ",".join(wanted), "--repeats", str(args.repeats)],
        )
    print(json.dumps(environment()))
    no_blas = arignote.get_mode("FAST_RUN").excluding("blas")
    rows = []
    for case in args.cases.split(","):
        results: dict[tuple[str, str], float | str] = {}
        for variant, fn in numpy_cases(case).items():
            results["numpy", variant] = _best(fn, args.repeats)
        for label, mode in (("arignote", None), ("arignote, no BLAS rules", no_blas)):
            for variant, fn in graph_cases(arignote, case, mode).items():
                results[label, variant] = _best(fn, args.repeats)
        for lib in in_process:
            for variant, fn in peer_cases(lib, case).items():
                results[lib, variant] = _best(fn, args.repeats)
        if peer is not None:
            for rec in peer.request(case):
                if "error" in rec:
                    results[rec["lib"], "error"] = rec["error"]
                else:
                    results[rec["lib"], rec["variant"]] = rec["ms"]
        for (lib, variant), ms in results.items():
            if isinstance(ms, str):
                rows.append([case, "-", lib, ms[:60], "-"])
                continue
            base = results.get(("numpy", variant))
            ratio = f"{ms / base:.2f}x" if isinstance(base, float) else "-"
            rows.append([case, variant, lib, f"{ms:.2f}", ratio])
    if peer is not None:
        peer.close()
    print(
        table(
            ["case", "variant", "library", "ms (best)", "vs NumPy"], rows, [False, False, False, True, True]
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
