"""In place: the increments of a gradient of many indexed terms become one chain written
into one buffer; nothing protected is overwritten; values equal the graph as written."""

from __future__ import annotations

import itertools
import tracemalloc

import numpy as np
import pytest

import arignote
import arignote.scalar as ps
import arignote.tensor as pt
from arignote.scalar.composite import Composite
from arignote.tensor.elemwise import Elemwise
from arignote.tensor.indexing.advanced import AdvancedIncSubtensor1
from arignote.tensor.indexing.basic import IncSubtensor
from arignote.tensor.rewriting.inplace import elemwise_inplace, inc_subtensor_inplace
from arignote.tensor.rewriting.subtensor import serialize_increments_into_zeros
from tests.modes import function  # FAST_RUN's rewrites, on the run's linker

UNREWRITTEN = arignote.Mode(optimizer=None)
INCREMENTS = (IncSubtensor, AdvancedIncSubtensor1)
RNG = np.random.default_rng(0)


def _increments(f):
    return [n for n in f.maker.fgraph.toposort() if isinstance(n.op, INCREMENTS)]


def test_the_rules_track_the_increments():
    assert set(inc_subtensor_inplace.tracks) >= {IncSubtensor, AdvancedIncSubtensor1}


def test_the_gradient_of_indexed_terms_is_one_chain_written_in_place():
    v = pt.dvector("v")
    places = [pt.lscalar(f"i{k}") for k in range(50)]  # symbolic: each its own increment
    cost = sum(v[i] * (k + 1) for k, i in enumerate(places))
    g = arignote.grad(cost, v)
    f = function([v, *places], g)
    incs = _increments(f)
    assert len(incs) == 50 and all(n.op.inplace for n in incs)
    for a, b in itertools.pairwise(incs):  # each increments the previous one's buffer
        assert b.inputs[0] is a.outputs[0]
    value = np.linspace(0.0, 1.0, 50)
    args = [value, *[np.int64(k % 7) for k in range(50)]]  # places named several times
    want = np.zeros(50)
    np.add.at(want, [k % 7 for k in range(50)], np.arange(1.0, 51.0))
    np.testing.assert_array_equal(f(*args), want)
    np.testing.assert_array_equal(f(*args), function([v, *places], g, mode=UNREWRITTEN)(*args))


def test_increments_at_constant_places_become_one_vectorized_increment():
    v = pt.dvector("v")
    cost = sum(v[i % 40 - 10] * (i + 1) for i in range(50))  # negative places, repeats
    g = arignote.grad(cost, v)
    f = function([v], g)
    (inc,) = _increments(f)
    assert isinstance(inc.op, AdvancedIncSubtensor1) and inc.op.inplace
    value = np.linspace(0.0, 1.0, 40)
    want = np.zeros(40)
    np.add.at(want, [i % 40 - 10 for i in range(50)], np.arange(1.0, 51.0))
    np.testing.assert_array_equal(f(value), want)
    np.testing.assert_array_equal(f(value), function([v], g, mode=UNREWRITTEN)(value))
    with pytest.raises(IndexError):  # a place out of range is still an error
        f(np.zeros(20))


def test_vectorized_increments_keep_the_other_terms_and_dtype():
    v = pt.fvector("v")
    w = pt.fvector("w")
    zeros = pt.zeros_like(v)
    terms = [
        pt.inc_subtensor(zeros[1], pt.constant(np.float32(2.0))),
        pt.inc_subtensor(zeros[-1], w[0]),
        pt.inc_subtensor(zeros[1], w[1]),
    ]
    out = pt.add(*terms, w)  # one sum of all the terms, as a gradient builds it
    f = function([v, w], out)
    (inc,) = _increments(f)
    assert isinstance(inc.op, AdvancedIncSubtensor1)
    vals = np.zeros(3, "float32"), np.array([1.0, 2.0, 3.0], "float32")
    got = f(*vals)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, function([v, w], out, mode=UNREWRITTEN)(*vals))


