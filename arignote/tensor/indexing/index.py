"""Index expressions of the Subtensor Ops: parsing NumPy-style indices, the ``idx_list``
kept in the Ops' props, slice arithmetic, the shape of an indexed result, and what the
Ops of the family share (checks, gradients, tangents: :class:`ReadsPart`, :class:`WritesPart`).

An Op's ``idx_list`` has one entry per position of the index:

- an ``int``: a constant integer index (kept in the props, so equal indexings merge);
- a :class:`~arignote.tensor.type.TensorType`: a symbolic entry, taken from the next input
  of the node: a 0-d integer (an index), an integer array or a boolean mask;
- a ``slice`` whose parts are ``None``, ints or 0-d integer TensorTypes (inputs);
- ``None`` (a new axis) and ``Ellipsis``: advanced Ops only (``Subtensor`` leaves new axes
  to a ``DimShuffle`` and gets its Ellipsis expanded).

>>> import arignote.tensor as pt
>>> slice_len(slice(None, None, -2), 5)
3
>>> n = pt.lscalar("n")
>>> int(slice_len(slice(1, None, 2), n).eval({n: 7}))
3
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from arignote.graph.basic import Apply, Constant, Variable
from arignote.graph.null_type import disconnected_type, is_disconnected
from arignote.graph.op import Op
from arignote.scalar.type import ScalarType
from arignote.tensor.alloc import alloc
from arignote.tensor.conversion import (
    NotScalarConstantError,
    _flatten,
    as_tensor_variable,
    constant,
    get_scalar_constant_value,
)
from arignote.tensor.ranges import arange
from arignote.tensor.reductions import prod
from arignote.tensor.reductions import sum as pt_sum
from arignote.tensor.shape import _grad_like, _zero_grad, reshape, shape, shape_i
from arignote.tensor.type import TensorType
from arignote.tensor.ufuncs import cast, eq, maximum, minimum, switch

__all__ = ["slice_len", "slice_at_axis", "get_idx_list", "indices_from_subtensor"]


class IndexDtypeError(IndexError, TypeError):
    """An index tensor of a dtype that cannot index (float, complex). It is an IndexError,
    as NumPy raises, and a TypeError, as PyTensor raises, so either ``except`` catches it."""


# --- what an entry is -----------------------------------------------------------------------


def is_placeholder(e: Any) -> bool:
    """Whether the ``idx_list`` entry ``e`` stands for an index input (it is its TensorType)."""
    return isinstance(e, TensorType)


def is_advanced_entry(e: Any) -> bool:
    """An integer array or a boolean mask (a placeholder of one, or a Variable)."""
    t = e if isinstance(e, TensorType) else getattr(e, "type", None)
    return isinstance(t, TensorType) and (t.ndim > 0 or t.dtype == "bool")


def is_mask(e: Any) -> bool:
    """A boolean mask (a placeholder of one, or a Variable)."""
    t = e if isinstance(e, TensorType) else getattr(e, "type", None)
    return isinstance(t, TensorType) and t.dtype == "bool"


def placeholder_of(v: Variable) -> TensorType:
    """The idx_list entry standing for the index Variable ``v``: its dtype and ndim (the
    lengths come from the input itself, so they are left unknown)."""
    return TensorType(v.type.dtype, (None,) * v.type.ndim)


def is_full_slice(e: Any) -> bool:
    """``:`` or ``::1``: a slice that keeps a whole dimension as it is."""
    return isinstance(e, slice) and e.start is None and e.stop is None and e.step in (None, 1)


def is_index_scalar(p: Any) -> bool:
    """An int (not a bool) or the placeholder of a 0-d integer: a scalar index or slice part."""
    if isinstance(p, (int, np.integer)):
        return not isinstance(p, (bool, np.bool_))
    return is_placeholder(p) and p.ndim == 0 and np.dtype(p.dtype).kind in "iu"


def check_slice_entry(e: slice, what: str) -> slice:
    """A slice of an ``idx_list``, checked (int, 0-d integer placeholder or None parts, a
    step that is not zero), with its NumPy ints made Python ints."""
    parts = (e.start, e.stop, e.step)
    if not all(p is None or is_index_scalar(p) for p in parts):
        raise TypeError(f"{what}: slice {e} must have int, 0-d integer TensorType or None parts")
    if e.step == 0:
        raise ValueError(f"{what}: slice step cannot be zero")
    return slice(*(int(p) if isinstance(p, np.integer) else p for p in parts))


def idx_key(idx_list: Sequence[Any]) -> tuple:
    """A hashable form of ``idx_list`` (slices are not hashable before Python 3.12)."""
    return tuple(("slice", e.start, e.stop, e.step) if isinstance(e, slice) else e for e in idx_list)


def idx_op_hash(op: Any) -> int:
    """``__hash__`` of an Op whose props hold an ``idx_list`` (hashed through :func:`idx_key`)."""
    props = op._props_dict()
    return hash((type(op), *(idx_key(v) if k == "idx_list" else v for k, v in props.items())))


def dims_consumed(idx_list: Sequence[Any]) -> int:
    """How many dimensions of the indexed tensor the entries (other than Ellipsis) use."""
    n = 0
    for e in idx_list:
        if e is None or e is Ellipsis:
            continue
        n += e.ndim if is_mask(e) else 1
    return n


def check_ndim(x: Variable, idx_list: Sequence[Any], what: str = "") -> None:
    """An IndexError when the entries use more dimensions than ``x`` has."""
    used = dims_consumed(idx_list)
    if used > x.type.ndim:
        prefix = f"{what}: " if what else ""
        raise IndexError(
            f"{prefix}too many indices for {x}: it is {x.type.ndim}-dimensional ({x.type}), but {used} "
            "were indexed"
        )


# --- parsing a user's index ------------------------------------------------------------------


def _literal_int(v: Any) -> int | None:
    """A Python int for an integer literal (Python/NumPy int, 0-d integer constant)."""
    if isinstance(v, (bool, np.bool_)):
        return None
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, Constant) and isinstance(v.type, TensorType):
        data = np.asarray(v.data)
        if data.ndim == 0 and data.dtype.kind in "iu":
            return int(data)
    return None


def _scalar_index_var(v: Any, where: str) -> Variable:
    """``v`` as a 0-d integer tensor Variable, or a TypeError naming ``where``."""
    if isinstance(getattr(v, "type", None), ScalarType):
        v = as_tensor_variable(v)
    t = getattr(v, "type", None)
    if not isinstance(t, TensorType) or t.ndim != 0 or np.dtype(t.dtype).kind not in "iu":
        what = f"{v} of Type {t}" if isinstance(v, Variable) else f"{v!r} ({type(v).__name__})"
        raise TypeError(f"{where} must be an integer or a 0-d integer tensor, got {what}")
    return v


def _slice_part(v: Any, where: str) -> int | Variable | None:
    if v is None:
        return None
    lit = _literal_int(v)
    if lit is not None:
        return lit
    return _scalar_index_var(v, where)


def _as_index_array(v: Any, pos: int) -> Any:
    """A list/array index as a constant tensor (an empty list indexes with integers)."""
    if isinstance(v, (list, tuple)):
        flat = _flatten(v)
        if any(isinstance(e, Variable) for e in flat):
            return as_tensor_variable(list(v))
        n_bool = sum(isinstance(e, (bool, np.bool_)) for e in flat)
        if 0 < n_bool < len(flat):
            raise TypeError(f"index {pos}: a list mixing booleans and numbers is ambiguous: {v!r}")
        arr = np.asarray(v)
        if arr.size == 0 and arr.dtype.kind == "f":
            arr = arr.astype("int64")  # x[[]]: NumPy indexes with an empty integer array
        v = arr
    if isinstance(v, np.ndarray):
        if v.dtype.kind not in "biu":
            raise IndexError(
                f"index {pos}: only integers, slices, None, Ellipsis, integer arrays and boolean "
                f"masks are valid indices; got an array of dtype {v.dtype}"
            )
        return constant(v)
    return v


def _parse_entry(e: Any, pos: int) -> Any:
    """One index entry as: int, 0-d integer Variable, Variable array/mask, slice, None or
    Ellipsis; anything else is an error naming it."""
    if e is None or e is Ellipsis:
        return e
    if isinstance(e, slice):
        parts = zip((e.start, e.stop, e.step), ("start", "stop", "step"))
        return slice(*(_slice_part(p, f"the slice {w} in index {pos}") for p, w in parts))
    if isinstance(e, (bool, np.bool_)):
        return constant(np.bool_(e))  # NumPy: a 0-d boolean mask (a new axis of 1 or 0)
    lit = _literal_int(e)
    if lit is not None:
        return lit
    if isinstance(e, (float, complex, np.floating, np.complexfloating)):
        raise IndexError(
            f"index {pos} is the {type(e).__name__} {e!r}: only integers, slices, None, Ellipsis, "
            "integer arrays and boolean masks are valid indices"
        )
    e = _as_index_array(e, pos)
    if isinstance(getattr(e, "type", None), ScalarType):
        e = as_tensor_variable(e)
    t = getattr(e, "type", None)
    if not isinstance(t, TensorType):
        raise TypeError(
            f"index {pos}: cannot index with {e!r} ({type(e).__name__}); use integers, slices, None, "
            "Ellipsis, integer arrays or boolean masks"
        )
    if np.dtype(t.dtype).kind not in "biu":
        raise IndexDtypeError(
            f"index {pos} ({e}) has dtype {t.dtype}: only integer and boolean tensors are valid indices"
        )
    if isinstance(e, Constant) and t.ndim == 0 and t.dtype != "bool":
        return int(np.asarray(e.data))
    return e


def parse_index(x: Variable, index: Any) -> list[Any]:
    """``index`` (as written in ``x[index]``) as a list of parsed entries, checked against
    ``x``'s Type: the count of indexed dimensions (the Op built from them checks constant
    bounds and mask shapes)."""
    if not isinstance(index, tuple):
        index = (index,)
    entries = [_parse_entry(e, pos) for pos, e in enumerate(index)]
    if sum(e is Ellipsis for e in entries) > 1:
        raise IndexError(f"an index can only have a single ellipsis ('...'); got {len(entries)} entries")
    check_ndim(x, entries)
    return entries


def expand_ellipsis(entries: Sequence[Any], ndim: int) -> list[Any]:
    """``entries`` with the Ellipsis (if any) replaced by full slices."""
    out = []
    for e in entries:
        if e is Ellipsis:
            out.extend(slice(None) for _ in range(ndim - dims_consumed(entries)))
        else:
            out.append(e)
    return out


def check_static_index(shape: Sequence[int | None], entries: Sequence[Any], what: str) -> None:
    """Build-time checks where lengths are static: constant ints (and constant integer
    arrays) within bounds, boolean masks of the right shape, slice steps not zero."""
    axis = 0
    for e in expand_ellipsis(entries, len(shape)):
        if e is None:
            continue
        if isinstance(e, slice):
            if e.step == 0:
                raise ValueError(f"{what}: slice step cannot be zero (axis {axis})")
            axis += 1
            continue
        if is_mask(e):
            nd = e.type.ndim
            StaticLengths().check_mask(e.type.shape, tuple(shape[axis : axis + nd]), axis, what)
            axis += nd
            continue
        n = shape[axis]
        if n is not None:
            values = [e] if isinstance(e, int) else _constant_ints(e)
            for v in values:
                if not -n <= v < n:
                    raise IndexError(f"{what}: index {v} is out of bounds for axis {axis} with size {n}")
        axis += 1


def _constant_ints(e: Any) -> list[int]:
    if isinstance(e, Constant) and e.type.ndim > 0:
        data = np.asarray(e.data).reshape(-1)
        return [] if data.size == 0 else sorted({int(data.min()), int(data.max())})
    return []


def to_idx_list(entries: Sequence[Any]) -> tuple[tuple, list[Variable]]:
    """Parsed entries as ``(idx_list, inputs)``: the constants stay in ``idx_list``, each
    symbolic entry (or slice part) becomes a placeholder and an input, in order."""
    idx: list = []
    inputs: list[Variable] = []

    def part(p: Any) -> Any:
        if isinstance(p, Variable):
            inputs.append(p)
            return placeholder_of(p)
        return p

    for e in entries:
        if isinstance(e, slice):
            idx.append(slice(part(e.start), part(e.stop), part(e.step)))
        else:
            idx.append(part(e))
    return tuple(idx), inputs


def indices_from_subtensor(op_indices: Sequence[Any], idx_list: Sequence[Any]) -> tuple:
    """``idx_list`` with its placeholders replaced, in order, by ``op_indices`` (the index
    inputs of a node, or their values): the index as NumPy would take it."""
    it = iter(op_indices)

    def fill(p: Any) -> Any:
        return next(it) if is_placeholder(p) else p

    out = []
    for e in idx_list:
        if isinstance(e, slice):
            out.append(slice(fill(e.start), fill(e.stop), fill(e.step)))
        else:
            out.append(fill(e))
    return tuple(out)


def get_idx_list(inputs: Sequence[Any], idx_list: Sequence[Any]) -> tuple:
    """The index of a Subtensor-family node with ``inputs`` (the indexed tensor first, then
    for the inc Ops the value): PyTensor's helper for rewrites."""
    n_pre = len(inputs) - len(placeholders(idx_list))
    return indices_from_subtensor(inputs[n_pre:], idx_list)


