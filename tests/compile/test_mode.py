"""``Mode``: linker and optimizer by name, the named modes, ``get_mode`` and the
``including``/``excluding``/``requiring`` queries over the rewrite pipeline, which is a
list of ``(name, purpose, pass)``."""

from __future__ import annotations

import numpy as np
import pytest

import arignote.tensor as pt
from arignote import Mode, function, get_mode
from arignote.compile import mode as mode_module
from arignote.compile.mode import (
    FAST_COMPILE,
    FAST_RUN,
    PIPELINE,
    RewriteQuery,
    RuleStage,
    get_default_mode,
    merge_pass,
    predefined_modes,
    register_mode,
)
from arignote.configdefaults import config
from arignote.graph.rewriting.basic import node_rewriter
from arignote.graph.rewriting.db import RewriteRegistry
from arignote.link.vm import VMLinker
from arignote.tensor.elemwise import Elemwise
from arignote.tensor.math import exp, log


@pytest.fixture
def registry(monkeypatch):
    """A private rewrite registry with one rule, ``log(exp(x)) -> x``, in ``canonicalize``,
    tagged ``fast_run`` and ``logexp`` (and ``fast_compile`` only when asked)."""
    reg = RewriteRegistry()
    monkeypatch.setattr(mode_module, "rewrite_registry", reg)

    def register(*tags):
        @node_rewriter([Elemwise])
        def log_exp(fgraph, node):
            if node.op == log and node.inputs[0].owner is not None and node.inputs[0].owner.op == exp:
                return [node.inputs[0].owner.inputs[0]]
            return None

        reg.register("canonicalize", log_exp, *tags)

    return register


def _ops(f):
    return [type(n.op).__name__ + ":" + str(n.op) for n in f.maker.fgraph.toposort()]


def test_mode_by_names():
    m = Mode(linker="py", optimizer="fast_run")
    assert isinstance(m.linker, VMLinker) and m.linker.allow_gc
    assert m.optimizer == RewriteQuery()
    assert Mode("vm_nogc", None).linker.allow_gc is False
    assert Mode(linker=None).linker == VMLinker()
    assert Mode("cvm", "merge").query.stages == ("merge",)
    assert Mode(optimizer="None").query.stages == ()
    with pytest.raises(ValueError, match="Unknown linker 'c'"):
        Mode(linker="c")
    with pytest.raises(ValueError, match="Unknown optimizer 'fast'"):
        Mode(optimizer="fast")
    q = RewriteQuery(include=frozenset({"x"}))
    assert Mode(optimizer=q).query is q


def test_named_modes_and_get_mode():
    assert get_mode("FAST_RUN") is FAST_RUN and get_mode(FAST_COMPILE) is FAST_COMPILE
    assert get_mode(None) is FAST_RUN is get_default_mode()  # config.mode's default
    assert predefined_modes["PYTHON"] is FAST_RUN
    assert FAST_RUN.query.stages == tuple(name for name, _, _ in PIPELINE)
    assert FAST_COMPILE.query.stages == ("merge", "canonicalize")
    with config.change_flags(mode="FAST_COMPILE"):
        assert get_mode(None) is FAST_COMPILE
    with pytest.raises(ValueError, match="Unknown mode 'FAST'"):
        get_mode("FAST")
    with pytest.raises(TypeError, match="mode must be a Mode"):
        get_mode(3)
    assert "FAST_RUN(linker=NumbaLinker(jit=" in str(FAST_RUN)


def test_register_mode():
    mine = Mode("vm_nogc", "merge", name="MINE")
    register_mode("MINE_FOR_TEST", mine)
    try:
        assert get_mode("MINE_FOR_TEST") is mine
        x = pt.dscalar("x")
        assert function([x], x + 1, mode="MINE_FOR_TEST").maker.mode is mine
        with pytest.raises(ValueError, match="already registered"):
            register_mode("MINE_FOR_TEST", mine)
    finally:
        del predefined_modes["MINE_FOR_TEST"]


def test_including_excluding_requiring_are_new_modes():
    m = FAST_RUN.including("a", "b").excluding("c").requiring("d")
    assert m.query.include == {"fast_run", "a", "b"}
    assert m.query.exclude == {"c"} and m.query.require == {"d"}
    assert m.linker is FAST_RUN.linker and m.name == "FAST_RUN"
    assert FAST_RUN.query.include == {"fast_run"}  # unchanged
    assert m.clone(name="other").name == "other"


