"""The Python backend's thunks for Elemwise (those of DimShuffle and CAReduce are in
:mod:`~arignote.link.python.dimshuffle` and :mod:`~arignote.link.python.careduce`):
per-node decisions taken once, at link time.

A compiled function calls each node's thunk on every call, and on small arrays the
Python glue around the NumPy call is the cost (DESIGN.md section 3). So these thunks take
per node, once, the decisions ``perform`` takes per call: which dimensions need the
runtime broadcast check (none where the static shapes settle it), whether the scalar op is
a NumPy ufunc that can be called as it is (its output dtype known from the input dtypes,
its result fresh, so no cast and no aliasing check), the in-place targets. Anything
unusual at run time (a value that is not an ndarray, a result of another dtype) goes
through ``perform``'s own steps, so the thunk computes what ``perform`` does; ``perform``
stays the definition (DebugMode and the tests check these thunks against it). Each thunk
keeps the storage-cell protocol: it sets its output cells, and the compute flags when the
linker gives a compute_map.

They are registered with :func:`~arignote.link.python.dispatch.python_thunk` by Op type.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from arignote.graph.basic import Apply, Constant, Variable
from arignote.graph.destroyhandler import view_root
from arignote.graph.op import Op
from arignote.link.python.dispatch import accepts_plain, register_python_thunk
from arignote.scalar import basic as psb
from arignote.scalar.composite import Composite
from arignote.scalar.op import ScalarOp
from arignote.scalar.special import Softplus
from arignote.tensor.elemwise import Elemwise

__all__ = ["elemwise_thunk"]

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


_plain_elemwise = accepts_plain(Elemwise)

#: Elemwise op -> its thunk plans, one dict for all equal ops: a long chain cut into
#: kernels of the same shape, or a model's repeated layers, plan and generate each fused
#: body once. Weak keys: an entry goes with the last op that made it (the ops holding
#: the dict keep it).
_PLANS_BY_VALUE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _plans(op: Elemwise) -> dict:
    """The dict of ``op``'s thunk plans (per-node decisions memoised on the op), shared
    with the ops equal to it."""
    plans = op.__dict__.get("_thunk_plans")
    if plans is None:
        try:
            plans = _PLANS_BY_VALUE.get(op)
            if plans is None:
                plans = _PLANS_BY_VALUE[op] = {}
        except TypeError:  # an unhashable scalar op: plans of its own
            plans = {}
        op.__dict__["_thunk_plans"] = plans
    return plans


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
    rank, never aliasing an input and writeable; the in-place target itself where the
    result is it (``identity``), but never copied into it (see "in place" below)."""
    if type(value) is not _ndarray:
        value = np.asarray(value)
    if value.dtype != dtype:
        value = value.astype(dtype)
    if value.ndim != ndim:  # a scalar op ignored broadcasting (e.g. a constant)
        value = np.broadcast_to(value, np.broadcast_shapes(*(np.shape(i) for i in inputs))).copy()
    if target is not None and value is inputs[target]:
        return value
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
    key = (  # (no op identity: the plans are shared by equal ops only)
        op.inplace_pattern,
        len(node.inputs),
        *[(t.dtype, t.shape) for t in [v.type for v in node.inputs] + [v.type for v in node.outputs]],
    )
    plans = _plans(op)
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


def _direct_ufunc(op: Elemwise, node: Apply) -> tuple[str, Any] | None:
    """``(kind, function)`` when the scalar op's ``impl`` on these input dtypes is one call
    of a NumPy ufunc giving the output dtype (``"ufunc"``, or ``"chain"`` for an n-ary add
    or multiply done pairwise), or an ``astype`` (``"cast"``); else None."""
    if op.nout != 1 or op.inplace_pattern:
        return None
    return _direct_call(
        op.scalar_op, [v.type.numpy_dtype for v in node.inputs], node.outputs[0].type.numpy_dtype
    )


def _direct_call(sop: ScalarOp, in_dtypes: Sequence[np.dtype], out_dtype: np.dtype) -> tuple[str, Any] | None:
    """:func:`_direct_ufunc` for a scalar op on these input dtypes giving ``out_dtype``
    (the same decision serves a node of a fused body)."""
    if sop.nout != 1 or "impl" in sop.__dict__:
        return None
    impl = type(sop).impl
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


