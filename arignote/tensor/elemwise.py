"""Elemwise, DimShuffle and CAReduce: scalar ops lifted to arrays, axis shuffles, reductions.

Broadcasting follows PyTensor 3: a dimension broadcasts only when its static length is 1.
An input whose length is unknown (``None``) statically must match the others at run time;
a length-1 value there is an error, not a silent broadcast, so the graph means the same
thing whatever the data.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import numpy as np

from arignote.graph.basic import Apply, Variable
from arignote.graph.op import Op
from arignote.graph.replace import register_batch_rule
from arignote.scalar.op import ScalarOp
from arignote.scalar.type import get_scalar_type, upcast
from arignote.tensor.conversion import (
    as_tensor_variable,
    get_underlying_scalar_constant_value,
    register_constant_rule,
)
from arignote.tensor.type import TensorType

__all__ = ["Elemwise", "DimShuffle", "CAReduce", "normalize_axis", "as_tensor"]


def as_tensor(x: Any) -> Variable:
    if isinstance(getattr(x, "type", None), TensorType):
        return x  # the common case, without the cost of a call
    return as_tensor_variable(x)


def _static_length(lengths: Sequence[int | None], dim: int, inputs: Sequence[Variable]) -> int | None:
    known = {s for s in lengths if s is not None and s != 1}
    if len(known) > 1:
        raise ValueError(_static_mismatch(lengths, dim, inputs))
    if known:
        return known.pop()
    if lengths and all(s == 1 for s in lengths):
        return 1
    return None


def _static_mismatch(lengths: Sequence[int | None], dim: int, inputs: Sequence[Variable]) -> str:
    """The message for inputs whose static lengths at output dimension ``dim`` disagree.
    Inputs of fewer dimensions are aligned on the right (left-padded), so an input's own
    dimension index can differ from ``dim``: then both are given."""
    out_ndim = max((v.type.ndim for v in inputs), default=0)
    aligned = any(v.type.ndim != out_ndim for v in inputs)
    parts = []
    for i, (v, s) in enumerate(zip(inputs, lengths)):
        own = dim - (out_ndim - v.type.ndim)
        if s is None or own < 0:  # unknown, or a dimension the input lacks (broadcast)
            continue
        where = f" at its own dimension {own}" if aligned else ""
        parts.append(f"input {i} ({v}: {v.type}) has {s}{where}")
    if not aligned:
        return f"Incompatible static shapes at dimension {dim}: {', '.join(parts)}"
    return (
        f"Incompatible static shapes at dimension {dim} of the output (inputs with fewer "
        "dimensions are aligned on their last dimension and padded on the left, as in NumPy "
        f"broadcasting): {', '.join(parts)}"
    )


class Elemwise(Op):
    """Apply ``scalar_op`` to every element of its (broadcast) inputs.

    Inputs with fewer dimensions are left-padded with broadcastable dimensions.
    ``inplace_pattern`` ``{output: input}`` lets an output reuse an input's buffer.

    >>> import arignote.tensor as pt
    >>> x = pt.dmatrix("x")
    >>> y = x * 2.0
    >>> y.owner.op, y.owner.inputs[1].owner.op
    (Mul, ExpandDims{axes=(0, 1)})
    """

    __props__ = ("scalar_op", "inplace_pattern")

    def __init__(
        self, scalar_op: ScalarOp, inplace_pattern: dict[int, int] | None = None, name: str | None = None
    ):
        if not isinstance(scalar_op, ScalarOp):
            raise TypeError(f"Elemwise needs a ScalarOp, got {scalar_op!r}")
        self.scalar_op = scalar_op
        self.inplace_pattern = tuple(sorted((inplace_pattern or {}).items()))
        self.destroy_map = {o: [i] for o, i in self.inplace_pattern}
        self.nin = scalar_op.nin
        self.nout = scalar_op.nout
        self._name = name

    @property
    def name(self) -> str:
        return self._name or str(self)

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        """Which outputs each input is connected to: the scalar op's pattern when it has one
        (``second``'s first input is not), else every input to every output."""
        pattern = getattr(self.scalar_op, "connection_pattern", None)
        if pattern is not None:
            return pattern(node)
        return [[True] * len(node.outputs) for _ in node.inputs]

    connection_pattern.from_scalar_op = True  # (see graph.op.node_connection_pattern)

    def make_scalar_node(self, *inputs: Any) -> Apply:
        """The node of :attr:`scalar_op` on one scalar of each input's dtype: what an element of
        the outputs is computed by (``inputs``: tensors, or anything ``as_tensor_variable``
        takes)."""
        inputs = [as_tensor(i) for i in inputs]
        return self.scalar_op.make_node(*(get_scalar_type(i.type.dtype)() for i in inputs))

    def get_output_info(self, *inputs: Any) -> tuple[list[str], list[tuple[int | None, ...]], list[Variable]]:
        """``(dtypes, static shapes, inputs)`` of the node this Op makes from ``inputs``: each
        output's dtype and static shape, and the inputs left-padded with broadcastable axes
        to the outputs' number of dimensions. Raises as :meth:`make_node` does (a TypeError
        for a wrong number of inputs or an impossible in-place pattern, a ValueError for
        static lengths that do not broadcast)."""
        inputs = [as_tensor(i) for i in inputs]
        pads, out_types = self._plan(inputs)
        padded = [inp if pad is None else pad(inp) for inp, pad in zip(inputs, pads)]
        return [t.dtype for t in out_types], [t.shape for t in out_types], padded

    def outer(self, x: Any, y: Any) -> Any:
        """This binary op applied to every pair of an element of ``x`` and one of ``y``, as
        NumPy's ``ufunc.outer``: the result's shape is ``x.shape + y.shape``.

        >>> import arignote.tensor as pt
        >>> pt.add.outer(pt.dvector("x"), pt.dmatrix("y")).type.ndim
        3
        """
        if self.nin not in (-1, 2):
            raise NotImplementedError(f"{self}.outer needs a binary op; {self} takes {self.nin} input(s)")
        x, y = as_tensor_variable(x), as_tensor_variable(y)
        nx, ny = x.type.ndim, y.type.ndim
        return self(x.dimshuffle(*range(nx), *["x"] * ny), y.dimshuffle(*["x"] * nx, *range(ny)))

    def make_node(self, *inputs: Any) -> Apply:
        inputs = [as_tensor(i) for i in inputs]
        # Building nodes is on the user's critical path: the typing work depends only on
        # the input Types, so it is done once per distinct combination and memoised.
        key = tuple((i.type.dtype, i.type.shape) for i in inputs)
        cache = self.__dict__.setdefault("_typing_cache", {})
        plan = cache.get(key)
        if plan is None:
            plan = self._plan(inputs)
            if len(cache) > 512:
                cache.clear()
            cache[key] = plan
        pads, out_types = plan
        padded = [inp if pad is None else pad(inp) for inp, pad in zip(inputs, pads)]
        return Apply(self, padded, [t() for t in out_types])

    def _plan(self, inputs: list[Variable]) -> tuple[list, list[TensorType]]:
        """(left-padding DimShuffle or None per input, output Types) for these inputs."""
        if self.nin >= 0 and len(inputs) != self.nin:
            raise TypeError(f"{self} takes {self.nin} inputs, got {len(inputs)}")
        if not inputs:
            raise TypeError(f"{self} needs at least one input")
        ndim = max(i.type.ndim for i in inputs)
        pads = []
        shapes = []
        for inp in inputs:
            missing = ndim - inp.type.ndim
            pads.append(
                DimShuffle(input_ndim=inp.type.ndim, new_order=["x"] * missing + list(range(inp.type.ndim)))
                if missing
                else None
            )
            shapes.append((1,) * missing + inp.type.shape)
        # errors name the inputs as the user gave them (not their left-padded forms)
        out_shape = tuple(_static_length([sh[d] for sh in shapes], d, inputs) for d in range(ndim))
        scalar_types = [get_scalar_type(i.type.dtype) for i in inputs]
        try:
            out_scalar_types = self.scalar_op.output_types(scalar_types)
        except TypeError as err:
            raise TypeError(f"{self}: {err} (inputs: {', '.join(str(i.type) for i in inputs)})") from None
        for o, i in self.inplace_pattern:
            if inputs[i].type.dtype != out_scalar_types[o].dtype or shapes[i] != out_shape:
                raise TypeError(
                    f"{self}: output {o} cannot be computed in place of input {i} ({inputs[i].type})"
                )
        return pads, [TensorType(t.dtype, out_shape) for t in out_scalar_types]

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state.pop("_typing_cache", None)
        state.pop("_thunk_plans", None)
        return state

    def perform(self, node: Apply, inputs: Sequence[np.ndarray], output_storage: list[list[Any]]) -> None:
        self._check_runtime_broadcast(node, inputs)
        results = self.scalar_op.impl(*inputs)
        if self.nout == 1:
            results = (results,)
        for k, (cell, out, value) in enumerate(zip(output_storage, node.outputs, results)):
            value = np.asarray(value)
            if value.dtype != out.type.numpy_dtype:
                value = value.astype(out.type.numpy_dtype)
            if value.ndim != out.type.ndim:  # a scalar op ignored broadcasting (e.g. a constant)
                value = np.broadcast_to(value, np.broadcast_shapes(*(np.shape(i) for i in inputs))).copy()
            inplace = dict(self.inplace_pattern).get(k)
            if inplace is not None:
                target = inputs[inplace]
                np.copyto(target, value)
                value = target
            elif not value.flags.writeable or any(np.may_share_memory(value, i) for i in inputs):
                # outputs never alias inputs unless declared (identity returns its input,
                # second a read-only broadcast view of one), and can be written to later
                # (NumPy's imag of a real array is read-only)
                value = value.copy()
            cell[0] = value

    @staticmethod
    def _check_runtime_broadcast(node: Apply, inputs: Sequence[np.ndarray]) -> None:
        ndim = node.outputs[0].type.ndim
        for d in range(ndim):
            length = None
            for var, value in zip(node.inputs, inputs):
                if var.type.shape[d] == 1:
                    continue
                n = value.shape[d]
                if length is None:
                    length = n
                elif n != length:
                    shapes = ", ".join(f"input {j}: {np.shape(v)}" for j, v in enumerate(inputs))
                    hint = ""
                    if 1 in (n, length):
                        hint = (
                            " A length of 1 broadcasts only where the Type says so statically "
                            "(shape=(1, ...)); use specify_shape or a broadcastable input."
                        )
                    raise ValueError(f"Elemwise {node.op}: shape mismatch at dimension {d} ({shapes}).{hint}")

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list[tuple]:
        out_shape = []
        for d, static in enumerate(node.outputs[0].type.shape):
            if static is not None:
                out_shape.append(static)
                continue
            dim = next(s[d] for var, s in zip(node.inputs, shapes) if var.type.shape[d] != 1)
            out_shape.append(dim)
        return [tuple(out_shape) for _ in node.outputs]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        """The scalar op's pullback, lifted to tensors and summed over broadcast dimensions."""
        from arignote.tensor.elemwise_grad import _elemwise_pullback

        return _elemwise_pullback(self, inputs, outputs, output_grads)

    def pullback_in_pass(
        self,
        inputs: Sequence[Variable],
        outputs: Sequence[Variable],
        output_grads: Sequence[Variable],
        wanted: Sequence[bool],
        memo: dict,
    ) -> list:
        """Builds only the wanted terms, and shares replayed nodes through ``memo``."""
        if type(self).pullback is not Elemwise.pullback:  # a subclass with its own rule
            return self.pullback(inputs, outputs, output_grads)
        from arignote.tensor.elemwise_grad import _elemwise_pullback

        terms = _elemwise_pullback(self, inputs, outputs, output_grads, wanted, memo)
        return [t if w else None for t, w in zip(terms, wanted)]

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], eval_points: Sequence[Variable]
    ) -> list:
        from arignote.tensor.elemwise_grad import _elemwise_pushforward

        return _elemwise_pushforward(self, inputs, outputs, eval_points)

    def __str__(self) -> str:
        if self._name:
            return self._name
        # PyTensor 3's form: the scalar op's name capitalised (``Mul``, ``Int_div``, ``Eq``);
        # parametrised scalar ops (``Cast{int8}``, ``Composite{...}``) print as they are
        base = str(self.scalar_op)
        if "{" not in base:
            base = base.rstrip("_").capitalize()  # and_ -> And
        if self.inplace_pattern:
            base += "[" + ", ".join(f"{o}<-{i}" for o, i in self.inplace_pattern) + "]"
        return base


