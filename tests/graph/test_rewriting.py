"""The rewrite engine's worklist: which nodes a replacement puts back in front of the rules."""

from __future__ import annotations

import arignote.tensor as pt
from arignote.graph.fg import FunctionGraph
from arignote.graph.rewriting.basic import apply_node_rewriters, node_rewriter
from arignote.scalar.basic import Exp, Log
from arignote.tensor.elemwise import Elemwise


def _is(node, scalar_cls) -> bool:
    return isinstance(node.op, Elemwise) and isinstance(node.op.scalar_op, scalar_cls)


@node_rewriter([Elemwise])
def log_to_exp_of_exp(fgraph, node):
    """log(x) -> exp(exp(x)) (nonsense maths; a replacement two nodes deep)."""
    if _is(node, Log):
        return [pt.exp(pt.exp(node.inputs[0]))]
    return None


@node_rewriter([Elemwise])
def exp_to_sin(fgraph, node):
    if _is(node, Exp):
        return [pt.sin(node.inputs[0])]
    return None


def test_nodes_deep_inside_a_replacement_get_the_rules() -> None:
    x = pt.dvector("x")
    fg = FunctionGraph([x], [pt.log(x)], clone=False)
    count = apply_node_rewriters(fg, [log_to_exp_of_exp, exp_to_sin])
    names = sorted(str(n.op) for n in fg.toposort())
    # both new Exp nodes became Sin, not only the root of the replacement
    assert names == ["Sin", "Sin"]
    assert count == 3


def test_worklist_settles_without_rules_firing() -> None:
    x = pt.dvector("x")
    fg = FunctionGraph([x], [pt.sin(pt.cos(x))], clone=False)
    assert apply_node_rewriters(fg, [log_to_exp_of_exp]) == 0
