"""Identity Ops that change only the backward pass: ``zero_grad``, ``undefined_grad``,
``disconnected_grad``, ``grad_clip``, ``grad_scale`` (and ``ViewOp``, their base)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from arignote._gradient.terms import _match_dtype
from arignote.graph.basic import Apply, Variable
from arignote.graph.null_type import disconnected_type, grad_undefined, is_disconnected
from arignote.graph.op import PassThroughOp
from arignote.tensor.conversion import as_tensor_variable
from arignote.tensor.shape import _zero_grad
from arignote.tensor.ufuncs import clip

__all__ = [
    "DisconnectedGrad",
    "GradClip",
    "GradScale",
    "UndefinedGrad",
    "ViewOp",
    "ZeroGrad",
    "disconnected_grad",
    "grad_clip",
    "grad_scale",
    "undefined_grad",
    "zero_grad",
]


class ViewOp(PassThroughOp):
    """Returns its input (a view of it); subclasses change only what the gradient does."""

    __props__ = ()
    view_map = {0: [0]}

    def make_node(self, x: Any) -> Apply:
        if not isinstance(x, Variable):
            x = as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        output_storage[0][0] = inputs[0]


class ZeroGrad(ViewOp):
    """Identity forward; a zero gradient backward."""

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        return [_zero_grad(inputs[0])]

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], tangents: Sequence[Any]
    ) -> list:
        return [_zero_grad(inputs[0])]


class UndefinedGrad(ViewOp):
    """Identity forward; an undefined gradient backward (``grad`` raises through it)."""

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        return [grad_undefined(self, 0, inputs[0], "undefined_grad() marks it so")]

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], tangents: Sequence[Any]
    ) -> list:
        return [grad_undefined(self, 0, inputs[0], "undefined_grad() marks it so")]


class DisconnectedGrad(ViewOp):
    """Identity forward; backward, the input counts as not used at all."""

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        return [[False]]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        return [disconnected_type()]

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], tangents: Sequence[Any]
    ) -> list:
        return [disconnected_type()]


class GradClip(ViewOp):
    """Identity forward; backward, the gradient is clipped to ``[lower, upper]``."""

    __props__ = ("clip_lower_bound", "clip_upper_bound")

    def __init__(self, clip_lower_bound: float, clip_upper_bound: float):
        if not clip_lower_bound <= clip_upper_bound:
            raise ValueError(
                f"grad_clip: the lower bound {clip_lower_bound} is above the upper bound {clip_upper_bound}"
            )
        self.clip_lower_bound = clip_lower_bound
        self.clip_upper_bound = clip_upper_bound

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        (g,) = output_grads
        return [_match_dtype(inputs[0], clip(g, self.clip_lower_bound, self.clip_upper_bound))]


class GradScale(ViewOp):
    """Identity forward; backward, the gradient is multiplied by ``multiplier``."""

    __props__ = ("multiplier",)

    def __init__(self, multiplier: Any):
        self.multiplier = multiplier

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        (g,) = output_grads
        return [_match_dtype(inputs[0], g * self.multiplier)]

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], tangents: Sequence[Any]
    ) -> list:
        (t,) = tangents
        if t is None or is_disconnected(t):
            return [disconnected_type()]
        return [_match_dtype(inputs[0], t * self.multiplier)]


zero_grad_ = ZeroGrad()
undefined_grad_ = UndefinedGrad()
disconnected_grad_ = DisconnectedGrad()


def zero_grad(x: Any) -> Variable:
    """``x`` itself, whose gradient is zero (as if it were a constant, but connected)."""
    return zero_grad_(x)


def undefined_grad(x: Any) -> Variable:
    """``x`` itself, whose gradient is undefined: ``grad`` through it raises."""
    return undefined_grad_(x)


def disconnected_grad(x: Any) -> Variable:
    """``x`` itself, through which no gradient flows (the input counts as disconnected)."""
    return disconnected_grad_(x)


def grad_clip(x: Any, lower_bound: float, upper_bound: float) -> Variable:
    """``x`` itself, whose gradient is clipped to ``[lower_bound, upper_bound]``.

    >>> import arignote.tensor as pt
    >>> from arignote.gradient import grad
    >>> x = pt.dscalar("x")
    >>> float(grad(grad_clip(x, -1.0, 1.0) ** 2, x).eval({x: 3.0}))
    1.0
    """
    return GradClip(lower_bound, upper_bound)(x)


def grad_scale(x: Any, multiplier: Any) -> Variable:
    """``x`` itself, whose gradient is multiplied by ``multiplier``."""
    return GradScale(multiplier)(x)
