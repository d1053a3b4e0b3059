"""Walking graphs: :mod:`arignote.graph.traversal` (and deep graphs through every walker)."""

from __future__ import annotations

import gc
import sys

import pytest

from arignote.graph.basic import Apply, Constant, clone_get_equiv, equal_computations
from arignote.graph.op import HasInnerGraph, Op
from arignote.graph.traversal import (
    GraphCycleError,
    ancestors,
    apply_depends_on,
    applys_between,
    explicit_graph_inputs,
    general_toposort,
    get_var_by_name,
    graph_inputs,
    io_toposort,
    orphans_between,
    toposort,
    variable_depends_on,
    vars_between,
    walk,
)
from tests.toy import add, divmod_op, double, mul, neg, sub


@pytest.fixture
def g():
    """c = (x + y) * z - x, with every intermediate named."""

    class G:
        pass

    g = G()
    g.x, g.y, g.z = double("x"), double("y"), double("z")
    g.a = add(g.x, g.y)
    g.a.name = "a"
    g.b = mul(g.a, g.z)
    g.b.name = "b"
    g.c = sub(g.b, g.x)
    g.c.name = "c"
    return g


def assert_topological(nodes):
    """Every node comes after the owners of its inputs that are in the list."""
    position = {n: i for i, n in enumerate(nodes)}
    assert len(position) == len(nodes), "a node is listed twice"
    for n in nodes:
        for inp in n.inputs:
            if inp.owner in position:
                assert position[inp.owner] < position[n]


# --- walk ----------------------------------------------------------------------------------

TREE = {"a": ["b", "c"], "b": ["d"], "c": ["d", "e"], "d": [], "e": []}


class TestWalk:
    def test_bfs(self):
        assert list(walk(["a"], TREE.get)) == ["a", "b", "c", "d", "e"]

    def test_dfs_pops_the_last_child_first(self):
        assert list(walk(["a"], TREE.get, bfs=False)) == ["a", "c", "e", "d", "b"]

    def test_return_children(self):
        got = list(walk(["a"], TREE.get, return_children=True))
        assert got == [("a", ["b", "c"]), ("b", ["d"]), ("c", ["d", "e"]), ("d", []), ("e", [])]

    def test_each_node_once(self):
        got = list(walk(["a", "c", "a"], TREE.get))
        assert sorted(got) == ["a", "b", "c", "d", "e"]
        assert list(walk([], TREE.get)) == []

    def test_expand_may_return_none(self):
        assert list(walk([1], lambda n: [n + 1] if n < 4 else None)) == [1, 2, 3, 4]

    def test_equal_nodes_are_the_same_node(self):
        # int("1000") makes distinct but equal objects
        assert list(walk([int("1000"), int("1000")], lambda n: None)) == [1000]

    def test_fresh_objects_made_by_expand_are_all_visited(self):
        # Nodes created on the fly and dropped once visited: a walk keyed on id() would
        # see a recycled id and stop early.
        class N:
            def __init__(self, k):
                self.k = k

        ks = []
        for node in walk([N(0)], lambda n: [N(n.k + 1)] if n.k < 50 else None):
            ks.append(node.k)
            gc.collect(0)
        assert ks == list(range(51))

    def test_hash_fn(self):
        got = list(walk(["a", "A", "b"], lambda n: None, hash_fn=str.lower))
        assert got == ["a", "b"]

    def test_on_variables(self, g):
        def expand(v):
            return v.owner.inputs if v.owner else None

        assert list(walk([g.c], expand)) == [g.c, g.b, g.x, g.a, g.z, g.y]


# --- ancestors and inputs ------------------------------------------------------------------


