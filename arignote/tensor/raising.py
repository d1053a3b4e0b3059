"""Run-time assertions as graph nodes, PyTensor's ``raise_op`` (its face is
:mod:`arignote.raise_op`): :class:`CheckAndRaise` returns its first input once every
condition holds, and otherwise raises the exception it was made with; :class:`Assert` raises
an AssertionError.

>>> import numpy as np
>>> import arignote, arignote.tensor as pt
>>> x = pt.dvector("x")
>>> y = Assert("x must be positive")(x, pt.all(x > 0))
>>> f = arignote.function([x], y)
>>> f(np.array([1.0, 2.0]))
array([1., 2.])
>>> f(np.array([-1.0]))
Traceback (most recent call last):
...
AssertionError: x must be positive
...
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from arignote.graph.basic import Apply, Variable
from arignote.graph.null_type import disconnected_type, is_disconnected
from arignote.graph.op import Op
from arignote.graph.replace import register_batch_rule
from arignote.graph.type import Type
from arignote.tensor.conversion import as_tensor_variable

__all__ = ["Assert", "CheckAndRaise", "ExceptionType", "assert_op", "exception_type"]


class ExceptionType(Type):
    """The Type of exception classes (a Generic-like Type PyTensor gives to ``exc_type``)."""

    __props__ = ()

    def filter(self, data: Any, strict: bool = False, allow_downcast: bool | None = None) -> type:
        if not (isinstance(data, type) and issubclass(data, BaseException)):
            raise TypeError(f"ExceptionType holds exception classes, got {data!r}")
        return data

    def __str__(self) -> str:
        return "ExceptionType"


exception_type = ExceptionType()


class CheckAndRaise(Op):
    """``value``, unchanged (a view), once every condition is true; else ``exc_type(msg)``.

    Conditions are scalars (0-d tensors or Python bools; ``pt.all(c)`` makes one of an array).
    The check is never constant-folded away: a failing check on constants fails when the
    function runs. The gradient passes through to ``value``; the conditions have none.
    """

    __props__ = ("msg", "exc_type")
    view_map = {0: [0]}

    def __init__(self, exc_type: type, msg: str = ""):
        if not (isinstance(exc_type, type) and issubclass(exc_type, Exception)):
            raise TypeError(f"CheckAndRaise: exc_type must be an Exception class, got {exc_type!r}")
        self.exc_type = exc_type
        self.msg = str(msg)

    def make_node(self, value: Any, *conds: Any) -> Apply:
        value = value if isinstance(value, Variable) else as_tensor_variable(value)
        checked = []
        for k, c in enumerate(conds):
            c = as_tensor_variable(np.bool_(c) if isinstance(c, bool) else c)
            if c.type.ndim != 0:
                raise TypeError(
                    f"{self}: condition {k} ({c}) must be a scalar, got {c.type} (use pt.all(...) of an array)"
                )
            checked.append(c)
        return Apply(self, [value, *checked], [value.type()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        value, *conds = inputs
        if not all(bool(c) for c in conds):
            raise self.exc_type(self.msg)
        output_storage[0][0] = value

    def do_constant_folding(self, fgraph: Any, node: Apply) -> bool:
        return False

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list:
        return [shapes[0]]

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        return [[True]] + [[False] for _ in node.inputs[1:]]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        return [output_grads[0]] + [disconnected_type() for _ in inputs[1:]]

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], eval_points: Sequence[Variable]
    ) -> list:
        return [disconnected_type() if is_disconnected(eval_points[0]) else eval_points[0]]

    def __str__(self) -> str:
        return f"CheckAndRaise{{raises={self.exc_type.__name__}, msg={self.msg!r}}}"


class Assert(CheckAndRaise):
    """A :class:`CheckAndRaise` that raises ``AssertionError(msg)``."""

    __props__ = ("msg",)

    def __init__(self, msg: str = "Assert failed!"):
        super().__init__(AssertionError, msg)

    def __str__(self) -> str:
        return f"Assert{{msg={self.msg!r}}}"


assert_op = Assert()


@register_batch_rule(CheckAndRaise)
def _batch_check_and_raise(op: CheckAndRaise, node: Apply, args: list, flags: list) -> list:
    """A batched condition is checked whole: ``all`` over the batch (every instance must hold)."""
    value, *conds = args
    conds = [c if c.type.ndim == 0 else c.all() for c in conds]
    return [(op(value, *conds), flags[0])]
