"""Containers: the storage cell of a function input (or shared variable) with its Type.

Every container has a re-entrant lock (``lock``) and a creation number (``order``):
a compiled function holds the locks of the shared variables it reads or updates for
the whole of a call, taking them in ``order``, so two functions sharing variables can
never deadlock, and ``get_value``/``set_value`` take the same lock.

Nested calls break that order: a function called from inside another's call (from a
Python Op's ``perform`` or a callback) takes its locks while the outer call holds its
own, and inside ``with locked(a):`` a call takes its locks after ``a``'s. Two threads
nesting in opposite orders would wait for each other forever. So a thread that finds a
lock taken records, before it waits, which lock it waits for and which it holds
(:func:`wait_for`); the thread whose wait would close a cycle raises
:class:`DeadlockError` instead (its call changes nothing and frees its locks, so the
other threads go on). Nothing is recorded on the uncontended path.
"""

from __future__ import annotations

import itertools
import os
import threading
import weakref
from collections.abc import Callable
from typing import Any

from arignote.graph.type import Type

__all__ = [
    "Container",
    "DeadlockError",
    "held_by_this_thread",
    "held_in_locked_blocks",
    "held_providers",
    "host_value",
    "host_values_in",
    "lock_containers",
    "register_device_type",
    "wait_for",
]

#: creation numbers: locks are always taken in this order
_order = itertools.count()
#: every live container, so a forked child can free the locks other threads held
_live: weakref.WeakSet = weakref.WeakSet()


#: value types that live on an accelerator, each with the function bringing one back to the host
#: as its Type holds values (an ndarray, a Generator). A backend that keeps shared values on its
#: devices between calls registers its array types here (arignote.link.jax does); empty else.
device_types: dict[type, Callable[[Any], Any]] = {}


def register_device_type(cls: type, to_host: Callable[[Any], Any]) -> None:
    """Values of ``cls`` live on a device; ``to_host(value)`` is the host value they stand for.

    Shared variables may then hold such values between calls of the backend that made them:
    ``get_value`` returns ``to_host(value)``, and a function of another backend converts
    them (:func:`host_values_in`) before it reads them.
    """
    device_types[cls] = to_host


def host_value(value: Any) -> Any:
    """``value``, brought back to the host when it lives on a device (else itself)."""
    if device_types:
        to_host = device_types.get(type(value))
        if to_host is not None:
            return to_host(value)
    return value


def host_values_in(cells: list[list]) -> None:
    """Replace, in each one-element cell, a value that lives on a device by its host value."""
    for cell in cells:
        to_host = device_types.get(type(cell[0]))
        if to_host is not None:
            cell[0] = to_host(cell[0])


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

    def lock_label(self) -> str:
        """How messages about this container's lock name it."""
        return (
            f"the lock of shared variable {self.name!r}"
            if self.name
            else "the lock of an unnamed shared variable"
        )

    def acquire(self) -> None:
        """Take :attr:`lock` (for ``get_value``/``set_value``): at once if it is free,
        else by :func:`wait_for`."""
        lock = self.lock
        if not lock.acquire(False):
            wait_for(lock, self.lock_label(), held_by_this_thread(), "reading or setting a shared value")

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
        if device_types:  # a value on a device is pickled (and copied) as its host value
            state["storage"] = [host_value(self.storage[0])]
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._init_lock()

    def __str__(self) -> str:
        return f"<{self.storage[0]!r}>"

    __repr__ = __str__


class lock_containers:
    """``with lock_containers(containers):`` holds their locks (taken in the global
    order, each once), so several values can be read or set as one step. While the block
    runs, the thread is known to hold them (a compiled call made inside waits for its
    own locks with deadlock detection, see :func:`wait_for`)."""

    __slots__ = ("_held", "_locks")

    def __init__(self, containers: Any):
        unique = {id(c): c for c in containers}
        ordered = sorted(unique.values(), key=lambda c: c.order)
        self._locks = [c.lock for c in ordered]
        self._held = {c.lock: c.lock_label() for c in ordered}

    def __enter__(self) -> None:
        taken: dict = {}
        try:
            for lock, label in self._held.items():
                if not lock.acquire(False):
                    wait_for(lock, label, {**held_by_this_thread(), **taken}, "entering locked(...)")
                taken[lock] = label
        except BaseException:
            for lock in reversed(list(taken)):
                lock.release()
            raise
        stack = getattr(_tls, "held", None)
        if stack is None:
            stack = _tls.held = []
        stack.append(self._held)

    def __exit__(self, *exc: Any) -> None:
        stack = _tls.held
        for k in range(len(stack) - 1, -1, -1):
            if stack[k] is self._held:
                del stack[k]
                break
        for lock in reversed(self._locks):
            lock.release()


