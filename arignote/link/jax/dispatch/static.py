"""What the JAX implementations of Ops share: static values, data-dependent shapes, run-time checks.

``jax.jit`` traces a function with abstract values, so a length, an axis or a slice bound
that decides the *shape* of a result must be known without the data: a constant of the graph
(read from the node when the function is made), or, when the function runs outside ``jit``
(eager evaluation), the concrete value it is called with. :func:`static_input` gives the
first, :func:`concrete` the second, and anything else is a :class:`DataDependentShapeError`
naming the node. Checks that NumPy's code raises for (a singular matrix with
``on_error="raise"``, :class:`~arignote.tensor.checks.CheckValues`) cannot raise inside a
traced function; :func:`raise_unless` runs them on the host when the values arrive, and the
call fails with the message.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import threading
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax._src import dispatch as jax_dispatch  # (runtime_tokens: see _forget_failed_effects)
from jax.experimental import checkify

from arignote.graph.basic import Apply, Constant, Variable
from arignote.tensor.shape import Shape, Shape_i

__all__ = [
    "DataDependentShapeError",
    "static_input",
    "concrete",
    "shape_value",
    "concrete_int",
    "is_tracer",
    "raise_unless",
    "kept_errors",
    "functional_checks",
    "host_error",
    "as_dtype",
]


class DataDependentShapeError(ValueError):
    """A node whose output shape depends on values that ``jax.jit`` only sees abstractly."""


def static_input(node: Apply | None, i: int) -> np.ndarray | None:
    """The value of ``node.inputs[i]`` when it is a constant of the graph, else None."""
    if node is None or i >= len(node.inputs):
        return None
    v = node.inputs[i]
    return np.asarray(v.data) if isinstance(v, Constant) else None


def is_tracer(value: Any) -> bool:
    """Whether ``value`` is abstract: traced by ``jax.jit`` (only known when the program runs)."""
    return isinstance(value, jax.core.Tracer)


def shape_value(var: Variable, shapes: dict[Variable, tuple]) -> np.ndarray | None:
    """The value of ``var`` when its graph reads nothing but the shapes of the variables in
    ``shapes`` (static shapes in JAX) and constants: e.g. a loop's length computed as
    ``x.shape[0] - 1``. None when it reads any value (or the shape of another variable).

    Under ``jax.jit`` such a value, computed by the traced graph, is a tracer; computed here
    from the shapes, with each node's ``perform``, it is known when the function is traced.
    """
    order: list[Apply] = []
    seen: set[int] = set()
    stack: list[tuple[Variable, bool]] = [(var, False)]
    while stack:  # post-order over the ancestors, stopping at shape reads
        v, expanded = stack.pop()
        node = v.owner
        if node is None:
            if not isinstance(v, Constant):
                return None  # a value the graph is given
            continue
        if expanded:
            order.append(node)
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.append((v, True))
        if isinstance(node.op, Shape | Shape_i):
            if node.inputs[0] not in shapes:
                return None
            continue
        stack.extend((i, False) for i in node.inputs)
    values: dict[Variable, Any] = {}
    for node in order:
        if isinstance(node.op, Shape):
            out = [np.asarray(shapes[node.inputs[0]], dtype="int64")]
        elif isinstance(node.op, Shape_i):
            out = [np.asarray(shapes[node.inputs[0]][node.op.i], dtype="int64")]
        else:
            args = [i.data if isinstance(i, Constant) else values[i] for i in node.inputs]
            cells: list[list[Any]] = [[None] for _ in node.outputs]
            node.op.perform(node, args, cells)
            out = [c[0] for c in cells]
        values.update(zip(node.outputs, out))
    return np.asarray(values[var]) if var.owner is not None else np.asarray(var.data)


def concrete(value: Any, node: Apply | None, what: str) -> np.ndarray:
    """``value`` as a NumPy array, when it is concrete (outside ``jit``); inside ``jit`` a
    :class:`DataDependentShapeError` saying that ``what`` of ``node`` must be static."""
    if not is_tracer(value):
        return np.asarray(value)
    raise DataDependentShapeError(
        f"{node.op if node is not None else 'an Op'} (node {node}): {what} must be static (it "
        "decides a shape or an axis), but under jax.jit it is only known when the function runs. "
        "Make it a constant of the graph, or run this graph with another backend"
    )


def concrete_int(value: Any, node: Apply | None, what: str) -> int:
    """:func:`concrete` of a scalar integer."""
    return int(concrete(value, node, what))


#: exceptions that host code raised while a compiled program ran (see :func:`kept_errors`), the
#: most recent last; bounded, so that errors nobody asked for do not pile up
_HOST_ERRORS: deque[BaseException] = deque(maxlen=32)
_HOST_ERRORS_LOCK = threading.Lock()


def kept_errors(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn``, for a host callback of a compiled program (``jax.pure_callback``,
    ``jax.debug.callback``): an exception it raises is kept, so that the call that ran the
    program raises it as it is (:func:`host_error`), where JAX itself only reports a
    ``JaxRuntimeError`` whose text holds the traceback."""

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except Exception as err:
            with _HOST_ERRORS_LOCK:
                _HOST_ERRORS.append(err)
            raise

    return run


