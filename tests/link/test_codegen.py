"""The generated-Python linker (``PyGenLinker``, FAST_RUN's): one Python function per graph,
whose source is public (``f.vm.source``), computing what the reference VM computes, with
the VM's error notes and its memory (values dropped after their last use)."""

from __future__ import annotations

import textwrap
import tracemalloc

import numpy as np
import pytest

import arignote
import arignote.tensor as pt
from arignote import In, Mode, Out, function
from arignote.compile.mode import FAST_RUN, predefined_linkers
from arignote.graph.fg import FunctionGraph
from arignote.ifelse import ifelse
from arignote.link.python.codegen import MAX_GENERATED_NODES, PyGenLinker, generate_source
from arignote.link.vm import VM, VMLinker
from arignote.tensor.special import softmax
from tests.toy import add, divmod_op, double

RNG = np.random.default_rng(12)
RAW = Mode(linker="pygen", optimizer=None)  # no rewrites: the golden sources stay put
VM_MODE = Mode(linker="vm")
GEN_MODE = Mode(linker="pygen")


def _golden(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


# -- the linker and the modes -------------------------------------------------------------------


def test_fast_run_links_generated_python_and_the_vm_stays_available():
    assert isinstance(FAST_RUN.linker, PyGenLinker)
    assert predefined_linkers["pygen"] == PyGenLinker()
    assert PyGenLinker() == PyGenLinker(allow_gc=True) != PyGenLinker(allow_gc=False)
    assert repr(PyGenLinker(allow_gc=False)) == "PyGenLinker(allow_gc=False)"
    x = pt.dvector("x")
    f = function([x], pt.exp(x) + 1, mode=FAST_RUN)
    assert callable(f.vm) and f.vm.source.startswith("def run():")
    assert f.vm.__globals__["_in_x"] is f.input_storage[0].storage  # its names
    assert not isinstance(f.vm, VM) and f.vm.lazy is False
    assert f.vm.storage_map[f.maker.fgraph.inputs[0]] is f.input_storage[0].storage
    assert f.output_storage[0] is f.vm.storage_map[f.maker.fgraph.outputs[0]]
    assert isinstance(function([x], pt.exp(x) + 1, mode=VM_MODE).vm, VM)


def test_a_graph_over_the_size_limit_links_with_the_vm():
    x = pt.dvector("x")
    y = x
    for _ in range(MAX_GENERATED_NODES // 2 + 1):
        y = pt.exp(y) * x  # (fusion off: one node per op)
    no_fusion = Mode(linker="pygen").excluding("fusion")
    f = function([x], y, mode=no_fusion)
    assert len(f.maker.fgraph.apply_nodes) > MAX_GENERATED_NODES and isinstance(f.vm, VM)
    small = function([x], pt.exp(x) * x, mode=no_fusion)
    assert not isinstance(small.vm, VM)
    v = np.full(3, -30.0)
    np.testing.assert_allclose(f(v), function([x], y, mode=VM_MODE)(v))


def test_profiled_functions_and_lazy_graphs_run_on_the_vm():
    x = pt.dvector("x")
    f = function([x], pt.exp(x) + 1, profile=True)
    assert isinstance(f.vm, VM)
    np.testing.assert_allclose(f([0.0]), [2.0])
    c = pt.iscalar("c")
    g = function([c, x], ifelse(c, pt.exp(x), x - 1))
    assert isinstance(g.vm, VM) and g.vm.lazy is True
    with pytest.raises(ValueError, match="lazy Op"):
        generate_source(g.maker.fgraph)


# -- golden sources ---------------------------------------------------------------------------


def test_source_of_a_small_elemwise_graph():
    x, y = pt.dvector("x"), pt.dvector("y")
    f = function([x, y], pt.exp(x) * y, mode=RAW)
    assert f.vm.source == _golden(
        """
        def run():
            try:
                x = _in_x[0]
                y = _in_y[0]
                t0 = _exp(x)  # Exp
                if _type(t0) is not _ndarray or t0.dtype is not _float64: t0 = _finish(t0, (x,), _float64, 1, None)
                if t0.shape != y.shape: _check1(_node1, [t0, y])
                t1 = _multiply(t0, y)  # Mul
                if _type(t1) is not _ndarray or t1.dtype is not _float64: t1 = _finish(t1, (t0, y), _float64, 1, None)
                del t0
                _out0[0] = t1
            except Exception as _err:
                _fail(_err)
                raise
        """
    )
    np.testing.assert_allclose(f([0.0, 1.0], [2.0, 3.0]), [2.0, 3 * np.e])


def test_source_with_a_constant_does_not_hold_its_value():
    s = pt.dscalar("s")
    f = function([s], s + 2.5, mode=RAW)
    g = function([s], s + 7.0, mode=RAW)
    assert (
        f.vm.source
        == g.vm.source
        == _golden(
            """
        def run():
            try:
                s = _in_s[0]
                t0 = _add(s, _k, out=...)  # Add
                if _type(t0) is not _ndarray or t0.dtype is not _float64: t0 = _finish(t0, (s, _k), _float64, 0, None)
                _out0[0] = t0
            except Exception as _err:
                _fail(_err)
                raise
        """
        )
    )
    assert "2.5" not in f.vm.source and "7" not in g.vm.source
    assert float(f(1.0)) == 3.5 and float(g(1.0)) == 8.0


def test_one_element_constants_are_passed_as_0d_arrays():
    # (NumPy sets up a length-1 dimension's broadcasting on every call; a 0-d array costs
    # nothing and gives the same result where another input has the output's rank)
    x, m = pt.dvector("x"), pt.dmatrix("m")
    f = function([x, m], [x + np.ones(1), m * np.full((1, 1), 2.0), pt.exp(m) - np.ones((1, 3))], mode=RAW)
    ks = {k: v for k, v in f.vm.__globals__.items() if k.startswith("_k")}
    shapes = sorted(v.shape for v in ks.values())
    assert shapes == [(), (), (1, 3)], shapes  # (a row of three stays a row)
    for shape in [(1,), (4,)]:
        a, b = np.arange(1.0, 1.0 + np.prod(shape)), np.arange(6.0).reshape(2, 3)[: shape[0]]
        got = f(a, b)
        want = [a + 1, b * 2.0, np.exp(b) - 1.0]
        for g, w in zip(got, want):
            assert g.shape == w.shape and g.dtype == np.float64
            np.testing.assert_allclose(g, w)
    (one,) = function([x], [x * np.full((1,), 3.0)], mode=RAW)(np.array([2.0]))  # shape (1,) kept
    assert one.shape == (1,) and one[0] == 6.0


def test_source_of_a_multi_output_node():
    a, b = double("a"), double("b")
    q, r = divmod_op(a, b)
    f = function([a, b], add(q, r), mode=RAW)
    assert f.vm.source == _golden(
        """
        def run():
            try:
                _out0[0] = None
                _thunk0()  # DivMod
                if _s_0_0[0] is None or _s_0_1[0] is None: _unset(_node0, [_s_0_0, _s_0_1])
                _thunk1()  # add
                if _out0[0] is None: _unset(_node1, [_out0])
                _s_0_0[0] = _s_0_1[0] = None
            except Exception as _err:
                _fail(_err)
                raise
        """
    )
    assert f(7.0, 2.0) == 4.0


def test_source_of_a_chain_reuses_dead_names_and_checks_only_unproven_results():
    x = pt.dvector("x")
    f = function([x], pt.exp(pt.sin(x)).sum(), mode=RAW)
    assert f.vm.source == _golden(
        """
        def run():
            try:
                x = _in_x[0]
                _out0[0] = None
                t0 = _sin(x)  # Sin
                if _type(t0) is not _ndarray or t0.dtype is not _float64: t0 = _finish(t0, (x,), _float64, 1, None)
                t0 = _exp(t0)  # Exp
                _s_t0[0] = t0
                _thunk2()  # Sum{axes=None}
                del t0
                _s_t0[0] = None
            except Exception as _err:
                _fail(_err)
                raise
        """
    )
    assert float(f(np.zeros(3))) == 3.0


def test_a_graph_with_ifelse_has_no_source_and_keeps_its_laziness():
    c = pt.iscalar("c")
    x = pt.dvector("x")
    calls = []

    class Spy(arignote.graph.op.Op):
        __props__ = ()

        def make_node(self, v):
            return arignote.graph.basic.Apply(self, [v], [v.type()])

        def perform(self, node, inputs, out):
            calls.append(1)
            out[0][0] = inputs[0] * 10

    f = function([c, x], ifelse(c, Spy()(x), x - 1))
    assert getattr(f.vm, "source", None) is None and isinstance(f.vm, VM)
    np.testing.assert_allclose(f(0, [1.0]), [0.0])
    assert calls == []  # the untaken branch never ran
    np.testing.assert_allclose(f(1, [1.0]), [10.0])
    assert calls == [1]


def test_locals_are_named_after_the_graphs_variables():
    x = pt.dvector("x")
    h = pt.exp(x)
    h.name = "hidden"
    weird = pt.dvector("2 bad-name")
    f = function([x, weird], [pt.log(h) + weird], mode=RAW)
    src = f.vm.source
    assert "hidden = _exp(x)" in src and "v = _in_2_bad_name[0]" in src
    kw = pt.dvector("lambda")
    assert "v = _in_lambda[0]" in function([kw], pt.exp(kw), mode=RAW).vm.source


def test_line_nodes_map_every_statement_to_its_node():
    x, y = pt.dvector("x"), pt.dvector("y")
    f = function([x, y], pt.exp(x) * y, mode=RAW)
    lines = f.vm.source.splitlines()
    exp_node, mul_node = f.maker.fgraph.toposort()
    assert f.vm.line_nodes[next(i for i, t in enumerate(lines, 1) if "_exp(x)" in t)] is exp_node
    assert f.vm.line_nodes[next(i for i, t in enumerate(lines, 1) if "_multiply(" in t)] is mul_node


# -- values: the same as the VM's -------------------------------------------------------------


def _mats(*shapes):
    return [RNG.standard_normal(s) for s in shapes]


@pytest.mark.parametrize(
    "build",
    [
        pytest.param(lambda x, y: pt.exp(x) * y + 1, id="elemwise"),
        pytest.param(lambda x, y: pt.tanh(x * 0.9) - pt.sqr(y) / 3, id="fused"),
        pytest.param(lambda x, y: pt.cast(x, "float32") * 2, id="cast"),
        pytest.param(lambda x, y: x + y[0], id="broadcast"),
        pytest.param(lambda x, y: [x.sum(axis=0), y.max(axis=1), (x * y).mean()], id="reductions"),
        pytest.param(lambda x, y: [x[1:, ::2], y[0, 1], x[pt.argmax(y[:, 0])]], id="indexing"),
        pytest.param(lambda x, y: pt.dot(x, y.T) + 1, id="dot"),
        pytest.param(lambda x, y: softmax(x, axis=1), id="softmax"),
        pytest.param(lambda x, y: [x, x * 2, x * 2, y], id="outputs-that-are-inputs-and-repeated"),
        pytest.param(lambda x, y: [pt.constant(np.arange(3.0)), x + 1], id="constant-output"),
        pytest.param(lambda x, y: pt.add(x, y, x, y, 1.0), id="n-ary"),
        pytest.param(lambda x, y: pt.maximum(x, 0) ** 2 - pt.abs(y) + pt.eq(x, y), id="mixed"),
    ],
)
@pytest.mark.parametrize("optimizer", ["fast_run", None])
def test_values_match_the_vm(build, optimizer):
    x, y = pt.dmatrix("x"), pt.dmatrix("y")
    outs = build(x, y)
    xv, yv = _mats((3, 4), (3, 4))
    kw = {"on_unused_input": "ignore"}
    gen = function([x, y], outs, mode=Mode(linker="pygen", optimizer=optimizer), **kw)
    ref = function([x, y], outs, mode=Mode(linker="vm", optimizer=optimizer), **kw)
    assert "def run" in gen.vm.source
    want = ref(xv, yv)
    want = want if isinstance(want, list) else [want]
    for _ in range(2):  # a second call (buffers, cleared cells) agrees too
        got = gen(xv, yv)
        got = got if isinstance(got, list) else [got]
        assert len(got) == len(want)
        for g, w in zip(got, want):
            np.testing.assert_allclose(np.asarray(g), np.asarray(w))
            assert np.asarray(g).dtype == np.asarray(w).dtype


def test_outputs_are_fresh_and_inputs_untouched():
    x = pt.dvector("x")
    f = function([x], [x, x * 1.0, pt.exp(x) + 1])
    xv = np.arange(3.0)
    a, b, c = f(xv)
    assert a is not xv and not np.shares_memory(a, xv) and not np.shares_memory(b, xv)
    a2, _, c2 = f(xv)
    assert c2 is not c and not np.shares_memory(c, c2)  # no_recycling: a new array each call
    np.testing.assert_array_equal(xv, np.arange(3.0))


def test_borrowed_outputs_and_inputs():
    x = pt.dvector("x")
    f = function([In(x, borrow=True)], Out(x, borrow=True))
    xv = np.arange(3.0)
    assert f(xv) is xv
    g = function([x], Out(pt.exp(x) * 2, borrow=True))
    np.testing.assert_allclose(g(np.zeros(2)), [2.0, 2.0])


def test_ifelse_both_branches_match_the_vm():
    c = pt.iscalar("c")
    x = pt.dvector("x")
    out = ifelse(c, pt.exp(x) * 2, x - 1) + x
    f, g = function([c, x], out), function([c, x], out, mode=VM_MODE)
    for cv in (0, 1):
        np.testing.assert_allclose(f(cv, [1.0, 2.0]), g(cv, [1.0, 2.0]))


def test_shared_updates():
    w = arignote.shared(np.ones(3), name="w")
    n = arignote.shared(np.int64(0), name="n")
    x = pt.dvector("x")
    f = function([x], (w * x).sum(), updates=[(w, w * 0.5 + x), (n, n + 1)], mode=FAST_RUN)
    assert "def run" in f.vm.source
    assert float(f(np.ones(3))) == 3.0
    np.testing.assert_allclose(w.get_value(), [1.5, 1.5, 1.5])
    assert float(f(np.ones(3))) == 4.5
    assert int(n.get_value()) == 2
    # swapping updates: both read before either is written
    a, b = arignote.shared(np.zeros(2)), arignote.shared(np.ones(2))
    swap = function([], [], updates=[(a, b), (b, a)])
    swap()
    np.testing.assert_array_equal(a.get_value(), [1, 1])
    np.testing.assert_array_equal(b.get_value(), [0, 0])


def test_multiple_outputs_of_a_multi_output_node():
    a, b = double("a"), double("b")
    q, r = divmod_op(a, b)
    f = function([a, b], [q, r, add(q, r)], mode=RAW)
    g = function([a, b], [q, r, add(q, r)], mode=Mode(linker="vm", optimizer=None))
    assert f(17.0, 5.0) == g(17.0, 5.0) == [3.0, 2.0, 5.0]


def test_generated_source_for_a_function_graph():
    x = pt.dvector("x")
    fg = FunctionGraph([x], [pt.exp(x)], clone=True)
    assert "_exp(x)" in generate_source(fg)


def test_copies_and_pickles_relink():
    import pickle

    x = pt.dvector("x")
    f = function([x], pt.exp(x) * 2, mode=FAST_RUN)  # (tier 1: its generated source)
    g = f.copy()
    h = pickle.loads(pickle.dumps(f))
    for fn in (g, h):
        assert fn.vm is not f.vm and fn.vm.source == f.vm.source
        np.testing.assert_allclose(fn([0.0]), [2.0])


def test_allow_gc_false_keeps_the_values_in_their_cells():
    x = pt.dvector("x")
    f = function(
        [x], pt.exp(pt.exp(x) + 1).sum(), mode=Mode(linker=PyGenLinker(allow_gc=False), optimizer=None)
    )
    f(np.zeros(2))
    inner = [v for v in f.vm.storage_map if v.owner is not None]
    assert inner and all(f.vm.storage_map[v][0] is not None for v in inner)


# -- errors name the node ---------------------------------------------------------------------


def _error(f, *args):
    with pytest.raises(Exception) as info:
        f(*args)
    return info.value


@pytest.mark.parametrize(
    "build, values",
    [
        pytest.param(lambda x, y: pt.exp(x) * y, ([1.0, 2.0], [1.0, 2.0, 3.0]), id="written-out"),
        pytest.param(lambda x, y: pt.dot(x, y), ([1.0, 2.0], [1.0, 2.0, 3.0]), id="thunk"),
    ],
)
def test_an_error_names_the_node_as_the_vm_does(build, values):
    x, y = pt.dvector("x"), pt.dvector("y")
    out = build(x, y)
    gen = _error(function([x, y], out, mode=RAW), *values)
    ref = _error(function([x, y], out, mode=Mode(linker="vm", optimizer=None)), *values)
    assert type(gen) is type(ref) and str(gen) == str(ref)
    assert gen.__notes__ == ref.__notes__
    assert "Apply node that caused the error" in gen.__notes__[0]


def test_an_op_that_leaves_its_output_unset():
    class Lazy(arignote.graph.op.Op):
        __props__ = ()

        def make_node(self, v):
            return arignote.graph.basic.Apply(self, [v], [v.type()])

        def perform(self, node, inputs, out):
            pass

    x = pt.dvector("x")
    f = function([x], Lazy()(x) + 1, mode=RAW)
    err = _error(f, [1.0])
    assert isinstance(err, ValueError) and "did not set output 0" in str(err)
    assert "Lazy" in err.__notes__[0]


# -- memory -----------------------------------------------------------------------------------


def _peak_of_chain(linker, n=12, size=250_000):
    x = pt.dvector("x")
    out = x
    for _ in range(n):
        out = pt.sin(out)  # no rewrites: n nodes, each a new array
    f = function([x], out.sum(), mode=Mode(linker=linker, optimizer=None))
    xv = np.zeros(size)
    f(xv)
    tracemalloc.start()
    try:
        f(xv)
        return tracemalloc.get_traced_memory()[1] / xv.nbytes
    finally:
        tracemalloc.stop()


def test_a_long_chain_does_not_keep_its_intermediates():
    peak = _peak_of_chain(PyGenLinker())
    assert peak < 3.5  # two arrays at a time (a node's input and output), not twelve
    assert _peak_of_chain(VMLinker()) < 3.5
    assert _peak_of_chain(PyGenLinker(allow_gc=False)) > 10  # (the check is not vacuous)
