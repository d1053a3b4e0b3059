"""``pytensor.link.basic``'s path for ``Container``, the storage cell of a compiled
function's inputs and shared values, whose home is :mod:`arignote.graph.container` (shared
variables, in the graph layer, hold one)."""

from arignote.graph.container import Container

__all__ = ["Container"]
