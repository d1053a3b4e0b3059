"""``pytensor.utils``'s path: small generic helpers PyTensor users and extensions call (PyTensor's
process and excepthook helpers for its C compiler are not here: there is no C backend).

>>> flatten([1, (2, [3, {4}])])
[1, 2, 3, 4]
>>> uniq([3, 1, 3, 2, 1])
[3, 1, 2]
>>> unzip([(1, "a"), (2, "b")], 2)
((1, 2), ('a', 'b'))
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from typing import Any

__all__ = [
    "difference",
    "flatten",
    "from_return_values",
    "hash_from_code",
    "to_return_values",
    "uniq",
    "unzip",
]


def flatten(a: Any) -> list:
    """The items of nested lists, tuples and sets, in order, as one list (anything else is an
    item; iterative, so deep nesting is fine)."""
    out: list = []
    stack = [iter([a])]
    while stack:
        for item in stack[-1]:
            if isinstance(item, (list, tuple, set, frozenset)):
                stack.append(iter(item))
                break
            out.append(item)
        else:
            stack.pop()
    return out


def uniq(seq: Sequence) -> list:
    """The items of ``seq`` without repeats, each where it first appears (items need only be
    comparable with ``==``, not hashable)."""
    out: list = []
    for x in seq:
        if x not in out:
            out.append(x)
    return out


def difference(seq1: Iterable, seq2: Iterable) -> list:
    """The items of ``seq1`` that are not in ``seq2``, in ``seq1``'s order."""
    seq2 = list(seq2)
    try:
        excluded = set(seq2)
        return [x for x in seq1 if x not in excluded]
    except TypeError:  # unhashable items: compare with ==
        return [x for x in seq1 if x not in seq2]


def hash_from_code(msg: str | bytes) -> str:
    """A hex SHA-256 digest of a string or bytes, prefixed with ``m`` (so it is a valid
    identifier, as PyTensor makes it)."""
    data = msg.encode() if isinstance(msg, str) else bytes(msg)
    return "m" + hashlib.sha256(data).hexdigest()


def to_return_values(values: Sequence) -> Any:
    """One value as itself, several as the sequence (how an Op's ``perform`` results become a
    function's return)."""
    return values[0] if len(values) == 1 else values


def from_return_values(values: Any) -> list | tuple:
    """The inverse of :func:`to_return_values`: a list or tuple as it is, anything else in a
    one-item list."""
    return values if isinstance(values, (list, tuple)) else [values]


def unzip(iterable: Iterable, n: int, strict: bool = False) -> tuple:
    """``n`` tuples from an iterable of ``n``-item groups (``n`` empty tuples when it is empty);
    with ``strict``, a group of another length is a ValueError."""
    groups = list(iterable)
    if strict:
        bad = [g for g in groups if len(g) != n]
        if bad:
            raise ValueError(f"unzip: every group must have {n} items, got {bad[0]!r}")
    if not groups:
        return tuple(() for _ in range(n))
    return tuple(tuple(g[k] for g in groups) for k in range(n))
