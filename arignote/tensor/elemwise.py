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
from arignote.scalar.op import ScalarOp
from arignote.scalar.type import get_scalar_type, upcast
from arignote.tensor.type import TensorType

__all__ = ["Elemwise", "DimShuffle", "CAReduce", "normalize_axis", "as_tensor"]


def as_tensor(x: Any) -> Variable:
    if isinstance(getattr(x, "type", None), TensorType):
        return x  # the common case, without the cost of an import
    from arignote.tensor.basic import as_tensor_variable

    return as_tensor_variable(x)


def _static_length(lengths: Sequence[int | None], dim: int, inputs: Sequence[Variable]) -> int | None:
    known = {s for s in lengths if s is not None and s != 1}
    if len(known) > 1:
        detail = ", ".join(
            f"input {i} ({v}: {v.type}) has {s}"
            for i, (v, s) in enumerate(zip(inputs, lengths))
            if s is not None
        )
        raise ValueError(f"Incompatible static shapes at dimension {dim}: {detail}")
    if known:
        return known.pop()
    if lengths and all(s == 1 for s in lengths):
        return 1
    return None


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

    def make_thunk(
        self,
        node: Apply,
        storage_map: dict,
        compute_map: dict | None,
        no_recycling: Sequence[Variable],
        impl: str | None = None,
    ) -> Any:
        """A thunk computing what :meth:`perform` computes, with the per-node decisions
        taken here once (see :func:`_elemwise_thunk`); :meth:`perform` stays the
        definition (DebugMode checks the thunk against it)."""
        if not _fast_thunk_allowed(self, Elemwise, node, no_recycling, impl):
            return super().make_thunk(node, storage_map, compute_map, no_recycling, impl)
        self.prepare_node(node, storage_map, compute_map, "py")
        return _elemwise_thunk(self, node, storage_map, compute_map)

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
        return _elemwise_pullback(self, inputs, outputs, output_grads)

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

    def make_thunk(
        self,
        node: Apply,
        storage_map: dict,
        compute_map: dict | None,
        no_recycling: Sequence[Variable],
        impl: str | None = None,
    ) -> Any:
        """A thunk making :meth:`perform`'s view, its steps chosen once for the node."""
        if not _fast_thunk_allowed(self, DimShuffle, node, no_recycling, impl):
            return super().make_thunk(node, storage_map, compute_map, no_recycling, impl)
        self.prepare_node(node, storage_map, compute_map, "py")
        return _dimshuffle_thunk(self, node, storage_map, compute_map)

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

    An axis out of range or repeated is a ``ValueError`` naming it and ``ndim``.
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
            from arignote.tensor.basic import get_underlying_scalar_constant_value

            a = get_underlying_scalar_constant_value(a)
        if not isinstance(a, (int, np.integer)) or isinstance(a, bool):
            raise TypeError(f"{what} must be an int or a sequence of ints, got {a!r}")
        if not -ndim <= a < ndim:
            raise ValueError(f"{what} {a} is out of bounds for a tensor of {ndim} dimension(s)")
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
        if self.acc_dtype is not None and upcast(x.type.dtype, self.acc_dtype) != self.acc_dtype:
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

    def make_thunk(
        self,
        node: Apply,
        storage_map: dict,
        compute_map: dict | None,
        no_recycling: Sequence[Variable],
        impl: str | None = None,
    ) -> Any:
        """A thunk calling the ufunc's ``reduce`` directly (when the scalar op has a
        ufunc), with what :meth:`perform` looks up resolved once for the node."""
        if not isinstance(self.scalar_op.ufunc, np.ufunc) or not _fast_thunk_allowed(
            self, CAReduce, node, no_recycling, impl
        ):
            return super().make_thunk(node, storage_map, compute_map, no_recycling, impl)
        self.prepare_node(node, storage_map, compute_map, "py")
        return _careduce_thunk(self, node, storage_map, compute_map)

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
        return _careduce_pullback(self, inputs, outputs, output_grads)

    def _axis_str(self) -> str:
        if self.axis is None:
            return "axes=None"
        return f"axis={self.axis[0]}" if len(self.axis) == 1 else f"axes={list(self.axis)}"

    def __str__(self) -> str:
        name = type(self).__name__
        if name == "CAReduce":
            return f"CAReduce{{{self.scalar_op}, {self._axis_str()}}}"
        return f"{name}{{{self._axis_str()}}}"


# --- thunks -------------------------------------------------------------------------------
# A compiled function calls each node's thunk on every call, and on small arrays the
# Python glue around the NumPy call is the cost (DESIGN.md section 3). So the thunks of
# Elemwise, DimShuffle and CAReduce take per node, once, the decisions ``perform`` takes
# per call: which dimensions need the runtime broadcast check (none where the static
# shapes settle it), whether the scalar op is a NumPy ufunc that can be called as it is
# (its output dtype known from the input dtypes, its result fresh, so no cast and no
# aliasing check), the in-place targets. Anything unusual at run time (a value that is not
# an ndarray, a result of another dtype) goes through ``perform``'s own steps, so the
# thunk computes what ``perform`` does. Each thunk keeps the storage-cell protocol: it
# sets its output cells, and the compute flags when the linker gives a compute_map.

