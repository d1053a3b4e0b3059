"""The fusion pass (arignote/tensor/rewriting/fusion.py): Elemwise chains and DAGs become one
Elemwise(Composite); every case is checked structurally (what fused) and numerically
(against the unrewritten graph and against the pipeline without fusion)."""

from __future__ import annotations

import io
import pickle
import warnings

import numpy as np
import pytest

import arignote
import arignote.scalar as ps
import arignote.tensor as pt
from arignote.compile.debug.debugmode import DebugMode
from arignote.configdefaults import config
from arignote.graph.fg import FunctionGraph
from arignote.ifelse import ifelse
from arignote.scalar.composite import Composite
from arignote.scalar.op import UnaryScalarOp, same_out
from arignote.tensor.elemwise import Elemwise
from arignote.tensor.rewriting.fusion import MAX_FUSED_NODES, fuse_elemwise, fusion_pass
from arignote.tensor.ufuncs import tensor_copy
from tests.modes import function  # FAST_RUN's rewrites, on the run's linker

NO_REWRITES = arignote.Mode(optimizer=None)
NO_FUSION = arignote.Mode().excluding("fusion")


def nodes(f):
    return f.maker.fgraph.toposort()


def fused_nodes(f):
    return [n for n in nodes(f) if isinstance(n.op, Elemwise) and isinstance(n.op.scalar_op, Composite)]


def elemwise_nodes(f):
    return [n for n in nodes(f) if isinstance(n.op, Elemwise)]


def assert_same(got, expected, exact=True):
    """Same dtypes and shapes; the same values (``exact``: bit for bit, as fusion keeps
    every op and its order) or to 1e-12 (the other rewrites may reorder arithmetic)."""
    got = got if isinstance(got, list) else [got]
    expected = expected if isinstance(expected, list) else [expected]
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        g, e = np.asarray(g), np.asarray(e)
        assert g.dtype == e.dtype and g.shape == e.shape
        # (mode NUMBA: a kernel's libm exp/log may differ from NumPy's SIMD loops by an ulp)
        if (exact and config.mode not in ("NUMBA", "NUMBA_KERNELS")) or g.dtype.kind not in "fc":
            np.testing.assert_array_equal(g, e)  # NaN equals NaN here
        else:
            rtol = 1e-6 if config.mode in ("NUMBA", "NUMBA_KERNELS") and g.dtype.itemsize < 8 else 1e-12
            np.testing.assert_allclose(g, e, rtol=rtol, atol=0, equal_nan=True)


def check(inputs, outputs, values, mode=None):
    """Compile with fusion, check against no rewrites and against no fusion; the function."""
    f = function(inputs, outputs, mode=mode)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        got = f(*values)
        assert_same(got, function(inputs, outputs, mode=NO_FUSION)(*values))
        assert_same(got, function(inputs, outputs, mode=NO_REWRITES)(*values), exact=False)
    return f


def test_seed_a_plus_a_pow_10_is_one_fused_node():
    a = pt.dvector("a")
    f = check([a], a + a**10, [np.array([0.0, 1.0, 2.0])])
    (node,) = nodes(f)
    assert isinstance(node.op, Elemwise) and isinstance(node.op.scalar_op, Composite)
    assert f([0, 1, 2]).tolist() == [0, 2, 1026]
    assert str(node.op) == "Composite{(i0 + (i0 ** 10.0))}"


def test_chain_is_one_node():
    x = pt.dvector("x")
    y = x
    for _ in range(20):
        y = pt.tanh(y * 0.9 + 0.1)
    f = check([x], y, [np.linspace(-2, 2, 5)])
    assert len(nodes(f)) == 1 and len(fused_nodes(f)) == 1


def test_dag_with_shared_subexpressions():
    x, y = pt.dvectors("x", "y")
    t = pt.exp(x * y)
    out = t * t + t / (1 + t) - pt.log1p(t) * y
    f = check([x, y], out, [np.linspace(-1, 1, 4), np.arange(4.0)])
    (node,) = nodes(f)
    assert len(node.inputs) == 2 and len(node.outputs) == 1


