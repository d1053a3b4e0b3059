"""Evaluate a graph by running each node's thunk (the Python backend's:
:func:`~arignote.link.python.python_thunk`, by default ``Op.make_thunk`` / ``perform``) in
order.

This is the seeds' storage-cell protocol in its plainest form: one storage cell per
Variable, one compute flag per Variable, thunks run in topological order, and
intermediate values are dropped as soon as their last user has run. ``Variable.eval``
uses it; compiled functions build on the same protocol.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from arignote import printing
from arignote.graph.basic import Apply, Constant, Variable
from arignote.graph.traversal import ancestors, io_toposort
from arignote.graph.utils import MissingInputError, format_site
from arignote.link.python import python_thunk

__all__ = ["describe_node_failure", "evaluate", "resolve_inputs"]


def resolve_inputs(outputs: Sequence[Variable], givens: Mapping[Any, Any]) -> dict[Variable, Any]:
    by_name: dict[str, list[Variable]] | None = None
    resolved: dict[Variable, Any] = {}
    for key, value in givens.items():
        if isinstance(key, str):
            if by_name is None:
                # any named Variable of the graph, as in PyTensor: an intermediate one cuts
                # the graph there
                by_name = {}
                for v in ancestors(outputs):
                    if v.name is not None:
                        by_name.setdefault(v.name, []).append(v)
            matches = by_name.get(key, [])
            if len(matches) != 1:
                what = "no variable" if not matches else f"{len(matches)} variables"
                raise ValueError(f"eval: {what} of the graph named {key!r}; pass the Variable itself")
            key = matches[0]
        elif not isinstance(key, Variable):
            raise TypeError(f"eval: keys must be Variables or input names, got {type(key).__name__} {key!r}")
        try:
            resolved[key] = key.type.filter(value)
        except (TypeError, ValueError) as err:
            msg = f"Bad value for input {key} (expected Type {key.type}): {err}"
            try:
                new = type(err)(msg)
            except Exception:  # an exception class that needs other arguments
                new = None
            if new is None:
                err.add_note(msg)
                raise
            raise new from err
    return resolved


def describe_node_failure(node: Apply, values: Sequence[Any]) -> str:
    """The text added to an error raised while computing ``node``."""
    lines = [f"Apply node that caused the error: {node}"]
    for i, (var, value) in enumerate(zip(node.inputs, values)):
        shape = getattr(value, "shape", None)
        dtype = getattr(value, "dtype", None)
        info = f"Type {var.type}"
        if shape is not None:
            info += f", shape {tuple(shape)}"
        if dtype is not None:
            info += f", dtype {dtype}"
        if shape is None and dtype is None:
            info += f", value of Python type {type(value).__name__}"
        lines.append(f"  input {i} ({var}): {info}")
    lines.append("Debug print of the node (3 levels):")
    lines.extend(_short_dprint(node))
    lines.append(f"Node created at: {format_site(node.trace)}")
    return "\n".join(lines)


#: At most this many lines of the node's debug print go into an error note.
_DPRINT_MAX_LINES = 20


def _short_dprint(node: Apply) -> list[str]:
    """The node and two levels of its inputs, as ``debugprint`` shows them (with Types),
    cut to :data:`_DPRINT_MAX_LINES` lines. Never raises: it only decorates an error."""
    try:
        text = printing.debugprint(node, depth=3, print_type=True, file="str", print_inner_graphs=False)
    except Exception as err:  # a printer bug must not hide the user's error
        return [f"  (debugprint failed: {type(err).__name__}: {err})"]
    lines = ["  " + line for line in text.rstrip("\n").splitlines()]
    if len(lines) > _DPRINT_MAX_LINES:
        cut = len(lines) - _DPRINT_MAX_LINES + 1
        lines = [*lines[: _DPRINT_MAX_LINES - 1], f"  ... ({cut} more lines)"]
    return lines


def evaluate(outputs: Sequence[Variable], givens: Mapping[Any, Any], **kwargs: Any) -> list[Any]:
    """Values of ``outputs`` given ``{Variable or Variable name: value}``.

    Given Variables may be intermediate (also by name): the graph is cut there, and a
    given value wins over what the graph would compute. A root that is neither
    given nor a constant is a :class:`~arignote.graph.utils.MissingInputError`. An error
    inside a node keeps its type and gains a note naming the node, its inputs' Types,
    shapes and dtypes, and where the user created it.
    """
    if kwargs:
        raise TypeError(f"eval: unexpected keyword arguments {sorted(kwargs)}")
    outputs = list(outputs)
    values = resolve_inputs(outputs, givens)
    nodes = io_toposort(list(values), outputs)
    storage: dict[Variable, list] = {}
    computed: dict[Variable, list] = {}
    remaining: dict[Variable, int] = {}
    for var, value in values.items():
        storage[var] = [value]
        computed[var] = [True]
    for node in nodes:
        for inp in node.inputs:
            remaining[inp] = remaining.get(inp, 0) + 1
            if inp not in storage:
                storage[inp] = [_root_value(inp, node)]
                computed[inp] = [True]
        for out in node.outputs:
            if out not in values:
                storage[out] = [None]
                computed[out] = [False]
    for out in outputs:
        if out not in storage:
            storage[out] = [_root_value(out, None)]
    keep = set(outputs) | set(values)
    for node in nodes:
        if any(out in values for out in node.outputs):
            # Some outputs of this node were given: the given values must win, so the
            # node writes those outputs into scratch cells of its own.
            node_storage = {v: storage[v] for v in node.inputs}
            node_computed = {v: computed[v] for v in node.inputs}
            for out in node.outputs:
                given = out in values
                node_storage[out] = [None] if given else storage[out]
                node_computed[out] = [False] if given else computed[out]
            thunk = python_thunk(node.op, node, node_storage, node_computed, [])
        else:
            thunk = python_thunk(node.op, node, storage, computed, [])
        try:
            thunk()
        except Exception as err:
            err.add_note(describe_node_failure(node, [storage[i][0] for i in node.inputs]))
            raise
        for i, out in enumerate(node.outputs):
            # an output that is wanted or used later must have been set
            if not computed[out][0] or (storage[out][0] is None and (out in keep or remaining.get(out))):
                raise ValueError(f"{node.op}.perform did not set output {i} of {node}")
        for inp in node.inputs:
            remaining[inp] -= 1
            if remaining[inp] == 0 and inp not in keep:
                storage[inp][0] = None
    return [storage[o][0] for o in outputs]


def _root_value(var: Variable, user: Apply | None) -> Any:
    if isinstance(var, Constant):
        return var.data
    if var.owner is not None:  # pragma: no cover - io_toposort reaches every owner
        raise AssertionError(f"{var} should have been computed")
    used = f" (used by {user}, created at {format_site(user.trace)})" if user is not None else ""
    raise MissingInputError(
        f"eval: no value given for input {var} of Type {var.type}{used}; "
        "pass it in the dict, e.g. var.eval({x: value})",
        variable=var,
    )
