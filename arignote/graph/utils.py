"""Small shared pieces of the graph core: errors, scratchpads, ``__props__`` identity, traces.

Nothing in here knows about Variables or Ops specifically; the classes in
:mod:`arignote.graph.basic`, :mod:`arignote.graph.op` and :mod:`arignote.graph.type`
build on these.
"""

from __future__ import annotations

import contextlib
import gc
import linecache
import operator
import os
import sys
from collections.abc import Iterator, Sequence
from typing import Any


class MethodNotDefined(Exception):
    """An optional method of the Op or Type contract is not defined for this object.

    Raised by the defaults of optional hooks (``filter_inplace`` for instance), so that
    callers can tell "not provided" apart from a failure inside a provided method.
    """


class MissingInputError(Exception):
    """A graph needs a variable that is neither a declared input nor a constant."""

    def __init__(self, *args: Any, variable: Any = None):
        super().__init__(*args)
        self.variable = variable


class InconsistencyError(Exception):
    """A graph change would break an invariant that a feature guards (a validator said no)."""


class TestValueError(Exception):
    """Kept for PyTensor compatibility: a test value was missing or wrong."""

    __test__ = False  # not a pytest test class, despite its name


# --- tags -------------------------------------------------------------------------------


class Scratchpad:
    """A plain attribute bag attached to Variables and Apply nodes as ``tag``.

    Anything may be stored on it; it carries no meaning for the graph itself.
    """

    def clear(self) -> None:
        self.__dict__.clear()

    def __update__(self, other: Scratchpad) -> Scratchpad:
        self.__dict__.update(other.__dict__)
        return self

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self.__dict__ == other.__dict__

    __hash__ = None  # type: ignore[assignment]  # mutable bag

    def __str__(self) -> str:
        return f"scratchpad{self.__dict__}"

    __repr__ = __str__

    def info(self) -> None:
        print(f"<arignote.graph.utils.Scratchpad instance at {id(self)}>")
        for k, v in self.__dict__.items():
            print(f"  {k}: {v}")


class ValidatingScratchpad(Scratchpad):
    """A :class:`Scratchpad` that passes one attribute through a validating function."""

    def __init__(self, attr: str, attr_filter: Any):
        super().__init__()
        object.__setattr__(self, "_attr", attr)
        object.__setattr__(self, "_attr_filter", attr_filter)

    def clear(self) -> None:
        """Forget every attribute but keep validating the same one."""
        attr, attr_filter = self._attr, self._attr_filter
        super().clear()
        object.__setattr__(self, "_attr", attr)
        object.__setattr__(self, "_attr_filter", attr_filter)

    def __setattr__(self, attr: str, obj: Any) -> None:
        if getattr(self, "_attr", None) == attr:
            obj = self._attr_filter(obj)
        object.__setattr__(self, attr, obj)


# --- identity from __props__ ------------------------------------------------------------


def _props_eq(self: Any, other: Any) -> bool:
    if self is other:
        return True
    return type(self) is type(other) and self._props() == other._props()


def _props_hash(self: Any) -> int:
    try:
        return hash((type(self), self._props()))
    except TypeError as err:
        bad = [p for p in self.__props__ if not _hashable(getattr(self, p))]
        raise TypeError(
            f"{type(self).__name__}: every attribute named in __props__ must be hashable "
            f"(immutable); unhashable: {bad}"
        ) from err


def _hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def _props_str(self: Any) -> str:
    props = self.__props__
    if not props:
        return type(self).__name__
    body = ", ".join(f"{p}={getattr(self, p)!r}" for p in props)
    return f"{type(self).__name__}{{{body}}}"


class MetaType(type):
    """Metaclass that turns a class-level ``__props__`` tuple into value identity.

    For a class that declares ``__props__`` (a tuple of attribute names) it provides
    ``_props()`` (the values, in order), ``_props_dict()``, and, unless the class body
    defines them itself, ``__eq__``, ``__hash__`` and ``__str__``. Two instances are then
    equal exactly when they are of the same class and their props are equal, which is
    what lets graph merging recognise two applications of "the same" Op.
    """

    def __new__(mcs, name: str, bases: tuple, dct: dict) -> MetaType:
        props = dct.get("__props__")
        if props is not None:
            if not isinstance(props, tuple) or not all(isinstance(p, str) for p in props):
                raise TypeError(f"{name}.__props__ must be a tuple of attribute names, got {props!r}")
            getters = tuple(props)
            # read in C: equality and hashing of Ops and Types ask for the props per node
            if len(getters) > 1:
                many = operator.attrgetter(*getters)

                def _props(self: Any) -> tuple:
                    return many(self)
            elif getters:
                one = operator.attrgetter(getters[0])

                def _props(self: Any) -> tuple:
                    return (one(self),)
            else:

                def _props(self: Any) -> tuple:
                    return ()

            def _props_dict(self: Any) -> dict:
                return {p: getattr(self, p) for p in getters}

            dct["_props"] = _props
            dct["_props_dict"] = _props_dict
            dct.setdefault("__eq__", _props_eq)
            dct.setdefault("__hash__", _props_hash)
            dct.setdefault("__str__", _props_str)
        return super().__new__(mcs, name, bases, dct)


class MetaObject(metaclass=MetaType):
    """Base of Ops and Types: identity from ``__props__`` when declared, else by object."""

    __slots__ = ()

    def _props(self) -> tuple:
        raise ValueError(f"{type(self).__name__} does not declare __props__")

    def _props_dict(self) -> dict:
        raise ValueError(f"{type(self).__name__} does not declare __props__")

    def __ne__(self, other: object) -> bool:
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq


