"""The rest of PyTensor's sparse library: indexing, stacking, diagonals, comparisons,
sparse shared variables, stored-zero removal and index sorting, structure-preserving sums,
sampled and fused products. Values against SciPy/NumPy in every mode; gradients by finite
differences."""

from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp

import arignote
import arignote.tensor as pt
from arignote import sparse
from tests.sparse.utils import MODES, as_dense, check_grads, random_sparse

A = random_sparse("csr", (4, 3), seed=31)
B = random_sparse("csc", (4, 3), seed=32)
S = random_sparse("csc", (3, 3), seed=33, density=0.7)
RNG = np.random.default_rng(7)
D = RNG.normal(size=(4, 3))
V3 = RNG.normal(size=3)
X5 = RNG.normal(size=(4, 5))
Y5 = RNG.normal(size=(3, 5))

x = sparse.csr_matrix("x", dtype="float64")
y = sparse.csc_matrix("y", dtype="float64")
s = sparse.csc_matrix("s", dtype="float64")
d = pt.dmatrix("d")
v3 = pt.dvector("v3")
x5 = pt.dmatrix("x5")
y5 = pt.dmatrix("y5")
i = pt.lscalar("i")
rows = pt.lvector("rows")
INPUTS = [x, y, s, d, v3, x5, y5, i, rows]
VALUES = [A, B, S, D, V3, X5, Y5, np.int64(2), np.array([3, 0, 3])]

a, b, sd = A.toarray(), B.toarray(), S.toarray()
CASES: list[tuple[str, Any, Any, str | None]] = [
    ("slice", x[1:3, ::2], a[1:3, ::2], "csr"),
    ("slice_rows", y[1:], b[1:], "csc"),
    ("slice_symbolic", x[i:, : i + 1], a[2:, :3], "csr"),
    ("negative_step", x[::-1, 1:], a[::-1, 1:], "csr"),
    ("scalar", x[i, 1], a[2, 1], None),
    ("scalar_ints", y[3, 2], b[3, 2], None),
    ("rows", x[rows], a[[3, 0, 3]], "csr"),
    ("rows_list", y[[1, 2]], b[[1, 2]], "csc"),
    ("two_lists", x[[0, 3, 3], [2, 1, 1]], a[[0, 3, 3], [2, 1, 1]], None),
    ("hstack", sparse.hstack([x, y]), np.hstack([a, b]), "csc"),
    (
        "hstack_csr_f32",
        sparse.hstack([x, y], format="csr", dtype="float32"),
        np.hstack([a, b]).astype("float32"),
        "csr",
    ),
    ("vstack", sparse.vstack([y, x, y]), np.vstack([b, a, b]), "csc"),
    ("block_diag", sparse.block_diag(x, s, d), None, "csc"),
    ("block_diag_csr", sparse.block_diag(s, s, format="csr"), np.kron(np.eye(2), sd), "csr"),
    ("square_diagonal", sparse.square_diagonal(v3), np.diag(V3), "csc"),
    ("diag", sparse.diag(s), np.diag(sd), None),
    ("eq_ss", sparse.eq(x, x), np.ones_like(a), "csr"),
    ("neq_ss", sparse.neq(x, y), (a != b), "csr"),
    ("lt_sd", x < d, a < D, None),
    ("le_ds", sparse.le(d, y), b >= D, None),
    ("gt_ss", x > y, a > b, "csr"),
    ("ge_sd", y >= d, b >= D, None),
    ("remove0", sparse.remove0(x * 0.0 + x * pt.constant(np.where(D > 0, 1.0, 0.0))), a * (D > 0), "csr"),
    ("sorted", sparse.ensure_sorted_indices(x), a, "csr"),
    ("clean", sparse.clean(y * 0.0), np.zeros_like(b), "csc"),
    ("add_s_s_data", sparse.add_s_s_data(x, x * 2.0), 3 * a, "csr"),
    ("structured_add_s_v", sparse.structured_add_s_v(y, v3), np.where(b != 0, b + V3, 0), "csc"),
    ("sampling_dot", sparse.sampling_dot(x5, y5, x), a * (X5 @ Y5.T), "csr"),
    ("usmm", sparse.usmm(pt.constant(0.5), x, d.T, pt.constant(np.ones((4, 4)))), 0.5 * a @ D.T + 1, None),
    ("construct_from_list", sparse.construct_sparse_from_list(d, x5[:2, :3], rows[:2]), None, "csc"),
]
EXPECTED_BLOCK = np.zeros((4 + 3 + 4, 3 + 3 + 3))
EXPECTED_BLOCK[:4, :3], EXPECTED_BLOCK[4:7, 3:6], EXPECTED_BLOCK[7:, 6:] = a, sd, D
EXPECTED_LIST = np.zeros((4, 3))
np.add.at(EXPECTED_LIST, [3, 0], X5[:2, :3])


