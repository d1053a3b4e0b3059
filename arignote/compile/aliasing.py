"""Protecting a FunctionGraph's inputs from in-place Ops, for code that compiles a graph
itself (PyTensor's ``pytensor.compile.aliasing``): :class:`Supervisor` and
:func:`add_supervisor_to_fgraph`.

``function()`` does this for its own graphs; a library that rewrites a FunctionGraph with a
mode's rewrites and turns it into a function of its own (PyMC's JAX samplers: ``jax_funcify``
of the rewritten graph) attaches a Supervisor first.
"""

from __future__ import annotations

from collections.abc import Sequence

from arignote.compile.io import SymbolicInput
from arignote.graph.destroyhandler import DestroyHandler, Supervisor
from arignote.graph.fg import FunctionGraph

__all__ = ["Supervisor", "add_supervisor_to_fgraph"]


def add_supervisor_to_fgraph(
    fgraph: FunctionGraph, input_specs: Sequence[SymbolicInput], accept_inplace: bool = False
) -> None:
    """Protect the inputs of ``fgraph`` that ``input_specs`` (one per input) do not declare
    mutable, so that in-place rewrites may overwrite the mutable ones only.

    A graph that already holds an in-place node raises ``TypeError`` naming it, unless
    ``accept_inplace``; an input such a node already overwrites is left unprotected.

    >>> import arignote.tensor as pt
    >>> from arignote.compile.io import In
    >>> x, y = pt.dvector("x"), pt.dvector("y")
    >>> fg = FunctionGraph([x, y], [pt.exp(x) + y], clone=False)
    >>> add_supervisor_to_fgraph(fg, [In(x), In(y, mutable=True)])
    >>> fg._supervisor.protected == [x]
    True
    """
    specs = list(input_specs)
    if len(specs) != len(fgraph.inputs):
        raise ValueError(
            f"add_supervisor_to_fgraph: {len(specs)} input specs for {len(fgraph.inputs)} inputs"
        )
    if not accept_inplace:
        for node in fgraph.toposort():
            if getattr(node.op, "destroy_map", None):
                raise TypeError(f"the graph must not contain in-place operations, and holds {node}")
    mutable = [v for spec, v in zip(specs, fgraph.inputs) if spec.mutable]
    handler = getattr(fgraph, "destroy_handler", None)
    if handler is None:
        # (the handler knows the mutable inputs, which it otherwise protects like the others)
        fgraph.attach_feature(DestroyHandler(mutable=mutable))
    else:
        handler.mutable.update(mutable)
    fgraph.attach_feature(
        Supervisor(
            v for spec, v in zip(specs, fgraph.inputs) if not (spec.mutable or fgraph.has_destroyers([v]))
        )
    )
