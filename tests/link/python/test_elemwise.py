"""The Python backend's thunks of Elemwise, DimShuffle and CAReduce (``python_thunk``)
compute what their ``perform`` computes: the same values, dtypes, shapes and strides, the
same aliasing (none, or the declared view / in-place target), the same errors; they keep
the storage-cell protocol and fall back to ``perform`` where a subclass redefines it (and
to the Op's own ``make_thunk`` where a subclass overrides that)."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

import arignote
import arignote.scalar as ps
import arignote.tensor as pt
from arignote.graph.basic import Apply
from arignote.graph.op import Op
from arignote.link.python import has_fast_impl, impl_name, python_thunk, registered_ops
from arignote.scalar.composite import Composite
from arignote.tensor.elemwise import CAReduce, DimShuffle, Elemwise
from arignote.tensor.reductions import Max, Min, Prod, Sum, max
from arignote.tensor.type import TensorType
from arignote.tensor.ufuncs import exp


def _run(op, node, values, thunk, compute_map=True):
    storage = {v: [x] for v, x in zip(node.inputs, values)}
    computed = {v: [True] for v in node.inputs}
    for out in node.outputs:
        storage[out] = [None]
        computed[out] = [False]
    try:
        if thunk:
            python_thunk(op, node, storage, computed if compute_map else None, [])()
            if compute_map:
                assert all(computed[out][0] for out in node.outputs)
        else:
            op.perform(node, values, [storage[out] for out in node.outputs])
    except Exception as err:
        return ("error", type(err), str(err))
    return [storage[out][0] for out in node.outputs]


def _same(a, b, inputs):
    assert type(a) is type(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    if a.size > 1:
        assert a.strides == b.strides
    assert a.flags.writeable == b.flags.writeable
    np.testing.assert_array_equal(a, b)
    for x in inputs:
        assert (a is x) == (b is x)
        if isinstance(x, np.ndarray):
            assert np.shares_memory(a, x) == np.shares_memory(b, x)


def _compare(op, node, values, compute_map=True):
    ref = _run(op, node, [v.copy() for v in values], False)
    got = _run(op, node, [v.copy() for v in values], True, compute_map)
    if isinstance(ref, tuple):
        assert got == ref
        return
    assert not isinstance(got, tuple), got
    for a, b in zip(ref, got):
        _same(a, b, values)


DTYPES = ["bool", "int8", "int64", "uint8", "float16", "float32", "float64", "complex128"]
SHAPES = [((), ()), ((None,), (None,)), ((None,), (1,)), ((None, None), (None, None)), ((None, 3), (1, None))]
OPS = [
    ps.add,
    ps.sub,
    ps.mul,
    ps.true_div,
    ps.int_div,
    ps.pow,
    ps.maximum,
    ps.eq,
    ps.and_,
    ps.neg,
    ps.abs,
    ps.exp,
    ps.tanh,
    ps.sqrt,
    ps.sigmoid,
    ps.switch,
    ps.second,
    ps.identity,
    ps.cast(ps.float64("c"), "int8").owner.op,
]


def _values(node, runtime):
    rng = np.random.default_rng(0)
    out = []
    for var in node.inputs:
        shape = tuple(runtime if s is None else s for s in var.type.shape)
        v = rng.standard_normal(shape) * 3
        if var.type.dtype.startswith("complex"):
            v = v + 1j * rng.standard_normal(shape)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out.append(np.asarray(v).astype(var.type.dtype))
    return out


@pytest.mark.parametrize("sop", OPS, ids=str)
def test_elemwise_thunk_computes_what_perform_does(sop):
    nin = sop.nin if sop.nin > 0 else 2
    op = Elemwise(sop)
    checked = 0
    for dtypes in itertools.product(DTYPES, repeat=min(nin, 2)):
        dtypes = (dtypes * 2)[:nin]
        for s1, s2 in SHAPES:
            try:
                node = op.make_node(*(TensorType(dt, s)() for dt, s in zip(dtypes, [s1, s2, s1])))
            except (TypeError, ValueError):
                continue  # not defined for these dtypes
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                _compare(op, node, _values(node, 3))
                _compare(op, node, _values(node, 3), compute_map=False)
            checked += 1
    assert checked


@pytest.mark.parametrize("sop", [ps.add, ps.mul, ps.exp, ps.switch, ps.second], ids=str)
@pytest.mark.parametrize(
    "shapes",
    [((None, None), (None, None)), ((None,), (None,)), ((None, 3), (1, None)), ((1, None), (None, 1))],
)
def test_elemwise_thunk_runtime_broadcast_errors_are_perform_s(sop, shapes):
    nin = sop.nin if sop.nin > 0 else 2
    op = Elemwise(sop)
    node = op.make_node(*(TensorType("float64", s)() for s in [*shapes, shapes[0]][:nin]))
    n_free = sum(s is None for v in node.inputs for s in v.type.shape)
    for lengths in itertools.product([1, 2, 3], repeat=n_free):
        it = iter(lengths)
        values = [np.ones(tuple(next(it) if s is None else s for s in v.type.shape)) for v in node.inputs]
        _compare(op, node, values)


def test_elemwise_thunk_n_ary_add_and_composite():
    x, y = pt.dvector("x"), pt.dvector("y")
    for sop in (ps.add, ps.mul):
        op = Elemwise(sop)
        for types in [(x.type, y.type, x.type), (TensorType("int8", (None,)), y.type, pt.dscalar().type)]:
            node = op.make_node(*(t() for t in types))
            _compare(op, node, [np.arange(3).astype(v.type.dtype) for v in node.inputs])
    a, b = ps.float64("a"), ps.float64("b")
    op = Elemwise(Composite([a, b], [ps.exp(a) + b, a * b]))
    node = op.make_node(pt.dvector(), TensorType("float64", (1,))())
    _compare(op, node, [np.arange(3.0), np.ones(1)])


@pytest.mark.parametrize(("sop", "pattern"), [(ps.add, {0: 0}), (ps.add, {0: 1}), (ps.exp, {0: 0})])
def test_elemwise_thunk_in_place(sop, pattern):
    op = Elemwise(sop, pattern)
    node = op.make_node(*(pt.dvector() for _ in range(sop.nin if sop.nin > 0 else 2)))
    values = [np.arange(1.0, 4.0) for _ in node.inputs]
    storage = {v: [x] for v, x in zip(node.inputs, values)}
    storage[node.outputs[0]] = [None]
    python_thunk(op, node, storage, None, [])()
    (i,) = pattern.values()
    assert storage[node.outputs[0]][0] is values[i]
    ref = [np.arange(1.0, 4.0) for _ in node.inputs]
    op.perform(node, ref, [[None]])
    np.testing.assert_array_equal(values[i], ref[i])


def _orders(shape):
    nd = len(shape)
    for n_keep in range(nd + 1):
        for kept in itertools.permutations(range(nd), n_keep):
            if any(d not in kept and shape[d] != 1 for d in range(nd)):
                continue
            for n_new in range(3):
                for pos in itertools.combinations(range(n_keep + n_new), n_new):
                    it = iter(kept)
                    yield ["x" if i in pos else next(it) for i in range(n_keep + n_new)]


@pytest.mark.parametrize("shape", [(), (3,), (1,), (2, 3), (3, 1), (2, 1, 3)])
def test_dimshuffle_thunk_makes_perform_s_view(shape):
    rng = np.random.default_rng(1)
    big = rng.standard_normal(tuple(2 * s for s in shape))
    values = [rng.standard_normal(shape), big[tuple(slice(None, None, 2) for _ in shape)]]
    if len(shape) >= 2:
        values.append(np.asfortranarray(values[0]))
    for order in _orders(shape):
        op = DimShuffle(input_ndim=len(shape), new_order=order)
        node = op.make_node(TensorType("float64", shape)())
        for x in values:
            _compare(op, node, [x])


@pytest.mark.parametrize("make", [Sum, Prod, Max, Min, lambda axis: CAReduce(ps.maximum, axis=axis)])
@pytest.mark.parametrize("dtype", ["bool", "int8", "uint8", "float32", "float64"])
def test_careduce_thunk_computes_what_perform_does(make, dtype):
    rng = np.random.default_rng(2)
    for shape in [(), (3,), (0,), (2, 3), (2, 0)]:
        for n_axes in range(len(shape) + 1):
            for axis in [None, *itertools.combinations(range(len(shape)), n_axes)]:
                try:
                    x = TensorType(dtype, (None,) * len(shape))()
                    node = make(axis).make_node(x)
                except (TypeError, ValueError):
                    continue
                value = (rng.standard_normal(shape) * 3).astype(dtype)
                _compare(node.op, node, [value])


def test_thunk_attributes_and_fallback_to_perform():
    class Doubled(Elemwise):
        def perform(self, node, inputs, output_storage):
            super().perform(node, inputs, output_storage)
            output_storage[0][0] = output_storage[0][0] * 2

    x = pt.dvector("x")
    for op in (
        Elemwise(ps.exp),
        Doubled(ps.exp),
        DimShuffle(input_ndim=1, new_order=["x", 0]),
        Sum(axis=None),
    ):
        node = op.make_node(x) if not isinstance(op, Sum) else op.make_node(x).op.make_node(x)
        storage = {x: [np.arange(3.0)], node.outputs[0]: [None]}
        computed = {x: [True], node.outputs[0]: [False]}
        thunk = python_thunk(node.op, node, storage, computed, [])
        assert thunk.inputs == [storage[x]] and thunk.inputs[0] is storage[x]
        assert thunk.outputs[0] is storage[node.outputs[0]]
        assert thunk.lazy is False
        thunk()
        assert computed[node.outputs[0]] == [True]
        ref = [[None]]
        node.op.perform(node, [np.arange(3.0)], ref)
        np.testing.assert_array_equal(storage[node.outputs[0]][0], ref[0][0])
    with pytest.raises(ValueError, match="no implementation 'c'"):
        python_thunk(Elemwise(ps.exp), node, storage, computed, [], impl="c")


def test_compiled_functions_keep_their_errors_and_aliasing():
    x, y = pt.dvector("x"), pt.dvector("y")
    f = arignote.function([x, y], x + y)
    with pytest.raises(ValueError, match="shape mismatch at dimension 0"):
        f(np.ones(3), np.ones(2))
    with pytest.raises(TypeError, match="Bad input 0"):
        f(np.ones(3, dtype="complex128"), np.ones(3))
    np.testing.assert_array_equal(f([1, 2], [3, 4]), [4.0, 6.0])
    a = np.arange(3.0)
    g = arignote.function([x], x)
    assert g(a) is not a
    h = arignote.function([x], x.dimshuffle("x", 0))
    out = h(a)
    assert out.shape == (1, 3) and not np.shares_memory(out, a)
    s = arignote.function([x], exp(x).sum())
    assert isinstance(s(a), np.ndarray) and s(a).shape == ()
    z = pt.dscalar("z")
    k = arignote.function([z], z + 1)
    assert isinstance(k(2.0), np.ndarray) and k(2.0) == 3.0


def test_a_thunk_that_leaves_an_output_unset_is_still_reported():
    class Forgetful(Op):
        __props__ = ()

        def make_node(self, x):
            return Apply(self, [x], [x.type()])

        def perform(self, node, inputs, output_storage):
            pass

    x = pt.dvector("x")
    f = arignote.function([x], Forgetful()(exp(x)))
    with pytest.raises(ValueError, match="did not set output 0"):
        f(np.ones(3))


# -- the dispatcher -------------------------------------------------------------------------


def test_the_three_families_are_registered():
    assert {Elemwise, DimShuffle, CAReduce} <= set(registered_ops())
    x = pt.dvector("x")
    for var in (exp(x), x.dimshuffle("x", 0), x.sum(), max(x)):
        assert has_fast_impl(var.owner.op) and impl_name(var.owner.op) == "python"
    assert not has_fast_impl(pt.cumsum(pt.dmatrix(), axis=0).owner.op)  # CumOp: perform
    assert impl_name(pt.cumsum(pt.dmatrix(), axis=0).owner.op) == "perform"


def _cells(node, values):
    storage = {v: [x] for v, x in zip(node.inputs, values)}
    computed = {v: [True] for v in node.inputs}
    for out in node.outputs:
        storage[out] = [None]
        computed[out] = [False]
    return storage, computed


def test_a_subclass_redefining_perform_runs_its_perform():
    class Doubled(Elemwise):
        def perform(self, node, inputs, output_storage):
            super().perform(node, inputs, output_storage)
            output_storage[0][0] = output_storage[0][0] * 2

    op = Doubled(ps.exp)
    assert not has_fast_impl(op) and impl_name(op) == "perform"
    x = pt.dvector("x")
    node = op.make_node(x)
    storage, computed = _cells(node, [np.zeros(2)])
    python_thunk(op, node, storage, computed, [])()
    np.testing.assert_array_equal(storage[node.outputs[0]][0], [2.0, 2.0])
    f = arignote.function([x], op(x), mode=arignote.Mode(optimizer=None))
    np.testing.assert_array_equal(f(np.zeros(2)), [2.0, 2.0])


def test_an_op_s_own_make_thunk_wins_over_the_registration():
    calls = []

    class OwnThunk(Elemwise):
        def make_thunk(self, node, storage_map, compute_map, no_recycling, impl=None):
            calls.append(node)
            (i0,), (o0,) = [storage_map[v] for v in node.inputs], [storage_map[v] for v in node.outputs]

            def thunk():
                o0[0] = i0[0] + 100.0
                if compute_map is not None:
                    compute_map[node.outputs[0]][0] = True

            return thunk

    op = OwnThunk(ps.exp)
    assert not has_fast_impl(op) and impl_name(op) == "make_thunk"
    x = pt.dvector("x")
    f = arignote.function([x], op(x), mode=arignote.Mode(optimizer=None))
    np.testing.assert_array_equal(f(np.zeros(2)), [100.0, 100.0])
    assert calls


def test_outputs_not_to_recycle_get_the_generic_thunk():
    op = Elemwise(ps.exp)
    node = op.make_node(pt.dvector("x"))
    storage, computed = _cells(node, [np.zeros(2)])
    thunk = python_thunk(op, node, storage, computed, [node.outputs[0]])
    assert not getattr(thunk, "sets_outputs", False)  # the generic one, which clears the cell
    storage[node.outputs[0]][0] = np.full(2, 7.0)
    thunk()
    np.testing.assert_array_equal(storage[node.outputs[0]][0], [1.0, 1.0])


def test_op_make_thunk_of_the_families_is_the_generic_perform_thunk():
    """``Op.make_thunk`` (public API) still computes the node, through ``perform``."""
    x = pt.dvector("x")
    for var in (exp(x), x.dimshuffle("x", 0), x.sum()):
        node = var.owner
        storage, computed = _cells(node, [np.arange(3.0)])
        node.op.make_thunk(node, storage, computed, [])()
        fast_storage, fast_computed = _cells(node, [np.arange(3.0)])
        python_thunk(node.op, node, fast_storage, fast_computed, [])()
        _same(storage[node.outputs[0]][0], fast_storage[node.outputs[0]][0], [])
        assert computed[node.outputs[0]] == [True]


def test_the_default_is_the_op_s_make_thunk():
    class Twice(Op):
        __props__ = ()

        def make_node(self, x):
            return Apply(self, [x], [x.type()])

        def perform(self, node, inputs, output_storage):
            output_storage[0][0] = inputs[0] * 2

    op = Twice()
    assert Twice not in registered_ops() and impl_name(op) == "perform"
    node = op.make_node(pt.dvector("x"))
    storage, computed = _cells(node, [np.ones(2)])
    python_thunk(op, node, storage, computed, [])()
    np.testing.assert_array_equal(storage[node.outputs[0]][0], [2.0, 2.0])
    with pytest.raises(ValueError, match="no implementation 'c'"):
        python_thunk(op, node, storage, computed, [], "c")
