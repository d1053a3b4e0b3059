"""Sparse indexing, stacking and diagonals under ``mode="JAX"`` (BCOO values inside the
program), in the cases the shared sparse suite leaves out: inputs with unsorted indices,
explicit zeros and duplicates, slices with steps of computed matrices (padding entries),
repeated and negative indices, mixed formats and dtypes, out-of-range indices. SciPy and
NumPy are the oracle: values, formats and dtypes."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp

jax = pytest.importorskip("jax")

import arignote  # noqa: E402
import arignote.tensor as pt  # noqa: E402
from arignote import sparse  # noqa: E402
from arignote.compile.mode import Mode  # noqa: E402

REFERENCE = Mode(linker="py", optimizer=None)

# a 4 x 5 CSR matrix whose rows hold unsorted indices, an explicit zero and a duplicate
# (entries (0, 3) and (0, 3) add up to 3.0)
ODD_CSR = sp.csr_matrix(
    (
        np.array([2.0, 1.0, -4.0, 0.0, 5.0, 7.0, 1.5]),
        np.array([3, 3, 0, 4, 2, 1, 0]),
        np.array([0, 3, 3, 5, 7]),
    ),
    shape=(4, 5),
)
ODD_CSC = sp.csc_matrix(
    (np.array([3.0, 0.0, -1.0, 2.0, 6.0, 6.5]), np.array([2, 0, 3, 1, 3, 0]), np.array([0, 2, 3, 3, 5, 6])),
    shape=(4, 5),
)
assert not ODD_CSR.has_sorted_indices and not ODD_CSC.has_sorted_indices

x = sparse.csr_matrix("x", dtype="float64")
y = sparse.csc_matrix("y", dtype="float64")


def jax_fn(inputs: list, outputs: Any) -> Any:
    return arignote.function(inputs, outputs, mode="JAX")


def check_sparse(got: Any, want: Any, fmt: str, dtype: str) -> None:
    assert sp.issparse(got) and got.format == fmt and got.dtype == np.dtype(dtype), (got, fmt, dtype)
    assert got.shape == want.shape
    np.testing.assert_allclose(got.toarray(), want.toarray() if sp.issparse(want) else want, rtol=1e-12)


SLICES = [
    (slice(None), slice(None, None, 2)),
    (slice(None, None, -1), slice(1, None)),
    (slice(-1, 0, -2), slice(None, None, -3)),
    (slice(1, 3), slice(4, 0, -1)),
    (slice(3, 1), slice(None)),  # empty
    (slice(-10, 10, 3), slice(-2, None)),  # bounds past the ends are clipped
]


@pytest.mark.parametrize("value", [ODD_CSR, ODD_CSC], ids=["csr", "csc"])
def test_slices_with_steps(value: Any) -> None:
    var = x if value.format == "csr" else y
    outs = [var[r, c] for r, c in SLICES]
    got = jax_fn([var], outs)(value)
    for (r, c), g in zip(SLICES, got):
        check_sparse(g, value[r, c], value.format, "float64")


def test_slice_bounds_as_inputs() -> None:
    start, stop, step = pt.lscalar("start"), pt.lscalar("stop"), pt.lscalar("step")
    f = jax_fn([x, start, stop, step], [x[start:stop:step, ::-1], x[1:, stop:start:-1]])
    for args in [(0, 4, 2), (3, -5, -1), (-1, 1, -2)]:
        got = f(ODD_CSR, *args)
        check_sparse(got[0], ODD_CSR[args[0] : args[1] : args[2], ::-1], "csr", "float64")
        check_sparse(got[1], ODD_CSR[1:, args[1] : args[0] : -1], "csr", "float64")


def test_slice_of_a_computed_matrix() -> None:
    """A matrix made from a dense one holds padding (its zeros); slicing moves entries, and
    what a slice drops becomes padding too: the dense result is the sliced dense matrix."""
    d = pt.dmatrix("d")
    dense_value = np.array([[0.0, 1.0, 0.0, 2.0], [3.0, 0.0, 0.0, 0.0], [0.0, 0.0, 4.0, 5.0]])
    m = sparse.csc_from_dense(d)
    part = m[::-1, 1::2]
    again = part[1:, ::-1]  # a slice of a slice (padding twice)
    f = jax_fn([d], [sparse.dense_from_sparse(part), sparse.dense_from_sparse(again), again])
    got = f(dense_value)
    np.testing.assert_array_equal(got[0], dense_value[::-1, 1::2])
    np.testing.assert_array_equal(got[1], dense_value[::-1, 1::2][1:, ::-1])
    check_sparse(got[2], dense_value[::-1, 1::2][1:, ::-1], "csc", "float64")
    assert got[2].nnz == np.count_nonzero(dense_value[::-1, 1::2][1:, ::-1])  # no padding left


def test_rows_repeated_and_negative() -> None:
    rows = pt.lvector("rows")
    outs = [x[rows], x[[-1, 0, -1, 2]], y[rows], y[np.array([3, 3, -4])]]
    f = jax_fn([x, y, rows], outs)
    for r in [np.array([3, 0, 3, -2]), np.array([1, 1]), np.array([], dtype="int64")]:
        got = f(ODD_CSR, ODD_CSC, r)
        check_sparse(got[0], ODD_CSR[r] if len(r) else sp.csr_matrix((0, 5)), "csr", "float64")
        check_sparse(got[1], ODD_CSR[[-1, 0, -1, 2]], "csr", "float64")
        check_sparse(got[2], ODD_CSC[r] if len(r) else sp.csc_matrix((0, 5)), "csc", "float64")
        check_sparse(got[3], ODD_CSC[[3, 3, -4]], "csc", "float64")


def test_entries_and_lists_of_entries() -> None:
    """Duplicates add up, explicit zeros read as zero, negative indices count from the end."""
    i, j = pt.lscalar("i"), pt.lscalar("j")
    rows, cols = pt.lvector("rows"), pt.lvector("cols")
    f = jax_fn([x, y, i, j, rows, cols], [x[i, j], y[i, j], x[rows, cols], y[rows, cols], x[-1, -5]])
    dense_x, dense_y = ODD_CSR.toarray(), ODD_CSC.toarray()
    r, c = np.array([0, 0, -4, 2, 3, 3, 1]), np.array([3, 3, 3, 4, -5, 0, 2])
    for a, b in [(0, 3), (-4, -2), (2, 4), (1, 1)]:
        got = f(ODD_CSR, ODD_CSC, a, b, r, c)
        assert got[0].dtype == np.float64 and got[0].shape == ()
        assert got[0] == dense_x[a, b] and got[1] == dense_y[a, b]
        np.testing.assert_array_equal(got[2], dense_x[r, c])
        np.testing.assert_array_equal(got[3], dense_y[r, c])
        assert got[4] == dense_x[-1, -5]


def test_integer_entries() -> None:
    """Integer sums of duplicates wrap around as SciPy's (int8: 100 + 100 = -56)."""
    xi = sparse.csr_matrix("xi", dtype="int8")
    vi = sp.csr_matrix(
        (np.array([100, 100, -3], "int8"), np.array([1, 1, 0]), np.array([0, 2, 3])), shape=(2, 2)
    )
    outs = [xi[0, 1], xi[[0, 1, 0], [1, 0, 0]], sparse.diag(xi), xi[::-1, 1:]]
    got = jax_fn([xi], outs)(vi)
    want = arignote.function([xi], outs, mode=REFERENCE)(vi)
    for g, w in zip(got[:3], want[:3]):
        assert g.dtype == w.dtype == np.int8
        np.testing.assert_array_equal(g, w)
    check_sparse(got[3], want[3], "csr", "int8")


