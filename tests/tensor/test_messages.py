"""Error messages that used to mislead (issue 11): each says what is wrong in the user's
terms and suggests only what fits."""

from __future__ import annotations

import re

import numpy as np
import pytest

import arignote.scalar as ps
import arignote.tensor as pt
from arignote import function, shared
from arignote.tensor.type import TensorType

# -- static shapes of inputs of different ranks -------------------------------------------


def test_static_mismatch_between_a_matrix_and_a_3_tensor_names_each_inputs_own_dimension():
    a = TensorType("float64", (2, 3))("a")
    b = TensorType("float64", (4, 5, 3))("b")
    with pytest.raises(ValueError) as info:
        a + b
    msg = str(info.value)
    # output dimension 1 lines up a's dimension 0 (length 2) with b's dimension 1 (length 5)
    assert "at dimension 1 of the output" in msg
    assert "input 0 (a: Matrix(float64, shape=(2, 3))) has 2 at its own dimension 0" in msg
    assert "input 1 (b: Tensor3(float64, shape=(4, 5, 3))) has 5 at its own dimension 1" in msg
    assert "aligned on their last dimension" in msg
    # the misleading form is gone: a's dimension 1 is 3, not 2
    assert "input 0 (a: Matrix(float64, shape=(2, 3))) has 2 at dimension 1" not in msg


def test_static_mismatch_at_the_last_dimension_and_a_missing_dimension():
    a = TensorType("float64", (2, 3))("a")
    v = TensorType("float64", (7,))("v")
    b = TensorType("float64", (4, 2, 5))("b")
    with pytest.raises(ValueError) as info:
        pt.add(v, a, b)
    msg = str(info.value)
    assert "at dimension 2 of the output" in msg
    assert "input 0 (v: Vector(float64, shape=(7,))) has 7 at its own dimension 0" in msg
    assert "input 1 (a: Matrix(float64, shape=(2, 3))) has 3 at its own dimension 1" in msg
    assert "input 2 (b: Tensor3(float64, shape=(4, 2, 5))) has 5 at its own dimension 2" in msg


def test_static_mismatch_of_inputs_of_one_rank_keeps_the_short_form():
    a = TensorType("float64", (2, 3))("a")
    b = TensorType("float64", (3, 3))("b")
    with pytest.raises(ValueError, match=r"^Incompatible static shapes at dimension 0: ") as info:
        a * b
    assert "own dimension" not in str(info.value) and "has 2, input 1" in str(info.value)


# -- filter_variable: a wrong number of dimensions ----------------------------------------


def test_ndim_mismatch_says_so_and_suggests_no_cast():
    with pytest.raises(TypeError) as info:
        pt.dmatrix.filter_variable(pt.dvector("v"))
    msg = str(info.value)
    assert "it has 1 dimension, 2 are expected" in msg
    assert "dimshuffle" in msg and "reshape" in msg
    assert "astype" not in msg and "cast" not in msg.lower()
    assert ".." not in msg and "manually convert" not in msg


def test_too_many_dimensions_suggest_dropping_them():
    with pytest.raises(TypeError) as info:
        pt.dvector.filter_variable(pt.dtensor3("t"))
    msg = str(info.value)
    assert "it has 3 dimensions, 1 is expected" in msg
    assert "squeeze" in msg and "reshape" in msg and "astype" not in msg


def test_ndim_and_dtype_mismatch_suggests_both_fixes():
    with pytest.raises(TypeError) as info:
        pt.dmatrix.filter_variable(pt.fvector("f"))
    msg = str(info.value)
    assert "it has 1 dimension, 2 are expected, and its dtype is float32, not float64" in msg
    assert "f.astype('float64')" in msg


def test_dtype_mismatch_alone_suggests_a_cast():
    with pytest.raises(
        TypeError, match=re.escape("its dtype is float32, not float64; cast it with f.astype")
    ):
        pt.dvector.filter_variable(pt.fvector("f"))


def test_conflicting_static_lengths_suggest_nothing():
    with pytest.raises(TypeError) as info:
        TensorType("float64", (2, 3)).filter_variable(TensorType("float64", (2, 4))("q"))
    msg = str(info.value)
    assert "its static length at dimension 1 is 4, 3 is expected" in msg
    assert "astype" not in msg and "specify_shape" not in msg


