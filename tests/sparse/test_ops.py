"""Values of the sparse Ops against SciPy/NumPy, in FAST_RUN, FAST_COMPILE and the
reference VM without rewrites; bad shapes and operands raise clear errors."""

from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp

import arignote
import arignote.tensor as pt
from arignote import sparse
from tests.sparse.utils import MODES, as_dense, random_sparse

A = random_sparse("csr", (4, 3), seed=1)
B = random_sparse("csc", (4, 3), seed=2)
RNG = np.random.default_rng(0)
D = RNG.normal(size=(4, 3))
W = RNG.normal(size=(3, 2))
V3 = RNG.normal(size=3)
V4 = RNG.normal(size=4)

x = sparse.csr_matrix("x", dtype="float64")
y = sparse.csc_matrix("y", dtype="float64")
d = pt.dmatrix("d")
w = pt.dmatrix("w")
v3 = pt.dvector("v3")
v4 = pt.dvector("v4")
INPUTS = [x, y, d, w, v3, v4]
VALUES = [A, B, D, W, V3, V4]

a, b = A.toarray(), B.toarray()
CASES: list[tuple[str, Any, Any, str | None]] = [
    # name, graph, expected (dense), format of a sparse result (None: dense)
    ("add_ss", x + y, a + b, "csr"),
    ("add_ss_csc_first", y + x, a + b, "csc"),
    ("add_sd", x + d, a + D, None),
    ("add_ds", sparse.add(d, x), a + D, None),
    ("sub_ss", x - y, a - b, "csr"),
    ("sub_sd", x - d, a - D, None),
    ("rsub_ds", sparse.sub(d, x), D - a, None),
    ("neg", -x, -a, "csr"),
    ("mul_ss", x * y, a * b, "csr"),
    ("mul_sd", x * d, a * D, "csr"),
    ("mul_ds", sparse.mul(d, x), a * D, "csr"),
    ("mul_scalar", x * 2.5, a * 2.5, "csr"),
    ("rmul_scalar", 2.5 * x, a * 2.5, "csr"),
    ("mul_sv", x * v3, a * V3, "csr"),
    ("col_scale", sparse.col_scale(x, v3), a * V3, "csr"),
    ("row_scale", sparse.row_scale(x, v4), a * V4[:, None], "csr"),
    ("transpose", x.T, a.T, "csc"),
    ("transpose_csc", sparse.transpose(y), b.T, "csr"),
    ("sum", sparse.sp_sum(x), a.sum(), None),
    ("sum0", x.sum(axis=0), a.sum(axis=0), None),
    ("sum1", sparse.sp_sum(y, axis=1, sparse_grad=True), b.sum(axis=1), None),
    ("toarray", x.toarray(), a, None),
    ("dense_from_sparse", sparse.dense_from_sparse(y), b, None),
    ("csr_from_dense", sparse.csr_from_dense(d), D, "csr"),
    ("csc_from_dense", sparse.csc_from_dense(d), D, "csc"),
    ("structured_dot", sparse.structured_dot(x, w), a @ W, None),
    ("structured_dot_method", x.dot(w), a @ W, None),
    ("matmul", x @ w, a @ W, None),
    ("structured_dot_dense_left", sparse.structured_dot(w.T, y.T), W.T @ b.T, None),
    ("structured_dot_ss", sparse.structured_dot(x, y.T), a @ b.T, "csr"),
    ("dot", sparse.dot(x, w), a @ W, None),
    ("dot_mv", sparse.dot(x, v3), a @ V3, None),
    ("dot_vm", sparse.dot(v4, y), V4 @ b, None),
    ("dot_dense_left", sparse.dot(w.T, y.T), W.T @ b.T, None),
    ("dot_ss", sparse.dot(x, y.T), a @ b.T, None),
    ("true_dot", sparse.true_dot(x, w), a @ W, "csr"),
    ("true_dot_ss", sparse.true_dot(y, x.T), b @ a.T, "csc"),
    ("true_dot_dense_left", sparse.true_dot(w.T, y.T), W.T @ b.T, "csr"),
    ("structured_sigmoid", sparse.structured_sigmoid(x), np.where(a != 0, 1 / (1 + np.exp(-a)), 0), "csr"),
    ("structured_exp", sparse.structured_exp(y), np.where(b != 0, np.exp(b), 0), "csc"),
    ("structured_pow", sparse.structured_pow(x, 2), a**2, "csr"),
    ("structured_maximum", sparse.structured_maximum(x, 0.9), np.where(a != 0, np.maximum(a, 0.9), 0), "csr"),
    ("structured_minimum", sparse.structured_minimum(x, 0.9), np.where(a != 0, np.minimum(a, 0.9), 0), "csr"),
    ("structured_add", sparse.structured_add(x, 1.0), np.where(a != 0, a + 1, 0), "csr"),
    ("sin", sparse.sin(x), np.sin(a), "csr"),
    ("tanh", sparse.tanh(y), np.tanh(b), "csc"),
    ("sqr", sparse.sqr(x), a**2, "csr"),
    ("abs", sparse.abs(x), np.abs(a), "csr"),
    ("astype", x.astype("float32"), a.astype("float32"), "csr"),
    ("shape", x.shape, np.array(a.shape), None),
    ("ones_like", sparse.sp_ones_like(x), (a != 0).astype(float), "csr"),
    ("zeros_like", sparse.sp_zeros_like(y), np.zeros_like(b), "csc"),
    ("chain", sparse.structured_dot((x * d + y).T, d).sum(), ((a * D + b).T @ D).sum(), None),
]


