"""Declaring assumptions: :func:`assume` and its Op, :class:`SpecifyAssumptions`.

The node is a view of its input that says, for instance, "this matrix is positive
definite". The linear algebra rewrites read it through
:func:`~arignote.assumptions.core.check_assumption`. Early in compilation (canonicalize)
:func:`drain_specify_assumptions` moves the declaration into the graph's
:class:`~arignote.assumptions.core.AssumptionFeature` and removes the node, so that it never
runs and never stands between two Ops that other rewrites would combine.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from arignote.assumptions.core import (
    ALL_KEYS,
    AssumptionFeature,
    AssumptionKey,
    ConflictingAssumptionsError,
    FactState,
    _feature_of,
    register_assumption,
)
from arignote.graph.basic import Apply, Variable
from arignote.graph.fg import FunctionGraph
from arignote.graph.op import PassThroughOp
from arignote.graph.rewriting.basic import node_rewriter
from arignote.tensor.conversion import as_tensor_variable
from arignote.tensor.rewriting.basic import register_canonicalize

__all__ = ["SpecifyAssumptions", "assume", "drain_specify_assumptions", "specify_assumption_rule"]

_KEYS = {key.name: key for key in ALL_KEYS}


class SpecifyAssumptions(PassThroughOp):
    """``x`` unchanged, with declared facts: ``assumptions`` is a tuple of ``(key name,
    FactState)`` pairs sorted by name (equal declarations are equal Ops, so their nodes
    merge). Its gradient passes straight through."""

    __props__ = ("assumptions",)
    view_map = {0: [0]}

    def __init__(self, assumptions: dict[str, FactState] | Sequence[tuple[str, FactState]]):
        items = dict(assumptions)
        for name, state in items.items():
            if name not in _KEYS:
                raise ValueError(f"SpecifyAssumptions: unknown assumption {name!r}; known: {sorted(_KEYS)}")
            if FactState(state) not in (FactState.TRUE, FactState.FALSE):
                raise ValueError(f"SpecifyAssumptions: {name} must be declared TRUE or FALSE, got {state!r}")
        self.assumptions = tuple(sorted((n, FactState(s)) for n, s in items.items()))

    def facts(self) -> dict[AssumptionKey, FactState]:
        return {_KEYS[name]: state for name, state in self.assumptions}

    def __str__(self) -> str:
        parts = [name if state == FactState.TRUE else f"!{name}" for name, state in self.assumptions]
        return f"SpecifyAssumptions{{{', '.join(parts)}}}"

    def make_node(self, x: Any) -> Apply:
        x = as_tensor_variable(x)
        if x.type.ndim < 2:
            raise TypeError(
                f"assume: matrix assumptions need a matrix (or a stack of them), got {x} of Type {x.type}"
            )
        return Apply(self, [x], [x.type()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        output_storage[0][0] = inputs[0]


def specify_assumption_rule(
    key: AssumptionKey,
    op: SpecifyAssumptions,
    feature: AssumptionFeature,
    fgraph: Any,
    node: Apply,
    input_states: list,
) -> list[FactState]:
    """The declared state joined with what is known of the input: a declaration that
    contradicts what the graph shows is a :class:`ConflictingAssumptionsError`."""
    declared = op.facts().get(key, FactState.UNKNOWN)
    joined = declared | input_states[0]
    if joined == FactState.CONFLICT and declared:
        raise ConflictingAssumptionsError(
            f"assume: {node.inputs[0]} is declared {'' if declared == FactState.TRUE else 'not '}{key}, "
            f"but the graph shows it is {'' if input_states[0] == FactState.TRUE else 'not '}{key}"
        )
    return [joined]


for _key in ALL_KEYS:
    register_assumption(_key, SpecifyAssumptions)(specify_assumption_rule)


def assume(
    x: Any,
    diagonal: bool | None = None,
    lower_triangular: bool | None = None,
    upper_triangular: bool | None = None,
    symmetric: bool | None = None,
    positive_definite: bool | None = None,
    orthogonal: bool | None = None,
    selection: bool | None = None,
    permutation: bool | None = None,
) -> Any:
    """``x`` (a matrix or a stack of matrices; a list or tuple of them: each) with declared
    facts for the rewrites: each keyword ``True`` (it holds), ``False`` (it does not) or
    ``None`` (nothing said). The values are not checked: a false declaration gives wrong
    results, as a wrong ``assume_a`` does for ``scipy.linalg.solve``.

    >>> import numpy as np
    >>> import arignote, arignote.tensor as pt
    >>> a = pt.dmatrix("a")
    >>> b = pt.dvector("b")
    >>> x = pt.linalg.solve(assume(a, diagonal=True), b)
    >>> f = arignote.function([a, b], x)
    >>> [str(n.op) for n in f.maker.fgraph.toposort()]   # no LAPACK solve left
    ['ExtractDiag{offset=0, axis1=0, axis2=1, view=True}', 'True_div']
    >>> f(np.diag([2.0, 4.0]), np.array([1.0, 1.0])).tolist()
    [0.5, 0.25]
    """
    if isinstance(x, (list, tuple)):
        return type(x)(
            assume(
                v,
                diagonal=diagonal,
                lower_triangular=lower_triangular,
                upper_triangular=upper_triangular,
                symmetric=symmetric,
                positive_definite=positive_definite,
                orthogonal=orthogonal,
                selection=selection,
                permutation=permutation,
            )
            for v in x
        )
    given = {
        "diagonal": diagonal,
        "lower_triangular": lower_triangular,
        "upper_triangular": upper_triangular,
        "symmetric": symmetric,
        "positive_definite": positive_definite,
        "orthogonal": orthogonal,
        "selection": selection,
        "permutation": permutation,
    }
    for name, flag in given.items():
        if flag is not None and not isinstance(flag, bool):
            raise TypeError(f"assume: {name} must be True, False or None, got {flag!r}")
    facts = {name: FactState.of(flag) for name, flag in given.items() if flag is not None}
    if not facts:
        return as_tensor_variable(x)
    out = SpecifyAssumptions(facts)(x)
    AssumptionFeature().states(out)  # a declaration that contradicts the graph fails here
    return out


@register_canonicalize
@node_rewriter([SpecifyAssumptions])
def drain_specify_assumptions(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """Move a declaration into the graph's AssumptionFeature and replace the node by its
    input (:func:`assume` checked it against what the graph shows)."""
    _feature_of(fgraph).declare(node.inputs[0], node.op.facts())
    return [node.inputs[0]]
