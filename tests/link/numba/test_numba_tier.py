"""Tier 2 (Numba kernels) against the reference VM, the disk cache, tiering and the no-Numba path.

Numba compiles cost ~0.3-1 s each, so the kernels are few and shared: one cache directory
for the module, graphs with several outputs (several kernels per compile).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import arignote
import arignote.tensor as pt
from arignote.compile.mode import Mode
from arignote.link.numba import cache
from arignote.link.numba import linker as nl
from arignote.link.numba.kernels import pays, plan_node, plan_reduction

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory: pytest.TempPathFactory):
    d = tmp_path_factory.mktemp("arignote-cache")
    old = os.environ.get("ARIGNOTE_CACHE_DIR")
    os.environ["ARIGNOTE_CACHE_DIR"] = str(d)
    yield d
    if old is None:
        del os.environ["ARIGNOTE_CACHE_DIR"]
    else:
        os.environ["ARIGNOTE_CACHE_DIR"] = old


def _vm(inputs, outputs):
    return arignote.function(inputs, outputs, mode=Mode("vm", "fast_run"))


# -- without Numba: plans are text, NUMBA mode says what to install -----------------------


def test_kernel_text_has_structure_not_constants():
    x = pt.vector("x")
    f2 = arignote.function([x], pt.exp(x) * 2 + x, mode=Mode("vm", "fast_run"))
    f3 = arignote.function([x], pt.exp(x) * 3 + x, mode=Mode("vm", "fast_run"))
    (n2,), (n3,) = f2.vm.nodes, f3.vm.nodes
    p2, p3 = plan_node(n2), plan_node(n3)
    assert p2.key == p3.key and p2.source == p3.source  # one kernel for both
    assert "2.0" not in p2.source and [float(c) for c in p2.consts] == [2.0]
    assert [float(c) for c in p3.consts] == [3.0]
    xf = pt.vector("x", dtype="float32")
    p32 = plan_node(arignote.function([xf], pt.exp(xf) * 2 + xf, mode=Mode("vm", "fast_run")).vm.nodes[0])
    assert p32.key != p2.key and "float32[::1]" in p32.source  # dtypes are structure
    # a reduction of a fused input computes the body in its loop
    X = pt.matrix("X")
    g = arignote.function([X], pt.sum(pt.exp(X) * X, axis=1), mode=Mode("vm", "fast_run"))
    red = g.vm.nodes[-1]
    plan = plan_reduction(red, red.inputs[0].owner)
    assert plan.kind == "reduce" and "_arignote_exp(np.float64(x0))" in plan.source and plan.keep == (0,)


def _only_node(inputs, output):
    (node,) = arignote.function(inputs, output, mode=Mode("vm", "fast_run")).vm.nodes
    return node


@pytest.mark.parametrize(
    ("dtype", "body", "expected"),
    [
        # a float32 tanh or exp: NumPy's SIMD float32 loop beats the kernel's float64 math
        ("float32", lambda x, y: pt.tanh(x + y) * (1 - y), False),
        ("float32", lambda x, y: pt.exp(x) * y, False),
        ("float64", lambda x, y: pt.tanh(x + y) * (1 - y), True),
        # arithmetic fuses: the kernel saves NumPy's passes in either dtype
        ("float32", lambda x, y: (x * y + x) * (y - 2.5) + x * x, True),
        ("float64", lambda x, y: (x * y + x) * (y - 2.5) + x * x, True),
        # sin: NumPy's float64 loop is slow, its float32 one is not
        ("float64", lambda x, y: pt.sin(x) * y, True),
        ("float32", lambda x, y: pt.sin(x) * y, False),
    ],
)
def test_the_cost_model_weighs_numpys_loops_of_the_dtype(dtype, body, expected):
    x, y = pt.vector("x", dtype=dtype), pt.vector("y", dtype=dtype)
    plan = plan_node(_only_node([x, y], body(x, y)))
    assert plan is not None and pays(plan) is expected, plan.costs


@pytest.mark.parametrize(
    ("reduce", "expected"),
    [
        (lambda X: X.sum(axis=1), True),  # (partial sums along rows)
        (lambda X: X.max(axis=0), True),  # (columns in blocks)
        (lambda X: X.max(axis=1), False),  # (a NaN-keeping select along rows: NumPy's is 6x faster)
        (lambda X: X.min(axis=1), False),
        (lambda X: pt.exp(X).max(axis=1), False),  # (the select keeps the exp scalar too)
        (lambda X: (X * X - X).sum(axis=1), True),  # (fused: NumPy's temporaries saved)
    ],
)
def test_the_cost_model_keeps_a_max_along_rows_on_numpy(reduce, expected):
    X = pt.matrix("X")
    f = arignote.function([X], reduce(X), mode=Mode("vm", "fast_run"))
    red = f.vm.nodes[-1]
    src = red.inputs[0].owner
    plan = plan_reduction(red, src if src is not None and src in f.vm.nodes else None)
    assert plan is not None and pays(plan) is expected, plan.costs


def test_numba_mode_without_numba_says_to_install(monkeypatch):
    monkeypatch.setattr(nl, "numba_available", lambda: False)
    x = pt.vector("x")
    with pytest.raises(nl.NumbaMissing, match=r"pip install arignote\[numba\]"):
        arignote.function([x], pt.exp(x) * 2 + x, mode="NUMBA_KERNELS")
    # tier 1 alone needs nothing
    f = arignote.function([x], pt.exp(x) * 2 + x, mode=Mode(nl.NumbaLinker(jit="never"), "fast_run"))
    np.testing.assert_allclose(f(np.ones(3)), np.exp(1) * 2 + 1)
    with pytest.raises(ValueError, match="jit must be one of"):
        nl.NumbaLinker(jit="later")
    # a background tier 2 without Numba is tier 1 alone: no worker is started
    started = []
    monkeypatch.setattr(nl, "_compile_out_of_process", started.append)
    g = arignote.function([x], pt.exp(x) * 2 + x, mode=Mode(nl.NumbaLinker(jit="background"), "fast_run"))
    for _ in range(40):
        np.testing.assert_allclose(g(np.ones(10_000)), np.exp(1) * 2 + 1)
    assert nl.wait_for_kernels(timeout=5) and started == []


def test_cache_entries_are_checked_and_cli(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("ARIGNOTE_CACHE_DIR", str(tmp_path))
    path = cache.write_entry("k1", "A = 1\n")
    assert cache.read_entry("k1") == "A = 1\n" and not cache.is_ready("k1")
    cache.mark_ready("k1")
    assert cache.is_ready("k1")
    text = path.read_text()
    path.write_text(text[:-3])  # truncated
    assert cache.read_entry("k1") is None and not cache.is_ready("k1")
    cache.write_entry("k1", "A = 1\n")  # rebuilt
    assert cache.read_entry("k1") == "A = 1\n" and not cache.is_ready("k1")
    assert not list(tmp_path.rglob("*.tmp"))  # temp files were renamed into place
    assert cache.main(["info"]) == 0 and "1 kernels" in capsys.readouterr().out
    assert cache.main(["clear"]) == 0 and cache.info()["kernels"] == 0


# -- with Numba ---------------------------------------------------------------------------


def test_kernels_match_the_reference_vm(cache_dir):
    pytest.importorskip("numba")
    rng = np.random.default_rng(0)
    x, y = pt.vectors("x", "y")
    X = pt.matrix("X")
    xf = pt.vector("xf", dtype="float32")
    s = pt.scalar("s")
    outs = [
        pt.exp(-(x**2)) * pt.sin(y) + pt.log1p(abs(y)),  # map, math
        pt.maximum(x, y) * 2 - pt.switch(x > y, x, y * 3),  # map, NaN-propagating max, switch
        pt.sum(pt.exp(X) * x, axis=1),  # reduce, fused, broadcast input
        pt.max(X * s, axis=0),  # reduce over leading axis
        pt.sum(X * X),  # full reduction
        pt.sqrt(abs(xf)) * xf + 1,  # float32
    ]
    ins = [x, y, X, xf, s]
    f = arignote.function(ins, outs, mode="NUMBA_KERNELS")
    ref = _vm(ins, outs)
    assert [s.state for s in f.vm.tier2] == ["tier 2"] * len(f.vm.tier2)
    assert {s.plan.kind for s in f.vm.tier2} == {"map", "reduce"}
    assert all(f.vm.impl_of(s.node) == "numba" for s in f.vm.tier2)  # what runs each node
    for n in (5, 0):
        args = [
            rng.normal(size=n),
            rng.normal(size=n),
            rng.normal(size=(7, n)),
            rng.normal(size=n).astype("float32"),
            np.float64(1.5),
        ]
        if n:
            args[0][1] = np.nan
        outs_got, outs_ref = f(*args), ref(*args)
        for got, want in zip(outs_got, outs_ref):
            assert got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_allclose(got, want, rtol=2e-6 if got.dtype == np.float32 else 1e-12)
    # a non-contiguous and a read-only input: the same values
    a = rng.normal(size=10)[::2]
    b = rng.normal(size=5)
    b.flags.writeable = False
    M = rng.normal(size=(5, 3)).T
    c = rng.normal(size=5).astype("float32")
    for got, want in zip(f(a, b, M, c, 2.0), ref(a, b, M, c, 2.0)):
        np.testing.assert_allclose(got, want, rtol=2e-6)
    # a runtime shape mismatch is tier 1's error
    with pytest.raises(ValueError):
        f(np.ones(4), np.ones(5), np.ones((2, 4)), np.ones(4, dtype="float32"), 1.0)


def test_column_reduction_kernels_match_the_reference_for_any_number_of_rows(cache_dir):
    """A reduction over axis 0 takes the rows in blocks (8 plain, 4 with a fused body) and
    the rest one at a time; NaN wins a max wherever it is, sums keep each column's order."""
    pytest.importorskip("numba")
    X = pt.matrix("X")
    s = pt.scalar("s")
    outs = [X.max(axis=0), pt.min(X * s, axis=0), (X * X - X).sum(axis=0), pt.prod(X * s + 1, axis=0)]
    f, ref = arignote.function([X, s], outs, mode="NUMBA_KERNELS"), _vm([X, s], outs)
    assert sum(p.plan.kind == "reduce" for p in f.vm.tier2) == 4
    rng = np.random.default_rng(7)
    for rows in (1, 3, 4, 5, 8, 9, 13, 21):
        xv = rng.normal(size=(rows, 6))
        xv[rows - 1, 1] = np.nan
        got, want = f(xv, 0.5), ref(xv, 0.5)
        for k, (g, w) in enumerate(zip(got, want)):
            np.testing.assert_allclose(g, w, rtol=1e-12, err_msg=f"{rows} rows, output {k}")
        assert all(np.isnan(g[1]) for g in got)