@pytest.mark.parametrize(("name", "out", "expected", "fmt"), CASES, ids=[c[0] for c in CASES])
def test_values_in_every_mode(name: str, out: Any, expected: Any, fmt: str | None) -> None:
    for mode in MODES:
        got = arignote.function(INPUTS, out, mode=mode, on_unused_input="ignore")(*VALUES)
        if fmt is None:
            assert isinstance(got, np.ndarray), (name, mode, type(got))
            assert got.dtype == out.type.dtype
        else:
            assert isinstance(got, sp.spmatrix) and got.format == fmt, (name, mode, type(got))
            assert got.dtype == out.type.dtype
        np.testing.assert_allclose(
            as_dense(got), expected, rtol=1e-12, atol=1e-12, err_msg=f"{name} in {mode}"
        )


def test_inputs_are_not_modified() -> None:
    before = [v.copy() for v in VALUES]
    outs = [c[1] for c in CASES]
    arignote.function(INPUTS, outs, on_unused_input="ignore")(*VALUES)
    for old, new in zip(before, VALUES):
        np.testing.assert_array_equal(as_dense(old), as_dense(new))


def test_dtypes_follow_numpy_promotion() -> None:
    xi = sparse.csr_matrix("xi", dtype="int32")
    xf = sparse.csr_matrix("xf", dtype="float32")
    assert (xi + xf).dtype == "float64"  # NumPy: int32 + float32 -> float64
    assert (xf * pt.fmatrix()).dtype == "float32"
    assert sparse.structured_dot(xi, pt.lmatrix()).dtype == "int64"
    ai = sp.csr_matrix(np.array([[1, 0], [0, 2]], dtype="int32"))
    af = sp.csr_matrix(np.array([[0.5, 0], [1, 0]], dtype="float32"))
    out = arignote.function([xi, xf], xi + xf)(ai, af)
    assert out.dtype == np.float64
    np.testing.assert_allclose(out.toarray(), ai.toarray() + af.toarray())


def test_csm_builds_and_checks_its_parts() -> None:
    data, indices, indptr, shape = pt.dvector("data"), pt.ivector("i"), pt.ivector("p"), pt.ivector("s")
    f = arignote.function([data, indices, indptr, shape], sparse.CSC(data, indices, indptr, shape))
    vals = np.array([7.0, 8.0, 9.0])
    out = f(vals, np.array([0, 1, 2], "int32"), np.array([0, 2, 3, 3], "int32"), np.array([3, 3], "int32"))
    np.testing.assert_array_equal(out.toarray(), [[7, 0, 0], [8, 0, 0], [0, 9, 0]])
    vals[0] = 100.0
    assert out.data[0] == 7.0  # the matrix does not alias its inputs
    with pytest.raises(ValueError, match="indptr has 3 entries; a csc matrix of shape"):
        f(vals, np.array([0, 1, 2], "int32"), np.array([0, 2, 3], "int32"), np.array([3, 3], "int32"))
    with pytest.raises(ValueError, match="3 values but 2 indices"):
        f(vals, np.array([0, 1], "int32"), np.array([0, 2, 3, 3], "int32"), np.array([3, 3], "int32"))
    with pytest.raises(ValueError, match="an index is outside"):
        f(vals, np.array([0, 1, 5], "int32"), np.array([0, 2, 3, 3], "int32"), np.array([3, 3], "int32"))
    with pytest.raises(TypeError, match="data must be a vector"):
        sparse.CSR(pt.dmatrix(), indices, indptr, shape)
    with pytest.raises(TypeError, match="indices must be an integer vector"):
        sparse.CSR(data, pt.dvector(), indptr, shape)