class TestAncestors:
    def test_order_is_right_recursive_depth_first(self, g):
        assert list(ancestors([g.c])) == [g.c, g.x, g.b, g.z, g.a, g.y]
        assert list(ancestors(g.c)) == [g.c, g.x, g.b, g.z, g.a, g.y]

    def test_several_graphs_in_order(self, g):
        assert list(ancestors([g.y, g.c])) == [g.c, g.x, g.b, g.z, g.a, g.y]
        assert list(ancestors([g.c, g.y])) == [g.y, g.c, g.x, g.b, g.z, g.a]

    def test_each_variable_once(self, g):
        d = add(g.c, g.c)
        got = list(ancestors([d, g.a]))
        assert len(got) == len(set(got)) == 7

    def test_blockers(self, g):
        assert list(ancestors([g.c], blockers=[g.a])) == [g.c, g.x, g.b, g.z, g.a]
        assert list(ancestors([g.c], blockers=[g.c])) == [g.c]
        assert list(ancestors([g.c], blockers=[])) == list(ancestors([g.c]))

    def test_constants(self, g):
        k = Constant(double, 2.0)
        out = mul(g.x, k)
        assert list(ancestors([out])) == [out, k, g.x]

    def test_graph_inputs(self, g):
        assert list(graph_inputs([g.c])) == [g.x, g.z, g.y]
        assert list(graph_inputs(g.a)) == [g.y, g.x]
        assert list(graph_inputs([g.x])) == [g.x]

    def test_graph_inputs_with_blockers(self, g):
        # the walk stops at a blocker, which is then a root of the cut graph
        assert list(graph_inputs([g.c], blockers=[g.a])) == [g.x, g.z]  # a has an owner: not a root
        assert list(graph_inputs([g.c], blockers=[g.b])) == [g.x]

    def test_explicit_graph_inputs_leaves_out_constants(self, g):
        k = Constant(double, 3.0)
        out = add(mul(g.x, k), add(g.y, 1.0))
        assert list(graph_inputs([out]))[2:] == [k, g.x]
        assert list(explicit_graph_inputs(out)) == [g.y, g.x]
        assert list(explicit_graph_inputs([neg(k)])) == []


class TestBetween:
    def test_vars_between(self, g):
        got = list(vars_between([g.a], [g.c]))
        assert got == [g.c, g.x, g.b, g.z, g.a]
        assert g.y not in got

    def test_vars_between_includes_sibling_outputs(self):
        x, y = double("x"), double("y")
        q, r = divmod_op(x, y)
        out = neg(r)
        got = list(vars_between([x, y], [out]))
        assert set(got) == {out, r, q, x, y}
        assert len(got) == 5

    def test_vars_between_unreached_inputs_are_left_out(self, g):
        unused = double("unused")
        assert unused not in list(vars_between([g.x, unused], [g.a]))

    def test_orphans_between(self, g):
        assert list(orphans_between([g.a], [g.c])) == [g.x, g.z]
        assert list(orphans_between([g.x, g.y, g.z], [g.c])) == []
        k = Constant(double, 1.0)
        assert list(orphans_between([g.x], [add(g.x, k)])) == [k]

    def test_applys_between(self, g):
        assert list(applys_between([g.x, g.y, g.z], [g.c])) == [g.c.owner, g.b.owner, g.a.owner]
        assert list(applys_between([g.a], [g.c])) == [g.c.owner, g.b.owner]
        assert list(applys_between([g.c], [g.c])) == []

    def test_applys_between_multi_output_node_once(self):
        x = double("x")
        q, r = divmod_op(x, 2.0)
        out = add(q, add(r, q))
        got = list(applys_between([x], [out]))
        assert got.count(q.owner) == 1
        assert set(got) == {out.owner, out.owner.inputs[1].owner, q.owner}
        assert len(got) == 3
        # stopping at q does not drop the node: r still needs it
        assert q.owner in list(applys_between([x, q], [add(q, r)]))
        nq = neg(q)
        assert list(applys_between([x, q], [nq])) == [nq.owner]


# --- topological orders --------------------------------------------------------------------


