"""Symbolic differentiation: ``grad``, ``Lop``/``Rop``, ``jacobian``, ``hessian``, helpers.

``grad`` walks the graph from the cost back to the inputs (iteratively: a chain 100,000
nodes deep is fine), asks each Op for its pullback (the seeds' ``grad``/``L_op``, or
PyTensor 3's ``pullback``), and adds up the terms reaching each Variable once, so a
subexpression used several times is differentiated once. ``Rop`` pushes tangents forward
with each Op's ``pushforward``/``R_op`` when every Op on the way has one, else it goes
through two reverse passes. ``jacobian`` builds one batched reverse pass (the rows of
the Jacobian are not built one by one), and ``verify_grad`` checks a gradient against
central finite differences.

The "no gradient" terms, the identity Ops that change only the backward pass
(``zero_grad``, ``grad_clip``...) and ``verify_grad`` are in ``arignote._gradient``; import
them from here.

>>> import arignote.tensor as pt
>>> from arignote.gradient import grad
>>> x = pt.dscalar("x")
>>> float(grad(x ** 3, x).eval({x: 2.0}))
12.0
"""

from arignote._gradient.check import GradientError, numeric_grad, verify_grad
from arignote._gradient.derivatives import (
    DisconnectedInputError,
    Lop,
    NullTypeGradError,
    Rop,
    grad,
    hessian,
    hessian_vector_product,
    jacobian,
    pullback,
    pushforward,
    pushforward_through_pullback,
    subgraph_grad,
)
from arignote._gradient.ops import (
    DisconnectedGrad,
    GradClip,
    GradScale,
    UndefinedGrad,
    ViewOp,
    ZeroGrad,
    disconnected_grad,
    disconnected_grad_,
    grad_clip,
    grad_scale,
    undefined_grad,
    undefined_grad_,
    zero_grad,
    zero_grad_,
)
from arignote.graph.null_type import (
    DisconnectedType,
    NullType,
    disconnected_type,
    grad_not_implemented,
    grad_undefined,
)

__all__ = [
    "disconnected_grad_",
    "undefined_grad_",
    "zero_grad_",
    "DisconnectedGrad",
    "DisconnectedInputError",
    "DisconnectedType",
    "GradClip",
    "GradScale",
    "GradientError",
    "Lop",
    "NullType",
    "NullTypeGradError",
    "Rop",
    "UndefinedGrad",
    "ViewOp",
    "ZeroGrad",
    "disconnected_grad",
    "disconnected_type",
    "grad",
    "grad_clip",
    "grad_not_implemented",
    "grad_scale",
    "grad_undefined",
    "hessian",
    "hessian_vector_product",
    "jacobian",
    "numeric_grad",
    "pullback",
    "pushforward",
    "pushforward_through_pullback",
    "subgraph_grad",
    "undefined_grad",
    "verify_grad",
    "zero_grad",
]
