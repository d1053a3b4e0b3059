"""Variable, Constant and Apply, and the graph-wide helpers of :mod:`arignote.graph.basic`."""

from __future__ import annotations

import sys

import pytest

from arignote.graph.basic import (
    Apply,
    AtomicVariable,
    Constant,
    NominalVariable,
    Variable,
    as_string,
    clone,
    clone_get_equiv,
    equal_computations,
)
from arignote.graph.op import HasInnerGraph, Op
from arignote.graph.type import Type
from arignote.graph.utils import Scratchpad
from tests.toy import add, divmod_op, double, integer, mul, neg, sub

# --- test-local Types and Ops ------------------------------------------------------------


class LenType(Type):
    """Tuples of floats of a given length; ``length=None`` is "any length" (a supertype)."""

    __props__ = ("length",)

    def __init__(self, length=None):
        self.length = length

    def filter(self, data, strict=False, allow_downcast=None):
        if strict and not isinstance(data, tuple):
            raise TypeError(f"expected a tuple, got {data!r}")
        data = tuple(float(d) for d in data)
        if self.length is not None and len(data) != self.length:
            raise ValueError(f"expected {self.length} items, got {len(data)}")
        return data

    def is_super(self, otype):
        return isinstance(otype, LenType) and (self.length is None or self.length == otype.length)


