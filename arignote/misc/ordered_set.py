"""``OrderedSet``: a set that iterates in insertion order."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, MutableSet
from typing import Any

__all__ = ["OrderedSet"]


class OrderedSet(MutableSet):
    """A mutable set whose iteration order is the order its elements were first added
    (a dict's keys underneath, so membership and adding cost what they cost in a dict).

    >>> s = OrderedSet([3, 1, 3, 2])
    >>> s.add(1); s.add(0)
    >>> list(s), 2 in s, len(s)
    ([3, 1, 2, 0], True, 4)
    >>> list(s.union([5, 3]))
    [3, 1, 2, 0, 5]
    """

    __slots__ = ("values",)

    def __init__(self, iterable: Iterable | None = None):
        if iterable is not None and isinstance(iterable, (set, frozenset)):
            # a plain set has no order to keep: an OrderedSet built from it would look
            # ordered while its order is arbitrary
            raise TypeError("OrderedSet needs an ordered iterable (a list, a tuple, ...), not a set")
        self.values: dict[Any, None] = dict.fromkeys(iterable or ())

    def __contains__(self, value: object) -> bool:
        return value in self.values

    def __iter__(self) -> Iterator:
        return iter(self.values)

    def __len__(self) -> int:
        return len(self.values)

    def __repr__(self) -> str:
        return f"OrderedSet({list(self.values)!r})"

    def add(self, value: Any) -> None:
        self.values[value] = None

    def discard(self, value: Any) -> None:
        self.values.pop(value, None)

    def copy(self) -> OrderedSet:
        return OrderedSet(list(self.values))

    def update(self, other: Iterable) -> None:
        """Add every element of ``other``, in its order."""
        for value in other:
            self.values[value] = None

    def union(self, other: Iterable) -> OrderedSet:
        """A new OrderedSet: this one's elements, then ``other``'s that are new."""
        out = self.copy()
        out.update(other)
        return out

    def difference_update(self, other: Iterable) -> None:
        """Remove every element of ``other``."""
        for value in other:
            self.values.pop(value, None)
