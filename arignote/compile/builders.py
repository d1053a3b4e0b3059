"""``OpFromGraph``: a graph packaged as one Op.

An :class:`OpFromGraph` is built from input and output Variables, like
:func:`arignote.function`; applying it to other Variables makes one node that computes
what the graph computes. The node runs a compiled inner function (built once, on first
use), or, with ``inline=True``, is replaced by its inner graph when a function is
compiled. Its gradient is the inner graph's, unless overridden (``lop_overrides``), and
is itself an OpFromGraph, built once per Op and reused.

>>> import numpy as np
>>> import arignote
>>> import arignote.tensor as pt
>>> from arignote.compile.builders import OpFromGraph
>>> x, y = pt.dscalars("x", "y")
>>> axpy = OpFromGraph([x, y], [2.0 * x + y], name="axpy")
>>> a, b = pt.dscalars("a", "b")
>>> out = axpy(a, b) + axpy(b, a)
>>> f = arignote.function([a, b], [out, arignote.grad(out, a)])
>>> [float(v) for v in f(1.0, 10.0)]
[33.0, 3.0]
"""

from __future__ import annotations

import hashlib
import inspect
import threading
from collections.abc import Sequence
from copy import copy
from typing import Any

import numpy as np

from arignote.compile.function import function
from arignote.graph.basic import Apply, Constant, Variable, clone_get_equiv
from arignote.graph.fg import FunctionGraph
from arignote.graph.null_type import is_disconnected, is_null
from arignote.graph.op import HasInnerGraph, Op, io_connection_pattern
from arignote.graph.replace import batch_graph, register_batch_rule
from arignote.graph.rewriting.basic import node_rewriter
from arignote.graph.rewriting.db import register_rewrite
from arignote.graph.shared import SharedVariable
from arignote.graph.traversal import graph_inputs, io_toposort, variable_depends_on
from arignote.graph.utils import MissingInputError
from arignote.tensor.alloc import broadcast_batch
from arignote.tensor.inner_shapes import infer_inner_shapes
from arignote.tensor.shape import batch_length
from arignote.tensor.type import TensorType

__all__ = ["OpFromGraph", "SymbolicOp"]

# Keywords of ``function`` that describe the graph rather than how to compile it: an
# OpFromGraph gets its graph from ``inputs``/``outputs`` and its ``name`` itself.
_NOT_COMPILE_KWARGS = frozenset({"inputs", "outputs", "updates", "givens", "name"})
_COMPILE_KWARGS = frozenset(inspect.signature(function).parameters) - _NOT_COMPILE_KWARGS

# compiling an inner function is done once per Op, even when two threads first use it
# together; reentrant, since compiling one may run another (constant folding a nested Op)
_compile_lock = threading.RLock()


# --- building the inner graph -----------------------------------------------------------------


def _as_variable_list(seq: Any, what: str) -> list[Variable]:
    if isinstance(seq, Variable) or not isinstance(seq, (list, tuple)):
        raise TypeError(
            f"OpFromGraph: {what} must be a list of Variables, got {type(seq).__name__} {seq!r}"
            + (f" (wrap it: [{seq}])" if isinstance(seq, Variable) else "")
        )
    for k, v in enumerate(seq):
        if not isinstance(v, Variable):
            raise TypeError(
                f"OpFromGraph: {what}[{k}] must be a Variable, got {type(v).__name__} {v!r}"
                + ("; make it a Variable with arignote.tensor.constant" if what == "outputs" else "")
            )
    return list(seq)


def _implicit_inputs(inputs: list[Variable], outputs: list[Variable]) -> list[SharedVariable]:
    """The shared variables the outputs use besides ``inputs``; any other free root
    Variable is a :class:`MissingInputError` naming it."""
    given = set(inputs)
    shared: list[SharedVariable] = []
    for var in graph_inputs(outputs, blockers=given):
        if var in given or isinstance(var, Constant):
            continue
        if isinstance(var, SharedVariable):
            shared.append(var)
            continue
        users = [k for k, o in enumerate(outputs) if variable_depends_on(o, var, stop_search_at=given)]
        raise MissingInputError(
            f"OpFromGraph: output {users[0]} ({outputs[users[0]]}) depends on {var} (Type {var.type}), "
            "which is not one of the inputs; add it to the inputs (or make it a constant or a "
            "shared variable)",
            variable=var,
        )
    return shared


