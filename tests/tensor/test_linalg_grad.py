"""Derivatives of the linear algebra Ops: every pullback against central finite differences
(float64 and float32), the pushforwards against finite-difference Jacobian-vector products,
stacks of matrices (Blockwise gradients), the vectorised jacobian (batching rules), and
the cases with no gradient or a gradient only under conditions.

Rules that read one triangle of a symmetric matrix (cholesky, eigh, eigvalsh, symmetric
solves) are checked on ``f((a + a^T) / 2)``: their derivatives are those of the symmetrised
function, which is what finite differences of it measure.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import arignote.tensor as pt
from arignote import function
from arignote.gradient import NullTypeGradError, Rop, grad, jacobian
from arignote.graph.replace import batch_graph
from arignote.tensor import nlinalg
from arignote.tensor.blockwise import Blockwise
from arignote.tensor.linalg.operands import RuntimeCheck
from tests.tensor.test_grad_ops import _check_pushforward, check_grad
from tests.tensor.utils import assert_infer_shape

L = pt.linalg


def rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def spd(n: int, seed: int = 0, batch: tuple = ()) -> np.ndarray:
    x = rng(seed).normal(size=(*batch, n, n))
    return x @ np.swapaxes(x, -1, -2) + n * np.eye(n)


def general(m: int, n: int | None = None, seed: int = 1, batch: tuple = ()) -> np.ndarray:
    n = m if n is None else n
    return rng(seed).normal(size=(*batch, m, n)) + max(m, n) * np.eye(m, n)


def rhs(*shape: int, seed: int = 2) -> np.ndarray:
    return rng(seed).normal(size=shape)


def sym(a: Any) -> Any:
    return (a + a.mT) / 2


def signed(v: Any) -> Any:
    """Eigen/singular vectors with a sign fixed by the data (they are unique up to sign)."""
    return v * pt.sign(v.sum(axis=-2, keepdims=True))


# name -> (build, input values, static shapes (None: unknown lengths))
PULLBACKS: dict[str, tuple[Callable, list, list | None]] = {
    "inv": (L.inv, [general(3)], None),
    "det": (L.det, [general(3)], None),
    "slogdet": (lambda a: L.slogdet(a)[1], [general(3) - 6 * np.eye(3)], None),
    "cholesky_lower": (lambda a: L.cholesky(sym(a)), [spd(3)], None),
    "cholesky_upper": (lambda a: L.cholesky(sym(a), lower=False), [spd(3)], None),
    "solve_gen": (L.solve, [general(3), rhs(3, 2)], None),
    "solve_gen_vector": (L.solve, [general(3), rhs(3)], None),
    "solve_transposed": (lambda a, b: L.solve(a, b, transposed=True), [general(3), rhs(3)], None),
    "solve_sym": (lambda a, b: L.solve(sym(a), b, assume_a="sym"), [spd(3), rhs(3, 2)], None),
    "solve_her": (lambda a, b: L.solve(sym(a), b, assume_a="her", lower=True), [spd(3), rhs(3)], None),
    "solve_pos": (lambda a, b: L.solve(sym(a), b, assume_a="pos", lower=True), [spd(3), rhs(3, 2)], None),
    "solve_diagonal": (lambda a, b: L.solve(a, b, assume_a="diagonal"), [general(3), rhs(3)], None),
    "solve_tridiagonal": (lambda a, b: L.solve(a, b, assume_a="tridiagonal"), [general(4), rhs(4)], None),
    "solve_banded": (lambda a, b: L.solve(a, b, assume_a="banded"), [general(3), rhs(3, 2)], None),
    "solve_lower_triangular": (
        lambda a, b: L.solve(a, b, assume_a="lower triangular"),
        [general(3), rhs(3)],
        None,
    ),
    "solve_triangular_lower": (
        lambda a, b: L.solve_triangular(a, b, lower=True),
        [general(3), rhs(3, 2)],
        None,
    ),
    "solve_triangular_upper_trans_unit": (
        lambda a, b: L.solve_triangular(a, b, trans="T", unit_diagonal=True),
        [general(3), rhs(3)],
        None,
    ),
    "cho_solve_lower": (
        lambda c, b: L.cho_solve((c, True), b),
        [np.linalg.cholesky(spd(3)), rhs(3, 2)],
        None,
    ),
    "cho_solve_upper": (
        lambda c, b: L.cho_solve((c, False), b),
        [np.linalg.cholesky(spd(3)).T, rhs(3)],
        None,
    ),
    "eigvalsh": (lambda a: L.eigvalsh(sym(a)), [spd(3)], None),
    "eigvalsh_generalised": (lambda a, b: L.eigvalsh(sym(a), sym(b)), [spd(3, 1), spd(3, 2)], None),
    "eigh_values": (lambda a: L.eigh(sym(a))[0], [spd(3)], None),
    "eigh_vectors": (lambda a: signed(L.eigh(sym(a))[1]), [spd(3)], None),
    "eigh_generalised_vectors": (
        lambda a, b: signed(L.eigh(sym(a), sym(b))[1]),
        [spd(3, 1), spd(3, 2)],
        None,
    ),
    "expm": (L.expm, [0.3 * general(3)], None),
    "svd_values": (lambda a: L.svd(a, compute_uv=False), [general(4, 3)], None),
    "svd_values_full_matrices": (lambda a: L.svd(a)[1], [general(3, 4)], None),
    "svd_u_tall": (lambda a: signed(L.svd(a, full_matrices=False)[0]), [general(4, 3)], None),
    "svd_vh_tall": (lambda a: signed(L.svd(a, full_matrices=False)[2].mT), [general(4, 3)], None),
    "svd_u_wide": (lambda a: signed(L.svd(a, full_matrices=False)[0]), [general(3, 4)], None),
    "svd_vh_wide": (lambda a: signed(L.svd(a, full_matrices=False)[2].mT), [general(3, 4)], None),
    "svd_u_vh_square_full": (lambda a: signed(L.svd(a)[0]) + signed(L.svd(a)[2].mT), [general(3)], None),
    "qr_q_economic": (lambda a: L.qr(a, mode="economic")[0], [general(4, 3)], None),
    "qr_r_economic": (lambda a: L.qr(a, mode="economic")[1], [general(4, 3)], None),
    "qr_full_square": (lambda a: L.qr(a)[0] + L.qr(a)[1], [general(3)], None),
    "qr_full_tall_r": (lambda a: L.qr(a)[1], [general(4, 3)], None),
    "qr_r_mode": (lambda a: L.qr(a, mode="r"), [general(4, 3)], None),
    "qr_pivoting": (lambda a: L.qr(a, mode="economic", pivoting=True)[0], [general(4, 3)], None),
    "qr_wide_q": (lambda a: L.qr(a)[0], [general(3, 4)], [(3, 4)]),
    "qr_wide_r": (lambda a: L.qr(a)[1], [general(3, 4)], [(3, 4)]),
    "numpy_qr_reduced_q": (lambda a: nlinalg.qr(a)[0], [general(4, 3)], None),
    "numpy_qr_r": (lambda a: nlinalg.qr(a, mode="r"), [general(4, 3)], None),
    "pinv_tall": (L.pinv, [general(4, 3)], None),
    "pinv_wide": (L.pinv, [general(3, 4)], None),
    "pinv_hermitian": (lambda a: L.pinv(sym(a), hermitian=True), [spd(3)], None),
    "trace": (L.trace, [general(3, 4)], None),
    "norm_fro": (L.norm, [general(3)], None),
    "norm_nuc": (lambda a: L.norm(a, "nuc"), [general(3)], None),
    "norm_2": (lambda a: L.norm(a, 2), [general(3)], None),
    "norm_inf": (lambda a: L.norm(a, np.inf), [general(3)], None),
    "norm_vector_3": (lambda a: L.norm(a, 3, axis=0), [general(3)], None),
    "matrix_power_3": (lambda a: L.matrix_power(a, 3), [general(3) / 3], None),
    "matrix_power_-2": (lambda a: L.matrix_power(a, -2), [general(3)], None),
    "matrix_dot": (L.matrix_dot, [general(2, 3), general(3, 4), rhs(4)], None),
    "logdet_second_order": (lambda a: grad(L.slogdet(a)[1], a), [general(3)], None),
}


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", sorted(PULLBACKS))
def test_pullback(name: str, dtype: str) -> None:
    build, values, shapes = PULLBACKS[name]
    shapes = shapes or [(None,) * np.ndim(v) for v in values]
    shapes += [(None,) * np.ndim(v) for v in values[len(shapes) :]]
    inputs = [pt.tensor(f"x{i}", dtype=dtype, shape=s) for i, s in enumerate(shapes)]
    check_grad(build, list(zip(inputs, values)))


def test_symmetric_rules_give_symmetric_gradients() -> None:
    a = pt.dmatrix("a")
    value = spd(3)
    w = pt.constant(rhs(3, 3))
    for out in (L.cholesky(a), L.eigh(a)[1], L.solve(a, w, assume_a="pos")):
        g = function([a], grad((out * w).sum(), a))(value)
        np.testing.assert_allclose(g, g.T, atol=1e-12)


def test_slogdet_sign_has_zero_gradient() -> None:
    a = pt.dmatrix("a")
    sign, logdet = L.slogdet(a)
    value = general(3)
    np.testing.assert_array_equal(function([a], grad(sign, a))(value), np.zeros((3, 3)))
    both = function([a], grad(sign + logdet, a))(value)
    np.testing.assert_allclose(both, np.linalg.inv(value).T)


# --- pushforwards ----------------------------------------------------------------------------------

T3 = rhs(3, 3, seed=7)
T3S = T3 + T3.T  # symmetric tangents for the rules that assume a symmetric input


def _pushforward_cases() -> dict[str, tuple]:
    a, b, v = pt.dmatrix("a"), pt.dmatrix("b"), pt.dvector("v")
    tall = pt.dmatrix("tall")
    s, g, c = spd(3), general(3), np.linalg.cholesky(spd(3))
    bv, vv = rhs(3, 2), rhs(3)
    tb, tv = rhs(3, 2, seed=8), rhs(3, seed=9)
    cases: dict[str, tuple] = {
        "inv": (L.inv(a), [a], [g], [T3]),
        "det": (L.det(a), [a], [g], [T3]),
        "slogdet_sign": (L.slogdet(a)[0], [a], [g], [T3]),
        "slogdet_logdet": (L.slogdet(a)[1], [a], [g], [T3]),
        "cholesky_lower": (L.cholesky(a), [a], [s], [T3S]),
        "cholesky_upper": (L.cholesky(a, lower=False), [a], [s], [T3S]),
        "solve_triangular": (L.solve_triangular(a, b, lower=True), [a, b], [g, bv], [T3, tb]),
        "solve_triangular_unit_b_only": (
            L.solve_triangular(a, v, unit_diagonal=True),
            [a, v],
            [g, vv],
            [None, tv],
        ),
        "cho_solve_lower": (L.cho_solve((a, True), b), [a, b], [c, bv], [T3, tb]),
        "cho_solve_upper": (L.cho_solve((a, False), v), [a, v], [c.T, vv], [T3, None]),
        "eigvalsh": (L.eigvalsh(a), [a], [s], [T3S]),
        "eigh_values": (L.eigh(a)[0], [a], [s], [T3S]),
        "expm": (L.expm(a), [a], [0.3 * g], [T3]),
        "pinv": (L.pinv(a), [a], [g], [T3]),
        "pinv_tall": (L.pinv(tall), [tall], [general(4, 3)], [rhs(4, 3, seed=10)]),
        "pinv_hermitian": (L.pinv(a, hermitian=True), [a], [s], [T3S]),
    }
    for assume_a in ["gen", "sym", "pos", "diagonal", "tridiagonal", "banded"]:
        cases[f"solve_{assume_a}"] = (L.solve(a, b, assume_a=assume_a), [a, b], [s, bv], [T3S, tb])
        cases[f"solve_{assume_a}_a_only"] = (L.solve(a, v, assume_a=assume_a), [a, v], [s, vv], [T3S, None])
    return cases


PUSHFORWARDS = _pushforward_cases()


@pytest.mark.parametrize("name", sorted(PUSHFORWARDS))
def test_pushforward(name: str) -> None:
    out, inputs, values, tangents = PUSHFORWARDS[name]
    _check_pushforward(out, inputs, values, tangents)


def test_eigh_vectors_pushforward() -> None:
    # LAPACK may flip an eigenvector's sign between nearby matrices: align the finite
    # differences with the eigenvectors at the point first
    a = pt.dmatrix("a")
    value = spd(3)
    w, v = L.eigh(a)
    node = v.owner
    tangent = pt.constant(T3S)
    dw, dv = function([a], node.op.pushforward([a], node.outputs, [tangent]))(value)
    eps = 1e-6
    base = np.linalg.eigh(value)[1]

    def aligned(m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        ws, vs = function([a], [w, v])(m)
        return ws, vs * np.sign(np.sum(vs * base, axis=0))

    (w_up, v_up), (w_down, v_down) = aligned(value + eps * T3S), aligned(value - eps * T3S)
    np.testing.assert_allclose(dw, (w_up - w_down) / (2 * eps), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(dv, (v_up - v_down) / (2 * eps), rtol=1e-5, atol=1e-6)


def test_rop_through_blockwise() -> None:
    x = pt.tensor("x", dtype="float64", shape=(2, 3, 3))
    t = pt.tensor("t", dtype="float64", shape=(2, 3, 3))
    value, tangent = general(3, batch=(2,)), rhs(2, 3, 3, seed=4)
    for fn in (L.inv, L.det):
        out = fn(x)
        assert isinstance(out.owner.op, Blockwise)
        got = function([x, t], Rop(out, x, t))(value, tangent)
        f = function([x], out)
        eps = 1e-6
        want = (f(value + eps * tangent) - f(value - eps * tangent)) / (2 * eps)
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


# --- stacks of matrices --------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_batched_pullbacks(dtype: str) -> None:
    x = pt.tensor("x", dtype=dtype, shape=(2, None, 3, 3))
    b = pt.tensor("b", dtype=dtype, shape=(3,))
    value = spd(3, batch=(2, 2))
    check_grad(lambda x: L.inv(x), [(x, value)])
    check_grad(lambda x: L.cholesky(sym(x)), [(x, value)])
    check_grad(lambda x, b: L.solve(x, b, b_ndim=1), [(x, value), (b, rhs(3))])  # b broadcast
    check_grad(lambda x: L.svd(x)[1], [(x, value)])


def test_batched_svd_values_of_non_square_full_matrices() -> None:
    # Blockwise hands the core rule zero cotangents for U and Vh: they pass the check
    x = pt.tensor("x", dtype="float64", shape=(2, 4, 3))
    check_grad(lambda x: L.svd(x)[1], [(x, general(4, 3, batch=(2,)))])


@pytest.mark.parametrize("name", ["inv", "cholesky", "eigvalsh", "solve_pos", "qr"])
def test_vectorised_jacobian(name: str) -> None:
    # the batched reverse pass batches the core Ops in the pullback graphs (with Blockwise)
    a = pt.tensor("a", dtype="float64", shape=(3, 3))
    out = {
        "inv": lambda: L.inv(a),
        "cholesky": lambda: L.cholesky(a),
        "eigvalsh": lambda: L.eigvalsh(a),
        "solve_pos": lambda: L.solve(a, pt.constant(rhs(3)), assume_a="pos"),
        "qr": lambda: L.qr(a)[1],
    }[name]().flatten()
    fast = function([a], jacobian(out, a))(spd(3))
    loop = function([a], jacobian(out, a, vectorize=False))(spd(3))
    np.testing.assert_allclose(fast, loop, rtol=1e-10, atol=1e-12)


# --- no gradient, or only under conditions ---------------------------------------------------------


def test_eig_has_no_gradient() -> None:
    a = pt.dmatrix("a")
    w, _ = L.eig(a)
    with pytest.raises(NullTypeGradError, match="not implemented"):
        grad(pt.real(w).sum(), a)


def test_qr_raw_has_no_gradient() -> None:
    a = pt.dmatrix("a")
    h, tau, r = L.qr(a, mode="raw")
    with pytest.raises(NullTypeGradError, match="raw"):
        grad(r.sum(), a)


def test_complex_inputs_have_no_gradient() -> None:
    a = pt.tensor("a", dtype="complex128", shape=(None, None))
    with pytest.raises(NullTypeGradError, match="complex"):
        grad(pt.real(L.inv(a)).sum(), a)


def test_svd_full_matrices_extra_columns_are_rejected() -> None:
    a = pt.dmatrix("a")
    u, s, vh = L.svd(a)  # U is 4 x 4 for a 4 x 3 input: its last column is arbitrary
    g = function([a], grad(u.sum(), a))
    with pytest.raises(ValueError, match="columns of U"):
        g(general(4, 3))
    # square: every column is determined
    assert g(general(3)).shape == (3, 3)


def test_qr_full_extra_columns_are_rejected() -> None:
    a = pt.dmatrix("a")
    q, r = L.qr(a)
    g = function([a], grad(q.sum(), a))
    with pytest.raises(ValueError, match="columns of Q"):
        g(general(4, 3))


def test_qr_unknown_shape_must_be_tall_at_run_time() -> None:
    a = pt.dmatrix("a")
    g = function([a], grad(L.qr(a, mode="economic")[1].sum(), a))
    with pytest.raises(ValueError, match="at least as many rows as columns"):
        g(general(3, 4))


def test_runtime_check() -> None:
    x, ref = pt.dmatrix("x"), pt.dmatrix("ref")
    with pytest.raises(ValueError, match="condition"):
        RuntimeCheck("finite", "what")
    square = RuntimeCheck("square", "needs square")(x, ref)
    tall = RuntimeCheck("tall", "needs tall")(x, ref)
    zeros = RuntimeCheck("zeros", "needs zeros")(x, ref)
    xv = rhs(2, 3)
    f = function([x, ref], [square, tall, zeros])
    for got in f(xv, np.zeros((3, 3))):
        np.testing.assert_array_equal(got, xv)
    with pytest.raises(ValueError, match=r"needs square: a square matrix, got shape \(3, 2\)"):
        function([x, ref], square)(xv, np.zeros((3, 2)))
    with pytest.raises(ValueError, match="needs tall: at least as many rows"):
        function([x, ref], tall)(xv, np.zeros((2, 3)))
    with pytest.raises(ValueError, match="needs zeros"):
        function([x, ref], zeros)(xv, np.ones((1, 1)))
    assert_infer_shape(square, {x: xv, ref: np.zeros((3, 3))})
    # the gradient passes through (behind the same check); ref is disconnected
    g = function([x, ref], grad((square * square).sum(), x))(xv, np.zeros((2, 2)))
    np.testing.assert_allclose(g, 2 * xv)
    assert square.owner.op.connection_pattern(square.owner) == [[True], [False]]
    # batched (vectorize_graph): the check looks at the last two dimensions only
    xs = pt.tensor3("xs", dtype="float64")
    (batched,) = batch_graph([square], {x: xs})
    np.testing.assert_array_equal(
        function([xs, ref], batched)(np.ones((4, 2, 3)), np.eye(2)), np.ones((4, 2, 3))
    )


def test_batched_unused_outputs_do_not_poison_gradients() -> None:
    # Blockwise passes zero cotangents for unused outputs: repeated eigenvalues and zero
    # singular values must still give the (finite) gradient of the values
    x = pt.tensor("x", dtype="float64", shape=(None, 3, 3))
    value = np.stack([np.eye(3), np.diag([2.0, 0.0, 0.0])])
    eig_grad = function([x], grad(L.eigh(x)[0].sum(), x))(value)
    np.testing.assert_allclose(eig_grad, np.broadcast_to(np.eye(3), (2, 3, 3)))
    svd_grad = function([x], grad(L.svd(x)[1].sum(), x))(value)
    assert np.isfinite(svd_grad).all()
    np.testing.assert_allclose(svd_grad[0], np.eye(3))
