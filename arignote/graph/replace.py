"""Building a new graph from an old one with some Variables replaced.

>>> from arignote.graph.basic import Apply
>>> from arignote.graph.op import Op
>>> from arignote.graph.type import Type
>>> from arignote.graph.replace import clone_replace, graph_replace
>>> class T(Type):
...     def filter(self, data, strict=False, allow_downcast=None):
...         return data
>>> class F(Op):
...     __props__ = ()
...     def make_node(self, *xs):
...         return Apply(self, list(xs), [xs[0].type()])
...     def perform(self, node, inputs, output_storage):
...         output_storage[0][0] = sum(inputs)
>>> t = T()
>>> x, y = t("x"), t("y")
>>> z = F()(F()(x), y)
>>> z2 = graph_replace(z, {x: y})
>>> z2.owner.inputs[0].owner.inputs == [y], z.owner.inputs[0].owner.inputs == [x]
(True, True)
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Protocol

from arignote.graph.basic import Apply, Variable, clone_get_equiv
from arignote.graph.op import Op
from arignote.graph.traversal import ancestors, io_toposort
from arignote.graph.type import Type

__all__ = [
    "batch_graph",
    "batch_node",
    "clone_replace",
    "graph_replace",
    "register_batch_rule",
    "register_value_batching",
    "vectorize",
    "vectorize_graph",
]

ReplaceType = Mapping[Variable, Any] | Iterable[tuple[Variable, Any]] | None
#: the replacements ``graph_replace`` takes (PyTensor's name): pairs or a dict
ReplaceTypes = Iterable[tuple[Variable, Variable]] | dict[Variable, Variable]


def _pairs(replace: ReplaceType, strict: bool) -> dict[Variable, Variable]:
    if replace is None:
        return {}
    items = replace.items() if isinstance(replace, Mapping) else replace
    memo: dict[Variable, Variable] = {}
    for pair in items:
        try:
            old, new = pair
        except (TypeError, ValueError):
            raise TypeError(f"replacements must be (old, new) pairs or a dict, got {pair!r}") from None
        if not isinstance(old, Variable):
            raise TypeError(f"a replaced key must be a Variable, got {type(old).__name__} {old!r}")
        if old in memo:
            raise ValueError(f"{old} is replaced twice")
        if not isinstance(new, Variable) or strict:
            new = old.type.filter_variable(new, allow_convert=True)
        memo[old] = new
    return memo


def _as_list(outputs: Variable | Sequence[Variable]) -> tuple[list[Variable], bool]:
    if isinstance(outputs, Variable):
        return [outputs], True
    return list(outputs), False


def clone_replace(
    output: Variable | Sequence[Variable], replace: ReplaceType = None, **rebuild_kwds: Any
) -> Variable | list[Variable]:
    """Copy the graph of ``output`` with each ``old`` Variable replaced by ``new``.

    Every node between the roots and ``output`` is copied (the roots themselves are
    kept); the replacements' own graphs are used as they are, so ``{x: x + 1}`` means
    "where the graph used x, use x + 1 of the original x". ``strict`` (default True)
    requires each replacement to fit the replaced Variable's Type (narrower is fine);
    with ``strict=False`` nodes are rebuilt for the new Types.
    """
    strict = rebuild_kwds.pop("strict", True)
    outs, single = _as_list(output)
    memo = _pairs(replace, strict)
    equiv = clone_get_equiv([], outs, copy_inputs=False, copy_orphans=False, memo=memo, strict=strict)
    result = [equiv[o] for o in outs]
    return result[0] if single else result


def graph_replace(
    outputs: Variable | Sequence[Variable], replace: ReplaceType = None, *, strict: bool = True
) -> Variable | list[Variable]:
    """Rebuild only the part of ``outputs``' graph that depends on replaced Variables.

    Replaced Variables may be intermediate. Nodes untouched by a replacement are shared
    with the original graph, which is never modified. With ``strict`` (default) a
    replacement for a Variable that ``outputs`` do not depend on is a ``ValueError``.
    """
    outs, single = _as_list(outputs)
    memo = _pairs(replace, strict=True)
    if strict and memo:
        found = {v for v in ancestors(outs, blockers=memo) if v in memo}
        unused = [v for v in memo if v not in found]
        if unused:
            raise ValueError(f"graph_replace: the outputs do not depend on {unused}; nothing to replace")
    for node in io_toposort(list(memo), outs):
        new_inputs = [memo.get(i, i) for i in node.inputs]
        if any(n is not o for n, o in zip(new_inputs, node.inputs)):
            new_node = node.clone_with_new_inputs(new_inputs, strict=True)
            for old_out, new_out in zip(node.outputs, new_node.outputs):
                # an output that is itself replaced keeps its replacement
                memo.setdefault(old_out, new_out)
    result = [memo.get(o, o) for o in outs]
    return result[0] if single else result


# --- vectorize_graph ------------------------------------------------------------------------
#
# A graph is batched node by node. The node step is ``batch_node``, dispatched on the Op's
# class: each Op registers its rule next to its definition (``register_batch_rule``). What
# depends on the kind of value (how long a batch is, how to repeat a value along a new batch
# dimension, how to merge several batch dimensions into one, what to do with an Op that has
# no rule) is asked of the Type of the values (``register_value_batching``): the graph layer
# knows no Type of its own, and tensors register theirs.

#: a rule: ``(op, node, args, batched) -> [(output, is_batched)]``, or ``None`` (cannot)
BatchRule = Callable[[Op, Apply, list, list], "list[tuple[Variable, bool]] | None"]


@functools.singledispatch
def batch_node(op: Op, node: Apply, args: list, batched: list) -> list[tuple[Variable, bool]] | None:
    """``node`` rebuilt for ``args``, where ``args[i]`` carries one more, leading, batch
    dimension when ``batched[i]``: ``(output, is_batched)`` per output, or ``None`` when the
    Op has no rule (the values' :class:`ValueBatching` then provides a fallback)."""
    return None


def register_batch_rule(*op_classes: type) -> Callable[[BatchRule], BatchRule]:
    """Decorator: the batching rule for Ops of these classes (and their subclasses).

    The rule gets the Op, the original node, its new inputs (batched ones with a leading
    batch dimension, the others as they were) and a flag per input saying which are
    batched; it returns ``(output, is_batched)`` per output, or ``None`` to fall back.
    """

    def register(rule: BatchRule) -> BatchRule:
        for cls in op_classes:
            batch_node.register(cls)(rule)
        return rule

    return register


class ValueBatching(Protocol):
    """What :func:`vectorize_graph` needs to know of one kind of value (one Type class)."""

    def check(self, key: Variable, value: Any) -> tuple[Variable, int]:
        """``value`` as a Variable replacing ``key``, and its number of extra leading dims."""

    def length(self, v: Variable) -> Any:
        """The length of ``v``'s leading (batch) dimension: an int if static, else a Variable."""

    def broadcast(self, v: Variable, n: Any) -> Variable:
        """``v`` repeated ``n`` times along a new leading dimension."""

    def merge_batch_dims(self, values: dict[Variable, Variable], extras: list[int]) -> tuple[dict, Any]:
        """The values with their batch dimensions (broadcast together) merged into one, and
        the batch shape to restore with :meth:`split_batch_dim` (``None``: nothing merged)."""

    def split_batch_dim(self, v: Variable, batch: Any) -> Variable:
        """``v``'s leading dimension split back into the batch shape."""

    def fallback(self, node: Apply, args: list, batched: list) -> list[tuple[Variable, bool]]:
        """``node`` batched when its Op has no rule (or its rule declines)."""


_value_batching: dict[type, ValueBatching] = {}


def register_value_batching(type_cls: type, batching: ValueBatching) -> None:
    """How values of Types of class ``type_cls`` (and subclasses) are batched."""
    _value_batching[type_cls] = batching


def _batching_of(t: Type) -> ValueBatching:
    for cls in type(t).__mro__:
        found = _value_batching.get(cls)
        if found is not None:
            return found
    raise TypeError(
        f"vectorize_graph: values of Type {t} cannot be batched (no batching for {type(t).__name__})"
    )


def vectorize(
    outputs: Variable | Sequence[Variable], replace: Mapping[Variable, Any]
) -> Variable | list[Variable]:
    """:func:`vectorize_graph` under its old name (with PyTensor's UserWarning saying so)."""
    warnings.warn("vectorize was renamed to vectorize_graph", UserWarning, stacklevel=2)
    return vectorize_graph(outputs, replace)


def vectorize_graph(
    outputs: Variable | Sequence[Variable], replace: Mapping[Variable, Any]
) -> Variable | list[Variable]:
    """``outputs`` rebuilt for the values of ``replace``, which may have extra leading (batch)
    dimensions beyond their keys'.

    The batch dimensions of all the values broadcast together (right-aligned, a static 1
    against any length) and lead each output that depends on them; an output that depends
    on none is returned as it is. A value with no extra dimension simply replaces its key
    (its dtype may differ). Returns a Variable for a Variable, a list for a sequence.

    >>> import numpy as np
    >>> import arignote.tensor as pt
    >>> x = pt.dvector("x")
    >>> xs = pt.dtensor3("xs")
    >>> y = vectorize_graph(pt.exp(x).sum(), {x: xs})
    >>> y.type.ndim
    2
    """
    single = isinstance(outputs, Variable)
    outs = [outputs] if single else list(outputs)
    plain: dict = {}
    batched: dict = {}
    extras: list[int] = []
    batching = None
    for key, value in dict(replace).items():
        if not isinstance(key, Variable):
            raise TypeError(f"vectorize_graph: the replaced {key!r} must be a Variable")
        batching = _batching_of(key.type)
        value, extra = batching.check(key, value)
        if extra:
            batched[key] = value
            extras.append(extra)
        else:
            plain[key] = value
    for k, o in enumerate(outs):
        if not isinstance(o, Variable):
            raise TypeError(f"vectorize_graph: output {k} must be a Variable, got {type(o).__name__} {o!r}")
    outs = _rebuild(outs, plain)
    if batched:
        assert batching is not None
        flat, batch = batching.merge_batch_dims(batched, extras)
        results = batch_graph(outs, flat)
        outs = [
            o if r is None else (r if batch is None else batching.split_batch_dim(r, batch))
            for o, r in zip(outs, results)
        ]
    return outs[0] if single else outs


def _rebuild(outputs: list, replace: dict) -> list:
    """``outputs`` rebuilt node by node with the variables of ``replace`` substituted (no
    new dimensions: their Types may differ, so each node is made again)."""
    if not replace:
        return outputs
    memo = dict(replace)
    for node in io_toposort(list(replace), outputs):
        if any(i in memo for i in node.inputs):
            new = node.op.make_node(*(memo.get(i, i) for i in node.inputs))
            memo.update(zip(node.outputs, new.outputs))
    return [memo.get(o, o) for o in outputs]


def batch_graph(outputs: Sequence[Variable], replace: Mapping[Variable, Variable]) -> list[Variable | None]:
    """The step of :func:`vectorize_graph` for exactly one batch dimension: ``outputs``
    computed for stacked values of the keys of ``replace``.

    Each value of ``replace`` has one more (leading) dimension than its key: a stack of
    values for it, all of the same batch length. Returns, per output, its batched
    version (with that leading dimension), or ``None`` for an output that does not
    depend on any key. The original graph is not changed. (:func:`arignote.gradient.jacobian`
    gets every row of a Jacobian from one reverse pass this way.)
    """
    for k, v in replace.items():
        kn, vn = getattr(k.type, "ndim", None), getattr(v.type, "ndim", None)
        if kn is None or vn != kn + 1:
            raise ValueError(
                f"vectorize_graph: {v} ({v.type}) must have one more dimension than {k} ({k.type})"
            )
    batched: dict = dict(replace)  # Variable -> its batched version
    subst: dict = {}  # Variable -> an unbatched replacement (its node had a batched input)
    for node in io_toposort(list(replace), list(outputs)):
        ins = node.inputs
        flags = [i in batched for i in ins]
        if not any(flags):
            if any(i in subst for i in ins):
                new = node.op.make_node(*(subst.get(i, i) for i in ins))
                subst.update(zip(node.outputs, new.outputs))
            continue
        args = [batched[i] if f else subst.get(i, i) for i, f in zip(ins, flags)]
        results = batch_node(node.op, node, args, flags)
        if results is None:
            first = next(a for a, f in zip(args, flags) if f)
            results = _batching_of(first.type).fallback(node, args, flags)
        for o, (v, is_batched) in zip(node.outputs, results):
            if is_batched:
                batched[o] = v
            else:
                subst[o] = v
    result: list[Variable | None] = []
    n = None
    for o in outputs:
        if o in batched:
            result.append(batched[o])
        elif o in subst:
            first = next(iter(replace.values()))
            batching = _batching_of(first.type)
            if n is None:
                n = batching.length(first)
            result.append(batching.broadcast(subst[o], n))
        else:
            result.append(None)
    return result