_ndarray = np.ndarray


def _out_ellipsis_supported() -> bool:
    """NumPy >= 2.3: ``ufunc(..., out=...)`` returns a 0-d array rather than a scalar."""
    try:
        return isinstance(np.add(np.zeros(()), 0.0, out=...), np.ndarray)
    except TypeError:
        return False


#: whether the thunks pass ``out=...`` where a result is 0-d (else NumPy gives a scalar,
#: which ``perform``'s steps turn into a 0-d array)
_OUT_ELLIPSIS = _out_ellipsis_supported()


def _fast_thunk_allowed(
    op: Op, base: type, node: Apply, no_recycling: Sequence[Variable], impl: str | None
) -> bool:
    """Whether ``op`` (an instance of ``base``) may get the specialised thunk: its
    ``perform`` is ``base``'s (a subclass may redefine it), it takes no params, and no
    output is to be cleared before each run (else: ``Op.make_thunk``)."""
    if impl not in (None, "py") or type(op).perform is not base.perform or hasattr(op, "get_params"):
        return False
    return not any(v in no_recycling for v in node.outputs) if no_recycling else True


def _with_attrs(thunk: Any, op: Op, in_cells: list[list], out_cells: list[list]) -> Any:
    """``thunk`` with the attributes ``Op.make_py_thunk`` gives its thunks. The builders
    below add ``sets_outputs`` to the thunks that never leave an output cell empty (the VM
    need not check them) and ``fresh_outputs`` to those whose outputs are always new
    arrays (a Function need not check them for aliasing)."""
    thunk.inputs = in_cells
    thunk.outputs = out_cells
    thunk.perform = op.perform
    thunk.lazy = False
    return thunk


def _done_flags(node: Apply, compute_map: dict | None) -> list[list]:
    """The outputs' compute flags (a scratch cell each when there is no compute_map)."""
    if compute_map is None:
        return [[False] for _ in node.outputs]
    return [compute_map[v] for v in node.outputs]


def _may_alias(value: np.ndarray, inputs: Sequence[Any]) -> bool:
    """``any(np.may_share_memory(value, i) for i in inputs)``; two distinct ndarrays that
    both own their memory (``base is None``) cannot share it, which spares the costlier
    check."""
    for i in inputs:
        if i is not value and value.base is None and type(i) is _ndarray and i.base is None:
            continue
        if np.may_share_memory(value, i):
            return True
    return False


def _finish(value: Any, inputs: Sequence[Any], dtype: np.dtype, ndim: int, target: int | None) -> np.ndarray:
    """One output of ``Elemwise.perform`` from the scalar op's result: the output dtype and
    rank, written into the in-place target, else never aliasing an input and writeable."""
    if type(value) is not _ndarray:
        value = np.asarray(value)
    if value.dtype != dtype:
        value = value.astype(dtype)
    if value.ndim != ndim:  # a scalar op ignored broadcasting (e.g. a constant)
        value = np.broadcast_to(value, np.broadcast_shapes(*(np.shape(i) for i in inputs))).copy()
    if target is not None:
        dst = inputs[target]
        np.copyto(dst, value)
        return dst
    if not value.flags.writeable or _may_alias(value, inputs):
        value = value.copy()
    return value


def _broadcast_checks(node: Apply) -> list[tuple[int, list[int]]]:
    """``(dimension, inputs)`` pairs the runtime broadcast check must compare: the inputs
    not statically 1 there, where there are two or more and not all lengths are known
    (known lengths agree: ``make_node`` checked them)."""
    shapes = [v.type.shape for v in node.inputs]
    checks = []
    for d in range(node.outputs[0].type.ndim):
        part = [j for j, sh in enumerate(shapes) if sh[d] != 1]
        if len(part) > 1 and any(shapes[j][d] is None for j in part):
            checks.append((d, part))
    return checks


def _elemwise_plan(op: Elemwise, node: Apply) -> tuple[tuple | None, list]:
    """``(direct, checks)``: :func:`_broadcast_checks` and, when the scalar op can be
    called as a NumPy ufunc (:func:`_direct_ufunc`), ``(variant, function, output dtype,
    output ndim, checked dimensions)`` for :func:`_direct_thunk`. Memoised on the op per
    input and output Types (the nodes of one op mostly share them)."""
    key = (
        id(op.scalar_op),
        op.inplace_pattern,
        len(node.inputs),
        *[(t.dtype, t.shape) for t in [v.type for v in node.inputs] + [v.type for v in node.outputs]],
    )
    plans = op.__dict__.get("_thunk_plans")
    if plans is None:
        plans = op.__dict__["_thunk_plans"] = {}
    plan = plans.get(key)
    if plan is None:
        if len(plans) > 512:
            plans.clear()
        checks = _broadcast_checks(node)
        direct = _direct_ufunc(op, node)
        if direct is not None:
            kind, fn = direct
            otype = node.outputs[0].type
            ondim = len(otype.shape)
            dims = tuple(d for d, _ in checks)
            n = len(node.inputs)
            # ``out=...`` (a 0-d array, not a NumPy scalar) only where the result is 0-d:
            # an ``out`` argument costs a little on every call
            zero_d = ondim == 0 and _OUT_ELLIPSIS
            if kind != "ufunc" or n > 2:
                variant = kind
            elif zero_d:
                variant = f"u{n}_0d"
            elif n == 1 or not checks:
                variant = f"u{n}"
            else:  # two inputs: compare whole shapes when every dimension needs it
                variant = "u2_all" if dims == tuple(range(ondim)) else "u2_dims"
            direct = (variant, fn, otype.numpy_dtype, ondim, dims, zero_d)
        plan = plans[key] = (direct, checks)
    return plan


