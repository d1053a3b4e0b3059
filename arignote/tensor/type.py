"""TensorType: the Type of n-dimensional NumPy arrays of one dtype, with partial static shape.

``TensorType("float64", (2, None))`` is "float64 matrices with 2 rows". A static length
of 1 is what makes a dimension broadcastable; ``None`` means unknown.

>>> from arignote.tensor.type import TensorType
>>> v1 = TensorType("float64", (2, None))()
>>> v1.type
TensorType(float64, shape=(2, None))
>>> print(v1.type)
Matrix(float64, shape=(2, ?))
>>> v2 = TensorType("float64", (2, 1))()
>>> v1.type.in_same_class(v2.type), v1.type.is_super(v2.type)
(False, True)
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable
from typing import Any

import numpy as np

from arignote.configdefaults import config
from arignote.graph.basic import Variable
from arignote.graph.type import HasDataType, HasShape, Type
from arignote.scalar.type import _normalize_dtype, get_scalar_type

__all__ = ["values_eq_approx_always_true", "TensorType", "tensor", "values_eq_approx_tolerances"]

_DIM_NAMES = ("Scalar", "Vector", "Matrix")

#: (rtol, atol) used by values_eq_approx, per dtype (PyTensor 3's defaults)
values_eq_approx_tolerances = {
    "float16": (1e-3, 1e-3),
    "float32": (1e-5, 1e-5),
    "complex64": (1e-5, 1e-5),
    "float64": (1e-5, 1e-8),
    "complex128": (1e-5, 1e-8),
}


def _normalize_shape(shape: Iterable | None, broadcastable: Iterable | None) -> tuple[int | None, ...]:
    if shape is not None and broadcastable is not None:
        raise ValueError("Give TensorType either shape or broadcastable, not both")
    if broadcastable is not None:
        return tuple(1 if b else None for b in broadcastable)
    if shape is None:
        raise TypeError("TensorType needs a shape: a tuple of ints and Nones (one per dimension)")
    if isinstance(shape, (str, bytes)) or not isinstance(shape, Iterable):
        raise TypeError(
            f"TensorType shape must be a tuple of ints and Nones (one per dimension), got {shape!r}"
        )
    out = []
    for s in shape:
        if s is None:
            out.append(None)
        elif isinstance(s, (bool, np.bool_)):
            # PyTensor 2's broadcastable flags, accepted here too
            out.append(1 if s else None)
        elif isinstance(s, (int, np.integer)) and s >= 0:
            out.append(int(s))
        else:
            raise TypeError(f"TensorType shape entries must be non-negative ints or None, got {s!r}")
    return tuple(out)


class TensorType(Type, HasDataType, HasShape):
    """The Type of ``numpy.ndarray`` values of ``dtype`` whose shape fits ``shape``."""

    __props__ = ("dtype", "shape")

    #: ``(dimension, length)`` of the static lengths, made by the first ``filter``
    _static_lengths: tuple | None = None

    def __init__(
        self,
        dtype: Any,
        shape: Iterable[int | None] | None = None,
        name: str | None = None,
        broadcastable: Iterable[bool] | None = None,
    ):
        self.dtype = _normalize_dtype(dtype)
        self.shape = _normalize_shape(shape, broadcastable)
        self.name = name
        self.numpy_dtype = np.dtype(self.dtype)

    # equality and hash spelled out (the same as __props__ gives): types are compared at
    # every replacement and merge, and this is the hot case
    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        return type(other) is type(self) and other.dtype == self.dtype and other.shape == self.shape  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((type(self), self.dtype, self.shape))

    # -- properties -----------------------------------------------------------------------

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def broadcastable(self) -> tuple[bool, ...]:
        """Which dimensions are statically 1 (and so broadcast)."""
        return tuple(s == 1 for s in self.shape)

    def clone(
        self,
        dtype: Any = None,
        shape: Iterable | None = None,
        broadcastable: Iterable | None = None,
        **kwargs: Any,
    ) -> TensorType:
        """A TensorType with some of dtype/shape replaced."""
        if shape is None and broadcastable is None:
            shape = self.shape
        return type(self)(
            self.dtype if dtype is None else dtype, shape, broadcastable=broadcastable, **kwargs
        )

    # -- values ---------------------------------------------------------------------------

    def filter(self, data: Any, strict: bool = False, allow_downcast: bool | None = None) -> np.ndarray:
        """``data`` as an ndarray of this Type, or a ``TypeError`` saying what does not fit.

        ``strict``: only an ndarray of exactly ``dtype`` is accepted. Otherwise values are
        converted when no information is lost (a lossless upcast, or equal values after
        conversion, NaNs included); a lossy conversion needs ``allow_downcast``, except
        that Python floats may be rounded to ``floatX`` when ``allow_downcast`` is None.
        """
        if type(data) is np.ndarray and data.dtype == self.numpy_dtype:
            # the common case first: an array of the right dtype, checked for its shape
            # against the static lengths (resolved once per Type)
            static = self._static_lengths
            if static is None:
                static = self._static_lengths = tuple(
                    (i, s) for i, s in enumerate(self.shape) if s is not None
                )
            if data.ndim == len(self.shape):
                if not static:
                    return data
                shape = data.shape
                for i, s in static:
                    if shape[i] != s:
                        break
                else:
                    return data
            return self._check_shape(data)
        if isinstance(data, Variable):
            raise TypeError(
                f"Expected an array-like value for {self}, got the symbolic Variable {data}; "
                "symbolic inputs belong in the graph, not in a call"
            )
        if strict:
            got = f"ndarray of dtype {data.dtype}" if isinstance(data, np.ndarray) else type(data).__name__
            raise TypeError(f"{self} (strict) expects an ndarray of dtype {self.dtype}, got {got}")
        return self._check_shape(self._convert(data, allow_downcast))

    def _convert(self, data: Any, allow_downcast: bool | None) -> np.ndarray:
        if isinstance(data, np.ndarray) and type(data) is not np.ndarray:
            data = np.asarray(data)  # subclasses (matrix, masked) become plain arrays
        arr = data if isinstance(data, np.ndarray) else np.asarray(data)
        if arr.dtype.kind == "O" and arr.size and _all_python_ints(arr):
            # integers too big for any NumPy integer dtype (2**70) become objects
            return self._convert_big_ints(arr, allow_downcast)
        if arr.dtype.kind not in "biufc":
            raise TypeError(
                f"{self} expects numeric data, got {type(data).__name__} with NumPy dtype {arr.dtype}"
            )
        if arr.dtype == self.numpy_dtype:
            return arr
        if allow_downcast or np.can_cast(arr.dtype, self.numpy_dtype, "safe"):
            return _cast(arr, self.dtype)
        if allow_downcast is None and self.dtype == config.floatX and _is_python_floats(data):
            return _cast(arr, self.dtype)
        converted = _cast(arr, self.dtype)
        if not isinstance(data, np.ndarray):
            out_of_range = self._out_of_range(arr)
            if out_of_range is None and _values_preserved(arr, converted):
                return converted
            raise TypeError(
                f"{self} cannot hold the value {_short(data)} exactly (it would become "
                f"{_short(converted.tolist())}){out_of_range or ''}; pass allow_downcast=True "
                "(or cast the value first)"
            )
        raise TypeError(
            f"{self} cannot hold {type(data).__name__} of dtype {arr.dtype} without loss of precision; "
            "pass allow_downcast=True (or cast the value first)"
        )

    def _out_of_range(self, arr: np.ndarray) -> str | None:
        """``": V does not fit in DTYPE (from MIN to MAX)"`` for the first integer of
        ``arr`` outside this integer dtype's range; ``None`` when all fit (or either side is
        not integer). A round trip cannot tell: -1 into uint64 and back is -1 again."""
        if self.numpy_dtype.kind not in "iu" or arr.dtype.kind not in "iuO" or not arr.size:
            return None
        info = np.iinfo(self.numpy_dtype)
        lo, hi = int(arr.min()), int(arr.max())
        if info.min <= lo and hi <= info.max:
            return None
        bad = "it" if arr.ndim == 0 else (lo if lo < info.min else hi)
        return f": {bad} does not fit in {self.dtype} (from {info.min} to {info.max})"

    def _convert_big_ints(self, arr: np.ndarray, allow_downcast: bool | None) -> np.ndarray:
        """Python integers of an object array (some beyond 64 bits) into this dtype."""
        kind = self.numpy_dtype.kind
        values = arr.tolist()
        if kind in "iub":
            if kind in "iu":
                problem = self._out_of_range(arr)
            else:
                problem = f": it does not fit in {self.dtype} (0 or 1)"
            raise TypeError(f"{self} cannot hold the value {_short(values)}{problem}")
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                converted = np.array(values, dtype=self.numpy_dtype)
            if not np.isfinite(converted).all():
                raise OverflowError
        except OverflowError:
            biggest = "it" if arr.ndim == 0 else _short(max(abs(int(v)) for v in arr.ravel()))
            raise TypeError(
                f"{self} cannot hold the value {_short(values)}: {biggest} is too large for "
                f"{self.dtype} (at most {np.finfo(self.numpy_dtype).max:.6g} in magnitude)"
            ) from None
        if not allow_downcast and any(
            int(c.real) != v for c, v in zip(converted.ravel().tolist(), arr.ravel().tolist())
        ):
            raise TypeError(
                f"{self} cannot hold the value {_short(values)} exactly (it would become "
                f"{_short(converted.tolist())}); pass allow_downcast=True (or cast the value first)"
            )
        return converted

    def _check_shape(self, data: np.ndarray) -> np.ndarray:
        if data.ndim != len(self.shape):
            raise TypeError(
                f"Wrong number of dimensions: {self} expects {len(self.shape)}, got {data.ndim} "
                f"(an array of shape {data.shape})"
            )
        for i, (s, d) in enumerate(zip(self.shape, data.shape)):
            if s is not None and s != d:
                raise TypeError(
                    f"{self} has static shape {_fmt_shape(self.shape)}, but the value has shape "
                    f"{data.shape} (dimension {i}: expected {s}, got {d})"
                )
        return data

    def values_eq(self, a: Any, b: Any, force_same_dtype: bool = True) -> bool:
        """Exactly equal values (NaNs in the same places count as equal)."""
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape or (force_same_dtype and a.dtype != b.dtype):
            return False
        return bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc" and b.dtype.kind in "fc"))

    def values_eq_approx(
        self,
        a: Any,
        b: Any,
        allow_remove_inf: bool = False,
        allow_remove_nan: bool = False,
        rtol: float | None = None,
        atol: float | None = None,
    ) -> bool:
        """Equal within the dtype's tolerance; infinities and NaNs must be in the same places
        (unless ``allow_remove_inf``/``allow_remove_nan`` let them stand for anything).
        Two arrays of different dtypes are never equal (as in PyTensor)."""
        if isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.dtype != b.dtype:
            return False
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape:
            return False
        if a.dtype.kind not in "fc" and b.dtype.kind not in "fc":
            return bool(np.array_equal(a, b))
        dt = np.result_type(a, b).name
        d_rtol, d_atol = values_eq_approx_tolerances.get(dt, (1e-5, 1e-8))
        rtol = d_rtol if rtol is None else rtol
        atol = d_atol if atol is None else atol
        a_nan, b_nan = np.isnan(a), np.isnan(b)
        a_inf, b_inf = np.isinf(a), np.isinf(b)
        skip = np.zeros(a.shape, dtype=bool)
        if allow_remove_nan:
            skip |= a_nan | b_nan
        elif not np.array_equal(a_nan, b_nan):
            return False
        if allow_remove_inf:
            skip |= a_inf | b_inf
        elif not (np.array_equal(a_inf, b_inf) and np.array_equal(a[a_inf], b[b_inf])):
            return False
        keep = ~(skip | a_nan | a_inf)
        with np.errstate(invalid="ignore"):
            return bool(np.allclose(a[keep], b[keep], rtol=rtol, atol=atol))

    @staticmethod
    def may_share_memory(a: Any, b: Any) -> bool:
        if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
            return bool(np.may_share_memory(a, b))
        return False

    def get_shape_info(self, obj: np.ndarray) -> tuple[int, ...]:
        return obj.shape

    def get_size(self, shape_info: tuple[int, ...]) -> int:
        return math.prod(shape_info) * self.numpy_dtype.itemsize

    def value_zeros(self, shape: tuple[int, ...]) -> np.ndarray:
        return np.zeros(shape, dtype=self.dtype)

    # -- type relations -------------------------------------------------------------------

    def in_same_class(self, otype: Type) -> bool:
        """Same dtype and same broadcastable pattern (which dims are statically 1)."""
        return (
            isinstance(otype, TensorType)
            and otype.dtype == self.dtype
            and otype.broadcastable == self.broadcastable
        )

    def is_super(self, otype: Type) -> bool:
        """Every array of ``otype`` is an array of this Type (same dtype and ndim; each
        static length here is also there)."""
        return (
            isinstance(otype, TensorType)
            and otype.dtype == self.dtype
            and len(otype.shape) == len(self.shape)
            and all(s is None or s == o for s, o in zip(self.shape, otype.shape))
        )

    def filter_variable(self, other: Any, allow_convert: bool = True) -> Variable:
        """``other`` as a Variable of this Type (a Constant if it is a value).

        A Variable of another Type is converted only by narrowing its static shape
        (:meth:`convert_variable`, with ``allow_convert``); otherwise the ``TypeError`` says
        what differs (number of dimensions, dtype, static lengths) and what would fit.
        """
        if isinstance(other, Variable) and other.type != self:
            if allow_convert:
                converted = self.convert_variable(other)
                if converted is not None:
                    return converted
            raise TypeError(
                f"Cannot convert Type {other.type} (of Variable {other}) into Type {self}: "
                f"{self._mismatch(other, allow_convert)}"
            )
        return super().filter_variable(other, allow_convert)

    def _mismatch(self, var: Variable, allow_convert: bool) -> str:
        """Why ``var`` is no Variable of this Type, and what would make one."""
        otype = var.type
        if not isinstance(otype, TensorType):
            return (
                f"it is a {type(otype).__name__}, not a tensor; make a tensor of it first "
                "(arignote.tensor.as_tensor_variable)."
            )
        dtype_fix = ""
        if otype.dtype != self.dtype:
            dtype_fix = f"cast it with {var}.astype('{self.dtype}')"
        if otype.ndim != self.ndim:
            have, want = otype.ndim, self.ndim
            text = f"it has {have} dimension{'s' if have != 1 else ''}, {want} {'are' if want != 1 else 'is'} expected"
            if have < want:
                pattern = ", ".join(["'x'"] * (want - have) + [str(k) for k in range(have)])
                fix = (
                    f"add length-1 dimension{'s' if want - have > 1 else ''} with "
                    f"{var}.dimshuffle({pattern}) (or expand_dims), or reshape"
                )
            else:
                fix = "drop dimensions with squeeze or dimshuffle (only length-1 ones) or reshape (e.g. flatten)"
            if dtype_fix:
                text += f", and its dtype is {otype.dtype}, not {self.dtype}"
                fix += f", and {dtype_fix}"
            return f"{text}. To get a {self}: {fix}."
        if dtype_fix:
            return f"its dtype is {otype.dtype}, not {self.dtype}; {dtype_fix} (dtypes are never converted implicitly)."
        conflicts = [
            d
            for d, (s, o) in enumerate(zip(self.shape, otype.shape))
            if s is not None and o is not None and s != o
        ]
        if conflicts:
            d = conflicts[0]
            return (
                f"its static length at dimension {d} is {otype.shape[d]}, {self.shape[d]} is expected; "
                "no conversion makes one the other."
            )
        if not allow_convert:
            return (
                f"its static shape {_fmt_shape(otype.shape)} is less specific than "
                f"{_fmt_shape(self.shape)}; narrow it with specify_shape({var}, {self.shape}) "
                "or allow the conversion."
            )
        return "the Types differ."  # pragma: no cover - every TensorType difference is above

    def convert_variable(self, var: Variable) -> Variable | None:
        """``var`` if its Type is at least as specific; ``specify_shape(var, shape)`` if it
        is more general but compatible (same dtype, ndim, no conflicting lengths); else None."""
        otype = var.type
        if self.is_super(otype):
            return var
        if (
            isinstance(otype, TensorType)
            and otype.dtype == self.dtype
            and otype.ndim == self.ndim
            and all(s is None or o is None or s == o for s, o in zip(self.shape, otype.shape))
        ):
            from arignote.tensor.shape import specify_shape

            return specify_shape(var, self.shape)
        return None

    # -- printing -------------------------------------------------------------------------

    def __str__(self) -> str:
        if self.name:
            return self.name
        shape = ", ".join("?" if s is None else str(s) for s in self.shape)
        if len(self.shape) == 1:
            shape += ","
        kind = _DIM_NAMES[self.ndim] if self.ndim < 3 else f"Tensor{self.ndim}"
        return f"{kind}({self.dtype}, shape=({shape}))"

    def __repr__(self) -> str:
        return f"TensorType({self.dtype}, shape={self.shape})"

    def scalar_type(self) -> Any:
        return get_scalar_type(self.dtype)

    def to_scalar_type(self) -> Any:
        """The :class:`~arignote.scalar.type.ScalarType` of this Type's elements (PyTensor's
        name; :meth:`scalar_type` is the same)."""
        return get_scalar_type(self.dtype)


def _fmt_shape(shape: tuple) -> str:
    return (
        "(" + ", ".join("?" if s is None else str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"
    )


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:18] + " ... " + text[-18:]


def _cast(arr: np.ndarray, dtype: str) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # overflow/complex warnings: checked by the caller
        return arr.astype(dtype)


def _is_python_floats(data: Any) -> bool:
    if isinstance(data, float):
        return True
    if isinstance(data, (list, tuple)):
        return all(_is_python_floats(d) or isinstance(d, int) for d in data) and any(
            _is_python_floats(d) for d in data
        )
    return False


def _all_python_ints(arr: np.ndarray) -> bool:
    return all(isinstance(v, (int, np.integer)) for v in arr.flat)


def _values_preserved(original: np.ndarray, converted: np.ndarray) -> bool:
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        back = converted.astype(original.dtype)
        if original.dtype.kind in "fc":
            return bool(np.array_equal(back, original, equal_nan=True))
        return bool(np.array_equal(back, original))


def tensor(
    name: str | None = None,
    *,
    dtype: Any = None,
    shape: Iterable[int | None] | None = None,
    broadcastable: Iterable[bool] | None = None,
) -> Variable:
    """A new input Variable of ``TensorType(dtype, shape)`` (``dtype`` defaults to floatX).

    >>> tensor("x", dtype="int32", shape=(None, 3)).type
    TensorType(int32, shape=(None, 3))
    """
    if name is not None and not isinstance(name, str):
        raise TypeError(f"tensor(name, *, dtype, shape): name must be a str, got {name!r}")
    if shape is None and broadcastable is None:
        shape = ()
    return TensorType(config.floatX if dtype is None else dtype, shape=shape, broadcastable=broadcastable)(
        name
    )


def _constructor(kind: str, default_shape: tuple) -> Any:
    ndim = len(default_shape)

    def make(
        name: str | None = None, *, dtype: Any = None, shape: Iterable[int | None] | None = None
    ) -> Variable:
        shape = default_shape if shape is None else tuple(shape)
        if len(shape) != ndim:
            raise ValueError(f"{kind}() makes {ndim}-d variables; shape={shape} has {len(shape)} entries")
        return tensor(name, dtype=dtype, shape=shape)

    make.__name__ = make.__qualname__ = kind
    make.__doc__ = f"A new {ndim}-d input Variable (default static shape {default_shape}, dtype floatX)."
    return make


scalar = _constructor("scalar", ())
vector = _constructor("vector", (None,))
matrix = _constructor("matrix", (None, None))
row = _constructor("row", (1, None))
col = _constructor("col", (None, 1))
tensor3 = _constructor("tensor3", (None,) * 3)
tensor4 = _constructor("tensor4", (None,) * 4)
tensor5 = _constructor("tensor5", (None,) * 5)
tensor6 = _constructor("tensor6", (None,) * 6)
tensor7 = _constructor("tensor7", (None,) * 7)


def _plural(make_one: Any, kind: str, one: str) -> Any:
    def make(*names: Any) -> Any:
        # PyTensor's convention: ``f(3)`` makes 3 unnamed Variables, ``f("a", "b")`` (or
        # ``f(["a", "b"])``, or ``f("ab")``: one per character) makes named ones, and a
        # single one-character name makes one Variable (not a list).
        if names and isinstance(names[0], (int, np.integer)) and not isinstance(names[0], bool):
            return [make_one() for _ in range(int(names[0]))]
        if len(names) == 1:
            names = names[0]
            if isinstance(names, str) and len(names) == 1:
                return make_one(names)
        return [make_one(n) for n in names]

    make.__name__ = make.__qualname__ = kind
    make.__doc__ = f"Several ``{one}`` Variables: ``{kind}(n)`` or ``{kind}('a', 'b', ...)``."
    return make


def _plural_name(kind: str) -> str:
    return kind[:-2] + "ices" if kind.endswith("matrix") else kind + "s"


_PREFIX_DTYPES = {
    "b": "int8",
    "w": "int16",
    "i": "int32",
    "l": "int64",
    "f": "float32",
    "d": "float64",
    "c": "complex64",
    "z": "complex128",
}
_KIND_SHAPES = {
    "scalar": (),
    "vector": (None,),
    "matrix": (None, None),
    "row": (1, None),
    "col": (None, 1),
    "tensor3": (None,) * 3,
    "tensor4": (None,) * 4,
    "tensor5": (None,) * 5,
    "tensor6": (None,) * 6,
    "tensor7": (None,) * 7,
}
for _p, _dtype in _PREFIX_DTYPES.items():
    for _kind, _shape in _KIND_SHAPES.items():
        _tt = TensorType(_dtype, _shape)
        globals()[_p + _kind] = _tt
        globals()[_plural_name(_p + _kind)] = _plural(_tt, _plural_name(_p + _kind), _p + _kind)
for _kind in _KIND_SHAPES:  # scalars, vectors, matrices, ...: floatX at call time
    globals()[_plural_name(_kind)] = _plural(globals()[_kind], _plural_name(_kind), _kind)
del _p, _dtype, _kind, _shape, _tt

__all__ += [
    "scalar",
    "vector",
    "matrix",
    "row",
    "col",
    "tensor3",
    "tensor4",
    "tensor5",
    "tensor6",
    "tensor7",
    *(p + k for p in _PREFIX_DTYPES for k in _KIND_SHAPES),
    *(_plural_name(p + k) for p in ("", *_PREFIX_DTYPES) for k in _KIND_SHAPES),
]

# PyTensor's tuples of Types by kind (``isinstance(v.type, ...)``-style checks use them)
int_types = tuple(TensorType(d, ()) for d in ("int8", "int16", "int32", "int64"))
float_types = (fscalar, dscalar)  # noqa: F821  (made by the loop above)
complex_types = (cscalar, zscalar)  # noqa: F821
int_scalar_types, float_scalar_types, complex_scalar_types = int_types, float_types, complex_types
int_vector_types = tuple(TensorType(d, (None,)) for d in ("int8", "int16", "int32", "int64"))
float_vector_types = (fvector, dvector)  # noqa: F821
complex_vector_types = (cvector, zvector)  # noqa: F821
int_matrix_types = tuple(TensorType(d, (None, None)) for d in ("int8", "int16", "int32", "int64"))
float_matrix_types = (fmatrix, dmatrix)  # noqa: F821
complex_matrix_types = (cmatrix, zmatrix)  # noqa: F821
__all__ += [
    f"{kind}_{what}types"
    for kind in ("int", "float", "complex")
    for what in ("", "scalar_", "vector_", "matrix_")
]


def values_eq_approx_always_true(a: Any, b: Any) -> bool:
    """A ``values_eq_approx`` that accepts any two values: set as a Variable's
    ``tag.values_eq_approx`` where DebugMode must not compare them (undefined results)."""
    return True
