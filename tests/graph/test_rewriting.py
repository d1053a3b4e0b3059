"""The rewrite engine's worklist: which nodes a replacement puts back in front of the rules,
and which rules each node is offered (those tracking its Op's type)."""

from __future__ import annotations

import pytest

import arignote.tensor as pt
from arignote.graph.fg import FunctionGraph
from arignote.graph.rewriting.basic import apply_node_rewriters, constant_folding, node_rewriter
from arignote.graph.rewriting.db import RewriteRegistry, RulesByOp, rewrite_registry
from arignote.scalar.basic import Exp, Log
from arignote.tensor.elemwise import Elemwise
from tests.toy import BinaryOp, DivMod, UnaryOp, add, double, mul, neg, sub


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


# --- rules are handed out by Op type -----------------------------------------------------


def _counting_rule(tracks, name, rewrite=None):
    """A rule tracking ``tracks`` that records the nodes it is called on and returns
    ``rewrite(node)`` (by default None: no change)."""
    calls: list = []

    def fn(fgraph, node):
        calls.append(node)
        return None if rewrite is None else rewrite(node)

    fn.__name__ = name
    return node_rewriter(tracks)(fn), calls


def test_a_rule_for_a_base_class_fires_on_a_subclass_node() -> None:
    x, y = double("x"), double("y")
    fg = FunctionGraph([x, y], [neg(add(x, y))], clone=False)
    assert issubclass(UnaryOp, BinaryOp) and type(neg) is UnaryOp
    rule, calls = _counting_rule(
        [BinaryOp], "neg_to_sub", lambda n: [sub(0.0, n.inputs[0])] if n.op == neg else None
    )
    assert apply_node_rewriters(fg, [rule]) == 1
    assert [str(n.op) for n in fg.toposort()] == ["add", "sub"]
    assert neg in [n.op for n in calls]  # offered the UnaryOp node through its base class


def test_a_rule_for_another_op_is_never_called() -> None:
    x, y = double("x"), double("y")
    fg = FunctionGraph([x, y], [neg(add(x, y))], clone=False)
    on_divmod, divmod_calls = _counting_rule([DivMod], "on_divmod")
    on_unary, unary_calls = _counting_rule([UnaryOp], "on_unary")
    on_all, all_calls = _counting_rule(None, "on_all")
    assert apply_node_rewriters(fg, [on_divmod, on_unary, on_all]) == 0
    assert divmod_calls == []
    assert [n.op for n in unary_calls] == [neg]  # not the add node: BinaryOp is not a UnaryOp
    assert sorted(str(n.op) for n in all_calls) == ["add", "neg"]  # tracks nothing: sees every node


def test_a_rule_tracking_an_op_instance_sees_only_equal_ops() -> None:
    x, y = double("x"), double("y")
    fg = FunctionGraph([x, y], [mul(add(x, y), y)], clone=False)
    rule, calls = _counting_rule([mul], "on_mul")
    apply_node_rewriters(fg, [rule])
    assert [n.op for n in calls] == [mul]


def test_rules_of_an_op_type_keep_the_order_given_and_are_computed_once() -> None:
    first, _ = _counting_rule([BinaryOp], "first")
    middle, _ = _counting_rule([DivMod], "middle")
    everything, _ = _counting_rule(None, "everything")
    last, _ = _counting_rule([UnaryOp, mul], "last")
    rules = RulesByOp([first, middle, everything, last])
    unary = rules.for_op_type(UnaryOp)
    assert unary == ((first, None), (everything, None), (last, None))
    assert rules.for_op_type(UnaryOp) is unary  # cached per Op type
    # other Ops are offered ``last`` only if they equal ``mul`` (checked per node)
    assert rules.for_op_type(BinaryOp) == ((first, None), (everything, None), (last, (mul,)))
    assert rules.for_op_type(DivMod) == ((middle, None), (everything, None), (last, (mul,)))


