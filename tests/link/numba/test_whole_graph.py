"""The whole graph as one Numba function (tier 2 for small graphs) against the reference VM.

Each Op family's Numba implementation is checked inside a few large graphs (one compile per
graph and dtype: Numba compiles cost seconds), on random inputs with broadcasting, in
float64, float32 and int64; then bad inputs (the reference VM's error, raised through tier
1), the models the whole-graph function is for (8 schools, a hierarchical model, logistic
regression, an MLP step) end to end, the fallback for a graph with an Op that has none, the
probe and trial of FAST_RUN, and the generated source.
"""

from __future__ import annotations

import numpy as np
import pytest

import arignote
import arignote.tensor as pt
from arignote.compile.mode import Mode
from arignote.link.numba import linker as nl
from arignote.link.numba import whole as wg
from arignote.link.numba.dispatch import NoNumbaImpl
from arignote.link.numba.graph import EMPTY_NAME, plan_graph
from arignote.link.numba.kernels import COLUMN_BLOCK
from arignote.link.python import blas_threads as bt
from arignote.tensor.gemm import Gemm, Gemv
from arignote.tensor.indexing.advanced import AdvancedIncSubtensor1, AdvancedSubtensor1

numba = pytest.importorskip("numba")


pytestmark = pytest.mark.usefixtures("empty_kernel_cache")


def _ref(inputs, outputs):
    return arignote.function(inputs, outputs, mode=Mode("vm", "fast_run"))


def _whole(inputs, outputs):
    f = arignote.function(inputs, outputs, mode="NUMBA")
    assert f.vm.whole.state == "in use", f.vm.whole.reason
    return f


def _check(f, ref, args, rtol):
    got, want = f(*args), ref(*args)
    for k, (g, w) in enumerate(zip(got, want)):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype and g.shape == w.shape, (k, g.dtype, w.dtype, g.shape, w.shape)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol, err_msg=f"output {k}")


def _op_types(f):
    return {type(n.op).__name__ for n in f.maker.fgraph.toposort()}


# -- the Op families, in float64 and float32 -----------------------------------------------


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_float_ops_match_the_reference_vm(dtype):
    rng = np.random.default_rng(0)
    X = pt.matrix("X", dtype=dtype)
    Y = pt.matrix("Y", dtype=dtype)
    row = pt.tensor("row", dtype=dtype, shape=(1, None))  # broadcasts over rows
    v = pt.vector("v", dtype=dtype)
    w = pt.vector("w", dtype=dtype)
    s = pt.scalar("s", dtype=dtype)
    i = pt.lscalar("i")
    idx = pt.lvector("idx")
    n = pt.lscalar("n")
    outs = [
        pt.exp(-(X**2)) * pt.sin(Y) + pt.log1p(abs(X)),  # fused math
        X * row - s,  # broadcasting a row and a scalar
        pt.softplus(v) - pt.sigmoid(w) + pt.tanh(v * w) + pt.sqrt(abs(w)),
        pt.switch(v > w, v, w * 3) + pt.maximum(v, 0.5) - pt.minimum(w, s),
        pt.log1mexp(-abs(v) - 0.1) + pt.sign(w) + pt.cast(v > 0, dtype),
        X.sum(axis=0),
        X.sum(axis=1) + X.max(axis=1) - X.min(axis=1),
        X.prod(axis=0),
        (X * Y).sum(),
        pt.all(X > -10),
        pt.any(X > 10, axis=1),
        X.T * 2,  # DimShuffle: transpose
        pt.exp(s) * v,  # a scalar expanded
        pt.dot(X, Y.T),
        pt.dot(X, v),
        pt.dot(v, w),
        pt.dot(v, X.T),
        Gemv(inplace=False)(w, s, X.T, X[:, 0], pt.constant(np.asarray(0.5, dtype))),
        Gemm(inplace=False)(X, s, X, Y.T[:, :5], pt.constant(np.asarray(0.0, dtype))),
        X[i, 1:-1],
        X[1:, ::2],
        X[i, 2],
        pt.set_subtensor(X[1:3, i], v[:2] * 2),
        pt.inc_subtensor(X[0], w),
        AdvancedSubtensor1()(X, idx),
        AdvancedSubtensor1()(v, idx),
        AdvancedIncSubtensor1()(v, w, idx),
        AdvancedIncSubtensor1(set_instead_of_inc=True)(X, Y[:5], idx),
        pt.alloc(s, n, 3),
        pt.alloc(v, 2, v.shape[0]),
        X.shape,
        X.shape[0] * n,
        pt.specify_shape(v, (5,)) * 2,
        X.reshape((n, -1)),
        pt.special.softmax(X, axis=1),
        pt.special.softmax(X, axis=0),
        pt.special.log_softmax(X, axis=-1),
        pt.special.softmax(v, axis=0),
    ]
    ins = [X, Y, row, v, w, s, i, idx, n]
    f, ref = _whole(ins, outs), _ref(ins, outs)
    types = _op_types(f)
    for name in ("Elemwise", "Sum", "Max", "Prod", "DimShuffle", "Dot", "Gemv", "Gemm", "Subtensor"):
        assert name in types, name
    for name in ("IncSubtensor", "AdvancedSubtensor1", "AdvancedIncSubtensor1", "Alloc", "Shape"):
        assert name in types, name
    for name in ("Reshape", "Softmax", "LogSoftmax", "SpecifyShape"):
        assert name in types, name
    args = [
        rng.normal(size=(6, 5)).astype(dtype),
        rng.normal(size=(6, 5)).astype(dtype),
        rng.normal(size=(1, 5)).astype(dtype),
        rng.normal(size=5).astype(dtype),
        rng.normal(size=5).astype(dtype),
        np.asarray(0.7, dtype),
        np.asarray(-2),  # negative index
        np.array([0, 4, -1, 2, 0]),  # repeats and a negative one
        np.asarray(3),
    ]
    _check(f, ref, args, 1e-5 if dtype == "float32" else 1e-12)
    # a non-contiguous input (arrays of any layout go in)
    args[0] = np.asfortranarray(args[0])
    args[3] = np.ascontiguousarray(rng.normal(size=10).astype(dtype)[::2])
    _check(f, ref, args, 1e-5 if dtype == "float32" else 1e-12)


