"""JAX functions of the Ops of :mod:`arignote.sparse.comparison` (on BCOO values: see ``values``)."""