_psb: Any = None  # arignote.scalar.basic, once imported


def _direct_ufunc(op: Elemwise, node: Apply) -> tuple[str, Any] | None:
    """``(kind, function)`` when the scalar op's ``impl`` on these input dtypes is one call
    of a NumPy ufunc giving the output dtype (``"ufunc"``, or ``"chain"`` for an n-ary add
    or multiply done pairwise), or an ``astype`` (``"cast"``); else None."""
    global _psb
    if _psb is None:
        from arignote.scalar import basic

        _psb = basic
    psb = _psb
    sop = op.scalar_op
    if op.nout != 1 or op.inplace_pattern or "impl" in sop.__dict__:
        return None
    impl = type(sop).impl
    in_dtypes = [v.type.numpy_dtype for v in node.inputs]
    out_dtype = node.outputs[0].type.numpy_dtype
    n = len(in_dtypes)
    if impl is psb.Cast.impl:
        return ("cast", out_dtype) if sop.o_type.dtype == out_dtype.name else None
    ufunc = sop.ufunc
    kind = "ufunc"
    if impl is psb.TrueDiv.impl:
        if all(dt.kind in "biu" for dt in in_dtypes):
            return None
        ufunc = np.true_divide
    elif impl is psb.FloatUnary.impl:
        if in_dtypes[0].kind not in "fc":
            return None
    elif impl is psb.Add.impl or impl is psb.Mul.impl:
        if n < 2:
            return None
        if n > 2:
            kind = "chain"
    elif impl is not ScalarOp.impl:  # (the default impl: ufunc(*inputs))
        return None
    if not isinstance(ufunc, np.ufunc) or ufunc.nout != 1 or ufunc.nin != min(n, 2 if kind == "chain" else n):
        return None
    try:
        if kind == "chain":
            dt = in_dtypes[0]
            for other in in_dtypes[1:]:
                dt = ufunc.resolve_dtypes((dt, other, None))[-1]
        else:
            dt = ufunc.resolve_dtypes((*in_dtypes, None))[-1]
    except (TypeError, ValueError, RuntimeError):  # no loop for these dtypes (numpy's errors)
        return None
    return (kind, ufunc) if dt == out_dtype else None


def _elemwise_thunk(op: Elemwise, node: Apply, storage_map: dict, compute_map: dict | None) -> Any:
    in_cells = [storage_map[v] for v in node.inputs]
    out_cells = [storage_map[v] for v in node.outputs]
    flags = _done_flags(node, compute_map)
    direct, checks = _elemwise_plan(op, node)
    check_broadcast = op._check_runtime_broadcast
    check = None
    if checks:

        def check(vals: list) -> None:
            for d, (first, *rest) in checks:
                length = vals[first].shape[d]
                for j in rest:
                    if vals[j].shape[d] != length:
                        check_broadcast(node, vals)  # raises, naming the inputs and shapes
                        return

    if direct is None:
        thunk = _impl_thunk(op, node, in_cells, out_cells, flags, checks, check)
    else:
        thunk = _direct_thunk(op, node, direct, in_cells, out_cells, flags, checks, check, check_broadcast)
        # each variant sets its one output (or raises), a new array: a ufunc's result, or
        # after perform's steps a copy where it could alias an input
        thunk.sets_outputs = thunk.fresh_outputs = True
    return _with_attrs(thunk, op, in_cells, out_cells)


