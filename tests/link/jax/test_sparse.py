"""Sparse matrices under the JAX backend: SciPy matrices in and out of a program, BCOO inside.

The sparse test-suite (``tests/sparse``) runs every case in ``mode="JAX"`` too; these tests
cover what is particular to the representation (:mod:`arignote.link.jax.dispatch.sparse.values`):
constants, shared variables and their updates, the exact parts of inputs (SciPy's entry order,
explicit zeros), the padded parts of computed matrices, one compilation per number of stored
entries, ``jax_function`` on BCOO values, dtypes and formats. SciPy is the oracle.
"""

from __future__ import annotations

import gc

import pytest

jax = pytest.importorskip("jax")

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402
from jax.experimental.sparse import BCOO  # noqa: E402

import arignote  # noqa: E402
import arignote.tensor as pt  # noqa: E402
from arignote import sparse  # noqa: E402
from arignote.link.jax import jax_function  # noqa: E402
from arignote.link.jax.dispatch.sparse import values  # noqa: E402
from arignote.link.jax.dispatch.sparse.values import (  # noqa: E402
    constant_bcoo,
    from_dense,
    padded,
    parts,
    to_bcoo,
    to_scipy,
)
from tests.sparse.utils import random_sparse  # noqa: E402

A = random_sparse("csr", (5, 4), seed=1)
D = np.random.default_rng(2).normal(size=(4, 3))


def _same_matrix(got: object, want: object, fmt: str, dtype: str) -> None:
    assert sp.issparse(got) and got.format == fmt and got.dtype == np.dtype(dtype), (type(got), got)
    np.testing.assert_allclose(got.toarray(), want.toarray() if sp.issparse(want) else want, rtol=1e-12)


def test_a_sparse_constant_times_a_dense_input() -> None:
    """PyTensor's JAX backend's case: a constant sparse matrix in a product."""
    x = pt.dmatrix("x")
    f = arignote.function([x], sparse.structured_dot(sparse.as_sparse_variable(A), x), mode="JAX")
    np.testing.assert_allclose(f(D), A @ D, rtol=1e-12)
    assert f.maker.fgraph.inputs == [f.maker.fgraph.inputs[0]]  # the matrix is a constant


@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_sparse_inputs_and_outputs_keep_format_and_dtype(fmt: str) -> None:
    x = sparse.matrix(fmt, name="x", dtype="float32")
    a = A.asformat(fmt).astype("float32")
    f = arignote.function(
        [x], [sparse.transpose(x), sparse.cast(x, "float64"), sparse.ensure_sorted_indices(x)], mode="JAX"
    )
    t, c, same = f(a)
    _same_matrix(t, a.T, "csc" if fmt == "csr" else "csr", "float32")
    _same_matrix(c, a, fmt, "float64")
    _same_matrix(same, a, fmt, "float32")


def test_the_parts_of_an_input_are_scipys_own() -> None:
    """Unsorted indices and an explicit zero: the parts come back as SciPy stores them."""
    data = np.array([3.0, 0.0, 1.0, 2.0])
    indices = np.array([2, 0, 1, 0], dtype=np.int32)
    indptr = np.array([0, 2, 2, 4], dtype=np.int32)
    a = sp.csr_matrix((data, indices, indptr), shape=(3, 3))
    assert not a.has_sorted_indices
    x = sparse.csr_matrix("x")
    got = arignote.function([x], list(sparse.csm_properties(x)), mode="JAX")(a)
    for part, want in zip(got, (data, indices, indptr, [3, 3])):
        np.testing.assert_array_equal(part, want)
    # read as CSC: the parts of the CSC matrix, as SciPy converts it
    y = sparse.csc_matrix("y")
    got = arignote.function([y], list(sparse.csm_properties(y))[:3], mode="JAX")(a.tocsc())
    for part, want in zip(got, (a.tocsc().data, a.tocsc().indices, a.tocsc().indptr)):
        np.testing.assert_array_equal(part, want)


