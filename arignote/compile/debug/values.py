"""Copying and comparing values for DebugMode, and what it preallocates in output cells."""

from __future__ import annotations

import copy
from numbers import Number
from typing import Any

import numpy as np

from arignote.graph.basic import Variable
from arignote.graph.type import Type

#: the ways ``check_preallocated_output`` can fill output cells before ``perform`` runs
PREALLOCATED_KINDS = ("initial", "previous", "c_contiguous", "f_contiguous", "strided", "wrong_size")

_MISSING = object()


def _copy(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return value.copy(order="K")
    if value is None or isinstance(value, (Number, str, bytes, np.generic)):
        return value
    try:
        return copy.deepcopy(value)
    except Exception:
        return value


def _is_immutable(value: Any) -> bool:
    return value is None or isinstance(value, (Number, str, bytes, np.generic, tuple, frozenset))


def _overrides(type_: Any, name: str) -> bool:
    fn = getattr(type(type_), name, None)
    return fn is not None and fn is not getattr(Type, name)


def _comparable(type_: Any, value: Any) -> bool:
    """Whether values of this Type can be compared meaningfully (not by identity)."""
    if isinstance(value, (np.ndarray, np.generic, Number, str, bytes)) or value is None:
        return True
    return _overrides(type_, "values_eq") or _overrides(type_, "values_eq_approx")


def _values_eq(var: Variable, a: Any, b: Any, approx: bool) -> bool | None:
    """Equality of two values of ``var``'s Type; ``None`` when it cannot be decided."""
    type_ = var.type
    if not (_comparable(type_, a) and _comparable(type_, b)):
        return None
    fn = None
    if approx:
        tag = getattr(var, "_tag", None)
        fn = getattr(tag, "values_eq_approx", None) if tag is not None else None
        if fn is None:
            fn = getattr(type_, "values_eq_approx", None)
    if fn is None:
        fn = getattr(type_, "values_eq", None)
    try:
        if fn is not None:
            return bool(fn(a, b))
    except Exception:
        pass
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        if a.dtype != b.dtype or a.shape != b.shape:
            return False
        try:
            return bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
        except TypeError:
            return bool(np.array_equal(a, b))
    if isinstance(a, (Number, str, bytes, np.generic)) and isinstance(b, (Number, str, bytes, np.generic)):
        try:
            return bool(a == b) or bool(a != a and b != b)  # NaN equals NaN here
        except Exception:
            return None
    return None


def _may_share(var: Variable, a: Any, b: Any) -> bool:
    """Whether ``a`` and ``b`` share memory: ``Type.may_share_memory``, then for two
    ndarrays an exact (bounded) check, so interleaved views of one buffer (the outputs
    of ``np.nonzero``) do not count."""
    if _is_immutable(a) or _is_immutable(b):
        return False
    try:
        maybe = bool(var.type.may_share_memory(a, b))
    except Exception:
        return False
    if maybe and isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        try:
            return bool(np.shares_memory(a, b, max_work=10_000))
        except np.exceptions.TooHardError:
            return True
    return maybe


def _garbage_like(value: np.ndarray, shape: tuple, order: str = "C") -> np.ndarray:
    out = np.empty(shape, dtype=value.dtype, order=order)
    kind = value.dtype.kind
    if kind in "fc":
        out.fill(np.nan)
    elif kind in "iu":
        out.fill(np.iinfo(value.dtype).max)
    elif kind == "b":
        out.fill(True)
    return out


def _preallocate(kind: str, value: Any, previous: Any) -> Any:
    """What ``check_preallocated_output`` puts in an output cell before ``perform`` runs."""
    if kind == "initial":
        return None
    if kind == "previous":
        return _copy(previous) if previous is not None else _MISSING
    if not isinstance(value, np.ndarray):
        return _MISSING
    if kind == "c_contiguous":
        return _garbage_like(value, value.shape)
    if kind == "f_contiguous":
        return _garbage_like(value, value.shape, order="F")
    if kind == "strided":
        if value.ndim == 0:
            return _MISSING
        big = _garbage_like(value, tuple(2 * s for s in value.shape))
        return big[tuple(slice(None, None, 2) for _ in value.shape)]
    if kind == "wrong_size":
        if value.ndim == 0:
            return _MISSING
        return _garbage_like(value, tuple(s + 1 for s in value.shape))
    raise ValueError(f"unknown preallocated output kind {kind!r}; known: {PREALLOCATED_KINDS}")


def _normalize_preallocated(spec: Any) -> tuple[str, ...]:
    if spec is None or spec == "":
        return ()
    if isinstance(spec, str):
        spec = [s for s in spec.replace(",", ":").split(":") if s]
    kinds: list[str] = []
    for item in spec:
        if item == "":
            continue
        if item == "ALL":
            kinds.extend(k for k in PREALLOCATED_KINDS if k != "initial")
            continue
        if item not in PREALLOCATED_KINDS:
            raise ValueError(
                f"check_preallocated_output: unknown kind {item!r}; known: {[*PREALLOCATED_KINDS, 'ALL']}"
            )
        kinds.append(item)
    return tuple(dict.fromkeys(k for k in kinds if k != "initial"))