def test_multi_output():
    x = pt.dmatrix("x")
    t = pt.sin(x) * 3
    f = check([x], [t + 1, t * t, pt.cos(t)], [np.arange(6.0).reshape(2, 3)])
    (node,) = nodes(f)
    assert len(node.outputs) == 3


def test_intermediate_that_is_also_a_graph_output():
    x = pt.dvector("x")
    t = pt.exp(x) - 1
    f = check([x], [t, t * 2 + 1], [np.arange(3.0)])
    (node,) = nodes(f)
    assert len(node.outputs) == 2
    a, b = f(np.arange(3.0))
    expected = b.copy()
    a[:] = -7  # outputs are distinct arrays
    np.testing.assert_array_equal(b, expected)


def test_intermediate_used_by_another_node_stays_an_output():
    x = pt.dmatrix("x")
    W = pt.dmatrix("W")
    t = pt.tanh(x * 2)
    out = pt.dot(t, W) + t.sum() * (t + 1)
    f = check([x, W], out, [np.arange(6.0).reshape(2, 3) / 6, np.ones((3, 3))])
    fused = fused_nodes(f)
    assert fused and all(len(n.outputs) >= 1 for n in fused)


def test_a_reduction_in_between_is_never_fused_into_a_cycle():
    x = pt.dvector("x")
    y = pt.exp(x)
    out = (y * y.sum()) + 1  # y -> sum -> out and y -> out: y and out cannot be one node
    f = check([x], out, [np.arange(3.0)])
    f.maker.fgraph.check_integrity()
    assert any(not isinstance(n.op, Elemwise) for n in nodes(f))


def test_independent_reduction_does_not_block_fusion():
    x, z = pt.dvectors("x", "z")
    y = pt.exp(x)
    s = pt.tanh(z).sum()
    out = pt.sqrt(y + s) * 2
    f = check([x, z], out, [np.arange(3.0), np.arange(4.0)])
    # exp, add, sqrt, mul in one node (the tanh has another shape: its own)
    assert any(len(n.op.scalar_op.fgraph.apply_nodes) >= 4 for n in fused_nodes(f))


def test_broadcasting_inputs():
    x = pt.dmatrix("x")
    b = pt.dvector("b")
    c = pt.dcol("c")
    out = pt.exp(x + b) * c - b**2
    f = check(
        [x, b, c], out, [np.arange(6.0).reshape(2, 3) / 5, np.array([1.0, 2, 3]), np.array([[2.0], [3]])]
    )
    # exp(x + b) * c and the subtraction share the loop shape (2, 3); b**2 has shape (1, 3)
    big = [n for n in fused_nodes(f) if n.outputs[0].type.ndim == 2]
    assert big
    for n in elemwise_nodes(f):  # every fused node's outputs share one static shape
        assert len({o.type.shape for o in n.outputs}) == 1


def test_broadcast_shapes_are_not_mixed_in_one_group():
    x = pt.dmatrix("x")
    r = pt.row("r", dtype="float64")
    out = pt.exp(r) * 2 + x  # exp(r) * 2 has shape (1, ?), the sum (?, ?)
    f = check([x, r], out, [np.ones((3, 2)), np.array([[0.5, 1.5]])])
    shapes = [n.outputs[0].type.shape for n in elemwise_nodes(f)]
    assert (1, None) in shapes and (None, None) in shapes


