"""DestroyHandler: one destroyer per view tree, protected values, readers ordered first."""

from __future__ import annotations

import pytest

import arignote.scalar as ps
import arignote.tensor as pt
from arignote.graph.destroyhandler import DestroyHandler, view_root
from arignote.graph.features import ReplaceValidate
from arignote.graph.fg import FunctionGraph
from arignote.graph.utils import InconsistencyError
from arignote.scalar.composite import Composite
from arignote.tensor.elemwise import Elemwise

add_inplace = Elemwise(ps.add, inplace_pattern={0: 0})


def _fg(inputs, outputs, **kw):
    return FunctionGraph(inputs, outputs, features=[DestroyHandler(**kw)], clone=False)


def test_a_destroyer_of_an_intermediate_is_valid_and_ordered_after_its_readers():
    x = pt.dvector("x")
    y = pt.exp(x)
    reader = pt.log(y)
    z = add_inplace(y, 1.0)
    fg = _fg([x], [z + reader])
    assert fg.validate()
    order = fg.toposort()
    assert order.index(reader.owner) < order.index(z.owner)  # log(y) reads y before it is overwritten


def test_a_graph_input_is_protected_unless_mutable():
    x = pt.dvector("x")
    with pytest.raises(InconsistencyError, match="protected"):
        _fg([x], [add_inplace(x, 1.0)]).validate()
    assert _fg([x], [add_inplace(x, 1.0)], mutable=[x]).validate()


def test_two_destroyers_of_one_value_are_refused():
    x = pt.dvector("x")
    y = pt.exp(x)
    with pytest.raises(InconsistencyError, match="more than one"):
        _fg([x], [add_inplace(y, 1.0), add_inplace(y, 2.0)]).validate()


def test_a_value_the_function_returns_is_not_overwritten():
    x = pt.dvector("x")
    y = pt.exp(x)
    with pytest.raises(InconsistencyError, match="returns"):
        _fg([x], [y, add_inplace(y, 1.0)]).validate()


def test_views_share_the_fate_of_their_root():
    x = pt.dmatrix("x")
    y = pt.exp(x)
    view = y.T  # a DimShuffle: a view of y
    assert view_root(view) is y
    with pytest.raises(InconsistencyError, match="returns"):
        _fg([x], [view, add_inplace(y, 1.0)]).validate()


def test_a_reader_that_needs_the_destroyer_first_is_refused():
    x = pt.dvector("x")
    y = pt.exp(x)
    z = add_inplace(y, 1.0)
    late_reader = y * z  # reads y, but needs z, which overwrote y
    with pytest.raises(InconsistencyError, match="needs"):
        _fg([x], [late_reader]).validate()


def test_can_destroy_asks_before_a_change():
    x = pt.dvector("x")
    y = pt.exp(x)
    out = pt.log(y) + y
    fg = _fg([x], [out])
    handler = fg.destroy_handler
    (add_node,) = [n for n in fg.apply_nodes if n.outputs[0] is out]
    assert handler.can_destroy(fg, y.owner, 0) is False  # x is a protected input
    assert handler.can_destroy(fg, add_node, 1) is True  # y: its other reader can run first


def test_two_nodes_each_overwriting_what_the_other_reads_are_refused():
    # a * b written into a and a * b written into b: each must run after the other, a cycle
    # only the orderings make (no data edge joins the two nodes)
    x = pt.dvector("x")
    a, b = pt.exp(x), pt.log(x)
    first = Elemwise(ps.mul, inplace_pattern={0: 0})(a, b)
    second = Elemwise(ps.mul, inplace_pattern={0: 1})(a, b)
    with pytest.raises(InconsistencyError, match="needs"):
        _fg([x], [first + second]).validate()
    fg = _fg([x], [first + Elemwise(ps.mul)(a, b)])
    (plain,) = [n for n in fg.apply_nodes if n.op == Elemwise(ps.mul)]
    assert fg.destroy_handler.can_destroy(fg, plain, 0) is False  # a: overwritten already
    assert fg.destroy_handler.can_destroy(fg, plain, 1) is False  # b: first reads it, after
    assert fg.validate()


def _two_outputs_in_place(a, b):
    i0, i1 = ps.float64("i0"), ps.float64("i1")
    comp = Composite([i0, i1], [ps.exp(i0) + i1, i0 * i1])
    return Elemwise(comp, inplace_pattern={0: 0, 1: 1})(a, b)


