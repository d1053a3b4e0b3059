"""A small typed configuration object, filled from ``ARIGNOTE_FLAGS``.

``ARIGNOTE_FLAGS="floatX=float32,mode=FAST_COMPILE"`` sets flags at import; code can
change one for a block with :meth:`Config.change_flags`. Only compatibility flags live
here; everything else is an argument of ``function``/``Mode``.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

__all__ = ["ConfigParam", "Config", "parse_flags"]


@dataclass(frozen=True)
class ConfigParam:
    """One flag: its default, a validator/converter and a one-line description."""

    name: str
    default: Any
    doc: str
    convert: Callable[[Any], Any]


def enum(*choices: str) -> Callable[[Any], str]:
    """A converter accepting only ``choices``."""

    def convert(value: Any) -> str:
        if value not in choices:
            raise ValueError(f"expected one of {list(choices)}, got {value!r}")
        return value

    return convert


def boolean(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"expected a boolean, got {value!r}")


def parse_flags(text: str) -> dict[str, str]:
    """``"a=1,b=x"`` -> ``{"a": "1", "b": "x"}``; a malformed item is a ``ValueError``."""
    flags: dict[str, str] = {}
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise ValueError(f"ARIGNOTE_FLAGS: expected name=value, got {item!r}")
        flags[name.strip()] = value.strip()
    return flags


class Config:
    """The flag values, as attributes (``config.floatX``); see :meth:`describe`."""

    def __init__(self, params: list[ConfigParam], env_var: str = "ARIGNOTE_FLAGS"):
        object.__setattr__(self, "_params", {p.name: p for p in params})
        object.__setattr__(self, "_values", {p.name: p.convert(p.default) for p in params})
        for name, value in parse_flags(os.environ.get(env_var, "")).items():
            self._set(name, value, origin=env_var)

    def _set(self, name: str, value: Any, origin: str = "config") -> None:
        param = self._params.get(name)
        if param is None:
            raise AttributeError(f"{origin}: unknown flag {name!r}; known flags: {sorted(self._params)}")
        try:
            self._values[name] = param.convert(value)
        except ValueError as err:
            raise ValueError(f"{origin}: bad value for flag {name!r}: {err}") from None

    def __getattr__(self, name: str) -> Any:
        try:
            return self._values[name]
        except KeyError:
            raise AttributeError(
                f"config has no flag {name!r}; known flags: {sorted(self._params)}"
            ) from None

    def __setattr__(self, name: str, value: Any) -> None:
        self._set(name, value)

    @contextlib.contextmanager
    def change_flags(self, **kwargs: Any) -> Iterator[None]:
        """Set flags for the duration of a ``with`` block (or a decorated function)."""
        old = {name: getattr(self, name) for name in kwargs}
        try:
            for name, value in kwargs.items():
                self._set(name, value)
            yield
        finally:
            self._values.update(old)

    def describe(self) -> str:
        """Every flag with its current value and description."""
        return "\n".join(f"{n} = {self._values[n]!r}: {p.doc}" for n, p in self._params.items())

    def __dir__(self) -> list[str]:
        return [*super().__dir__(), *self._params]
