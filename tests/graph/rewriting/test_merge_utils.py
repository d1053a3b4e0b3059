"""MergeOptimizer/MergeFeature (merging as a GraphRewriter, incrementally), and
``rewrite_graph``/``is_same_graph``."""

from __future__ import annotations

import numpy as np

import arignote
import arignote.tensor as pt
from arignote.compile.mode import Mode
from arignote.graph.fg import FunctionGraph
from arignote.graph.rewriting.basic import MergeFeature, MergeOptimizer, node_rewriter
from arignote.graph.rewriting.utils import is_same_graph, rewrite_graph


def _count(fg, op):
    return sum(1 for n in fg.apply_nodes if n.op == op)


def test_merge_optimizer_without_the_feature_is_the_merge_pass():
    x = pt.dvector("x")
    fg = FunctionGraph([x], [pt.exp(x) * pt.exp(x) + pt.exp(x)])
    assert MergeOptimizer().apply(fg) == 2
    assert _count(fg, pt.exp) == 1 and not hasattr(fg, "merge_feature")


def test_merge_feature_merges_what_changed_since():
    x = pt.dvector("x")
    c1, c2 = pt.constant(np.array([1.0, 2.0])), pt.constant(np.array([1.0, 2.0]))
    fg = FunctionGraph([x], [pt.exp(x) + c1, pt.exp(x) * c2])
    merger = MergeOptimizer()
    assert merger.rewrite(fg) == 2  # the constants, the exp nodes
    assert isinstance(fg.merge_feature, MergeFeature)
    assert merger.apply(fg) == 0  # nothing new
    # a change that makes two nodes equal is found without walking the graph again
    (add_out, mul_out) = fg.outputs
    fg.replace(mul_out, pt.sin(add_out.owner.inputs[0]) + c1)
    fg.replace(add_out, pt.sin(add_out.owner.inputs[0]) + c1)
    assert merger.apply(fg) >= 1
    assert fg.outputs[0] is fg.outputs[1]
    assert _count(fg, pt.sin) == 1
    values = arignote.function(fg.inputs, fg.outputs, mode=Mode(optimizer=None))(np.array([0.5, 1.0]))
    np.testing.assert_allclose(values[0], np.sin(np.exp([0.5, 1.0])) + [1.0, 2.0])
    fg.remove_feature(fg.merge_feature)
    assert not hasattr(fg, "merge_feature")


def test_rewrite_graph_of_a_variable_a_list_and_a_fgraph():
    x = pt.dvector("x")
    out = pt.exp(x) + pt.exp(x)
    merged = rewrite_graph(out, include=("merge",), clone=True)
    assert merged.owner.inputs[0] is merged.owner.inputs[1]
    assert out.owner.inputs[0] is not out.owner.inputs[1]  # clone=True: the user's graph is kept
    a, b = rewrite_graph([out, pt.exp(x)], include=("merge",), clone=True)
    assert b is a.owner.inputs[0]
    fg = FunctionGraph([x], [pt.log(pt.exp(x))])
    assert rewrite_graph(fg) is fg
    assert fg.outputs[0] is fg.inputs[0]  # canonicalize (the default) ran
    folded = rewrite_graph(pt.exp(pt.constant(0.0)))
    assert folded.owner is None and folded.data == 1.0


def test_rewrite_graph_with_a_custom_rewrite_and_exclusions():
    x = pt.dvector("x")

    @node_rewriter([pt.exp])
    def exp_to_exp2(fgraph, node):
        return [pt.exp2(node.inputs[0] / np.log(2.0))]

    out = rewrite_graph(pt.exp(x) + 1, include=(), custom_rewrite=exp_to_exp2)
    assert out.owner.inputs[0].owner.op == pt.exp2
    kept = rewrite_graph(pt.exp(pt.constant(0.0)), exclude=("constant_folding",))
    assert kept.owner is not None


def test_is_same_graph():
    x, y = pt.dvector("x"), pt.dvector("y")
    assert is_same_graph(x + 1, x + 1)
    assert not is_same_graph(x + 1, y + 1)
    assert is_same_graph(x + 1, y + 1, givens={x: y})
    assert not is_same_graph(x + 1, x + 2)
    assert not is_same_graph(x + 1, x * 1)
    e = pt.exp(x)
    # a given may stand for an intermediate result
    assert is_same_graph(e + 1, pt.sin(y) + 1, givens={e: pt.sin(y)})


def test_merge_graph_merges_equal_ops_that_are_distinct_objects():
    import arignote.tensor as pt
    from arignote.graph.fg import FunctionGraph
    from arignote.graph.rewriting.merge import merge_graph
    from arignote.scalar.basic import exp as scalar_exp
    from arignote.tensor.elemwise import Elemwise

    x = pt.dvector("x")
    a, b = Elemwise(scalar_exp)(x), Elemwise(scalar_exp)(x)  # equal Ops, two objects
    assert a.owner.op is not b.owner.op and a.owner.op == b.owner.op
    c = pt.log(x)
    fg = FunctionGraph([x], [a + b, c], clone=False)
    assert merge_graph(fg) == 1
    assert sorted(str(n.op) for n in fg.apply_nodes) == ["Add", "Exp", "Log"]
