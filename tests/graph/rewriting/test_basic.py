"""PyTensor's rewriting API on arignote's engine: node rewriters (decorated and
subclassed), graph rewriters, walking/equilibrium/sequential rewriters, patterns,
substitution and removal, stack traces and the verbose print-outs. Every rewrite is
checked structurally (it fired) and numerically (same values as the unrewritten graph)."""

from __future__ import annotations

import numpy as np
import pytest

import arignote
import arignote.tensor as pt
from arignote.compile.mode import Mode
from arignote.configdefaults import config
from arignote.graph.fg import FunctionGraph
from arignote.graph.rewriting.basic import (
    EquilibriumGraphRewriter,
    GraphRewriter,
    NodeRewriter,
    PatternNodeRewriter,
    RemovalNodeRewriter,
    RewriteError,
    SequentialGraphRewriter,
    SequentialNodeRewriter,
    SubstitutionNodeRewriter,
    Tracks,
    WalkingGraphRewriter,
    copy_stack_trace,
    graph_rewriter,
    in2out,
    node_rewriter,
    out2in,
)
from arignote.graph.rewriting.db import RulesByOp
from arignote.graph.rewriting.unify import OpPattern
from arignote.scalar.basic import Exp
from arignote.tensor.elemwise import Elemwise

RNG = np.random.default_rng(7)
NO_REWRITES = Mode(optimizer=None)


def _ops(fg):
    """The graph's Ops by name, without the expand-dims views of constants."""
    return sorted(str(n.op) for n in fg.apply_nodes if not str(n.op).startswith("ExpandDims"))


def _same_values(inputs, original, rewritten_fg, *values):
    """The rewritten graph computes what the original graph does."""
    want = arignote.function(inputs, original, mode=NO_REWRITES)(*values)
    got = arignote.function(rewritten_fg.inputs, rewritten_fg.outputs[0], mode=NO_REWRITES)(*values)
    # (1 - erf(x) loses digits that erfc(x) keeps: absolute agreement near 0)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


# --- node rewriters: decorated and subclassed --------------------------------------------


@node_rewriter([pt.exp])
def exp_to_exp2(fgraph, node):
    """exp(x) -> exp2(x / log(2))."""
    return [pt.exp2(node.inputs[0] / np.log(2.0))]


class LogOfExp(NodeRewriter):
    """log(exp(x)) -> x, written as PyTensor's docs show: a subclass."""

    def tracks(self):
        return [pt.log]

    def transform(self, fgraph, node):
        (arg,) = node.inputs
        if arg.owner is not None and arg.owner.op == pt.exp:
            return [arg.owner.inputs[0]]
        return False


def test_a_decorated_rule_tracks_a_tuple_that_is_also_callable():
    assert exp_to_exp2.tracks == (pt.exp,)
    assert isinstance(exp_to_exp2.tracks, Tracks)
    assert exp_to_exp2.tracks() == [pt.exp]
    assert exp_to_exp2.name == exp_to_exp2.__name__ == "exp_to_exp2"
    assert exp_to_exp2.__doc__ == "exp(x) -> exp2(x / log(2))."
    assert "test_basic.py" in exp_to_exp2.where
    with pytest.raises(ValueError, match="None, not an empty list"):
        node_rewriter([])
    with pytest.raises(TypeError, match="tracks Op classes"):
        node_rewriter(["exp"])


def test_a_subclassed_rule_runs_on_the_engine():
    x = pt.dvector("x")
    out = pt.log(pt.exp(x)) * 2
    fg = FunctionGraph([x], [out])
    rule = LogOfExp()
    assert rule.name == "LogOfExp" and rule.tracks() == [pt.log]
    assert RulesByOp([rule]).for_op_type(Elemwise) == ((rule, (pt.log,)),)
    assert in2out(rule).rewrite(fg) == 1
    assert _ops(fg) == ["Mul"]
    _same_values([x], out, fg, RNG.random(4))


