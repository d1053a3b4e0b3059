"""DebugMode: a compilation mode that checks every node against the Op contract.

A function compiled with ``mode="DebugMode"`` (or ``mode=DebugMode()``) computes the
same values as under ``FAST_RUN``, but after each node runs it checks that

* every output is a valid value of its Type (``Type.filter(value, strict=True)``), and
  finite unless ``check_isfinite=False`` (:class:`InvalidValueError`);
* no input changed that the Op does not declare in ``destroy_map``: inputs are compared
  with copies taken before the node ran (:class:`BadDestroyMap`);
* no output shares memory with an input (or another output) unless ``view_map`` /
  ``destroy_map`` says so (``Type.may_share_memory``; :class:`BadViewMap`);
* ``perform`` (or ``debug_perform`` when the Op defines one), re-run twice on copies of
  the inputs, gives what the function's own thunk gave, both times
  (``Type.values_eq_approx``; :class:`BadThunkOutput`), also with output cells
  preallocated in the ways ``check_preallocated_output`` lists;

and after each call that the rewritten graph computed what the graph as written computes
(run through ``perform`` on copies of the inputs): every variable that a rewrite put in
place of another must take that variable's value (even when a later rewrite replaced it
in turn: it is then recomputed from its inputs), and every output must match
(:class:`BadOptimization`; the most upstream mismatch is reported, with the chain of
rewrites that led to it). A rewrite that knowingly changes values, as a stabilisation
turning an overflow into a finite number does, says how to compare on its result:
``new_var.tag.values_eq_approx = fn`` (e.g. ``TensorType.values_eq_approx`` with
``allow_remove_inf=True``). At compile time the rewrites are also re-run
``stability_patience`` times on fresh copies of the graph, which must give the same graph
each time (:class:`StochasticOrder`).

Every error names the node (``str(node)``), the input or output concerned, the expected
and the actual value (shape, dtype, range, largest difference) and where the user created
the node.

>>> import numpy as np
>>> import arignote
>>> import arignote.tensor as pt
>>> x = pt.dvector("x")
>>> f = arignote.function([x], pt.exp(x) * 2, mode="DebugMode")
>>> f(np.zeros(2))
array([2., 2.])
>>> type(DebugMode().excluding("fusion")).__name__
'DebugMode'
"""

from __future__ import annotations

import copy
import hashlib
import reprlib
import warnings
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from numbers import Number
from typing import Any

import numpy as np

from arignote.compile.mode import Mode, RewriteQuery
from arignote.graph.basic import Apply, Constant, Variable
from arignote.graph.features import Feature
from arignote.graph.fg import FunctionGraph
from arignote.graph.op import Op
from arignote.link.vm import VM, VMLinker

__all__ = [
    "BadDestroyMap",
    "BadOptimization",
    "BadThunkOutput",
    "BadViewMap",
    "DebugLinker",
    "DebugMode",
    "DebugModeError",
    "DebugRewriteQuery",
    "InvalidValueError",
    "StochasticOrder",
]

#: the ways ``check_preallocated_output`` can fill output cells before ``perform`` runs
PREALLOCATED_KINDS = ("initial", "previous", "c_contiguous", "f_contiguous", "strided", "wrong_size")

_MISSING = object()


# ---------------------------------------------------------------------------------------
# describing values and nodes
# ---------------------------------------------------------------------------------------


def _num(x: Any) -> str:
    """A NumPy scalar as its plain Python repr (``1.5``, not ``np.float64(1.5)``)."""
    return repr(x.item()) if isinstance(x, np.generic) else repr(x)


def _summary(value: Any) -> str:
    """A one-line description of a value: type, shape, dtype, range and (small) contents."""
    if isinstance(value, np.ndarray):
        parts = [f"ndarray shape {value.shape}, dtype {value.dtype}"]
        if value.size and value.dtype.kind in "biufc":
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                if value.dtype.kind in "fc":
                    n_nan = int(np.isnan(value).sum())
                    n_inf = int(np.isinf(value).sum())
                    finite = value[np.isfinite(value)]
                    if finite.size and value.dtype.kind == "f":
                        word = "finite " if finite.size < value.size else ""
                        parts.append(f"{word}min {_num(finite.min())}, {word}max {_num(finite.max())}")
                    if n_nan:
                        parts.append(f"{n_nan} NaN")
                    if n_inf:
                        parts.append(f"{n_inf} inf")
                else:
                    parts.append(f"min {_num(value.min())}, max {_num(value.max())}")
        if value.size <= 10:
            parts.append(f"value {np.array2string(value, separator=', ')}")
        return ", ".join(parts)
    if isinstance(value, np.generic):
        return f"NumPy {value.dtype} scalar {_num(value)}"
    if value is None:
        return "None"
    return f"{type(value).__name__} {reprlib.repr(value)}"


