"""Shared checks for tensor Op tests."""

from __future__ import annotations

from typing import Any

import numpy as np

from arignote.graph.basic import Variable
from arignote.tensor.shape import shape_tuple
from arignote.tensor.type import TensorType


def assert_infer_shape(out: Variable, givens: dict[Any, Any]) -> None:
    """``out.owner.op.infer_shape`` agrees with the shapes actually computed.

    The input shapes are given symbolically (``Shape_i`` of each input, or the static
    length); the inferred output shapes are evaluated with ``givens`` and compared with
    the shapes of the evaluated outputs.
    """
    node = out.owner
    assert node is not None, f"{out} has no owner"
    shapes = [shape_tuple(i) if isinstance(i.type, TensorType) else () for i in node.inputs]
    inferred = node.op.infer_shape(None, node, shapes)
    assert len(inferred) == len(node.outputs)
    for o, ishape in zip(node.outputs, inferred):
        actual = np.shape(o.eval(givens, on_unused_input="ignore"))
        got = tuple(
            int(np.asarray(s.eval(givens, on_unused_input="ignore") if isinstance(s, Variable) else s))
            for s in ishape
        )
        assert got == actual, f"{node.op}.infer_shape gave {got}, computed shape is {actual}"
