"""Compiling and running value-and-gradient functions: arignote against NumPy, PyTensor 3 and JAX.

For each model the function returns the cost and its gradient with respect to the
parameters. The models are ``bench/grad.py``'s (built from there for arignote and
PyTensor), at one size each:

* ``mlp``: a tanh MLP with 4 hidden layers of 256 units on 784 inputs and a softmax
  cross-entropy cost, on a batch of 128 rows (a one-hot target);
* ``gp``: the negative log marginal likelihood of a Gaussian process with 8 additive RBF
  kernels on 200 points (Cholesky factor, triangular solve, log-determinant);
* ``embed``: 4 layers of embedding lookups ``E_k[tokens]`` (tables of 1000 x 32) on a
  (32, 64) token batch, with slices and a set_subtensor in between.

Measured in the same run, the libraries taking turns model by model:

* NumPy: a hand-written value and gradient (the floor, and the oracle for the values);
* arignote: ``function(inputs, [cost, *grads])`` in its default mode;
* PyTensor 3: the same in its default mode (Numba, whose JIT runs at the first call) and,
  with ``--pytensor-py``, ``Mode(linker="py")`` (cheap to compile but slow to run);
* JAX: ``jax.jit(jax.value_and_grad(cost))``, the same models in ``jax.numpy``, float64.

Compile: building the graph and ``grad`` ("graph"), ``function()``, the first call and
their sum ("compile": for JAX the first call, which traces and compiles); "again"
compiles a freshly built copy of the same model, which shows what in-memory and disk
caches save (PyTensor's Numba cache is in a fresh, empty directory unless
``--pytensor-cache user``). Run: the best of several calls, and the largest difference of
each library's values from NumPy's (a mismatch makes the exit status 1).

PyTensor and JAX run in this process when importable, else in ``--peer-python`` (which
runs this script with ``--serve``).

    python bench/grad_run.py --peer-python /tmp/benchenv/bin/python
    python bench/grad_run.py --profile mlp     # where arignote's call spends its time
"""

from __future__ import annotations

import argparse
import importlib
import itertools
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import (
    PeerProcess,
    best_of,
    ensure_repo_importable,
    environment,
    fmt_ratio,
    fmt_seconds,
    importable,
    table,
    timed,
)
from grad import BUILDERS, Library

MODELS: dict[str, int] = {"mlp": 4, "gp": 8, "embed": 4}
BATCH = 128  # mlp rows
GP_POINTS = 200
TOKENS = (32, 64)
VOCAB, WIDTH = 1000, 32  # the table shape grad.model_embed declares
DATA_INPUTS = {"mlp": 2, "gp": 2, "embed": 1}  # inputs before the parameters
RTOL = 1e-6  # values agree when within RTOL, and ATOL times the largest |value| of the array
ATOL = 1e-9

# (lib, variant, label), in the report's order
VARIANTS = (
    ("numpy", "hand", "NumPy, hand-written gradient"),
    ("arignote", "default", "arignote [default mode]"),
    ("pytensor", "numba", "PyTensor [default mode: Numba]"),
    ("pytensor", "py", "PyTensor [linker=py]"),
    ("jax", "jit", "JAX jit(value_and_grad)"),
)
LIBS = ("numpy", "arignote", "pytensor", "jax")
PEERS = ("pytensor", "jax")


# --- data ------------------------------------------------------------------------------


