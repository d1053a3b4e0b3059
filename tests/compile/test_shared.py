"""Shared variables: constructors, ``get_value``/``set_value`` and their ``borrow``
semantics, ``default_update``, and the order in which updates are applied."""

from __future__ import annotations

import numpy as np
import pytest

import arignote.tensor as pt
from arignote import function, shared
from arignote.compile.sharedvalue import SharedVariable, shared_constructor
from arignote.gradient import grad
from arignote.tensor.sharedvar import TensorSharedVariable
from arignote.tensor.type import TensorType

# -- constructors -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "dtype", "ndim"),
    [
        (3.0, "float64", 0),
        (3, "int64", 0),
        (True, "bool", 0),
        (np.float32(3.0), "float32", 0),
        (np.zeros((2, 3), dtype="int16"), "int16", 2),
        ([1, 2, 3], "int64", 1),
        (np.array([1 + 2j]), "complex128", 1),
    ],
)
def test_shared_types(value, dtype, ndim):
    s = shared(value)
    assert isinstance(s, TensorSharedVariable) and isinstance(s, SharedVariable)
    assert s.type == TensorType(dtype, (None,) * ndim)  # static shape unknown: may change
    np.testing.assert_array_equal(s.get_value(), np.asarray(value))
    assert s.tag.is_shared


def test_shared_name_and_shape():
    s = shared(np.zeros((2, 3)), name="w", shape=(2, 3))
    assert s.name == "w" and str(s) == "w"
    assert s.type.shape == (2, 3)
    with pytest.raises(TypeError, match=r"static shape \(2, 4\).*\(2, 3\)"):
        shared(np.zeros((2, 3)), shape=(2, 4))
    s2 = shared(np.zeros((1, 3)), shape=(1, None))
    assert s2.type.broadcastable == (True, False)


def test_shared_rejects_symbols_and_non_numbers():
    with pytest.raises(TypeError, match="not the symbolic Variable"):
        shared(pt.dvector("v"))
    with pytest.raises(TypeError, match=r"accepts str 'abc' .*dtype <U3.*not a numpy.random.Generator"):
        shared("abc")
    with pytest.raises(TypeError, match="dtype object"):
        shared({"a": 1})
    with pytest.raises(TypeError, match="unexpected arguments"):
        shared(np.zeros(2), broadcastable=(False,))


def test_strict_and_allow_downcast_govern_set_value():
    s = shared(np.zeros(3, dtype="float32"))
    with pytest.raises(TypeError, match="loss of precision"):
        s.set_value(np.ones(3))
    s.set_value([1.0, 2.0])  # lists and Python floats go to float32
    assert s.get_value().dtype == np.float32
    d = shared(np.zeros(3, dtype="float32"), allow_downcast=True)
    d.set_value(np.ones(3))
    assert d.get_value().dtype == np.float32
    st = shared(np.zeros(3), strict=True)
    with pytest.raises(TypeError, match="strict"):
        st.set_value([1.0, 2.0])
    with pytest.raises(TypeError, match="Wrong number of dimensions"):
        s.set_value(np.ones((2, 2), dtype="float32"))
    s.set_value(np.ones(5, dtype="float32"))  # another length is fine (shape (?,))
    assert s.get_value().shape == (5,)


def test_custom_constructor_registration():
    class Box:
        def __init__(self, v):
            self.v = v

    class BoxShared(SharedVariable):
        pass

    from arignote.graph.type import Type

    class BoxType(Type):
        def filter(self, data, strict=False, allow_downcast=None):
            if not isinstance(data, Box):
                raise TypeError("not a Box")
            return data

        def __eq__(self, other):
            return type(self) is type(other)

        def __hash__(self):
            return hash(type(self))

    def box_constructor(value, name=None, strict=False, allow_downcast=None, **kwargs):
        if not isinstance(value, Box):
            raise TypeError("not a Box")
        return BoxShared(name=name, type=BoxType(), value=value, strict=strict, allow_downcast=allow_downcast)

    shared_constructor(box_constructor)
    try:
        b = shared(Box(3))
        assert isinstance(b, BoxShared) and b.get_value().v == 3
        assert isinstance(shared(np.zeros(2)), TensorSharedVariable)  # others still work
        with pytest.raises(TypeError, match="No shared variable constructor accepts str"):
            shared("text")  # two constructors refused: both reasons
    finally:
        shared_constructor(box_constructor, remove=True)


# -- borrow semantics ---------------------------------------------------------------------


def test_shared_copies_its_value_unless_borrow():
    a = np.zeros(3)
    s = shared(a)
    a[0] = 5.0
    assert s.get_value()[0] == 0.0
    b = shared(a, borrow=True)
    a[1] = 7.0
    assert b.get_value()[1] == 7.0
    assert b.get_value(borrow=True) is a


