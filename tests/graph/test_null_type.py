"""NullType: the Type of values that do not exist (undefined gradients)."""

from __future__ import annotations

import numpy as np
import pytest

from arignote.graph.basic import Constant, Variable
from arignote.graph.null_type import NullType, null_type
from arignote.graph.type import Type
from tests.toy import add, double


def test_null_type_is_a_type():
    assert isinstance(null_type, NullType)
    assert isinstance(null_type, Type)
    assert null_type.why_null == "(no explanation given)"
    assert NullType("undefined").why_null == "undefined"


@pytest.mark.parametrize("value", [0, 1.5, None, "x", np.zeros(2)])
@pytest.mark.parametrize("strict", [False, True])
def test_filter_rejects_every_value(value, strict):
    with pytest.raises(ValueError, match=r"No values may be assigned to a NullType \(grad is undefined\)"):
        NullType("grad is undefined").filter(value, strict=strict)


def test_no_valid_values():
    assert null_type.is_valid_value(0) is False
    assert null_type.is_valid_value(None, strict=False) is False


def test_no_constant_of_null_type():
    with pytest.raises(ValueError, match="No values may be assigned to a NullType"):
        null_type.make_constant(1.0)
    with pytest.raises(ValueError, match="No values may be assigned to a NullType"):
        Constant(null_type, 1.0)


def test_variables_of_null_type():
    v = NullType("why")("g")
    assert isinstance(v, Variable)
    assert v.type.why_null == "why"
    assert v.name == "g"
    assert str(NullType("why")()) == "<NullType>"


def test_filter_variable_accepts_only_null_type_variables():
    v = null_type()
    assert null_type.filter_variable(v) is v
    other = NullType("another reason")()
    assert null_type.filter_variable(other) is other
    with pytest.raises(
        ValueError, match=r"Only NullType Variables can stand for a NullType one \(r\); got x"
    ):
        NullType("r").filter_variable(double("x"))
    with pytest.raises(ValueError, match="Only NullType Variables"):
        null_type.filter_variable(1.0)
    with pytest.raises(ValueError, match="Only NullType Variables"):
        null_type.filter_variable(None, allow_convert=False)


def test_null_type_subclass_variables_are_accepted():
    class Special(NullType):
        pass

    s = Special()()
    assert null_type.filter_variable(s) is s


def test_equality_and_hash_by_class():
    assert NullType("a") == NullType("b")
    assert (NullType("a") != NullType("b")) is False
    assert hash(NullType("a")) == hash(NullType("b")) == hash(null_type)
    assert len({NullType("a"), NullType("b"), null_type}) == 1
    assert NullType() != double
    assert NullType() != "NullType"

    class Special(NullType):
        pass

    assert Special() != NullType()
    assert Special() == Special()
    assert null_type.in_same_class(NullType("other")) is True
    assert null_type.is_super(NullType("other")) is True
    assert null_type.is_super(double) is None


def test_str():
    assert str(null_type) == "NullType"
    assert str(NullType("any reason")) == "NullType"
    assert repr(null_type) == "NullType"


def test_values_eq_raises():
    with pytest.raises(ValueError, match="NullType has no values to compare"):
        null_type.values_eq(1, 1)
    with pytest.raises(ValueError, match="NullType has no values to compare"):
        null_type.values_eq_approx(1, 1)


def test_may_share_memory_always_false():
    a = np.zeros(3)
    assert NullType.may_share_memory(a, a) is False
    assert null_type.may_share_memory(a, a[1:]) is False


def test_evaluating_a_null_type_variable_fails():
    g = null_type("g")
    with pytest.raises(ValueError, match=r"Bad value for input g \(expected Type NullType\)"):
        g.eval({g: 1.0})


def test_null_type_cannot_be_an_input_of_a_double_op():
    with pytest.raises(TypeError, match="expected a double input, got NullType"):
        add(double("x"), null_type())
