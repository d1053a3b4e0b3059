"""The JAX implementations where JAX and NumPy differ: static shapes under ``jax.jit``,
run-time checks that cannot raise inside a traced function, ``on_error``, and batching.

Each case compares with NumPy/SciPy or the reference VM, or checks the error: a shape that
depends on values names the node under ``jit``; a failing check raises (at once outside
``jit``, with the message in JAX's runtime error inside).
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg

jax = pytest.importorskip("jax")

import arignote  # noqa: E402
import arignote.tensor as pt  # noqa: E402
from arignote.graph.basic import Apply  # noqa: E402
from arignote.graph.op import Op  # noqa: E402
from arignote.link.jax import jax_function  # noqa: E402
from arignote.link.jax.dispatch import jax_funcify  # noqa: E402
from arignote.link.jax.dispatch.static import DataDependentShapeError  # noqa: E402
from arignote.tensor import linalg as la  # noqa: E402
from arignote.tensor.blockwise import Blockwise  # noqa: E402
from arignote.tensor.checks import CheckValues  # noqa: E402
from arignote.tensor.linalg.decompositions import QR, Cholesky  # noqa: E402
from arignote.tensor.linalg.operands import RuntimeCheck  # noqa: E402
from arignote.tensor.linalg.solve import CholeskySolve, Solve, SolveTriangular  # noqa: E402
from tests.link.jax.evaluate import check_nodes  # noqa: E402


def fn_of(out, jit: bool = False):
    f = jax_funcify(out.owner.op, node=out.owner)
    return jax.jit(f) if jit else f


XV = np.arange(6.0).reshape(2, 3)
MASK = XV > 2


# --- indexing ---------------------------------------------------------------------------------


@pytest.mark.parametrize("jit", [False, True])
def test_writing_one_value_through_a_traced_mask_is_a_where(jit: bool) -> None:
    x, m = pt.dmatrix("x"), pt.tensor("m", dtype="bool", shape=(None, None))
    for build, expect in (
        (lambda: pt.set_subtensor(x[m], 5.0), np.where(MASK, 5.0, XV)),
        (lambda: pt.inc_subtensor(x[m], 1.5), np.where(MASK, XV + 1.5, XV)),
    ):
        out = build()
        got = fn_of(out, jit)(XV, np.asarray(out.owner.inputs[1].data), MASK)
        np.testing.assert_array_equal(got, expect)


def test_a_mask_read_under_jit_names_the_node() -> None:
    x, m = pt.dmatrix("x"), pt.tensor("m", dtype="bool", shape=(None, None))
    out = x[m]
    np.testing.assert_array_equal(fn_of(out)(XV, MASK), XV[MASK])
    with pytest.raises(DataDependentShapeError, match=r"AdvancedSubtensor.*boolean mask.*jax\.jit"):
        fn_of(out, jit=True)(XV, MASK)


def test_a_constant_mask_and_constant_slice_bounds_trace() -> None:
    x = pt.dmatrix("x")
    out = x[pt.constant(MASK)]
    np.testing.assert_array_equal(fn_of(out, jit=True)(XV, MASK), XV[MASK])
    i = pt.constant(np.int64(1))
    sliced = x[i:, ::-1]
    np.testing.assert_array_equal(fn_of(sliced, jit=True)(XV, 1), XV[1:, ::-1])


def test_a_symbolic_slice_bound_under_jit_names_the_node() -> None:
    x, i = pt.dmatrix("x"), pt.lscalar("i")
    out = x[i:]
    np.testing.assert_array_equal(fn_of(out)(XV, 1), XV[1:])
    with pytest.raises(DataDependentShapeError, match=r"Subtensor.*slice bound"):
        fn_of(out, jit=True)(XV, 1)


def test_an_integer_index_is_traced() -> None:
    x, i = pt.dmatrix("x"), pt.lscalar("i")
    np.testing.assert_array_equal(fn_of(x[i], jit=True)(XV, -1), XV[-1])
    y = pt.dvector("y")
    out = pt.set_subtensor(x[i], y)
    got = fn_of(out, jit=True)(XV, np.array([7.0, 8.0, 9.0]), 0)
    np.testing.assert_array_equal(got, [[7.0, 8.0, 9.0], [3.0, 4.0, 5.0]])


def test_repeated_indices_accumulate_or_the_last_write_wins() -> None:
    v, y = pt.dvector("v"), pt.dvector("y")
    idx = pt.constant(np.array([0, 2, 0]))
    rows = [(pt.inc_subtensor(v[idx], y), [4.0, 0.0, 2.0]), (pt.set_subtensor(v[idx], y), [3.0, 0.0, 2.0])]
    for out, expect in rows:
        got = fn_of(out, jit=True)(np.zeros(3), np.array([1.0, 2.0, 3.0]), idx.data)
        np.testing.assert_array_equal(got, expect)
    # x[idx] += y in NumPy: repeated places keep the last increment
    m = pt.dmatrix("m")
    out = pt.inc_subtensor(
        m[pt.constant(np.array([0, 0])), pt.constant(np.array([1, 1]))], y, ignore_duplicates=True
    )
    got = fn_of(out, jit=True)(
        np.zeros((2, 2)), np.array([1.0, 2.0]), *(c.data for c in out.owner.inputs[2:])
    )
    want = np.zeros((2, 2))
    want[[0, 0], [1, 1]] += [1.0, 2.0]
    np.testing.assert_array_equal(got, want)


# --- data-dependent lengths -------------------------------------------------------------------


@pytest.mark.parametrize(
    "build, value",
    [
        (lambda v: pt.nonzero(v)[0], np.array([0.0, 1.0, 0.0, 2.0])),
        (lambda v: pt.unique(v), np.array([2.0, 1.0, 2.0])),
        (lambda v: pt.bincount(pt.cast(v, "int64")), np.array([0.0, 3.0, 3.0])),
    ],
    ids=["nonzero", "unique", "bincount"],
)
def test_value_dependent_lengths_run_eagerly_and_name_the_node_under_jit(build, value) -> None:
    v = pt.dvector("v")
    out = build(v)
    check_nodes([v], [out], [value])
    with pytest.raises(DataDependentShapeError, match=type(out.owner.op).__name__):
        check_nodes([v], [out], [value], jit=lambda node: node is out.owner)


def test_bincount_with_a_static_length_traces() -> None:
    i = pt.tensor("i", dtype="int64", shape=(None,))
    out = pt.bincount(i, minlength=3)
    fn = fn_of(out, jit=out.owner.outputs[0].type.shape[0] is not None)
    np.testing.assert_array_equal(fn(np.array([0, 2, 2]), 3), [1, 0, 2])


def test_bincount_of_a_negative_value_raises() -> None:
    i = pt.lvector("i")
    out = pt.bincount(i)
    node = out.owner
    while type(node.op).__name__ != "Bincount":  # past the composed function's own check
        node = node.inputs[0].owner
    with pytest.raises(ValueError, match="non-negative"):
        jax_funcify(node.op, node=node)(np.array([1, -1]), 0)


# --- run-time checks -----------------------------------------------------------------------------


def test_check_values_raises_with_the_offending_values() -> None:
    v = pt.dvector("v")
    out = CheckValues("v must be positive")(v, pt.gt(v, 0))
    f = jax_funcify(out.owner.op, node=out.owner)
    np.testing.assert_array_equal(f(np.array([1.0, 2.0]), np.array([True, True])), [1.0, 2.0])
    with pytest.raises(ValueError, match=r"v must be positive; got .*-3.0.* at \(1,\)"):
        f(np.array([1.0, -3.0]), np.array([True, False]))
    with pytest.raises(Exception, match="v must be positive"):  # JAX's runtime error under jit
        jax.block_until_ready(jax.jit(f)(np.array([1.0, -3.0]), np.array([True, False])))


def test_runtime_check_of_shapes_and_zeros() -> None:
    x, ref = pt.dmatrix("x"), pt.dmatrix("ref")
    square = RuntimeCheck("square", "the rule")(x, ref)
    f = fn_of(square, jit=True)
    np.testing.assert_array_equal(f(XV, np.zeros((2, 2))), XV)
    with pytest.raises(ValueError, match="the rule: a square matrix"):
        f(XV, np.zeros((2, 3)))
    zeros = fn_of(RuntimeCheck("zeros", "the rule")(x, ref))
    with pytest.raises(ValueError, match="not zero"):
        zeros(XV, np.ones((2, 2)))


# --- on_error ---------------------------------------------------------------------------------------

SINGULAR = np.array([[1.0, 2.0], [2.0, 4.0]])
INDEFINITE = np.array([[1.0, 2.0], [2.0, 1.0]])


@pytest.mark.parametrize(
    "op, a",
    [
        (Solve(b_ndim=1, on_error="raise"), SINGULAR),
        (SolveTriangular(lower=True, b_ndim=1, on_error="raise"), np.tril(SINGULAR) * [[1, 0], [1, 0]]),
        (CholeskySolve(lower=True, b_ndim=1, on_error="raise"), np.array([[1.0, 0.0], [1.0, 0.0]])),
        (Solve(assume_a="pos", b_ndim=1, on_error="raise"), INDEFINITE),
    ],
    ids=["gen", "triangular", "cho_solve", "pos"],
)
def test_a_failed_solve_raises_or_gives_nans(op, a) -> None:
    av, bv = pt.dmatrix("a"), pt.dvector("b")
    out = op(av, bv)
    with pytest.raises(np.linalg.LinAlgError, match=type(op).__name__):
        fn_of(out)(a, np.ones(2))
    nan_op = type(op)(**{**{k: getattr(op, k) for k in op.__props__}, "on_error": "nan"})
    got = fn_of(nan_op(av, bv), jit=True)(a, np.ones(2))
    assert np.isnan(got).all()


def test_cholesky_on_error() -> None:
    a = pt.dmatrix("a")
    nan = fn_of(Cholesky(on_error="nan")(a), jit=True)
    assert np.isnan(nan(INDEFINITE)).all()
    np.testing.assert_allclose(nan(np.diag([4.0, 9.0])), np.diag([2.0, 3.0]))
    assert np.isnan(nan(np.array([[np.nan, 0.0], [0.0, 1.0]]))).all()
    raising = fn_of(Cholesky(on_error="raise")(a))
    with pytest.raises(np.linalg.LinAlgError, match="not positive definite"):
        raising(INDEFINITE)
    with pytest.raises(ValueError, match="NaN or infinity"):
        raising(np.array([[np.nan, 0.0], [0.0, 1.0]]))


def test_cholesky_and_symmetric_solves_read_one_triangle() -> None:
    a, b = pt.dmatrix("a"), pt.dvector("b")
    spd = np.array([[4.0, 1.0], [1.0, 3.0]])
    garbage_up = np.tril(spd) + np.triu(np.full((2, 2), 100.0), 1)
    np.testing.assert_allclose(fn_of(Cholesky(lower=True)(a))(garbage_up), np.linalg.cholesky(spd))
    for assume_a in ("sym", "pos"):
        out = Solve(assume_a=assume_a, lower=True, b_ndim=1)(a, b)
        np.testing.assert_allclose(fn_of(out)(garbage_up, np.ones(2)), np.linalg.solve(spd, np.ones(2)))


@pytest.mark.parametrize("pivoting", [False, True])
@pytest.mark.parametrize("shape", [(4, 3), (2, 5)])
def test_qr_raw_gives_lapacks_householder_form(pivoting: bool, shape: tuple) -> None:
    a = pt.dmatrix("a")
    outs = QR("raw", pivoting=pivoting)(a)
    value = np.random.default_rng(1).normal(size=shape)
    want = scipy.linalg.qr(value, mode="raw", pivoting=pivoting)
    want = [*want[0], *want[1:]]  # ((h, tau), r[, p])
    f = arignote.function([a], outs, mode="JAX")
    got = f(value)
    assert len(got) == len(want) == 3 + pivoting
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)
    # a batch (vmap of the host call), under jit
    batched = jax.jit(jax.vmap(jax_function(outs, [a])))(np.stack([value, 2 * value]))
    np.testing.assert_allclose(batched[1][1], scipy.linalg.qr(2 * value, mode="raw", pivoting=pivoting)[0][1])


@pytest.mark.parametrize("mode", ["full", "economic", "r"])
def test_qr_matches_scipy(mode: str) -> None:
    a = pt.dmatrix("a")
    out = QR(mode)(a)
    outs = out if isinstance(out, list | tuple) else [out]
    check_nodes([a], outs, [np.arange(12.0).reshape(4, 3) ** 1.5], jit=lambda node: True)


# --- batching ---------------------------------------------------------------------------------------


def test_blockwise_broadcasts_and_shares_unbatched_inputs() -> None:
    a = pt.tensor("a", dtype="float64", shape=(None, 1, None, None))
    b = pt.tensor("b", dtype="float64", shape=(None, None))
    out = la.solve(a, b, b_ndim=1)
    assert isinstance(out.owner.op, Blockwise)
    rng = np.random.default_rng(0)
    av = rng.normal(size=(2, 1, 3, 3)) + 3 * np.eye(3)
    bv = rng.normal(size=(4, 3))
    want = np.linalg.solve(av, bv[None, :, :, None])[..., 0]
    got = fn_of(out, jit=True)(av, bv)
    assert got.shape == (2, 4, 3)
    np.testing.assert_allclose(got, want)


def test_blockwise_with_unit_batch_dimensions_and_several_outputs() -> None:
    a = pt.tensor("a", dtype="float64", shape=(1, None, None))
    sign, logdet = la.slogdet(a)
    av = -np.eye(3)[None] * 2.0
    s, ld = fn_of(sign, jit=True)(av)
    np.testing.assert_allclose(s, [-1.0])
    np.testing.assert_allclose(ld, [np.log(8.0)])


def test_blockwise_of_an_op_without_jax_implementation_names_it() -> None:
    class NoJax(Op):
        __props__ = ()
        gufunc_signature = "(m)->(m)"

        def make_node(self, x):
            x = pt.as_tensor_variable(x)
            return Apply(self, [x], [x.type()])

        def perform(self, node, inputs, output_storage):
            output_storage[0][0] = inputs[0]

    a = pt.dmatrix("a")
    out = Blockwise(NoJax())(a)
    with pytest.raises(NotImplementedError, match="NoJax"):
        jax_funcify(out.owner.op, node=out.owner)


def test_batched_maps_the_core_op_over_the_batched_inputs_only() -> None:
    from arignote.tensor.batching import Batched
    from arignote.tensor.searching import SearchsortedOp

    rows, q = pt.dmatrix("rows"), pt.dvector("q")
    out = Batched(SearchsortedOp("left"), (True, False))(rows, q)
    rv = np.sort(np.random.default_rng(1).normal(size=(3, 5)), axis=1)
    qv = np.array([-0.5, 0.0, 0.7])
    got = fn_of(out, jit=True)(rv, qv)
    np.testing.assert_array_equal(got, [np.searchsorted(r, qv) for r in rv])
    check_nodes([rows, q], [out], [rv, qv])


def test_a_slice_bound_computed_from_shapes_traces() -> None:
    x = pt.dmatrix("x")
    out = x[: x.shape[0] - 1, 1 : x.shape[1]]
    np.testing.assert_array_equal(fn_of(out, jit=True)(XV, *_bound_values(out, XV)), XV[:1, 1:])
    y = pt.dvector("y")
    inc = pt.inc_subtensor(x[: x.shape[0] - 1, 1:], y)
    got = fn_of(inc, jit=True)(XV, np.array([1.0, 2.0]), *_bound_values(inc, XV))
    want = XV.copy()
    want[:1, 1:] += [1.0, 2.0]
    np.testing.assert_array_equal(got, want)


def _bound_values(out, xv) -> list:
    """The values of the node's index inputs (computed from xv's shape by the reference VM)."""
    from arignote import function

    x = out.owner.inputs[0]
    first = 2 if type(out.owner.op).__name__.endswith("IncSubtensor") else 1
    bounds = out.owner.inputs[first:]
    return function([x], bounds, on_unused_input="ignore")(xv) if bounds else []
