"""SparseTensorType, sparse Variables and constants, and the conversions between them."""

import numpy as np
import pytest
import scipy.sparse as sp

import arignote.tensor as pt
from arignote import sparse
from arignote.sparse.type import SparseTensorType


def test_type_identity_and_printing() -> None:
    t = SparseTensorType("csr", "float64")
    assert t == SparseTensorType("csr", "float64", (None, None))
    assert hash(t) == hash(SparseTensorType("csr", "float64"))
    assert t != SparseTensorType("csc", "float64") and t != SparseTensorType("csr", "float32")
    assert t != SparseTensorType("csr", "float64", (2, None))
    assert str(t) == "Sparse(float64, shape=(?, ?), format=csr)"
    assert repr(SparseTensorType("csc", "int8", (2, 3))) == "SparseTensorType(csc, int8, shape=(2, 3))"
    assert t.ndim == 2 and t.format == "csr" and t.dtype == "float64"
    assert t.clone(format="csc") == SparseTensorType("csc", "float64")
    assert t.is_super(SparseTensorType("csr", "float64", (2, 3)))
    assert not SparseTensorType("csr", "float64", (2, 3)).is_super(t)
    assert not t.is_super(SparseTensorType("csc", "float64"))
    assert not t.is_super(pt.dmatrix().type)


@pytest.mark.parametrize(
    ("args", "match"),
    [
        (("coo", "float64"), "unsupported format"),
        (("csr", "bool"), "unsupported dtype"),
        (("csr", "float16"), "float16"),
    ],
)
def test_bad_type_arguments(args: tuple, match: str) -> None:
    with pytest.raises((TypeError, ValueError), match=match):
        SparseTensorType(*args)
    with pytest.raises(ValueError, match="2 dimensions"):
        SparseTensorType("csr", "float64", (None,))


def test_filter_accepts_and_converts() -> None:
    t = SparseTensorType("csr", "float64")
    a = sp.csr_matrix(np.eye(3))
    assert t.filter(a) is a
    assert t.filter(a, strict=True) is a
    up = t.filter(sp.csr_matrix(np.eye(3, dtype="int32")))  # lossless upcast
    assert up.dtype == np.float64 and up.format == "csr"
    arr = t.filter(sp.csr_array(np.eye(2)))  # a sparse array is seen as a matrix
    assert isinstance(arr, sp.csr_matrix)
    down = SparseTensorType("csr", "float32").filter(a, allow_downcast=True)
    assert down.dtype == np.float32


@pytest.mark.parametrize(
    ("value", "kwargs", "match"),
    [
        (
            np.eye(2),
            {},
            r"expects a scipy.sparse csr matrix, got a dense ndarray of dtype float64 and shape \(2, 2\)",
        ),
        (sp.csc_matrix(np.eye(2)), {}, r"expects the csr format, got a scipy.sparse csc .*tocsr\(\)"),
        (sp.coo_matrix(np.eye(2)), {}, "expects the csr format"),
        (sp.csr_matrix(np.eye(2, dtype="float32")), {"strict": True}, "strict"),
        ([[1.0, 0.0]], {}, "got list"),
    ],
)
def test_filter_refuses(value: object, kwargs: dict, match: str) -> None:
    with pytest.raises(TypeError, match=match):
        SparseTensorType("csr", "float64").filter(value, **kwargs)


def test_filter_refuses_downcast_and_shapes_and_variables() -> None:
    with pytest.raises(TypeError, match="without loss of precision"):
        SparseTensorType("csr", "float32").filter(sp.csr_matrix(np.eye(2)))
    with pytest.raises(TypeError, match=r"static shape \(3, \?\).*dimension 0: expected 3, got 2"):
        SparseTensorType("csr", "float64", (3, None)).filter(sp.csr_matrix(np.eye(2)))
    with pytest.raises(TypeError, match="symbolic Variable"):
        SparseTensorType("csr", "float64").filter(sparse.csr_matrix("x"))