@pytest.mark.parametrize(("name", "out", "expected", "fmt"), CASES, ids=[c[0] for c in CASES])
def test_values_in_every_mode(name: str, out: Any, expected: Any, fmt: str | None) -> None:
    expected = {"block_diag": EXPECTED_BLOCK, "construct_from_list": EXPECTED_LIST}.get(name, expected)
    for mode in MODES:
        got = arignote.function(INPUTS, out, mode=mode, on_unused_input="ignore")(*VALUES)
        if fmt is None:
            assert isinstance(got, np.ndarray) and got.dtype == out.type.dtype, (name, mode)
        else:
            assert sp.issparse(got) and got.format == fmt and got.dtype == out.type.dtype, (name, mode)
        np.testing.assert_allclose(as_dense(got), expected, rtol=1e-12, err_msg=name)


def test_remove0_and_clean_drop_stored_zeros() -> None:
    out = arignote.function([x], [x * 0.0, sparse.remove0(x * 0.0), sparse.clean(x * 0.0)])(A)
    assert out[0].nnz == A.nnz and out[1].nnz == 0 and out[2].nnz == 0
    unsorted = sp.csr_matrix(
        (np.array([1.0, 2.0]), np.array([2, 0]), np.array([0, 2, 2, 2, 2])), shape=(4, 3)
    )
    assert not unsorted.has_sorted_indices
    fixed = arignote.function([x], sparse.ensure_sorted_indices(x))(unsorted)
    np.testing.assert_array_equal(fixed.indices, [0, 2])
    np.testing.assert_array_equal(fixed.toarray(), unsorted.toarray())


GRAD_CASES: list[tuple[str, list, Any, list, list]] = [
    ("slice", [x], pt.sum(x[1:3, ::2].toarray() ** 2), [A], [True]),
    ("slice_csc", [y], pt.sum(sparse.sp_sum(y[::-1, 1:], 0, sparse_grad=True) ** 2), [B], [True]),
    ("scalar", [x], x[2, 1] ** 2 + x[0, 0] * 3.0, [A], [False]),
    ("rows", [y], pt.sum(y[[3, 0, 3]].toarray() ** 2), [B], [True]),
    ("two_lists", [x], pt.sum(x[[0, 3, 3], [2, 1, 1]] ** 2), [A], [None]),
    (
        "hstack",
        [x, y],
        pt.sum(sparse.hstack([x, y]).toarray() * pt.constant(np.hstack([D, D]))),
        [A, B],
        [True, True],
    ),
    ("vstack", [x, y], pt.sum(sparse.vstack([y, x]).toarray() ** 3), [A, B], [True, True]),
    (
        "block_diag",
        [x, s, d],
        pt.sum(sparse.block_diag(x, s, d).toarray() ** 2),
        [A, S, D],
        [True, True, False],
    ),
    ("square_diagonal", [v3], pt.sum(sparse.square_diagonal(v3).toarray() ** 2), [V3], [False]),
    ("diag", [s], pt.sum(sparse.diag(s) ** 3), [S], [None]),
    ("remove0", [x], pt.sum(sparse.remove0(x).toarray() ** 2), [A], [True]),
    ("add_s_s_data", [x], pt.sum(sparse.add_s_s_data(x, x * 2.0).toarray() ** 2), [A], [True]),
    (
        "structured_add_s_v",
        [y, v3],
        pt.sum(sparse.structured_add_s_v(y, v3).toarray() ** 2),
        [B, V3],
        [True, False],
    ),
    (
        "sampling_dot",
        [x5, y5],
        pt.sum(sparse.sampling_dot(x5, y5, sparse.as_sparse_variable(A)).toarray() ** 2),
        [X5, Y5],
        [False, False],
    ),
    ("comparison", [x, d], pt.sum((x > d) * d) + pt.sum(x.toarray()), [A, D], [True, False]),
]


@pytest.mark.parametrize(
    ("name", "inputs", "cost", "values", "structured"), GRAD_CASES, ids=[c[0] for c in GRAD_CASES]
)
def test_gradient(name: str, inputs: list, cost: Any, values: list, structured: list) -> None:
    grads = check_grads(inputs, cost, values, structured)
    for g, v in zip(grads, values):
        if sp.issparse(v):
            assert sp.issparse(g) and g.format == v.format, name


def test_construct_sparse_from_list_gradient() -> None:
    cost = sparse.sp_sum(sparse.construct_sparse_from_list(d, x5[:2, :3], rows[:2]) * pt.constant(D))
    (g,) = arignote.grad(cost, [x5])
    got = arignote.function([d, x5, rows], g)(D, X5, np.array([3, 0, 3]))
    expected = np.zeros_like(X5)
    expected[:2, :3] = D[[3, 0]]
    np.testing.assert_allclose(got, expected)


def test_indexing_errors() -> None:
    with pytest.raises(TypeError, match=r"no sparse vectors, use x\[i:i\+1, a:b\]"):
        x[1, 0:2]
    with pytest.raises(TypeError, match="2 dimensions, got 3 indices"):
        x[0, 0, 0]
    with pytest.raises(TypeError, match="must be integers"):
        x[pt.dvector()]
    f = arignote.function([x], x[[0, 1], [1]])
    with pytest.raises(ValueError, match="2 row indices but 1 column indices"):
        f(A)