@pytest.mark.parametrize("mode", ["NUMBA_KERNELS", "NUMBA"])
def test_integer_division_by_zero_raises_the_reference_error(cache_dir, mode):
    """NumPy (and Numba's error model) give 0 for an integer division by zero; a fused
    kernel or the whole-graph function hands such a call to tier 1, which raises the
    reference VM's error, in a loop and on 0-d values alike."""
    pytest.importorskip("numba")
    i, j = pt.lvector("i"), pt.lvector("j")
    a, b = pt.lscalar("a"), pt.lscalar("b")
    outs = [(i // j) * 3 + 1, (i % j) - i, (a // b) * 2 + a]
    f = arignote.function([i, j, a, b], outs, mode=mode)
    if mode == "NUMBA":
        assert f.vm.whole.state == "in use", f.vm.whole.reason
    else:
        assert [s.plan.kind for s in f.vm.tier2] == ["map", "map"]  # the vectors' fused nodes
    iv, jv = np.arange(-2, 4), np.array([1, 2, -3, 3, 5, 2])
    for k, (g, w) in enumerate(zip(f(iv, jv, 7, 2), _vm([i, j, a, b], outs)(iv, jv, 7, 2))):
        np.testing.assert_array_equal(g, w, err_msg=f"output {k}")
    for args in [(iv, np.where(jv == 3, 0, jv), 7, 2), (iv, jv, 7, 0)]:
        with pytest.raises(ZeroDivisionError, match="integer division by zero"):
            f(*args)


def test_background_tier_swaps_in_and_later_processes_find_it(cache_dir):
    pytest.importorskip("numba")
    x, y = pt.vectors("x", "y")
    expr = (x * y + x) * (y - 2.5) + x * x
    mode = Mode(nl.NumbaLinker(jit="background", hot_elements=3000, min_size=0), "fast_run")
    f = arignote.function([x, y], expr, mode=mode)
    (slot,) = f.vm.tier2
    a, b = np.arange(1000.0), np.ones(1000)
    want = (a * b + a) * (b - 2.5) + a * a
    for _ in range(3):  # 3000 elements: not hot yet
        np.testing.assert_allclose(f(a, b), want)
    assert slot.state == "tier 1"
    np.testing.assert_allclose(f(a, b), want)  # now hot: compiled in another process
    assert slot.state in ("requested", "tier 2")
    assert nl.wait_for_kernels(timeout=120)
    assert slot.state == "tier 2"
    np.testing.assert_allclose(f(a, b), want)
    key = cache.entry_key(slot.plan.key)
    assert cache.is_ready(key)
    # a new linker (as a later process) finds it in the cache
    g = arignote.function(
        [x, y], expr, mode=Mode(nl.NumbaLinker(jit="sync", whole_graph="never"), "fast_run")
    )
    np.testing.assert_allclose(g(a, b), want)


def test_damaged_entries_are_rebuilt(cache_dir):
    pytest.importorskip("numba")
    x = pt.vector("x")
    f = arignote.function([x], (x + 1.5) * x - 3, mode="NUMBA_KERNELS")
    (slot,) = f.vm.tier2
    key = cache.entry_key(slot.plan.key)
    path = cache.entry_path(key)
    assert cache.is_ready(key)
    nl._loaded.pop(key)
    path.write_text(path.read_text()[:40])  # a truncated kernel file
    assert not cache.is_ready(key)
    g = arignote.function([x], (x + 1.5) * x - 3, mode="NUMBA_KERNELS")
    np.testing.assert_allclose(g(np.arange(4.0)), (np.arange(4.0) + 1.5) * np.arange(4.0) - 3)
    assert cache.is_ready(key)
    # Numba's own files damaged: removed and rebuilt too
    nl._loaded.pop(key)
    for p in (path.parent / "__pycache__").glob(f"{path.stem}.*"):
        p.write_bytes(p.read_bytes()[:10])
    h = arignote.function([x], (x + 1.5) * x - 3, mode="NUMBA_KERNELS")
    np.testing.assert_allclose(h(np.arange(4.0)), (np.arange(4.0) + 1.5) * np.arange(4.0) - 3)


_SCRIPT = """
import numpy as np, arignote, arignote.tensor as pt
x, y = pt.vectors("x", "y")
f = arignote.function([x, y], [(x - y) * (x + 0.5) / (y * y + 1), pt.sum(x * y - x)], mode="NUMBA_KERNELS")
assert [s.state for s in f.vm.tier2] == ["tier 2", "tier 2"]
r = f(np.linspace(0, 1, 7), np.linspace(1, 2, 7))
print(repr(r[0].tolist()), repr(float(r[1])))
"""


@pytest.mark.slow
def test_processes_compiling_into_an_empty_cache_agree(tmp_path):
    pytest.importorskip("numba")
    env = dict(os.environ, ARIGNOTE_CACHE_DIR=str(tmp_path), PYTHONPATH=str(ROOT))
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _SCRIPT],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(8)
    ]
    results = [p.communicate(timeout=300) for p in procs]
    assert all(p.returncode == 0 for p in procs), [err[-2000:] for _, err in results]
    outs = {out for out, _ in results}
    assert len(outs) == 1
    a, b = np.linspace(0, 1, 7), np.linspace(1, 2, 7)
    first, second = outs.pop().split("] ")
    np.testing.assert_allclose(eval(first + "]"), (a - b) * (a + 0.5) / (b * b + 1))
    np.testing.assert_allclose(float(second), np.sum(a * b - a))
    kernels = list((tmp_path / "kernels").glob("k_*.py"))
    assert len(kernels) == 2 and len(list((tmp_path / "kernels").glob("k_*.ok"))) == 2


