"""The sparse rewrites: each fires (structure) and keeps the values of the graph compiled
without rewrites (the reference VM)."""

from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp

import arignote
import arignote.tensor as pt
from arignote import sparse
from arignote.compile.mode import Mode
from tests.sparse.utils import as_dense, random_sparse

A = random_sparse("csr", (4, 3), seed=41)
D = np.random.default_rng(4).normal(size=(4, 3))
x = sparse.csr_matrix("x", dtype="float64")
d = pt.dmatrix("d")
PLAIN = Mode(linker="vm", optimizer=None)


def op_names(f: Any) -> list[str]:
    return [type(n.op).__name__ for n in f.maker.fgraph.toposort()]


@pytest.mark.parametrize(
    ("name", "out", "gone", "count"),
    [
        (
            "csm_chain",
            sparse.structured_exp(sparse.structured_add(sparse.structured_sigmoid(x), 1.0)),
            "CSMProperties",
            1,
        ),
        ("transpose_twice", x.T.T * 2.0, "Transpose", 0),
        ("neg_twice", sparse.neg(sparse.neg(x)), "Neg", 0),
        ("dense_round_trip", sparse.dense_from_sparse(sparse.csc_from_dense(d)) + 1.0, "DenseFromSparse", 0),
    ],
)
def test_rewrite_fires_and_keeps_values(name: str, out: Any, gone: str, count: int) -> None:
    f = arignote.function([x, d], out, on_unused_input="ignore")
    assert op_names(f).count(gone) == count, (name, op_names(f))
    for mode in ("FAST_COMPILE",):
        assert (
            op_names(arignote.function([x, d], out, mode=mode, on_unused_input="ignore")).count(gone) == count
        )
    plain = arignote.function([x, d], out, mode=PLAIN, on_unused_input="ignore")
    assert op_names(plain).count(gone) > count  # the rule made the difference
    np.testing.assert_allclose(as_dense(f(A, D)), as_dense(plain(A, D)), rtol=1e-12)


def test_csm_properties_of_csm_casts_or_keeps_what_does_not_fit() -> None:
    data, indices, indptr = pt.dvector("data"), pt.lvector("indices"), pt.lvector("indptr")
    shape = pt.lvector("shape")
    m = sparse.CSR(data, indices, indptr, shape)
    parts = sparse.csm_properties(m)
    f = arignote.function([data, indices, indptr, shape], list(parts))
    names = op_names(f)
    # data and the int64 indices/indptr are read directly (cast to int32); the shape of
    # unknown length cannot stand for a length-2 vector: it still comes from the matrix
    assert names.count("CSMProperties") == 1 and names.count("CSM") == 1
    args = (np.array([1.0, 2.0]), np.array([1, 0]), np.array([0, 1, 2]), np.array([2, 2]))
    d_out, i_out, p_out, s_out = f(*args)
    np.testing.assert_array_equal(d_out, [1.0, 2.0])
    np.testing.assert_array_equal(i_out, [1, 0])
    assert i_out.dtype == np.int32 and p_out.dtype == np.int32 and s_out.dtype == np.int32
    full = arignote.function([data, indices, indptr, shape], [parts[0], parts[1]])
    assert "CSM" not in op_names(full)  # nothing left of the matrix when only these are read


def test_gradients_still_agree_after_rewrites() -> None:
    cost = sparse.sp_sum(sparse.structured_exp(sparse.structured_add(x, 0.5)) * x.T.T, sparse_grad=True)
    g = arignote.grad(cost, x)
    fast = arignote.function([x], g)(A)
    plain = arignote.function([x], g, mode=PLAIN)(A)
    assert sp.issparse(fast) and fast.format == "csr"
    np.testing.assert_allclose(fast.toarray(), plain.toarray(), rtol=1e-12)
