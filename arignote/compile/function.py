"""``function``: compile a graph into a callable.

>>> import arignote
>>> import arignote.tensor as pt
>>> x, y = pt.dscalars("x", "y")
>>> f = arignote.function([x, y], x * y + 1)
>>> float(f(2, 3))
7.0
>>> import numpy as np
>>> acc = arignote.shared(np.float64(0.0), name="acc")
>>> inc = arignote.function([x], acc, updates={acc: acc + x})
>>> float(inc(1.0)), float(inc(2.0)), float(acc.get_value())
(0.0, 1.0, 3.0)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from arignote.compile.io import In, Out, SymbolicInput, SymbolicOutput
from arignote.compile.maker import UnusedInputError
from arignote.compile.mode import get_mode
from arignote.compile.rebuild import _pairs, rebuild_collect_shared
from arignote.graph.basic import Variable
from arignote.graph.shared import SharedVariable
from arignote.graph.utils import gc_paused
from arignote.tensor.conversion import as_tensor_variable

__all__ = ["function", "rebuild_collect_shared"]  # rebuild_collect_shared: PyTensor's path


def function(
    inputs: Sequence[Any] | None = None,
    outputs: Any = None,
    mode: Any = None,
    updates: Any = None,
    givens: Any = None,
    no_default_updates: bool | Iterable[SharedVariable] = False,
    accept_inplace: bool = False,
    name: str | None = None,
    rebuild_strict: bool = True,
    allow_input_downcast: bool | None = None,
    profile: Any = None,
    on_unused_input: str | None = None,
    trust_input: bool = False,
) -> Any:
    """Compile ``outputs`` (a Variable, a list, or a dict of them) as a function of ``inputs``.

    Parameters follow PyTensor 3: ``inputs`` (Variables or :class:`In`), ``outputs``
    (Variables or :class:`Out`; ``None`` for updates only), ``mode`` (a Mode or its name),
    ``updates`` (``{shared: expression}``, applied after all outputs are computed),
    ``givens`` (``{variable: replacement}``), ``no_default_updates``, ``name``,
    ``rebuild_strict`` (True: a replacement in ``givens`` must have the replaced Variable's
    Type or one convertible to it; False: any Type, the nodes using it are rebuilt),
    ``allow_input_downcast``, ``profile`` (True or a ProfileStats),
    ``on_unused_input`` (``"raise"``, ``"warn"`` or ``"ignore"``; default from config)
    and ``trust_input`` (skip input checks: faster, but wrong inputs are your problem).

    Thread safety: the returned function may be called from several threads. Calls of one
    function run one at a time, and a call holds the locks of the shared variables it
    reads or updates (taken in one global order, so two functions never deadlock), so its
    reads and updates are one atomic step with respect to other calls and to
    ``get_value``/``set_value`` of those variables (``arignote.graph.shared.locked(a, b)``
    holds several at once, to set values that belong together). A function called again
    from inside its own call (from an Op's ``perform`` or a callback) raises RuntimeError,
    and nested calls that would wait for each other across threads raise
    ``DeadlockError`` (a RuntimeError) in one of them instead of hanging; after ``os.fork()`` the child's functions and shared variables are not left locked by
    the parent's other threads. A call that raises leaves every shared variable (random
    generators included) and every ``In(x, update=...)`` state as it was.
    """
    if inputs is None:
        inputs = []
    if isinstance(inputs, (Variable, In)):
        raise TypeError("function(inputs, outputs): inputs must be a list (wrap the single input: [x])")
    ins = [i if isinstance(i, SymbolicInput) else In(i) for i in inputs]
    for k, i in enumerate(ins):
        if isinstance(i.variable, SharedVariable):
            raise TypeError(
                f"Input {k} ({i.variable}) is a shared variable: shared variables are implicit "
                "inputs (their value comes with them); to feed another value, use givens"
            )
    seen: dict = {}
    for k, i in enumerate(ins):
        if i.variable in seen:
            # UnusedInputError, as in PyTensor: the second occurrence could never be used
            raise UnusedInputError(
                f"Input {k} ({i.variable}) is the same Variable as input {seen[i.variable]}: "
                "each Variable may be given only once in the inputs of function()"
            )
        seen[i.variable] = k
    given_keys = {id(old) for old, _ in _pairs(givens, "givens")}
    for k, i in enumerate(ins):
        if id(i.variable) in given_keys:
            raise RuntimeError(
                f"givens replaces {i.variable}, which is input {k} of the function: the value "
                "passed for it would be ignored. Leave it out of the inputs, or out of givens."
            )
    out_kind, out_list = _normalize_outputs(outputs)
    # Compiling allocates many objects and drops replaced nodes in reference cycles: with
    # the collector paused through all of it (not per step), the whole heap is swept once
    # after, not once per step that paused it.
    mode = get_mode(mode)
    with gc_paused():
        # (a mode may compile with a FunctionMaker of its own)
        maker = mode.function_maker(
            ins,
            out_list,
            mode=mode,
            updates=updates,
            givens=givens,
            no_default_updates=no_default_updates,
            accept_inplace=accept_inplace,
            name=name,
            rebuild_strict=rebuild_strict,
            allow_input_downcast=allow_input_downcast,
            profile=profile,
            on_unused_input=on_unused_input,
            output_kind=out_kind,
            trust_input=trust_input,
        )
        fn = maker.create()
    return fn


def _normalize_outputs(outputs: Any) -> tuple[Any, list[SymbolicOutput]]:
    """(how to return results, outputs as SymbolicOutput list)."""
    if outputs is None:
        return ("list", []), []
    if isinstance(outputs, (Variable, SymbolicOutput)):
        return ("single", None), [_as_out(outputs, 0)]
    if isinstance(outputs, Mapping):
        keys = list(outputs)
        for k in keys:
            if not isinstance(k, str):
                raise TypeError(f"Output dict keys must be strings, got {k!r}")
        return ("dict", keys), [_as_out(outputs[k], k) for k in keys]
    if isinstance(outputs, (list, tuple)):
        return ("list", None), [_as_out(o, k) for k, o in enumerate(outputs)]
    raise TypeError(
        f"outputs must be a Variable, a list or a dict of them, got {type(outputs).__name__} {outputs!r}"
    )


def _as_out(o: Any, where: Any) -> SymbolicOutput:
    if isinstance(o, SymbolicOutput):
        return o
    if isinstance(o, Variable):
        return Out(o)
    try:
        return Out(as_tensor_variable(o))
    except TypeError:
        raise TypeError(f"Output {where!r} is {type(o).__name__} {o!r}, not a Variable") from None
