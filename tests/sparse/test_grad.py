"""Gradients of the sparse Ops, by finite differences on the dense values.

PyTensor's conventions: the gradient with respect to a sparse input is sparse (``dot``'s
excepted, which is dense as in PyTensor); a structured Op's gradient is structured (zero
where the sparse input stores nothing).
"""

from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp

import arignote
import arignote.tensor as pt
from arignote import sparse
from tests.sparse.utils import as_dense, check_grads, random_sparse

A = random_sparse("csr", (3, 4), seed=11)
B = random_sparse("csc", (3, 4), seed=12)
RNG = np.random.default_rng(5)
C = RNG.normal(size=(3, 4))  # weights making each cost depend on every entry differently
D = RNG.normal(size=(3, 4))
W = RNG.normal(size=(4, 2))
V4 = RNG.normal(size=4)
V3 = RNG.normal(size=3)

x = sparse.csr_matrix("x", dtype="float64")
y = sparse.csc_matrix("y", dtype="float64")
d = pt.dmatrix("d")
w = pt.dmatrix("w")
v4 = pt.dvector("v4")
v3 = pt.dvector("v3")
s = pt.dscalar("s")


def wsum(m: Any) -> Any:
    """A scalar depending on each entry of the matrix ``m`` (sparse or dense) differently."""
    dense = m.toarray() if isinstance(m.type, sparse.SparseTensorType) else m
    return pt.sum(dense * pt.constant(C) + dense**2)


# (name, inputs, cost, values, how each gradient is checked (see check_grads), whether it is sparse)
CASES: list[tuple[str, list, Any, list, list[bool], list[bool]]] = [
    ("dense_from_sparse", [x], wsum(x), [A], [True], [True]),
    (
        "dense_from_sparse_regular",
        [x],
        pt.sum(sparse.DenseFromSparse(False)(x) * pt.constant(C)),
        [A],
        [False],
        [True],
    ),
    ("csr_from_dense", [d], wsum(sparse.csr_from_dense(d)), [D], [False], [False]),
    # sparse + sparse: the gradient of each is the sum's, stored where either operand stores
    ("add_ss", [x, y], wsum(x + y), [A, B], [None, None], [True, True]),
    ("add_sd", [x, d], wsum(x + d), [A, D], [True, False], [True, False]),
    ("sub", [x, y, d], wsum((x - y) - d), [A, B, D], [None, None, False], [True, True, False]),
    ("neg", [y], wsum(-y), [B], [True], [True]),
    ("mul_ss", [x, y], wsum(x * y), [A, B], [True, True], [True, True]),
    ("mul_sd", [x, d], wsum(x * d), [A, D], [True, False], [True, False]),
    ("mul_scalar", [y, s], wsum(y * s), [B, np.float64(1.7)], [True, False], [True, False]),
    ("mul_sv", [x, v4], wsum(x * v4), [A, V4], [True, False], [True, False]),
    ("row_scale", [y, v3], wsum(sparse.row_scale(y, v3)), [B, V3], [True, False], [True, False]),
    ("transpose", [x], wsum(x.T.T) + pt.sum(x.T.toarray()[0]), [A], [True], [True]),
    ("sum_structured", [x], pt.sum(sparse.sp_sum(x * x, sparse_grad=True)), [A], [True], [True]),
    ("sum_regular", [y], sparse.sp_sum(y) * 3.0, [B], [False], [True]),
    ("sum0_structured", [x], pt.sum(sparse.sp_sum(x, 0, sparse_grad=True) ** 2), [A], [True], [True]),
    ("sum0_regular", [x], pt.sum(x.sum(axis=0) ** 2), [A], [False], [True]),
    ("sum1_structured", [y], pt.sum(sparse.sp_sum(y, 1, sparse_grad=True) ** 2), [B], [True], [True]),
    ("sum1_regular", [y], pt.sum(y.sum(axis=1) ** 2), [B], [False], [True]),
    (
        "structured_dot",
        [x, w],
        pt.sum(sparse.structured_dot(x, w) ** 2),
        [A, W],
        [True, False],
        [True, False],
    ),
    (
        "structured_dot_csc",
        [y, w],
        pt.sum(sparse.structured_dot(y, w) ** 2),
        [B, W],
        [True, False],
        [True, False],
    ),
    (
        "structured_dot_dense_left",
        [d, y],
        pt.sum(sparse.structured_dot(d.T, y) ** 2),
        [D, B],
        [False, True],
        [False, True],
    ),
    (
        "structured_dot_ss",
        [x, y],
        pt.sum(sparse.structured_dot(x, y.T).toarray() ** 2),
        [A, B],
        [True, None],
        [True, True],
    ),
    ("dot", [x, w], pt.sum(sparse.dot(x, w) ** 2), [A, W], [False, False], [False, False]),
    ("dot_mv", [y, v4], pt.sum(sparse.dot(y, v4) ** 2), [B, V4], [False, False], [False, False]),
    ("dot_vm", [v3, x], pt.sum(sparse.dot(v3, x) ** 2), [V3, A], [False, False], [False, False]),
    ("dot_ss", [x, y], pt.sum(sparse.dot(x, y.T) ** 2), [A, B], [False, False], [False, False]),
    (
        "true_dot",
        [x, w],
        wsum(sparse.true_dot(x, w).T.T @ pt.constant(W.T)),
        [A, W],
        [False, False],
        [True, False],
    ),
    ("structured_sigmoid", [x], wsum(sparse.structured_sigmoid(x)), [A], [True], [True]),
    ("structured_exp_log", [y], wsum(sparse.structured_log(sparse.structured_exp(y))), [B], [True], [True]),
    (
        "structured_pow",
        [x, s],
        wsum(sparse.structured_pow(x, s)),
        [abs(A), np.float64(1.3)],
        [True, False],
        [True, False],
    ),
    (
        "structured_add",
        [x, s],
        wsum(sparse.structured_add(x, s)),
        [A, np.float64(0.3)],
        [True, False],
        [True, False],
    ),
    ("sin_tanh", [y], wsum(sparse.sin(sparse.tanh(y))), [B], [True], [True]),
    ("as_format", [x], wsum(sparse.as_format(x, "csc") * y), [A], [True], [True]),
    (
        "a_model",
        [x, w, v3],
        pt.sum(pt.tanh(sparse.structured_dot(x, w)) * v3.dimshuffle(0, "x")) + pt.sum(sparse.dot(x, w)),
        [A, W, V3],
        # a structured term and a regular one: checked where x stores
        [None, False, False],
        [False, False, False],
    ),
]


