"""FunctionGraph: construction, clients, replace, structural edits, toposort, integrity."""

# the tests unpack whole fixture graphs, (x, y, a, b, c), and use a few names of each

from __future__ import annotations

import pickle
from collections import Counter

import pytest

from arignote.graph.basic import Apply, Constant, Variable
from arignote.graph.features import Feature
from arignote.graph.fg import ClientList, FunctionGraph, Output
from arignote.graph.op import Op
from arignote.graph.traversal import GraphCycleError
from arignote.graph.type import Type
from arignote.graph.utils import MissingInputError
from arignote.link.perform import evaluate
from tests.toy import add, divmod_op, double, integer, mul, neg, sub

# --- helpers ------------------------------------------------------------------------------


def client_counter(fg: FunctionGraph, var: Variable) -> Counter:
    """``fg.clients[var]`` with Output clients written ("output", idx)."""
    out: Counter = Counter()
    for node, i in fg.clients[var]:
        if isinstance(node.op, Output):
            assert i == 0
            out[("output", node.op.idx)] += 1
        else:
            out[(node, i)] += 1
    return out


def graph_state(fg: FunctionGraph) -> dict:
    """Everything a FunctionGraph knows, in a form that compares by identity of objects."""
    return {
        "inputs": [id(v) for v in fg.inputs],
        "outputs": [id(v) for v in fg.outputs],
        "apply_nodes": set(fg.apply_nodes),
        "variables": set(fg.variables),
        "node_inputs": {n: [id(v) for v in n.inputs] for n in fg.apply_nodes},
        "clients": {v: client_counter(fg, v) for v in fg.clients},
    }


def assert_clients_consistent(fg: FunctionGraph) -> None:
    """The seeds' invariant, checked directly (independently of check_integrity)."""
    assert set(fg.clients) == fg.variables
    for var, clients in fg.clients.items():
        for node, i in clients:
            assert node.inputs[i] is var
            if isinstance(node.op, Output):
                assert node.op == Output(node.op.idx)
                assert fg.outputs[node.op.idx] is var
                assert node.outputs == []
                assert node not in fg.apply_nodes
            else:
                assert node in fg.apply_nodes
    expected: dict = {v: Counter() for v in fg.variables}
    for node in fg.apply_nodes:
        for i, inp in enumerate(node.inputs):
            expected[inp][(node, i)] += 1
    for idx, out in enumerate(fg.outputs):
        expected[out][("output", idx)] += 1
    for var in fg.variables:
        assert client_counter(fg, var) == expected[var], var


def values(fg: FunctionGraph, **given: float) -> list:
    return evaluate(fg.outputs, {v: given[v.name] for v in fg.inputs if v.name in given})


# --- construction -------------------------------------------------------------------------


def test_clone_true_copies_and_leaves_the_original_untouched():
    x, y = double("x"), double("y")
    z = add(x, y)
    w = neg(z)
    fg = FunctionGraph([x, y], [w])
    assert [v.name for v in fg.inputs] == ["x", "y"]
    assert fg.inputs[0] is not x and fg.inputs[1] is not y
    assert fg.outputs[0] is not w and fg.outputs[0].owner is not w.owner
    originals = {x, y, z, w}
    assert not originals & fg.variables
    assert not {z.owner, w.owner} & fg.apply_nodes
    new_w = fg.outputs[0]
    assert new_w.owner.op == neg and new_w.owner.inputs[0].owner.op == add
    assert new_w.owner.inputs[0].owner.inputs == fg.inputs
    # changing the copy does not touch the original graph
    fg.replace(new_w.owner.inputs[0], fg.inputs[0])
    assert w.owner.inputs[0] is z and z.owner.inputs == [x, y]
    assert values(fg, x=2.0, y=5.0) == [-2.0]
    assert w.eval({x: 2.0, y: 5.0}) == -7.0


def test_clone_false_uses_the_given_objects():
    x, y = double("x"), double("y")
    z = add(x, y)
    w = neg(z)
    fg = FunctionGraph([x, y], [w], clone=False)
    assert fg.inputs == [x, y] and fg.inputs[0] is x and fg.inputs[1] is y
    assert fg.outputs[0] is w
    assert fg.apply_nodes == {z.owner, w.owner}
    assert fg.variables == {x, y, z, w}


def test_clone_keeps_constants():
    x = double("x")
    c = double.make_constant(2.0)
    fg = FunctionGraph([x], [mul(x, c)])
    assert c in fg.variables
    assert fg.outputs[0].owner.inputs[1] is c