def make_data(model: str, size: int) -> dict[str, np.ndarray]:
    """The inputs, named and ordered as ``grad.BUILDERS[model]`` declares them."""
    rng = np.random.default_rng(1234)
    data: dict[str, np.ndarray] = {}
    if model == "mlp":
        data["x"] = rng.standard_normal((BATCH, 784))
        data["y"] = np.eye(10)[rng.integers(0, 10, BATCH)]
        for k, (n_in, n_out) in enumerate(itertools.pairwise([784, *([256] * size), 10])):
            data[f"W{k}"] = rng.standard_normal((n_in, n_out)) / np.sqrt(n_in)
            data[f"b{k}"] = 0.1 * rng.standard_normal(n_out)
    elif model == "gp":
        data["x"] = np.sort(rng.uniform(0.0, 10.0, GP_POINTS))
        data["y"] = np.sin(data["x"]) + 0.1 * rng.standard_normal(GP_POINTS)
        for j in range(size):  # lengthscales from 0.5 to ~5, variances summing to 1
            data[f"ell{j}"] = np.array(0.5 * 1.4**j)
            data[f"var{j}"] = np.array(1.0 / size)
    elif model == "embed":
        data["tokens"] = rng.integers(0, VOCAB, TOKENS)
        for j in range(size):
            data[f"E{j}"] = 0.3 * rng.standard_normal((VOCAB, WIDTH))
    else:
        raise ValueError(f"unknown model {model!r}; known: {sorted(MODELS)}")
    return data


# --- NumPy: value and gradient by hand -------------------------------------------------


def numpy_mlp(x: np.ndarray, y: np.ndarray, *params: np.ndarray) -> list[np.ndarray]:
    layers = len(params) // 2 - 1
    hs = [x]  # the input of each layer
    z = x
    for k in range(layers + 1):
        z = hs[-1] @ params[2 * k] + params[2 * k + 1]
        if k < layers:
            hs.append(np.tanh(z))
    shifted = z - z.max(axis=1, keepdims=True)
    logp = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    n = x.shape[0]
    cost = -np.sum(y * logp) / n
    dz = (np.exp(logp) * y.sum(axis=1, keepdims=True) - y) / n
    grads: list[np.ndarray] = [np.empty(0)] * len(params)
    for k in range(layers, -1, -1):
        grads[2 * k] = hs[k].T @ dz
        grads[2 * k + 1] = dz.sum(axis=0)
        if k:
            dz = (dz @ params[2 * k].T) * (1.0 - hs[k] ** 2)
    return [np.asarray(cost), *grads]


def numpy_gp(x: np.ndarray, y: np.ndarray, *params: np.ndarray) -> list[np.ndarray]:
    from scipy.linalg import cho_solve, cholesky, solve_triangular

    d2 = (x[:, None] - x[None, :]) ** 2
    n = x.shape[0]
    k = 1e-3 * np.eye(n)
    rbfs = []
    for ell, var in zip(params[::2], params[1::2], strict=True):
        rbfs.append(np.exp(-0.5 * d2 / ell**2))
        k += var * rbfs[-1]
    chol = cholesky(k, lower=True)
    v = solve_triangular(chol, y, lower=True)
    cost = 0.5 * v @ v + np.sum(np.log(np.diag(chol)))
    # d cost / dK = (K^-1 - alpha alpha^T) / 2 with alpha = K^-1 y
    alpha = solve_triangular(chol, v, lower=True, trans="T")
    dk = 0.5 * (cho_solve((chol, True), np.eye(n)) - np.outer(alpha, alpha))
    grads = []
    for ell, var, rbf in zip(params[::2], params[1::2], rbfs, strict=True):
        grads.append(np.asarray(np.sum(dk * var * rbf * d2) / ell**3))
        grads.append(np.asarray(np.sum(dk * rbf)))
    return [np.asarray(cost), *grads]


def numpy_embed(tokens: np.ndarray, *tables: np.ndarray) -> list[np.ndarray]:
    h = None
    outs = []  # each layer's output, for the backward pass
    for j, table_ in enumerate(tables):
        e = table_[tokens][:, j:]
        pre = e if h is None else h + e
        h = np.tanh(pre[:, 1:] - pre[:, :-1])
        h[:, 0] = 0.0
        outs.append(h)
    assert h is not None
    cost = np.sum(h**2)
    dh = 2.0 * h
    grads: list[np.ndarray] = [np.empty(0)] * len(tables)
    for j in range(len(tables) - 1, -1, -1):
        du = dh * (1.0 - outs[j] ** 2)
        du[:, 0] = 0.0  # set_subtensor replaced column 0
        dpre = np.zeros((du.shape[0], du.shape[1] + 1, du.shape[2]))
        dpre[:, 1:] += du
        dpre[:, :-1] -= du
        rows = np.zeros((*tokens.shape, tables[j].shape[1]))
        rows[:, j:] = dpre
        grads[j] = np.zeros_like(tables[j])
        np.add.at(grads[j], tokens, rows)
        dh = dpre  # pre = h_previous + e
    return [np.asarray(cost), *grads]


