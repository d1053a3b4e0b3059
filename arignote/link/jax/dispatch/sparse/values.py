"""Sparse values inside a JAX program: ``jax.experimental.sparse.BCOO`` matrices.

A value of a :class:`~arignote.sparse.type.SparseTensorType` (a SciPy CSR/CSC matrix outside)
is, inside the traced function, a 2-d ``BCOO``: ``data`` of shape ``(nse,)`` and ``indices``
of shape ``(nse, 2)`` (row, column), int32. The number of entries ``nse`` is part of the
array shapes, so it is static: ``jax.jit`` compiles once per distinct number of stored
entries of the sparse inputs, as it does per distinct shape.

Entries:

* A SciPy matrix becomes a BCOO with one entry per stored entry, in its storage order (row
  by row for CSR, column by column for CSC), explicit zeros included (:func:`to_bcoo`). So do
  the results of Ops declared with :func:`keeps_entries` (transpose, cast, structured functions,
  :class:`~arignote.sparse.construction.CSM`): their parts (``csm_properties``) are then
  SciPy's, entry for entry.
* A result whose number of entries depends on the values (``a + b`` of two sparse matrices,
  a dense matrix made sparse, a comparison) keeps a bound known when tracing: duplicate
  coordinates (their values add up) and *padding* entries, whose coordinates lie outside
  the matrix (JAX's convention: ``todense`` and products ignore them). :func:`padded` makes
  an entry padding where a mask says so.
* Back on the host (:func:`to_scipy`) padding is dropped, duplicates are summed, and the
  matrix takes the format its Type names: a result equals SciPy's matrix, though a sum that
  cancels may keep an explicit zero where SciPy's arithmetic drops it.

:func:`exact` says whether a variable's value holds SciPy's entries one for one (so its
parts can be read under ``jax.jit``).
"""

from __future__ import annotations

import weakref
from typing import Any

import jax.numpy as jnp
import numpy as np
import scipy.sparse as scipy_sparse
from jax.experimental.sparse import BCOO

from arignote.graph.basic import Constant, Variable
from arignote.link.jax.dispatch.basic import jax_typify
from arignote.link.jax.dispatch.static import as_dtype
from arignote.sparse.type import SparseTensorType

__all__ = [
    "BCOO",
    "constant_bcoo",
    "coordinates",
    "dense",
    "exact",
    "from_dense",
    "from_parts",
    "is_sparse",
    "keeps_entries",
    "padded",
    "padding",
    "parts",
    "to_bcoo",
    "to_scipy",
    "with_data",
]

#: the dtype of a BCOO's indices (SciPy's index dtype for matrices of < 2**31 entries)
INDEX_DTYPE = np.int32


def is_sparse(var: Variable) -> bool:
    """Whether ``var`` is a sparse matrix (a BCOO inside a JAX program)."""
    return isinstance(var.type, SparseTensorType)


#: the BCOOs of constants' matrices (see :func:`constant_bcoo`), by (format, shape, dtype,
#: number of entries): [(a weak reference to the matrix, its BCOO)]
_CONSTANT_BCOOS: dict[tuple, list[tuple[weakref.ref, BCOO]]] = {}


@jax_typify.register(scipy_sparse.spmatrix)
@jax_typify.register(scipy_sparse.sparray)
def constant_bcoo(matrix: Any, **kwargs: Any) -> BCOO:
    """:func:`to_bcoo` of a graph constant's matrix, made once while the matrix lives, and
    shared by the matrices that store the same entries in the same format (a constant and
    the transpose of its transpose, folded): a program using several of them holds the
    entries once, JAX keeping one constant per object. A constant's arrays are never
    written, which the sharing relies on."""
    if matrix.format not in ("csr", "csc"):
        return to_bcoo(matrix)
    key = (matrix.format, matrix.shape, matrix.dtype.str, matrix.nnz)
    kept = _CONSTANT_BCOOS.setdefault(key, [])
    for ref, value in kept:
        other = ref()
        if other is matrix or (
            other is not None
            and np.array_equal(other.indptr, matrix.indptr)
            and np.array_equal(other.indices, matrix.indices)
            and np.array_equal(other.data, matrix.data)
        ):
            return value
    value = to_bcoo(matrix)
    entry = (weakref.ref(matrix), value)
    kept.append(entry)
    weakref.finalize(matrix, _forget, key, entry)  # (the BCOO goes with the matrix)
    return value


