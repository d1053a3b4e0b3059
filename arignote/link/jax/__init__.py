"""The JAX backend: a rewritten FunctionGraph as one ``jax.jit``-ed function.

:func:`~arignote.link.jax.dispatch.basic.jax_funcify` (a ``functools.singledispatch`` keyed by
Op type) gives each Op its JAX implementation; the Op families register theirs from this
package's ``dispatch`` modules, which mirror ``arignote.tensor``. Importing ``arignote`` never
imports JAX: only this package does (``mode="JAX"`` imports it on first use).

Importing it turns on JAX's 64-bit mode (``jax_enable_x64``): arignote's graphs compute in
the dtypes their Types say, float64 and int64 included, as NumPy does.
"""

import jax

jax.config.update("jax_enable_x64", True)

from arignote.link.jax import dispatch  # noqa: E402  (after the 64-bit switch)
from arignote.link.jax.dispatch import jax_funcify  # noqa: E402
from arignote.link.jax.function import jax_function  # noqa: E402
from arignote.link.jax.linker import JAXLinker, jax_mode  # noqa: E402
from arignote.link.jax.ops import JAXOp, wrap_jax  # noqa: E402

__all__ = ["JAXLinker", "JAXOp", "dispatch", "jax_funcify", "jax_function", "jax_mode", "wrap_jax"]