def test_rules_run_by_tag(registry):
    registry("fast_run", "logexp")
    x = pt.dvector("x")
    out = log(exp(x))
    run = FAST_RUN.excluding("fusion")  # (fusion would hide the Log inside a Composite)
    assert not any("Log" in op for op in _ops(function([x], out, mode=run)))  # FAST_RUN has it
    assert any("Log" in op for op in _ops(function([x], out, mode=run.excluding("logexp"))))
    assert any("Log" in op for op in _ops(function([x], out, mode=FAST_COMPILE)))  # not tagged
    assert not any("Log" in op for op in _ops(function([x], out, mode=FAST_COMPILE.including("logexp"))))
    assert any("Log" in op for op in _ops(function([x], out, mode=run.requiring("other_tag"))))
    assert not any("Log" in op for op in _ops(function([x], out, mode=run.requiring("logexp"))))
    # excluding a stage skips the whole stage
    assert any("Log" in op for op in _ops(function([x], out, mode=run.excluding("canonicalize"))))
    # the rewritten function still computes the same thing
    a = np.array([0.5, 2.0])
    np.testing.assert_allclose(function([x], out)(a), a)


def test_rewrite_timings_are_recorded():
    x = pt.dvector("x")
    f = function([x], x + x)
    assert set(f.maker.rewrite_timings) == {name for name, _, _ in PIPELINE}
    assert f.maker.rewrite_time >= 0 and f.maker.build_time >= 0 and f.maker.link_time > 0
    g = function([x], x + x, mode=FAST_RUN.excluding("fusion", "inplace"))
    assert "fusion" not in g.maker.rewrite_timings and "inplace" not in g.maker.rewrite_timings


def test_merge_runs_in_every_mode_but_none():
    x = pt.dvector("x")
    out = pt.exp(x) + pt.exp(x)
    merged = function([x], out, mode=FAST_RUN.excluding("fusion"))
    assert len(merged.maker.fgraph.apply_nodes) == 2
    assert len(function([x], out, mode=FAST_COMPILE).maker.fgraph.apply_nodes) == 2
    plain = function([x], out, mode=Mode(optimizer=None))
    assert len(plain.maker.fgraph.apply_nodes) == 3
    np.testing.assert_allclose(plain(np.zeros(2)), [2.0, 2.0])


def test_rewriting_never_changes_the_users_graph():
    x = pt.dvector("x")
    out = pt.exp(x) + pt.exp(x)
    first_exp = out.owner.inputs[0].owner
    function([x], out)
    assert out.owner.inputs[0].owner is first_exp
    assert out.owner.inputs[1].owner is not first_exp


def test_linkers_give_the_same_results():
    x = pt.dmatrix("x")
    out = (pt.exp(x) * 2).sum(axis=0)
    a = np.arange(6.0).reshape(2, 3)
    results = [function([x], out, mode=Mode(linker=name))(a) for name in ("py", "vm", "cvm", "vm_nogc")]
    for r in results[1:]:
        np.testing.assert_array_equal(r, results[0])


# --- the pipeline is a list of passes -------------------------------------------------------


def test_the_pipeline_is_a_list_of_named_passes():
    names = [name for name, _, _ in PIPELINE]
    assert names == [
        "merge",
        "canonicalize",
        "stabilize",
        "specialize",
        "uncanonicalize",
        "fusion",
        "inplace",
        "final_merge",
    ]
    for name, purpose, run in PIPELINE:
        assert isinstance(name, str) and isinstance(purpose, str) and purpose
        assert callable(run)
    passes = {name: run for name, _, run in PIPELINE}
    assert passes["merge"] is passes["final_merge"] is merge_pass
    assert passes["canonicalize"] == RuleStage("canonicalize")


@pytest.fixture
def counting_pipeline(monkeypatch):
    """PIPELINE with every pass wrapped to record ``(stage, query)`` when it runs, plus a
    pass of its own, ``extra``, that no named optimizer runs."""
    ran = []

    def counted(name, run):
        def wrapped(fgraph, query):
            ran.append((name, query))
            return run(fgraph, query)

        return wrapped

    extra = ("extra", "a pass added by the test", lambda fgraph, query: ran.append(("extra", query)))
    pipeline = [(name, purpose, counted(name, run)) for name, purpose, run in PIPELINE]
    monkeypatch.setattr(mode_module, "PIPELINE", [*pipeline, extra])
    return ran


