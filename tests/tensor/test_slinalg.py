"""SciPy-flavoured linear algebra (``arignote.tensor.slinalg``): values against SciPy in
float64 and float32, output dtypes and static shapes, infer_shape, option handling, errors
at build and run time, and stacks of matrices (Blockwise) against SciPy looped over the batch.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import scipy.linalg as sl

import arignote.tensor as pt
from arignote import function
from arignote.tensor.blockwise import Blockwise
from arignote.tensor.linalg.decompositions import QR
from arignote.tensor.slinalg import (
    Cholesky,
    CholeskySolve,
    Eigvalsh,
    Expm,
    Solve,
    SolveTriangular,
    cho_solve,
    cholesky,
    eigvalsh,
    expm,
    qr,
    solve,
    solve_triangular,
)
from tests.tensor.utils import assert_infer_shape

RTOL = {"float64": 1e-10, "float32": 1e-4}


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def spd(n: int, seed: int = 0, batch: tuple = ()) -> np.ndarray:
    x = rng(seed).normal(size=(*batch, n, n))
    return x @ np.swapaxes(x, -1, -2) + n * np.eye(n)


def general(n: int, m: int | None = None, seed: int = 1) -> np.ndarray:
    m = n if m is None else m
    return rng(seed).normal(size=(n, m)) + n * np.eye(n, m)


def mat(name: str, dtype: str = "float64", shape: tuple = (None, None)) -> Any:
    return pt.tensor(name, dtype=dtype, shape=shape)


def close(got: np.ndarray, want: np.ndarray, dtype: str = "float64") -> None:
    np.testing.assert_allclose(got, want, rtol=RTOL[dtype], atol=RTOL[dtype])


def ev(out: Any, givens: dict) -> Any:
    return function(list(givens), out, on_unused_input="ignore")(*givens.values())


# --- cholesky ----------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("lower", [True, False])
def test_cholesky_values(dtype: str, lower: bool) -> None:
    a = mat("a", dtype)
    value = spd(4).astype(dtype)
    out = cholesky(a, lower=lower)
    assert out.type.dtype == dtype
    got = ev(out, {a: value})
    assert got.dtype == dtype
    close(got, sl.cholesky(value, lower=lower), dtype)


def test_cholesky_reads_one_triangle() -> None:
    a = mat("a")
    value = spd(3)
    lower_only, upper_only = np.tril(value), np.triu(value)
    close(ev(cholesky(a), {a: lower_only}), np.linalg.cholesky(value))
    close(ev(cholesky(a, lower=False), {a: upper_only}), np.linalg.cholesky(value).T)


@pytest.mark.parametrize("dtype, expected", [("int64", "float64"), ("int32", "float64"), ("int8", "float32")])
def test_cholesky_integer_input_dtype(dtype: str, expected: str) -> None:
    a = mat("a", dtype)
    out = cholesky(a)
    assert out.type.dtype == expected
    value = np.array([[4, 2], [2, 3]], dtype=dtype)
    close(ev(out, {a: value}), sl.cholesky(value, lower=True), expected)


def test_cholesky_static_shape() -> None:
    assert cholesky(mat("a", shape=(3, None))).type.shape == (3, 3)
    assert cholesky(mat("a", shape=(None, 4))).type.shape == (4, 4)
    assert cholesky(mat("a")).type.shape == (None, None)


def test_cholesky_not_positive_definite() -> None:
    a = mat("a")
    bad = np.array([[1.0, 2.0], [2.0, 1.0]])
    with pytest.raises(np.linalg.LinAlgError, match="not positive definite"):
        ev(cholesky(a, on_error="raise"), {a: bad})
    assert np.isnan(ev(cholesky(a, on_error="nan"), {a: bad})).all()
    assert np.isnan(ev(cholesky(a), {a: bad})).all()  # PyTensor's default is "nan"


def test_cholesky_errors() -> None:
    with pytest.raises(ValueError, match=r"square.*\(2, 3\)"):
        cholesky(mat("a", shape=(2, 3)))
    with pytest.raises(ValueError, match="at least 2-d"):
        cholesky(pt.dvector("v"))
    with pytest.raises(TypeError, match="must be a matrix"):
        Cholesky()(pt.tensor3("t", dtype="float64"))
    with pytest.raises(ValueError, match="on_error"):
        Cholesky(on_error="ignore")
    a = mat("a")
    with pytest.raises(ValueError, match=r"square matrix.*\(2, 3\)"):
        ev(cholesky(a), {a: np.ones((2, 3))})
    nans = np.full((2, 2), np.nan)
    with pytest.raises(ValueError, match="NaN or infinity"):
        ev(cholesky(a, on_error="raise"), {a: nans})
    assert np.isnan(ev(cholesky(a), {a: nans})).all()  # on_error="nan": NaN in, NaN out
    # without check_finite, NaN input is left to LAPACK, which propagates it
    assert np.isnan(ev(cholesky(a, on_error="raise", check_finite=False), {a: nans})[1, 0])


def test_cholesky_empty() -> None:
    a = mat("a")
    assert ev(cholesky(a), {a: np.zeros((0, 0))}).shape == (0, 0)


# --- solve -------------------------------------------------------------------------------------


def _structured(assume_a: str, n: int = 4) -> np.ndarray:
    if assume_a in ("diagonal",):
        return np.diag(np.arange(1.0, n + 1))
    if assume_a == "tridiagonal":
        return np.triu(np.tril(general(n), 1), -1)
    if assume_a == "banded":
        return np.triu(np.tril(general(n), 2), -1)
    if assume_a in ("lower triangular", "upper triangular"):
        return np.tril(general(n)) if assume_a.startswith("lower") else np.triu(general(n))
    if assume_a in ("sym", "her", "symmetric"):
        g = general(n)
        return g + g.T
    if assume_a in ("pos", "positive definite"):
        return spd(n)
    return general(n)


ASSUMES = [
    "gen",
    "general",
    "sym",
    "symmetric",
    "her",
    "pos",
    "positive definite",
    "diagonal",
    "tridiagonal",
    "banded",
    "lower triangular",
    "upper triangular",
]


@pytest.mark.parametrize("assume_a", ASSUMES)
@pytest.mark.parametrize("b_shape", [(4,), (4, 2)])
def test_solve_values(assume_a: str, b_shape: tuple) -> None:
    a, b = mat("a"), pt.tensor("b", dtype="float64", shape=(None,) * len(b_shape))
    av = _structured(assume_a)
    bv = rng(3).normal(size=b_shape)
    got = ev(solve(a, b, assume_a=assume_a), {a: av, b: bv})
    close(got, sl.solve(av, bv, assume_a=assume_a))
    close(av @ got, bv)


@pytest.mark.parametrize("assume_a", ["sym", "pos"])
@pytest.mark.parametrize("lower", [True, False])
def test_solve_reads_the_named_triangle(assume_a: str, lower: bool) -> None:
    a, b = mat("a"), pt.dvector("b")
    full = spd(3)
    garbage = np.triu(np.full((3, 3), 100.0), 1)
    given = np.tril(full) + garbage if lower else np.triu(full) + garbage.T
    got = ev(solve(a, b, assume_a=assume_a, lower=lower), {a: given, b: np.ones(3)})
    close(got, np.linalg.solve(full, np.ones(3)))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_solve_transposed_and_dtype(dtype: str) -> None:
    a, b = mat("a", dtype), mat("b", dtype)
    av, bv = general(3).astype(dtype), rng(2).normal(size=(3, 2)).astype(dtype)
    out = solve(a, b, transposed=True)
    assert out.type.dtype == dtype
    close(ev(out, {a: av, b: bv}), np.linalg.solve(av.T, bv), dtype)


@pytest.mark.parametrize(
    "da, db, expected",
    [("float32", "float32", "float32"), ("float32", "float64", "float64"), ("int64", "int64", "float64")],
)
def test_solve_output_dtype(da: str, db: str, expected: str) -> None:
    assert solve(mat("a", da), mat("b", db)).type.dtype == expected


def test_solve_static_shape() -> None:
    out = solve(mat("a", shape=(3, None)), pt.tensor("b", dtype="float64", shape=(None, 5)))
    assert out.type.shape == (3, 5)
    out = solve(mat("a"), pt.tensor("b", dtype="float64", shape=(4,)))
    assert out.type.shape == (4,)


def test_solve_singular_gives_nan_on_request() -> None:
    # the default raises, as scipy.linalg.solve and PyTensor do (tests/tensor/test_linalg_edges.py)
    a, b = mat("a"), pt.dvector("b")
    assert np.isnan(ev(solve(a, b, on_error="nan"), {a: np.ones((2, 2)), b: np.ones(2)})).all()


def test_solve_errors() -> None:
    with pytest.raises(ValueError, match=r"b must have 3 rows"):
        solve(mat("a", shape=(3, 3)), pt.tensor("b", dtype="float64", shape=(4,)))
    with pytest.raises(ValueError, match="square"):
        solve(mat("a", shape=(3, 2)), pt.dvector("b"))
    with pytest.raises(ValueError, match="assume_a"):
        solve(mat("a"), pt.dvector("b"), assume_a="orthogonal")
    with pytest.raises(ValueError, match="b_ndim"):
        solve(mat("a"), pt.dvector("b"), b_ndim=2)
    with pytest.raises(ValueError, match="b_ndim"):
        solve(mat("a"), pt.dvector("b"), b_ndim=3)
    with pytest.raises(TypeError, match="b must be a vector"):
        Solve(b_ndim=1)(mat("a"), mat("b"))
    a, b = mat("a"), pt.dvector("b")
    with pytest.raises(ValueError, match=r"a has shape \(3, 3\) and b has shape \(2,\)"):
        ev(solve(a, b), {a: np.eye(3), b: np.ones(2)})


# --- solve_triangular and cho_solve ------------------------------------------------------------


@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("trans", [0, 1, 2, "N", "T", "C"])
@pytest.mark.parametrize("unit_diagonal", [False, True])
def test_solve_triangular_values(lower: bool, trans: Any, unit_diagonal: bool) -> None:
    a, b = mat("a"), mat("b")
    av, bv = general(4), rng(5).normal(size=(4, 3))
    out = solve_triangular(a, b, lower=lower, trans=trans, unit_diagonal=unit_diagonal)
    want = sl.solve_triangular(av, bv, lower=lower, trans=trans, unit_diagonal=unit_diagonal)
    close(ev(out, {a: av, b: bv}), want)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_solve_triangular_vector(dtype: str) -> None:
    a, b = mat("a", dtype), pt.tensor("b", dtype=dtype, shape=(None,))
    av, bv = general(3).astype(dtype), np.arange(3.0).astype(dtype)
    got = ev(solve_triangular(a, b, lower=True), {a: av, b: bv})
    assert got.dtype == dtype
    close(got, sl.solve_triangular(av, bv, lower=True), dtype)


def test_solve_triangular_errors() -> None:
    with pytest.raises(ValueError, match="trans"):
        solve_triangular(mat("a"), pt.dvector("b"), trans=3)
    a, b = mat("a"), pt.dvector("b")
    zero_diag = np.array([[0.0, 0.0], [1.0, 1.0]])
    # a singular matrix raises by default, as scipy.linalg.solve_triangular does
    with pytest.raises(np.linalg.LinAlgError, match=r"SolveTriangular.*is singular"):
        ev(solve_triangular(a, b, lower=True), {a: zero_diag, b: np.ones(2)})
    with pytest.raises(np.linalg.LinAlgError, match="singular"):
        sl.solve_triangular(zero_diag, np.ones(2), lower=True)
    assert np.isnan(
        ev(solve_triangular(a, b, lower=True, on_error="nan"), {a: zero_diag, b: np.ones(2)})
    ).all()


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("lower", [True, False])
def test_cho_solve_values(dtype: str, lower: bool) -> None:
    c, b = mat("c", dtype), mat("b", dtype)
    factor = sl.cholesky(spd(4), lower=lower).astype(dtype)
    bv = rng(4).normal(size=(4, 2)).astype(dtype)
    got = ev(cho_solve((c, lower), b), {c: factor, b: bv})
    assert got.dtype == dtype
    close(got, sl.cho_solve((factor, lower), bv), dtype)


def test_cho_solve_chained_with_cholesky() -> None:
    a, b = mat("a"), pt.dvector("b")
    av = spd(3)
    got = ev(cho_solve((cholesky(a), True), b), {a: av, b: np.arange(3.0)})
    close(got, np.linalg.solve(av, np.arange(3.0)))


def test_cho_solve_bad_first_argument() -> None:
    with pytest.raises(TypeError, match=r"pair \(c, lower\)"):
        cho_solve(mat("c"), pt.dvector("b"))


# --- eigvalsh, expm ----------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("lower", [True, False])
def test_eigvalsh_values(dtype: str, lower: bool) -> None:
    a = mat("a", dtype)
    value = spd(4).astype(dtype)
    given = np.tril(value) if lower else np.triu(value)
    out = eigvalsh(a, lower=lower)
    assert out.type.dtype == dtype
    close(ev(out, {a: given}), np.linalg.eigvalsh(value), dtype)


def test_eigvalsh_generalised() -> None:
    a, b = mat("a"), mat("b")
    av, bv = spd(3, seed=1), spd(3, seed=2)
    close(ev(eigvalsh(a, b), {a: av, b: bv}), sl.eigh(av, bv, eigvals_only=True))


def test_eigvalsh_static_shape_and_errors() -> None:
    assert eigvalsh(mat("a", shape=(None, 5))).type.shape == (5,)
    assert eigvalsh(mat("a", "int32")).type.dtype == "float64"
    with pytest.raises(ValueError, match="square"):
        eigvalsh(mat("a", shape=(2, 3)))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_expm_values(dtype: str) -> None:
    a = mat("a", dtype)
    value = (0.3 * general(4)).astype(dtype)
    got = ev(expm(a), {a: value})
    assert got.dtype == dtype
    close(got, sl.expm(value), dtype)


def test_expm_errors() -> None:
    with pytest.raises(ValueError, match="square"):
        expm(mat("a", shape=(2, 3)))
    a = mat("a")
    with pytest.raises(ValueError, match=r"\(2, 3\)"):
        ev(expm(a), {a: np.ones((2, 3))})


# --- qr (SciPy's flavour) ----------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4)])
@pytest.mark.parametrize("mode", ["full", "economic", "r", "raw", "complete", "reduced"])
@pytest.mark.parametrize("pivoting", [False, True])
def test_scipy_qr_values(shape: tuple, mode: str, pivoting: bool) -> None:
    a = mat("a", shape=shape)
    av = rng(6).normal(size=shape)
    out = qr(a, mode=mode, pivoting=pivoting)
    scipy_mode = {"complete": "full", "reduced": "economic"}.get(mode, mode)
    want = sl.qr(av, mode=scipy_mode, pivoting=pivoting)
    if scipy_mode == "raw":
        (h, tau), *rest = want
        want = (h, tau, *rest)
    elif not isinstance(want, tuple):
        want = (want,)
    outs = out if isinstance(out, list) else [out]
    assert len(outs) == len(want)
    got = ev(outs, {a: av})
    for o, g, w in zip(outs, got, want):
        assert g.shape == w.shape
        assert o.type.shape == w.shape  # static shapes from the static input shape
        close(g, w)


def test_scipy_qr_errors() -> None:
    with pytest.raises(ValueError, match="mode"):
        qr(mat("a"), mode="thin")
    with pytest.raises(ValueError, match="at least 2-d"):
        qr(pt.dvector("v"))


# --- infer_shape ---------------------------------------------------------------------------------


def test_infer_shape() -> None:
    a, b, v = mat("a"), mat("b"), pt.dvector("v")
    s, g, bv = spd(4), general(4), rng(1).normal(size=(4, 3))
    wide = pt.dmatrix("w")
    cases = [
        (Cholesky()(a), {a: s}),
        (Solve(assume_a="gen", b_ndim=2)(a, b), {a: g, b: bv}),
        (Solve(assume_a="pos", b_ndim=1)(a, v), {a: s, v: bv[:, 0]}),
        (SolveTriangular(lower=True, b_ndim=2)(a, b), {a: g, b: bv}),
        (CholeskySolve(lower=True, b_ndim=1)(a, v), {a: np.linalg.cholesky(s), v: bv[:, 0]}),
        (Eigvalsh()(a), {a: s}),
        (Expm()(a), {a: 0.1 * g}),
    ]
    for out, givens in cases:
        assert_infer_shape(out, givens)
    for mode in ["full", "economic", "r", "raw"]:
        for value in (rng(2).normal(size=(5, 3)), rng(2).normal(size=(3, 5))):
            for o in QR(mode, pivoting=True)(wide):
                assert_infer_shape(o, {wide: value})


# --- stacks of matrices --------------------------------------------------------------------------


def test_batched_values() -> None:
    x = pt.tensor("x", dtype="float64", shape=(2, 3, 4, 4))
    b = pt.tensor("b", dtype="float64", shape=(None, 4))
    bm = pt.tensor("bm", dtype="float64", shape=(4, 2))
    s = spd(4, batch=(2, 3))
    bv = rng(2).normal(size=(3, 4))
    bmv = rng(3).normal(size=(4, 2))
    loop = np.ndindex(2, 3)

    chol = cholesky(x)
    assert isinstance(chol.owner.op, Blockwise) and chol.type.shape == (2, 3, 4, 4)
    got_chol = ev(chol, {x: s})
    got_solve = ev(solve(x, b, b_ndim=1, assume_a="pos"), {x: s, b: bv})
    got_solve_m = ev(solve(x, bm), {x: s, bm: bmv})
    got_tri = ev(solve_triangular(x, bm, lower=True), {x: s, bm: bmv})
    got_cho = ev(cho_solve((chol, True), bm), {x: s, bm: bmv})
    got_eig = ev(eigvalsh(x), {x: s})
    got_expm = ev(expm(x * 0.1), {x: s})
    for i, j in loop:
        m = s[i, j]
        close(got_chol[i, j], np.linalg.cholesky(m))
        close(got_solve[i, j], np.linalg.solve(m, bv[j]))
        close(got_solve_m[i, j], np.linalg.solve(m, bmv))
        close(got_tri[i, j], sl.solve_triangular(m, bmv, lower=True))
        close(got_cho[i, j], np.linalg.solve(m, bmv))
        close(got_eig[i, j], np.linalg.eigvalsh(m))
        close(got_expm[i, j], sl.expm(0.1 * m))


def test_batched_shape_errors() -> None:
    x = pt.tensor("x", dtype="float64", shape=(2, 3, 3))
    b = pt.tensor("b", dtype="float64", shape=(4, 3))
    with pytest.raises(ValueError, match="batch"):
        solve(x, b, b_ndim=1)
    with pytest.raises(ValueError, match="square"):
        cholesky(pt.tensor("y", dtype="float64", shape=(2, 3, 4)))
    y = pt.tensor3("y", dtype="float64")
    with pytest.raises(ValueError, match=r"square matrix.*\(3, 4\)"):
        ev(cholesky(y), {y: np.ones((2, 3, 4))})