def test_serializing_keeps_the_other_terms():
    v, w = pt.dvector("v"), pt.dvector("w")
    out = pt.inc_subtensor(pt.zeros_like(v)[1], 2.0) + pt.inc_subtensor(pt.zeros_like(v)[[0, 0]], w[:2]) + w
    f = function([v, w], out)
    assert not [n for n in f.maker.fgraph.toposort() if type(n.op).__name__ == "Add"]
    vals = np.zeros(3), np.array([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(f(*vals), function([v, w], out, mode=UNREWRITTEN)(*vals))
    assert serialize_increments_into_zeros.name == "serialize_increments_into_zeros"


def test_set_subtensor_is_not_serialized():
    v = pt.dvector("v")
    out = pt.set_subtensor(pt.zeros_like(v)[[0, 0]], pt.as_tensor([1.0, 2.0])) + v
    f = function([v], out)
    np.testing.assert_array_equal(f(np.ones(2)), function([v], out, mode=UNREWRITTEN)(np.ones(2)))


def test_an_input_is_never_overwritten():
    x = pt.dvector("x")
    out = pt.inc_subtensor(x[0], 1.0)
    f = function([x], out)
    assert not any(n.op.inplace for n in _increments(f))
    value = np.zeros(3)
    f(value)
    assert value.tolist() == [0.0, 0.0, 0.0]


def test_an_intermediate_read_elsewhere_is_copied_first_or_ordered():
    x = pt.dvector("x")
    y = pt.exp(x)
    out = pt.inc_subtensor(y[0], 1.0) + y  # y is read by the add too
    f = function([x], out)
    value = np.zeros(3)
    np.testing.assert_allclose(f(value), [3.0, 2.0, 2.0])


def test_shared_variable_update_in_place_keeps_values():
    w = arignote.shared(np.zeros(4), name="w")
    i = pt.lscalar("i")
    f = function([i], [], updates={w: pt.inc_subtensor(w[i], 1.0)})
    f(1)
    f(1)
    f(3)
    np.testing.assert_array_equal(w.get_value(), [0.0, 2.0, 0.0, 1.0])


# -- elementwise nodes in place ---------------------------------------------------------------

NO_FUSION = arignote.get_mode("FAST_RUN").excluding("fusion")
NO_GC = arignote.Mode(linker="vm_nogc", optimizer="fast_run")


def _elemwise(f):
    return [n for n in f.maker.fgraph.toposort() if isinstance(n.op, Elemwise)]


def _same_as_unrewritten(inputs, outputs, values, mode=None, **kw):
    f = function(inputs, outputs, mode=mode, **kw)
    ref = function(inputs, outputs, mode=UNREWRITTEN, **kw)
    copies = [np.copy(v) for v in values]
    got, want = f(*values), ref(*values)
    for g, w in zip(got if isinstance(got, list) else [got], want if isinstance(want, list) else [want]):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-5 if g.dtype == np.float32 else 1e-12)
    for before, after in zip(copies, values):  # the caller's arrays are never overwritten
        np.testing.assert_array_equal(before, after)
    return f


def test_the_rule_tracks_elemwise_and_is_in_the_default_mode():
    assert Elemwise in set(elemwise_inplace.tracks)
    x = pt.dmatrix("x")
    f = function([x], pt.exp(x.sum(axis=0)) + 1.0)
    (node,) = _elemwise(f)
    assert dict(node.op.inplace_pattern) == {0: 0} and node.op.destroy_map == {0: [0]}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_an_unfused_chain_of_temporaries_reuses_one_buffer(dtype):
    x = pt.matrix("x", dtype=dtype)
    out = pt.exp(pt.log(x + 1) * 2)  # log(x + 1) -> log1p(x): a fresh array, then in place
    f = _same_as_unrewritten([x], out, [RNG.random((3, 4)).astype(dtype)], mode=NO_FUSION)
    first, *rest = _elemwise(f)
    assert not first.op.inplace_pattern  # it reads x, the caller's array
    assert rest and all(dict(n.op.inplace_pattern) == {0: 0} for n in rest)
    g = function([x], out, mode=NO_GC.excluding("fusion"))
    result = g(RNG.random((3, 4)).astype(dtype))
    cells = g.vm.storage_map
    first, *rest = _elemwise(g)
    assert all(cells[n.outputs[0]][0] is result for n in [first, *rest])  # one buffer


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_fused_chain_writes_into_its_temporary_input(dtype):
    x = pt.matrix("x", dtype=dtype)
    s = x.sum(axis=0)  # a temporary the fused node can take
    out = pt.exp(pt.log(s + 1) * 2)
    f = _same_as_unrewritten([x], out, [RNG.random((3, 4)).astype(dtype)])
    (fused,) = _elemwise(f)
    assert isinstance(fused.op.scalar_op, Composite) and fused.op.inplace_pattern == ((0, 0),)
    g = function([x], out, mode=NO_GC)
    result = g(RNG.random((3, 4)).astype(dtype))
    cells = g.vm.storage_map
    (node,) = _elemwise(g)
    assert cells[node.inputs[0]][0] is result  # the sum's buffer holds the result


def test_graph_inputs_are_never_overwritten():
    x, y = pt.dvector("x"), pt.dvector("y")
    f = _same_as_unrewritten([x, y], [pt.exp(x) * 2 + y, x * y], [RNG.random(5), RNG.random(5)])
    assert not any(n.op.inplace_pattern for n in _elemwise(f))
    g = _same_as_unrewritten([x], x + 1.0, [RNG.random(5)], mode=NO_FUSION)
    assert not any(n.op.inplace_pattern for n in _elemwise(g))


def test_a_returned_value_is_not_overwritten_even_if_read_again():
    x = pt.dmatrix("x")
    y = pt.exp(x.sum(axis=0))
    f = _same_as_unrewritten([x], [y, y * 2, y + 1], [RNG.random((3, 4))], mode=NO_FUSION)
    (exp_node,) = [n for n in _elemwise(f) if str(n.op).startswith("Exp")]
    readers = [n for n in _elemwise(f) if exp_node.outputs[0] in n.inputs]
    assert len(readers) == 2 and not any(n.op.inplace_pattern for n in readers)
    assert exp_node.op.inplace_pattern  # the sum's temporary is not returned


def test_the_same_output_returned_twice_is_not_overwritten():
    x = pt.dmatrix("x")
    y = pt.exp(x.sum(axis=0))
    f = _same_as_unrewritten([x], [y, y, pt.sqrt(y)], [RNG.random((3, 4))], mode=NO_FUSION)
    (sqrt,) = [n for n in _elemwise(f) if str(n.op).startswith("Sqrt")]
    assert not sqrt.op.inplace_pattern


def test_shared_values_are_not_overwritten_and_updates_stay_right():
    w = arignote.shared(np.arange(1.0, 5.0), name="w")
    x = pt.dmatrix("x")
    f = function([x], [w * 2, x.sum(axis=0) + w])
    w_in = f.maker.fgraph.inputs[1]  # w's value, an input of the compiled graph
    targets = [n.inputs[i] for n in _elemwise(f) for _, i in n.op.inplace_pattern]
    assert targets and w_in not in targets  # the sum's temporary, never w
    xv = RNG.random((4, 4))
    a, b = f(xv)
    np.testing.assert_array_equal(w.get_value(), np.arange(1.0, 5.0))
    np.testing.assert_allclose(a, np.arange(1.0, 5.0) * 2)
    np.testing.assert_allclose(b, xv.sum(axis=0) + np.arange(1.0, 5.0))
    # an update is state the function owns: computing it in place keeps the values right
    v = arignote.shared(np.ones(3), name="v")
    g = function([], v * 3, updates={v: pt.exp(v) * 2})
    for _ in range(3):
        before = v.get_value()
        np.testing.assert_allclose(g(), before * 3)
        np.testing.assert_allclose(v.get_value(), np.exp(before) * 2)


def test_a_value_read_after_the_candidate_is_not_overwritten():
    x = pt.dmatrix("x")
    y = pt.exp(x.sum(axis=0))
    z = y + 1.0
    out = y * z  # the multiplication reads y and needs z: the addition cannot overwrite y
    f = _same_as_unrewritten([x], out, [RNG.random((3, 4))], mode=NO_FUSION)
    (add,) = [n for n in _elemwise(f) if str(n.op).startswith("Add")]
    (mul,) = [n for n in _elemwise(f) if str(n.op).startswith("Mul")]
    assert not add.op.inplace_pattern
    assert mul.op.inplace_pattern  # the last reader may
    order = f.maker.fgraph.toposort()
    assert order.index(add) < order.index(mul)


@pytest.mark.parametrize("dtype", ["int8", "int32", "int64", "uint16"])
def test_integer_chains(dtype):
    x = pt.matrix("x", dtype=dtype)
    s = x.sum(axis=0, dtype=dtype)
    out = (s * 3 + 1) // 2 - s % 3
    f = _same_as_unrewritten([x], out, [RNG.integers(0, 5, (3, 4)).astype(dtype)])
    (node,) = _elemwise(f)
    # uint16 * int8 is int32: the sum's buffer is of another dtype
    assert node.op.inplace_pattern == (((0, 0),) if out.dtype == dtype else ())
    g = _same_as_unrewritten([x], out, [RNG.integers(0, 5, (3, 4)).astype(dtype)], mode=NO_FUSION)
    assert any(n.op.inplace_pattern for n in _elemwise(g))  # (the int32 temporaries, for uint16)


def test_broadcast_and_other_dtype_inputs_are_refused():
    x = pt.dmatrix("x")
    row = x.sum(axis=0)  # (n,): broadcast along the rows of the output
    m = pt.exp(x)
    f = _same_as_unrewritten([x], row + x, [RNG.random((3, 4))], mode=NO_FUSION)
    assert not any(n.op.inplace_pattern for n in _elemwise(f))  # x is an input, row broadcasts
    g = _same_as_unrewritten([x], row + m, [RNG.random((3, 4))], mode=NO_FUSION)
    (add,) = [n for n in _elemwise(g) if str(n.op).startswith("Add")]
    assert dict(add.op.inplace_pattern) == {0: 1}  # m, not the broadcast row
    col = x.sum(axis=1, keepdims=True)  # (n, 1): static 1 where the output is not
    h = _same_as_unrewritten([x], pt.exp(col) + m, [RNG.random((3, 4))], mode=NO_FUSION)
    (add,) = [n for n in _elemwise(h) if str(n.op).startswith("Add")]
    assert add.inputs[0].type.shape == (None, 1) and dict(add.op.inplace_pattern) == {0: 1}
    n = pt.lmatrix("n")
    ints = n.sum(axis=0)  # int64, the output float64
    k = _same_as_unrewritten([n], ints * 0.5, [RNG.integers(0, 9, (3, 4))], mode=NO_FUSION)
    assert not any(node.op.inplace_pattern for node in _elemwise(k))


def test_a_constant_is_never_overwritten():
    x = pt.dmatrix("x")
    c = pt.constant(np.arange(4.0))
    s = x.sum(axis=0)
    out = Elemwise(ps.add)(c, s)  # the constant comes first: the rule skips it
    f = _same_as_unrewritten([x], out, [RNG.random((3, 4))], mode=NO_FUSION)
    (node,) = [n for n in _elemwise(f) if str(n.op).startswith("Add")]
    # s, of unknown length, takes the length-4 output (the runtime check makes it 4)
    assert dict(node.op.inplace_pattern) == {0: 1} and node.outputs[0].type.shape == (4,)
    np.testing.assert_array_equal(c.data, np.arange(4.0))
    f(RNG.random((3, 4)))
    np.testing.assert_array_equal(c.data, np.arange(4.0))


def test_a_multi_output_fused_node_writes_each_output_into_its_own_input():
    x, y = pt.dmatrix("x"), pt.dmatrix("y")
    a, b = x.sum(axis=0), y.sum(axis=0)
    e = pt.exp(a)
    f = _same_as_unrewritten([x, y], [e + b, e * b], [RNG.random((3, 4)), RNG.random((3, 4))])
    (fused,) = _elemwise(f)
    assert fused.op.nout == 2
    targets = [i for _, i in fused.op.inplace_pattern]
    assert fused.op.inplace_pattern == ((0, 0), (1, 1)) and len(set(targets)) == len(targets)
    # the same temporary twice: one output takes it, the other allocates
    s = x.sum(axis=0)
    g = _same_as_unrewritten([x], [pt.exp(s) + s, pt.exp(s) * s], [RNG.random((3, 4))])
    (fused,) = _elemwise(g)
    assert len(fused.op.inplace_pattern) <= 1


def test_a_multi_output_body_reading_the_input_later_keeps_it():
    x = pt.dmatrix("x")
    s = x.sum(axis=0)
    t = x.max(axis=0)
    first = pt.exp(s) * t
    second = pt.log1p(s) + first  # reads s after the first output: s cannot take the first
    f = _same_as_unrewritten([x], [first, second], [RNG.random((3, 4))])
    for node in _elemwise(f):
        if node.op.nout == 2:
            comp = node.op.scalar_op
            order = comp.fgraph.toposort()
            for k, i in node.op.inplace_pattern:
                step = comp.inner_outputs[k].owner
                later = order[order.index(step) + 1 :]
                assert not any(comp.inner_inputs[i] in n.inputs for n in later)


def test_random_chains_equal_the_unrewritten_graph():
    x, y = pt.dmatrix("x"), pt.dmatrix("y")
    s, t = x.sum(axis=0), (x * y).sum(axis=0)
    unary = [pt.sigmoid, pt.tanh, pt.sin, lambda v: v * 1.5, lambda v: v - 0.25, pt.sqr]
    rng = np.random.default_rng(7)
    for mode in (None, NO_FUSION):
        for _ in range(8):
            v, w = s, t
            for _ in range(4):
                v = unary[rng.integers(len(unary))](v)
                if rng.random() < 0.5:
                    v, w = v + w, v * w
            _same_as_unrewritten([x, y], [v, w + 1.0], [RNG.random((3, 4)), RNG.random((3, 4))], mode=mode)


def test_a_fused_chain_in_place_allocates_nothing_but_the_value_it_overwrites():
    x = pt.dmatrix("x")
    out = pt.exp(pt.log(x.sum(axis=0) + 1) * 2)
    n = 200_000
    value = RNG.random((1, n))
    peaks = []
    # (FAST_RUN's runner, node by node: the NUMBA mode's whole-graph function peaks at two
    # arrays here)
    for mode in (arignote.get_mode("FAST_RUN"), arignote.get_mode("FAST_RUN").excluding("inplace")):
        f = function([x], out, mode=mode)
        np.testing.assert_allclose(f(value), np.exp(np.log(value.sum(axis=0) + 1) * 2))
        tracemalloc.start()
        f(value)
        peaks.append(tracemalloc.get_traced_memory()[1] / (n * 8))
        tracemalloc.stop()
    # in place: the sum's result only; else a fresh array per step of the fused body
    assert peaks[0] < 1.5 and peaks[1] > 2.5


def test_a_mutable_input_may_be_overwritten_and_only_it():
    from arignote import In

    x, y = pt.dvectors("x", "y")
    # (FAST_RUN's runner, node by node: a whole-graph Numba function never writes its inputs)
    f = function([In(x, mutable=True), y], [pt.exp(x) * 2, pt.exp(y) * 2], mode="FAST_RUN")
    fused = [n for n in f.maker.fgraph.toposort() if isinstance(n.op, Elemwise)]
    assert len(fused) == 2
    (on_x,) = [n for n in fused if n.inputs[0] is f.maker.fgraph.inputs[0]]
    (on_y,) = [n for n in fused if n.inputs[0] is f.maker.fgraph.inputs[1]]
    assert dict(on_x.op.inplace_pattern) == {0: 0} and not on_y.op.inplace_pattern
    xv, yv = np.array([0.0, 1.0]), np.array([0.5, -1.0])
    yv_before = yv.copy()
    out_x, out_y = f(xv, yv)
    np.testing.assert_allclose(out_x, np.exp([0.0, 1.0]) * 2)
    np.testing.assert_allclose(out_y, np.exp(yv_before) * 2)
    np.testing.assert_array_equal(xv, out_x)  # the caller allowed it: x holds the result
    np.testing.assert_array_equal(yv, yv_before)  # y was not given as mutable: untouched


def test_a_merge_never_returns_a_value_that_a_node_overwrites():
    # x**3 becomes x * sqr(x), written into its sqr(x); the x**2 output is an equal sqr(x):
    # merging the two would return the overwritten buffer (found by the fuzz test)
    x = pt.dmatrix("x")
    mode = arignote.Mode(optimizer="fast_run").excluding("fusion")
    f = function([x], [x, x**3, x**2], mode=mode)
    v = np.arange(12.0).reshape(3, 4) / 10
    got = f(v)
    np.testing.assert_allclose(got[1], v**3)
    np.testing.assert_allclose(got[2], v**2)
    destroyed = {
        n.inputs[i]
        for n in f.maker.fgraph.apply_nodes
        for i in dict(getattr(n.op, "inplace_pattern", ())).values()
    }
    assert not destroyed & set(f.maker.fgraph.outputs)
