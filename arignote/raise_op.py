"""``pytensor.raise_op``'s path: run-time assertions as graph nodes (``Assert``,
``CheckAndRaise``, ``assert_op``). Defined in :mod:`arignote.tensor.raising`; this module
only re-exports them."""

from arignote.tensor.raising import Assert, CheckAndRaise, ExceptionType, assert_op, exception_type

__all__ = ["Assert", "CheckAndRaise", "ExceptionType", "assert_op", "exception_type"]