def test_the_first_rule_that_fires_wins_in_the_order_given() -> None:
    x = double("x")
    to_add = node_rewriter([UnaryOp], name="to_add")(lambda fg, n: [add(n.inputs[0], 1.0)])
    to_mul = node_rewriter([BinaryOp], name="to_mul")(
        lambda fg, n: [mul(n.inputs[0], 2.0)] if n.op == neg else None
    )
    for order, expected in (([to_add, to_mul], "add"), ([to_mul, to_add], "mul")):
        fg = FunctionGraph([x], [neg(x)], clone=False)
        apply_node_rewriters(fg, order)
        assert [str(n.op) for n in fg.toposort()] == [expected]


def test_the_registry_hands_out_rules_by_op_type() -> None:
    reg = RewriteRegistry()
    on_unary, _ = _counting_rule([UnaryOp], "on_unary")
    on_binary, _ = _counting_rule([BinaryOp], "on_binary")
    reg.register("stage", on_unary, "mine")
    reg.register("stage", on_binary, "other")
    by_op = reg.rules_by_op("stage", ["mine"])
    assert isinstance(by_op, RulesByOp) and by_op.rules == (on_unary,)
    assert by_op.for_op_type(BinaryOp) == ()
    assert reg.rules_by_op("stage", ["all"]).for_op_type(UnaryOp) == ((on_unary, None), (on_binary, None))
    with pytest.raises(TypeError, match="register a NodeRewriter"):
        reg.register("stage", lambda fg, n: None)


def test_constant_folding_is_registered_where_it_is_defined() -> None:
    assert rewrite_registry.query("canonicalize", ["fast_compile"])[0] is constant_folding
    assert constant_folding.tracks() is None and not constant_folding.tracks  # every node
    c = double.make_constant(2.0)
    fg = FunctionGraph([], [neg(add(c, 3.0))], clone=False)
    assert apply_node_rewriters(fg, [constant_folding]) == 2
    (out,) = fg.outputs
    assert out.owner is None and out.data == -5.0


def test_a_rule_tracking_scalar_op_classes_is_offered_only_those_elemwise_nodes() -> None:
    from arignote.graph.rewriting.unify import OpPattern
    from arignote.scalar.basic import Add, Mul
    from arignote.tensor.rewriting.elemwise import elemwise_of

    seen: list = []

    @node_rewriter(elemwise_of(Log, Add))
    def on_log_or_add(fgraph, node):
        seen.append(node.op.scalar_op)
        return None

    x = pt.dvector("x")
    fg = FunctionGraph([x], [pt.log(x) * pt.exp(x) + x], clone=False)
    apply_node_rewriters(fg, [on_log_or_add])
    assert sorted(type(s).__name__ for s in seen) == ["Add", "Log"]
    # decided once per (Op type, scalar-op type): no per-node check is left
    rules = RulesByOp([on_log_or_add])
    assert rules.for_op(pt.log) == ((on_log_or_add, None),)
    assert rules.for_op(pt.exp) == ()
    assert rules.for_op(pt.mul) == ()
    # asked by Op type alone, the patterns are matched per Op
    assert rules.for_op_type(Elemwise) == ((on_log_or_add, tuple(elemwise_of(Log, Add))),)
    # a pattern on a parameter's value (not its type) is still checked per node
    by_value = node_rewriter([OpPattern(Elemwise, scalar_op=pt.mul.scalar_op)])(lambda fg, n: None)
    assert RulesByOp([by_value]).for_op(pt.mul)[0][1] is not None
    assert not isinstance(pt.mul.scalar_op, Add) and isinstance(pt.mul.scalar_op, Mul)