def test_calls_split_over_two_threads_agree(cache_dir):
    pytest.importorskip("numba")
    x, y, v = pt.vectors("x", "y", "v")
    X = pt.matrix("X")
    # (the kernels of test_kernels_match_the_reference_vm: same structure, same cache entries)
    outs = [pt.maximum(x, y) * 2 - pt.switch(x > y, x, y * 3), pt.sum(pt.exp(X) * v, axis=1)]
    f = arignote.function(
        [x, y, X, v], outs, mode=Mode(nl.NumbaLinker(jit="sync", threads=2, whole_graph="never"), "fast_run")
    )
    ref = _vm([x, y, X, v], outs)
    rng = np.random.default_rng(1)
    args = (
        rng.normal(size=300_000),
        rng.normal(size=300_000),
        rng.normal(size=(1000, 300)),
        rng.normal(size=300),
    )
    for got, want in zip(f(*args), ref(*args)):
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_small_arrays_stop_counting_without_numba_work():
    x = pt.vector("x")
    f = arignote.function([x], (x * 2 + 1) * x, mode=Mode(nl.NumbaLinker(jit="background"), "fast_run"))
    (slot,) = f.vm.tier2
    counting = f.vm.__globals__[slot.name]
    for _ in range(64):
        np.testing.assert_allclose(f(np.ones(3)), [3.0, 3.0, 3.0])
    assert slot.state == "tier 1 (small arrays)" and slot.plan is None  # never planned
    assert f.vm.__globals__[slot.name] is slot.tier1 is not counting


