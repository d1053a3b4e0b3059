"""ScalarOp: the base of scalar operations, and the output-dtype rules they choose from.

A scalar op computes on NumPy scalars with ``impl``; ``ufunc`` (when set) is the
NumPy/SciPy function that does the same on whole arrays, which is how ``Elemwise``
runs it without a Python loop. The output dtype comes from an *output types
preference*: a function from input ScalarTypes to output ScalarTypes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from arignote.configdefaults import config
from arignote.graph.basic import Apply
from arignote.graph.op import Op
from arignote.scalar.type import (
    ScalarType,
    as_scalar,
    complex_types,
    float_types,
    get_scalar_type,
    upcast,
)

__all__ = [
    "ScalarOp",
    "UnaryScalarOp",
    "BinaryScalarOp",
    "upcast_out",
    "upcast_out_nobool",
    "upcast_out_min8",
    "upcast_out_no_complex",
    "same_out",
    "same_out_nobool",
    "same_out_nocomplex",
    "same_out_float_only",
    "upgrade_to_float",
    "float_dtype_for",
    "upgrade_to_float64",
    "upgrade_to_float_no_complex",
    "float_out",
    "int_out",
    "bool_out",
    "complex_out",
    "floatX_out",
    "transfer_type",
    "specific_out",
]

OutputTypes = Callable[..., Sequence[ScalarType]]


def _names(types: Sequence[ScalarType]) -> str:
    return ", ".join(t.dtype for t in types)


def upcast_out(*types: ScalarType) -> list[ScalarType]:
    """The NumPy promotion of the inputs' dtypes."""
    return [get_scalar_type(upcast(*(t.dtype for t in types)))]


def upcast_out_nobool(*types: ScalarType) -> list[ScalarType]:
    (out,) = upcast_out(*types)
    if out.dtype == "bool":
        raise TypeError(f"This operation is not defined for bool inputs ({_names(types)})")
    return [out]


def upcast_out_min8(*types: ScalarType) -> list[ScalarType]:
    """As :func:`upcast_out`, with bool promoted to int8."""
    (out,) = upcast_out(*types)
    return [get_scalar_type("int8")] if out.dtype == "bool" else [out]


def upcast_out_no_complex(*types: ScalarType) -> list[ScalarType]:
    if any(t.dtype in complex_types for t in types):
        raise TypeError(f"This operation is not defined for complex inputs ({_names(types)})")
    return upcast_out(*types)


def same_out(type: ScalarType, *rest: ScalarType) -> list[ScalarType]:
    """The first input's type."""
    return [type]


def same_out_nobool(type: ScalarType, *rest: ScalarType) -> list[ScalarType]:
    if type.dtype == "bool":
        raise TypeError("This operation is not defined for bool inputs; cast to an int dtype first")
    return [type]


def same_out_nocomplex(type: ScalarType, *rest: ScalarType) -> list[ScalarType]:
    if type.dtype in complex_types:
        raise TypeError(f"This operation is not defined for complex inputs ({type.dtype})")
    return [type]


def same_out_float_only(type: ScalarType, *rest: ScalarType) -> list[ScalarType]:
    if type.dtype not in float_types:
        raise TypeError(f"This operation is only defined for float inputs, got {type.dtype}")
    return [type]


# ints of up to 16 bits fit float32 exactly; wider ints need float64
_to_float = {
    "bool": "float32",
    "int8": "float32",
    "uint8": "float32",
    "int16": "float32",
    "uint16": "float32",
    "int32": "float64",
    "uint32": "float64",
    "int64": "float64",
    "uint64": "float64",
}


def float_dtype_for(dtype: str) -> str:
    """The float dtype an integer/bool ``dtype`` is computed in (others unchanged)."""
    return _to_float.get(dtype, dtype)


def upgrade_to_float(*types: ScalarType) -> list[ScalarType]:
    """The promotion of the inputs, with integers first turned into a float wide enough."""
    return [get_scalar_type(upcast(*(_to_float.get(t.dtype, t.dtype) for t in types)))]


def upgrade_to_float64(*types: ScalarType) -> list[ScalarType]:
    """float64 (complex128 for complex inputs)."""
    if any(t.dtype in complex_types for t in types):
        return [get_scalar_type("complex128")]
    return [get_scalar_type("float64")]


def upgrade_to_float_no_complex(*types: ScalarType) -> list[ScalarType]:
    if any(t.dtype in complex_types for t in types):
        raise TypeError(f"This operation is not defined for complex inputs ({_names(types)})")
    return upgrade_to_float(*types)


def float_out(*types: ScalarType) -> list[ScalarType]:
    return [get_scalar_type("float64")]


def floatX_out(*types: ScalarType) -> list[ScalarType]:
    return [get_scalar_type(config.floatX)]