def _direct_thunk(
    op: Elemwise,
    node: Apply,
    direct: tuple,
    in_cells: list[list],
    out_cells: list[list],
    flags: list[list],
    checks: list,
    check: Any | None,
    check_broadcast: Any,
) -> Any:
    """The Elemwise thunk calling a NumPy ufunc (or ``astype``) directly, in the variant
    :func:`_elemwise_plan` chose for its number of inputs, the broadcast checks it needs
    and the rank of its output."""
    variant, fn, odt, ondim, dims, zero_d = direct
    (o0,) = out_cells
    (f0,) = flags

    if variant == "cast":
        (i0,) = in_cells

        def thunk() -> None:
            a = i0[0]
            if type(a) is _ndarray:
                o0[0] = a.astype(odt)
            else:
                o0[0] = _finish(op.scalar_op.impl(a), [a], odt, ondim, None)
            f0[0] = True

        return thunk

    if variant == "u1_0d":
        (i0,) = in_cells

        def thunk() -> None:
            a = i0[0]
            v = fn(a, out=...)
            if type(v) is not _ndarray or v.dtype is not odt:
                v = _finish(v, [a], odt, ondim, None)
            o0[0] = v
            f0[0] = True

        return thunk

    if variant == "u1":
        (i0,) = in_cells

        def thunk() -> None:
            a = i0[0]
            v = fn(a)
            if type(v) is not _ndarray or v.dtype is not odt:
                v = _finish(v, [a], odt, ondim, None)
            o0[0] = v
            f0[0] = True

        return thunk

    if variant == "u2_0d":
        i0, i1 = in_cells

        def thunk() -> None:
            a = i0[0]
            b = i1[0]
            v = fn(a, b, out=...)
            if type(v) is not _ndarray or v.dtype is not odt:
                v = _finish(v, [a, b], odt, ondim, None)
            o0[0] = v
            f0[0] = True

        return thunk

    if variant == "u2":
        i0, i1 = in_cells

        def thunk() -> None:
            a = i0[0]
            b = i1[0]
            v = fn(a, b)
            if type(v) is not _ndarray or v.dtype is not odt:
                v = _finish(v, [a, b], odt, ondim, None)
            o0[0] = v
            f0[0] = True

        return thunk

    if variant == "u2_all":  # both inputs checked at every dimension: the whole shapes
        i0, i1 = in_cells

        def thunk() -> None:
            a = i0[0]
            b = i1[0]
            if a.shape != b.shape:
                check_broadcast(node, [a, b])
            v = fn(a, b)
            if type(v) is not _ndarray or v.dtype is not odt:
                v = _finish(v, [a, b], odt, ondim, None)
            o0[0] = v
            f0[0] = True

        return thunk

    if variant == "u2_dims":
        i0, i1 = in_cells

        def thunk() -> None:
            a = i0[0]
            b = i1[0]
            sa = a.shape
            sb = b.shape
            for d in dims:
                if sa[d] != sb[d]:
                    check_broadcast(node, [a, b])
            v = fn(a, b)
            if type(v) is not _ndarray or v.dtype is not odt:
                v = _finish(v, [a, b], odt, ondim, None)
            o0[0] = v
            f0[0] = True

        return thunk

    if variant == "ufunc":  # three or more inputs

        def thunk() -> None:
            vals = [c[0] for c in in_cells]
            if checks:
                check(vals)
            v = fn(*vals, out=...) if zero_d else fn(*vals)
            if type(v) is not _ndarray or v.dtype is not odt:
                v = _finish(v, vals, odt, ondim, None)
            o0[0] = v
            f0[0] = True

        return thunk

    # "chain": ((a + b) + c) + ..., as functools.reduce does it
    def thunk() -> None:
        vals = [c[0] for c in in_cells]
        if checks:
            check(vals)
        v = vals[0]
        for x in vals[1:-1]:
            v = fn(v, x)
        v = fn(v, vals[-1], out=...) if zero_d else fn(v, vals[-1])
        if type(v) is not _ndarray or v.dtype is not odt:
            v = _finish(v, vals, odt, ondim, None)
        o0[0] = v
        f0[0] = True

    return thunk


def _impl_thunk(
    op: Elemwise,
    node: Apply,
    in_cells: list[list],
    out_cells: list[list],
    flags: list[list],
    checks: list,
    check: Any | None,
) -> Any:
    """The Elemwise thunk for any other scalar op: its impl, then perform's steps on each
    result."""
    out_types = [v.type for v in node.outputs]
    impl = op.scalar_op.impl
    inplace = dict(op.inplace_pattern)
    finish = [
        (cell, t.numpy_dtype, t.ndim, inplace.get(k)) for k, (cell, t) in enumerate(zip(out_cells, out_types))
    ]
    single = op.nout == 1

    def thunk() -> None:
        vals = [c[0] for c in in_cells]
        if checks:
            check(vals)
        results = impl(*vals)
        if single:
            results = (results,)
        for (cell, dtype, ndim, target), value in zip(finish, results):
            cell[0] = _finish(value, vals, dtype, ndim, target)
        for flag in flags:
            flag[0] = True

    return thunk


