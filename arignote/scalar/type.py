"""ScalarType: the Type of 0-d numeric values, and NumPy's dtype promotion (``upcast``).

Values of a ``ScalarType("float32")`` are NumPy scalars of that dtype. Scalar graphs are
what fused elementwise kernels are made of (:class:`~arignote.scalar.composite.Composite`).
"""

from __future__ import annotations

import contextlib
import functools
import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from arignote.configdefaults import config
from arignote.graph.basic import Constant, Variable
from arignote.graph.type import HasDataType, HasShape, Type

__all__ = [
    "ScalarType",
    "ScalarVariable",
    "ScalarConstant",
    "upcast",
    "as_scalar",
    "constant",
    "get_scalar_type",
    "python_scalar_dtype",
    "all_types",
    "int_types",
    "uint_types",
    "integer_types",
    "float_types",
    "complex_types",
    "discrete_types",
    "continuous_types",
]

bool_types = ("bool",)
int_types = ("int8", "int16", "int32", "int64")
uint_types = ("uint8", "uint16", "uint32", "uint64")
integer_types = int_types + uint_types
float_types = ("float16", "float32", "float64")
complex_types = ("complex64", "complex128")
discrete_types = bool_types + integer_types
continuous_types = float_types + complex_types
all_types = discrete_types + continuous_types


# Building a node looks dtypes up several times; np.dtype(...).name costs microseconds,
# so known spellings are memoised.
_dtype_names: dict = {}


def _normalize_dtype(dtype: Any) -> str:
    if isinstance(dtype, str) and dtype == "floatX":
        return config.floatX
    if dtype is None:  # np.dtype(None) would silently be float64
        raise TypeError(f"None is not a dtype; expected one of {list(all_types)}")
    try:
        return _dtype_names[dtype]
    except (KeyError, TypeError):
        pass
    try:
        name = np.dtype(dtype).name
    except TypeError:
        raise TypeError(f"{dtype!r} is not a dtype; expected one of {list(all_types)}") from None
    if name not in all_types:
        raise TypeError(f"Unsupported dtype {name!r}; expected one of {list(all_types)}")
    with contextlib.suppress(TypeError):  # an unhashable spelling is just not memoised
        _dtype_names[dtype] = name
    return name


@functools.lru_cache(maxsize=4096)
def _upcast_names(names: tuple[str, ...]) -> str:
    out = np.dtype(names[0])
    for name in names[1:]:  # left to right, as a + b + c: promotion is not associative
        out = np.promote_types(out, np.dtype(name))
    return out.name


def upcast(dtype: Any, *dtypes: Any) -> str:
    """The dtype NumPy gives an operation on values of these dtypes (by dtype only), promoting
    from left to right as ``a + b + c`` does: NumPy's promotion is not associative
    (``(int16 + uint16) + float16`` is float64, ``numpy.result_type`` of the three float32)
    and PyTensor folds the same way."""
    return _upcast_names(tuple(_normalize_dtype(d) for d in (dtype, *dtypes)))


def python_scalar_dtype(x: Any) -> str:
    """The dtype of a Python number used as a constant.

    ints: the smallest signed int dtype holding them (uint64 for 2**63..2**64-1); floats:
    float32 when exactly representable (inf is, NaN is not: it equals nothing), else
    float64; when ``floatX`` is float32, float32 unless a finite value overflows it;
    complex: complex128. ``bool`` is rejected.
    """
    if isinstance(x, bool):
        raise TypeError(
            f"Python bool {x!r} is not a number here; use numpy.bool_({x}) or a comparison "
            "if you mean a boolean tensor, or int(x) if you mean 0/1"
        )
    if isinstance(x, int):
        for dtype in int_types:
            info = np.iinfo(dtype)
            if info.min <= x <= info.max:
                return dtype
        if 0 <= x <= np.iinfo("uint64").max:
            return "uint64"
        raise OverflowError(f"Python int {x} does not fit in any 64-bit integer dtype")
    if isinstance(x, float):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            as32 = np.float32(x)
        if config.floatX in ("float32", "float16"):
            return "float32" if np.isfinite(as32) or not math.isfinite(x) else "float64"
        return "float32" if float(as32) == x else "float64"
    if isinstance(x, complex):
        return "complex128"
    raise TypeError(f"{type(x).__name__} {x!r} is not a Python number")


