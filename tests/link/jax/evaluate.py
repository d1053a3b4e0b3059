"""Running a graph node by node with the JAX implementations, against the reference VM.

:func:`check_nodes` computes every intermediate value of a graph with the reference VM
(``Mode(linker="py", optimizer=None)``: each node's ``perform``), then feeds each node that
has a JAX implementation the reference values of its inputs and compares what JAX gives with
the reference outputs: values, shapes and dtypes. Node by node, without ``jax.jit``: a
mismatch names its node, and no case pays a compilation.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from arignote import function
from arignote.compile.mode import Mode
from arignote.graph.basic import Apply, Constant, Variable
from arignote.graph.op import Op
from arignote.graph.traversal import io_toposort
from arignote.link.jax.dispatch import jax_funcify

REFERENCE = Mode(linker="py", optimizer=None)


def registered(cls: type) -> bool:
    """Whether the Op class has a JAX implementation of its own (or a base's)."""
    return jax_funcify.dispatch(cls) is not jax_funcify.dispatch(Op)


def reference_values(inputs: Sequence[Variable], outputs: Sequence[Variable], values: Sequence[Any]) -> dict:
    """Every variable between ``inputs`` and ``outputs``: its value under the reference VM."""
    nodes = io_toposort(list(inputs), list(outputs))
    inner = [o for n in nodes for o in n.outputs]
    fn = function(list(inputs), inner, mode=REFERENCE, on_unused_input="ignore")
    got = fn(*values)
    known: dict[Variable, Any] = dict(zip(inputs, values))
    known.update(zip(inner, got))
    return known


def _value_of(v: Variable, known: dict) -> Any:
    return v.data if isinstance(v, Constant) else known[v]


def _core_op(op: Op) -> Op:
    return getattr(op, "core_op", op)


def _canonical(op: Op, k: int, value: np.ndarray) -> np.ndarray:
    """Eigenvectors and singular vectors are unique up to a sign (a phase, if complex) per
    vector: scale each so that its largest entry is real and positive."""
    name = type(_core_op(op)).__name__
    vectors = {"Eigh": {1: -2}, "Eig": {1: -2}, "SVD": {0: -2, 2: -1}}.get(name, {})
    if k not in vectors or value.ndim < 2:
        return value
    axis = vectors[k]  # the axis along which one vector runs
    moved = np.moveaxis(value, axis, -1)
    big = np.take_along_axis(moved, np.argmax(np.abs(moved), axis=-1)[..., None], axis=-1)
    phase = big / np.where(np.abs(big) == 0, 1, np.abs(big))
    return np.moveaxis(moved / phase, -1, axis)


def canonical(v: Variable, value: Any) -> np.ndarray:
    """The value of ``v`` with eigen- and singular vectors scaled as :func:`_canonical` does."""
    value = np.asarray(value)
    if v.owner is None or value.dtype.kind not in "fc":
        return value
    return _canonical(v.owner.op, v.owner.outputs.index(v), value)


def compare(node: Apply, k: int, got: Any, want: Any, rtol: float = 1e-6, atol: float = 1e-8) -> None:
    got, want = np.asarray(got), np.asarray(want)
    where = f"{node.op} (node {node}), output {k}"
    dtype = getattr(node.outputs[k].type, "dtype", None)
    assert dtype is None or got.dtype == np.dtype(dtype), f"{where}: dtype {got.dtype}, the Type says {dtype}"
    assert got.shape == want.shape, f"{where}: shape {got.shape}, the reference {want.shape}"
    if got.dtype.kind in "fc":
        got, want = _canonical(node.op, k, got), _canonical(node.op, k, want)
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=where)
    else:
        np.testing.assert_array_equal(got, want, err_msg=where)


def checkable(op: Op) -> bool:
    """The Op (and the core Op it maps, if any) has a JAX implementation."""
    return registered(type(op)) and registered(type(_core_op(op)))


def check_nodes(
    inputs: Sequence[Variable],
    outputs: Sequence[Variable],
    values: Sequence[Any],
    jit: Callable[[Apply], bool] = lambda node: False,
    **tol: float,
) -> list[Apply]:
    """Each node with a JAX implementation, on the reference values of its inputs, gives the
    reference values of its outputs (under ``jax.jit`` for the nodes ``jit`` picks); returns
    the nodes checked."""
    known = reference_values(inputs, outputs, values)
    checked = []
    for node in io_toposort(list(inputs), list(outputs)):
        if not checkable(node.op):
            continue  # not (yet) in JAX: the coverage test lists these
        fn = jax_funcify(node.op, node=node)
        if jit(node):
            fn = jax.jit(fn)
        values = [_value_of(v, known) for v in node.inputs]
        args = [None if a is None else jnp.asarray(a) for a in values]  # (None: NoneConst)
        result = fn(*args)
        results = result if len(node.outputs) > 1 else (result,)
        assert len(results) == len(node.outputs), f"{node.op}: {len(results)} results"
        for k, (out, got) in enumerate(zip(node.outputs, results)):
            compare(node, k, got, known[out], **tol)
        checked.append(node)
    return checked