def get_constant_idx(
    idx_list: Sequence[Any],
    inputs: Sequence[Any],
    allow_partial: bool = False,
    only_process_constants: bool = False,
    elemwise: bool = True,
) -> list:
    """The index of a Subtensor-family node (its Op's ``idx_list`` and the node's
    ``inputs``) with every statically known entry as a Python int, slices kept as slices
    and None as None. An entry whose value is not known statically is a
    :class:`NotScalarConstantError`, or stays the Variable it is with ``allow_partial``.
    ``only_process_constants`` and ``elemwise`` say how far to look (as in
    :func:`~arignote.tensor.basic.get_scalar_constant_value`).

    >>> import arignote.tensor as pt
    >>> a, i = pt.dmatrix("a"), pt.lscalar("i")
    >>> b = a[i, 1:3]
    >>> get_constant_idx(b.owner.op.idx_list, b.owner.inputs, allow_partial=True)
    [i, slice(1, 3, None)]
    """

    def known(v: Any) -> Any:
        if v is None or isinstance(v, (int, np.integer)):
            return None if v is None else int(v)
        try:
            value = get_scalar_constant_value(
                v, elemwise=elemwise, only_process_constants=only_process_constants
            )
        except NotScalarConstantError:
            if allow_partial:
                return v
            raise
        return value.item() if hasattr(value, "item") else value

    out: list = []
    for e in get_idx_list(inputs, idx_list):
        if isinstance(e, slice):
            out.append(slice(known(e.start), known(e.stop), known(e.step)))
        else:
            out.append(known(e))
    return out