def _softplus(x: Any, out: Any = None) -> Any:
    """``softplus`` of a float array as ``max(x, 0) + log1p(exp(-|x|))``: the formula
    ``np.logaddexp(0, x)`` (``Softplus.ufunc``) evaluates one element at a time, in NumPy's
    vectorised loops (measured on 1,000 float64: 2x faster), to the same rounding; exp never
    overflows, inf and nan give what logaddexp gives."""
    t = np.exp(-np.abs(x))
    t = np.log1p(t, out=t) if type(t) is np.ndarray else np.log1p(t)
    return np.add(np.maximum(x, 0), t, out=out)


#: scalar op type -> a NumPy spelling of its ``impl`` for float inputs (the output dtype
#: the input's), used in fused bodies where faster than ``impl``
_FLOAT_SPELLINGS: dict[type, Callable] = {Softplus: _softplus}

_resolve_memo: dict[tuple, tuple] = {}  # (id(op), dtypes...) -> (op, result): few ops per body


def _resolve_inner(node: Apply) -> tuple[str, Any] | None:
    """How the fused body's function computes an inner node (see
    :meth:`Composite.compile_body`): a NumPy ufunc called directly where
    :func:`_direct_call` shows it is the same as the op's ``impl``, a spelling of
    :data:`_FLOAT_SPELLINGS` for its float inputs, else ``impl``."""
    op = node.op
    key = (id(op), *[v.type.dtype for v in node.inputs], node.outputs[0].type.dtype)
    found = _resolve_memo.get(key)
    if found is None or found[0] is not op:
        spelling = _FLOAT_SPELLINGS.get(type(op))
        if spelling is not None and "impl" not in op.__dict__ and key[1] == key[-1] and key[-1][0] == "f":
            direct = ("call", spelling)
        else:
            direct = _direct_call(op, [np.dtype(d) for d in key[1:-1]], np.dtype(key[-1]))
            if direct is not None and direct[0] == "ufunc":
                direct = ("call", direct[1])
        if len(_resolve_memo) > 10_000:
            _resolve_memo.clear()
        found = _resolve_memo[key] = (op, direct)
    return found[1]


def _composite_body(op: Elemwise) -> tuple[Any, tuple[bool, ...]]:
    """The fused body of ``op`` (an Elemwise of a Composite) as one Python function on
    arrays, with NumPy ufuncs called directly (:func:`_resolve_inner`), and for each
    output whether the function's value is already what ``perform``'s steps would make
    of it: a new array of the output's dtype and rank (the result of a ufunc called
    directly on a full-rank value: an input, or a ufunc's result from one). Memoised on
    the op."""
    plans = _plans(op)
    made = plans.get("composite_body")
    if made is None:
        comp = op.scalar_op
        full: set = set(comp.inner_inputs)  # values that are arrays of the output's rank
        for inner in comp.body_nodes:
            spec = _resolve_inner(inner)
            if spec is not None and spec[0] in ("call", "chain") and any(v in full for v in inner.inputs):
                full.update(inner.outputs)
        trusted = tuple(v in full for v in comp.inner_outputs)
        made = plans["composite_body"] = (comp.compile_body(_resolve_inner), trusted)
    return made