def test_stacking_mixed_formats_and_dtypes() -> None:
    a32 = sparse.csr_matrix("a32", dtype="float32")
    bi = sparse.csc_matrix("bi", dtype="int64")
    d = pt.dmatrix("d")
    va = sp.csr_matrix(np.array([[1.5, 0, 0, 2], [0, 0, 0, 0], [0, 3, 0, 0], [4, 0, 0, 5]], "float32"))
    vb = sp.csc_matrix(np.array([[0, 7], [1, 0], [0, 0], [2, 3]], "int64"))
    vd = np.array([[0.0, 1.0], [2.0, 0.0]])
    computed = sparse.csr_from_dense(d)  # padding entries: they must stay out of the result
    outs = [
        sparse.hstack([a32, bi]),
        sparse.hstack([bi, a32, bi], format="csr", dtype="float32"),
        sparse.vstack([a32, bi.T], format="csr"),
        sparse.vstack([computed, computed]),
        sparse.block_diag(a32, vd, bi, computed, format="csr"),
        sparse.hstack([computed, sparse.csc_from_dense(d)], dtype="int32"),
    ]
    got = jax_fn([a32, bi, d], outs)(va, vb, vd)
    want = arignote.function([a32, bi, d], outs, mode=REFERENCE)(va, vb, vd)
    for o, g, w in zip(outs, got, want):
        check_sparse(g, w, o.type.format, o.type.dtype)
        assert w.dtype == np.dtype(o.type.dtype)