class DimShuffle(Op):
    """Reorder, add (``"x"``) and drop (length-1) dimensions; the output is a view.

    ``new_order`` lists, for each output dimension, the input dimension it comes from or
    ``"x"`` for a new broadcastable dimension. Input dimensions left out must be
    broadcastable.
    """

    __props__ = ("input_ndim", "new_order")
    view_map = {0: [0]}

    def __init__(self, *, input_ndim: int, new_order: Sequence[int | str]):
        if not isinstance(input_ndim, int) or input_ndim < 0:
            raise TypeError(f"input_ndim must be a non-negative int, got {input_ndim!r}")
        order = []
        for d in new_order:
            if d == "x":
                order.append("x")
            elif isinstance(d, (int, np.integer)) and 0 <= d < input_ndim:
                order.append(int(d))
            else:
                raise ValueError(
                    f"DimShuffle: {d!r} is neither 'x' nor a dimension of a {input_ndim}-d input"
                )
        kept = [d for d in order if d != "x"]
        if len(set(kept)) != len(kept):
            raise ValueError(f"DimShuffle: a dimension appears twice in {tuple(new_order)}")
        self.input_ndim = input_ndim
        self.new_order = tuple(order)
        self.shuffle = kept
        self.drop = [d for d in range(input_ndim) if d not in kept]
        self.augment = [i for i, d in enumerate(order) if d == "x"]
        self.is_transpose = not self.drop and not self.augment and kept != list(range(input_ndim))
        self.is_expand_dims = not self.drop and kept == sorted(kept) and bool(self.augment)
        self.is_squeeze = not self.augment and kept == sorted(kept) and bool(self.drop)
        self.is_left_expand_dims = self.is_expand_dims and self.augment == list(range(len(self.augment)))
        # new axes only after all of the input's, kept in order: x[..., None, None]
        self.is_right_expand_dims = self.is_expand_dims and self.new_order[:input_ndim] == tuple(
            range(input_ndim)
        )
        # the last two axes swapped, the others kept in order, maybe after new leading axes
        # (the pattern of .mT, which rewrites of matrix products look for)
        swapped_last = (*range(input_ndim - 2), input_ndim - 1, input_ndim - 2)
        self.is_left_expanded_matrix_transpose = (
            input_ndim >= 2 and self.new_order[len(self.augment) :] == swapped_last
        )
        self.is_matrix_transpose = self.is_left_expanded_matrix_transpose and not self.augment

    def make_node(self, x: Any) -> Apply:
        x = as_tensor(x)
        if x.type.ndim != self.input_ndim:
            raise TypeError(f"{self} expects a {self.input_ndim}-d input, got {x.type}")
        for d in self.drop:
            if x.type.shape[d] != 1:
                raise ValueError(
                    f"{self}: cannot drop dimension {d} of {x.type}: only dimensions of static length 1 can be dropped"
                )
        shape = tuple(1 if d == "x" else x.type.shape[d] for d in self.new_order)
        return Apply(self, [x], [TensorType(x.type.dtype, shape)()])

    def perform(self, node: Apply, inputs: Sequence[np.ndarray], output_storage: list[list[Any]]) -> None:
        (x,) = inputs
        res = x.transpose(self.shuffle + self.drop) if self.input_ndim else x
        if self.drop:
            res = res.reshape(res.shape[: len(self.shuffle)])
        if self.augment:
            res = np.expand_dims(res, self.augment)
        output_storage[0][0] = res if isinstance(res, np.ndarray) else np.asarray(res)

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list[tuple]:
        (ishape,) = shapes
        return [tuple(1 if d == "x" else ishape[d] for d in self.new_order)]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        """Shuffle the gradient back: new dimensions are dropped, dropped ones come back."""
        (g,) = output_grads
        order: list = ["x"] * self.input_ndim
        for out_dim, in_dim in enumerate(self.new_order):
            if in_dim != "x":
                order[in_dim] = out_dim
        g = as_tensor(g)
        return [DimShuffle(input_ndim=g.type.ndim, new_order=order)(g)]

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], eval_points: Sequence[Variable]
    ) -> list:
        from arignote.tensor.elemwise_grad import _dimshuffle_pushforward

        return _dimshuffle_pushforward(self, inputs, outputs, eval_points)

    def __str__(self) -> str:
        if self.is_expand_dims:
            axes = self.augment
            return f"ExpandDims{{axis={axes[0]}}}" if len(axes) == 1 else f"ExpandDims{{axes={tuple(axes)}}}"
        if self.is_squeeze:
            axes = self.drop
            return f"Squeeze{{axis={axes[0]}}}" if len(axes) == 1 else f"Squeeze{{axes={tuple(axes)}}}"
        if self.is_transpose:
            n = self.input_ndim
            if self.shuffle == [*range(n - 2), n - 1, n - 2]:
                return "MatrixTranspose"
            return f"Transpose{{axes={tuple(self.shuffle)}}}"
        return f"DimShuffle{{order=[{','.join(map(str, self.new_order))}]}}"


