"""Comparisons with a sparse operand: ``eq``, ``neq``, ``lt``, ``gt``, ``le``, ``ge`` (and
``x < y``, ``x <= y``, ``x > y``, ``x >= y``). Two sparse operands give a sparse ``uint8``
matrix (in the first one's format), a sparse and a dense one a dense ``uint8`` matrix, as
in PyTensor. Their gradients are zero (the results are integers).

>>> import numpy as np
>>> import scipy.sparse as sp
>>> from arignote import sparse
>>> import arignote.tensor as pt
>>> x = sparse.csr_matrix("x", dtype="float64")
>>> d = pt.dmatrix("d")
>>> (x > d).eval({x: sp.csr_matrix(np.array([[0.0, 2.0], [3.0, 0.0]])), d: np.ones((2, 2))})
array([[0, 1],
       [1, 0]], dtype=uint8)
"""

from __future__ import annotations

import operator
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import scipy.sparse as scipy_sparse

from arignote.graph.basic import Apply, Variable
from arignote.graph.op import Op
from arignote.sparse.arithmetic import _check_same_shape, _merge_shapes
from arignote.sparse.conversion import _is_sparse_variable, as_sparse_or_tensor_variable, as_sparse_variable
from arignote.sparse.type import SparseTensorType
from arignote.tensor.conversion import as_tensor_variable
from arignote.tensor.shape import _zero_grad
from arignote.tensor.type import TensorType

__all__ = [
    "ComparisonSD",
    "ComparisonSS",
    "EqualSD",
    "EqualSS",
    "GreaterEqualSD",
    "GreaterEqualSS",
    "GreaterThanSD",
    "GreaterThanSS",
    "LessEqualSD",
    "LessEqualSS",
    "LessThanSD",
    "LessThanSS",
    "NotEqualSD",
    "NotEqualSS",
    "eq",
    "equal_s_d",
    "equal_s_s",
    "ge",
    "greater_equal_s_d",
    "greater_equal_s_s",
    "greater_than_s_d",
    "greater_than_s_s",
    "gt",
    "le",
    "less_equal_s_d",
    "less_equal_s_s",
    "less_than_s_d",
    "less_than_s_s",
    "lt",
    "neq",
    "not_equal_s_d",
    "not_equal_s_s",
]

_OPERATORS: dict[str, Callable] = {
    "eq": operator.eq,
    "neq": operator.ne,
    "lt": operator.lt,
    "gt": operator.gt,
    "le": operator.le,
    "ge": operator.ge,
}
# comparing (dense, sparse) is comparing (sparse, dense) the other way round
_SWAPPED = {"eq": "eq", "neq": "neq", "lt": "gt", "gt": "lt", "le": "ge", "ge": "le"}


class _Comparison(Op):
    __props__ = ("name",)

    def __init__(self, name: str):
        if name not in _OPERATORS:
            raise ValueError(
                f"{type(self).__name__}: unknown comparison {name!r}; one of {sorted(_OPERATORS)}"
            )
        self.name = name

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        return [_zero_grad(v) for v in inputs]

    def __str__(self) -> str:
        return f"{type(self).__name__}{{{self.name}}}"