def index_builder(idx_list: Sequence[Any]) -> Any:
    """A function from the values of a node's index inputs to the NumPy index for
    ``idx_list`` (0-d integers become Python ints, so NumPy takes them as basic indices).

    Made once per Op: it runs on every call of a compiled function, so the work of
    reading ``idx_list`` is done here, not there.
    """
    slots = []  # (entry position, slice part 0-2, or -1 for a 0-d integer, -2 for an array)
    for pos, e in enumerate(idx_list):
        if isinstance(e, slice):
            slots.extend((pos, k) for k, p in enumerate((e.start, e.stop, e.step)) if is_placeholder(p))
        elif is_placeholder(e):
            slots.append((pos, -1 if e.ndim == 0 and e.dtype != "bool" else -2))
    template = list(idx_list)
    if not slots:
        constant_index = tuple(template)
        return lambda values: constant_index

    def build(values: Sequence[Any]) -> tuple:
        out = template.copy()
        for (pos, k), v in zip(slots, values):
            if k == -1:
                out[pos] = int(v)
            elif k == -2:
                out[pos] = v
            else:
                e = out[pos]
                parts = [e.start, e.stop, e.step]
                parts[k] = int(v)
                out[pos] = slice(*parts)
        return tuple(out)

    return build


class PicklableIndex:
    """Mixin for the Ops holding an :func:`index_builder` (a closure) in ``_index``: it is
    left out of the pickled state and rebuilt on unpickling."""

    idx_list: tuple

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        state.pop("_index", None)
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._index = index_builder(self.idx_list)


