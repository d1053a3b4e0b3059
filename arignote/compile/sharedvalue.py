"""``pytensor.compile.sharedvalue``'s path: shared variables (``shared``,
``SharedVariable``, ``shared_constructor``), whose home is :mod:`arignote.graph.shared`:
they are graph Variables holding a value, below the tensor layer that registers its own
constructor. ``locked(a, b, ...)`` holds several shared variables' locks at once, so no
compiled call reading or updating them runs while values that belong together are set
or read.

>>> import numpy as np
>>> from arignote.compile.sharedvalue import locked, shared
>>> w = shared(np.zeros(3), name="w")
>>> w.get_value()
array([0., 0., 0.])
>>> b = shared(np.float64(0.0), name="b")
>>> with locked(w, b):  # no call sees the new w with the old b
...     w.set_value(np.ones(3)); b.set_value(1.0)
"""

from arignote.graph.shared import SharedVariable, collect_new_shareds, locked, shared, shared_constructor

__all__ = ["SharedVariable", "collect_new_shareds", "locked", "shared", "shared_constructor"]
