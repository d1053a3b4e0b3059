"""Sparse arithmetic and comparisons under the JAX backend (``mode="JAX"``, compiled with
``jax.jit``), against SciPy/NumPy: entries that sums store twice (duplicate coordinates) read
by structured Ops and sums, formats and dtypes of the results, and bad shapes."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

jax = pytest.importorskip("jax")

import scipy.sparse as sp  # noqa: E402

import arignote  # noqa: E402
import arignote.tensor as pt  # noqa: E402
from arignote import sparse  # noqa: E402
from arignote.link.jax.dispatch.basic import jax_funcify  # noqa: E402
from arignote.link.jax.dispatch.graph import JAXNodeError  # noqa: E402
from arignote.link.jax.dispatch.sparse.values import to_bcoo  # noqa: E402

RNG = np.random.default_rng(2024)


def _matrix(fmt: str, shape: tuple[int, int], dtype: str, density: float = 0.5) -> Any:
    """A random CSR/CSC matrix of positive values (sums never cancel to a stored zero)."""
    values = RNG.uniform(0.5, 1.5, size=shape) * (RNG.random(shape) < density)
    return sp.csr_matrix(values.astype(dtype)).asformat(fmt)


def _stored(m: Any) -> np.ndarray:
    """Where the SciPy matrix ``m`` stores an entry."""
    out = np.zeros(m.shape, dtype=bool)
    coo = m.tocoo()
    out[coo.row, coo.col] = True
    return out


def _check(got: Any, expected: Any, fmt: str | None, dtype: str) -> None:
    if fmt is None:
        assert isinstance(got, np.ndarray), type(got)
        dense = got
    else:
        assert sp.issparse(got) and got.format == fmt, (type(got), getattr(got, "format", None))
        dense = got.toarray()
    assert got.dtype == np.dtype(dtype), (got.dtype, dtype)
    expected = expected.toarray() if sp.issparse(expected) else np.asarray(expected)
    rtol = 1e-6 if np.dtype(dtype) == np.float32 else 1e-12
    np.testing.assert_allclose(dense, expected, rtol=rtol, atol=rtol)


def test_duplicate_entries_of_a_sum_count_once(dtype: str = "float64") -> None:
    """``x + y`` where both store the same coordinates holds each coordinate twice inside the
    program: the structured Ops and sums that read it see SciPy's summed matrix."""
    a = _matrix("csr", (5, 4), dtype)
    b = (a * 2).tocsc()  # the same coordinates, stored by column
    c = _matrix("csr", (5, 4), dtype, density=0.3)  # some coordinates a does not store
    d_val = RNG.normal(size=(5, 4)).astype(dtype)
    v_val = RNG.normal(size=4).astype(dtype)
    x = sparse.csr_matrix("x", dtype=dtype)
    y = sparse.csc_matrix("y", dtype=dtype)
    z = sparse.csr_matrix("z", dtype=dtype)
    d = pt.matrix("d", dtype=dtype)
    v = pt.vector("v", dtype=dtype)
    s = x + y  # every coordinate of x twice
    t = s + z
    outs = [
        s,
        sparse.sp_sum(s),
        sparse.sp_sum(t, axis=0),
        sparse.structured_add_s_v(t, v),
        t * d,
        t * v,
        t * t,
        t + d,
    ]
    got = arignote.function([x, y, z, d, v], outs, mode="JAX")(a, b, c, d_val, v_val)
    sa = a + b  # SciPy's sum: each coordinate once
    ta = sa + c
    tdense = ta.toarray()
    expected = [
        (sa, "csr"),
        (sa.sum(), None),
        (tdense.sum(axis=0), None),
        (np.where(_stored(ta), tdense + v_val, 0), "csr"),
        (tdense * d_val, "csr"),
        (tdense * v_val, "csr"),
        (tdense * tdense, "csr"),
        (tdense + d_val, None),
    ]
    for k, (g, (e, fmt)) in enumerate(zip(got, expected)):
        _check(g, e, fmt, dtype)
        if k == 3:  # structured: nothing where SciPy's matrix stores nothing
            assert _stored(g).sum() == _stored(sp.csr_matrix(e)).sum(), k