def test_transform_results_list_dict_and_none_entries():
    x = pt.dvector("x")

    @node_rewriter([pt.exp])
    def as_dict(fgraph, node):
        return {node.outputs[0]: pt.exp2(node.inputs[0] / np.log(2.0))}

    @node_rewriter([pt.sin])
    def keep(fgraph, node):
        return [None]  # None in the list: keep that output

    fg = FunctionGraph([x], [pt.exp(x) + pt.sin(x)])
    assert in2out(as_dict, keep).rewrite(fg) == 1
    assert _ops(fg) == ["Add", "Exp2", "Sin", "True_div"]
    _same_values([x], pt.exp(x) + pt.sin(x), fg, RNG.random(3))

    @node_rewriter([pt.exp])
    def wrong(fgraph, node):
        return [node.inputs[0], node.inputs[0]]

    with pytest.raises(RewriteError, match="2 replacements"):
        in2out(wrong).rewrite(FunctionGraph([x], [pt.exp(x)]))


def test_a_remove_key_that_is_not_removed_declines():
    x = pt.dvector("x")

    @node_rewriter([pt.exp])
    def claims_to_remove(fgraph, node):
        (inp,) = node.inputs
        return {node.outputs[0]: pt.exp2(inp / np.log(2.0)), "remove": [inp]}  # x stays

    fg = FunctionGraph([x], [pt.exp(x)])
    assert in2out(claims_to_remove).rewrite(fg) == 0
    assert _ops(fg) == ["Exp"]


def test_in2out_and_out2in_start_from_either_end():
    x = pt.dvector("x")
    seen = []

    @node_rewriter([Elemwise])
    def record(fgraph, node):
        seen.append(str(node.op))

    chain = pt.cos(pt.sin(pt.exp(x)))
    in2out(record).rewrite(FunctionGraph([x], [chain]))
    assert seen == ["Exp", "Sin", "Cos"]
    seen.clear()
    out2in(record).rewrite(FunctionGraph([x], [chain]))
    assert seen == ["Cos", "Sin", "Exp"]
    walker = in2out(record, LogOfExp(), name="both")
    assert isinstance(walker, WalkingGraphRewriter) and walker.name == "both"
    assert [r.name for r in walker.node_rewriters] == ["record", "LogOfExp"]  # flattened
    with pytest.raises(ValueError, match="order"):
        WalkingGraphRewriter(record, order="sideways")


def test_sequential_node_rewriter_tries_its_members_in_order():
    @node_rewriter([pt.exp])
    def first(fgraph, node):
        return [pt.exp2(node.inputs[0] / np.log(2.0))]

    @node_rewriter([pt.exp, pt.sin])
    def second(fgraph, node):
        return [pt.sin(node.inputs[0]) * 1.0] if node.op == pt.sin else [node.inputs[0]]

    seq = SequentialNodeRewriter(first, second)
    assert seq.tracks() == [pt.exp, pt.sin]
    assert SequentialNodeRewriter(first, node_rewriter(None)(lambda fg, n: None)).tracks() is None
    x = pt.dvector("x")
    fg = FunctionGraph([x], [pt.exp(x)])
    node = fg.outputs[0].owner
    assert seq.transform(fg, node)[0].owner.op == pt.exp2  # the first one wins
    assert SequentialNodeRewriter(second, first).transform(fg, node) == [fg.inputs[0]]
    assert seq.transform(fg, FunctionGraph([x], [pt.cos(x)]).outputs[0].owner) is False


# --- graph rewriters ----------------------------------------------------------------------


class CountingGraphRewriter(GraphRewriter):
    def __init__(self):
        self.calls = []

    def add_requirements(self, fgraph):
        self.calls.append("add_requirements")

    def apply(self, fgraph):
        self.calls.append("apply")
        return len(fgraph.apply_nodes)


def test_graph_rewriter_rewrite_adds_requirements_then_applies():
    x = pt.dvector("x")
    fg = FunctionGraph([x], [pt.exp(x)])
    r = CountingGraphRewriter()
    assert r.rewrite(fg) == 1
    assert r.calls == ["add_requirements", "apply"]
    r(fg)
    assert r.calls[-2:] == ["add_requirements", "apply"]
    assert r.name == "CountingGraphRewriter"


