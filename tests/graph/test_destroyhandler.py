"""DestroyHandler: one destroyer per view tree, protected values, readers ordered first."""

from __future__ import annotations

import pytest

import arignote.scalar as ps
import arignote.tensor as pt
from arignote.graph.destroyhandler import DestroyHandler, view_root
from arignote.graph.fg import FunctionGraph
from arignote.graph.utils import InconsistencyError
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
