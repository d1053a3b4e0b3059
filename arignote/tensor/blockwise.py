"""Blockwise: an Op on core arrays, applied over any number of leading batch dimensions.

A *core* Op works on arrays of fixed dimensionality (a matrix inverse on ``(n, n)``) and
says so with a NumPy gufunc signature such as ``"(m,m)->(m,m)"`` (its ``gufunc_signature``
attribute). ``Blockwise(core_op)`` applies it to stacks of such arrays: the dimensions in
front of the core ones are batch dimensions, broadcast between the inputs like NumPy's
(a static length 1 broadcasts; lengths that are only known at run time must agree), and the
core Op runs once per batch entry; a core Op whose ``perform`` takes whole stacks (NumPy's
linear algebra does) says so with ``stacked_perform = True`` and runs once.

Its gradient is the core Op's own rule, built once on core-shaped placeholders and then
vectorised over the batch (:func:`arignote.graph.replace.batch_graph`), summed back
over the batch dimensions an input was broadcast along.

>>> import numpy as np
>>> import arignote.tensor as pt
>>> from arignote.tensor.products import Dot
>>> class MatVec(Dot):
...     gufunc_signature = "(m,n),(n)->(m)"
>>> a, v = pt.tensor3("a"), pt.dmatrix("v")
>>> out = Blockwise(MatVec())(a, v)
>>> out.type
TensorType(float64, shape=(None, None))
>>> av, vv = np.ones((2, 3, 4)), np.arange(8.0).reshape(2, 4)
>>> out.eval({a: av, v: vv})
array([[ 6.,  6.,  6.],
       [22., 22., 22.]])
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from arignote.graph.basic import Apply, Variable
from arignote.graph.op import Op
from arignote.graph.replace import register_batch_rule
from arignote.tensor.blockwise_grad import blockwise_pullback, blockwise_pushforward
from arignote.tensor.conversion import as_tensor_variable
from arignote.tensor.shape import ShapeError
from arignote.tensor.type import TensorType

__all__ = ["Blockwise", "blockwise_apply", "parse_gufunc_signature"]

_ARG = re.compile(r"\(([^()]*)\)")
_GROUP = r"\((?:\w+(?:,\w+)*)?\)"
_SIGNATURE = re.compile(rf"(?:{_GROUP}(?:,{_GROUP})*)?->{_GROUP}(?:,{_GROUP})*")
Signature = tuple[tuple[tuple[str, ...], ...], tuple[tuple[str, ...], ...]]


@lru_cache(maxsize=256)
def parse_gufunc_signature(signature: str) -> Signature:
    """``"(m,n),(n)->(m)"`` -> ``((("m", "n"), ("n",)), (("m",),))``: the core dimension
    names of each input and each output (NumPy's gufunc syntax: comma-separated groups of
    comma-separated names, one ``->``)."""
    text = signature.replace(" ", "")
    if not _SIGNATURE.fullmatch(text):
        raise ValueError(f"not a gufunc signature (like '(m,n),(n)->(m)'): {signature!r}")
    ins, outs = text.split("->")

    def args(part: str) -> tuple[tuple[str, ...], ...]:
        return tuple(tuple(d for d in f.split(",") if d) for f in _ARG.findall(part))

    return args(ins), args(outs)


def _broadcast_static(shapes: Sequence[tuple], inputs: Sequence[Variable], op: Op) -> tuple:
    """The broadcast of the (left-padded) static batch shapes, or a ValueError naming the
    inputs whose lengths clash."""
    ndim = max((len(s) for s in shapes), default=0)
    padded = [(1,) * (ndim - len(s)) + tuple(s) for s in shapes]
    out: list = []
    for d in range(ndim):
        lengths = {p[d] for p in padded} - {1}
        known = lengths - {None}
        if len(known) > 1:
            detail = ", ".join(
                f"input {i} ({v}) has batch shape {s}" for i, (v, s) in enumerate(zip(inputs, shapes))
            )
            raise ValueError(f"{op}: batch dimensions do not broadcast: {detail}")
        if known:
            out.append(known.pop())
        elif None in lengths:
            out.append(None)
        else:
            out.append(1)
    return tuple(out)


class Blockwise(Op):
    """``core_op`` applied over the leading (batch) dimensions of its inputs.

    ``signature`` is a NumPy gufunc signature naming the core dimensions of each input and
    output; it defaults to ``core_op.gufunc_signature``.
    """

    __props__ = ("core_op", "signature")

    def __init__(self, core_op: Op, signature: str | None = None, name: str | None = None) -> None:
        if isinstance(core_op, Blockwise):
            raise TypeError(
                "Blockwise: the core Op is already a Blockwise; batch dimensions nest by themselves"
            )
        signature = signature or getattr(core_op, "gufunc_signature", None)
        if signature is None:
            raise ValueError(
                f"Blockwise({core_op}): give a gufunc signature, e.g. '(m,n),(n)->(m)' (the core Op "
                "has no gufunc_signature)"
            )
        self.core_op = core_op
        self.signature = signature
        self.inputs_sig, self.outputs_sig = parse_gufunc_signature(signature)
        self.name = name

    def __str__(self) -> str:
        return self.name or f"Blockwise{{{self.core_op}, {self.signature}}}"

    # -- building -----------------------------------------------------------------------------

    def _core_ndims(self) -> list[int]:
        return [len(s) for s in self.inputs_sig]

    def _check_inputs(self, inputs: Sequence[Any]) -> list[Variable]:
        if len(inputs) != len(self.inputs_sig):
            raise TypeError(
                f"{self}: expected {len(self.inputs_sig)} inputs (signature {self.signature}), got {len(inputs)}"
            )
        inputs = [as_tensor_variable(i) for i in inputs]
        for k, (v, core) in enumerate(zip(inputs, self._core_ndims())):
            if v.type.ndim < core:
                raise TypeError(
                    f"{self}: input {k} ({v}, {v.type}) has {v.type.ndim} dimensions; its core "
                    f"signature {self.inputs_sig[k]} needs at least {core}"
                )
        return inputs

    def core_node(self, inputs: Sequence[Variable]) -> Apply:
        """The core Op applied to placeholders of the core shapes of ``inputs``."""
        return _core_node(self.core_op, tuple(_core_type(v, n) for v, n in zip(inputs, self._core_ndims())))

    def batch_shape(self, inputs: Sequence[Variable]) -> tuple:
        shapes = [v.type.shape[: v.type.ndim - n] for v, n in zip(inputs, self._core_ndims())]
        return _broadcast_static(shapes, inputs, self)

    def make_node(self, *inputs: Any) -> Apply:
        inputs = self._check_inputs(inputs)
        core = self.core_node(inputs)
        if len(core.outputs) != len(self.outputs_sig):
            raise TypeError(
                f"{self}: the core Op has {len(core.outputs)} outputs, the signature says {len(self.outputs_sig)}"
            )
        batch = self.batch_shape(inputs)
        outputs = [TensorType(o.type.dtype, batch + tuple(o.type.shape))() for o in core.outputs]
        return Apply(self, inputs, outputs)

    # -- running --------------------------------------------------------------------------------

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        ndims = self._core_ndims()
        batch_shapes = [np.shape(x)[: np.ndim(x) - n] for x, n in zip(inputs, ndims)]
        batch = _runtime_batch(self, node, batch_shapes)
        arrays = [np.broadcast_to(x, batch + np.shape(x)[np.ndim(x) - n :]) for x, n in zip(inputs, ndims)]
        core = self.core_node(node.inputs)
        if getattr(self.core_op, "stacked_perform", False) and 0 not in batch:
            # the core Op's perform takes the whole stack at once (NumPy's linalg does)
            self.core_op.perform(core, arrays, output_storage)
            return
        results: list[np.ndarray | None] = [None] * len(node.outputs)
        cells: list[list[Any]] = [[None] for _ in core.outputs]
        for idx in np.ndindex(*batch):
            for c in cells:
                c[0] = None
            self.core_op.perform(core, [a[idx] for a in arrays], cells)
            for k, (c, out) in enumerate(zip(cells, node.outputs)):
                value = np.asarray(c[0])
                if results[k] is None:
                    results[k] = np.empty(batch + value.shape, dtype=out.type.dtype)
                elif results[k].shape[len(batch) :] != value.shape:
                    raise ValueError(
                        f"{self}: output {k} of the core Op has shape {value.shape} at batch index {idx}, "
                        f"{results[k].shape[len(batch) :]} before; core outputs must have one shape"
                    )
                results[k][idx] = value
        if 0 in batch:  # no entry ran
            results = _empty_batch_results(self, core, arrays, batch, node)
        for cell, r in zip(output_storage, results):
            cell[0] = r

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list[tuple]:
        ndims = self._core_ndims()
        batch = _symbolic_batch(node, shapes, ndims, node.outputs[0].type.ndim - len(self.outputs_sig[0]))
        sizes: dict[str, Any] = {}
        for sig, s in zip(self.inputs_sig, shapes):
            for name, length in zip(sig, s[len(s) - len(sig) :]):
                sizes.setdefault(name, length)
        core_shapes = None
        if hasattr(self.core_op, "infer_shape"):
            core = self.core_node(node.inputs)
            try:
                core_shapes = self.core_op.infer_shape(
                    fgraph, core, [tuple(s[len(s) - n :]) for s, n in zip(shapes, ndims)]
                )
            except ShapeError:
                core_shapes = None
        out = []
        for k, (o, sig) in enumerate(zip(node.outputs, self.outputs_sig)):
            static = o.type.shape[len(batch) :]
            if core_shapes is not None:
                core_dims = list(core_shapes[k])
            elif all(d in sizes or st is not None for d, st in zip(sig, static)):
                core_dims = [st if st is not None else sizes[d] for d, st in zip(sig, static)]
            else:
                raise ShapeError(
                    f"{self}: the length of output {k}'s core dimensions is only known by running it"
                )
            out.append(tuple(batch) + tuple(core_dims))
        return out

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        pattern = getattr(self.core_op, "connection_pattern", None)
        if pattern is None:
            return [[True] * len(node.outputs) for _ in node.inputs]
        return pattern(self.core_node(node.inputs))

    # -- differentiation ----------------------------------------------------------------------------

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        """The core Op's pullback, vectorised over the batch dimensions."""
        return blockwise_pullback(self, inputs, outputs, output_grads)

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], eval_points: Sequence[Variable]
    ) -> list:
        """The core Op's pushforward, vectorised over the batch dimensions."""
        return blockwise_pushforward(self, inputs, outputs, eval_points)


