"""NullType: the Type of a value that does not exist (an undefined gradient, say)."""

from __future__ import annotations

from typing import Any

from arignote.graph.basic import Variable
from arignote.graph.type import Type

__all__ = ["NullType", "null_type"]


class NullType(Type):
    """A Type no value can have. ``why_null`` says why (shown in error messages).

    The gradient machinery returns Variables of this Type for gradients that are
    undefined or not implemented; using one in a computation is an error.
    """

    def __init__(self, why_null: str = "(no explanation given)"):
        self.why_null = why_null

    def filter(self, data: Any, strict: bool = False, allow_downcast: bool | None = None) -> Any:
        raise ValueError(f"No values may be assigned to a NullType ({self.why_null})")

    def filter_variable(self, other: Any, allow_convert: bool = True) -> Variable:
        if isinstance(other, Variable) and isinstance(other.type, NullType):
            return other
        raise ValueError(
            f"Only NullType Variables can stand for a NullType one ({self.why_null}); got {other!r}"
        )

    @staticmethod
    def may_share_memory(a: Any, b: Any) -> bool:
        return False

    def values_eq(self, a: Any, b: Any, force_same_dtype: bool = True) -> bool:
        raise ValueError("NullType has no values to compare")

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other)

    def __hash__(self) -> int:
        return hash(type(self))

    def __str__(self) -> str:
        return "NullType"


null_type = NullType()