def _forget(key: tuple, entry: tuple) -> None:
    kept = [e for e in _CONSTANT_BCOOS.get(key, []) if e is not entry]
    if kept:
        _CONSTANT_BCOOS[key] = kept
    else:
        _CONSTANT_BCOOS.pop(key, None)


def to_bcoo(matrix: Any, **kwargs: Any) -> BCOO:
    """A SciPy CSR/CSC (or COO) matrix as a BCOO, one entry per stored entry, in storage order
    (explicit zeros and unsorted indices are kept as they are)."""
    matrix = scipy_sparse.coo_matrix(matrix) if matrix.format not in ("csr", "csc") else matrix
    if matrix.format == "coo":
        rows, cols = matrix.row, matrix.col
    else:
        major = np.repeat(np.arange(len(matrix.indptr) - 1), np.diff(matrix.indptr))
        rows, cols = (major, matrix.indices) if matrix.format == "csr" else (matrix.indices, major)
    indices = np.stack([rows, cols], axis=1).astype(INDEX_DTYPE).reshape(-1, 2)
    return BCOO((np.asarray(matrix.data), indices), shape=matrix.shape)


def to_scipy(value: BCOO, format: str, dtype: str | None = None) -> Any:
    """A BCOO (from a JAX program) as a SciPy matrix of ``format``: padding entries dropped,
    duplicate coordinates summed, entries in the format's order."""
    data = np.asarray(value.data)
    indices = np.asarray(value.indices).reshape(-1, 2)
    keep = ~_outside(indices[:, 0], indices[:, 1], value.shape)  # (NumPy here: host values)
    if not keep.all():
        data, indices = data[keep], indices[keep]
    coo = scipy_sparse.coo_matrix((data, (indices[:, 0], indices[:, 1])), shape=value.shape)
    out = coo.asformat(format)
    if dtype is not None and out.dtype != np.dtype(dtype):
        out = out.astype(dtype)
    return out


def dense(value: Any) -> Any:
    """``value`` as a dense JAX array (a BCOO densified; a NumPy constant becomes one, so that
    traced indices can index it)."""
    return value.todense() if isinstance(value, BCOO) else jnp.asarray(value)


def with_data(value: BCOO, data: Any) -> BCOO:
    """``value``'s entries (coordinates, padding) with the values ``data``."""
    return BCOO((data, value.indices), shape=value.shape)


def coordinates(value: BCOO) -> tuple[Any, Any]:
    """The rows and columns of ``value``'s entries (padding included)."""
    return value.indices[:, 0], value.indices[:, 1]


def padding(value: BCOO) -> Any:
    """Which entries of ``value`` are padding (a coordinate outside the matrix)."""
    rows, cols = coordinates(value)
    return _outside(rows, cols, value.shape)


def _outside(rows: Any, cols: Any, shape: tuple[int, int]) -> Any:
    """Which coordinates fall outside a matrix of ``shape`` (NumPy or JAX arrays alike)."""
    n_rows, n_cols = shape
    return (rows < 0) | (rows >= n_rows) | (cols < 0) | (cols >= n_cols)


def padded(value: BCOO, drop: Any) -> BCOO:
    """``value`` with the entries where ``drop`` is true made padding (both coordinates moved
    to the matrix's shape, JAX's own padding, so that they count for nothing)."""
    n_rows, n_cols = value.shape
    rows = jnp.where(drop, n_rows, value.indices[:, 0])
    cols = jnp.where(drop, n_cols, value.indices[:, 1])
    indices = jnp.stack([rows, cols], axis=1).astype(INDEX_DTYPE)
    return BCOO((jnp.where(drop, jnp.zeros((), value.data.dtype), value.data), indices), shape=value.shape)