def test_structured_function_of_a_sum_with_duplicates() -> None:
    """A structured function reads a sum's parts (duplicates summed, padding at the end) and
    rebuilds the matrix from them: SciPy's structure, each coordinate once."""
    a = _matrix("csr", (5, 4), "float64")
    b = _matrix("csc", (5, 4), "float64")
    x = sparse.csr_matrix("x")
    y = sparse.csc_matrix("y")
    s = x + y
    got = arignote.function([x, y], sparse.structured_exp(s), mode="JAX")(a, b)
    sa = a + b
    _check(got, np.where(_stored(sa), np.exp(sa.toarray()), 0), "csr", "float64")
    assert got.nnz == sa.nnz


@pytest.mark.parametrize(
    ("fx", "fy", "tx", "ty"),
    [
        ("csr", "csr", "float32", "float32"),
        ("csr", "csc", "float32", "float64"),
        ("csc", "csr", "int32", "float32"),
        ("csc", "csc", "int64", "int64"),
    ],
)
def test_formats_and_dtypes_follow_the_reference(fx: str, fy: str, tx: str, ty: str) -> None:
    a = sp.csr_matrix(RNG.integers(-2, 3, size=(4, 3)).astype(tx)).asformat(fx)
    b = sp.csr_matrix(RNG.integers(-2, 3, size=(4, 3)).astype(ty)).asformat(fy)
    dv = RNG.integers(-3, 4, size=(4, 3)).astype(ty)
    vv = RNG.integers(-3, 4, size=3).astype(ty)
    x = sparse.SparseTensorType(fx, tx)("x")
    y = sparse.SparseTensorType(fy, ty)("y")
    d = pt.matrix("d", dtype=ty)
    v = pt.vector("v", dtype=ty)
    outs = [x + y, x - y, x * y, x + d, x * d, x * v, -x, sparse.sp_sum(x, axis=1), sparse.sp_sum(y)]
    graph = arignote.function(
        [x, y, d, v], outs, mode=arignote.compile.mode.Mode(linker="vm", optimizer=None)
    )
    jaxed = arignote.function([x, y, d, v], outs, mode="JAX")
    for out, ref, got in zip(outs, graph(a, b, dv, vv), jaxed(a, b, dv, vv)):
        fmt = out.type.format if isinstance(out.type, sparse.SparseTensorType) else None
        _check(got, ref, fmt, out.type.dtype)


def test_comparisons_store_what_scipy_stores() -> None:
    a = sp.csr_matrix(RNG.integers(-1, 2, size=(5, 4)).astype("float64"))
    b = sp.csc_matrix(RNG.integers(-1, 2, size=(5, 4)).astype("float64"))
    dv = RNG.integers(-1, 2, size=(5, 4)).astype("float64")
    x = sparse.csr_matrix("x")
    y = sparse.csc_matrix("y")
    d = pt.dmatrix("d")
    ad, bd = a.toarray(), b.toarray()
    outs, expected = [], []
    for name, op in [
        ("eq", np.equal),
        ("neq", np.not_equal),
        ("lt", np.less),
        ("gt", np.greater),
        ("le", np.less_equal),
        ("ge", np.greater_equal),
    ]:
        compare = getattr(sparse, name)
        # (x + y) holds duplicates; (y, x) puts the CSC operand first; (d, y) is swapped
        outs += [compare(x + y, x), compare(y, x), compare(x, d), compare(d, y)]
        expected += [(op(ad + bd, ad), "csr"), (op(bd, ad), "csc"), (op(ad, dv), None), (op(dv, bd), None)]
    got = arignote.function([x, y, d], outs, mode="JAX")(a, b, dv)
    for k, (g, (e, fmt)) in enumerate(zip(got, expected)):
        _check(g, e.astype("uint8"), fmt, "uint8")
        if fmt is not None:  # the false results are not stored, as in SciPy's matrix
            assert g.nnz == np.count_nonzero(e), (k, g.nnz)