def test_values_eq_and_memory() -> None:
    t = SparseTensorType("csr", "float64")
    a = sp.csr_matrix(np.array([[0.0, 1.0], [2.0, 0.0]]))
    assert t.values_eq(a, a.copy())
    assert not t.values_eq(a, a * 2)
    assert not t.values_eq(a, a.toarray())
    assert t.values_eq_approx(a, a + sp.csr_matrix(np.full((2, 2), 1e-12)))
    assert not t.values_eq_approx(a, a * 1.1)
    assert t.may_share_memory(a, a.data)
    assert not t.may_share_memory(a, a.copy())
    assert t.value_zeros((2, 3)).nnz == 0 and t.value_zeros((2, 3)).format == "csr"
    assert t.get_size(t.get_shape_info(a)) == 2 * 8 + (2 + 3) * 4


def test_constructors_and_variables() -> None:
    x = sparse.csr_matrix("x")
    assert x.type == SparseTensorType("csr", "float64") and x.name == "x"  # floatX is float64 here
    y = sparse.csc_matrix(dtype="int32")
    assert y.format == "csc" and y.dtype == "int32" and y.ndim == 2
    assert isinstance(x, sparse.SparseVariable)
    assert sparse.csr_dmatrix("a").type == SparseTensorType("csr", "float64")
    assert sparse.csc_fmatrix().type.dtype == "float32"
    assert sparse.matrix("csc", "m", dtype="float32").type == SparseTensorType("csc", "float32")
    assert x.T.format == "csc" and x.T.type.shape == (None, None)


def test_as_sparse_variable() -> None:
    x = sparse.csr_matrix("x")
    assert sparse.as_sparse_variable(x) is x
    t = x.T
    assert sparse.as_sparse_variable(t.owner) is t
    c = sparse.as_sparse_variable(sp.csc_matrix(np.eye(2, dtype="float32")))
    assert isinstance(c, sparse.SparseConstant) and c.type == SparseTensorType("csc", "float32", (2, 2))
    assert str(c) == "SparseConstant{csc,float32,shape=(2, 2),nnz=2}"
    with pytest.raises(TypeError, match="Expected a sparse Variable.*csr_from_dense"):
        sparse.as_sparse_variable(pt.dmatrix("d"))
    with pytest.raises(TypeError, match="Cannot make a sparse Variable of ndarray"):
        sparse.as_sparse_variable(np.eye(2))
    with pytest.raises(TypeError, match="coo format is not supported"):
        sparse.as_sparse_variable(sp.coo_matrix(np.eye(2)))
    assert sparse.as_sparse_or_tensor_variable(x) is x
    d = sparse.as_sparse_or_tensor_variable(np.eye(2))
    assert isinstance(d.type, pt.TensorType)


def test_constant_is_a_private_copy_and_merges() -> None:
    a = sp.csr_matrix(np.array([[0.0, 1.0], [2.0, 0.0]]))
    c = sparse.constant(a)
    a.data[0] = 100.0
    assert c.data.data[0] == 1.0
    with pytest.raises(ValueError, match="read-only"):
        c.data.data[0] = 5.0
    d = sparse.constant(sp.csr_matrix(np.array([[0.0, 1.0], [2.0, 0.0]])))
    assert c.signature() == d.signature() and hash(c.signature()) == hash(d.signature())
    assert c.signature() != sparse.constant(sp.csr_matrix(np.array([[0.0, 1.0], [3.0, 0.0]]))).signature()


def test_dense_ops_refuse_sparse_variables() -> None:
    x = sparse.csr_matrix("x")
    with pytest.raises(TypeError, match=r"sparse matrix .*x.toarray\(\)"):
        pt.exp(x)
    with pytest.raises(TypeError, match="not a tensor"):
        pt.as_tensor_variable(sp.csr_matrix(np.eye(2)))
    with pytest.raises(TypeError, match="there are no sparse vectors"):
        x[0]
    with pytest.raises(TypeError, match="no truth value"):
        bool(x)


def test_filter_variable_messages() -> None:
    t = SparseTensorType("csr", "float64")
    with pytest.raises(TypeError, match="it is dense.*csr_from_dense"):
        t.filter_variable(pt.dmatrix("d"))
    with pytest.raises(TypeError, match="its format is csc, not csr"):
        t.filter_variable(sparse.csc_matrix("c"))
    with pytest.raises(TypeError, match=r"its dtype is float32.*astype\('float64'\)"):
        t.filter_variable(sparse.csr_matrix("f", dtype="float32"))
    narrow = SparseTensorType("csr", "float64", (2, 2))("n")
    assert t.filter_variable(narrow) is narrow
