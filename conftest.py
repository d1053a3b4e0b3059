"""Collection settings for the whole repository (the package's doctests and ``tests/``).

The JAX backend (``arignote/link/jax``) and its tests (``tests/link/jax``) need the optional
``jax`` extra: where JAX is not installed their modules cannot be imported (the suite runs
with ``--doctest-modules``, which imports every module, test helpers included), so they are
not collected. Likewise the modules only generated Numba code imports (``vecmath.py``,
``hugepages.py``, ``numpy_blas.py`` in ``arignote/link/numba``) without the ``numba`` extra.
"""

import importlib.util

collect_ignore_glob = (
    [] if importlib.util.find_spec("jax") is not None else ["arignote/link/jax/*", "tests/link/jax/*"]
)
# the modules generated kernels import are built with Numba's intrinsics: importable only
# with the ``numba`` extra (the rest of arignote.link.numba imports Numba on first use)
if importlib.util.find_spec("numba") is None:
    collect_ignore_glob += [
        f"arignote/link/numba/{name}.py" for name in ("vecmath", "hugepages", "numpy_blas")
    ]