def test_add_s_s_data_compares_structures() -> None:
    a = _matrix("csr", (4, 3), "float64")
    x = sparse.csr_matrix("x")
    y = sparse.csr_matrix("y")
    # the same structure held in another entry order (through CSC) and in sums with duplicates
    same = sparse.as_format(sparse.as_format(x, "csc"), "csr")
    outs = [sparse.add_s_s_data(x, same * 2.0), sparse.add_s_s_data(x + x, x * 2.0 + x)]
    got = arignote.function([x], outs, mode="JAX")(a)
    _check(got[0], 3 * a.toarray(), "csr", "float64")
    _check(got[1], 5 * a.toarray(), "csr", "float64")
    f = arignote.function([x, y], sparse.add_s_s_data(x, y), mode="JAX")
    other = a.copy()
    other.indices = other.indices.copy()
    other.indices[0] = (other.indices[0] + 1) % 3
    with pytest.raises(Exception, match="do not have the same structure"):
        f(a, other)
    with pytest.raises(JAXNodeError, match="do not have the same structure") as info:
        f(a, _matrix("csr", (4, 3), "float64", density=1.0))  # another number of entries
    assert isinstance(info.value.__cause__, ValueError)


@pytest.mark.parametrize(
    ("build", "match"),
    [
        (lambda x, y, d, v: x + y, r"shapes \(4, 3\) and \(3, 3\)"),
        (lambda x, y, d, v: x * y, r"shapes \(4, 3\) and \(3, 3\)"),
        (lambda x, y, d, v: x + d, r"shapes \(4, 3\) and \(3, 3\)"),
        (lambda x, y, d, v: x * d, r"shapes \(4, 3\) and \(3, 3\)"),
        (lambda x, y, d, v: sparse.lt(x, y), r"shapes \(4, 3\) and \(3, 3\)"),
        (lambda x, y, d, v: sparse.ge(x, d), r"shapes \(4, 3\) and \(3, 3\)"),
        (lambda x, y, d, v: x * v, "3 columns but the vector has length 4"),
        (lambda x, y, d, v: sparse.structured_add_s_v(x, v), "3 columns but the vector has length 4"),
    ],
)
def test_bad_shapes_raise_while_tracing(build: Any, match: str) -> None:
    x, y = sparse.csr_matrix("x"), sparse.csc_matrix("y")
    d, v = pt.dmatrix("d"), pt.dvector("v")
    f = arignote.function([x, y, d, v], build(x, y, d, v), mode="JAX", on_unused_input="ignore")
    a, b = _matrix("csr", (4, 3), "float64"), _matrix("csc", (3, 3), "float64")
    with pytest.raises(JAXNodeError, match=match) as info:
        f(a, b, np.ones((3, 3)), np.ones(4))
    assert isinstance(info.value.__cause__, ValueError)


def test_jax_functions_trace_under_jit() -> None:
    """The functions themselves, on BCOO values, under ``jax.jit``: a static number of
    entries (the bound of a sum), and a shape error raised while tracing."""
    x, y = sparse.csr_matrix("x"), sparse.csc_matrix("y")
    node = (x + y).owner
    add = jax.jit(jax_funcify(node.op, node=node))
    a, b = _matrix("csr", (4, 3), "float64"), _matrix("csc", (4, 3), "float64")
    z = add(to_bcoo(a), to_bcoo(b))
    assert z.nse == a.nnz + b.nnz
    np.testing.assert_allclose(np.asarray(z.todense()), (a + b).toarray())
    with pytest.raises(ValueError, match=r"shapes \(4, 3\) and \(4, 2\)"):
        add(to_bcoo(a), to_bcoo(_matrix("csc", (4, 2), "float64")))