def test_every_stage_runs_its_pass_with_the_query(counting_pipeline):
    x = pt.dvector("x")
    f = function([x], exp(x) + exp(x))
    assert [name for name, _ in counting_pipeline] == [name for name, _, _ in PIPELINE]
    assert all(query is f.maker.mode.query for _, query in counting_pipeline)
    assert list(f.maker.rewrite_timings) == [name for name, _ in counting_pipeline]
    assert all(t >= 0 for t in f.maker.rewrite_timings.values())


def test_excluding_a_stage_skips_its_pass(counting_pipeline):
    x = pt.dvector("x")
    f = function([x], exp(x) + exp(x), mode=FAST_RUN.excluding("merge", "specialize"))
    ran = [name for name, _ in counting_pipeline]
    assert "merge" not in ran and "specialize" not in ran
    assert "final_merge" in ran and "canonicalize" in ran
    assert set(f.maker.rewrite_timings) == set(ran)
    counting_pipeline.clear()
    g = function([x], x + 1, mode=FAST_COMPILE)
    assert [name for name, _ in counting_pipeline] == ["merge", "canonicalize"]
    assert set(g.maker.rewrite_timings) == {"merge", "canonicalize"}


def test_a_new_pass_is_one_more_entry(counting_pipeline):
    x = pt.dvector("x")
    query = RewriteQuery(stages=("merge", "extra"))
    f = function([x], x + 1, mode=Mode(optimizer=query))
    assert [name for name, _ in counting_pipeline] == ["merge", "extra"]
    assert set(f.maker.rewrite_timings) == {"merge", "extra"}
    counting_pipeline.clear()
    function([x], x + 1, mode=Mode(optimizer=query.excluding("extra")))
    assert [name for name, _ in counting_pipeline] == ["merge"]


def test_a_stage_outside_the_pipeline_runs_its_registered_rules(registry):
    registry("fast_run")  # log(exp(x)) -> x, in canonicalize
    (rule,) = mode_module.rewrite_registry.query("canonicalize", ["all"])
    mode_module.rewrite_registry.register("my_stage", rule, "fast_run")
    x = pt.dvector("x")
    f = function([x], log(exp(x)), mode=Mode(optimizer=RewriteQuery(stages=("my_stage",))))
    assert not any("Log" in op for op in _ops(f))
    assert set(f.maker.rewrite_timings) == {"my_stage"}


def test_register_linker_and_optimizer_by_name():
    import numpy as np

    import arignote
    import arignote.compile as compile_module
    import arignote.tensor as pt
    from arignote.compile.mode import _OPTIMIZERS
    from arignote.graph.rewriting.db import RewriteDatabaseQuery
    from arignote.link.vm import VMLinker

    compile_module.register_linker("test_vm_nogc", VMLinker(allow_gc=False))
    compile_module.register_optimizer("test_merge_only", RewriteDatabaseQuery(include=["merge"]))
    try:
        mode = compile_module.Mode(linker="test_vm_nogc", optimizer="test_merge_only")
        assert mode.linker.allow_gc is False
        x = pt.dvector("x")
        assert np.allclose(arignote.function([x], pt.exp(x), mode=mode)(np.zeros(2)), 1.0)
        with pytest.raises(ValueError, match="already registered"):
            compile_module.register_linker("test_vm_nogc", VMLinker())
        with pytest.raises(ValueError, match="already registered"):
            compile_module.register_optimizer("fast_run", compile_module.OPT_FAST_RUN)
        with pytest.raises(TypeError, match="needs a RewriteQuery"):
            compile_module.register_optimizer("bad", "fast_run")
        assert compile_module.predefined_optimizers is _OPTIMIZERS
    finally:
        compile_module.predefined_linkers.pop("test_vm_nogc", None)
        _OPTIMIZERS.pop("test_merge_only", None)


def test_the_copy_is_merged_only_where_the_rewrites_merge():
    x = pt.dvector("x")
    outs = [pt.exp(x) * 2.0, pt.exp(x) * 2.0]
    plain = function([x], outs, mode=Mode(optimizer=None))
    assert len(plain.maker.fgraph.apply_nodes) == 6  # exp, the constant's expand_dims, mul: twice
    merged = function([x], outs, mode=get_mode("FAST_RUN").excluding("fusion"))
    assert merged.maker.fgraph.outputs[0] is merged.maker.fgraph.outputs[1]
    value = np.array([0.0, 1.0])
    for f in (plain, merged):
        for out in f(value):
            np.testing.assert_allclose(out, 2 * np.exp(value))