class TestIoToposort:
    def test_dependencies_first(self, g):
        assert io_toposort([g.x, g.y, g.z], [g.c]) == [g.a.owner, g.b.owner, g.c.owner]

    def test_without_inputs_goes_to_the_roots(self, g):
        assert io_toposort([], [g.c]) == [g.a.owner, g.b.owner, g.c.owner]

    def test_stops_at_given_inputs(self, g):
        assert io_toposort([g.a], [g.c]) == [g.b.owner, g.c.owner]
        assert io_toposort([g.c], [g.c]) == []
        assert io_toposort([], [g.x]) == []

    def test_diamond_and_several_outputs(self):
        x = double("x")
        left, right = neg(x), mul(x, x)
        top = add(left, right)
        other = sub(right, 1.0)
        order = io_toposort([x], [top, other])
        assert order == [left.owner, right.owner, top.owner, other.owner]
        assert_topological(order)
        # deterministic
        assert all(io_toposort([x], [top, other]) == order for _ in range(3))
        assert io_toposort([x], [other, top]) == [right.owner, other.owner, left.owner, top.owner]

    def test_multi_output_node_once(self):
        x = double("x")
        q, r = divmod_op(x, 2.0)
        order = io_toposort([x], [r, add(q, r), q])
        assert order.count(q.owner) == 1
        assert order[0] is q.owner
        assert_topological(order)

    def test_orderings_are_honoured(self):
        x, y = double("x"), double("y")
        a, b = neg(x), neg(y)
        out = add(a, b)
        assert io_toposort([x, y], [out]) == [a.owner, b.owner, out.owner]
        order = io_toposort([x, y], [out], orderings={a.owner: [b.owner]})
        assert order == [b.owner, a.owner, out.owner]
        # an ordering may bring in a node the outputs do not need
        c = neg(x)
        order = io_toposort([x, y], [a], orderings={a.owner: [c.owner]})
        assert order == [c.owner, a.owner]

    def test_orderings_that_loop(self):
        x = double("x")
        a = neg(x)
        b = neg(a)
        with pytest.raises(GraphCycleError):
            io_toposort([x], [b], orderings={a.owner: [b.owner]})

    def test_toposort(self, g):
        got = toposort([g.c])
        assert not isinstance(got, list)  # a generator
        assert list(got) == [g.a.owner, g.b.owner, g.c.owner]
        assert list(toposort(g.c, blockers=[g.a])) == [g.b.owner, g.c.owner]

    def test_general_toposort(self):
        deps = {"c": ["a", "b"], "b": ["a"], "a": [], "d": ["c", "a"]}
        assert general_toposort(["d"], deps.get) == ["a", "b", "c", "d"]
        assert general_toposort(["c", "b"], deps.get) == ["a", "b", "c"]
        assert general_toposort(["b", "c"], deps.get) == ["a", "b", "c"]
        assert general_toposort(["x"], lambda n: None) == ["x"]

    def test_general_toposort_on_variables(self, g):
        def deps(v):
            return v.owner.inputs if v.owner else None

        order = general_toposort([g.c], deps)
        assert order == [g.x, g.y, g.a, g.z, g.b, g.c]


class TestCycles:
    def test_graph_cycle_error_is_a_value_error(self):
        assert issubclass(GraphCycleError, ValueError)

    def test_io_toposort_cycle_made_by_hand(self):
        x, y = double("x"), double("y")
        a = add(x, y)
        b = neg(a)
        out = mul(b, 2.0)
        a.owner.inputs[0] = b  # a = b + y and b = -a
        with pytest.raises(GraphCycleError) as info:
            io_toposort([x, y], [out])
        msg = str(info.value)
        assert "neg(add.0)" in msg and "add(neg.0, y)" in msg
        assert set(info.value.cycle) == {a.owner, b.owner}
        with pytest.raises(ValueError):
            list(toposort([out]))

    def test_self_loop(self):
        x = double("x")
        a = neg(x)
        a.owner.inputs[0] = a
        with pytest.raises(GraphCycleError, match=r"neg\(neg.0\)"):
            io_toposort([], [a])

    def test_general_toposort_cycle(self):
        deps = {"a": ["b"], "b": ["c"], "c": ["a"], "top": ["a"]}
        with pytest.raises(GraphCycleError) as info:
            general_toposort(["top"], deps.get)
        assert {"a", "b", "c"} <= set(info.value.cycle)
        assert "top" not in info.value.cycle
        for name in "abc":
            assert name in str(info.value)

    def test_long_cycle_message_is_shortened(self):
        deps = {i: [(i + 1) % 30] for i in range(30)}
        with pytest.raises(GraphCycleError) as info:
            general_toposort([0], deps.get)
        assert len(info.value.cycle) == 31
        assert "(31 nodes)" in str(info.value)

    def test_walkers_terminate_on_a_cycle(self):
        x = double("x")
        a = neg(x)
        b = neg(a)
        a.owner.inputs[0] = b
        assert set(ancestors([b])) == {a, b}
        assert list(graph_inputs([b])) == []


# --- lookups and dependencies --------------------------------------------------------------


