"""clone_replace and graph_replace (:mod:`arignote.graph.replace`)."""

from __future__ import annotations

import pytest

from arignote.graph.basic import Apply, Constant, equal_computations
from arignote.graph.op import Op
from arignote.graph.replace import clone_replace, graph_replace
from arignote.graph.traversal import ancestors, applys_between, graph_inputs
from arignote.graph.type import Type
from tests.toy import add, divmod_op, double, integer, mul, neg, sub


class LenType(Type):
    """Tuples of floats of a given length; ``length=None`` is "any length" (a supertype)."""

    __props__ = ("length",)

    def __init__(self, length=None):
        self.length = length

    def filter(self, data, strict=False, allow_downcast=None):
        data = tuple(float(d) for d in data)
        if self.length is not None and len(data) != self.length:
            raise ValueError(f"expected {self.length} items, got {len(data)}")
        return data

    def is_super(self, otype):
        return isinstance(otype, LenType) and (self.length is None or self.length == otype.length)


class Total(Op):
    """Sum of a tuple, as a double."""

    __props__ = ()

    def make_node(self, x):
        return Apply(self, [x], [double()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = float(sum(inputs[0]))


class Reverse(Op):
    __props__ = ()

    def make_node(self, x):
        return Apply(self, [x], [LenType(x.type.length)()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0][::-1]


@pytest.fixture
def g():
    """w = (x + y) * -y, every piece named."""

    class G:
        pass

    g = G()
    g.x, g.y = double("x"), double("y")
    g.z = add(g.x, g.y)
    g.z.name = "z"
    g.n = neg(g.y)
    g.n.name = "n"
    g.w = mul(g.z, g.n)
    g.w.name = "w"
    return g


def snapshot(outputs):
    """The structure of a graph, to check later that it was not modified."""
    nodes = list(applys_between([], outputs))
    return [(n, n.op, list(n.inputs), list(n.outputs)) for n in nodes], {
        v: (v.owner, v.index) for v in ancestors(outputs)
    }


# --- clone_replace -------------------------------------------------------------------------


class TestCloneReplace:
    def test_single_variable(self, g):
        u = double("u")
        before = snapshot([g.w])
        out = clone_replace(g.w, {g.x: u})
        assert out is not g.w
        assert out.name == "w"
        assert set(graph_inputs([out])) == {u, g.y}
        assert out.eval({u: 10.0, g.y: 2.0}) == -24.0
        assert g.w.eval({g.x: 10.0, g.y: 2.0}) == -24.0
        assert out.eval({u: 1.0, g.y: 2.0}) == -6.0
        assert snapshot([g.w]) == before

    def test_every_node_is_copied_roots_are_kept(self, g):
        out = clone_replace(g.w, {g.x: double("u")})
        old_nodes = set(applys_between([], [g.w]))
        new_nodes = set(applys_between([], [out]))
        assert len(new_nodes) == 3
        assert not old_nodes & new_nodes
        # the part that does not depend on x is copied too, but not y itself
        new_n = out.owner.inputs[1]
        assert new_n is not g.n and new_n.name == "n"
        assert new_n.owner.inputs[0] is g.y

    def test_no_replacement_is_a_plain_copy(self, g):
        for out in (clone_replace(g.w), clone_replace(g.w, {}), clone_replace(g.w, [])):
            assert out is not g.w
            assert equal_computations([out], [g.w])
            assert list(graph_inputs([out])) == list(graph_inputs([g.w]))

    def test_list_in_list_out(self, g):
        u = double("u")
        outs = clone_replace([g.w, g.z], {g.x: u})
        assert isinstance(outs, list) and len(outs) == 2
        w2, z2 = outs
        # the copies share their common part
        assert w2.owner.inputs[0] is z2
        assert z2.owner.inputs == [u, g.y]
        assert clone_replace((g.z,), {g.x: u})[0].owner.inputs == [u, g.y]

    def test_list_of_pairs(self, g):
        u, v = double("u"), double("v")
        out = clone_replace(g.w, [(g.x, u), (g.y, v)])
        assert set(graph_inputs([out])) == {u, v}
        assert out.eval({u: 1.0, v: 2.0}) == -6.0

    def test_several_replacements_at_once_are_simultaneous(self, g):
        out = clone_replace(g.z, {g.x: g.y, g.y: g.x})
        assert out.owner.inputs == [g.y, g.x]

    def test_replacement_that_uses_the_replaced_variable(self, g):
        x1 = add(g.x, 1.0)
        out = clone_replace(g.w, {g.x: x1})
        new_z = out.owner.inputs[0]
        assert new_z.owner.inputs[0] is x1
        assert x1.owner.inputs[0] is g.x  # the original x, inside
        assert out.eval({g.x: 1.0, g.y: 3.0}) == (1.0 + 1.0 + 3.0) * -3.0

    def test_replacing_an_intermediate_variable(self, g):
        out = clone_replace(g.w, {g.z: Constant(double, 5.0)})
        assert out.eval({g.y: 2.0}) == -10.0
        assert g.x not in set(ancestors([out]))

    def test_replacing_the_output(self, g):
        u = double("u")
        assert clone_replace(g.w, {g.w: u}) is u

    def test_non_variable_replacement_becomes_a_constant(self, g):
        out = clone_replace(g.w, {g.x: 4})
        c = out.owner.inputs[0].owner.inputs[0]
        assert isinstance(c, Constant) and c.data == 4.0 and c.type == double
        assert out.eval({g.y: 1.0}) == -5.0

    def test_incompatible_type_names_both_types(self, g):
        with pytest.raises(TypeError) as info:
            clone_replace(g.w, {g.x: integer("i")})
        assert "int" in str(info.value) and "double" in str(info.value)

    def test_non_variable_key(self, g):
        with pytest.raises(TypeError, match="must be a Variable"):
            clone_replace(g.w, {"x": g.y})
        with pytest.raises(TypeError):
            clone_replace(g.w, [g.x])

    def test_replaced_twice(self, g):
        with pytest.raises(ValueError, match="replaced twice"):
            clone_replace(g.w, [(g.x, g.y), (g.x, double())])

    def test_replacement_unrelated_to_the_graph_is_ignored(self, g):
        out = clone_replace(g.w, {double("other"): g.x})
        assert equal_computations([out], [g.w])

    def test_multi_output_node(self):
        x = double("x")
        q, r = divmod_op(x, 3.0)
        out = sub(q, r)
        u = double("u")
        new = clone_replace(out, {x: u})
        nq, nr = new.owner.inputs
        assert nq.owner is nr.owner and nq.owner is not q.owner
        assert new.eval({u: 10.0}) == 3.0 - 1.0

    def test_narrower_replacement_remakes_nodes(self):
        x = LenType()("x")
        out = Total()(Reverse()(x))
        n = LenType(3)("n")
        new = clone_replace(out, {x: n})
        rev = new.owner.inputs[0]
        assert rev.type == LenType(3)
        assert new.eval({n: (1, 2, 3)}) == 6.0
        assert out.owner.inputs[0].type == LenType()

    def test_wider_replacement_needs_strict_false(self):
        x = LenType(3)("x")
        out = Total()(Reverse()(x))
        wide = LenType()("w")
        with pytest.raises(TypeError):
            clone_replace(out, {x: wide})
        new = clone_replace(out, {x: wide}, strict=False)
        assert new.owner.inputs[0].type == LenType()
        assert new.eval({wide: (1, 2)}) == 3.0


# --- graph_replace -------------------------------------------------------------------------


class TestGraphReplace:
    def test_root_replacement(self, g):
        u = double("u")
        before = snapshot([g.w])
        out = graph_replace(g.w, {g.x: u})
        assert out is not g.w
        assert out.eval({u: 10.0, g.y: 2.0}) == -24.0
        assert snapshot([g.w]) == before

    def test_untouched_subgraphs_are_shared(self, g):
        out = graph_replace(g.w, {g.x: double("u")})
        assert out.owner.inputs[1] is g.n  # -y does not depend on x: the same Variable
        assert out.owner.inputs[0] is not g.z

    def test_intermediate_variable(self, g):
        k = Constant(double, 5.0)
        out = graph_replace(g.w, {g.z: k})
        assert out.owner.inputs == [k, g.n]
        assert out.eval({g.y: 2.0}) == -10.0
        assert g.w.owner.inputs == [g.z, g.n]

    def test_replacement_that_uses_the_replaced_variable(self, g):
        z2 = mul(g.z, 2.0)
        out = graph_replace(g.w, {g.z: z2})
        assert out.owner.inputs[0] is z2
        assert z2.owner.inputs[0] is g.z
        assert out.eval({g.x: 1.0, g.y: 1.0}) == -4.0

    def test_nothing_depends_on_the_replacement(self, g):
        assert graph_replace(g.w, {}) is g.w
        assert graph_replace(g.w) is g.w
        assert graph_replace(g.n, {g.x: double("u")}, strict=False) is g.n

    def test_list_of_outputs_and_pairs(self, g):
        u = double("u")
        w2, n2, z2 = graph_replace([g.w, g.n, g.z], [(g.x, u)])
        assert n2 is g.n
        assert w2.owner.inputs == [z2, g.n]
        assert z2.owner.inputs == [u, g.y]

    def test_strict_unused_replacement(self, g):
        other = double("other")
        with pytest.raises(ValueError, match="other"):
            graph_replace(g.w, {other: g.x})
        with pytest.raises(ValueError):
            graph_replace(g.w, {g.x: double(), other: g.x})
        # a key hidden behind another replacement is unused too
        with pytest.raises(ValueError):
            graph_replace(g.w, {g.z: g.y, g.x: g.y})

    def test_non_strict_ignores_unused_replacement(self, g):
        u = double("u")
        out = graph_replace(g.w, {double("other"): g.x, g.x: u}, strict=False)
        assert out.eval({u: 1.0, g.y: 1.0}) == -2.0
        assert graph_replace(g.w, {double("other"): g.x}, strict=False) is g.w
        out = graph_replace(g.w, {g.z: g.y, g.x: g.y}, strict=False)
        assert out.owner.inputs[0] is g.y

    def test_incompatible_type(self, g):
        with pytest.raises(TypeError, match="int"):
            graph_replace(g.w, {g.x: integer("i")})

    def test_non_variable_key(self, g):
        with pytest.raises(TypeError):
            graph_replace(g.w, {1.0: g.x})

    def test_multi_output_node(self):
        x = double("x")
        q, r = divmod_op(x, 3.0)
        out = add(neg(q), r)
        new = graph_replace(out, {r: Constant(double, 100.0)})
        assert new.owner.inputs[0] is out.owner.inputs[0]  # -q is shared
        assert new.eval({x: 7.0}) == -2.0 + 100.0

    def test_replaced_sibling_output_of_a_rebuilt_node(self):
        # divmod is rebuilt for the new x, but q keeps its own replacement
        x, u = double("x"), double("u")
        q, r = divmod_op(x, 3.0)
        out = add(q, r)
        k = Constant(double, 100.0)
        new = graph_replace(out, {x: u, q: k})
        assert new.owner.inputs[0] is k
        new_r = new.owner.inputs[1]
        assert new_r.owner.inputs[0] is u
        assert new.eval({u: 7.0}) == 101.0
        assert clone_replace(out, {x: u, q: k}).eval({u: 7.0}) == 101.0

    def test_narrower_replacement(self):
        x = LenType()("x")
        out = Total()(Reverse()(x))
        n = LenType(2)("n")
        new = graph_replace(out, {x: n})
        assert new.owner.inputs[0].type == LenType(2)
        assert new.eval({n: (1, 5)}) == 6.0


class TestDeep:
    def test_deep_chain(self):
        depth = 20_000
        x = double("x")
        one = Constant(double, 1.0)
        v = x
        for _ in range(depth):
            v = Apply(add, [v, one], [double()]).outputs[0]
        u = double("u")
        a = clone_replace(v, {x: u})
        b = graph_replace(v, {x: u})
        for out in (a, b):
            assert set(graph_inputs([out])) == {u, one}
            assert out.eval({u: 0.5}) == depth + 0.5


def test_vectorize_is_vectorize_graph_with_a_warning():
    import numpy as _np

    import arignote.tensor as _pt
    from arignote.graph.replace import vectorize

    x = _pt.dvector("x")
    out = _pt.exp(x).sum()
    xs = _pt.dmatrix("xs")
    with pytest.warns(UserWarning, match="renamed to vectorize_graph"):
        batched = vectorize(out, {x: xs})
    v = _np.arange(6.0).reshape(2, 3) / 10
    _np.testing.assert_allclose(batched.eval({xs: v}), _np.exp(v).sum(axis=1))
