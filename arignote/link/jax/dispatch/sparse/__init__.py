"""JAX functions of the sparse Ops (:mod:`arignote.sparse`), one module per family as there.

Inside a JAX program a sparse matrix is a ``jax.experimental.sparse.BCOO``
(:mod:`~arignote.link.jax.dispatch.sparse.values` says how entries are kept); SciPy matrices
come in and go out at the program's edges.
"""

from arignote.link.jax.dispatch.sparse import (  # noqa: F401  (imported for their registrations)
    arithmetic,
    comparison,
    construction,
    indexing,
    joining,
    products,
    sparse_grad,
    structure,
)
