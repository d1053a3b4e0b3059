"""``pytensor.compile.sharedvalue``'s path: shared variables (``shared``,
``SharedVariable``, ``shared_constructor``), whose home is :mod:`arignote.graph.shared`:
they are graph Variables holding a value, below the tensor layer that registers its own
constructor.

>>> import numpy as np
>>> from arignote.compile.sharedvalue import shared
>>> w = shared(np.zeros(3), name="w")
>>> w.get_value()
array([0., 0., 0.])
"""

from arignote.graph.shared import SharedVariable, shared, shared_constructor

__all__ = ["SharedVariable", "shared", "shared_constructor"]
