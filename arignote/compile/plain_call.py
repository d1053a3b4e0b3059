"""A compiled function's plain call as one generated Python function: its own ``__call__``.

A runner that computes a whole call in one compiled program may offer
``vm.direct_program = (program, converters)``: the outputs of a call are
``program(*input values)``, each converted by its converter (None: as it is), with nothing
else to do. The JAX backend's jitted function, tier 1's generated body when every node is
written out, and a whole-graph Numba function in use do. A program with ``may_refuse``
returns :data:`~arignote.link.python.codegen.REFUSED` for a call it leaves to the runner
(the whole-graph function on a call it raises on: tier 1 computes it or raises the
reference's error).

For a :class:`~arignote.compile.executor.Function` whose outputs need no bookkeeping (fresh
arrays, no update, no shared variable, no input to protect, not profiled),
:func:`make_plain_call` writes the positional call as straight-line code, which the
Function then uses as the ``__call__`` of a class of its own (a subclass of its class
adding nothing else), so calling it runs this code and nothing before it:

* each input is checked against its Type as the general path does (an ndarray of exactly
  the Type's dtype and rank passes as it is, any other value goes through ``Type.filter``,
  and a refused value raises the same error naming the input; with ``trust_input`` nothing
  is checked);
* tier 1's program body (:class:`~arignote.link.python.codegen.ProgramBody`) is written
  into the call itself; another program is called with the checked values;
* the outputs are returned (converted where a converter says so).

A call that is not plain after all (keyword arguments, ``output_subset``, too few or too
many values) or that the program refuses goes to the general path, ``Function.__call__``.
``x + 1`` on a 0-d array then costs about what NumPy's own ``a + 1.0`` does.

Such a call reads and writes no state of the function: its values go from the arguments to
the program (which JAX runs safely from several threads), not through the input cells. So
it takes no lock (calls from several threads run side by side, each with its own values),
and it leaves the input cells as the last call through the general path left them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from arignote.link.python.codegen import REFUSED

__all__ = ["make_plain_call"]

#: the default of the generated call's parameters: a value not given
_MISSING = object()


def make_plain_call(
    fn: Any, program: Callable[..., Sequence], converters: Sequence[Callable | None], general: Callable
) -> Callable:
    """``__call__(self, *values, **kw)`` for ``fn`` (a Function) through ``program``,
    handing any call that is not plain to ``general`` (the general path,
    ``general(self, *values, **kw)``); see the module's doc. The ``trust_input`` flag and
    the output kind are read now: the Function drops this call when the flag (or
    ``profile``) changes."""
    n = len(fn._filters)
    body = getattr(program, "body", None)
    inline = (
        body is not None and all(c is None for c in converters) and not getattr(program, "may_refuse", False)
    )
    params = list(body.params) if inline else [f"a{k}" for k in range(n)]
    names: dict[str, Any] = {
        "__M": _MISSING,
        "__general": _general_for(general),
        "__nd": np.ndarray,
        "__filter": _filter,
    }
    values = "".join(f"{p}, " for p in params)
    signature = "".join(f"{p}=__M, " for p in params) + ("/, " if params else "")
    missing = f" or {params[-1]} is __M" if params else ""
    head = [
        f"def __call__(self, {signature}*rest, **kw):",
        f"    if rest or kw{missing}:",
        f"        return __general(self, ({values}), rest, kw)",
    ]
    for k, (_cell, dtype, ndim, _filter_fn, _strict, _downcast) in enumerate(fn._filters):
        if fn.trust_input:
            break
        p = params[k]
        if dtype is None:  # every value goes through the Type's filter
            head.append(f"    {p} = __filter(self, {k}, {p})")
        else:
            names[f"__d{k}"] = dtype
            head.append(f"    if type({p}) is not __nd or {p}.dtype is not __d{k} or {p}.ndim != {ndim}:")
            head.append(f"        {p} = __filter(self, {k}, {p})")
    single = fn._kind == "single"
    if inline:
        outs = body.outputs
        result = outs[0] if single else f"[{', '.join(outs)}]"
        # (every tensor input checked above, or vouched for by trust_input)
        proven = fn.trust_input or all(f[1] is not None for f in fn._filters)
        return body.wrap([*head, "    try:"], result, names, inputs_proven=proven)
    outs = []
    for k, convert in enumerate(converters):
        if convert is None:
            outs.append(f"r[{k}]")
        else:
            names[f"__f{k}"] = convert
            outs.append(f"__f{k}(r[{k}])")
    if single:
        result = outs[0]
    elif all(c is None for c in converters):
        result = "list(r)"
    else:
        result = f"[{', '.join(outs)}]"
    lines = [*head, f"    r = __program({values})"]
    names["__program"] = program
    if getattr(program, "may_refuse", False):  # (left to the general path: see REFUSED)
        names["__REFUSED"] = REFUSED
        lines += ["    if r is __REFUSED:", f"        return __general(self, ({values}), (), {{}})"]
    lines.append(f"    return {result}")
    exec(compile("\n".join(lines) + "\n", "<arignote plain call>", "exec"), names)
    return names["__call__"]


def _general_for(general: Callable) -> Callable:
    """``(self, given, rest, kw)`` -> the general path's call with the values given (those
    not :data:`_MISSING`), then ``rest``, and ``kw``."""

    def call(self: Any, given: tuple, rest: tuple, kw: dict) -> Any:
        return general(self, *[v for v in given if v is not _MISSING], *rest, **kw)

    return call


def _filter(fn: Any, k: int, value: Any) -> Any:
    """Input ``k``'s value through its Type's filter; a refused value raises the error of
    the general path (naming the input, its Type and what arrived)."""
    _cell, _dtype, _ndim, filter_, strict, allow_downcast = fn._filters[k]
    try:
        return filter_(value, strict, allow_downcast)
    except (TypeError, ValueError) as err:
        raise fn._bad_input(k, value, err) from None
