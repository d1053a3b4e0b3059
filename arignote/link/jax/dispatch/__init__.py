"""JAX implementations of arignote's Ops, one module per Op family, registered by Op type."""

from arignote.link.jax.dispatch import (  # noqa: F401  (imported for their registrations)
    blockwise,
    extra_ops,
    nlinalg,
    optimize,
    searching,
    signal,
    slinalg,
    sort,
    special,
    subtensor,
)
from arignote.link.jax.dispatch.basic import jax_funcify

__all__ = ["jax_funcify"]