def _dimshuffle_thunk(op: DimShuffle, node: Apply, storage_map: dict, compute_map: dict | None) -> Any:
    in_cells = [storage_map[v] for v in node.inputs]
    (i0,) = in_cells
    out_cells = [storage_map[v] for v in node.outputs]
    (o0,) = out_cells
    (f0,) = _done_flags(node, compute_map)
    perform = op.perform
    perm = tuple(op.shuffle + op.drop)
    n_keep = len(op.shuffle)
    identity = op.shuffle == list(range(op.input_ndim))
    n_aug = len(op.augment)

    if op.input_ndim == 0 and not op.augment:  # perform hands a 0-d input on as it is

        def view(x: np.ndarray) -> np.ndarray:
            return x

    elif op.augment and (op.input_ndim == 0 or (identity and not op.drop)):
        # nothing moves: add the new length-1 dimensions (``np.expand_dims`` is a reshape)
        if op.augment == list(range(n_aug)):  # on the left
            ones = (1,) * n_aug

            def view(x: np.ndarray) -> np.ndarray:
                return x.reshape(ones + x.shape)

        elif op.augment == list(range(op.input_ndim, op.input_ndim + n_aug)):  # on the right
            ones = (1,) * n_aug

            def view(x: np.ndarray) -> np.ndarray:
                return x.reshape(x.shape + ones)

        else:
            order = [None if d == "x" else d for d in op.new_order]

            def view(x: np.ndarray) -> np.ndarray:
                sh = x.shape
                return x.reshape([1 if d is None else sh[d] for d in order])

    elif not op.drop and not op.augment:

        def view(x: np.ndarray) -> np.ndarray:
            return x.transpose(perm)

    elif not op.augment:

        def view(x: np.ndarray) -> np.ndarray:
            res = x.transpose(perm)
            return res.reshape(res.shape[:n_keep])

    else:

        def view(x: np.ndarray) -> np.ndarray:
            res = x.transpose(perm)
            if op.drop:
                res = res.reshape(res.shape[:n_keep])
            return np.expand_dims(res, op.augment)

    def thunk() -> None:
        x = i0[0]
        if type(x) is _ndarray:
            o0[0] = view(x)
        else:
            perform(node, [x], out_cells)  # (which sets the output, or raises)
        f0[0] = True

    thunk.sets_outputs = True
    return _with_attrs(thunk, op, in_cells, out_cells)


def _careduce_thunk(op: CAReduce, node: Apply, storage_map: dict, compute_map: dict | None) -> Any:
    in_cells = [storage_map[v] for v in node.inputs]
    (i0,) = in_cells
    out_cells = [storage_map[v] for v in node.outputs]
    (o0,) = out_cells
    (f0,) = _done_flags(node, compute_map)
    perform = op.perform
    reduce = op.scalar_op.ufunc.reduce
    axis = op.axis
    acc = op.acc_dtype or None
    odt = node.outputs[0].type.numpy_dtype
    zero_d = node.outputs[0].type.ndim == 0 and _OUT_ELLIPSIS
    no_identity = op.scalar_op.identity is None

    def thunk() -> None:
        x = i0[0]
        if type(x) is not _ndarray or (no_identity and x.size == 0):
            perform(node, [x], out_cells)  # (an empty reduction without identity raises)
        else:
            res = reduce(x, axis, acc, out=...) if zero_d else reduce(x, axis, acc)
            if type(res) is not _ndarray or res.dtype is not odt:
                res = np.asarray(res).astype(odt, copy=False)
                if np.may_share_memory(res, x):
                    res = res.copy()
            o0[0] = res
        f0[0] = True

    # perform too sets its output (or raises), and copies a result that could alias x
    thunk.sets_outputs = thunk.fresh_outputs = True
    return _with_attrs(thunk, op, in_cells, out_cells)


# --- gradients ----------------------------------------------------------------------------
# Elemwise: the scalar op's pullback is built once on scalar placeholders for each
# (scalar op, dtypes, which terms are wanted) and kept as a template: a list of scalar
# steps over numbered slots. Differentiating a node replays the template with the
# tensors in the slots, each step through one shared Elemwise per scalar op (so its
# typing cache serves every replay), then sums each term over the dimensions its input
# was broadcast along. The same rule serves fused Composites.
#
# ``memo`` (a dict the reverse pass keeps for one ``grad`` call) makes the replays share
# nodes: a step with the same scalar op and the same argument Variables is built once,
# so ``b * b`` gives one ``g * b`` for both of its inputs, not two.


_LIFTED: dict = {}  # scalar op -> the Elemwise that applies it
_TEMPLATES: dict = {}  # id(scalar op) -> (scalar op, {(dtypes, wanted terms): _Template})
_NO_GRAD = "no grad"  # a template slot kind: a DisconnectedType term


def _lifted(scalar_op: ScalarOp) -> Elemwise:
    op = _LIFTED.get(scalar_op)
    if op is None:
        op = _LIFTED[scalar_op] = Elemwise(scalar_op)
    return op


class _Template:
    """A scalar pullback as replayable steps.

    Slots ``0 .. n_in + n_out + n_g - 1`` hold the inputs, outputs and output gradients;
    then come constants (``consts``: ``(slot, tensor constant)``) and step results.
    ``steps``: ``(the Elemwise applying a scalar op, argument slots, result slots)``. ``results[i]``: the slot of
    input ``i``'s term, ``_NO_GRAD``, a ``NullType`` (an undefined term) or ``None``
    (not asked for).
    """

    __slots__ = ("consts", "n_slots", "results", "steps")

    def __init__(self, consts: list, n_slots: int, results: list, steps: list):
        self.consts, self.n_slots, self.results, self.steps = consts, n_slots, results, steps