class ScalarType(Type, HasDataType, HasShape):
    """The Type of a 0-d value of one ``dtype`` (``bool``, ints, uints, floats, complexes).

    >>> ScalarType("float32")
    ScalarType(float32)
    >>> ScalarType("int8").filter(3)
    np.int8(3)
    """

    __props__ = ("dtype",)
    ndim = 0
    shape: tuple = ()
    broadcastable: tuple = ()

    def __init__(self, dtype: Any):
        self.dtype = _normalize_dtype(dtype)
        self._np_type = np.dtype(self.dtype).type

    @property
    def numpy_dtype(self) -> np.dtype:
        return np.dtype(self.dtype)

    def filter(self, data: Any, strict: bool = False, allow_downcast: bool | None = None) -> Any:
        """A NumPy scalar of ``dtype`` equal to ``data``.

        ``strict``: ``data`` must already be one. Otherwise the conversion must keep the
        value exactly (NaN counts as equal to NaN), unless ``allow_downcast``; a Python
        float into ``floatX`` is allowed to round when ``allow_downcast`` is ``None``.
        """
        if strict:
            if isinstance(data, np.generic) and data.dtype.name == self.dtype:
                return data
            raise TypeError(
                f"Expected a {self.dtype} scalar (strict), got {type(data).__name__} {data!r}"
                + (f" of dtype {data.dtype}" if hasattr(data, "dtype") else "")
            )
        if isinstance(data, int) and not -(2**63) <= data < 2**64:  # NumPy: an object array
            data = self._filter_big_int(data, allow_downcast)
        arr = data if isinstance(data, np.ndarray) else np.asarray(data)
        if arr.ndim != 0:
            raise TypeError(f"Expected a {self.dtype} scalar, got an array of shape {arr.shape}")
        if arr.dtype.kind not in "biufc":
            raise TypeError(f"Expected a {self.dtype} scalar, got non-numeric {type(data).__name__} {data!r}")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            converted = arr.astype(self.dtype)[()]
        if allow_downcast or arr.dtype.name == self.dtype:
            return converted
        if (
            allow_downcast is None
            and isinstance(data, float)
            and self.dtype == config.floatX
            and (np.isfinite(converted) or not np.isfinite(data))  # rounding, not overflow
        ):
            return converted
        if _same_value(arr[()], converted):
            return converted
        raise TypeError(
            f"Value {data!r} ({arr.dtype}) cannot be converted to {self.dtype} exactly; "
            "pass allow_downcast=True to allow it"
        )

    def _filter_big_int(self, data: int, allow_downcast: bool | None) -> float:
        """A Python int beyond 64 bits as a float (for float/complex types)."""
        if self.dtype in continuous_types:
            try:
                as_float = float(data)
            except OverflowError:
                as_float = math.inf
            if allow_downcast or (math.isfinite(as_float) and int(as_float) == data):
                return as_float
            raise TypeError(
                f"Python int {data} cannot be converted to {self.dtype} exactly; "
                "pass allow_downcast=True to allow it"
            )
        raise TypeError(f"Python int {data} does not fit in any 64-bit dtype, let alone {self.dtype}")

    def values_eq(self, a: Any, b: Any) -> bool:
        if self.dtype in continuous_types:
            return bool(a == b) or bool(np.isnan(a) and np.isnan(b))
        return bool(a == b)

    def values_eq_approx(self, a: Any, b: Any, rtol: float | None = None, atol: float | None = None) -> bool:
        if self.dtype not in continuous_types:
            return bool(a == b)
        default = {"float16": 1e-3, "float32": 1e-5, "complex64": 1e-5}.get(self.dtype, 1e-8)
        rtol = default * 10 if rtol is None else rtol
        atol = default if atol is None else atol
        return bool(np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=True))

    @staticmethod
    def may_share_memory(a: Any, b: Any) -> bool:
        return False  # NumPy scalars are immutable

    def get_shape_info(self, obj: Any) -> int:
        return obj.itemsize

    def get_size(self, shape_info: int) -> int:
        return shape_info

    def upcast(self, *others: ScalarType) -> str:
        return upcast(self.dtype, *(o.dtype for o in others))

    def __str__(self) -> str:
        return self.dtype

    def __repr__(self) -> str:
        return f"ScalarType({self.dtype})"


