"""The names of pytensor.sparse that a user of its tutorial and API reaches for, under
PyTensor's spellings: the per-comparison Op classes, the product and sum Ops' instances and
class names, the cast shortcuts, the structured-dot gradient's per-format classes, the
``structured_elemwise`` decorator, ``as_symbolic_sparse`` and ``sparse.utils``. Values are
compared with scipy.sparse, gradients with finite differences."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import arignote
import arignote.tensor as pt
from arignote import sparse
from arignote.sparse.utils import hash_from_sparse
from arignote.tensor import ufuncs
from tests.sparse.utils import MODES, as_dense, check_grads, random_sparse

COMPARISONS = [
    ("eq", "EqualSS", "EqualSD", "equal", np.equal),
    ("neq", "NotEqualSS", "NotEqualSD", "not_equal", np.not_equal),
    ("lt", "LessThanSS", "LessThanSD", "less_than", np.less),
    ("gt", "GreaterThanSS", "GreaterThanSD", "greater_than", np.greater),
    ("le", "LessEqualSS", "LessEqualSD", "less_equal", np.less_equal),
    ("ge", "GreaterEqualSS", "GreaterEqualSD", "greater_equal", np.greater_equal),
]


@pytest.mark.parametrize(("fn", "ss", "sd", "prefix", "np_fn"), COMPARISONS)
def test_each_comparison_has_its_op_class(fn, ss, sd, prefix, np_fn):
    x, y = sparse.csr_matrix("x", dtype="float64"), sparse.csr_matrix("y", dtype="float64")
    d = pt.dmatrix("d")
    a, b = random_sparse("csr", (3, 4), 0), random_sparse("csr", (3, 4), 1)
    dv = np.round(random_sparse("csr", (3, 4), 2).toarray())
    both = getattr(sparse, fn)(x, y)
    mixed = getattr(sparse, fn)(x, d)
    assert type(both.owner.op) is getattr(sparse, ss) and type(mixed.owner.op) is getattr(sparse, sd)
    assert (
        getattr(sparse, f"{prefix}_s_s") == getattr(sparse, ss)()
        and getattr(sparse, f"{prefix}_s_d").name == fn
    )
    got_ss, got_sd = arignote.function([x, y, d], [both, mixed])(a, b, dv)
    assert sp.issparse(got_ss) and got_ss.dtype == np.uint8
    np.testing.assert_array_equal(got_ss.toarray(), np_fn(a.toarray(), b.toarray()))
    np.testing.assert_array_equal(got_sd, np_fn(a.toarray(), dv))
    # dense first: the swapped comparison
    swapped = arignote.function([x, d], getattr(sparse, fn)(d, x))(a, dv)
    np.testing.assert_array_equal(swapped, np_fn(dv, a.toarray()))
    with pytest.raises(ValueError, match=f"{ss} compares with '{fn}'"):
        getattr(sparse, ss)("eq" if fn != "eq" else "lt")


def test_product_and_sum_ops_under_pytensors_names():
    x, y = sparse.csr_matrix("x", dtype="float64"), sparse.csr_matrix("y", dtype="float64")
    d, v = pt.dmatrix("d"), pt.dvector("v")
    a, b = random_sparse("csr", (3, 4), 3), random_sparse("csr", (3, 4), 4)
    dv, vv = np.arange(12.0).reshape(3, 4), np.array([1.0, -2.0, 0.5, 3.0])
    assert sparse.SparseSparseMultiply is sparse.MulSS and sparse.SparseDenseMultiply is sparse.MulSD
    assert sparse.SparseDenseVectorMultiply is sparse.MulSV
    outs = [
        sparse.mul_s_s(x, y),
        sparse.mul_s_d(x, d),
        sparse.mul_s_v(x, v),
        sparse.add_s_s(x, y),
        sparse.add_s_d(x, d),
    ]
    got = arignote.function([x, y, d, v], outs)(a, b, dv, vv)
    want = [a.multiply(b), a.multiply(dv), a.multiply(vv), a + b, a.toarray() + dv]
    for g, w in zip(got, want):
        np.testing.assert_allclose(as_dense(g), as_dense(w))
    check_grads([x, v], pt.sum(sparse.dense_from_sparse(sparse.mul_s_v(x, v)) ** 2), [a, vv], [True, False])


@pytest.mark.parametrize(
    ("name", "dtype"),
    [
        ("bcast", "int8"),
        ("wcast", "int16"),
        ("icast", "int32"),
        ("lcast", "int64"),
        ("fcast", "float32"),
        ("dcast", "float64"),
        ("ccast", "complex64"),
        ("zcast", "complex128"),
    ],
)
def test_cast_shortcuts(name, dtype):
    x = sparse.csc_matrix("x", dtype="float64")
    out = getattr(sparse, name)(x)
    assert out.type.dtype == dtype and out.type.format == "csc"
    a = sp.csc_matrix(np.array([[0.0, 2.7], [-3.2, 0.0]]))
    got = arignote.function([x], out)(a)
    assert got.dtype == dtype
    np.testing.assert_array_equal(got.toarray(), a.toarray().astype(dtype))


def test_structured_dot_gradient_classes_and_the_other_gradient_ops():
    assert isinstance(sparse.sdg_csr, sparse.StructuredDotGradCSR) and sparse.sdg_csr.format == "csr"
    assert (
        isinstance(sparse.sdg_csc, sparse.StructuredDotGradCSC)
        and sparse.StructuredDotGradCSC() == sparse.sdg_csc
    )
    with pytest.raises(ValueError, match="StructuredDotGradCSR is for CSR"):
        sparse.StructuredDotGradCSR("csc")
    for fmt in ("csr", "csc"):
        a = sparse.SparseTensorType(fmt, "float64")("a")
        b, g = pt.dmatrix("b"), pt.dmatrix("g")
        av = random_sparse(fmt, (3, 4), 5)
        bv, gv = np.arange(8.0).reshape(4, 2), np.arange(6.0).reshape(3, 2) - 2
        out = sparse.structured_dot_grad(a, b, g)
        got = arignote.function([a, b, g], out)(av, bv, gv)
        full = gv @ bv.T  # the gradient of a @ b at every entry; structured: at the stored ones
        np.testing.assert_allclose(as_dense(got), np.where(av.toarray() != 0, full, 0.0))
    assert sparse.csm_grad is sparse.CSMGrad
    assert isinstance(sparse.get_item_list_grad, sparse.GetItemListGrad)
    assert isinstance(sparse.get_item_2lists_grad, sparse.GetItem2ListsGrad)
    assert issubclass(sparse.HStack, sparse.Stack) and issubclass(sparse.VStack, sparse.Stack)


def test_structured_elemwise_decorator_and_gradient():
    @sparse.structured_elemwise(ufuncs.exp)
    def my_exp(x):
        """exp of the stored entries"""

    assert my_exp.__name__ == "my_exp" and my_exp.__doc__ == "exp of the stored entries"
    x = sparse.csr_matrix("x", dtype="float64")
    a = random_sparse("csr", (3, 3), 6)
    got = arignote.function([x], my_exp(x))(a)
    want = a.copy()
    want.data = np.exp(want.data)
    np.testing.assert_allclose(got.toarray(), want.toarray())
    check_grads([x], sparse.sp_sum(my_exp(x)), [a], [True])

    @sparse.structured_elemwise(ufuncs.pow)
    def power(x, p):
        pass

    np.testing.assert_allclose(power(a, 3.0).toarray().eval(), a.power(3).toarray())
    with pytest.raises(TypeError, match="must be a scalar"):
        power(x, pt.dvector("p"))


def test_as_symbolic_sparse_and_hash_from_sparse():
    a = sp.csr_matrix(np.array([[0.0, 1.0], [2.0, 0.0]]))
    c = sparse.as_symbolic_sparse(a)
    assert isinstance(c, arignote.graph.basic.Constant) and c.type.format == "csr"
    np.testing.assert_array_equal(c.data.toarray(), a.toarray())
    with pytest.raises(TypeError):
        sparse.as_symbolic_sparse(np.eye(2))
    unsorted = sp.csr_matrix((np.array([1.0, 2.0]), np.array([1, 0]), np.array([0, 2])), shape=(1, 2))
    ordered = sp.csr_matrix(np.array([[2.0, 1.0]]))
    assert hash_from_sparse(unsorted) == hash_from_sparse(ordered)
    assert hash_from_sparse(ordered) != hash_from_sparse(ordered.tocsc())
    assert hash_from_sparse(ordered) != hash_from_sparse(ordered.astype("float32"))
    with pytest.raises(TypeError, match="CSR or CSC"):
        hash_from_sparse(np.eye(2))
    assert sparse.utils.hash_from_sparse is hash_from_sparse


def test_sparse_grad_gives_the_rows_gradient_as_a_sparse_matrix():
    w, i = pt.dmatrix("w"), pt.lvector("i")
    rows = sparse.sparse_grad(w[i])
    assert isinstance(rows.owner.op, sparse.AdvancedSubtensor1SparseGrad)
    cost = (rows**2).sum() + rows[0].sum()
    wv, iv = np.arange(10.0).reshape(5, 2), np.array([3, 0, 3])
    f = arignote.function([w, i], [rows, arignote.grad(cost, w)])
    got_rows, g = f(wv, iv)
    np.testing.assert_array_equal(got_rows, wv[iv])
    dense = arignote.function([w, i], arignote.grad((w[i] ** 2).sum() + w[i][0].sum(), w))(wv, iv)
    assert sp.issparse(g) and g.format == "csc"
    np.testing.assert_allclose(g.toarray(), dense)
    # the sparse gradient in an update of the dense matrix
    shared_w = arignote.shared(wv.copy(), name="W")
    g = arignote.grad(sparse.sparse_grad(shared_w[i]).sum(), shared_w)
    step = arignote.function([i], [], updates={shared_w: sparse.sub(shared_w, g * 0.1)})
    step(np.array([1, 1]))
    want = wv.copy()
    want[1] -= 0.2
    np.testing.assert_allclose(shared_w.get_value(), want)
    # negative rows count from the end, in the gradient as in the rows
    for mode in MODES:
        fn = arignote.function([w, i], arignote.grad(cost, w), mode=mode)
        g = fn(wv, np.array([-2, 0, 3]))
        np.testing.assert_allclose(g.toarray(), dense, err_msg=str(mode))
    with pytest.raises(IndexError, match="out of bounds"):
        arignote.function([w, i], arignote.grad(cost, w), mode="FAST_COMPILE")(wv, np.array([5, 0, 3]))
    with pytest.raises(TypeError, match=r"needs rows of a matrix taken with an integer vector"):
        sparse.sparse_grad(w[1:3])
    with pytest.raises(TypeError, match="must be a matrix"):
        sparse.sparse_grad(pt.dvector("v")[i])