def _constant_key(c: Constant) -> tuple:
    data = c.data
    if isinstance(data, (np.ndarray, np.generic)):
        arr = np.ascontiguousarray(data)
        raw = arr.tobytes()
        # a large constant (weights, tables) is keyed by a digest, not by a copy of its bytes
        content = raw if len(raw) <= 256 else hashlib.blake2b(raw, digest_size=32).digest()
        return ("c", c.type, arr.dtype.str, arr.shape, content)
    try:
        key = ("c", c.type, data)
        hash(key)
        return key
    except TypeError:
        return ("c", c.type, "object", id(c))


def _graph_signature(inputs: list[Variable], outputs: list[Variable]) -> tuple:
    """The structure of the graph from ``inputs`` to ``outputs``: input Types, then each
    node as (op, where its inputs come from), then where the outputs come from. Two graphs
    with equal signatures compute the same thing."""
    refs: dict = {v: ("i", k) for k, v in enumerate(inputs)}

    def ref(v: Variable) -> tuple:
        r = refs.get(v)
        if r is None:  # a constant (the inner graph has no other roots)
            r = refs[v] = _constant_key(v)
        return r

    body = []
    for n, node in enumerate(io_toposort(inputs, outputs)):
        body.append((node.op, tuple(ref(v) for v in node.inputs)))
        for k, out in enumerate(node.outputs):
            refs[out] = ("n", n, k)
    return (tuple(v.type for v in inputs), tuple(body), tuple(ref(o) for o in outputs))


def _filter_inputs(op: Op, inputs: Sequence[Any], types: Sequence[Any]) -> list[Variable]:
    """``inputs`` as Variables of ``types`` (converted where the Type allows it), or a
    TypeError naming the input that does not fit (shared by the Ops with an inner graph)."""
    checked = []
    for k, (inp, itype) in enumerate(zip(inputs, types)):
        try:
            checked.append(itype.filter_variable(inp, allow_convert=True))
        except (TypeError, ValueError) as err:
            got = (
                f"{inp} of Type {inp.type}" if isinstance(inp, Variable) else f"{type(inp).__name__} {inp!r}"
            )
            raise TypeError(
                f"{op}: input {k} must have Type {itype} (or one convertible to it), got {got}"
            ) from err
    return checked


def _check_pattern(pattern: Any, n_explicit: int, n_total: int, n_out: int) -> list[list[bool]] | None:
    if pattern is None:
        return None
    rows = [list(r) for r in pattern] if isinstance(pattern, (list, tuple)) else None
    if (
        rows is None
        or len(rows) not in (n_explicit, n_total)
        or any(len(r) != n_out or not all(isinstance(b, (bool, np.bool_)) for b in r) for r in rows)
    ):
        raise ValueError(
            f"OpFromGraph: connection_pattern must be a list with one row per input ({n_explicit}) of "
            f"{n_out} bools (one per output), got {pattern!r}"
        )
    return [[bool(b) for b in r] for r in rows]


def _check_override(value: Any, what: str, length: tuple[int, ...], entry_args: str) -> None:
    """A clear error at construction for an override that could never be used."""
    if value is None or isinstance(value, OpFromGraph) or callable(value):
        return
    if not isinstance(value, (list, tuple)):
        raise TypeError(
            f"OpFromGraph: {what} must be None, an OpFromGraph, a callable or a list, got "
            f"{type(value).__name__} {value!r}"
        )
    if len(value) not in length:
        raise ValueError(f"OpFromGraph: {what} has {len(value)} entries, expected {length[0]}")
    for k, entry in enumerate(value):
        if entry is None or callable(entry) or is_disconnected(entry) or is_null(entry):
            continue
        raise TypeError(
            f"OpFromGraph: {what}[{k}] must be None (the default rule), a callable {entry_args} or a "
            f"NullType / DisconnectedType Variable, got {type(entry).__name__} {entry!r}"
        )


def _same_override(a: Any, b: Any) -> bool:
    if a is b:
        return True
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and len(a) == len(b):
        return all(x is y for x, y in zip(a, b))
    return False


# --- the Op ------------------------------------------------------------------------------------


