"""``In`` and ``Out``: each argument, and the aliasing rules between inputs and outputs."""

from __future__ import annotations

import numpy as np
import pytest

import arignote.tensor as pt
from arignote import In, Out, function, shared
from arignote.compile.io import SymbolicInput, SymbolicOutput


@pytest.fixture
def v():
    return pt.dvector("v")


# -- In -----------------------------------------------------------------------------------


def test_in_defaults(v):
    i = In(v)
    assert (i.variable, i.name, i.update, i.mutable, i.strict, i.allow_downcast, i.borrow) == (
        v,
        "v",
        None,
        False,
        False,
        None,
        False,
    )
    assert not i.has_value
    assert isinstance(i, SymbolicInput)
    assert str(i) == "In(v)"


def test_in_needs_a_non_constant_variable():
    with pytest.raises(TypeError, match="needs a Variable"):
        In(3.0)
    with pytest.raises(TypeError, match="is a Constant"):
        In(pt.constant(3.0))


def test_in_name(v):
    f = function([In(v, name="vec")], v.sum())
    assert float(f(vec=[1, 2])) == 3.0
    with pytest.raises(TypeError, match="no input named 'v'"):
        f(v=[1, 2])
    assert In(v, name=None, autoname=False).name is None
    with pytest.raises(TypeError, match="must be a string, got 3"):
        In(v, name=3)


def test_in_default_value_is_the_removed_form():
    # PyTensor 3 removed inputs with default values: value= raises, naming the way out
    x = pt.dscalar("x")
    for value in (5.0, np.zeros(2), "nope"):
        with pytest.raises(ValueError, match=r"In\(x, value=...\): inputs with default values were removed"):
            In(x, value=value)
    with pytest.raises(ValueError, match="arignote.shared"):
        In(x, value=0.0, update=x + 1)
    spec = In(x, value=None)  # None: no default, accepted as in PyTensor
    assert not spec.has_value and spec.value is None
    with pytest.raises(TypeError, match="missing input 0"):
        function([spec], x)()
    with pytest.raises(TypeError, match="only a shared variable can be an implicit input"):
        In(x, implicit=True)


def test_in_update_is_applied_to_the_input_storage():
    x = pt.dscalar("x")
    acc = pt.dscalar("acc")
    spec = In(acc, update=acc + x)
    assert spec.mutable and spec.borrow  # an input with an update is the function's state
    assert str(spec) == "In(acc <- Add.0)"
    f = function([spec, x], acc)
    assert float(f(10.0, 1.0)) == 10.0
    assert float(f.input_storage[0].value) == 11.0


def test_in_update_type_is_checked():
    x = pt.dscalar("x")
    with pytest.raises(TypeError, match="update of input x has Type"):
        In(x, update=pt.dvector())
    with pytest.raises(TypeError, match="update of input x has Type"):
        In(x, update=pt.fscalar())
    with pytest.raises(TypeError, match="must be a Variable"):
        In(x, update=1.0)


def test_in_strict(v):
    f = function([In(v, strict=True)], v * 2)
    np.testing.assert_array_equal(f(np.ones(2)), [2, 2])
    with pytest.raises(TypeError, match=r"(?s)Bad input 0 \('v'\).*got list"):
        f([1.0, 2.0])
    with pytest.raises(TypeError, match="float32"):
        f(np.ones(2, dtype="float32"))


def test_in_allow_downcast():
    fv = pt.fvector("fv")
    f = function([In(fv, allow_downcast=True)], fv * 2)
    assert f(np.ones(3)).dtype == np.float32
    with pytest.raises(TypeError, match="loss of precision"):
        function([In(fv, allow_downcast=False)], fv * 2)(np.ones(3))


def test_in_mutable_and_borrow_flags(v):
    assert In(v, mutable=True).borrow is True  # borrow follows mutable
    assert In(v, borrow=True).mutable is False
    with pytest.raises(ValueError, match="mutable=True and borrow=False"):
        In(v, mutable=True, borrow=False)
    assert In(v, update=v * 2, mutable=False).borrow is False


# -- Out ----------------------------------------------------------------------------------


def test_out(v):
    o = Out(v)
    assert isinstance(o, SymbolicOutput) and o.variable is v and o.borrow is False
    assert str(Out(v, borrow=True)) == "Out(v, borrow=True)"
    with pytest.raises(TypeError, match="needs a Variable"):
        Out("v")