def test_int_ops_match_the_reference_vm():
    rng = np.random.default_rng(1)
    A = pt.lmatrix("A")
    B = pt.lmatrix("B")
    u = pt.lvector("u")
    b8 = pt.vector("b8", dtype="int8")
    k = pt.lscalar("k")
    outs = [
        A * B + u - k,
        pt.maximum(A, B) - pt.minimum(A, u),
        A.sum(axis=0),
        A.max(axis=1),
        A.min(),
        b8.sum(),  # int8 accumulates in int64
        b8 * 3,
        pt.dot(A, B.T),
        pt.dot(A, u),
        A[k],
        pt.inc_subtensor(A[1:, k], u),
        AdvancedSubtensor1()(u, u % 3),
        AdvancedIncSubtensor1()(u, A[0], pt.cast(b8[:3] % 3, "uint8")),  # unsigned rows
        pt.cast(A, "float64") / 2,
        pt.eq(A, B) | pt.gt(A, 0),
    ]
    ins = [A, B, u, b8, k]
    f, ref = _whole(ins, outs), _ref(ins, outs)
    args = [
        rng.integers(-5, 5, size=(4, 3)),
        rng.integers(-5, 5, size=(4, 3)),
        rng.integers(0, 9, size=3),
        rng.integers(-100, 100, size=7).astype("int8"),
        np.asarray(1),
    ]
    _check(f, ref, args, 0)


# -- bad inputs: the reference VM's errors --------------------------------------------------


def test_bad_inputs_raise_the_reference_errors():
    X, Y = pt.matrices("X", "Y")
    v = pt.vector("v")
    i = pt.lscalar("i")
    idx = pt.lvector("idx")
    outs = [X + Y, X[i], AdvancedSubtensor1()(v, idx), pt.dot(X, v)]
    f, ref = _whole([X, Y, v, i, idx], outs), _ref([X, Y, v, i, idx], outs)
    good = [np.ones((2, 3)), np.ones((2, 3)), np.ones(3), np.asarray(1), np.array([0, 2])]
    _check(f, ref, good, 1e-12)
    bads = [
        (1, np.ones((2, 4))),  # Elemwise lengths differ
        (1, np.ones((1, 3))),  # a length 1 its Type does not call broadcastable
        (3, np.asarray(5)),  # index out of bounds
        (4, np.array([0, 3])),  # row index out of bounds
        (4, np.array([-4])),
        (2, np.ones(4)),  # Dot inner lengths
    ]
    for k, value in bads:
        args = list(good)
        args[k] = value
        with pytest.raises(Exception) as want:
            ref(*args)
        with pytest.raises(type(want.value)) as got:
            f(*args)
        assert str(got.value).split("\n")[0] == str(want.value).split("\n")[0]
    # and the function goes on
    _check(f, ref, good, 1e-12)
    assert f.vm.whole.state == "in use"
    _check(f, ref, [*good[:4], np.array([], dtype="int64")], 1e-12)  # no rows: nothing to check
    assert f.vm.whole.namespace["_whole"]()  # (the compiled function computes that call)
    # a read-only input is refused by the compiled signature: tier 1 computes the call
    ro = [a.copy() for a in good]
    ro[0].setflags(write=False)
    _check(f, ref, ro, 1e-12)


# -- the models -------------------------------------------------------------------------------