def test_one_node_overwriting_one_value_through_two_inputs_is_refused():
    x = pt.dvector("x")
    y = pt.exp(x)
    out0, out1 = _two_outputs_in_place(y, y)
    with pytest.raises(InconsistencyError, match="more than one of its inputs"):
        _fg([x], [out0 + out1]).validate()
    m = pt.dmatrix("m")
    z = pt.exp(m)
    out0, out1 = _two_outputs_in_place(z, z.T)  # two views of one value
    with pytest.raises(InconsistencyError, match="more than one of its inputs"):
        _fg([m], [out0 + out1]).validate()


def test_a_refused_change_leaves_the_books_as_they_were():
    x = pt.dvector("x")
    a, b = pt.exp(x), pt.log(x)
    reader = pt.sin(a)
    out0, out1 = _two_outputs_in_place(a, b)
    fg = FunctionGraph(
        [x], [out0 + out1 + reader], features=[DestroyHandler(), ReplaceValidate()], clone=False
    )
    assert fg.validate()
    node = out0.owner
    assert reader.owner in fg.destroy_handler.orderings(fg)[node]
    with pytest.raises(InconsistencyError):
        fg.replace_validate(b, a)  # the node would overwrite a twice: undone
    assert node.inputs[1] is b
    # the node still overwrites a: sin(a) still runs first, nobody else may overwrite a
    assert reader.owner in fg.destroy_handler.orderings(fg)[node]
    assert fg.destroy_handler.can_destroy(fg, reader.owner, 0) is False
    order = fg.toposort()
    assert order.index(reader.owner) < order.index(node)


# -- Supervisor: Variables kept from in-place Ops, and the graph's two questions ----------


def test_a_supervisor_protects_an_intermediate_the_handler_alone_lets_be_overwritten():
    from arignote.graph.destroyhandler import Supervisor

    x = pt.dvector("x")
    y = pt.exp(x)
    z = add_inplace(y, 1.0)
    assert _fg([x], [z]).validate()  # (an intermediate: fine without a Supervisor)
    fg = FunctionGraph([x], [z], features=[Supervisor([y]), DestroyHandler()], clone=False)
    with pytest.raises(InconsistencyError, match="protected"):
        fg.validate()
    assert not fg.destroy_handler.can_destroy(fg, z.owner, 0)


def test_a_supervisor_attached_after_the_damage_is_refused_and_one_per_graph():
    from arignote.graph.destroyhandler import Supervisor

    x = pt.dvector("x")
    y = pt.exp(x)
    fg = _fg([x], [add_inplace(y, 1.0)])
    with pytest.raises(InconsistencyError, match="already overwrite the protected"):
        fg.attach_feature(Supervisor([y]))
    fg2 = _fg([x], [pt.exp(x)])
    first = Supervisor([x])
    fg2.attach_feature(first)
    fg2.attach_feature(Supervisor([x]))  # declined (AlreadyThere), as PyTensor's
    assert fg2._supervisor is first and sum(isinstance(f, Supervisor) for f in fg2._features) == 1


def test_a_supervised_view_protects_its_root():
    from arignote.graph.destroyhandler import Supervisor

    x = pt.dvector("x")
    y = pt.exp(x)
    v = y[1:]  # a view of y: overwriting y overwrites v
    z = add_inplace(y, 1.0)
    fg = FunctionGraph([x], [z, v.sum()], features=[Supervisor([v]), DestroyHandler()], clone=False)
    with pytest.raises(InconsistencyError):
        fg.validate()
    assert Supervisor([v]).protects(y) and not Supervisor([v]).protects(x)


def test_the_graph_answers_destroyers_and_has_destroyers():
    x, w = pt.dvector("x"), pt.dvector("w")
    y = pt.exp(x)
    z = add_inplace(y, w)
    fg = _fg([x, w], [z])
    assert fg.destroyers(y) == [z.owner]
    assert fg.destroyers(x) == []
    assert fg.has_destroyers([x, y]) and not fg.has_destroyers([x, w])
    fg.remove_feature(fg.destroy_handler)
    assert not hasattr(fg, "destroyers") and not hasattr(fg, "has_destroyers")
