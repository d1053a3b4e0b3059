"""Containers: the storage cell of a function input (or shared variable) with its Type.

Every container has a re-entrant lock (``lock``) and a creation number (``order``):
a compiled function holds the locks of the shared variables it reads or updates for
the whole of a call, taking them in ``order``, so two functions sharing variables can
never deadlock, and ``get_value``/``set_value`` take the same lock.
"""

from __future__ import annotations

import itertools
import os
import threading
import weakref
from typing import Any

from arignote.graph.type import Type

__all__ = ["Container", "lock_containers"]

#: creation numbers: locks are always taken in this order
_order = itertools.count()
#: every live container, so a forked child can free the locks other threads held
_live: weakref.WeakSet = weakref.WeakSet()


class Container:
    """A one-element storage cell that filters what is stored in it through ``type``.

    ``storage`` is the cell itself (a one-element list), shared with the thunks that
    read it. ``strict``/``allow_downcast`` are passed to ``Type.filter``; a ``readonly``
    container refuses assignment. ``lock`` (a ``threading.RLock``) guards the value of a
    shared variable across threads; ``order`` is the container's place in the global
    order in which locks are taken.
    """

    def __init__(
        self,
        type: Type,
        storage: list,
        name: str | None = None,
        strict: bool = False,
        allow_downcast: bool | None = None,
        readonly: bool = False,
    ):
        if not isinstance(storage, list) or len(storage) != 1:
            raise TypeError("Container storage must be a one-element list")
        self.type = type
        self.storage = storage
        self.name = name
        self.strict = strict
        self.allow_downcast = allow_downcast
        self.readonly = readonly
        self._init_lock()

    def _init_lock(self) -> None:
        self.lock = threading.RLock()
        self.order = next(_order)
        _live.add(self)

    @property
    def value(self) -> Any:
        return self.storage[0]

    @value.setter
    def value(self, value: Any) -> None:
        if self.readonly:
            raise ValueError(f"Cannot set the read-only container {self.name}")
        if value is None:
            self.storage[0] = None
            return
        self.storage[0] = self.type.filter(value, strict=self.strict, allow_downcast=self.allow_downcast)

    # a lock is no state: a copy or an unpickled container gets a fresh one
    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        del state["lock"], state["order"]
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._init_lock()

    def __str__(self) -> str:
        return f"<{self.storage[0]!r}>"

    __repr__ = __str__


class lock_containers:
    """``with lock_containers(containers):`` holds their locks (taken in the global
    order, each once), so several values can be read or set as one step."""

    __slots__ = ("_locks",)

    def __init__(self, containers: Any):
        unique = {id(c): c for c in containers}
        self._locks = [c.lock for c in sorted(unique.values(), key=lambda c: c.order)]

    def __enter__(self) -> None:
        taken = []
        try:
            for lock in self._locks:
                lock.acquire()
                taken.append(lock)
        except BaseException:
            for lock in reversed(taken):
                lock.release()
            raise

    def __exit__(self, *exc: Any) -> None:
        for lock in reversed(self._locks):
            lock.release()


def _after_fork_in_child() -> None:
    """In a forked child only the forking thread survives: the locks other threads held
    would stay locked forever. Free them (those the forking thread holds it releases)."""
    for container in list(_live):
        lock = container.lock
        if not lock._is_owned():
            lock._at_fork_reinit()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