class _KeptErrorFilter(logging.Filter):
    """Leaves out JAX's log record of a debug callback that failed with an error
    :func:`kept_errors` kept: the call raises that error itself."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        with _HOST_ERRORS_LOCK:
            return not any(error is kept for kept in _HOST_ERRORS)


# (the logger of jax.debug.callback's failures: JAX logs each one with its traceback)
logging.getLogger("jax._src.debugging").addFilter(_KeptErrorFilter())


def host_error(err: BaseException) -> BaseException | None:
    """The exception host code raised that ``err`` (a ``JaxRuntimeError`` of a failed call)
    reports, taken from those :func:`kept_errors` kept; None when it reports none of them."""
    text = str(err)
    with _HOST_ERRORS_LOCK:
        for kept in reversed(_HOST_ERRORS):
            if f"{type(kept).__name__}: {kept}" in text:
                _HOST_ERRORS.remove(kept)
                _forget_failed_effects()
                return kept
    return None


def _forget_failed_effects() -> None:
    """Drop JAX's tokens of the effects of this thread's programs. Off the CPU, the token
    of a program whose host callback failed keeps the failure and raises it again at the
    next effects barrier, which JAX runs at exit ("Exception ignored in atexit callback",
    with the traceback), although the call has raised it already. No public API clears
    them: read defensively, it is JAX's private ``RuntimeTokenSet``."""
    clear = getattr(getattr(jax_dispatch, "runtime_tokens", None), "clear", None)
    if clear is not None:
        clear()


#: the checks staged while tracing inside :func:`functional_checks` (per thread: a trace
#: runs in its caller's thread); None outside it
_STAGED = threading.local()


@contextlib.contextmanager
def functional_checks(staged: list[type]) -> Iterator[list[type]]:
    """While a function is traced inside this context, :func:`raise_unless` stages its checks
    with ``jax.experimental.checkify`` (the program returns whether each held, with its
    outputs: nothing runs on the host) instead of host callbacks (a round trip to Python
    per call, 100 µs on a CPU, and a wait for the device on a GPU). The function must be
    traced under ``checkify.checkify``; ``staged`` receives each check's error class (its
    index is in the check's message: ``"arignote check 3"``)."""
    previous = getattr(_STAGED, "checks", None)
    _STAGED.checks = staged
    try:
        yield staged
    finally:
        _STAGED.checks = previous


def raise_unless(ok: Any, message: Callable[..., str] | str, *details: Any, error: type = ValueError) -> None:
    """Raise ``error(message)`` when the run-time boolean ``ok`` is false.

    Outside ``jit`` it raises at once. Inside, in a program the linker compiles
    (:func:`functional_checks`), the program returns whether the check held and the call
    raises this error when it did not; elsewhere (a function from ``jax_funcify`` or
    ``jax_function``, traced by its user), a host callback raises when the values arrive
    (JAX fails the call, and the linker raises this error: :func:`host_error`).
    ``message`` may be a function of the ``details`` values (to show the offending values).
    """

    def check(ok_value: Any, *detail_values: Any) -> None:
        if not bool(np.all(ok_value)):
            text = message(*detail_values) if callable(message) else message
            raise error(text)

    if not is_tracer(ok) and not any(map(is_tracer, details)):
        check(np.asarray(ok), *(np.asarray(d) for d in details))
        return
    staged = getattr(_STAGED, "checks", None)
    if staged is not None:
        staged.append(error)
        checkify.check(jnp.all(ok), f"arignote check {len(staged) - 1}")
        return
    jax.debug.callback(kept_errors(check), ok, *details)


def as_dtype(value: Any, dtype: Any) -> Any:
    """``value`` as a JAX array of ``dtype`` (a no-op when it is one already)."""
    value = jnp.asarray(value)
    return value if value.dtype == np.dtype(dtype) else value.astype(dtype)
