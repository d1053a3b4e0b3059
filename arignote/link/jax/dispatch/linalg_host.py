"""JAX implementations of the SciPy-only linear algebra Ops: the Schur and QZ decompositions
(:mod:`arignote.tensor.linalg.schur`), the discrete Riccati solver
(:mod:`arignote.tensor.linalg.riccati`) and the tridiagonal LU factorisation and solve
(:mod:`arignote.tensor.linalg.tridiagonal`).

JAX has no QZ, no Riccati solver, no ``gttrf``/``gttrs`` and a CPU-only Schur without
sorting, so each runs its Op's own SciPy code on the host through ``jax.pure_callback``
(:func:`on_host`, which QR's ``mode="raw"`` uses too: JAX has no public Householder form)
(their output shapes follow from the input shapes, so they trace under ``jax.jit``; a batch
runs one matrix at a time).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from arignote.graph.basic import Apply
from arignote.link.jax.dispatch.basic import jax_funcify
from arignote.link.jax.dispatch.static import kept_errors
from arignote.tensor.linalg.riccati import SolveDiscreteARE
from arignote.tensor.linalg.schur import QZ, Schur
from arignote.tensor.linalg.tridiagonal import LUFactorTridiagonal, SolveLUFactorTridiagonal

__all__ = ["on_host"]

Shapes = list[tuple[int, ...]]


def _schur_shapes(op: Schur, shapes: Shapes) -> Shapes:
    return [shapes[0], shapes[0]]


def _qz_shapes(op: QZ, shapes: Shapes) -> Shapes:
    mat, n = shapes[0], shapes[0][0]
    return [mat, mat, (n,), (n,), mat, mat] if op.return_eigenvalues else [mat] * 4


def _dare_shapes(op: SolveDiscreteARE, shapes: Shapes) -> Shapes:
    return [shapes[0]]


def _factor_shapes(op: LUFactorTridiagonal, shapes: Shapes) -> Shapes:
    (n,) = shapes[1]
    return [shapes[0], shapes[1], shapes[2], (max(n - 2, 0),), shapes[1]]


def _solve_shapes(op: SolveLUFactorTridiagonal, shapes: Shapes) -> Shapes:
    return [shapes[5]]


def on_host(op: Any, node: Apply, out_shapes: Callable[[Any, Shapes], Shapes]) -> Callable[..., Any]:
    """The JAX function of ``node`` that runs ``op.perform`` on the host (``jax.pure_callback``),
    its output shapes given by ``out_shapes(op, input shapes)``."""
    outputs = node.outputs
    dtypes = [o.type.numpy_dtype for o in outputs]

    def host(*values: Any) -> tuple:
        cells: list[list[Any]] = [[None] for _ in outputs]
        op.perform(node, [np.asarray(v) for v in values], cells)
        return tuple(np.asarray(c[0], dtype=d) for c, d in zip(cells, dtypes))

    def run(*inputs: Any) -> Any:
        shapes = out_shapes(op, [tuple(int(d) for d in jnp.shape(x)) for x in inputs])
        specs = tuple(jax.ShapeDtypeStruct(s, d) for s, d in zip(shapes, dtypes))
        res = jax.pure_callback(kept_errors(host), specs, *inputs, vmap_method="sequential")
        return res if len(res) > 1 else res[0]

    return run


for _cls, _shapes in (
    (Schur, _schur_shapes),
    (QZ, _qz_shapes),
    (SolveDiscreteARE, _dare_shapes),
    (LUFactorTridiagonal, _factor_shapes),
    (SolveLUFactorTridiagonal, _solve_shapes),
):

    def _register(cls: type = _cls, shapes: Callable = _shapes) -> None:
        @jax_funcify.register(cls)
        def _funcify(op: Any, node: Apply | None = None, **kwargs: Any) -> Callable[..., Any]:
            return on_host(op, node, shapes)

    _register()
