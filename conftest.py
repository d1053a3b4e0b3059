"""Collection settings for the whole repository (the package's doctests and ``tests/``).

The JAX backend (``arignote/link/jax``) and its tests (``tests/link/jax``) need the optional
``jax`` extra: where JAX is not installed their modules cannot be imported (the suite runs
with ``--doctest-modules``, which imports every module, test helpers included), so they are
not collected. Likewise ``arignote/link/numba/vecmath.py`` without the ``numba`` extra.
"""

import importlib.util

collect_ignore_glob = (
    [] if importlib.util.find_spec("jax") is not None else ["arignote/link/jax/*", "tests/link/jax/*"]
)
# the vectorised math is LLVM IR built with Numba's intrinsics: importable only with the
# ``numba`` extra (the rest of arignote.link.numba imports Numba on first use)
if importlib.util.find_spec("numba") is None:
    collect_ignore_glob += ["arignote/link/numba/vecmath.py"]