def test_inputs_none_finds_the_non_constant_roots():
    x, y = double("x"), double("y")
    out = add(mul(x, 2.0), sub(y, x))
    fg = FunctionGraph(outputs=[out], clone=False)
    assert fg.inputs == [x, y]
    consts = [v for v in fg.variables if isinstance(v, Constant)]
    assert len(consts) == 1 and consts[0].data == 2.0
    assert consts[0] not in fg.inputs
    fg2 = FunctionGraph(None, [out])
    assert [v.name for v in fg2.inputs] == ["x", "y"]
    assert not set(fg2.inputs) & {x, y}


def test_input_with_an_owner_is_a_value_error():
    x = double("x")
    y = neg(x)
    with pytest.raises(ValueError, match="root"):
        FunctionGraph([y], [neg(y)])
    with pytest.raises(ValueError, match="root"):
        FunctionGraph([x, y], [neg(y)], clone=False)


@pytest.mark.parametrize("clone", [True, False])
def test_duplicated_input_is_a_value_error(clone):
    x = double("x")
    with pytest.raises(ValueError, match="twice"):
        FunctionGraph([x, x], [neg(x)], clone=clone)


def test_single_variable_as_outputs():
    x = double("x")
    y = neg(x)
    fg = FunctionGraph([x], y, clone=False)
    assert fg.outputs == [y]
    assert client_counter(fg, y) == Counter({("output", 0): 1})


@pytest.mark.parametrize("bad", [[1.0], ["y"], [None]])
def test_non_variable_outputs_are_a_type_error(bad):
    x = double("x")
    with pytest.raises(TypeError, match="output"):
        FunctionGraph([x], [neg(x), *bad])


def test_outputs_are_required():
    with pytest.raises(ValueError):
        FunctionGraph([double("x")])


def test_non_variable_input_is_a_type_error():
    x = double("x")
    with pytest.raises(TypeError, match="input"):
        FunctionGraph([x, 3.0], [neg(x)])


@pytest.mark.parametrize("clone", [True, False])
def test_missing_input_names_the_variable_and_its_type(clone):
    x, y = double("x"), double("yy_missing")
    out = neg(add(x, y))
    with pytest.raises(MissingInputError) as info:
        FunctionGraph([x], [out], clone=clone)
    msg = str(info.value)
    assert "yy_missing" in msg
    assert "double" in msg
    assert info.value.variable is y


def test_missing_input_of_another_type_is_named_with_that_type():
    class ToInt(Op):
        __props__ = ()

        def make_node(self, a, b):
            return Apply(self, [a, b], [double()])

        def perform(self, node, inputs, output_storage):
            output_storage[0][0] = float(inputs[0] + inputs[1])

    i = integer("counter")
    x = double("x")
    with pytest.raises(MissingInputError, match=r"counter.*int"):
        FunctionGraph([x], [ToInt()(x, i)], clone=False)


def test_missing_root_that_is_an_output():
    x, y = double("x"), double("y")
    with pytest.raises(MissingInputError, match="y"):
        FunctionGraph([x], [neg(x), y], clone=False)


# --- clients ------------------------------------------------------------------------------


def _rich_graph():
    """Inputs x, y, u (u unused); repeated inputs, a two-output node with one output unused,
    a constant, an input as an output, an output listed twice."""
    x, y, u = double("x"), double("y"), double("u")
    q, r = divmod_op(x, y)
    s = add(x, x)
    t = mul(s, q)
    v = sub(t, 3.0)
    return (x, y, u, q, r, s, t, v), FunctionGraph([x, y, u], [v, x, t, v], clone=False)


def test_clients_satisfy_the_seeds_invariant():
    (x, y, u, q, r, s, t, v), fg = _rich_graph()
    fg.check_integrity()
    assert_clients_consistent(fg)
    assert client_counter(fg, x) == Counter(
        {(q.owner, 0): 1, (s.owner, 0): 1, (s.owner, 1): 1, ("output", 1): 1}
    )
    assert client_counter(fg, v) == Counter({("output", 0): 1, ("output", 3): 1})
    assert client_counter(fg, t) == Counter({(v.owner, 0): 1, ("output", 2): 1})
    assert fg.clients[r] == [] and fg.clients[u] == []
    assert fg.get_clients(s) is fg.clients[s]