@pytest.mark.parametrize(
    ("build", "match"),
    [
        (lambda: x + pt.dvector(), "dense operand must be a matrix"),
        (lambda: x + 1.0, "structured_add"),
        (lambda: x * pt.tensor3(), "scalar or a matrix"),
        (lambda: sparse.structured_dot(x, pt.dvector()), "use sparse.dot for a vector"),
        (lambda: sparse.dot(pt.dmatrix(), pt.dmatrix()), "needs a sparse operand"),
        (lambda: sparse.add(pt.dmatrix(), pt.dmatrix()), "needs a sparse operand"),
        (lambda: sparse.structured_add(x, pt.dvector()), "must be a scalar"),
        (lambda: sparse.SpSum(axis=2), "axis must be None, 0 or 1"),
        (lambda: sparse.csr_from_dense(pt.dvector()), "only matrices"),
        (lambda: x.astype("bool"), "no sparse matrix of dtype bool"),
    ],
)
def test_bad_operands(build: Any, match: str) -> None:
    with pytest.raises((TypeError, ValueError), match=match):
        build()


def test_static_shape_conflicts() -> None:
    s23 = sparse.SparseTensorType("csr", "float64", (2, 3))("s")
    with pytest.raises(ValueError, match="never broadcast"):
        s23 + sparse.SparseTensorType("csr", "float64", (3, 3))()
    with pytest.raises(ValueError, match="not aligned"):
        sparse.structured_dot(s23, pt.matrix(dtype="float64", shape=(2, 2)))
    assert (s23 * pt.dmatrix()).type.shape == (2, 3)
    assert sparse.dot(s23, pt.dmatrix()).type.shape == (2, None)
    assert s23.T.type.shape == (3, 2)


def test_runtime_shape_mismatches() -> None:
    f = arignote.function([x, y], x + y)
    with pytest.raises(ValueError, match=r"shapes \(4, 3\) and \(3, 3\); sparse matrices never broadcast"):
        f(A, random_sparse("csc", (3, 3), seed=3))
    g = arignote.function([x, w], sparse.structured_dot(x, w))
    with pytest.raises(ValueError, match="not aligned"):
        g(A, np.ones((4, 2)))
    h = arignote.function([x, v4], x * v4)
    with pytest.raises(ValueError, match="3 columns but the vector has length 4"):
        h(A, V4)


def test_shape_does_not_densify() -> None:
    f = arignote.function([x], [x.shape, x.toarray().shape])
    s1, s2 = f(A)
    np.testing.assert_array_equal(s1, [4, 3])
    np.testing.assert_array_equal(s2, [4, 3])
    ops = {type(n.op).__name__ for n in f.maker.fgraph.apply_nodes}
    assert "DenseFromSparse" not in ops, ops  # the shape is read off the matrix


def test_size_counts_stored_entries() -> None:
    assert arignote.function([x], x.size)(A) == A.nnz


def test_tensor_dot_dispatches_to_sparse_operands() -> None:
    """``pt.dot`` with a sparse operand is ``structured_dot``, as in PyTensor."""
    out = pt.dot(x, w)
    assert isinstance(out.owner.op, sparse.StructuredDot)
    left = pt.dot(w.T, y.T)
    np.testing.assert_allclose(arignote.function([w, y], left)(W, B), W.T @ b.T)
    both = pt.dot(x, y.T)
    assert isinstance(both.type, sparse.SparseTensorType)
    np.testing.assert_allclose(arignote.function([x, w], out)(A, W), a @ W)
