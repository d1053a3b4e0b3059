"""ifelse / IfElse: values against a Python ``if``, laziness (only the taken branch runs,
counted through ``arignote.function``), errors, shapes, and the VM's lazy path."""

from __future__ import annotations

import pickle
from collections import Counter

import numpy as np
import pytest

import arignote
import arignote.tensor as pt
from arignote.compile.mode import Mode
from arignote.configdefaults import config
from arignote.graph.basic import Apply, Constant
from arignote.graph.fg import FunctionGraph
from arignote.graph.op import Op
from arignote.ifelse import IfElse, ifelse
from arignote.link.vm import VM, VMLinker
from tests.tensor.utils import assert_infer_shape

CALLS: Counter = Counter()


@pytest.fixture(autouse=True)
def _reset_calls():
    CALLS.clear()
    yield
    CALLS.clear()


class Count(Op):
    """Identity that counts its runs under its ``tag`` (stands for an expensive node)."""

    __props__ = ("tag",)

    def __init__(self, tag: str):
        self.tag = tag

    def make_node(self, x):
        x = pt.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        CALLS[self.tag] += 1
        output_storage[0][0] = np.array(inputs[0], copy=True)


class Boom(Op):
    """Fails whenever it runs: a branch holding it must never be computed."""

    __props__ = ()

    def make_node(self, x):
        x = pt.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        raise RuntimeError("Boom ran")


def count(x, tag):
    return Count(tag)(x)


def python_if(cond, a, b):
    return a if cond else b


# --- values --------------------------------------------------------------------------------

DTYPES = ["float64", "float32", "int64", "int32", "int8", "uint16", "bool", "complex128"]
SHAPES = [(), (3,), (2, 3), (0, 4), (2, 1, 3)]


def _value(rng, dtype, shape):
    if dtype == "bool":
        return rng.random(shape) > 0.5
    if dtype.startswith("complex"):
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    if dtype.startswith(("int", "uint")):
        return rng.integers(0, 100, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_values_match_python_if(dtype, shape):
    rng = np.random.default_rng(len(shape) * 31 + DTYPES.index(dtype))
    c = pt.scalar("c", dtype="int8")
    a = pt.tensor("a", dtype=dtype, shape=(None,) * len(shape))
    b = pt.tensor("b", dtype=dtype, shape=(None,) * len(shape))
    out = ifelse(c, a, b)
    assert out.type == a.type
    f = arignote.function([c, a, b], out)
    va, vb = _value(rng, dtype, shape), _value(rng, dtype, shape)
    for cond in (1, 0, -3):
        got = f(cond, va, vb)
        want = python_if(cond, va, vb)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)


def test_branches_are_expressions():
    c = pt.dscalar("c")
    x = pt.dmatrix("x")
    y = pt.dvector("y")
    out = ifelse(pt.gt(c, 0), pt.exp(x) + y, x.T.dot(pt.ones_like(x)))
    f = arignote.function([c, x, y], out)
    vx = np.arange(6.0).reshape(2, 3) / 10
    vy = np.array([1.0, 2.0, 3.0])
    for cv in (1.5, -1.0):
        want = np.exp(vx) + vy if cv > 0 else vx.T @ np.ones((2, 3))
        got = f(cv, vx, vy)
        if want.shape != got.shape:  # x.T @ ones(2, 3) is (3, 3): shapes differ per branch
            assert cv <= 0
        np.testing.assert_allclose(got, want)