def _same_value(original: Any, converted: Any) -> bool:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if original == converted:
            return True
        try:
            return bool(np.isnan(original) and np.isnan(converted))
        except TypeError:
            return False


_scalar_types: dict[str, ScalarType] = {}


def get_scalar_type(dtype: Any) -> ScalarType:
    """The shared ``ScalarType`` instance for ``dtype``."""
    dtype = _normalize_dtype(dtype)
    st = _scalar_types.get(dtype)
    if st is None:
        st = _scalar_types[dtype] = ScalarType(dtype)
    return st


class ScalarVariable(Variable):
    """A Variable of a :class:`ScalarType`, with arithmetic operators building scalar ops."""

    ndim = 0  # as a 0-d tensor's, so code can check ``x.ndim`` on scalars and tensors alike

    #: makes the value of :attr:`shape`, a tensor: set by :mod:`arignote.tensor.variable` (the
    #: layer above this one, always imported with arignote), as TensorType's classes are
    _empty_shape: Callable[[], Variable]

    @property
    def dtype(self) -> str:
        return self.type.dtype

    @property
    def shape(self) -> Variable:
        """The symbolic shape, as a 0-d tensor's: a constant empty int64 vector (so code that
        reads ``x.shape`` works on scalars and tensors alike)."""
        return self._empty_shape()

    def astype(self, dtype: Any) -> ScalarVariable:
        return self._op("cast", self, dtype)

    def zeros_like(self, dtype: Any = None) -> ScalarVariable:
        """A zero of ``dtype`` (default: this scalar's), computed from this scalar."""
        return self._op("second", self, constant(0, dtype=dtype or self.type.dtype))

    def ones_like(self, dtype: Any = None) -> ScalarVariable:
        """A one of ``dtype`` (default: this scalar's), computed from this scalar."""
        return self._op("second", self, constant(1, dtype=dtype or self.type.dtype))

    def _op(self, name: str, *args: Any) -> ScalarVariable:
        from arignote.scalar import basic

        return getattr(basic, name)(*args)

    def __add__(self, other: Any) -> ScalarVariable:
        return self._op("add", self, other)

    def __radd__(self, other: Any) -> ScalarVariable:
        return self._op("add", other, self)

    def __sub__(self, other: Any) -> ScalarVariable:
        return self._op("sub", self, other)

    def __rsub__(self, other: Any) -> ScalarVariable:
        return self._op("sub", other, self)

    def __mul__(self, other: Any) -> ScalarVariable:
        return self._op("mul", self, other)

    def __rmul__(self, other: Any) -> ScalarVariable:
        return self._op("mul", other, self)

    def __truediv__(self, other: Any) -> ScalarVariable:
        return self._op("true_div", self, other)

    def __rtruediv__(self, other: Any) -> ScalarVariable:
        return self._op("true_div", other, self)

    def __floordiv__(self, other: Any) -> ScalarVariable:
        return self._op("int_div", self, other)

    def __rfloordiv__(self, other: Any) -> ScalarVariable:
        return self._op("int_div", other, self)

    def __mod__(self, other: Any) -> ScalarVariable:
        return self._op("mod", self, other)

    def __rmod__(self, other: Any) -> ScalarVariable:
        return self._op("mod", other, self)

    def __pow__(self, other: Any) -> ScalarVariable:
        return self._op("pow", self, other)

    def __rpow__(self, other: Any) -> ScalarVariable:
        return self._op("pow", other, self)

    def __neg__(self) -> ScalarVariable:
        return self._op("neg", self)

    def __abs__(self) -> ScalarVariable:
        return self._op("abs", self)

    def __invert__(self) -> ScalarVariable:
        return self._op("invert", self)

    def __lt__(self, other: Any) -> ScalarVariable:
        return self._op("lt", self, other)

    def __le__(self, other: Any) -> ScalarVariable:
        return self._op("le", self, other)

    def __gt__(self, other: Any) -> ScalarVariable:
        return self._op("gt", self, other)

    def __ge__(self, other: Any) -> ScalarVariable:
        return self._op("ge", self, other)

    def __and__(self, other: Any) -> ScalarVariable:
        return self._op("and_", self, other)

    def __or__(self, other: Any) -> ScalarVariable:
        return self._op("or_", self, other)

    def __xor__(self, other: Any) -> ScalarVariable:
        return self._op("xor", self, other)

    def __rand__(self, other: Any) -> ScalarVariable:
        return self._op("and_", other, self)

    def __ror__(self, other: Any) -> ScalarVariable:
        return self._op("or_", other, self)

    def __rxor__(self, other: Any) -> ScalarVariable:
        return self._op("xor", other, self)

    # == is not overloaded: it stays identity, as for every Variable (use eq() instead)

    def __bool__(self) -> bool:
        raise TypeError(
            f"The truth value of symbolic {self} is unknown until it is computed; "
            "use arignote.ifelse/switch for a symbolic condition"
        )


