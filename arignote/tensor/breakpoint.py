"""``PdbBreakpoint``: a conditional breakpoint inside a compiled function.

``PdbBreakpoint(name)(condition, *monitored)`` returns the monitored values unchanged; when
the scalar ``condition`` is true as the function runs, it opens a debugger (``pudb``,
``ipdb`` or ``pdb``, the first installed) with the monitored values, as NumPy arrays, in the
list ``monitored``. Values changed there are what the node outputs when execution resumes.
Only outputs that are used keep the node in the graph: use what it returns. It runs through
its ``perform`` in every backend that runs Python code (under ``jax.jit`` there is no
debugger to open).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import numpy as np

from arignote.graph.basic import Apply, Variable
from arignote.graph.null_type import disconnected_type
from arignote.graph.op import Op
from arignote.tensor.conversion import as_tensor_variable

__all__ = ["PdbBreakpoint", "enter_debugger"]


def enter_debugger(name: str, monitored: list[np.ndarray]) -> None:
    """Open the first debugger installed (pudb, ipdb, pdb) with ``monitored`` in scope."""
    print(
        f"\nConditional breakpoint {name!r} activated: the monitored values are the NumPy arrays "
        "of the list 'monitored'; change them there and, when execution resumes, the node "
        "outputs the changed values."
    )
    try:
        import pudb as debugger  # type: ignore[import-not-found]
    except ImportError:
        try:
            import ipdb as debugger  # type: ignore[import-not-found]
        except ImportError:
            import pdb as debugger
    debugger.set_trace()


class PdbBreakpoint(Op):
    """An identity on the monitored values that opens a debugger when ``condition`` holds."""

    __props__ = ("name",)

    def __init__(self, name: str):
        self.name = str(name)

    def make_node(self, condition: Any, *monitored_vars: Any) -> Apply:
        condition = as_tensor_variable(condition)
        if condition.type.ndim != 0:
            raise TypeError(
                f"PdbBreakpoint {self.name!r}: the condition must be a scalar, got {condition.type}"
            )
        monitored = [v if isinstance(v, Variable) else as_tensor_variable(v) for v in monitored_vars]
        if not monitored:
            raise TypeError(
                f"PdbBreakpoint {self.name!r}: give at least one value to monitor (the node returns them)"
            )
        op = copy.copy(self)
        op.view_map = {i: [i + 1] for i in range(len(monitored))}  # each output is its input
        return Apply(op, [condition, *monitored], [v.type() for v in monitored])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        condition, *values = inputs
        if not condition:
            for cell, value in zip(output_storage, values, strict=True):
                cell[0] = value
            return
        monitored = [np.asarray(v) for v in values]
        enter_debugger(self.name, monitored)
        for cell, value, out in zip(output_storage, monitored, node.outputs, strict=True):
            cell[0] = out.type.filter(value)

    def do_constant_folding(self, fgraph: Any, node: Apply) -> bool:
        return False  # it must stop when the function runs, not while compiling

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list[tuple]:
        return list(shapes[1:])

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        n_out = len(node.outputs)
        return [[False] * n_out] + [[i == j for j in range(n_out)] for i in range(n_out)]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        return [disconnected_type(), *output_grads]