def test_a_computed_matrix_rebuilt_from_its_padded_parts() -> None:
    """``csr_from_dense`` stores as many entries as nonzeros, known only when it runs: its
    parts end with padding past ``indptr[-1]``, and structured functions see the same matrix."""
    d = pt.dmatrix("d")
    m = sparse.csr_from_dense(d)
    data, indices, indptr, _ = sparse.csm_properties(m)
    f = arignote.function(
        [d],
        [data, indptr, sparse.structured_exp(m), sparse.CSR(data * 2, indices, indptr, (3, 4))],
        mode="JAX",
    )
    dense = np.array([[0.0, 1.5, 0.0, -2.0], [0.0, 0.0, 0.0, 0.0], [3.0, 0.0, 0.5, 0.0]])
    got_data, got_indptr, expd, twice = f(dense)
    want = sp.csr_matrix(dense)
    np.testing.assert_array_equal(got_indptr, want.indptr)
    np.testing.assert_array_equal(got_data[: want.nnz], want.data)
    assert len(got_data) == dense.size  # the bound: every element
    _same_matrix(expd, np.where(dense != 0, np.exp(dense), 0.0), "csr", "float64")
    assert expd.nnz == want.nnz  # the padding is not stored
    _same_matrix(twice, 2 * dense, "csr", "float64")


def test_an_input_storing_a_coordinate_twice_acts_as_scipys() -> None:
    """SciPy may store one coordinate twice (a non-canonical matrix): its parts list both, and
    a structured function acts on each stored entry, in JAX as in the reference VM."""
    a = sp.csr_matrix((np.array([1.0, 2.0, 4.0]), np.array([1, 1, 0]), np.array([0, 2, 3])), shape=(2, 2))
    assert not a.has_canonical_format
    x = sparse.csr_matrix("x")
    outs = [sparse.csm_properties(x)[0], sparse.structured_exp(x)]
    want = arignote.function([x], outs, mode="FAST_COMPILE")(a)
    got = arignote.function([x], outs, mode="JAX")(a)
    np.testing.assert_array_equal(got[0], [1.0, 2.0, 4.0])
    _same_matrix(got[1], want[1], "csr", "float64")
    np.testing.assert_allclose(got[1].toarray(), [[0.0, np.exp(1.0) + np.exp(2.0)], [np.exp(4.0), 0.0]])


def test_the_parts_of_a_computed_matrix_sum_its_duplicates() -> None:
    """A matrix computed inside a program may hold one coordinate twice (a sum of two
    matrices concatenates their entries): its parts hold the sum once, then padding."""
    dup = BCOO((np.array([1.0, 2.0, 4.0]), np.array([[0, 1], [0, 1], [1, 0]], dtype=np.int32)), shape=(2, 2))
    data, indices, indptr = jax.jit(lambda b: parts(b, "csc", exact=False))(dup)
    np.testing.assert_array_equal(indptr, [0, 1, 2])
    np.testing.assert_array_equal(np.asarray(data)[:2], [4.0, 3.0])
    np.testing.assert_array_equal(np.asarray(indices)[:2], [1, 0])
    np.testing.assert_array_equal(np.asarray(data)[2:], [0.0])  # the padding's


def test_one_compilation_per_number_of_stored_entries() -> None:
    x = sparse.csr_matrix("x")
    v = pt.dvector("v")
    f = arignote.function([x, v], sparse.dot(x, v), mode="JAX")
    for seed, density in ((3, 0.2), (4, 0.6), (5, 0.2)):
        a = random_sparse("csr", (6, 5), seed=seed, density=density)
        w = np.arange(5.0)
        np.testing.assert_allclose(f(a, w), a @ w, rtol=1e-12)


def test_a_shared_sparse_variable_is_updated_across_calls() -> None:
    w = sparse.shared(A.copy(), name="w")
    step = arignote.function([], sparse.sp_sum(w), updates={w: sparse.structured_add(w, 1.0)}, mode="JAX")
    for k in range(3):
        np.testing.assert_allclose(step(), A.sum() + k * A.nnz, rtol=1e-12)
    value = w.get_value()
    _same_matrix(value, A.toarray() + 3 * (A.toarray() != 0), "csr", "float64")
    assert value.nnz == A.nnz


def test_the_gradient_of_a_sparse_model_matches_the_reference() -> None:
    x = sparse.csc_matrix("x")
    w = pt.dmatrix("w")
    cost = (pt.tanh(sparse.structured_dot(x, w)) ** 2).sum()
    grads = arignote.grad(cost, [x, w])
    values = (A.tocsc(), D)
    want = arignote.function([x, w], [cost, *grads], mode="FAST_COMPILE")(*values)
    got = arignote.function([x, w], [cost, *grads], mode="JAX")(*values)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
    _same_matrix(got[1], want[1], "csc", "float64")
    assert got[1].nnz == A.nnz  # structured: the stored entries only
    np.testing.assert_allclose(got[2], want[2], rtol=1e-12)


