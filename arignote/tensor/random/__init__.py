"""Random variables: ``pt.random.normal(loc, scale, size=None, rng=None)`` and friends.

A draw is a node of a :class:`~arignote.tensor.random.op.RandomVariable` Op. Its inputs
are a random generator (a shared ``numpy.random.Generator``), the ``size`` and the
distribution's parameters; its outputs are the generator's next state and the draws
(the default output). A compiled function draws from a copy of the generator, so it
returns the same numbers on every call until the generator is updated, either
explicitly with ``updates={rng: next_rng}``:

>>> import numpy as np
>>> import arignote
>>> import arignote.tensor as pt
>>> rng = arignote.shared(np.random.default_rng(42), name="rng")
>>> x = pt.random.normal(0.0, 1.0, size=(3,), rng=rng)
>>> next_rng = x.owner.outputs[0]
>>> same = arignote.function([], x)
>>> bool((same() == same()).all())
True
>>> f = arignote.function([], x, updates={rng: next_rng})
>>> first, second = f(), f()
>>> ref = np.random.default_rng(42)           # NumPy makes the same draws
>>> bool((first == ref.normal(size=3)).all() and (second == ref.normal(size=3)).all())
True

or by a :class:`~arignote.tensor.random.utils.RandomStream`, whose generators carry a
``default_update`` (every function that uses them moves them on):

>>> from arignote.tensor.random.utils import RandomStream
>>> srng = RandomStream(seed=2024)
>>> u = srng.uniform(-1.0, 1.0, size=(2, 2))
>>> g = arignote.function([], u)
>>> a, b = g(), g()
>>> bool((a != b).all())
True
>>> srng.seed(2024)                           # re-seed: the draws start over
>>> bool((g() == a).all())
True

``return_next_rng=True`` (or a generator's methods: ``next_rng, x = rng.normal()``)
returns ``(next_rng, draws)`` instead of the draws alone. Draws are not differentiable:
a gradient through them with respect to their parameters is disconnected.
"""

from arignote.tensor.random import rewriting  # noqa: F401  (registers the random rewrites)
from arignote.tensor.random.basic import *  # noqa: F403
from arignote.tensor.random.basic import __all__ as _basic_all
from arignote.tensor.random.op import RandomVariable, default_rng
from arignote.tensor.random.type import RandomGeneratorType, random_generator_type
from arignote.tensor.random.utils import RandomStream
from arignote.tensor.random.var import (
    RandomGeneratorSharedVariable,
    RandomGeneratorVariable,
    rng,
    shared_rng,
)

__all__ = [
    *_basic_all,
    "RandomGeneratorSharedVariable",
    "RandomGeneratorType",
    "RandomGeneratorVariable",
    "RandomStream",
    "RandomVariable",
    "default_rng",
    "random_generator_type",
    "rng",
    "shared_rng",
]
