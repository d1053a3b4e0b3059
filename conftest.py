"""Collection settings for the whole repository (the package's doctests and ``tests/``).

The JAX backend (``arignote/link/jax``) needs the optional ``jax`` extra: where JAX is not
installed its modules cannot be imported, so their doctests are not collected (the tests of
``tests/link/jax`` skip themselves with ``pytest.importorskip``).
"""

import importlib.util

collect_ignore_glob = [] if importlib.util.find_spec("jax") is not None else ["arignote/link/jax/*"]
