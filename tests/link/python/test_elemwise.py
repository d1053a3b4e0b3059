"""The Python backend's thunks of Elemwise, DimShuffle and CAReduce (``python_thunk``)
compute what their ``perform`` computes: the same values, dtypes, shapes and strides, the
same aliasing (none, or the declared view / in-place target), the same errors; they keep
the storage-cell protocol and fall back to ``perform`` where a subclass redefines it (and
to the Op's own ``make_thunk`` where a subclass overrides that)."""

from __future__ import annotations

import itertools
import tracemalloc
import warnings

import numpy as np
import pytest

import arignote
import arignote.scalar as ps
import arignote.tensor as pt
from arignote.graph.basic import Apply
from arignote.graph.op import Op
from arignote.link.python import has_fast_impl, impl_name, python_thunk, registered_ops
from arignote.link.python.elemwise import _inplace_body, _resolve_inner, _softplus
from arignote.scalar.composite import Composite
from arignote.scalar.op import UnaryScalarOp, same_out
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


# -- in place -------------------------------------------------------------------------------


def _in_place_run(op, node, values):
    """Run the thunk on copies; returns (outputs, the input arrays it was given)."""
    given = [np.array(v) for v in values]
    storage, computed = _cells(node, given)
    python_thunk(op, node, storage, computed, [])()
    assert all(computed[out][0] for out in node.outputs)
    return [storage[out][0] for out in node.outputs], given


def _reference(op, node, values):
    ref = [[None] for _ in node.outputs]
    Elemwise(op.scalar_op).perform(node, [np.array(v) for v in values], ref)
    return [cell[0] for cell in ref]


@pytest.mark.parametrize("dtype", ["int8", "int64", "float32", "float64"])
@pytest.mark.parametrize(
    ("sop", "nin", "target"),
    [
        (ps.exp, 1, 0),
        (ps.neg, 1, 0),
        (ps.add, 2, 0),
        (ps.mul, 2, 1),
        (ps.sub, 2, 1),
        (ps.add, 3, 2),
        (ps.mul, 3, 0),
    ],
)
@pytest.mark.parametrize("shape", [(), (4,), (2, 3)])
def test_a_ufunc_writes_into_its_target(sop, nin, target, dtype, shape):
    if sop is ps.exp and dtype.startswith("int"):
        return  # exp of an integer is a float: no input of the output's dtype
    op = Elemwise(sop, {0: target})
    node = op.make_node(*(TensorType(dtype, (None,) * len(shape))() for _ in range(nin)))
    rng = np.random.default_rng(3)
    values = [(rng.standard_normal(shape) * 3).astype(dtype) for _ in range(nin)]
    (got,), given = _in_place_run(op, node, values)
    assert got is given[target]  # the target's buffer, nothing allocated
    (want,) = _reference(op, node, values)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    assert all(np.array_equal(v, g) for j, (v, g) in enumerate(zip(values, given)) if j != target)


def test_the_checked_two_input_variant_writes_in_place_and_keeps_its_errors():
    op = Elemwise(ps.add, {0: 1})
    node = op.make_node(TensorType("float64", (1, None))(), pt.dmatrix())
    (got,), given = _in_place_run(op, node, [np.ones((1, 3)), np.arange(6.0).reshape(2, 3)])
    assert got is given[1]
    np.testing.assert_array_equal(got, np.arange(6.0).reshape(2, 3) + 1)
    node = op.make_node(pt.dmatrix(), pt.dmatrix())
    with pytest.raises(ValueError, match="shape mismatch at dimension 1"):
        _in_place_run(op, node, [np.ones((2, 2)), np.ones((2, 3))])


