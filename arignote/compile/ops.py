"""Python functions as Ops (``as_op``/``wrap_py``), and the small copy/view Ops of
``pytensor.compile.ops``.

>>> import numpy as np
>>> import arignote.tensor as pt
>>> @as_op(itypes=[pt.dvector, pt.dvector], otypes=[pt.dvector])
... def np_hypot(a, b):
...     return np.hypot(a, b)
>>> x, y = pt.dvector("x"), pt.dvector("y")
>>> np_hypot(x, y).eval({x: np.array([3.0]), y: np.array([4.0])})
array([5.])
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from arignote._gradient.ops import ViewOp
from arignote.graph.basic import Apply, Variable
from arignote.graph.null_type import grad_not_implemented
from arignote.graph.op import Op, PassThroughOp
from arignote.graph.type import Type
from arignote.tensor.conversion import as_tensor_variable

__all__ = [
    "DeepCopyOp",
    "FromFunctionOp",
    "ViewOp",
    "as_op",
    "deep_copy_op",
    "view_op",
    "wrap_py",
]

view_op = ViewOp()


class DeepCopyOp(PassThroughOp):
    """A copy of its input (never a view of it, so the copy may be modified or kept)."""

    __props__ = ()

    def make_node(self, x: Any) -> Apply:
        if not isinstance(x, Variable):
            x = as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        (x,) = inputs
        output_storage[0][0] = x.copy() if hasattr(x, "copy") else copy.deepcopy(x)


deep_copy_op = DeepCopyOp()


class FromFunctionOp(Op):
    """An Op that calls the Python function ``fn`` on its input values (see :func:`as_op`).

    ``fn(*values)`` returns the output value (one output) or a sequence of them; each is
    converted to its output Type (a value it refuses is an error naming the Op and the
    output). ``infer_shape(fgraph, node, input_shapes) -> output_shapes`` lets shape
    inference skip running ``fn``; ``grad(inputs, output_grads) -> input_grads`` (symbolic)
    gives a gradient, else the gradient is "not implemented" (``grad`` raises through it).
    """

    def __init__(
        self,
        fn: Callable,
        itypes: Sequence[Type],
        otypes: Sequence[Type],
        infer_shape: Callable | None = None,
        grad: Callable | None = None,
    ):
        if not callable(fn):
            raise TypeError(f"as_op needs a callable, got {fn!r}")
        self.fn = fn
        self.itypes = list(itypes)
        self.otypes = list(otypes)
        for what, types in (("itypes", self.itypes), ("otypes", self.otypes)):
            for i, t in enumerate(types):
                if not isinstance(t, Type):
                    raise TypeError(f"as_op: {what}[{i}] must be a Type (e.g. pt.dvector), got {t!r}")
        if infer_shape is not None and not callable(infer_shape):
            raise TypeError(f"as_op: infer_shape must be callable, got {infer_shape!r}")
        if grad is not None and not callable(grad):
            raise TypeError(f"as_op: grad must be callable, got {grad!r}")
        self._infer_shape = infer_shape
        self._grad = grad
        if infer_shape is not None:
            self.infer_shape = self._call_infer_shape

    def _key(self) -> tuple:
        return (self.fn, tuple(self.itypes), tuple(self.otypes), self._infer_shape, self._grad)

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash((type(self), *self._key()))

    def __str__(self) -> str:
        return f"FromFunctionOp{{{getattr(self.fn, '__name__', self.fn)}}}"

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        result = self.fn(*inputs)
        if len(self.otypes) == 1:
            result = [result]
        elif not isinstance(result, (list, tuple)) or len(result) != len(self.otypes):
            raise ValueError(f"{self}: the function must return {len(self.otypes)} values, got {result!r}")
        for k, (value, otype) in enumerate(zip(result, self.otypes)):
            try:
                output_storage[k][0] = otype.filter(value)
            except (TypeError, ValueError) as err:
                got = f"{type(value).__name__} {getattr(value, 'dtype', '')} {np.shape(value)}"
                raise TypeError(
                    f"{self}: output {k} of the function ({got}) is no value of its Type {otype}: {err}"
                ) from None

    def _call_infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list:
        return list(self._infer_shape(fgraph, node, shapes))

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        if self._grad is None:
            return [
                grad_not_implemented(self, i, x, f"{self} has no gradient (give as_op a grad=)")
                for i, x in enumerate(inputs)
            ]
        grads = list(self._grad(list(inputs), list(output_grads)))
        if len(grads) != len(inputs):
            raise ValueError(f"{self}: grad returned {len(grads)} gradients for {len(inputs)} inputs")
        return grads

    def __reduce__(self) -> str:
        # the decorator rebinds the function's name to this Op: pickle stores it as that global
        # name (pickle finds the module through the instance's __module__, set here)
        module, name = getattr(self.fn, "__module__", None), getattr(self.fn, "__qualname__", "")
        if module is None or "<" in name:
            raise TypeError(
                f"{self} wraps {self.fn!r}, which is not importable by name: it cannot be pickled"
            )
        self.__module__ = module
        return name


def as_op(
    itypes: Sequence[Type],
    otypes: Sequence[Type],
    infer_shape: Callable | None = None,
    grad: Callable | None = None,
) -> Callable[[Callable], FromFunctionOp]:
    """Decorator: the Python function becomes a :class:`FromFunctionOp` with inputs of Types
    ``itypes`` and outputs of Types ``otypes``.

    ``infer_shape(fgraph, node, input_shapes)`` returns the output shapes (tuples of
    symbolic or int lengths); ``grad(inputs, output_grads)`` returns the gradients of the
    inputs as symbolic expressions (an arignote addition: PyTensor's ``as_op`` has no
    gradient). The function runs on NumPy values, through the generic ``perform`` path.
    """
    itypes, otypes = list(itypes), list(otypes)

    def decorator(fn: Callable) -> FromFunctionOp:
        return FromFunctionOp(fn, itypes, otypes, infer_shape, grad)

    return decorator


#: PyTensor 3's name for :func:`as_op`
wrap_py = as_op