def test_output_client_nodes():
    (x, y, u, q, r, s, t, v), fg = _rich_graph()
    for var in fg.outputs:
        out_nodes = [n for n, _ in fg.clients[var] if isinstance(n.op, Output)]
        assert out_nodes
        for n in out_nodes:
            assert type(n.op) is Output
            assert fg.outputs[n.op.idx] is var
            assert n.inputs == [var]
            assert str(n.op) == f"Output{{idx={n.op.idx}}}"
    idxs = sorted(n.op.idx for var in set(fg.outputs) for n, _ in fg.clients[var] if isinstance(n.op, Output))
    assert idxs == [0, 1, 2, 3]


def test_apply_nodes_and_variables_are_exact():
    (x, y, u, q, r, s, t, v), fg = _rich_graph()
    assert fg.apply_nodes == {q.owner, s.owner, t.owner, v.owner}
    (const,) = [i for i in v.owner.inputs if isinstance(i, Constant)]
    assert fg.variables == {x, y, u, q, r, s, t, v, const}


def test_seeds_example_shape():
    # the seeds' ``(v + 1).sum()``: the first node feeds the second, which is the output
    v = double("v")
    out = neg(add(v, 1.0))
    fg = FunctionGraph([v], [out])
    topo = fg.toposort()
    assert [n.op for n in topo] == [add, neg]
    assert fg.clients[topo[0].outputs[0]] == [(topo[1], 0)]
    var = topo[0].outputs[0]
    node, i = fg.clients[var][0]
    assert isinstance(node, Apply) and node.inputs[i] is var
    var = topo[1].outputs[0]
    ((node, i),) = fg.clients[var]
    assert isinstance(node.op, Output) and node.op.idx == 0 and i == 0
    assert fg.outputs[node.op.idx] is var


# --- replace ------------------------------------------------------------------------------


def _abc_graph():
    x, y = double("x"), double("y")
    a = neg(x)
    b = add(a, a)
    c = mul(a, y)
    return (x, y, a, b, c), FunctionGraph([x, y], [b, c, a], clone=False)


def test_replace_switches_every_client():
    (x, y, a, b, c), fg = _abc_graph()
    new = sub(x, y)
    fg.replace(a, new, reason="test")
    assert b.owner.inputs == [new, new]
    assert c.owner.inputs == [new, y]
    assert fg.outputs == [b, c, new]
    assert a.owner not in fg.apply_nodes
    assert a not in fg.variables and a not in fg.clients
    assert client_counter(fg, new) == Counter(
        {(b.owner, 0): 1, (b.owner, 1): 1, (c.owner, 0): 1, ("output", 2): 1}
    )
    fg.check_integrity()
    assert_clients_consistent(fg)
    assert values(fg, x=5.0, y=2.0) == [6.0, 6.0, 3.0]


def test_replace_with_an_existing_variable():
    (x, y, a, b, c), fg = _abc_graph()
    fg.replace(a, y)
    assert fg.apply_nodes == {b.owner, c.owner}
    assert fg.variables == {x, y, b, c}
    assert fg.clients[x] == []
    assert x in fg.inputs
    fg.check_integrity()
    assert values(fg, x=5.0, y=2.0) == [4.0, 4.0, 2.0]


def test_replace_prunes_unused_nodes_and_constants():
    x, y = double("x"), double("y")
    k = double.make_constant(7.0)
    a = mul(x, k)
    b = add(a, 1.0)
    c = neg(b)
    fg = FunctionGraph([x, y], [c], clone=False)
    one = b.owner.inputs[1]
    assert {k, one} <= fg.variables
    fg.replace(b, y)
    assert fg.apply_nodes == {c.owner}
    assert fg.variables == {x, y, c}
    assert set(fg.clients) == {x, y, c}
    assert k not in fg.variables and one not in fg.variables
    fg.check_integrity()


def test_replace_output_updates_outputs():
    (x, y, a, b, c), fg = _abc_graph()
    new = neg(y)
    fg.replace(b, new)
    assert fg.outputs == [new, c, a]
    assert client_counter(fg, new) == Counter({("output", 0): 1})
    assert b not in fg.variables
    fg.check_integrity()