def test_get_value_copies_unless_borrow():
    s = shared(np.zeros(3))
    v = s.get_value()
    v[0] = 1.0
    assert s.get_value()[0] == 0.0
    assert s.get_value(borrow=True) is s.get_value(borrow=True)
    assert s.get_value() is not s.get_value()
    s.get_value(borrow=True)[0] = 2.0  # borrowed: the very array inside
    assert s.get_value()[0] == 2.0
    assert s.get_value(borrow=True, return_internal_type=True) is s.container.value


def test_set_value_copies_unless_borrow():
    s = shared(np.zeros(3))
    a = np.ones(3)
    s.set_value(a)
    assert s.get_value(borrow=True) is not a
    a[0] = 9.0
    assert s.get_value()[0] == 1.0
    s.set_value(a, borrow=True)
    assert s.get_value(borrow=True) is a


def test_functions_see_set_value():
    s = shared(np.float64(1.0), name="s")
    x = pt.dscalar("x")
    f = function([x], s * x)
    assert float(f(2.0)) == 2.0
    s.set_value(5.0)
    assert float(f(2.0)) == 10.0


def test_zero_and_clone():
    s = shared(np.arange(3.0), name="s")
    s.default_update = s + 1
    c = s.clone()
    assert c is not s and c.container is s.container and c.default_update is s.default_update
    assert c.name == "s"
    s.zero()
    np.testing.assert_array_equal(c.get_value(), [0, 0, 0])


# -- default_update -----------------------------------------------------------------------


def test_default_update_in_every_function_using_it():
    rng_state = shared(np.int64(0), name="state")
    rng_state.default_update = rng_state + 1
    f = function([], rng_state * 10)
    g = function([], rng_state * 100)
    assert [int(f()), int(g()), int(f())] == [0, 100, 20]
    assert int(rng_state.get_value()) == 3


def test_default_update_reaches_shared_variables_used_only_by_updates():
    a = shared(np.float64(1.0), name="a")
    b = shared(np.float64(0.0), name="b")
    b.default_update = b + a  # `a` is read by b's default update only
    f = function([], [], updates=None)
    assert f.get_shared() == []
    g = function([], b)
    g()
    g()
    assert float(b.get_value()) == 2.0
    assert set(g.get_shared()) == {a, b}


# -- the order of updates -----------------------------------------------------------------


def test_outputs_are_computed_before_any_update():
    s = shared(np.float64(1.0), name="s")
    f = function([], [s * 10, s + 0], updates={s: s * 2})
    assert [float(v) for v in f()] == [10.0, 1.0]
    assert [float(v) for v in f()] == [20.0, 2.0]
    assert float(s.get_value()) == 4.0


def test_updates_read_old_values_so_they_can_swap():
    a = shared(np.float64(1.0), name="a")
    b = shared(np.float64(2.0), name="b")
    f = function([], [a, b], updates=[(a, b), (b, a)])
    assert [float(v) for v in f()] == [1.0, 2.0]
    assert (float(a.get_value()), float(b.get_value())) == (2.0, 1.0)
    f()
    assert (float(a.get_value()), float(b.get_value())) == (1.0, 2.0)


def test_swapped_arrays_are_not_left_aliased():
    a = shared(np.zeros(2), name="a")
    b = shared(np.ones(2), name="b")
    f = function([], [], updates=[(a, b), (b, a)])
    f()
    assert not np.shares_memory(a.get_value(borrow=True), b.get_value(borrow=True))
    np.testing.assert_array_equal(a.get_value(), [1, 1])
    np.testing.assert_array_equal(b.get_value(), [0, 0])


def test_an_update_from_an_input_does_not_keep_the_callers_array():
    s = shared(np.zeros(3), name="s")
    v = pt.dvector("v")
    f = function([v], [], updates={s: v})
    a = np.ones(3)
    f(a)
    a[0] = 42.0
    np.testing.assert_array_equal(s.get_value(), [1, 1, 1])


def test_an_update_copying_another_shared_variable_does_not_alias_it():
    a = shared(np.zeros(2), name="a")
    b = shared(np.ones(2), name="b")
    f = function([], [], updates={a: b})
    f()
    b.get_value(borrow=True)[0] = 5.0
    np.testing.assert_array_equal(a.get_value(), [1, 1])


def test_one_expression_for_an_output_and_an_update():
    s = shared(np.zeros(2), name="s")
    nxt = s + 1
    f = function([], nxt, updates={s: nxt})
    out = f()
    out[0] = 100.0  # the returned array is not the shared variable's new value
    np.testing.assert_array_equal(s.get_value(), [1, 1])
    np.testing.assert_array_equal(f(), [2, 2])


