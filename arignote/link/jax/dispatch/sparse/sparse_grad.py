"""JAX functions of the Ops of :mod:`arignote.sparse.sparse_grad` (on BCOO values: see ``values``)."""