def _build_template(
    scalar_op: ScalarOp,
    in_dtypes: tuple,
    out_dtypes: tuple,
    g_dtypes: tuple,
    wanted: tuple,
) -> _Template:
    from arignote.gradient import _is_disconnected, _is_null, disconnected_type
    from arignote.graph.traversal import io_toposort
    from arignote.tensor.basic import constant

    s_inputs = [get_scalar_type(d)() for d in in_dtypes]
    s_outputs = [get_scalar_type(d)() for d in out_dtypes]
    s_grads = [disconnected_type() if d is None else get_scalar_type(d)() for d in g_dtypes]
    s_terms = scalar_op.pullback(s_inputs, s_outputs, s_grads)
    if not isinstance(s_terms, (list, tuple)) or len(s_terms) != len(s_inputs):
        n = len(s_terms) if isinstance(s_terms, (list, tuple)) else type(s_terms).__name__
        raise ValueError(f"{scalar_op}.pullback must return one term per input ({len(s_inputs)}), got {n}")
    slot: dict = {}
    for k, v in enumerate((*s_inputs, *s_outputs, *s_grads)):
        if not _is_disconnected(v):
            slot[v] = k
    n = len(s_inputs) + len(s_outputs) + len(s_grads)
    consts: list = []

    def const_slot(v: Variable) -> int:
        nonlocal n
        if v.owner is not None or not hasattr(v, "data"):
            raise ValueError(
                f"{scalar_op}.pullback used {v}, which is neither one of its inputs nor a constant"
            )
        slot[v] = k = n
        n += 1
        consts.append((k, constant(v.data, dtype=v.type.dtype)))
        return k

    results: list = []
    roots = []
    for i, t in enumerate(s_terms):
        if not wanted[i]:
            results.append(None)
        elif t is None or _is_disconnected(t):
            results.append(_NO_GRAD)
        elif _is_null(t):
            results.append(t.type)
        elif isinstance(t, Variable):
            results.append(t)
            roots.append(t)
        else:
            raise TypeError(
                f"{scalar_op}.pullback returned {type(t).__name__} {t!r} for input {i}; expected a Variable"
            )
    steps = []
    for node in io_toposort(list(slot), roots):
        args = tuple(slot[v] if v in slot else const_slot(v) for v in node.inputs)
        outs = tuple(range(n, n + len(node.outputs)))
        n += len(node.outputs)
        slot.update(zip(node.outputs, outs))
        steps.append((_lifted(node.op), args, outs))
    for i, r in enumerate(results):
        if isinstance(r, Variable):
            results[i] = slot[r] if r in slot else const_slot(r)
    return _Template(consts, n, results, steps)


def _template(
    op: Elemwise, inputs: Sequence, outputs: Sequence, output_grads: Sequence, wanted: tuple
) -> _Template:
    from arignote.gradient import _is_disconnected

    g_dtypes = tuple(None if _is_disconnected(g) else g.type.dtype for g in output_grads)
    key = (
        tuple(i.type.dtype for i in inputs),
        tuple(o.type.dtype for o in outputs),
        g_dtypes,
        wanted,
    )
    sop = op.scalar_op
    # keyed by identity (hashing an Op's props costs more); the entry keeps the op alive
    entry = _TEMPLATES.get(id(sop))
    if entry is None or entry[0] is not sop:
        entry = _TEMPLATES[id(sop)] = (sop, {})
    tpl = entry[1].get(key)
    if tpl is None:
        tpl = entry[1][key] = _build_template(sop, *key)
    return tpl


def _replay(
    tpl: _Template, inputs: Sequence, outputs: Sequence, output_grads: Sequence, memo: dict | None
) -> list:
    """The template's steps on tensors: the full-shape terms (not summed over broadcast
    dimensions), one per input (``None`` where the template has none)."""
    vals: list = [*inputs, *outputs, *output_grads]
    vals.extend([None] * (tpl.n_slots - len(vals)))
    for k, c in tpl.consts:
        vals[k] = c
    for eop, args, outs in tpl.steps:
        res = _apply(eop, [vals[k] for k in args], memo)
        for k, r in zip(outs, res):
            vals[k] = r
    return [r if isinstance(r, int) else None for r in tpl.results], vals


def _apply(eop: Elemwise, args: list, memo: dict | None) -> list:
    """``eop(*args)`` (its outputs), reusing a node built earlier in this ``grad`` call
    for the same scalar op and arguments."""
    if memo is None:
        return eop(*args, return_list=True)
    nd = max(v.type.ndim for v in args)
    for i, v in enumerate(args):
        if v.type.ndim < nd:  # pad here (once per grad call), not in make_node
            args[i] = _padded(v, nd, memo)
    key = (id(eop.scalar_op), *args)
    res = memo.get(key)
    if res is None:
        res = memo[key] = eop(*args, return_list=True)
    return res