def _composite_thunk(
    op: Elemwise,
    node: Apply,
    in_cells: list[list],
    out_cells: list[list],
    flags: list[list],
    checks: list,
    check: Any | None,
) -> Any | None:
    """The thunk of a fused node whose outputs are all new arrays from ufuncs called
    directly (:func:`_composite_body`): the body's values go to the output cells as they
    are (a value of another kind or dtype, from an unusual input, gets ``perform``'s
    steps). None when that is not so (0-d outputs are NumPy scalars, in-place outputs,
    values from an op's ``impl``): :func:`_impl_thunk` then."""
    body, trusted = _composite_body(op)
    if op.inplace_pattern or not all(trusted) or node.outputs[0].type.ndim == 0:
        return None
    odts = [v.type.numpy_dtype for v in node.outputs]
    ondim = node.outputs[0].type.ndim
    if len(out_cells) == 1:
        (o0,) = out_cells
        (odt,) = odts
        if len(in_cells) == 1 and not checks:
            (i0,) = in_cells

            def thunk() -> None:
                a = i0[0]
                v = body(a)
                if type(v) is not _ndarray or v.dtype is not odt:
                    v = _finish(v, [a], odt, ondim, None)
                o0[0] = v
                for flag in flags:
                    flag[0] = True

        elif len(in_cells) == 2 and not checks:
            i0, i1 = in_cells

            def thunk() -> None:
                a = i0[0]
                b = i1[0]
                v = body(a, b)
                if type(v) is not _ndarray or v.dtype is not odt:
                    v = _finish(v, [a, b], odt, ondim, None)
                o0[0] = v
                for flag in flags:
                    flag[0] = True

        elif len(in_cells) == 2:  # both inputs checked at these dimensions (as "u2_dims")
            i0, i1 = in_cells
            dims = tuple(d for d, _ in checks)
            check_broadcast = op._check_runtime_broadcast

            def thunk() -> None:
                a = i0[0]
                b = i1[0]
                sa = a.shape
                sb = b.shape
                for d in dims:
                    if sa[d] != sb[d]:
                        check_broadcast(node, [a, b])
                v = body(a, b)
                if type(v) is not _ndarray or v.dtype is not odt:
                    v = _finish(v, [a, b], odt, ondim, None)
                o0[0] = v
                for flag in flags:
                    flag[0] = True

        else:

            def thunk() -> None:
                vals = [c[0] for c in in_cells]
                if checks:
                    check(vals)
                v = body(*vals)
                if type(v) is not _ndarray or v.dtype is not odt:
                    v = _finish(v, vals, odt, ondim, None)
                o0[0] = v
                for flag in flags:
                    flag[0] = True

        return thunk

    def thunk() -> None:
        vals = [c[0] for c in in_cells]
        if checks:
            check(vals)
        for cell, odt, v in zip(out_cells, odts, body(*vals)):
            if type(v) is not _ndarray or v.dtype is not odt:
                v = _finish(v, vals, odt, ondim, None)
            cell[0] = v
        for flag in flags:
            flag[0] = True

    return thunk


@register_python_thunk(Elemwise, accepts=_plain_elemwise)
def elemwise_thunk(
    op: Elemwise,
    node: Apply,
    storage_map: dict,
    compute_map: dict | None,
    no_recycling: Sequence[Variable],
    impl: str | None = None,
) -> Any:
    """A thunk computing what ``Elemwise.perform`` computes: a NumPy ufunc called directly
    where the scalar op is one (:func:`_direct_ufunc`), else the scalar op's ``impl`` and
    ``perform``'s steps on each result, with the broadcast checks the static shapes leave."""
    op.prepare_node(node, storage_map, compute_map, "py")
    in_cells = _zero_d_constants(node, [storage_map[v] for v in node.inputs])
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

    if op.inplace_pattern:  # decided here, once: the other thunks never test for it on a call
        # a fused body writing into its targets, a ufunc called with out= its target, else
        # the op's impl (fresh results; a cast in place keeps its dtype: rare)
        odt = node.outputs[0].type.numpy_dtype
        ufunc = (
            _direct_call(op.scalar_op, [v.type.numpy_dtype for v in node.inputs], odt)
            if op.nout == 1
            else None
        )
        if isinstance(op.scalar_op, Composite):
            thunk = _inplace_composite_thunk(op, node, in_cells, out_cells, flags, checks, check)
        elif ufunc is not None and ufunc[0] != "cast":
            thunk = _inplace_ufunc_thunk(op, node, ufunc, in_cells, out_cells, flags, checks, check)
        else:
            thunk = _impl_thunk(op, node, op.scalar_op.impl, in_cells, out_cells, flags, checks, check)
        thunk.sets_outputs = True
    elif direct is None and isinstance(op.scalar_op, Composite):
        # a fused body runs as one generated function on the arrays (ufuncs called directly)
        thunk = _composite_thunk(op, node, in_cells, out_cells, flags, checks, check)
        if thunk is None:
            thunk = _impl_thunk(op, node, _composite_body(op)[0], in_cells, out_cells, flags, checks, check)
        else:  # every output a new array from a ufunc (distinct ones, for several outputs)
            thunk.fresh_outputs = True
        thunk.sets_outputs = True
    elif direct is None:
        thunk = _impl_thunk(op, node, op.scalar_op.impl, in_cells, out_cells, flags, checks, check)
    else:
        thunk = _direct_thunk(op, node, direct, in_cells, out_cells, flags, checks, check, check_broadcast)
        # each variant sets its one output (or raises), a new array: a ufunc's result, or
        # after perform's steps a copy where it could alias an input
        thunk.sets_outputs = thunk.fresh_outputs = True
    return _with_attrs(thunk, op, in_cells, out_cells)


