"""Graph rewriting: the engine (``basic``) and the registry of rules (``db``)."""

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
