"""``set_value`` refuses what the variable's Type refuses (``None`` included) with a
message naming the variable, its Type and what arrived, and leaves the value unchanged."""

from __future__ import annotations

import re

import numpy as np
import pytest

import arignote.tensor as pt
from arignote import function, shared


def test_none_is_refused_and_the_value_kept():
    w = shared(np.arange(3.0), name="w")
    with pytest.raises(TypeError, match=r"Cannot set shared variable 'w' to None: .*Vector\(float64"):
        w.set_value(None)
    np.testing.assert_array_equal(w.get_value(), [0, 1, 2])
    f = function([], w * 2)  # the next call works: nothing bad was stored
    np.testing.assert_array_equal(f(), [0, 2, 4])


def test_none_is_refused_with_borrow_too():
    w = shared(np.float64(1.0), name="w")
    with pytest.raises(TypeError, match="'w' to None"):
        w.set_value(None, borrow=True)
    assert float(w.get_value()) == 1.0


@pytest.mark.parametrize(
    ("value", "error", "what", "why"),
    [
        (np.zeros((2, 2)), TypeError, r"an ndarray of dtype float64 and shape \(2, 2\)", "dimensions"),
        (np.zeros(3, dtype=complex), TypeError, "dtype complex128", "loss of precision"),
        ("abc", TypeError, "str 'abc'", "numeric"),
        ({"a": 1}, TypeError, r"dict \{'a': 1\}", "numeric"),
    ],
)
def test_values_the_type_refuses(value, error, what, why):
    w = shared(np.arange(3.0), name="weights")
    with pytest.raises(error) as info:
        w.set_value(value)
    msg = str(info.value)
    assert "shared variable 'weights'" in msg and "Vector(float64, shape=(?,))" in msg
    assert re.search(what, msg), msg
    assert why in msg
    np.testing.assert_array_equal(w.get_value(), [0, 1, 2])


def test_an_unnamed_variable_is_described_by_where_it_was_made():
    s = shared(np.zeros(2, dtype="float32"))
    with pytest.raises(TypeError) as info:
        s.set_value(None)
    msg = str(info.value)
    assert "unnamed shared variable created at" in msg and "test_set_value.py" in msg
    assert "test_an_unnamed_variable_is_described_by_where_it_was_made" in msg
    with pytest.raises(TypeError, match=r"unnamed shared variable .*Wrong number of dimensions"):
        s.set_value(np.zeros((1, 2), dtype="float32"))
    np.testing.assert_array_equal(s.get_value(), [0, 0])


def test_static_shape_and_strict_messages_name_the_variable():
    s = shared(np.zeros((2, 3)), name="fixed", shape=(2, 3))
    with pytest.raises((TypeError, ValueError), match=r"Cannot set shared variable 'fixed'.*\(3, 3\)"):
        s.set_value(np.zeros((3, 3)))
    st = shared(np.zeros(2), name="st", strict=True)
    with pytest.raises(TypeError, match=r"Cannot set shared variable 'st'.*strict"):
        st.set_value([1.0, 2.0])
    assert s.get_value().shape == (2, 3) and st.get_value().tolist() == [0.0, 0.0]


def test_a_shared_generator_refuses_none_and_non_generators():
    g = shared(np.random.default_rng(5), name="g")
    before = g.get_value().bit_generator.state
    with pytest.raises(TypeError, match=r"Cannot set shared variable 'g' to None.*seed="):
        g.set_value(None)
    with pytest.raises(
        TypeError, match=r"Cannot set shared variable 'g' \(Type RandomGeneratorType\) to int 3"
    ):
        g.set_value(3)
    with pytest.raises(
        ValueError, match=r"Cannot set shared variable 'g': give a generator or a seed, not both"
    ):
        g.set_value(np.random.default_rng(1), seed=2)
    assert g.get_value().bit_generator.state == before
    g.set_value(seed=5)  # what is allowed still works
    assert g.get_value().bit_generator.state == before


def test_zero_and_valid_values_still_work():
    w = shared(np.arange(3.0), name="w")
    w.set_value([4, 5, 6])
    np.testing.assert_array_equal(w.get_value(), [4.0, 5.0, 6.0])
    w.zero()
    np.testing.assert_array_equal(w.get_value(), [0.0, 0.0, 0.0])
    x = pt.dvector("x")
    f = function([x], x + w)
    np.testing.assert_array_equal(f(np.ones(3)), [1.0, 1.0, 1.0])
