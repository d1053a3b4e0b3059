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
>>> t = T()
>>> x, y = t("x"), t("y")
>>> z = F()(F()(x), y)
>>> z2 = graph_replace(z, {x: y})
>>> z2.owner.inputs[0].owner.inputs == [y], z.owner.inputs[0].owner.inputs == [x]
(True, True)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from arignote.graph.basic import Variable, clone_get_equiv
from arignote.graph.traversal import ancestors, io_toposort

__all__ = ["clone_replace", "graph_replace", "vectorize_graph"]

ReplaceType = Mapping[Variable, Any] | Iterable[tuple[Variable, Any]] | None


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


def vectorize_graph(outputs: Variable | Sequence[Variable], replace: Mapping[Variable, Any]) -> Any:
    """``outputs`` rebuilt for replacements with extra leading (batch) dimensions; see
    :func:`arignote.tensor.functional.vectorize_graph` (tensor graphs only)."""
    from arignote.tensor.functional import vectorize_graph as _vectorize_graph

    return _vectorize_graph(outputs, replace)