class ScalarConstant(ScalarVariable, Constant):
    """A constant NumPy scalar; merged with equal constants (NaN and -0.0 handled exactly)."""

    def __init__(self, type: ScalarType, data: Any, name: str | None = None):
        Constant.__init__(self, type, data, name=name)

    def signature(self) -> tuple:
        return (self.type, np.asarray(self.data).tobytes())

    def __str__(self) -> str:
        return self.name if self.name is not None else str(self.data)


ScalarType.variable_type = ScalarVariable
ScalarType.constant_type = ScalarConstant


def constant(x: Any, name: str | None = None, dtype: Any = None) -> ScalarConstant:
    """A :class:`ScalarConstant` for ``x`` (dtype from :func:`python_scalar_dtype` if not given)."""
    if dtype is None:
        if isinstance(x, (int, float, complex)) and not isinstance(x, np.generic):
            dtype = python_scalar_dtype(x)  # np.float64 is a float, but keeps its dtype
        else:
            arr = np.asarray(x)
            if arr.ndim != 0:
                raise TypeError(f"Cannot use {type(x).__name__} of shape {arr.shape} as a scalar")
            if arr.dtype.kind not in "biufc":
                raise TypeError(f"{type(x).__name__} {x!r} is not a number; a scalar constant needs one")
            dtype = arr.dtype
    st = get_scalar_type(dtype)
    return ScalarConstant(st, st.filter(x, allow_downcast=isinstance(x, float)), name=name)


def as_scalar(x: Any, name: str | None = None) -> ScalarVariable:
    """``x`` as a scalar Variable: scalar Variables as they are, numbers as constants.

    A 0-d tensor Variable is converted by the tensor layer (``scalar_from_tensor``).
    """
    if isinstance(x, Variable):
        if isinstance(x.type, ScalarType):
            return x  # type: ignore[return-value]
        converter = getattr(x, "_as_scalar", None)
        if converter is not None:
            return converter()
        raise TypeError(f"Cannot use {x} of Type {x.type} as a scalar")
    if isinstance(x, (np.ndarray, np.generic)) and np.ndim(x) != 0:
        raise TypeError(f"Cannot use an array of shape {np.shape(x)} as a scalar")
    return constant(x, name=name)