Y8 = np.array([28.0, 8.0, -3.0, 7.0, -1.0, 1.0, 18.0, 12.0])
S8 = np.array([15.0, 10.0, 16.0, 11.0, 9.0, 11.0, 10.0, 18.0])


def eight_schools():
    mu, log_tau, z = pt.dscalar("mu"), pt.dscalar("log_tau"), pt.dvector("z")
    tau = pt.exp(log_tau)
    theta = mu + tau * z
    logp = (
        (-0.5 * ((Y8 - theta) / S8) ** 2).sum()
        - 0.5 * (z**2).sum()
        - 0.5 * (mu / 5.0) ** 2
        - pt.log1p((tau / 5.0) ** 2)
        + log_tau
    )
    ins = [mu, log_tau, z]
    return ins, [logp, *arignote.grad(logp, ins)], [np.array(0.5), np.array(0.1), np.linspace(-1, 1, 8)]


def hierarchical():
    rng = np.random.default_rng(0)
    n, groups = 300, 12
    g, x = rng.integers(0, groups, n), rng.normal(size=n)
    y = 1.0 + 0.5 * x + rng.normal(size=n)
    a, b, mu_a = pt.dvector("a"), pt.dscalar("b"), pt.dscalar("mu_a")
    log_tau, log_sigma = pt.dscalar("log_tau"), pt.dscalar("log_sigma")
    tau, sigma = pt.exp(log_tau), pt.exp(log_sigma)
    mean = a[g] + b * x
    logp = (
        (-0.5 * ((y - mean) / sigma) ** 2).sum()
        - n * log_sigma
        + (-0.5 * ((a - mu_a) / tau) ** 2).sum()
        - groups * log_tau
        - 0.5 * mu_a**2
        - 0.5 * b**2
    )
    ins = [a, b, mu_a, log_tau, log_sigma]
    args = [np.linspace(-1, 1, groups), np.array(0.2), np.array(0.1), np.array(0.3), np.array(-0.2)]
    return ins, [logp, *arignote.grad(logp, ins)], args


def logistic():
    rng = np.random.default_rng(5)
    xv = rng.normal(size=(200, 7))
    yv = (rng.uniform(size=200) < 0.5).astype("float64")
    w, b = pt.dvector("w"), pt.dscalar("b")
    eta = pt.dot(xv, w) + b
    logp = (yv * eta - pt.softplus(eta)).sum() - 0.5 * (w**2).sum()
    return [w, b], [logp, *arignote.grad(logp, [w, b])], [np.linspace(-0.3, 0.3, 7), np.array(0.1)]


def mlp():
    rng = np.random.default_rng(4)
    x, t = pt.dmatrix("x"), pt.dmatrix("t")
    w1, b1 = pt.dmatrix("w1"), pt.dvector("b1")
    w2, b2 = pt.dmatrix("w2"), pt.dvector("b2")
    h = pt.tanh(pt.dot(x, w1) + b1)
    loss = -(t * pt.special.log_softmax(pt.dot(h, w2) + b2, axis=-1)).sum(axis=-1).mean()
    params = [w1, b1, w2, b2]
    grads = arignote.grad(loss, params)
    outs = [loss, *[p - 0.1 * gr for p, gr in zip(params, grads)]]
    args = [
        rng.normal(size=(16, 10)),
        np.eye(4)[rng.integers(0, 4, 16)],
        rng.normal(scale=0.3, size=(10, 8)),
        np.zeros(8),
        rng.normal(scale=0.3, size=(8, 4)),
        np.zeros(4),
    ]
    return [x, t, *params], outs, args


@pytest.mark.parametrize("model", [eight_schools, hierarchical, logistic, mlp])
def test_models_end_to_end(model, monkeypatch):
    ins, outs, args = model()
    f, ref = _whole(ins, outs), _ref(ins, outs)
    _check(f, ref, args, 1e-10)
    assert f.vm.impl_of(f.maker.fgraph.toposort()[0]) == "numba (whole graph)"
    # a graph with a matrix-matrix product (np.dot: BLAS) runs under the BLAS thread limit
    sets: list[int] = []
    monkeypatch.setattr(bt, "_controls", [(sets.append, lambda: 4)])
    monkeypatch.setattr(bt, "_with_scipy", True)
    monkeypatch.setattr(bt, "_limit", 1)
    _check(f, ref, args, 1e-10)
    assert sets == ([1, 4] if model is mlp else [])
    monkeypatch.undo()
    if model is eight_schools:  # outputs no input can hold: values in, the function, values out
        results = f(*args)
        assert f._plain is not None and f.vm.direct_program[0] is f.vm.whole.program
        assert all(not np.shares_memory(r, a) for r in results for a in args)
        assert not any(np.shares_memory(r, q) for k, r in enumerate(results) for q in results[:k])


