"""``pytensor.tensor.random.variable``'s path: random generator variables and shared ones.
Defined in :mod:`arignote.tensor.random.var`; this module only re-exports them.

>>> import numpy as np
>>> from arignote.tensor.random.variable import RandomGeneratorSharedVariable, shared_rng
>>> isinstance(shared_rng(seed=1), RandomGeneratorSharedVariable)
True
"""

from arignote.tensor.random.var import (
    RandomGeneratorSharedVariable,
    RandomGeneratorVariable,
    randomgen_constructor,
    rng,
    shared_rng,
)

__all__ = [
    "RandomGeneratorSharedVariable",
    "RandomGeneratorVariable",
    "randomgen_constructor",
    "rng",
    "shared_rng",
]