def _core_type(v: Variable, core_ndim: int) -> TensorType:
    return TensorType(v.type.dtype, v.type.shape[v.type.ndim - core_ndim :])


@lru_cache(maxsize=1024)
def _core_node(core_op: Op, types: tuple[TensorType, ...]) -> Apply:
    # one placeholder node per (core Op, input Types): building it is the core Op's type check
    return core_op.make_node(*(t() for t in types))


def _runtime_batch(op: Blockwise, node: Apply, batch_shapes: Sequence[tuple]) -> tuple:
    static = [v.type.shape[: len(s)] for v, s in zip(node.inputs, batch_shapes)]
    ndim = max((len(s) for s in batch_shapes), default=0)
    out = []
    for d in range(ndim):
        entries = []
        for k, (s, st) in enumerate(zip(batch_shapes, static)):
            pad = ndim - len(s)
            if d >= pad:
                entries.append((k, s[d - pad], st[d - pad]))
        lengths = {n for _, n, st in entries if st != 1}
        if len(lengths) > 1:
            detail = ", ".join(
                f"input {k} has batch shape {tuple(batch_shapes[k])}" for k in range(len(batch_shapes))
            )
            raise ValueError(
                f"{op}: the batch dimensions of the inputs do not match ({detail}); only dimensions of "
                "static length 1 broadcast"
            )
        out.append(lengths.pop() if lengths else 1)
    return tuple(out)


