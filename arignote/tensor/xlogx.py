"""``pytensor.tensor.xlogx``'s path: ``xlogx`` and ``xlogy0``, kept as PyTensor 3 keeps them,
deprecated (a FutureWarning) in favour of ``arignote.tensor.special.xlogy``; each is the
elementwise function of :mod:`arignote.tensor.ufuncs` (``x * log(x)`` and ``x * log(y)``,
0 where ``x`` is 0)."""

from __future__ import annotations

import warnings
from typing import Any

from arignote.graph.basic import Variable
from arignote.tensor import ufuncs

__all__ = ["xlogx", "xlogy0"]


def xlogx(x: Any) -> Variable:
    """``x * log(x)``, 0 where ``x`` is 0 (deprecated: ``pt.special.xlogy(x, x)``)."""
    warnings.warn(
        "arignote.tensor.xlogx.xlogx is deprecated; use arignote.tensor.special.xlogy(x, x)",
        FutureWarning,
        stacklevel=2,
    )
    return ufuncs.xlogx(x)


def xlogy0(x: Any, y: Any) -> Variable:
    """``x * log(y)``, 0 where ``x`` is 0 (deprecated: ``pt.special.xlogy(x, y)``)."""
    warnings.warn(
        "arignote.tensor.xlogx.xlogy0 is deprecated; use arignote.tensor.special.xlogy(x, y)",
        FutureWarning,
        stacklevel=2,
    )
    return ufuncs.xlogy0(x, y)
