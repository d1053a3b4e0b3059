"""The JAX backend's dispatcher: the JAX function that computes a node, chosen by Op type.

``jax_funcify(op, node=node, **kwargs)`` returns a function of the node's input values (JAX
arrays, positionally) that returns the node's output value, or a tuple of them when the node
has several outputs. It is traced by ``jax.jit``, so it must be pure and use ``jax.numpy``/
``jax.lax``; whatever the Op decides from its props or the node's static Types it decides once,
here, outside the returned function. Op families register theirs with
``@jax_funcify.register(OpClass)`` from the modules beside this one.

``jax_typify(value)`` converts a value a graph holds (a constant's data) into what the JAX
function takes, chosen by the value's type: a NumPy Generator becomes a JAX key
(:mod:`.random`), a SciPy matrix a ``BCOO`` (:mod:`.sparse.values`); other values pass as
they are (JAX takes NumPy arrays as compile-time constants). A custom Type's values are
converted by registering their class.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import jax.numpy as jnp

from arignote.graph.basic import Apply
from arignote.graph.op import Op

__all__ = ["jax_funcify", "jax_typify"]


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


@functools.singledispatch
def jax_typify(data: Any, dtype: Any = None, **kwargs: Any) -> Any:
    """``data`` as the JAX function takes it (see the module docstring): as it is, or as an
    array of ``dtype`` when one is given."""
    return data if dtype is None else jnp.asarray(data, dtype=dtype)
