"""The JAX function of ``MakeSlice`` (:mod:`arignote.tensor.type_other`): a Python ``slice``
of its bounds. A slice is not an array: it is a value inside a graph (an input of another
node), and ``jax.jit`` cannot return one, so a graph whose output is a slice runs in JAX only
outside ``jit``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from arignote.graph.basic import Apply
from arignote.link.jax.dispatch.basic import jax_funcify
from arignote.tensor.type_other import MakeSlice

__all__: list[str] = []


@jax_funcify.register(MakeSlice)
def _make_slice(op: MakeSlice, node: Apply | None = None, **kwargs: Any) -> Callable[..., Any]:
    def make_slice(*bounds: Any) -> slice:
        return slice(*bounds)

    return make_slice
