"""What Ops say about the structure of the matrices they compute: the inference rules
(:func:`~arignote.assumptions.core.register_assumption`) for the Ops that build, combine and
factor matrices. Each rule looks at the last two dimensions (a stack of matrices has its
facts for every matrix of the stack) and only claims what holds for every value.
"""

from __future__ import annotations

from typing import Any

from arignote.assumptions.core import (
    ALL_KEYS,
    DIAGONAL,
    LOWER_TRIANGULAR,
    ORTHOGONAL,
    PERMUTATION,
    POSITIVE_DEFINITE,
    SELECTION,
    SYMMETRIC,
    UPPER_TRIANGULAR,
    AssumptionKey,
    FactState,
    _rule_for,
    register_assumption,
    true_if,
)
from arignote.graph.basic import Apply, Constant, Variable
from arignote.scalar.basic import Add, Mul, Neg, Sub
from arignote.tensor.alloc import Eye
from arignote.tensor.blockwise import Blockwise
from arignote.tensor.diag import AllocDiag
from arignote.tensor.elemwise import DimShuffle, Elemwise
from arignote.tensor.linalg.decompositions import Cholesky
from arignote.tensor.linalg.inverse import MatrixInverse
from arignote.tensor.products import Dot, MatMul
from arignote.tensor.shape import SpecifyShape

__all__: list[str] = []

T, U = FactState.TRUE, FactState.UNKNOWN
#: the transpose of a matrix with this property has the property in the value
_TRANSPOSED = {
    DIAGONAL: DIAGONAL,
    LOWER_TRIANGULAR: UPPER_TRIANGULAR,
    UPPER_TRIANGULAR: LOWER_TRIANGULAR,
    SYMMETRIC: SYMMETRIC,
    POSITIVE_DEFINITE: POSITIVE_DEFINITE,
    ORTHOGONAL: ORTHOGONAL,
    PERMUTATION: PERMUTATION,
}


def _is_true(feature: Any, var: Variable, key: AssumptionKey) -> bool:
    return feature.get(var, key) == T


# --- views ---------------------------------------------------------------------------------------


@register_assumption(DIAGONAL, SpecifyShape)
@register_assumption(LOWER_TRIANGULAR, SpecifyShape)
@register_assumption(UPPER_TRIANGULAR, SpecifyShape)
@register_assumption(SYMMETRIC, SpecifyShape)
@register_assumption(POSITIVE_DEFINITE, SpecifyShape)
@register_assumption(ORTHOGONAL, SpecifyShape)
@register_assumption(SELECTION, SpecifyShape)
@register_assumption(PERMUTATION, SpecifyShape)
def _same_values(key: AssumptionKey, op: Any, feature: Any, fgraph: Any, node: Apply, states: list) -> list:
    return [states[0]]


def _dimshuffle_rule(
    key: AssumptionKey, op: DimShuffle, feature: Any, fgraph: Any, node: Apply, states: list
) -> list:
    """Dimensions added or moved on the left keep every matrix as it was; swapping the last
    two transposes each one."""
    (x,) = node.inputs
    nd = op.input_ndim
    if nd < 2:
        return [U]
    order = list(op.new_order)
    last = order[-2:]
    kept = [d for d in order if d != "x"]
    if len(kept) != nd:
        return [U]  # drops a dimension
    if last == [nd - 2, nd - 1]:
        return [states[0]]
    if last == [nd - 1, nd - 2]:
        source = _TRANSPOSED.get(key)
        return [feature.get(x, source) if source is not None else U]
    return [U]


for _key in ALL_KEYS:
    register_assumption(_key, DimShuffle)(_dimshuffle_rule)


# --- elementwise arithmetic ----------------------------------------------------------------------


def _role(v: Variable, out: Variable) -> str:
    """'scalar' (one number per matrix), 'matrix' (its own last two dimensions) or 'other'
    (a row or column broadcast across the matrix)."""
    b = (True,) * (out.type.ndim - v.type.ndim) + tuple(s == 1 for s in v.type.shape)
    if b[-1] and b[-2]:
        return "scalar"
    out_b = tuple(s == 1 for s in out.type.shape)
    if b[-2:] == out_b[-2:]:
        return "matrix"
    return "other"