def _difference(expected: Any, got: Any) -> str:
    """Where two values differ: dtypes, shapes, or the largest elementwise difference."""
    try:
        a, b = np.asarray(expected), np.asarray(got)
    except Exception:
        return "the values are not arrays; compare them above"
    notes = []
    if a.dtype != b.dtype:
        notes.append(f"dtypes differ ({a.dtype} expected, {b.dtype} got)")
    if a.shape != b.shape:
        notes.append(f"shapes differ ({a.shape} expected, {b.shape} got)")
        return "; ".join(notes)
    if a.dtype.kind not in "biufc" or b.dtype.kind not in "biufc":
        return "; ".join(notes) or "the values differ"
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kind = np.result_type(a, b, np.float64)
        af, bf = a.astype(kind), b.astype(kind)
        same = (af == bf) | (np.isnan(af) & np.isnan(bf))
        n_diff = int((~same).sum())
        if not n_diff:
            notes.append("no element differs (a Type's values_eq_approx may be too strict)")
            return "; ".join(notes)
        absdiff = np.abs(af - bf)
        absdiff[same] = 0
        finite = np.where(np.isfinite(absdiff), absdiff, -1.0)
        k = int(np.argmax(finite)) if (finite >= 0).any() else int(np.argmax(~same))
        where = np.unravel_index(k, a.shape) if a.ndim else ()
        mad = absdiff.flat[k]
        rel = mad / np.abs(af.flat[k]) if af.flat[k] != 0 else np.inf
        notes.append(
            f"max abs diff {float(np.real(mad)):.6g} at index {tuple(int(i) for i in where)} "
            f"(expected {_num(a.flat[k])}, got {_num(b.flat[k])}; rel diff {float(np.real(rel)):.3g}); "
            f"{n_diff} of {a.size} element(s) differ"
        )
    return "; ".join(notes)


def _site(node: Apply | None) -> str:
    if node is None:
        return "<not created by an Apply node>"
    try:
        return node.creation_site
    except Exception:  # pragma: no cover - defensive: a foreign Apply without a trace
        return "<unknown location>"


def _indent(text: str, prefix: str = "    ") -> str:
    return "\n".join(prefix + line for line in str(text).splitlines())


def _var_label(var: Variable) -> str:
    node = var.owner
    if node is not None and var.index is not None:
        return f"output {var.index} ({var}) of node {node}"
    return f"variable {var}"


def _inputs_lines(node: Apply, values: Sequence[Any] | None) -> list[str]:
    lines = []
    for i, var in enumerate(node.inputs):
        text = f"    input {i} ({var}): Type {var.type}"
        if values is not None and i < len(values):
            text += f", {_summary(values[i])}"
        lines.append(text)
    return lines


def _graph_text(var: Variable, depth: int = 6) -> str:
    try:
        from arignote.printing import debugprint

        return str(debugprint(var, depth=depth, file="str")).rstrip()
    except Exception:
        return str(var)


# ---------------------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------------------
# comparing and copying values
# ---------------------------------------------------------------------------------------


