"""Rewrites of sparse graphs (canonicalize stage: FAST_RUN and FAST_COMPILE).

- ``local_csm_properties_csm``: the parts of a matrix just built from parts are those
  parts (chains of structured elementwise functions take a matrix apart and rebuild it at
  every step; this leaves one ``CSMProperties`` and one ``CSM``).
- ``local_sparse_transpose_transpose``: ``x.T.T`` is ``x`` (the same arrays).
- ``local_sparse_neg_neg``: ``-(-x)`` is ``x``.
- ``local_dense_from_sparse_from_dense``: ``dense_from_sparse(csr_from_dense(d))`` is ``d``.

>>> import numpy as np
>>> import scipy.sparse as sp
>>> import arignote
>>> from arignote import sparse
>>> x = sparse.csr_matrix("x", dtype="float64")
>>> f = arignote.function([x], sparse.structured_exp(sparse.structured_add(x, 1.0)))
>>> sum(type(n.op).__name__ == "CSMProperties" for n in f.maker.fgraph.apply_nodes)
1
"""

from __future__ import annotations

from typing import Any

from arignote.graph.basic import Apply, Variable
from arignote.graph.rewriting.basic import node_rewriter
from arignote.sparse.arithmetic import Neg
from arignote.sparse.construction import CSM, CSMProperties, DenseFromSparse, SparseFromDense
from arignote.sparse.structure import Transpose
from arignote.tensor.rewriting.basic import register_canonicalize
from arignote.tensor.ufuncs import cast

__all__ = [
    "local_csm_properties_csm",
    "local_dense_from_sparse_from_dense",
    "local_sparse_neg_neg",
    "local_sparse_transpose_transpose",
]


def _inner(node: Apply, op_class: type) -> Variable | None:
    """The input of the node of class ``op_class`` that computes ``node``'s only input."""
    owner = node.inputs[0].owner
    if owner is None or not isinstance(owner.op, op_class):
        return None
    return owner.inputs[0]


@register_canonicalize("sparse")
@node_rewriter([CSMProperties])
def local_csm_properties_csm(fgraph: Any, node: Apply) -> list | None:
    """``csm_properties(CSM(data, indices, indptr, shape))`` -> the parts themselves (each
    where its Type fits the output's)."""
    owner = node.inputs[0].owner
    if owner is None or not isinstance(owner.op, CSM):
        return None
    out: list = []
    for old, new in zip(node.outputs, owner.inputs):
        if new.type.dtype != old.type.dtype:
            new = cast(new, old.type.dtype)
        out.append(new if old.type.is_super(new.type) else None)
    return out if any(v is not None for v in out) else None


@register_canonicalize("sparse")
@node_rewriter([Transpose])
def local_sparse_transpose_transpose(fgraph: Any, node: Apply) -> list | None:
    """``transpose(transpose(x))`` -> ``x``."""
    inner = _inner(node, Transpose)
    return [inner] if inner is not None and node.outputs[0].type.is_super(inner.type) else None


@register_canonicalize("sparse")
@node_rewriter([Neg])
def local_sparse_neg_neg(fgraph: Any, node: Apply) -> list | None:
    """``neg(neg(x))`` -> ``x``."""
    inner = _inner(node, Neg)
    return [inner] if inner is not None and node.outputs[0].type.is_super(inner.type) else None


@register_canonicalize("sparse")
@node_rewriter([DenseFromSparse])
def local_dense_from_sparse_from_dense(fgraph: Any, node: Apply) -> list | None:
    """``dense_from_sparse(csX_from_dense(d))`` -> ``d`` (the same values)."""
    inner = _inner(node, SparseFromDense)
    return [inner] if inner is not None and node.outputs[0].type.is_super(inner.type) else None
