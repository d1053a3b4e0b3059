"""The discrete algebraic Riccati equation, :class:`SolveDiscreteARE` and
``solve_discrete_are``: the stabilising ``X`` with

    ``A^T X A - X - A^T X B (R + B^T X B)^-1 B^T X A + Q = 0``

(the steady state of a Kalman filter, the cost-to-go of a discrete LQR problem), solved by
``scipy.linalg.solve_discrete_are``.

The pullback: with the gain ``K = (R + B^T X B)^-1 B^T X A`` and the closed loop
``C = A - B K``, the equation reads ``X = C^T X C + K^T R K + Q``, and differentiating it
(the terms in ``dK`` cancel, ``K`` being optimal) gives ``dX = C^T dX C + sym(C^T X dA) -
sym(C^T X dB K) + K^T dR K + dQ``, where ``sym(M) = M + M^T``. So for a cotangent ``G`` of
``X`` (symmetrised, ``X`` being symmetric), ``S`` solving the discrete Lyapunov equation
``S = C S C^T + G`` gives ``Q_bar = S``, ``R_bar = K S K^T``, ``A_bar = 2 X C S`` and
``B_bar = -2 X C S K^T``.

>>> import numpy as np
>>> import arignote.tensor as pt
>>> x = solve_discrete_are(np.array([[0.9]]), np.array([[1.0]]), np.array([[1.0]]), np.array([[1.0]]))
>>> x.eval().round(4)
array([[1.4839]])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from arignote.graph.basic import Apply, Variable
from arignote.graph.null_type import is_disconnected
from arignote.graph.op import Op
from arignote.lazy import lazy_module
from arignote.tensor.alloc import zeros_like
from arignote.tensor.linalg.composed import solve_discrete_lyapunov
from arignote.tensor.linalg.operands import (
    apply_core,
    as_core,
    as_stack,
    check_square,
    complex_grads,
    lapack_dtype,
    mT,
    register_core_batch_rule,
    square_length,
    sym,
)
from arignote.tensor.linalg.solve import solve
from arignote.tensor.products import dot
from arignote.tensor.type import TensorType

# imported on first use (see arignote.lazy)
scipy_linalg = lazy_module("scipy.linalg")

__all__ = ["SolveDiscreteARE", "solve_discrete_are"]


def _static(x: Variable, axis: int) -> int | None:
    return x.type.shape[axis]


class SolveDiscreteARE(Op):
    """``X`` solving the discrete algebraic Riccati equation for ``A`` (m x m), ``B``
    (m x n), ``Q`` (m x m, symmetric) and ``R`` (n x n, symmetric positive definite); see
    the module for the equation and the pullback."""

    __props__ = ()
    gufunc_signature = "(m,m),(m,n),(m,m),(n,n)->(m,m)"

    def make_node(self, a: Any, b: Any, q: Any, r: Any) -> Apply:
        a, b = as_core(a, 2, "solve_discrete_are", "A"), as_core(b, 2, "solve_discrete_are", "B")
        q, r = as_core(q, 2, "solve_discrete_are", "Q"), as_core(r, 2, "solve_discrete_are", "R")
        for x, name in ((a, "A"), (q, "Q"), (r, "R")):
            check_square(x, "solve_discrete_are", name)
        m, n = square_length(a), square_length(r)
        for x, axis, want, what in (
            (b, 0, m, "B's rows and A"),
            (q, 0, m, "Q and A"),
            (b, 1, n, "B's columns and R"),
        ):
            got = _static(x, axis)
            if got is not None and want is not None and got != want:
                raise ValueError(
                    f"solve_discrete_are: {what} must have the same length, got A {a.type}, B {b.type}, "
                    f"Q {q.type}, R {r.type}"
                )
        dtype = lapack_dtype(a.type.dtype, b.type.dtype, q.type.dtype, r.type.dtype)
        return Apply(self, [a, b, q, r], [TensorType(dtype, (m, m))()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        a, b, q, r = inputs
        m, n = a.shape[0], r.shape[0]
        if a.shape != (m, m) or b.shape != (m, n) or q.shape != (m, m) or r.shape != (n, n):
            raise ValueError(
                "solve_discrete_are: A must be m x m, B m x n, Q m x m and R n x n; got shapes "
                f"A {a.shape}, B {b.shape}, Q {q.shape}, R {r.shape}"
            )
        dtype = node.outputs[0].type.numpy_dtype
        output_storage[0][0] = np.asarray(scipy_linalg.solve_discrete_are(a, b, q, r), dtype=dtype)

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list[tuple]:
        return [shapes[0]]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        bad = complex_grads(self, inputs)
        if bad is not None:
            return bad
        a, b, _, r = inputs
        (x,) = outputs
        (g,) = output_grads
        if is_disconnected(g):
            return [zeros_like(v) for v in inputs]
        gain = solve(r + dot(dot(mT(b), x), b), dot(dot(mT(b), x), a), assume_a="sym")
        closed = a - dot(b, gain)
        s = solve_discrete_lyapunov(closed, sym(g))
        xcs = dot(dot(x, closed), s)
        return [2.0 * xcs, -2.0 * dot(xcs, mT(gain)), s, dot(dot(gain, s), mT(gain))]


register_core_batch_rule(SolveDiscreteARE)


def solve_discrete_are(A: Any, B: Any, Q: Any, R: Any) -> Variable:
    """The stabilising solution ``X`` of the discrete algebraic Riccati equation (see the
    module), for matrices or stacks of them; differentiable in all four inputs. An equation
    with no stabilising solution is an error (SciPy's ``LinAlgError``)."""
    args = [as_stack(v, 2, "solve_discrete_are", name) for v, name in zip((A, B, Q, R), "ABQR")]
    return apply_core(SolveDiscreteARE(), *args)