@pytest.mark.parametrize(
    ("name", "inputs", "cost", "values", "structured", "sparse_grad"), CASES, ids=[c[0] for c in CASES]
)
def test_gradient(
    name: str, inputs: list, cost: Any, values: list, structured: list, sparse_grad: list
) -> None:
    if name == "as_format":
        inputs, values = [x, y], [A, B]
        structured, sparse_grad = [True, True], [True, True]
    grads = check_grads(inputs, cost, values, structured)
    for k, g in enumerate(grads):
        assert sp.issparse(g) == sparse_grad[k], (name, k, type(g))
        if sp.issparse(g) and sp.issparse(values[k]):
            assert g.format == values[k].format, (name, k)


def test_csm_gradient_with_respect_to_data() -> None:
    data = pt.dvector("data")
    i, p, shp = (pt.constant(np.asarray(v, dtype="int32")) for v in ([0, 2, 1, 2], [0, 2, 3, 4], [3, 3]))
    m = sparse.CSR(data, i, p, shp)
    cost = pt.sum(sparse.structured_dot(m, pt.constant(W[:3])) ** 2) + sparse.sp_sum(m * m)
    values = [np.array([1.0, -2.0, 0.5, 3.0])]
    check_grads([data], cost, values, [False])


def test_csm_properties_gradient() -> None:
    data, indices, indptr, shape = sparse.csm_properties(x)
    cost = pt.sum(data**3) + pt.sum(indices) * 0.0
    (g,) = check_grads([x], cost, [A], [True])
    np.testing.assert_allclose(g.toarray(), np.where(A.toarray() != 0, 3 * A.toarray() ** 2, 0))


def test_gradient_of_a_sparse_input_used_twice_is_summed() -> None:
    cost = wsum(x) + pt.sum(sparse.structured_dot(x, w)) + sparse.sp_sum(x * x, sparse_grad=True)
    (gx, _) = check_grads([x, w], cost, [A, W], [True, False])
    assert sp.issparse(gx) and gx.format == "csr"


def test_disconnected_and_integer_inputs() -> None:
    z = sparse.csr_matrix("z", dtype="float64")
    g = arignote.grad(pt.sum(x.toarray()), z, disconnected_inputs="ignore")
    out = arignote.function([z], g)(A)
    assert sp.issparse(out) and out.nnz == 0 and out.shape == A.shape
    xi = sparse.csr_matrix("xi", dtype="int64")
    gi = arignote.grad(pt.sum(xi.astype("float64").toarray() ** 2), xi)
    ai = sp.csr_matrix(np.array([[0, 2], [3, 0]], dtype="int64"))
    out = arignote.function([xi], gi)(ai)
    assert np.dtype(out.dtype).kind == "f" and not as_dense(out).any()


def test_float32_gradients_stay_float32() -> None:
    xf = sparse.csr_matrix("xf", dtype="float32")
    wf = pt.fmatrix("wf")
    gx, gw = arignote.grad(pt.sum(sparse.structured_dot(xf, wf) ** 2), [xf, wf])
    assert gx.type.dtype == "float32" and gw.type.dtype == "float32"
    assert isinstance(gx.type, sparse.SparseTensorType)


def test_cast_gradient() -> None:
    """Through a cast to float32 and back, the gradient is the float64 one (to float32's
    precision), sparse and structured."""
    g_cast = arignote.grad(wsum(x.astype("float32").astype("float64")), x)
    g_plain = arignote.grad(wsum(x), x)
    got, expected = arignote.function([x], [g_cast, g_plain])(A)
    assert sp.issparse(got) and got.dtype == np.float64 and got.format == "csr"
    np.testing.assert_allclose(got.toarray(), expected.toarray(), rtol=1e-6)