NUMPY_GRADS: dict[str, Callable[..., list[np.ndarray]]] = {
    "mlp": numpy_mlp,
    "gp": numpy_gp,
    "embed": numpy_embed,
}


# --- JAX: the same costs in jax.numpy ---------------------------------------------------


def jax_cost(model: str) -> Callable[..., Any]:
    import jax
    import jax.numpy as jnp
    from jax.scipy.linalg import cholesky, solve_triangular

    def mlp(x: Any, y: Any, *params: Any) -> Any:
        layers = len(params) // 2 - 1
        h = x
        for k in range(layers + 1):
            h = h @ params[2 * k] + params[2 * k + 1]
            if k < layers:
                h = jnp.tanh(h)
        return -jnp.mean(jnp.sum(y * jax.nn.log_softmax(h, axis=1), axis=1))

    def gp(x: Any, y: Any, *params: Any) -> Any:
        d2 = (x[:, None] - x[None, :]) ** 2
        k = 1e-3 * jnp.eye(x.shape[0])
        for ell, var in zip(params[::2], params[1::2], strict=True):
            k = k + var * jnp.exp(-0.5 * d2 / ell**2)
        chol = cholesky(k, lower=True)
        v = solve_triangular(chol, y, lower=True)
        return 0.5 * jnp.sum(v**2) + jnp.sum(jnp.log(jnp.diagonal(chol)))

    def embed(tokens: Any, *tables: Any) -> Any:
        h = None
        for j, table_ in enumerate(tables):
            e = jnp.take(table_, tokens, axis=0)[:, j:]
            h = e if h is None else h + e
            h = jnp.tanh(h[:, 1:] - h[:, :-1]).at[:, 0].set(0.0)
        return jnp.sum(h**2)

    return {"mlp": mlp, "gp": gp, "embed": embed}[model]


# --- preparing one variant: (record, zero-argument call, outputs) -----------------------

Prepared = tuple[dict, Callable[[], Any], list[np.ndarray]]
_libraries: dict[str, Library] = {}


def _graph_library(name: str) -> Library:
    if name not in _libraries:
        _libraries[name] = Library(name)
    return _libraries[name]


def _mode(lib: str, variant: str) -> Any:
    if lib == "pytensor" and variant == "py":
        from pytensor.compile.mode import Mode

        return Mode(linker="py")
    return None  # the library's default mode


def prepare_graph(lib: str, variant: str, model: str, data: dict[str, np.ndarray]) -> Prepared:
    """arignote or PyTensor: build the model and its gradient, compile, call once."""
    library = _graph_library(lib)
    function = importlib.import_module(lib).function

    def build() -> tuple[list, list]:
        inputs, cost, params = BUILDERS[model](library, MODELS[model])
        return inputs, [cost, *library.grad(cost, params)]

    t_graph, (inputs, outputs) = timed(build)
    if [v.name for v in inputs] != list(data):
        raise RuntimeError(f"{model}: inputs {[v.name for v in inputs]} but data for {list(data)}")
    mode = _mode(lib, variant)
    t_function, f = timed(lambda: function(inputs, outputs, mode=mode))
    xs = list(data.values())
    t_first, out = timed(lambda: f(*xs))
    rec = {"graph": t_graph, "function": t_function, "first": t_first}
    rec["nodes"] = len(f.maker.fgraph.apply_nodes)
    return rec, lambda: f(*xs), [np.array(o) for o in out]


