"""The Type contract: defaults of :class:`arignote.graph.type.Type` and the transfer registry."""

from __future__ import annotations

import inspect
import sys

import numpy as np
import pytest

from arignote.graph import type as type_module
from arignote.graph.basic import Apply, Constant, Variable
from arignote.graph.op import Op
from arignote.graph.type import Type, register_transfer, transfer
from arignote.graph.utils import MethodNotDefined
from tests.toy import double, integer

# --- Types used here ------------------------------------------------------------------


class IntsOnly(Type):
    """No ``__props__``, no ``__eq__``: every instance is its own Type (the contract default)."""

    def filter(self, data, strict=False, allow_downcast=None):
        if isinstance(data, bool) or not isinstance(data, int):
            if strict:
                raise TypeError(f"not an int: {data!r}")
            if isinstance(data, str):
                raise ValueError(f"cannot read {data!r} as an int")
            if not float(data).is_integer():
                raise TypeError(f"{data!r} is not integral")
            return int(data)
        return data


class MyVariable(Variable):
    pass


class MyConstant(Constant):
    pass


class Interval(Type):
    """Numbers in ``[lo, hi]``; a narrower interval is a subtype of a wider one."""

    __props__ = ("lo", "hi")
    variable_type = MyVariable
    constant_type = MyConstant

    def __init__(self, lo=0, hi=10):
        self.lo = lo
        self.hi = hi

    def filter(self, data, strict=False, allow_downcast=None):
        if strict and not isinstance(data, float):
            raise TypeError(f"strict: expected a float, got {type(data).__name__}")
        value = float(data)
        if not self.lo <= value <= self.hi:
            raise ValueError(f"{value} is outside [{self.lo}, {self.hi}]")
        return value

    def in_same_class(self, otype):
        if isinstance(otype, Interval):
            return self == otype
        return False

    def is_super(self, otype):
        if isinstance(otype, Interval):
            return self.lo <= otype.lo and otype.hi <= self.hi
        return None


