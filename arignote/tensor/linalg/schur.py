"""The Schur decomposition of a matrix and the QZ (generalised Schur) decomposition of a pair,
SciPy-backed: :class:`Schur` (``scipy.linalg.schur``) and :class:`QZ` (``scipy.linalg.qz``,
or ``scipy.linalg.ordqz`` when the eigenvalues are sorted or returned), and the functions
``schur``, ``qz`` and ``ordqz`` that batch them over leading dimensions.

``sort`` moves the eigenvalues of a region to the top left: ``"lhp"`` (real part < 0),
``"rhp"`` (real part >= 0), ``"iuc"`` (inside the unit circle), ``"ouc"`` (outside).
The factors are not unique (signs, the order of equal eigenvalues), so, as in PyTensor,
they have no gradient: ``grad`` through them is an error naming the Op.

>>> import numpy as np
>>> import arignote.tensor as pt
>>> a = pt.dmatrix("a")
>>> t, z = schur(a, output="complex")
>>> x = np.array([[1.0, 2.0], [-3.0, 1.0]])
>>> bool(np.allclose((z @ t @ z.conj().T).eval({a: x}), x))
True
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from arignote.graph.basic import Apply, Variable
from arignote.graph.null_type import grad_not_implemented
from arignote.graph.op import Op
from arignote.lazy import lazy_module
from arignote.tensor.linalg.operands import (
    apply_core,
    as_core,
    as_stack,
    check_square,
    check_square_value,
    lapack_dtype,
    merge_length,
    register_core_batch_rule,
    square_length,
)
from arignote.tensor.type import TensorType

# imported on first use (see arignote.lazy)
scipy_linalg = lazy_module("scipy.linalg")

__all__ = ["QZ", "Schur", "ordqz", "qz", "schur"]

SORTS = ("lhp", "rhp", "iuc", "ouc")


def _check_sort(sort: Any, what: str) -> None:
    if sort is not None and sort not in SORTS:
        raise ValueError(f"{what}: sort must be None or one of {SORTS}, got {sort!r}")


def _complex(dtype: str) -> str:
    return np.result_type(dtype, np.complex64).name


def _no_gradient(op: Op, inputs: Sequence[Variable]) -> list:
    why = "(Schur and QZ factors are not unique, so they have no derivative here, as in PyTensor)"
    return [grad_not_implemented(op, k, x, why) for k, x in enumerate(inputs)]


class Schur(Op):
    """``[T, Z]`` with ``A = Z T Z^H`` (``scipy.linalg.schur``): ``Z`` unitary, ``T`` upper
    triangular (``output="complex"``, or a complex ``A``) or quasi upper triangular with 2x2
    blocks for complex pairs (``output="real"`` of a real ``A``); ``sort`` orders the
    eigenvalues on ``T``'s diagonal (see the module)."""

    __props__ = ("output", "sort")
    gufunc_signature = "(m,m)->(m,m),(m,m)"

    def __init__(self, output: str = "real", sort: str | None = None):
        if output not in ("real", "complex"):
            raise ValueError(f"schur: output must be 'real' or 'complex', got {output!r}")
        _check_sort(sort, "schur")
        self.output = output
        self.sort = sort

    def make_node(self, a: Any) -> Apply:
        a = as_core(a, 2, "Schur", "A")
        check_square(a, "Schur", "A")
        dtype = lapack_dtype(a.type.dtype)
        if self.output == "complex":
            dtype = _complex(dtype)
        n = square_length(a)
        return Apply(self, [a], [TensorType(dtype, (n, n))(), TensorType(dtype, (n, n))()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        (a,) = inputs
        check_square_value(a, "schur", "A")
        dtype = node.outputs[0].type.numpy_dtype
        res = scipy_linalg.schur(a.astype(dtype, copy=False), output=self.output, sort=self.sort)
        output_storage[0][0] = np.asarray(res[0], dtype=dtype)
        output_storage[1][0] = np.asarray(res[1], dtype=dtype)

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list[tuple]:
        return [shapes[0], shapes[0]]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        return _no_gradient(self, inputs)


class QZ(Op):
    """The generalised Schur decomposition of a pair: ``A = Q AA Z^H``, ``B = Q BB Z^H`` with
    ``Q``, ``Z`` unitary and ``AA``, ``BB`` (quasi) upper triangular. Outputs ``[AA, BB, Q,
    Z]``, or ``[AA, BB, alpha, beta, Q, Z]`` with ``return_eigenvalues`` (the generalised
    eigenvalues are ``alpha / beta``; ``alpha`` is complex, ``beta`` has the matrices'
    dtype), as ``scipy.linalg.qz`` and ``scipy.linalg.ordqz`` return them."""

    __props__ = ("complex_output", "sort", "return_eigenvalues")

    def __init__(
        self, complex_output: bool = False, sort: str | None = None, return_eigenvalues: bool = False
    ):
        _check_sort(sort, "qz")
        self.complex_output = bool(complex_output)
        self.sort = sort
        self.return_eigenvalues = bool(return_eigenvalues)
        if self.return_eigenvalues:
            self.gufunc_signature = "(m,m),(m,m)->(m,m),(m,m),(m),(m),(m,m),(m,m)"
        else:
            self.gufunc_signature = "(m,m),(m,m)->(m,m),(m,m),(m,m),(m,m)"

    def make_node(self, a: Any, b: Any) -> Apply:
        a, b = as_core(a, 2, "QZ", "A"), as_core(b, 2, "QZ", "B")
        check_square(a, "QZ", "A")
        check_square(b, "QZ", "B")
        na, nb = square_length(a), square_length(b)
        if na is not None and nb is not None and na != nb:
            raise ValueError(f"qz: A ({a.type}) and B ({b.type}) must have the same size")
        n = merge_length(na, nb)
        dtype = lapack_dtype(a.type.dtype, b.type.dtype)
        if self.complex_output:
            dtype = _complex(dtype)
        mat = TensorType(dtype, (n, n))
        if not self.return_eigenvalues:
            return Apply(self, [a, b], [mat() for _ in range(4)])
        alpha, beta = TensorType(_complex(dtype), (n,)), TensorType(dtype, (n,))
        return Apply(self, [a, b], [mat(), mat(), alpha(), beta(), mat(), mat()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        a, b = inputs
        check_square_value(a, "qz", "A")
        check_square_value(b, "qz", "B")
        if a.shape != b.shape:
            raise ValueError(f"qz: A and B must have the same shape, got {a.shape} and {b.shape}")
        dtype = node.outputs[0].type.numpy_dtype
        a, b = a.astype(dtype, copy=False), b.astype(dtype, copy=False)
        output = "complex" if self.complex_output else "real"
        if self.sort is None and not self.return_eigenvalues:
            res = scipy_linalg.qz(a, b, output=output)
        else:
            # ordqz needs a selection: with no sort, none is moved (the order qz gives)
            sort = self.sort if self.sort is not None else (lambda alpha, beta: np.zeros(alpha.shape, bool))
            aa, bb, alpha, beta, q, z = scipy_linalg.ordqz(a, b, sort=sort, output=output)
            res = (aa, bb, alpha, beta, q, z) if self.return_eigenvalues else (aa, bb, q, z)
        for cell, value, out in zip(output_storage, res, node.outputs):
            cell[0] = np.asarray(value, dtype=out.type.numpy_dtype)

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list[tuple]:
        mat = shapes[0]
        if self.return_eigenvalues:
            return [mat, mat, (mat[0],), (mat[0],), mat, mat]
        return [mat] * 4

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        return _no_gradient(self, inputs)


register_core_batch_rule(Schur, QZ)


def schur(A: Any, output: str = "real", sort: str | None = None) -> list[Variable]:
    """``[T, Z]``, the Schur decomposition ``A = Z T Z^H`` of a square matrix (or of each in a
    stack): see :class:`Schur`."""
    a = as_stack(A, 2, "schur", "A")
    return list(apply_core(Schur(output=output, sort=sort), a))


def qz(
    A: Any, B: Any, output: str = "real", sort: str | None = None, return_eigenvalues: bool = False
) -> list[Variable]:
    """The QZ decomposition of ``(A, B)``: ``[AA, BB, Q, Z]``, and with ``return_eigenvalues``
    ``[AA, BB, alpha, beta, Q, Z]`` (see :class:`QZ`). Unlike ``scipy.linalg.qz`` it also
    takes ``sort`` (then it behaves as ``scipy.linalg.ordqz``)."""
    if output not in ("real", "complex"):
        raise ValueError(f"qz: output must be 'real' or 'complex', got {output!r}")
    a, b = as_stack(A, 2, "qz", "A"), as_stack(B, 2, "qz", "B")
    op = QZ(complex_output=output == "complex", sort=sort, return_eigenvalues=return_eigenvalues)
    return list(apply_core(op, a, b))


def ordqz(A: Any, B: Any, sort: str | None = None, output: str = "real") -> list[Variable]:
    """``[AA, BB, alpha, beta, Q, Z]``: the QZ decomposition with the eigenvalues of ``sort``'s
    region first (``scipy.linalg.ordqz``; ``sort`` is one of the names, not a callable)."""
    return qz(A, B, output=output, sort=sort, return_eigenvalues=True)