def test_graph_rewriter_decorator_bare_and_with_arguments():
    @graph_rewriter
    def drop_exp(fgraph):
        for node in list(fgraph.apply_nodes):
            if node.op == pt.exp:
                fgraph.replace(node.outputs[0], node.inputs[0])

    @graph_rewriter(name="named")
    def nothing(fgraph):
        return "done"

    x = pt.dvector("x")
    fg = FunctionGraph([x], [pt.exp(x) + 1])
    drop_exp.rewrite(fg)
    assert _ops(fg) == ["Add"]
    assert drop_exp.name == "drop_exp" and nothing.name == "named"
    assert nothing.rewrite(fg) == "done"


def test_equilibrium_runs_graph_and_node_rewriters_until_nothing_changes():
    """A node rule (exp -> sin) makes work for a graph rewriter (sin -> cos): the graph
    rewriter must see the node rule's output, so a second round runs."""
    x = pt.dvector("x")
    rounds = []

    @graph_rewriter
    def sin_to_cos(fgraph):
        rounds.append(len(fgraph.apply_nodes))
        for node in list(fgraph.apply_nodes):
            if node.op == pt.sin:
                fgraph.replace(node.outputs[0], pt.cos(node.inputs[0]))

    @node_rewriter([pt.exp])
    def exp_to_sin(fgraph, node):
        return [pt.sin(node.inputs[0])]

    out = pt.exp(pt.exp(x))
    fg = FunctionGraph([x], [out])
    eq = EquilibriumGraphRewriter([sin_to_cos, exp_to_sin])
    assert eq.node_rewriters == [exp_to_sin] and eq.global_rewriters == [sin_to_cos]
    eq.rewrite(fg)
    assert _ops(fg) == ["Cos", "Cos"]  # the node rule's output was seen by the graph rewriter
    assert len(rounds) >= 2  # a round changed something, so another one ran

    final, cleanup = CountingGraphRewriter(), CountingGraphRewriter()
    fg = FunctionGraph([x], [pt.exp(x)])
    EquilibriumGraphRewriter([exp_to_sin], final_rewriters=[final], cleanup_rewriters=[cleanup]).rewrite(fg)
    assert final.calls.count("apply") >= 1 and cleanup.calls.count("apply") == 1


def test_rules_that_undo_each_other_hit_the_budget():
    @node_rewriter([pt.exp])
    def to_sin(fgraph, node):
        return [pt.sin(node.inputs[0])]

    @node_rewriter([pt.sin])
    def to_exp(fgraph, node):
        return [pt.exp(node.inputs[0])]

    x = pt.dvector("x")
    with pytest.raises(RewriteError, match="did not settle"):
        EquilibriumGraphRewriter([to_sin, to_exp], max_use_ratio=3).rewrite(FunctionGraph([x], [pt.exp(x)]))


def test_sequential_graph_rewriter_runs_in_order_and_reports_failures():
    order = []

    @graph_rewriter
    def one(fgraph):
        order.append("one")

    @graph_rewriter
    def boom(fgraph):
        raise RuntimeError("boom")

    x = pt.dvector("x")
    fg = FunctionGraph([x], [pt.exp(x)])
    seq = SequentialGraphRewriter(one, exp_to_exp2)  # a node rewriter is walked
    seq.rewrite(fg)
    assert order == ["one"] and "Exp2" in _ops(fg)
    with pytest.raises(RuntimeError, match="boom"):
        SequentialGraphRewriter(boom, one).rewrite(fg)
    failures = []
    SequentialGraphRewriter(boom, one, failure_callback=lambda e, s, r: failures.append(r)).rewrite(fg)
    assert failures == [boom] and order == ["one", "one"]