def int_out(*types: ScalarType) -> list[ScalarType]:
    return [get_scalar_type("int64")]


def bool_out(*types: ScalarType) -> list[ScalarType]:
    return [get_scalar_type("bool")]


def complex_out(*types: ScalarType) -> list[ScalarType]:
    """The complex dtype matching the precision of the inputs' promotion (int16 with uint16
    promote to int32, hence complex128)."""
    (out,) = upgrade_to_float(*upcast_out(*types))
    return [
        get_scalar_type("complex64" if out.dtype in ("float16", "float32", "complex64") else "complex128")
    ]


class transfer_type:
    """Output types copied from inputs: ``transfer_type(0, 1)`` gives inputs 0 and 1's types;
    a ScalarType in place of an index is used as it is."""

    def __init__(self, *transfer: int | ScalarType):
        self.transfer = transfer

    def __call__(self, *types: ScalarType) -> list[ScalarType]:
        return [types[t] if isinstance(t, int) else t for t in self.transfer]

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self.transfer == other.transfer

    def __hash__(self) -> int:
        return hash((type(self), self.transfer))

    def __repr__(self) -> str:
        return f"transfer_type{self.transfer}"


class specific_out:
    """Fixed output types, whatever the inputs."""

    def __init__(self, *spec: ScalarType):
        self.spec = spec

    def __call__(self, *types: ScalarType) -> list[ScalarType]:
        return list(self.spec)

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self.spec == other.spec

    def __hash__(self) -> int:
        return hash((type(self), self.spec))

    def __repr__(self) -> str:
        return f"specific_out{self.spec}"


class ScalarOp(Op):
    """An operation on scalars: ``nin`` inputs (-1: any number), ``nout`` outputs.

    Subclasses give ``impl`` (on NumPy scalars) or ``ufunc`` (a NumPy-style function that
    also works elementwise on arrays; ``impl`` then defaults to it), and an output types
    preference. ``Elemwise`` uses ``ufunc`` when there is one.
    """

    nin: int = -1
    nout: int = 1
    #: NumPy/SciPy function computing this op on arrays (broadcasting), or None
    ufunc: Callable | None = None
    #: True when the op is commutative and associative (add, mul, ...): rewrites may reorder
    commutative: bool = False
    associative: bool = False
    identity: Any = None  # the neutral element, for reductions

    __props__ = ("output_types_preference", "name")

    def __init__(self, output_types_preference: OutputTypes | None = None, name: str | None = None):
        if output_types_preference is not None and not callable(output_types_preference):
            raise TypeError(f"output_types_preference must be callable, got {output_types_preference!r}")
        self.output_types_preference = output_types_preference
        self.name = name if name is not None else type(self).__name__.lower()

    def make_node(self, *inputs: Any) -> Apply:
        if self.nin >= 0 and len(inputs) != self.nin:
            raise TypeError(f"{self} takes {self.nin} input(s), got {len(inputs)}")
        if self.nin < 0 and not inputs:
            raise TypeError(f"{self} needs at least one input")
        inputs = [as_scalar(i) for i in inputs]
        outputs = [t() for t in self.output_types([i.type for i in inputs])]
        return Apply(self, inputs, outputs)

    def output_types(self, types: Sequence[ScalarType]) -> list[ScalarType]:
        """Output ScalarTypes for these input types (from the output types preference)."""
        pref = self.output_types_preference
        if pref is None:
            raise NotImplementedError(
                f"{type(self).__name__} must define output_types or get an output_types_preference"
            )
        outs = list(pref(*types))
        if len(outs) != self.nout or not all(isinstance(t, ScalarType) for t in outs):
            raise TypeError(f"{self}: output types preference gave {outs}, expected {self.nout} ScalarTypes")
        return outs

    def impl(self, *inputs: Any) -> Any:
        """Compute on NumPy scalars; the default calls ``ufunc``."""
        if self.ufunc is None:
            raise NotImplementedError(f"{type(self).__name__} must define impl or ufunc")
        return self.ufunc(*inputs)

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        results = self.impl(*inputs)
        if self.nout == 1:
            results = (results,)
        for cell, out, value in zip(output_storage, node.outputs, results):
            cell[0] = _as_dtype(value, out.type.dtype)

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list[tuple]:
        return [() for _ in node.outputs]

    def __str__(self) -> str:
        return self.name


def _as_dtype(value: Any, dtype: str) -> Any:
    if getattr(value, "dtype", None) == dtype and isinstance(value, np.generic):
        return value
    return np.asarray(value).astype(dtype)[()]


class UnaryScalarOp(ScalarOp):
    nin = 1


class BinaryScalarOp(ScalarOp):
    nin = 2
