"""The Type of random generator variables: values are ``numpy.random.Generator`` objects.

>>> import numpy as np
>>> from arignote.tensor.random.type import random_generator_type
>>> g = np.random.default_rng(1)
>>> random_generator_type.filter(g) is g
True
>>> random_generator_type.values_eq(g, np.random.default_rng(1))
True
"""

from __future__ import annotations

from typing import Any

import numpy as np

from arignote.graph.type import Type

__all__ = ["RandomType", "RandomGeneratorType", "as_rng", "random_generator_type"]


class RandomType(Type):
    """Base of the Types whose values are random number generators."""


def _generator_from_state(state: dict) -> np.random.Generator:
    """A Generator rebuilt from a ``bit_generator.state`` dict (what pickling and
    ``get_state``-style code hand around)."""
    name = state.get("bit_generator")
    bit_gen_cls = getattr(np.random, name, None) if isinstance(name, str) else None
    if (
        bit_gen_cls is None
        or not isinstance(bit_gen_cls, type)
        or not issubclass(bit_gen_cls, np.random.BitGenerator)
    ):
        raise TypeError(f"a generator state dict must name a NumPy bit generator, got bit_generator={name!r}")
    bit_gen = bit_gen_cls()
    try:
        bit_gen.state = state
    except (TypeError, ValueError, KeyError) as err:
        raise TypeError(f"not a valid {name} state: {err}") from None
    return np.random.Generator(bit_gen)


def _states_equal(a: Any, b: Any) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_states_equal(a[k], b[k]) for k in a)
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return bool(np.array_equal(a, b))
    return bool(a == b)


class RandomGeneratorType(RandomType):
    """The Type of a ``numpy.random.Generator`` (any bit generator).

    All instances are equal. ``filter`` accepts a Generator as it is; without
    ``strict`` it also rebuilds one from a ``bit_generator.state`` dict. The legacy
    ``numpy.random.RandomState`` is refused (use ``numpy.random.default_rng``).
    """

    def filter(
        self, data: Any, strict: bool = False, allow_downcast: bool | None = None
    ) -> np.random.Generator:
        if isinstance(data, np.random.Generator):
            return data
        if isinstance(data, np.random.RandomState):
            raise TypeError(
                "numpy.random.RandomState is not supported; use a numpy.random.Generator "
                "(numpy.random.default_rng(seed))"
            )
        if not strict and isinstance(data, dict) and "bit_generator" in data:
            return _generator_from_state(data)
        raise TypeError(f"expected a numpy.random.Generator, got {type(data).__name__} {data!r}"[:200])

    def values_eq(self, a: Any, b: Any) -> bool:
        """Two generators are equal when their bit generators are in the same state."""
        sa = a if isinstance(a, dict) else a.bit_generator.state
        sb = b if isinstance(b, dict) else b.bit_generator.state
        return _states_equal(sa, sb)

    @staticmethod
    def may_share_memory(a: Any, b: Any) -> bool:
        """Generators share state when they draw from the same bit generator."""
        if isinstance(a, np.random.Generator) and isinstance(b, np.random.Generator):
            return a.bit_generator is b.bit_generator
        return a is b

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other)

    def __hash__(self) -> int:
        return hash(type(self))

    def __str__(self) -> str:
        return "RandomGeneratorType"


#: the (only) RandomGeneratorType
random_generator_type = RandomGeneratorType()


def as_rng(x: Any) -> Any:
    """``x`` checked to be a symbolic random generator (a Variable of
    :class:`RandomGeneratorType`), returned as it is; anything else is a TypeError that says
    how to make one (``pt.random.rng()`` for an input, ``pt.random.shared_rng(gen)`` for a
    shared generator)."""
    if x is None:
        raise TypeError(
            "rng must not be None: use pt.random.rng() for a symbolic input or pt.random.shared_rng() for a shared one"
        )
    if isinstance(x, np.random.Generator):
        raise TypeError(
            "as_rng takes a symbolic generator, not a NumPy Generator: use pt.random.shared_rng(gen) "
            "to share it, or pt.random.rng() for a symbolic input"
        )
    if isinstance(getattr(x, "type", None), RandomGeneratorType):
        return x
    raise TypeError(f"as_rng: expected a random generator Variable, got {type(x).__name__} {x!r}")
