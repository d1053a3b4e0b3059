"""OpFromGraph: building, calling, running, shapes, inlining, equality, errors, printing.

The gradient rules are tested in test_builders_grad.py.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import arignote
import arignote.compile.builders as builders
import arignote.tensor as pt
from arignote import function, shared
from arignote.compile.builders import OpFromGraph
from arignote.compile.mode import Mode
from arignote.graph.basic import Apply, Variable
from arignote.graph.fg import FunctionGraph
from arignote.graph.utils import MissingInputError
from arignote.printing import debugprint
from arignote.tensor.batching import Batched
from arignote.tensor.type import TensorType
from tests.tensor.utils import assert_infer_shape

RNG = np.random.default_rng(42)


def _ofg_nodes(f: object) -> list[Apply]:
    return [n for n in f.maker.fgraph.toposort() if isinstance(n.op, OpFromGraph)]


def _vec(n: int = 4) -> np.ndarray:
    return RNG.normal(size=n)


# --- building and calling -----------------------------------------------------------------------


def test_single_output_values_match_numpy():
    x, y = pt.dvectors("x", "y")
    op = OpFromGraph([x, y], [x * y + pt.exp(x)])
    a, b = pt.dvectors("a", "b")
    out = op(a, b)
    assert isinstance(out, Variable) and out.owner.op is op
    av, bv = _vec(), _vec()
    np.testing.assert_allclose(function([a, b], out)(av, bv), av * bv + np.exp(av))


def test_multiple_outputs_keep_inner_types():
    x = pt.dmatrix("x")
    op = OpFromGraph([x], [x.sum(axis=0), x.max(), pt.cast(x, "float32")])
    a = pt.dmatrix("a")
    s, m, c = op(a)
    assert [o.type for o in (s, m, c)] == [o.type for o in op.inner_outputs]
    assert c.type == TensorType("float32", (None, None))
    av = RNG.normal(size=(3, 2))
    got = function([a], [s, m, c])(av)
    np.testing.assert_allclose(got[0], av.sum(axis=0))
    np.testing.assert_allclose(got[1], av.max())
    assert got[2].dtype == np.float32
    np.testing.assert_allclose(got[2], av.astype("float32"))


def test_call_options_name_and_return_list():
    x = pt.dscalar("x")
    op = OpFromGraph([x], [x + 1])
    a = pt.dscalar("a")
    assert op(a, name="z").name == "z"
    (out,) = op(a, return_list=True)
    assert float(function([a], out)(1.5)) == 2.5


def test_constants_inside_and_non_variable_arguments():
    x, y = pt.dscalars("x", "y")
    op = OpFromGraph([x, y], [x * pt.constant(np.float64(3.0)) - y + 0.5])
    a = pt.dscalar("a")
    out = op(a, 2)  # a Python number becomes a constant of the input's Type
    assert float(function([a], out)(1.0)) == pytest.approx(1.5)


def test_output_that_is_an_input_and_repeated_outputs():
    x = pt.dvector("x")
    y = x * 2
    op = OpFromGraph([x], [x, y, y])
    a = pt.dvector("a")
    o0, o1, o2 = op(a)
    av = _vec()
    r0, r1, r2 = function([a], [o0, o1, o2])(av)
    np.testing.assert_allclose(r0, av)
    np.testing.assert_allclose(r1, 2 * av)
    np.testing.assert_allclose(r2, 2 * av)
    r0[:] = 0  # outputs are fresh arrays, not views of the input or of each other
    r1[:] = 0
    assert np.all(r2 == 2 * av) and not np.all(av == 0)


def test_no_inputs():
    op = OpFromGraph([], [pt.constant(np.arange(3.0)) * 2])
    np.testing.assert_allclose(function([], op())(), [0.0, 2.0, 4.0])


def test_intermediate_variable_as_input_cuts_the_graph():
    x = pt.dscalar("x")
    h = pt.exp(x)
    op = OpFromGraph([h], [h + 1])
    a = pt.dscalar("a")
    assert float(function([a], op(a))(2.0)) == 3.0  # exp(x) is not part of the Op


def test_inner_graph_is_a_private_clone():
    x = pt.dvector("x")
    inner = pt.exp(x)
    out = inner * 2
    op = OpFromGraph([x], [out])
    # rewire the user's graph in place: the Op must not see it
    fg = FunctionGraph([x], [out], clone=False)
    fg.replace(inner, pt.log(x))
    assert out.owner.inputs[0] is not inner
    assert all(v not in (x, inner, out) for v in op.inner_inputs + op.inner_outputs)
    a = pt.dvector("a")
    av = np.abs(_vec()) + 0.5
    np.testing.assert_allclose(function([x], out)(av), 2 * np.log(av))  # the user's graph changed
    np.testing.assert_allclose(function([a], op(a))(av), 2 * np.exp(av))  # the Op did not


def test_inner_function_is_compiled_once_and_reused(monkeypatch):
    calls = []
    real = builders.function

    def counting(*args, **kwargs):
        calls.append(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(builders, "function", counting)
    x = pt.dvector("x")
    op = OpFromGraph([x], [x**2], mode=Mode(optimizer=None))
    assert calls == []  # lazily: nothing compiled at construction
    a, b = pt.dvectors("a", "b")
    f1 = function([a], op(a))
    f2 = function([a, b], op(a) + op(b))
    av, bv = _vec(), _vec()
    np.testing.assert_allclose(f1(av), av**2)
    np.testing.assert_allclose(f2(av, bv), av**2 + bv**2)
    np.testing.assert_allclose(f1(bv), bv**2)
    assert len(calls) == 1
    assert calls[0]["mode"] == Mode(optimizer=None)  # kwargs go to the inner compilation
    assert op.fn is op.fn and op.fn.maker.fgraph is not None


def test_shared_variables_become_implicit_inputs():
    s = shared(np.array([1.0, 2.0, 3.0]), name="s")
    x = pt.dvector("x")
    op = OpFromGraph([x], [x * s])
    assert op.shared_inputs == [s]
    assert len(op.inner_inputs) == 2 and op.n_explicit == 1
    a = pt.dvector("a")
    out = op(a)
    assert out.owner.inputs == [a, s]
    f = function([a], out)
    np.testing.assert_allclose(f(np.ones(3)), [1.0, 2.0, 3.0])
    s.set_value(np.array([5.0, 6.0, 7.0]))  # the value is read at each call
    np.testing.assert_allclose(f(np.ones(3)), [5.0, 6.0, 7.0])
    # all inputs may be given, the shared one replaced by another Variable
    t = pt.dvector("t")
    g = function([a, t], op(a, t))
    np.testing.assert_allclose(g(np.ones(3), np.array([2.0, 2.0, 2.0])), [2.0, 2.0, 2.0])
    # givens replacing the shared variable reach the inner graph as an input
    h = function([a, t], out, givens={s: t * 10})
    np.testing.assert_allclose(h(np.ones(3), np.array([1.0, 2.0, 3.0])), [10.0, 20.0, 30.0])


def test_strict_rejects_shared_variables():
    s = shared(np.array(2.0), name="scale")
    x = pt.dscalar("x")
    with pytest.raises(ValueError, match=r"strict=True.*scale"):
        OpFromGraph([x], [x * s], strict=True)
    op = OpFromGraph([x, s], [x * s], strict=True)  # given explicitly: fine
    assert op.shared_inputs == []


def test_nested_op_from_graph():
    x, y = pt.dvectors("x", "y")
    inner = OpFromGraph([x, y], [x * y, x - y], name="inner")
    p, q = inner(x, y)
    outer = OpFromGraph([x, y], [inner(p, q)[0] + 1.0], name="outer")
    a, b = pt.dvectors("a", "b")
    av, bv = _vec(), _vec()
    f = function([a, b], outer(a, b))
    np.testing.assert_allclose(f(av, bv), av * bv * (av - bv) + 1.0)
    nested = [n for n in outer.fgraph.toposort() if isinstance(n.op, OpFromGraph)]
    assert len(nested) == 2 and all(n.op == inner for n in nested)


def test_compiling_an_inner_function_that_folds_a_nested_op():
    x = pt.dscalar("x")
    inner = OpFromGraph([x], [pt.exp(x)])
    outer = OpFromGraph([x], [x + inner(pt.constant(np.float64(0.0)))])
    a = pt.dscalar("a")
    # compiling outer's inner function constant-folds inner's node, which compiles inner's
    assert float(function([a], outer(a))(2.0)) == 3.0
    assert not any(isinstance(n.op, OpFromGraph) for n in outer.fn.maker.fgraph.toposort())


# --- errors -----------------------------------------------------------------------------------


def test_output_needing_a_missing_input_names_it():
    x, y = pt.dscalars("x", "y")
    with pytest.raises(MissingInputError, match=r"output 1 .* depends on y .*not one of the inputs") as info:
        OpFromGraph([x], [x + 1, x * y])
    assert info.value.variable is y


@pytest.mark.parametrize(
    ("inputs", "outputs", "match"),
    [
        ("x", ["x"], r"inputs must be a list of Variables, got TensorVariable x \(wrap it: \[x\]\)"),
        ([1.0], ["x"], r"inputs\[0\] must be a Variable, got float 1.0"),
        (["x"], ["x", 2.0], r"outputs\[1\] must be a Variable, got float 2.0"),
        (["x"], "x", r"outputs must be a list"),
    ],
)
def test_non_variable_inputs_and_outputs(inputs, outputs, match):
    x = pt.dscalar("x")

    def sub(v):
        return x if isinstance(v, str) else v

    ins = sub(inputs) if isinstance(inputs, str) else [sub(v) for v in inputs]
    outs = sub(outputs) if isinstance(outputs, str) else [sub(v) for v in outputs]
    with pytest.raises(TypeError, match=match):
        OpFromGraph(ins, outs)


def test_construction_errors():
    x, y = pt.dscalars("x", "y")
    with pytest.raises(ValueError, match=r"inputs 0 and 1 are the same Variable \(x\)"):
        OpFromGraph([x, x], [x + 1])
    with pytest.raises(TypeError, match=r"unexpected keyword argument\(s\) \['foo'\]"):
        OpFromGraph([x], [x], foo=1)
    with pytest.raises(TypeError, match="does not take updates or givens"):
        OpFromGraph([x], [x], givens={x: y})
    with pytest.raises(TypeError, match="name must be a string"):
        OpFromGraph([x], [x], name=3)
    with pytest.raises(ValueError, match="connection_pattern must be a list with one row per input"):
        OpFromGraph([x, y], [x + y], connection_pattern=[[True]])
    with pytest.raises(ValueError, match="destroy_map"):
        OpFromGraph([x], [x + 1], destroy_map={0: [3]})


def test_wrong_number_of_call_arguments():
    x, y = pt.dscalars("x", "y")
    op = OpFromGraph([x, y], [x * y])
    with pytest.raises(ValueError, match=r"takes 2 input\(s\) of Types \(Scalar\(float64.*got 3"):
        op(x, y, y)
    s = shared(np.array(1.0), name="s")
    op2 = OpFromGraph([x], [x * s])
    with pytest.raises(ValueError, match=r"takes 1 \(or 2, with its shared variables\) input\(s\).*got 3"):
        op2(x, y, y)


def test_input_type_checks_name_the_position_and_types():
    x, y = pt.dvectors("x", "y")
    op = OpFromGraph([x, y], [x + y])
    a = pt.dvector("a")
    with pytest.raises(
        TypeError, match=r"input 1 must have Type Vector\(float64, shape=\(\?,\)\).*got m of Type Matrix"
    ):
        op(a, pt.dmatrix("m"))
    with pytest.raises(TypeError, match=r"input 0 .*got f of Type Vector\(float32"):
        op(pt.fvector("f"), a)
    with pytest.raises(TypeError, match=r"input 1 .*got str 'abc'"):
        op(a, "abc")


def test_static_shape_narrowing_is_converted():
    xs = pt.tensor("xs", dtype="float64", shape=(3,))
    op = OpFromGraph([xs], [xs * 2])
    v = pt.dvector("v")
    out = op(v)
    (converted,) = out.owner.inputs
    assert converted.type == TensorType("float64", (3,))  # SpecifyShape(v, (3,))
    f = function([v], out)
    np.testing.assert_allclose(f(np.arange(3.0)), [0.0, 2.0, 4.0])
    with pytest.raises(ValueError, match="dimension 0 is 4, expected 3"):
        f(np.arange(4.0))  # checked at run time by the conversion
    with pytest.raises(
        TypeError, match=r"input 0 must have Type Vector\(float64, shape=\(3,\)\).*shape=\(4,\)"
    ):
        op(pt.tensor("w", dtype="float64", shape=(4,)))


# --- shapes -----------------------------------------------------------------------------------


def test_infer_shape():
    x = pt.dmatrix("x")
    y = pt.dvector("y")
    op = OpFromGraph([x, y], [pt.dot(x, y), x.T, pt.concatenate([y, y]), x.sum()])
    a, b = pt.dmatrix("a"), pt.dvector("b")
    givens = {a: RNG.normal(size=(3, 4)), b: _vec(4)}
    for out in op(a, b):
        assert_infer_shape(out, givens)


def test_static_shapes_are_used():
    x = pt.tensor("x", dtype="float64", shape=(2, 5))
    op = OpFromGraph([x], [x.sum(axis=1)])
    (out,) = op.infer_shape(None, op(x).owner, [(2, 5)])
    assert out == (2,)


# --- connection pattern -------------------------------------------------------------------------


def test_connection_pattern_from_the_inner_graph():
    x, y, z = pt.dvectors("x", "y", "z")
    op = OpFromGraph([x, y, z], [x * 2, y.sum() + x.sum(), pt.shape(z)])
    assert op.connection_pattern(None) == [[True, True, False], [False, True, False], [False, False, False]]
    given = [[True, False, False], [True, True, False], [False, False, True]]
    op2 = OpFromGraph([x, y, z], [x * 2, y.sum() + x.sum(), pt.shape(z)], connection_pattern=given)
    assert op2.connection_pattern(None) == given


# --- inlining ---------------------------------------------------------------------------------


def test_inline_replaces_the_node_by_its_inner_graph():
    x, y = pt.dvectors("x", "y")
    op = OpFromGraph([x, y], [pt.exp(x) * y], inline=True)
    a, b = pt.dvectors("a", "b")
    av, bv = _vec(), _vec()
    for mode in ("FAST_RUN", "FAST_COMPILE"):
        f = function([a, b], op(a, b) + 1, mode=mode)
        assert _ofg_nodes(f) == []
        ops = {type(n.op).__name__ for n in f.maker.fgraph.toposort()}
        assert "OpFromGraph" not in ops
        np.testing.assert_allclose(f(av, bv), np.exp(av) * bv + 1)


def test_not_inline_keeps_the_node():
    x = pt.dvector("x")
    op = OpFromGraph([x], [pt.exp(x) * 2])
    a = pt.dvector("a")
    f = function([a], op(a))
    assert [n.op for n in _ofg_nodes(f)] == [op]
    av = _vec()
    np.testing.assert_allclose(f(av), np.exp(av) * 2)


def test_inline_with_shared_and_nested_ops():
    s = shared(np.array(3.0), name="s")
    x = pt.dvector("x")
    inner = OpFromGraph([x], [x * s], inline=True)
    outer = OpFromGraph([x], [inner(x) + inner(x * 2)], inline=True)
    a = pt.dvector("a")
    f = function([a], outer(a))
    assert _ofg_nodes(f) == []
    av = _vec()
    np.testing.assert_allclose(f(av), 3 * av + 6 * av)
    # an inline Op inside a non-inline one is expanded when the inner function compiles
    holder = OpFromGraph([x], [inner(x) - 1])
    g = function([a], holder(a))
    assert len(_ofg_nodes(g)) == 1
    np.testing.assert_allclose(g(av), 3 * av - 1)
    assert not any(isinstance(n.op, OpFromGraph) for n in holder.fn.maker.fgraph.toposort())


# --- equality and merging --------------------------------------------------------------------


def test_nodes_of_one_op_with_the_same_inputs_merge():
    x = pt.dvector("x")
    op = OpFromGraph([x], [pt.exp(x) + 1])
    a = pt.dvector("a")
    f = function([a], op(a) + op(a))
    assert len(_ofg_nodes(f)) == 1
    av = _vec()
    np.testing.assert_allclose(f(av), 2 * (np.exp(av) + 1))


def test_equality_follows_the_inner_graph():
    x, y = pt.dvectors("x", "y")
    u, v = pt.dvectors("u", "v")
    a = OpFromGraph([x, y], [x * y + 1.0])
    b = OpFromGraph([u, v], [u * v + 1.0], name="other name")  # same computation
    assert a == b and hash(a) == hash(b) and a is not b
    assert a != OpFromGraph([x, y], [y * x + 1.0])  # different wiring
    assert a != OpFromGraph([x, y], [x * y + 2.0])  # different constant
    assert a != OpFromGraph([x, y], [x * y + 1.0], inline=True)
    assert a != OpFromGraph([x, y], [x * y + 1.0], lop_overrides=lambda i, o, g: [g[0], g[0]])
    assert a != OpFromGraph([x, y], [x * y + 1.0], mode="FAST_COMPILE")
    f32 = pt.fvectors("p", "q")
    assert a != OpFromGraph(list(f32), [f32[0] * f32[1] + 1.0])
    s1, s2 = shared(np.ones(2), name="s1"), shared(np.ones(2), name="s2")
    assert OpFromGraph([x], [x * s1]) == OpFromGraph([x], [x * s1])
    assert OpFromGraph([x], [x * s1]) != OpFromGraph([x], [x * s2])  # other shared variable
    assert a.clone() == a and a.clone().inner_inputs[0] is not a.inner_inputs[0]
    big = np.arange(1000.0)
    big2 = big.copy()
    big2[-1] = 0.0
    assert OpFromGraph([x], [x + big]) == OpFromGraph([x], [x + big.copy()])
    assert OpFromGraph([x], [x + big]) != OpFromGraph([x], [x + big2])  # large constants differ
    # equal Ops applied to the same inputs merge
    i, j = pt.dvectors("i", "j")
    f = function([i, j], a(i, j) * b(i, j))  # (a - b would be 0 after merging: x - x)
    assert len(_ofg_nodes(f)) == 1
    iv, jv = _vec(), _vec()
    np.testing.assert_allclose(f(iv, jv), (iv * jv + 1.0) ** 2)


def test_str_and_pickle():
    x, y = pt.dscalars("x", "y")
    op = OpFromGraph([x, y], [x * y], name="mul")
    assert str(op) == "mul{inline=False}"
    assert str(OpFromGraph([x], [x], inline=True)) == "OpFromGraph{inline=True}"
    a, b = pt.dscalars("a", "b")
    assert float(function([a, b], op(a, b))(2.0, 3.0)) == 6.0  # compiles op.fn
    back = pickle.loads(pickle.dumps(op))
    assert back == op and back._fn is None and hash(back) == hash(op)
    assert float(function([a, b], back(a, b))(2.0, 4.0)) == 8.0


# --- printing ---------------------------------------------------------------------------------


def test_dprint_shows_the_inner_graph():
    x, y = pt.dvectors("x", "y")
    op = OpFromGraph([x, y], [x * y + pt.exp(x)], name="f")
    a, b = pt.dvectors("a", "b")
    text = debugprint(op(a, b), file="str")
    assert text.splitlines() == [
        "f{inline=False} [id A]",
        " ├─ a [id B]",
        " └─ b [id C]",
        "",
        "Inner graphs:",
        "",
        "f{inline=False} [id A]",
        " ← Add [id D]",
        "    ├─ Mul [id E]",
        "    │  ├─ i0 [id F]",
        "    │  └─ i1 [id G]",
        "    └─ Exp [id H]",
        "       └─ i0 [id F]",
    ]
    compiled = debugprint(function([a, b], op(a, b)), file="str")
    assert "Inner graphs:" in compiled and "f{inline=False} [id A] 0" in compiled


# --- batching -----------------------------------------------------------------------------------


def test_batching_vectorises_the_inner_graph():
    x = pt.dvector("x")
    op = OpFromGraph([x], [pt.exp(x) * x.sum()], name="f")
    v = pt.dvector("v")
    jac = arignote.gradient.jacobian(op(v), v)
    f = function([v], jac)
    assert not any(isinstance(n.op, Batched) for n in f.maker.fgraph.toposort())
    vv = np.array([0.1, -0.3, 0.7])
    expected = np.diag(np.exp(vv) * vv.sum()) + np.exp(vv)[:, None]
    np.testing.assert_allclose(f(vv), expected, rtol=1e-12)
