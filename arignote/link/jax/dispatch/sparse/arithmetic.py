"""JAX functions of the Ops of :mod:`arignote.sparse.arithmetic` (on BCOO values: see ``values``)."""