def test_background_tier_fuses_a_reduction_of_a_hot_input(cache_dir):
    pytest.importorskip("numba")
    x, y = pt.vectors("x", "y")
    mode = Mode(nl.NumbaLinker(jit="background", hot_elements=1000, min_size=0), "fast_run")
    # (the reduction kernel of test_processes_compiling_into_an_empty_cache_agree's graph)
    f = arignote.function([x, y], pt.sum(x * y - x), mode=mode)
    (slot,) = f.vm.tier2
    assert slot.producer is not None and slot.plan is None  # planned once hot
    a, b = np.linspace(0, 1, 600), np.linspace(1, 2, 600)
    for _ in range(3):
        np.testing.assert_allclose(f(a, b), np.sum(a * b - a))
    assert nl.wait_for_kernels(timeout=120)
    assert slot.state == "tier 2" and slot.plan.kind == "reduce"
    assert f.vm.impl_of(slot.producer.node) == "numba"
    for _ in range(2):
        np.testing.assert_allclose(f(a, b), np.sum(a * b - a))


# -- an output written over an input -----------------------------------------------------


def test_a_kernel_writes_an_output_over_its_input_under_the_inputs_name(cache_dir):
    """An in-place fused node's kernel stores into the input's rows by the name it loads them
    from (LLVM vectorises that loop; the same memory passed as a second array ran the scalar
    copy of the loop, 8x slower), and computes what the reference VM does."""
    pytest.importorskip("numba")
    X, W = pt.matrices("X", "W")
    b = pt.vector("b")
    h = pt.tanh(X.dot(W) + b)  # (the Dot's output is an intermediate: written over)
    outs = [h, (1 - h * h) * X.dot(W)]
    f = arignote.function(
        [X, W, b], outs, mode=Mode(nl.NumbaLinker(jit="sync", threads=2, whole_graph="never"), "fast_run")
    )
    ref = _vm([X, W, b], outs)
    written = [s for s in f.vm.tier2 if s.plan.inplace]
    assert written, [str(s.node) for s in f.vm.tier2]
    for slot in written:
        (j, i), *_ = slot.plan.inplace
        assert dict(slot.node.op.inplace_pattern)[j] == i
        head = next(line for line in slot.plan.source.splitlines() if line.startswith("def kernel("))
        assert f"o{j}," not in head and f"a{i}," in head
        assert f"o{j}s = " not in slot.plan.source
    rng = np.random.default_rng(2)
    for n in (3, 40_000):  # (the second split over two threads)
        args = (rng.normal(size=(n, 20)), rng.normal(size=(20, 30)) * 0.3, rng.normal(size=30))
        for got, want in zip(f(*args), ref(*args)):
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)  # (tanh: 2 ulp)