def prepare_jax(lib: str, variant: str, model: str, data: dict[str, np.ndarray]) -> Prepared:
    import jax

    cost = jax_cost(model)
    argnums = tuple(range(DATA_INPUTS[model], len(data)))
    t_graph, f = timed(lambda: jax.jit(jax.value_and_grad(cost, argnums=argnums)))
    xs = [jax.device_put(v) for v in data.values()]  # on the device once, as in a training loop
    t_first, (value, grads) = timed(lambda: jax.block_until_ready(f(*xs)))
    rec = {"graph": t_graph, "function": None, "first": t_first}
    rec["nodes"] = len(jax.make_jaxpr(jax.value_and_grad(cost, argnums=argnums))(*xs).eqns)
    return rec, lambda: jax.block_until_ready(f(*xs)), [np.asarray(value), *map(np.asarray, grads)]


def prepare_numpy(lib: str, variant: str, model: str, data: dict[str, np.ndarray]) -> Prepared:
    fn = NUMPY_GRADS[model]
    xs = list(data.values())
    t_first, out = timed(lambda: fn(*xs))
    return {"graph": None, "function": None, "first": t_first}, lambda: fn(*xs), out


PREPARE: dict[str, Callable[[str, str, str, dict[str, np.ndarray]], Prepared]] = {
    "numpy": prepare_numpy,
    "arignote": prepare_graph,
    "pytensor": prepare_graph,
    "jax": prepare_jax,
}


def warm_up(lib: str) -> float:
    """Import ``lib`` and compile and call a trivial function, so that one-time costs
    (imports, backend start-up) do not land on the first model. Returns the seconds."""

    def run() -> None:
        if lib in ("arignote", "pytensor"):
            library = _graph_library(lib)
            x = library.pt.vector("x", dtype="float64")
            importlib.import_module(lib).function([x], library.grad(library.pt.sum(x**2), x))(np.ones(3))
        elif lib == "numpy":
            import scipy.linalg  # noqa: F401  (numpy_gp's, imported on its first call otherwise)
        elif lib == "jax":
            import jax

            jax.config.update("jax_enable_x64", True)
            jax.config.update("jax_platforms", "cpu")
            jax.block_until_ready(jax.jit(jax.grad(lambda x: (x**2).sum()))(np.ones(3)))

    return timed(run)[0]


def version_of(lib: str) -> str:
    if lib == "arignote":
        ensure_repo_importable()
    version = getattr(importlib.import_module(lib), "__version__", "?")
    if lib == "pytensor":
        from pytensor.compile.mode import get_default_mode

        version += f", default linker {type(get_default_mode().linker).__name__}"
    return version


# --- measuring, in this process or in the peer -------------------------------------------


class Runner:
    """Measures some libraries in this process. ``compile(model)`` prepares every variant
    (dropping the previous model's functions) and writes its outputs to ``workdir``;
    ``time(model)`` times the steady-state call of each."""

    def __init__(self, libs: Sequence[str], opts: argparse.Namespace, workdir: str):
        self.opts = opts
        self.workdir = workdir
        self.variants = [
            (lib, variant)
            for lib, variant, _ in VARIANTS
            if lib in libs and (variant != "py" or opts.pytensor_py)
        ]
        self.versions = {lib: version_of(lib) for lib in libs}
        self.startup = {lib: warm_up(lib) for lib in libs}
        self.calls: dict[tuple[str, str], Callable[[], Any]] = {}

    def compile(self, model: str) -> list[dict]:
        self.calls.clear()
        with np.load(os.path.join(self.workdir, f"{model}-data.npz")) as npz:
            data = {name: npz[name] for name in npz.files}
        records = []
        for lib, variant in self.variants:
            rec: dict = {"kind": "compile", "model": model, "lib": lib, "variant": variant}
            try:
                prep, call, outputs = PREPARE[lib](lib, variant, model, data)
                rec.update(prep)
                again = []
                for _ in range(self.opts.again if rec["function"] is not None or lib == "jax" else 0):
                    redo = PREPARE[lib](lib, variant, model, data)[0]
                    again.append((redo["function"] or 0.0) + redo["first"])
                rec["again"] = min(again) if again else None
            except Exception as err:  # a library failing is a result, not a crash
                rec["error"] = f"{type(err).__name__}: {str(err)[:100]}"
                records.append(rec)
                continue
            self.calls[lib, variant] = call
            rec["outputs"] = os.path.join(self.workdir, f"{model}-{lib}-{variant}.npz")
            np.savez(rec["outputs"], *outputs)
            records.append(rec)
        return records

    def time(self, model: str) -> list[dict]:
        records = []
        for (lib, variant), call in self.calls.items():
            seconds, _, runs = best_of(
                lambda call=call: timed(call), self.opts.repeats, budget=self.opts.budget
            )
            records.append(
                {
                    "kind": "time",
                    "model": model,
                    "lib": lib,
                    "variant": variant,
                    "call": seconds,
                    "calls": runs,
                }
            )
        return records

    def close(self) -> None:
        self.calls.clear()


