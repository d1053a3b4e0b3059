"""What the linear algebra Ops share: the LAPACK dtype rule, input checks with clear
errors, batching of the core Ops over leading dimensions, and the small matrix helpers
their derivative rules are written with.

The Ops of :mod:`arignote.tensor.slinalg` and :mod:`arignote.tensor.nlinalg` are *core*
Ops: they take matrices (and vectors) and nothing else. The user-facing functions apply
them through :func:`apply_core`, which wraps them in a ``Blockwise`` when the inputs have
leading (batch) dimensions, so ``inv(x)`` works for ``x`` of shape ``(..., n, n)``.

>>> lapack_dtype("int64"), lapack_dtype("int8"), lapack_dtype("float32", "float64")
('float64', 'float32', 'float64')
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from arignote.graph.basic import Apply, Variable
from arignote.graph.null_type import disconnected_type, grad_not_implemented, is_disconnected
from arignote.graph.op import Op
from arignote.graph.replace import register_batch_rule
from arignote.tensor.alloc import eye, tri
from arignote.tensor.axes import transpose
from arignote.tensor.blockwise import Blockwise, blockwise_apply
from arignote.tensor.conversion import as_tensor_variable, constant
from arignote.tensor.diag import alloc_diag, diagonal
from arignote.tensor.shape import dim_length, shape_i

__all__ = ["apply_core", "lapack_dtype", "real_dtype"]


# --- dtypes ----------------------------------------------------------------------------------


def _lapack_one(dtype: str) -> np.dtype:
    dt = np.dtype(dtype)
    if dt.kind == "c":
        return np.dtype("complex64" if dt.itemsize <= 8 else "complex128")
    # LAPACK works in single or double precision: small integers and float16 go to
    # single, wider integers and float64 to double (scipy.linalg's choice)
    if (dt.kind == "f" and dt.itemsize > 4) or (dt.kind in "iub" and dt.itemsize > 2):
        return np.dtype("float64")
    return np.dtype("float32")


def lapack_dtype(*dtypes: str) -> str:
    """The dtype a LAPACK routine computes in for inputs of these dtypes (as SciPy picks it)."""
    return np.result_type(*(_lapack_one(d) for d in dtypes)).name


def real_dtype(*dtypes: str) -> str:
    """:func:`lapack_dtype` made real: for outputs that are real even for complex inputs
    (singular values, eigenvalues of a Hermitian matrix, log-determinants, norms)."""
    dt = np.dtype(lapack_dtype(*dtypes))
    return np.finfo(dt).dtype.name if dt.kind == "c" else dt.name


def is_complex(v: Variable) -> bool:
    return np.dtype(v.type.dtype).kind == "c"


def complex_grads(op: Op, inputs: Sequence[Variable]) -> list | None:
    """``grad_not_implemented`` terms for every input when one of them is complex (the
    derivative rules of the linear algebra Ops are written for real matrices), else None."""
    if any(is_complex(i) for i in inputs):
        return [grad_not_implemented(op, k, x, "(complex input)") for k, x in enumerate(inputs)]
    return None


# --- input checks ----------------------------------------------------------------------------


def _fmt(shape: Sequence[int | None]) -> str:
    inner = ", ".join("?" if s is None else str(s) for s in shape)
    return f"({inner}{',' if len(shape) == 1 else ''})"


def as_core(x: Any, ndim: int, what: str, name: str) -> Variable:
    """``x`` as a tensor of exactly ``ndim`` dimensions (a core Op's input), or a TypeError
    naming the Op (``what``), the input (``name``) and the Type that arrived."""
    x = as_tensor_variable(x)
    if x.type.ndim != ndim:
        kind = {1: "a vector (1-d)", 2: "a matrix (2-d)"}[ndim]
        raise TypeError(
            f"{what}: {name} must be {kind}, got {x} of Type {x.type} ({x.type.ndim}-d); "
            "the functions (not the Ops) accept stacks of them"
        )
    return x


def as_stack(x: Any, ndim: int, what: str, name: str) -> Variable:
    """``x`` as a tensor of at least ``ndim`` dimensions (the core ones last), for the
    user-facing functions."""
    x = as_tensor_variable(x)
    if x.type.ndim < ndim:
        kind = {1: "at least 1-d (a vector)", 2: "at least 2-d (a matrix or a stack of them)"}[ndim]
        raise ValueError(f"{what}: {name} must be {kind}, got {x} of Type {x.type} ({x.type.ndim}-d)")
    return x


def check_square(x: Variable, what: str, name: str) -> None:
    """Build-time check: the last two static lengths of ``x``, where known, are equal."""
    rows, cols = x.type.shape[-2:]
    if rows is not None and cols is not None and rows != cols:
        raise ValueError(
            f"{what}: {name} must be square, but {x} has static shape {_fmt(x.type.shape)} ({rows} x {cols})"
        )


def check_square_value(a: np.ndarray, what: str, name: str) -> None:
    """Run-time check: ``a`` is a square matrix (or a stack of them)."""
    if a.ndim < 2 or a.shape[-2] != a.shape[-1]:
        raise ValueError(f"{what}: {name} must be a square matrix, got an array of shape {a.shape}")


def merge_length(a: int | None, b: int | None) -> int | None:
    return a if a is not None else b


def square_length(x: Variable) -> int | None:
    """The static length of a square matrix ``x`` (either dimension may say it)."""
    return merge_length(x.type.shape[-2], x.type.shape[-1])


# --- batching --------------------------------------------------------------------------------


#: ``op`` applied to ``inputs``: directly when they have only the core dimensions, else
#: through ``Blockwise`` (batch dimensions broadcast as in NumPy)
apply_core = blockwise_apply


def register_core_batch_rule(*op_classes: type) -> None:
    """Batch these core Ops (for ``vectorize_graph`` and the vectorised ``jacobian``) with a
    ``Blockwise``: the unbatched inputs broadcast along the new leading dimension."""

    @register_batch_rule(*op_classes)
    def _rule(op: Op, node: Apply, args: list, flags: list) -> list:
        return [(o, True) for o in Blockwise(op)(*args, return_list=True)]


# --- graph helpers for the derivative rules (core, 2-d) --------------------------------------


def const(value: Any, dtype: str) -> Variable:
    return constant(np.asarray(value, dtype=dtype))


def mT(x: Variable) -> Variable:
    """``x`` with its last two dimensions swapped."""
    n = x.type.ndim
    return transpose(x, [*range(n - 2), n - 1, n - 2])


def sym(x: Variable) -> Variable:
    """The symmetric part ``(x + x^T) / 2``."""
    return (x + mT(x)) * const(0.5, x.type.dtype)


length = dim_length


def eye_like(x: Variable, dtype: str | None = None) -> Variable:
    """The identity matrix of the size of the square matrix ``x``."""
    n = square_length(x)
    return eye(n if n is not None else shape_i(x, 0), dtype=dtype or x.type.dtype)


def diag_embed(v: Variable) -> Variable:
    """The square matrix with the vector ``v`` on its diagonal (a stack of them for a
    stack of vectors)."""
    return alloc_diag(v, 0, -2, -1)


def diag_part(x: Variable) -> Variable:
    """The diagonal of the square matrix ``x``, as a vector (of the last two axes of a
    stack of matrices)."""
    return diagonal(x, 0, -2, -1)


def band_mask(x: Variable, below: int, above: int) -> Variable:
    """A 0/1 matrix (``x``'s dtype and size) with ones from diagonal ``-below`` to ``above``."""
    n = length(x, 0)
    return tri(n, n, above, dtype=x.type.dtype) - tri(n, n, -below - 1, dtype=x.type.dtype)


# --- a run-time check for derivative rules ---------------------------------------------------


class RuntimeCheck(Op):
    """``x``, passed through after checking ``ref`` at run time: that it is square
    (``"square"``), has at least as many rows as columns (``"tall"``), or is all zeros
    (``"zeros"``). Otherwise it raises a ValueError that starts with ``what``.

    Derivative rules that hold only under such a condition use it where the static shape
    does not settle it, so that a case the rule does not cover gives an error, never a
    wrong gradient.
    """

    __props__ = ("condition", "what")
    view_map = {0: [0]}

    def __init__(self, condition: str, what: str):
        if condition not in ("square", "tall", "zeros"):
            raise ValueError(
                f"RuntimeCheck: condition must be 'square', 'tall' or 'zeros', got {condition!r}"
            )
        self.condition = condition
        self.what = what

    def make_node(self, x: Any, ref: Any) -> Apply:
        x = as_tensor_variable(x)
        ref = as_tensor_variable(ref)
        return Apply(self, [x, ref], [x.type()])

    def _failure(self, ref: np.ndarray) -> str | None:
        if self.condition == "zeros":
            return None if not np.any(ref) else "its cotangent there is not zero"
        m, n = ref.shape[-2:]
        if self.condition == "square" and m != n:
            return f"a square matrix, got shape {ref.shape}"
        if self.condition == "tall" and m < n:
            return f"at least as many rows as columns, got shape {ref.shape}"
        return None

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        x, ref = inputs
        failure = self._failure(ref)
        if failure is not None:
            raise ValueError(f"{self.what}: {failure}")
        output_storage[0][0] = x

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list[tuple]:
        return [shapes[0]]

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        return [[True], [False]]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        return [self(output_grads[0], inputs[1]), disconnected_type()]

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], eval_points: Sequence[Variable]
    ) -> list:
        if is_disconnected(eval_points[0]):
            return [disconnected_type()]
        return [self(eval_points[0], inputs[1])]

    def __str__(self) -> str:
        return f"RuntimeCheck{{{self.condition}}}"


@register_batch_rule(RuntimeCheck)
def _batch_runtime_check(op: Op, node: Apply, args: list, flags: list) -> list:
    return [(op(*args), flags[0])]  # the check looks at the last two dimensions only
