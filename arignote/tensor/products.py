"""Products of tensors: ``dot``, ``matmul``, ``tensordot``, ``outer`` and friends.

Two Ops do the work: :class:`Dot` (1-d and 2-d operands, NumPy's ``dot``) and
:class:`MatMul` (stacks of matrices, NumPy's ``matmul``). Everything else is built from
them with transposes and reshapes. Batch dimensions broadcast only where their static
length is 1, as everywhere in arignote.

>>> import numpy as np
>>> import arignote.tensor as pt
>>> A = pt.matrix("A", dtype="float64", shape=(2, 3))
>>> v = pt.dvector("v")
>>> matmul(A, v).type
TensorType(float64, shape=(2,))
>>> pt.dot(A, v).eval({A: np.ones((2, 3)), v: np.arange(3.0)})
array([3., 3.])
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from arignote.graph.basic import Apply, Variable
from arignote.graph.null_type import disconnected_type, is_disconnected
from arignote.graph.op import Op
from arignote.graph.replace import register_batch_rule
from arignote.scalar.type import ScalarType, complex_types, upcast
from arignote.tensor.axes import expand_dims, squeeze, transpose
from arignote.tensor.conversion import as_tensor_variable
from arignote.tensor.elemwise import DimShuffle, normalize_axis
from arignote.tensor.reductions import sum as tensor_sum
from arignote.tensor.shape import (
    Shape_i,
    _grad_like,
    flatten,
    reshape,
    shape_tuple,
    specify_shape,
)
from arignote.tensor.type import TensorType
from arignote.tensor.ufuncs import add, cast, conj, mul

# The Ops are reached through this module (as in PyTensor, where they are not in
# ``pytensor.tensor``); the functions are re-exported by ``arignote.tensor``.
__all__ = [
    "Dot",
    "MatMul",
    "dot",
    "dense_dot",
    "matmul",
    "tensordot",
    "outer",
    "vdot",
    "vecdot",
    "matvec",
    "vecmat",
]


def _fmt(shape: Sequence[int | None]) -> str:
    inner = ", ".join("?" if s is None else str(s) for s in shape)
    return f"({inner}{',' if len(shape) == 1 else ''})"


# --- Dot ---------------------------------------------------------------------------------


class Dot(Op):
    """NumPy's ``dot`` of two 1-d or 2-d tensors.

    vector·vector gives a 0-d tensor (the inner product), matrix·vector and
    vector·matrix a vector, matrix·matrix a matrix. The output dtype is the NumPy
    promotion of the input dtypes. The inner lengths (last of the first operand,
    first of the second) must agree, statically when both are known and at run time.
    For operands of other ranks use :func:`dot`.

    >>> import arignote.tensor as pt
    >>> Dot()(pt.fvector("x"), pt.matrix("y", dtype="float64", shape=(None, 4))).type
    TensorType(float64, shape=(4,))
    """

    __props__ = ()

    def make_node(self, x: Any, y: Any) -> Apply:
        x = as_tensor_variable(x)
        y = as_tensor_variable(y)
        for i, v in enumerate((x, y)):
            if v.type.ndim not in (1, 2):
                raise TypeError(
                    f"Dot: input {i} ({v}) must be a 1-d or 2-d tensor, got {v.type} "
                    f"({v.type.ndim}-d); use dot() or tensordot() for other ranks"
                )
        sx, sy = x.type.shape, y.type.shape
        if sx[-1] is not None and sy[0] is not None and sx[-1] != sy[0]:
            raise ValueError(
                f"Dot: inner lengths differ: input 0 ({x}) has static shape {_fmt(sx)} and "
                f"input 1 ({y}) has static shape {_fmt(sy)} ({sx[-1]} != {sy[0]})"
            )
        out = TensorType(upcast(x.type.dtype, y.type.dtype), sx[:-1] + sy[1:])
        return Apply(self, [x, y], [out()])

    def perform(self, node: Apply, inputs: Sequence[np.ndarray], output_storage: list[list[Any]]) -> None:
        x, y = inputs
        if x.shape[-1] != y.shape[0]:
            raise ValueError(
                f"Dot: inner lengths differ: input 0 has shape {x.shape} and input 1 has shape "
                f"{y.shape} ({x.shape[-1]} != {y.shape[0]})"
            )
        out_dtype = node.outputs[0].type.numpy_dtype
        output_storage[0][0] = np.asarray(np.dot(x, y)).astype(out_dtype, copy=False)

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list[tuple]:
        xshape, yshape = shapes
        return [tuple(xshape[:-1]) + tuple(yshape[1:])]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        """``g @ y.T`` and ``x.T @ g``, in the form each 1-d/2-d combination needs."""
        x, y = inputs
        g = as_tensor_variable(output_grads[0])
        if x.type.ndim == 1 and y.type.ndim == 1:  # inner product: g is 0-d
            gx, gy = mul(g, y), mul(g, x)
        elif x.type.ndim == 2 and y.type.ndim == 1:  # matrix-vector: g is (m,)
            gx, gy = outer(g, y), _dot(transpose(x), g)
        elif x.type.ndim == 1:  # vector-matrix: g is (n,)
            gx, gy = _dot(y, g), outer(x, g)
        else:
            gx, gy = _dot(g, transpose(y)), _dot(transpose(x), g)
        return [_grad_like(gx, x), _grad_like(gy, y)]

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], eval_points: Sequence[Variable]
    ) -> list:
        """``dx @ y + x @ dy`` (the product rule; a missing tangent counts as zero)."""
        return _product_rule(_dot, inputs, eval_points)

    def __str__(self) -> str:
        return "Dot"


def _product_rule(product: Any, inputs: Sequence[Variable], eval_points: Sequence[Variable]) -> list:
    """Tangent of a bilinear ``product(x, y)``: ``product(dx, y) + product(x, dy)``."""
    x, y = inputs
    dx, dy = eval_points
    terms = []
    if not is_disconnected(dx):
        terms.append(product(dx, y))
    if not is_disconnected(dy):
        terms.append(product(x, dy))
    if not terms:
        return [disconnected_type()]
    return [terms[0] if len(terms) == 1 else add(*terms)]


_dot = Dot()


def dot(a: Any, b: Any) -> Variable:
    """NumPy's ``dot``: the product of ``a`` and ``b`` for operands of any rank.

    0-d operands multiply elementwise; 1-d and 2-d operands use :class:`Dot`; otherwise
    the last axis of ``a`` is summed against the second-to-last axis of ``b`` (its only
    axis if ``b`` is 1-d), through :func:`tensordot`. An operand of another kind of matrix
    (a sparse one) multiplies through its own ``__dot__``/``__rdot__``, as in PyTensor.
    """
    for operand in (a, b):
        if (
            isinstance(operand, Variable)
            and not isinstance(operand.type, (TensorType, ScalarType))
            and hasattr(operand, "__dot__")
        ):
            return a.__dot__(b) if operand is a else b.__rdot__(a)
    a = as_tensor_variable(a)
    b = as_tensor_variable(b)
    if a.type.ndim == 0 or b.type.ndim == 0:
        return mul(a, b)
    if a.type.ndim <= 2 and b.type.ndim <= 2:
        return _dot(a, b)
    return tensordot(a, b, [[a.type.ndim - 1], [max(0, b.type.ndim - 2)]])


#: PyTensor's name for :func:`dot` on dense tensors
dense_dot = dot


# --- MatMul ------------------------------------------------------------------------------


def _batch_length(lengths: Sequence[int | None], dim: int, inputs: Sequence[Variable]) -> int | None:
    """Static length of batch dimension ``dim`` (static 1s broadcast, ``None`` unknown)."""
    known = {s for s in lengths if s is not None and s != 1}
    if len(known) > 1:
        raise ValueError(
            f"MatMul: batch dimension {dim} has incompatible static lengths: input 0 ({inputs[0]}) "
            f"has static shape {_fmt(inputs[0].type.shape)} and input 1 ({inputs[1]}) has "
            f"{_fmt(inputs[1].type.shape)}"
        )
    if known:
        return known.pop()
    if all(s == 1 for s in lengths):
        return 1
    return None


class MatMul(Op):
    """NumPy's ``matmul`` of two stacks of matrices (each input at least 2-d).

    The last two dimensions are the matrices, ``(..., m, k) @ (..., k, n) -> (..., m, n)``;
    the leading (batch) dimensions broadcast, an input with fewer of them being padded on
    the left with broadcastable dimensions. A batch dimension broadcasts only where its
    static length is 1: a length-1 value where the Type does not say so is an error, as
    in :class:`~arignote.tensor.elemwise.Elemwise`. 1-d operands are handled by
    :func:`matmul`.

    >>> import arignote.tensor as pt
    >>> x = pt.tensor3("x", dtype="float64", shape=(5, 2, 3))
    >>> y = pt.tensor3("y", dtype="float64", shape=(1, 3, None))
    >>> MatMul()(x, y).type
    TensorType(float64, shape=(5, 2, None))
    """

    __props__ = ()

    def make_node(self, x: Any, y: Any) -> Apply:
        x = as_tensor_variable(x)
        y = as_tensor_variable(y)
        for i, v in enumerate((x, y)):
            if v.type.ndim < 2:
                raise TypeError(
                    f"MatMul: input {i} ({v}) must be at least 2-d (a stack of matrices), got "
                    f"{v.type}; use matmul() for 1-d operands"
                )
        ndim = max(x.type.ndim, y.type.ndim)
        x, y = (
            DimShuffle(
                input_ndim=v.type.ndim, new_order=["x"] * (ndim - v.type.ndim) + list(range(v.type.ndim))
            )(v)
            if v.type.ndim < ndim
            else v
            for v in (x, y)
        )
        sx, sy = x.type.shape, y.type.shape
        if sx[-1] is not None and sy[-2] is not None and sx[-1] != sy[-2]:
            raise ValueError(
                f"MatMul: inner lengths differ: input 0 ({x}) has static shape {_fmt(sx)} and "
                f"input 1 ({y}) has static shape {_fmt(sy)} ({sx[-1]} != {sy[-2]})"
            )
        batch = tuple(_batch_length((sx[d], sy[d]), d, (x, y)) for d in range(ndim - 2))
        out = TensorType(upcast(x.type.dtype, y.type.dtype), (*batch, sx[-2], sy[-1]))
        return Apply(self, [x, y], [out()])

    def perform(self, node: Apply, inputs: Sequence[np.ndarray], output_storage: list[list[Any]]) -> None:
        x, y = inputs
        if x.shape[-1] != y.shape[-2]:
            raise ValueError(
                f"MatMul: inner lengths differ: input 0 has shape {x.shape} and input 1 has shape "
                f"{y.shape} ({x.shape[-1]} != {y.shape[-2]})"
            )
        sx, sy = node.inputs[0].type.shape, node.inputs[1].type.shape
        for d in range(x.ndim - 2):
            if sx[d] != 1 and sy[d] != 1 and x.shape[d] != y.shape[d]:
                hint = ""
                if 1 in (x.shape[d], y.shape[d]):
                    hint = (
                        " A length of 1 broadcasts only where the Type says so statically "
                        "(shape=(1, ...)); use specify_shape or a broadcastable input."
                    )
                raise ValueError(
                    f"MatMul: batch dimension {d} differs: input 0 has shape {x.shape} and input 1 "
                    f"has shape {y.shape}.{hint}"
                )
        out_dtype = node.outputs[0].type.numpy_dtype
        output_storage[0][0] = np.matmul(x, y).astype(out_dtype, copy=False)

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list[tuple]:
        x, (xshape, yshape) = node.inputs[0], shapes
        batch = []
        for d, static in enumerate(node.outputs[0].type.shape[:-2]):
            if static is not None:
                batch.append(static)
            elif x.type.shape[d] != 1:
                batch.append(xshape[d])
            else:
                batch.append(yshape[d])
        return [(*batch, xshape[-2], yshape[-1])]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        """``g @ y^T`` and ``x^T @ g`` (transposing the matrices), each summed over the
        batch dimensions its input was broadcast along."""
        x, y = inputs
        g = as_tensor_variable(output_grads[0])
        gx = _matmul(g, _mT(y))
        gy = _matmul(_mT(x), g)
        return [_grad_like(_sum_batch(gx, x), x), _grad_like(_sum_batch(gy, y), y)]

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], eval_points: Sequence[Variable]
    ) -> list:
        """``dx @ y + x @ dy`` (a missing tangent counts as zero)."""
        return _product_rule(_matmul, inputs, eval_points)

    def __str__(self) -> str:
        return "MatMul"


def _mT(v: Variable) -> Variable:
    """``v`` with its last two dimensions swapped."""
    n = v.type.ndim
    return DimShuffle(input_ndim=n, new_order=[*range(n - 2), n - 1, n - 2])(v)


def _sum_batch(g: Variable, v: Variable) -> Variable:
    """``g`` summed (keeping the dimensions) over the batch dimensions where ``v`` has a
    static 1 that was broadcast."""
    axes = [d for d in range(v.type.ndim - 2) if v.type.shape[d] == 1 and g.type.shape[d] != 1]
    return tensor_sum(g, axis=axes, keepdims=True) if axes else g


_matmul = MatMul()


def matmul(x1: Any, x2: Any, dtype: Any = None) -> Variable:
    """NumPy's ``matmul`` (the ``@`` operator).

    Stacks of matrices in the last two dimensions, batch dimensions broadcast (static
    1s only). A 1-d first operand is a row (the added dimension is removed again from
    the result), a 1-d second operand a column. 0-d operands are an error (use ``mul``).
    ``dtype`` casts the result.
    """
    x1 = as_tensor_variable(x1)
    x2 = as_tensor_variable(x2)
    for i, v in enumerate((x1, x2)):
        if v.type.ndim == 0:
            raise ValueError(f"matmul: operand {i} ({v}) is 0-d ({v.type}); use mul for scalars")
    if x1.type.ndim <= 2 and x2.type.ndim <= 2:
        out = _dot(x1, x2)
    elif x1.type.ndim == 1:
        out = squeeze(_matmul(expand_dims(x1, 0), x2), -2)
    elif x2.type.ndim == 1:
        out = squeeze(_matmul(x1, expand_dims(x2, -1)), -1)
    else:
        out = _matmul(x1, x2)
    if dtype is not None:
        out = cast(out, dtype)
    return out


def vecdot(x1: Any, x2: Any, dtype: Any = None) -> Variable:
    """Dot products of the vectors in the last dimension, batch dimensions broadcast:
    ``(..., k), (..., k) -> (...)`` (like ``numpy.vecdot`` for real inputs; as in
    PyTensor, complex ``x1`` is not conjugated)."""
    x1 = as_tensor_variable(x1)
    x2 = as_tensor_variable(x2)
    _need_vectors("vecdot", x1, x2)
    if x1.type.ndim == 1 and x2.type.ndim == 1:
        out = _dot(x1, x2)
    else:
        out = squeeze(_matmul(expand_dims(x1, -2), expand_dims(x2, -1)), (-2, -1))
    return out if dtype is None else cast(out, dtype)


def matvec(x1: Any, x2: Any, dtype: Any = None) -> Variable:
    """Matrix-vector products ``(..., m, k), (..., k) -> (..., m)``, batch dimensions broadcast."""
    x1 = as_tensor_variable(x1)
    x2 = as_tensor_variable(x2)
    if x1.type.ndim < 2:
        raise ValueError(f"matvec: operand 0 ({x1}) must be at least 2-d, got {x1.type}")
    _need_vectors("matvec", x2)
    if x1.type.ndim == 2 and x2.type.ndim == 1:
        out = _dot(x1, x2)
    else:
        out = squeeze(_matmul(x1, expand_dims(x2, -1)), -1)
    return out if dtype is None else cast(out, dtype)


def vecmat(x1: Any, x2: Any, dtype: Any = None) -> Variable:
    """Vector-matrix products ``(..., k), (..., k, n) -> (..., n)``, batch dimensions broadcast."""
    x1 = as_tensor_variable(x1)
    x2 = as_tensor_variable(x2)
    _need_vectors("vecmat", x1)
    if x2.type.ndim < 2:
        raise ValueError(f"vecmat: operand 1 ({x2}) must be at least 2-d, got {x2.type}")
    if x1.type.ndim == 1 and x2.type.ndim == 2:
        out = _dot(x1, x2)
    else:
        out = squeeze(_matmul(expand_dims(x1, -2), x2), -2)
    return out if dtype is None else cast(out, dtype)


def _need_vectors(fname: str, *vs: Variable) -> None:
    for v in vs:
        if v.type.ndim < 1:
            raise ValueError(f"{fname}: {v} must be at least 1-d, got {v.type}")


# --- tensordot and outer -----------------------------------------------------------------


def _parse_axes(axes: Any, ndim_a: int, ndim_b: int) -> tuple[list[int], list[int]]:
    if isinstance(axes, (int, np.integer)) and not isinstance(axes, bool):
        n = int(axes)
        if n < 0 or n > ndim_a or n > ndim_b:
            raise ValueError(
                f"tensordot: axes={n} needs 0 <= axes <= the rank of both operands "
                f"(got {ndim_a}-d and {ndim_b}-d)"
            )
        return list(range(ndim_a - n, ndim_a)), list(range(n))
    try:
        axes_a, axes_b = axes
    except (TypeError, ValueError):
        raise TypeError(
            f"tensordot: axes must be an int or a pair of axis sequences (axes_a, axes_b), got {axes!r}"
        ) from None
    axes_a = [axes_a] if isinstance(axes_a, (int, np.integer)) else list(axes_a)
    axes_b = [axes_b] if isinstance(axes_b, (int, np.integer)) else list(axes_b)
    if len(axes_a) != len(axes_b):
        raise ValueError(
            f"tensordot: as many axes of each operand must be given, got {len(axes_a)} ({axes_a}) "
            f"and {len(axes_b)} ({axes_b})"
        )
    # normalize_axis checks the range and repeats; keep the given order
    normalize_axis(axes_a, ndim_a, "tensordot axis of the first operand")
    normalize_axis(axes_b, ndim_b, "tensordot axis of the second operand")
    return [int(a) % ndim_a for a in axes_a], [int(b) % ndim_b for b in axes_b]


def _size(dims: Sequence[Any]) -> Any:
    """Product of lengths: a Python int when all are static, else a symbolic int64 scalar."""
    if all(isinstance(d, int) for d in dims):
        return math.prod(dims)
    out: Any = None
    static = math.prod(d for d in dims if isinstance(d, int))
    for d in dims:
        if not isinstance(d, int):
            out = d if out is None else mul(out, d)
    return out if static == 1 else mul(out, np.int64(static))


def tensordot(a: Any, b: Any, axes: int | Sequence[Sequence[int]] = 2) -> Variable:
    """NumPy's ``tensordot``: sum the products of ``a`` and ``b`` over pairs of axes.

    ``axes`` is an int ``n`` (the last ``n`` axes of ``a`` against the first ``n`` of
    ``b``) or a pair of sequences ``(axes_a, axes_b)`` paired in order. The result has
    the remaining axes of ``a`` followed by those of ``b``. It is computed as one
    :class:`Dot` between ``a`` and ``b`` transposed and reshaped to matrices (or vectors).

    >>> import arignote.tensor as pt
    >>> a = pt.tensor3("a", dtype="float64", shape=(2, 3, 4))
    >>> b = pt.tensor4("b", dtype="float64", shape=(5, 6, 4, 3))
    >>> tensordot(a, b, [[1, 2], [3, 2]]).type
    TensorType(float64, shape=(2, 5, 6))
    """
    a = as_tensor_variable(a)
    b = as_tensor_variable(b)
    na, nb = a.type.ndim, b.type.ndim
    axes_a, axes_b = _parse_axes(axes, na, nb)
    if na == 0 or nb == 0:
        return mul(a, b)  # nothing to sum over: the outer product of a 0-d operand

    sa, sb = a.type.shape, b.type.shape
    for ax_a, ax_b in zip(axes_a, axes_b):
        if sa[ax_a] is not None and sb[ax_b] is not None and sa[ax_a] != sb[ax_b]:
            raise ValueError(
                f"tensordot: summed lengths differ: axis {ax_a} of {a} (static shape {_fmt(sa)}) has "
                f"length {sa[ax_a]}, axis {ax_b} of {b} (static shape {_fmt(sb)}) has {sb[ax_b]}"
            )
    if len(axes_a) > 1 and any(sa[i] is None or sb[j] is None for i, j in zip(axes_a, axes_b)):
        # Merging the summed axes into one would hide a run-time mismatch of their
        # lengths (e.g. (2, 3) against (3, 2)): assert b's lengths are a's.
        want: list[Any] = [None] * nb
        for ax_a, ax_b in zip(axes_a, axes_b):
            if sb[ax_b] is None:
                want[ax_b] = sa[ax_a] if sa[ax_a] is not None else Shape_i(ax_a)(a)
        b = specify_shape(b, tuple(want))

    shape_a, shape_b = shape_tuple(a), shape_tuple(b)
    free_a = [d for d in range(na) if d not in axes_a]
    free_b = [d for d in range(nb) if d not in axes_b]
    free_dims = [shape_a[d] for d in free_a] + [shape_b[d] for d in free_b]

    # a as (M, K) or (K,), b as (K, N) or (K,): one Dot does the summing
    a2 = transpose(a, free_a + axes_a)
    a_shape = ([_size([shape_a[d] for d in free_a])] if free_a else []) + [
        _size([shape_a[d] for d in axes_a])
    ]
    if len(free_a) > 1 or len(axes_a) != 1:  # else a2 already has that layout
        a2 = reshape(a2, a_shape)
    b2 = transpose(b, axes_b + free_b)
    b_shape = [_size([shape_b[d] for d in axes_b])] + (
        [_size([shape_b[d] for d in free_b])] if free_b else []
    )
    if len(free_b) > 1 or len(axes_b) != 1:
        b2 = reshape(b2, b_shape)
    out = _dot(a2, b2)
    if len(free_a) > 1 or len(free_b) > 1:  # free axes were merged: split them again
        out = reshape(out, free_dims)
    return out


def outer(x: Any, y: Any) -> Variable:
    """The outer product of two vectors (other operands are flattened first)."""
    x = as_tensor_variable(x)
    y = as_tensor_variable(y)
    if x.type.ndim != 1:
        x = flatten(x)
    if y.type.ndim != 1:
        y = flatten(y)
    return mul(expand_dims(x, 1), expand_dims(y, 0))


def vdot(a: Any, b: Any) -> Variable:
    """NumPy's ``vdot``: the inner product of the flattened operands, the first one
    conjugated when complex. Both must have the same number of elements."""
    a = as_tensor_variable(a)
    b = as_tensor_variable(b)
    if a.type.ndim != 1:
        a = flatten(a)
    if b.type.ndim != 1:
        b = flatten(b)
    if a.type.dtype in complex_types:
        a = conj(a)
    return _dot(a, b)


# --- batching rules (vectorize_graph's node step) ---------------------------------------


@register_batch_rule(Dot)
def _batch_dot(op: Op, node: Apply, args: list, flags: list) -> list | None:
    a, b = args
    fa, fb = flags
    if fa and fb:  # a stack of products: a batched matmul, vectors as 1-row/column matrices
        a3 = a if a.type.ndim == 3 else DimShuffle(input_ndim=2, new_order=[0, "x", 1])(a)
        b3 = b if b.type.ndim == 3 else DimShuffle(input_ndim=2, new_order=[0, 1, "x"])(b)
        out = matmul(a3, b3)
        drop = [d for d, keep in ((1, a.type.ndim == 3), (2, b.type.ndim == 3)) if not keep]
        if drop:
            out = DimShuffle(input_ndim=3, new_order=[d for d in range(3) if d not in drop])(out)
        return [(out, True)]
    if fa:  # a: (B, k) or (B, m, k)
        out = op(a, b) if a.type.ndim == 2 else matmul(a, b)
    elif b.type.ndim == 3:  # b: (B, k, n)
        out = matmul(a, b)
    else:  # b: (B, k): rows of b against a
        out = op(b, transpose(a)) if a.type.ndim == 2 else op(b, a)
    return [(out, True)]


@register_batch_rule(MatMul)
def _batch_matmul(op: Op, node: Apply, args: list, flags: list) -> list:
    return [(op(*args), True)]  # an unbatched input broadcasts along the batch