def _padded(v: Variable, ndim: int, memo: dict) -> Variable:
    key = ("pad", v, ndim)
    out = memo.get(key)
    if out is None:
        nd = v.type.ndim
        out = memo[key] = DimShuffle(input_ndim=nd, new_order=["x"] * (ndim - nd) + list(range(nd)))(v)
    return out


def _elemwise_pullback(
    op: Elemwise,
    inputs: Sequence[Variable],
    outputs: Sequence[Variable],
    output_grads: Sequence[Variable],
    wanted: Sequence[bool] | None = None,
    memo: dict | None = None,
) -> list:
    """One gradient term per input; ``wanted[i]`` false: input ``i``'s term is not built
    (a DisconnectedType placeholder stands in for it)."""
    from arignote.gradient import disconnected_type

    wanted = (True,) * len(inputs) if wanted is None else tuple(wanted)
    if memo is not None and not op.inplace_pattern:
        memo.setdefault((id(op.scalar_op), *inputs), list(outputs))
    tpl = _template(op, inputs, outputs, output_grads, wanted)
    slots, vals = _replay(tpl, inputs, outputs, output_grads, memo)
    terms = []
    for x, r, k in zip(inputs, tpl.results, slots):
        if k is not None:
            terms.append(_unbroadcast(as_tensor(vals[k]), x, memo))
        elif r is None or r is _NO_GRAD:
            terms.append(disconnected_type())
        else:  # a NullType: the term is undefined / not implemented
            terms.append(r())
    return terms


def _unbroadcast(g: Variable, x: Variable, memo: dict | None = None) -> Variable:
    """``g`` (shaped like the output) summed down to ``x``'s shape and cast to its dtype."""
    from arignote.configdefaults import config

    xt, gt = x.type, g.type
    dtype = xt.dtype if np.dtype(xt.dtype).kind in "fc" else config.floatX
    axes = tuple(d for d, (xs, gs) in enumerate(zip(xt.shape, gt.shape)) if xs == 1 and gs != 1)
    pad = xt.ndim - gt.ndim
    if not axes and not pad and gt.dtype == dtype:
        return g
    key = ("unbroadcast", g, axes, pad, dtype)
    if memo is not None:
        hit = memo.get(key)
        if hit is not None:
            return hit
    from arignote.tensor.math import cast, sum

    if pad > 0:  # a broadcast constant result: give it x's dimensions
        g = DimShuffle(input_ndim=gt.ndim, new_order=["x"] * pad + list(range(gt.ndim)))(g)
    if axes:
        g = sum(g, axis=list(axes), keepdims=True)
    g = cast(g, dtype)
    if memo is not None:
        memo[key] = g
    return g


def _careduce_pullback(
    op: CAReduce,
    inputs: Sequence[Variable],
    outputs: Sequence[Variable],
    output_grads: Sequence[Variable],
    memo: dict | None = None,
) -> list:
    from arignote import scalar as ps
    from arignote.gradient import _float_zeros_like, _is_disconnected, grad_not_implemented
    from arignote.tensor import math as tm
    from arignote.tensor.basic import constant

    (x,) = inputs
    (out,) = outputs
    (g,) = output_grads
    if _is_disconnected(g):
        return [g]
    if np.dtype(out.type.dtype).kind in "biu" and np.dtype(x.type.dtype).kind in "biu":
        return [_float_zeros_like(x)]

    def ew(sop: ScalarOp, *args: Any) -> Variable:
        vals = [a if isinstance(a, Variable) else constant(a) for a in args]
        return _apply(_lifted(sop), vals, memo)[0]

    axes = tuple(range(x.type.ndim)) if op.axis is None else op.axis
    expand = _reduced_dims_back(x, out, axes, memo)
    name = op.scalar_op.name
    if name == "add":
        gx = ew(ps.second, x, expand(g))
    elif name == "mul":
        is_zero = ew(ps.eq, x, 0)
        n_zero = tm.sum(is_zero, axis=axes, keepdims=True)
        x_or_one = ew(ps.switch, is_zero, 1, x)
        prod_nonzero = tm.prod(x_or_one, axis=axes, keepdims=True)
        # d prod / d x_i = prod of the others: P / x_i without zeros; the product of the
        # nonzeros at the only zero; 0 wherever two or more zeros remain
        gx = ew(
            ps.mul,
            expand(g),
            ew(
                ps.switch,
                ew(ps.eq, n_zero, 0),
                ew(ps.true_div, expand(out), x_or_one),
                ew(ps.switch, ew(ps.and_, ew(ps.eq, n_zero, 1), is_zero), prod_nonzero, 0),
            ),
        )
    elif name in ("maximum", "minimum"):
        # every position equal to the extremum gets the gradient (a subgradient)
        gx = ew(ps.mul, expand(g), ew(ps.eq, x, expand(out)))
    else:
        return [grad_not_implemented(op, 0, x, f"no gradient rule for reductions with {op.scalar_op}")]
    return [_unbroadcast(gx, x, memo)]


