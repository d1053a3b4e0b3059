"""``In`` and ``Out``: how a compiled function takes its inputs and gives its outputs.

>>> import arignote.tensor as pt
>>> from arignote.compile.io import In
>>> x = pt.dscalar("x")
>>> i = In(x, value=2.0, name="step")
>>> (i.name, i.value, i.mutable, i.borrow)
('step', 2.0, False, False)
"""

from __future__ import annotations

from typing import Any

from arignote.graph.basic import Constant, Variable

__all__ = ["In", "Out", "SymbolicInput", "SymbolicOutput"]


class SymbolicInput:
    """An input of a compiled function: the Variable, and how values are taken for it.

    Parameters
    ----------
    variable
        The graph input (a root Variable; not a Constant).
    name
        Keyword name in calls (defaults to the Variable's name).
    update
        A Variable computing this input's next value (for shared variables / ``In``
        with ``value``); applied after every call, once all outputs are computed.
    mutable
        The function may overwrite the value passed in (enables in-place ops on it).
    strict
        Values must already be of exactly the Type (no conversion at all).
    allow_downcast
        Values may be converted with loss of precision (``None``: only Python floats to
        ``floatX``).
    borrow
        Values are not copied (the function may alias them).
    """

    def __init__(
        self,
        variable: Variable,
        name: str | None = None,
        update: Variable | None = None,
        mutable: bool | None = None,
        strict: bool = False,
        allow_downcast: bool | None = None,
        autoname: bool = True,
        implicit: bool = False,
        borrow: bool = False,
        shared: bool = False,
    ):
        if not isinstance(variable, Variable):
            raise TypeError(f"In() needs a Variable, got {type(variable).__name__} {variable!r}")
        if isinstance(variable, Constant):
            raise TypeError(
                f"{variable} is a Constant: constants are part of the graph and cannot be "
                "function inputs (use a Variable, or In(variable, value=...) for a default)"
            )
        if update is not None and not isinstance(update, Variable):
            raise TypeError(f"In(update=...) must be a Variable, got {update!r}")
        self.variable = variable
        self.name = variable.name if (name is None and autoname) else name
        self.update = update
        self.mutable = bool(mutable) if mutable is not None else False
        if self.mutable and borrow is False and mutable is not None:
            borrow = True  # a mutable input is meant to be worked on in place
        self.strict = strict
        self.allow_downcast = allow_downcast
        self.implicit = implicit
        self.borrow = borrow
        self.shared = shared

    def __str__(self) -> str:
        extra = f" <- {self.update}" if self.update is not None else ""
        return f"In({self.variable}{extra})"

    __repr__ = __str__


class In(SymbolicInput):
    """A function input with options (see :class:`SymbolicInput`), and optionally a
    default ``value`` used when the call does not give one."""

    _NO_VALUE = object()

    def __init__(
        self,
        variable: Variable,
        name: str | None = None,
        value: Any = _NO_VALUE,
        update: Variable | None = None,
        mutable: bool | None = None,
        strict: bool = False,
        allow_downcast: bool | None = None,
        autoname: bool = True,
        implicit: bool | None = None,
        borrow: bool | None = None,
        shared: bool = False,
    ):
        from arignote.compile.sharedvalue import SharedVariable

        if implicit is None:
            implicit = isinstance(value, SharedVariable) or isinstance(variable, SharedVariable)
        super().__init__(
            variable,
            name=name,
            update=update,
            mutable=mutable,
            strict=strict,
            allow_downcast=allow_downcast,
            autoname=autoname,
            implicit=implicit,
            borrow=bool(borrow) if borrow is not None else (bool(mutable) if mutable is not None else False),
            shared=shared,
        )
        self.value = None if value is In._NO_VALUE else value
        self.has_value = value is not In._NO_VALUE
        if self.implicit and not self.has_value and not isinstance(variable, SharedVariable):
            raise TypeError(f"In({variable}, implicit=True) needs a value")


class SymbolicOutput:
    """An output of a compiled function; ``borrow`` lets the function return a buffer it
    will reuse on the next call (faster, but the value may then change under you)."""

    def __init__(self, variable: Variable, borrow: bool = False):
        if not isinstance(variable, Variable):
            raise TypeError(f"Out() needs a Variable, got {type(variable).__name__} {variable!r}")
        self.variable = variable
        self.borrow = borrow

    def __str__(self) -> str:
        return f"Out({self.variable}{', borrow=True' if self.borrow else ''})"

    __repr__ = __str__


Out = SymbolicOutput
