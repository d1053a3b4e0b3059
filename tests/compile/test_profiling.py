"""ProfileStats: what ``function(..., profile=...)`` records and what ``summary`` prints."""

from __future__ import annotations

import io
import math
import pickle
import re

import numpy as np
import pytest

import arignote
import arignote.tensor as pt
from arignote.compile.debug import profiling
from arignote.compile.debug.profiling import ProfileStats, fast_impls, register_fast_impl
from arignote.compile.mode import Mode
from arignote.graph.basic import Apply
from arignote.graph.op import Op
from arignote.link.python import has_fast_impl
from arignote.tensor.elemwise import CAReduce, DimShuffle, Elemwise

# no rewrites: the compiled graph is the one built, so node counts are known
PLAIN = Mode(linker="vm", optimizer=None)
PLAIN_NOGC = Mode(linker="vm_nogc", optimizer=None)

N_CALLS = 4


def _text(stats: ProfileStats, **kwargs) -> str:
    buf = io.StringIO()
    stats.summary(file=buf, **kwargs)
    return buf.getvalue()


@pytest.fixture
def profiled():
    """exp(x) @ y + sum(x), and x * 2: several nodes, some Ops repeated, run N_CALLS times."""
    x = pt.matrix("x")
    y = pt.matrix("y")
    out = pt.exp(x).dot(y) + pt.sum(x)
    f = arignote.function([x, y], [out, x * 2], profile=True, mode=PLAIN)
    a = np.random.default_rng(0).random((3, 4))
    b = np.random.default_rng(1).random((4, 5))
    for _ in range(N_CALLS):
        f(a, b)
    return f, a, b


# -- counts and times ---------------------------------------------------------------------


def test_counts_per_node_and_per_call(profiled):
    f, _, _ = profiled
    stats = f.profile
    nodes = f.maker.fgraph.toposort()
    assert len(nodes) >= 6
    assert stats.fct_callcount == N_CALLS
    assert stats.apply_callcount == dict.fromkeys(nodes, N_CALLS)
    assert set(stats.apply_time) == set(nodes)
    assert stats.nb_nodes == len(nodes)
    # run order is the toposort
    assert list(stats.apply_time) == nodes
    assert [stats.node_id(n) for n in nodes] == [str(k) for k in range(len(nodes))]


def test_times_positive_and_nested_in_calls(profiled):
    f, _, _ = profiled
    stats = f.profile
    assert stats.fct_call_time > 0
    assert all(t > 0 for t in stats.apply_time.values())
    node_time = stats.node_time()
    assert node_time == pytest.approx(math.fsum(stats.apply_time.values()))
    assert 0 < node_time <= stats.fct_call_time


def test_class_and_op_aggregation(profiled):
    f, _, _ = profiled
    stats = f.profile
    nodes = f.maker.fgraph.toposort()
    by_class: dict = {}
    for n in nodes:
        by_class.setdefault(type(n.op), []).append(n)
    assert stats.class_nodes() == {c: len(ns) for c, ns in by_class.items()}
    assert stats.class_callcount() == {c: len(ns) * N_CALLS for c, ns in by_class.items()}
    class_time = stats.class_time()
    for c, ns in by_class.items():
        assert class_time[c] == pytest.approx(sum(stats.apply_time[n] for n in ns))
    assert stats.class_nodes()[Elemwise] == 3  # Exp, Add, Mul
    # equal Ops are one row: both ExpandDims{axes=(0, 1)} nodes
    expand = [n.op for n in nodes if isinstance(n.op, DimShuffle)]
    assert len(expand) == 2 and expand[0] == expand[1]
    assert stats.op_nodes()[expand[0]] == 2
    assert stats.op_callcount()[expand[0]] == 2 * N_CALLS
    assert sum(stats.op_nodes().values()) == len(nodes)
    assert math.fsum(stats.op_time().values()) == pytest.approx(stats.node_time())
    assert set(stats.op_impl()) == set(stats.op_time())
    assert set(stats.class_impl()) == set(by_class)


def test_lazy_graph_counts_only_what_ran():
    from arignote.ifelse import ifelse

    x = pt.vector("x")
    c = pt.scalar("c")
    f = arignote.function([c, x], ifelse(c > 0, pt.exp(x), pt.sin(x)), profile=True, mode=PLAIN)
    for v in (1.0, 1.0, -1.0):
        f(v, np.ones(3))
    stats = f.profile
    counts = {str(n): k for n, k in stats.apply_callcount.items()}
    assert counts["Exp(x)"] == 2 and counts["Sin(x)"] == 1
    assert stats.nb_nodes == len(f.maker.fgraph.apply_nodes)
    assert stats.node_time() <= stats.fct_call_time
    assert "Sin(x)" in _text(stats)


