"""The :class:`Type` contract: static constraints on the values a Variable may hold.

A Type instance is a set of constraints on data (``TensorType("float64", (2, None))``
is "float64 arrays with 2 rows"); a Variable of that Type stands for such data in a
graph. A Type creates Variables (``type()`` / ``make_variable``) and filters data into
conforming values (``filter``). Only ``filter`` has no default; everything else below
follows the contract's stated defaults.

>>> from arignote.graph.type import Type
>>> class DoubleType(Type):
...     def filter(self, x, strict=False, allow_downcast=None):
...         if strict:
...             if isinstance(x, float):
...                 return x
...             raise TypeError("expected a float!")
...         if allow_downcast:
...             return float(x)
...         x_float = float(x)
...         if x_float == x:
...             return x_float
...         raise TypeError(f"The double type cannot accurately represent {x!r}")
>>> double = DoubleType()
>>> double.filter(3), double.is_valid_value(3)
(3.0, False)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from arignote.graph.basic import Constant, Variable
from arignote.graph.utils import MetaObject, MethodNotDefined

__all__ = ["HasDataType", "HasShape", "Type", "register_transfer", "transfer"]


class HasDataType:
    """Mixin of the Types whose values have one ``dtype`` (tensors, scalars, sparse matrices):
    ``isinstance(var.type, HasDataType)`` says that ``var.type.dtype`` exists."""

    dtype: str


class HasShape:
    """Mixin of the Types whose values have a shape: ``ndim`` and the static ``shape``
    (``None`` for a length not known before run time)."""

    ndim: int
    shape: tuple[int | None, ...]


class Type(MetaObject):
    """Interface (and defaults) for the type of a :class:`~arignote.graph.basic.Variable`.

    Subclasses must define :meth:`filter`. Declaring ``__props__`` gives value equality,
    hashing and printing from those attributes; without it, Types compare by identity
    (the contract's default), so make equal Types equal yourself, or use a singleton.
    """

    def __new__(cls, *args: Any, **kwargs: Any) -> Type:
        # filter is the one method every Type must define (abstract, as in PyTensor 3): a
        # Type without it cannot be instantiated
        if cls.filter is Type.filter:
            raise TypeError(
                f"Can't instantiate the Type {cls.__name__}: it does not define "
                "filter(data, strict=False, allow_downcast=None)"
            )
        return super().__new__(cls)

    #: the Variable class that :meth:`make_variable` builds
    variable_type: type = Variable
    #: the Constant class that :meth:`make_constant` builds
    constant_type: type = Constant

    # -- comparisons ----------------------------------------------------------------------

    def in_same_class(self, otype: Type) -> bool | None:
        """Whether ``otype`` is in the same "class" of types as ``self``.

        A class is something like "float64 matrices broadcastable on no axis"; the
        default treats each Type as its own singleton class (``self == otype``).
        """
        return self == otype

    def is_super(self, otype: Type) -> bool | None:
        """Whether ``self`` is a supertype of ``otype`` (``self`` can be replaced by it).

        ``None`` when the relation cannot be determined. Default: same class.
        """
        if self.in_same_class(otype):
            return True
        return None

    # -- data -----------------------------------------------------------------------------

    def filter(self, data: Any, strict: bool = False, allow_downcast: bool | None = None) -> Any:
        """Return ``data`` as a value of this Type, or raise ``TypeError``/``ValueError``.

        ``strict``: accept only data already of this Type, unchanged. Otherwise a
        lossless conversion is made; a lossy one (a downcast) only with
        ``allow_downcast``.
        """
        raise NotImplementedError(
            f"{type(self).__name__} must define filter(data, strict=False, allow_downcast=None)"
        )

    def filter_inplace(
        self, value: Any, storage: Any, strict: bool = False, allow_downcast: bool | None = None
    ) -> Any:
        """Like :meth:`filter`, reusing ``storage`` (the old value). Optional: not defined here."""
        raise MethodNotDefined(f"{type(self).__name__} does not define filter_inplace")

    def is_valid_value(self, data: Any, strict: bool = True) -> bool:
        """True when ``filter(data, strict=strict)`` does not raise."""
        try:
            self.filter(data, strict=strict)
        except (TypeError, ValueError):
            return False
        return True

    def values_eq(self, a: Any, b: Any) -> bool:
        """Exact equality of two values of this Type (default ``a == b``)."""
        return a == b

    def values_eq_approx(self, a: Any, b: Any) -> bool:
        """Approximate equality, as tolerant as the Type thinks right (default exact)."""
        return self.values_eq(a, b)

    # -- variables ------------------------------------------------------------------------

    def filter_variable(self, other: Any, allow_convert: bool = True) -> Variable:
        """Return a Variable of this Type (or of a subtype) standing for ``other``.

        A non-Variable becomes a Constant. A Variable of another Type is converted with
        :meth:`convert_variable` when ``allow_convert``; one that cannot be is a
        ``TypeError`` that names both Types.
        """
        if not isinstance(other, Variable):
            other = self.constant_type(type=self, data=other)
        if other.type == self:
            return other
        if allow_convert:
            converted = self.convert_variable(other)
            if converted is not None:
                return converted
        raise TypeError(
            f"Cannot convert Type {other.type} (of Variable {other}) into Type {self}. "
            f"You can try to manually convert {other} into a {self}."
        )

    def convert_variable(self, var: Variable) -> Variable | None:
        """``var`` if its Type is a subtype of this one, a narrowing of it, or ``None``."""
        if self.is_super(var.type):
            return var
        return None

    def make_variable(self, name: str | None = None) -> Variable:
        """A new graph-input Variable of this Type."""
        return self.variable_type(self, None, name=name)

    def make_constant(self, value: Any, name: str | None = None) -> Constant:
        """A Constant of this Type holding ``filter(value)``."""
        return self.constant_type(type=self, data=value, name=name)

    def __call__(self, name: str | None = None) -> Variable:
        """Shortcut for :meth:`make_variable`."""
        return self.make_variable(name)

    def clone(self, *args: Any, **kwargs: Any) -> Type:
        """A copy of this Type with some constructor arguments changed.

        With ``__props__``, keyword arguments replace those props and the rest are kept.
        """
        if not args and hasattr(type(self), "__props__"):
            props = self._props_dict()
            unknown = set(kwargs) - set(props)
            if unknown:
                raise TypeError(f"{type(self).__name__}.clone: unknown props {sorted(unknown)}")
            props.update(kwargs)
            return type(self)(**props)
        return type(self)(*args, **kwargs)

    # -- memory ---------------------------------------------------------------------------

    @staticmethod
    def may_share_memory(a: Any, b: Any) -> bool:
        """Whether values ``a`` and ``b`` could share memory (used by DebugMode)."""
        if a is b:
            return True
        try:
            import numpy as np
        except ImportError:  # pragma: no cover - numpy is a dependency
            return False
        if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
            return bool(np.may_share_memory(a, b))
        return False

    def get_shape_info(self, obj: Any) -> Any:
        """What :meth:`get_size` needs to know the data size of ``obj`` (cheap to call)."""
        return obj

    def get_size(self, shape_info: Any) -> int:
        """Bytes taken by the data :meth:`get_shape_info` described."""
        nbytes = getattr(shape_info, "nbytes", None)
        if nbytes is not None:
            return int(nbytes)
        import sys

        return sys.getsizeof(shape_info)

    def __str__(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        return str(self)


# --- transfer ----------------------------------------------------------------------------

_transfer_fns: list[Callable[[Variable, str], Variable | None]] = []


def register_transfer(fn: Callable[[Variable, str], Variable | None]) -> Callable:
    """Register ``fn(var, target)``: it returns the transferred Variable, or ``None``.

    :func:`transfer` asks each registered function in turn (latest first) and uses the
    first answer that is not ``None``.
    """
    if not callable(fn):
        raise TypeError(f"register_transfer needs a callable, got {fn!r}")
    _transfer_fns.append(fn)
    return fn


def transfer(var: Variable, target: str) -> Variable:
    """Move ``var`` to ``target``; an unknown target is a ``ValueError``."""
    for fn in reversed(_transfer_fns):
        out = fn(var, target)
        if out is not None:
            return out
    raise ValueError(
        f"Cannot transfer {var} to target {target!r}: no registered transfer function "
        f"accepts it ({len(_transfer_fns)} registered)"
    )