# -- aliasing -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("in_borrow", "out_borrow", "aliased"),
    [(False, False, False), (False, True, False), (True, False, False), (True, True, True)],
)
def test_output_aliases_an_input_only_when_both_borrow(v, in_borrow, out_borrow, aliased):
    f = function([In(v, borrow=in_borrow)], Out(v, borrow=out_borrow))
    a = np.ones(3)
    out = f(a)
    np.testing.assert_array_equal(out, a)
    assert np.shares_memory(out, a) is aliased


def test_views_of_inputs_are_copied():
    m = pt.dmatrix("m")
    f = function([m], m.T)  # a view of the input
    a = np.arange(6.0).reshape(2, 3)
    out = f(a)
    np.testing.assert_array_equal(out, a.T)
    assert not np.shares_memory(out, a)
    g = function([In(m, borrow=True)], Out(m.T, borrow=True))
    assert np.shares_memory(g(a), a)


def test_outputs_are_not_aliased_to_each_other(v):
    y = v * 2
    f = function([v], [y, y, Out(y, borrow=True)])
    r = f(np.ones(2))
    assert not np.shares_memory(r[0], r[1])
    assert not np.shares_memory(r[2], r[0]) and not np.shares_memory(r[2], r[1])
    # two borrowed outputs may share
    g = function([v], [Out(y, borrow=True), Out(y, borrow=True)])
    r = g(np.ones(2))
    np.testing.assert_array_equal(r[0], r[1])


def test_outputs_are_not_aliased_to_shared_values():
    s = shared(np.ones(3), name="s")
    f = function([], s)
    out = f()
    out[0] = 99.0
    assert s.get_value()[0] == 1.0
    # a borrowed output of a shared variable is its value (shared values are borrowable)
    g = function([], Out(s, borrow=True))
    assert g() is s.get_value(borrow=True)


def test_output_of_an_updated_shared_variable_is_its_old_value():
    s = shared(np.zeros(3), name="s")
    f = function([], s, updates={s: s + 1})
    old = f()
    np.testing.assert_array_equal(old, [0, 0, 0])
    np.testing.assert_array_equal(s.get_value(), [1, 1, 1])
    assert not np.shares_memory(old, s.get_value(borrow=True))


def test_borrowed_output_buffer_is_returned(v):
    y = pt.exp(v)
    f = function([v], Out(y, borrow=True))
    a = f(np.zeros(2))
    assert a is f.output_storage[0][0]  # the function's own buffer, no copy
    g = function([v], y)
    b = g(np.zeros(2))
    b[0] = 5.0  # fresh: changing it changes nothing in the function
    np.testing.assert_array_equal(g(np.zeros(2)), [1, 1])


@pytest.mark.parametrize("n_extra", [0, 20], ids=["few-inputs", "many-inputs"])
def test_aliasing_rules_hold_with_few_or_many_inputs(n_extra):
    # (with many inputs the check is one pass over the inputs' memory owners)
    m = pt.dmatrix("m")
    extras = [pt.dscalar(f"e{k}") for k in range(n_extra)]
    total = m.sum()
    for e in extras:
        total = total + e
    f = function([m, *extras], [m.T, m, total, Out(m.T, borrow=True)])
    a = np.arange(6.0).reshape(2, 3)
    view_out, same_out, tot, borrowed = f(a, *[np.float64(k) for k in range(n_extra)])
    assert float(tot) == 15.0 + sum(range(n_extra))
    for out in (view_out, same_out, borrowed):  # the input is not borrowed: all copied
        assert not np.shares_memory(out, a)
    assert not np.shares_memory(view_out, borrowed)
    g = function([In(m, borrow=True), *extras], [Out(m.T, borrow=True), m.T], on_unused_input="ignore")
    shared_view, copied_view = g(a, *[np.float64(0)] * n_extra)
    assert np.shares_memory(shared_view, a) and not np.shares_memory(copied_view, a)


@pytest.mark.parametrize("n_extra", [0, 20], ids=["few-inputs", "many-inputs"])
def test_inputs_in_memory_numpy_does_not_own(n_extra):
    m = pt.dmatrix("m")
    extras = [pt.dscalar(f"e{k}") for k in range(n_extra)]
    f = function([m, *extras], m.T, on_unused_input="ignore")
    buffer = bytearray(np.arange(6.0).tobytes())
    a = np.frombuffer(buffer).reshape(2, 3)  # memory owned by a bytearray
    out = f(a, *[np.float64(0)] * n_extra)
    np.testing.assert_array_equal(out, np.arange(6.0).reshape(2, 3).T)
    assert not np.shares_memory(out, a)