class OpFromGraph(Op, HasInnerGraph):
    r"""An Op whose computation is the graph from ``inputs`` to ``outputs``.

    Parameters
    ----------
    inputs, outputs
        Lists of Variables. The graph is cloned: changing the user's Variables later does not
        change the Op. Constants may appear inside; shared variables used inside become
        implicit extra inputs (appended after the explicit ones); any other Variable the
        outputs need must be among ``inputs`` (else a ``MissingInputError`` naming it).
    inline
        ``True``: when a function is compiled, each node of this Op is replaced by its inner
        graph (so the whole graph is rewritten together). ``False`` (default): the node
        stays and runs a compiled inner function.
    lop_overrides (or ``pullback``)
        The gradient rule. ``None``: differentiate the inner graph. A callable
        ``f(inputs, outputs, output_grads) -> list`` (one term per input; a disconnected
        output gradient arrives as a DisconnectedType Variable). An OpFromGraph taking
        ``(*inputs, *outputs, *output_grads)`` and returning one term per input. A list,
        one entry per input: ``None`` (the inner graph's gradient for that input), a
        callable as above returning that input's term, or a ``NullType`` /
        ``DisconnectedType`` Variable (no gradient).
    rop_overrides (or ``pushforward``)
        The pushforward (Jacobian-vector product) rule: ``None`` (the inner graph's), a
        callable ``f(inputs, tangents) -> list`` (one per output), an OpFromGraph taking
        ``(*inputs, *tangents)``, or a list with one entry per output as above.
    connection_pattern
        Which outputs depend on which inputs (one row of bools per input); default: read
        from the inner graph.
    strict
        ``True``: the inner graph may not use shared variables implicitly (an error).
    name
        Shown when printing.
    destroy_map
        As for any Op: ``{output: [inputs]}`` the Op may overwrite.
    kwargs
        Passed to :func:`arignote.function` when compiling the inner function (``mode``,
        ``on_unused_input``, ...).

    Two OpFromGraphs with the same inner graph (same structure, constants and shared
    variables) and the same settings and override objects are equal, so their nodes merge.

    >>> import arignote
    >>> import arignote.tensor as pt
    >>> from arignote.gradient import grad
    >>> x = pt.dvector("x")
    >>> softplus = OpFromGraph([x], [pt.log1p(pt.exp(x))], name="softplus")
    >>> v = pt.dvector("v")
    >>> cost = softplus(v).sum()
    >>> f = arignote.function([v], [cost, grad(cost, v)])
    >>> c, g = f([0.0, 1.0])
    >>> round(float(c), 6), g.round(6).tolist()
    (2.006409, [0.5, 0.731059])

    A straight-through gradient (rounding forward, identity backward), so that the
    gradient of ``sum(round(v) * v)`` is ``v + round(v)``:

    >>> ste = OpFromGraph([x], [pt.round(x)], lop_overrides=lambda inps, outs, gs: [gs[0]])
    >>> arignote.function([v], grad((ste(v) * v).sum(), v))([0.4, 1.6]).tolist()
    [0.4, 3.6]
    """

    def __init__(
        self,
        inputs: list[Variable],
        outputs: list[Variable],
        *,
        inline: bool = False,
        lop_overrides: Any = None,
        rop_overrides: Any = None,
        connection_pattern: list[list[bool]] | None = None,
        strict: bool = False,
        name: str | None = None,
        pullback: Any = None,
        pushforward: Any = None,
        destroy_map: dict | None = None,
        **kwargs: Any,
    ):
        inputs = _as_variable_list(inputs, "inputs")
        outputs = _as_variable_list(outputs, "outputs")
        seen: dict = {}
        for k, v in enumerate(inputs):
            if v in seen:
                raise ValueError(
                    f"OpFromGraph: inputs {seen[v]} and {k} are the same Variable ({v}); each input must "
                    "be a distinct Variable (use a fresh one, e.g. v.type())"
                )
            seen[v] = k
        self._check_kwargs(kwargs)
        if name is not None and not isinstance(name, str):
            raise TypeError(f"OpFromGraph: name must be a string or None, got {name!r}")
        if lop_overrides is not None and pullback is not None:
            raise ValueError("OpFromGraph: give lop_overrides or pullback (the same thing), not both")
        if rop_overrides is not None and pushforward is not None:
            raise ValueError("OpFromGraph: give rop_overrides or pushforward (the same thing), not both")

        shared = _implicit_inputs(inputs, outputs)
        if strict and shared:
            raise ValueError(
                "OpFromGraph(strict=True): the inner graph uses shared variables that are not among "
                f"the inputs: {shared}; pass them as inputs, or use strict=False to add them implicitly"
            )
        self.shared_inputs: list[SharedVariable] = shared
        self.n_explicit = len(inputs)
        # The private clone: fresh root Variables stand for the inputs (and the shared
        # variables), so the Op never sees later changes to the user's graph.
        roots = inputs + shared
        memo = {v: v.type(name=f"i{k}") for k, v in enumerate(roots)}
        equiv = clone_get_equiv([], outputs, copy_inputs=False, copy_orphans=False, memo=memo)
        inner_inputs = [memo[v] for v in roots]
        inner_outputs = [equiv[o] for o in outputs]
        self.fgraph = FunctionGraph(inner_inputs, inner_outputs, clone=False)
        self.input_types = [v.type for v in inner_inputs]
        self.output_types = [v.type for v in inner_outputs]

        self.is_inline = bool(inline)
        self.name = name
        self.kwargs = kwargs
        self.pullback_overrides = pullback if pullback is not None else lop_overrides
        self.pushforward_overrides = pushforward if pushforward is not None else rop_overrides
        n_total, n_out = len(inner_inputs), len(inner_outputs)
        _check_override(
            self.pullback_overrides, "lop_overrides", (n_total, self.n_explicit), "(inputs, outputs, grads)"
        )
        _check_override(self.pushforward_overrides, "rop_overrides", (n_out,), "(inputs, tangents)")
        self._given_pattern = _check_pattern(connection_pattern, self.n_explicit, n_total, n_out)
        self.destroy_map = self._check_destroy_map(destroy_map, n_total, n_out)
        self._reset_caches()
        self._signature: tuple | None = _graph_signature(inner_inputs, inner_outputs)
        self._set_hash()

    def _set_hash(self) -> None:
        try:
            self._hash = hash(self._signature) if self._signature is not None else id(self)
        except TypeError:  # an inner op or constant that cannot be hashed: equality is identity
            self._signature = None
            self._hash = id(self)

    @staticmethod
    def _check_kwargs(kwargs: dict) -> None:
        if "updates" in kwargs or "givens" in kwargs:
            raise TypeError(
                "OpFromGraph does not take updates or givens: the inner graph is a pure function of "
                "its inputs (apply givens to the outputs before building the Op)"
            )
        unknown = sorted(set(kwargs) - _COMPILE_KWARGS)
        if unknown:
            raise TypeError(
                f"OpFromGraph got unexpected keyword argument(s) {unknown}; extra keywords are passed "
                f"to arignote.function, which takes {sorted(_COMPILE_KWARGS)}"
            )

    @staticmethod
    def _check_destroy_map(destroy_map: Any, n_in: int, n_out: int) -> dict:
        if not destroy_map:
            return {}
        if not isinstance(destroy_map, dict) or any(
            not isinstance(o, int) or not 0 <= o < n_out or any(not 0 <= i < n_in for i in ins)
            for o, ins in destroy_map.items()
        ):
            raise ValueError(
                f"OpFromGraph: destroy_map must map output indices (< {n_out}) to lists of input "
                f"indices (< {n_in}), got {destroy_map!r}"
            )
        return {o: list(ins) for o, ins in destroy_map.items()}

    def _reset_caches(self) -> None:
        self._fn: Any = None
        self._pattern: list[list[bool]] | None = None
        self._pullback_cache: dict = {}
        self._pushforward_cache: dict = {}
        self._batch_cache: dict = {}

    # -- the inner graph ------------------------------------------------------------------

    @property
    def fn(self) -> Any:
        """The compiled inner function (compiled on first use, then reused)."""
        if self._fn is None:
            with _compile_lock:
                if self._fn is None:
                    kwargs = dict(self.kwargs)
                    kwargs.setdefault("on_unused_input", "ignore")
                    fn = function(self.inner_inputs, self.inner_outputs, **kwargs)
                    fn.trust_input = True  # make_node checked the Types of the outer inputs
                    self._fn = fn
        return self._fn

    def clone(self) -> OpFromGraph:
        """A copy with its own copy of the inner graph (equal to this Op)."""
        res = copy(self)
        equiv = clone_get_equiv(self.inner_inputs, self.inner_outputs, clone_inner_graphs=True)
        res.fgraph = FunctionGraph(
            [equiv[v] for v in self.inner_inputs], [equiv[v] for v in self.inner_outputs], clone=False
        )
        res._reset_caches()
        return res

    # -- identity and printing --------------------------------------------------------------

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if type(self) is not type(other) or self._signature is None or other._signature is None:
            return False
        return (
            self._hash == other._hash
            and self.is_inline == other.is_inline
            and self._signature == other._signature
            and len(self.shared_inputs) == len(other.shared_inputs)
            and all(a is b for a, b in zip(self.shared_inputs, other.shared_inputs))
            and _same_override(self.pullback_overrides, other.pullback_overrides)
            and _same_override(self.pushforward_overrides, other.pushforward_overrides)
            and self._given_pattern == other._given_pattern
            and self.destroy_map == other.destroy_map
            and self._same_kwargs(other)
        )

    def _same_kwargs(self, other: OpFromGraph) -> bool:
        try:
            return bool(self.kwargs == other.kwargs)
        except Exception:  # values that cannot be compared: only the same Op is equal
            return False

    def __hash__(self) -> int:
        return hash((type(self), self._hash, self.is_inline))

    def __str__(self) -> str:
        return f"{self.name or type(self).__name__}{{inline={self.is_inline}}}"

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        for key in ("_fn", "_pullback_cache", "_pushforward_cache", "_batch_cache"):
            state.pop(key, None)
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        pattern = state.get("_pattern")
        self._reset_caches()
        self._pattern = pattern
        self._set_hash()  # string hashes differ from one process to the next

    # -- building nodes ---------------------------------------------------------------------

    def _describe_inputs(self) -> str:
        return ", ".join(f"{t}" for t in self.input_types[: self.n_explicit])

    def __call__(self, *inputs: Any, **kwargs: Any) -> Any:
        """Apply the Op to the explicit inputs (the implicit shared ones are appended);
        all inputs, shared ones included, may be given instead."""
        n, n_total = self.n_explicit, len(self.input_types)
        if len(inputs) == n:
            inputs = (*inputs, *self.shared_inputs)
        elif len(inputs) != n_total:
            expected = f"{n}" if n == n_total else f"{n} (or {n_total}, with its shared variables)"
            raise ValueError(
                f"{self} takes {expected} input(s) of Types ({self._describe_inputs()}), got {len(inputs)}"
            )
        return super().__call__(*inputs, **kwargs)

    def make_node(self, *inputs: Any) -> Apply:
        if len(inputs) != len(self.input_types):
            raise ValueError(
                f"{self} takes {len(self.input_types)} inputs (shared variables included), got {len(inputs)}"
            )
        checked = _filter_inputs(self, inputs, self.input_types)
        return Apply(self, checked, [t() for t in self.output_types])

    # -- running ----------------------------------------------------------------------------

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        results = self.fn(*inputs)
        for cell, value in zip(output_storage, results):
            cell[0] = value

    def connection_pattern(self, node: Apply | None = None) -> list[list[bool]]:
        """The given pattern, or the inner graph's (DisconnectedType entries of a list
        ``lop_overrides`` disconnect their input)."""
        if self._pattern is None:
            computed = io_connection_pattern(self.inner_inputs, self.inner_outputs)
            given = self._given_pattern
            if given is not None:
                pattern = [list(r) for r in given] + computed[len(given) :]
            else:
                pattern = computed
                lop = self.pullback_overrides
                if isinstance(lop, (list, tuple)):
                    for k, entry in enumerate(lop):
                        if is_disconnected(entry):
                            pattern[k] = [False] * len(self.output_types)
            self._pattern = pattern
        return [list(r) for r in self._pattern]

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[Any]) -> list:
        """The output shapes from the input shapes, through the inner ops' own
        ``infer_shape`` (no inner op runs unless it has none)."""
        return infer_inner_shapes(self, node, shapes)[0]

    def inner_output_shapes(self, node: Apply, shapes: Sequence[Any]) -> tuple[list, set]:
        """The output shapes through the inner graph, and the inner Variables whose shape
        needs them computed (the protocol of the rule that answers ``x.shape`` without
        running the Op: :func:`arignote.tensor.rewriting.shape.shape_of_inner_graph_output`)."""
        return infer_inner_shapes(self, node, shapes)

    # -- differentiation --------------------------------------------------------------------

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        """One gradient term per input (DisconnectedType where no gradient flows)."""
        from arignote.compile._builders_grad import pullback_rule

        return pullback_rule(self, output_grads)(list(inputs), list(outputs), list(output_grads))

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], eval_points: Sequence[Variable]
    ) -> list:
        """One tangent per output (DisconnectedType where no tangent flows)."""
        from arignote.compile._builders_grad import pushforward_rule

        return pushforward_rule(self, eval_points)(list(inputs), list(eval_points))

    # -- inlining ---------------------------------------------------------------------------

    def inline_on(self, inputs: Sequence[Variable]) -> list[Variable]:
        """The inner graph rebuilt on ``inputs`` (inner OpFromGraphs with ``inline=True``
        are expanded too)."""
        env: dict = dict(zip(self.inner_inputs, inputs))
        for node in io_toposort(self.inner_inputs, self.inner_outputs):
            args = [env.get(v, v) for v in node.inputs]
            op = node.op
            if isinstance(op, OpFromGraph) and op.is_inline:
                new_outputs = op.inline_on(args)
            else:
                new_outputs = node.clone_with_new_inputs(args).outputs
            env.update(zip(node.outputs, new_outputs))
        return [env.get(o, o) for o in self.inner_outputs]