def normalize_axis(axis: Any, ndim: int, what: str = "axis") -> tuple[int, ...] | None:
    """``axis`` (None, an int, or a sequence) as a sorted tuple of non-negative axes.

    An axis out of range is NumPy's ``AxisError`` (a ValueError and an IndexError), a repeated
    one a ``ValueError``, each naming it and ``ndim``.
    """
    if axis is None:
        return None
    if isinstance(axis, Variable) and hasattr(axis, "data"):  # a constant: its value
        axis = np.asarray(axis.data).tolist()
    if isinstance(axis, (int, np.integer)):
        axes = [axis]
    elif isinstance(axis, (list, tuple, np.ndarray, range)):
        axes = list(axis)
    else:
        raise TypeError(f"{what} must be None, an int or a sequence of ints, got {axis!r}")
    out = []
    for a in axes:
        if isinstance(a, Variable):
            a = get_underlying_scalar_constant_value(a)
        if not isinstance(a, (int, np.integer)) or isinstance(a, bool):
            raise TypeError(f"{what} must be an int or a sequence of ints, got {a!r}")
        if not -ndim <= a < ndim:
            raise np.exceptions.AxisError(f"{what} {a} is out of bounds for a tensor of {ndim} dimension(s)")
        out.append(int(a) % ndim)
    if len(set(out)) != len(out):
        raise ValueError(f"repeated {what} in {tuple(axes)}")
    return tuple(sorted(out))


