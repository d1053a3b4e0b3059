"""Scalar types and operations (``import arignote.scalar as ps``)."""

from arignote.scalar.basic import *  # noqa: F403
from arignote.scalar.basic import cast, scalar
from arignote.scalar.bessel import *  # noqa: F403
from arignote.scalar.composite import Composite
from arignote.scalar.hypergeometric import *  # noqa: F403
from arignote.scalar.incomplete import *  # noqa: F403
from arignote.scalar.op import *  # noqa: F403
from arignote.scalar.special import *  # noqa: F403
from arignote.scalar.type import *  # noqa: F403
from arignote.scalar.type import ScalarConstant, ScalarType, ScalarVariable, as_scalar, constant, upcast

__all__ = [
    "Composite",
    "ScalarConstant",
    "ScalarType",
    "ScalarVariable",
    "as_scalar",
    "cast",
    "constant",
    "scalar",
    "upcast",
]
