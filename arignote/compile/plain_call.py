"""A compiled function's plain call as one generated Python function.

A runner that computes a whole call in one compiled program (the JAX backend's) may offer
``vm.direct_values(*input_values) -> outputs``: the program called and its outputs
converted, nothing more. For a :class:`~arignote.compile.executor.Function` whose outputs
need no bookkeeping (fresh arrays, no update, no shared variable, no input to protect, not
profiled), :func:`make_plain_call` writes the rest of a positional call around it as
straight-line code: take the function's lock, check each input against its Type as the
general path does (an ndarray of exactly the Type's dtype and rank passes as it is, any
other value goes through ``Type.filter``, and a refused value raises the same error naming
the input), store the values in the input cells, call the program. With the checks unrolled
per input and no branch for what the function cannot have, a call costs about a
microsecond of Python less than the general path, which matters where the program itself
takes ten or twenty.

The generated function returns :data:`BUSY` without doing anything when the call is not
plain after all (a wrong number of arguments) or the lock is taken (another thread's call,
or this function called from inside its own call): the general path then handles it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["BUSY", "make_plain_call"]

#: what a plain call returns when it leaves the call to the general path
BUSY = object()


def make_plain_call(fn: Any, direct_values: Callable[..., list]) -> Callable[[Any, tuple], Any]:
    """``plain(fn, args)``: a positional call of ``fn`` (a Function) through
    ``direct_values``, or :data:`BUSY` (see the module's doc). The lock, the
    ``trust_input`` flag and the output kind are read now: the Function drops this
    function when any of them changes."""
    n = len(fn._filters)
    lock = fn._lock
    names: dict[str, Any] = {
        "_run": direct_values,
        "_acquire": lock.acquire,
        "_release": lock.release,
        "_nd": np.ndarray,
        "_BUSY": BUSY,
        "_filter": _filter,
    }
    values = ", ".join(f"a{k}" for k in range(n))
    lines = [
        "def plain(self, args):",
        f"    if len(args) != {n} or not _acquire(False):",
        "        return _BUSY",
        "    try:",
    ]
    if n:
        lines.append(f"        {values}, = args")
    for k, (cell, dtype, ndim, _filter_fn, _strict, _downcast) in enumerate(fn._filters):
        names[f"_c{k}"] = cell
        if not fn.trust_input:
            if dtype is None:  # every value goes through the Type's filter
                lines.append(f"        a{k} = _filter(self, {k}, a{k})")
            else:
                names[f"_d{k}"] = dtype
                lines.append(
                    f"        if type(a{k}) is not _nd or a{k}.dtype is not _d{k} or a{k}.ndim != {ndim}:"
                )
                lines.append(f"            a{k} = _filter(self, {k}, a{k})")
        lines.append(f"        _c{k}[0] = a{k}")
    first = "[0]" if fn._kind == "single" else ""
    lines += [f"        return _run({values}){first}", "    finally:", "        _release()"]
    exec(compile("\n".join(lines) + "\n", "<arignote plain call>", "exec"), names)
    return names["plain"]


def _filter(fn: Any, k: int, value: Any) -> Any:
    """Input ``k``'s value through its Type's filter; a refused value raises the error of
    the general path (naming the input, its Type and what arrived)."""
    _cell, _dtype, _ndim, filter_, strict, allow_downcast = fn._filters[k]
    try:
        return filter_(value, strict, allow_downcast)
    except (TypeError, ValueError) as err:
        raise fn._bad_input(k, value, err) from None
