"""The JAX backend: a rewritten FunctionGraph as one ``jax.jit``-ed function.

:func:`~arignote.link.jax.dispatch.basic.jax_funcify` (a ``functools.singledispatch`` keyed by
Op type) gives each Op its JAX implementation; the Op families register theirs from this
package's ``dispatch`` modules, which mirror ``arignote.tensor``. Importing ``arignote`` never
imports JAX: only this package does.

Importing it turns on JAX's 64-bit mode (``jax_enable_x64``): arignote's graphs compute in
the dtypes their Types say, float64 and int64 included, as NumPy does.
"""

import jax

jax.config.update("jax_enable_x64", True)
