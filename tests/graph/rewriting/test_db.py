"""Rewrite databases (PyTensor's spelling) and ``optdb``: views of the one registry and
pipeline, so that a rule registered as PyTensor's docs show fires in ``function()``."""

from __future__ import annotations

import numpy as np
import pytest

import arignote
import arignote.tensor as pt
from arignote.compile import mode as mode_module
from arignote.compile.mode import FAST_COMPILE, FAST_RUN, PIPELINE, Mode, RewriteQuery, optdb
from arignote.graph.basic import Apply
from arignote.graph.fg import FunctionGraph
from arignote.graph.op import Op
from arignote.graph.rewriting.basic import (
    EquilibriumGraphRewriter,
    MergeOptimizer,
    SequentialGraphRewriter,
    SequentialNodeRewriter,
    graph_rewriter,
    node_rewriter,
)
from arignote.graph.rewriting.db import (
    EquilibriumDB,
    LocalGroupDB,
    ProxyDB,
    RewriteDatabase,
    RewriteDatabaseQuery,
    SequenceDB,
    TopoDB,
    stage_db,
)
from arignote.graph.rewriting.registry import rewrite_registry
from arignote.tensor.rewriting.basic import (
    register_canonicalize,
    register_specialize,
    register_stabilize,
    register_uncanonicalize,
)
from arignote.tensor.type import TensorType


