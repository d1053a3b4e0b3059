"""The vocabulary of gradient terms that are not ordinary values.

``NullType``: the Type of a value that does not exist (an undefined or unimplemented
gradient); ``DisconnectedType``: the Type of a gradient that does not exist because the cost
does not depend on the Variable at all (as opposed to a zero gradient). They live in the
graph layer so that every Op, scalar or tensor, can say "no gradient here" without importing
the differentiation machinery; :mod:`arignote.gradient` re-exports them (PyTensor's path).
"""

from __future__ import annotations

from typing import Any

from arignote.graph.basic import Variable
from arignote.graph.type import Type

__all__ = [
    "DisconnectedType",
    "NullType",
    "disconnected_type",
    "grad_not_implemented",
    "grad_undefined",
    "is_disconnected",
    "is_null",
    "null_type",
]


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


class DisconnectedType(Type):
    """The Type of a gradient that does not exist because the cost does not depend on
    the Variable at all (as opposed to a zero gradient)."""

    def filter(self, data: Any, strict: bool = False, allow_downcast: bool | None = None) -> Any:
        raise AssertionError("DisconnectedType Variables stand for no value; nothing can be stored in them")

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other)

    def __hash__(self) -> int:
        return hash(type(self))

    def __str__(self) -> str:
        return "DisconnectedType"


#: calling it, ``disconnected_type()``, makes a new "no gradient here" Variable
disconnected_type = DisconnectedType()


def grad_undefined(op: Any, x_pos: int, x: Variable, comment: str = "") -> Variable:
    """The gradient of ``op`` with respect to its input ``x_pos`` is mathematically undefined."""
    return NullType(
        f"This variable is NullType because the gradient of {op} with respect to input "
        f"{x_pos} ({x}) is undefined. {comment}".strip()
    )()


def grad_not_implemented(op: Any, x_pos: int, x: Variable, comment: str = "") -> Variable:
    """The gradient of ``op`` with respect to its input ``x_pos`` exists but is not implemented."""
    return NullType(
        f"This variable is NullType because the gradient of {op} with respect to input "
        f"{x_pos} ({x}) is not implemented. {comment}".strip()
    )()


def is_disconnected(v: Any) -> bool:
    """Whether ``v`` is a "no gradient here" term (a :class:`DisconnectedType` Variable)."""
    return isinstance(getattr(v, "type", None), DisconnectedType)


def is_null(v: Any) -> bool:
    """Whether ``v`` is an undefined or unimplemented gradient (a :class:`NullType` Variable)."""
    return isinstance(getattr(v, "type", None), NullType)