def test_stacking_errors() -> None:
    with pytest.raises(ValueError, match="lengths along axis 0 differ"):
        sparse.hstack(
            [
                sparse.SparseTensorType("csr", "float64", (2, 3))(),
                sparse.SparseTensorType("csr", "float64", (3, 3))(),
            ]
        )
    with pytest.raises(ValueError, match="nothing to stack"):
        sparse.HStack("csr", "float64")()
    f = arignote.function([x, y], sparse.vstack([x, y]))
    with pytest.raises(ValueError, match="lengths along axis 1 differ"):
        f(A, random_sparse("csc", (4, 2), seed=3))
    with pytest.raises(ValueError, match="must be square"):
        arignote.function([x], sparse.diag(x))(A)
    with pytest.raises(ValueError, match=r"static shape \(2, 3\)"):
        sparse.diag(sparse.SparseTensorType("csr", "float64", shape=(2, 3))("r"))
    with pytest.raises(ValueError, match="not have the same structure"):
        arignote.function([x, y], sparse.add_s_s_data(x, sparse.as_format(y, "csr")))(A, B)


def test_shared_variables() -> None:
    w = sparse.shared(A, name="w")
    assert isinstance(w, sparse.SparseTensorSharedVariable) and w.type == sparse.SparseTensorType(
        "csr", "float64"
    )
    A.data[0] += 0.0  # the shared value is a copy
    assert w.get_value() is not A
    generic = arignote.shared(B)  # the generic constructor knows sparse matrices once sparse is imported
    assert isinstance(generic.type, sparse.SparseTensorType) and generic.type.format == "csc"
    as_csc = sparse.shared(A, format="csc")
    assert as_csc.get_value().format == "csc"
    d_in = pt.dmatrix("d_in")
    cost = pt.sum(sparse.structured_dot(w, d_in) ** 2)
    g = arignote.grad(cost, w)
    step = arignote.function([d_in], cost, updates={w: w - 0.1 * g})
    before = w.get_value().copy()
    m = RNG.normal(size=(3, 2))
    step(m)
    after = w.get_value()
    assert after.format == "csr"
    expected = before.toarray() - 0.1 * np.where(before.toarray() != 0, 2 * (before @ m) @ m.T, 0)
    np.testing.assert_allclose(after.toarray(), expected)
    with pytest.raises(TypeError, match="expects a scipy.sparse csr matrix, got a dense ndarray"):
        w.set_value(np.eye(3))
    with pytest.raises(TypeError, match="not ndarray"):
        sparse.shared(np.eye(2))


def test_second_order_through_indexing() -> None:
    """The gradient Ops of indexing are linear in the output gradient and differentiable:
    the Hessian-vector product of a cost through x[rows] / x[a:b] / x[rows, cols]."""
    u = sparse.csr_matrix("u", dtype="float64")
    for sub in (
        lambda m: m[[3, 0, 3]].toarray(),
        lambda m: m[1:3, ::2].toarray(),
        lambda m: m[[0, 3], [2, 1]],
    ):
        cost = pt.sum(sub(x) ** 3)
        g = arignote.grad(cost, x)
        # d/dA of <g(A), U> = 6 * sub(A) * sub(U) placed back, for a direction U of A's structure
        hv = arignote.grad(pt.sum((g * u).toarray()), x)
        got = as_dense(arignote.function([x, u], hv)(A, A * 2.0))
        eps = 1e-6
        fg = arignote.function([x], g)
        dense_dir = (A * 2.0).toarray()
        numeric = (as_dense(fg(A + A * 2.0 * eps)) - as_dense(fg(A - A * 2.0 * eps))) / (2 * eps)
        # Hessian symmetry: <H U, e_ij> = d/deps g(A + eps U)_ij
        np.testing.assert_allclose(got[A.toarray() != 0], numeric[A.toarray() != 0], rtol=1e-5, atol=1e-7)
        assert dense_dir.shape == got.shape


def test_second_order_through_structured_dot() -> None:
    """grad of a gradient: the Hessian of sum(structured_dot(x, w) ** 2) with respect to w
    (dense), through StructuredDotGrad's and CSMGrad's own rules."""
    w = pt.dmatrix("w")
    cost = pt.sum(sparse.structured_dot(x, w) ** 2)
    gx = arignote.grad(cost, x)
    # d/dw of sum(gx * x) = sum over entries of 2 (x @ w)_i. x_ij ... checked by finite differences
    second = arignote.grad(sparse.sp_sum(gx * x), w)
    f2 = arignote.function([x, w], second)
    f1 = arignote.function([x, w], sparse.sp_sum(gx * x))
    m = RNG.normal(size=(3, 2))
    got = f2(A, m)
    eps = 1e-6
    numeric = np.zeros_like(m)
    for k in np.ndindex(m.shape):
        up, down = m.copy(), m.copy()
        up[k] += eps
        down[k] -= eps
        numeric[k] = (f1(A, up) - f1(A, down)) / (2 * eps)
    np.testing.assert_allclose(got, numeric, rtol=1e-6, atol=1e-8)
