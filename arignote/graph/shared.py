"""Shared variables: graph inputs that carry their own value between calls.

>>> import numpy as np
>>> from arignote.graph.shared import shared
>>> w = shared(np.zeros(3), name="w")
>>> w.type
TensorType(float64, shape=(None,))
>>> w.set_value(np.ones(3)); w.get_value()
array([1., 1., 1.])
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from arignote.graph.basic import Variable
from arignote.graph.container import Container, device_types, lock_containers
from arignote.graph.type import Type
from arignote.graph.utils import format_site, user_frame_site

__all__ = ["SharedVariable", "collect_new_shareds", "locked", "shared", "shared_constructor"]


class SharedVariable(Variable):
    """A Variable whose value lives with it (in a :class:`Container`) and that every
    compiled function using it reads, and may update, implicitly.

    ``default_update`` (a Variable) is the update applied by functions that use this
    variable when no explicit update is given (unless ``no_default_updates``).

    Thread safety: ``get_value``, ``set_value`` and every compiled call that reads or
    updates the variable hold its container's lock, so each sees the value before or
    after a call, never one half-way; :func:`locked` holds several variables' locks at
    once (to set two values that belong together). Waits that would never end (calls
    nested in opposite orders on two threads) raise
    :class:`~arignote.graph.container.DeadlockError` instead.
    """

    #: graph_inputs that carry a value are not explicit function inputs
    _carries_value = True

    def __init__(
        self,
        type: Type,
        value: Any,
        strict: bool,
        allow_downcast: bool | None = None,
        container: Container | None = None,
        name: str | None = None,
    ):
        super().__init__(type, None, None, name)
        self._site = user_frame_site()  # where it was made: for messages about an unnamed one
        if container is not None:
            self.container = container
            if value is not None or strict:
                raise TypeError("SharedVariable: give either a container or a value, not both")
        else:
            self.container = Container(
                type,
                [type.filter(value, strict=strict, allow_downcast=allow_downcast)],
                name=name,
                strict=strict,
                allow_downcast=allow_downcast,
            )
        self.default_update: Variable | None = None

    def get_value(self, borrow: bool = False, return_internal_type: bool = False) -> Any:
        """The current value (a copy unless ``borrow``).

        A value that a backend keeps on its device between calls (the JAX backend's) is
        copied back to the host, unless ``borrow`` and ``return_internal_type`` are both
        given: the device value itself is returned then.
        """
        container = self.container
        container.acquire()  # a call that updates the value in place is not half-way
        try:
            value = container.storage[0]
            to_host = device_types.get(type(value)) if device_types else None
            if to_host is not None:
                return value if borrow and return_internal_type else to_host(value)
            return value if borrow else copy.deepcopy(value)
        finally:
            container.lock.release()

    def set_value(self, new_value: Any, borrow: bool = False) -> None:
        """Set the value (filtered through the Type; copied unless ``borrow``).

        A value the Type refuses (``None``, another rank, a dtype that cannot be cast)
        raises a TypeError or ValueError naming this variable; the value is unchanged.
        """
        self._store(self._filtered(new_value if borrow else copy.deepcopy(new_value)))

    def _filtered(self, value: Any) -> Any:
        """``value`` as the container's Type holds it, or an error that names this variable."""
        container = self.container
        if container.readonly:
            raise ValueError(f"Cannot set {self._label()}: its container is read-only")
        if value is None:
            raise TypeError(f"Cannot set {self._label()} to None: it holds values of Type {self.type}")
        try:
            return container.type.filter(
                value, strict=container.strict, allow_downcast=container.allow_downcast
            )
        except (TypeError, ValueError) as err:
            msg = f"Cannot set {self._label()} (Type {self.type}) to {_describe(value)}: {err}"
            try:
                new = type(err)(msg)
            except Exception:  # an exception class that needs other arguments
                err.add_note(msg)
                raise
            raise new from None

    def _store(self, value: Any) -> None:
        container = self.container
        container.acquire()
        try:
            container.storage[0] = value
        finally:
            container.lock.release()

    def _label(self) -> str:
        """How messages name this variable: its name, else its Type and where it was made."""
        if self.name:
            return f"shared variable {self.name!r}"
        site = getattr(self, "_site", None)
        if site is None:
            return f"the unnamed shared variable {self}"
        return f"the unnamed shared variable created at {format_site(site).splitlines()[0]}"

    @property
    def value(self) -> Any:  # pragma: no cover - convenience alias
        return self.get_value(borrow=True)

    def zero(self, borrow: bool = False) -> None:
        """Set the value to zeros of the same shape."""
        container = self.container
        container.acquire()
        try:
            value = container.storage[0]
            self._store(self._filtered(value * 0 if borrow else copy.deepcopy(value) * 0))
        finally:
            container.lock.release()

    def clone(self, **kwargs: Any) -> SharedVariable:
        """A copy sharing the same container (so the same value)."""
        cp = type(self)(
            name=kwargs.get("name", self.name),
            type=self.type,
            value=None,
            strict=False,
            container=self.container,
        )
        cp.default_update = self.default_update
        if self._tag is not None:
            cp._tag = copy.copy(self._tag)
        return cp

    def __getstate__(self) -> dict:
        return dict(self.__dict__)


def locked(*variables: SharedVariable) -> lock_containers:
    """``with locked(a, b):`` holds the locks of shared variables ``a`` and ``b``: no
    compiled call reading or updating them runs meanwhile, so values set inside are seen
    together.

    >>> import numpy as np
    >>> a, b = shared(np.zeros(2)), shared(np.zeros(2))
    >>> with locked(a, b):
    ...     a.set_value(np.ones(2)); b.set_value(np.ones(2))
    """
    for v in variables:
        if not isinstance(v, SharedVariable):
            raise TypeError(f"locked() takes shared variables, got {type(v).__name__} {v!r}")
    return lock_containers(v.container for v in variables)


def _describe(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return f"an ndarray of dtype {value.dtype} and shape {value.shape}"
    if isinstance(value, np.generic):
        return f"a NumPy {value.dtype} scalar {value!r}"
    return f"{type(value).__name__} {_short_repr(value, 160)}"


_constructors: list[Callable] = []


def shared_constructor(ctor: Callable, remove: bool = False) -> Callable:
    """Register ``ctor(value, name, strict, allow_downcast, **kwargs)``; the most recently
    registered constructor that accepts a value (does not raise ``TypeError``) wins."""
    if remove:
        _constructors.remove(ctor)
    else:
        _constructors.append(ctor)
    return ctor


def shared(
    value: Any,
    name: str | None = None,
    strict: bool = False,
    allow_downcast: bool | None = None,
    **kwargs: Any,
) -> SharedVariable:
    """A :class:`SharedVariable` holding ``value`` (copied unless ``borrow=True``).

    Arrays and numbers make tensor shared variables, whose static shape is unknown
    (values of another shape may be set later) unless ``shape=`` is given.
    """
    if isinstance(value, Variable):
        raise TypeError(f"shared() needs a value, not the symbolic Variable {value}; use value.eval() first?")
    borrow = kwargs.pop("borrow", False)
    if not borrow:
        value = copy.deepcopy(value)
    errors: list[TypeError] = []
    for ctor in reversed(_constructors):
        try:
            var = ctor(value, name=name, strict=strict, allow_downcast=allow_downcast, **kwargs)
        except TypeError as err:
            errors.append(err)
            continue
        var.tag.is_shared = True  # a hint for printers
        if _collecting:
            _collecting[-1].append(var)
        return var
    what = f"{type(value).__name__} {_short_repr(value)}"
    if len(errors) == 1:  # the usual case (one constructor): its reason, as it said it
        raise TypeError(f"shared({what}): {errors[0]}") from None
    raise TypeError(
        f"No shared variable constructor accepts {what}"
        + (f" ({'; '.join(str(e) for e in errors)})" if errors else "")
    )


# the lists of the open collect_new_shareds() blocks, innermost last
_collecting: list[list[SharedVariable]] = []


@contextlib.contextmanager
def collect_new_shareds() -> Iterator[list[SharedVariable]]:
    """Collect the shared variables that :func:`shared` creates inside the ``with`` block.

    Yields a list that fills as they are made (only the innermost open block collects)::

        with collect_new_shareds() as new:
            step = make_step()  # code that may create shared variables
        # new: the SharedVariables make_step created
    """
    collected: list[SharedVariable] = []
    _collecting.append(collected)
    try:
        yield collected
    finally:
        del _collecting[next(i for i, c in enumerate(_collecting) if c is collected)]


def _short_repr(value: Any, limit: int = 80) -> str:
    text = " ".join(repr(value).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
