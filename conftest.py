"""Collection settings for the whole repository (the package's doctests and ``tests/``).

The JAX backend (``arignote/link/jax``) and its tests (``tests/link/jax``) need the optional
``jax`` extra: where JAX is not installed their modules cannot be imported (the suite runs
with ``--doctest-modules``, which imports every module, test helpers included), so they are
not collected.
"""

import importlib.util

collect_ignore_glob = (
    [] if importlib.util.find_spec("jax") is not None else ["arignote/link/jax/*", "tests/link/jax/*"]
)
