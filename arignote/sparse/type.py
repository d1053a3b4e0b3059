"""SparseTensorType: the Type of ``scipy.sparse`` matrices in CSR or CSC format.

A sparse Type fixes the ``format`` (``"csr"`` or ``"csc"``), the ``dtype`` of the stored
values and, optionally, static lengths. Values are ``scipy.sparse.csr_matrix`` /
``csc_matrix`` objects (a ``csr_array``/``csc_array`` is accepted and viewed as the matrix
class). A dense array, or a sparse matrix of the other format, is refused with an error
that says how to convert it: a format change costs a copy and is never made silently.

>>> import numpy as np
>>> import scipy.sparse as sp
>>> from arignote.sparse.type import SparseTensorType
>>> t = SparseTensorType("csr", "float64")
>>> print(t)
Sparse(float64, shape=(?, ?), format=csr)
>>> t.format, t.ndim
('csr', 2)
>>> t.filter(sp.csr_matrix(np.eye(2))).nnz
2
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

import numpy as np
import scipy.sparse as scipy_sparse

from arignote.graph.basic import Variable
from arignote.graph.type import HasDataType, HasShape, Type
from arignote.scalar.type import _normalize_dtype

__all__ = [
    "SparsityTypes",
    "SparseTensorType",
    "all_dtypes",
    "complex_dtypes",
    "continuous_dtypes",
    "discrete_dtypes",
    "float_dtypes",
    "int_dtypes",
    "integer_dtypes",
    "uint_dtypes",
    "sparse_formats",
    "tensor_continuous_dtypes",
    "tensor_discrete_dtypes",
]

#: the sparse formats a :class:`SparseTensorType` may have (PyTensor's name; it also lists
#: ``"bsr"``, whose Type no Op computes with there and arignote does not have)
SparsityTypes = Literal["csr", "csc"]

#: the formats a SparseTensorType may have
sparse_formats = ["csc", "csr"]

int_dtypes = ["int8", "int16", "int32", "int64"]
uint_dtypes = ["uint8", "uint16", "uint32", "uint64"]
float_dtypes = ["float32", "float64"]
complex_dtypes = ["complex64", "complex128"]
integer_dtypes = int_dtypes + uint_dtypes
discrete_dtypes = integer_dtypes
continuous_dtypes = complex_dtypes + float_dtypes
#: the dtypes a sparse matrix may hold (scipy.sparse has no float16 arithmetic)
all_dtypes = integer_dtypes + float_dtypes + complex_dtypes
#: the dtypes of dense tensors (float16 and bool included), by kind
tensor_continuous_dtypes = ["float16", *float_dtypes, *complex_dtypes]
tensor_discrete_dtypes = ["bool", *integer_dtypes]

_MATRIX_CLASS = {"csr": scipy_sparse.csr_matrix, "csc": scipy_sparse.csc_matrix}


def _describe(value: Any) -> str:
    if scipy_sparse.issparse(value):
        return f"a scipy.sparse {value.format} {type(value).__name__} of dtype {value.dtype} and shape {value.shape}"
    if isinstance(value, np.ndarray):
        return f"a dense ndarray of dtype {value.dtype} and shape {value.shape}"
    return f"{type(value).__name__} {value!r}"[:120]


def _fmt_shape(shape: tuple) -> str:
    return "(" + ", ".join("?" if s is None else str(s) for s in shape) + ")"


class SparseTensorType(Type, HasDataType, HasShape):
    """The Type of 2-d ``scipy.sparse`` matrices of one ``format`` and ``dtype``.

    ``shape`` holds static lengths (``None``: unknown); sparse matrices never broadcast, so
    a static 1 is only a length here.
    """

    __props__ = ("format", "dtype", "shape")
    ndim = 2
    #: the scipy class of each format's values
    format_cls = _MATRIX_CLASS

    def __init__(
        self,
        format: str,
        dtype: Any,
        shape: Iterable[int | None] | None = None,
        name: str | None = None,
        broadcastable: Iterable[bool] | None = None,
    ):
        if format not in _MATRIX_CLASS:
            raise ValueError(f"SparseTensorType: unsupported format {format!r}; use one of {sparse_formats}")
        dtype = _normalize_dtype(dtype)
        if dtype not in all_dtypes:
            raise TypeError(
                f"SparseTensorType: unsupported dtype {dtype}; sparse matrices hold one of {all_dtypes}"
            )
        if shape is None:
            shape = (None, None) if broadcastable is None else tuple(1 if b else None for b in broadcastable)
        shape = tuple(None if s is None else int(s) for s in shape)
        if len(shape) != 2 or any(s is not None and s < 0 for s in shape):
            raise ValueError(f"SparseTensorType: a sparse matrix has 2 dimensions, got the shape {shape}")
        self.format = format
        self.dtype = dtype
        self.shape = shape
        self.name = name
        self.numpy_dtype = np.dtype(dtype)

    @property
    def broadcastable(self) -> tuple[bool, ...]:
        return tuple(s == 1 for s in self.shape)

    def clone(self, dtype: Any = None, shape: Iterable | None = None, **kwargs: Any) -> SparseTensorType:
        """A SparseTensorType with some of format/dtype/shape replaced."""
        format = kwargs.pop("format", self.format)
        kwargs.pop("broadcastable", None)
        return type(self)(
            format, self.dtype if dtype is None else dtype, self.shape if shape is None else shape, **kwargs
        )

    # -- values ---------------------------------------------------------------------------

    def filter(self, data: Any, strict: bool = False, allow_downcast: bool | None = None) -> Any:
        """``data`` as a sparse matrix of this Type, or a ``TypeError`` saying what is wrong.

        Only sparse matrices of this format are accepted (a dense array or another format
        needs an explicit conversion, which the message names). ``strict``: the dtype must
        match exactly; otherwise a lossless upcast is made, a lossy one needs
        ``allow_downcast``.
        """
        cls = _MATRIX_CLASS[self.format]
        if type(data) is cls and data.dtype == self.numpy_dtype:
            return self._check_shape(data)
        if isinstance(data, Variable):
            raise TypeError(
                f"Expected a scipy.sparse {self.format} matrix for {self}, got the symbolic Variable "
                f"{data}; symbolic inputs belong in the graph, not in a call"
            )
        if not scipy_sparse.issparse(data):
            raise TypeError(
                f"{self} expects a scipy.sparse {self.format} matrix, got {_describe(data)}; convert it "
                f"with scipy.sparse.{self.format}_matrix(value)"
            )
        if data.format != self.format:
            raise TypeError(
                f"{self} expects the {self.format} format, got {_describe(data)}; convert it with "
                f"value.to{self.format}() (formats are never converted implicitly)"
            )
        if not isinstance(data, cls):
            data = cls(data)  # a sparse array: the same buffers, seen as a matrix
        if data.dtype != self.numpy_dtype:
            if strict:
                raise TypeError(f"{self} (strict) expects dtype {self.dtype}, got {_describe(data)}")
            if not (allow_downcast or np.can_cast(data.dtype, self.numpy_dtype, "safe")):
                raise TypeError(
                    f"{self} cannot hold {_describe(data)} without loss of precision; pass "
                    f"allow_downcast=True (or cast the value first with value.astype('{self.dtype}'))"
                )
            data = data.astype(self.dtype)
        elif strict and type(data) is not cls:
            raise TypeError(f"{self} (strict) expects a {cls.__name__}, got {_describe(data)}")
        return self._check_shape(data)

    def _check_shape(self, data: Any) -> Any:
        for i, (s, d) in enumerate(zip(self.shape, data.shape)):
            if s is not None and s != d:
                raise TypeError(
                    f"{self} has static shape {_fmt_shape(self.shape)}, but the value has shape "
                    f"{data.shape} (dimension {i}: expected {s}, got {d})"
                )
        return data

    def is_valid_value(self, data: Any, strict: bool = True) -> bool:
        return (
            scipy_sparse.issparse(data)
            and data.format == self.format
            and super().is_valid_value(data, strict)
        )

    def values_eq(self, a: Any, b: Any) -> bool:
        """Same format, dtype, shape and values (stored zeros count as zeros)."""
        if not (scipy_sparse.issparse(a) and scipy_sparse.issparse(b)):
            return False
        if a.shape != b.shape or a.dtype != b.dtype:
            return False
        return (a != b).nnz == 0

    def values_eq_approx(self, a: Any, b: Any, **kwargs: Any) -> bool:
        """Equal within the dtype's tolerance, as dense arrays (NaNs in the same places)."""
        if not (scipy_sparse.issparse(a) and scipy_sparse.issparse(b)) or a.shape != b.shape:
            return False
        rtol, atol = (1e-5, 1e-5) if self.numpy_dtype.itemsize <= 4 else (1e-5, 1e-8)
        return bool(np.allclose(a.toarray(), b.toarray(), rtol=rtol, atol=atol, equal_nan=True))

    @staticmethod
    def may_share_memory(a: Any, b: Any) -> bool:
        def buffers(v: Any) -> list:
            if scipy_sparse.issparse(v):
                return [v.data, v.indices, v.indptr]
            return [v] if isinstance(v, np.ndarray) else []

        if a is b:
            return True
        return any(np.may_share_memory(x, y) for x in buffers(a) for y in buffers(b))

    def get_shape_info(self, obj: Any) -> tuple:
        return (obj.shape, obj.data.size, obj.indices.size, obj.indptr.size)

    def get_size(self, shape_info: tuple) -> int:
        _, n_data, n_indices, n_indptr = shape_info
        return n_data * self.numpy_dtype.itemsize + (n_indices + n_indptr) * 4

    def value_zeros(self, shape: tuple[int, int]) -> Any:
        """An all-zero sparse matrix (nothing stored) of this format, dtype and ``shape``."""
        return _MATRIX_CLASS[self.format](tuple(shape), dtype=self.dtype)

    # -- type relations -------------------------------------------------------------------

    def in_same_class(self, otype: Type) -> bool:
        return (
            isinstance(otype, SparseTensorType) and otype.format == self.format and otype.dtype == self.dtype
        )

    def is_super(self, otype: Type) -> bool:
        """Every matrix of ``otype`` is one of this Type (same format and dtype; each static
        length here is also there)."""
        return self.in_same_class(otype) and all(s is None or s == o for s, o in zip(self.shape, otype.shape))

    def filter_variable(self, other: Any, allow_convert: bool = True) -> Variable:
        if isinstance(other, Variable) and other.type != self:
            if allow_convert:
                converted = self.convert_variable(other)
                if converted is not None:
                    return converted
            otype = other.type
            if not isinstance(otype, SparseTensorType):
                why = f"it is dense ({otype}); make it sparse with arignote.sparse.{self.format}_from_dense"
            elif otype.format != self.format:
                why = f"its format is {otype.format}, not {self.format}"
            elif otype.dtype != self.dtype:
                why = f"its dtype is {otype.dtype}, not {self.dtype}; cast it with {other}.astype('{self.dtype}')"
            else:
                why = f"its static shape {_fmt_shape(otype.shape)} does not fit {_fmt_shape(self.shape)}"
            raise TypeError(f"Cannot convert Type {otype} (of Variable {other}) into Type {self}: {why}")
        return super().filter_variable(other, allow_convert)

    # -- printing -------------------------------------------------------------------------

    def __str__(self) -> str:
        if self.name:
            return self.name
        return f"Sparse({self.dtype}, shape={_fmt_shape(self.shape)}, format={self.format})"

    def __repr__(self) -> str:
        return f"SparseTensorType({self.format}, {self.dtype}, shape={self.shape})"