def one_element_as_0d(node: Apply, var: Variable) -> np.ndarray | None:
    """The data of ``var``, an input of ``node``, as a 0-d array where it is a constant of
    one element and rank > 0 and another input is not a constant (and so has the output's
    rank: the result's shape is the same); else None. NumPy sets up the broadcasting of a
    length-1 dimension on every call (0.45 µs of ``np.add(x, k)`` on 3 elements, where ``k``
    has shape (1,)), and of a 0-d array not at all. Both the thunks here and tier 1's
    written-out calls (:mod:`arignote.link.python.codegen`) pass such constants so."""
    data = var.data if isinstance(var, Constant) else None
    if type(data) is not _ndarray or not data.ndim or data.size != 1:
        return None
    if all(isinstance(v, Constant) for v in node.inputs):
        return None
    return data.reshape(())


def _zero_d_constants(node: Apply, in_cells: list[list]) -> list[list]:
    """``in_cells`` with each constant :func:`one_element_as_0d` takes in a cell of its own
    holding the 0-d array."""
    cells = list(in_cells)
    for k, v in enumerate(node.inputs):
        zero_d = one_element_as_0d(node, v)
        if zero_d is not None:
            cells[k] = [zero_d]
    return cells


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
    impl: Callable,
    in_cells: list[list],
    out_cells: list[list],
    flags: list[list],
    checks: list,
    check: Any | None,
) -> Any:
    """The Elemwise thunk for any other scalar op: ``impl`` (the scalar op's, or a fused
    body's function), then perform's steps on each result, an in-place output left
    fresh (no ufunc to write it into its target). Several outputs never share memory
    unless declared: a result that is another's array, or a view of one (a body's
    ``identity`` or ``real``), is copied."""
    out_types = [v.type for v in node.outputs]
    inplace = dict(op.inplace_pattern)
    finish = [
        (cell, t.numpy_dtype, t.ndim, inplace.get(k)) for k, (cell, t) in enumerate(zip(out_cells, out_types))
    ]

    if op.nout == 1:
        ((cell0, dtype0, ndim0, target0),) = finish

        def thunk() -> None:
            vals = [c[0] for c in in_cells]
            if checks:
                check(vals)
            cell0[0] = _finish(impl(*vals), vals, dtype0, ndim0, target0)
            for flag in flags:
                flag[0] = True

        return thunk

    def thunk() -> None:
        vals = [c[0] for c in in_cells]
        if checks:
            check(vals)
        results = impl(*vals)
        done: list = []
        for (cell, dtype, ndim, target), value in zip(finish, results):
            value = _finish(value, vals, dtype, ndim, target)
            if (target is None or value is not vals[target]) and done and _may_alias_any(value, done):
                value = value.copy()
            done.append(value)
            cell[0] = value
        for flag in flags:
            flag[0] = True

    return thunk


def _may_alias_any(value: np.ndarray, others: list) -> bool:
    """Whether ``value`` is one of ``others`` or may share memory with one (only a view,
    ``base`` not None, can share memory with another array)."""
    for other in others:
        if other is value or (
            (value.base is not None or other.base is not None) and np.may_share_memory(value, other)
        ):
            return True
    return False


