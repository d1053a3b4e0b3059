"""Scalar types and operations (``import arignote.scalar as ps``)."""

from arignote.scalar.basic import *  # noqa: F403
from arignote.scalar.basic import Maximum as ScalarMaximum  # PyTensor's other names
from arignote.scalar.basic import Minimum as ScalarMinimum
from arignote.scalar.basic import abs as scalar_abs
from arignote.scalar.basic import cast, scalar
from arignote.scalar.basic import int_div as floor_div
from arignote.scalar.basic import maximum as scalar_maximum
from arignote.scalar.basic import minimum as scalar_minimum
from arignote.scalar.bessel import *  # noqa: F403
from arignote.scalar.composite import Composite
from arignote.scalar.hypergeometric import *  # noqa: F403
from arignote.scalar.incomplete import *  # noqa: F403
from arignote.scalar.loop import ScalarLoop
from arignote.scalar.op import *  # noqa: F403
from arignote.scalar.special import *  # noqa: F403
from arignote.scalar.type import *  # noqa: F403
from arignote.scalar.type import ScalarConstant, ScalarType, ScalarVariable, as_scalar, constant, upcast

__all__ = [
    "Composite",
    "ScalarLoop",
    "ScalarMaximum",
    "ScalarMinimum",
    "floor_div",
    "scalar_abs",
    "scalar_maximum",
    "scalar_minimum",
    "ScalarConstant",
    "ScalarType",
    "ScalarVariable",
    "as_scalar",
    "cast",
    "constant",
    "scalar",
    "upcast",
]