def placeholders(idx_list: Sequence[Any]) -> list[TensorType]:
    """The placeholders of ``idx_list``, in input order."""
    out = []
    for e in idx_list:
        parts = (e.start, e.stop, e.step) if isinstance(e, slice) else (e,)
        out.extend(p for p in parts if is_placeholder(p))
    return out


def check_index_inputs(op: Any, idx_list: Sequence[Any], inputs: Sequence[Any]) -> list[Variable]:
    """The index inputs of a node, checked against the placeholders of ``idx_list``."""
    wanted = placeholders(idx_list)
    if len(inputs) != len(wanted):
        raise ValueError(f"{op}: expected {len(wanted)} index input(s), got {len(inputs)}")
    out = []
    for k, (v, t) in enumerate(zip(inputs, wanted)):
        v = as_tensor_variable(v)
        if v.type.ndim != t.ndim or v.type.dtype != t.dtype:
            raise TypeError(
                f"{op}: index input {k} ({v}) has Type {v.type}; the index expects a {t.ndim}-d "
                f"{t.dtype} tensor"
            )
        out.append(v)
    return out


# --- slice arithmetic --------------------------------------------------------------------------


def _i64(v: Any) -> Any:
    """A symbolic integer as int64 (mixing uint64 with int64 would give float64)."""
    if isinstance(v, (int, np.integer)):
        return int(v)
    return v if v.type.dtype == "int64" else cast(v, "int64")


def _where(cond: Any, a: Any, b: Any) -> Any:
    if isinstance(cond, (bool, np.bool_)):
        return a if cond else b
    return switch(cond, a, b)


def _max(a: Any, b: Any) -> Any:
    if isinstance(a, int) and isinstance(b, int):
        return max(a, b)
    return maximum(a, b)


def _min(a: Any, b: Any) -> Any:
    if isinstance(a, int) and isinstance(b, int):
        return min(a, b)
    return minimum(a, b)


def _clamp(v: Any, n: Any, lo: Any, hi: Any) -> Any:
    """``slice.indices``' normalisation of one bound: negative counts from the end, then
    clipped to ``[lo, hi]``."""
    return _where(v < 0, _max(v + n, lo), _min(v, hi))


def slice_len(slc: slice, n: Any) -> Any:
    """The length of ``range(n)[slc]``: an int when everything is known, else an int64
    Variable built with the clamping arithmetic of ``slice.indices`` (negative steps too).

    The parts of ``slc`` and ``n`` may be ints or 0-d integer Variables.
    """
    start, stop, step = (None if p is None else _i64(p) for p in (slc.start, slc.stop, slc.step))
    n = _i64(n)
    step = 1 if step is None else step
    if all(isinstance(p, int) or p is None for p in (start, stop, step, n)):
        return len(range(*slice(start, stop, step).indices(n)))
    if isinstance(step, int):
        if step == 0:
            raise ValueError("slice step cannot be zero")
        return _len_up(start, stop, step, n) if step > 0 else _len_down(start, stop, step, n)
    return _where(step > 0, _len_up(start, stop, step, n), _len_down(start, stop, step, n))