def test_a_rule_with_needs_is_offered_nothing_until_the_graph_has_what_it_needs() -> None:
    from arignote.scalar.basic import Add, Sin
    from arignote.tensor.rewriting.elemwise import elemwise_of

    offered = []

    @node_rewriter(elemwise_of(Add), needs=elemwise_of(Sin))
    def add_of_sin(fgraph, node):
        offered.append(node)
        if any(_is(i.owner, Sin) for i in node.inputs if i.owner is not None):
            return [pt.mul(*node.inputs)]
        return None

    x = pt.dvector("x")
    # no sin anywhere: the rule is never called
    fg = FunctionGraph([x], [pt.exp(x) + 1.0], clone=False)
    assert apply_node_rewriters(fg, [add_of_sin]) == 0 and offered == []
    # a sin made during the pass (exp -> sin) wakes it: the add, a client of the
    # replaced exp, is offered again and now matches
    fg = FunctionGraph([x], [pt.exp(x) + 1.0], clone=False)
    assert apply_node_rewriters(fg, [add_of_sin, exp_to_sin]) == 2
    (root,) = [n for n in fg.toposort() if n.outputs[0] is fg.outputs[0]]
    assert str(root.op) == "Mul" and offered


def test_a_roots_first_rule_rewrites_nested_expressions_before_their_nodes_are_visited() -> None:
    from arignote.scalar.basic import Add
    from arignote.tensor.rewriting.elemwise import elemwise_of

    offered = []

    @node_rewriter(elemwise_of(Add), roots_first=True)
    def flatten(fgraph, node):
        offered.append(("flatten", node))
        nested = [i for i in node.inputs if i.owner is not None and _is(i.owner, Add)]
        if not nested:
            return None
        terms, stack = [], list(node.inputs)
        while stack:  # (every inner add here has this sum as its only reader)
            v = stack.pop()
            if v.owner is not None and _is(v.owner, Add):
                stack.extend(v.owner.inputs)
            else:
                terms.append(v)
        return [pt.add(*terms)]

    @node_rewriter([Elemwise])
    def watch(fgraph, node):
        offered.append(("watch", node))
        return None

    xs = [pt.dvector(f"x{k}") for k in range(30)]
    total = xs[0]
    for x in xs[1:]:
        total = total + pt.exp(x)
    fg = FunctionGraph(xs, [total], clone=False)
    assert apply_node_rewriters(fg, [watch, flatten]) == 1
    root = fg.outputs[0].owner
    assert len(root.inputs) == 30
    inner = [n for kind, n in offered if kind == "flatten"]
    assert inner[0] is total.owner  # the root first, then the flat sum it made
    assert len(inner) == 2 + 1  # (and the flat sum once more in the worklist)
    watched = [n for kind, n in offered if kind == "watch"]
    assert not [n for n in watched if _is(n, Add) and n is not root]  # inner sums: never visited
    assert len(watched) == 30  # the 29 exps and the flat sum


def test_needs_must_be_decided_by_types() -> None:
    @node_rewriter([Elemwise], needs=[pt.exp])  # an Op instance: not decided by types
    def bad(fgraph, node):
        return None

    with pytest.raises(TypeError, match="needs lists Op classes"):
        RulesByOp([bad])


def test_a_rule_changing_only_constants_keeps_the_node() -> None:
    # upcast_constant_inputs gives `x + 1` the float64 constant 1.0: the node itself is
    # changed (a revertible input change), not replaced by a copy
    import numpy as np

    from arignote.graph.rewriting.engine import InputSwap
    from arignote.tensor.rewriting.elemwise import upcast_constant_inputs

    x = pt.dvector("x")
    fg = FunctionGraph([x], [x + pt.constant(np.array([1], dtype="int8"))], clone=False)
    (node,) = fg.toposort()
    changes = []

    class Watch:
        def on_change_input(self, fgraph, node, i, old, new, reason=None):
            changes.append((i, str(old.type), str(new.type), type(reason)))

    fg.attach_feature(Watch())
    chk = fg.checkpoint()
    assert apply_node_rewriters(fg, [upcast_constant_inputs]) == 1
    assert fg.toposort() == [node] and fg.outputs[0] is node.outputs[0]
    assert node.inputs[1].type.dtype == "float64" and np.asarray(node.inputs[1].data) == 1.0
    assert changes == [(1, "Vector(int8, shape=(1,))", "Vector(float64, shape=(1,))", InputSwap)]
    fg.revert(chk)
    assert node.inputs[1].type.dtype == "int8"
    fg.check_integrity()


