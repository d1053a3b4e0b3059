"""Linear algebra composed of other Ops: Kronecker products, block-diagonal matrices,
tensor inverses and solves, least squares, and the Sylvester and Lyapunov equations.
Their gradients come from the parts (reshapes, products, ``solve``, ``pinv``).

The equations are solved through their Kronecker form (``(A kron I + I kron B^T) vec X =
vec Q``): exact and differentiable, at a cost of ``(n m)**3``, meant for the small
matrices of state-space models (SciPy's Bartels-Stewart solvers are ``O(n**3)``).

>>> import numpy as np
>>> import arignote.tensor as pt
>>> kron(np.eye(2), np.array([[1.0, 2.0]])).eval()
array([[1., 2., 0., 0.],
       [0., 0., 1., 2.]])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from arignote.graph.basic import Apply, Variable
from arignote.graph.null_type import disconnected_type, grad_not_implemented, is_disconnected
from arignote.graph.op import Op
from arignote.scalar.type import upcast
from arignote.tensor.alloc import eye, zeros
from arignote.tensor.axes import expand_dims, moveaxis
from arignote.tensor.conversion import as_tensor_variable
from arignote.tensor.indexing.basic import set_subtensor
from arignote.tensor.linalg.inverse import matrix_inverse, pinv
from arignote.tensor.linalg.operands import lapack_dtype, real_dtype
from arignote.tensor.linalg.solve import solve
from arignote.tensor.products import dot, outer
from arignote.tensor.reductions import prod
from arignote.tensor.shape import reshape, shape
from arignote.tensor.type import TensorType
from arignote.tensor.ufuncs import conj, minimum

__all__ = [
    "Lstsq",
    "block_diag",
    "kron",
    "lstsq",
    "solve_continuous_lyapunov",
    "solve_discrete_lyapunov",
    "solve_sylvester",
    "tensorinv",
    "tensorsolve",
]


def kron(a: Any, b: Any) -> Variable:
    """The Kronecker product of two tensors (``numpy.kron``: the one with fewer dimensions
    gets leading ones; together they need at least 3 dimensions, as in PyTensor)."""
    a, b = as_tensor_variable(a), as_tensor_variable(b)
    if a.type.ndim + b.type.ndim < 3:
        raise TypeError(
            f"kron: the inputs' dimensions must sum to 3 or more, got {a.type.ndim} and {b.type.ndim} "
            "(for two vectors use pt.outer)"
        )
    nd = max(a.type.ndim, b.type.ndim)
    if a.type.ndim < nd:
        a = expand_dims(a, tuple(range(nd - a.type.ndim)))
    if b.type.ndim < nd:
        b = expand_dims(b, tuple(range(nd - b.type.ndim)))
    # a[i0, 1, i1, 1, ...] * b[1, j0, 1, j1, ...], then each pair of axes merged
    wide = expand_dims(a, tuple(2 * i + 1 for i in range(nd))) * expand_dims(
        b, tuple(2 * i for i in range(nd))
    )
    sa, sb = shape(a), shape(b)
    return reshape(wide, [sa[i] * sb[i] for i in range(nd)], ndim=nd)


def block_diag(*matrices: Any) -> Variable:
    """A block-diagonal matrix with ``matrices`` on its diagonal (``scipy.linalg.block_diag``;
    the dtype is their common one)."""
    if not matrices:
        raise TypeError("block_diag needs at least one matrix")
    mats = [as_tensor_variable(m) for m in matrices]
    for i, m in enumerate(mats):
        if m.type.ndim != 2:
            raise TypeError(f"block_diag: input {i} ({m}) must be a matrix, got {m.type}")
    dtype = upcast(*(m.type.dtype for m in mats))
    rows = [shape(m)[0] for m in mats]
    cols = [shape(m)[1] for m in mats]
    out = zeros((sum(rows[1:], rows[0]), sum(cols[1:], cols[0])), dtype=dtype)
    r = c = 0
    for m, nr, nc in zip(mats, rows, cols):
        out = set_subtensor(out[r : r + nr, c : c + nc], m)
        r, c = r + nr, c + nc
    return out


def tensorinv(a: Any, ind: int = 2) -> Variable:
    """The inverse of ``a`` for ``tensordot`` over its first ``ind`` axes
    (``numpy.linalg.tensorinv``): shape ``a.shape[ind:] + a.shape[:ind]``."""
    a = as_tensor_variable(a)
    if not isinstance(ind, (int, np.integer)) or ind <= 0 or ind >= a.type.ndim:
        raise ValueError(f"tensorinv: ind must be an int in [1, {a.type.ndim - 1}], got {ind!r}")
    sa = shape(a)
    inner, outer = [sa[i] for i in range(ind)], [sa[i] for i in range(ind, a.type.ndim)]
    square = reshape(a, [prod(sa[:ind]), prod(sa[ind:])], ndim=2)
    return reshape(matrix_inverse(square), [*outer, *inner], ndim=a.type.ndim)


def tensorsolve(a: Any, b: Any, axes: Any = None) -> Variable:
    """``x`` with ``tensordot(a, x, axes=x.ndim) = b`` (``numpy.linalg.tensorsolve``);
    ``axes`` are axes of ``a`` moved to the end first."""
    a, b = as_tensor_variable(a), as_tensor_variable(b)
    if axes is not None:
        axes = [axes] if isinstance(axes, (int, np.integer)) else list(axes)
        a = moveaxis(a, axes, [a.type.ndim - len(axes) + k for k in range(len(axes))])
    n_x = a.type.ndim - b.type.ndim
    if n_x <= 0:
        raise ValueError(f"tensorsolve: a ({a.type}) must have more dimensions than b ({b.type})")
    sa = shape(a)
    x_shape = [sa[i] for i in range(b.type.ndim, a.type.ndim)]
    square = reshape(a, [prod(sa[: b.type.ndim]), prod(sa[b.type.ndim :])], ndim=2)
    x = solve(square, reshape(b, [-1], ndim=1), b_ndim=1)
    return reshape(x, x_shape, ndim=n_x)


class Lstsq(Op):
    """Least squares, ``numpy.linalg.lstsq(a, b, rcond)``: outputs ``[x, residuals, rank,
    s]``, ``x`` minimising ``|b - a x|`` (the minimum-norm one when ``a`` is rank
    deficient), the squared residual norms (per column of ``b``; empty unless ``a`` has full
    column rank and more rows than columns), the rank and the singular values of ``a``.

    ``rcond``: singular values below ``rcond`` times the largest count as zero; NaN (what
    ``None`` becomes) is NumPy's default, machine precision times the larger dimension.
    The gradient is that of ``x = pinv(a) @ b`` (the residuals, rank and singular values
    have none here).
    """

    __props__ = ()

    def make_node(self, a: Any, b: Any, rcond: Any = None) -> Apply:
        a, b = as_tensor_variable(a), as_tensor_variable(b)
        if a.type.ndim != 2 or b.type.ndim not in (1, 2):
            raise TypeError(f"lstsq: a must be a matrix and b a vector or matrix, got {a.type} and {b.type}")
        rcond = as_tensor_variable(np.float64(np.nan) if rcond is None else rcond)
        if rcond.type.ndim != 0:
            raise TypeError(f"lstsq: rcond must be a scalar, got {rcond.type}")
        dtype = lapack_dtype(a.type.dtype, b.type.dtype)
        n = a.type.shape[1]
        x = TensorType(dtype, (n, *b.type.shape[1:]))()
        k = None
        if a.type.shape[0] is not None and n is not None:
            k = min(a.type.shape[0], n)
        outs = [x, TensorType(real_dtype(dtype), (None,))(), TensorType("int32", ())()]
        outs.append(TensorType(real_dtype(dtype), (k,))())
        return Apply(self, [a, b, rcond], outs)

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        a, b, rcond = inputs
        rc = None if np.isnan(rcond) else float(rcond)
        x, residuals, rank, s = np.linalg.lstsq(a, b, rcond=rc)
        for cell, value, out in zip(output_storage, (x, residuals, rank, s), node.outputs):
            cell[0] = np.asarray(value, dtype=out.type.dtype)

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list:
        (m, n), b_shape, _ = shapes
        return [(n, *b_shape[1:]), None, (), (minimum(m, n),)]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        a, b, _ = inputs
        gx = output_grads[0]
        for k, g in enumerate(output_grads[1:], start=1):
            if not is_disconnected(g):
                why = f"lstsq: output {k} (residuals, rank, singular values) has no gradient here"
                return [
                    grad_not_implemented(self, 0, a, why),
                    grad_not_implemented(self, 1, b, why),
                    disconnected_type(),
                ]
        if is_disconnected(gx):
            return [disconnected_type(), disconnected_type(), disconnected_type()]
        p = pinv(a)
        g_b = dot(p.T, gx)
        g_p = outer(gx, b) if b.type.ndim == 1 else dot(gx, b.T)
        g_a = p.owner.op.pullback([a], [p], [g_p])[0]
        return [g_a, g_b, disconnected_type()]

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        return [[True, True, False, True], [True, True, False, False], [False] * 4]


lstsq = Lstsq()


def _kron_eye_left(n: Any, m: Variable) -> Variable:
    """``I_n kron m``."""
    return kron(eye(n, dtype=m.type.dtype), m)


def _kron_eye_right(m: Variable, n: Any) -> Variable:
    """``m kron I_n``."""
    return kron(m, eye(n, dtype=m.type.dtype))


def solve_sylvester(A: Any, B: Any, Q: Any) -> Variable:
    """``X`` with ``A X + X B = Q`` (``scipy.linalg.solve_sylvester``; ``A`` n x n, ``B``
    m x m, ``Q`` n x m)."""
    A, B, Q = (as_tensor_variable(v) for v in (A, B, Q))
    for name, v in (("A", A), ("B", B), ("Q", Q)):
        if v.type.ndim != 2:
            raise TypeError(f"solve_sylvester: {name} must be a matrix, got {v.type}")
    n, m = shape(A)[0], shape(B)[0]
    # row-major vec: vec(A X) = (A kron I_m) vec X, vec(X B) = (I_n kron B^T) vec X
    system = _kron_eye_right(A, m) + _kron_eye_left(n, B.T)
    x = solve(system, reshape(Q, [-1], ndim=1), b_ndim=1)
    return reshape(x, [n, m], ndim=2)


def solve_continuous_lyapunov(A: Any, Q: Any) -> Variable:
    """``X`` with ``A X + X A^H = Q`` (``scipy.linalg.solve_continuous_lyapunov``)."""
    A = as_tensor_variable(A)
    return solve_sylvester(A, conj(A).T, Q)


def solve_discrete_lyapunov(A: Any, Q: Any, method: str = "direct") -> Variable:
    """``X`` with ``A X A^H - X + Q = 0`` (``scipy.linalg.solve_discrete_lyapunov``).
    ``method`` (``"direct"`` or ``"bilinear"``) is accepted: both give the same ``X``, here
    always through the Kronecker form ``(I - A kron conj(A)) vec X = vec Q``."""
    if method not in ("direct", "bilinear"):
        raise ValueError(f"solve_discrete_lyapunov: method must be 'direct' or 'bilinear', got {method!r}")
    A, Q = as_tensor_variable(A), as_tensor_variable(Q)
    for name, v in (("A", A), ("Q", Q)):
        if v.type.ndim != 2:
            raise TypeError(f"solve_discrete_lyapunov: {name} must be a matrix, got {v.type}")
    n = shape(A)[0]
    # row-major vec: vec(A X A^H) = (A kron conj(A)) vec X
    system = eye(n * n, dtype=lapack_dtype(A.type.dtype, Q.type.dtype)) - kron(A, conj(A))
    x = solve(system, reshape(Q, [-1], ndim=1), b_ndim=1)
    return reshape(x, [n, n], ndim=2)