def _len_up(start: Any, stop: Any, step: Any, n: Any) -> Any:
    b = 0 if start is None else _clamp(start, n, 0, n)
    e = n if stop is None else _clamp(stop, n, 0, n)
    return _max(0, (e - b + step - 1) // step)


def _len_down(start: Any, stop: Any, step: Any, n: Any) -> Any:
    b = n - 1 if start is None else _clamp(start, n, -1, n - 1)
    e = -1 if stop is None else _clamp(stop, n, -1, n - 1)
    return _max(0, (b - e - step - 1) // -step)


def slice_at_axis(sl: slice, axis: int) -> tuple[slice, ...]:
    """An index applying ``sl`` on ``axis`` only: ``x[slice_at_axis(slice(1, None), 2)]``
    is ``x[:, :, 1:]``."""
    if axis < 0:
        return (Ellipsis, sl, *([slice(None)] * (-1 - axis)))
    return (*([slice(None)] * axis), sl)


# --- the shape of an indexed result -----------------------------------------------------------


class StaticLengths:
    """Lengths known at graph-build time (ints, or None for unknown); also used at run time,
    where every length and index is known."""

    def slice_len(self, slc: slice, n: int | None) -> int | None:
        if n == 0:
            return 0
        parts = [_known_int(p) for p in (slc.start, slc.stop, slc.step)]
        if n is None or any(
            k is None and p is not None for k, p in zip(parts, (slc.start, slc.stop, slc.step))
        ):
            return None
        return len(range(*slice(*parts).indices(n)))

    def broadcast(self, shapes: Sequence[tuple], what: str) -> tuple:
        nd = max(len(s) for s in shapes)
        out = []
        for k in range(nd):
            lens = [s[len(s) - nd + k] for s in shapes if len(s) - nd + k >= 0]
            known = {n for n in lens if n is not None and n != 1}
            if len(known) > 1:
                raise IndexError(
                    f"{what}: shape mismatch: the indexing arrays could not be broadcast together "
                    f"with shapes {' '.join(str(tuple(s)) for s in shapes)}"
                )
            out.append(known.pop() if known else (1 if all(n == 1 for n in lens) else None))
        return tuple(out)

    def check_mask(self, mask_shape: tuple, lengths: tuple, axis: int, what: str) -> None:
        for k, (m, n) in enumerate(zip(mask_shape, lengths)):
            if m is not None and n is not None and m != n:
                raise IndexError(
                    f"{what}: boolean index did not match the indexed tensor along axis {axis + k}; "
                    f"the axis has length {n} but the boolean index has length {m}"
                )

    def mask_count(self, mask: Any) -> int | None:
        if isinstance(mask, np.ndarray):
            return int(np.count_nonzero(mask))
        if isinstance(mask, Constant):
            return int(np.count_nonzero(mask.data))
        return None


class SymbolicLengths:
    """Lengths as ints where static, int64 Variables elsewhere (for ``infer_shape``)."""

    def slice_len(self, slc: slice, n: Any) -> Any:
        return slice_len(slc, n)

    def broadcast(self, shapes: Sequence[tuple], what: str) -> tuple:
        nd = max(len(s) for s in shapes)
        out: list = []
        for k in range(nd):
            lens = [_i64(s[len(s) - nd + k]) for s in shapes if len(s) - nd + k >= 0]
            known = [n for n in lens if isinstance(n, int) and n != 1]
            if known:
                out.append(known[0])
                continue
            sym = [n for n in lens if not isinstance(n, int)]
            length: Any = 1
            for n in sym:  # lengths that broadcast: 1 or all equal, so the maximum is the one
                length = n if length == 1 else _max(length, n)
            out.append(length)
        return tuple(out)

    def check_mask(self, mask_shape: tuple, lengths: tuple, axis: int, what: str) -> None:
        """Symbolic lengths are checked at run time, by the Op."""

    def mask_count(self, mask: Any) -> Any:
        if isinstance(mask, Constant):
            return int(np.count_nonzero(mask.data))
        return _i64(pt_sum(mask))


def indexed_shape(
    xshape: Sequence[Any],
    idx_list: Sequence[Any],
    args: Sequence[Any],
    arg_shapes: Sequence[tuple],
    lengths: StaticLengths | SymbolicLengths,
    what: str = "index",
) -> tuple:
    """The shape of ``x[index]`` following NumPy's rules.

    ``args`` are what fills the placeholders (Variables or values) and ``arg_shapes`` their
    shapes. Integers count as advanced indices as soon as there is an array or a mask;
    the broadcast shape of the advanced indices replaces them where they stand if they are
    adjacent, and goes first if a slice, a new axis or an Ellipsis separates them.
    """
    it = iter(zip(args, arg_shapes))
    entries = []
    for e in idx_list:
        if isinstance(e, slice):
            parts = [next(it)[0] if is_placeholder(p) else p for p in (e.start, e.stop, e.step)]
            entries.append(("slice", slice(*parts), None))
        elif is_placeholder(e):
            arg, shp = next(it)
            kind = "mask" if e.dtype == "bool" else ("int" if e.ndim == 0 else "array")
            entries.append((kind, arg, shp))
        elif e is None:
            entries.append(("new", None, None))
        elif e is Ellipsis:
            entries.append(("ellipsis", None, None))
        else:
            entries.append(("int", e, ()))
    advanced = any(kind in ("array", "mask") for kind, _, _ in entries)
    ndim = len(xshape)
    used = dims_consumed(idx_list)
    out: list = []
    adv_shapes: list = []
    first_adv = 0
    axis = 0
    for kind, arg, shp in entries:
        if kind == "slice":
            out.append(lengths.slice_len(arg, xshape[axis]))
            axis += 1
        elif kind == "new":
            out.append(1)
        elif kind == "ellipsis":
            out.extend(xshape[axis : axis + ndim - used])
            axis += ndim - used
        elif kind == "int" and not advanced:
            axis += 1
        else:  # an advanced index (an int is one too when there is an array or a mask)
            if not adv_shapes:
                first_adv = len(out)
            if kind == "mask":
                lengths.check_mask(tuple(shp), tuple(xshape[axis : axis + len(shp)]), axis, what)
                adv_shapes.append((lengths.mask_count(arg),))
                axis += len(shp)
            else:
                adv_shapes.append(tuple(shp))
                axis += 1
    out.extend(xshape[axis:])
    if adv_shapes:
        shape = list(lengths.broadcast(adv_shapes, what))
        at = 0 if advanced_dims_first(idx_list) else first_adv
        out[at:at] = shape
    return tuple(out)


def advanced_dims_first(idx_list: Sequence[Any]) -> bool:
    """Whether NumPy puts the advanced-index dimensions first (they are separated by a
    slice, a new axis or an Ellipsis)."""
    seen = gap = False
    has_adv = any(map(is_advanced_entry, idx_list))
    for e in idx_list:
        basic = isinstance(e, slice) or e is None or e is Ellipsis
        if basic:
            gap = seen
        elif is_advanced_entry(e) or has_adv:
            if seen and gap:
                return True
            seen = True
    return False


def _known_int(p: Any) -> int | None:
    """An int for a literal or a run-time value (0-d integer array); None otherwise."""
    if isinstance(p, (int, np.integer)):
        return int(p)
    if isinstance(p, np.ndarray) and p.ndim == 0 and p.dtype.kind in "iu":
        return int(p)
    return None


# --- shared by the Ops of the family -----------------------------------------------------------


def idx_str(idx_list: Sequence[Any]) -> str:
    """The index as PyTensor writes it in an Op's name: constants written out, symbolic
    entries by role (``i``, ``start``, ``stop``, ``step``; ``idx`` for an integer array,
    ``mask`` for a boolean one)."""

    def part(p: Any, name: str) -> str:
        if p is None:
            return ""
        return name if is_placeholder(p) else str(p)

    out = []
    for e in idx_list:
        if isinstance(e, slice):
            text = f"{part(e.start, 'start')}:{part(e.stop, 'stop')}"
            if e.step is not None:
                text += f":{part(e.step, 'step')}"
        elif e is None:
            text = "None"
        elif e is Ellipsis:
            text = "..."
        elif is_placeholder(e):
            text = "mask" if e.dtype == "bool" else ("i" if e.ndim == 0 else "idx")
        else:
            text = str(e)
        out.append(text)
    return ", ".join(out)


def check_inc_value(x: Variable, y: Variable, target_shape: Sequence[int | None], what: str) -> None:
    """Build-time checks of the value ``y`` written into the part of ``x`` of static shape
    ``target_shape``: not more dimensions, statically broadcastable lengths, a dtype that
    fits ``x``'s without changing its kind (no upcast of ``x``)."""
    if y.type.ndim > len(target_shape):
        raise TypeError(
            f"{what}: the indexed part of {x} is {len(target_shape)}-d (static shape "
            f"{tuple(target_shape)}), the value {y} is {y.type.ndim}-d ({y.type}): it has too many dimensions"
        )
    lead = len(target_shape) - y.type.ndim
    for d, ys in enumerate(y.type.shape):
        ts = target_shape[lead + d]
        if ys is not None and ts is not None and ys != 1 and ys != ts:
            raise ValueError(
                f"{what}: the value of shape {y.type.shape} ({y}) cannot be broadcast to the indexed "
                f"shape {tuple(target_shape)}"
            )
    if not np.can_cast(y.type.dtype, x.type.dtype, "same_kind"):
        raise TypeError(
            f"{what}: {x} has dtype {x.type.dtype}; a value of dtype {y.type.dtype} ({y}) would need "
            f"an upcast of it to {np.result_type(x.type.dtype, y.type.dtype).name}. Cast the value "
            f"(or x) explicitly"
        )


def check_runtime_value(op: Any, y: np.ndarray, target_shape: tuple, y_type: TensorType) -> None:
    """Run-time check that ``y`` fits the indexed part: each length equal, or broadcast from
    a static 1 of ``y``'s Type (as everywhere in arignote, a length-1 value whose Type does
    not say so does not broadcast)."""
    lead = len(target_shape) - y.ndim
    ok = lead >= 0 and all(
        ys == target_shape[lead + d] or y_type.shape[d] == 1 for d, ys in enumerate(y.shape)
    )
    if not ok:
        verb = "set" if getattr(op, "set_instead_of_inc", False) else "increment"
        raise ValueError(
            f"{op}: cannot {verb} the indexed part of shape {tuple(target_shape)} with a value of "
            f"shape {y.shape} (a length broadcasts only where the value's Type, {y_type}, has a "
            "static 1)"
        )


def sum_to_value(g: Variable, y: Variable) -> Variable:
    """The gradient ``g`` of the indexed part, summed over the dimensions along which the
    value ``y`` was broadcast into it (its missing leading ones, its static 1s)."""
    lead = g.type.ndim - y.type.ndim
    if lead:
        g = g.sum(axis=tuple(range(lead)))
    axes = [d for d in range(y.type.ndim) if y.type.shape[d] == 1 and g.type.shape[d] != 1]
    if axes:
        g = g.sum(axis=tuple(axes), keepdims=True)
    return _grad_like(g, y)


def value_like(x: Variable, y: Any) -> Variable:
    """``y`` as a tensor; a constant is given ``x``'s dtype when its value fits exactly (so
    ``set_subtensor(x[0], 0.5)`` works for a float32 ``x``)."""
    y = as_tensor_variable(y)
    if isinstance(y, Constant) and y.type.dtype != x.type.dtype:
        data = np.asarray(y.data)
        with np.errstate(all="ignore"):
            fitted = data.astype(x.type.dtype)
            exact = np.array_equal(fitted.astype(data.dtype), data, equal_nan=data.dtype.kind in "fc")
        same_kind = np.can_cast(data.dtype, x.type.dtype, "same_kind")
        if exact and (same_kind or data.dtype.kind in "biu"):
            return constant(fitted)
    return y


def is_float(v: Variable) -> bool:
    """Whether ``v`` has a float or complex dtype (the dtypes that carry gradients)."""
    return np.dtype(v.type.dtype).kind in "fc"


def index_error(op: Any, err: Exception, x: np.ndarray) -> Exception:
    """NumPy's indexing error ``err`` again, naming ``op`` and the shape of the indexed ``x``."""
    return type(err)(f"{op}: {err} (indexing a tensor of shape {x.shape})")


class LazyText:
    """Text for an error message, made only if one is raised: printing the Op and the
    indexed Variable costs more than the checks, and the gradient of many indexed terms
    builds thousands of index nodes."""

    __slots__ = ("_make",)

    def __init__(self, make: Callable[[], str]) -> None:
        self._make = make

    def __str__(self) -> str:
        return self._make()


def checked_part(op: Any, x: Variable, inputs: Sequence[Any]) -> tuple[list[Variable], tuple]:
    """The build-time checks of a node of ``op`` (an Op with an ``idx_list``) indexing ``x``
    with the index ``inputs``: those inputs as Variables, and the static shape of ``x[idx]``."""
    what: Any = LazyText(lambda: str(op))
    check_ndim(x, op.idx_list, what)
    idx = check_index_inputs(what, op.idx_list, inputs)
    check_static_index(
        x.type.shape, indices_from_subtensor(idx, op.idx_list), LazyText(lambda: f"{op} of {x}")
    )
    shape = indexed_shape(x.type.shape, op.idx_list, idx, [i.type.shape for i in idx], StaticLengths(), what)
    return idx, shape


def batched_value(y: Variable, y_batched: bool, core_ndim: int, batch_at: int) -> Variable:
    """The value ``y`` of an inc Op, lined up with a batched indexed part whose batch
    dimension is at ``batch_at`` and whose other dimensions are ``core_ndim``."""
    core = y.type.ndim - (1 if y_batched else 0)
    pad = core_ndim - core
    dims: list = list(range(1, core + 1)) if y_batched else list(range(core))
    order: list = ["x"] * pad + dims
    order.insert(batch_at, 0 if y_batched else "x")
    if not y_batched and batch_at == 0:
        return y  # an unbatched value broadcasts along a leading batch dimension as it is
    return y.dimshuffle(order)


def _surviving_writes(x: Variable, taken: Variable, write: Callable, read: Callable) -> Variable:
    """1 where an entry of ``x[idx] = y`` is the write that reaches the output, else 0 (in
    ``taken``'s dtype and shape, ``taken`` being ``g[idx]``). A repeated position keeps one
    write: which one is found by writing each entry's own number with the same index and
    reading back what survived, so it agrees with NumPy's order, whatever that is."""
    dims = [shape_i(x, d) for d in range(x.type.ndim)]
    ids = reshape(arange(prod(shape(taken)), dtype="int64"), shape(taken), ndim=taken.type.ndim)
    kept = read(write(alloc(np.int64(-1), *dims), ids))
    return cast(eq(kept, ids), taken.type.dtype)


class ReadsPart:
    """What the Ops reading ``x[idx]`` share (inputs: ``x``, then the index inputs).

    Indexing is linear in ``x``: a tangent of ``x`` is indexed the same way, and the
    gradient is the output gradient added into zeros shaped like ``x`` by the increment
    Op for the same index (``_inc_op``, which each Op defines); the index is disconnected.
    """

    idx_list: tuple
    _inc_op: Callable[[], Op]

    def make_node(self, x: Any, *inputs: Any) -> Apply:
        """For the Ops indexed by an ``idx_list`` (the row-index Op has its own)."""
        x = as_tensor_variable(x)
        idx, shape = checked_part(self, x, inputs)
        return Apply(self, [x, *idx], [TensorType(x.type.dtype, shape)()])

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list[tuple]:
        inferred = indexed_shape(shapes[0], self.idx_list, node.inputs[1:], shapes[1:], SymbolicLengths())
        static = node.outputs[0].type.shape
        return [tuple(s if s is not None else n for n, s in zip(inferred, static))]

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        return [[True], *([False] for _ in node.inputs[1:])]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        """The output gradient added into zeros shaped like ``x`` at the indexed places
        (a place indexed more than once gets each of its terms); the index is disconnected."""
        return self._pullback(inputs, output_grads, None)

    def pullback_in_pass(
        self,
        inputs: Sequence[Variable],
        outputs: Sequence[Variable],
        output_grads: Sequence[Variable],
        wanted: Sequence[bool],
        memo: dict,
    ) -> list:
        """:meth:`pullback`, with one zeros buffer per ``x`` for the whole pass: the
        gradient of ``x[0] + x[1] + ...`` builds one ``zeros_like(x)``, not one per term."""
        if type(self).pullback is not ReadsPart.pullback:
            return self.pullback(inputs, outputs, output_grads)
        return self._pullback(inputs, output_grads, memo)

    def _pullback(
        self, inputs: Sequence[Variable], output_grads: Sequence[Variable], memo: dict | None
    ) -> list:
        x, *idx = inputs
        rest = [disconnected_type() for _ in idx]
        if not is_float(x):
            return [_zero_grad(x), *rest]
        zeros = None if memo is None else memo.get((ReadsPart, x))
        if zeros is None:
            zeros = _zero_grad(x)
            if memo is not None:
                memo[(ReadsPart, x)] = zeros
        gx = self._inc_op()(zeros, output_grads[0], *idx)
        return [_grad_like(gx, x), *rest]

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], eval_points: Sequence[Variable]
    ) -> list:
        """The tangent of ``x`` indexed the same way."""
        if is_disconnected(eval_points[0]):
            return [disconnected_type()]
        return [self(eval_points[0], *inputs[1:])]  # type: ignore[operator]


