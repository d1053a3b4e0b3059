"""Ops defined by a symbolic graph, for tensors: :class:`TensorSymbolicOp`, at
``pytensor.tensor.symbolic``'s path.

A subclass writes its computation once, as a graph of existing Ops, and gets an Op: its
gradient is the inner graph's (unless it defines ``pullback``), its node prints as one
operation, and the graph is built for the Types it is called with (see
:class:`~arignote.compile.builders.SymbolicOp`).

>>> import numpy as np
>>> import arignote, arignote.tensor as pt
>>> class Softplus(TensorSymbolicOp):
...     def build_inner_graph(self, x):
...         return [pt.log1p(pt.exp(x))]
>>> softplus = Softplus()
>>> x = pt.dvector("x")
>>> y = softplus(x)
>>> arignote.function([x], [y, arignote.grad(y.sum(), x)])(np.zeros(2))[1].tolist()
[0.5, 0.5]
>>> softplus([0.0]).eval().round(6).tolist()   # Python values become tensors
[0.693147]
"""

from __future__ import annotations

from typing import Any

from arignote.compile.builders import SymbolicOp
from arignote.tensor.conversion import as_tensor_variable

__all__ = ["SymbolicOp", "TensorSymbolicOp", "as_tensor_variable"]


class TensorSymbolicOp(SymbolicOp):
    """A :class:`~arignote.compile.builders.SymbolicOp` whose inputs are tensors: each
    argument goes through :func:`~arignote.tensor.as_tensor_variable` (numbers, lists and
    arrays become constants)."""

    @staticmethod
    def filter_inputs(*inputs: Any) -> tuple:
        return tuple(as_tensor_variable(v) for v in inputs)