# -- memory -------------------------------------------------------------------------------


def test_output_sizes_equal_nbytes():
    x = pt.matrix("x")
    y = pt.matrix("y")
    out = pt.exp(x).dot(y) + pt.sum(x)
    f = arignote.function([x, y], [out, x.astype("float32")], profile=True, mode=PLAIN_NOGC)
    f(np.ones((3, 4)), np.ones((4, 5)))
    sizes = f.profile.output_sizes()
    assert set(sizes) == set(f.maker.fgraph.apply_nodes)
    storage = f.vm.storage_map  # allow_gc=False: every value is still there
    for node, node_sizes in sizes.items():
        assert node_sizes == [storage[v][0].nbytes for v in node.outputs], node
    shapes = {str(n): f.profile.variable_shape[n.outputs[0]] for n in sizes}
    assert shapes["Exp(x)"] == (3, 4)
    assert shapes["Dot(Exp.0, y)"] == (3, 5)
    assert shapes["Sum{axes=None}(x)"] == ()
    assert f.profile.variable_size(f.maker.fgraph.outputs[1]) == 3 * 4 * 4  # float32
    assert f.profile.variable_shape[f.maker.fgraph.inputs[0]] == (3, 4)  # inputs too


def test_sizes_follow_latest_call():
    x = pt.vector("x")
    f = arignote.function([x], pt.exp(x), profile=True, mode=PLAIN)
    f(np.ones(10))
    f(np.ones(3))
    (node,) = f.maker.fgraph.apply_nodes
    assert f.profile.output_sizes() == {node: [24]}


def test_peak_memory_from_run_order():
    x = pt.vector("x")
    a = pt.exp(x)
    b = pt.sin(a)
    c = pt.cos(b)
    f = arignote.function([x], c, profile=True, mode=PLAIN)
    f(np.ones(1000))
    # exp, then sin (exp still alive while sin runs), exp freed, then cos
    assert f.profile.peak_memory() == 16000
    assert f.profile.peak_memory(allow_gc=False) == 24000


def test_peak_memory_keeps_outputs_and_skips_views():
    x = pt.vector("x")
    a = pt.exp(x)
    col = pt.expand_dims(a, 1)  # a view of a: allocates nothing, keeps a alive
    out = pt.sin(col)
    f = arignote.function([x], [out, pt.cos(x)], profile=True, mode=PLAIN)
    f(np.ones(100))
    text = _text(f.profile)
    view_row = next(line for line in text.splitlines() if "ExpandDims" in line and "B " in line)
    assert " v " in view_row
    # exp (800) + sin (800) alive together; cos (800) runs with sin kept as an output
    assert f.profile.peak_memory() == 1600
    assert f.profile.peak_memory(allow_gc=False) == 2400


def test_generic_type_values_not_kept_alive():
    from tests.toy import double

    class Halve(Op):
        __props__ = ()

        def make_node(self, v):
            return Apply(self, [v], [double()])

        def perform(self, node, inputs, output_storage):
            output_storage[0][0] = inputs[0] / 2

    v = double("v")
    f = arignote.function([v], Halve()(v), profile=True, mode=PLAIN)
    assert f(3.0) == 1.5
    out = f.maker.fgraph.outputs[0]
    info = f.profile.variable_shape[out]
    assert not isinstance(info, float)  # a size, not the value itself
    assert f.profile.variable_size(out) == double.get_size(1.5)
    assert "Halve(v)" in _text(f.profile)


def test_profile_memory_off():
    x = pt.vector("x")
    stats = ProfileStats(message="no memory", profile_memory=False)
    f = arignote.function([x], pt.exp(x), profile=stats, mode=PLAIN)
    f(np.ones(3))
    assert stats.variable_shape == {}
    assert stats.fct_callcount == 1
    assert "not recorded" in _text(stats)


# -- flops --------------------------------------------------------------------------------


class Scale(Op):
    """2 * x, declaring one flop per element."""

    __props__ = ()

    def make_node(self, x):
        x = pt.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0] * 2

    def flops(self, inputs, outputs):
        assert inputs[0] == outputs[0]
        return math.prod(inputs[0])


class BrokenFlops(Scale):
    def flops(self, inputs, outputs):
        raise RuntimeError("no idea")


