"""JAX functions of the Ops of :mod:`arignote.sparse.indexing` (on BCOO values: see ``values``)."""
