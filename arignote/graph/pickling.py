"""Pickling (and deep-copying) graphs of any depth without recursion.

Pickle walks an object graph depth first: a Variable's ``owner`` leads to an Apply, whose
``inputs`` lead to Variables, and so on down to the graph's roots, several C frames per
level. A chain of a few hundred nodes is enough for a ``RecursionError``.

The cure here is an *order hint*. When a Variable (or an Apply) with unpickled ancestors is
pickled, its state starts with a flat list of every ancestor Apply in topological order
(inputs before the nodes that use them), then its own fields. Pickle memoises an object
before it saves the object's state, so when it walks that list each Apply's inputs are
already in the memo (references of a few bytes) and its outputs are saved one level deep:
the depth of the pickler's recursion no longer depends on the depth of the graph. The
table is built once per pickle: while a table is alive its nodes are registered (per
thread), and a Variable or Apply that a live table already covers adds no hint. (A table
holds its nodes, so a registered id always names the node it was registered for, and the
table's entries are dropped as it is freed, before its nodes can be: no id goes stale.) Nothing
else changes: objects keep their identity within one pickle (a Constant or shared variable
used by many nodes, an intermediate Variable pickled both alone and inside a
FunctionGraph, are one object after loading), and names, tags and traces come back as
they were. Unpickling is a loop by nature (pickle's virtual machine does not recurse), and
``copy.deepcopy`` follows the same path, so it is iterative too.

The hint is only an ordering: if it is missing or stale (a graph changed while a table was
alive), pickling is still correct, only deeper.
"""

from __future__ import annotations

import copyreg
import gc
import threading
import weakref
from collections.abc import Iterable
from typing import Any

__all__ = ["ORDER_KEY", "new_object", "node_order_hint", "order_hint", "variables_order_hint"]

ORDER_KEY = "__pickle_order__"  # the key of the hint in a pickled Variable's state dict

_local = threading.local()


def _live() -> dict:
    """``{id(apply): weakref to the live table that holds it}`` of this thread."""
    live = getattr(_local, "live", None)
    if live is None:
        live = _local.live = {}
    return live


class _Order(list):
    """A topologically ordered list of Applies, registered while it is alive. It pickles
    (and deep-copies) as a list made empty and memoised before its items, so an item may
    refer back to it."""

    __slots__ = ("__weakref__",)

    def __reduce_ex__(self, protocol: int) -> Any:
        return (_loading_order, (len(self),), None, iter(self))


# Pickling or loading a big graph allocates several objects per node and frees none: the
# cyclic collector, triggered by each burst, sweeps the whole growing heap again and again
# (a 100,000-node graph loaded 5x slower). While a big table is alive (the pickler's or
# unpickler's memo holds it for exactly one dump or load) the collector is paused.
_GC_PAUSE_MIN = 1000
_gc_lock = threading.RLock()
_gc_pauses = [0, False]  # [active pauses, whether the collector was on before the first]
_gc_refs: dict = {}  # id -> weakref (a table is unhashable)


def _pause_gc_while_alive(table: _Order) -> None:
    with _gc_lock:
        if _gc_pauses[0] == 0:
            _gc_pauses[1] = gc.isenabled()
            gc.disable()
        _gc_pauses[0] += 1
    ref = weakref.ref(table, _resume_gc)
    _gc_refs[id(ref)] = ref


def _resume_gc(ref: Any) -> None:
    _gc_refs.pop(id(ref), None)
    with _gc_lock:
        _gc_pauses[0] -= 1
        if _gc_pauses[0] == 0 and _gc_pauses[1]:
            gc.enable()


def _loading_order(n: int) -> _Order:
    """The empty table that a load fills (``n`` items to come)."""
    table = _Order()
    if n >= _GC_PAUSE_MIN:
        _pause_gc_while_alive(table)
    return table


def _unregister(ids: list, live: dict) -> Any:
    def forget(ref: Any) -> None:
        for i in ids:
            if live.get(i) is ref:
                del live[i]

    return forget


def _covered(node: Any, live: dict) -> bool:
    ref = live.get(id(node))
    return ref is not None and ref() is not None


def order_hint(nodes: Iterable[Any]) -> list | None:
    """The Applies that ``nodes`` (Applies) depend on, themselves included, in
    topological order, less those a live table already covers; ``None`` when nothing is
    left. The list is registered for as long as it lives (the pickler's memo holds it)."""
    live = _live()
    order: list = []
    done: set = set()
    for start in nodes:
        if id(start) in done or _covered(start, live):
            continue
        stack = [start]
        while stack:
            node = stack[-1]
            if id(node) in done:
                stack.pop()
                continue
            pushed = False
            for inp in node.inputs:
                owner = inp.owner
                if owner is not None and id(owner) not in done and not _covered(owner, live):
                    stack.append(owner)
                    pushed = True
            if not pushed:
                stack.pop()
                done.add(id(node))
                order.append(node)
    if len(order) < 2:  # one node needs no table: its inputs are covered or roots
        return None
    table = _Order(order)
    if len(order) >= _GC_PAUSE_MIN:
        _pause_gc_while_alive(table)
    ids = [id(n) for n in order]
    ref = weakref.ref(table, _unregister(ids, live))
    for i in ids:
        live[i] = ref
    return table


def node_order_hint(node: Any) -> list | None:
    """:func:`order_hint` of one Apply; the common case, a node that a live table
    already covers, costs two lookups."""
    live = getattr(_local, "live", None)
    if live is not None:
        ref = live.get(id(node))
        if ref is not None and ref() is not None:
            return None
    return order_hint((node,))


def variables_order_hint(variables: Iterable[Any]) -> list | None:
    """:func:`order_hint` for the owners of ``variables`` (roots are skipped)."""
    return order_hint(v.owner for v in variables if v.owner is not None)


def _reconstruct(cls: type) -> Any:
    """An empty instance of ``cls`` (protocols 0 and 1; 2+ use ``copyreg.__newobj__``)."""
    return cls.__new__(cls)


def new_object(protocol: int) -> Any:
    """The callable a reduce value uses to make an empty instance under ``protocol``."""
    return copyreg.__newobj__ if protocol >= 2 else _reconstruct