def from_dense(x: Any) -> BCOO:
    """The BCOO of the dense matrix ``x``: an entry per element, in row order, the zeros made
    padding (the number of nonzeros is not known when tracing, so the bound is every
    element)."""
    n_rows, n_cols = x.shape
    rows = np.repeat(np.arange(n_rows, dtype=INDEX_DTYPE), n_cols)
    cols = np.tile(np.arange(n_cols, dtype=INDEX_DTYPE), n_rows)
    full = BCOO((jnp.ravel(x), np.stack([rows, cols], axis=1)), shape=(n_rows, n_cols))
    return padded(full, full.data == 0)


def parts(value: BCOO, format: str, exact: bool = True) -> tuple[Any, Any, Any]:
    """``(data, indices, indptr)`` of ``value`` in ``format``: the entries ordered by row (CSR)
    or column (CSC), keeping their order within one (a stable sort, so a matrix that came
    from SciPy in this format gives SciPy's own parts).

    A value that may hold duplicates or padding (not ``exact``) has its duplicates summed
    first; its padding entries come last, past ``indptr[-1]`` (SciPy's parts may have such a
    tail too: it reads ``indptr[-1]`` entries)."""
    if not exact:
        value = value.sum_duplicates(nse=value.nse)
    rows, cols = coordinates(value)
    major, minor = (rows, cols) if format == "csr" else (cols, rows)
    n_major = value.shape[0] if format == "csr" else value.shape[1]
    data = value.data
    if not exact:  # padding: last, with a zero at index 0 (valid parts for SciPy too)
        pad = padding(value)
        major = jnp.where(pad, n_major, major)
        minor = jnp.where(pad, 0, minor)
        data = jnp.where(pad, jnp.zeros((), data.dtype), data)
    order = jnp.argsort(major, stable=True)
    indptr = jnp.searchsorted(major[order], jnp.arange(n_major + 1), side="left")
    return data[order], minor[order].astype(INDEX_DTYPE), indptr.astype(INDEX_DTYPE)


def from_parts(data: Any, indices: Any, indptr: Any, shape: tuple[int, int], format: str) -> BCOO:
    """The BCOO of the CSR/CSC parts ``(data, indices, indptr)`` of a matrix of ``shape``
    (entries past ``indptr[-1]`` become padding)."""
    shape = (int(shape[0]), int(shape[1]))
    n_major = shape[0] if format == "csr" else shape[1]
    indptr = jnp.asarray(indptr)
    nse = len(indices)
    major = jnp.repeat(jnp.arange(n_major, dtype=INDEX_DTYPE), jnp.diff(indptr), total_repeat_length=nse)
    minor = as_dtype(indices, INDEX_DTYPE)
    rows, cols = (major, minor) if format == "csr" else (minor, major)
    value = BCOO((jnp.asarray(data), jnp.stack([rows, cols], axis=1)), shape=shape)
    return padded(value, jnp.arange(nse) >= indptr[-1])


#: the Op classes whose sparse output holds SciPy's entries one for one when their sparse
#: inputs do (the same structure, or the parts given): see :func:`exact`
_KEEPS_ENTRIES: set[type] = set()


def keeps_entries(*op_classes: type) -> None:
    """Declare that the Ops of ``op_classes`` give SciPy's entries one for one when their
    sparse inputs hold them (registered beside each Op's JAX function)."""
    _KEEPS_ENTRIES.update(op_classes)


def exact(var: Variable) -> bool:
    """Whether the BCOO of ``var`` holds SciPy's stored entries one for one: an input or a
    constant, or the result of an Op declared with :func:`keeps_entries` of exact sparse
    inputs."""
    keeping = tuple(_KEEPS_ENTRIES)
    todo, seen = [var], set()
    while todo:  # (a loop, not recursion: a chain of sparse Ops may be long)
        v = todo.pop()
        if v.owner is None or isinstance(v, Constant) or v in seen:
            continue
        seen.add(v)
        if not isinstance(v.owner.op, keeping):
            return False
        todo.extend(i for i in v.owner.inputs if is_sparse(i))
    return True
