"""Gradient terms that are not ordinary Variables: a disconnected input (``DisconnectedType``),
an undefined or unimplemented gradient (a ``NullType`` Variable); and the zeros and dtype
casts that ``grad`` and the gradient Ops share."""

from __future__ import annotations

from typing import Any

import numpy as np

from arignote.configdefaults import config
from arignote.graph.basic import Variable
from arignote.graph.null_type import NullType
from arignote.graph.type import Type

__all__ = ["DisconnectedType", "disconnected_type", "grad_not_implemented", "grad_undefined"]


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


def _is_disconnected(v: Any) -> bool:
    return isinstance(getattr(v, "type", None), DisconnectedType)


def _is_null(v: Any) -> bool:
    return isinstance(getattr(v, "type", None), NullType)


def _is_discrete(v: Variable) -> bool:
    dtype = getattr(v.type, "dtype", None)
    return dtype is not None and np.dtype(dtype).kind in "biu"


def _float_zeros_like(v: Variable) -> Variable:
    from arignote.tensor.alloc import zeros_like

    return zeros_like(v, dtype=config.floatX if _is_discrete(v) else None)


def _match_dtype(v: Variable, g: Variable) -> Variable:
    """``g``, a gradient or tangent for ``v``, cast to ``v``'s dtype when both are floats
    that differ (so a float32 graph keeps float32 gradients)."""
    vd = getattr(v.type, "dtype", None)
    gd = getattr(g.type, "dtype", None)
    if vd is None or gd is None or vd == gd:
        return g
    if np.dtype(vd).kind in "fc" and np.dtype(gd).kind in "fc":
        from arignote.tensor.math import cast

        return cast(g, vd)
    return g
