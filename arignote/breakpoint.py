"""``pytensor.breakpoint``'s path: ``PdbBreakpoint``, a conditional debugger stop inside a
compiled function. Defined in :mod:`arignote.tensor.breakpoint`; this module only
re-exports it."""

from arignote.tensor.breakpoint import PdbBreakpoint

__all__ = ["PdbBreakpoint"]