# --- PyTensor 3's walking_rewriter / dfs_rewriter, merge_dict, inplace_graph_rewriter, and
# rewriting.utils' get_clients_at_depth and is_same_graph_with_merge


def test_walking_rewriter_orders_rewrite_like_in2out():
    import arignote.tensor as _pt
    from arignote.graph.fg import FunctionGraph as _FG
    from arignote.graph.rewriting.basic import dfs_rewriter, node_rewriter, walking_rewriter

    @node_rewriter([_pt.log])
    def log_of_exp(fgraph, node):
        (arg,) = node.inputs
        if arg.owner is not None and arg.owner.op == _pt.exp:
            return [arg.owner.inputs[0]]
        return None

    for make in (
        lambda r: dfs_rewriter(r),
        lambda r: walking_rewriter("out_to_in", r),
        lambda r: walking_rewriter("dfs", r),
    ):
        x = _pt.dvector("x")
        fg = _FG([x], [_pt.log(_pt.exp(x)) * 2], clone=False)
        make(log_of_exp).rewrite(fg)
        out = fg.outputs[0]
        assert out.owner.inputs[0] is x  # log(exp(x)) * 2 became x * 2
    with pytest.raises(ValueError, match="order"):
        walking_rewriter("sideways", log_of_exp)
    with pytest.raises(ValueError, match="dfs_rewriter needs at least one"):
        dfs_rewriter()
    assert dfs_rewriter(log_of_exp, name="mine").name == "mine"


def test_merge_dict_adds_the_values_of_shared_keys():
    from arignote.graph.rewriting.basic import merge_dict

    a, b = {"x": 1, "t": 0.5}, {"x": 2, "y": 3}
    assert merge_dict(a, b) == {"x": 3, "t": 0.5, "y": 3}
    assert a == {"x": 1, "t": 0.5}  # the inputs are not changed


def test_inplace_graph_rewriter_attaches_the_destroy_handler():
    import arignote.tensor as _pt
    from arignote.graph.destroyhandler import DestroyHandler
    from arignote.graph.fg import FunctionGraph as _FG
    from arignote.graph.rewriting.basic import inplace_graph_rewriter

    seen = []

    @inplace_graph_rewriter
    def look(fgraph):
        seen.append(any(isinstance(f, DestroyHandler) for f in fgraph._features))

    x = _pt.dvector("x")
    fg = _FG([x], [x + 1], clone=False)
    look.rewrite(fg)
    assert seen == [True]
    with pytest.raises(TypeError, match="inplace_graph_rewriter"):
        inplace_graph_rewriter(3)


def test_get_clients_at_depth_and_is_same_graph_with_merge():
    import arignote.tensor as _pt
    from arignote.graph.fg import FunctionGraph as _FG
    from arignote.graph.rewriting.utils import get_clients_at_depth, is_same_graph_with_merge

    x, z = _pt.dvector("x"), _pt.dvector("z")
    e = _pt.exp(x)
    s = e + 1
    fg = _FG([x], [s, e * 2, _pt.log(s)], clone=False)
    assert list(get_clients_at_depth(fg, e.owner, 0)) == [e.owner]
    assert {str(n.op) for n in get_clients_at_depth(fg, e.owner, 1)} == {"Add", "Mul"}
    assert [str(n.op) for n in get_clients_at_depth(fg, e.owner, 2)] == ["Log"]  # graph outputs don't count
    with pytest.raises(ValueError, match="depth"):
        list(get_clients_at_depth(fg, e.owner, -1))

    assert is_same_graph_with_merge(_pt.exp(x) + 1, _pt.exp(x) + 1)
    assert not is_same_graph_with_merge(_pt.exp(x) + 1, _pt.exp(z) + 1)
    assert is_same_graph_with_merge(_pt.exp(x) + 1, _pt.exp(z) + 1, givens={x: z})
    assert not is_same_graph_with_merge(_pt.exp(x) + 1, _pt.exp(x) + 2)
    with pytest.raises(TypeError, match="Variables"):
        is_same_graph_with_merge(x, 3)
