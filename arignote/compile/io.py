"""``In`` and ``Out``: how a compiled function takes its inputs and gives its outputs.

>>> import arignote.tensor as pt
>>> from arignote.compile.io import In
>>> x = pt.dscalar("x")
>>> i = In(x, name="step", borrow=True)
>>> (i.name, i.mutable, i.borrow)
('step', False, True)
"""

from __future__ import annotations

from typing import Any

from arignote.graph.basic import Constant, Variable
from arignote.graph.shared import SharedVariable

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
        The function may overwrite the value passed in (when the graph has an in-place
        operation on this input; otherwise the value is copied before the call).
        Default: True for an input with an ``update``, else False.
    strict
        Values must already be of exactly the Type (no conversion at all).
    allow_downcast
        Values may be converted with loss of precision (``None``: only Python floats to
        ``floatX``).
    borrow
        Values are not copied, and an output given as ``Out(..., borrow=True)`` may be the
        very value passed in. Default: ``mutable`` (mutable and not borrowed is an error).
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
        borrow: bool | None = None,
        shared: bool = False,
    ):
        if not isinstance(variable, Variable):
            raise TypeError(f"In() needs a Variable, got {type(variable).__name__} {variable!r}")
        if isinstance(variable, Constant):
            raise TypeError(
                f"{variable} is a Constant: constants are part of the graph and cannot be "
                "function inputs (use a Variable, or a shared variable for a value kept between calls)"
            )
        if update is not None:
            if not isinstance(update, Variable):
                raise TypeError(f"In(update=...) must be a Variable, got {update!r}")
            if not variable.type.in_same_class(update.type):
                raise TypeError(
                    f"The update of input {variable} has Type {update.type}, not one compatible "
                    f"with the input's Type {variable.type}; cast it (e.g. update.astype(...))"
                )
        self.variable = variable
        self.name = variable.name if (name is None and autoname) else name
        if self.name is not None and not isinstance(self.name, str):
            raise TypeError(f"The name of input {variable} must be a string, got {self.name!r}")
        self.update = update
        # an input with an update is state the function owns: mutable unless said otherwise
        self.mutable = bool(mutable) if mutable is not None else update is not None
        borrow = self.mutable if borrow is None else bool(borrow)
        if self.mutable and not borrow:
            raise ValueError(
                f"Input {variable} (name={self.name!r}) has mutable=True and borrow=False: a mutable "
                "input may be overwritten, hence also aliased; pass borrow=True (or leave it out)"
            )
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
    """A function input with options (see :class:`SymbolicInput`).

    PyTensor 3 removed default values of inputs: ``value=`` (other than ``None``) is a
    ValueError, as there. A value kept between calls is a shared variable
    (:func:`arignote.shared`, with ``updates=``).
    """

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
        if value is not In._NO_VALUE and value is not None:
            raise ValueError(
                f"In({variable}, value=...): inputs with default values were removed in PyTensor 3 "
                "(and arignote follows it); pass the value in each call, or make the input a shared "
                "variable (arignote.shared(value)) to keep a value between calls"
            )
        if implicit is None:
            implicit = isinstance(variable, SharedVariable)
        super().__init__(
            variable,
            name=name,
            update=update,
            mutable=mutable,
            strict=strict,
            allow_downcast=allow_downcast,
            autoname=autoname,
            implicit=implicit,
            borrow=borrow,
            shared=shared,
        )
        # no default value: the call gives one (shared variables hold theirs)
        self.has_value = False
        self.value = None
        if self.implicit and not isinstance(variable, SharedVariable):
            raise TypeError(f"In({variable}, implicit=True): only a shared variable can be an implicit input")


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