def test_replace_by_a_function_of_itself_is_allowed():
    # a new node that uses the replaced variable keeps using it: no cycle
    (x, y, a, b, c), fg = _abc_graph()
    new = mul(a, 10.0)
    fg.replace(a, new)
    assert b.owner.inputs == [new, new] and new.owner.inputs[0] is a
    assert fg.clients[a] == [(new.owner, 0)]
    fg.check_integrity()
    assert values(fg, x=1.0, y=2.0) == [-20.0, -20.0, -10.0]
    # the same with an input
    fg.replace(x, add(x, 1.0))
    fg.check_integrity()
    assert values(fg, x=1.0, y=2.0) == [-40.0, -40.0, -20.0]


@pytest.mark.parametrize("which", ["from_client", "from_output", "input_by_output", "deep"])
def test_replace_that_would_cycle_is_a_value_error_and_changes_nothing(which):
    (x, y, a, b, c), fg = _abc_graph()
    if which == "from_client":
        var, new = a, mul(b, 2.0)
    elif which == "from_output":
        var, new = a, c
    elif which == "input_by_output":
        var, new = x, b
    else:
        var, new = y, neg(add(neg(c), a))
    before = graph_state(fg)
    with pytest.raises(ValueError, match="cycle"):
        fg.replace(var, new)
    assert graph_state(fg) == before
    fg.check_integrity()


class Bounded(Type):
    """Floats in [lo, hi]; Bounded(0, 10).is_super(Bounded(0, 5))."""

    __props__ = ("lo", "hi")

    def __init__(self, lo, hi):
        self.lo, self.hi = lo, hi

    def filter(self, x, strict=False, allow_downcast=None):
        x = float(x)
        if not self.lo <= x <= self.hi:
            raise TypeError(f"{x} outside [{self.lo}, {self.hi}]")
        return x

    def is_super(self, otype):
        if isinstance(otype, Bounded):
            return self.lo <= otype.lo and otype.hi <= self.hi
        return None


