"""Graph rewriting: the engine (``engine``, re-exported with PyTensor's API by ``basic``),
merging (``merge``), the one registry of rules (``registry``) and PyTensor's databases as
views of it (``db``), patterns (``unify``) and ``utils`` (``rewrite_graph``,
``is_same_graph``)."""

from arignote.graph.rewriting.basic import NodeRewriter, apply_node_rewriters, merge_graph, node_rewriter
from arignote.graph.rewriting.db import RewriteRegistry, RulesByOp, register_rewrite, rewrite_registry

__all__ = [
    "NodeRewriter",
    "RewriteRegistry",
    "RulesByOp",
    "apply_node_rewriters",
    "merge_graph",
    "node_rewriter",
    "register_rewrite",
    "rewrite_registry",
]