# --- where the user created something ---------------------------------------------------

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


# Frames of these functions belong to an Op, wherever the Op is defined: the user's line
# is further out (the call of ``op(x)`` or of the helper that built it).
_OP_FRAMES = frozenset({"make_node", "__call__", "grad", "L_op", "R_op", "pullback", "pushforward"})


def user_frame_site(skip: int = 1) -> tuple[str, int, str] | None:
    """Return ``(filename, lineno, function)`` of the first frame outside arignote.

    Frames of an Op's ``make_node``/``__call__``/gradient methods are skipped too, so a
    node built by a user-defined Op points at the line that used the Op. Cheap on
    purpose (no ``traceback`` module, no source lines read): it walks a few frame
    objects. Source text is only looked up when an error message is built.
    """
    frame = sys._getframe(skip + 1)
    pkg = _PACKAGE_DIR
    first_outside = None
    while frame is not None:
        code = frame.f_code
        if not code.co_filename.startswith(pkg):
            if code.co_name not in _OP_FRAMES:
                return (code.co_filename, frame.f_lineno, code.co_name)
            if first_outside is None:
                first_outside = (code.co_filename, frame.f_lineno, code.co_name)
        frame = frame.f_back
    return first_outside


def format_site(site: tuple[str, int, str] | None) -> str:
    """Human-readable form of a :func:`user_frame_site` result, with the source line."""
    if site is None:
        return "<unknown location>"
    import linecache

    filename, lineno, func = site
    line = linecache.getline(filename, lineno).strip()
    text = f'File "{filename}", line {lineno}, in {func}'
    return f"{text}\n    {line}" if line else text


#: one frame of a recorded stack: file, line number, function, source line (None if unknown)
StackEntry = tuple[str, int, str, str | None]


def simple_extract_stack(
    f: Any = None, limit: int | None = None, skips: Sequence[str] | None = None
) -> list[StackEntry]:
    """The call stack from frame ``f`` (default: the caller's) outwards, oldest first, as
    ``(filename, lineno, function, source line)``: at most ``limit`` frames (None: all), the
    innermost frames whose file name contains one of ``skips`` left out (the first frame that
    does not stops the skipping)."""
    if limit is not None and limit < 0:
        raise ValueError(f"simple_extract_stack: limit must be None or >= 0, got {limit}")
    frame = sys._getframe(1) if f is None else f
    skips = list(skips or ())
    trace: list[StackEntry] = []
    while frame is not None and (limit is None or len(trace) < limit):
        code = frame.f_code
        filename, lineno = code.co_filename, frame.f_lineno
        frame = frame.f_back
        if not trace and any(part in filename for part in skips):
            continue
        line = linecache.getline(filename, lineno).strip() or None
        trace.append((filename, lineno, code.co_name, line))
    trace.reverse()
    return trace


def add_tag_trace(thing: Any, user_line: int | None = None) -> Any:
    """Record on ``thing.tag.trace`` (a Variable or an Apply) the stack of the code that
    called, arignote's own frames left out: ``[frames]`` with at most ``user_line`` frames
    (None: all), or ``[]`` when there is none. Returns ``thing``. (arignote records the
    user's line on every node by itself; this is for code that reads or sets ``tag.trace``.)"""
    tag = getattr(thing, "tag", None)
    if tag is None:
        raise TypeError(
            f"add_tag_trace needs a Variable or an Apply (with a tag), got {type(thing).__name__}"
        )
    stack = simple_extract_stack(sys._getframe(1), limit=user_line, skips=[_PACKAGE_DIR])
    tag.trace = [stack] if stack else []
    return thing


def get_variable_trace_string(v: Any) -> str:
    """Where ``v`` was created, for error messages: its ``tag.trace`` (as
    :func:`add_tag_trace` records it) or else the user's line recorded on its node;
    ``""`` when neither is known."""
    trace = getattr(getattr(v, "tag", None), "trace", None)
    if trace:
        stacks = [trace] if isinstance(trace[0], tuple) else trace
        lines = []
        for stack in stacks:
            for filename, lineno, func, line in stack:
                lines.append(f'  File "{filename}", line {lineno}, in {func}')
                if line:
                    lines.append(f"    {line}")
        return "\nBacktrace when that variable is created:\n\n" + "\n".join(lines) + "\n"
    site = getattr(getattr(v, "owner", None), "trace", None)
    if site:
        return "\nBacktrace when that variable is created:\n\n  " + format_site(site) + "\n"
    return ""


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector for a bulk graph operation.

    Cloning, importing or checking a graph allocates several container objects per node
    and frees none; each allocation burst otherwise triggers collections that sweep the
    whole (growing) heap, which made those operations superlinear. Nested use is fine;
    the collector is re-enabled only if it was on.
    """
    was_enabled = gc.isenabled()
    if was_enabled:
        gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


class CodeCache:
    """Code objects of generated source texts, compiled once per text: generated functions
    of the same shape (constants and callees are names of each one's own namespace) share
    their text, and CPython's compiler takes ~15 µs a line. Bounded: beyond ``size`` texts
    the oldest is dropped. ``cache(text)`` is the code object; ``exec`` it in a namespace."""

    def __init__(self, filename: str, size: int):
        self.filename = filename
        self.size = size
        self._codes: dict[str, Any] = {}

    def __call__(self, text: str) -> Any:
        codes = self._codes
        code = codes.get(text)
        if code is None:
            if len(codes) >= self.size:
                codes.pop(next(iter(codes)))  # the oldest
            code = codes[text] = compile(text, self.filename, "exec")
        return code