def _inplace_ufunc_thunk(
    op: Elemwise,
    node: Apply,
    direct: tuple[str, Any],
    in_cells: list[list],
    out_cells: list[list],
    flags: list[list],
    checks: list,
    check: Any | None,
) -> Any:
    """``fn(*inputs, out=target)``, specialised by arity like :func:`_direct_thunk`. A
    target the ufunc cannot write (not an ndarray, read-only) raises before anything is
    written: the fresh result then (``perform``'s steps raise again a genuine error)."""
    kind, fn = direct
    ((_, t),) = op.inplace_pattern
    (o0,) = out_cells
    (f0,) = flags
    odt = node.outputs[0].type.numpy_dtype
    ondim = node.outputs[0].type.ndim
    n = len(in_cells)
    tc = in_cells[t]
    check_broadcast = op._check_runtime_broadcast

    def fresh(vals: list) -> np.ndarray:
        if kind == "chain":
            v = vals[0]
            for x in vals[1:]:
                v = fn(v, x)
        else:
            v = fn(*vals)
        return _finish(v, vals, odt, ondim, None)

    if n == 1:
        (i0,) = in_cells

        def thunk() -> None:
            a = i0[0]
            try:
                o0[0] = fn(a, out=a)
            except (TypeError, ValueError):
                o0[0] = fresh([a])
            f0[0] = True

        return thunk

    if n == 2 and kind == "ufunc":
        i0, i1 = in_cells
        dims = tuple(d for d, _ in checks)  # both inputs checked there (as "u2_dims")

        def thunk() -> None:
            a = i0[0]
            b = i1[0]
            if dims:
                sa = a.shape
                sb = b.shape
                for d in dims:
                    if sa[d] != sb[d]:
                        check_broadcast(node, [a, b])
            try:
                o0[0] = fn(a, b, out=tc[0])
            except (TypeError, ValueError):
                o0[0] = fresh([a, b])
            f0[0] = True

        return thunk

    last = n - 1

    def thunk() -> None:
        vals = [c[0] for c in in_cells]
        if checks:
            check(vals)
        try:
            if kind == "chain":  # ((a + b) + c) + ..., the last step written into the target
                v = vals[0]
                for x in vals[1:last]:
                    v = fn(v, x)
                o0[0] = fn(v, vals[last], out=vals[t])
            else:
                o0[0] = fn(*vals, out=vals[t])
        except (TypeError, ValueError):
            o0[0] = fresh(vals)
        f0[0] = True

    return thunk


def _inplace_body(op: Elemwise, node: Apply) -> tuple[Any, tuple[bool, ...]]:
    """``(body, written)``: the fused body of ``op`` as a Python function on arrays (ufuncs
    called directly, as :func:`_composite_body`'s) in which the last ufunc computing each
    in-place output ``k`` writes it into its target input (``out=``); ``written[k]`` says
    which outputs are so written (the function then returns the target array for them).

    Output ``k`` is written so when its last step is a ufunc (or a pairwise add/multiply),
    it is not also another output, and no later step reads the target's memory: the
    target input, the node's inputs that are views of the same value, or what an op's
    ``impl`` made of them (it may return a view: ``identity``), and no other output is
    such a value. Else it is computed fresh. The steps before it write into the target
    too, back along a chain of temporaries (ufunc results of the output's dtype and full
    size, each read only by the next step), from the target's last reader on: in place,
    ``exp(x) * 2 + 1`` allocates nothing (``exp(x, out=x)``, ``multiply(x, 2, out=x)``,
    ``add(x, 1, out=x)``). Memoised on the op, per which inputs share the targets'
    memory and which have the output's broadcastable pattern."""
    comp = op.scalar_op
    out_bc = node.outputs[0].type.broadcastable
    aliased = tuple(
        (k, t, tuple(j for j, v in enumerate(node.inputs) if view_root(v) is view_root(node.inputs[t])))
        for k, t in op.inplace_pattern
    )
    full_inputs = tuple(v.type.broadcastable == out_bc for v in node.inputs)
    plans = _plans(op)
    key = ("inplace_body", aliased, full_inputs)
    made = plans.get(key)
    if made is not None:
        return made
    order = comp.body_nodes
    specs = {n: _resolve_inner(n) for n in order}
    position = {n: p for p, n in enumerate(order)}
    outs = comp.inner_outputs
    ins = comp.inner_inputs
    n_readers: dict = {}  # inner variable -> how many steps read it
    full = {v for v, f in zip(ins, full_inputs) if f}  # values of the output's full size
    for n in order:
        for x in set(n.inputs):
            n_readers[x] = n_readers.get(x, 0) + 1
        if any(x in full for x in n.inputs):
            full.update(n.outputs)
    ufunc_steps = {n for n in order if specs[n] is not None and specs[n][0] in ("call", "chain")}
    write_at: dict[Apply, int] = {}  # a step -> the target input it writes into
    written = [False] * len(outs)
    for k, t, sharing in aliased:
        v = outs[k]
        step = v.owner
        if step not in ufunc_steps or step in write_at or sum(o is v for o in outs) != 1:
            continue
        alias = {ins[j] for j in sharing}
        last_read = -1  # the position of the last step reading the target's memory
        for n in order:
            if any(x in alias for x in n.inputs):
                last_read = position[n]
                if specs[n] is None:  # an op's impl may return (a view of) its input
                    alias.update(n.outputs)
        if position[step] < last_read or any(o in alias for j, o in enumerate(outs) if j != k):
            continue
        chain = [step]
        while True:  # back along temporaries read only by the chain's next step
            prev = next(
                (
                    x.owner
                    for x in chain[-1].inputs
                    if x.owner in ufunc_steps
                    and x.owner not in write_at
                    and x in full
                    and n_readers[x] == 1
                    and x.type.dtype == v.type.dtype
                    and not any(x is o for o in outs)
                    and position[x.owner] >= last_read
                ),
                None,
            )
            if prev is None:
                break
            chain.append(prev)
        for c in chain:
            write_at[c] = t
        written[k] = True

    body = comp.compile_body(_resolve_inner, write_at)
    made = plans[key] = (body, tuple(written))
    return made