class InPeer:
    """The same requests, answered by this script (``--serve``) in another interpreter."""

    def __init__(self, python: str, libs: Sequence[str], opts: argparse.Namespace, workdir: str):
        args = ["--serve", ",".join(libs), "--workdir", workdir, *_shared_options(opts)]
        self.peer = PeerProcess(python, os.path.abspath(__file__), args)
        if self.peer.meta is None:
            tail = " | ".join(self.peer.stderr_tail.strip().splitlines()[-3:])
            self.peer.close()
            raise RuntimeError(f"{python} could not start" + (f": {tail}" if tail else ""))
        self.versions = self.peer.meta["versions"]
        self.startup = self.peer.meta["startup"]

    def _ask(self, kind: str, model: str) -> list[dict]:
        recs = list(self.peer.request(json.dumps({"kind": kind, "model": model})))
        if not self.peer.alive:
            recs.append({"kind": kind, "model": model, "lib": "peer", "variant": "-", "error": "peer died"})
        return recs

    def compile(self, model: str) -> list[dict]:
        return self._ask("compile", model)

    def time(self, model: str) -> list[dict]:
        return self._ask("time", model)

    def close(self) -> None:
        self.peer.close()


def _shared_options(opts: argparse.Namespace) -> list[str]:
    out = ["--repeats", str(opts.repeats), "--budget", str(opts.budget), "--again", str(opts.again)]
    out += ["--pytensor-cache", opts.pytensor_cache]
    return out + (["--pytensor-py"] if opts.pytensor_py else [])


def isolate_pytensor_cache(mode: str) -> str | None:
    """With ``cold``, point PyTensor (before it is imported) at a fresh compile directory,
    so that its first Numba compile of a model is a cold one. Returns that directory."""
    if mode != "cold" or "pytensor" in sys.modules:
        return None
    path = tempfile.mkdtemp(prefix="grad_run_pytensor_")
    flags = [f for f in os.environ.get("PYTENSOR_FLAGS", "").split(",") if f]
    os.environ["PYTENSOR_FLAGS"] = ",".join([*flags, f"base_compiledir={path}"])
    return path


def serve(libs: Sequence[str], opts: argparse.Namespace) -> int:
    """The peer's side of :class:`InPeer`: one JSON request per stdin line."""
    present = [lib for lib in libs if importable(lib)]
    cache = isolate_pytensor_cache(opts.pytensor_cache) if "pytensor" in present else None
    try:
        runner = Runner(present, opts, opts.workdir)
        meta = {"meta": True, "versions": runner.versions, "startup": runner.startup}
        print(json.dumps(meta), flush=True)
        for line in sys.stdin:
            req = json.loads(line)
            for rec in getattr(runner, req["kind"])(req["model"]):
                print(json.dumps(rec), flush=True)
            print(json.dumps({"done": True}), flush=True)
    finally:
        if cache:
            shutil.rmtree(cache, ignore_errors=True)
    return 0


# --- checking values and reporting -------------------------------------------------------


