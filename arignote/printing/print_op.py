"""``Print``: an Op that passes a value through, printing it when it is computed."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from arignote.graph.basic import Apply, Variable
from arignote.graph.op import Op
from arignote.tensor.conversion import as_tensor_variable

__all__ = ["Print"]


class Print(Op):
    """Pass a value through unchanged, printing it when it is computed.

    ``Print("x is")(x)``: prints ``x is __str__ = [...]``; ``attrs`` names the attributes
    (or methods) of the value to show; ``global_fn(op, value)`` replaces the printing.
    """

    __props__ = ("message", "attrs", "global_fn")
    view_map = {0: [0]}

    def __init__(
        self,
        message: str = "",
        attrs: Sequence[str] = ("__str__",),
        global_fn: Callable[[Print, Any], None] | None = None,
    ):
        self.message = message
        self.attrs = tuple(attrs)
        self.global_fn = global_fn if global_fn is not None else _print_value

    def make_node(self, xin: Any) -> Apply:
        if not isinstance(xin, Variable):
            xin = as_tensor_variable(xin)
        return Apply(self, [xin], [xin.type()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        (value,) = inputs
        output_storage[0][0] = value
        self.global_fn(self, value)

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence
    ) -> list:
        return list(output_grads)

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], eval_points: Sequence
    ) -> list:
        return list(eval_points)

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence) -> list:
        return list(shapes)

    def do_constant_folding(self, fgraph: Any, node: Apply) -> bool:
        return False

    def __str__(self) -> str:
        return f"Print{{message={self.message!r}}}" if self.message else "Print"


def _print_value(op: Print, value: Any) -> None:
    for attr in op.attrs:
        shown = getattr(value, attr)
        if callable(shown):
            shown = shown()
        print(op.message, attr, "=", shown)