def test_mixed_dtypes():
    i = pt.vector("i", dtype="int8")
    j = pt.vector("j", dtype="int32")
    x = pt.fvector("x")
    out = (i * 100 + j) % 7 + x * (i // 3) - pt.cast(j, "float32") / 3
    values = [
        np.array([-5, 3, 100], dtype="int8"),
        np.array([7, -8, 9], dtype="int32"),
        np.ones(3, "float32"),
    ]
    f = check([i, j, x], [out, i * 100], values)  # i * 100 wraps in int8, as unfused
    assert len(fused_nodes(f)) == 1
    assert f.maker.fgraph.outputs[0].type.dtype == out.type.dtype


def test_types_of_outputs_are_kept_exactly():
    x = pt.tensor("x", dtype="float32", shape=(None, 3))
    y = pt.tensor("y", dtype="int16", shape=(1, 3))
    a = pt.exp(x) + y
    b = a > 1
    f = check([x, y], [a, b], [np.ones((2, 3), "float32"), np.ones((1, 3), "int16")])
    assert [o.type for o in f.maker.fgraph.outputs] == [a.type, b.type]


def test_size_one_constants_go_in_the_body():
    x = pt.dmatrix("x")
    out = (x + np.array([[2.0]])) * np.float32(3)
    f = check([x], out, [np.ones((2, 2))])
    (node,) = nodes(f)
    assert node.inputs == [f.maker.fgraph.inputs[0]]


def test_non_scalar_constants_stay_inputs():
    x = pt.dmatrix("x")
    out = pt.exp(x + np.array([[1.0, 2.0]])) * 2
    f = check([x], out, [np.ones((3, 2))])
    (node,) = nodes(f)
    assert len(node.inputs) == 2


def test_sum_of_1666_terms_is_one_node():
    # (products of two reads: a read times a constant is gathered before fusion)
    x, w = pt.dvectors("x", "w")
    y = x[0] * w[0]
    for i in range(1, 1666):
        y = y + x[i] * w[i]
    v, u = np.linspace(0.1, 1.0, 1666), np.arange(1.0, 1667.0)
    f = check([x, w], y, [v, u])
    (node,) = fused_nodes(f)
    assert len(node.inputs) >= 1666  # no operand limit
    np.testing.assert_allclose(f(v, u), np.dot(v, u), rtol=1e-12)


def test_wide_add_of_fused_terms():
    xs = [pt.dscalar(f"x{i}") for i in range(200)]
    out = pt.add(*[pt.exp(x) * (i + 1) for i, x in enumerate(xs)])  # 401 nodes: one kernel
    values = list(np.linspace(-1, 1, 200))
    f = check(xs, out, values)
    assert len(nodes(f)) == 1


def test_ten_thousand_node_chain_fuses_in_one_pass_into_bounded_kernels():
    x = pt.dvector("x")
    y = x
    for _ in range(3334):
        y = pt.tanh(y * 0.9 + 0.1)
    fg = FunctionGraph([x], [y])
    assert len(fg.apply_nodes) > 10_000  # with the broadcast constants' ExpandDims
    n_elemwise = sum(isinstance(n.op, Elemwise) for n in fg.apply_nodes)
    # one kernel holds at most MAX_FUSED_NODES nodes (its generated body stays small): a
    # chain becomes a chain of full kernels
    kernels = -(-n_elemwise // MAX_FUSED_NODES)
    assert fuse_elemwise(fg) == kernels
    assert sum(isinstance(n.op, Elemwise) for n in fg.apply_nodes) == kernels
    fg.check_integrity()
    fn = function([x], y)  # the whole pipeline, too
    v = np.linspace(-1, 1, 3)
    expected = v
    for _ in range(3334):
        expected = np.tanh(expected * 0.9 + 0.1)
    np.testing.assert_allclose(fn(v), expected, rtol=1e-12)
    assert len(fused_nodes(fn)) == kernels


def test_ifelse_branches_are_not_fused_together():
    c = pt.lscalar("c")
    i = pt.lvector("i")
    j = pt.lvector("j")
    then = (i + 1) * 2
    other = (i // j) * 3  # integer division by zero raises: the branch must not run
    f = check([c, i, j], ifelse(c, then, other), [1, np.arange(3), np.arange(3) + 1])
    np.testing.assert_array_equal(f(1, np.arange(3), np.zeros(3, "int64")), (np.arange(3) + 1) * 2)
    with pytest.raises(ZeroDivisionError):
        f(0, np.arange(3), np.zeros(3, "int64"))
    for n in elemwise_nodes(f):  # no node computes both branches
        assert len(n.outputs) == 1


def test_ifelse_with_shared_branch_inputs():
    c = pt.dscalar("c")
    x = pt.dvector("x")
    t = pt.exp(x)
    f = check([c, x], ifelse(pt.gt(c, 0), t + 1, t * 2), [1.0, np.arange(3.0)])
    ifelse_node = next(n for n in nodes(f) if not isinstance(n.op, Elemwise))
    then_var, else_var = ifelse_node.inputs[1], ifelse_node.inputs[2]
    assert then_var.owner is not else_var.owner
    assert len(then_var.owner.outputs) == len(else_var.owner.outputs) == 1
    assert_same(f(-1.0, np.arange(3.0)), np.exp(np.arange(3.0)) * 2)


def test_condition_and_branch_not_in_one_node():
    x = pt.dscalar("x")
    f = check([x], ifelse(pt.gt(x * 2, 0), x * 2 + 1, x - 1), [1.5])
    ifelse_node = next(n for n in nodes(f) if not isinstance(n.op, Elemwise))
    owners = [v.owner for v in ifelse_node.inputs if v.owner is not None]
    assert len(set(owners)) == len(owners)


def test_work_reaching_a_branch_only_through_other_nodes_stays_lazy():
    # ``i // j`` feeds the else branch only through ``q + eager``, which also reads an eager
    # output: fusing it with that eager work would divide by zero when the branch is not taken
    c = pt.lscalar("c")
    i, j = pt.lvector("i"), pt.lvector("j")
    eager = i + 1
    other = ((i // j) + eager) * 3
    f = check([c, i, j], [ifelse(c, eager * 2, other), eager], [0, np.arange(3), np.arange(3) + 1])
    taken, out = f(1, np.arange(3), np.zeros(3, "int64"))  # the else branch never runs
    np.testing.assert_array_equal(taken, (np.arange(3) + 1) * 2)
    np.testing.assert_array_equal(out, np.arange(3) + 1)
    with pytest.raises(ZeroDivisionError):
        f(0, np.arange(3), np.zeros(3, "int64"))
    bodies = [str(n.op) for n in elemwise_nodes(f)]
    assert not any("//" in b and "(i0 + 1)" in b.split("//")[0] for b in bodies), bodies
    (branch,) = [n for n in elemwise_nodes(f) if "//" in str(n.op)]
    assert len(branch.outputs) == 1 and len(branch.op.scalar_op.fgraph.apply_nodes) == 3


def test_two_branches_fed_through_chains_are_two_kernels():
    c = pt.dscalar("c")
    x = pt.dvector("x")
    t = pt.exp(x)  # used by both branches: computed whichever is taken, so eager
    then = pt.tanh(t * 2 + 1) - 3
    other = pt.sin(t / 2 - 1) * 4
    f = check([c, x], ifelse(pt.gt(c, 0), then, other), [1.0, np.linspace(-1, 1, 5)])
    ifelse_node = next(n for n in nodes(f) if not isinstance(n.op, Elemwise))
    then_owner, else_owner = ifelse_node.inputs[1].owner, ifelse_node.inputs[2].owner
    assert then_owner is not else_owner
    for owner, op_name in ((then_owner, "tanh"), (else_owner, "sin")):
        body = str(owner.op)
        assert op_name in body and "exp" not in body  # the branch's chain, nothing eager
    assert_same(f(-1.0, np.linspace(-1, 1, 5)), np.sin(np.exp(np.linspace(-1, 1, 5)) / 2 - 1) * 4)


def test_inplace_elemwise_is_skipped():
    x, y = pt.dvectors("x", "y")
    t = x * 2
    inplace_add = Elemwise(ps.add, {0: 0})
    out = pt.exp(inplace_add(t, y))
    fg = FunctionGraph([x, y], [out])
    fuse_elemwise(fg)
    kinds = [n.op for n in fg.toposort()]
    assert inplace_add in kinds  # the in-place node is left as it is, not in a group


def test_fusion_can_be_excluded():
    a = pt.dvector("a")
    f = function([a], a + a**10, mode=NO_FUSION)
    assert not fused_nodes(f) and len(nodes(f)) == 2
    fg = FunctionGraph([a], [a + a**10])
    assert fusion_pass(fg, NO_FUSION.query) == 0
    for tag in ("fusion", "elemwise_fusion"):
        assert not fused_nodes(function([a], a + a**10, mode=arignote.Mode().excluding(tag)))


def test_gradient_of_a_fused_function():
    x = pt.dvector("x")
    w = pt.dvector("w")
    cost = (pt.tanh(x * w) ** 2 * pt.exp(-x)).sum()
    gx, gw = arignote.grad(cost, [x, w])
    f = check([x, w], [cost, gx, gw], [np.linspace(-1, 1, 4), np.arange(4.0)])
    assert fused_nodes(f)


def test_existing_composites_are_inlined():
    i0 = ps.float64("i0")
    comp = Composite([i0], [ps.exp(i0) * 2.0])
    x = pt.dvector("x")
    out = pt.log(Elemwise(comp)(x)) + x
    f = check([x], out, [np.arange(1.0, 4.0)])
    (node,) = nodes(f)
    inner_ops = {type(n.op) for n in node.op.scalar_op.fgraph.apply_nodes}
    assert Composite not in inner_ops


def test_zero_d_graph():
    x = pt.dscalar("x")
    y = pt.iscalar("y")
    t = pt.sin(x) * y
    f = check([x, y], [t + 1, pt.sqr(y) * t], [0.5, 3])
    assert len(nodes(f)) == 1
    assert all(isinstance(v, np.ndarray) and v.ndim == 0 for v in f(0.5, 3))


class _Float64Impl(UnaryScalarOp):
    """A scalar op whose impl breaks the dtype contract (float64 for float32 inputs)."""

    def impl(self, a):
        return np.asarray(a, dtype="float64") * 1.0000001


class _NotFusable(UnaryScalarOp):
    fusable = False

    def impl(self, a):
        return np.negative(a)


def test_an_impl_of_another_dtype_is_cast_in_the_body():
    x = pt.fvector("x")
    op = Elemwise(_Float64Impl(same_out, name="wide"))
    out = op(x * 3) + 1  # unfused, the node casts its result to float32; fused too
    f = check([x], out, [np.array([1.0, 2.0, 3.0], "float32")])
    (node,) = nodes(f)
    assert "Cast{float32}" in [str(n.op) for n in node.op.scalar_op.fgraph.apply_nodes]


def test_a_scalar_op_may_opt_out():
    x = pt.dvector("x")
    op = Elemwise(_NotFusable(same_out, name="nofuse"))
    f = check([x], pt.exp(op(x * 2)) + 1, [np.arange(3.0)])
    assert any(n.op.scalar_op is op.scalar_op for n in nodes(f))  # (in place: another Elemwise)


def test_debugmode_checks_the_fused_thunk():
    x, y = pt.dvectors("x", "y")
    t = pt.exp(x) * y
    outs = [t + 1, pt.tanh(t), (t * 2).sum()]
    f = function([x, y], outs, mode=DebugMode())
    values = [np.linspace(-1, 1, 5), np.arange(5.0)]
    assert_same(f(*values), function([x, y], outs, mode=NO_FUSION)(*values))
    assert fused_nodes(f)


def test_dprint_and_profile_name_the_fused_node():
    x = pt.dvector("x")
    f = function([x], pt.exp(x) * 2 + 1, profile=True)
    text = arignote.dprint(f, file="str")
    assert text.splitlines()[0].startswith("Composite{((exp(i0) * 2.0) + 1.0)} [id A]")
    assert "Inner graphs:" in text
    f(np.arange(3.0))
    out = io.StringIO()
    f.profile.summary(file=out)
    assert "Composite{((exp(i0) * 2.0) + 1.0)}" in out.getvalue()


def test_fused_thunk_calls_numpy_directly():
    from arignote.link.python.elemwise import _resolve_inner

    x = ps.float64("x")
    i = ps.int8("i")
    comp = Composite([x, i], [ps.tanh(x * 0.9) + ps.cast(i, "float64"), ps.tanh(i)])
    code = comp.py_code(_resolve_inner)
    assert "tanh(" in code and "multiply(" in code and ".astype(" in code
    assert "tanh_1(" in code  # tanh of an int8 computes in float32: the op's impl
    fn = comp.compile_body(_resolve_inner)
    xs, iv = np.linspace(-1, 1, 3), np.array([1, 2, 3], "int8")
    for got, want in zip(fn(xs, iv), comp.impl(xs, iv)):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("n", [3, 17, 200])
def test_a_wide_sum_is_one_line_of_the_body_and_keeps_its_order(n):
    from arignote.link.python.elemwise import _resolve_inner

    xs = [ps.float64(f"x{k}") for k in range(n)]
    comp = Composite(xs, [ps.add(*xs)])
    code = comp.py_code(_resolve_inner)
    assert ("= pairwise(add, (" in code) == (n > 16)  # a short sum stays a statement per pair
    assert len(code.splitlines()) < 8 or n <= 16
    fn = comp.compile_body(_resolve_inner)
    vals = [np.array([1e16 if k == 0 else 1.0, float(k)]) for k in range(n)]
    want = vals[0]
    for v in vals[1:]:
        want = want + v  # left to right: the same rounding as the unfused graph
    np.testing.assert_array_equal(fn(*vals), want)
    target = np.zeros(2)
    written = comp.compile_body(_resolve_inner, {comp.fgraph.outputs[0].owner: 0})
    got = written(target, *vals[1:])
    assert got is target  # written into its first input (out=)
    np.testing.assert_array_equal(target, sum(vals[1:], np.zeros(2)))


def test_random_elementwise_graphs_agree():
    rng = np.random.default_rng(0)
    unary = [pt.exp, pt.tanh, pt.sin, pt.abs, pt.sqr, lambda v: -v, pt.log1p]
    binary = [pt.add, pt.mul, pt.sub, pt.maximum, lambda a, b: a / (1 + pt.abs(b))]
    for _ in range(25):
        x = pt.dmatrix("x")
        r = pt.row("r", dtype="float64")
        v = pt.dvector("v")
        pool = [x, r, v]
        outs = []
        for _ in range(12):
            kind = rng.integers(4)
            if kind < 2:
                pool.append(unary[rng.integers(len(unary))](pool[rng.integers(len(pool))]))
            elif kind < 3:
                a, b = (pool[k] for k in rng.integers(len(pool), size=2))
                pool.append(binary[rng.integers(len(binary))](a, b))
            else:
                pool.append(pool[rng.integers(len(pool))].sum(axis=-1, keepdims=True) * 0.1)
            if rng.random() < 0.2:
                outs.append(pool[-1])
        outs.append(pool[-1] + x + r + v)
        values = [rng.normal(size=(2, 3)) * 0.5, rng.normal(size=(1, 3)) * 0.5, rng.normal(size=3) * 0.5]
        f = check([x, r, v], outs, values)
        f.maker.fgraph.check_integrity()


@pytest.mark.parametrize("n_inputs", [2, 3])
def test_runtime_shape_mismatch_is_an_error(n_inputs):
    xs = pt.dvectors(*"xyz"[:n_inputs])
    out = pt.exp(xs[0])
    for v in xs[1:]:
        out = out * v + 1
    f = function(xs, out)
    assert len(fused_nodes(f)) == 1
    good = [np.ones(3)] * n_inputs
    assert f(*good).shape == (3,)
    with pytest.raises(ValueError, match="shape mismatch"):
        f(*good[:-1], np.ones(4))


def test_a_fused_function_pickles():
    x = pt.dvector("x")
    f = function([x], [pt.tanh(x * 2) + 1, pt.exp(x) * x])
    g = pickle.loads(pickle.dumps(f))
    v = np.linspace(-1, 1, 4)
    assert_same(g(v), f(v))


@pytest.mark.parametrize("debug", [False, True])
def test_outputs_of_a_fused_node_never_share_memory(debug):
    x = pt.dvector("x")
    t = pt.exp(x)
    outs = [t, tensor_copy(t), tensor_copy(t) * 1, pt.real(pt.complex(t, x))]
    f = function([x], outs, mode=DebugMode() if debug else None)  # DebugMode: perform too
    assert len(fused_nodes(f)) == 1
    got = f(np.arange(3.0))
    assert not any(np.shares_memory(a, b) for k, a in enumerate(got) for b in got[:k])
    assert_same(got, function([x], outs, mode=NO_FUSION)(np.arange(3.0)))