def test_a_target_that_cannot_be_written_gives_a_fresh_result():
    op = Elemwise(ps.add, {0: 0})
    node = op.make_node(pt.dvector(), pt.dvector())
    frozen = np.arange(3.0)
    frozen.flags.writeable = False
    storage, computed = _cells(node, [frozen, np.ones(3)])
    python_thunk(op, node, storage, computed, [])()
    got = storage[node.outputs[0]][0]
    assert got is not frozen and got.flags.writeable
    np.testing.assert_array_equal(got, [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(frozen, [0.0, 1.0, 2.0])


def test_a_scalar_op_without_a_ufunc_gives_a_fresh_result_not_a_copy():
    op = Elemwise(ps.switch, {0: 1})
    node = op.make_node(TensorType("bool", (None,))(), pt.dvector(), pt.dvector())
    values = [np.array([True, False, True]), np.zeros(3), np.ones(3)]
    (got,), given = _in_place_run(op, node, values)
    assert not any(np.shares_memory(got, g) for g in given)
    np.testing.assert_array_equal(got, [0.0, 1.0, 0.0])
    op = Elemwise(ps.identity, {0: 0})  # impl returns its input: that is the in-place result
    node = op.make_node(pt.dvector())
    (got,), given = _in_place_run(op, node, [np.arange(3.0)])
    assert got is given[0]


def _composite(n_in, outputs):
    ins = [ps.float64(f"i{k}") for k in range(n_in)]
    return Composite(ins, outputs(*ins))


@pytest.mark.parametrize("n_in", [1, 2, 3])
def test_a_fused_body_writes_its_last_ufunc_into_the_target(n_in):
    comp = _composite(n_in, lambda *v: [ps.exp(ps.log(sum(v[1:], v[0]) + 1.0) * 2.0)])
    for target in range(n_in):
        op = Elemwise(comp, {0: target})
        node = op.make_node(*(pt.dmatrix() for _ in range(n_in)))
        values = [np.random.default_rng(k).random((2, 3)) for k in range(n_in)]
        (got,), given = _in_place_run(op, node, values)
        assert got is given[target]
        np.testing.assert_allclose(got, np.exp(np.log(sum(values) + 1.0) * 2.0))
        frozen = [np.array(v) for v in values]
        frozen[target].flags.writeable = False
        storage, computed = _cells(node, frozen)
        python_thunk(op, node, storage, computed, [])()
        np.testing.assert_allclose(storage[node.outputs[0]][0], np.exp(np.log(sum(values) + 1.0) * 2.0))


def test_a_fused_body_with_several_outputs_writes_each_into_its_target():
    def outputs(a, b):
        e = ps.exp(a)  # (two exp(a) nodes would read a after the first output is written)
        return [e + b, e * b]

    op = Elemwise(_composite(2, outputs), {0: 0, 1: 1})
    node = op.make_node(pt.dvector(), pt.dvector())
    values = [np.arange(3.0), np.arange(3.0) + 5]
    (o0, o1), given = _in_place_run(op, node, values)
    assert o0 is given[0] and o1 is given[1]
    np.testing.assert_allclose(o0, np.exp(values[0]) + values[1])
    np.testing.assert_allclose(o1, np.exp(values[0]) * values[1])
    frozen = [np.array(v) for v in values]
    frozen[1].flags.writeable = False  # one target cannot take its output: neither is written
    storage, computed = _cells(node, frozen)
    python_thunk(op, node, storage, computed, [])()
    np.testing.assert_allclose(storage[node.outputs[0]][0], np.exp(values[0]) + values[1])
    np.testing.assert_allclose(storage[node.outputs[1]][0], np.exp(values[0]) * values[1])
    np.testing.assert_array_equal(frozen[0], values[0])


def test_a_body_reading_its_target_after_the_write_computes_that_output_fresh():
    # output 0 (a * 2) is computed first, and a is read again for output 1: writing output
    # 0 into a would change output 1; that output is computed fresh instead
    comp = _composite(2, lambda a, b: [a * 2.0, (a * 2.0) * b + a])
    op = Elemwise(comp, {0: 0, 1: 1})
    node = op.make_node(pt.dvector(), pt.dvector())
    values = [np.arange(1.0, 4.0), np.arange(1.0, 4.0) + 5]
    (o0, o1), given = _in_place_run(op, node, values)
    assert o0 is not given[0] and o1 is given[1]
    np.testing.assert_allclose(o0, values[0] * 2)
    np.testing.assert_allclose(o1, values[0] * 2 * values[1] + values[0])
    # an output that is another input as it is, or the same value as another output
    for outputs in (lambda a, b: [ps.exp(a), a], lambda a, b: [ps.exp(a) * b, ps.identity(a)]):
        op = Elemwise(_composite(2, outputs), {0: 0})
        node = op.make_node(pt.dvector(), pt.dvector())
        (o0, o1), given = _in_place_run(op, node, values)
        assert o0 is not given[0]
        np.testing.assert_array_equal(o1, values[0])
        np.testing.assert_array_equal(given[0], values[0])


def test_a_target_shared_with_another_input_is_not_written_before_that_input_is_read():
    # the node reads x through both inputs (the same array): output 0 goes into it only if
    # nothing reads input 1 afterwards
    comp = _composite(2, lambda a, b: [a + 1.0, b * 3.0])
    op = Elemwise(comp, {0: 0})
    x = pt.dvector()
    node = op.make_node(x, x)
    value = np.arange(3.0)
    storage = {x: [value], node.outputs[0]: [None], node.outputs[1]: [None]}
    python_thunk(op, node, storage, None, [])()
    np.testing.assert_array_equal(storage[node.outputs[0]][0], np.arange(3.0) + 1)
    np.testing.assert_array_equal(storage[node.outputs[1]][0], np.arange(3.0) * 3)


def test_compiled_in_place_functions_equal_perform():
    x = pt.dmatrix("x")
    s = x.sum(axis=0)
    outs = [pt.exp(pt.log(s + 1) * 2), pt.tanh(s) * s]
    mode = arignote.get_mode("FAST_RUN")
    f = arignote.function([x], outs, mode=mode)
    assert any(n.op.destroy_map for n in f.maker.fgraph.apply_nodes)
    for linker in ("py", "vm_nogc"):
        g = arignote.function([x], outs, mode=arignote.Mode(linker=linker, optimizer="fast_run"))
        value = np.random.default_rng(4).random((3, 4))
        for a, b in zip(f(value), g(value)):
            np.testing.assert_allclose(a, b)
        want = [np.exp(np.log(value.sum(0) + 1) * 2), np.tanh(value.sum(0)) * value.sum(0)]
        for a, b in zip(g(value), want):
            np.testing.assert_allclose(a, b)


def _peak_bytes(fn):
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_fused_chain_of_temporaries_runs_in_its_target():
    comp = _composite(1, lambda a: [ps.exp(a) * 2.0 + 1.0])
    op = Elemwise(comp, {0: 0})
    node = op.make_node(pt.dvector())
    value = np.linspace(0.0, 1.0, 200_000)
    given = value.copy()
    storage, computed = _cells(node, [given])
    thunk = python_thunk(op, node, storage, computed, [])
    peak = _peak_bytes(thunk)
    assert storage[node.outputs[0]][0] is given
    np.testing.assert_allclose(given, np.exp(value) * 2 + 1)
    assert peak < value.nbytes / 2  # exp, multiply and add all wrote into the input
    plain = Elemwise(comp).make_node(pt.dvector())
    storage, computed = _cells(plain, [value.copy()])
    assert _peak_bytes(python_thunk(plain.op, plain, storage, computed, [])) > 2 * value.nbytes


@pytest.mark.parametrize(
    "expr",
    [
        lambda a, b: [(ps.exp(a) * a) + b],  # a is read again after exp: exp cannot write into it
        lambda a, b: [(lambda t: t * t + t)(ps.exp(a + b))],  # exp(a + b) is read twice
        lambda a, b: [ps.exp(b) * 2.0 + a],  # the chain starts from b, then adds a
        lambda a, b: [ps.sqrt(ps.abs(a)) + ps.cast(b, "float64")],
        lambda a, b: [ps.switch(a > 0.5, ps.exp(a), b) * 3.0],  # switch is no ufunc: its impl
    ],
)
def test_fused_chains_in_place_equal_the_plain_body(expr):
    comp = _composite(2, expr)
    rng = np.random.default_rng(5)
    values = [rng.random((3, 4)), rng.random((3, 4))]
    plain = Elemwise(comp).make_node(pt.dmatrix(), pt.dmatrix())
    (want,), _ = _in_place_run(plain.op, plain, values)
    for target in (0, 1):
        op = Elemwise(comp, {0: target})
        node = op.make_node(pt.dmatrix(), pt.dmatrix())
        (got,), given = _in_place_run(op, node, values)
        np.testing.assert_allclose(got, want, rtol=1e-14)
        np.testing.assert_array_equal(given[1 - target], values[1 - target])


class _Refuses(UnaryScalarOp):
    """A scalar op (no ufunc) whose impl raises on values above 10."""

    calls = 0

    def impl(self, a):
        type(self).calls += 1
        if np.any(np.asarray(a) > 10):
            raise ValueError("too big")
        return np.asarray(a) + 0.0


@pytest.mark.parametrize("n_in", [2, 3])
def test_an_error_after_the_body_wrote_its_target_is_raised_not_retried(n_in):
    refuses = _Refuses(same_out, name="refuses")
    # the body writes exp(a) and exp(a) * 2 into a, then refuses(b) raises: the plain body
    # must not run again on the overwritten a (it could give another answer)
    comp = _composite(n_in, lambda *v: [ps.exp(v[0]) * 2.0 + refuses.make_node(v[-1]).outputs[0]])
    op = Elemwise(comp, {0: 0})
    node = op.make_node(*(pt.dvector() for _ in range(n_in)))
    assert _inplace_body(op, node)[1] == (True,)
    values = [np.array([1.0, 2.0, 50.0]) for _ in range(n_in)]
    _Refuses.calls = 0
    with pytest.raises(ValueError, match="too big"):
        _in_place_run(op, node, values)
    assert _Refuses.calls == 1  # not run a second time
    (got,), given = _in_place_run(op, node, [v / 10 for v in values])
    assert got is given[0]
    np.testing.assert_allclose(got, np.exp(values[0] / 10) * 2 + values[-1] / 10)


def test_equal_fused_ops_share_their_generated_body():
    # a long chain is cut into kernels of the same shape: each body is generated once
    x, y = pt.dvectors("x", "y")
    f = arignote.function([x, y], [pt.exp(x) * 2.0 + 1.0, pt.exp(y) * 2.0 + 1.0], mode="FAST_RUN")
    a, b = [n for n in f.maker.fgraph.toposort() if isinstance(n.op.scalar_op, Composite)]
    assert a.op is not b.op and a.op == b.op
    assert a.op.__dict__["_thunk_plans"] is b.op.__dict__["_thunk_plans"]
    v, w = np.array([0.5, -1.0]), np.array([2.0, 3.0])
    got = f(v, w)
    np.testing.assert_allclose(got[0], np.exp(v) * 2 + 1)
    np.testing.assert_allclose(got[1], np.exp(w) * 2 + 1)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_softplus_in_a_fused_body_is_numpy_s_vectorised_formula(dtype):
    x = pt.vector("x", dtype=dtype)
    f = arignote.function([x], pt.softplus(x) * 2 + x, mode="FAST_RUN")
    (node,) = f.maker.fgraph.toposort()
    assert isinstance(node.op.scalar_op, Composite)
    (inner,) = [n for n in node.op.scalar_op.body_nodes if isinstance(n.op, ps.Softplus)]
    assert _resolve_inner(inner) == ("call", _softplus)
    v = np.array([-800, -40, -1.5, -1e-8, 0, 1e-8, 0.3, 2, 40, 800, np.inf, -np.inf, np.nan], dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (no overflow: exp only sees -|x|)
        got = f(v)
    with np.errstate(invalid="ignore"):  # (logaddexp warns on nan)
        want = np.logaddexp(np.zeros((), dtype), v) * 2 + v
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=4 * np.finfo(dtype).eps, atol=0)
    # written into a target (in place) too
    out = np.empty_like(v)
    assert _softplus(v, out=out) is out
    np.testing.assert_array_equal(out, _softplus(v))


def test_one_element_constants_reach_numpy_as_0d_arrays():
    # (a length-1 dimension costs NumPy its broadcasting setup on every call)
    x, m = pt.dvector("x"), pt.dmatrix("m")
    for out, value, want in [
        (x + np.ones(1), np.arange(3.0), np.arange(3.0) + 1),
        (x * np.full(1, 2.0), np.array([4.0]), np.array([8.0])),  # shape (1,) kept
        (m - np.ones((1, 1)), np.ones((2, 3)), np.zeros((2, 3))),
    ]:
        node = out.owner
        storage = {v: [v.data if hasattr(v, "data") else None] for v in (*node.inputs, *node.outputs)}
        thunk = python_thunk(node.op, node, storage, None, [], None)
        assert [np.shape(c[0]) for c in thunk.inputs][1] == ()
        storage[node.inputs[0]][0] = value
        thunk()
        got = storage[node.outputs[0]][0]
        assert got.shape == want.shape
        np.testing.assert_array_equal(got, want)
    both = (pt.constant(np.ones(1)) + pt.constant(np.full(1, 2.0))).owner
    storage = {v: [getattr(v, "data", None)] for v in (*both.inputs, *both.outputs)}
    thunk = python_thunk(both.op, both, storage, None, [], None)
    assert all(np.shape(c[0]) == (1,) for c in thunk.inputs)  # only constants: kept as they are
    thunk()
    assert storage[both.outputs[0]][0].shape == (1,)
