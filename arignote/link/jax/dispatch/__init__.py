"""JAX implementations of arignote's Ops, one module per Op family, registered by Op type."""

from arignote.link.jax.dispatch.basic import jax_funcify

__all__ = ["jax_funcify"]
