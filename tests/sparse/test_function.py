"""Compiled functions, printing and pickling with sparse inputs and outputs."""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp

import arignote
import arignote.tensor as pt
from arignote import sparse
from arignote.printing import debugprint, pprint
from tests.sparse.utils import MODES, random_sparse

A = random_sparse("csr", (4, 3), seed=21)
W = np.random.default_rng(2).normal(size=(3, 2))


@pytest.mark.parametrize(
    ("value", "arrived"),
    [
        (np.eye(3), r"got an ndarray of dtype float64 and shape \(3, 3\)"),
        (sp.csc_matrix(np.eye(3)), r"got csc_matrix .*expects the csr format.*tocsr\(\)"),
        (sp.csr_matrix(np.eye(3, dtype="complex128")), "complex128.*without loss of precision"),
        ([[1.0, 2.0]], "got list"),
    ],
)
def test_bad_input_names_input_type_and_value(value: object, arrived: str) -> None:
    x = sparse.csr_matrix("x", dtype="float64")
    f = arignote.function([x], x * 2.0)
    expected = (
        r"Bad input 0 \('x'\) of the function: expected Type Sparse\(float64, shape=\(\?, \?\), format=csr\)"
    )
    with pytest.raises(TypeError, match="(?s)" + expected + ".*" + arrived):
        f(value)
    with pytest.raises(TypeError, match=expected):
        f(x=value)


def test_static_shape_is_checked_at_call() -> None:
    x = sparse.SparseTensorType("csr", "float64", (4, None))("x")
    f = arignote.function([x], x.toarray())
    np.testing.assert_array_equal(f(A), A.toarray())
    with pytest.raises(TypeError, match=r"static shape \(4, \?\).*dimension 0: expected 4, got 3"):
        f(sp.csr_matrix(np.eye(3)))


def test_inputs_are_upcast_and_sparse_arrays_accepted() -> None:
    x = sparse.csr_matrix("x", dtype="float64")
    f = arignote.function([x], x * 2.0)
    out = f(sp.csr_array(np.array([[0, 1], [2, 0]], dtype="int32")))
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out.toarray(), [[0, 2], [4, 0]])


def test_sparse_outputs_are_fresh() -> None:
    """No output shares memory with an input: the caller may modify what it gets."""
    x = sparse.csr_matrix("x", dtype="float64")
    data, indices, indptr, _ = sparse.csm_properties(x)
    f = arignote.function([x], [x.T, data, indices, indptr, sparse.as_format(x, "csc"), x.astype("float32")])
    a = A.copy()
    for out in f(a):
        for buf in (a.data, a.indices, a.indptr):
            assert not np.may_share_memory(out.data if sp.issparse(out) else out, buf)


def test_modes_agree_on_a_model_and_its_gradient() -> None:
    """A small sparse model and its update rule: every mode gives SciPy's values."""
    x = sparse.csr_matrix("x", dtype="float64")
    w = pt.dmatrix("w")
    target = pt.dmatrix("t")
    pred = pt.tanh(sparse.structured_dot(x, w))
    cost = pt.mean((pred - target) ** 2)
    gw = arignote.grad(cost, w)
    t = np.random.default_rng(3).normal(size=(4, 2))
    expected_pred = np.tanh(A @ W)
    expected_gw = A.T @ (2 * (expected_pred - t) * (1 - expected_pred**2) / t.size)
    for mode in MODES:
        c, g = arignote.function([x, w, target], [cost, gw], mode=mode)(A, W, t)
        np.testing.assert_allclose(c, np.mean((expected_pred - t) ** 2), rtol=1e-12)
        np.testing.assert_allclose(g, expected_gw, rtol=1e-10)


def test_shared_dense_weights_updated_through_a_sparse_product() -> None:
    x = sparse.csr_matrix("x", dtype="float64")
    w = arignote.shared(W.copy(), name="w")
    cost = pt.sum(sparse.structured_dot(x, w) ** 2)
    step = arignote.function([x], cost, updates={w: w - 0.01 * arignote.grad(cost, w)})
    step(A)
    np.testing.assert_allclose(w.get_value(), W - 0.01 * (A.T @ (2 * (A @ W))))


def test_debugprint_and_pprint() -> None:
    x = sparse.csr_matrix("x", dtype="float64")
    w = pt.dmatrix("w")
    c = sparse.constant(sp.csr_matrix(np.eye(3)))
    out = sparse.structured_dot(x + c, w)
    text = debugprint(out, print_type=True, file="str")
    assert "StructuredDot [id A] <Matrix(float64, shape=(3, ?))>" in text
    assert "AddSS [id B] <Sparse(float64, shape=(3, 3), format=csr)>" in text
    assert "x [id C] <Sparse(float64, shape=(?, ?), format=csr)>" in text
    assert "SparseConstant{csr,float64,shape=(3, 3),nnz=3}" in text
    assert pprint(out) == "StructuredDot(AddSS(x, SparseConstant{csr,float64,shape=(3, 3),nnz=3}), w)"
    f = arignote.function([x, w], [out, x.T])
    compiled = debugprint(f, file="str")
    assert "StructuredDot" in compiled and "SparseTranspose" in compiled
    assert "[perform]" in compiled  # sparse Ops run through perform, and dprint says so
    g = arignote.grad(pt.sum(out), x)
    assert "CSM{csr}" in debugprint(g, file="str") and "StructuredDotGrad{csr}" in debugprint(g, file="str")


def test_constants_fold_and_merge() -> None:
    w = pt.dmatrix("w")
    c = sparse.constant(sp.csr_matrix(np.eye(3)))
    c2 = sparse.constant(sp.csr_matrix(np.eye(3)))
    f = arignote.function([w], [sparse.structured_dot(c * 2.0, w), sparse.structured_dot(c2 * 2.0, w)])
    ops = [type(n.op).__name__ for n in f.maker.fgraph.toposort()]
    assert "MulSD" not in ops  # folded into a constant
    assert ops.count("StructuredDot") == 1  # equal constants merged, then equal products
    r1, r2 = f(np.eye(3))
    np.testing.assert_array_equal(r1, 2 * np.eye(3))
    np.testing.assert_array_equal(r2, 2 * np.eye(3))


def test_pickle_round_trip() -> None:
    x = sparse.csr_matrix("x", dtype="float64")
    w = pt.dmatrix("w")
    f = arignote.function([x, w], [sparse.structured_dot(x, w), x.T * 2.0])
    g = pickle.loads(pickle.dumps(f))
    for a, b in zip(f(A, W), g(A, W)):
        np.testing.assert_array_equal(
            a if isinstance(a, np.ndarray) else a.toarray(), b if isinstance(b, np.ndarray) else b.toarray()
        )


def test_eval_and_not_imported_by_the_package() -> None:
    import subprocess
    import sys

    x = sparse.csc_matrix("x", dtype="float64")
    np.testing.assert_array_equal(x.toarray().eval({x: A.tocsc()}), A.toarray())
    code = "import sys, arignote; print('arignote.sparse' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