class CAReduce(Op):
    """Reduce ``axis`` (None: all) with a commutative and associative ``scalar_op``.

    ``dtype`` is the output dtype and ``acc_dtype`` the dtype the accumulation is done in
    (both default to the input's).
    """

    __props__ = ("scalar_op", "axis", "dtype", "acc_dtype", "upcast_discrete_output")

    def __init__(
        self,
        scalar_op: ScalarOp,
        axis: Any = None,
        dtype: Any = None,
        acc_dtype: Any = None,
        upcast_discrete_output: bool = False,
    ):
        if not isinstance(scalar_op, ScalarOp):
            raise TypeError(f"CAReduce needs a ScalarOp, got {scalar_op!r}")
        if scalar_op.nin not in (-1, 2) or scalar_op.nout != 1:
            raise ValueError(f"CAReduce needs a binary scalar op with one output, got {scalar_op}")
        self.scalar_op = scalar_op
        self.axis = (
            None
            if axis is None
            else tuple(sorted(int(a) for a in ([axis] if isinstance(axis, (int, np.integer)) else axis)))
        )
        # dtype names ("float64"), so that "floatX" or np.float64 compare and compute alike
        self.dtype = None if dtype is None else get_scalar_type(dtype).dtype
        self.acc_dtype = None if acc_dtype is None else get_scalar_type(acc_dtype).dtype
        self.upcast_discrete_output = upcast_discrete_output

    def _output_dtype(self, idtype: str) -> str:
        return self.dtype or idtype

    def make_node(self, x: Any) -> Apply:
        x = as_tensor(x)
        if self.axis is not None:
            axis = normalize_axis(self.axis, x.type.ndim)
            if axis != self.axis:  # negative axes: the node gets the op with them resolved
                op = copy.copy(self)
                op.axis = axis
                return op.make_node(x)
        # A float or complex accumulator for bool or integer input is accepted whatever its
        # precision, as PyTensor's (the user asked for inexact sums); otherwise it must be an upcast.
        discrete_in_continuous = (
            self.acc_dtype is not None
            and np.dtype(x.type.dtype).kind in "biu"
            and np.dtype(self.acc_dtype).kind in "fc"
        )
        if (
            self.acc_dtype is not None
            and not discrete_in_continuous
            and upcast(x.type.dtype, self.acc_dtype) != self.acc_dtype
        ):
            raise TypeError(
                f"{self}: cannot accumulate {x.type} in acc_dtype {self.acc_dtype}: precision would "
                f"be lost; use an acc_dtype at least as precise as {x.type.dtype}, or dtype= to "
                "choose the output dtype"
            )
        axis = range(x.type.ndim) if self.axis is None else self.axis
        shape = tuple(s for d, s in enumerate(x.type.shape) if d not in axis)
        dtype = self._output_dtype(x.type.dtype)
        return Apply(self, [x], [TensorType(dtype, shape)()])

    def perform(self, node: Apply, inputs: Sequence[np.ndarray], output_storage: list[list[Any]]) -> None:
        (x,) = inputs
        out_dtype = node.outputs[0].type.numpy_dtype
        axis = self.axis
        ufunc = self.scalar_op.ufunc
        if self.scalar_op.identity is None and x.size == 0:
            axes = range(x.ndim) if axis is None else axis
            empty = [a for a in axes if x.shape[a] == 0]
            if empty:
                raise ValueError(
                    f"{self}: cannot reduce the empty axis {empty[0]} of an array of shape {x.shape}: "
                    f"{self.scalar_op} has no identity value"
                )
        if ufunc is not None:
            res = ufunc.reduce(x, axis=axis, dtype=self.acc_dtype or None)
        else:
            res = self._reduce_generic(x, axis)
        res = np.asarray(res).astype(out_dtype, copy=False)
        if np.may_share_memory(res, x):  # no axes reduced by the generic loop: x itself
            res = res.copy()
        output_storage[0][0] = res

    def _reduce_generic(self, x: np.ndarray, axis: tuple | None) -> np.ndarray:
        axes = tuple(range(x.ndim)) if axis is None else axis
        res = x
        for a in sorted(axes, reverse=True):
            if res.shape[a] == 0:
                if self.scalar_op.identity is None:
                    raise ValueError(
                        f"{self}: cannot reduce an empty axis {a}: {self.scalar_op} has no identity"
                    )
                res = np.full(res.shape[:a] + res.shape[a + 1 :], self.scalar_op.identity, dtype=res.dtype)
                continue
            acc = np.take(res, 0, axis=a)
            for k in range(1, res.shape[a]):
                acc = self.scalar_op.impl(acc, np.take(res, k, axis=a))
            res = np.asarray(acc)
        return res

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list[tuple]:
        (ishape,) = shapes
        axis = range(node.inputs[0].type.ndim) if self.axis is None else self.axis
        return [tuple(s for d, s in enumerate(ishape) if d not in axis)]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        """Reductions define their own rule (sum, prod, max, min); others have none."""
        from arignote.tensor.elemwise_grad import _careduce_pullback

        return _careduce_pullback(self, inputs, outputs, output_grads)

    def pullback_in_pass(
        self,
        inputs: Sequence[Variable],
        outputs: Sequence[Variable],
        output_grads: Sequence[Variable],
        wanted: Sequence[bool],
        memo: dict,
    ) -> list:
        """Shares the nodes of the rule through ``memo`` (see :meth:`Op.pullback_in_pass`)."""
        if type(self).pullback is not CAReduce.pullback:  # a subclass with its own rule
            return self.pullback(inputs, outputs, output_grads)
        from arignote.tensor.elemwise_grad import _careduce_pullback

        return _careduce_pullback(self, inputs, outputs, output_grads, memo)

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], eval_points: Sequence[Variable]
    ) -> list:
        from arignote.tensor.elemwise_grad import _careduce_pushforward

        return _careduce_pushforward(self, inputs, outputs, eval_points)

    def _axis_str(self) -> str:
        if self.axis is None:
            return "axes=None"
        return f"axis={self.axis[0]}" if len(self.axis) == 1 else f"axes={list(self.axis)}"

    def __str__(self) -> str:
        name = type(self).__name__
        if name == "CAReduce":
            return f"CAReduce{{{self.scalar_op}, {self._axis_str()}}}"
        return f"{name}{{{self._axis_str()}}}"


