"""Small non-tensor Types used inside tensor graphs: ``NoneConst`` (an absent value)."""

from __future__ import annotations

from typing import Any

from arignote.graph.basic import Constant
from arignote.graph.type import Type

__all__ = ["NoneTypeT", "NoneConst", "none_type_t"]


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
