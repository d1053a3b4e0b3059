"""NumPy-flavoured linear algebra (``arignote.tensor.nlinalg``) and the ``pt.linalg``
namespace: values against NumPy in float64 and float32, output dtypes and static shapes,
infer_shape, errors, and stacks of matrices against NumPy's own batching.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import scipy.linalg as sl

import arignote.tensor as pt
from arignote.tensor import linalg, nlinalg, slinalg
from arignote.tensor.linalg.decompositions import SVD, Eig, Eigh
from arignote.tensor.nlinalg import (
    Det,
    MatrixInverse,
    MatrixPinv,
    SLogDet,
    det,
    eig,
    eigh,
    inv,
    matrix_dot,
    matrix_inverse,
    matrix_power,
    norm,
    pinv,
    qr,
    slogdet,
    svd,
    trace,
)
from tests.tensor.test_slinalg import ev, mat, rng, spd
from tests.tensor.utils import assert_infer_shape

RTOL = {"float64": 1e-9, "float32": 2e-4}


def general(*shape: int, seed: int = 1) -> np.ndarray:
    m, n = shape[-2:]
    return rng(seed).normal(size=shape) + m * np.eye(m, n)


def close(got: Any, want: Any, dtype: str = "float64") -> None:
    np.testing.assert_allclose(got, want, rtol=RTOL[dtype], atol=RTOL[dtype])


# --- inverse, determinants ---------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_inv_det_slogdet_values(dtype: str) -> None:
    x = mat("x", dtype)
    value = general(4, 4).astype(dtype)
    value[0] *= -1  # a negative determinant
    sign, logdet = slogdet(x)
    outs = [inv(x), det(x), sign, logdet]
    assert all(o.type.dtype == dtype for o in outs)
    got = ev(outs, {x: value})
    assert all(g.dtype == dtype for g in got)
    close(got[0], np.linalg.inv(value), dtype)
    close(got[1], np.linalg.det(value), dtype)
    want_sign, want_logdet = np.linalg.slogdet(value)
    close(got[2], want_sign, dtype)
    close(got[3], want_logdet, dtype)
    assert got[2] == -1.0


@pytest.mark.parametrize("dtype, expected", [("int64", "float64"), ("int16", "float32"), ("bool", "float32")])
def test_integer_inputs(dtype: str, expected: str) -> None:
    x = mat("x", dtype)
    value = np.array([[1, 0], [1, 1]]).astype(dtype)
    for out, want in [
        (inv(x), np.linalg.inv(value.astype(float))),
        (det(x), np.linalg.det(value.astype(float))),
    ]:
        assert out.type.dtype == expected
        close(ev(out, {x: value}), want, expected)


def test_inverse_static_shapes_and_aliases() -> None:
    assert inv is matrix_inverse
    assert inv(mat("x", shape=(3, None))).type.shape == (3, 3)
    assert det(mat("x", shape=(3, 3))).type.shape == ()
    assert [o.type.shape for o in slogdet(mat("x", shape=(None, 3)))] == [(), ()]


@pytest.mark.parametrize("fn", [inv, det, slogdet, matrix_inverse])
def test_square_errors(fn: Any) -> None:
    with pytest.raises(ValueError, match=r"square.*\(2, 3\)"):
        fn(mat("x", shape=(2, 3)))
    with pytest.raises(ValueError, match="at least 2-d"):
        fn(pt.dvector("v"))
    x = mat("x")
    out = fn(x)
    with pytest.raises(ValueError, match=r"square matrix.*\(2, 3\)"):
        ev(out, {x: np.ones((2, 3))})


def test_core_op_errors() -> None:
    for op in (MatrixInverse(), Det(), SLogDet(), Eigh(), Eig()):
        with pytest.raises(TypeError, match="must be a matrix"):
            op(pt.tensor3("t", dtype="float64"))


def test_singular_inverse_raises() -> None:
    x = mat("x")
    with pytest.raises(np.linalg.LinAlgError, match=r"\(2, 2\) is singular"):
        ev(inv(x), {x: np.ones((2, 2))})


# --- pinv --------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4)])
def test_pinv_values(dtype: str, shape: tuple) -> None:
    x = mat("x", dtype, shape=shape)
    value = general(*shape).astype(dtype)
    out = pinv(x)
    assert out.type.shape == shape[::-1] and out.type.dtype == dtype
    close(ev(out, {x: value}), np.linalg.pinv(value), dtype)


def test_pinv_hermitian() -> None:
    x = mat("x")
    value = spd(4)
    close(ev(pinv(x, hermitian=True), {x: value}), np.linalg.pinv(value, hermitian=True))
    with pytest.raises(ValueError, match="square"):
        pinv(mat("x", shape=(2, 3)), hermitian=True)


# --- eigh, eig -----------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize(
    "kwargs, triangle",
    [
        ({}, "L"),
        ({"UPLO": "U"}, "U"),
        ({"lower": False}, "U"),
        ({"UPLO": "L"}, "L"),
        ({"driver": "evd"}, "L"),
    ],
)
def test_eigh_values(dtype: str, kwargs: dict, triangle: str) -> None:
    x = mat("x", dtype)
    full = spd(4).astype(dtype)
    given = np.tril(full) if triangle == "L" else np.triu(full)
    w, v = eigh(x, **kwargs)
    assert (w.type.dtype, v.type.dtype) == (dtype, dtype)
    wv, vv = ev([w, v], {x: given})
    want_w, want_v = np.linalg.eigh(full)
    close(wv, want_w, dtype)
    close(np.abs(vv), np.abs(want_v), dtype)  # eigenvectors are unique up to sign
    close(full @ vv, vv * wv, dtype)


def test_eigh_numpy_positional_uplo_and_errors() -> None:
    x = mat("x")
    full = spd(3)
    close(ev(eigh(x, "U")[0], {x: np.triu(full)}), np.linalg.eigvalsh(full))
    with pytest.raises(ValueError, match="UPLO"):
        eigh(x, UPLO="X")
    with pytest.raises(ValueError, match="driver"):
        eigh(x, driver="gvd")


def test_eigh_generalised() -> None:
    a, b = mat("a"), mat("b")
    av, bv = spd(3, seed=4), spd(3, seed=5)
    w, v = ev(eigh(a, b), {a: av, b: bv})
    want_w, want_v = sl.eigh(av, bv)
    close(w, want_w)
    close(np.abs(v), np.abs(want_v))
    close(v.T @ bv @ v, np.eye(3))


def test_eigh_static_shapes() -> None:
    w, v = eigh(mat("x", shape=(None, 5)))
    assert w.type.shape == (5,) and v.type.shape == (5, 5)
    w, v = eigh(mat("x", "int32"))
    assert (w.type.dtype, v.type.dtype) == ("float64", "float64")


@pytest.mark.parametrize("dtype, cdtype", [("float64", "complex128"), ("float32", "complex64")])
def test_eig_values(dtype: str, cdtype: str) -> None:
    x = mat("x", dtype)
    value = np.array([[0.0, -2.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 3.0]], dtype=dtype)
    w, v = eig(x)
    assert w.type.dtype == cdtype and v.type.dtype == cdtype
    wv, vv = ev([w, v], {x: value})
    assert wv.dtype == cdtype
    close(np.sort_complex(wv), np.sort_complex(np.linalg.eigvals(value)), dtype)
    close(value @ vv, vv * wv, dtype)


def test_eig_real_eigenvalues_stay_complex() -> None:
    x = mat("x")
    wv, _ = ev(eig(x), {x: np.diag([1.0, 2.0])})
    assert wv.dtype == np.complex128
    close(wv, [1.0, 2.0])


# --- svd ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4)])
@pytest.mark.parametrize("full_matrices", [True, False])
def test_svd_values(dtype: str, shape: tuple, full_matrices: bool) -> None:
    x = mat("x", dtype, shape=shape)
    value = general(*shape).astype(dtype)
    u, s, vh = svd(x, full_matrices=full_matrices)
    want_u, want_s, want_vh = np.linalg.svd(value, full_matrices=full_matrices)
    got = ev([u, s, vh], {x: value})
    for o, g, w in zip((u, s, vh), got, (want_u, want_s, want_vh)):
        assert o.type.shape == w.shape and g.dtype == dtype
    close(got[1], want_s, dtype)
    k = min(shape)
    close(got[0][:, :k] * got[1] @ got[2][:k], value, dtype)
    close(np.abs(got[0][:, :k]), np.abs(want_u[:, :k]), dtype)


def test_svd_singular_values_only() -> None:
    x = mat("x", "int32")
    s = svd(x, compute_uv=False)
    assert s.type.dtype == "float64" and s.type.ndim == 1
    value = np.array([[3, 0], [0, -4], [0, 0]], dtype="int32")
    close(ev(s, {x: value}), [4.0, 3.0])


# --- qr (NumPy's flavour) ----------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(5, 3), (3, 5)])
@pytest.mark.parametrize("mode", ["reduced", "complete", "r", "raw"])
def test_numpy_qr_values(shape: tuple, mode: str) -> None:
    x = mat("x", shape=shape)
    value = general(*shape)
    out = qr(x, mode=mode)
    want = np.linalg.qr(value, mode=mode)
    outs = out if isinstance(out, list) else [out]
    wants = list(want) if isinstance(want, tuple) else [want]
    got = ev(outs, {x: value})
    for o, g, w in zip(outs, got, wants):
        assert o.type.shape == w.shape
        close(g, w)


def test_numpy_qr_bad_mode() -> None:
    with pytest.raises(ValueError, match="mode"):
        qr(mat("x"), mode="full")


# --- trace, norm, matrix_power, matrix_dot --------------------------------------------------------


def test_trace() -> None:
    x = mat("x")
    close(ev(trace(x), {x: np.arange(12.0).reshape(3, 4)}), np.trace(np.arange(12.0).reshape(3, 4)))
    xi = mat("xi", "int32")
    out = trace(xi)
    assert out.type.dtype == "int64"
    assert ev(out, {xi: np.arange(9, dtype="int32").reshape(3, 3)}) == 12
    x3 = pt.tensor3("x3", dtype="float32")
    v3 = rng().normal(size=(2, 3, 3)).astype("float32")
    close(ev(trace(x3), {x3: v3}), np.linalg.trace(v3), "float32")


VECTOR_ORDS = [None, 1, 2, np.inf, -np.inf, 0, 3, 0.5, -1]
MATRIX_ORDS = [None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf]


@pytest.mark.parametrize("ord", VECTOR_ORDS)
def test_vector_norms(ord: Any) -> None:
    v = pt.dvector("v")
    # a zero entry for the orders that allow one (negative powers divide by it)
    value = np.array([3.0, -4.0, 0.0 if ord is None or ord >= 0 else 0.5, 1.5])
    close(ev(norm(v, ord), {v: value}), np.linalg.norm(value, ord))
    x = mat("x")
    m = general(3, 4)
    for axis in (0, 1, -1):
        for keepdims in (False, True):
            got = ev(norm(x, ord, axis=axis, keepdims=keepdims), {x: m})
            close(got, np.linalg.norm(m, ord, axis=axis, keepdims=keepdims))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("ord", MATRIX_ORDS)
def test_matrix_norms(dtype: str, ord: Any) -> None:
    x = mat("x", dtype)
    m = general(3, 4).astype(dtype)
    out = norm(x, ord)
    assert out.type.dtype == dtype
    close(ev(out, {x: m}), np.linalg.norm(m, ord), dtype)
    t = pt.tensor3("t", dtype=dtype)
    tv = rng(2).normal(size=(2, 3, 4)).astype(dtype)
    for axis in [(1, 2), (2, 1), (0, 2), (-1, 0)]:
        for keepdims in (False, True):
            got = ev(norm(t, ord, axis=axis, keepdims=keepdims), {t: tv})
            close(got, np.linalg.norm(tv, ord, axis=axis, keepdims=keepdims), dtype)


def test_norm_whole_tensor_and_dtypes() -> None:
    t = pt.tensor3("t", dtype="int32")
    tv = np.arange(24, dtype="int32").reshape(2, 3, 4)
    out = norm(t)
    assert out.type.dtype == "float64"
    close(ev(out, {t: tv}), np.linalg.norm(tv))
    close(ev(norm(t, keepdims=True), {t: tv}), np.linalg.norm(tv, keepdims=True))


def test_norm_errors() -> None:
    with pytest.raises(ValueError, match="invalid norm order"):
        norm(pt.dvector("v"), "fro")
    with pytest.raises(ValueError, match="invalid norm order"):
        norm(mat("x"), 3)
    with pytest.raises(ValueError, match="1-d or 2-d"):
        norm(pt.tensor3("t", dtype="float64"), 2)
    with pytest.raises(ValueError, match="one or two axes"):
        norm(pt.tensor3("t", dtype="float64"), axis=(0, 1, 2))
    with pytest.raises(ValueError, match="out of bounds"):
        norm(mat("x"), axis=2)


@pytest.mark.parametrize("n", [-3, -1, 0, 1, 2, 3, 6, 7])
def test_matrix_power(n: int) -> None:
    x = mat("x")
    value = general(3, 3) / 3
    close(ev(matrix_power(x, n), {x: value}), np.linalg.matrix_power(value, n))


def test_matrix_power_dtypes_and_errors() -> None:
    x = mat("x", "int32")
    value = np.array([[1, 1], [0, 1]], dtype="int32")
    out = matrix_power(x, 3)
    assert out.type.dtype == "int32"
    assert (ev(out, {x: value}) == np.linalg.matrix_power(value, 3)).all()
    zero = ev(matrix_power(x, 0), {x: value})
    assert zero.dtype == np.int32 and (zero == np.eye(2)).all()
    with pytest.raises(TypeError, match="int"):
        matrix_power(x, 2.0)
    with pytest.raises(ValueError, match="square"):
        matrix_power(mat("y", shape=(2, 3)), 2)


def test_matrix_dot() -> None:
    a, b, c = mat("a"), mat("b"), pt.dvector("c")
    av, bv, cv = general(2, 3), general(3, 4), np.arange(4.0)
    close(ev(matrix_dot(a, b, c), {a: av, b: bv, c: cv}), av @ bv @ cv)
    close(ev(matrix_dot(a), {a: av}), av)
    with pytest.raises(ValueError, match="at least one"):
        matrix_dot()


EMPTY_CASES = {
    "inv": (inv, np.linalg.inv),
    "det": (det, np.linalg.det),
    "slogdet": (slogdet, np.linalg.slogdet),
    "eigh": (eigh, np.linalg.eigh),
    "eigvalsh": (linalg.eigvalsh, np.linalg.eigvalsh),
    "eig": (eig, np.linalg.eig),
    "svd": (svd, np.linalg.svd),
    "qr": (linalg.qr, sl.qr),
    "pinv": (pinv, np.linalg.pinv),
    "expm": (linalg.expm, sl.expm),
    "cholesky": (linalg.cholesky, np.linalg.cholesky),
    "trace": (trace, np.linalg.trace),
    "norm": (norm, np.linalg.norm),
    "solve": (lambda x: linalg.solve(x, x), lambda x: np.linalg.solve(x, x)),
    "cho_solve": (lambda x: linalg.cho_solve((x, True), x), lambda x: x),
    "solve_triangular": (lambda x: linalg.solve_triangular(x, x), lambda x: x),
}


@pytest.mark.parametrize("name", sorted(EMPTY_CASES))
def test_empty_matrices(name: str) -> None:
    fn, reference = EMPTY_CASES[name]
    x = mat("x")
    value = np.zeros((0, 0))
    out = fn(x)
    outs = out if isinstance(out, (list, tuple)) else [out]
    want = reference(value)
    wants = list(want) if isinstance(want, tuple) else [want]
    for g, w in zip(ev(list(outs), {x: value}), wants):
        assert np.shape(g) == np.shape(w)
        close(g, w)


# --- infer_shape -------------------------------------------------------------------------------


def test_infer_shape() -> None:
    x = mat("x")
    sq, tall, wide = spd(4), general(5, 3), general(3, 5)
    for out in [MatrixInverse()(x), Det()(x), *SLogDet()(x), *Eigh()(x), *Eig()(x)]:
        assert_infer_shape(out, {x: sq})
    for value in (tall, wide):
        assert_infer_shape(MatrixPinv()(x), {x: value})
        for op in (SVD(True), SVD(False), SVD(compute_uv=False)):
            for out in op(x, return_list=True):
                assert_infer_shape(out, {x: value})


# --- stacks of matrices --------------------------------------------------------------------------


def test_batched_against_numpy() -> None:
    x = pt.tensor("x", dtype="float64", shape=(2, 3, 4, 4))
    value = spd(4, batch=(2, 3)) - 2 * np.eye(4)  # some negative determinants
    sign, logdet = slogdet(x)
    w, v = eigh(x)
    u, s, vh = svd(x)
    q, r = qr(x)
    outs = [
        inv(x),
        det(x),
        sign,
        logdet,
        w,
        s,
        pinv(x),
        trace(x),
        norm(x, 2, axis=(-2, -1)),
        matrix_power(x, 3),
    ]
    assert all(o.type.shape[:2] == (2, 3) for o in outs)
    got = ev(outs, {x: value})
    want_sign, want_logdet = np.linalg.slogdet(value)
    wants = [
        np.linalg.inv(value),
        np.linalg.det(value),
        want_sign,
        want_logdet,
        np.linalg.eigvalsh(value),
        np.linalg.svd(value, compute_uv=False),
        np.linalg.pinv(value),
        np.linalg.trace(value),
        np.linalg.norm(value, 2, axis=(-2, -1)),
        np.linalg.matrix_power(value, 3),
    ]
    for g, want in zip(got, wants):
        close(g, want)
    qv, rv = ev([q, r], {x: value})
    close(qv @ rv, value)
    uv, sv, vhv = ev([u, s, vh], {x: value})
    close(uv * sv[..., None, :] @ vhv, value)
    vv = ev(v, {x: value})
    close(value @ vv, vv * ev(w, {x: value})[..., None, :])


def test_batched_broadcasting_static_one() -> None:
    x = pt.tensor("x", dtype="float64", shape=(1, 3, 3))
    y = pt.tensor("y", dtype="float64", shape=(4, 3))
    out = linalg.solve(x, y, b_ndim=1)
    assert out.type.shape == (4, 3)
    xv, yv = spd(3)[None], rng(3).normal(size=(4, 3))
    close(ev(out, {x: xv, y: yv}), np.linalg.solve(xv[0], yv.T).T)


# --- the namespace -----------------------------------------------------------------------------


def test_linalg_namespace() -> None:
    assert pt.linalg is linalg
    names = [
        "cholesky", "solve", "solve_triangular", "cho_solve", "eigvalsh", "expm", "inv", "matrix_inverse",
        "det", "slogdet", "eigh", "eig", "svd", "qr", "pinv", "trace", "norm", "matrix_power", "matrix_dot",
    ]  # fmt: skip
    for name in names:
        assert callable(getattr(linalg, name)), name
        assert name in linalg.__all__
    assert linalg.qr is slinalg.qr and linalg.inv is nlinalg.inv and linalg.solve is slinalg.solve