def test_the_merge_stage_trusts_a_merged_copy_only_as_the_first_stage():
    from arignote.compile.mode import RewriteQuery, merge_pass
    from arignote.graph.fg import FunctionGraph

    x = pt.dvector("x")
    fg = FunctionGraph([x], [pt.exp(x), pt.exp(x)])
    fg._merged_copy = True  # what function() marks after a merging copy
    assert merge_pass(fg, None) == 0 and len(fg.apply_nodes) == 2
    assert merge_pass(fg, None) == 1 and len(fg.apply_nodes) == 1  # the mark is read once
    fg = FunctionGraph([x], [pt.exp(x), pt.exp(x)])
    fg._merged_copy = True
    RewriteQuery(stages=("canonicalize",))(fg)  # merge is not the first stage: the mark goes
    assert "_merged_copy" not in fg.__dict__
    RewriteQuery(stages=("merge",))(fg)
    assert len(fg.apply_nodes) == 1


def test_register_runs_a_rewriter_at_its_position():
    """Mode.register((rewriter, position)): PyTensor's way to add one rewrite to a mode."""
    from arignote.graph.rewriting.basic import GraphRewriter

    seen = []

    class Spy(GraphRewriter):
        def __init__(self, tag):
            self.tag = tag

        def apply(self, fgraph):
            # what the graph looks like when it runs: before canonicalize, x * 1 is still there
            seen.append((self.tag, sorted(str(n.op) for n in fgraph.apply_nodes)))

    @node_rewriter([pt.exp])
    def exp_to_log(fgraph, node):
        return [pt.log(node.inputs[0])]

    x = pt.dvector("x")
    base = get_mode("FAST_RUN")
    mode = base.register((Spy("early"), 0.5), (exp_to_log, 50), (Spy("late"), 1000))
    assert mode is not base and base.query.extra == ()
    f = function([x], pt.exp(x * 1.0), mode=mode)
    xv = np.array([1.0, 2.0])
    np.testing.assert_allclose(f(xv), np.log(xv))  # the node rewriter ran over every node
    assert [tag for tag, _ in seen] == ["early", "late"]
    assert "Mul" in seen[0][1] and "Mul" not in str(seen[1][1])
    # the registered rewrites survive including/excluding, and a RewriteDatabaseQuery's
    # extra_rewrites become the mode's
    assert mode.including("fast_run").query.extra == mode.query.extra
    from arignote.graph.rewriting.db import RewriteDatabaseQuery

    q = RewriteDatabaseQuery(include=["fast_run"]).register((exp_to_log, 50))
    g = function([x], pt.exp(x), mode=Mode(linker="py", optimizer=q))
    np.testing.assert_allclose(g(xv), np.log(xv))


def test_register_refuses_what_is_not_a_rewriter_and_position():
    mode = get_mode("FAST_RUN")
    with pytest.raises(TypeError, match=r"\(rewriter, position\) pairs"):
        mode.register(node_rewriter)
    with pytest.raises(TypeError, match="neither a GraphRewriter nor a NodeRewriter"):
        mode.register((lambda fg: None, 1))
    with pytest.raises(TypeError, match="must be a number"):
        mode.register((mode_module.MergeOptimizer(), "late"))


def test_get_linker_optimizer_resolves_names():
    linker, query = Mode.get_linker_optimizer("py", "fast_run")
    assert isinstance(linker, VMLinker) and query == Mode(linker="py").query
    assert Mode.get_linker_optimizer(linker, query) == (linker, query)
    with pytest.raises(ValueError, match="Unknown linker 'c'"):
        Mode.get_linker_optimizer("c", "fast_run")
    with pytest.raises(ValueError, match="Unknown optimizer 'fastest'"):
        Mode.get_linker_optimizer("py", "fastest")


def test_mode_optdb_and_call_time():
    mode = Mode(linker="py", optimizer="fast_run")
    assert mode.optdb is mode_module.optdb and "canonicalize" in mode.optdb
    assert mode.call_time == 0.0
    x = pt.dvector("x")
    f = function([x], x * 2, mode=mode, profile=True)
    f(np.ones(3))
    f(np.ones(3))
    assert 0.0 < mode.call_time <= f.profile.fct_call_time + 1e-9
    assert mode == Mode(linker="py", optimizer="fast_run")  # the counter is no part of equality
