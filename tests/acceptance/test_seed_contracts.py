"""The seed documents' statements and examples about Types, graph structures and Ops,
as far as they need neither tensors nor compilation (``arignote`` for ``pytensor``).

Sections follow the seeds: "Type's contract" and its DoubleType example, "Graph
Structures" (Theano), and "Op's contract".
"""

from __future__ import annotations

import inspect
from fractions import Fraction

import numpy as np
import pytest

import arignote
from arignote.graph.basic import Apply, Constant, Variable
from arignote.graph.fg import FunctionGraph, Output
from arignote.graph.null_type import NullType
from arignote.graph.op import Op
from arignote.graph.type import Type, register_transfer, transfer
from arignote.graph.utils import MethodNotDefined
from tests.toy import add, divmod_op, mul, neg
from tests.toy import double as toy_double

# =========================================================================================
# The DoubleType example, written as the seed writes it. (The seed's first listing spells
# ``false``/``none``/``typeerror`` in lower case, which is not Python; its capitalised
# form is used, as in its "Putting them together" listing.)
# =========================================================================================


# note that we shadow python's function ``filter`` with this
# definition.
def filter(x, strict=False, allow_downcast=None):
    if strict:
        if isinstance(x, float):
            return x
        else:
            raise TypeError("expected a float!")
    elif allow_downcast:
        return float(x)
    else:  # covers both the false and none cases.
        x_float = float(x)
        if x_float == x:
            return x_float
        else:
            raise TypeError(
                "The double type cannot accurately represent "
                f"value {x} (of type {type(x)}): you must explicitly "
                "allow downcasting if you want to do this."
            )


def values_eq_approx(x, y, tolerance=1e-4):
    return abs(x - y) / (abs(x) + abs(y)) < tolerance


class DoubleType(Type):
    def filter(self, x, strict=False, allow_downcast=None):
        # See code above.
        return filter(x, strict, allow_downcast)

    def values_eq_approx(self, x, y, tolerance=1e-4):
        # See code above.
        return values_eq_approx(x, y, tolerance)


double = DoubleType()