def _copy(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return value.copy(order="K")
    if value is None or isinstance(value, (Number, str, bytes, np.generic)):
        return value
    try:
        return copy.deepcopy(value)
    except Exception:
        return value


def _is_immutable(value: Any) -> bool:
    return value is None or isinstance(value, (Number, str, bytes, np.generic, tuple, frozenset))


def _overrides(type_: Any, name: str) -> bool:
    from arignote.graph.type import Type

    fn = getattr(type(type_), name, None)
    return fn is not None and fn is not getattr(Type, name)


def _comparable(type_: Any, value: Any) -> bool:
    """Whether values of this Type can be compared meaningfully (not by identity)."""
    if isinstance(value, (np.ndarray, np.generic, Number, str, bytes)) or value is None:
        return True
    return _overrides(type_, "values_eq") or _overrides(type_, "values_eq_approx")


def _values_eq(var: Variable, a: Any, b: Any, approx: bool) -> bool | None:
    """Equality of two values of ``var``'s Type; ``None`` when it cannot be decided."""
    type_ = var.type
    if not (_comparable(type_, a) and _comparable(type_, b)):
        return None
    fn = None
    if approx:
        tag = getattr(var, "_tag", None)
        fn = getattr(tag, "values_eq_approx", None) if tag is not None else None
        if fn is None:
            fn = getattr(type_, "values_eq_approx", None)
    if fn is None:
        fn = getattr(type_, "values_eq", None)
    try:
        if fn is not None:
            return bool(fn(a, b))
    except Exception:
        pass
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        if a.dtype != b.dtype or a.shape != b.shape:
            return False
        try:
            return bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
        except TypeError:
            return bool(np.array_equal(a, b))
    if isinstance(a, (Number, str, bytes, np.generic)) and isinstance(b, (Number, str, bytes, np.generic)):
        try:
            return bool(a == b) or bool(a != a and b != b)  # NaN equals NaN here
        except Exception:
            return None
    return None


def _may_share(var: Variable, a: Any, b: Any) -> bool:
    """Whether ``a`` and ``b`` share memory: ``Type.may_share_memory``, then for two
    ndarrays an exact (bounded) check, so interleaved views of one buffer (the outputs
    of ``np.nonzero``) do not count."""
    if _is_immutable(a) or _is_immutable(b):
        return False
    try:
        maybe = bool(var.type.may_share_memory(a, b))
    except Exception:
        return False
    if maybe and isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        try:
            return bool(np.shares_memory(a, b, max_work=10_000))
        except np.exceptions.TooHardError:
            return True
    return maybe


def _garbage_like(value: np.ndarray, shape: tuple, order: str = "C") -> np.ndarray:
    out = np.empty(shape, dtype=value.dtype, order=order)
    kind = value.dtype.kind
    if kind in "fc":
        out.fill(np.nan)
    elif kind in "iu":
        out.fill(np.iinfo(value.dtype).max)
    elif kind == "b":
        out.fill(True)
    return out


def _preallocate(kind: str, value: Any, previous: Any) -> Any:
    """What ``check_preallocated_output`` puts in an output cell before ``perform`` runs."""
    if kind == "initial":
        return None
    if kind == "previous":
        return _copy(previous) if previous is not None else _MISSING
    if not isinstance(value, np.ndarray):
        return _MISSING
    if kind == "c_contiguous":
        return _garbage_like(value, value.shape)
    if kind == "f_contiguous":
        return _garbage_like(value, value.shape, order="F")
    if kind == "strided":
        if value.ndim == 0:
            return _MISSING
        big = _garbage_like(value, tuple(2 * s for s in value.shape))
        return big[tuple(slice(None, None, 2) for _ in value.shape)]
    if kind == "wrong_size":
        if value.ndim == 0:
            return _MISSING
        return _garbage_like(value, tuple(s + 1 for s in value.shape))
    raise ValueError(f"unknown preallocated output kind {kind!r}; known: {PREALLOCATED_KINDS}")


def _normalize_preallocated(spec: Any) -> tuple[str, ...]:
    if spec is None or spec == "":
        return ()
    if isinstance(spec, str):
        spec = [s for s in spec.replace(",", ":").split(":") if s]
    kinds: list[str] = []
    for item in spec:
        if item == "":
            continue
        if item == "ALL":
            kinds.extend(k for k in PREALLOCATED_KINDS if k != "initial")
            continue
        if item not in PREALLOCATED_KINDS:
            raise ValueError(
                f"check_preallocated_output: unknown kind {item!r}; known: {[*PREALLOCATED_KINDS, 'ALL']}"
            )
        kinds.append(item)
    return tuple(dict.fromkeys(k for k in kinds if k != "initial"))


# ---------------------------------------------------------------------------------------
# per-node checks
# ---------------------------------------------------------------------------------------


class _Checks:
    """The checks run after each node, with the settings of one DebugLinker."""

    def __init__(self, linker: DebugLinker):
        self.check_py_code = linker.check_py_code
        self.check_isfinite = linker.check_isfinite
        self.preallocated = linker.check_preallocated_output
        self.require_matching_strides = linker.require_matching_strides
        #: values recorded during a call, for the rewrite checks: {Variable: copy}
        self.values: dict[Variable, Any] = {}
        self.watch: set[Variable] = set()

    # -- single checks ----------------------------------------------------------------------

    def valid(self, node: Apply, outputs: Sequence[Any], label: str, finite: bool) -> None:
        for var, value in zip(node.outputs, outputs):
            try:
                var.type.filter(value, strict=True)
            except (TypeError, ValueError) as err:
                raise InvalidValueError(
                    var,
                    value,
                    node,
                    hint=f"{label} returned a value that Type.filter(value, strict=True) rejects",
                    specific_hint=f"Type.filter says: {err}",
                ) from None
            if finite and isinstance(value, (np.ndarray, np.generic)) and value.dtype.kind in "fc":
                with np.errstate(all="ignore"):
                    ok = bool(np.isfinite(value).all())
                if not ok:
                    raise InvalidValueError(
                        var,
                        value,
                        node,
                        hint=f"{label} returned non-finite values (NaN or inf)",
                        specific_hint="DebugMode(check_isfinite=False) accepts them; NanGuardMode "
                        "locates where they first appear",
                    )

    def destroyed(self, node: Apply) -> set[int]:
        dmap = getattr(node.op, "destroy_map", None) or {}
        return {i for ins in dmap.values() for i in ins}

    def unchanged(
        self, node: Apply, before: Sequence[Any], after: Sequence[Any], label: str, destroyed: set[int]
    ) -> None:
        destroyed_vars = {node.inputs[i] for i in destroyed}
        destroyed_vals = [after[i] for i in destroyed]
        for i, (var, old, new) in enumerate(zip(node.inputs, before, after)):
            if i in destroyed or var in destroyed_vars:
                continue
            if any(_may_share(var, new, d) for d in destroyed_vals):
                continue  # a view of a destroyed input changes with it
            if _values_eq(var, old, new, approx=False) is False:
                raise BadDestroyMap(node, i, old, new, label)

    def views(self, node: Apply, inputs: Sequence[Any], outputs: Sequence[Any], label: str) -> None:
        op = node.op
        vmap = getattr(op, "view_map", None) or {}
        dmap = getattr(op, "destroy_map", None) or {}
        declared = set(vmap) | set(dmap)
        for k, (out, value) in enumerate(zip(node.outputs, outputs)):
            if _is_immutable(value):
                continue
            allowed = set(vmap.get(k, ())) | set(dmap.get(k, ()))
            allowed_vals = [inputs[i] for i in allowed if i < len(inputs)]
            bad = []
            for i, inp in enumerate(inputs):
                if i in allowed or not _may_share(out, value, inp):
                    continue
                if node.inputs[i] in {node.inputs[j] for j in allowed}:
                    continue  # the same variable passed twice, once as the declared input
                if any(_may_share(out, inp, a) for a in allowed_vals):
                    continue  # this input itself overlaps the declared one
                bad.append(i)
            if bad:
                raise BadViewMap(node, k, value, in_alias_idx=bad, perform=label)
            if k in declared:
                continue
            others = [
                j
                for j, other in enumerate(outputs)
                if j != k and not _is_immutable(other) and _may_share(out, value, other)
            ]
            if others:
                raise BadViewMap(node, k, value, out_alias_idx=others, perform=label)

    def same(
        self,
        node: Apply,
        k: int,
        label1: str,
        val1: Any,
        label2: str,
        val2: Any,
        inputs: Sequence[Any],
    ) -> None:
        var = node.outputs[k]
        if _values_eq(var, val1, val2, approx=True) is False:
            raise BadThunkOutput(var, label1, val1, label2, val2, inputs)
        if (
            self.require_matching_strides
            and isinstance(val1, np.ndarray)
            and isinstance(val2, np.ndarray)
            and val1.strides != val2.strides
        ):
            msg = (
                f"{_var_label(var)}: {label1} gave strides {val1.strides}, {label2} gave {val2.strides} "
                f"(node created at: {_site(node)})"
            )
            if self.require_matching_strides > 1:
                raise BadThunkOutput(var, label1, val1, label2 + f" (strides {val2.strides})", val2, inputs)
            warnings.warn(msg, stacklevel=2)

    # -- the whole set for one node ---------------------------------------------------------

    def after_node(self, thunk: _DebugThunk, before: list[Any], outputs: list[Any]) -> None:
        node = thunk.node
        inputs_now = [c[0] for c in thunk.in_cells]
        destroyed = self.destroyed(node)
        label = thunk.label
        self.unchanged(node, before, inputs_now, label, destroyed)
        self.views(node, inputs_now, outputs, label)
        self.valid(node, outputs, label, self.check_isfinite)
        if self.check_py_code and thunk.impl is not None:
            ref = self._run_impl(thunk, before, None, "run 1", destroyed)
            for k in range(len(outputs)):
                self.same(node, k, label, outputs[k], ref[1], ref[0][k], before)
            second = self._run_impl(thunk, before, None, "run 2", destroyed)
            for k in range(len(outputs)):
                self.same(node, k, ref[1], ref[0][k], second[1], second[0][k], before)
            for kind in self.preallocated:
                cells = []
                for k, value in enumerate(ref[0]):
                    pre = _preallocate(kind, value, thunk.previous[k] if thunk.previous else None)
                    cells.append(None if pre is _MISSING else pre)
                if all(c is None for c in cells):
                    continue
                got = self._run_impl(thunk, before, cells, f"preallocated '{kind}' output cells", destroyed)
                for k in range(len(outputs)):
                    self.same(node, k, ref[1], ref[0][k], got[1], got[0][k], before)
        if self.preallocated:
            thunk.previous = [_copy(v) for v in outputs]
        watch = self.watch
        if watch:
            for var, value in zip(node.outputs, outputs):
                if var in watch:
                    self.values[var] = _copy(value)

    def _run_impl(
        self, thunk: _DebugThunk, before: list[Any], prealloc: list | None, what: str, destroyed: set[int]
    ) -> tuple[list[Any], str]:
        node = thunk.node
        label = f"{thunk.impl_name} ({what} on copies of the inputs)"
        ins = [_copy(v) for v in before]
        cells = [[v] for v in prealloc] if prealloc is not None else [[None] for _ in node.outputs]
        try:
            thunk.run_impl(ins, cells)
        except Exception as err:
            err.add_note(f"DebugMode: raised by {label} of node {node} (node created at: {_site(node)})")
            raise
        outs = [c[0] for c in cells]
        for k, value in enumerate(outs):
            if value is None:
                raise InvalidValueError(
                    node.outputs[k],
                    None,
                    node,
                    hint=f"{label} did not set output {k} (output_storage[{k}][0] is still None)",
                )
        self.unchanged(node, before, ins, label, destroyed)
        self.views(node, ins, outs, label)
        self.valid(node, outs, label, False)
        return outs, label


class _DebugThunk:
    """The thunk DebugMode runs for one node: the Op's own thunk, then the checks."""

    def __init__(self, node: Apply, storage_map: dict, compute_map: dict, checks: _Checks):
        self.node = node
        op = node.op
        self.real = op.make_thunk(node, storage_map, compute_map, [], None)
        self.in_cells = [storage_map[v] for v in node.inputs]
        self.out_cells = [storage_map[v] for v in node.outputs]
        self.inputs = self.in_cells
        self.outputs = self.out_cells
        self.lazy = bool(getattr(self.real, "lazy", False))
        self.checks = checks
        self.previous: list | None = None
        debug_perform = getattr(op, "debug_perform", None)
        if debug_perform is not None:
            self.impl: Callable | None = debug_perform
            self.impl_name = "debug_perform"
        elif type(op).perform is not Op.perform:
            self.impl = op.perform
            self.impl_name = "perform"
        else:
            self.impl = None
            self.impl_name = ""
        self.has_params = hasattr(op, "get_params")
        self.params = node.run_params() if self.has_params else None
        if type(op).make_thunk is Op.make_thunk:
            self.label = "perform (the function's thunk, on the graph's values)"
        else:
            self.label = f"{type(op).__name__}.make_thunk (the function's thunk)"
        self.perform = getattr(self.real, "perform", None)

    def run_impl(self, inputs: list[Any], cells: list[list]) -> None:
        if self.has_params:
            self.impl(self.node, inputs, cells, self.params)  # type: ignore[misc]
        else:
            self.impl(self.node, inputs, cells)  # type: ignore[misc]

    def __call__(self) -> Any:
        if self.lazy:
            return self._call_lazy()
        before = [_copy(c[0]) for c in self.in_cells]
        self.real()
        outputs = [c[0] for c in self.out_cells]
        if any(v is None for v in outputs):
            return None  # the VM reports the unset output
        self.checks.after_node(self, before, outputs)
        return None

    def _call_lazy(self) -> Any:
        needed = self.real()
        if needed:
            return needed
        node, checks = self.node, self.checks
        outputs = [c[0] for c in self.out_cells]
        if any(v is None for v in outputs):
            return needed
        inputs = [c[0] for c in self.in_cells]
        checks.views(node, inputs, outputs, self.label)
        checks.valid(node, outputs, self.label, checks.check_isfinite)
        if checks.watch:
            for var, value in zip(node.outputs, outputs):
                if var in checks.watch:
                    checks.values[var] = _copy(value)
        return needed


# ---------------------------------------------------------------------------------------
# rewriting under DebugMode: keep the graph as written, record every replacement
# ---------------------------------------------------------------------------------------


@dataclass
class _RewriteRecord:
    """What DebugMode keeps of a rewrite run: the graph before it, the map from the
    rewritten graph's original variables to their copies there, the replacements made."""

    original: FunctionGraph
    equiv: dict
    replacements: list[tuple[Variable, Variable, Any]]


_records: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class _ReplacementTracker(Feature):
    def __init__(self) -> None:
        self.replacements: list[tuple[Variable, Variable, Any]] = []
        self._seen: set = set()

    def on_change_input(
        self, fgraph: FunctionGraph, node: Apply, i: int, old: Variable, new: Variable, reason: Any = None
    ) -> None:
        key = (id(old), id(new))
        if key in self._seen:
            return
        self._seen.add(key)
        self.replacements.append((old, new, reason))


def _constant_key(var: Constant) -> str:
    data = var.data
    try:
        arr = np.asarray(data)
        if arr.dtype.kind in "biufc":
            digest = hashlib.sha1(arr.tobytes()).hexdigest()[:16]
            return f"{var.type}:{arr.dtype}{arr.shape}:{digest}"
    except Exception:
        pass
    return f"{var.type}:{data!r}"


def graph_signature(fgraph: FunctionGraph) -> tuple[str, ...]:
    """A structural fingerprint of ``fgraph``'s outputs, independent of node identities."""
    keys: dict[Variable, str] = {v: f"in{k}" for k, v in enumerate(fgraph.inputs)}

    def key(v: Variable) -> str:
        k = keys.get(v)
        if k is not None:
            return k
        if isinstance(v, Constant):
            return "const:" + _constant_key(v)
        return f"orphan:{v.type}"

    for node in fgraph.toposort():
        op = node.op
        text = f"{type(op).__module__}.{type(op).__qualname__}:{op}(" + ",".join(key(i) for i in node.inputs)
        digest = hashlib.sha1(text.encode()).hexdigest()
        for out in node.outputs:
            keys[out] = f"{digest}.{out.index}:{out.type}"
    return tuple(key(o) for o in fgraph.outputs)


@dataclass(frozen=True)
class DebugRewriteQuery(RewriteQuery):
    """The rewrite query of a :class:`DebugMode`: rewrites like ``RewriteQuery`` but keeps
    a copy of the graph as written and records each replacement (for the run-time checks),
    then re-runs the rewrites ``patience`` times on fresh copies to check they are stable.

    ``inner``: a custom ``RewriteQuery`` subclass whose own ``__call__`` does the rewriting.
    """

    patience: int = 10
    inner: Any = None

    @classmethod
    def wrap(cls, query: RewriteQuery, patience: int) -> DebugRewriteQuery:
        if isinstance(query, DebugRewriteQuery):
            return query if query.patience == patience else replace(query, patience=patience)
        inner = None if type(query) is RewriteQuery else query
        return cls(
            include=query.include,
            exclude=query.exclude,
            require=query.require,
            stages=query.stages,
            patience=patience,
            inner=inner,
        )

    def including(self, *tags: str) -> DebugRewriteQuery:
        inner = self.inner.including(*tags) if self.inner is not None else None
        return replace(self, include=self.include | set(tags), inner=inner)

    def excluding(self, *tags: str) -> DebugRewriteQuery:
        inner = self.inner.excluding(*tags) if self.inner is not None else None
        return replace(self, exclude=self.exclude | set(tags), inner=inner)

    def requiring(self, *tags: str) -> DebugRewriteQuery:
        inner = self.inner.requiring(*tags) if self.inner is not None else None
        return replace(self, require=self.require | set(tags), inner=inner)

    def _rewrite(self, fgraph: FunctionGraph) -> dict[str, float]:
        if self.inner is not None:
            return self.inner(fgraph)
        return RewriteQuery.__call__(self, fgraph)

    def __call__(self, fgraph: FunctionGraph) -> dict[str, float]:
        original, equiv = _clone(fgraph)
        tracker = _ReplacementTracker()
        fgraph.attach_feature(tracker)
        try:
            timings = self._rewrite(fgraph)
        finally:
            fgraph.remove_feature(tracker)
        _records[fgraph] = _RewriteRecord(original, equiv, tracker.replacements)
        if self.patience > 0:
            expected = graph_signature(fgraph)
            for attempt in range(self.patience):
                trial = _clone(original)[0]
                self._rewrite(trial)
                got = graph_signature(trial)
                if got != expected:
                    diff = [k for k, (a, b) in enumerate(zip(expected, got)) if a != b]
                    raise StochasticOrder(
                        f"StochasticOrder: rewriting the same graph again (attempt {attempt + 2}) gave "
                        f"a different graph for output(s) {diff}: some rewrite depends on memory "
                        "addresses, set/dict iteration order or randomness.\n"
                        f"  first rewrite:\n{_indent(_graph_text_fg(fgraph))}\n"
                        f"  attempt {attempt + 2}:\n{_indent(_graph_text_fg(trial))}"
                    )
        return timings


def _clone(fgraph: FunctionGraph) -> tuple[FunctionGraph, dict]:
    """A copy of ``fgraph`` that rewriting ``fgraph`` cannot touch: inner graphs (fused
    kernels, scan) are copied too where their Ops know how."""
    try:
        return fgraph.clone_get_equiv(check_integrity=False, attach_feature=False, clone_inner_graphs=True)
    except NotImplementedError:
        return fgraph.clone_get_equiv(check_integrity=False, attach_feature=False)


def _graph_text_fg(fgraph: FunctionGraph) -> str:
    try:
        from arignote.printing import debugprint

        return str(debugprint(fgraph, file="str")).rstrip()
    except Exception:
        return str(fgraph)


# ---------------------------------------------------------------------------------------
# linking: the VM with checking thunks, and the comparison with the graph as written
# ---------------------------------------------------------------------------------------


class _Deferred:
    """A thunk slot filled once the VM's storage map exists (``VMLinker`` gives a
    ``thunk_maker`` only the node)."""

    def __init__(self, node: Apply):
        self.node = node
        self.thunk: Any = None

    @property
    def lazy(self) -> bool:
        return bool(getattr(self.thunk, "lazy", False))

    def __call__(self) -> Any:
        return self.thunk()


def make_checked_vm(
    linker: VMLinker,
    fgraph: FunctionGraph,
    input_storage: Sequence[list],
    no_recycling: Sequence[Variable],
    profile: Any,
    wrap: Callable[[Apply, dict, dict], Callable],
) -> tuple[Any, list[list]]:
    """``VMLinker.make_vm`` whose thunks are ``wrap(node, storage_map, compute_map)``.

    Works whether the VMLinker passes its ``thunk_maker`` just the node (then each thunk is
    filled in once the VM's storage map exists) or also the storage and compute maps.
    """
    pending: list[_Deferred] = []

    def maker(node: Apply, *maps: Any) -> Callable:
        if len(maps) >= 2:
            return wrap(node, maps[0], maps[1])
        slot = _Deferred(node)
        pending.append(slot)
        return slot

    vm, out_cells = VMLinker.make_vm(
        linker, fgraph, input_storage, no_recycling, profile=profile, thunk_maker=maker
    )
    if pending:
        for slot in pending:
            slot.thunk = wrap(slot.node, vm.storage_map, vm.compute_map)
        vm.thunks = [t.thunk if isinstance(t, _Deferred) else t for t in vm.thunks]
        vm.lazy = any(getattr(t, "lazy", False) for t in vm.thunks)
    return vm, out_cells


def _run_node(node: Apply, values: list[Any]) -> list[Any]:
    """The outputs of ``node`` on input ``values`` through its own thunk, in scratch cells
    (inputs of an Op that destroys some are copied first)."""
    if getattr(node.op, "destroy_map", None):
        values = [_copy(v) for v in values]
    storage: dict = {v: [val] for v, val in zip(node.inputs, values)}
    computed: dict = {v: [True] for v in node.inputs}
    for out in node.outputs:
        storage[out] = [None]
        computed[out] = [False]
    thunk = node.op.make_thunk(node, storage, computed, [], None)
    for _ in range(len(node.inputs) + 2):  # a lazy thunk asks again until it is done
        if not thunk():
            break
    return [storage[out][0] for out in node.outputs]


def _depths(variables: Sequence[Variable]) -> dict[Variable, int]:
    """Longest path from a root to each of ``variables`` (iterative), over whatever graph
    their owners' inputs form now: replaced-away nodes included."""
    depth: dict[Variable, int] = {}
    for target in variables:
        stack = [target]
        while stack:
            var = stack[-1]
            if var in depth:
                stack.pop()
                continue
            owner = var.owner
            if owner is None:
                depth[var] = 0
                stack.pop()
                continue
            pending = [i for i in owner.inputs if i not in depth]
            if pending:
                stack.extend(pending)
                continue
            d = 1 + max((depth[i] for i in owner.inputs), default=0)
            for out in owner.outputs:
                depth[out] = d
            stack.pop()
    return depth


class _DebugVM(VM):
    """Runs the checked VM, then (when the rewrites were recorded) the graph as written on
    copies of the same inputs, and compares the two: every variable a rewrite put in place
    of another, and every output."""

    def __init__(
        self, vm: Any, fgraph: FunctionGraph, input_storage: Sequence[list], checks: _Checks, record: Any
    ):
        self.vm = vm
        self.fgraph = fgraph
        self.input_cells = list(input_storage)
        self.checks = checks
        self.record = record
        self.orig_vm = None
        if record is None:
            return
        original, equiv = record.original, record.equiv
        self.input_pos = {v: k for k, v in enumerate(fgraph.inputs)}
        orig_pos = {equiv[v]: k for v, k in self.input_pos.items() if v in equiv}
        if any(v not in orig_pos for v in original.inputs):
            return  # the inputs changed since rewriting: cannot line the two graphs up
        self.orig_cells = [[None] for _ in original.inputs]
        self.orig_input_pos = [orig_pos[v] for v in original.inputs]
        self.orig_vm, _ = VMLinker(allow_gc=False).make_vm(original, self.orig_cells, [])
        self.expectations = self._expectations(record)
        self.depth = _depths([e[0] for e in self.expectations])
        checks.watch = {e[0] for e in self.expectations if e[0] in fgraph.variables} | set(fgraph.outputs)

    @staticmethod
    def _expectations(record: _RewriteRecord) -> list[tuple[Variable, Variable, tuple, Variable]]:
        """``(new, original_var, reasons, old)``: ``new`` must take the value of
        ``original_var`` (of the graph as written), which ``old`` stood for when the
        rewrites ``reasons`` replaced it, one after the other, by ``new``."""
        equiv = record.equiv
        derived: dict[Variable, tuple[Variable, tuple]] = {}
        found = []
        for old, new, reason in record.replacements:
            if old in equiv:
                base = (equiv[old], (reason,))
            elif old in derived:
                orig, reasons = derived[old]
                base = (orig, (*reasons, reason))
            else:
                continue
            if new not in derived:
                derived[new] = base
            found.append((new, base[0], base[1], old))
        return found

    def __getattr__(self, name: str) -> Any:
        return getattr(self.vm, name)

    def __call__(self) -> None:
        checks = self.checks
        checks.values.clear()
        if self.orig_vm is None:
            self.vm()
            return
        snapshot = [_copy(c[0]) for c in self.input_cells]
        self.vm()
        try:
            self._check_rewrites(snapshot)
        finally:
            checks.values.clear()

    # -- values -----------------------------------------------------------------------------

    def _original_value(self, var: Variable) -> Any:
        if isinstance(var, Constant):
            return var.data
        vm = self.orig_vm
        cell = vm.storage_map.get(var)
        if cell is None or cell[0] is None:
            return _MISSING
        flag = vm.compute_map.get(var)
        if flag is not None and not flag[0]:
            return _MISSING
        return cell[0]

    def _known_value(self, var: Variable, snapshot: list[Any], memo: dict) -> Any:
        if isinstance(var, Constant):
            return var.data
        pos = self.input_pos.get(var)
        if pos is not None:
            return snapshot[pos]
        value = self.checks.values.get(var, _MISSING)
        if value is not _MISSING:
            return value
        return memo.get(var, _MISSING)

    def _value(self, target: Variable, snapshot: list[Any], memo: dict) -> Any:
        """The value of ``target`` in the rewritten graph: recorded while the function ran
        or, for a variable rewriting made and then replaced again, computed from its inputs
        through the nodes' thunks (``_MISSING`` when that fails)."""
        value = self._known_value(target, snapshot, memo)
        if value is not _MISSING or target in memo:
            return value
        stack = [target]
        while stack:
            var = stack[-1]
            if var in memo or self._known_value(var, snapshot, memo) is not _MISSING:
                stack.pop()
                continue
            owner = var.owner
            if owner is None:
                memo[var] = _MISSING  # a root that is neither an input nor a constant
                stack.pop()
                continue
            values = [self._known_value(i, snapshot, memo) for i in owner.inputs]
            pending = [i for i, v in zip(owner.inputs, values) if v is _MISSING and i not in memo]
            if pending:
                stack.extend(pending)
                continue
            stack.pop()
            if any(v is _MISSING for v in values):
                results = [_MISSING] * len(owner.outputs)
            else:
                try:
                    results = _run_node(owner, values)
                except Exception:
                    results = [_MISSING] * len(owner.outputs)
            for out, result in zip(owner.outputs, results):
                memo[out] = _MISSING if result is None else result
        return self._known_value(target, snapshot, memo)

    # -- the comparison -------------------------------------------------------------------

    def _check_rewrites(self, snapshot: list[Any]) -> None:
        record = self.record
        for cell, pos in zip(self.orig_cells, self.orig_input_pos):
            cell[0] = _copy(snapshot[pos])
        try:
            self.orig_vm()
        except Exception as err:
            raise BadOptimization(
                "BadOptimization: the graph as written raised an error on these inputs, but the "
                f"rewritten graph did not: {type(err).__name__}: {err}\n"
                f"  rewrites applied: {self._reasons()}"
            ) from err
        memo: dict = {}
        worst = None
        for k, (new, orig, reasons, old) in enumerate(self.expectations):
            expected = self._original_value(orig)
            if expected is _MISSING:
                continue
            got = self._value(new, snapshot, memo)
            if got is _MISSING or _values_eq(new, expected, got, approx=True) is not False:
                continue
            rank = (self.depth.get(new, 0), k)  # the most upstream mismatch is the culprit
            if worst is None or rank < worst[0]:
                worst = (rank, new, orig, reasons, old, expected, got)
        if worst is not None:
            _, new, orig, reasons, old, expected, got = worst
            raise BadOptimization(
                old,
                new,
                expected,
                got,
                reason=reasons if len(reasons) > 1 else reasons[0],
                old_graph=_graph_text(orig),
                new_graph=_graph_text(new),
                original_r=orig if orig is not old else None,
            )
        original = record.original
        for k, out in enumerate(self.fgraph.outputs):
            if k >= len(original.outputs):
                break
            orig = original.outputs[k]
            expected = self._original_value(orig)
            got = self._known_value(out, snapshot, memo)
            if got is _MISSING:
                cell = self.vm.storage_map.get(out)
                got = cell[0] if cell is not None and cell[0] is not None else _MISSING
            if expected is _MISSING or got is _MISSING:
                continue
            if _values_eq(out, expected, got, approx=True) is False:
                raise BadOptimization(
                    orig,
                    out,
                    expected,
                    got,
                    reason=self._reasons(),
                    old_graph=_graph_text(orig),
                    new_graph=_graph_text(out),
                    output_idx=k,
                )

    def _reasons(self) -> str:
        names = list(dict.fromkeys(str(r) for _, _, r in self.record.replacements))
        if len(names) > 12:
            names = [*names[:12], f"... ({len(names) - 12} more)"]
        return ", ".join(names)


class DebugLinker(VMLinker):
    """The linker of :class:`DebugMode`: the reference VM with each node's thunk wrapped
    in the DebugMode checks (see the module docstring)."""

    def __init__(
        self,
        check_py_code: bool = True,
        check_isfinite: bool = True,
        check_preallocated_output: Any = (),
        require_matching_strides: int = 0,
        check_rewrites: bool = True,
        allow_gc: bool = True,
    ):
        super().__init__(allow_gc=allow_gc)
        self.check_py_code = bool(check_py_code)
        self.check_isfinite = bool(check_isfinite)
        self.check_preallocated_output = _normalize_preallocated(check_preallocated_output)
        self.require_matching_strides = int(require_matching_strides or 0)
        self.check_rewrites = bool(check_rewrites)

    def _key(self) -> tuple:
        return (
            self.allow_gc,
            self.check_py_code,
            self.check_isfinite,
            self.check_preallocated_output,
            self.require_matching_strides,
            self.check_rewrites,
        )

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self._key() == other._key()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((type(self), self._key()))

    def __repr__(self) -> str:
        return (
            f"DebugLinker(check_py_code={self.check_py_code}, check_isfinite={self.check_isfinite}, "
            f"check_preallocated_output={self.check_preallocated_output}, "
            f"require_matching_strides={self.require_matching_strides})"
        )

    def make_vm(
        self,
        fgraph: FunctionGraph,
        input_storage: Sequence[list],
        no_recycling: Sequence[Variable],
        profile: Any = None,
        thunk_maker: Callable | None = None,
    ) -> tuple[Any, list[list]]:
        checks = _Checks(self)

        def wrap(node: Apply, storage_map: dict, compute_map: dict) -> Callable:
            return _DebugThunk(node, storage_map, compute_map, checks)

        vm, out_cells = make_checked_vm(self, fgraph, input_storage, no_recycling, profile, wrap)
        record = _records.get(fgraph) if self.check_rewrites else None
        return _DebugVM(vm, fgraph, input_storage, checks, record), out_cells


# ---------------------------------------------------------------------------------------
# the mode
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True, init=False)
class DebugMode(Mode):
    """A Mode that checks every node and every rewrite while the function runs.

    Parameters (as PyTensor's ``DebugMode``; ``None`` means the default):

    optimizer
        Which rewrites run (``"fast_run"`` by default), as for :class:`Mode`.
    stability_patience
        How many more times the rewrites are run on fresh copies of the graph, each of
        which must give the same graph (default 10; 0 skips the check).
    check_c_code
        Accepted for compatibility; arignote has no C code.
    check_py_code
        Re-run ``perform``/``debug_perform`` on copies of each node's inputs and compare
        (default True).
    check_isfinite
        Raise :class:`InvalidValueError` for NaN/inf in float outputs (default True).
    check_preallocated_output
        Also run ``perform`` with output cells already holding arrays: any of
        ``"previous"``, ``"c_contiguous"``, ``"f_contiguous"``, ``"strided"``,
        ``"wrong_size"`` or ``"ALL"`` (a list, or a ``:``-separated string; default none).
    require_matching_strides
        0: ignore, 1: warn, 2: raise when the runs' outputs have different strides.
    linker
        Only ``None`` or a :class:`DebugLinker`: DebugMode always runs its own checks.
    db
        Accepted for compatibility (the rewrite registry is global).
    check_rewrites
        Compare the rewritten graph with the graph as written after every call (default True).
    """

    stability_patience: int = 10
    check_c_code: Any = None
    check_py_code: bool = True
    check_isfinite: bool = True
    check_preallocated_output: tuple = ()
    require_matching_strides: int = 0
    check_rewrites: bool = True

    def __init__(
        self,
        optimizer: Any = "fast_run",
        stability_patience: int | None = None,
        check_c_code: Any = None,
        check_py_code: bool | None = None,
        check_isfinite: bool | None = None,
        check_preallocated_output: Any = None,
        require_matching_strides: int | None = None,
        linker: Any = None,
        db: Any = None,
        name: str = "DebugMode",
        check_rewrites: bool = True,
    ):
        settings = {
            "optimizer": optimizer,
            "stability_patience": 10 if stability_patience is None else int(stability_patience),
            "check_c_code": check_c_code,
            "check_py_code": True if check_py_code is None else bool(check_py_code),
            "check_isfinite": True if check_isfinite is None else bool(check_isfinite),
            "check_preallocated_output": _normalize_preallocated(check_preallocated_output),
            "require_matching_strides": int(require_matching_strides or 0),
            "check_rewrites": bool(check_rewrites),
            "linker": linker,
            "name": name,
        }
        if settings["stability_patience"] < 0:
            raise ValueError(f"stability_patience must be >= 0, got {stability_patience}")
        if settings["require_matching_strides"] not in (0, 1, 2):
            raise ValueError(f"require_matching_strides must be 0, 1 or 2, got {require_matching_strides}")
        for key, value in settings.items():
            object.__setattr__(self, key, value)
        self.__post_init__()

    def __post_init__(self) -> None:
        linker = self.linker
        if linker is not None and not isinstance(linker, DebugLinker):
            raise ValueError(
                f"DebugMode runs its own linker (it wraps every node in its checks); got linker={linker!r}. "
                "Leave linker=None, and use the check_* arguments to choose the checks."
            )
        allow_gc = linker.allow_gc if isinstance(linker, DebugLinker) else True
        object.__setattr__(
            self,
            "linker",
            DebugLinker(
                check_py_code=self.check_py_code,
                check_isfinite=self.check_isfinite,
                check_preallocated_output=self.check_preallocated_output,
                require_matching_strides=self.require_matching_strides,
                check_rewrites=self.check_rewrites,
                allow_gc=allow_gc,
            ),
        )
        super().__post_init__()  # optimizer name -> RewriteQuery
        object.__setattr__(self, "optimizer", DebugRewriteQuery.wrap(self.optimizer, self.stability_patience))

    def __str__(self) -> str:
        return (
            f"{self.name}(optimizer={self.query}, stability_patience={self.stability_patience}, "
            f"check_py_code={self.check_py_code}, check_isfinite={self.check_isfinite}, "
            f"check_preallocated_output={self.check_preallocated_output})"
        )