def test_diagonals() -> None:
    v = pt.dvector("v")
    s = sparse.csc_matrix("s", dtype="float64")
    square = sp.csc_matrix(
        (np.array([1.0, 2.0, 0.0, 3.0]), np.array([0, 0, 2, 2]), np.array([0, 2, 2, 4])), shape=(3, 3)
    )
    diagonal = sparse.square_diagonal(v)
    outs = [
        diagonal,
        *sparse.csm_properties(diagonal),
        sparse.diag(s),
        sparse.diag(sparse.csc_from_dense(pt.diag(v))),
    ]
    f = jax_fn([v, s], outs)
    value = np.array([1.5, 0.0, -2.0])
    got = f(value, square)
    check_sparse(got[0], np.diag(value), "csc", "float64")
    # the diagonal holds SciPy's entries, the zero one included: its parts are SciPy's
    want = arignote.function([v, s], outs, mode=REFERENCE)(value, square)
    for g, w in zip(got[1:4], want[1:4]):
        np.testing.assert_array_equal(g, w)
    np.testing.assert_array_equal(got[5], square.diagonal())  # (0, 0) stored twice: 3.0
    np.testing.assert_array_equal(got[6], value)
    with pytest.raises(Exception, match="must be square"):
        jax_fn([x], sparse.diag(x))(ODD_CSR)


def test_gradient_ops_match_the_reference() -> None:
    """The gradients of the indexing Ops (negative steps and indices, repeats) equal the
    reference's, format and dtype included."""
    rows, cols = pt.lvector("rows"), pt.lvector("cols")
    costs = [
        pt.sum(x[::-2, 3:0:-1].toarray() ** 2),
        pt.sum(x[rows].toarray() * 3.0),
        pt.sum(x[rows, cols] ** 3),
        x[-1, 2] * 5.0,
        pt.sum(sparse.diag(x[:4, 1:]) * 2.0),
    ]
    grads = [arignote.grad(c, x) for c in costs]
    r, c = np.array([-1, 0, 3, -1]), np.array([2, -5, 0, 2])
    value = sp.csr_matrix(ODD_CSR.toarray())  # gradients are checked on a canonical matrix
    inputs = [x, rows, cols]
    got = jax_fn(inputs, grads)(value, r, c)
    want = arignote.function(inputs, grads, mode=REFERENCE, on_unused_input="ignore")(value, r, c)
    for g, w in zip(got, want):
        check_sparse(g, w, "csr", "float64")


def test_sparse_grad_rows() -> None:
    w = pt.dmatrix("w")
    ids = pt.lvector("ids")
    taken = sparse.sparse_grad(w[ids])
    g = arignote.grad(pt.sum(taken**2), w)
    value = np.arange(12.0).reshape(4, 3)
    f = jax_fn([w, ids], [taken, g])
    # (negative rows only forward: the reference's gradient rejects them, see
    # ConstructSparseFromList)
    np.testing.assert_array_equal(f(value, np.array([-1, 0, -4]))[0], value[[-1, 0, -4]])
    got = f(value, np.array([3, 0, 3, 3]))
    np.testing.assert_array_equal(got[0], value[[3, 0, 3, 3]])
    expected = np.zeros_like(value)
    np.add.at(expected, [3, 0, 3, 3], 2 * value[[3, 0, 3, 3]])
    check_sparse(got[1], expected, "csc", "float64")
    with pytest.raises(Exception, match="out of bounds"):
        f(value, np.array([0, 4]))


def test_out_of_range_indices() -> None:
    rows, cols = pt.lvector("rows"), pt.lvector("cols")
    i = pt.lscalar("i")
    # static (constant) indices: raised while tracing
    for out in (x[[0, 4]], x[[-5]], x[0, 5], y[np.array([1, 0]), np.array([0, -6])]):
        with pytest.raises(Exception, match="out of bounds"):
            arignote.function([x, y], out, mode="JAX", on_unused_input="ignore")(ODD_CSR, ODD_CSC)
    # indices given when called: raised when the values arrive
    f = jax_fn([x, rows, cols, i], [x[rows], x[rows, cols], x[i, 0]])
    f(ODD_CSR, np.array([3, -4]), np.array([4, -5]), 3)  # in bounds
    for args in [([4], [0], 0), ([0], [-6], 0), ([0], [0], -5)]:
        with pytest.raises(Exception, match="out of bounds"):
            f(ODD_CSR, np.array(args[0]), np.array(args[1]), args[2])
    with pytest.raises(Exception, match="2 row indices but 1 column indices"):
        jax_fn([x], x[[0, 1], [1]])(ODD_CSR)
    with pytest.raises(Exception, match="lengths along axis 0 differ"):
        jax_fn([x, y], sparse.hstack([x, y]))(ODD_CSR, sp.csc_matrix((3, 2)))