def test_flops_from_op_hook():
    x = pt.matrix("x")
    node_out = Scale()(pt.exp(x))
    f = arignote.function([x], node_out, profile=True, mode=PLAIN)
    for _ in range(3):
        f(np.ones((500, 400)))
    stats = f.profile
    flops = stats.apply_flops()
    (scale_node,) = [n for n in stats.apply_time if isinstance(n.op, Scale)]
    assert flops == {scale_node: 200000.0}  # Exp defines no flops: no entry
    text = _text(stats)
    assert "<MFlops>" in text and "<MFlops/s>" in text
    row = next(line for line in text.splitlines() if line.rstrip().endswith("Scale(Exp.0)"))
    rate = 200000 * 3 / stats.apply_time[scale_node] / 1e6
    assert " 0.2 " in row
    assert f"{rate:.4g}" in row


def test_flops_hook_that_raises_is_reported():
    x = pt.vector("x")
    f = arignote.function([x], BrokenFlops()(x), profile=True, mode=PLAIN)
    f(np.ones(3))
    assert f.profile.apply_flops() == {}
    text = _text(f.profile)
    assert "error" in text
    assert "RuntimeError: no idea" in text


# -- compile ------------------------------------------------------------------------------


def test_compile_times_recorded():
    x = pt.vector("x")
    f = arignote.function([x], pt.exp(x) + 1, profile=True)  # default mode: all stages
    stats = f.profile
    assert stats.n_compiles == 1
    assert stats.build_time > 0 and stats.linker_time > 0 and stats.rewriting_time > 0
    assert stats.compile_time == pytest.approx(stats.build_time + stats.rewriting_time + stats.linker_time)
    assert set(stats.rewrite_stage_time) == set(f.maker.rewrite_timings)
    assert "merge" in stats.rewrite_stage_time
    assert math.fsum(stats.rewrite_stage_time.values()) <= stats.rewriting_time
    text = _text(stats)
    section = text[text.index("Compile time") :]
    assert "build" in section and "rewrite" in section and "link" in section
    for stage in stats.rewrite_stage_time:
        assert f"{stage}:" in section


def test_record_compile_directly():
    stats = ProfileStats()
    stats.record_compile(build=0.5, rewrite=0.25, link=0.125, stages={"merge": 0.1}, validate=0.01)
    stats.record_compile(build=0.5, stages={"merge": 0.1, "fusion": 0.05})
    assert stats.n_compiles == 2
    assert stats.build_time == 1.0
    assert stats.rewrite_stage_time == {"merge": 0.2, "fusion": 0.05}
    assert stats.other_compile_time == {"validate": 0.01}
    assert stats.compile_time == pytest.approx(1.385)
    assert "validate" in _text(stats)


def test_record_compile_with_fgraph_fixes_order_before_any_call():
    x = pt.vector("x")
    f = arignote.function([x], pt.sin(pt.exp(x)), mode=PLAIN)
    stats = ProfileStats(message="direct")
    stats.record_compile(build=0.0, fgraph=f.maker.fgraph)
    assert stats.nb_nodes == 2
    vm, _ = f.maker.mode.linker.make_vm(
        f.maker.fgraph, [c.storage for c in f.input_storage], [], profile=stats
    )
    f.input_storage[0].storage[0] = np.ones(5)
    vm()
    nodes = f.maker.fgraph.toposort()
    assert [stats.node_id(n) for n in nodes] == ["0", "1"]
    assert stats.peak_memory() == 80  # exp freed after sin; sin kept (an output)


# -- the summary --------------------------------------------------------------------------


def test_summary_sections_and_node_names(profiled, capsys):
    f, _, _ = profiled
    text = _text(f.profile)
    for heading in ("Function profiling", "Class", "Ops", "Apply", "Memory profile", "Compile time"):
        assert f"\n{heading}\n" in f"\n{text}"
    for node in f.maker.fgraph.apply_nodes:
        assert str(node) in text
    assert "arignote.tensor.elemwise.Elemwise" in text
    assert f"Time in {N_CALLS} call(s)" in text
    assert "Message: function" in text
    assert "Peak" in text
    # summary() defaults to stdout, and str() is the same text
    f.profile.summary()
    printed = capsys.readouterr().out
    assert "Function profiling" in printed and "Exp(x)" in printed
    assert str(f.profile).splitlines()[0] == "Function profiling"