class Clip(Op):
    """Narrows a Variable to a sub-interval (what ``convert_variable`` may build)."""

    __props__ = ("type",)

    def __init__(self, type):
        self.type = type

    def make_node(self, x):
        return Apply(self, [x], [self.type()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = min(max(inputs[0], self.type.lo), self.type.hi)


class NarrowingInterval(Interval):
    """Also accepts a *wider* interval Variable, by clipping it."""

    __props__ = ("lo", "hi")

    def convert_variable(self, var):
        if isinstance(var.type, Interval) and var.type.is_super(self):
            return Clip(self)(var)
        return super().convert_variable(var)


# --- comparisons ------------------------------------------------------------------------


def test_default_in_same_class_uses_equality():
    a, b = IntsOnly(), IntsOnly()
    assert a.in_same_class(a) is True
    assert a.in_same_class(b) is False
    assert double.in_same_class(type(double)()) is True  # DoubleType defines __eq__


def test_default_is_super_true_for_same_class_none_when_unrelated():
    a, b = IntsOnly(), IntsOnly()
    assert a.is_super(a) is True
    assert a.is_super(b) is None
    assert double.is_super(integer) is None
    assert integer.is_super(double) is None


def test_default_eq_and_hash_are_identity_without_props():
    a, b = IntsOnly(), IntsOnly()
    assert a == a
    assert a != b
    assert (a == b) is False
    assert hash(a) == object.__hash__(a)
    assert IntsOnly.__eq__ is object.__eq__
    assert len({a, b, a}) == 2


def test_subclass_overriding_in_same_class_changes_is_super():
    narrow, wide = Interval(2, 3), Interval(0, 10)
    assert wide.is_super(narrow) is True
    assert narrow.is_super(wide) is False
    assert wide.in_same_class(narrow) is False
    assert wide.is_super(double) is None


# --- values -----------------------------------------------------------------------------


def test_a_type_without_filter_cannot_be_instantiated():
    class NoFilter(Type):
        pass

    with pytest.raises(TypeError, match="Can't instantiate the Type NoFilter: it does not define filter"):
        NoFilter()

    class Sub(NoFilter):
        def filter(self, data, strict=False, allow_downcast=None):
            return data

    assert Sub().filter(1) == 1


def test_is_valid_value_is_strict_by_default():
    t = IntsOnly()
    assert t.is_valid_value(3) is True
    assert t.is_valid_value(3.0) is False  # filter(3.0) would succeed, but not strictly
    assert t.is_valid_value(3.0, strict=False) is True
    assert t.is_valid_value(3.5, strict=False) is False  # TypeError inside filter
    assert t.is_valid_value("x", strict=False) is False  # ValueError inside filter


def test_is_valid_value_lets_other_exceptions_through():
    class Broken(Type):
        def filter(self, data, strict=False, allow_downcast=None):
            raise RuntimeError("filter is broken")

    with pytest.raises(RuntimeError, match="filter is broken"):
        Broken().is_valid_value(1)


def test_values_eq_default_is_equality():
    t = IntsOnly()
    assert t.values_eq(3, 3) is True
    assert t.values_eq(3, 4) is False
    assert t.values_eq(3, 3.0) is True


def test_values_eq_approx_default_is_values_eq():
    calls = []

    class Recording(IntsOnly):
        def values_eq(self, a, b):
            calls.append((a, b))
            return "sentinel"

    assert Recording().values_eq_approx(1, 2) == "sentinel"
    assert calls == [(1, 2)]
    assert IntsOnly().values_eq_approx(1.0, 1.0 + 1e-12) is False  # the default is exact


def test_filter_inplace_is_not_defined_by_default():
    with pytest.raises(MethodNotDefined, match="IntsOnly does not define filter_inplace"):
        IntsOnly().filter_inplace(1, None)


# --- making variables -------------------------------------------------------------------


def test_make_variable_with_and_without_name():
    t = IntsOnly()
    v = t.make_variable()
    assert type(v) is Variable
    assert v.type is t
    assert v.name is None
    assert v.owner is None
    assert v.index is None
    w = t.make_variable("w")
    assert w.name == "w"
    assert w.type is t
    assert v is not t.make_variable()


def test_call_is_make_variable():
    t = IntsOnly()
    v = t()
    assert type(v) is Variable and v.type is t and v.name is None
    assert t("n").name == "n"
    assert t(name="k").name == "k"


def test_call_goes_through_make_variable():
    made = []

    class Tracking(IntsOnly):
        def make_variable(self, name=None):
            v = super().make_variable(name)
            made.append(v)
            return v

    t = Tracking()
    v = t("a")
    assert made == [v]


def test_variable_and_constant_classes_come_from_the_type():
    t = Interval()
    assert type(t()) is MyVariable
    c = t.make_constant(3)
    assert type(c) is MyConstant
    assert c.data == 3.0 and type(c.data) is float
    assert c.type is t
    assert c.owner is None


def test_make_constant_filters_and_names():
    c = double.make_constant(2, name="two")
    assert isinstance(c, Constant)
    assert c.data == 2.0 and isinstance(c.data, float)
    assert c.name == "two"
    assert double.make_constant(1.5).name is None
    with pytest.raises(TypeError, match="cannot accurately represent"):
        double.make_constant(2**53 + 1)


# --- filter_variable / convert_variable ---------------------------------------------------


def test_filter_variable_turns_a_value_into_a_constant():
    c = double.filter_variable(3)
    assert isinstance(c, Constant)
    assert c.type == double
    assert c.data == 3.0 and isinstance(c.data, float)
    t = Interval()
    assert type(t.filter_variable(4)) is MyConstant


def test_filter_variable_value_rejected_by_filter_raises_the_filter_error():
    with pytest.raises(ValueError, match="outside"):
        Interval(0, 1).filter_variable(5)


def test_filter_variable_returns_same_type_variable_as_is():
    x = double("x")
    assert double.filter_variable(x) is x
    assert type(double)().filter_variable(x) is x  # equal Type, other instance
    t = Interval(0, 5)
    v = t()
    assert Interval(0, 5).filter_variable(v) is v


def test_filter_variable_accepts_a_subtype_variable_unchanged():
    wide, narrow = Interval(0, 10), Interval(2, 3)
    v = narrow("v")
    out = wide.filter_variable(v)
    assert out is v
    assert out.type == narrow


def test_filter_variable_incompatible_names_variable_and_both_types():
    i = integer("i")
    with pytest.raises(TypeError) as info:
        double.filter_variable(i)
    msg = str(info.value)
    assert "Cannot convert Type int (of Variable i) into Type double" in msg


def test_filter_variable_wider_variable_not_convertible_by_default():
    narrow, wide = Interval(2, 3), Interval(0, 10)
    v = wide("v")
    with pytest.raises(TypeError, match=r"Interval\{lo=0, hi=10\}.*Interval\{lo=2, hi=3\}"):
        narrow.filter_variable(v)


def test_filter_variable_uses_convert_variable():
    narrow = NarrowingInterval(2, 3)
    v = Interval(0, 10)("v")
    out = narrow.filter_variable(v)
    assert out is not v
    assert out.type == narrow
    assert isinstance(out.owner.op, Clip)
    assert out.owner.inputs == [v]
    assert out.eval({v: 7.0}) == 3.0


def test_filter_variable_allow_convert_false():
    narrow = NarrowingInterval(2, 3)
    v = Interval(0, 10)("v")
    with pytest.raises(TypeError, match="Cannot convert Type"):
        narrow.filter_variable(v, allow_convert=False)
    # a subtype is not an equal Type either: without conversion it is refused
    wide = Interval(0, 10)
    with pytest.raises(TypeError, match="Cannot convert Type"):
        wide.filter_variable(Interval(2, 3)(), allow_convert=False)
    # equal Types need no conversion
    x = double()
    assert double.filter_variable(x, allow_convert=False) is x


def test_convert_variable_default():
    wide, narrow = Interval(0, 10), Interval(2, 3)
    v = narrow()
    assert wide.convert_variable(v) is v
    w = wide()
    assert narrow.convert_variable(w) is None
    assert double.convert_variable(integer()) is None
    x = double()
    assert double.convert_variable(x) is x


# --- clone ------------------------------------------------------------------------------


def test_clone_with_props_replaces_only_given_props():
    t = Interval(1, 7)
    assert t.clone() == t
    assert t.clone() is not t
    c = t.clone(hi=9)
    assert (c.lo, c.hi) == (1, 9)
    assert type(c) is Interval
    assert t.clone(lo=0, hi=1) == Interval(0, 1)


def test_clone_with_props_positional_args_go_to_the_constructor():
    assert Interval(1, 7).clone(3, 4) == Interval(3, 4)


def test_clone_unknown_prop_is_an_error():
    with pytest.raises(TypeError, match=r"Interval.clone: unknown props \['width'\]"):
        Interval().clone(width=3)


def test_clone_without_props_calls_the_constructor():
    class Sized(Type):
        def __init__(self, size=1):
            self.size = size

        def filter(self, data, strict=False, allow_downcast=None):
            return data

    c = Sized(5).clone()
    assert type(c) is Sized and c.size == 1
    assert Sized().clone(4).size == 4
    assert Sized().clone(size=6).size == 6


# --- memory -----------------------------------------------------------------------------


def test_may_share_memory_same_object():
    obj = [1, 2]
    assert Type.may_share_memory(obj, obj) is True
    assert double.may_share_memory(obj, [1, 2]) is False
    assert IntsOnly.may_share_memory(1.5, 2.5) is False


def test_may_share_memory_numpy_views_and_copies():
    a = np.arange(10.0)
    assert double.may_share_memory(a, a[2:5]) is True
    assert double.may_share_memory(a[:5], a[5:]) is False  # disjoint views
    assert double.may_share_memory(a, a.copy()) is False
    assert double.may_share_memory(a, a.reshape(2, 5)) is True
    assert double.may_share_memory(a, [1.0]) is False


def test_get_shape_info_and_get_size():
    t = IntsOnly()
    a = np.zeros((3, 4), dtype="float64")
    info = t.get_shape_info(a)
    assert t.get_size(info) == 96
    assert t.get_size(t.get_shape_info(a[:, :2])) == 48
    assert t.get_size(t.get_shape_info(np.zeros(5, dtype="int8"))) == 5
    assert t.get_size(t.get_shape_info(1.5)) == sys.getsizeof(1.5)
    assert isinstance(t.get_size(t.get_shape_info(np.float32(1))), int)


# --- __props__ identity -----------------------------------------------------------------


def test_props_give_types_value_identity():
    a, b, c = Interval(0, 1), Interval(0, 1), Interval(0, 2)
    assert a == b and (a != b) is False
    assert hash(a) == hash(b)
    assert a != c
    assert len({a, b, c}) == 2
    assert str(a) == "Interval{lo=0, hi=1}"
    assert repr(a) == "Interval{lo=0, hi=1}"
    assert a._props() == (0, 1)
    assert a._props_dict() == {"lo": 0, "hi": 1}


def test_props_equality_needs_the_same_class():
    class OtherInterval(Interval):
        __props__ = ("lo", "hi")

    assert Interval(0, 1) != OtherInterval(0, 1)
    assert str(OtherInterval(0, 1)) == "OtherInterval{lo=0, hi=1}"


def test_type_without_props_prints_its_class_name():
    assert str(IntsOnly()) == "IntsOnly"
    assert repr(IntsOnly()) == "IntsOnly"
    with pytest.raises(ValueError, match="IntsOnly does not declare __props__"):
        IntsOnly()._props()


def test_variables_of_equal_types_print_the_type():
    assert str(Interval(0, 1)()) == "<Interval{lo=0, hi=1}>"


# --- transfer ---------------------------------------------------------------------------


@pytest.fixture
def clean_transfers():
    saved = list(type_module._transfer_fns)
    yield
    type_module._transfer_fns[:] = saved


def test_transfer_uses_the_registered_function(clean_transfers):
    x = double("x")
    calls = []

    def to_elsewhere(var, target):
        calls.append((var, target))
        if target == "elsewhere":
            return var.clone(name="moved")
        return None

    assert register_transfer(to_elsewhere) is to_elsewhere
    out = transfer(x, "elsewhere")
    assert out.name == "moved" and out.type == double
    assert calls == [(x, "elsewhere")]


def test_transfer_may_return_the_variable_itself(clean_transfers):
    register_transfer(lambda var, target: var if target == "here" else None)
    x = double("x")
    assert transfer(x, "here") is x


def test_transfer_none_falls_through_to_another_function(clean_transfers):
    x = double("x")
    seen = []

    def first(var, target):
        seen.append("first")
        return var.clone(name="by_first") if target == "a" else None

    def second(var, target):
        seen.append("second")
        return var.clone(name="by_second") if target == "b" else None

    register_transfer(first)
    register_transfer(second)
    assert transfer(x, "a").name == "by_first"
    assert transfer(x, "b").name == "by_second"
    assert "first" in seen and "second" in seen


def test_transfer_unknown_target_is_a_value_error(clean_transfers):
    register_transfer(lambda var, target: None)
    x = double("x")
    with pytest.raises(ValueError, match=r"Cannot transfer x to target 'nowhere'"):
        transfer(x, "nowhere")


def test_register_transfer_needs_a_callable(clean_transfers):
    with pytest.raises(TypeError, match="callable"):
        register_transfer("not a function")


def test_variable_transfer_method(clean_transfers):
    register_transfer(lambda var, target: var.clone(name=f"{var.name}@{target}") if target == "gpu" else None)
    x = double("x")
    assert x.transfer("gpu").name == "x@gpu"
    with pytest.raises(ValueError, match="target 'tpu'"):
        x.transfer("tpu")


# --- signatures the contract fixes ----------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "expected"),
    [
        ("filter", [("data", inspect.Parameter.empty), ("strict", False), ("allow_downcast", None)]),
        (
            "filter_inplace",
            [
                ("value", inspect.Parameter.empty),
                ("storage", inspect.Parameter.empty),
                ("strict", False),
                ("allow_downcast", None),
            ],
        ),
        ("make_variable", [("name", None)]),
        ("__call__", [("name", None)]),
        ("values_eq", [("a", inspect.Parameter.empty), ("b", inspect.Parameter.empty)]),
        ("values_eq_approx", [("a", inspect.Parameter.empty), ("b", inspect.Parameter.empty)]),
        ("filter_variable", [("other", inspect.Parameter.empty), ("allow_convert", True)]),
    ],
)
def test_default_method_signatures(method, expected):
    params = list(inspect.signature(getattr(Type, method)).parameters.values())[1:]
    assert [(p.name, p.default) for p in params] == expected


def test_is_valid_value_extra_argument_has_a_default():
    params = inspect.signature(Type.is_valid_value).parameters
    assert params["strict"].default is True


def test_has_data_type_and_has_shape_mark_the_array_types():
    import arignote.scalar as _ps
    import arignote.sparse as _sp
    import arignote.tensor as _pt
    from arignote.graph.type import HasDataType, HasShape

    t = _pt.TensorType("float32", shape=(2, None))
    assert isinstance(t, HasDataType) and isinstance(t, HasShape)
    assert (t.dtype, t.ndim, t.shape) == ("float32", 2, (2, None))
    s = _ps.ScalarType("int8")
    assert isinstance(s, HasShape) and (s.ndim, s.shape, s.dtype) == (0, (), "int8")
    assert isinstance(_sp.csr_matrix("m").type, HasDataType)
    assert not isinstance(_pt.random.type.RandomGeneratorType(), HasShape)