class DAdd(Op):
    """``a + b`` on Variables of any DoubleType instance (checked with ``in_same_class``)."""

    __props__ = ()

    def make_node(self, a, b):
        for v in (a, b):
            if not double.in_same_class(v.type):
                raise TypeError(f"DAdd expects {double}, got {v.type}")
        return Apply(self, [a, b], [double()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0] + inputs[1]


class TestDoubleTypeFilter:
    def test_strict_returns_a_float_unchanged(self):
        value = 1.5
        assert double.filter(value, strict=True) is value
        f64 = np.float64(2.5)  # a float subclass
        assert double.filter(f64, strict=True) is f64

    def test_strict_rejects_an_int(self):
        with pytest.raises(TypeError, match=r"^expected a float!$"):
            double.filter(3, strict=True)
        # strict wins over allow_downcast
        with pytest.raises(TypeError, match=r"^expected a float!$"):
            double.filter(3, strict=True, allow_downcast=True)

    def test_non_strict_casts_an_int_to_an_equivalent_float(self):
        out = double.filter(3)
        assert out == 3.0 and type(out) is float
        assert double.filter(3, allow_downcast=False) == 3.0
        assert double.filter(True) == 1.0

    @pytest.mark.parametrize("allow_downcast", [None, False])
    def test_precision_loss_is_an_error_unless_allowed(self, allow_downcast):
        big = 2**53 + 1
        assert float(big) != big
        with pytest.raises(TypeError) as info:
            double.filter(big, allow_downcast=allow_downcast)
        assert str(info.value) == (
            f"The double type cannot accurately represent value {big} (of type <class 'int'>): "
            "you must explicitly allow downcasting if you want to do this."
        )
        third = Fraction(1, 3)
        with pytest.raises(TypeError, match="cannot accurately represent value 1/3"):
            double.filter(third, allow_downcast=allow_downcast)

    def test_allow_downcast_accepts_the_precision_loss(self):
        assert double.filter(2**53 + 1, allow_downcast=True) == 9007199254740992.0
        assert double.filter(Fraction(1, 3), allow_downcast=True) == 1 / 3

    def test_the_none_case_behaves_like_false(self):
        for value in (2, 2.5, 2**60 + 1, Fraction(1, 2)):
            outcomes = []
            for allow in (None, False):
                try:
                    outcomes.append(("ok", double.filter(value, allow_downcast=allow)))
                except TypeError as err:
                    outcomes.append(("error", str(err)))
            assert outcomes[0] == outcomes[1]

    def test_is_valid_value_means_filter_strict_does_not_raise(self):
        assert double.is_valid_value(1.0) is True
        assert double.is_valid_value(1) is False


class TestDoubleTypeValuesEqApprox:
    def test_tolerance_default(self):
        assert double.values_eq_approx(1.0, 1.0 + 1e-6) is True
        assert double.values_eq_approx(1.0, 1.001) is False

    def test_tolerance_argument(self):
        assert double.values_eq_approx(1.0, 1.001, tolerance=1e-2) is True
        assert double.values_eq_approx(1.0, 1.0 + 1e-6, tolerance=1e-8) is False

    def test_extra_argument_has_a_default(self):
        params = inspect.signature(DoubleType.values_eq_approx).parameters
        assert params["tolerance"].default == 1e-4

    def test_six_additions_versus_six_times(self):
        a = double("a")
        summed = DAdd()(DAdd()(DAdd()(DAdd()(DAdd()(a, a), a), a), a), a)
        six = double.make_constant(6.0)

        class DMul(DAdd):
            def perform(self, node, inputs, output_storage):
                output_storage[0][0] = inputs[0] * inputs[1]

        times = DMul()(six, a)
        s, t = summed.eval({a: 0.1}), times.eval({a: 0.1})
        assert s != t  # "might not actually produce the exact same output"
        assert double.values_eq(s, t) is False
        assert double.values_eq_approx(s, t) is True


class TestDoubleTypeDefaults:
    """'Type defines default implementations for all required methods ... except filter'."""

    def test_only_filter_lacks_a_default(self):
        # filter is abstract: a Type without it cannot even be made (as in PyTensor 3)
        with pytest.raises(TypeError, match="filter"):
            Type()
        for method in (
            "in_same_class",
            "is_super",
            "is_valid_value",
            "values_eq",
            "values_eq_approx",
            "make_variable",
            "__call__",
            "__eq__",
            "__hash__",
            "clone",
            "may_share_memory",
            "get_shape_info",
            "get_size",
            "filter_variable",
            "convert_variable",
        ):
            assert callable(getattr(double, method)), method

    def test_double_is_an_instance_of_doubletype_a_subclass_of_type(self):
        assert isinstance(double, DoubleType)
        assert issubclass(DoubleType, Type)
        assert not isinstance(double, type)  # Types are not Python types/classes

    def test_filter_signature_keeps_the_contract_defaults(self):
        def defaults(fn):
            return {
                p.name: p.default
                for p in inspect.signature(fn).parameters.values()
                if p.default is not inspect.Parameter.empty
            }

        expected = {"strict": False, "allow_downcast": None}
        assert defaults(DoubleType.filter) == defaults(Type.filter) == expected

    def test_make_variable_and_call(self):
        v = double.make_variable()
        assert isinstance(v, Variable) and v.type is double and v.name is None
        named = double.make_variable("v")
        assert named.name == "v" and named.type is double
        w = double()  # "Syntactic shortcut to make_variable"
        assert isinstance(w, Variable) and w.type is double and w.name is None
        assert double("w").name == "w"

    def test_values_eq_default(self):
        assert double.values_eq(1.0, 1.0) is True
        assert double.values_eq(1.0, 1.0 + 1e-12) is False

    def test_eq_and_hash_defaults(self):
        assert DoubleType.__eq__ is object.__eq__
        assert hash(double) == object.__hash__(double)
        assert double == double

    def test_clone(self):
        c = double.clone()
        assert type(c) is DoubleType and c is not double

    def test_filter_inplace_is_optional(self):
        with pytest.raises(MethodNotDefined):
            double.filter_inplace(1.0, 0.0)


class TestDoubleTypeEquality:
    def test_two_instances_do_not_compare_equal(self):
        double1 = DoubleType()
        double2 = DoubleType()
        assert (double1 == double2) is False

    def test_why_it_matters_for_op_input_checks(self):
        other = DoubleType()
        assert double.in_same_class(other) is False
        assert double.is_super(other) is None
        with pytest.raises(TypeError, match="DAdd expects"):
            DAdd()(double(), other())

    def test_remedy_1_define_eq(self):
        class EqDoubleType(DoubleType):
            def __eq__(self, other):
                return type(self) == type(other)  # noqa: E721 (as the seed writes it)

        double1, double2 = EqDoubleType(), EqDoubleType()
        assert double1 == double2
        assert double1.in_same_class(double2) is True
        assert double1.is_super(double2) is True
        assert double1 != DoubleType()
        # defining __eq__ alone makes instances unhashable (a Python rule); the contract
        # asks for a __hash__ consistent with __eq__:
        with pytest.raises(TypeError):
            hash(double1)

        class EqHashDoubleType(EqDoubleType):
            def __hash__(self):
                return hash(type(self))

        assert hash(EqHashDoubleType()) == hash(EqHashDoubleType())
        x, y = EqHashDoubleType()("x"), EqHashDoubleType()("y")
        assert x.type == y.type
        assert x.type.filter_variable(y) is y

    def test_remedy_2_override_new_to_return_one_instance(self):
        class SingletonDoubleType(DoubleType):
            _instance = None

            def __new__(cls):
                if cls._instance is None:
                    cls._instance = super().__new__(cls)
                return cls._instance

        double1, double2 = SingletonDoubleType(), SingletonDoubleType()
        assert double1 is double2
        assert double1 == double2 and hash(double1) == hash(double2)
        assert double1.in_same_class(double2) is True
        assert double1.clone() is double1

    def test_remedy_3_advertise_a_single_instance(self):
        def make_module():
            class _DoubleType(DoubleType):
                pass

            return _DoubleType()  # the class itself is not exported

        only_double = make_module()
        x, y = only_double("x"), only_double("y")
        assert x.type == y.type
        assert x.type.in_same_class(y.type) is True
        assert x.type.filter_variable(y) is y
        # it works because nobody makes a second instance
        assert type(only_double)() != only_double

    def test_the_remedies_let_a_graph_use_several_instances(self):
        class EqDoubleType(DoubleType):
            def __eq__(self, other):
                return type(self) == type(other)  # noqa: E721 (as the seed writes it)

            def __hash__(self):
                return hash(type(self))

        class EAdd(DAdd):
            def make_node(self, a, b):
                if not (EqDoubleType().in_same_class(a.type) and EqDoubleType().in_same_class(b.type)):
                    raise TypeError("EAdd expects doubles")
                return Apply(self, [a, b], [EqDoubleType()()])

        x, y = EqDoubleType()("x"), EqDoubleType()("y")
        assert EAdd()(x, y).eval({x: 1, y: 2.5}) == 3.5


# =========================================================================================
# Type's contract
# =========================================================================================


class LenType(Type):
    """Python tuples; ``length`` None means "any length" (the seed's partial shapes)."""

    __props__ = ("length",)

    def __init__(self, length=None):
        self.length = length

    def filter(self, data, strict=False, allow_downcast=None):
        if strict and not isinstance(data, tuple):
            raise TypeError("expected a tuple")
        data = tuple(data)
        if self.length is not None and len(data) != self.length:
            raise ValueError(f"expected length {self.length}, got {len(data)}")
        return data

    def in_same_class(self, otype):
        return isinstance(otype, LenType) and otype.length == self.length

    def is_super(self, otype):
        return isinstance(otype, LenType) and (self.length is None or self.length == otype.length)

    def convert_variable(self, var):
        if self.is_super(var.type):
            return var
        if isinstance(var.type, LenType) and var.type.is_super(self):
            return SpecifyLen(self.length)(var)  # narrow it
        return None


class SpecifyLen(Op):
    __props__ = ("length",)

    def __init__(self, length):
        self.length = length

    def make_node(self, x):
        return Apply(self, [x], [LenType(self.length)()])

    def perform(self, node, inputs, output_storage):
        if len(inputs[0]) != self.length:
            raise AssertionError(f"length {len(inputs[0])} is not {self.length}")
        output_storage[0][0] = inputs[0]


class TestTypeComparisons:
    """The seed's v1/v2 example, with tuples of partly known length instead of tensors."""

    def test_types_are_instances_and_make_variables(self):
        v1 = LenType(None)()
        v2 = LenType(2)()
        assert isinstance(v1, Variable)
        assert str(v1.type) == "LenType{length=None}"
        assert str(v2.type) == "LenType{length=2}"
        assert isinstance(LenType(2), Type) and not isinstance(LenType(2), Variable)

    def test_in_same_class_and_is_super(self):
        v1, v2 = LenType(None)(), LenType(2)()
        assert v1.type.in_same_class(v2.type) is False
        assert v1.type.is_super(v2.type) is True
        assert v2.type.is_super(v1.type) is False

    def test_filtering_to_the_more_specific_variable(self):
        v1, v2 = LenType(None)(), LenType(2)()
        assert v1.type.filter_variable(v2) is v2  # "a variable of the same Type as v2"
        v3 = v2.type.filter_variable(v1)
        assert str(v3) == "SpecifyLen{length=2}.0"  # the seed: SpecifyShape.0
        assert v3.owner.inputs == [v1]
        assert v3.type == v2.type
        assert v3.eval({v1: (1, 2)}) == (1, 2)
        with pytest.raises(AssertionError, match="length 3 is not 2"):
            v3.eval({v1: (1, 2, 3)})

    def test_naive_equality_is_too_restrictive(self):
        v1, v2 = LenType(None)(), LenType(2)()
        assert v1.type != v2.type
        assert v1.type.is_super(v2.type)


class TestTypeContractDefaults:
    def test_duck_typed_type_need_not_subclass_type(self):
        class Words:
            def filter(self, data, strict=False, allow_downcast=None):
                return str(data).split()

            def __str__(self):
                return "Words"

        class Count(Op):
            def make_node(self, w):
                return Apply(self, [w], [DoubleType()()])

            def perform(self, node, inputs, output_storage):
                output_storage[0][0] = float(len(inputs[0]))

        w = Variable(Words(), name="w")
        assert Count()(w).eval({w: "a b c"}) == 3.0

    def test_in_same_class_default_uses_eq(self):
        t = DoubleType()
        assert t.in_same_class(t) is True
        assert t.in_same_class(DoubleType()) is False

    def test_is_super_none_when_undetermined(self):
        assert double.is_super(LenType()) is None

    def test_may_share_memory_can_be_a_static_method(self):
        class Listy(Type):
            def filter(self, data, strict=False, allow_downcast=None):
                return list(data)

            @staticmethod
            def may_share_memory(a, b):
                return a is b or any(x is y for x in a for y in b)

        shared = [0]
        assert Listy.may_share_memory([shared], [shared]) is True
        assert Listy().may_share_memory([[0]], [[0]]) is False
        assert Type.may_share_memory(np.arange(3), np.arange(3)) is False
        a = np.arange(3)
        assert Type.may_share_memory(a, a[1:]) is True

    def test_get_shape_info_and_get_size_work_in_tandem(self):
        a = np.zeros((4, 5))
        t = DoubleType()
        assert t.get_size(t.get_shape_info(a)) == a.nbytes == 160

        class Strings(Type):
            def filter(self, data, strict=False, allow_downcast=None):
                return str(data)

            def get_shape_info(self, obj):
                return len(obj)

            def get_size(self, shape_info):
                return 4 * shape_info

        s = Strings()
        assert s.get_size(s.get_shape_info("abc")) == 12


class TestTransfer:
    @pytest.fixture(autouse=True)
    def _restore(self):
        from arignote.graph import type as type_module

        saved = list(type_module._transfer_fns)
        yield
        type_module._transfer_fns[:] = saved

    def test_registered_function_returns_new_same_or_none(self):
        moved = {}

        def my_transfer(var, target):
            if target == "same":
                return var
            if target == "device":
                moved[var] = var.clone(name=f"{var.name}_on_device")
                return moved[var]
            return None

        register_transfer(my_transfer)
        x = double("x")
        assert transfer(x, "same") is x
        assert transfer(x, "device") is moved[x]
        assert x.transfer("device").name == "x_on_device"
        with pytest.raises(ValueError):
            transfer(x, "unknown")


# =========================================================================================
# Graph structures (Theano's "Graph Structures" chapter, with the toy double ops)
# =========================================================================================


class TestGraphStructures:
    def test_apply_variable_op_type_diagram(self):
        x = toy_double("x")
        y = toy_double("y")
        z = add(x, y)
        assert isinstance(z.owner, Apply)
        assert z.owner.inputs == [x, y]
        assert z.owner.inputs[0] is x and z.owner.inputs[1] is y
        assert z.owner.outputs[0] is z  # "the Apply instance's outputs points to z"
        assert x.owner is None and y.owner is None
        assert isinstance(z.owner.op, Op)
        assert isinstance(z.type, Type)

    def test_traversing_from_outputs(self):
        x = toy_double("x")
        y = mul(x, 2.0)
        assert type(y.owner) is Apply
        assert y.owner.op.name == "mul"
        assert len(y.owner.inputs) == 2
        assert y.owner.inputs[0] is x
        two = y.owner.inputs[1]
        assert isinstance(two, Constant) and two.data == 2.0
        assert two.owner is None

    def test_apply_from_make_node_and_directly(self):
        x, y = toy_double("x"), toy_double("y")
        node = add.make_node(x, y)
        assert isinstance(node, Apply)
        assert node.op is add and node.inputs == [x, y] and len(node.outputs) == 1
        out = toy_double()
        direct = Apply(add, [x, y], [out])
        assert direct.op is add and direct.inputs == [x, y] and direct.outputs == [out]
        assert out.owner is direct and out.index == 0

    def test_op_is_a_definition_apply_is_a_call(self):
        f, g = neg, add
        a = f(toy_double("x"))
        b = g(f(4.0), 5.0)
        inner = b.owner.inputs[0]
        assert a.owner.op is f and inner.owner.op is f
        assert a.owner is not inner.owner  # two calls, two Apply nodes, one Op
        assert b.eval() == 1.0

    def test_types_with_the_same_python_storage_can_differ(self):
        class PositiveDoubleType(Type):
            def filter(self, x, strict=False, allow_downcast=None):
                x = toy_double.filter(x, strict, allow_downcast)
                if x <= 0:
                    raise ValueError("must be positive")
                return x

        pos = PositiveDoubleType()
        assert type(pos.filter(2.0)) is type(toy_double.filter(2.0)) is float
        assert pos != toy_double
        assert toy_double.is_valid_value(-1.0) and not pos.is_valid_value(-1.0)

    def test_variable_fields(self):
        x = toy_double()
        y = neg(x)
        assert isinstance(x, Variable) and isinstance(y, Variable)
        assert x.type is toy_double and y.type is toy_double
        assert isinstance(y.owner, Apply) and x.owner is None
        assert y.owner.outputs[y.index] is y
        assert x.name is None
        _q, r = divmod_op(toy_double(), toy_double())
        assert r.owner.outputs[r.index] is r and r.index == 1
        assert str(toy_double("named")) == "named"

    def test_constant(self):
        assert issubclass(Constant, Variable)
        c = toy_double.make_constant(3.0)
        assert c.data == 3.0 and c.owner is None
        x = toy_double("x")
        out = add(x, c)
        assert out.eval({x: 1.0}) == 4.0
        assert out.eval({x: 2.0}) == 5.0  # the input always takes the constant's value
        # a constant need not be given a value
        assert add(c, c).eval() == 6.0

    def test_clients_in_a_function_graph(self):
        v = toy_double("v")
        user_out = neg(add(v, 1.0))
        fgraph = FunctionGraph([v], [user_out])
        # "The graph gets cloned": the user's graph is not the one compiled
        assert fgraph.outputs[0] is not user_out and fgraph.inputs[0] is not v
        topo = fgraph.toposort()
        assert [n.op for n in topo] == [add, neg]
        var = topo[0].outputs[0]  # an internal variable
        (client,) = fgraph.clients[var]
        assert client == (topo[1], 0)
        assert type(client[0]) is Apply
        assert client[0].inputs[client[1]] is var
        var = topo[1].outputs[0]  # an output of the graph
        (client,) = fgraph.clients[var]
        assert isinstance(client[0].op, Output)  # PyTensor 3: an Output node, not "output"
        assert fgraph.outputs[client[1]] is var
        assert user_out.owner.inputs[0].owner.inputs[0] is v

    def test_unused_variable_has_no_clients(self):
        x, y = toy_double("x"), toy_double("y")
        q, r = divmod_op(x, y)
        fgraph = FunctionGraph([x, y], [neg(q)], clone=False)
        assert fgraph.clients[r] == []
        assert len(fgraph.clients[q]) == 1

    def test_ops_without_gradient_information(self):
        x = toy_double("x")
        with pytest.raises(NotImplementedError):
            add.grad([x, x], [toy_double()])


# =========================================================================================
# Op's contract
# =========================================================================================


class Square(Op):
    __props__ = ()

    def make_node(self, x):
        if not double.in_same_class(x.type):
            raise TypeError(f"Square needs a {double}, got {x.type}")
        return Apply(self, [x], [double()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0] * inputs[0]

    def grad(self, inputs, output_gradients):
        (x,) = inputs
        (gz,) = output_gradients
        return [DAdd()(DMul2()(gz, x), DMul2()(gz, x))]  # 2 x gz

    def R_op(self, inputs, eval_points):
        (x,) = inputs
        (ev,) = eval_points
        return [DAdd()(DMul2()(ev, x), DMul2()(ev, x))]


class DMul2(DAdd):
    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0] * inputs[1]


class PowerPair(Op):
    """Two outputs: x**2 and x**3; its gradient sums both contributions."""

    __props__ = ()

    def make_node(self, x):
        return Apply(self, [x], [double(), double()])

    def perform(self, node, inputs, output_storage):
        x = inputs[0]
        output_storage[0][0] = x**2
        output_storage[1][0] = x**3

    def pullback(self, inputs, outputs, output_grads):
        (x,) = inputs
        g2, g3 = output_grads
        two_x = DAdd()(x, x)
        x2 = DMul2()(x, x)
        three_x2 = DAdd()(DAdd()(x2, x2), x2)
        return [DAdd()(DMul2()(g2, two_x), DMul2()(g3, three_x2))]

    def pushforward(self, inputs, outputs, eval_points):
        (x,) = inputs
        (ev,) = eval_points
        two_x = DAdd()(x, x)
        x2 = DMul2()(x, x)
        three_x2 = DAdd()(DAdd()(x2, x2), x2)
        return [DMul2()(two_x, ev), DMul2()(three_x2, ev)]


class Arr(Type):
    __props__ = ()

    def filter(self, data, strict=False, allow_downcast=None):
        return np.asarray(data, dtype="float64")


class Twice(Op):
    """Reuses a preallocated output buffer of the right shape."""

    __props__ = ()

    def make_node(self, x):
        return Apply(self, [x], [Arr()()])

    def perform(self, node, inputs, output_storage):
        (x,) = inputs
        cell = output_storage[0]
        if cell[0] is not None and cell[0].shape == x.shape:
            np.multiply(x, 2, out=cell[0])
        else:
            cell[0] = x * 2


class TestOpContract:
    def test_make_node_builds_an_apply(self):
        x = double("x")
        node = Square().make_node(x)
        assert isinstance(node, Apply)
        assert node.op == Square() and node.inputs == [x]
        assert all(isinstance(o, Variable) for o in node.outputs)

    def test_make_node_rejects_inputs_it_cannot_take(self):
        with pytest.raises(TypeError, match="Square needs a DoubleType"):
            Square().make_node(LenType()())

    def test_make_node_again_on_the_inputs_is_equivalent(self):
        x = double("x")
        node = Square().make_node(x)
        again = node.op.make_node(*node.inputs)
        assert again.op == node.op and again.inputs == node.inputs
        assert [o.type for o in again.outputs] == [o.type for o in node.outputs]

    def test_perform_storage_cells(self):
        x = double("x")
        node = divmod_op.make_node(x, 4.0)
        cells = [[None], [None]]
        divmod_op.perform(node, [11.0, 4.0], cells)
        assert cells == [[2.0], [3.0]]  # one one-element cell per output
        assert all(len(c) == 1 for c in cells)

    def test_perform_is_determined_by_the_inputs(self):
        x = double("x")
        out = Square()(x)
        assert out.eval({x: 3.0}) == out.eval({x: 3.0}) == 9.0

    def test_output_storage_may_persist_and_be_reused(self):
        x = Arr()("x")
        node = Twice().make_node(x)
        (out,) = node.outputs
        storage = {x: [np.ones(3)], out: [None]}
        compute = {x: [True], out: [False]}
        thunk = node.op.make_thunk(node, storage, compute, no_recycling=[])
        thunk()
        first = storage[out][0]
        storage[x][0] = np.full(3, 5.0)
        thunk()
        assert storage[out][0] is first  # the preallocated buffer was reused
        np.testing.assert_array_equal(first, [10.0, 10.0, 10.0])
        storage[x][0] = np.ones(4)  # wrong shape for the old buffer: a new one
        thunk()
        assert storage[out][0] is not first and storage[out][0].shape == (4,)

    def test_output_storage_reset_with_no_recycling(self):
        x = Arr()("x")
        node = Twice().make_node(x)
        (out,) = node.outputs
        storage = {x: [np.ones(3)], out: [None]}
        compute = {x: [True], out: [False]}
        thunk = node.op.make_thunk(node, storage, compute, no_recycling=[out])
        thunk()
        first = storage[out][0]
        thunk()
        assert storage[out][0] is not first
        np.testing.assert_array_equal(storage[out][0], [2.0, 2.0, 2.0])

    def test_eq_is_a_promise_of_same_effects(self):
        a, b = Square(), Square()
        assert a == b
        assert a.view_map == b.view_map and a.destroy_map == b.destroy_map
        assert hash(a) == hash(b)

    def test_props_generate_eq_hash_str(self):
        class Pow(Op):
            __props__ = ("exponent",)

            def __init__(self, exponent):
                self.exponent = exponent

        assert isinstance(Pow.__props__, tuple)
        assert Pow(2) == Pow(2) and Pow(2) != Pow(3)
        assert hash(Pow(2)) == hash(Pow(2))
        assert str(Pow(2)) == "Pow{exponent=2}"

        class Custom(Pow):
            __props__ = ("exponent",)

            def __str__(self):
                return f"x**{self.exponent}"

        assert str(Custom(3)) == "x**3"  # "You can still override it"
        assert Custom(3) == Custom(3)

    def test_props_default_undefined_and_empty_tuple(self):
        assert not hasattr(Op, "__props__")

        class NoParams(Op):
            __props__ = ()

        assert NoParams() == NoParams() and str(NoParams()) == "NoParams"

        with pytest.raises(TypeError, match="must be a tuple"):

            class Wrong(Op):
                __props__ = "exponent"

    def test_default_output(self):
        assert Op.default_output is None
        x = double("x")
        both = divmod_op(x, 3.0)
        assert isinstance(both, list) and len(both) == 2
        single = Square()(x)
        assert isinstance(single, Variable)

        class Remainder(type(divmod_op)):
            default_output = 1

        r = Remainder()(x, 3.0)
        assert isinstance(r, Variable) and r is r.owner.outputs[1]
        assert r.eval({x: 7.0}) == 1.0

    def test_make_thunk(self):
        x = double("x")
        node = Square().make_node(x)
        (out,) = node.outputs
        storage_map = {x: [4.0], out: [None]}
        compute_map = {x: [True], out: [False]}
        thunk = node.op.make_thunk(node, storage_map, compute_map, [], impl=None)
        thunk()  # a zero-argument function
        assert storage_map[out][0] == 16.0
        assert compute_map[out][0] == 1
        with pytest.raises(ValueError):
            node.op.make_thunk(node, storage_map, compute_map, [], impl="c")

    def test_make_thunk_removes_the_need_for_perform(self):
        class Cube(Op):
            def make_node(self, x):
                return Apply(self, [x], [double()])

            def make_thunk(self, node, storage_map, compute_map, no_recycling, impl=None):
                (i,), (o,) = [storage_map[v] for v in node.inputs], [storage_map[v] for v in node.outputs]
                done = compute_map[node.outputs[0]]

                def thunk():
                    o[0] = i[0] ** 3
                    done[0] = True

                return thunk

        x = double("x")
        assert Cube()(x).eval({x: 2.0}) == 8.0
        with pytest.raises(NotImplementedError):
            Cube().perform(None, [2.0], [[None]])

    def test_call_may_be_overridden(self):
        class SquareOrList(Square):
            def __call__(self, *inputs, **kwargs):
                outs = []
                for i in inputs:
                    outs.append(super().__call__(i, **kwargs))
                return outs

        x, y = double("x"), double("y")
        outs = SquareOrList()(x, y)
        assert all(isinstance(o, Variable) for o in outs)
        assert [o.eval({x: 2.0, y: 3.0}, on_unused_input="ignore") for o in outs] == [4.0, 9.0]

    def test_call_is_make_node_plus_default_output(self):
        x = double("x")
        out = Square()(x)
        assert out is out.owner.outputs[0]
        assert out.owner.op == Square()

    def test_optional_methods_are_undefined_by_default(self):
        for name in ("infer_shape", "flops", "debug_perform", "connection_pattern"):
            assert not hasattr(Op, name), name

    def test_str_includes_name_and_params(self):
        class Clip(Op):
            __props__ = ("lo", "hi")

            def __init__(self, lo, hi):
                self.lo, self.hi = lo, hi

        assert str(Clip(0, 1)) == "Clip{lo=0, hi=1}"

    def test_do_constant_folding(self):
        x = double("x")
        node = Square().make_node(x)
        assert Square().do_constant_folding(None, node) is True

        class NoFold(Square):
            def do_constant_folding(self, fgraph, node):
                return False

        assert NoFold().do_constant_folding(None, node) is False

    def test_debug_perform(self):
        class Noisy(Square):
            def debug_perform(self, node, inputs, output_storage):
                output_storage[0][0] = -1.0

        x = double("x")
        node = Noisy().make_node(x)
        (out,) = node.outputs
        storage = {x: [3.0], out: [None]}
        node.op.make_py_thunk(node, storage, {x: [True], out: [False]}, [], debug=True)()
        assert storage[out][0] == -1.0
        node.op.make_py_thunk(node, storage, {x: [True], out: [False]}, [])()
        assert storage[out][0] == 9.0


class TestGradientContract:
    def test_grad_returns_one_variable_per_input(self):
        x, gz = double("x"), double("gz")
        terms = Square().grad([x], [gz])
        assert isinstance(terms, list) and len(terms) == 1 and isinstance(terms[0], Variable)
        assert terms[0].eval({x: 3.0, gz: 1.0}) == 6.0
        assert terms[0].eval({x: 3.0, gz: 0.5}) == 3.0  # J.T times the output gradient

    def test_grad_matches_finite_differences(self):
        x, gz = double("x"), double("gz")
        out = Square()(x)
        (gx,) = Square().grad([x], [gz])
        h, at = 1e-6, 1.7
        numeric = (out.eval({x: at + h}) - out.eval({x: at - h})) / (2 * h)
        assert abs(gx.eval({x: at, gz: 1.0}) - numeric) < 1e-6

    def test_gradient_sums_the_contributions_of_every_output(self):
        x, g2, g3 = double("x"), double("g2"), double("g3")
        op = PowerPair()
        (gx,) = op.grad([x], [g2, g3])
        assert gx.eval({x: 2.0, g2: 1.0, g3: 0.0}) == 4.0
        assert gx.eval({x: 2.0, g2: 0.0, g3: 1.0}) == 12.0
        assert gx.eval({x: 2.0, g2: 1.0, g3: 1.0}) == 16.0
        (lx,) = op.L_op([x], op(x), [g2, g3])
        assert lx.eval({x: 2.0, g2: 1.0, g3: 1.0}) == 16.0

    def test_not_differentiable_input_may_get_a_null_type_variable(self):
        class Index(Op):
            def make_node(self, x, i):
                return Apply(self, [x, i], [double()])

            def grad(self, inputs, output_gradients):
                return [output_gradients[0], NullType("the index is an integer")()]

        x, i, gz = double("x"), double("i"), double("gz")
        gx, gi = Index().grad([x, i], [gz])
        assert gx is gz
        assert isinstance(gi.type, NullType)
        assert gi.type.why_null == "the index is an integer"

    def test_grad_not_defined_means_differentiation_fails(self):
        x = double("x")
        with pytest.raises(NotImplementedError, match="defines no gradient"):
            DAdd().grad([x, x], [double()])
        with pytest.raises(NotImplementedError, match="defines no gradient"):
            DAdd().pullback([x, x], [DAdd()(x, x)], [double()])

    def test_r_op_one_term_per_output(self):
        x, ev = double("x"), double("ev")
        (r,) = Square().R_op([x], [ev])
        assert r.eval({x: 3.0, ev: 2.0}) == 12.0
        terms = PowerPair().R_op([x], [ev])
        assert len(terms) == len(PowerPair()(x)) == 2
        assert [t.eval({x: 2.0, ev: 1.0}) for t in terms] == [4.0, 12.0]
        (p,) = Square().pushforward([x], [Square()(x)], [ev])
        assert p.eval({x: 3.0, ev: 2.0}) == 12.0

    def test_r_op_not_defined(self):
        x = double("x")
        with pytest.raises(NotImplementedError):
            DAdd().R_op([x, x], [x, x])


def test_the_top_level_package_exposes_the_graph_classes():
    assert arignote.Type is Type and arignote.Op is Op
    assert arignote.Apply is Apply and arignote.Variable is Variable and arignote.Constant is Constant
