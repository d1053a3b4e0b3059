"""The errors DebugMode raises: each names the node, the values and where the node was made."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from arignote.compile.debug.describe import _difference, _indent, _inputs_lines, _site, _summary, _var_label
from arignote.graph.basic import Apply, Variable

__all__ = [
    "BadDestroyMap",
    "BadOptimization",
    "BadThunkOutput",
    "BadViewMap",
    "DebugModeError",
    "InvalidValueError",
    "StochasticOrder",
]


def _rebuild_error(cls: type, message: str, state: dict) -> Exception:
    err = Exception.__new__(cls)
    Exception.__init__(err, message)
    err.__dict__.update(state)
    return err


class DebugModeError(Exception):
    """Base class of the errors DebugMode raises: something broke the Op contract."""

    def __reduce__(self) -> tuple:
        return (_rebuild_error, (type(self), str(self), dict(self.__dict__)))


class BadThunkOutput(DebugModeError):
    """Two runs of the same node on equal inputs gave different outputs: the function's
    thunk and ``perform``/``debug_perform`` disagree, or ``perform`` is not deterministic,
    or it depends on what was preallocated in its output cells.

    ``r`` is the output concerned, ``val1``/``val2`` the values ``thunk1``/``thunk2``
    (descriptions of the two runs) computed; ``inputs_val`` the input values.
    """

    def __init__(
        self, r: Variable, thunk1: str, val1: Any, thunk2: str, val2: Any, inputs_val: Sequence[Any] = ()
    ):
        self.r = r
        self.thunk1 = thunk1
        self.val1 = val1
        self.thunk2 = thunk2
        self.val2 = val2
        self.inputs_val = list(inputs_val)
        node = r.owner
        lines = [
            f"BadThunkOutput: {_var_label(r)} differs between two runs of the node on equal inputs",
            f"  output Type: {r.type}",
            f"  {thunk1}:",
            f"      {_summary(val1)}",
            f"  {thunk2}:",
            f"      {_summary(val2)}",
            f"  difference: {_difference(val1, val2)}",
        ]
        if node is not None:
            lines.append("  inputs:")
            lines += _inputs_lines(node, self.inputs_val or None)
            lines.append(f"  node created at: {_site(node)}")
        lines.append(
            "  perform must be determined by its inputs alone (not by earlier calls, randomness "
            "or what is preallocated in output_storage), and debug_perform / make_thunk must "
            "compute what perform computes."
        )
        super().__init__("\n".join(lines))

    def offending_op(self) -> type:
        """The class of the Op whose runs disagreed."""
        return type(self.r.owner.op)


class BadOptimization(DebugModeError):
    """A rewrite replaced a variable with one that takes a different value, so the
    rewritten graph does not compute what the user's graph computes.

    ``old_r``: the replaced variable; ``new_r``: what replaced it; ``old_r_val`` /
    ``new_r_val``: their values; ``reason``: the rewrite(s) responsible (a name, or a
    sequence of names applied one after the other); ``old_graph`` / ``new_graph``: the two
    graphs as text. ``original_r``: the variable of the graph as written that ``old_r``
    stands for, when a chain of rewrites led to it; ``output_idx``: set when the mismatch
    was found on an output of the function rather than on one replacement. A single string
    argument is the whole message.
    """

    def __init__(
        self,
        old_r: Any,
        new_r: Variable | None = None,
        old_r_val: Any = None,
        new_r_val: Any = None,
        reason: Any = None,
        old_graph: str | None = None,
        new_graph: str | None = None,
        original_r: Variable | None = None,
        output_idx: int | None = None,
    ):
        self.old_r = old_r
        self.new_r = new_r
        self.old_r_val = old_r_val
        self.new_r_val = new_r_val
        self.reason = reason
        self.old_graph = old_graph or ""
        self.new_graph = new_graph or ""
        self.original_r = original_r if original_r is not None else old_r
        self.output_idx = output_idx
        if isinstance(old_r, str) and new_r is None:
            super().__init__(old_r)
            return

        def computed(var: Any) -> str:
            owner = getattr(var, "owner", None)
            return f"{var} (computed by {owner})" if owner is not None else f"{var}"

        if isinstance(reason, (list, tuple)):
            names = " then ".join(repr(str(r)) for r in reason)
            rewrites = f"the rewrites {names}" if len(reason) > 1 else f"the rewrite {names}"
        else:
            rewrites = f"the rewrite {str(reason)!r}"
        if output_idx is not None:
            first = (
                f"BadOptimization: output {output_idx} of the rewritten graph, {computed(new_r)}, differs "
                f"from output {output_idx} of the graph as written, {computed(old_r)} "
                f"(rewrites applied: {reason or 'none recorded'})"
            )
        else:
            first = (
                f"BadOptimization: {rewrites} replaced {computed(old_r)} with {computed(new_r)}, "
                "and the two take different values"
            )
        lines = [first]
        if self.original_r is not old_r:
            lines.append(f"  ({old_r} stands for {computed(self.original_r)} of the graph as written)")
        new_type = getattr(new_r, "type", None)
        lines += [
            f"  Type: {getattr(old_r, 'type', '?')}"
            + (
                f" (replaced by {new_type})"
                if new_type is not None and new_type != getattr(old_r, "type", None)
                else ""
            ),
            "  value in the graph as written (run through perform):",
            f"      {_summary(old_r_val)}",
            "  value in the rewritten graph:",
            f"      {_summary(new_r_val)}",
            f"  difference: {_difference(old_r_val, new_r_val)}",
        ]
        if self.old_graph:
            lines += ["  graph as written:", _indent(self.old_graph)]
        if self.new_graph:
            lines += ["  rewritten graph:", _indent(self.new_graph)]
        lines.append(f"  node created at: {_site(getattr(self.original_r, 'owner', None))}")
        super().__init__("\n".join(lines))


class BadDestroyMap(DebugModeError):
    """A node changed an input that its Op does not declare in ``destroy_map``.

    ``node``: the node; ``idx``: the input index; ``old_val``/``new_val``: the input's value
    before and after; ``perform``: which run of the node changed it.
    """

    def __init__(self, node: Apply, idx: int, old_val: Any, new_val: Any, perform: str):
        self.node = node
        self.idx = idx
        self.old_val = old_val
        self.new_val = new_val
        self.perform = perform
        var = node.inputs[idx]
        destroy_map = getattr(node.op, "destroy_map", None) or {}
        lines = [
            f"BadDestroyMap: node {node} modified its input {idx} ({var}), but its Op declares "
            f"destroy_map={destroy_map} (input {idx} is not in it)",
            f"  modified by: {perform}",
            f"  input {idx} Type: {var.type}",
            f"  input {idx} before the node ran (expected unchanged): {_summary(old_val)}",
            f"  input {idx} after the node ran: {_summary(new_val)}",
            f"  change: {_difference(old_val, new_val)}",
            f"  node created at: {_site(node)}",
            f"  An Op that overwrites an input must declare it (destroy_map = {{output: [{idx}]}}); "
            "otherwise compute into a new array (copy the input first).",
        ]
        super().__init__("\n".join(lines))


class BadViewMap(DebugModeError):
    """An output of a node shares memory with an input (``in_alias_idx``) or another output
    (``out_alias_idx``) without the Op declaring it in ``view_map``/``destroy_map``."""

    def __init__(
        self,
        node: Apply,
        output_idx: int,
        out_storage: Any,
        in_alias_idx: Sequence[int] | None = None,
        out_alias_idx: Sequence[int] | None = None,
        perform: str | None = None,
    ):
        self.node = node
        self.output_idx = output_idx
        self.out_storage = out_storage
        self.in_alias_idx = list(in_alias_idx or [])
        self.out_alias_idx = list(out_alias_idx or [])
        self.perform = perform
        op = node.op
        view_map = getattr(op, "view_map", None) or {}
        destroy_map = getattr(op, "destroy_map", None) or {}
        out = node.outputs[output_idx]
        what = []
        if self.in_alias_idx:
            what.append("input(s) " + ", ".join(f"{i} ({node.inputs[i]})" for i in self.in_alias_idx))
        if self.out_alias_idx:
            what.append("output(s) " + ", ".join(f"{i} ({node.outputs[i]})" for i in self.out_alias_idx))
        lines = [
            f"BadViewMap: output {output_idx} ({out}) of node {node} shares memory with "
            f"{' and '.join(what)}, but its Op declares view_map={view_map}, destroy_map={destroy_map}",
        ]
        if perform:
            lines.append(f"  computed by: {perform}")
        lines += [
            f"  output {output_idx}: {_summary(out_storage)}",
            f"  node created at: {_site(node)}",
        ]
        if self.in_alias_idx:
            lines.append(
                f"  Declare view_map = {{{output_idx}: [{self.in_alias_idx[0]}]}} if the output is meant to "
                "be a view of that input; otherwise return a copy."
            )
        else:
            lines.append("  Outputs of one node must not share memory unless each is a declared view.")
        super().__init__("\n".join(lines))


class StochasticOrder(DebugModeError):
    """Rewriting the same graph several times gave different graphs (a rewrite depends on
    memory addresses, set or dict order, or randomness)."""


class InvalidValueError(DebugModeError):
    """A node produced a value its output's Type rejects (wrong dtype, wrong number of
    dimensions, a static shape that does not match, not finite with ``check_isfinite``).

    ``r``: the variable; ``v``: the value; ``client_node``: the node that computed it;
    ``hint``/``specific_hint``: why it is invalid. A single string argument is the whole
    message.
    """

    def __init__(
        self,
        r: Any,
        v: Any = None,
        client_node: Apply | None = None,
        hint: str = "none",
        specific_hint: str = "none",
    ):
        self.r = r
        self.v = v
        self.client_node = client_node
        self.hint = hint
        self.specific_hint = specific_hint
        if isinstance(r, str) and v is None and client_node is None:
            super().__init__(r)
            return
        node = client_node if client_node is not None else getattr(r, "owner", None)
        lines = [
            f"InvalidValueError: {_var_label(r)} is not a valid value of its Type {r.type}: {hint}",
            f"  value: {_summary(v)}",
        ]
        if specific_hint and specific_hint != "none":
            lines.append(f"  {specific_hint}")
        lines.append(f"  node created at: {_site(node)}")
        super().__init__("\n".join(lines))