def _reduced_dims_back(x: Variable, out: Variable, axes: tuple, memo: dict | None = None) -> Any:
    """A function giving a reduction's output (or its gradient) the reduced dimensions back
    (as broadcastable ones), so that it lines up with ``x``."""
    if not axes:
        return lambda v: v
    order: list = []
    kept = iter(range(out.type.ndim))
    for d in range(x.type.ndim):
        order.append("x" if d in axes else next(kept))
    order_t = tuple(order)

    def expand(v: Variable) -> Variable:
        v = as_tensor(v)
        key = ("expand", v, order_t)
        hit = memo.get(key) if memo is not None else None
        if hit is None:
            hit = DimShuffle(input_ndim=v.type.ndim, new_order=order)(v)
            if memo is not None:
                memo[key] = hit
        return hit

    return expand


# --- pushforwards (Jacobian-vector products, the seeds' R_op) -------------------------------
# A tangent that is DisconnectedType (or None, the seeds' spelling) counts as zero.


def _no_tangent(t: Any) -> bool:
    from arignote.gradient import _is_disconnected

    return t is None or _is_disconnected(t)


def _elemwise_pushforward(
    self: Elemwise, inputs: Sequence[Variable], outputs: Sequence[Variable], tangents: Sequence[Any]
) -> list:
    """``sum_i (d out / d x_i) * t_i`` per output, the partials taken from the scalar op's
    pullback (replayed with a unit output gradient, without summing over broadcast
    dimensions)."""
    from arignote.gradient import _float_zeros_like, disconnected_type
    from arignote.tensor.basic import constant
    from arignote.tensor.math import add, cast, mul, second

    live = tuple(not _no_tangent(t) for t in tangents)
    if not any(live):
        return [disconnected_type() for _ in outputs]
    results = []
    for j, out in enumerate(outputs):
        if np.dtype(out.type.dtype).kind in "biu":  # integer-valued: f(x + eps) == f(x)
            results.append(_float_zeros_like(out))
            continue
        one = constant(np.ones((), dtype=out.type.dtype))
        grads = [one if k == j else disconnected_type() for k in range(len(outputs))]
        tpl = _template(self, inputs, outputs, grads, live)
        slots, vals = _replay(tpl, inputs, outputs, grads, None)
        acc = None
        for i, (k, r) in enumerate(zip(slots, tpl.results)):
            if not live[i]:
                continue
            if k is None:
                if r is not None and r is not _NO_GRAD:  # undefined partial: undefined tangent
                    acc = r()
                    break
                continue
            partial = vals[k]
            t = as_tensor(tangents[i])
            term = t if partial is one else mul(partial, t)
            acc = term if acc is None else add(acc, term)
        if acc is None:
            results.append(disconnected_type())
            continue
        from arignote.gradient import _is_null

        if not _is_null(acc):
            acc = cast(acc, out.type.dtype)
            if acc.type.ndim != out.type.ndim or any(
                a == 1 and o != 1 for a, o in zip(acc.type.shape, out.type.shape)
            ):
                acc = second(out, acc)  # a tangent broadcast along dimensions of the output
        results.append(acc)
    return results


def _dimshuffle_pushforward(
    self: DimShuffle, inputs: Sequence[Variable], outputs: Sequence[Variable], tangents: Sequence[Any]
) -> list:
    """The same shuffle of the tangent."""
    from arignote.gradient import disconnected_type

    (t,) = tangents
    if _no_tangent(t):
        return [disconnected_type()]
    return [self(as_tensor(t))]


def _careduce_pushforward(
    self: CAReduce, inputs: Sequence[Variable], outputs: Sequence[Variable], tangents: Sequence[Any]
) -> list:
    """The reduction's partials (its pullback with a unit gradient) times the tangent,
    summed over the reduced axes."""
    from arignote.gradient import _float_zeros_like, _is_null, disconnected_type
    from arignote.tensor.alloc import ones_like
    from arignote.tensor.math import cast, sum

    (out,) = outputs
    (t,) = tangents
    if _no_tangent(t):
        return [disconnected_type()]
    if np.dtype(out.type.dtype).kind in "biu":
        return [_float_zeros_like(out)]
    t = as_tensor(t)
    axis = None if self.axis is None else list(self.axis)
    if self.scalar_op.name == "add":
        return [cast(sum(t, axis=axis), out.type.dtype)]
    (partial,) = _careduce_pullback(self, inputs, outputs, [ones_like(out)])
    if _is_null(partial):
        return [partial]
    return [cast(sum(partial * t, axis=axis), out.type.dtype)]


# The methods live here, next to the rules they use (an Op subclass that defines its own
# pushforward / R_op overrides them).
Elemwise.pushforward = _elemwise_pushforward  # type: ignore[method-assign]
DimShuffle.pushforward = _dimshuffle_pushforward  # type: ignore[method-assign]
CAReduce.pushforward = _careduce_pushforward  # type: ignore[method-assign]
