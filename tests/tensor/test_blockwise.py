"""Blockwise: values against NumPy loops, batch broadcasting, errors, shapes, gradients."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import arignote.tensor as pt
from arignote import function
from arignote.gradient import DisconnectedType, Rop, grad, jacobian, verify_grad
from arignote.graph.basic import Apply
from arignote.graph.op import Op
from arignote.graph.traversal import ancestors
from arignote.tensor.batching import Batched
from arignote.tensor.blockwise import Blockwise, blockwise_apply, parse_gufunc_signature
from arignote.tensor.products import Dot, dot
from arignote.tensor.type import TensorType
from tests.tensor.utils import assert_infer_shape


class MatVec(Dot):
    gufunc_signature = "(m,n),(n)->(m)"


class Inv(Op):
    """A core matrix inverse whose pullback uses its own output (and matmuls)."""

    __props__ = ()
    gufunc_signature = "(m,m)->(m,m)"

    def make_node(self, x: Any) -> Apply:
        x = pt.as_tensor_variable(x)
        assert x.type.ndim == 2
        return Apply(self, [x], [x.type()])

    def perform(self, node: Apply, inputs: list, out: list) -> None:
        out[0][0] = np.linalg.inv(inputs[0])

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list) -> list:
        return [shapes[0]]

    def pullback(self, inputs: list, outputs: list, grads: list) -> list:
        (inv,) = outputs
        return [-dot(dot(inv.T, grads[0]), inv.T)]

    def pushforward(self, inputs: list, outputs: list, evs: list) -> list:
        (inv,) = outputs
        return [-dot(dot(inv, evs[0]), inv)]


class SumAndSquares(Op):
    """Two outputs per core vector: its sum and its sum of squares."""

    __props__ = ()
    gufunc_signature = "(n)->(),()"

    def make_node(self, x: Any) -> Apply:
        x = pt.as_tensor_variable(x)
        return Apply(self, [x], [TensorType(x.type.dtype, ())(), TensorType(x.type.dtype, ())()])

    def perform(self, node: Apply, inputs: list, out: list) -> None:
        (x,) = inputs
        out[0][0] = np.asarray(x.sum(), dtype=x.dtype)
        out[1][0] = np.asarray((x * x).sum(), dtype=x.dtype)

    def pullback(self, inputs: list, outputs: list, grads: list) -> list:
        (x,) = inputs
        terms = [
            pt.ones_like(x) * g if k == 0 else 2 * x * g
            for k, g in enumerate(grads)
            if not isinstance(g.type, DisconnectedType)  # an unused output
        ]
        return [terms[0] if len(terms) == 1 else terms[0] + terms[1]]


def well_conditioned(*batch: int, n: int = 3, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.normal(size=(*batch, n, n)) + n * np.eye(n)


def test_signature_parsing() -> None:
    assert parse_gufunc_signature("(m,n),(n)->(m)") == ((("m", "n"), ("n",)), (("m",),))
    assert parse_gufunc_signature("(), (n) -> (n)") == (((), ("n",)), (("n",),))
    for bad in ["(m,n)(n)", "(m,n),x->(m)", "(n)(n)->(n)", ",(n)->()", "(n)->", "(n,)->(n)", "(n)->(n)->(n)"]:
        with pytest.raises(ValueError, match="not a gufunc signature"):
            parse_gufunc_signature(bad)


def test_values_against_a_numpy_loop() -> None:
    a, v = pt.tensor3("a"), pt.dmatrix("v")
    out = Blockwise(MatVec())(a, v)
    rng = np.random.default_rng(0)
    av, vv = rng.normal(size=(4, 3, 5)), rng.normal(size=(4, 5))
    np.testing.assert_allclose(out.eval({a: av, v: vv}), np.einsum("bmn,bn->bm", av, vv))


def test_batch_dims_broadcast_on_static_ones() -> None:
    a = pt.tensor("a", dtype="float64", shape=(2, 1, 3, 3))
    v = pt.tensor("v", dtype="float64", shape=(4, 3))
    out = Blockwise(MatVec())(a, v)
    assert out.type.shape == (2, 4, 3)
    rng = np.random.default_rng(1)
    av, vv = rng.normal(size=(2, 1, 3, 3)), rng.normal(size=(4, 3))
    np.testing.assert_allclose(out.eval({a: av, v: vv}), np.einsum("xymn,yn->xym", av, vv))


def test_static_batch_clash_is_an_error_at_build_time() -> None:
    a = pt.tensor("a", dtype="float64", shape=(2, 3, 3))
    v = pt.tensor("v", dtype="float64", shape=(5, 3))
    with pytest.raises(ValueError, match=r"batch dimensions do not broadcast.*\(2,\).*\(5,\)"):
        Blockwise(MatVec())(a, v)


def test_runtime_batch_mismatch_names_the_shapes() -> None:
    a, v = pt.tensor3("a"), pt.dmatrix("v")
    f = function([a, v], Blockwise(MatVec())(a, v))
    with pytest.raises(ValueError, match=r"batch dimensions.*\(2,\).*\(3,\)"):
        f(np.ones((2, 3, 3)), np.ones((3, 3)))


def test_too_few_dimensions_and_wrong_arity() -> None:
    op = Blockwise(Inv())
    with pytest.raises(TypeError, match=r"input 0 .* has 1 dimensions.*needs at least 2"):
        op(pt.dvector("x"))
    with pytest.raises(TypeError, match="expected 1 inputs"):
        op(pt.dmatrix("x"), pt.dmatrix("y"))
    with pytest.raises(ValueError, match="give a gufunc signature"):
        Blockwise(pt.products.Dot())
    with pytest.raises(TypeError, match="already a Blockwise"):
        Blockwise(Blockwise(Inv()))


def test_identity_printing_and_merging() -> None:
    assert Blockwise(Inv()) == Blockwise(Inv())
    assert hash(Blockwise(Inv())) == hash(Blockwise(Inv()))
    assert Blockwise(MatVec()) != Blockwise(MatVec(), "(m,n),(n)->(m) ")
    assert str(Blockwise(Inv())) == "Blockwise{Inv, (m,m)->(m,m)}"
    x = pt.tensor3("x")
    f = function([x], Blockwise(Inv())(x) + Blockwise(Inv())(x))
    assert sum(isinstance(n.op, Blockwise) for n in f.maker.fgraph.toposort()) == 1


def test_multiple_outputs_and_empty_batch() -> None:
    x = pt.dmatrix("x")
    s, q = Blockwise(SumAndSquares())(x)
    xv = np.arange(6.0).reshape(2, 3)
    f = function([x], [s, q])
    got_s, got_q = f(xv)
    np.testing.assert_allclose(got_s, xv.sum(-1))
    np.testing.assert_allclose(got_q, (xv**2).sum(-1))
    empty_s, empty_q = f(np.zeros((0, 3)))
    assert empty_s.shape == (0,) and empty_q.shape == (0,)
    inv_empty = function([y := pt.tensor3("y")], Blockwise(Inv())(y))(np.zeros((0, 2, 2)))
    assert inv_empty.shape == (0, 2, 2)


def test_infer_shape() -> None:
    a = pt.tensor("a", dtype="float64", shape=(None, 1, None, None))
    v = pt.tensor("v", dtype="float64", shape=(None, None))
    out = Blockwise(MatVec())(a, v)
    rng = np.random.default_rng(2)
    givens = {a: rng.normal(size=(2, 1, 3, 4)), v: rng.normal(size=(5, 4))}
    assert_infer_shape(out, givens)
    x = pt.tensor3("x")
    assert_infer_shape(Blockwise(Inv())(x), {x: well_conditioned(3)})
    s, _ = Blockwise(SumAndSquares())(x)
    assert_infer_shape(s, {x: np.ones((2, 3, 4))})


def test_blockwise_apply_uses_the_core_op_without_batch_dims() -> None:
    m, s = pt.dmatrix("m"), pt.tensor3("s")
    assert isinstance(blockwise_apply(Inv(), m).owner.op, Inv)
    assert isinstance(blockwise_apply(Inv(), s).owner.op, Blockwise)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_pullback_of_a_core_op_that_reuses_its_output(dtype: str) -> None:
    tol = 1e-4 if dtype == "float64" else 5e-2
    verify_grad(
        lambda x: Blockwise(Inv())(x),
        [well_conditioned(2, 2).astype(dtype)],
        rng=np.random.default_rng(3),
        abs_tol=tol,
        rel_tol=tol,
    )


def test_pullback_sums_over_broadcast_batch_dims() -> None:
    rng = np.random.default_rng(4)
    a_val = rng.normal(size=(1, 3, 4))
    v_val = rng.normal(size=(2, 5, 4))

    def f(a: Any, v: Any) -> Any:
        a = pt.specify_shape(a, (1, 3, 4))
        return Blockwise(MatVec())(a, v)

    verify_grad(f, [a_val, v_val], rng=rng)
    a = pt.tensor("a", dtype="float64", shape=(1, 3, 4))
    v = pt.tensor3("v")
    (ga,) = grad(Blockwise(MatVec())(a, v).sum(), [a])
    assert ga.type.shape == (1, 3, 4)


def test_pullback_with_two_outputs_and_one_unused() -> None:
    x = pt.dmatrix("x")
    s, q = Blockwise(SumAndSquares())(x)
    xv = np.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(grad(q.sum(), x).eval({x: xv}), 2 * xv)
    np.testing.assert_allclose(
        grad((s * q).sum(), x).eval({x: xv}),
        (xv**2).sum(-1, keepdims=True) + 2 * xv * xv.sum(-1, keepdims=True),
    )


def test_reused_subexpression_gradient() -> None:
    x = pt.tensor3("x")
    b = Blockwise(Inv())(x) + Blockwise(Inv())(x)
    c = pt.sum(b * b)
    xv = well_conditioned(2, seed=5)
    g = grad(c, x).eval({x: xv})
    inv = np.linalg.inv(xv)
    expected = -np.swapaxes(inv, -1, -2) @ (8 * inv) @ np.swapaxes(inv, -1, -2)
    np.testing.assert_allclose(g, expected, rtol=1e-10)


def test_pushforward_against_finite_differences() -> None:
    x, t = pt.tensor3("x"), pt.tensor3("t")
    y = Blockwise(Inv())(x)
    jvp = Rop(y, x, t)
    rng = np.random.default_rng(6)
    xv, tv = well_conditioned(2, seed=6), rng.normal(size=(2, 3, 3))
    eps = 1e-6
    fd = (np.linalg.inv(xv + eps * tv) - np.linalg.inv(xv - eps * tv)) / (2 * eps)
    np.testing.assert_allclose(jvp.eval({x: xv, t: tv}), fd, rtol=1e-6, atol=1e-8)


def test_jacobian_through_blockwise_has_no_loop() -> None:
    x = pt.tensor3("x")
    y = Blockwise(Inv())(x).sum(axis=(1, 2))
    j = jacobian(y, x)
    assert not any(isinstance(v.owner.op, Batched) for v in ancestors([j]) if v.owner)
    xv = well_conditioned(2, seed=7)
    inv = np.linalg.inv(xv)
    jv = j.eval({x: xv})
    for b in range(2):
        ones = np.ones((3, 3))
        expected = -inv[b].T @ ones @ inv[b].T
        np.testing.assert_allclose(jv[b, b], expected, rtol=1e-10)
        np.testing.assert_allclose(jv[b, 1 - b], 0.0)


def test_jacobian_of_a_core_op_batches_into_blockwise() -> None:
    x = pt.dmatrix("x")
    y = Inv()(x)
    j = jacobian(y.sum(axis=0), x)
    ops = [v.owner.op for v in ancestors([j]) if v.owner]
    assert not any(isinstance(op, Batched) for op in ops)
    xv = well_conditioned(seed=8)
    inv = np.linalg.inv(xv)
    for r in range(3):
        g = np.zeros((3, 3))
        g[:, r] = 1.0
        np.testing.assert_allclose(j.eval({x: xv})[r], -inv.T @ g @ inv.T, rtol=1e-10)


class StackedInv(Inv):
    """Inv whose perform takes whole stacks; counts its calls."""

    stacked_perform = True
    calls = 0

    def perform(self, node: Apply, inputs: list, out: list) -> None:
        StackedInv.calls += 1
        out[0][0] = np.linalg.inv(inputs[0])


def test_stacked_perform_runs_once_per_call_and_matches_the_loop() -> None:
    x = pt.tensor("x", dtype="float64", shape=(None, 1, 3, 3))
    xv = well_conditioned(4, 1, seed=9)
    StackedInv.calls = 0
    got = function([x], Blockwise(StackedInv())(x))(xv)
    assert StackedInv.calls == 1
    np.testing.assert_allclose(got, function([x], Blockwise(Inv())(x))(xv))
    empty = function([x], Blockwise(StackedInv())(x))(np.zeros((0, 1, 3, 3)))
    assert empty.shape == (0, 1, 3, 3)


@pytest.mark.parametrize("fn", ["inv", "det", "slogdet", "pinv"])
def test_numpy_linalg_ops_take_stacks_with_broadcast_batches(fn: str) -> None:
    a = pt.tensor("a", dtype="float64", shape=(2, 1, 3, 3))
    b = pt.tensor("b", dtype="float64", shape=(1, 4, 3, 3))
    av, bv = well_conditioned(2, 1, seed=10), well_conditioned(1, 4, seed=11)
    out = getattr(pt.linalg, fn)(Blockwise(Inv())(a) + Blockwise(Inv())(b))
    outs = out if isinstance(out, (list, tuple)) else [out]
    got = function([a, b], list(outs))(av, bv)
    expected = getattr(np.linalg, fn)(np.linalg.inv(av) + np.linalg.inv(bv))
    for g, e in zip(got, expected if isinstance(expected, tuple) else [expected]):
        np.testing.assert_allclose(g, e, rtol=1e-10)