def test_a_failing_call_applies_no_update():
    s = shared(np.float64(0.0), name="s")
    v = pt.dvector("v")
    w = pt.dvector("w")
    f = function([v, w], (v + w).sum(), updates={s: s + 1})
    f(np.ones(2), np.ones(2))
    with pytest.raises(ValueError):
        f(np.ones(2), np.ones(3))
    assert float(s.get_value()) == 1.0


def test_many_updates_in_a_training_loop():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 3))
    w_true = np.array([1.0, -2.0, 0.5])
    y = X @ w_true
    w = shared(np.zeros(3), name="w")
    step = shared(np.int64(0), name="step")
    xs, ys = pt.dmatrix("xs"), pt.dvector("ys")
    err = pt.dot(xs, w) - ys
    loss = (err**2).mean()
    (gw,) = grad(loss, [w])
    train = function([xs, ys], loss, updates=[(w, w - 0.1 * gw), (step, step + 1)])
    losses = [float(train(X, y)) for _ in range(200)]
    assert losses[-1] < 1e-6 < losses[0]
    np.testing.assert_allclose(w.get_value(), w_true, atol=1e-3)
    assert int(step.get_value()) == 200


@pytest.mark.parametrize("n", [2, 12], ids=["few", "many"])
def test_a_ring_of_updates_leaves_no_aliases(n):
    # (many shared variables: the aliasing check is one pass over their memory owners)
    vs = [shared(np.full(2, float(k)), name=f"v{k}") for k in range(n)]
    f = function([], [], updates=[(vs[k], vs[(k + 1) % n]) for k in range(n)])
    f()
    for k in range(n):
        np.testing.assert_array_equal(vs[k].get_value(), [(k + 1) % n] * 2)
    owners = {id(v.get_value(borrow=True)) for v in vs}
    assert len(owners) == n
    for k in range(n):
        for j in range(k):
            assert not np.shares_memory(vs[k].get_value(borrow=True), vs[j].get_value(borrow=True))


@pytest.mark.parametrize("n", [2, 12], ids=["few", "many"])
def test_updates_sharing_one_expression_get_their_own_arrays(n):
    vs = [shared(np.zeros(2), name=f"v{k}") for k in range(n)]
    step = shared(np.ones(2), name="step")
    new = vs[0] + step
    f = function([], [], updates=[(v, new) for v in vs])
    f()
    values = [v.get_value(borrow=True) for v in vs]
    for k in range(n):
        np.testing.assert_array_equal(values[k], [1, 1])
        for j in range(k):
            assert not np.shares_memory(values[k], values[j])
    # an identity update keeps the very array, and a view of another is copied
    m = shared(np.arange(6.0).reshape(2, 3), name="m")
    t = shared(np.zeros((3, 2)), name="t")
    keep = m.get_value(borrow=True)
    g = function([], [], updates=[(m, m), (t, m.T)] + [(v, v) for v in vs])
    g()
    assert m.get_value(borrow=True) is keep
    assert not np.shares_memory(t.get_value(borrow=True), keep)
    np.testing.assert_array_equal(t.get_value(), keep.T)


def test_collect_new_shareds_collects_what_shared_creates_inside():
    import numpy as _np

    from arignote.compile.sharedvalue import collect_new_shareds, shared

    before = shared(_np.zeros(2), name="before")
    with collect_new_shareds() as outer:
        a = shared(_np.ones(3), name="a")
        with collect_new_shareds() as inner:
            b = shared(1.0, name="b")
        c = shared(_np.arange(2), name="c")
    after = shared(0.0)
    assert inner == [b]
    assert [v.name for v in outer] == ["a", "c"] and outer[0] is a and outer[1] is c
    assert before not in outer and after not in outer


def test_a_shared_variable_takes_pytensors_positional_arguments() -> None:
    """``SharedVariable(type, value, strict, allow_downcast, container, name)``, in PyTensor 3's
    order, for code that makes one by hand."""
    w = TensorSharedVariable(TensorType("float64", shape=(None,)), np.arange(3.0), False, None, None, "w")
    assert w.name == "w" and isinstance(w, SharedVariable)
    np.testing.assert_array_equal(w.get_value(), [0.0, 1.0, 2.0])
    np.testing.assert_array_equal(function([], 2 * w)(), [0.0, 2.0, 4.0])
    with pytest.raises(TypeError, match="either a container or a value"):
        TensorSharedVariable(w.type, np.zeros(3), False, container=w.container)