def _empty_batch_results(op: Blockwise, core: Apply, arrays: list, batch: tuple, node: Apply) -> list:
    """Outputs for a batch with no entries. Their core lengths come from the static types
    or the signature's names (``(m,n)->(n)``: the input's ``n``); only when neither says,
    the core Op runs once on zeros."""
    sizes: dict[str, int] = {}
    for sig, a in zip(op.inputs_sig, arrays):
        sizes.update(zip(sig, a.shape[a.ndim - len(sig) :]))
    tails: list = []
    for sig, o in zip(op.outputs_sig, node.outputs):
        static = o.type.shape[len(batch) :]
        tail = [st if st is not None else sizes.get(d) for d, st in zip(sig, static)]
        tails.append(None if None in tail else tuple(tail))
    if None in tails:
        cells: list[list[Any]] = [[None] for _ in core.outputs]
        op.core_op.perform(core, [np.zeros(a.shape[len(batch) :], dtype=a.dtype) for a in arrays], cells)
        tails = [np.shape(c[0]) for c in cells]
    return [np.empty(batch + tuple(t), dtype=o.type.dtype) for t, o in zip(tails, node.outputs)]


def _symbolic_batch(node: Apply, shapes: Sequence[tuple], ndims: Sequence[int], batch_ndim: int) -> list:
    out: list = []
    static = node.outputs[0].type.shape[:batch_ndim]
    for d in range(batch_ndim):
        if static[d] is not None:
            out.append(static[d])
            continue
        for v, s, n in zip(node.inputs, shapes, ndims):
            pad = batch_ndim - (len(s) - n)
            if d >= pad and v.type.shape[d - pad] != 1:
                out.append(s[d - pad])
                break
    return out


def blockwise_apply(core_op: Op, *inputs: Any) -> Any:
    """``core_op(*inputs)`` when no input has dimensions beyond its core ones, else
    ``Blockwise(core_op)(*inputs)``: the core Op over the batch, NumPy-style."""
    signature = parse_gufunc_signature(core_op.gufunc_signature)
    variables = [as_tensor_variable(i) for i in inputs]
    if len(variables) == len(signature[0]) and all(
        v.type.ndim == len(s) for v, s in zip(variables, signature[0])
    ):
        return core_op(*variables)
    return Blockwise(core_op)(*variables)


def _batch_blockwise(op: Blockwise, node: Apply, args: list, flags: list) -> list:
    # the new dimension is one more batch dimension; unbatched inputs broadcast along it
    return [(o, True) for o in Blockwise(op.core_op, op.signature)(*args, return_list=True)]


register_batch_rule(Blockwise)(_batch_blockwise)