def compare(records: list[dict]) -> dict[tuple[str, str], tuple[float, float, bool]]:
    """``{(lib, variant): (max abs diff, max diff relative to each array's scale, ok)}``
    against NumPy's values (arignote's when NumPy was not measured)."""
    outs = {}
    for rec in records:
        if rec.get("outputs"):
            with np.load(rec["outputs"]) as npz:
                outs[rec["lib"], rec["variant"]] = [npz[f"arr_{i}"] for i in range(len(npz.files))]
    ref = outs.get(("numpy", "hand"), outs.get(("arignote", "default")))
    result = {}
    for key, got in outs.items():
        if ref is None:
            continue
        if len(got) != len(ref):
            result[key] = (float("inf"), float("inf"), False)
            continue
        worst_abs = worst_rel = 0.0
        ok = True
        for a, b in zip(got, ref, strict=True):
            scale = max(float(np.max(np.abs(b))), 1e-300)
            diff = float(np.max(np.abs(a - b))) if a.shape == b.shape else float("inf")
            worst_abs, worst_rel = max(worst_abs, diff), max(worst_rel, diff / scale)
            ok = ok and a.shape == b.shape and bool(np.allclose(a, b, rtol=RTOL, atol=ATOL * scale))
        result[key] = (worst_abs, worst_rel, ok)
    return result


def _ratio(ours: float | None, theirs: float | None) -> str:
    if not (ours and theirs):
        return "-"
    r = ours / theirs
    return fmt_ratio(r) if r >= 0.1 else f"{r:.2g}x"  # two digits for what is far below 1


def report(records: list[dict], models: Sequence[str], meta: dict) -> tuple[str, list[str]]:
    """The report's text, and the variants whose values disagree."""
    comp = {(r["model"], r["lib"], r["variant"]): r for r in records if r["kind"] == "compile"}
    calls: dict[tuple[str, str, str], float] = {}
    for r in records:
        if r["kind"] == "time" and "call" in r:
            key = (r["model"], r["lib"], r["variant"])
            calls[key] = min(calls.get(key, r["call"]), r["call"])
    env = meta["env"]
    load = env.get("loadavg")
    out = [
        "Value-and-gradient functions: compiling and running",
        "=" * 80,
        f"python {env['python']}, {env['cpu_count']} CPUs"
        + (f", load {load[0]:.1f} at start" if load else ""),
    ]
    for lib in LIBS:
        where = meta["where"].get(lib, "not measured")
        version = meta["versions"].get(lib)
        start = meta["startup"].get(lib)
        extra = f", start-up {fmt_seconds(start)}" if start is not None else ""
        out.append(f"{lib} {version} ({where}{extra})" if version else f"{lib}: {where}")
    out.append(f"PyTensor's Numba cache: {meta['pytensor_cache']}")
    out += ["", "Compile (one compile, then 'again' = best of a fresh rebuild of the same model)"]
    comp_rows, run_rows, bad = [], [], []
    for model in models:
        diffs = compare([r for r in records if r.get("model") == model and r["kind"] == "compile"])
        ours_c = comp.get((model, "arignote", "default"), {})
        ours_compile = _compile_seconds(ours_c)
        for lib, variant, label in VARIANTS:
            rec = comp.get((model, lib, variant))
            if rec is None:
                continue
            name = f"{model} {MODELS[model]}"
            if rec.get("error"):
                comp_rows.append([name, label, rec["error"][:60], "", "", "", "", "", ""])
                run_rows.append([name, label, "-", "-", "-", "-", "-"])
                continue
            seconds = _compile_seconds(rec)
            comp_rows.append(
                [
                    name,
                    label,
                    fmt_seconds(rec.get("graph")),
                    fmt_seconds(rec.get("function")),
                    fmt_seconds(rec.get("first")),
                    fmt_seconds(seconds),
                    _ratio(ours_compile, seconds) if lib != "arignote" else "",
                    fmt_seconds(rec.get("again")),
                    str(rec.get("nodes", "-")),
                ]
            )
            call = calls.get((model, lib, variant))
            # nothing to compare with when neither NumPy nor arignote ran: not checked
            absd, reld, ok = diffs.get((lib, variant), (None, None, True))
            if not ok:
                bad.append(f"{model}: {label}")
            run_rows.append(
                [
                    name,
                    label,
                    fmt_seconds(call),
                    _ratio(call, calls.get((model, "numpy", "hand"))),
                    _ratio(calls.get((model, "arignote", "default")), call) if lib != "arignote" else "",
                    "-" if absd is None else f"{absd:.1e}",
                    ("-" if reld is None else f"{reld:.1e}") + ("" if ok else "  MISMATCH"),
                ]
            )
    right = [False, False, True, True, True, True, True, True, True]
    headers = [
        "model",
        "library",
        "graph",
        "function()",
        "1st call",
        "compile",
        "arignote/this",
        "again",
        "nodes",
    ]
    out.append(table(headers, comp_rows, right))
    out += ["", "Run (steady state: best of several calls)"]
    headers = ["model", "library", "call", "this/NumPy", "arignote/this", "max |diff|", "rel"]
    out.append(table(headers, run_rows, [False, False, True, True, True, True, True]))
    out += [
        "",
        "graph: building the model and grad() (JAX: wrapping it in jit(value_and_grad), which traces",
        "nothing yet); compile: function() + the first call (JAX: the first call, which traces and",
        "compiles; NumPy has nothing to compile). again: the same for a freshly built copy of the model.",
        "arignote/this: arignote's time over this row's (above 1: this row is faster). nodes: Apply",
        "nodes after rewriting (JAX: equations in the jaxpr). max |diff|, rel: largest difference",
        f"from NumPy's values, absolute and relative to each array's largest |value| (allclose with "
        f"rtol={RTOL:g}).",
    ]
    return "\n".join(out), bad