def _elemwise_rule(
    key: AssumptionKey, op: Elemwise, feature: Any, fgraph: Any, node: Apply, states: list
) -> list:
    out = node.outputs[0]
    if out.type.ndim < 2:
        return [U]
    scalar_op = op.scalar_op
    roles = [_role(v, out) for v in node.inputs]
    matrices = [s for s, r in zip(states, roles) if r == "matrix"]
    zero_keeping = key in (DIAGONAL, LOWER_TRIANGULAR, UPPER_TRIANGULAR)
    if isinstance(scalar_op, Neg):
        return [states[0] if (zero_keeping or key == SYMMETRIC) else U]
    if isinstance(scalar_op, Mul):
        if zero_keeping:  # a zero times anything is zero
            return [true_if(any(s == T for s in matrices))]
        if key == SYMMETRIC:
            return [true_if("other" not in roles and bool(matrices) and all(s == T for s in matrices))]
        return [U]
    if isinstance(scalar_op, (Add, Sub)):
        if "other" in roles or not matrices:
            return [U]
        if zero_keeping:
            return [true_if("scalar" not in roles and all(s == T for s in matrices))]
        if key == SYMMETRIC:
            return [true_if(all(s == T for s in matrices))]
        if key == POSITIVE_DEFINITE and isinstance(scalar_op, Add):
            return [true_if("scalar" not in roles and all(s == T for s in matrices))]
    return [U]


for _key in ALL_KEYS:
    register_assumption(_key, Elemwise)(_elemwise_rule)


# --- products ------------------------------------------------------------------------------------


def _transposes(a: Variable, b: Variable) -> bool:
    """Whether ``b`` is ``a`` with its last two dimensions swapped (``a @ a.T``)."""
    node = b.owner
    if node is None or not isinstance(node.op, DimShuffle) or node.inputs[0] is not a:
        return False
    nd = node.op.input_ndim
    return nd >= 2 and list(node.op.new_order) == [*range(nd - 2), nd - 1, nd - 2]


def _product_rule(key: AssumptionKey, op: Any, feature: Any, fgraph: Any, node: Apply, states: list) -> list:
    a, b = node.inputs[:2]
    if a.type.ndim < 2 or b.type.ndim < 2:
        return [U]
    if key in (DIAGONAL, LOWER_TRIANGULAR, UPPER_TRIANGULAR, ORTHOGONAL, PERMUTATION, SELECTION):
        return [true_if(states[0] == T and states[1] == T)]
    if key == SYMMETRIC:
        return [true_if(_transposes(a, b) or _transposes(b, a))]  # X @ X.T
    return [U]


for _key in ALL_KEYS:
    register_assumption(_key, Dot, MatMul)(_product_rule)


# --- constructors and factorisations -------------------------------------------------------------


def _constant_value(v: Variable) -> Any:
    return v.data.item() if isinstance(v, Constant) and v.data.size == 1 else None


def _eye_rule(key: AssumptionKey, op: Eye, feature: Any, fgraph: Any, node: Apply, states: list) -> list:
    n, m, k = node.inputs
    if _constant_value(k) != 0:
        return [U]
    if key in (DIAGONAL, SELECTION):
        return [T]
    square = n is m or (_constant_value(n) is not None and _constant_value(n) == _constant_value(m))
    return [true_if(square)]


for _key in ALL_KEYS:
    register_assumption(_key, Eye)(_eye_rule)


@register_assumption(DIAGONAL, AllocDiag)
def _alloc_diag_rule(
    key: AssumptionKey, op: AllocDiag, feature: Any, fgraph: Any, node: Apply, states: list
) -> list:
    nd = node.outputs[0].type.ndim
    axes = {op.axis1 % nd, op.axis2 % nd}
    return [true_if(op.offset == 0 and axes == {nd - 2, nd - 1})]


@register_assumption(LOWER_TRIANGULAR, Cholesky)
@register_assumption(UPPER_TRIANGULAR, Cholesky)
def _cholesky_rule(
    key: AssumptionKey, op: Cholesky, feature: Any, fgraph: Any, node: Apply, states: list
) -> list:
    return [true_if(op.lower == (key == LOWER_TRIANGULAR))]


def _inverse_rule(key: AssumptionKey, op: Any, feature: Any, fgraph: Any, node: Apply, states: list) -> list:
    # the inverse keeps each of these structures (a permutation's inverse is its transpose)
    return [true_if(key != SELECTION and states[0] == T)]


for _key in ALL_KEYS:
    register_assumption(_key, MatrixInverse)(_inverse_rule)


def _blockwise_rule(
    key: AssumptionKey, op: Blockwise, feature: Any, fgraph: Any, node: Apply, states: list
) -> list:
    """A Blockwise node has the facts its core Op gives each matrix of the stack."""
    fn = _rule_for(key, op.core_op)
    if fn is None:
        return [U] * len(node.outputs)
    return fn(key, op.core_op, feature, fgraph, node, states)


for _key in ALL_KEYS:
    register_assumption(_key, Blockwise)(_blockwise_rule)
