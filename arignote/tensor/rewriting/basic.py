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

from arignote.graph.rewriting.db import stage_db

__all__ = [
    "register_canonicalize",
    "register_specialize",
    "register_stabilize",
    "register_uncanonicalize",
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
