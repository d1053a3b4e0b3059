"""Containers: the storage cell of a function input (or shared variable) with its Type."""

from __future__ import annotations

from typing import Any

from arignote.graph.type import Type

__all__ = ["Container"]


class Container:
    """A one-element storage cell that filters what is stored in it through ``type``.

    ``storage`` is the cell itself (a one-element list), shared with the thunks that
    read it. ``strict``/``allow_downcast`` are passed to ``Type.filter``; a ``readonly``
    container refuses assignment.
    """

    def __init__(
        self,
        type: Type,
        storage: list,
        name: str | None = None,
        strict: bool = False,
        allow_downcast: bool | None = None,
        readonly: bool = False,
    ):
        if not isinstance(storage, list) or len(storage) != 1:
            raise TypeError("Container storage must be a one-element list")
        self.type = type
        self.storage = storage
        self.name = name
        self.strict = strict
        self.allow_downcast = allow_downcast
        self.readonly = readonly

    @property
    def value(self) -> Any:
        return self.storage[0]

    @value.setter
    def value(self, value: Any) -> None:
        if self.readonly:
            raise ValueError(f"Cannot set the read-only container {self.name}")
        if value is None:
            self.storage[0] = None
            return
        self.storage[0] = self.type.filter(value, strict=self.strict, allow_downcast=self.allow_downcast)

    def __str__(self) -> str:
        return f"<{self.storage[0]!r}>"

    __repr__ = __str__