# --- what get_underlying_scalar_constant_value sees through ---------------------------------


@register_constant_rule(DimShuffle)
def _constant_through_dimshuffle(op: DimShuffle, node: Apply, look: Any) -> Variable:
    return node.inputs[0]  # the same values, laid out differently


@register_constant_rule(Elemwise)
def _constant_of_elemwise(op: Elemwise, node: Apply, look: Any) -> Any:
    """The scalar op applied to the inputs' static values (casts, arithmetic)."""
    if not look.elemwise or op.nout != 1 or not node.inputs or look.max_recur <= 0:
        return None
    values = [look.value_of(i) for i in node.inputs]
    with np.errstate(all="ignore"):
        out = np.asarray(op.scalar_op.impl(*values), dtype=node.outputs[0].type.dtype)
    return out.reshape(())[()]


# --- batching rules (vectorize_graph's node step) ---------------------------------------


@register_batch_rule(Elemwise)
def _batch_elemwise(op: Elemwise, node: Apply, args: list, flags: list) -> list:
    # the unbatched inputs are left-padded by Elemwise: they broadcast along the batch
    eop = Elemwise(op.scalar_op) if op.inplace_pattern else op
    return [(o, True) for o in eop(*args, return_list=True)]


@register_batch_rule(DimShuffle)
def _batch_dimshuffle(op: DimShuffle, node: Apply, args: list, flags: list) -> list:
    order = [0, *("x" if d == "x" else d + 1 for d in op.new_order)]
    return [(DimShuffle(input_ndim=op.input_ndim + 1, new_order=order)(args[0]), True)]


@register_batch_rule(CAReduce)
def _batch_careduce(op: CAReduce, node: Apply, args: list, flags: list) -> list:
    (x,) = args
    new = copy.copy(op)
    new.axis = tuple(range(1, x.type.ndim)) if op.axis is None else tuple(a + 1 for a in op.axis)
    return [(new(x), True)]