def test_summary_truncates_tables(profiled):
    f, _, _ = profiled
    n = len(f.maker.fgraph.apply_nodes)
    text = _text(f.profile, n_ops_to_print=1, n_apply_to_print=2)
    assert f"({n - 2} more Apply nodes" in text
    apply_section = text[text.index("\nApply\n") : text.index("Memory profile")]
    assert len(re.findall(r"^ +[0-9.]+% ", apply_section, flags=re.MULTILINE)) == 2


def test_summary_after_zero_calls(capsys):
    x = pt.vector("x")
    f = arignote.function([x], pt.exp(x), profile=True)
    text = _text(f.profile)
    assert "Time in 0 call(s)" in text
    assert "no node has run yet" in text
    assert "Compile time" in text
    assert f.profile.peak_memory() == 0
    assert f.profile.summary() is None
    assert "Function profiling" in capsys.readouterr().out
    # a ProfileStats nobody used
    empty = ProfileStats()
    assert "no compile recorded" in _text(empty)
    assert repr(empty).startswith("<ProfileStats")


def test_slow_path_is_flagged(monkeypatch):
    # exp(x) @ y + cumsum(x).sum(): the cumulative sum (CumOp) has no fast implementation
    x, y = pt.matrix("x"), pt.matrix("y")
    out = pt.exp(x).dot(y) + pt.cumsum(x, axis=0).sum()
    f = arignote.function([x, y], [out, x * 2], profile=True, mode=PLAIN)
    for _ in range(N_CALLS):
        f(np.random.default_rng(0).random((3, 4)), np.random.default_rng(1).random((4, 5)))
    stats = f.profile
    nodes = f.maker.fgraph.toposort()
    # the Python backend has thunks of its own for Elemwise, DimShuffle and CAReduce; the
    # other nodes run through perform: the slow path
    slow = stats.slow_nodes()
    assert slow == [n for n in stats.apply_time if not has_fast_impl(n.op)]
    assert slow and not any(isinstance(n.op, (Elemwise, DimShuffle, CAReduce)) for n in slow)
    assert fast_impls(nodes[0].op) == (("python",) if has_fast_impl(nodes[0].op) else ())
    assert stats.class_impl()[Elemwise] == "python"
    assert stats.class_impl()[DimShuffle] == "python"
    slow_class = type(slow[0].op)
    assert stats.class_impl()[slow_class] == "perform*"
    text = _text(stats)
    assert "perform*" in text and " python " in text
    assert f"Nodes on the slow path (perform, no fast implementation): {len(slow)} of {len(nodes)}" in text
    assert "* slow path" in text

    # another backend that has a fast implementation takes the Op off the slow path
    monkeypatch.setattr(profiling, "_FAST_IMPLS", dict(profiling._FAST_IMPLS))
    register_fast_impl("toy", lambda op: isinstance(op, slow_class))
    assert fast_impls(slow[0].op) == ("toy",)
    assert not any(isinstance(n.op, slow_class) for n in stats.slow_nodes())
    assert stats.class_impl()[slow_class] == "perform"

    stats.record_impl(nodes[-1], "numba")
    assert stats.impl_of(nodes[-1]) == "numba"
    assert not stats.is_slow(nodes[-1])
    row = next(line for line in _text(stats).splitlines() if line.endswith(str(nodes[-1])))
    assert " numba " in row


def test_an_op_s_own_thunk_is_not_the_slow_path():
    class OwnThunk(Op):
        __props__ = ()

        def make_node(self, x):
            return Apply(self, [x], [x.type()])

        def make_thunk(self, node, storage_map, compute_map, no_recycling, impl=None):
            (i0,), (o0,) = [storage_map[v] for v in node.inputs], [storage_map[v] for v in node.outputs]

            def thunk():
                o0[0] = -i0[0]
                compute_map[node.outputs[0]][0] = True

            return thunk

    x = pt.vector("x")
    f = arignote.function([x], OwnThunk()(x), profile=True, mode=PLAIN)
    f(np.ones(2, dtype=x.dtype))
    (node,) = f.maker.fgraph.toposort()
    assert f.profile.impl_of(node) == "make_thunk"
    assert not f.profile.is_slow(node)


# -- profile argument of function ---------------------------------------------------------


def test_profile_argument_forms():
    x = pt.vector("x")
    assert arignote.function([x], x + 1).profile is None
    assert arignote.function([x], x + 1, profile=True).profile.message == "function"
    assert arignote.function([x], x + 1, profile=True, name="f").profile.message == "f"
    named = arignote.function([x], x + 1, profile="my profile")
    assert isinstance(named.profile, ProfileStats)
    assert named.profile.message == "my profile"
    named(np.ones(2))
    assert "Message: my profile" in _text(named.profile)