class Reverse(Op):
    """Reverses a tuple; its output Type is its input's Type. Counts make_node calls."""

    __props__ = ()
    calls = 0

    def make_node(self, x):
        if not isinstance(x.type, LenType):
            raise TypeError(f"Reverse needs a LenType input, got {x.type}")
        Reverse.calls += 1
        return Apply(self, [x], [LenType(x.type.length)()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0][::-1]


reverse = Reverse()


class SecondDefault(Op):
    """Two outputs; ``op(...)`` returns the second."""

    __props__ = ()
    default_output = 1

    def make_node(self, a):
        return Apply(self, [a], [double(), double()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = output_storage[1][0] = inputs[0]


class BadDefault(Op):
    __props__ = ()
    default_output = 5

    def make_node(self, a):
        return Apply(self, [a], [double(), double()])


class Inner(Op, HasInnerGraph):
    """An Op with an inner graph; ``clone`` makes a new (equal) instance."""

    __props__ = ("tag_",)

    def __init__(self, tag_=0):
        self.tag_ = tag_

    def make_node(self, a):
        return Apply(self, [a], [double()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0]

    @property
    def inner_inputs(self):
        return []

    @property
    def inner_outputs(self):
        return []

    def clone(self):
        return Inner(self.tag_)


def this_line() -> int:
    return sys._getframe(1).f_lineno


# --- Variable ------------------------------------------------------------------------------


class TestVariable:
    def test_fields_of_a_root(self):
        x = double("x")
        assert isinstance(x, Variable)
        assert x.type is double
        assert x.owner is None
        assert x.index is None
        assert x.name == "x"
        assert double().name is None
        assert x.get_parents() == []

    def test_fields_of_an_output(self):
        x, y = double("x"), double("y")
        z = add(x, y)
        assert z.owner.op is add
        assert z.owner.inputs == [x, y]
        assert z.owner.outputs[0] is z
        assert z.index == 0
        assert z.get_parents() == [z.owner]

    def test_constructor_keeps_its_arguments(self):
        node = add(double("x"), double("y")).owner
        v = Variable(integer, node, 3, name="v")
        assert (v.type, v.owner, v.index, v.name) == (integer, node, 3, "v")

    def test_tag_is_created_lazily_and_kept(self):
        x = double("x")
        assert "tag" not in x.__dict__
        tag = x.tag
        assert isinstance(tag, Scratchpad)
        assert x.tag is tag
        x.tag.note = 42
        assert x.tag.note == 42
        assert double().tag is not tag

    def test_identity_equality_and_hash(self):
        a, b = double("x"), double("x")
        assert a == a
        assert a != b
        assert len({a, b, a}) == 2
        assert {a: 1, b: 2}[b] == 2
        z1, z2 = add(a, a), add(a, a)
        assert z1 != z2
        assert z1.owner != z2.owner
        assert len({z1.owner, z2.owner}) == 2

    def test_str_and_repr(self):
        x = double("x")
        assert str(x) == repr(x) == "x"
        assert str(double()) == repr(double()) == "<double>"
        assert str(integer()) == "<int>"
        z = add(x, x)
        assert str(z) == repr(z) == "add.0"
        z.name = "z"
        assert str(z) == "z"
        q, r = divmod_op(x, x)
        assert (str(q), str(r)) == ("DivMod.0", "DivMod.1")

    def test_str_marks_the_default_output(self):
        outs = SecondDefault().make_node(double("x")).outputs
        assert [str(o) for o in outs] == ["SecondDefault.0", "SecondDefault.out"]

    def test_clone_of_a_root(self):
        x = double("x")
        x.tag.note = [1]
        c = x.clone()
        assert c is not x
        assert type(c) is Variable
        assert c.type is double
        assert c.name == "x"
        assert c.owner is None and c.index is None
        assert c.tag is not x.tag
        assert c.tag.note == [1]
        c.tag.other = 2
        assert not hasattr(x.tag, "other")

    def test_clone_of_an_output_has_no_owner(self):
        z = add(double("x"), double("y"))
        z.name = "z"
        c = z.clone()
        assert c.owner is None and c.index is None
        assert c.name == "z" and c.type == z.type
        assert z.owner is not None and z.owner.outputs[0] is z

    def test_clone_without_tag_makes_none(self):
        x = double("x")
        c = x.clone()
        assert "tag" not in c.__dict__

    def test_clone_overrides(self):
        x = double("x")
        assert x.clone(name="y").name == "y"
        assert x.clone(type=integer).type is integer
        assert x.name == "x" and x.type is double

    def test_auto_name_is_unique_and_stable(self):
        vs = [double() for _ in range(50)]
        names = [v.auto_name for v in vs]
        assert len(set(names)) == 50
        assert all(n.startswith("auto_") for n in names)
        assert [v.auto_name for v in vs] == names
        assert vs[0].clone().auto_name != names[0]

    def test_eval(self):
        x, y = double("x"), double("y")
        assert sub(mul(x, y), 1.0).eval({x: 3.0, y: 4}) == 11.0
        assert neg(x).eval({"x": 2.0}) == -2.0


# --- Constant ------------------------------------------------------------------------------


class TestConstant:
    def test_data_is_filtered_by_the_type(self):
        c = Constant(double, 3)
        assert c.data == 3.0 and type(c.data) is float
        assert c.value is c.data
        assert c.type is double
        assert c.owner is None and c.index is None
        assert isinstance(c, AtomicVariable) and isinstance(c, Variable)
        assert double.make_constant(2, name="two").name == "two"

    @pytest.mark.parametrize(
        "typ, data, err",
        [(double, "abc", ValueError), (double, 2**60 + 1, TypeError), (integer, 1.5, TypeError)],
    )
    def test_bad_data_raises(self, typ, data, err):
        with pytest.raises(err):
            Constant(typ, data)

    def test_owner_and_index_cannot_be_set(self):
        c = Constant(double, 1.0)
        node = add(double(), double()).owner
        with pytest.raises(ValueError, match="cannot have an owner"):
            c.owner = node
        with pytest.raises(ValueError, match="cannot have an index"):
            c.index = 0
        c.owner = None
        c.index = None
        assert c.owner is None and c.index is None

    def test_cannot_be_an_output(self):
        with pytest.raises(TypeError, match="output 0 is a Constant"):
            Apply(neg, [double("x")], [Constant(double, 1.0)])

    def test_clone_returns_itself(self):
        c = Constant(double, 1.0, name="one")
        assert c.clone() is c

    def test_signature_and_equals(self):
        a, b = Constant(double, 1.0), Constant(double, 1)
        assert a.signature() == (double, 1.0)
        assert a.equals(b) and b.equals(a)
        assert a != b  # still two Variables
        assert not a.equals(Constant(double, 2.0))
        assert not Constant(integer, 1).equals(a)
        assert not a.equals(double("x"))
        assert a.merge_signature() == a.signature()

    def test_str(self):
        assert str(Constant(double, 2)) == "Constant{2.0}"
        assert str(Constant(integer, 7)) == "Constant{7}"
        assert str(Constant(double, 2, name="two")).startswith("two")
        long = Constant(LenType(), tuple(range(30)))
        text = str(long)
        assert text.startswith("Constant{(0.0, 1.0,") and text.endswith("29.0)}")
        assert " ... " in text and len(text) < 40


class TestNominalVariable:
    def test_same_id_and_type_is_the_same_object(self):
        a = NominalVariable(1, double)
        assert NominalVariable(1, double) is a
        assert NominalVariable(2, double) is not a
        assert NominalVariable(1, integer) is not a
        assert a.owner is None and a.clone() is a
        assert a.signature() == (double, 1)


# --- Apply ---------------------------------------------------------------------------------


class TestApply:
    def test_fields(self):
        x, y = double("x"), double("y")
        o = double()
        node = Apply(add, [x, y], [o])
        assert node.op is add
        assert node.inputs == [x, y]
        assert node.outputs == [o]
        assert o.owner is node and o.index == 0
        assert (node.nin, node.nout) == (2, 1)
        assert node.get_parents() == [x, y]
        assert node.get_parents() is not node.inputs
        assert isinstance(node.tag, Scratchpad)
        assert str(node) == repr(node) == as_string(node) == "add(x, y)"

    def test_outputs_get_owner_and_index(self):
        x = double("x")
        q, r = double(), double()
        node = Apply(divmod_op, (x, x), (q, r))
        assert [(v.owner, v.index) for v in node.outputs] == [(node, 0), (node, 1)]

    def test_inputs_and_outputs_may_be_any_iterable(self):
        x = double("x")
        node = Apply(neg, (v for v in [x]), iter([double()]))
        assert node.inputs == [x] and len(node.outputs) == 1

    def test_output_of_another_apply_is_an_error(self):
        x = double("x")
        z = neg(x)
        fresh = double()
        with pytest.raises(ValueError, match="already the output of another node"):
            Apply(neg, [x], [fresh, z])
        assert z.owner.op is neg and z.index == 0
        # the rejected node left no trace on its other outputs
        assert fresh.owner is None and fresh.index is None

    def test_output_that_is_an_input_is_an_error(self):
        x, y = double("x"), double("y")
        with pytest.raises(ValueError, match="both an input and an output"):
            Apply(add, [x, y], [x])
        assert x.owner is None and x.index is None

    def test_same_output_twice_is_an_error(self):
        o = double()
        with pytest.raises(ValueError):
            Apply(divmod_op, [double(), double()], [o, o])
        assert o.owner is None

    @pytest.mark.parametrize("bad", [1.0, "x", None])
    def test_non_variable_input_names_the_position(self, bad):
        with pytest.raises(TypeError, match="input 1 must be a Variable"):
            Apply(add, [double("x"), bad], [double()])

    def test_non_variable_output_names_the_position(self):
        with pytest.raises(TypeError, match="output 1 must be a Variable"):
            Apply(divmod_op, [double()], [double(), 3.0])

    def test_default_output(self):
        x = double("x")
        z = neg(x)
        assert z.owner.default_output() is z
        assert z.owner.out is z
        node = SecondDefault().make_node(x)
        assert node.default_output() is node.outputs[1]
        assert node.out is node.outputs[1]
        assert SecondDefault()(x) is not node.outputs[1]
        assert SecondDefault()(x).index == 1

    def test_default_output_of_multi_output_without_declaration(self):
        node = divmod_op(double(), double())[0].owner
        with pytest.raises(ValueError, match="2 outputs and no default_output"):
            node.default_output()
        with pytest.raises(ValueError):
            _ = node.out

    def test_default_output_out_of_range(self):
        node = BadDefault().make_node(double())
        with pytest.raises(ValueError, match="not a valid output index"):
            node.default_output()

    def test_clone(self):
        x, y = double("x"), double("y")
        z = add(x, y)
        z.name = "z"
        node = z.owner
        node.tag.info = "hello"
        cp = node.clone()
        assert cp is not node
        assert cp.op is add
        assert cp.inputs == [x, y] and cp.inputs is not node.inputs
        assert cp.outputs[0] is not z
        assert cp.outputs[0].name == "z" and cp.outputs[0].type == double
        assert cp.outputs[0].owner is cp and cp.outputs[0].index == 0
        assert cp.tag.info == "hello" and cp.tag is not node.tag
        # the original is untouched
        assert z.owner is node and node.outputs == [z]

    def test_clone_inner_graph(self):
        op = Inner(3)
        node = op.make_node(double())
        assert node.clone().op is op
        cp = node.clone(clone_inner_graph=True)
        assert cp.op is not op and cp.op == op
        cp2 = node.clone_with_new_inputs([double()], clone_inner_graph=True)
        assert cp2.op is not op and cp2.op == op

    def test_clone_with_new_inputs_same_types(self):
        x, y = double("x"), double("y")
        node = add(x, y).owner
        node.tag.info = 1
        a, b = double("a"), double("b")
        cp = node.clone_with_new_inputs([a, b])
        assert cp is not node and cp.op is add
        assert cp.inputs == [a, b]
        assert cp.outputs[0] is not node.outputs[0]
        assert cp.outputs[0].owner is cp and cp.outputs[0].type == double
        assert cp.tag.info == 1
        assert node.inputs == [x, y]
        assert cp.outputs[0].eval({a: 1.0, b: 2.0}) == 3.0

    def test_clone_with_new_inputs_narrowing_remakes_the_node(self):
        x = LenType()("x")
        node = reverse.make_node(x)
        node.tag.info = "kept"
        narrow = LenType(3)("n")
        before = Reverse.calls
        cp = node.clone_with_new_inputs([narrow])
        assert Reverse.calls == before + 1
        assert cp.inputs == [narrow]
        assert cp.outputs[0].type == LenType(3)
        assert cp.tag.info == "kept"
        assert cp.trace == node.trace
        assert cp.outputs[0].eval({narrow: (1, 2, 3)}) == (3.0, 2.0, 1.0)

    def test_clone_with_new_inputs_same_types_does_not_remake(self):
        node = reverse.make_node(LenType(2)())
        before = Reverse.calls
        cp = node.clone_with_new_inputs([LenType(2)()], strict=False)
        assert Reverse.calls == before
        assert cp.outputs[0].type == LenType(2)

    def test_clone_with_new_inputs_incompatible_type(self):
        node = reverse.make_node(LenType(3)("x"))
        with pytest.raises(TypeError, match=r"LenType\{length=None\}.*LenType\{length=3\}"):
            node.clone_with_new_inputs([LenType()("wide")])
        with pytest.raises(TypeError, match="int"):
            node.clone_with_new_inputs([integer("i")])

    def test_clone_with_new_inputs_non_strict_rebuilds(self):
        node = reverse.make_node(LenType(3)("x"))
        wide = LenType()("w")
        before = Reverse.calls
        cp = node.clone_with_new_inputs([wide], strict=False)
        assert Reverse.calls == before + 1
        assert cp.inputs == [wide]
        assert cp.outputs[0].type == LenType()
        # the Op itself rejects what it cannot take
        with pytest.raises(TypeError, match="Reverse needs a LenType"):
            node.clone_with_new_inputs([integer()], strict=False)

    def test_clone_with_new_inputs_wrong_number(self):
        node = add(double(), double()).owner
        with pytest.raises(ValueError, match="takes 2 inputs"):
            node.clone_with_new_inputs([double()])


class TestCreationSite:
    def test_trace_points_at_the_line_that_built_the_node(self):
        x, y = double("x"), double("y")
        line = this_line() + 1
        node = Apply(add, [x, y], [double()])  # the line under test
        filename, lineno, func = node.trace
        assert filename == __file__
        assert lineno == line
        assert func == "test_trace_points_at_the_line_that_built_the_node"
        site = node.creation_site
        assert f'File "{__file__}", line {line}' in site
        assert "node = Apply(add, [x, y], [double()])  # the line under test" in site

    def test_clones_keep_the_original_trace(self):
        x = double("x")
        line = this_line() + 1
        node = Apply(neg, [x], [double()])
        assert node.trace[1] == line
        assert node.clone().trace == node.trace
        assert node.clone_with_new_inputs([double()]).trace == node.trace
        equiv = clone_get_equiv([x], node.outputs)
        assert equiv[node].trace == node.trace
        assert "Apply(neg, [x], [double()])" in equiv[node].creation_site


# --- clone / clone_get_equiv ---------------------------------------------------------------


def small_graph():
    x, y = double("x"), double("y")
    c = Constant(double, 2.0)
    z = add(x, y)
    w = mul(z, c)
    return x, y, c, z, w


class TestClone:
    def test_clone_get_equiv_copies_everything(self):
        x, y, c, z, w = small_graph()
        equiv = clone_get_equiv([x, y], [w])
        assert set(equiv) == {x, y, c, z, w, z.owner, w.owner}
        for old in (x, y, z, w, z.owner, w.owner):
            assert equiv[old] is not old
        assert equiv[c] is c
        nw = equiv[w]
        assert nw.owner is equiv[w.owner]
        assert nw.owner.inputs == [equiv[z], c]
        assert equiv[z].owner.inputs == [equiv[x], equiv[y]]
        assert equiv[x].name == "x" and equiv[x].owner is None
        assert nw.eval({equiv[x]: 1.0, equiv[y]: 2.0}) == 6.0
        # the original graph is untouched
        assert w.owner.inputs == [z, c] and z.owner.inputs == [x, y]
        assert equal_computations([w], [nw], [x, y], [equiv[x], equiv[y]])

    def test_node_tags_are_copied(self):
        x = double("x")
        a = neg(x)
        b = neg(a)
        a.owner.tag.note = "kept"
        equiv = clone_get_equiv([x], [b])
        new_a, new_b = equiv[a.owner], equiv[b.owner]
        assert new_a.tag.note == "kept" and new_a.tag is not a.owner.tag
        assert isinstance(new_b.tag, Scratchpad) and new_b.tag is not b.owner.tag
        new_b.tag.other = 1
        assert not hasattr(b.owner.tag, "other")

    def test_copy_inputs_false(self):
        x, y, _c, z, w = small_graph()
        equiv = clone_get_equiv([x, y], [w], copy_inputs=False)
        assert equiv[x] is x and equiv[y] is y
        assert equiv[z] is not z
        assert equiv[w].owner.inputs[0].owner.inputs == [x, y]

    def test_copy_orphans(self):
        x, y, c, _z, w = small_graph()
        equiv = clone_get_equiv([x], [w], copy_orphans=True)
        assert equiv[y] is not y and equiv[y].name == "y"
        assert equiv[c] is c
        equiv = clone_get_equiv([x], [w], copy_orphans=False)
        assert equiv[y] is y
        assert equiv[x] is not x
        assert equiv[c] is c

    def test_a_merging_copy_makes_equal_constants_and_nodes_one(self):
        x, y = double("x"), double("y")
        a = mul(add(x, y), Constant(double, 2.0))
        b = mul(add(x, y), Constant(double, 2.0))  # the same, built twice
        c = mul(add(y, x), Constant(double, 3.0))  # different inputs, a different constant
        equiv = clone_get_equiv([x, y], [a, b, c], merge=True)
        assert equiv[a] is equiv[b] and equiv[a.owner] is equiv[b.owner]
        assert equiv[a.owner.inputs[1]] is equiv[b.owner.inputs[1]]  # one constant 2.0
        assert equiv[c] is not equiv[a]
        assert equiv[a].eval({equiv[x]: 1.0, equiv[y]: 2.0}) == 6.0
        assert equiv[c].eval({equiv[x]: 1.0, equiv[y]: 2.0}) == 9.0
        plain = clone_get_equiv([x, y], [a, b])
        assert plain[a] is not plain[b]  # merging is asked for, never the default

    def test_a_merging_copy_keeps_two_writers_apart(self):
        class Overwrite(Op):
            __props__ = ()
            destroy_map = {0: [0]}

            def make_node(self, v):
                return Apply(self, [v], [v.type()])

            def perform(self, node, inputs, outputs):
                outputs[0][0] = inputs[0]

        x = double("x")
        a, b = Overwrite()(neg(x)), Overwrite()(neg(x))
        equiv = clone_get_equiv([x], [a, b], merge=True)
        assert equiv[a] is not equiv[b]
        assert equiv[a].owner.inputs[0] is equiv[b].owner.inputs[0]  # the neg is one

    def test_constant_inputs_are_never_copied(self):
        c = Constant(double, 2.0)
        w = neg(c)
        equiv = clone_get_equiv([c], [w], copy_inputs=True, copy_orphans=True)
        assert equiv[c] is c
        assert equiv[w].owner.inputs == [c]

    def test_memo_prefilled_is_used_not_copied(self):
        x, y, _c, z, w = small_graph()
        u = double("u")
        memo = {x: u}
        equiv = clone_get_equiv([], [w], copy_inputs=False, copy_orphans=False, memo=memo)
        assert equiv is memo
        assert equiv[x] is u
        assert equiv[z].owner.inputs == [u, y]
        assert equiv[w].eval({u: 10.0, y: 1.0}) == 22.0

    def test_memo_with_an_intermediate(self):
        _x, _y, c, z, w = small_graph()
        k = Constant(double, 5.0)
        equiv = clone_get_equiv([], [w], copy_inputs=False, copy_orphans=False, memo={z: k})
        assert z.owner not in equiv  # not reached
        assert equiv[w].owner.inputs == [k, c]
        assert equiv[w].eval({}) == 10.0

    def test_output_that_is_a_root(self):
        x = double("x")
        equiv = clone_get_equiv([], [x])
        assert equiv[x] is not x and equiv[x].name == "x"
        assert clone_get_equiv([], [x], copy_orphans=False)[x] is x

    def test_multi_output_nodes(self):
        x = double("x")
        q, r = divmod_op(x, 3.0)
        out = add(q, r)
        equiv = clone_get_equiv([x], [out])
        node = equiv[q.owner]
        assert node.outputs == [equiv[q], equiv[r]]
        assert equiv[out].owner.inputs == [equiv[q], equiv[r]]
        assert equiv[out].eval({equiv[x]: 7.0}) == 3.0

    def test_shared_subgraph_is_copied_once(self):
        x = double("x")
        z = neg(x)
        w = add(z, z)
        equiv = clone_get_equiv([x], [w])
        a, b = equiv[w].owner.inputs
        assert a is b is equiv[z]

    def test_clone_function(self):
        x, y, _c, _z, w = small_graph()
        (nx, ny), (nw,) = clone([x, y], [w])
        assert nx is not x and ny is not y and nw is not w
        assert nw.eval({nx: 1.0, ny: 1.0}) == 4.0
        (nx, ny), (nw,) = clone([x, y], [w], copy_inputs=False)
        assert (nx, ny) == (x, y)
        assert nw is not w
        # copy_orphans defaults to copy_inputs
        (nx,), (nw,) = clone([x], [w], copy_inputs=False)
        assert nw.owner.inputs[0].owner.inputs == [x, y]

    def test_clone_inner_graphs(self):
        op = Inner(1)
        x = double("x")
        out = op(x)
        assert clone_get_equiv([x], [out])[out].owner.op is op
        new_op = clone_get_equiv([x], [out], clone_inner_graphs=True)[out].owner.op
        assert new_op is not op and new_op == op

    def test_narrowed_memo_entry_remakes_nodes(self):
        x = LenType()("x")
        out = reverse(reverse(x))
        n = LenType(4)("n")
        equiv = clone_get_equiv([], [out], copy_inputs=False, copy_orphans=False, memo={x: n})
        assert equiv[out].type == LenType(4)
        assert equiv[out].eval({n: (1, 2, 3, 4)}) == (1.0, 2.0, 3.0, 4.0)


# --- equal_computations --------------------------------------------------------------------


class TestEqualComputations:
    def test_equal_graphs(self):
        x, y = double("x"), double("y")
        a = mul(add(x, y), 2.0)
        b = mul(add(x, y), 2.0)
        assert a is not b
        assert equal_computations([a], [b])
        assert equal_computations([a, x], [b, x])
        assert equal_computations([x], [x])
        assert equal_computations([], [])

    def test_different_ops(self):
        x, y = double("x"), double("y")
        assert not equal_computations([add(x, y)], [mul(x, y)])
        assert not equal_computations([neg(add(x, y))], [neg(sub(x, y))])

    def test_different_inputs(self):
        x, y = double("x"), double("y")
        assert not equal_computations([add(x, y)], [add(y, x)])
        assert not equal_computations([x], [y])
        assert not equal_computations([neg(x)], [x])
        assert not equal_computations([neg(x)], [neg(Constant(double, 1.0))])

    def test_constants(self):
        x = double("x")
        assert equal_computations([add(x, 2.0)], [add(x, 2)])
        assert not equal_computations([add(x, 2.0)], [add(x, 3.0)])
        assert equal_computations([Constant(double, 1.0)], [Constant(double, 1.0)])
        assert not equal_computations([Constant(double, 1.0)], [Constant(double, 2.0)])
        assert not equal_computations([Constant(double, 1.0)], [Constant(integer, 1)])

    def test_output_index_matters(self):
        x = double("x")
        q, r = divmod_op(x, 2.0)
        q2, r2 = divmod_op(x, 2.0)
        assert equal_computations([q, r], [q2, r2])
        assert not equal_computations([q], [r2])

    def test_in_xs_in_ys_pairing(self):
        x, y = double("x"), double("y")
        u, v = double("u"), double("v")
        a = sub(x, y)
        b = sub(u, v)
        assert not equal_computations([a], [b])
        assert equal_computations([a], [b], in_xs=[x, y], in_ys=[u, v])
        assert not equal_computations([a], [b], in_xs=[x, y], in_ys=[v, u])
        assert not equal_computations([a], [b], in_xs=[x], in_ys=[u])
        # a paired y-side input may not stand for something else
        assert not equal_computations([sub(x, u)], [sub(u, u)], in_xs=[x], in_ys=[u])
        # pairs of different Types never match
        i = integer("i")
        assert not equal_computations([x], [i], in_xs=[x], in_ys=[i])
        # unequal pairing lists
        assert not equal_computations([a], [b], in_xs=[x, y], in_ys=[u])

    def test_pairing_intermediate_variables(self):
        x, y = double("x"), double("y")
        zx, zy = add(x, x), add(y, y)
        assert equal_computations([neg(zx)], [neg(zy)], in_xs=[zx], in_ys=[zy])
        assert not equal_computations([neg(zx)], [neg(zy)])

    def test_different_lengths(self):
        x = double("x")
        with pytest.raises(ValueError):
            equal_computations([x, x], [x])

    def test_cloned_graph_is_equal(self):
        x, y, _c, _z, w = small_graph()
        (nx, ny), (nw,) = clone([x, y], [w])
        assert not equal_computations([w], [nw])
        assert equal_computations([w], [nw], [x, y], [nx, ny])
        (nw2,) = clone([x, y], [w], copy_inputs=False)[1]
        assert equal_computations([w], [nw2])


def test_traversal_functions_still_import_from_graph_basic_with_a_future_warning():
    import arignote.graph.basic as basic
    import arignote.graph.traversal as traversal

    for name in ("graph_inputs", "ancestors", "io_toposort", "walk", "applys_between"):
        with pytest.warns(FutureWarning, match="arignote.graph.traversal"):
            assert getattr(basic, name) is getattr(traversal, name)
    with pytest.raises(AttributeError, match="has no attribute 'toposort_of_nothing'"):
        basic.toposort_of_nothing