class Clip(Op):
    __props__ = ("lo", "hi")

    def __init__(self, lo, hi):
        self.lo, self.hi = lo, hi

    def make_node(self, x):
        return Apply(self, [x], [Bounded(self.lo, self.hi)()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = min(max(inputs[0], self.lo), self.hi)


def test_replace_with_a_narrower_type_is_allowed():
    x = Bounded(0, 10)("x")
    wide = Clip(0, 10)(x)
    out = Clip(0, 8)(wide)
    fg = FunctionGraph([x], [out], clone=False)
    narrow = Clip(0, 5)(x)
    fg.replace(wide, narrow)
    assert out.owner.inputs[0] is narrow
    assert evaluate(fg.outputs, {x: 9.0}) == [5.0]
    fg.check_integrity()


def test_replace_with_a_wider_type_is_a_type_error_naming_both():
    x = Bounded(0, 10)("x")
    narrow = Clip(0, 5)(x)
    out = Clip(0, 8)(narrow)
    fg = FunctionGraph([x], [out], clone=False)
    before = graph_state(fg)
    with pytest.raises(TypeError) as info:
        fg.replace(narrow, Clip(0, 10)(x))
    assert "Bounded{lo=0, hi=10}" in str(info.value)
    assert "Bounded{lo=0, hi=5}" in str(info.value)
    assert graph_state(fg) == before


def test_replace_with_an_incompatible_type_is_a_type_error():
    (x, y, a, b, c), fg = _abc_graph()
    before = graph_state(fg)
    with pytest.raises(TypeError) as info:
        fg.replace(a, integer("i"))
    assert "int" in str(info.value) and "double" in str(info.value)
    assert graph_state(fg) == before


def test_replace_a_variable_not_in_the_graph_does_nothing():
    (x, y, a, b, c), fg = _abc_graph()
    before = graph_state(fg)
    fg.replace(neg(x), y)
    fg.replace(double("elsewhere"), y)
    fg.replace(a, a)
    assert graph_state(fg) == before


def test_replace_needing_an_undeclared_input():
    (x, y, a, b, c), fg = _abc_graph()
    z = double("z")
    before = graph_state(fg)
    with pytest.raises(MissingInputError, match="z"):
        fg.replace(a, add(x, z))
    assert graph_state(fg) == before
    fg.check_integrity()
    new = add(x, z)
    fg.replace(a, new, import_missing=True)
    assert fg.inputs == [x, y, z]
    assert new.owner in fg.apply_nodes
    fg.check_integrity()
    assert values(fg, x=1.0, y=2.0, z=3.0) == [8.0, 8.0, 4.0]


def test_replace_non_variable_becomes_a_constant():
    (x, y, a, b, c), fg = _abc_graph()
    fg.replace(a, 4.0)
    assert isinstance(fg.outputs[2], Constant) and fg.outputs[2].data == 4.0
    fg.check_integrity()
    assert values(fg, x=0.0, y=0.5) == [8.0, 2.0, 4.0]


def test_replace_all_in_order():
    (x, y, a, b, c), fg = _abc_graph()
    a2 = sub(y, x)
    b2 = neg(a)
    fg.replace_all([(a, a2), (b, b2)])
    # the pairs apply in order: a is gone after the first, and the second brings it back
    # (as b2's input) without re-routing anything to it
    assert fg.outputs == [b2, c, a2]
    assert b2.owner.inputs == [a] and c.owner.inputs == [a2, y]
    assert a.owner in fg.apply_nodes and fg.clients[a] == [(b2.owner, 0)]
    fg.check_integrity()
    assert values(fg, x=1.0, y=3.0) == [1.0, 6.0, 2.0]


def test_verbose_replace_prints(capsys):
    (x, y, a, b, c), fg = _abc_graph()
    fg.replace(a, y, reason="myrule", verbose=True)
    assert "myrule" in capsys.readouterr().out


# --- change_node_input --------------------------------------------------------------------


def test_change_node_input():
    (x, y, a, b, c), fg = _abc_graph()
    fg.change_node_input(c.owner, 0, x)
    assert c.owner.inputs == [x, y]
    assert client_counter(fg, a) == Counter({(b.owner, 0): 1, (b.owner, 1): 1, ("output", 2): 1})
    fg.check_integrity()
    fg.change_node_input(b.owner, 1, y)
    fg.change_node_input(b.owner, 0, y)
    fg.remove_output(2)
    assert a not in fg.variables and a.owner not in fg.apply_nodes
    fg.check_integrity()


def test_change_node_input_on_an_output_node():
    (x, y, a, b, c), fg = _abc_graph()
    ((node, i),) = [(n, i) for n, i in fg.clients[c] if isinstance(n.op, Output)]
    fg.change_node_input(node, i, y)
    assert fg.outputs == [b, y, a]
    assert c not in fg.variables
    fg.check_integrity()


def test_change_node_input_checks_types():
    (x, y, a, b, c), fg = _abc_graph()
    before = graph_state(fg)
    with pytest.raises(TypeError, match="int"):
        fg.change_node_input(c.owner, 1, integer("i"), check=True)
    assert graph_state(fg) == before


def test_change_node_input_needing_an_undeclared_input():
    (x, y, a, b, c), fg = _abc_graph()
    z = double("z")
    before = graph_state(fg)
    with pytest.raises(MissingInputError):
        fg.change_node_input(c.owner, 1, neg(z))
    assert graph_state(fg) == before
    fg.change_node_input(c.owner, 1, neg(z), import_missing=True)
    assert fg.inputs[-1] is z
    fg.check_integrity()


# --- inputs and outputs -------------------------------------------------------------------


def test_add_input():
    (x, y, a, b, c), fg = _abc_graph()
    z = double("z")
    fg.add_input(z)
    fg.add_input(z)  # a repeat is ignored
    assert fg.inputs == [x, y, z]
    assert z in fg.variables and fg.clients[z] == []
    fg.check_integrity()
    with pytest.raises(ValueError):
        fg.add_input(b)
    # z can now be used
    fg.replace(a, neg(z))
    fg.check_integrity()


def test_add_output():
    (x, y, a, b, c), fg = _abc_graph()
    fg.add_output(a)
    assert fg.outputs == [b, c, a, a]
    assert client_counter(fg, a)[("output", 3)] == 1
    new = add(c, 1.0)
    fg.add_output(new)
    assert fg.outputs[4] is new and new.owner in fg.apply_nodes
    fg.add_output(x)
    assert fg.outputs[5] is x
    fg.check_integrity()
    assert_clients_consistent(fg)
    assert values(fg, x=1.0, y=3.0) == [-2.0, -3.0, -1.0, -1.0, -2.0, 1.0]


def test_add_output_missing_input():
    (x, y, a, b, c), fg = _abc_graph()
    z = double("z")
    before = graph_state(fg)
    with pytest.raises(MissingInputError, match="z"):
        fg.add_output(add(a, z))
    assert graph_state(fg) == before
    fg.add_output(add(a, z), import_missing=True)
    assert fg.inputs == [x, y, z] and len(fg.outputs) == 4
    fg.check_integrity()


def _output_indices(fg):
    return {
        idx: var
        for var in set(fg.outputs)
        for n, _ in fg.clients[var]
        if isinstance(n.op, Output)
        for idx in [n.op.idx]
    }


def test_remove_output_renumbers():
    (x, y, a, b, c), fg = _abc_graph()
    fg.add_output(neg(b))
    d = fg.outputs[3]
    fg.remove_output(0)
    assert fg.outputs == [c, a, d]
    assert _output_indices(fg) == {0: c, 1: a, 2: d}
    assert b in fg.variables  # still used by d
    fg.check_integrity()
    fg.remove_output(-1)
    assert fg.outputs == [c, a]
    assert b not in fg.variables and b.owner not in fg.apply_nodes and d not in fg.variables
    fg.check_integrity()
    with pytest.raises(IndexError):
        fg.remove_output(2)
    fg.remove_output(1)
    fg.remove_output(0)
    assert fg.outputs == [] and fg.apply_nodes == set()
    assert fg.variables == {x, y}
    fg.check_integrity()


def test_remove_output_listed_twice():
    (x, y, a, b, c), fg = _abc_graph()
    fg.add_output(b)
    fg.remove_output(0)
    assert fg.outputs == [c, a, b]
    assert client_counter(fg, b) == Counter({("output", 2): 1})
    fg.check_integrity()


def test_remove_node_removes_descendants_and_affected_outputs():
    x, w = double("x"), double("w")
    a = neg(x)
    b = mul(w, 3.0)
    c = add(a, 1.0)
    d = sub(w, 1.0)
    e = add(c, b)
    fg = FunctionGraph([x, w], [a, b, c, d, e], clone=False)
    fg.remove_node(a.owner)
    assert fg.outputs == [b, d]
    assert _output_indices(fg) == {0: b, 1: d}
    assert fg.apply_nodes == {b.owner, d.owner}
    assert not {a, c, e} & fg.variables
    fg.check_integrity()
    assert values(fg, x=1.0, w=2.0) == [6.0, 1.0]


def test_remove_node_prunes_what_only_it_used():
    x, y = double("x"), double("y")
    a = neg(x)
    b = mul(a, y)
    c = add(b, 1.0)
    d = sub(y, 2.0)
    fg = FunctionGraph([x, y], [c, d], clone=False)
    fg.remove_node(b.owner)
    assert fg.outputs == [d]
    assert fg.apply_nodes == {d.owner}
    assert fg.variables == {x, y, d, d.owner.inputs[1]}
    fg.check_integrity()
    fg.remove_node(b.owner)  # not in the graph any more: nothing happens
    fg.remove_node(neg(y).owner)
    fg.check_integrity()


def test_remove_node_used_twice_by_outputs():
    x, w = double("x"), double("w")
    a = neg(x)
    fg = FunctionGraph([x, w], [a, w, a, w], clone=False)
    fg.remove_node(a.owner)
    assert fg.outputs == [w, w]
    assert client_counter(fg, w) == Counter({("output", 0): 1, ("output", 1): 1})
    fg.check_integrity()


def test_remove_node_with_two_outputs():
    x, y = double("x"), double("y")
    q, r = divmod_op(x, y)
    fg = FunctionGraph([x, y], [add(q, 1.0), y, neg(r), x], clone=False)
    fg.remove_node(q.owner)
    assert fg.outputs == [y, x]
    assert fg.apply_nodes == set()
    fg.check_integrity()


def test_remove_input():
    x, y = double("x"), double("y")
    a = neg(x)
    b = add(a, y)
    c = mul(y, 2.0)
    fg = FunctionGraph([x, y], [b, c, x, a], clone=False)
    fg.remove_input(0)
    assert fg.inputs == [y]
    assert fg.outputs == [c]
    assert fg.apply_nodes == {c.owner}
    assert x not in fg.variables and x not in fg.clients
    fg.check_integrity()


def test_remove_input_that_is_an_output_twice():
    x, w = double("x"), double("w")
    fg = FunctionGraph([x, w], [x, w, x], clone=False)
    fg.remove_input(0)
    assert fg.inputs == [w] and fg.outputs == [w]
    fg.check_integrity()


# --- toposort and orderings ---------------------------------------------------------------


def test_toposort_puts_dependencies_first():
    (x, y, u, q, r, s, t, v), fg = _rich_graph()
    order = fg.toposort()
    assert set(order) == fg.apply_nodes and len(order) == len(fg.apply_nodes)
    pos = {n: k for k, n in enumerate(order)}
    for node in order:
        for inp in node.inputs:
            if inp.owner is not None:
                assert pos[inp.owner] < pos[node]


class Orderings(Feature):
    def __init__(self, pairs=()):
        self.pairs = list(pairs)

    def orderings(self, fgraph, ordered=True):
        d: dict = {}
        for before, after in self.pairs:
            d.setdefault(after, []).append(before)
        return d


def test_toposort_honours_feature_orderings():
    x = double("x")
    a = neg(x)
    b = add(x, 1.0)
    fg = FunctionGraph([x], [a, b], clone=False)
    assert fg.toposort() == [a.owner, b.owner]
    fg.attach_feature(Orderings([(b.owner, a.owner)]))
    assert fg.toposort() == [b.owner, a.owner]
    assert fg.orderings() == {a.owner: [b.owner]}
    fg2 = FunctionGraph([x], [b, a], clone=False, features=[Orderings([(a.owner, b.owner)])])
    assert fg2.toposort() == [a.owner, b.owner]


def test_orderings_that_loop_are_a_cycle_error():
    x = double("x")
    a = neg(x)
    b = add(a, 1.0)
    fg = FunctionGraph([x], [b], clone=False, features=[Orderings([(b.owner, a.owner)])])
    with pytest.raises(GraphCycleError):
        fg.toposort()


def test_orderings_must_be_a_dict():
    class Bad(Feature):
        def orderings(self, fgraph, ordered=True):
            return [1]

    x = double("x")
    fg = FunctionGraph([x], [neg(neg(x))], clone=False, features=[Bad()])
    with pytest.raises(TypeError):
        fg.toposort()


# --- check_integrity ----------------------------------------------------------------------


def _corrupt(kind, parts, fg):
    (x, y, a, b, c) = parts
    if kind == "extra_client":
        fg.clients[a].append((c.owner, 1))
    elif kind == "missing_client":
        fg.clients[a].remove((c.owner, 0))
    elif kind == "node_missing":
        fg.apply_nodes.discard(b.owner)
    elif kind == "stray_node":
        fg.apply_nodes.add(neg(x).owner)
    elif kind == "variable_missing":
        fg.variables.discard(c)
    elif kind == "stray_variable":
        fg.variables.add(double("stray"))
    elif kind == "stray_clients_key":
        fg.clients[double("stray")] = []
    elif kind == "outputs_edited":
        fg.outputs[0] = c
    elif kind == "output_client_wrong_idx":
        k = next(k for k, (n, _) in enumerate(fg.clients[b]) if isinstance(n.op, Output))
        fg.clients[b][k] = (Output(1).make_node(b), 0)
    elif kind == "node_inputs_edited":
        c.owner.inputs[1] = x
    elif kind == "undeclared_input":
        z = double("z")
        c.owner.inputs[1] = z
        fg.clients[z] = [(c.owner, 1)]
        fg.clients[y].remove((c.owner, 1))
        fg.variables.add(z)
    else:
        raise AssertionError(kind)


@pytest.mark.parametrize(
    ("kind", "message"),
    [
        ("extra_client", "does not use it"),
        ("missing_client", "Wrong clients"),
        ("node_missing", "apply_nodes is out of date"),
        ("stray_node", "apply_nodes is out of date"),
        ("variable_missing", "variables is out of date"),
        ("stray_variable", "variables is out of date"),
        ("stray_clients_key", "not in the graph"),
        ("outputs_edited", "out of date|Output client"),
        ("output_client_wrong_idx", "Output client"),
        ("node_inputs_edited", "does not use it|Wrong clients"),
        ("undeclared_input", "Undeclared input"),
    ],
)
def test_check_integrity_catches_corruption(kind, message):
    parts, fg = _abc_graph()
    fg.check_integrity()
    _corrupt(kind, parts, fg)
    with pytest.raises(Exception, match=message):
        fg.check_integrity()


def test_check_integrity_catches_a_cycle():
    (x, y, a, b, c), fg = _abc_graph()
    a.owner.inputs[0] = b  # by hand: a = neg(b), b = add(a, a)
    with pytest.raises(GraphCycleError):
        fg.check_integrity()


# --- misc ---------------------------------------------------------------------------------


def test_str():
    x, y = double("x"), double("y")
    fg = FunctionGraph([x, y], [neg(add(x, y)), y], clone=False)
    assert str(fg) == "FunctionGraph(neg(add(x, y)), y)"


def test_setup_node_rejects_a_bad_view_map():
    class BadView(Op):
        __props__ = ()
        view_map = {0: [3]}

        def make_node(self, x):
            return Apply(self, [x], [double()])

        def perform(self, node, inputs, output_storage):
            output_storage[0][0] = inputs[0]

    x = double("x")
    with pytest.raises(ValueError, match="view_map"):
        FunctionGraph([x], [BadView()(x)], clone=False)


# --- scale --------------------------------------------------------------------------------


@pytest.mark.slow
def test_chain_100k_deep_without_recursion():
    x = double("x")
    v = x
    for _ in range(100_000):
        v = neg(v)
    fg = FunctionGraph([x], [v], clone=False)
    fg.check_integrity()
    order = fg.toposort()
    assert len(order) == 100_000
    assert order[0].inputs[0] is x and order[-1].outputs[0] is v
    fg2 = fg.clone(check_integrity=False)
    assert len(fg2.apply_nodes) == 100_000 and not fg2.apply_nodes & fg.apply_nodes
    assert fg2.outputs[0].owner.op == neg and fg2.outputs[0] is not v
    # prune the whole chain at once
    fg2.replace(fg2.outputs[0], fg2.inputs[0])
    assert fg2.apply_nodes == set() and fg2.variables == {fg2.inputs[0]}
    fg.remove_node(order[50_000])
    assert fg.outputs == [] and fg.apply_nodes == set()


def test_client_lists_hold_each_use_once_and_forget_one_in_constant_time():
    # a client list is an insertion-ordered set: a use cannot be recorded twice (the
    # corruption check_integrity used to look for), and removing one does not scan the others
    x = double("x")
    outs = [neg(x) for _ in range(2000)]
    fg = FunctionGraph([x], outs, clone=False)
    clients = fg.clients[x]
    first = clients[0]
    clients.append(first)
    assert len(clients) == 2000 and clients[0] == first
    assert clients == [(o.owner, 0) for o in outs] and clients[-1] == (outs[-1].owner, 0)
    clients.remove(first)
    assert len(clients) == 1999 and first not in clients
    with pytest.raises(ValueError):
        clients.remove(first)
    plain = ClientList()
    plain.extend([("a", 0), ("b", 1)])
    assert pickle.loads(pickle.dumps(plain)) == [("a", 0), ("b", 1)]


def test_toposort_is_kept_until_the_graph_changes():
    x = double("x")
    y = neg(x)
    out = add(mul(y, x), x)
    fg = FunctionGraph([x], [out], clone=False)
    first = fg.toposort()
    again = fg.toposort()
    assert again == first and again is not first  # the same order, a new list each time
    again.clear()
    assert fg.toposort() == first  # a caller's edits do not reach the kept order
    new = sub(x, x)
    fg.replace(y, new)
    order = fg.toposort()
    assert new.owner in order and y.owner not in order
    assert order.index(new.owner) < order.index(out.owner.inputs[0].owner)
    fg.remove_output(0)
    assert fg.toposort() == []


def test_the_order_kept_from_building_is_toposort_s():
    from arignote.graph.traversal import io_toposort

    x, y = double("x"), double("y")
    a = neg(x)
    b = add(a, y)
    c = mul(sub(b, a), a)
    for outs in ([c, b, add(a, a)], [a, c], [x, c, x]):
        fg = FunctionGraph([x, y], outs, clone=True)
        assert fg.toposort() == io_toposort(fg.inputs, fg.outputs)


def test_get_output_client_and_dprint():
    x, y = double("x"), double("y")
    z = add(x, y)
    fg = FunctionGraph([x, y], [z, x], clone=False)
    node, i = fg.get_output_client(1)
    assert isinstance(node.op, Output) and node.op.idx == 1 and i == 0 and node.inputs == [x]
    assert fg.get_output_client(0)[0].inputs == [z]
    fg.clients[x].remove((node, 0))  # a graph whose clients are out of date
    with pytest.raises(LookupError, match="output 1"):
        fg.get_output_client(1)
    fg = FunctionGraph([x, y], [z], clone=False)
    text = fg.dprint(file="str")
    assert text.splitlines()[0].startswith(str(z.owner.op)) and "x [id" in text and "y [id" in text
    assert z.owner.dprint(file="str") == z.dprint(file="str")