def test_an_input_written_over_that_another_input_reads_is_copied_first(cache_dir):
    """At run time the destroyed input may share memory with another input of the node (not
    in a graph the rewrites made, but the thunk does not rely on it): the kernel then writes
    over a private copy, and both inputs are read as they were."""
    pytest.importorskip("numba")
    from arignote.scalar.basic import float64 as sf64
    from arignote.scalar.composite import Composite
    from arignote.tensor.elemwise import Elemwise

    a, c = sf64("a"), sf64("c")
    body = Composite([a, c], [a * 2 + c])
    x, y = pt.vectors("x", "y")
    node = Elemwise(body, {0: 0})(x, y).owner
    plan = plan_node(node)
    assert plan.inplace == ((0, 0),)
    kernel = nl.load_kernel(plan)
    data = np.arange(6.0)
    cells = {x: [data], y: [data[::-1].copy()], node.outputs[0]: [None]}
    cells[y][0] = data  # (the same memory as the destroyed input)

    def tier1() -> None:
        raise AssertionError("tier 1 called")

    slot = nl._Slot(0, node, plan, tier1)
    linker = nl.NumbaLinker(jit="sync", whole_graph="never")
    thunk = nl._map_thunk(linker, slot, kernel, cells, None)
    thunk()
    np.testing.assert_array_equal(cells[node.outputs[0]][0], np.arange(6.0) * 3)
    np.testing.assert_array_equal(data, np.arange(6.0))  # (its copy was written over)
