"""JAX functions of the Ops of :mod:`arignote.sparse.joining` (on BCOO values: see ``values``)."""
