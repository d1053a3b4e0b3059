"""``vectorize``: NumPy's ``vectorize`` for functions that build graphs.

The core graph is built once, on inputs of the core shape; it is then batched by
:func:`arignote.graph.replace.vectorize_graph`.

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

from collections.abc import Callable, Sequence
from typing import Any

from arignote.graph.basic import Variable
from arignote.graph.replace import vectorize_graph
from arignote.tensor.blockwise import parse_gufunc_signature
from arignote.tensor.conversion import as_tensor_variable
from arignote.tensor.type import TensorType

__all__ = ["vectorize"]


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