def _compile_seconds(rec: dict) -> float | None:
    if not rec or rec.get("error") or rec["lib"] == "numpy":
        return None
    return (rec.get("function") or 0.0) + rec["first"]


# --- profile of arignote's call ------------------------------------------------------------


def profile(model: str, calls: int) -> int:
    """cProfile of ``calls`` steady-state calls of arignote's function (by tottime), then
    arignote's own per-Op profile of the same calls."""
    import cProfile
    import pstats

    ensure_repo_importable()
    import arignote

    data = make_data(model, MODELS[model])
    library = _graph_library("arignote")
    inputs, cost, params = BUILDERS[model](library, MODELS[model])
    outputs = [cost, *library.grad(cost, params)]
    xs = list(data.values())
    f = arignote.function(inputs, outputs)
    f(*xs)
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(calls):
        f(*xs)
    prof.disable()
    print(f"cProfile of {calls} calls of arignote's {model} {MODELS[model]} value-and-gradient function")
    pstats.Stats(prof, stream=sys.stdout).sort_stats("tottime").print_stats(25)
    fp = arignote.function(inputs, outputs, profile=True)
    for _ in range(calls):
        fp(*xs)
    fp.maker.profile.summary(sys.stdout, n_ops_to_print=15, n_apply_to_print=15)
    return 0