def test_runtime_shapes_may_differ_between_branches():
    c = pt.iscalar("c")
    x = pt.dvector("x")
    out = ifelse(c, x, pt.concatenate([x, x]))
    f = arignote.function([c, x], out)
    v = np.array([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(f(1, v), v)
    np.testing.assert_array_equal(f(0, v), np.concatenate([v, v]))


def test_list_and_tuple_of_outputs():
    c = pt.bscalar("c")
    x = pt.dvector("x")
    n = pt.lscalar("n")
    outs = ifelse(c, [x * 2, n + 1], [x - 1, n * 3])
    assert isinstance(outs, list) and len(outs) == 2
    assert outs[0].type.dtype == "float64" and outs[1].type.dtype == "int64"
    touts = ifelse(c, (x, n), (x + 1, n))
    assert isinstance(touts, tuple) and len(touts) == 2
    f = arignote.function([c, x, n], [*outs, *touts])
    v = np.array([1.0, 2.0])
    r = f(1, v, 5)
    np.testing.assert_array_equal(r[0], v * 2)
    assert int(r[1]) == 6
    np.testing.assert_array_equal(r[2], v)
    assert int(r[3]) == 5
    r = f(0, v, 5)
    np.testing.assert_array_equal(r[0], v - 1)
    assert int(r[1]) == 15
    np.testing.assert_array_equal(r[2], v + 1)


def test_single_values_given_as_one_element_lists():
    c = pt.iscalar("c")
    x = pt.dvector("x")
    out = ifelse(c, x, [x + 1])
    assert not isinstance(out, list)
    assert isinstance(ifelse(c, [x], [x + 1]), list)


@pytest.mark.parametrize(
    "dtype, true_values, false_values",
    [
        ("bool", [True], [False]),
        ("int8", [1, -1, 127], [0]),
        ("uint8", [1, 255], [0]),
        ("int64", [2**40, -5], [0]),
        ("float32", [0.5, -1e-30, np.inf], [0.0, -0.0]),
        ("float64", [1e-300, np.nan, -np.inf], [0.0, -0.0]),
        ("complex128", [1j, 1 + 0j], [0j]),
    ],
)
def test_condition_dtypes(dtype, true_values, false_values):
    c = pt.scalar("c", dtype=dtype)
    x = pt.dvector("x")
    f = arignote.function([c, x], ifelse(c, x + 1, x - 1))
    v = np.array([10.0])
    for cv in true_values:
        np.testing.assert_array_equal(f(np.asarray(cv, dtype=dtype), v), [11.0])
    for cv in false_values:
        np.testing.assert_array_equal(f(np.asarray(cv, dtype=dtype), v), [9.0])


@pytest.mark.parametrize("cond, want", [(True, 1.0), (False, -1.0), (1, 1.0), (0, -1.0), (0.25, 1.0)])
def test_python_scalar_conditions(cond, want):
    x = pt.dscalar("x")
    out = ifelse(cond, x + 1, x - 1)
    assert isinstance(out.owner.inputs[0], Constant)
    assert float(out.eval({x: 0.0})) == want


def test_condition_from_comparison_and_reduction():
    x = pt.dvector("x")
    out = ifelse(pt.all(pt.gt(x, 0)), pt.log(x), pt.zeros_like(x))
    f = arignote.function([x], out)
    np.testing.assert_allclose(f([1.0, np.e]), [0.0, 1.0])
    np.testing.assert_array_equal(f([1.0, -2.0]), [0.0, 0.0])


def test_literal_branch_takes_the_other_branch_dtype():
    c = pt.iscalar("c")
    x = pt.dvector("x")
    i = pt.ivector("i")
    out = ifelse(c, pt.sum(x), 0)
    assert out.type.dtype == "float64" and out.type.ndim == 0
    assert float(out.eval({c: 0, x: [1.0, 2.0]})) == 0.0
    assert ifelse(c, x, np.array([0.5, 1.0])).type == pt.TensorType("float64", (None,))
    assert ifelse(c, 7, pt.max(i)).type.dtype == "int32"
    assert ifelse(c, 2, 0.5).type.dtype == "float32"  # two literals: their common dtype
    assert ifelse(c, True, np.bool_(False)).type.dtype == "bool"
    with pytest.raises(TypeError, match="int32 and float32"):
        ifelse(c, pt.max(i), 0.5)  # 0.5 is no int32: the dtypes differ, and the error says so
    with pytest.raises(TypeError, match="0 and 1 dimensions"):
        ifelse(c, 0, x)


# --- static types --------------------------------------------------------------------------


def test_output_type_joins_static_shapes():
    c = pt.iscalar("c")
    a = pt.tensor("a", shape=(2, None, 3))
    b = pt.tensor("b", shape=(2, 4, None))
    out = ifelse(c, a, b)
    assert out.type == pt.TensorType("float64", (2, None, None))
    same = ifelse(c, a, a + 1)
    assert same.type.shape == (2, None, 3)
    bc = ifelse(c, pt.tensor("p", shape=(1, 5)), pt.tensor("q", shape=(3, 5)))
    assert bc.type.shape == (None, 5) and bc.type.broadcastable == (False, False)


def test_different_static_shapes_run():
    c = pt.iscalar("c")
    a = pt.tensor("a", shape=(2, 3))
    b = pt.tensor("b", shape=(4, 3))
    f = arignote.function([c, a, b], ifelse(c, a, b))
    va, vb = np.ones((2, 3)), np.zeros((4, 3))
    assert f(1, va, vb).shape == (2, 3)
    assert f(0, va, vb).shape == (4, 3)


# --- laziness ------------------------------------------------------------------------------


def test_only_the_taken_branch_runs():
    c = pt.iscalar("c")
    x = pt.dvector("x")
    out = ifelse(c, count(x, "then") * 2, count(x, "else") + 1)
    f = arignote.function([c, x], out)
    v = np.array([1.0, 2.0])
    np.testing.assert_array_equal(f(1, v), v * 2)
    assert CALLS == {"then": 1}
    np.testing.assert_array_equal(f(0, v), v + 1)
    assert CALLS == {"then": 1, "else": 1}
    for _ in range(3):
        f(0, v)
    assert CALLS == {"then": 1, "else": 4}


def test_untaken_failing_branch_never_runs():
    c = pt.iscalar("c")
    x = pt.dvector("x")
    f = arignote.function([c, x], ifelse(c, x + 1, Boom()(x)))
    np.testing.assert_array_equal(f(1, [1.0]), [2.0])
    with pytest.raises(RuntimeError, match="Boom ran"):
        f(0, [1.0])


def test_condition_subgraph_runs_once_and_first():
    c = pt.dscalar("c")
    x = pt.dvector("x")
    out = ifelse(count(c, "cond"), count(x, "then"), count(x, "else"))
    f = arignote.function([c, x], out)
    f(1.0, [1.0])
    assert CALLS == {"cond": 1, "then": 1}


def test_expensive_chain_in_untaken_branch():
    c = pt.iscalar("c")
    x = pt.dvector("x")
    deep = x
    for k in range(50):
        deep = count(deep, f"deep{k}") + 1
    f = arignote.function([c, x], ifelse(c, count(x, "cheap"), deep))
    f(1, np.zeros(3))
    assert CALLS == {"cheap": 1}
    np.testing.assert_array_equal(f(0, np.zeros(3)), np.full(3, 50.0))
    assert sum(v for k, v in CALLS.items() if k.startswith("deep")) == 50


@pytest.mark.parametrize("outer, inner", [(1, 1), (1, 0), (0, 1), (0, 0)])
def test_nested_ifelse(outer, inner):
    a = pt.iscalar("a")
    b = pt.iscalar("b")
    x = pt.dvector("x")
    inner_then = ifelse(b, count(x, "tt") + 1, count(x, "tf") + 2)
    inner_else = ifelse(b, count(x, "ft") + 3, count(x, "ff") + 4)
    f = arignote.function([a, b, x], ifelse(a, inner_then, inner_else))
    got = f(outer, inner, np.zeros(2))
    want = {(1, 1): 1, (1, 0): 2, (0, 1): 3, (0, 0): 4}[(outer, inner)]
    np.testing.assert_array_equal(got, [want, want])
    tag = ("t" if outer else "f") + ("t" if inner else "f")
    assert dict(CALLS) == {tag: 1}


def test_nested_in_condition_position():
    a = pt.iscalar("a")
    x = pt.dvector("x")
    cond = ifelse(a, pt.constant(np.int8(0)), pt.constant(np.int8(1)))
    f = arignote.function([a, x], ifelse(cond, count(x, "then"), count(x, "else")))
    f(1, [1.0])
    assert CALLS == {"else": 1}
    f(0, [1.0])
    assert CALLS == {"else": 1, "then": 1}


def test_shared_subexpression_between_branches_is_computed_once():
    c = pt.iscalar("c")
    x = pt.dvector("x")
    s = count(x, "shared")
    out = ifelse(c, count(s, "then") * 2, count(s, "else") + 1)
    f = arignote.function([c, x], out)
    v = np.array([3.0])
    np.testing.assert_array_equal(f(1, v), [6.0])
    assert CALLS == {"shared": 1, "then": 1}
    np.testing.assert_array_equal(f(0, v), [4.0])
    assert CALLS == {"shared": 2, "then": 1, "else": 1}


def test_merged_duplicate_subexpressions_run_once():
    c = pt.iscalar("c")
    x = pt.dvector("x")
    # two separately built but equal nodes: merged by the compiler into one
    out = ifelse(c, count(x, "dup") * 2, count(x, "dup") + 1)
    f = arignote.function([c, x], out)
    assert sum(isinstance(n.op, Count) for n in f.maker.fgraph.apply_nodes) == 1
    f(0, [1.0])
    assert CALLS == {"dup": 1}


def test_ifelse_inside_a_larger_graph():
    c = pt.iscalar("c")
    x = pt.dvector("x")
    s = count(x, "s")
    picked = ifelse(c, count(s, "then") + 1, count(s, "else") * 3)
    total = pt.sum(picked * s) + pt.sum(s)  # s also used outside the ifelse
    f = arignote.function([c, x], [total, picked])
    v = np.array([1.0, 2.0])
    t, p = f(1, v)
    np.testing.assert_allclose(t, np.sum((v + 1) * v) + v.sum())
    np.testing.assert_array_equal(p, v + 1)
    assert CALLS == {"s": 1, "then": 1}
    t, p = f(0, v)
    np.testing.assert_allclose(t, np.sum(v * 3 * v) + v.sum())
    assert CALLS == {"s": 2, "then": 1, "else": 1}


def test_untaken_branch_needed_by_another_output_is_computed():
    c = pt.iscalar("c")
    x = pt.dvector("x")
    e = count(x, "else") + 1
    f = arignote.function([c, x], [ifelse(c, count(x, "then"), e), e])
    r = f(1, np.array([1.0]))
    np.testing.assert_array_equal(r[0], [1.0])
    np.testing.assert_array_equal(r[1], [2.0])
    assert CALLS == {"then": 1, "else": 1}


def test_two_ifelses_on_one_condition():
    c = pt.iscalar("c")
    x = pt.dvector("x")
    o1 = ifelse(c, count(x, "a"), count(x, "b"))
    o2 = ifelse(pt.eq(c, 0), count(x, "c"), count(x, "d"))
    f = arignote.function([c, x], o1 + o2)
    f(1, [1.0])
    assert CALLS == {"a": 1, "d": 1}


def test_updates_through_ifelse():
    acc = arignote.shared(np.float64(1.0), name="acc")
    c = pt.iscalar("c")
    step = arignote.function([c], acc, updates={acc: ifelse(c, count(acc, "double") * 2, acc - 1)})
    seen = [float(step(k)) for k in (1, 1, 0, 1)]
    assert seen == [1.0, 2.0, 4.0, 3.0]
    assert float(acc.get_value()) == 6.0
    assert CALLS == {"double": 3}


@pytest.mark.parametrize("mode", ["FAST_RUN", "FAST_COMPILE", Mode(linker="vm_nogc"), Mode(optimizer=None)])
def test_modes_agree_and_stay_lazy(mode):
    c = pt.iscalar("c")
    x = pt.dvector("x")
    f = arignote.function([c, x], pt.sum(ifelse(c, count(x, "then") ** 2, count(x, "else") - 1)), mode=mode)
    v = np.array([1.0, 2.0, 3.0])
    assert float(f(1, v)) == 14.0
    assert float(f(0, v)) == 3.0
    assert CALLS == {"then": 1, "else": 1}


def test_eval_of_an_ifelse():
    c = pt.iscalar("c")
    x = pt.dvector("x")
    out = ifelse(c, count(x, "then") + 1, count(x, "else") - 1)
    np.testing.assert_array_equal(out.eval({c: 1, x: [1.0, 2.0]}), [2.0, 3.0])
    np.testing.assert_array_equal(out.eval({c: 0, x: [1.0, 2.0]}), [0.0, 1.0])
    assert CALLS == {"then": 1, "else": 1}
    assert float(ifelse(np.int8(1), pt.constant(2.0), pt.constant(3.0)).eval()) == 2.0


# --- outputs are copies (or views with as_view) ---------------------------------------------


def test_output_is_not_aliased_to_an_input():
    c = pt.iscalar("c")
    x = pt.dvector("x")
    f = arignote.function([c, x], ifelse(c, x, x + 1))
    v = np.array([1.0, 2.0])
    out = f(1, v)
    assert not np.may_share_memory(out, v)
    v[0] = 100.0
    assert out[0] == 1.0


def test_perform_copies_unless_as_view():
    c = pt.iscalar("c")
    x, y = pt.dvector("x"), pt.dvector("y")
    vx, vy = np.array([1.0]), np.array([2.0])
    for op, views_then in ((IfElse(1), False), (IfElse(1, as_view=True), True)):
        node = op.make_node(c, x, y)
        store = [[None]]
        op.perform(node, [np.int32(1), vx, vy], store)
        assert (store[0][0] is vx) == views_then
        np.testing.assert_array_equal(store[0][0], vx)
        op.perform(node, [np.int32(0), vx, vy], store)
        assert store[0][0] is not vy  # the else values are always copied
        np.testing.assert_array_equal(store[0][0], vy)
    assert IfElse(2, as_view=True).view_map == {0: [1], 1: [2]}
    assert IfElse(2).view_map == {}


def test_as_view_through_function():
    c = pt.iscalar("c")
    x = pt.dvector("x")
    out = IfElse(1, as_view=True)(c, x * 2, x + 1)
    f = arignote.function([c, x], out)
    np.testing.assert_array_equal(f(1, [1.0]), [2.0])
    np.testing.assert_array_equal(f(0, [1.0]), [2.0])


# --- the Op --------------------------------------------------------------------------------


def test_op_props_equality_and_str():
    assert IfElse.__props__ == ("as_view", "n_outs")
    assert IfElse(2) == IfElse(2, name="other") and hash(IfElse(2)) == hash(IfElse(2, name="x"))
    assert IfElse(2) != IfElse(3) and IfElse(1) != IfElse(1, as_view=True)
    assert str(IfElse(1)) == "if{}"
    assert str(IfElse(1, name="pick")) == "if{pick}"
    assert str(IfElse(1, as_view=True, name="pick")) == "if{pick,inplace}"
    assert pickle.loads(pickle.dumps(IfElse(2, name="p"))) == IfElse(2)
    with pytest.raises(TypeError, match="n_outs"):
        IfElse(-1)
    with pytest.raises(TypeError, match="n_outs"):
        IfElse(1.5)


def test_make_node_inputs_order_and_rebuild():
    c = pt.iscalar("c")
    a, b, p, q = pt.dvectors("a", "b", "p", "q")
    node = IfElse(2).make_node(c, a, b, p, q)
    assert node.inputs == [c, a, b, p, q]
    again = node.op.make_node(*node.inputs)
    assert [o.type for o in again.outputs] == [o.type for o in node.outputs]


def test_ifelse_name_labels_the_op():
    c = pt.iscalar("c")
    x = pt.dvector("x")
    out = ifelse(c, x, x + 1, name="pick")
    assert out.owner.op.name == "pick" and str(out.owner.op) == "if{pick}"


def test_connection_pattern():
    c = pt.iscalar("c")
    a, b, p, q = pt.dvectors("a", "b", "p", "q")
    node = IfElse(2).make_node(c, a, b, p, q)
    assert node.op.connection_pattern(node) == [
        [True, True],
        [True, False],
        [False, True],
        [True, False],
        [False, True],
    ]


def test_top_level_export():
    assert arignote.ifelse is ifelse
    assert "ifelse" in arignote.__all__


# --- errors --------------------------------------------------------------------------------


def test_non_scalar_condition():
    x = pt.dvector("x")
    with pytest.raises(TypeError, match=r"condition of ifelse must be a scalar.*1-d"):
        ifelse(x, x, x)
    with pytest.raises(TypeError, match="condition of ifelse must be a scalar"):
        ifelse(np.array([1, 0]), x, x)


def test_mismatched_branch_dtypes_name_both():
    c = pt.iscalar("c")
    x = pt.dvector("x")
    i = pt.ivector("i")
    with pytest.raises(TypeError, match=r"float64.*int32|int32.*float64") as err:
        ifelse(c, x, i)
    assert "then" in str(err.value) and "else" in str(err.value)
    assert "x" in str(err.value) and "i" in str(err.value)


def test_mismatched_branch_ndim():
    c = pt.iscalar("c")
    with pytest.raises(TypeError, match="1 and 2 dimensions"):
        ifelse(c, pt.dvector("v"), pt.dmatrix("m"))
    with pytest.raises(TypeError, match="output 1"):
        ifelse(c, [pt.dvector(), pt.dvector()], [pt.dvector(), pt.dscalar()])


def test_different_numbers_of_outputs():
    c = pt.iscalar("c")
    x = pt.dvector("x")
    with pytest.raises(ValueError, match="2 value.*1"):
        ifelse(c, [x, x], [x])
    with pytest.raises(ValueError, match="takes a condition and 4 branch values"):
        IfElse(2)(c, x, x, x)


def test_non_tensor_branch_types():
    from arignote.scalar.type import ScalarType

    c = pt.iscalar("c")
    s, t = ScalarType("float64")("s"), ScalarType("float64")("t")
    out = ifelse(c, s, t)
    assert out.type == ScalarType("float64")
    f = arignote.function([c, s, t], out)
    assert float(f(1, 2.0, 3.0)) == 2.0 and float(f(0, 2.0, 3.0)) == 3.0
    with pytest.raises(TypeError, match="incompatible Types"):
        ifelse(c, s, pt.dscalar())


# --- shapes --------------------------------------------------------------------------------


@pytest.mark.parametrize("cond", [1, 0])
def test_infer_shape(cond):
    c = pt.iscalar("c")
    a = pt.dmatrix("a")
    b = pt.tensor("b", shape=(None, 3))
    x = pt.dvector("x")
    out = ifelse(c, [a, pt.concatenate([x, x])], [b, x])
    givens = {c: cond, a: np.ones((4, 3)), b: np.ones((2, 3)), x: np.arange(5.0)}
    assert_infer_shape(out[0], givens)
    assert_infer_shape(out[1], givens)


def test_infer_shape_keeps_agreeing_lengths_and_stays_lazy():
    c = pt.iscalar("c")
    a = pt.tensor("a", shape=(2, None))
    b = pt.tensor("b", shape=(2, None))
    x = pt.dvector("x")
    node = ifelse(c, a, b).owner
    shapes = node.op.infer_shape(None, node, [(), (2, pt.shape_i(a, 1)), (2, pt.shape_i(b, 1))])
    assert shapes[0][0] == 2
    chooser = shapes[0][1].owner
    assert isinstance(chooser.op, IfElse) and chooser.inputs[0] is c
    assert str(chooser.op) == "if{shape}"
    same = ifelse(c, x, x * 2).owner
    n = pt.shape_i(x, 0)
    assert same.op.infer_shape(None, same, [(), (n,), (n,)]) == [(n,)]
    # the shape of the untaken branch is not computed either
    lazy = ifelse(c, count(x, "then"), count(x, "else")).owner
    (dims,) = lazy.op.infer_shape(None, lazy, [(), (pt.shape_i(lazy.inputs[1], 0),), (3,)])
    assert int(dims[0].eval({c: 0, x: np.zeros(7)})) == 3
    assert CALLS == {}
    assert int(dims[0].eval({c: 1, x: np.zeros(7)})) == 7
    assert CALLS == {"then": 1}


def test_infer_shape_of_scalars_and_non_tensors():
    from arignote.scalar.type import ScalarType

    c = pt.iscalar("c")
    node = ifelse(c, [pt.dscalar(), ScalarType("int8")()], [pt.dscalar(), ScalarType("int8")()])[0].owner
    assert node.op.infer_shape(None, node, [(), (), None, (), None]) == [(), None]


# --- the VM: fast path without lazy ops, lazy path with them ------------------------------


def test_graph_without_lazy_ops_runs_the_fast_path(monkeypatch):
    x = pt.dvector("x")
    f = arignote.function([x], pt.exp(x) + 1)
    assert f.vm.lazy is False

    def forbidden(self):
        raise AssertionError("the lazy path ran for a graph without lazy ops")

    monkeypatch.setattr(VM, "_run_lazy", forbidden)
    np.testing.assert_allclose(f([0.0]), [2.0])
    c = pt.iscalar("c")
    g = arignote.function([c, x], ifelse(c, x, x + 1))
    assert g.vm.lazy is True
    with pytest.raises(AssertionError, match="lazy path ran"):
        g(1, [0.0])


def test_thunk_without_compute_map_is_the_non_lazy_perform_thunk():
    c = pt.iscalar("c")
    x, y = pt.dvector("x"), pt.dvector("y")
    node = IfElse(1).make_node(c, x, y)
    storage = {v: [None] for v in (*node.inputs, *node.outputs)}
    storage[c][0], storage[x][0], storage[y][0] = np.int32(0), np.array([1.0]), np.array([2.0])
    thunk = node.op.make_thunk(node, storage, None, [])
    assert thunk.lazy is False
    thunk()
    np.testing.assert_array_equal(storage[node.outputs[0]][0], [2.0])


def test_lazy_thunk_protocol():
    c = pt.iscalar("c")
    x, y = pt.dvectors("x", "y")
    node = IfElse(1).make_node(c, x, y)
    storage = {v: [None] for v in (*node.inputs, *node.outputs)}
    computed = {v: [False] for v in (*node.inputs, *node.outputs)}
    thunk = node.op.make_thunk(node, storage, computed, [])
    assert thunk.lazy is True
    assert list(thunk()) == [0]  # the condition first
    storage[c][0], computed[c][0] = np.int32(0), True
    assert list(thunk()) == [2]  # then only the else value
    storage[y][0], computed[y][0] = np.array([5.0]), True
    assert not thunk()
    assert computed[node.outputs[0]][0]
    np.testing.assert_array_equal(storage[node.outputs[0]][0], [5.0])
    assert storage[node.outputs[0]][0] is not storage[y][0]
    assert storage[x][0] is None  # never asked for


def test_lazy_vm_frees_intermediates_with_gc_and_keeps_them_without():
    c = pt.iscalar("c")
    x = pt.dvector("x")
    s = count(x, "s")
    out = ifelse(c, count(s, "then") * 2, count(s, "else") + 1)
    for linker, freed in (("vm", True), ("vm_nogc", False)):
        f = arignote.function([c, x], out, mode=Mode(linker=linker, optimizer=None))
        f(1, np.array([1.0]))
        f(0, np.array([1.0]))
        fg_out = f.maker.fgraph.outputs[0]
        inner = [v for v, cell in f.vm.storage_map.items() if v.owner is not None and v is not fg_out]
        assert inner
        held = [v for v in inner if f.vm.storage_map[v][0] is not None]
        assert (not held) == freed


def test_lazy_vm_handles_a_deep_graph_iteratively():
    c = pt.iscalar("c")
    x = pt.dscalar("x")
    deep = x
    for _ in range(3000):
        deep = deep + 1.0
    f = arignote.function([c, x], ifelse(c, deep, x), mode=Mode(optimizer=None))
    assert float(f(1, 0.0)) == 3000.0
    assert float(f(0, 0.0)) == 0.0


class _LazyNoFlags(Op):
    """A lazy Op whose thunk sets its output but not its compute flag."""

    __props__ = ()

    def make_node(self, x):
        return Apply(self, [x], [x.type()])

    def make_thunk(self, node, storage_map, compute_map, no_recycling, impl=None):
        def thunk():
            if not compute_map[node.inputs[0]][0]:
                return [0]
            storage_map[node.outputs[0]][0] = storage_map[node.inputs[0]][0] * 10
            return None

        thunk.lazy = True
        return thunk


class _LazyStuck(Op):
    """A lazy Op that keeps asking for an input it already has."""

    __props__ = ()

    def make_node(self, x):
        return Apply(self, [x], [x.type()])

    def make_thunk(self, node, storage_map, compute_map, no_recycling, impl=None):
        def thunk():
            return [0]

        thunk.lazy = True
        return thunk


class _LazyForgetful(Op):
    """A lazy Op that says it is done without setting its output."""

    __props__ = ()

    def make_node(self, x):
        return Apply(self, [x], [x.type()])

    def make_thunk(self, node, storage_map, compute_map, no_recycling, impl=None):
        def thunk():
            return []

        thunk.lazy = True
        return thunk


def test_lazy_vm_tolerates_a_thunk_that_does_not_flag_its_outputs():
    x = pt.dvector("x")
    f = arignote.function([x], _LazyNoFlags()(count(x, "in")) + 1)
    np.testing.assert_array_equal(f([1.0]), [11.0])
    np.testing.assert_array_equal(f([2.0]), [21.0])
    assert CALLS == {"in": 2}


def test_lazy_vm_reports_a_stuck_thunk_instead_of_looping():
    x = pt.dvector("x")
    f = arignote.function([x], _LazyStuck()(x + 1))
    with pytest.raises(RuntimeError, match="keeps asking for inputs that are already computed"):
        f([1.0])


def test_lazy_vm_reports_an_unset_output():
    x = pt.dvector("x")
    f = arignote.function([x], _LazyForgetful()(x + 1))
    with pytest.raises(ValueError, match="did not set output 0"):
        f([1.0])


def test_lazy_vm_error_in_taken_branch_names_the_node():
    c = pt.iscalar("c")
    x = pt.dvector("x")
    f = arignote.function([c, x], ifelse(c, Boom()(x), x))
    with pytest.raises(RuntimeError, match="Boom ran") as err:
        f(1, [1.0])
    assert "Boom" in "".join(getattr(err.value, "__notes__", []))


def test_lazy_vm_honours_fgraph_orderings():
    from arignote.graph.features import Feature

    c = pt.iscalar("c")
    x = pt.dvector("x")
    first = count(x, "first")  # only in the untaken branch, but ordered before `second`
    second = count(x, "second")
    order = []

    class Before(Feature):
        def orderings(self, fgraph, ordered=True):
            nodes = {n.op.tag: n for n in fgraph.apply_nodes if isinstance(n.op, Count)}
            return {nodes["second"]: [nodes["first"]]} if len(nodes) == 2 else {}

    fg = FunctionGraph([c, x], [ifelse(c, second, first)], features=[Before()], clone=False)
    cells = [[np.int32(1)], [np.array([1.0])]]
    orig = Count.perform

    def spy(self, node, inputs, output_storage):
        order.append(self.tag)
        orig(self, node, inputs, output_storage)

    Count.perform = spy
    try:
        vm, (out_cell,) = VMLinker().make_vm(fg, cells, [])
        vm()
    finally:
        Count.perform = orig
    assert order == ["first", "second"]
    np.testing.assert_array_equal(out_cell[0], [1.0])


def test_lazy_vm_profiles_the_nodes_that_ran():
    class Recorder:
        def __init__(self):
            self.nodes = []

        def record_node(self, node, seconds, storage_map):
            assert seconds >= 0.0
            self.nodes.append(node)

    c = pt.iscalar("c")
    x = pt.dvector("x")
    out = ifelse(c, count(x, "then"), count(x, "else"))
    fg = FunctionGraph([c, x], [out])
    rec = Recorder()
    vm, (out_cell,) = VMLinker().make_vm(fg, [[np.int32(0)], [np.array([1.0])]], [], profile=rec)
    vm()
    np.testing.assert_array_equal(out_cell[0], [1.0])
    ran = [str(n.op) for n in rec.nodes]
    assert ran == ["Count{tag='else'}", "if{}"]  # the lazy node once, though called twice


# --- gradients ----------------------------------------------------------------------------


def test_ifelse_gradient_follows_the_taken_branch():
    import arignote
    from arignote.gradient import grad, verify_grad

    c = pt.dscalar("c")
    x, y = pt.dvector("x"), pt.dvector("y")
    out = ifelse(c > 0, x * x, pt.sin(y))
    f = arignote.function([c, x, y], grad(pt.sum(out), [x, y, c]))
    xv, yv = np.array([1.0, 2.0]), np.array([0.0, 1.0])
    gx, gy, gc = f(1.0, xv, yv)
    np.testing.assert_allclose(gx, 2 * xv)
    np.testing.assert_allclose(gy, [0.0, 0.0])
    assert float(gc) == 0.0
    gx, gy, gc = f(-1.0, xv, yv)
    np.testing.assert_allclose(gx, [0.0, 0.0])
    np.testing.assert_allclose(gy, np.cos(yv))
    for cond in (1.0, -1.0):
        verify_grad(
            lambda x, y, cond=cond: ifelse(pt.constant(cond) > 0, x * x, pt.sin(y)),
            [xv + 0.5, yv + 0.5],
            rng=np.random.default_rng(0),
        )


class CountWithGrad(Count):
    """Count, differentiable (identity): its gradient node counts its runs too."""

    def pullback(self, inputs, outputs, output_grads):
        return [CountWithGrad(self.tag + "-grad")(output_grads[0])]


def test_ifelse_gradient_is_lazy():
    import arignote
    from arignote.gradient import grad

    c = pt.dscalar("c")
    x = pt.dvector("x")
    out = ifelse(c > 0, x * 2.0, CountWithGrad("else")(x))
    f = arignote.function([c, x], grad(pt.sum(out), x))
    np.testing.assert_allclose(f(1.0, np.ones(3)), [2.0, 2.0, 2.0])
    assert CALLS["else"] == 0  # the untaken branch's forward value is not computed
    np.testing.assert_allclose(f(-1.0, np.ones(3)), [1.0, 1.0, 1.0])


# -- rewrite rules -----------------------------------------------------------------------------


def _conditionals(f) -> list:
    return [n for n in f.maker.fgraph.apply_nodes if isinstance(n.op, IfElse)]


@pytest.mark.parametrize("mode", ["FAST_RUN", "FAST_COMPILE"])
def test_a_constant_condition_leaves_the_branch_it_chooses(mode, capsys):
    x = pt.dvector("x")
    chosen = arignote.function([x], ifelse(pt.constant(2.0) > 1, x * 2, pt.log(x)), mode=mode)
    assert not _conditionals(chosen)
    assert "Log" not in {
        type(getattr(n.op, "scalar_op", n.op)).__name__ for n in chosen.maker.fgraph.apply_nodes
    }
    np.testing.assert_allclose(chosen([1.0, -2.0]), [2.0, -4.0])
    other = arignote.function([x], ifelse(np.int8(0), x * 2, x - 1), mode=mode)
    assert not _conditionals(other)
    np.testing.assert_allclose(other([1.0, 2.0]), [0.0, 1.0])
    with config.change_flags(trace_rewrites=True):
        arignote.function([x], ifelse(np.bool_(True), x, -x), mode=mode)
    assert "rewrite ifelse_constant_condition (" in capsys.readouterr().out


def test_outputs_with_the_same_value_on_both_sides_leave_the_conditional():
    c, x = pt.dscalar("c"), pt.dvector("x")
    shared_value = pt.exp(x)
    f = arignote.function([c, x], ifelse(c, [shared_value, x * 2], [shared_value, x - 1]))
    (node,) = _conditionals(f)
    assert node.op.n_outs == 1
    for cv, want in ((1.0, [2.0, 4.0]), (0.0, [0.0, 1.0])):
        e, v = f(cv, [1.0, 2.0])
        np.testing.assert_allclose(e, np.exp([1.0, 2.0]))
        np.testing.assert_allclose(v, want)
    g = arignote.function([c, x], ifelse(c, shared_value, shared_value))
    assert not _conditionals(g)
    np.testing.assert_allclose(g(0.0, [0.0]), [1.0])


@pytest.mark.parametrize("mode", ["FAST_RUN", "JAX"])
def test_conditionals_on_one_condition_become_one(mode):
    if mode == "JAX":
        pytest.importorskip("jax")
    c, x = pt.dscalar("c"), pt.dvector("x")
    outs = [ifelse(c, x * 2, x + 1), ifelse(c, pt.exp(x), pt.log(x)), ifelse(c > 0, x, -x)]
    f = arignote.function([c, x], outs, mode=mode)
    conds = _conditionals(f)
    assert sorted(n.op.n_outs for n in conds) == [1, 2]  # the third has another condition
    v = np.array([1.0, 2.0])
    for cv in (1.0, 0.0):
        ref = [v * 2, np.exp(v), v] if cv else [v + 1, np.log(v), -v]
        for got, want in zip(f(cv, v), ref):
            np.testing.assert_allclose(got, want)


def test_conditionals_in_branches_of_another_stay_apart_and_lazy():
    # the two inner conditionals share a condition but sit in different branches of the
    # outer one: merged, the untaken branch's work would run (test_nested_ifelse counts it)
    a, b, x = pt.dscalar("a"), pt.dscalar("b"), pt.dvector("x")
    f = arignote.function([a, b, x], ifelse(a, ifelse(b, x * 2, x + 1), ifelse(b, pt.exp(x), pt.log(x))))
    assert len(_conditionals(f)) == 3
    np.testing.assert_allclose(f(0.0, 1.0, [1.0]), np.exp([1.0]))


def test_a_conditional_that_needs_the_other_is_not_merged():
    c, x = pt.dscalar("c"), pt.dvector("x")
    inner = ifelse(c, x * 2, x + 1)
    outer = ifelse(c, inner * 3, inner)
    f = arignote.function([c, x], outer)
    assert len(_conditionals(f)) == 2
    np.testing.assert_allclose(f(1.0, [1.0]), [6.0])
    np.testing.assert_allclose(f(0.0, [1.0]), [2.0])


def test_a_conditional_nested_on_its_own_condition_has_already_chosen():
    c, x = pt.dscalar("c"), pt.dvector("x")
    inner = ifelse(c, x * 2, pt.exp(x))  # (shared by both branches of the outer one)
    outer = ifelse(c, inner + 1, ifelse(c, x - 1, inner))
    f = arignote.function([c, x], [ifelse(c, inner, x), outer])
    for cv in (1.0, 0.0):
        v = np.array([0.5, 2.0])
        want_inner = v * 2 if cv else np.exp(v)
        got = f(cv, v)
        np.testing.assert_allclose(got[0], want_inner if cv else v)
        np.testing.assert_allclose(got[1], (v * 2 + 1) if cv else np.exp(v))
    # the direct uses are resolved: no conditional reads another one's output
    for node in _conditionals(f):
        assert not any(i.owner is not None and isinstance(i.owner.op, IfElse) for i in node.inputs[1:])
