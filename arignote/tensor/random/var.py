"""Random generator variables, and shared ones: ``arignote.shared(np.random.default_rng(seed))``.

A generator variable also has a method per distribution that returns the pair
``(next_rng, draws)``, so chained draws thread the generator explicitly:

>>> import numpy as np
>>> import arignote
>>> rng = shared_rng(seed=153, name="rng")
>>> next_rng, x = rng.normal(size=2)
>>> final_rng, y = next_rng.uniform()
>>> f = arignote.function([], [x, y], updates={rng: final_rng})
>>> xs, ys = f()
>>> ref = np.random.default_rng(153)
>>> bool((xs == ref.normal(size=2)).all() and ys == ref.uniform())
True
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from arignote.graph.basic import Variable
from arignote.graph.shared import SharedVariable, shared_constructor
from arignote.tensor.random import basic as _basic
from arignote.tensor.random.type import RandomGeneratorType, random_generator_type

__all__ = [
    "RandomGeneratorSharedVariable",
    "RandomGeneratorVariable",
    "randomgen_constructor",
    "rng",
    "shared_rng",
]


def _rng_method(name: str, fn: Callable) -> Callable:
    """``rng.<name>(...)``: ``fn(..., rng=rng, return_next_rng=True)``, warning when the
    generator already fed another draw (its next state is probably what was meant)."""

    def method(self: Variable, *args: Any, **kwargs: Any) -> tuple[Variable, Variable]:
        if getattr(self.tag, "used", False):
            warnings.warn(
                f"The generator {self} was already used for another draw; drawing from it again gives "
                "the same numbers. Use the next_rng that the earlier draw returned.",
                UserWarning,
                stacklevel=2,
            )
        return fn(*args, rng=self, return_next_rng=True, **kwargs)

    method.__name__ = name
    method.__qualname__ = f"RandomGeneratorVariable.{name}"
    method.__doc__ = f"``(next_rng, draws)`` of :func:`arignote.tensor.random.{name}` with this generator."
    return method


class _generator_methods:
    """One method per distribution of :mod:`arignote.tensor.random.basic`."""


for _name in _basic.__all__:
    setattr(_generator_methods, _name, _rng_method(_name, getattr(_basic, _name)))


class RandomGeneratorVariable(_generator_methods, Variable):
    """A Variable of :class:`RandomGeneratorType` (a ``numpy.random.Generator`` value)."""


RandomGeneratorType.variable_type = RandomGeneratorVariable


_UNSET: Any = object()


def _generator_value(value: Any, seed: Any) -> np.random.Generator:
    """The generator given, or ``default_rng(seed)``: exactly one of them."""
    if value is None:
        if seed is _UNSET:
            raise ValueError("give a generator or a seed")
        return np.random.default_rng(seed)
    if seed is not _UNSET:
        raise ValueError("give a generator or a seed, not both")
    return value


class RandomGeneratorSharedVariable(SharedVariable, RandomGeneratorVariable):
    """A shared ``numpy.random.Generator``. Compiled functions draw from copies of it;
    only an update (``updates={rng: next_rng}``, or ``default_update``) moves it on."""

    def __str__(self) -> str:
        return self.name or f"RNG({self.container.value!r})"

    def set_value(self, new_value: Any = None, borrow: bool = False, *, seed: Any = _UNSET) -> None:
        """Set the generator (copied unless ``borrow``), or ``seed=``: a new
        ``numpy.random.default_rng(seed)``."""
        if new_value is None:
            if seed is _UNSET:
                raise TypeError(f"Cannot set {self._label()} to None: give a numpy.random.Generator or seed=")
            borrow = True  # a generator made here is nobody else's
        try:
            new_value = _generator_value(new_value, seed)
        except ValueError as err:
            raise ValueError(f"Cannot set {self._label()}: {err}") from None
        super().set_value(new_value, borrow=borrow)


def shared_rng(
    value: np.random.Generator | None = None,
    *,
    seed: Any = _UNSET,
    name: str | None = None,
    borrow: bool = False,
) -> RandomGeneratorSharedVariable:
    """A shared generator: ``value`` (copied unless ``borrow``) or ``default_rng(seed)``.

    >>> import arignote.tensor as pt
    >>> g = pt.random.shared_rng(seed=1, name="g")
    >>> g.type, g.get_value().normal() == np.random.default_rng(1).normal()
    (RandomGeneratorType, True)
    """
    if value is not None:
        if not isinstance(value, np.random.Generator):
            raise TypeError(f"shared_rng: expected a numpy.random.Generator, got {type(value).__name__}")
        if not borrow:
            value = copy.deepcopy(value)
    value = _generator_value(value, seed)
    return RandomGeneratorSharedVariable(
        name=name, type=random_generator_type, value=value, strict=False, allow_downcast=None
    )


def rng(name: str | None = None) -> RandomGeneratorVariable:
    """A symbolic generator: a function input that takes a ``numpy.random.Generator``.

    >>> import arignote
    >>> r = rng("r")
    >>> next_r, x = r.normal()
    >>> f = arignote.function([r], [next_r, x])
    >>> g = np.random.default_rng(3)
    >>> g2, value = f(g)
    >>> bool(value == np.random.default_rng(3).normal()), g2 is g
    (True, False)
    """
    return random_generator_type(name)


@shared_constructor
def randomgen_constructor(
    value: Any,
    name: str | None = None,
    strict: bool = False,
    allow_downcast: bool | None = None,
    **kwargs: Any,
) -> RandomGeneratorSharedVariable:
    """``shared(generator)``: a :class:`RandomGeneratorSharedVariable` (``shared`` has
    already copied the value unless ``borrow``)."""
    if isinstance(value, np.random.RandomState):
        raise TypeError("numpy.random.RandomState is not supported; use numpy.random.default_rng(seed)")
    if not isinstance(value, np.random.Generator):
        raise TypeError(f"not a numpy.random.Generator: {type(value).__name__}")
    if kwargs:
        raise TypeError(f"unexpected arguments for a shared generator: {sorted(kwargs)}")
    return shared_rng(value, name=name, borrow=True)
