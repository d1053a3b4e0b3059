"""``rebuild_collect_shared``: the user's graph cloned for compiling, with ``givens``
applied, the shared variables it reads collected and the updates checked."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from arignote.graph.basic import Constant, Variable, clone_get_equiv
from arignote.graph.shared import SharedVariable
from arignote.graph.traversal import graph_inputs

__all__ = ["UnusedInputError", "rebuild_collect_shared"]


class UnusedInputError(Exception):
    """An explicit input of ``function`` is not needed to compute any output."""


def _pairs(mapping: Any, what: str) -> list[tuple[Any, Any]]:
    if mapping is None:
        return []
    if isinstance(mapping, Mapping):
        return list(mapping.items())
    try:
        pairs = [tuple(p) for p in mapping]
    except TypeError:
        raise TypeError(f"{what} must be a dict or a list of (key, value) pairs, got {mapping!r}") from None
    if any(len(p) != 2 for p in pairs):
        raise TypeError(f"{what} must be a dict or a list of (key, value) pairs, got {mapping!r}")
    return pairs


def _check_updates(updates: Any) -> list[tuple[SharedVariable, Variable]]:
    out = []
    seen: set = set()
    for var, expr in _pairs(updates, "updates"):
        if not isinstance(var, SharedVariable):
            raise TypeError(
                f"updates keys must be shared variables, got {var!r}; an update assigns a new value "
                "to a shared variable after each call"
            )
        if var in seen:
            raise ValueError(f"{var} is updated twice in `updates`")
        seen.add(var)
        try:
            expr = var.type.filter_variable(expr, allow_convert=True)
        except TypeError as err:
            # the Type's message says what differs and what would fit (a cast only if the
            # dtype differs)
            raise TypeError(
                f"The update of shared variable {var} (Type {var.type}) has Type "
                f"{getattr(expr, 'type', type(expr).__name__)}: {err}"
            ) from None
        out.append((var, expr))
    return out


def rebuild_collect_shared(
    outputs: Sequence[Variable],
    givens: Any = None,
    updates: Any = None,
    no_default_updates: bool | Iterable[SharedVariable] = False,
    rebuild_strict: bool = True,
) -> tuple[list[Variable], list[tuple[SharedVariable, Variable]], list[SharedVariable]]:
    """Apply ``givens`` to ``outputs`` and ``updates``; collect shared inputs and updates.

    Returns ``(new outputs, [(shared, new update)], shared variables used)``; default
    updates of the shared variables used are added unless ``no_default_updates`` (True,
    or a list of shared variables to skip).
    """
    memo: dict = {}
    for old, new in _pairs(givens, "givens"):
        if not isinstance(old, Variable):
            raise TypeError(f"givens keys must be Variables, got {old!r}")
        if isinstance(old, Constant):
            raise TypeError(f"givens cannot replace the Constant {old}")
        if old in memo:
            raise ValueError(f"{old} appears twice in givens")
        if not rebuild_strict and isinstance(new, Variable):
            memo[old] = new  # any Type: the nodes using it are rebuilt (make_node)
            continue
        try:
            memo[old] = old.type.filter_variable(new, allow_convert=True)
        except TypeError as err:
            raise TypeError(
                f"givens: cannot use {new!r} in place of {old} (Type {old.type}): {err}"
            ) from None
    update_pairs = _check_updates(updates)

    def rebuild(vars_: list[Variable]) -> list[Variable]:
        if not memo:
            return list(vars_)
        equiv = clone_get_equiv(
            [], vars_, copy_inputs=False, copy_orphans=False, memo=dict(memo), strict=rebuild_strict
        )
        return [equiv[v] for v in vars_]

    new_outputs = rebuild(list(outputs))
    new_updates = list(zip([v for v, _ in update_pairs], rebuild([e for _, e in update_pairs])))
    skip_defaults: set = set()
    if no_default_updates is True:
        skip_defaults = {None}
    elif no_default_updates:
        skip_defaults = set(no_default_updates)
    shared: list[SharedVariable] = []
    seen: set = set()
    pending = list(new_outputs) + [e for _, e in new_updates]
    updated = {v for v, _ in new_updates}
    while pending:
        for var in graph_inputs(pending):
            if isinstance(var, SharedVariable) and var not in seen:
                seen.add(var)
                shared.append(var)
        pending = []
        for var in shared:
            default = var.default_update
            if default is None or var in updated or None in skip_defaults or var in skip_defaults:
                continue
            expr = _check_updates([(var, default)])[0][1]
            expr = rebuild([expr])[0]
            new_updates.append((var, expr))
            updated.add(var)
            pending.append(expr)
    for var, _ in new_updates:
        if var not in seen:
            seen.add(var)
            shared.append(var)
    return new_outputs, new_updates, shared
