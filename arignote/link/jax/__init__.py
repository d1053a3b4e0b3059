"""The JAX backend: a rewritten FunctionGraph as one ``jax.jit``-ed function.

:func:`~arignote.link.jax.dispatch.basic.jax_funcify` (a ``functools.singledispatch`` keyed by
Op type) gives each Op its JAX implementation; the Op families register theirs from this
package's ``dispatch`` modules, which mirror ``arignote.tensor``. Importing ``arignote`` never
imports JAX: only this package does.
"""
