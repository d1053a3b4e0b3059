"""PyTensor's sparse tutorial (doc/tutorial/sparse.rst), run as written with ``arignote`` in
place of ``pytensor``."""

import numpy as np
import scipy.sparse as sp

import arignote
from arignote import sparse


def test_all_dtypes() -> None:
    assert set(sparse.all_dtypes) == {
        "int8",
        "int16",
        "int32",
        "int64",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "float32",
        "float64",
        "complex64",
        "complex128",
    }


def test_to_and_fro() -> None:
    x = sparse.csc_matrix(name="x", dtype="float32")
    y = sparse.dense_from_sparse(x)
    z = sparse.csc_from_dense(y)
    a = sp.csc_matrix(np.asarray([[0, 1, 1], [0, 0, 0], [1, 0, 0]], dtype="float32"))
    out = arignote.function([x], z)(a)
    assert out.format == "csc" and out.dtype == np.float32
    np.testing.assert_array_equal(out.toarray(), a.toarray())
    np.testing.assert_array_equal(arignote.function([x], y)(a), a.toarray())


def test_properties_and_construction() -> None:
    x = sparse.csc_matrix(name="x", dtype="int64")
    data, indices, indptr, shape = sparse.csm_properties(x)
    y = sparse.CSR(data, indices, indptr, shape)
    f = arignote.function([x], y)
    a = sp.csc_matrix(np.asarray([[0, 1, 1], [0, 0, 0], [1, 0, 0]]))
    assert str(a.toarray()) == "[[0 1 1]\n [0 0 0]\n [1 0 0]]"
    out = f(a)
    assert out.format == "csr"
    assert str(out.toarray()) == "[[0 0 1]\n [1 0 0]\n [1 0 0]]"
    np.testing.assert_array_equal(out.toarray(), a.toarray().T)  # the parts of the transpose


def test_structured_operation() -> None:
    x = sparse.csc_matrix(name="x", dtype="float32")
    y = sparse.structured_add(x, 2)
    f = arignote.function([x], y)
    a = sp.csc_matrix(np.asarray([[0, 0, -1], [0, -2, 1], [3, 0, 0]], dtype="float32"))
    assert str(a.toarray()) == "[[ 0.  0. -1.]\n [ 0. -2.  1.]\n [ 3.  0.  0.]]"
    out = f(a)
    assert str(out.toarray()) == "[[0. 0. 1.]\n [0. 0. 3.]\n [5. 0. 0.]]"
    assert out.dtype == np.float32 and out.format == "csc"


def test_structured_gradient() -> None:
    """A structured Op's gradient is structured: zero where the input stores nothing."""
    x = sparse.csc_matrix(name="x", dtype="float64")
    cost = sparse.sp_sum(sparse.structured_add(x, 2) * sparse.structured_add(x, 2), sparse_grad=True)
    g = arignote.function([x], arignote.grad(cost, x))
    a = sp.csc_matrix(np.asarray([[0, 0, -1], [0, -2, 1], [3, 0, 0]], dtype="float64"))
    out = g(a)
    assert sp.issparse(out) and out.format == "csc"
    expected = np.where(a.toarray() != 0, 2 * (a.toarray() + 2), 0.0)
    np.testing.assert_allclose(out.toarray(), expected)


def test_library_reference_examples() -> None:
    """The CSC and CSR layouts of the library page (plain SciPy, as the page shows)."""
    data = np.asarray([7, 8, 9])
    indices = np.asarray([0, 1, 2])
    indptr = np.asarray([0, 2, 3, 3])
    m = sp.csc_matrix((data, indices, indptr), shape=(3, 3))
    x = sparse.csc_matrix("x", dtype=m.dtype)
    d, i, p, s = (arignote.function([x], v)(m) for v in sparse.csm_properties(x))
    np.testing.assert_array_equal(d, data)
    np.testing.assert_array_equal(i, indices)
    np.testing.assert_array_equal(p, indptr)
    np.testing.assert_array_equal(s, [3, 3])
    assert i.dtype == p.dtype == s.dtype == np.int32
    np.testing.assert_array_equal(arignote.function([x], x.toarray())(m), [[7, 0, 0], [8, 0, 0], [0, 9, 0]])
