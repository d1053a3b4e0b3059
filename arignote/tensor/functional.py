"""``vectorize``: NumPy's ``vectorize`` for functions that build graphs, and
``vectorize_graph``: an existing graph rebuilt for inputs with extra leading (batch)
dimensions.

The core graph is built once, on inputs of the core shape; it is then batched by
:func:`arignote.tensor.batching.vectorize_graph`, which adds one leading dimension: several
batch dimensions are broadcast to their common shape, flattened into one, and the results
unflattened (as Blockwise's gradients do).

>>> import numpy as np
>>> import arignote.tensor as pt
>>> def normalize(v):
...     return v / pt.sqrt((v**2).sum())
>>> x = pt.dtensor3("x")
>>> y = vectorize(normalize, signature="(n)->(n)")(x)
>>> y.type
TensorType(float64, shape=(None, None, None))
>>> y.eval({x: np.full((2, 3, 4), 2.0)})[1, 2]
array([0.5, 0.5, 0.5, 0.5])
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from arignote.graph.basic import Variable
from arignote.graph.traversal import io_toposort
from arignote.tensor.basic import as_tensor_variable
from arignote.tensor.batching import vectorize_graph as _vectorize_one
from arignote.tensor.blockwise import parse_gufunc_signature
from arignote.tensor.blockwise_grad import _dims, _flat
from arignote.tensor.shape import dim_length, reshape
from arignote.tensor.shape_utils import _broadcast_lengths
from arignote.tensor.type import TensorType

__all__ = ["vectorize", "vectorize_graph"]


def _check_replacement(key: Any, value: Any) -> tuple[Variable, int]:
    """The replacement as a tensor Variable, and its number of batch dimensions."""
    if not isinstance(key, Variable) or not isinstance(key.type, TensorType):
        raise TypeError(f"vectorize_graph: the replaced {key!r} must be a tensor Variable")
    value = as_tensor_variable(value)
    n_core = key.type.ndim
    extra = value.type.ndim - n_core
    if extra < 0:
        raise ValueError(
            f"vectorize_graph: {value} ({value.type}) replaces {key} ({key.type}) and has fewer "
            "dimensions; the batch dimensions are added on the left of the core ones"
        )
    core = value.type.shape[extra:]
    for d, (want, got) in enumerate(zip(key.type.shape, core)):
        if want is not None and got is not None and want != got:
            raise ValueError(
                f"vectorize_graph: {value} ({value.type}) replaces {key} ({key.type}), but its core "
                f"dimension {d} has length {got}, not {want}"
            )
    return value, extra


def _rebuild(outputs: list, replace: dict) -> list:
    """``outputs`` rebuilt node by node with the variables of ``replace`` substituted (no
    new dimensions: their Types may differ, so each node is made again)."""
    if not replace:
        return outputs
    memo = dict(replace)
    for node in io_toposort(list(replace), outputs):
        if any(i in memo for i in node.inputs):
            new = node.op.make_node(*(memo.get(i, i) for i in node.inputs))
            memo.update(zip(node.outputs, new.outputs))
    return [memo.get(o, o) for o in outputs]


def _batch_shape(values: list[Variable], extras: list[int]) -> list:
    """The broadcast of the values' batch shapes (right-aligned): a length per dimension, a
    Python int where one is static."""
    try:
        return _broadcast_lengths([[dim_length(v, d) for d in range(e)] for v, e in zip(values, extras)], "")
    except ValueError:
        lengths = ", ".join(f"{v} ({v.type})" for v in values)
        raise ValueError(
            f"vectorize_graph: the batch dimensions of the replacements do not broadcast: {lengths}"
        ) from None


def vectorize_graph(
    outputs: Variable | Sequence[Variable], replace: Mapping[Variable, Any]
) -> Variable | list[Variable]:
    """``outputs`` rebuilt for the values of ``replace``, which may have extra leading (batch)
    dimensions beyond their keys' (PyTensor's ``pytensor.graph.replace.vectorize_graph``).

    The batch dimensions of all the values broadcast together (right-aligned, a static 1
    against any length) and lead each output that depends on them; an output that depends
    on none is returned as it is. A value with no extra dimension simply replaces its key
    (its dtype may differ). Returns a Variable for a Variable, a list for a sequence.
    """
    single = isinstance(outputs, Variable)
    outs = [outputs] if single else [as_tensor_variable(o) for o in outputs]
    plain, batched, extras = {}, {}, []
    for key, value in dict(replace).items():
        value, extra = _check_replacement(key, value)
        if extra:
            batched[key] = value
            extras.append(extra)
        else:
            plain[key] = value
    outs = _rebuild(outs, plain)
    if batched:
        values = list(batched.values())
        lengths = {v.type.shape[0] for v in values}
        if extras == [1] * len(values) and (len(lengths) == 1 or 1 not in lengths):
            # one batch dimension, nothing to broadcast: batched as it is
            results = _vectorize_one(outs, batched)
            outs = [o if r is None else r for o, r in zip(outs, results)]
            return outs[0] if single else outs
        batch = _batch_shape(values, extras)
        flat = {k: _flat(v, batch, k.type.ndim) for k, v in batched.items()}
        results = _vectorize_one(outs, flat)
        outs = [
            o if r is None else reshape(r, [*batch, *_dims(r, 1, r.type.ndim)]) for o, r in zip(outs, results)
        ]
    return outs[0] if single else outs


def vectorize(func: Callable, signature: str | None = None) -> Callable:
    """The symbolic ``numpy.vectorize``: a function applying ``func`` over the leading (batch)
    dimensions of its tensor arguments (PyTensor's ``pytensor.tensor.vectorize``).

    ``func`` builds its outputs from inputs of the core shape: by ``signature`` (a gufunc
    signature such as ``"(m,n),(n)->(m)"``), or 0-d when there is none (its outputs may then
    have any shape). It is called once, on placeholders; the graph it builds is batched
    with :func:`vectorize_graph`. The batch dimensions of the arguments broadcast together.
    """
    inputs_sig, outputs_sig = parse_gufunc_signature(signature) if signature is not None else (None, None)

    def inner(*inputs: Any) -> Variable | list[Variable]:
        tensors = [as_tensor_variable(x) for x in inputs]
        sig = inputs_sig if inputs_sig is not None else [()] * len(tensors)
        if len(sig) != len(tensors):
            raise ValueError(
                f"vectorize: the signature {signature!r} takes {len(sig)} input(s), {len(tensors)} given"
            )
        core_inputs = [_core_placeholder(k, x, s, signature) for k, (x, s) in enumerate(zip(tensors, sig))]
        _check_core_lengths(core_inputs, sig, signature)
        core_outputs = func(*core_inputs)
        if core_outputs is None:
            raise ValueError("vectorize: the function returned no outputs")
        many = isinstance(core_outputs, (list, tuple))
        outs = [as_tensor_variable(o) for o in (core_outputs if many else [core_outputs])]
        if outputs_sig is not None:
            if len(outs) != len(outputs_sig):
                raise ValueError(
                    f"vectorize: the signature {signature!r} has {len(outputs_sig)} output(s), the "
                    f"function returned {len(outs)}"
                )
            for k, (o, s) in enumerate(zip(outs, outputs_sig)):
                if o.type.ndim != len(s):
                    raise ValueError(
                        f"vectorize: output {k} of the function is {o.type}, its signature "
                        f"{'(' + ','.join(s) + ')'} has {len(s)} core dimension(s)"
                    )
        return vectorize_graph(outs if many else outs[0], dict(zip(core_inputs, tensors)))

    return inner


def _core_placeholder(k: int, x: Variable, sig: tuple, signature: str | None) -> Variable:
    n = len(sig)
    if x.type.ndim < n:
        raise ValueError(
            f"vectorize: input {k} ({x.type}) has fewer dimensions than its {n} core dimension(s) in "
            f"the signature {signature!r}"
        )
    core = x.type.shape[x.type.ndim - n :] if n else ()
    return TensorType(x.type.dtype, core)(name=x.name)


def _check_core_lengths(core_inputs: list, sig: Sequence[tuple], signature: str | None) -> None:
    """A core dimension named twice in the signature must not have two static lengths."""
    seen: dict = {}
    for k, (x, names) in enumerate(zip(core_inputs, sig)):
        for name, length in zip(names, x.type.shape):
            if length is None:
                continue
            if seen.setdefault(name, (length, k))[0] != length:
                raise ValueError(
                    f"vectorize: core dimension {name!r} of {signature!r} has length {seen[name][0]} in "
                    f"input {seen[name][1]} and {length} in input {k}"
                )