class ComparisonSS(_Comparison):
    """A comparison of two sparse matrices: a sparse ``uint8`` matrix."""

    def make_node(self, x: Any, y: Any) -> Apply:
        x, y = as_sparse_variable(x), as_sparse_variable(y)
        return Apply(self, [x, y], [SparseTensorType(x.type.format, "uint8", _merge_shapes(self, x, y))()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        x, y = inputs
        _check_same_shape(self, x, y)
        with warnings.catch_warnings():
            # SciPy warns that == (<=, >=) of two sparse matrices stores most entries: it is
            # what was asked for
            warnings.simplefilter("ignore", scipy_sparse.SparseEfficiencyWarning)
            z = _OPERATORS[self.name](x, y)
        output_storage[0][0] = z.astype("uint8").asformat(node.outputs[0].type.format)


class ComparisonSD(_Comparison):
    """A comparison of a sparse and a dense matrix: a dense ``uint8`` matrix."""

    def make_node(self, x: Any, y: Any) -> Apply:
        x, y = as_sparse_variable(x), as_tensor_variable(y)
        if y.type.ndim != 2:
            raise TypeError(f"{self}: the dense operand must be a matrix, got {y} of Type {y.type}")
        return Apply(self, [x, y], [TensorType("uint8", _merge_shapes(self, x, y))()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        x, y = inputs
        _check_same_shape(self, x, y)
        z = _OPERATORS[self.name](x.toarray(), y)
        output_storage[0][0] = np.asarray(z, dtype="uint8")


def _fixed(base: type, class_name: str, name: str) -> type:
    """``base`` with its comparison fixed to ``name`` (PyTensor has one class per comparison)."""

    def __init__(self: Any, name: str = name) -> None:
        if name != type(self).comparison:
            raise ValueError(f"{class_name} compares with {type(self).comparison!r}, got {name!r}")
        base.__init__(self, name)

    doc = f"``{name}`` of {'two sparse matrices' if base is ComparisonSS else 'a sparse and a dense matrix'}."
    return type(
        class_name,
        (base,),
        {"__init__": __init__, "comparison": name, "__doc__": doc, "__module__": __name__},
    )


EqualSS = _fixed(ComparisonSS, "EqualSS", "eq")
NotEqualSS = _fixed(ComparisonSS, "NotEqualSS", "neq")
LessThanSS = _fixed(ComparisonSS, "LessThanSS", "lt")
GreaterThanSS = _fixed(ComparisonSS, "GreaterThanSS", "gt")
LessEqualSS = _fixed(ComparisonSS, "LessEqualSS", "le")
GreaterEqualSS = _fixed(ComparisonSS, "GreaterEqualSS", "ge")
EqualSD = _fixed(ComparisonSD, "EqualSD", "eq")
NotEqualSD = _fixed(ComparisonSD, "NotEqualSD", "neq")
LessThanSD = _fixed(ComparisonSD, "LessThanSD", "lt")
GreaterThanSD = _fixed(ComparisonSD, "GreaterThanSD", "gt")
LessEqualSD = _fixed(ComparisonSD, "LessEqualSD", "le")
GreaterEqualSD = _fixed(ComparisonSD, "GreaterEqualSD", "ge")

equal_s_s, not_equal_s_s = EqualSS(), NotEqualSS()
less_than_s_s, greater_than_s_s = LessThanSS(), GreaterThanSS()
less_equal_s_s, greater_equal_s_s = LessEqualSS(), GreaterEqualSS()
equal_s_d, not_equal_s_d = EqualSD(), NotEqualSD()
less_than_s_d, greater_than_s_d = LessThanSD(), GreaterThanSD()
less_equal_s_d, greater_equal_s_d = LessEqualSD(), GreaterEqualSD()

_SS = {
    op.name: op
    for op in (equal_s_s, not_equal_s_s, less_than_s_s, greater_than_s_s, less_equal_s_s, greater_equal_s_s)
}
_SD = {
    op.name: op
    for op in (equal_s_d, not_equal_s_d, less_than_s_d, greater_than_s_d, less_equal_s_d, greater_equal_s_d)
}


def _comparison(name: str) -> Callable[[Any, Any], Variable]:
    def compare(x: Any, y: Any) -> Variable:
        x, y = as_sparse_or_tensor_variable(x), as_sparse_or_tensor_variable(y)
        xs, ys = _is_sparse_variable(x), _is_sparse_variable(y)
        if xs and ys:
            return _SS[name](x, y)
        if xs:
            return _SD[name](x, y)
        if ys:
            return _SD[_SWAPPED[name]](y, x)
        raise TypeError(f"sparse.{name} needs a sparse operand, got {x} ({x.type}) and {y} ({y.type})")

    compare.__name__ = compare.__qualname__ = name
    compare.__doc__ = f"``{name}(x, y)`` elementwise, at least one operand sparse (``uint8`` result)."
    return compare


eq = _comparison("eq")
neq = _comparison("neq")
lt = _comparison("lt")
gt = _comparison("gt")
le = _comparison("le")
ge = _comparison("ge")
