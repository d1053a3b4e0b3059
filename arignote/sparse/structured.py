"""Structured elementwise functions: a function applied to the stored entries of a sparse
matrix only (``structured_add(x, 2)`` adds 2 where ``x`` stores a value and leaves the
other entries zero). Each is the tensor function on ``csm_data(x)`` rebuilt into a matrix
of ``x``'s structure, so its gradient is structured too (and comes from the tensor
function's own rule).

>>> import numpy as np
>>> import scipy.sparse as sp
>>> from arignote import sparse
>>> x = sparse.csc_matrix("x", dtype="float32")
>>> a = sp.csc_matrix(np.array([[0, 0, -1], [0, -2, 1], [3, 0, 0]], dtype="float32"))
>>> sparse.structured_add(x, 2).eval({x: a}).toarray()
array([[0., 0., 1.],
       [0., 0., 3.],
       [5., 0., 0.]], dtype=float32)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from arignote.graph.basic import Variable
from arignote.sparse.construction import CSM, csm_properties
from arignote.sparse.conversion import as_sparse_variable
from arignote.tensor import ufuncs
from arignote.tensor.conversion import as_tensor_variable

__all__ = [
    "abs",
    "structured_elemwise",
    "arcsin",
    "arcsinh",
    "arctan",
    "arctanh",
    "ceil",
    "conj",
    "conjugate",
    "deg2rad",
    "expm1",
    "floor",
    "log1p",
    "rad2deg",
    "rint",
    "sgn",
    "sign",
    "sin",
    "sinh",
    "sqr",
    "sqrt",
    "structured_add",
    "structured_conjugate",
    "structured_exp",
    "structured_log",
    "structured_maximum",
    "structured_minimum",
    "structured_pow",
    "structured_sigmoid",
    "tan",
    "tanh",
    "trunc",
]


def _structured(tensor_fn: Callable[..., Variable], name: str, what: str) -> Callable[..., Variable]:
    def apply(x: Any, *scalars: Any) -> Variable:
        x = as_sparse_variable(x)
        args = [as_tensor_variable(s) for s in scalars]
        for s in args:
            if s.type.ndim != 0:
                raise TypeError(
                    f"sparse.{name}: the second operand must be a scalar, got {s} of Type {s.type}"
                )
        data, indices, indptr, shape = csm_properties(x)
        return CSM(x.type.format)(tensor_fn(data, *args), indices, indptr, shape)

    apply.__name__ = apply.__qualname__ = name
    apply.__doc__ = f"{what} for the stored entries of the sparse ``x`` (the others stay zero)."
    return apply


structured_sigmoid = _structured(ufuncs.sigmoid, "structured_sigmoid", "sigmoid(x)")
structured_exp = _structured(ufuncs.exp, "structured_exp", "exp(x)")
structured_log = _structured(ufuncs.log, "structured_log", "log(x)")
structured_pow = _structured(ufuncs.pow, "structured_pow", "x ** y (y a scalar)")
structured_minimum = _structured(ufuncs.minimum, "structured_minimum", "minimum(x, y) (y a scalar)")
structured_maximum = _structured(ufuncs.maximum, "structured_maximum", "maximum(x, y) (y a scalar)")
structured_add = _structured(ufuncs.add, "structured_add", "x + y (y a scalar)")


def structured_elemwise(tensor_op: Callable[..., Variable]) -> Callable[[Callable], Callable[..., Variable]]:
    """Decorator: the decorated function (its name and doc are kept, its body is not used)
    becomes ``tensor_op`` applied to the stored entries of a sparse matrix, with scalar extra
    operands, as the ``structured_*`` functions are.

    >>> import numpy as np, scipy.sparse as sp
    >>> from arignote.tensor import ufuncs
    >>> @structured_elemwise(ufuncs.exp)
    ... def structured_exp_plus(x):
    ...     "exp of the stored entries"
    >>> # the zeros that are not stored stay zero (a plain exp would make them 1)
    >>> structured_exp_plus(sp.csr_matrix(np.diag([0.0, 1.0]))).toarray().eval().round(3).tolist()
    [[0.0, 0.0], [0.0, 2.718]]
    """

    def decorate(f: Callable) -> Callable[..., Variable]:
        apply = _structured(tensor_op, f.__name__, f.__doc__ or f"{f.__name__}(x)")
        apply.__doc__ = f.__doc__ or apply.__doc__
        apply.__wrapped__ = f  # type: ignore[attr-defined]
        return apply

    return decorate


abs = _structured(ufuncs.abs, "abs", "abs(x)")
sin = _structured(ufuncs.sin, "sin", "sin(x)")
sinh = _structured(ufuncs.sinh, "sinh", "sinh(x)")
arcsin = _structured(ufuncs.arcsin, "arcsin", "arcsin(x)")
arcsinh = _structured(ufuncs.arcsinh, "arcsinh", "arcsinh(x)")
tan = _structured(ufuncs.tan, "tan", "tan(x)")
tanh = _structured(ufuncs.tanh, "tanh", "tanh(x)")
arctan = _structured(ufuncs.arctan, "arctan", "arctan(x)")
arctanh = _structured(ufuncs.arctanh, "arctanh", "arctanh(x)")
rint = _structured(ufuncs.round_half_to_even, "rint", "round_half_to_even(x)")
sign = _structured(ufuncs.sign, "sign", "sign(x)")
sgn = sign
ceil = _structured(ufuncs.ceil, "ceil", "ceil(x)")
floor = _structured(ufuncs.floor, "floor", "floor(x)")
trunc = _structured(ufuncs.trunc, "trunc", "trunc(x)")
log1p = _structured(ufuncs.log1p, "log1p", "log1p(x)")
expm1 = _structured(ufuncs.expm1, "expm1", "expm1(x)")
deg2rad = _structured(ufuncs.deg2rad, "deg2rad", "deg2rad(x)")
rad2deg = _structured(ufuncs.rad2deg, "rad2deg", "rad2deg(x)")
sqr = _structured(ufuncs.sqr, "sqr", "x ** 2")
sqrt = _structured(ufuncs.sqrt, "sqrt", "sqrt(x)")
_conj = _structured(ufuncs.conj, "conj", "the complex conjugate")


def conjugate(x: Any) -> Variable:
    """The complex conjugate of the stored entries (``x`` itself when it is real)."""
    x = as_sparse_variable(x)
    return _conj(x) if np.dtype(x.type.dtype).kind == "c" else x


conj = structured_conjugate = conjugate