def _writeable(x: Any) -> bool:
    return type(x) is _ndarray and x.flags.writeable


def _inplace_composite_thunk(
    op: Elemwise,
    node: Apply,
    in_cells: list[list],
    out_cells: list[list],
    flags: list[list],
    checks: list,
    check: Any | None,
) -> Any:
    """The thunk of an in-place fused node: :func:`_inplace_body` on the inputs, where
    each target is a writeable array (else the plain body, fresh results). One output
    gets variants by arity; its target is checked only when the body raises (a target
    that is no writeable array fails at the first write, before anything is written).
    Several are checked first: one could take writes before another fails."""
    body, written = _inplace_body(op, node)
    odts = [v.type.numpy_dtype for v in node.outputs]
    ondim = node.outputs[0].type.ndim

    if written == (True,) and len(in_cells) <= 2:

        def fallback(*vals: Any) -> np.ndarray:
            # the plain body, made on first use: a target that is no writeable array is rare
            plain, trusted = _composite_body(op)
            v = plain(*vals)
            if not trusted[0] or type(v) is not _ndarray or v.dtype is not odts[0]:
                v = _finish(v, list(vals), odts[0], ondim, None)
            return v

        (o0,) = out_cells
        ((_, t),) = op.inplace_pattern
        if len(in_cells) == 1:
            (i0,) = in_cells

            def thunk() -> None:
                a = i0[0]
                try:
                    o0[0] = body(a)
                except (TypeError, ValueError):
                    if _writeable(a):
                        raise  # a genuine error (the target took writes: no second try)
                    o0[0] = fallback(a)
                for flag in flags:
                    flag[0] = True

            return thunk

        i0, i1 = in_cells
        dims = tuple(d for d, _ in checks)  # both inputs checked there (as "u2_dims")
        check_broadcast = op._check_runtime_broadcast

        def thunk() -> None:
            a = i0[0]
            b = i1[0]
            if dims:
                sa = a.shape
                sb = b.shape
                for d in dims:
                    if sa[d] != sb[d]:
                        check_broadcast(node, [a, b])
            try:
                o0[0] = body(a, b)
            except (TypeError, ValueError):
                if _writeable(b if t else a):
                    raise
                o0[0] = fallback(a, b)
            for flag in flags:
                flag[0] = True

        return thunk

    made: list = []  # the plain body, compiled on first use (a link compiles what runs)

    def plain_body() -> tuple[Any, tuple[bool, ...]]:
        if not made:
            made.append(_composite_body(op))
        return made[0]

    def fresh(k: int, v: Any, vals: list) -> np.ndarray:
        if not plain_body()[1][k] or type(v) is not _ndarray or v.dtype is not odts[k]:
            v = _finish(v, vals, odts[k], ondim, None)
        return v

    targets = [(t, odts[k]) for k, t in op.inplace_pattern if written[k]]
    single = op.nout == 1

    def thunk() -> None:
        vals = [c[0] for c in in_cells]
        if checks:
            check(vals)
        fn = body
        for t, dt in targets:
            x = vals[t]
            if not _writeable(x) or x.dtype is not dt:
                fn = plain_body()[0]
                break
        results = fn(*vals)
        if single:
            results = (results,)
        done: list = []
        for k, cell in enumerate(out_cells):
            v = results[k]
            if not (written[k] and fn is body):
                v = fresh(k, v, vals)
                if done and not plain_body()[1][k] and _may_alias_any(v, done):
                    v = v.copy()
            done.append(v)
            cell[0] = v
        for flag in flags:
            flag[0] = True

    return thunk
