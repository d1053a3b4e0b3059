"""Composite: a scalar op whose body is a graph of scalar ops (the body of a fused kernel)."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import arignote.scalar as ps
import arignote.scalar.math as psm
from arignote.graph.basic import Apply
from arignote.graph.op import HasInnerGraph, Op
from arignote.graph.utils import MissingInputError
from arignote.scalar.composite import Composite
from arignote.scalar.type import get_scalar_type
from tests.toy import double


def test_str_and_py_code():
    a, b = ps.float64("a"), ps.float64("b")
    c = Composite([a, b], [ps.exp(a) + b * a])
    assert str(c) == "Composite{(exp(i0) + (i1 * i0))}"
    assert c.py_code().splitlines() == [
        "def composite(i0, i1):",
        "    t0 = exp(i0)",
        "    t1 = mul(i1, i0)",
        "    t2 = add(t0, t1)",
        "    return t2",
    ]
    assert c.nin == 2 and c.nout == 1
    assert isinstance(c, HasInnerGraph) and isinstance(c, ps.ScalarOp)


def test_py_code_one_line_per_node():
    x, y = ps.float32("x"), ps.float32("y")
    out = ps.tanh(x * y - 1) / (ps.sqr(x) + 2.5)
    c = Composite([x, y], [out, ps.neg(y)])
    lines = c.py_code().splitlines()
    assert len(lines) == len(c.fgraph.apply_nodes) + 2  # def, one per node, return
    assert all(line.startswith("    t") for line in lines[1:-1])
    assert lines[-1].startswith("    return t")
    assert str(c) == "Composite{(tanh(((i0 * i1) - 1)) / (sqr(i0) + 2.5)), (-i1)}"


def test_a_long_body_reuses_the_names_of_dead_temporaries():
    # a local keeps its value alive until the body returns: a 300-node chain must not
    # hold 300 arrays at once
    x = ps.float64("x")
    y, mid = x, None
    for k in range(100):
        y = ps.tanh(y * 0.5 + 0.25)
        if k == 10:
            mid = y  # a second output, read again at the end
    c = Composite([x], [y + mid, mid])
    lines = c.py_code().splitlines()
    assert len(lines) == len(c.fgraph.apply_nodes) + 2
    temporaries = {line.split("=")[0].strip() for line in lines[1:-1]}
    assert len(temporaries) <= 4, temporaries
    v = np.linspace(-2.0, 2.0, 7)
    expected, expected_mid = v, None
    for k in range(100):
        expected = np.tanh(expected * 0.5 + 0.25)
        if k == 10:
            expected_mid = expected
    got = c.compile_body()(v)
    np.testing.assert_allclose(got[0], expected + expected_mid, rtol=1e-15)
    np.testing.assert_allclose(got[1], expected_mid, rtol=1e-15)


def test_bodies_of_the_same_shape_share_compiled_code():
    def body(scale: float) -> Composite:
        x = ps.float64("x")
        return Composite([x], [ps.exp(x * scale) + scale])

    f, g = body(2.0).compile_body(), body(3.0).compile_body()
    assert f is not g and f.__code__ is g.__code__  # constants live in each namespace
    assert f(np.float64(1.0)) == np.exp(2.0) + 2.0 and g(np.float64(1.0)) == np.exp(3.0) + 3.0


def test_infix_and_prefix_printing():
    i, j = ps.int8("i"), ps.int8("j")
    body = [i // j, i % j, i**j, i < j, ps.eq(i, j), i & j, i | j, i ^ j, -i, ps.maximum(i, j)]
    c = Composite([i, j], body)
    assert str(c) == (
        "Composite{(i0 // i1), (i0 % i1), (i0 ** i1), (i0 < i1), (i0 == i1), (i0 & i1), "
        "(i0 | i1), (i0 ^ i1), (-i0), maximum(i0, i1)}"
    )
    assert str(Composite([i, j], [ps.add(i, j, i)])) == "Composite{(i0 + i1 + i0)}"


def test_long_str_is_truncated():
    x = ps.float64("x")
    out = x
    for _ in range(100):
        out = ps.sin(out)
    c = Composite([x], [out])
    assert len(str(c)) < 320 and str(c).endswith("...}")
    # the first characters of the whole text (written only as far as they are shown)
    assert str(c) == "Composite{" + ("sin(" * 100 + "i0" + ")" * 100)[:297] + "...}"
    expected = np.float64(0.5)
    for _ in range(100):
        expected = np.sin(expected)
    assert c.impl(np.float64(0.5)) == expected


def test_values_on_arrays_and_scalars():
    x, y = ps.float32("x"), ps.int8("y")
    c = Composite([x, y], [ps.exp(x) + y * x, ps.sin(x) * 2])
    xs = np.linspace(-3, 3, 7, dtype="float32")[:, None]
    ys = np.array([-2, 0, 5], dtype="int8")[None, :]
    got0, got1 = c.impl(xs, ys)
    np.testing.assert_allclose(got0, np.exp(xs) + ys * xs, rtol=1e-6)
    np.testing.assert_allclose(got1, np.broadcast_to(np.sin(xs) * 2, (7, 1)), rtol=1e-6)
    assert got0.shape == (7, 3) and got0.dtype == "float32"
    # through a node and eval (perform): the output Types' dtypes
    u, v = ps.float32("u"), ps.int8("v")
    o0, o1 = c(u, v)
    assert o0.type.dtype == o1.type.dtype == "float32"
    r0 = o0.eval({u: 0.5, v: 3})
    assert isinstance(r0, np.float32) and np.isclose(r0, np.exp(0.5) + 1.5)


def test_intermediate_dtypes_follow_the_unfused_graph():
    """Each inner value has its node's dtype (not NumPy's choice), so fused == unfused."""
    i, h = ps.int8("i"), ps.float16("h")
    out = ps.sqrt(i) * ps.cast(h, "float32") + psm.erf(h)  # sqrt(int8) is float32, erf(float16) float16
    c = Composite([i, h], [out])
    ints = np.arange(-128, 128, dtype="int8")
    hs = np.float16(0.3)
    with np.errstate(invalid="ignore"):
        fused = c.impl(ints, hs)
        unfused = np.sqrt(ints.astype("float32")) * np.float32(hs) + sp_erf16(hs)
    assert fused.dtype == "float32"
    np.testing.assert_array_equal(fused, unfused)


def sp_erf16(h):
    import scipy.special as sp

    return sp.erf(np.float32(h)).astype("float16")


def test_constants_in_body_and_as_outputs():
    x = ps.float32("x")
    c = Composite([x], [x * 2.5 + 1, ps.constant(3.0), x])
    assert str(c) == "Composite{((i0 * 2.5) + 1), 3.0, i0}"
    assert c.py_code().splitlines()[-1] == "    return t1, c2, i0"
    assert c.impl(np.float32(2)) == (6.0, 3.0, 2.0)
    outs = c(ps.float32("z"))
    assert [o.type.dtype for o in outs] == ["float32"] * 3
    values = [o.eval({"z": np.float32(2)}) for o in outs]
    assert values == [6.0, 3.0, 2.0] and all(v.dtype == "float32" for v in values)


def test_equality_and_hash():
    def make(dtype="float64", const=2.0, op=ps.mul):
        a, b = get_scalar_type(dtype)("a"), get_scalar_type(dtype)("b")
        return Composite([a, b], [op(ps.exp(a), b) + const])

    c1, c2 = make(), make()
    assert c1 == c2 and hash(c1) == hash(c2)
    assert c1 != make(dtype="float32")
    assert c1 != make(const=3.0)
    assert c1 != make(op=ps.add)
    assert make(const=np.float64("nan")) == make(const=np.float64("nan"))  # NaN constants compare equal
    assert make(const=np.float64(0.0)) != make(const=np.float64(-0.0))  # -0.0 is another constant
    a, b = ps.float64("a"), ps.float64("b")
    assert Composite([a, b], [a - b]) != Composite([b, a], [a - b])  # wiring matters
    assert Composite([a, b], [a - b], name="named") == Composite([a, b], [a - b])  # names do not
    assert c1 != ps.mul and c1 != "Composite"
    assert len({c1, c2, make(const=3.0)}) == 2
    # the same Composite applied twice gives the same op, so merging can see it
    x, y = ps.float64(), ps.float64()
    assert c1(x, y).owner.op == c2(x, y).owner.op


def test_clone_and_inner_graph():
    a, b = ps.float64("a"), ps.float64("b")
    c = Composite([a, b], [a * b])
    clone = c.clone()
    assert clone == c and clone is not c
    assert [v.type for v in c.inner_inputs] == [a.type, b.type]
    assert c.inner_outputs[0].owner.op is ps.mul
    assert c.inner_inputs[0] is not a  # the body is a copy: the user's graph is untouched
    assert c.fgraph.inputs == c.inner_inputs


def test_nested_composite():
    x, y = ps.float32("x"), ps.float32("y")
    inner = Composite([x, y], [ps.exp(x) + y])
    a, b = ps.float32("a"), ps.float32("b")
    outer = Composite([a, b], [inner(a, b) * 2, ps.sin(b)])
    assert str(outer) == "Composite{(Composite{(exp(i0) + i1)}(i0, i1) * 2), sin(i1)}"
    xs = np.array([0.0, 1.0, -2.0], dtype="float32")
    r0, r1 = outer.impl(xs, np.float32(3))
    np.testing.assert_allclose(r0, (np.exp(xs) + 3) * 2, rtol=1e-6)
    assert np.isclose(r1, np.sin(np.float32(3)))
    # a multi-output inner Composite
    sc = Composite([x], [ps.sin(x), ps.cos(x)])
    s, co = sc(a)
    nested = Composite([a], [s + co])
    assert "t0, t1 = " in nested.py_code()
    assert np.isclose(nested.impl(np.float32(0.5)), np.sin(0.5) + np.cos(0.5))
    # structurally equal nested Composites are equal
    x2 = ps.float32("x2")
    sc2 = Composite([x2], [ps.sin(x2), ps.cos(x2)])
    a2 = ps.float32("a2")
    s2, co2 = sc2(a2)
    assert Composite([a2], [s2 + co2]) == nested
    assert hash(Composite([a2], [s2 + co2])) == hash(nested)
    assert Composite([a2], [s2 - co2]) != nested


def test_pickle_round_trip():
    x, y = ps.float32("x"), ps.int8("y")
    c = Composite([x, y], [ps.exp(x) + y * x, x > 0.5])
    c.impl(np.float32(1), np.int8(2))  # compiled once before pickling
    c2 = pickle.loads(pickle.dumps(c))
    assert c2 == c and hash(c2) == hash(c)
    assert c2.py_code() == c.py_code() and str(c2) == str(c)
    assert c2.impl(np.float32(1), np.int8(2)) == c.impl(np.float32(1), np.int8(2))
    # inside a pickled graph too
    u, v = ps.float32("u"), ps.int8("v")
    out = c(u, v)[0]
    out2 = pickle.loads(pickle.dumps(out))
    assert out2.owner.op == c
    assert out2.eval({out2.owner.inputs[0]: 1.0, out2.owner.inputs[1]: 2}) == np.exp(np.float32(1)) + 2


def test_errors_wrong_input_types_and_arity():
    a, b = ps.float32("a"), ps.float32("b")
    c = Composite([a, b], [a + b])
    with pytest.raises(
        TypeError, match=r"takes inputs of types \(float32, float32\), got \(float64, float32\)"
    ):
        c(ps.float64(), ps.float32())
    with pytest.raises(TypeError, match="takes 2 input"):
        c(ps.float32())
    with pytest.raises(TypeError, match="must be a scalar Variable"):
        Composite([double("d")], [a])
    with pytest.raises(TypeError, match="must be a scalar Variable"):
        Composite([1.0], [a])
    with pytest.raises(TypeError, match="is a Constant"):
        Composite([ps.constant(2.0)], [a])
    with pytest.raises(MissingInputError):
        Composite([a], [a + b])  # b is not an input


class NotScalar(Op):
    """An Op on scalar Variables that is not a ScalarOp."""

    __props__ = ()

    def make_node(self, x):
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0]


def test_errors_non_scalar_ops_in_body():
    x = ps.float32("x")
    with pytest.raises(TypeError, match="may only contain scalar ops"):
        Composite([x], [ps.exp(NotScalar()(x))])


def test_errors_inside_the_body_propagate():
    i, j = ps.int8("i"), ps.int8("j")
    c = Composite([i, j], [i // j + 1])
    with pytest.raises(ZeroDivisionError):
        c.impl(np.int8(3), np.int8(0))
    with pytest.raises(ZeroDivisionError):
        c(ps.int8("u"), ps.int8("v")).eval({"u": 3, "v": 0})


# --- random bodies: fused equals unfused --------------------------------------------------

UNARY = [ps.neg, ps.exp, ps.sin, ps.tanh, ps.sqr, ps.abs, ps.sqrt, ps.floor, psm.sigmoid, ps.identity]
BINARY = [ps.add, ps.sub, ps.mul, ps.true_div, ps.maximum, ps.minimum, ps.second]
DTYPES = ["float32", "float64", "int8", "int16", "float16"]


@st.composite
def bodies(draw):
    dtypes = draw(st.lists(st.sampled_from(DTYPES), min_size=1, max_size=3))
    inputs = [get_scalar_type(d)(f"x{k}") for k, d in enumerate(dtypes)]
    pool = list(inputs)
    for _ in range(draw(st.integers(1, 7))):
        kind = draw(st.integers(0, 3))
        try:
            if kind == 0:
                out = draw(st.sampled_from(UNARY))(draw(st.sampled_from(pool)))
            elif kind == 1:
                out = draw(st.sampled_from(BINARY))(draw(st.sampled_from(pool)), draw(st.sampled_from(pool)))
            elif kind == 2:
                out = draw(st.sampled_from(pool)) + draw(st.sampled_from([2, 0.5, -1.25]))
            else:
                a, b = draw(st.sampled_from(pool)), draw(st.sampled_from(pool))
                out = ps.switch(ps.gt(a, b), a, b)
        except TypeError:  # e.g. neg of a bool
            continue
        pool.append(out)
    candidates = pool[len(inputs) :] or pool
    outputs = draw(st.lists(st.sampled_from(candidates), min_size=1, max_size=2))
    values = [np.array(draw(st.lists(st.integers(-4, 4), min_size=3, max_size=3))).astype(d) for d in dtypes]
    return inputs, outputs, values


@settings(max_examples=40, deadline=None)
@given(bodies())
def test_fused_equals_unfused(body):
    inputs, outputs, values = body
    c = Composite(inputs, outputs)
    fresh = [v.type() for v in inputs]
    applied = c(*fresh)
    applied = applied if isinstance(applied, list) else [applied]
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        fused = c.impl(*values)
        fused = fused if c.nout > 1 else (fused,)
        for out, fused_value in zip(outputs, fused):
            if out not in inputs:  # an input passes through as given
                assert np.asarray(fused_value).dtype == out.type.dtype
        for k in range(3):
            point = [v[k] for v in values]
            for out, node_out, fused_value in zip(outputs, applied, fused):
                unfused = out.eval(dict(zip(inputs, point)), on_unused_input="ignore")
                via_node = node_out.eval(dict(zip(fresh, point)), on_unused_input="ignore")
                assert via_node.dtype == out.type.dtype == node_out.type.dtype
                np.testing.assert_allclose(
                    np.asarray(fused_value, dtype="float64")[k] if np.ndim(fused_value) else fused_value,
                    unfused,
                    rtol=2e-3 if out.type.dtype == "float16" else 1e-6,
                    equal_nan=True,
                )
                np.testing.assert_array_equal(via_node, unfused)


def test_a_body_taken_as_it_is_makes_its_function_graph_when_asked_for():
    # (fusion makes a Composite per group and rarely reads its FunctionGraph)
    x, y = ps.float64("x"), ps.float64("y")
    body = ps.exp(x) * y + x
    c = Composite([x, y], [body], clone=False)
    assert c._fgraph is None
    assert [type(n.op).__name__ for n in c.body_nodes] == ["Exp", "Mul", "Add"]
    assert c.fgraph.toposort() == c.body_nodes and c.fgraph.outputs == [body]
    assert c == Composite([x, y], [body])  # equal to the copied one
    assert float(c.impl(1.0, 2.0)) == float(np.exp(1.0) * 2.0 + 1.0)
    with pytest.raises(MissingInputError):
        Composite([x], [body], clone=False)  # y is not an input