def test_a_narrowing_refused_by_allow_convert_false_suggests_specify_shape():
    with pytest.raises(TypeError, match=r"less specific .* specify_shape\(q, \(2, 3\)\)"):
        TensorType("float64", (2, 3)).filter_variable(
            TensorType("float64", (2, None))("q"), allow_convert=False
        )


def test_a_non_tensor_variable():
    with pytest.raises(TypeError, match="it is a ScalarType, not a tensor"):
        pt.dscalar.filter_variable(ps.float64("s"))


def test_messages_that_reach_the_user_through_updates_and_givens():
    s = shared(np.zeros((2, 2)), name="s")
    v = pt.dvector("v")
    with pytest.raises(TypeError) as info:
        function([v], [], updates={s: v})
    msg = str(info.value)
    assert msg.startswith("The update of shared variable s")
    assert "it has 1 dimension, 2 are expected" in msg
    assert "astype" not in msg and ".." not in msg
    m = pt.dmatrix("m")
    with pytest.raises(TypeError, match="givens: .*it has 1 dimension, 2 are expected") as info:
        function([v], m.sum(), givens={m: v})
    assert "astype" not in str(info.value)
    # a wrong dtype still gets the cast advice
    with pytest.raises(TypeError, match=r"update of shared variable s.*float32.*astype\('float64'\)"):
        function([], [], updates={s: pt.fmatrix("fm")}, on_unused_input="ignore")


# -- integers that do not fit -------------------------------------------------------------


@pytest.mark.parametrize(
    "dtype, value, shown",
    [
        ("int64", 2**70, "it does not fit in int64 (from -9223372036854775808 to 9223372036854775807)"),
        ("int64", -(2**70), "it does not fit in int64 (from -9223372036854775808 to 9223372036854775807)"),
        ("int64", 2**63, "it does not fit in int64 (from -9223372036854775808 to 9223372036854775807)"),
        ("int8", 300, "it does not fit in int8 (from -128 to 127)"),
        ("int8", 2**70, "it does not fit in int8 (from -128 to 127)"),
        ("int32", -(2**40), "it does not fit in int32 (from -2147483648 to 2147483647)"),
        ("uint8", -1, "it does not fit in uint8 (from 0 to 255)"),
        ("uint64", -1, "it does not fit in uint64 (from 0 to 18446744073709551615)"),
        ("uint64", 2**64, "it does not fit in uint64 (from 0 to 18446744073709551615)"),
    ],
)
def test_an_integer_that_does_not_fit_says_so(dtype, value, shown):
    x = pt.tensor("x", dtype=dtype, shape=())
    f = function([x], x * 1)
    with pytest.raises(TypeError) as info:
        f(value)
    msg = str(info.value)
    assert shown in msg, msg
    assert "input 0 ('x')" in msg
    assert "expects numeric data" not in msg and "dtype object" not in msg


def test_a_list_with_one_integer_too_big_names_it():
    x = pt.lvector("x")
    f = function([x], x)
    with pytest.raises(TypeError, match=f"{2**70} does not fit in int64") as info:
        f([1, 2**70, 3])
    assert "dtype object" not in str(info.value)


def test_integers_that_fit_still_pass():
    assert pt.lscalar.filter(2**63 - 1) == 2**63 - 1
    assert pt.lscalar.filter(-(2**63)) == -(2**63)
    assert TensorType("uint64", ()).filter(2**64 - 1) == 2**64 - 1
    np.testing.assert_array_equal(TensorType("uint64", (None,)).filter([0, 2**63]), [0, 2**63])
    # allow_downcast still wraps around as NumPy does, where NumPy can
    assert pt.bscalar.filter(300, allow_downcast=True) == 44


def test_big_python_integers_into_floats():
    assert pt.dscalar.filter(2**70) == 2.0**70  # exact
    with pytest.raises(TypeError, match="cannot hold the value .* exactly"):
        pt.dscalar.filter(2**70 + 1)
    assert pt.dscalar.filter(2**70 + 1, allow_downcast=True) == 2.0**70
    with pytest.raises(TypeError, match=r"it is too large for float32 \(at most 3.40282e\+38"):
        pt.fscalar.filter(2**200)
    with pytest.raises(TypeError, match="too large for float64"):
        pt.dvector.filter([1, 2**1100])
