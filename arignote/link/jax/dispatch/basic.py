"""The JAX backend's dispatcher: the JAX function that computes a node, chosen by Op type.

``jax_funcify(op, node=node, **kwargs)`` returns a function of the node's input values (JAX
arrays, positionally) that returns the node's output value, or a tuple of them when the node
has several outputs. It is traced by ``jax.jit``, so it must be pure and use ``jax.numpy``/
``jax.lax``; whatever the Op decides from its props or the node's static Types it decides once,
here, outside the returned function. Op families register theirs with
``@jax_funcify.register(OpClass)`` from the modules beside this one.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from arignote.graph.basic import Apply
from arignote.graph.op import Op

__all__ = ["jax_funcify"]


@functools.singledispatch
def jax_funcify(op: Op, node: Apply | None = None, **kwargs: Any) -> Callable[..., Any]:
    """The JAX function computing ``node`` (an Apply of ``op``); see the module docstring.

    Ops without a JAX implementation raise, naming the Op, so that a graph is never run
    half in JAX and half in Python by surprise.
    """
    raise NotImplementedError(
        f"{type(op).__name__} ({op}) has no JAX implementation: register one with "
        f"arignote.link.jax.dispatch.jax_funcify.register({type(op).__name__})"
    )