# --- rules ------------------------------------------------------------------------------------
# Inlining is about this Op alone, so it stays beside it (tensor/rewriting/ cannot import
# compile); the shape rule is generic (tensor/rewriting/shape.py) and asks the Op for
# ``inner_output_shapes``.


@register_rewrite("canonicalize", "fast_run", "fast_compile")
@node_rewriter([OpFromGraph])
def inline_op_from_graph(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """Replace a node of an OpFromGraph built with ``inline=True`` by its inner graph."""
    if not node.op.is_inline:
        return None
    return node.op.inline_on(node.inputs)


# --- batching (the vectorised jacobian) ---------------------------------------------------------


@register_batch_rule(OpFromGraph)
def _batch_op_from_graph(op: OpFromGraph, node: Apply, args: list, flags: list) -> list | None:
    """The inner graph vectorised over the batch, as a new OpFromGraph. An Op with
    gradient overrides has no batched version of them: it falls back to a loop."""
    if op.pullback_overrides is not None or op.pushforward_overrides is not None:
        return None
    lengths = {a.type.shape[0] for a, f in zip(args, flags) if f}
    key = (tuple(flags), lengths.pop() if len(lengths) == 1 else None)
    batched_op = op._batch_cache.get(key)
    if batched_op is None:
        batched_op = op._batch_cache[key] = _batched_op(op, list(flags), key[1])
    return [(o, True) for o in batched_op(*args, return_list=True)]


def _batched_op(op: OpFromGraph, flags: list, length: int | None) -> OpFromGraph:
    new_inputs = []
    replace = {}
    for k, (inp, flag) in enumerate(zip(op.inner_inputs, flags)):
        if flag:
            stacked = TensorType(inp.type.dtype, (length, *inp.type.shape))(f"b{k}")
            replace[inp] = stacked
            new_inputs.append(stacked)
        else:
            new_inputs.append(inp)
    outs = batch_graph(op.inner_outputs, replace)
    n = batch_length(next(iter(replace.values())))
    outs = [broadcast_batch(o, n) if b is None else b for o, b in zip(op.inner_outputs, outs)]
    name = None if op.name is None else f"{op.name}_batched"
    return OpFromGraph(new_inputs, outs, inline=op.is_inline, name=name, **op.kwargs)


# --- SymbolicOp: an OpFromGraph built from the Types it is called with ------------------------


class SymbolicOp(OpFromGraph):
    """An :class:`OpFromGraph` whose inner graph a subclass builds, by
    :meth:`build_inner_graph`, from the Types of the inputs it is called with.

    ``MyOp()`` needs no inputs to make: calling it on Variables builds (once per tuple of
    input Types) the Op for those Types and applies it. A subclass may declare
    ``__props__`` (given as keywords, read by ``build_inner_graph``), override
    :meth:`filter_inputs` (to turn Python values into Variables:
    :class:`~arignote.tensor.symbolic.TensorSymbolicOp` does), ``pullback``/``pushforward``
    (else the inner graph is differentiated), and set the class attribute ``inline``
    (``True``: compiled functions inline the inner graph; default ``False``). Other keywords
    go to :class:`OpFromGraph` (``name``, compile keywords). The inner graph may not use
    shared variables implicitly (``strict=True`` by default).

    Printing shows such a node as one Op, without its inner graph (it stands for one
    operation, like a built-in Op).
    """

    inline: bool = False

    def __init__(self, input_types: Sequence[Any] | None = None, **kwargs: Any):
        for prop in getattr(type(self), "__props__", ()):
            if prop in kwargs:
                setattr(self, prop, kwargs.pop(prop))
        self._init_kwargs = dict(kwargs)
        self._built_for: dict[tuple, SymbolicOp] = {}
        if input_types is None:
            return  # built on the first call, for the Types it is given
        kwargs.setdefault("inline", type(self).inline)
        kwargs.setdefault("strict", True)
        formal = [t() for t in input_types]
        outputs = self.build_inner_graph(*formal)
        if isinstance(outputs, Variable):
            outputs = [outputs]
        super().__init__(formal, list(outputs), **kwargs)

    @staticmethod
    def filter_inputs(*inputs: Any) -> tuple:
        """The call's arguments as Variables (here: as given)."""
        return inputs

    def build_inner_graph(self, *inputs: Variable) -> list[Variable]:
        """The outputs, as a list of Variables computed from ``inputs`` (fresh Variables of
        the call's Types). Every subclass defines it."""
        raise NotImplementedError(f"{type(self).__name__} must define build_inner_graph(*inputs) -> outputs")

    @property
    def is_built(self) -> bool:
        """Whether this Op has its inner graph (it was made for given input Types)."""
        return "fgraph" in self.__dict__

    def _props_key(self) -> tuple:
        return tuple(getattr(self, p, None) for p in getattr(type(self), "__props__", ()))

    def _for_inputs(self, inputs: Sequence[Any]) -> SymbolicOp:
        inputs = self.filter_inputs(*inputs)
        for k, v in enumerate(inputs):
            if not isinstance(v, Variable):
                raise TypeError(
                    f"{type(self).__name__}: input {k} must be a Variable, got {type(v).__name__} {v!r} "
                    "(a TensorSymbolicOp converts values with as_tensor_variable)"
                )
        types = tuple(v.type for v in inputs)
        if self.is_built and tuple(self.input_types[: self.n_explicit]) == types:
            return self
        op = self._built_for.get(types)
        if op is None:
            props = dict(zip(getattr(type(self), "__props__", ()), self._props_key()))
            op = type(self)(input_types=list(types), **props, **self._init_kwargs)
            self._built_for[types] = op
        return op

    def __call__(self, *inputs: Any, **kwargs: Any) -> Any:
        inputs = tuple(self.filter_inputs(*inputs))
        return OpFromGraph.__call__(self._for_inputs(inputs), *inputs, **kwargs)

    def make_node(self, *inputs: Any) -> Apply:
        inputs = tuple(self.filter_inputs(*inputs))
        op = self._for_inputs(inputs)
        if len(inputs) == op.n_explicit:
            inputs = (*inputs, *op.shared_inputs)
        return OpFromGraph.make_node(op, *inputs)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SymbolicOp) or not (self.is_built and other.is_built):
            return self is other or (
                type(self) is type(other)
                and not self.is_built
                and not other.is_built  # type: ignore[union-attr]
                and self._props_key() == other._props_key()  # type: ignore[union-attr]
            )
        return super().__eq__(other)

    def __hash__(self) -> int:
        if not self.is_built:
            return hash((type(self), self._props_key()))
        return super().__hash__()

    def __str__(self) -> str:
        if not self.is_built:
            return self._init_kwargs.get("name") or type(self).__name__
        return super().__str__()