def test_products_and_sampled_products() -> None:
    x, y = sparse.csr_matrix("x"), sparse.csc_matrix("y")
    d, e = pt.dmatrix("d"), pt.dmatrix("e")
    b = random_sparse("csc", (4, 6), seed=9)
    outs = [sparse.true_dot(x, y), sparse.dot(d.T, x), sparse.sampling_dot(d[:, :3], e, x)]
    e_val = np.random.default_rng(3).normal(size=(4, 3))
    d_val = np.random.default_rng(4).normal(size=(5, 4))
    got = arignote.function([x, y, d, e], outs, mode="JAX", on_unused_input="ignore")(A, b, d_val, e_val)
    _same_matrix(got[0], A @ b, "csr", "float64")
    np.testing.assert_allclose(got[1], d_val.T @ A.toarray(), rtol=1e-12)
    _same_matrix(got[2], A.multiply(d_val[:, :3] @ e_val.T), "csr", "float64")


def test_jax_function_takes_and_returns_bcoo() -> None:
    x = sparse.csr_matrix("x")
    f = jax_function([sparse.transpose(x), sparse.dense_from_sparse(x).sum(axis=0)], [x])
    t, s = jax.jit(f)(to_bcoo(A))
    assert isinstance(t, BCOO)
    _same_matrix(to_scipy(t, "csc"), A.T, "csc", "float64")
    np.testing.assert_allclose(s, A.toarray().sum(axis=0), rtol=1e-12)
    t2, _ = f(A)  # a SciPy matrix, outside jit
    np.testing.assert_allclose(np.asarray(t2.todense()), A.T.toarray())


def test_to_scipy_drops_padding_and_sums_duplicates() -> None:
    dense = np.array([[0.0, 2.0], [1.0, 0.0]])
    b = from_dense(dense)
    assert b.nse == 4
    _same_matrix(to_scipy(b, "csc"), dense, "csc", "float64")
    assert to_scipy(b, "csc").nnz == 2
    dropped = padded(b, np.array([False, True, False, False]))
    _same_matrix(to_scipy(dropped, "csr"), [[0.0, 0.0], [1.0, 0.0]], "csr", "float64")
    dup = BCOO((np.array([1.0, 2.0]), np.array([[1, 1], [1, 1]], dtype=np.int32)), shape=(2, 2))
    assert to_scipy(dup, "csr").nnz == 1 and to_scipy(dup, "csr")[1, 1] == 3.0


def test_a_dense_value_for_a_sparse_input_is_refused_clearly() -> None:
    x = sparse.csr_matrix("x")
    f = arignote.function([x], sparse.transpose(x), mode="JAX")
    with pytest.raises(TypeError, match="csr"):
        f(A.toarray())


@pytest.mark.parametrize(("w_shape", "w_dtype"), [((4,), "float64"), ((4, 3), "float64"), ((4,), "float32")])
def test_a_constant_and_its_folded_transpose_share_their_entries(w_shape, w_dtype) -> None:
    """The gradient of ``dot(X, w)`` for a constant X holds ``dot(X.T, g)``, and constant
    folding makes ``X.T`` a CSC constant of its own: under JAX that product is computed
    from X's entries, so the program holds them once, with the reference's values."""
    w = pt.tensor("w", dtype=w_dtype, shape=(None,) * len(w_shape))
    z = sparse.dot(sparse.as_sparse_variable(A), w)
    cost = (pt.tanh(z) ** 2).sum()
    outs = [cost, arignote.grad(cost, w), sparse.dot(sparse.as_sparse_variable(A.T.tocsc()), z)]
    w_val = np.random.default_rng(5).normal(size=w_shape).astype(w_dtype)
    want = arignote.function([w], outs, mode="FAST_COMPILE")(w_val)
    f = arignote.function([w], outs, mode="JAX")
    for got, expected in zip(f(w_val), want):
        np.testing.assert_allclose(got, expected, rtol=1e-5 if w_dtype == "float32" else 1e-12)
    jaxpr = jax.make_jaxpr(f.vm.traced_function())(w_val)
    entries = [v for v in jaxpr.jaxpr.constvars if v.aval.shape == (A.nnz,)]
    assert len(entries) == 1, jaxpr  # X's values, once
    # the cache: one BCOO per stored content, gone with the matrices holding it
    copy = A.copy()
    assert constant_bcoo(copy) is constant_bcoo(A) is constant_bcoo(A.T.T)
    assert constant_bcoo(A.tocsc()) is not constant_bcoo(A)  # (another storage order)
    lone = random_sparse("csr", (7, 3), seed=11)
    key = ("csr", (7, 3), lone.dtype.str, lone.nnz)
    constant_bcoo(lone)
    assert key in values._CONSTANT_BCOOS
    del lone
    gc.collect()
    assert key not in values._CONSTANT_BCOOS
