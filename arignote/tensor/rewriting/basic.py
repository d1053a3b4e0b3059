"""PyTensor's decorators for registering tensor rewrites in the pipeline's stages.

``@register_canonicalize``, ``@register_stabilize``, ``@register_specialize`` and
``@register_uncanonicalize`` register a node rewriter (or a graph rewriter, or a database)
in that stage of the compilation pipeline (``arignote.compile.mode.optdb[stage]``, a view
of ``rewrite_registry``), so ``function()`` runs it in the modes its tags select:
canonicalize rules are tagged ``fast_run`` and ``fast_compile``, the others ``fast_run``.
Each is usable bare or with extra tags (``@register_canonicalize("my_tag")``) and a
``name=`` (by default the rule's name, which is also a tag: ``Mode.excluding(name)``).

>>> import arignote
>>> import arignote.tensor as pt
>>> from arignote.graph.rewriting.basic import node_rewriter
>>> @register_canonicalize("doc_example")
... @node_rewriter([pt.log])
... def doc_log_of_exp(fgraph, node):
...     (arg,) = node.inputs
...     if arg.owner is not None and arg.owner.op == pt.exp:
...         return [arg.owner.inputs[0]]
...     return None
>>> x = pt.dvector("x")
>>> f = arignote.function([x], pt.log(pt.exp(x)))
>>> f.maker.fgraph.outputs[0] is f.maker.fgraph.inputs[0]  # log(exp(x)) became x
True
>>> from arignote.graph.rewriting.db import stage_db
>>> stage_db("canonicalize").registry.unregister("canonicalize", "doc_log_of_exp")
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from arignote.graph.basic import Apply, Constant, Variable
from arignote.graph.fg import FunctionGraph
from arignote.graph.rewriting.basic import constant_folding, folded_values, in2out, node_rewriter
from arignote.graph.rewriting.db import stage_db
from arignote.tensor.conversion import NotScalarConstantError, get_scalar_constant_value
from arignote.tensor.raising import Assert, CheckAndRaise

__all__ = [
    "constant_folding",
    "local_remove_all_assert",
    "local_remove_useless_assert",
    "register_canonicalize",
    "register_specialize",
    "register_stabilize",
    "register_uncanonicalize",
    "register_useless",
    "topo_constant_folding",
    "topo_unconditional_constant_folding",
    "unconditional_constant_folding",
]


def _registrar(stage: str, default_tags: tuple[str, ...]) -> Callable[..., Any]:
    def register(rewriter: Any = None, *tags: str, **kwargs: Any) -> Any:
        if rewriter is None or isinstance(rewriter, str):  # @register_x(...) with arguments
            first = () if rewriter is None else (rewriter,)

            def decorate(inner: Any) -> Any:
                return register(inner, *first, *tags, **kwargs)

            return decorate
        name = kwargs.pop("name", None) or getattr(rewriter, "__name__", None) or rewriter.name
        stage_db(stage).register(name, rewriter, *default_tags, *tags, **kwargs)
        return rewriter

    register.__name__ = f"register_{stage}"
    register.__doc__ = (
        f"Register a rewriter in the {stage} stage, tagged {', '.join(default_tags)} and ``tags``; "
        "usable as ``@register_{stage}``, ``@register_{stage}('tag', ...)`` or with ``name=``."
    ).replace("{stage}", stage)
    return register


register_canonicalize = _registrar("canonicalize", ("fast_run", "fast_compile"))
register_stabilize = _registrar("stabilize", ("fast_run",))
register_specialize = _registrar("specialize", ("fast_run",))
register_uncanonicalize = _registrar("uncanonicalize", ("fast_run",))


def register_useless(rewriter: Any = None, *tags: str, **kwargs: Any) -> Any:
    """Register a rewriter that removes useless work (an Op that returns its input, a
    redundant check): it runs in the canonicalize stage (tagged ``fast_run`` and
    ``fast_compile``) and again in specialize (``fast_run``), both also tagged ``useless``
    and ``tags``. Usable as ``@register_useless``, ``@register_useless("tag", ...)`` or
    with ``name=``."""
    if rewriter is None or isinstance(rewriter, str):
        first = () if rewriter is None else (rewriter,)

        def decorate(inner: Any) -> Any:
            return register_useless(inner, *first, *tags, **kwargs)

        return decorate
    register_canonicalize(rewriter, "useless", *tags, **kwargs)
    register_specialize(rewriter, "useless", *tags, **kwargs)
    return rewriter


@node_rewriter(None)
def unconditional_constant_folding(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """A node whose inputs are all constants is computed and replaced by constants, even
    where its Op's ``do_constant_folding`` declines (an ``Alloc``, a large view): for
    graphs whose value is wanted now (PyMC's ``constant_fold``), not for compiled code."""
    if not node.inputs or not all(isinstance(i, Constant) for i in node.inputs):
        return None
    return [out.type.make_constant(v) for out, v in zip(node.outputs, folded_values(node))]


#: :func:`constant_folding` over the whole graph, as one rewriter
#: (``rewrite_graph(out, custom_rewrite=topo_constant_folding)``)
topo_constant_folding = in2out(constant_folding, ignore_newtrees=True, name="topo_constant_folding")
#: :func:`unconditional_constant_folding` over the whole graph, as one rewriter
topo_unconditional_constant_folding = in2out(
    unconditional_constant_folding, ignore_newtrees=True, name="topo_unconditional_constant_folding"
)


# --- run-time checks (CheckAndRaise, Assert) ----------------------------------------------


@register_useless
@node_rewriter([CheckAndRaise])
def local_remove_useless_assert(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """A check's conditions that are constants and true are dropped; a check left with no
    condition is its value. (A condition that is a false constant stays: the check fails
    when the function runs.)"""
    value, *conds = node.inputs
    kept = []
    for cond in conds:
        try:
            if get_scalar_constant_value(cond):
                continue
        except NotScalarConstantError:
            pass
        kept.append(cond)
    if not kept:
        return [value]
    if len(kept) < len(conds):
        return [node.op(value, *kept)]
    return None


@node_rewriter([Assert])
def local_remove_all_assert(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """Every ``Assert`` is removed, its value passed on unchecked. Unsafe, so never on by
    default: ``mode.including("local_remove_all_assert")`` (or ``"unsafe"``) turns it on.
    ``CheckAndRaise`` nodes of other exception types stay."""
    return [node.inputs[0]]


for _stage in ("canonicalize", "stabilize", "specialize"):
    stage_db(_stage).register(
        "local_remove_all_assert", local_remove_all_assert, "unsafe", use_db_name_as_tag=False
    )