class Twice(Op):
    """A user's Op: 2 * x, computed in Python."""

    __props__ = ()

    def make_node(self, x):
        x = pt.as_tensor_variable(x)
        return Apply(self, [x], [TensorType(x.dtype, x.type.shape)()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = 2 * inputs[0]


twice = Twice()


def _rule(name):
    @node_rewriter([Twice], name=name)
    def twice_to_add(fgraph, node):
        (x,) = node.inputs
        return [x + x]

    return twice_to_add


@pytest.fixture
def cleanup():
    """Unregister, after the test, what it registered in the global registry."""
    added = []
    yield added
    for stage, name in added:
        rewrite_registry.unregister(stage, name)


def _has_twice(f):
    return any(isinstance(n.op, Twice) for n in f.maker.fgraph.apply_nodes)


# --- RewriteDatabaseQuery and RewriteDatabase ---------------------------------------------


def test_query_objects_and_tag_strings():
    q = RewriteDatabaseQuery(include=["a"])
    q2 = q.including("b").excluding("c").requiring("d")
    assert (q2.include, q2.exclude, q2.require) == ({"a", "b"}, {"c"}, {"d"})
    assert q.include == {"a"} and q.exclude == frozenset()  # unchanged
    assert q2.selects({"a", "d"}) and not q2.selects({"a"}) and not q2.selects({"a", "c", "d"})
    assert RewriteDatabaseQuery(include=["all"]).selects({"x"})
    db = RewriteDatabase()
    r1, r2 = _rule("r1"), _rule("r2")
    db.register("one", r1, "t1", "shared")
    db.register("two", r2, "t2", "shared")
    assert r1.name == "one"  # registering names the rewriter
    assert db.query("+shared") == [r1, r2]
    assert db.query("+shared", "-one") == [r2]
    assert db.query("+shared", "&t2") == [r2]
    assert db.query(RewriteDatabaseQuery(include=["t1"])) == [r1]
    assert db["one"] is r1 and "two" in db and "three" not in db
    with pytest.raises(ValueError, match="already present"):
        db.register("one", _rule("again"))
    with pytest.raises(ValueError, match="start with"):
        db.query("shared")
    with pytest.raises(TypeError, match="not a node rewriter"):
        db.register("bad", object())
    db.add_tags("one", "extra")
    assert db.query("+extra") == [r1]
    db.remove_tags("one", "extra")
    assert db.query("+extra") == []


def test_equilibrium_db_gives_an_equilibrium_rewriter():
    db = EquilibriumDB()
    rule = _rule("twice_rule")
    final = graph_rewriter(lambda fg: None)
    db.register("twice_rule", rule, "mine")
    db.register("final", final, "mine", final_rewriter=True)
    with pytest.raises(ValueError, match="not both"):
        db.register("both", graph_rewriter(lambda fg: None), final_rewriter=True, cleanup=True)
    eq = db.query("+mine")
    assert isinstance(eq, EquilibriumGraphRewriter)
    assert eq.node_rewriters == [rule] and eq.final_rewriters == [final]
    x = pt.dvector("x")
    fg = FunctionGraph([x], [twice(x)])
    eq.rewrite(fg)
    assert [str(n.op) for n in fg.apply_nodes] == ["Add"]


def test_sequence_db_orders_by_position():
    db = SequenceDB()
    ran = []

    def named(tag):
        return graph_rewriter(lambda fg: ran.append(tag), name=tag)

    db.register("late", named("late"), "x", position=10)
    db.register("early", named("early"), "x", position=1)
    db.register("last", named("last"), "x")  # after the highest position
    db.register("middle", named("middle"), "x", position=5)
    seq = db.query("+x")
    assert isinstance(seq, SequentialGraphRewriter)
    x = pt.dvector("x")
    seq.rewrite(FunctionGraph([x], [x + 1]))
    assert ran == ["early", "middle", "late", "last"]
    assert db.position("last") == 11
    assert [r.name for r in db.query("+x", position_cutoff=6)] == ["early", "middle"]
    extra = named("extra")
    q = RewriteDatabaseQuery(include=["x"]).register((extra, 7))
    assert [r.name for r in db.query(q)] == ["early", "middle", "extra", "late", "last"]
    with pytest.raises(TypeError, match="position"):
        db.register("bad", named("bad"), position="first")


def test_local_group_db_and_topo_db_and_proxy_db():
    group = LocalGroupDB()
    a, b = _rule("a"), _rule("b")
    group.register("b", b, "g", position=2)
    group.register("a", a, "g", position=1)
    seq = group.query("+g")
    assert isinstance(seq, SequentialNodeRewriter) and seq.rewrites == [a, b]
    walker = TopoDB(group).query("+g")
    x = pt.dvector("x")
    fg = FunctionGraph([x], [twice(x)])
    assert walker.rewrite(fg) == 1
    assert ProxyDB(group).query("+g").rewrites == [a, b]
    with pytest.raises(TypeError):
        ProxyDB(object())


def test_a_database_inside_a_database_is_queried_with_the_same_tags():
    outer, inner = EquilibriumDB(), EquilibriumDB()
    rule = _rule("inner_rule")
    inner.register("inner_rule", rule, "fast_run")
    outer.register("inner", inner, "fast_run")
    eq = outer.query("+fast_run")
    (sub,) = eq.global_rewriters
    assert isinstance(sub, EquilibriumGraphRewriter) and sub.node_rewriters == [rule]
    assert outer.query("+fast_run", "-inner").global_rewriters == []


# --- optdb: the pipeline as a SequenceDB --------------------------------------------------


def test_optdb_is_a_view_of_the_pipeline():
    assert optdb.names() == [name for name, _, _ in PIPELINE]
    canon = optdb["canonicalize"]
    assert isinstance(canon, EquilibriumDB) and canon is stage_db("canonicalize")
    assert canon.registry is rewrite_registry
    assert "constant_folding" in canon and canon["constant_folding"].name == "constant_folding"
    assert isinstance(optdb["merge"], MergeOptimizer)
    assert "fusion" in optdb and "nothing" not in optdb
    with pytest.raises(KeyError, match="no stage"):
        optdb["nothing"]
    assert optdb.position("canonicalize") == 1 and optdb.position("final_merge") == 100


def test_optdb_query_runs_the_pipelines_passes():
    x = pt.dvector("x")
    fg = FunctionGraph([x], [pt.exp(x) + pt.exp(x) + 0 * (pt.constant(2.0) + 3)])
    seq = optdb.query("+fast_compile")
    assert [r.name for r in seq] == ["merge", "canonicalize"]
    seq.rewrite(fg)
    assert len([n for n in fg.apply_nodes if n.op == pt.exp]) == 1
    assert [r.name for r in optdb.query(RewriteDatabaseQuery(include=["fast_run"], exclude=["fusion"]))] == [
        name for name, _, _ in PIPELINE if name != "fusion"
    ]
    assert [r.name for r in optdb.query("+fast_run", position_cutoff=2)] == [
        "merge",
        "canonicalize",
        "stabilize",
    ]


def test_a_rule_registered_in_optdb_canonicalize_fires_in_function(cleanup):
    rule = _rule("optdb_twice")
    optdb["canonicalize"].register("optdb_twice", rule, "fast_run", "fast_compile")
    cleanup.append(("canonicalize", "optdb_twice"))
    assert rewrite_registry.query("canonicalize", ["optdb_twice"]) == [rule]  # one registry
    x = pt.dvector("x")
    f = arignote.function([x], twice(x))
    assert not _has_twice(f)
    np.testing.assert_allclose(f(np.array([1.0, 2.5])), [2.0, 5.0])


@pytest.mark.parametrize("how", ["bare", "tags", "name"])
def test_register_canonicalize_as_pytensor_docs_show(cleanup, how):
    """The rule fires in function(): the user's Op is gone (structure) and the result is
    the unrewritten graph's (values); excluding it by name keeps the Op."""
    if how == "bare":

        @register_canonicalize
        @node_rewriter([Twice])
        def local_twice_bare(fgraph, node):
            return [node.inputs[0] + node.inputs[0]]

        name, rule = "local_twice_bare", local_twice_bare
    elif how == "tags":

        @register_canonicalize("my_tag")
        @node_rewriter([Twice])
        def local_twice_tagged(fgraph, node):
            return [node.inputs[0] + node.inputs[0]]

        name, rule = "local_twice_tagged", local_twice_tagged
    else:

        @register_canonicalize(name="renamed_twice")
        @node_rewriter([Twice])
        def local_twice_named(fgraph, node):
            return [node.inputs[0] + node.inputs[0]]

        name, rule = "renamed_twice", local_twice_named
    cleanup.append(("canonicalize", name))
    assert rule.name == name and optdb["canonicalize"][name] is rule
    x = pt.dmatrix("x")
    value = np.arange(6.0).reshape(2, 3)
    unrewritten = arignote.function([x], twice(x) * 3, mode=Mode(optimizer=None))
    for mode in (FAST_RUN, FAST_COMPILE):
        f = arignote.function([x], twice(x) * 3, mode=mode)
        assert not _has_twice(f)
        np.testing.assert_allclose(f(value), unrewritten(value))
    assert _has_twice(arignote.function([x], twice(x), mode=FAST_RUN.excluding(name)))
    if how == "tags":
        assert set(rewrite_registry.query("canonicalize", ["my_tag"])) == {rule}


def test_register_in_the_other_stages(cleanup):
    for register, stage in (
        (register_stabilize, "stabilize"),
        (register_specialize, "specialize"),
        (register_uncanonicalize, "uncanonicalize"),
    ):
        rule = register(_rule(f"twice_in_{stage}"))
        cleanup.append((stage, rule.name))
        assert rewrite_registry.query(stage, ["fast_run"])[-1] is rule
        assert rule not in rewrite_registry.query(stage, ["fast_compile"])
        x = pt.dvector("x")
        only_here = FAST_RUN.excluding(
            *(s for s in ("stabilize", "specialize", "uncanonicalize") if s != stage)
        )
        assert not _has_twice(arignote.function([x], twice(x), mode=only_here))
        rewrite_registry.unregister(stage, rule.name)
        cleanup.pop()


def test_including_and_excluding_by_rule_name(cleanup):
    rule = _rule("opt_in_twice")
    optdb["canonicalize"].register("opt_in_twice", rule)  # no fast_run tag: opt-in
    cleanup.append(("canonicalize", "opt_in_twice"))
    x = pt.dvector("x")
    assert _has_twice(arignote.function([x], twice(x)))
    assert not _has_twice(arignote.function([x], twice(x), mode=FAST_RUN.including("opt_in_twice")))
    # excluding a built-in rule by its name
    c = pt.constant(np.array([2.0, 3.0]))
    folded = arignote.function([x], x + pt.exp(c))
    unfolded = arignote.function([x], x + pt.exp(c), mode=FAST_RUN.excluding("constant_folding", "fusion"))
    assert not any(n.op == pt.exp for n in folded.maker.fgraph.apply_nodes)
    assert any(n.op == pt.exp for n in unfolded.maker.fgraph.apply_nodes)
    np.testing.assert_allclose(folded(np.zeros(2)), unfolded(np.zeros(2)))


def test_a_new_optdb_stage_runs_where_its_tags_select_it():
    ran = []

    @graph_rewriter
    def count_nodes(fgraph):
        ran.append(len(fgraph.apply_nodes))

    optdb.register("count_nodes", count_nodes, "fast_run", position=1.7)
    try:
        names = [name for name, _, _ in PIPELINE]
        assert names.index("stabilize") < names.index("count_nodes") < names.index("specialize")
        assert optdb["count_nodes"] is count_nodes
        x = pt.dvector("x")
        arignote.function([x], pt.exp(x))
        assert len(ran) == 1
        arignote.function([x], pt.exp(x), mode=FAST_COMPILE)
        arignote.function([x], pt.exp(x), mode=FAST_RUN.excluding("count_nodes"))
        arignote.function([x], pt.exp(x), mode=Mode(optimizer=None))
        assert len(ran) == 1
        with pytest.raises(ValueError, match="already has"):
            optdb.register("count_nodes", count_nodes)
    finally:
        optdb.unregister("count_nodes")
    assert "count_nodes" not in optdb
    with pytest.raises(KeyError):
        optdb.unregister("canonicalize")


def test_a_mode_from_a_pytensor_query():
    m = Mode(optimizer=RewriteDatabaseQuery(include=["fast_compile"]))
    assert m.query.stages == ("merge", "canonicalize") == FAST_COMPILE.query.stages
    assert m.query.include == {"fast_compile"}
    full = Mode(optimizer=mode_module.OPT_FAST_RUN)
    assert full.query.stages == RewriteQuery().stages
    x = pt.dvector("x")
    f = arignote.function([x], pt.exp(x) + pt.exp(x), mode=m)
    assert len(f.maker.fgraph.apply_nodes) == 2
