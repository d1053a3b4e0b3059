"""Small non-tensor Types used inside tensor graphs: ``NoneConst`` (an absent value) and
slices as graph values: ``SliceType`` (``slicetype``), ``SliceConstant`` (``NoneSliceConst``
is ``slice(None)``) and ``MakeSlice`` (``make_slice(start, stop, step)``), PyTensor's.

arignote's indexing Ops keep their slices as properties, with the bounds as scalar inputs,
so ``x[a:b]`` never makes a slice Variable; these are for graphs that pass a slice around as
a value (what PyTensor 3 keeps them for).

>>> import arignote.tensor as pt
>>> a = pt.lscalar("a")
>>> make_slice(a, None, 2).eval({a: 1})
slice(1, None, 2)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from arignote.graph.basic import Apply, Constant, Variable
from arignote.graph.null_type import disconnected_type
from arignote.graph.op import Op
from arignote.graph.type import Type
from arignote.tensor.conversion import as_tensor_variable

__all__ = [
    "MakeSlice",
    "NoneConst",
    "NoneSliceConst",
    "NoneTypeT",
    "SliceConstant",
    "SliceType",
    "as_int_none_variable",
    "make_slice",
    "none_type_t",
    "slicetype",
]


class NoneTypeT(Type):
    """The Type whose only value is ``None`` (an unknown length in ``specify_shape``)."""

    __props__ = ()

    def filter(self, data: Any, strict: bool = False, allow_downcast: bool | None = None) -> None:
        if data is not None:
            raise TypeError(f"NoneTypeT only holds None, got {data!r}")
        return None

    def __str__(self) -> str:
        return "NoneTypeT"


class NoneConstant(Constant):
    def signature(self) -> tuple:
        return (self.type, None)

    def __str__(self) -> str:
        return "NoneConst"


none_type_t = NoneTypeT()
NoneConst = NoneConstant(none_type_t, None, name="NoneConst")


def as_int_none_variable(x: Any) -> Variable:
    """A slice bound as a graph value: ``None`` (or ``NoneConst``) is ``NoneConst``, anything
    else an integer scalar (a TypeError names what arrived otherwise)."""
    if x is None or x is NoneConst:
        return NoneConst
    if isinstance(x, Variable) and isinstance(x.type, NoneTypeT):
        return x
    v = as_tensor_variable(x)
    if v.type.ndim != 0 or np.dtype(v.type.dtype).kind not in "iu":
        raise TypeError(f"a slice bound must be None or an integer scalar, got {x!r} of Type {v.type}")
    return v


class SliceType(Type):
    """The Type of Python ``slice`` values."""

    __props__ = ()

    def filter(self, data: Any, strict: bool = False, allow_downcast: bool | None = None) -> slice:
        if not isinstance(data, slice):
            raise TypeError(f"SliceType holds Python slices, got {type(data).__name__} {data!r}")
        return data

    @staticmethod
    def may_share_memory(a: Any, b: Any) -> bool:
        return isinstance(a, slice) and a is b

    def __str__(self) -> str:
        return "slice"


slicetype = SliceType()


def _bound(v: Any) -> Any:
    return int(v) if isinstance(v, (np.integer, np.ndarray)) else v


class SliceConstant(Constant):
    """A constant slice; NumPy integer bounds are kept as Python ints (so it hashes)."""

    def __init__(self, type: SliceType, data: slice, name: str | None = None):
        if not isinstance(data, slice):
            raise TypeError(f"SliceConstant holds a slice, got {data!r}")
        data = slice(_bound(data.start), _bound(data.stop), _bound(data.step))
        super().__init__(type, data, name=name)

    def signature(self) -> tuple:
        return (self.type, self.data.start, self.data.stop, self.data.step)

    def __str__(self) -> str:
        return self.name if self.name is not None else str(self.data)


NoneSliceConst = SliceConstant(slicetype, slice(None), name="slice(None)")


class MakeSlice(Op):
    """``slice(start, stop, step)`` as a graph value, from integer scalars or ``None``
    (``make_slice(slice_object)`` takes the bounds from a Python slice)."""

    __props__ = ()

    def make_node(self, slc: Any, stop: Any = None, step: Any = None) -> Apply:
        if isinstance(slc, slice):
            if stop is not None or step is not None:
                raise TypeError("make_slice: give a slice object alone, or start, stop and step")
            slc, stop, step = slc.start, slc.stop, slc.step
        inputs = [as_int_none_variable(v) for v in (slc, stop, step)]
        return Apply(self, inputs, [slicetype()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        output_storage[0][0] = slice(*(None if v is None else int(v) for v in inputs))

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        return [disconnected_type() for _ in inputs]  # integer bounds

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        return [[False] for _ in node.inputs]


make_slice = MakeSlice()