# -- waiting with deadlock detection --------------------------------------------------------


class DeadlockError(RuntimeError):
    """A thread would wait forever for a lock: it waits for a lock held by a thread that
    (through others, maybe) waits for a lock it holds. Raised instead of waiting."""


#: per thread: ``held``, the ``{lock: label}`` of each ``locked(...)`` block it is inside
_tls = threading.local()
#: functions returning ``{lock: label}`` of more locks this thread holds (the compile
#: layer adds the locks of the compiled calls running on the thread)
held_providers: list[Callable[[], dict]] = []
#: the threads waiting for a lock: ``{thread id: (lock, {lock: label} held, label of the
#: lock, what the thread is doing, thread name)}``; changed under ``_waiting_lock``
_waiting: dict[int, tuple] = {}
_waiting_lock = threading.Lock()


def held_in_locked_blocks() -> dict:
    """``{lock: label}`` of the container locks the calling thread holds through the
    ``locked(...)`` blocks it is inside."""
    held: dict = {}
    for block in getattr(_tls, "held", ()):
        held.update(block)
    return held


def held_by_this_thread() -> dict:
    """``{lock: label}`` of the container and function locks the calling thread holds
    through ``locked(...)`` blocks and compiled calls running on it."""
    held = held_in_locked_blocks()
    for provider in held_providers:
        held.update(provider())
    return held


def wait_for(lock: Any, label: str, held: dict, doing: str) -> None:
    """Take ``lock`` (just found taken) for the calling thread, which holds ``held``
    (``{lock: label}``), unless the wait would close a cycle of threads each waiting
    for a lock the next holds: then raise :class:`DeadlockError` (``label`` names the
    lock, ``doing`` what the thread is doing, for the message).

    While it waits, the thread is registered with what it waits for and holds. Of the
    threads forming a cycle, the last to start waiting sees the others registered (the
    check and the registration are one step), so exactly one of them raises; a thread
    registered waits for its lock, so what it holds cannot change meanwhile, which makes
    a false alarm impossible."""
    me = threading.get_ident()
    with _waiting_lock:
        cycle = _cycle(me, lock, held)
        if cycle is not None:
            raise DeadlockError(_deadlock_message(label, doing, cycle))
        _waiting[me] = (lock, held, label, doing, threading.current_thread().name)
    try:
        lock.acquire()
    finally:
        with _waiting_lock:
            _waiting.pop(me, None)


def _cycle(me: int, lock: Any, held: dict) -> list[tuple] | None:
    """The chain of waiting threads from the holder of ``lock`` back to a thread waiting
    for a lock in ``held`` (``[(thread entry, label of the lock it holds that the
    previous one waits for), ...]``), or None when the chain ends at a thread that is
    not waiting (it will release its locks)."""
    chain: list[tuple] = []
    want, seen = lock, set()
    while True:
        holder = next((t for t, entry in _waiting.items() if t != me and want in entry[1]), None)
        if holder is None or holder in seen:
            return None
        seen.add(holder)
        entry = _waiting[holder]
        chain.append((entry, entry[1][want]))
        want = entry[0]
        if want in held:
            return chain


def _deadlock_message(label: str, doing: str, chain: list[tuple]) -> str:
    me = threading.current_thread().name
    steps = [f"thread {me!r} ({doing}) needs {label}, held by"]
    for k, ((_, _, their_label, their_doing, name), _) in enumerate(chain):
        last = k == len(chain) - 1
        steps.append(
            f"thread {name!r}, which ({their_doing}) waits for {their_label}, held by"
            + (f" thread {me!r}." if last else "")
        )
    return (
        "Deadlock avoided: " + " ".join(steps) + " Calls nested in opposite orders on two threads "
        "(a function called from inside another's call, by a Python Op's perform or a "
        "callback, or inside `with locked(...)`) would wait for each other forever, so this "
        "call is refused and changes nothing. Make the nested calls in one order on every "
        "thread, or take the outer locks first (`with locked(a, b):`)."
    )


def _after_fork_in_child() -> None:
    """In a forked child only the forking thread survives: the locks other threads held
    would stay locked forever. Free them (those the forking thread holds it releases)."""
    global _waiting_lock
    for container in list(_live):
        lock = container.lock
        if not lock._is_owned():
            lock._at_fork_reinit()
    _waiting.clear()  # the waiting threads do not exist in the child
    _waiting_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