class InnerOp(Op, HasInnerGraph):
    __props__ = ()

    def __init__(self, inner_out):
        self._inner_out = inner_out

    def make_node(self, a):
        return Apply(self, [a], [double()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0]

    @property
    def inner_inputs(self):
        return []

    @property
    def inner_outputs(self):
        return [self._inner_out]


class TestLookups:
    def test_get_var_by_name(self, g):
        assert get_var_by_name([g.c], "a") == (g.a,)
        assert get_var_by_name(g.c, "x") == (g.x,)
        assert get_var_by_name([g.c], "nope") == ()
        twin = double("x")
        found = get_var_by_name([add(g.x, twin)], "x")
        assert set(found) == {g.x, twin} and len(found) == 2

    def test_get_var_by_name_auto_name(self, g):
        name = g.y.auto_name
        assert get_var_by_name([g.c], name) == (g.y,)

    def test_get_var_by_name_searches_inner_graphs(self):
        hidden = neg(double("deep"))
        x = double("x")
        out = InnerOp(hidden)(x)
        assert get_var_by_name([out], "deep") == (hidden.owner.inputs[0],)
        assert get_var_by_name([out], "x") == (x,)

    def test_variable_depends_on(self, g):
        assert variable_depends_on(g.c, [g.y])
        assert variable_depends_on(g.c, g.y)
        assert variable_depends_on(g.c, [g.c])
        assert variable_depends_on(g.a, [double("other"), g.x])
        assert not variable_depends_on(g.a, [g.z])
        assert not variable_depends_on(g.a, [])
        assert not variable_depends_on(g.c, [g.y], stop_search_at=[g.a])
        assert variable_depends_on(g.c, [g.a], stop_search_at=[g.a])

    def test_apply_depends_on(self, g):
        a, b, c = g.a.owner, g.b.owner, g.c.owner
        assert apply_depends_on(c, a)
        assert apply_depends_on(c, [b])
        assert apply_depends_on(c, c)
        assert not apply_depends_on(a, c)
        assert not apply_depends_on(a, [b, c])
        assert not apply_depends_on(c, neg(g.x).owner)
        assert not apply_depends_on(c, [])


# --- deep graphs ---------------------------------------------------------------------------

DEPTH = 100_000


@pytest.fixture(scope="module")
def chain():
    """x -> add(., 1) -> ... DEPTH times, built directly (no recursion anywhere)."""
    x = double("x")
    one = Constant(double, 1.0)
    v = x
    for _ in range(DEPTH):
        v = Apply(add, [v, one], [double()]).outputs[0]
        if v.owner.inputs[0] is x:
            first = v.owner
    return x, one, v, first


@pytest.fixture(autouse=True)
def _default_recursion_limit():
    assert sys.getrecursionlimit() < 10_000  # the deep tests mean something


class TestDeepChain:
    def test_ancestors(self, chain):
        x, one, out, _first = chain
        got = list(ancestors([out]))
        assert len(got) == DEPTH + 2
        assert got[0] is out and got[1] is one and got[-1] is x

    def test_graph_inputs(self, chain):
        x, one, out, _first = chain
        assert list(graph_inputs([out])) == [one, x]
        assert list(explicit_graph_inputs(out)) == [x]

    def test_io_toposort_and_toposort(self, chain):
        x, _one, out, first = chain
        order = io_toposort([x], [out])
        assert len(order) == DEPTH
        assert order[0] is first
        assert order[-1] is out.owner
        assert all(order[i].outputs[0] is order[i + 1].inputs[0] for i in range(DEPTH - 1))
        assert list(toposort([out])) == order

    def test_vars_and_applys_between(self, chain):
        x, _one, out, _first = chain
        assert len(list(vars_between([x], [out]))) == DEPTH + 2
        nodes = list(applys_between([x], [out]))
        assert len(nodes) == DEPTH
        assert nodes[0] is out.owner

    def test_general_toposort(self, chain):
        x, _one, out, _first = chain
        order = general_toposort([out], lambda v: v.owner.inputs if v.owner else None)
        assert len(order) == DEPTH + 2
        assert order[0] is x and order[-1] is out

    def test_dependencies(self, chain):
        x, _one, out, first = chain
        assert variable_depends_on(out, [x])
        assert not variable_depends_on(out, [double("other")])
        assert apply_depends_on(out.owner, first)
        assert not apply_depends_on(first, out.owner)

    def test_clone_get_equiv_and_equal_computations(self, chain):
        x, one, out, first = chain
        equiv = clone_get_equiv([x], [out])
        new_out = equiv[out]
        assert new_out is not out
        assert equiv[one] is one
        assert len(equiv) == 2 * DEPTH + 2  # variables and nodes, the constant included
        assert equal_computations([out], [new_out], [x], [equiv[x]])
        # a difference at the very bottom is found
        new_first = equiv[first]
        assert new_first.inputs == [equiv[x], one]
        new_first.inputs[1] = Constant(double, 2.0)
        assert not equal_computations([out], [new_out], [x], [equiv[x]])
