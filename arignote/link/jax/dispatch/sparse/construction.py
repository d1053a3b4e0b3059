"""JAX functions of :mod:`arignote.sparse.construction`: a sparse matrix to and from its
CSR/CSC parts and dense matrices (BCOO values: see
:mod:`~arignote.link.jax.dispatch.sparse.values`).

The parts of a matrix (``csm_properties``) are SciPy's, entry for entry, for a matrix that
holds SciPy's entries (:func:`~arignote.link.jax.dispatch.sparse.values.exact`: inputs,
constants, structure-keeping results). A matrix computed inside the program whose number of
entries depends on the values (a sum, a comparison, a dense matrix made sparse) has its
duplicates summed, and its parts end with padding entries past ``indptr[-1]``: their length
is the bound known when tracing, not the number SciPy would store, and a matrix rebuilt from
them (``CSM``, as structured functions and gradients do) is the same matrix. A shape given
to ``CSM`` must be static: a constant, or read from a matrix's shape.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax.numpy as jnp
import numpy as np

from arignote.graph.basic import Apply
from arignote.link.jax.dispatch.basic import jax_funcify
from arignote.link.jax.dispatch.sparse.values import (
    BCOO,
    INDEX_DTYPE,
    dense,
    exact,
    from_dense,
    from_parts,
    keeps_entries,
    parts,
)
from arignote.link.jax.dispatch.static import concrete, raise_unless
from arignote.sparse.construction import (
    CSM,
    AsFormat,
    ConstructSparseFromList,
    CSMGrad,
    CSMProperties,
    DenseFromSparse,
    SparseFromDense,
)

keeps_entries(CSM, AsFormat)


@jax_funcify.register(CSMProperties)
def _csm_properties(op: CSMProperties, node: Apply | None = None, **kwargs: Any) -> Callable:
    fmt = node.inputs[0].type.format
    known = exact(node.inputs[0])

    def csm_properties(x: BCOO) -> tuple:
        return (*parts(x, fmt, known), np.asarray(x.shape, dtype=INDEX_DTYPE))

    return csm_properties


@jax_funcify.register(CSM)
def _csm(op: CSM, node: Apply | None = None, **kwargs: Any) -> Callable:
    fmt = op.format

    def csm(data: Any, indices: Any, indptr: Any, shape: Any) -> BCOO:
        shape = tuple(int(s) for s in concrete(shape, node, "the shape of a sparse matrix"))
        if len(shape) != 2:
            raise ValueError(f"{op}: shape must have 2 entries, got {list(shape)}")
        n_major, n_minor = shape if fmt == "csr" else shape[::-1]
        if len(indptr) != n_major + 1:
            raise ValueError(
                f"{op}: indptr has {len(indptr)} entries; a {fmt} matrix of shape {shape} needs {n_major + 1}"
            )
        if len(indices) != len(data):
            raise ValueError(f"{op}: {len(data)} values but {len(indices)} indices")
        if len(indices):  # (as SciPy, the entries past indptr[-1] are not read)
            stored = jnp.arange(len(indices)) < indptr[-1]
            raise_unless(
                jnp.all(~stored | ((indices >= 0) & (indices < n_minor))),
                f"{op}: an index is outside [0, {n_minor}) for a matrix of shape {shape}",
            )
        return from_parts(data, indices, indptr, shape, fmt)

    return csm


@jax_funcify.register(CSMGrad)
def _csm_grad(op: CSMGrad, node: Apply | None = None, **kwargs: Any) -> Callable:
    fmt, dtype = op.format, node.outputs[0].type.dtype

    def csm_grad(data: Any, indices: Any, indptr: Any, gz: Any) -> Any:
        g = dense(gz)
        entries = from_parts(jnp.zeros(len(indices)), indices, indptr, g.shape, fmt)
        return g[entries.indices[:, 0], entries.indices[:, 1]].astype(dtype)

    return csm_grad


@jax_funcify.register(DenseFromSparse)
def _dense_from_sparse(op: DenseFromSparse, node: Apply | None = None, **kwargs: Any) -> Callable:
    dtype = node.outputs[0].type.dtype

    def dense_from_sparse(x: BCOO) -> Any:
        return x.todense().astype(dtype)

    return dense_from_sparse


@jax_funcify.register(SparseFromDense)
def _sparse_from_dense(op: SparseFromDense, node: Apply | None = None, **kwargs: Any) -> Callable:
    def sparse_from_dense(x: Any) -> BCOO:
        return from_dense(jnp.asarray(x))

    return sparse_from_dense


@jax_funcify.register(AsFormat)
def _as_format(op: AsFormat, node: Apply | None = None, **kwargs: Any) -> Callable:
    # a BCOO has no format: the entries are ordered when the parts are read, and the output
    # Type's format is the one the value has on the host
    def as_format(x: BCOO) -> BCOO:
        return x

    return as_format


@jax_funcify.register(ConstructSparseFromList)
def _construct_sparse_from_list(
    op: ConstructSparseFromList, node: Apply | None = None, **kwargs: Any
) -> Callable:
    def construct_sparse_from_list(shape: Any, values: Any, ilist: Any) -> BCOO:
        n_rows = int(concrete(shape, node, "the shape of x")[0])
        n_in, n_cols = values.shape
        if n_in != len(ilist):
            raise ValueError(f"{op}: {n_in} rows of values but {len(ilist)} row indices")
        ilist = jnp.asarray(ilist, INDEX_DTYPE)
        # negative rows count from the end, as in the x[ilist] this is the gradient of (rows
        # out of bounds: padding, JAX's dropped writes)
        rows = jnp.tile(jnp.where(ilist < 0, ilist + n_rows, ilist), n_cols)
        cols = jnp.repeat(jnp.arange(n_cols, dtype=INDEX_DTYPE), n_in)
        return BCOO((jnp.ravel(values.T), jnp.stack([rows, cols], axis=1)), shape=(n_rows, n_cols))

    return construct_sparse_from_list
