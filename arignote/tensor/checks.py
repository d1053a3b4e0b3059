"""Run-time checks of values that the graph cannot know statically: ``CheckValues``
(``check_values(x, cond, message)``: ``x``, once ``cond`` holds everywhere, else a
ValueError with ``message``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from arignote.graph.basic import Apply, Constant, Variable
from arignote.graph.null_type import disconnected_type, is_disconnected
from arignote.graph.op import Op
from arignote.graph.replace import register_batch_rule
from arignote.graph.traversal import graph_inputs
from arignote.tensor.conversion import as_tensor_variable

__all__ = ["CheckValues", "check_values"]


def _is_int(v: Variable, bool_ok: bool = False) -> bool:
    return np.dtype(v.type.dtype).kind in ("biu" if bool_ok else "iu")


class CheckValues(Op):
    """``x`` unchanged (a view), once ``cond`` is true everywhere; otherwise a ValueError
    that starts with ``message``. When ``cond`` has ``x``'s shape the error shows the first
    offending values of ``x`` and where they are.

    The composed functions of this package check their inputs with it where NumPy raises
    (``bincount`` of negative values, ``choose`` with an invalid index, ...).
    """

    __props__ = ("message",)
    view_map = {0: [0]}

    def __init__(self, message: str):
        self.message = str(message)

    def make_node(self, x: Any, cond: Any) -> Apply:
        x, cond = as_tensor_variable(x), as_tensor_variable(cond)
        if cond.type.dtype != "bool":
            raise TypeError(f"{self}: the condition must be a bool tensor, got {cond} of Type {cond.type}")
        return Apply(self, [x, cond], [x.type()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        x, cond = inputs
        if not np.all(cond):
            detail = ""
            if np.shape(cond) == np.shape(x) and np.ndim(x):
                where = np.argwhere(~np.asarray(cond))[:3]
                shown = ", ".join(f"{x[tuple(w)]!r} at {tuple(int(i) for i in w)}" for w in where)
                detail = f"; got {shown}"
            elif np.shape(cond) == np.shape(x):
                detail = f"; got {x!r}"
            raise ValueError(f"{self.message}{detail}")
        output_storage[0][0] = x

    def do_constant_folding(self, fgraph: Any, node: Apply) -> bool:
        return False  # a failing check on constants must fail when the function runs

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list[tuple]:
        return [shapes[0]]

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        return [[True], [False]]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        """The cotangent passes through; the condition is disconnected."""
        return [output_grads[0], disconnected_type()]

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], eval_points: Sequence[Variable]
    ) -> list:
        return [disconnected_type() if is_disconnected(eval_points[0]) else eval_points[0]]

    def __str__(self) -> str:
        return "CheckValues"


@register_batch_rule(CheckValues)
def _batch_check_values(op: CheckValues, node: Apply, args: list, flags: list) -> list:
    return [(op(*args), flags[0])]  # the condition is checked as a whole, batched or not


def check_values(x: Any, cond: Any, message: str) -> Variable:
    """``x``, checked at run time: a ValueError starting with ``message`` unless ``cond``
    holds everywhere. A condition computed from constants only is checked at once (the
    error then comes when the graph is built)."""
    x, cond = as_tensor_variable(x), as_tensor_variable(cond)
    if all(isinstance(v, Constant) for v in graph_inputs([cond])):
        value = cond.data if isinstance(cond, Constant) else cond.eval()
        if not np.all(value):
            raise ValueError(message)
        return x
    return CheckValues(message)(x, cond)