def test_shared_profile_between_two_functions():
    x = pt.vector("x")
    stats = ProfileStats(message="both")
    f = arignote.function([x], pt.exp(x) + 1, profile=stats, mode=PLAIN)
    g = arignote.function([x], pt.sin(x), profile=stats, mode=PLAIN)
    assert f.profile is stats and g.profile is stats
    assert stats.n_compiles == 2
    for _ in range(3):
        f(np.ones(4))
    g(np.ones(4))
    g(np.ones(4))
    assert stats.fct_callcount == 5
    f_nodes = f.maker.fgraph.toposort()
    g_nodes = g.maker.fgraph.toposort()
    counts = stats.apply_callcount
    assert all(counts[n] == 3 for n in f_nodes)
    assert all(counts[n] == 2 for n in g_nodes)
    assert stats.nb_nodes == len(f_nodes) + len(g_nodes)
    assert [stats.node_id(n) for n in g_nodes] == [f"1:{k}" for k in range(len(g_nodes))]
    assert stats.node_time() <= stats.fct_call_time
    text = _text(stats)
    assert "Graphs profiled together: 2" in text
    assert "Sin(x)" in text and "Exp(x)" in text


def test_copy_with_same_profile_shares_nodes():
    x = pt.vector("x")
    f = arignote.function([x], pt.exp(x), profile=True, mode=PLAIN)
    g = f.copy(profile=f.profile)
    f(np.ones(3))
    g(np.ones(5))
    (node,) = f.maker.fgraph.apply_nodes
    assert f.profile.apply_callcount[node] == 2
    assert f.profile.output_sizes()[node] == [40]  # the latest run, from g's storage


# -- merging, pickling, direct use --------------------------------------------------------


def test_merge_profiles(profiled):
    f, a, b = profiled
    x = pt.vector("x")
    g = arignote.function([x], pt.sin(x), profile="g", mode=PLAIN)
    g(np.ones(2))
    total = f.profile + g.profile
    assert total is not f.profile
    assert total.fct_callcount == N_CALLS + 1
    assert total.fct_call_time == pytest.approx(f.profile.fct_call_time + g.profile.fct_call_time)
    assert total.n_compiles == 2
    assert total.nb_nodes == f.profile.nb_nodes + g.profile.nb_nodes
    assert total.apply_callcount == {**f.profile.apply_callcount, **g.profile.apply_callcount}
    assert total.message == "function + g"
    assert f.profile.fct_callcount == N_CALLS  # operands unchanged
    assert "Sin(x)" in _text(total)
    # the same profile twice doubles the counts
    double = f.profile + f.profile
    assert set(double.apply_callcount.values()) == {2 * N_CALLS}
    assert sum([f.profile, g.profile]).fct_callcount == N_CALLS + 1
    # in place
    f.profile.merge(g.profile)
    assert f.profile.fct_callcount == N_CALLS + 1
    f(a, b)  # still records after a merge
    assert f.profile.fct_callcount == N_CALLS + 2
    with pytest.raises(TypeError):
        f.profile.merge(3)
    with pytest.raises(ValueError):
        f.profile.merge(f.profile)


def test_pickle_profile(profiled):
    f, _, _ = profiled
    clone = pickle.loads(pickle.dumps(f.profile))
    assert clone.fct_callcount == N_CALLS
    assert sorted(clone.apply_callcount.values()) == sorted(f.profile.apply_callcount.values())
    assert clone.peak_memory() == f.profile.peak_memory()
    assert "Function profiling" in _text(clone)


def test_direct_use_without_function():
    """ProfileStats needs no config and no Function: record by hand."""
    x = pt.vector("x")
    y = pt.exp(x)
    node = y.owner
    storage = {x: [np.ones(6)], y: [np.ones(6)]}
    stats = ProfileStats()
    stats.record_node(node, 1e-3, storage)
    stats.record_node(node, 3e-3, storage)
    stats.record_call(5e-3)
    assert stats.apply_time == {node: pytest.approx(4e-3)}
    assert stats.apply_callcount == {node: 2}
    assert stats.output_sizes() == {node: [48]}
    assert "Exp(x)" in _text(stats)
    stats.reset()
    assert stats.fct_callcount == 0 and stats.apply_time == {}


def test_unknown_keyword_rejected():
    with pytest.raises(TypeError, match="bogus"):
        ProfileStats(bogus=1)
    assert ProfileStats(message="m").message == "m"
