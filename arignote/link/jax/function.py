"""The pure JAX function of an arignote graph: :func:`jax_function`.

What ``mode="JAX"`` compiles, handed to the user instead: a function of JAX arrays that
``jax.jit``, ``jax.vmap``, ``jax.grad``, ``shard_map``/``jax.sharding`` and ``jax.export``
take like any function written with ``jax.numpy``.

>>> import jax
>>> import numpy as np
>>> import arignote.tensor as pt
>>> x = pt.dvector("x")
>>> mu = pt.dscalar("mu")
>>> logp = -0.5 * ((x - mu) ** 2).sum()
>>> f = jax_function(logp, [x, mu])
>>> float(f(np.array([1.0, 2.0]), 0.5))
-1.25
>>> float(jax.grad(f, argnums=1)(np.array([1.0, 2.0]), 0.5))
2.0
>>> jax.vmap(f, in_axes=(None, 0))(np.array([1.0, 2.0]), np.array([0.0, 1.0])).tolist()
[-2.5, -0.5]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import jax.numpy as jnp
import numpy as np
import scipy.sparse as scipy_sparse

from arignote.compile.mode import get_mode
from arignote.graph.basic import Constant, Variable
from arignote.graph.fg import FunctionGraph
from arignote.graph.shared import SharedVariable
from arignote.graph.traversal import graph_inputs
from arignote.link.jax.dispatch.graph import funcify_fgraph
from arignote.link.jax.dispatch.random import generator_to_key
from arignote.link.jax.dispatch.sparse.values import BCOO, to_bcoo

__all__ = ["jax_function"]


def jax_function(
    outputs: Variable | Sequence[Variable] | FunctionGraph,
    inputs: Sequence[Variable] | None = None,
    *,
    rewrite: bool = True,
) -> Callable[..., Any]:
    """The pure JAX function computing ``outputs`` from ``inputs``.

    ``outputs``: a Variable (the function returns one array), a list of them (a tuple), or
    a FunctionGraph (its inputs and outputs; ``inputs`` is then not given). ``rewrite``:
    run the JAX mode's rewrites on (a copy of) the graph first, as ``mode="JAX"`` does.

    Shared variables that ``inputs`` leave out are constants of the function, with the
    values they hold now (a shared generator, its key now: list it in ``inputs`` to
    thread a key yourself). A generator input takes a JAX key. A sparse input takes a
    ``jax.experimental.sparse.BCOO`` (a SciPy matrix is converted when the function is
    called outside ``jax.jit``), and a sparse output is one: ``BCOO.todense()`` or
    :func:`~arignote.link.jax.dispatch.sparse.values.to_scipy` read it.
    """
    if isinstance(outputs, FunctionGraph):
        if inputs is not None:
            raise TypeError("jax_function: give a FunctionGraph or outputs and inputs, not both")
        fgraph = outputs.clone() if rewrite else outputs
        single = False
        shared: list[SharedVariable] = []
    else:
        single = isinstance(outputs, Variable)
        outs = [outputs] if single else list(outputs)
        for k, o in enumerate(outs):
            if not isinstance(o, Variable):
                raise TypeError(f"jax_function: output {k} is {type(o).__name__} {o!r}, not a Variable")
        if inputs is None:
            inputs = []
        ins = list(inputs)
        for k, i in enumerate(ins):
            if not isinstance(i, Variable) or i.owner is not None or isinstance(i, Constant):
                raise TypeError(f"jax_function: input {k} ({i!r}) must be a root Variable of the graph")
        roots = [v for v in graph_inputs(outs) if not isinstance(v, Constant)]
        shared = [v for v in roots if isinstance(v, SharedVariable) and v not in set(ins)]
        missing = [v for v in roots if v not in set(ins) and not isinstance(v, SharedVariable)]
        if missing:
            raise TypeError(
                f"jax_function: the outputs depend on {', '.join(map(str, missing))}, which "
                "is not among the inputs"
            )
        fgraph = FunctionGraph([*ins, *shared], outs, clone=True)
    if rewrite:
        get_mode("JAX").optimizer(fgraph)
    body = funcify_fgraph(fgraph)
    bound = [_shared_value(v) for v in shared]
    dtypes = [getattr(o.type, "dtype", None) for o in fgraph.outputs]
    n_in = len(fgraph.inputs) - len(bound)

    def arignote_graph(*args: Any) -> Any:
        if len(args) != n_in:
            raise TypeError(f"this function takes {n_in} input(s), got {len(args)}")
        args = tuple(to_bcoo(a) if scipy_sparse.issparse(a) else a for a in args)
        outs = body(*args, *bound)
        outs = tuple(
            o
            if d is None or isinstance(o, BCOO) or jnp.asarray(o).dtype == np.dtype(d)
            else jnp.asarray(o).astype(d)
            for o, d in zip(outs, dtypes)
        )
        return outs[0] if single else outs

    return arignote_graph


def _shared_value(var: SharedVariable) -> Any:
    """The value a shared variable holds now, as the function's constant (a value already
    on the device stays there)."""
    value = var.container.storage[0]
    if isinstance(value, np.random.Generator):
        return generator_to_key(value)
    if scipy_sparse.issparse(value):
        return to_bcoo(value)
    return value
