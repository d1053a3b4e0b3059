"""The Op contract: ``__props__`` identity, ``make_node``, ``__call__``, thunks and the
gradient hooks of :class:`arignote.graph.op.Op`."""

from __future__ import annotations

import pytest

from arignote.graph.basic import Apply, Constant, Variable
from arignote.graph.op import HasInnerGraph, Op
from arignote.graph.type import Type
from arignote.graph.utils import MetaType
from tests.toy import DivMod, add, divmod_op, double, integer, mul, neg

# --- Ops used here ----------------------------------------------------------------------


class Scale(Op):
    __props__ = ("factor", "label")

    def __init__(self, factor, label="x"):
        self.factor = factor
        self.label = label

    def make_node(self, x):
        return Apply(self, [x], [double()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = self.factor * inputs[0]


class NoProps(Op):
    def make_node(self, x):
        return Apply(self, [x], [double()])


class EmptyProps(Op):
    __props__ = ()

    def make_node(self, x):
        return Apply(self, [x], [double()])


class IntAdd(Op):
    """Uses the default ``make_node`` through ``itypes``/``otypes``."""

    __props__ = ()
    itypes = [integer, integer]
    otypes = [integer]

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0] + inputs[1]


class Number(Type):
    """A supertype of ``integer`` and ``double``."""

    __props__ = ()

    def filter(self, data, strict=False, allow_downcast=None):
        if isinstance(data, int | float) and not isinstance(data, bool):
            return data
        raise TypeError(f"not a number: {data!r}")

    def is_super(self, otype):
        if otype in (self, integer, double):
            return True
        return None


number = Number()


class Describe(Op):
    """Accepts any Number subtype, through ``itypes``."""

    __props__ = ()
    itypes = [number]
    otypes = [double]

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = float(inputs[0])


class Three(Op):
    """Three outputs."""

    __props__ = ()

    def make_node(self, x):
        return Apply(self, [x], [double(), double(), double()])

    def perform(self, node, inputs, output_storage):
        for i, cell in enumerate(output_storage):
            cell[0] = inputs[0] + i


class ThreeDefault1(Three):
    default_output = 1


# --- __props__ machinery ----------------------------------------------------------------


def test_props_generate_eq_hash_str():
    a, b, c = Scale(2, "x"), Scale(2, "x"), Scale(3, "x")
    assert a == b and hash(a) == hash(b)
    assert a != c and (a == c) is False
    assert Scale(2, "y") != a
    assert str(a) == "Scale{factor=2, label='x'}"
    assert repr(a) == "Scale{factor=2, label='x'}"
    assert len({a, b, c}) == 2


def test_props_accessors():
    s = Scale(2, "lbl")
    assert s._props() == (2, "lbl")
    assert s._props_dict() == {"factor": 2, "label": "lbl"}


def test_props_equality_needs_the_same_class():
    class Scale2(Scale):
        __props__ = ("factor", "label")

    assert Scale(2) != Scale2(2)
    assert Scale2(2) == Scale2(2)


def test_props_equal_values_of_different_python_types():
    # equality is the equality of the prop tuples: 2 == 2.0
    assert Scale(2) == Scale(2.0)
    assert hash(Scale(2)) == hash(Scale(2.0))


def test_empty_props_all_instances_equal():
    assert EmptyProps() == EmptyProps()
    assert hash(EmptyProps()) == hash(EmptyProps())
    assert str(EmptyProps()) == "EmptyProps"
    assert EmptyProps()._props() == ()
    assert EmptyProps()._props_dict() == {}


def test_props_default_is_undefined():
    assert not hasattr(Op, "__props__")
    assert not hasattr(NoProps, "__props__")
    a, b = NoProps(), NoProps()
    assert a == a and a != b
    assert hash(a) == object.__hash__(a)
    assert str(a) == "NoProps"
    with pytest.raises(ValueError, match="NoProps does not declare __props__"):
        a._props()
    with pytest.raises(ValueError, match="NoProps does not declare __props__"):
        a._props_dict()


def test_class_defining_its_own_eq_and_str_keeps_them():
    class Custom(Op):
        __props__ = ("n",)

        def __init__(self, n):
            self.n = n

        def __eq__(self, other):
            return isinstance(other, Custom)  # ignores n

        def __str__(self):
            return f"Custom<{self.n}>"

    assert Custom(1) == Custom(2)
    assert str(Custom(1)) == "Custom<1>"
    # __hash__ was not defined, so it is still generated from the props
    assert hash(Custom(1)) == hash(Custom(1))
    assert Custom(1)._props() == (1,)


def test_class_defining_its_own_hash_keeps_it():
    class Hashed(Op):
        __props__ = ("n",)

        def __init__(self, n):
            self.n = n

        def __hash__(self):
            return 42

    assert hash(Hashed(1)) == 42 == hash(Hashed(2))
    assert Hashed(1) != Hashed(2)


def test_props_inherited_by_subclass_without_redeclaring():
    class Scale3(Scale):
        pass

    assert Scale3(2) == Scale3(2)
    assert str(Scale3(2)) == "Scale3{factor=2, label='x'}"
    assert Scale3(2) != Scale(2)


def test_unhashable_prop_value_names_the_prop():
    s = Scale([1, 2], "x")
    with pytest.raises(TypeError, match=r"Scale.*hashable.*\['factor'\]"):
        hash(s)
    assert s == Scale([1, 2], "x")  # equality still works


@pytest.mark.parametrize("bad", [["a"], "a", ("a", 1), {"a": 1}])
def test_bad_props_declaration(bad):
    with pytest.raises(TypeError, match="__props__ must be a tuple of attribute names"):

        class Bad(Op):
            __props__ = bad


def test_metatype_on_a_plain_class():
    class Point(metaclass=MetaType):
        __props__ = ("x", "y")

        def __init__(self, x, y):
            self.x, self.y = x, y

    assert Point(1, 2) == Point(1, 2)
    assert Point(1, 2) != Point(2, 1)
    assert str(Point(1, "a")) == "Point{x=1, y='a'}"
    assert {Point(1, 2): "v"}[Point(1, 2)] == "v"


def test_eq_with_non_op():
    assert Scale(2) != 2
    assert Scale(2) != "Scale{factor=2, label='x'}"
    assert (Scale(2) == None) is False  # noqa: E711


def test_equal_ops_hash_the_same_for_their_lifetime():
    s = Scale(2)
    h = hash(s)
    s.factor = 2.0  # an equal value: still equal, same hash
    assert hash(s) == h


# --- make_node ---------------------------------------------------------------------------


def test_make_node_missing_is_an_error():
    class Nothing(Op):
        pass

    with pytest.raises(
        TypeError, match="Nothing must define make_node, or the class attributes itypes and otypes"
    ):
        Nothing().make_node(double())
    with pytest.raises(TypeError, match="Nothing must define make_node"):
        Nothing()(double())


def test_itypes_without_otypes_is_not_enough():
    class Half(Op):
        itypes = [double]

    with pytest.raises(TypeError, match="itypes and otypes"):
        Half()(double())


def test_an_op_without_perform_cannot_be_applied():
    class NoPerform(Op):
        __props__ = ()

        def make_node(self, x):
            return Apply(self, [x], [double()])

    with pytest.raises(TypeError, match="Can't apply the Op NoPerform: it defines neither perform"):
        NoPerform()(double())

    class OwnThunk(NoPerform):
        def make_thunk(self, node, storage_map, compute_map, no_recycling, impl=None):
            raise AssertionError("not run")

    assert OwnThunk()(double()).owner.op == OwnThunk()  # its own thunk computes it


def test_itypes_otypes_default_make_node():
    a, b = integer("a"), integer("b")
    node = IntAdd().make_node(a, b)
    assert isinstance(node, Apply)
    assert node.op == IntAdd()
    assert node.inputs == [a, b]
    assert len(node.outputs) == 1
    assert node.outputs[0].type == integer
    assert node.outputs[0].owner is node
    assert IntAdd()(a, b).eval({a: 2, b: 3}) == 5


def test_itypes_wrong_count():
    a = integer("a")
    with pytest.raises(ValueError, match="IntAdd takes 2 inputs, got 1"):
        IntAdd()(a)
    with pytest.raises(ValueError, match="IntAdd takes 2 inputs, got 3"):
        IntAdd()(a, a, a)


def test_itypes_wrong_type_names_input_and_types():
    a, x = integer("a"), double("x")
    with pytest.raises(TypeError, match=r"IntAdd: input 1 \(x\) has Type double, expected int"):
        IntAdd()(a, x)


def test_itypes_are_checked_with_is_super():
    i, x = integer("i"), double("x")
    out = Describe()(i)
    assert out.owner.inputs == [i]  # accepted as it is, not converted
    assert Describe()(x).owner.inputs == [x]
    assert out.eval({i: 4}) == 4.0
    # the check is itype.is_super(input.type), not equality and not the reverse
    assert Describe()(number("n")).owner.inputs[0].type == number
    with pytest.raises(TypeError, match=r"IntAdd: input 0 \(n\) has Type Number, expected int"):
        IntAdd()(number("n"), integer())


def test_itypes_reject_unrelated_type():
    class Other(Type):
        def filter(self, data, strict=False, allow_downcast=None):
            return data

    o = Other()("o")
    with pytest.raises(TypeError, match=r"Describe: input 0 \(o\) has Type Other, expected Number"):
        Describe()(o)


def test_itypes_non_variable_input_becomes_constant():
    a = integer("a")
    out = IntAdd()(a, 4)
    c = out.owner.inputs[1]
    assert isinstance(c, Constant)
    assert c.type == integer and c.data == 4
    assert out.eval({a: 1}) == 5


def test_make_node_again_on_apply_inputs_is_equivalent():
    x, y = double("x"), double("y")
    node = mul(x, y).owner
    again = node.op.make_node(*node.inputs)
    assert again is not node
    assert again.op == node.op
    assert again.inputs == node.inputs
    assert [o.type for o in again.outputs] == [o.type for o in node.outputs]


# --- __call__ ----------------------------------------------------------------------------


def test_call_single_output():
    x = double("x")
    out = Scale(2)(x)
    assert isinstance(out, Variable)
    assert out.owner.op == Scale(2)
    assert out.owner.inputs == [x]
    assert out.index == 0


def test_call_name():
    x = double("x")
    assert Scale(2)(x, name="y").name == "y"
    assert Scale(2)(x).name is None


def test_call_return_list():
    x = double("x")
    out = Scale(2)(x, return_list=True)
    assert isinstance(out, list) and len(out) == 1
    assert out[0].owner.op == Scale(2)


def test_call_multiple_outputs_returns_list():
    x = double("x")
    outs = Three()(x)
    assert isinstance(outs, list) and len(outs) == 3
    assert [o.index for o in outs] == [0, 1, 2]
    assert outs[0].owner is outs[2].owner
    assert Three()(x, return_list=True)[1].index == 1
    named = Three()(x, name="t")
    assert [o.name for o in named] == ["t_0", "t_1", "t_2"]


def test_call_default_output():
    x = double("x")
    out = ThreeDefault1()(x)
    assert isinstance(out, Variable)
    assert out.index == 1
    assert len(out.owner.outputs) == 3
    as_list = ThreeDefault1()(x, return_list=True)
    assert isinstance(as_list, list) and len(as_list) == 1 and as_list[0].index == 1
    named = ThreeDefault1()(x, name="mid")
    assert named.name == "mid"
    assert [o.name for o in named.owner.outputs] == [None, "mid", None]
    assert out.owner.default_output() is out


def test_default_output_attribute_default_is_none():
    assert Op.default_output is None
    assert DivMod.default_output is None


def test_call_passes_keyword_arguments_to_make_node():
    class Keyed(Op):
        def make_node(self, x, *, scale=1):
            node = Apply(self, [x], [double()])
            node.tag.scale = scale
            return node

        def perform(self, node, inputs, output_storage):
            output_storage[0][0] = inputs[0] * node.tag.scale

    x = double()
    assert Keyed()(x, scale=3).owner.tag.scale == 3
    assert Keyed()(x).owner.tag.scale == 1


def test_call_with_toy_divmod_two_outputs():
    x, y = double("x"), double("y")
    q, r = divmod_op(x, y)
    assert q.owner is r.owner
    assert (q.index, r.index) == (0, 1)
    assert q.eval({x: 7.0, y: 2.0}) == 3.0
    assert r.eval({x: 7.0, y: 2.0}) == 1.0


# --- class-level defaults ----------------------------------------------------------------


def test_view_map_destroy_map_default_empty():
    assert Op.view_map == {} and Op.destroy_map == {}
    assert Scale(2).view_map == {} and Scale(2).destroy_map == {}


def test_do_constant_folding_default_true():
    x = double("x")
    node = Scale(2)(x).owner
    assert Scale(2).do_constant_folding(None, node) is True


def test_do_constant_folding_can_depend_on_the_node():
    class Alloc(Scale):
        def do_constant_folding(self, fgraph, node):
            return not any(isinstance(i, Constant) and i.data > 100 for i in node.inputs)

    small = Alloc(1).make_node(double.make_constant(5.0))
    big = Alloc(1).make_node(double.make_constant(500.0))
    assert Alloc(1).do_constant_folding(None, small) is True
    assert Alloc(1).do_constant_folding(None, big) is False


def test_inplace_on_inputs_default_is_self():
    s = Scale(2)
    assert s.inplace_on_inputs([0]) is s


def test_optional_hooks_are_undefined_by_default():
    for hook in ("infer_shape", "connection_pattern", "flops", "debug_perform", "get_params"):
        assert not hasattr(Op, hook), hook


def test_base_perform_not_implemented():
    x = double("x")
    node = NoProps().make_node(x)
    with pytest.raises(NotImplementedError, match="NoProps must define perform"):
        node.op.perform(node, [1.0], [[None]])


# --- thunks: the storage-cell protocol ---------------------------------------------------


def _maps(node, **values):
    storage = {}
    compute = {}
    for v in node.inputs:
        storage[v] = [values.get(v.name)]
        compute[v] = [True]
    for v in node.outputs:
        storage[v] = [None]
        compute[v] = [False]
    return storage, compute


def test_make_thunk_sets_outputs_and_compute_map():
    x, y = double("x"), double("y")
    node = mul(x, y).owner
    storage, compute = _maps(node, x=3.0, y=4.0)
    thunk = node.op.make_thunk(node, storage, compute, [])
    assert callable(thunk)
    out = node.outputs[0]
    assert storage[out] == [None] and not compute[out][0]
    assert thunk() is None
    assert storage[out][0] == 12.0
    assert compute[out][0] == 1  # True: computed
    assert thunk.lazy is False


def test_thunk_cells_are_the_shared_storage_objects():
    x, y = double("x"), double("y")
    node = add(x, y).owner
    storage, compute = _maps(node, x=1.0, y=2.0)
    thunk = node.op.make_thunk(node, storage, compute, [])
    assert thunk.inputs[0] is storage[x] and thunk.inputs[1] is storage[y]
    assert thunk.outputs[0] is storage[node.outputs[0]]
    thunk()
    assert storage[node.outputs[0]][0] == 3.0
    # the cells are pointers: a new value in them is seen by the next run
    storage[x][0] = 10.0
    thunk()
    assert storage[node.outputs[0]][0] == 12.0


def test_thunk_multiple_outputs():
    x, y = double("x"), double("y")
    node = divmod_op.make_node(x, y)
    storage, compute = _maps(node, x=17.0, y=5.0)
    divmod_op.make_thunk(node, storage, compute, [])()
    assert [storage[o][0] for o in node.outputs] == [3.0, 2.0]
    assert all(compute[o][0] for o in node.outputs)


def test_thunk_without_compute_map():
    x = double("x")
    node = Scale(3).make_node(x)
    storage = {x: [2.0], node.outputs[0]: [None]}
    Scale(3).make_thunk(node, storage, None, [])()
    assert storage[node.outputs[0]][0] == 6.0


class Remember(Op):
    """Records what was in its output cell when perform started."""

    __props__ = ()

    def __init__(self):
        self.seen = []

    def make_node(self, x):
        return Apply(self, [x], [double()])

    def perform(self, node, inputs, output_storage):
        self.seen.append(output_storage[0][0])
        output_storage[0][0] = inputs[0] + 1


def test_previous_output_is_visible_to_perform():
    op = Remember()
    x = double("x")
    node = op.make_node(x)
    storage, compute = _maps(node, x=1.0)
    thunk = op.make_thunk(node, storage, compute, [])
    thunk()
    storage[x][0] = 5.0
    thunk()
    assert op.seen == [None, 2.0]
    assert storage[node.outputs[0]][0] == 6.0


def test_no_recycling_clears_the_output_cell_first():
    op = Remember()
    x = double("x")
    node = op.make_node(x)
    storage, compute = _maps(node, x=1.0)
    out = node.outputs[0]
    thunk = op.make_thunk(node, storage, compute, [out])
    thunk()
    thunk()
    assert op.seen == [None, None]
    assert storage[out][0] == 2.0


def test_no_recycling_only_affects_listed_outputs():
    seen = []

    class Two(Op):
        def make_node(self, x):
            return Apply(self, [x], [double(), double()])

        def perform(self, node, inputs, output_storage):
            seen.append([c[0] for c in output_storage])
            output_storage[0][0] = inputs[0]
            output_storage[1][0] = -inputs[0]

    x = double("x")
    node = Two().make_node(x)
    storage, compute = _maps(node, x=1.0)
    thunk = node.op.make_thunk(node, storage, compute, [node.outputs[1]])
    thunk()
    thunk()
    assert seen == [[None, None], [1.0, None]]


@pytest.mark.parametrize("impl", [None, "py"])
def test_make_thunk_impl_none_or_py(impl):
    x = double("x")
    node = Scale(2).make_node(x)
    storage, compute = _maps(node, x=4.0)
    Scale(2).make_thunk(node, storage, compute, [], impl=impl)()
    assert storage[node.outputs[0]][0] == 8.0


@pytest.mark.parametrize("impl", ["c", "numba", "cvm"])
def test_make_thunk_other_impl_is_a_value_error(impl):
    x = double("x")
    node = Scale(2).make_node(x)
    storage, compute = _maps(node, x=4.0)
    with pytest.raises(ValueError, match=f"no implementation '{impl}'"):
        Scale(2).make_thunk(node, storage, compute, [], impl=impl)


def test_prepare_node_is_called_before_the_thunk_is_made():
    calls = []

    class Prepared(Scale):
        def prepare_node(self, node, storage_map, compute_map, impl):
            calls.append((node, storage_map, compute_map, impl))
            node.tag.prepared = True

    x = double("x")
    op = Prepared(2)
    node = op.make_node(x)
    storage, compute = _maps(node, x=1.0)
    thunk = op.make_thunk(node, storage, compute, [])
    assert calls == [(node, storage, compute, "py")]
    assert node.tag.prepared is True
    thunk()
    assert len(calls) == 1


def test_prepare_node_default_does_nothing():
    x = double("x")
    node = Scale(2).make_node(x)
    assert Scale(2).prepare_node(node, None, None, None) is None


def test_get_params_are_passed_to_perform():
    class WithParams(Op):
        __props__ = ("k",)

        def __init__(self, k):
            self.k = k
            self.calls = 0

        def make_node(self, x):
            return Apply(self, [x], [double()])

        def get_params(self, node):
            self.calls += 1
            return {"k": self.k, "nin": len(node.inputs)}

        def perform(self, node, inputs, output_storage, params):
            output_storage[0][0] = inputs[0] * params["k"] + params["nin"]

    op = WithParams(10)
    x = double("x")
    node = op.make_node(x)
    assert node.run_params() == {"k": 10, "nin": 1}
    storage, compute = _maps(node, x=2.0)
    thunk = op.make_thunk(node, storage, compute, [])
    thunk()
    assert storage[node.outputs[0]][0] == 21.0
    assert op(x).eval({x: 3.0}) == 31.0


def test_get_params_returning_none_still_passes_params():
    received = []

    class NoneParams(Op):
        def make_node(self, x):
            return Apply(self, [x], [double()])

        def get_params(self, node):
            return None

        def perform(self, node, inputs, output_storage, params):
            received.append(params)
            output_storage[0][0] = inputs[0]

    x = double("x")
    assert NoneParams()(x).eval({x: 1.0}) == 1.0
    assert received == [None]


def test_run_params_without_get_params():
    node = Scale(2).make_node(double())
    with pytest.raises(AttributeError, match="no get_params"):
        node.run_params()


def test_make_thunk_override_replaces_perform():
    class ThunkOnly(Op):
        def make_node(self, x):
            return Apply(self, [x], [double()])

        def make_thunk(self, node, storage_map, compute_map, no_recycling, impl=None):
            i, o = storage_map[node.inputs[0]], storage_map[node.outputs[0]]
            done = compute_map[node.outputs[0]]

            def thunk():
                o[0] = i[0] ** 2
                done[0] = True

            return thunk

    x = double("x")
    assert ThunkOnly()(x).eval({x: 3.0}) == 9.0


def test_debug_perform_used_only_in_debug_thunks():
    class Dbg(Scale):
        def debug_perform(self, node, inputs, output_storage):
            output_storage[0][0] = "debug"

    x = double("x")
    op = Dbg(2)
    node = op.make_node(x)
    storage, compute = _maps(node, x=1.0)
    op.make_py_thunk(node, storage, compute, [], debug=True)()
    assert storage[node.outputs[0]][0] == "debug"
    op.make_py_thunk(node, storage, compute, [])()
    assert storage[node.outputs[0]][0] == 2.0
    # without debug_perform, a debug thunk runs perform
    node2 = Scale(2).make_node(x)
    storage2, compute2 = _maps(node2, x=1.0)
    Scale(2).make_py_thunk(node2, storage2, compute2, [], debug=True)()
    assert storage2[node2.outputs[0]][0] == 2.0


# --- gradients: grad / L_op / pullback, R_op / pushforward --------------------------------


class Product(Op):
    """x * y with no gradient rule; subclasses add one spelling each."""

    def make_node(self, x, y):
        return Apply(self, [x, y], [double()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0] * inputs[1]


class ByGrad(Product):
    def grad(self, inputs, output_grads):
        x, y = inputs
        (g,) = output_grads
        return [mul(g, y), mul(g, x)]


class ByLop(Product):
    def __init__(self):
        self.outputs_seen = []

    def L_op(self, inputs, outputs, output_grads):
        self.outputs_seen.append(list(outputs))
        x, y = inputs
        (g,) = output_grads
        return [mul(g, y), mul(g, x)]


class ByPullback(Product):
    def __init__(self):
        self.outputs_seen = []

    def pullback(self, inputs, outputs, output_grads):
        self.outputs_seen.append(list(outputs))
        x, y = inputs
        (g,) = output_grads
        return [mul(g, y), mul(g, x)]


def _check_grad_terms(terms, x, y, g):
    assert isinstance(terms, list) and len(terms) == 2
    assert all(isinstance(t, Variable) for t in terms)
    values = {x: 3.0, y: 5.0, g: 2.0}
    assert [t.eval(values, on_unused_input="ignore") for t in terms] == [10.0, 6.0]


@pytest.mark.parametrize("cls", [ByGrad, ByLop, ByPullback])
def test_each_gradient_spelling_reachable_through_all_three(cls):
    op = cls()
    x, y, g = double("x"), double("y"), double("g")
    out = op(x, y)
    _check_grad_terms(op.grad([x, y], [g]), x, y, g)
    _check_grad_terms(op.L_op([x, y], [out], [g]), x, y, g)
    _check_grad_terms(op.pullback([x, y], [out], [g]), x, y, g)


def test_l_op_and_pullback_receive_the_outputs_they_are_given():
    for cls in (ByLop, ByPullback):
        op = cls()
        x, y, g = double("x"), double("y"), double("g")
        out = op(x, y)
        op.L_op([x, y], [out], [g])
        op.pullback([x, y], [out], [g])
        assert op.outputs_seen[0] == [out] and op.outputs_seen[1] == [out]
        # grad has no outputs to give: the rule gets outputs of a node on the same inputs
        op.grad([x, y], [g])
        (made,) = op.outputs_seen[2]
        assert made.owner.op is op and made.owner.inputs == [x, y]


def test_no_gradient_defined_is_not_implemented():
    op = Product()
    x, y, g = double("x"), double("y"), double("g")
    out = op(x, y)
    for call in (
        lambda: op.grad([x, y], [g]),
        lambda: op.L_op([x, y], [out], [g]),
        lambda: op.pullback([x, y], [out], [g]),
    ):
        with pytest.raises(
            NotImplementedError, match=r"Product defines no gradient \(grad, L_op or pullback\)"
        ):
            call()


def test_grad_may_return_null_type_for_an_input():
    from arignote.graph.null_type import NullType

    class HalfDefined(Product):
        def grad(self, inputs, output_grads):
            return [mul(output_grads[0], inputs[1]), NullType("y is an index")()]

    x, y, g = double("x"), double("y"), double("g")
    gx, gy = HalfDefined().pullback([x, y], [HalfDefined()(x, y)], [g])
    assert gx.eval({x: 1.0, y: 4.0, g: 1.0}, on_unused_input="ignore") == 4.0
    assert isinstance(gy.type, NullType) and gy.type.why_null == "y is an index"


class ByRop(Product):
    def R_op(self, inputs, eval_points):
        x, y = inputs
        ex, ey = eval_points
        return [add(mul(ex, y), mul(x, ey))]


class ByPushforward(Product):
    def __init__(self):
        self.outputs_seen = []

    def pushforward(self, inputs, outputs, eval_points):
        self.outputs_seen.append(list(outputs))
        x, y = inputs
        ex, ey = eval_points
        return [add(mul(ex, y), mul(x, ey))]


@pytest.mark.parametrize("cls", [ByRop, ByPushforward])
def test_forward_mode_reachable_through_both_spellings(cls):
    op = cls()
    x, y, ex, ey = double("x"), double("y"), double("ex"), double("ey")
    out = op(x, y)
    values = {x: 2.0, y: 3.0, ex: 1.0, ey: 10.0}
    for terms in (op.R_op([x, y], [ex, ey]), op.pushforward([x, y], [out], [ex, ey])):
        assert isinstance(terms, list) and len(terms) == 1  # one per output
        assert terms[0].eval(values) == 1.0 * 3.0 + 2.0 * 10.0


def test_pushforward_receives_outputs():
    op = ByPushforward()
    x, y, ex, ey = double("x"), double("y"), double("ex"), double("ey")
    out = op(x, y)
    op.pushforward([x, y], [out], [ex, ey])
    assert op.outputs_seen == [[out]]
    op.R_op([x, y], [ex, ey])
    (made,) = op.outputs_seen[1]
    assert made.owner.op is op and made.owner.inputs == [x, y]


def test_no_forward_mode_defined_is_not_implemented():
    op = Product()
    x, y = double("x"), double("y")
    out = op(x, y)
    with pytest.raises(NotImplementedError, match="Product defines no R_op / pushforward"):
        op.R_op([x, y], [x, y])
    with pytest.raises(NotImplementedError, match="Product defines no R_op / pushforward"):
        op.pushforward([x, y], [out], [x, y])


def test_gradient_spelling_on_toy_op_is_missing():
    x = double("x")
    with pytest.raises(NotImplementedError, match="neg defines no gradient"):
        neg.grad([x], [double()])


# --- HasInnerGraph ----------------------------------------------------------------------------


def test_has_inner_graph_mixin_requires_its_parts():
    class Inner(HasInnerGraph, Op):
        pass

    op = Inner()
    with pytest.raises(NotImplementedError, match=r"Inner must define fgraph \(or inner_inputs\)"):
        op.inner_inputs
    with pytest.raises(NotImplementedError, match=r"Inner must define fgraph \(or inner_outputs\)"):
        op.inner_outputs
    with pytest.raises(NotImplementedError, match="Inner must define clone"):
        op.clone()
    with pytest.raises(AttributeError, match="Inner has no compiled inner function"):
        op.fn
    assert not hasattr(op, "fn")


class Composite(HasInnerGraph, Op):
    """Runs an inner graph ``add(a, b)`` on its inputs."""

    def __init__(self):
        self.a, self.b = double("a"), double("b")
        self.out = add(self.a, self.b)
        self.clones = 0

    @property
    def inner_inputs(self):
        return [self.a, self.b]

    @property
    def inner_outputs(self):
        return [self.out]

    def clone(self):
        self.clones += 1
        return Composite()

    def make_node(self, x, y):
        return Apply(self, [x, y], [double()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = self.out.eval(dict(zip(self.inner_inputs, inputs)))


def test_has_inner_graph_op_is_cloned_with_clone_inner_graph():
    op = Composite()
    x, y = double("x"), double("y")
    out = op(x, y)
    assert out.eval({x: 1.0, y: 2.0}) == 3.0
    assert isinstance(op, HasInnerGraph)
    same = out.owner.clone()
    assert same.op is op and op.clones == 0
    cloned = out.owner.clone(clone_inner_graph=True)
    assert op.clones == 1
    assert cloned.op is not op and isinstance(cloned.op, Composite)
    assert cloned.inputs == [x, y]


def test_io_connection_pattern_follows_each_node_connection_pattern():
    import arignote.tensor as _pt
    from arignote.graph.op import io_connection_pattern, is_thunk_type

    x, y, z = _pt.dscalar("x"), _pt.dscalar("y"), _pt.dscalar("z")
    assert io_connection_pattern([x, y, z], [x * 2, x + y, _pt.constant(1.0)]) == [
        [True, True, False],
        [False, True, False],
        [False, False, False],
    ]

    def thunk():
        return None

    assert is_thunk_type(thunk) is thunk
    with pytest.raises(TypeError, match="callable"):
        is_thunk_type(3)


def test_add_tag_trace_records_the_callers_line():
    v = Variable(integer)
    assert Op.add_tag_trace(v) is v
    (frame,) = v.tag.trace[-1][-1:]
    assert frame[0] == __file__ and frame[2] == "test_add_tag_trace_records_the_callers_line"
    with pytest.raises(TypeError, match="needs a Variable or an Apply"):
        Op.add_tag_trace(3)
