"""A compiled function's plain call as one generated Python function.

A runner that computes a whole call in one compiled program may offer
``vm.direct_program = (program, converters)``: the outputs of a call are
``program(*input_values)``, each converted by its converter (None: as it is), with nothing
else to do. The JAX backend's jitted function, tier 1's generated body when every node is
written out, and a whole-graph Numba function in use do. A program with ``may_refuse``
returns :data:`~arignote.link.python.codegen.REFUSED` for a call it leaves to the runner
(the whole-graph function on a call it raises on: tier 1 computes it or raises the
reference's error); the plain call then returns :data:`BUSY`. For a :class:`~arignote.compile.executor.Function` whose outputs need no
bookkeeping (fresh arrays, no update, no shared variable, no input to protect, not
profiled), :func:`make_plain_call` writes a positional call as straight-line code: check
each input against its Type as the general path does (an ndarray of exactly the Type's
dtype and rank passes as it is, any other value goes through ``Type.filter``, and a refused
value raises the same error naming the input), call the program with the checked values,
convert its outputs. With the checks unrolled per input and nothing done that the function
cannot need, a call costs about a microsecond of Python less than the general path, which
matters where the program itself takes ten or twenty.

Such a call reads and writes no state of the function: its values go from the arguments to
the program (which JAX runs safely from several threads), not through the input cells. So
it takes no lock (calls from several threads run side by side, each with its own values),
and it leaves the input cells as the last call through the general path left them. It
returns :data:`BUSY` without doing anything when the call is not plain after all (a wrong
number of arguments): the general path then handles it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from arignote.link.python.codegen import REFUSED

__all__ = ["BUSY", "make_plain_call"]

#: what a plain call returns when it leaves the call to the general path
BUSY = object()


def make_plain_call(
    fn: Any, program: Callable[..., Sequence], converters: Sequence[Callable | None]
) -> Callable[[Any, tuple], Any]:
    """``plain(fn, args)``: a positional call of ``fn`` (a Function) through ``program``,
    or :data:`BUSY` (see the module's doc). The ``trust_input`` flag and the output kind
    are read now: the Function drops this function when the flag (or ``profile``) changes."""
    n = len(fn._filters)
    names: dict[str, Any] = {
        "_program": program,
        "_nd": np.ndarray,
        "_BUSY": BUSY,
        "_filter": _filter,
    }
    values = ", ".join(f"a{k}" for k in range(n))
    lines = ["def plain(self, args):"]
    if n:
        lines += [f"    if len(args) != {n}:", "        return _BUSY", f"    {values}, = args"]
    else:
        lines += ["    if args:", "        return _BUSY"]
    for k, (_cell, dtype, ndim, _filter_fn, _strict, _downcast) in enumerate(fn._filters):
        if fn.trust_input:
            continue
        if dtype is None:  # every value goes through the Type's filter
            lines.append(f"    a{k} = _filter(self, {k}, a{k})")
        else:
            names[f"_d{k}"] = dtype
            lines.append(f"    if type(a{k}) is not _nd or a{k}.dtype is not _d{k} or a{k}.ndim != {ndim}:")
            lines.append(f"        a{k} = _filter(self, {k}, a{k})")
    outs = []
    for k, convert in enumerate(converters):
        if convert is None:
            outs.append(f"r[{k}]")
        else:
            names[f"_f{k}"] = convert
            outs.append(f"_f{k}(r[{k}])")
    if fn._kind == "single":
        result = outs[0]
    elif all(c is None for c in converters):
        result = "list(r)"
    else:
        result = f"[{', '.join(outs)}]"
    lines.append(f"    r = _program({values})")
    if getattr(program, "may_refuse", False):  # (left to the general path: see REFUSED)
        names["_REFUSED"] = REFUSED
        lines += ["    if r is _REFUSED:", "        return _BUSY"]
    lines.append(f"    return {result}")
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
