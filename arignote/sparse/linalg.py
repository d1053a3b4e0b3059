"""``pytensor.sparse.linalg``'s path: the block diagonal of sparse matrices (home:
:mod:`arignote.sparse.joining`)."""

from arignote.sparse.joining import SparseBlockDiagonal, block_diag

__all__ = ["SparseBlockDiagonal", "block_diag"]
