"""``frozendict``: an immutable, hashable mapping that keeps insertion order."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

__all__ = ["frozendict"]


class frozendict(Mapping):
    """A read-only dict: built like ``dict(...)``, it offers the whole ``Mapping`` interface
    and no way to change it, so it can be hashed (when its values can) and used as a key or
    an Op's property.

    >>> d = frozendict({"b": 1}, a=2)
    >>> list(d.items()), d["a"], hash(d) == hash(frozendict(b=1, a=2))
    ([('b', 1), ('a', 2)], 2, True)
    >>> d["c"] = 3
    Traceback (most recent call last):
    TypeError: 'frozendict' object does not support item assignment
    """

    __slots__ = ("_dict", "_hash")

    def __init__(self, *args: Any, **kwargs: Any):
        self._dict = dict(*args, **kwargs)
        self._hash: int | None = None

    def __getitem__(self, key: Any) -> Any:
        return self._dict[key]

    def __contains__(self, key: object) -> bool:
        return key in self._dict

    def __iter__(self) -> Iterator:
        return iter(self._dict)

    def __len__(self) -> int:
        return len(self._dict)

    def __repr__(self) -> str:
        return f"frozendict({self._dict!r})"

    def __hash__(self) -> int:
        if self._hash is None:
            # order-independent, as equality is (two equal mappings hash the same)
            self._hash = hash(frozenset(self._dict.items()))
        return self._hash

    def __reduce__(self) -> tuple:
        return (frozendict, (self._dict,))

    def copy(self, **add_or_replace: Any) -> frozendict:
        """A frozendict with the same items, updated by the keywords."""
        return frozendict(self._dict, **add_or_replace)