# --- patterns -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("in_pattern", "out_pattern", "build"),
    [
        ((pt.sub, 1, (pt.erf, "x")), (pt.erfc, "x"), lambda x: 1 - pt.erf(x)),
        # PyTensor's docs' example: 1 + erf(x) = 1 - erf(-x) = erfc(-x)
        ((pt.add, 1, (pt.erf, "x")), (pt.erfc, (pt.neg, "x")), lambda x: 1 + pt.erf(x)),
        ((pt.add, "x", "x"), (pt.mul, 2, "x"), lambda x: x + x),
    ],
)
def test_pattern_rewrites_are_exact(in_pattern, out_pattern, build):
    x = pt.dmatrix("x")
    out = build(x)
    fg = FunctionGraph([x], [out])
    rule = PatternNodeRewriter(in_pattern, out_pattern)
    assert in2out(rule).rewrite(fg) == 1
    root = fg.outputs[0].owner.op
    assert root == out_pattern[0]
    _same_values([x], out, fg, RNG.normal(size=(3, 4)) * 3)


def test_pattern_constants_match_equal_constants_only():
    x = pt.dvector("x")
    rule = in2out(PatternNodeRewriter((pt.sub, 1, (pt.erf, "x")), (pt.erfc, "x")))
    for ones in (1, 1.0, np.array([[1.0]])[0]):
        fg = FunctionGraph([x], [ones - pt.erf(x)])
        assert rule.rewrite(fg) == 1, ones
    # an array of ones matches too; where it fixes the output's static shape, erfc(x) would
    # not have that Type, so the rule declines, unless x has it already
    assert rule.rewrite(FunctionGraph([x], [np.ones(3) - pt.erf(x)])) == 0
    x3 = pt.tensor("x3", dtype="float64", shape=(3,))
    assert rule.rewrite(FunctionGraph([x3], [np.ones(3) - pt.erf(x3)])) == 1
    for other in (2, np.array([1.0, 2.0, 1.0])):
        fg = FunctionGraph([x], [other - pt.erf(x)])
        assert rule.rewrite(fg) == 0, other


def test_one_name_binds_one_variable():
    x, y = pt.dvector("x"), pt.dvector("y")
    rule = in2out(PatternNodeRewriter((pt.add, "x", "x"), (pt.mul, 2, "x")))
    assert rule.rewrite(FunctionGraph([x, y], [x + y])) == 0
    fg = FunctionGraph([x], [pt.exp(x) + pt.exp(x)])
    # two distinct (unmerged) exp nodes are different Variables: no match until merged
    assert rule.rewrite(fg) == 0
    from arignote.graph.rewriting.basic import merge_graph

    merge_graph(fg)
    assert rule.rewrite(fg) == 1


def test_constraints_and_op_patterns():
    x = pt.dvector("x")
    positive_constant = {
        "pattern": "c",
        "constraint": lambda v: getattr(v, "data", None) is not None and np.all(v.data > 0),
    }
    rule = in2out(PatternNodeRewriter((pt.mul, positive_constant, (pt.exp, "x")), (pt.exp, "x")))
    c = pt.constant(np.array([2.0]))
    assert rule.rewrite(FunctionGraph([x], [c * pt.exp(x)])) == 1
    assert rule.rewrite(FunctionGraph([x], [pt.constant(np.array([-2.0])) * pt.exp(x)])) == 0
    assert rule.rewrite(FunctionGraph([x], [x * pt.exp(x)])) == 0  # x has no data

    any_exp = OpPattern(Elemwise, scalar_op=OpPattern(Exp))
    assert any_exp.match_op(pt.exp) and not any_exp.match_op(pt.log)
    op_rule = PatternNodeRewriter((pt.log, (any_exp, "x")), "x")
    assert op_rule.tracks() == [pt.log]
    fg = FunctionGraph([x], [pt.log(pt.exp(x))])
    assert in2out(op_rule).rewrite(fg) == 1 and fg.outputs[0] is fg.inputs[0]

    @node_rewriter([any_exp])
    def exp_only(fgraph, node):
        assert node.op == pt.exp
        return [pt.exp2(node.inputs[0] / np.log(2.0))]

    fg = FunctionGraph([x], [pt.exp(x) + pt.log(x)])
    assert in2out(exp_only).rewrite(fg) == 1