class WritesPart:
    """What the Ops writing ``y`` into ``x[idx]`` share (inputs: ``x``, ``y``, then the
    index inputs; props ``inplace`` and ``set_instead_of_inc`` among others).

    The output has ``x``'s shape; ``x`` and ``y`` are connected, the index is not. The
    gradient of ``y`` reads the output gradient with the Op reading the same index
    (``_read_op``, which each Op defines).
    """

    set_instead_of_inc: bool
    _read_op: Callable[[], Op]

    def make_node(self, x: Any, y: Any, *inputs: Any) -> Apply:
        """For the Ops indexed by an ``idx_list`` (the row-index Op has its own)."""
        x = as_tensor_variable(x)
        y = as_tensor_variable(y)
        idx, target = checked_part(self, x, inputs)
        check_inc_value(x, y, target, LazyText(lambda: str(self)))
        return Apply(self, [x, y, *idx], [TensorType(x.type.dtype, x.type.shape)()])

    def _variant(self, **changes: Any) -> Op:
        """This Op working out of place, with ``changes`` to its other props."""
        return type(self)(**{**self._props_dict(), "inplace": False, **changes})  # type: ignore[attr-defined]

    def _keeps_last_write(self) -> bool:
        """Whether a place that the index names more than once keeps only one write (then
        only that write of ``y`` reaches the output)."""
        return self.set_instead_of_inc

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list[tuple]:
        return [tuple(shapes[0])]

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        return [[True], [True], *([False] for _ in node.inputs[2:])]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        """For ``x``: the gradient (with the written part zeroed for a set); for ``y``: the
        gradient's indexed part (only where its write survives), summed where ``y`` was
        broadcast; the index is disconnected."""
        x, y, *idx = inputs
        (g,) = output_grads
        rest = [disconnected_type() for _ in idx]
        if not is_float(x):
            return [_zero_grad(x), _zero_grad(y), *rest]
        write = self._variant(set_instead_of_inc=True)
        gx = write(g, np.zeros((), g.type.dtype), *idx) if self.set_instead_of_inc else g
        gy = _zero_grad(y)
        if is_float(y):
            read = self._read_op()
            taken = read(g, *idx)
            if self._keeps_last_write():
                taken = taken * _surviving_writes(
                    x, taken, lambda b, v: write(b, v, *idx), lambda w: read(w, *idx)
                )
            gy = sum_to_value(taken, y)
        return [_grad_like(gx, x), gy, *rest]

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], eval_points: Sequence[Variable]
    ) -> list:
        """The same write of the tangents (zeros for a disconnected one)."""
        x, _, *idx = inputs
        ex, ey = eval_points[:2]
        if is_disconnected(ex) and is_disconnected(ey):
            return [disconnected_type()]
        ex = _zero_grad(x) if is_disconnected(ex) else ex
        if is_disconnected(ey):
            if not self.set_instead_of_inc:
                return [ex]  # nothing added to the tangent of x
            ey = np.zeros((), x.type.dtype)
        return [self._variant()(ex, ey, *idx)]
