"""``pytensor.tensor.exceptions``'s path: the errors of the tensor package, each defined in
its home (:mod:`arignote.tensor.conversion`, :mod:`arignote.tensor.shape`)."""

from arignote.tensor.conversion import NotScalarConstantError
from arignote.tensor.shape import ShapeError

__all__ = ["NotScalarConstantError", "ShapeError"]