def test_column_reductions_match_the_reference_for_any_number_of_rows():
    """Reductions over axis 0 take their rows in blocks (COLUMN_BLOCK) and the rest one at a
    time: every row count, NaN propagation, ints and booleans give the reference's values."""
    X = pt.matrix("X")
    K = pt.lmatrix("K")
    outs = [X.max(axis=0), X.min(axis=0), X.sum(axis=0), X.prod(axis=0), K.sum(axis=0), K.max(axis=0)]
    outs += [pt.all(K > 0, axis=0), pt.any(K > 2, axis=0), pt.cast(X, "float32").sum(axis=0)]
    f, ref = _whole([X, K], outs), _ref([X, K], outs)
    src = f.vm.whole.source
    assert f"j0 + {COLUMN_BLOCK - 1}, j1" in src
    rng = np.random.default_rng(3)
    for rows in (1, 3, COLUMN_BLOCK, COLUMN_BLOCK + 1, 2 * COLUMN_BLOCK + 5, 40):
        xv = rng.normal(size=(rows, 7))
        xv[rows // 2, 2] = np.nan
        kv = rng.integers(-3, 4, size=(rows, 7))
        got, want = f(xv, kv), ref(xv, kv)
        for k, (g, w) in enumerate(zip(got, want)):
            assert g.dtype == w.dtype and g.shape == w.shape, (rows, k)
            np.testing.assert_allclose(g, w, rtol=1e-6, err_msg=f"{rows} rows, output {k}")
        assert np.isnan(got[0][2]) and np.isnan(got[1][2]) and np.isnan(got[2][2])
    with pytest.raises(ValueError, match="empty"):  # max of no rows: the reference's error
        f(np.zeros((0, 7)), np.zeros((0, 7), "int64"))


def test_reductions_run_inside_the_loop_of_their_input():
    X, Y = pt.dmatrices("X", "Y")
    F = pt.matrix("F", dtype="float32")
    K = pt.matrix("K", dtype="int8")
    outs = [
        (X * Y).sum(),
        pt.max(X * 2 - Y, axis=0),  # NaN propagates
        pt.min(pt.exp(X) + Y, axis=1),
        pt.prod(X * 0.5 + 1, axis=0),
        (F * F).sum(axis=1),  # float32, accumulated wider
        (K * 3).sum(axis=0),  # int8 summed as int64
        (X - Y).sum(axis=0) + (X - Y)[0],  # read twice: not fused
    ]
    f, ref = _whole([X, Y, F, K], outs), _ref([X, Y, F, K], outs)
    fused = [line for line in f.vm.whole.source.splitlines() if " + " in line.partition("  # ")[2]]
    assert fused and any("Max" in line for line in fused) and any("Sum" in line for line in fused)
    rng = np.random.default_rng(5)
    a = rng.normal(size=(6, 5))
    a[2, 3] = np.nan
    args = [
        a,
        rng.normal(size=(6, 5)),
        rng.normal(size=(6, 5)).astype("float32"),
        rng.integers(-9, 9, (6, 5)).astype("int8"),
    ]
    got, want = f(*args), ref(*args)
    for k, (g, w) in enumerate(zip(got, want)):
        assert g.dtype == w.dtype and g.shape == w.shape, k
        np.testing.assert_allclose(g, w, rtol=1e-5 if g.dtype == np.float32 else 1e-12, err_msg=str(k))
    assert np.isnan(got[1][3]) and np.isnan(got[2][2])
    empty = [np.zeros((0, 5)), np.zeros((0, 5)), np.zeros((0, 5), "float32"), np.zeros((0, 5), "int8")]
    with pytest.raises(ValueError) as want:
        ref(*empty)
    with pytest.raises(ValueError) as got:
        f(*empty)
    assert str(got.value).split("\n")[0] == str(want.value).split("\n")[0]


def test_outputs_alias_no_input_and_no_other_output():
    x, y = pt.dmatrix("x"), pt.dvector("y")
    a, b = np.arange(12.0).reshape(3, 4), np.arange(4.0)
    # views of an input (a slice, a transpose), an input itself, one variable given twice
    double = x * 2
    outs = [double, x[1:], x.T, y, double, (x + y).sum()]
    f = arignote.function([x, y], outs, mode="NUMBA")
    results = f(a, b)
    assert f.vm.fresh_outputs_now == [False]  # (checked by the caller on every call)
    for k, r in enumerate(results):
        assert not np.shares_memory(r, a) and not np.shares_memory(r, b), k
        assert not any(np.shares_memory(r, q) for q in results[:k]), k
    np.testing.assert_array_equal(results[1], a[1:])
    np.testing.assert_array_equal(results[2], a.T)
    # all fresh: no check; a C-contiguous copy of a strided or read-only input
    g = arignote.function([x, y], [x * 2, (x + y).sum(axis=0)], mode="NUMBA")
    ro = a.copy()
    ro.flags.writeable = False
    for value in (a, np.asfortranarray(a), a[:, ::-1].copy()[:, ::-1], ro):
        got = g(value, b)
        assert g.vm.direct_program[0] is g.vm.whole.program  # (no alias check to make)
        np.testing.assert_array_equal(got[0], value * 2)
        np.testing.assert_allclose(got[1], (value + b).sum(axis=0))
        assert not np.shares_memory(got[0], value)
    # a call the compiled function raises in runs on tier 1: the caller checks again
    with pytest.raises(ValueError):
        g(a, np.ones(3))
    assert g.vm.fresh_outputs_now == [False]


# -- the fallback, the tiering, the source ---------------------------------------------------


def test_a_graph_with_an_op_without_numba_runs_on_the_per_node_tiers():
    x = pt.vector("x")
    outs = [pt.sort(x) * 2 + 1, x.sum()]
    f, ref = arignote.function([x], outs, mode="NUMBA"), _ref([x], outs)
    assert f.vm.whole.state.startswith("tier 1")
    assert "SortOp" in f.vm.whole.reason or "Sort" in f.vm.whole.reason
    _check(f, ref, [np.array([3.0, 1.0, 2.0])], 1e-12)
    with pytest.raises(NoNumbaImpl, match="node 0"):
        plan_graph(f.maker.fgraph)


def test_a_graph_that_draws_stays_on_numpy_s_stream():
    from arignote.tensor.random.utils import RandomStream

    x = pt.dvector("x")
    fs = []
    for mode in ("NUMBA", "PYTHON"):
        srng = RandomStream(seed=7)
        fs.append(arignote.function([x], x + srng.normal(0, 1, size=x.shape), mode=mode))
    f, ref = fs
    assert f.vm.whole.state.startswith("tier 1")
    assert "normal_rv" in f.vm.whole.reason and "numpy.random.Generator" in f.vm.whole.reason
    v = np.zeros(5)
    for _ in range(2):  # the seeded stream, call after call
        np.testing.assert_array_equal(f(v), ref(v))


def test_fast_run_probes_compiles_in_the_background_and_measures(monkeypatch):
    monkeypatch.setattr(wg, "PROBE_CALLS", 3)
    monkeypatch.setattr(wg, "NODE_US", 1e9)  # (glue-bound, however loaded the machine is)
    ins, outs, args = eight_schools()
    mode = Mode(nl.NumbaLinker(jit="background"), "fast_run")
    f, ref = arignote.function(ins, outs, mode=mode), _ref(ins, outs)
    assert f.vm.whole.state == "probing"
    for _ in range(2 + wg.PROBE_TIMED):
        _check(f, ref, args, 1e-12)
    assert f.vm.whole.state in ("compiling", "trial")
    assert nl.wait_for_kernels(300)
    for _ in range(4 * wg.TRIAL_MAX + 1):  # (turns of two calls, the second one timed)
        _check(f, ref, args, 1e-12)
    # chosen by measurement: the whole-graph function, unless tier 1 measured faster
    assert f.vm.whole.state in ("in use", "tier 1 (faster than the whole-graph function)")
    assert set(f.vm.whole.timings) >= {"whole graph (µs)", "tier 1 (µs)"}


def test_large_arrays_stay_on_tier_1(monkeypatch):
    monkeypatch.setattr(wg, "PROBE_CALLS", 2)
    monkeypatch.setattr(wg, "NODE_US", 0.0)  # (every graph counts as array-bound)
    x = pt.vector("x")
    f = arignote.function([x], pt.exp(x) + 1, mode=Mode(nl.NumbaLinker(jit="background"), "fast_run"))
    for _ in range(1 + wg.PROBE_TIMED):
        f(np.ones(10))
    assert f.vm.whole.state == "tier 1 (array work dominates)"
    assert "per node" in f.vm.whole.reason


def test_source_has_one_line_per_node_and_no_constant_values():
    def fgraph_of(c):
        x, s = pt.vector("x"), pt.scalar("s")
        return _ref([x, s], [pt.exp(x * c) + s, (x * c).sum()]).maker.fgraph

    p2, p3 = plan_graph(fgraph_of(2.5)), plan_graph(fgraph_of(3.5))
    assert p2.key == p3.key and p2.source == p3.source
    assert "2.5" not in p2.source
    assert [float(v) for v in p2.consts[-1]] != [float(v) for v in p3.consts[-1]]
    body = p2.source.split("def kernel(")[1].splitlines()[1:]
    calls = [line for line in body if "  # " in line]
    # (one line per node; a reduction of an Elemwise's output only it reads shares the line)
    assert sum(1 + line.split("  # ")[1].count(" + ") for line in calls) == len(fgraph_of(2.5).toposort())
    x32 = pt.vector("x", dtype="float32")
    p32 = plan_graph(_ref([x32], [pt.exp(x32 * 2.5)]).maker.fgraph)
    assert p32.key != p2.key


def test_kernels_mode_keeps_per_node_kernels():
    x, y = pt.vectors("x", "y")
    f = arignote.function([x, y], pt.sum(x * y - x), mode="NUMBA_KERNELS")
    assert f.vm.whole is None and [s.state for s in f.vm.tier2] == ["tier 2"]


# -- scan: the whole loop compiled --------------------------------------------------------------


def _scans():
    v, y0 = pt.dvector("v"), pt.dvector("y0")
    M, acc0 = pt.dmatrix("M"), pt.dvector("acc0")
    x0, a = pt.dscalar("x0"), pt.dscalar("a")
    n = pt.lscalar("n")
    # a scalar recurrence with a non-sequence and a symbolic number of steps (0 included)
    xs, _ = arignote.scan(lambda x, a: x * a + 1.0, outputs_info=[x0], non_sequences=[a], n_steps=n)
    # taps on a sequence and on an output (two rows of initial value)
    fib, _ = arignote.scan(
        lambda s_prev, s, y2, y1: s + y1 - 0.5 * y2 + s_prev,
        sequences=[{"input": v, "taps": [-1, 0]}],
        outputs_info=[{"initial": y0, "taps": [-2, -1]}],
    )
    # several outputs: a vector state and an output not fed back (nit-sot), rows of a matrix
    (accs, twice), _ = arignote.scan(
        lambda row, acc, a: [acc + row * a, pt.exp(row) * 2],
        sequences=[M],
        outputs_info=[acc0, None],
        non_sequences=[a],
    )
    # backwards
    back, _ = arignote.scan(
        lambda e, acc: acc * 0.5 + e,
        sequences=[v],
        outputs_info=[pt.constant(np.float64(0.0))],
        go_backwards=True,
    )
    ins = [v, y0, M, acc0, x0, a, n]
    return ins, [xs, fib, accs, twice, back]


def test_scan_loops_compiled_match_the_python_loop():
    ins, outs = _scans()
    f, ref = _whole(ins, outs), _ref(ins, outs)
    assert "Scan" in _op_types(f)
    assert "def scan_" in f.vm.whole.source and "for t in range(n):" in f.vm.whole.source
    rng = np.random.default_rng(3)
    args = [rng.normal(size=9), np.array([0.5, -1.0]), rng.normal(size=(4, 3)), np.zeros(3), np.array(0.3)]
    for steps in (7, 1, 0):
        _check(f, ref, [*args, np.array(0.9), np.asarray(steps)], 1e-12)
    # a sequence too short for its taps: zero steps, as the Python loop gives
    short = [np.ones(1), *args[1:], np.array(0.9), np.asarray(3)]
    _check(f, ref, short, 1e-12)
    # a step that raises (rows of 2 added to a state of 3): the reference VM's error
    bad = [args[0], args[1], np.ones((4, 2)), *args[3:], np.array(0.9), np.asarray(3)]
    with pytest.raises(ValueError) as want:
        ref(*bad)
    with pytest.raises(ValueError) as got:
        f(*bad)
    assert str(got.value).split("\n")[0] == str(want.value).split("\n")[0]


def test_settled_tier2_nodes_are_written_out_again(monkeypatch):
    monkeypatch.setattr(wg, "PROBE_CALLS", 2)
    monkeypatch.setattr(wg, "NODE_US", 0.0)  # (no whole-graph function here)
    x, y = pt.vectors("x", "y")
    out = (x * y + x) * (y - 2.5)
    f = arignote.function([x, y], out, mode=Mode(nl.NumbaLinker(jit="background"), "fast_run"))
    (slot,) = f.vm.tier2  # the fused node runs through a tier-2 thunk while it is watched
    assert f.vm.whole.fallback is None
    a, b = np.linspace(0, 1, 5), np.linspace(1, 2, 5)
    for _ in range(70):
        np.testing.assert_allclose(f(a, b), (a * b + a) * (b - 2.5))
    assert slot.state == "tier 1 (small arrays)"
    # the graph generated again, the fused node written out as tier 1 writes it (no thunk)
    assert f.vm.whole.fallback is not None and "thunk" not in f.vm.direct_source
    np.testing.assert_allclose(f(a, b), (a * b + a) * (b - 2.5))


def test_constant_row_indices_are_checked_once_and_still_raise():
    """A constant index vector's least and greatest rows are found when the function is
    written (its bounds are constants of the source, which reads no index to check them);
    an index out of bounds for the runtime length still raises the reference VM's error."""
    v, w = pt.dvectors("v", "w")
    signed = pt.constant(np.array([0, 2, -3, 1, 2], dtype="int64"))
    unsigned = pt.constant(np.array([1, 0, 2], dtype="uint8"))
    empty = pt.constant(np.array([], dtype="int32"))
    rows = pt.constant(np.array([2, 0, 1, 0], dtype="int32"))  # signed, none negative
    outs = [
        AdvancedSubtensor1()(v, rows) - AdvancedIncSubtensor1()(v, w[:4], rows)[0],
        AdvancedSubtensor1()(v, signed),
        AdvancedIncSubtensor1()(v, w, signed),
        AdvancedSubtensor1()(v, unsigned) * 2,
        AdvancedIncSubtensor1()(v, w[:3], unsigned),
        AdvancedSubtensor1()(v, empty),
        AdvancedIncSubtensor1(set_instead_of_inc=True)(v, w[:0], empty),
    ]
    f, ref = _whole([v, w], outs), _ref([v, w], outs)
    src = f.vm.whole.source
    # the signed indices' functions: a gather, an increment, a set
    assert src.count("if idx.shape[0] and (lo < -n or hi >= n):") == 3
    assert src.count("if lo >= 0:") == 3  # (each with a loop without wraparound)
    assert "and hi >= n:" in src  # the unsigned one
    assert "lo = min(lo, idx[k])" not in src  # (no pass over a constant index)
    rng = np.random.default_rng(3)
    good = [rng.normal(size=3), rng.normal(size=5)]
    _check(f, ref, good, 1e-12)
    assert f.vm.whole.namespace["_whole"]()  # (the compiled function computes the call)
    longer = [rng.normal(size=7), rng.normal(size=5)]  # -3 is another row of a longer v
    _check(f, ref, longer, 1e-12)
    with pytest.raises(IndexError) as want:
        ref(np.ones(2), good[1])  # row 2 of 2
    with pytest.raises(IndexError) as got:
        f(np.ones(2), good[1])
    assert str(got.value).split("\n")[0] == str(want.value).split("\n")[0]
    _check(f, ref, good, 1e-12)
    assert f.vm.whole.state == "in use"


def test_the_trial_waits_for_per_node_kernels_in_flight(monkeypatch):
    monkeypatch.setattr(wg, "PROBE_CALLS", 2)
    x, y = pt.dvectors("x", "y")
    f = arignote.function(
        [x, y], [pt.exp(-(x**2)) * pt.sin(y)], mode=Mode(nl.NumbaLinker(jit="background"), "fast_run")
    )
    args = (np.linspace(-1, 1, 50), np.linspace(0, 2, 50))
    for _ in range(2 + wg.PROBE_TIMED):
        f(*args)
    assert nl.wait_for_kernels(300)
    whole = f.vm.whole
    in_flight = [True]
    whole.waiting = lambda: in_flight[0]
    for _ in range(3 * wg.TRIAL_MAX):  # (every call computed on tier 1, none timed)
        np.testing.assert_allclose(f(*args)[0], np.exp(-(args[0] ** 2)) * np.sin(args[1]))
    assert whole.state == "trial" and "tier 1 (µs)" not in whole.timings
    in_flight[0] = False
    for _ in range(4 * wg.TRIAL_MAX + 1):  # (turns of two calls, the second one timed)
        f(*args)
    assert whole.state in ("in use", "tier 1 (faster than the whole-graph function)")


def test_the_trial_times_the_second_call_of_each_turn(monkeypatch):
    """A turn is two calls of one tier, the second one timed: the first call after the other
    tier's pays for it (a 4000x4000 softmax on tier 1 took 42-89 ms right after a call of the
    whole-graph function, 22 ms after one of its own)."""
    monkeypatch.setattr(wg, "PROBE_CALLS", 2)
    monkeypatch.setattr(wg, "TRIAL_SECONDS", 1e9)  # (every trial TRIAL_MAX turns long)
    x, y = pt.dvectors("x", "y")
    f = arignote.function([x, y], [x * y + 1], mode=Mode(nl.NumbaLinker(jit="background"), "fast_run"))
    args = (np.linspace(-1, 1, 50), np.linspace(0, 2, 50))
    for _ in range(2 + wg.PROBE_TIMED):
        f(*args)
    assert nl.wait_for_kernels(300)
    whole = f.vm.whole
    assert whole.state == "trial" and whole.outputs_fresh()
    timed = []
    untimed = whole._tier1_time
    monkeypatch.setattr(whole, "_tier1_time", lambda: timed.append(len(seen)) or untimed())
    seen = []
    for _ in range(4 * wg.TRIAL_MAX):
        np.testing.assert_allclose(f(*args)[0], args[0] * args[1] + 1)
        seen.append("whole" if whole.fresh[0] else "tier 1")
    assert seen[:8] == ["whole", "whole", "tier 1", "tier 1"] * 2
    assert timed[:2] == [3, 7]  # (the second call of each tier-1 turn)
    assert whole.state in ("in use", "tier 1 (faster than the whole-graph function)")


def test_whole_graph_arrays_are_allocated_on_huge_pages():
    """Every ``np.empty`` of the whole-graph source is hugepages.empty (advised from 4 MiB,
    as NumPy's arrays are), under its name, with the module's hash in the import line."""
    hugepages = pytest.importorskip("arignote.link.numba.hugepages")  # (imports Numba)
    X = pt.dmatrix("X")
    f = arignote.function([X], [pt.special.softmax(X, axis=1), pt.exp(X).sum(axis=0)], mode="NUMBA")
    plan = plan_graph(f.vm.fgraph)
    assert "np.empty(" not in plan.source and f"{EMPTY_NAME}(" in plan.source
    assert f"from arignote.link.numba.hugepages import empty as {EMPTY_NAME}  # hugepages " in plan.source
    a = np.random.default_rng(0).normal(size=(700, 1000))  # (5.6 MB: advised)
    e = np.exp(a - a.max(axis=1, keepdims=True))
    got = f(a)
    np.testing.assert_allclose(got[0], e / e.sum(axis=1, keepdims=True), rtol=1e-12)
    np.testing.assert_allclose(got[1], np.exp(a).sum(axis=0), rtol=1e-12)
    for shape, dtype in (((), np.float64), ((3,), np.int64), ((1100, 1000), np.float32), ((0, 5), np.bool_)):
        out = hugepages.empty(shape, dtype)
        assert out.shape == shape and out.dtype == dtype and out.flags.c_contiguous


def test_matrix_products_run_in_numpys_blas():
    """A whole-graph function's matrix products call NumPy's BLAS library (one thread pool
    with tier 1 and the user's NumPy code), in every layout and size, as ``np.dot``."""
    numpy_blas = pytest.importorskip("arignote.link.numba.numpy_blas")  # (imports Numba)
    assert numpy_blas.FOUND  # (NumPy's wheels: scipy-openblas64; a system CBLAS elsewhere)
    A, B = pt.matrices("A", "B")
    v, w = pt.vectors("v", "w")
    outs = [A.dot(B), A.dot(B) * 2 + A.dot(B.T.dot(B)), A.dot(v), w.dot(A)]
    f = arignote.function([A, B, v, w], outs, mode="NUMBA")
    source = plan_graph(f.vm.fgraph).source
    assert "from arignote.link.numba.numpy_blas import matmul as _arignote_matmul" in source
    assert "from arignote.link.numba.numpy_blas import matvec as _arignote_matvec" in source
    assert "np.dot(" not in source
    rng = np.random.default_rng(5)
    a, b, x, y = rng.normal(size=(6, 4)), rng.normal(size=(4, 4)), rng.normal(size=4), rng.normal(size=6)
    for got, want in zip(f(a, b, x, y), [a @ b, (a @ b) * 2 + a @ (b.T @ b), a @ x, y @ a]):
        np.testing.assert_allclose(got, want, rtol=1e-12)

    @numba.njit
    def products(a, b, x, y):
        return numpy_blas.matmul(a, b), numpy_blas.matvec(a, x), numpy_blas.matvec(a.T, y)

    for dtype, tol in (("float64", 1e-12), ("float32", 1e-3)):
        for m, k, n in ((3, 4, 5), (64, 200, 70), (1, 7, 1), (0, 3, 4), (3, 0, 4), (5, 1, 6)):
            a = rng.normal(size=(m, k)).astype(dtype)
            b = rng.normal(size=(k, n)).astype(dtype)
            x, y = rng.normal(size=2 * k).astype(dtype)[::2], rng.normal(size=m).astype(dtype)
            strided = rng.normal(size=(m, 2 * k)).astype(dtype)[:, ::2]
            for p, q in ((a, b), (np.asfortranarray(a), b), (a, np.asfortranarray(b)), (strided, b)):
                got = products(p, q, x, y)
                for g, want in zip(got, (p @ q, p @ x, y @ p)):
                    assert g.dtype == dtype and g.shape == want.shape and g.flags.c_contiguous
                    np.testing.assert_allclose(g, want, rtol=tol, atol=tol)


def test_a_graph_of_no_node_stays_on_tier_1():
    """Nothing to compile: no outputs at all, or outputs that are inputs and constants."""
    f = arignote.function([], [], mode="NUMBA")
    assert f() == [] and f.vm.whole.state == "tier 1 (nothing to compile)"
    x = pt.dvector("x")
    g = arignote.function([x], [x, pt.constant(2.0)], mode="NUMBA")
    got = g(np.arange(3.0))
    np.testing.assert_array_equal(got[0], np.arange(3.0))
    np.testing.assert_array_equal(got[1], 2.0)
    assert g.vm.whole.state == "tier 1 (nothing to compile)"