# --- driver ----------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", default=",".join(MODELS), help="comma-separated (default: %(default)s)")
    p.add_argument("--libs", default=",".join(LIBS), help="comma-separated (default: %(default)s)")
    p.add_argument("--peer-python", metavar="PATH", help="interpreter with pytensor and jax installed")
    p.add_argument("--quick", action="store_true", help="fewer calls, no 'again', the user's Numba cache")
    p.add_argument("--repeats", type=int, help="timed calls per round (default 15; quick 5)")
    p.add_argument(
        "--rounds", type=int, help="timing rounds, the processes taking turns (default 2; quick 1)"
    )
    p.add_argument(
        "--budget", type=float, help="seconds of calls per round and variant (default 1; quick 0.3)"
    )
    p.add_argument("--again", type=int, help="fresh recompiles of each model (default 1; quick 0)")
    p.add_argument(
        "--pytensor-cache",
        choices=("cold", "user"),
        help="cold: an empty compile directory for PyTensor (default); user: its usual one (quick)",
    )
    p.add_argument("--pytensor-py", action="store_true", help='also PyTensor with Mode(linker="py") (slow)')
    p.add_argument("--json", metavar="PATH", help="also write every record here")
    p.add_argument("--profile", metavar="MODEL", choices=list(MODELS), help="profile arignote's call only")
    p.add_argument("--profile-calls", type=int, default=20, help="calls profiled (default %(default)s)")
    p.add_argument("--serve", help=argparse.SUPPRESS)
    p.add_argument("--workdir", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    defaults = {"repeats": (15, 5), "rounds": (2, 1), "budget": (1.0, 0.3), "again": (1, 0)}
    defaults["pytensor_cache"] = ("cold", "user")
    for name, (full, quick) in defaults.items():
        if getattr(args, name) is None:
            setattr(args, name, quick if args.quick else full)
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.serve:
        return serve(args.serve.split(","), args)
    if args.profile:
        return profile(args.profile, args.profile_calls)
    models = args.models.split(",")
    wanted = args.libs.split(",")
    for name in [*models, *wanted]:
        if name not in MODELS and name not in LIBS:
            raise SystemExit(f"unknown model or library {name!r}; models: {list(MODELS)}, libraries: {LIBS}")
    here = [lib for lib in wanted if lib not in PEERS or importable(lib)]
    workdir = tempfile.mkdtemp(prefix="grad_run_")
    cache = isolate_pytensor_cache(args.pytensor_cache) if "pytensor" in here else None
    where = dict.fromkeys(here, "in process")
    runners: list[Runner | InPeer] = []
    records: list[dict] = []
    meta: dict = {}
    try:
        runners.append(Runner(here, args, workdir))
        missing = [lib for lib in wanted if lib not in here]
        if missing and args.peer_python:
            try:
                runners.append(InPeer(args.peer_python, missing, args, workdir))
                for lib in missing:
                    where[lib] = (
                        f"subprocess: {args.peer_python}" if lib in runners[-1].versions else "missing there"
                    )
            except RuntimeError as err:
                where.update(dict.fromkeys(missing, str(err)))
        else:
            where.update(dict.fromkeys(missing, "not importable here (pass --peer-python PATH)"))
        for model in models:
            data = make_data(model, MODELS[model])
            np.savez(os.path.join(workdir, f"{model}-data.npz"), **data)
            for runner in runners:  # compile in turn, then time in rounds, taking turns
                records += _log(runner.compile(model))
            for _ in range(args.rounds):
                for runner in runners:
                    records += _log(runner.time(model))
        meta = {
            "env": environment(),
            "where": where,
            "versions": {k: v for r in runners for k, v in r.versions.items()},
            "startup": {k: v for r in runners for k, v in r.startup.items()},
            "pytensor_cache": "a fresh, empty directory" if args.pytensor_cache == "cold" else "the user's",
        }
        text, bad = report(records, models, meta)
    finally:
        for runner in runners:
            runner.close()
        if args.json:
            with open(args.json, "w") as fh:
                json.dump({"meta": meta, "records": records}, fh, indent=1)
        shutil.rmtree(workdir, ignore_errors=True)
        if cache:
            shutil.rmtree(cache, ignore_errors=True)
    print(text)
    if bad:
        print(f"\nvalues disagree with NumPy's: {'; '.join(bad)}", file=sys.stderr)
        return 1
    return 0


def _log(records: list[dict]) -> list[dict]:
    for rec in records:
        what = rec.get("error") or fmt_seconds(rec.get("call", rec.get("first")))
        print(
            f"  {rec['kind']} {rec['model']} {rec['lib']} {rec['variant']}: {what}",
            file=sys.stderr,
            flush=True,
        )
    return records


if __name__ == "__main__":
    raise SystemExit(main())