def test_patterns_decline_on_shared_inner_nodes_and_on_type_changes():
    x = pt.dvector("x")
    e = pt.erf(x)
    fg = FunctionGraph([x], [1 - e, e * 2])  # erf(x) has another client
    rule = PatternNodeRewriter((pt.sub, 1, (pt.erf, "x")), (pt.erfc, "x"))
    assert in2out(rule).rewrite(fg) == 0
    fg = FunctionGraph([x], [1 - e, e * 2])
    allowed = PatternNodeRewriter((pt.sub, 1, (pt.erf, "x")), (pt.erfc, "x"), allow_multiple_clients=True)
    assert in2out(allowed).rewrite(fg) == 1
    # the output Type must stay the same: neg of an int vector is int, exp of it is float
    i = pt.lvector("i")
    to_float = PatternNodeRewriter((pt.neg, "x"), (pt.exp, "x"))
    assert in2out(to_float).rewrite(FunctionGraph([i], [-i])) == 0
    assert in2out(to_float).rewrite(FunctionGraph([x], [-x])) == 1
    with pytest.raises(TypeError, match="starting with an Op"):
        PatternNodeRewriter("x", "x")


def test_substitution_and_removal():
    x = pt.dvector("x")
    out = pt.exp(pt.neg(pt.neg(x)))
    fg = FunctionGraph([x], [out])
    assert in2out(SubstitutionNodeRewriter(pt.exp, pt.exp2)).rewrite(fg) == 1
    assert "Exp2" in _ops(fg) and "Exp" not in _ops(fg)
    fg = FunctionGraph([x], [out])
    assert in2out(RemovalNodeRewriter(pt.neg)).rewrite(fg) == 2  # (-(-x) is x: removal is exact here)
    assert _ops(fg) == ["Exp"]
    _same_values([x], out, fg, RNG.random(3))


# --- stack traces and print-outs ----------------------------------------------------------


def test_copy_stack_trace_keeps_the_users_line():
    x = pt.dvector("x")
    old = pt.exp(x)  # the user's line
    new = pt.exp2(x)
    new.owner.trace = ("elsewhere.py", 1, "f")
    old.tag.trace = [("user.py", 3, "g")]
    assert copy_stack_trace(old, new) is new
    assert new.owner.trace == old.owner.trace and "test_basic.py" in new.owner.trace[0]
    assert new.tag.trace == [("user.py", 3, "g")]
    a, b = pt.sin(x), pt.cos(x)
    copy_stack_trace([old, x], [a, b])
    assert a.owner.trace == b.owner.trace == old.owner.trace


def test_pattern_replacements_keep_the_trace():
    x = pt.dvector("x")
    out = 1 - pt.erf(x)
    fg = FunctionGraph([x], [out], clone=False)
    site = out.owner.trace
    in2out(PatternNodeRewriter((pt.sub, 1, (pt.erf, "x")), (pt.erfc, "x"))).rewrite(fg)
    assert fg.outputs[0].owner.trace == site


def test_optimizer_verbose_prints_each_replacement_as_pytensor_does(capsys):
    x = pt.dvector("x")
    fg = FunctionGraph([x], [pt.exp(x)])
    with config.change_flags(optimizer_verbose=True):
        in2out(exp_to_exp2).rewrite(fg)
    out = capsys.readouterr().out
    assert out.startswith("rewriting: rewrite exp_to_exp2 replaces ")
    assert "of Exp(x) with " in out and "of Exp2(" in out
    in2out(SubstitutionNodeRewriter(pt.exp2, pt.exp)).rewrite(fg)
    assert capsys.readouterr().out == ""  # off by default


def test_trace_rewrites_names_the_rule_and_where_it_is(capsys):
    x = pt.dvector("x")
    with config.change_flags(trace_rewrites=True):
        in2out(exp_to_exp2).rewrite(FunctionGraph([x], [pt.exp(x)]))
    out = capsys.readouterr().out
    assert out.startswith("rewrite exp_to_exp2 (") and "test_basic.py:" in out
