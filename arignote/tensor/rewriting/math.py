"""Rules about arithmetic: neutral and absorbing elements, gathering constants, cancellation,
useless shape and layout ops, powers (canonicalize and specialize).

Canonical forms (what the canonicalize stage leaves, so later rules see one case):

* **Sums** (``add``, ``sub``, ``neg``): one n-ary ``add`` of the positive terms minus one
  n-ary ``add`` of the negative ones, PyTensor's form: ``a + (-b)`` and ``a - b`` are both
  ``sub(a, b)``; ``a - b - c`` is ``sub(a, add(b, c))``; ``-a - b`` is ``neg(add(a, b))``;
  ``--a`` is ``a``. Constants are added up into one; ``x + 0`` is ``x``; a term and its
  negation cancel (``x - x`` is 0).
* **Products** (``mul``, ``true_div``, ``reciprocal``, ``neg``): one n-ary ``mul`` of the
  numerator factors over one n-ary ``mul`` of the denominator factors (``true_div``; a
  product without numerator factors is ``true_div(1, d)``); a factor ``-1`` is a ``neg``
  around the whole. Constants are multiplied into one; ``x * 1`` is ``x``; ``x * 0`` is
  0; a factor in the numerator and the denominator cancels (``x * y / y`` is ``x``,
  ``x / x`` is 1).

A sum or product is rewritten at its root only: a node whose one client is a node of the
same kind, computing in the same dtype, is part of its client's expression and waits for
it. A subexpression used elsewhere too is a leaf of the expression (it is not flattened
into it and recomputed). Only nodes computing in one dtype are flattened (integer wrapping
and mixed-dtype promotion are then unchanged), and every replacement has the output's Type
exactly: the dtype by a ``cast`` where needed, the broadcast shape by ``fill``
(``second``) with the operands that were dropped, which ``local_fill_to_alloc`` turns into
an ``Alloc`` from their shapes.

NaN and infinities: as in PyTensor's default mode, ``x * 0``, ``x - x``, ``x / x`` and
``x * y / y`` are simplified although ``inf * 0``, ``inf - inf``, ``0 / 0`` and
``x * 0 / 0`` are NaN: the rewritten graph gives 0, 0, 1 and ``x`` there.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from arignote.graph.basic import Apply, Constant, Variable
from arignote.graph.fg import FunctionGraph
from arignote.graph.rewriting.basic import node_rewriter
from arignote.graph.rewriting.db import register_rewrite
from arignote.scalar.basic import (
    Add,
    Cast,
    Exp,
    Log,
    Mul,
    Neg,
    Pow,
    Reciprocal,
    Second,
    Sub,
    TrueDiv,
)
from arignote.tensor.alloc import Alloc, alloc
from arignote.tensor.conversion import constant
from arignote.tensor.elemwise import DimShuffle, Elemwise
from arignote.tensor.indexing.basic import Subtensor
from arignote.tensor.products import Dot
from arignote.tensor.reductions import Sum
from arignote.tensor.rewriting.elemwise import elemwise_of, exact_cast
from arignote.tensor.rewriting.elemwise import scalar_op_of as _scalar_op
from arignote.tensor.shape import MakeVector, Reshape, Shape, Shape_i, SpecifyShape
from arignote.tensor.type_other import NoneTypeT
from arignote.tensor.ufuncs import (
    add,
    cast,
    ge,
    mul,
    neg,
    reciprocal,
    second,
    sqr,
    sqrt,
    sub,
    switch,
    true_div,
)

__all__ = [
    "local_add_canonizer",
    "local_mul_canonizer",
    "local_exp_log",
    "local_log_exp",
    "local_useless_dimshuffle",
    "local_dimshuffle_dimshuffle",
    "local_useless_reshape",
    "local_useless_specify_shape",
    "local_useless_alloc",
    "local_alloc_of_alloc",
    "local_useless_cast",
    "local_sum_of_alloc",
    "local_subtensor_of_subtensor",
    "local_fill_to_alloc",
    "local_pow_specialize",
    "local_sum_of_mul_to_dot",
    "local_div_of_div",
    "flatten_nested_sums",
    "flatten_nested_products",
]


# --- helpers --------------------------------------------------------------------------------


def _uniform_value(v: Variable, depth: int = 8) -> np.ndarray | None:
    """The one value every element of ``v`` has, when it is known statically: a constant
    whose elements are all equal, and ``Alloc``/``fill``/``DimShuffle``/cast of one."""
    while depth:
        depth -= 1
        if isinstance(v, Constant):
            data = np.asarray(v.data)
            if data.size == 0:
                return None
            first = data.reshape(-1)[0]
            same = data == first if data.dtype.kind not in "fc" or not np.isnan(first) else np.isnan(data)
            return np.asarray(first) if np.all(same) else None
        node = v.owner
        if node is None:
            return None
        if isinstance(node.op, (Alloc, DimShuffle)):
            v = node.inputs[0]
            continue
        sop = _scalar_op(node)
        if isinstance(sop, Second):
            v = node.inputs[1]
            continue
        if isinstance(sop, Cast):
            inner = _uniform_value(node.inputs[0], depth)
            if inner is None:
                return None
            with np.errstate(all="ignore"):
                return np.asarray(inner.astype(node.outputs[0].type.dtype))
        return None
    return None


def _constant_data(v: Variable, dtype: str) -> np.ndarray | None:
    """The value of a constant operand in ``dtype`` (its own shape for a Constant, one value
    for an Alloc/fill of one), if it converts exactly; else None."""
    if isinstance(v, Constant):
        data = np.asarray(v.data)
        if data.size > 16:
            return _in_dtype(data, dtype)
        # a small constant is asked about again and again: converted once per dtype
        seen = v.__dict__.setdefault("_in_dtype", {})
        if dtype not in seen:
            seen[dtype] = _in_dtype(data, dtype)
        return seen[dtype]
    if v.owner is None:
        return None
    data = _uniform_value(v)
    if data is None:
        return None
    return _in_dtype(data, dtype)


def _in_dtype(data: np.ndarray, dtype: str) -> np.ndarray | None:
    return data if data.dtype == dtype else exact_cast(data, dtype)


def _broadcast_static(a: Sequence[int | None], b: Sequence[int | None]) -> tuple:
    out = []
    for x, y in zip(a, b):
        if x == 1:
            out.append(y)
        elif y == 1 or x == y:
            out.append(x)
        elif x is None:
            out.append(y)
        elif y is None:
            out.append(x)
        else:  # statically incompatible: cannot happen inside one Elemwise expression
            out.append(x)
    return tuple(out)


def _fit(new: Variable, out: Variable, removed: Sequence[Variable]) -> Variable | None:
    """``new`` made to have ``out``'s Type: cast to its dtype, then broadcast (``fill``) by
    the operands in ``removed`` that gave ``out`` its shape; None where that is not enough."""
    otype = out.type
    if new.type.dtype != otype.dtype:
        new = cast(new, otype.dtype)
    if new.type.ndim != otype.ndim:
        return None
    for r in removed:
        if new.type.shape == otype.shape:
            break
        if r.type.ndim != otype.ndim:
            continue
        if _broadcast_static(new.type.shape, r.type.shape) != new.type.shape:
            new = second(r, new)
    if new.type != otype:
        return None
    return new


def _same_graph(a: Variable, b: Variable, depth: int = 4) -> bool:
    """Whether ``a`` and ``b`` compute the same thing the same way (to ``depth`` nodes)."""
    if a is b:
        return True
    if isinstance(a, Constant) and isinstance(b, Constant):
        da, db = np.asarray(a.data), np.asarray(b.data)
        nan = da.dtype.kind in "fc"
        return a.type == b.type and da.dtype == db.dtype and np.array_equal(da, db, equal_nan=nan)
    if depth == 0 or a.owner is None or b.owner is None:
        return False
    na, nb = a.owner, b.owner
    return (
        na.op == nb.op
        and a.index == b.index
        and len(na.inputs) == len(nb.inputs)
        and all(_same_graph(x, y, depth - 1) for x, y in zip(na.inputs, nb.inputs))
    )


def _const(value: np.ndarray, dtype: str, ndim: int) -> Variable:
    """A constant holding ``value`` in ``dtype``, left-padded to ``ndim`` dimensions."""
    arr = np.asarray(value, dtype=dtype)
    if arr.ndim < ndim:
        arr = arr.reshape((1,) * (ndim - arr.ndim) + arr.shape)
    return constant(arr)


def _single_client(fgraph: FunctionGraph, var: Variable) -> Apply | None:
    clients = fgraph.clients.get(var, ())
    if len(clients) != 1:
        return None
    return clients[0][0]


class _Family:
    """One kind of n-ary expression: sums or products. ``ops`` are the scalar op classes
    flattened into it; ``expand`` lists a node's operands with their side (True: the
    positive terms / numerator)."""

    def __init__(self, name: str, ops: tuple[type, ...], expand: Callable[[Any, Apply, bool], list]):
        self.name = name
        self.ops = ops
        self.expand = expand

    def member(self, node: Apply | None) -> Any:
        sop = _scalar_op(node)
        return sop if isinstance(sop, self.ops) else None


def _homogeneous(node: Apply, dtype: str) -> bool:
    """``node`` computes in ``dtype``: its output has it, and each input has it or is a
    constant that converts to it exactly."""
    if node.outputs[0].type.dtype != dtype:
        return False
    return all(i.type.dtype == dtype or _constant_data(i, dtype) is not None for i in node.inputs)


def _family_dtype_ok(dtype: str) -> bool:
    return dtype != "bool"


def _absorbed(fgraph: FunctionGraph, node: Apply, family: _Family) -> bool:
    """Whether ``node`` (of ``family``) is part of its only client's expression."""
    client = _single_client(fgraph, node.outputs[0])
    if client is None or family.member(client) is None:
        return False
    dtype = client.outputs[0].type.dtype
    return _family_dtype_ok(dtype) and _homogeneous(client, dtype) and _homogeneous(node, dtype)


class _Terms:
    """An expression flattened: the operands on each side, constants apart."""

    def __init__(self) -> None:
        self.sides: tuple[list[Variable], list[Variable]] = ([], [])  # (positive, negative)
        self.consts: tuple[list[tuple[int, Variable]], list[tuple[int, Variable]]] = ([], [])
        self.flips = 0  # negations seen (products)
        self.nodes = 0  # nodes flattened, the root included


def _flatten(fgraph: FunctionGraph, root: Apply, family: _Family, dtype: str) -> _Terms:
    terms = _Terms()
    stack: list[tuple[Variable, bool, bool]] = [(root.outputs[0], True, True)]
    while stack:
        var, positive, is_root = stack.pop()
        node = var.owner
        if is_root or (
            node is not None
            and family.member(node) is not None
            and _single_client(fgraph, var) is not None
            and _homogeneous(node, dtype)
        ):
            terms.nodes += 1
            operands = family.expand(family.member(node), node, positive)
            if operands is None:  # a negation (a product's sign)
                terms.flips += 1
                stack.append((node.inputs[0], positive, False))
                continue
            stack.extend((v, side, False) for v, side in reversed(operands))
            continue
        side = 0 if positive else 1
        if _constant_data(var, dtype) is not None:
            terms.consts[side].append((len(terms.sides[side]), var))
        else:
            terms.sides[side].append(var)
    return terms


def _expand_sum(sop: Any, node: Apply, positive: bool) -> list:
    if isinstance(sop, Add):
        return [(i, positive) for i in node.inputs]
    if isinstance(sop, Sub):
        return [(node.inputs[0], positive), (node.inputs[1], not positive)]
    return [(node.inputs[0], not positive)]  # Neg


def _expand_product(sop: Any, node: Apply, positive: bool) -> list | None:
    if isinstance(sop, Mul):
        return [(i, positive) for i in node.inputs]
    if isinstance(sop, TrueDiv):
        return [(node.inputs[0], positive), (node.inputs[1], not positive)]
    if isinstance(sop, Reciprocal):
        return [(node.inputs[0], not positive)]
    return None  # Neg: a factor -1


SUMS = _Family("sum", (Add, Sub, Neg), _expand_sum)
PRODUCTS = _Family("product", (Mul, TrueDiv, Reciprocal, Neg), _expand_product)


def _cancel(terms: _Terms) -> list[Variable]:
    """Remove the operands present on both sides (as many times as they are); returns them."""
    pos, negs = terms.sides
    if not pos or not negs:
        return []
    count: dict[Variable, int] = {}
    for v in negs:
        count[v] = count.get(v, 0) + 1
    cancelled: list[Variable] = []
    kept_pos = []
    for v in pos:
        if count.get(v, 0):
            count[v] -= 1
            cancelled.append(v)
        else:
            kept_pos.append(v)
    if not cancelled:
        return []
    again = dict.fromkeys(cancelled, 0)
    for v in cancelled:
        again[v] += 1
    kept_neg = []
    for v in negs:
        if again.get(v, 0):
            again[v] -= 1
        else:
            kept_neg.append(v)
    pos[:], negs[:] = kept_pos, kept_neg
    return cancelled


def _gather(values: list[np.ndarray], ufunc: Any, dtype: str) -> np.ndarray | None:
    if not values:
        return None
    with np.errstate(all="ignore"):
        return np.asarray(functools.reduce(ufunc, values), dtype=dtype)


def _n_ary(op: Elemwise, operands: list[Variable]) -> Variable:
    return operands[0] if len(operands) == 1 else op(*operands)


def _insert(operands: list[Variable], at: int, value: Variable) -> list[Variable]:
    return [*operands[:at], value, *operands[at:]]


def _canonize(fgraph: FunctionGraph, node: Apply, family: _Family) -> list[Variable] | None:
    out = node.outputs[0]
    dtype = out.type.dtype
    if not _family_dtype_ok(dtype):
        return None
    if not _homogeneous(node, dtype):
        return _mixed_dtypes(node, family)
    if _absorbed(fgraph, node, family):
        return None  # its client's expression includes it
    is_sum = family is SUMS
    if not is_sum and isinstance(_scalar_op(node), Neg) and PRODUCTS.member(node.inputs[0].owner) is None:
        return None  # -x, of no product: a sum's business
    terms = _flatten(fgraph, node, family, dtype)
    cancelled = _cancel(terms)
    if terms.nodes == 1 and not cancelled and _plain_constants(terms, is_sum, dtype):
        return None  # the common case, decided without gathering anything
    ndim = out.type.ndim
    # the constants of each side, gathered
    ufunc = np.add if is_sum else np.multiply
    gathered = [_gather([_constant_data(v, dtype) for _, v in terms.consts[s]], ufunc, dtype) for s in (0, 1)]
    const_vars = [v for s in (0, 1) for _, v in terms.consts[s]]
    simple_consts = (
        len(terms.consts[0]) <= 1
        and len(terms.consts[1]) <= 1
        and not (terms.consts[0] and terms.consts[1])
        and all(isinstance(v, Constant) for v in const_vars)
    )
    neutral = np.zeros((), dtype) if is_sum else np.ones((), dtype)
    sign = -1 if terms.flips % 2 else 1
    value = None  # the one constant left, and its side
    value_side = 0
    if gathered[0] is not None and gathered[1] is not None:
        with np.errstate(all="ignore"):
            value = gathered[0] - gathered[1] if is_sum else gathered[0] / gathered[1]
            value = np.asarray(value, dtype=dtype)
    elif gathered[0] is not None:
        value = gathered[0]
    elif gathered[1] is not None:
        value, value_side = gathered[1], 1
    zero = value is not None and not is_sum and value_side == 0 and not np.any(value)
    if value is not None and np.all(value == neutral):
        value = None
    elif value is not None and not is_sum and not zero and np.all(value == np.asarray(-1).astype(dtype)):
        value, sign = None, -sign
        simple_consts = False
    if (
        terms.nodes == 1
        and not cancelled
        and simple_consts
        and not zero
        and (value is not None or not const_vars)
        and (is_sum or not isinstance(_scalar_op(node), Mul) or sign == 1)
    ):
        return None  # nothing to gather, cancel or flatten
    pos, negs = terms.sides
    removed = [*cancelled, *const_vars]
    if zero:
        new = _const(np.zeros((), dtype), dtype, ndim)
        return _replacement(new, out, [*pos, *negs, *removed])
    if value is not None:
        cvar = _const(value, dtype, ndim)
        first = terms.consts[value_side][0][0] if terms.consts[value_side] else 0
        if value_side == 0:
            pos = _insert(pos, first, cvar)
        else:
            negs = _insert(negs, first, cvar)
    new = _rebuild_sum(pos, negs, dtype, ndim) if is_sum else _rebuild_product(pos, negs, dtype, ndim)
    if sign < 0:
        new = neg(new)
    if _same_graph(new, out):
        return None
    return _replacement(new, out, removed)


def _plain_constants(terms: _Terms, is_sum: bool, dtype: str) -> bool:
    """No constant, or one Constant that is not neutral, zero (products) or -1 (products)."""
    consts = terms.consts[0] or terms.consts[1]
    if not consts:
        return True
    if len(terms.consts[0]) + len(terms.consts[1]) != 1 or not isinstance(consts[0][1], Constant):
        return False
    data = _constant_data(consts[0][1], dtype)
    if data.size == 1:  # the usual case, decided on a Python scalar (NumPy's any/all cost µs)
        value = data.item()
        if is_sum:
            return bool(value)
        return value != 1 and bool(value) and value != np.asarray(-1).astype(dtype).item()
    if is_sum:
        return bool(np.any(data))
    return (
        bool(np.any(data != 1)) and bool(np.all(data)) and bool(np.any(data != np.asarray(-1).astype(dtype)))
    )


def _replacement(new: Variable, out: Variable, removed: Sequence[Variable]) -> list[Variable] | None:
    fitted = _fit(new, out, removed)
    return None if fitted is None else [fitted]


def _rebuild_sum(pos: list[Variable], negs: list[Variable], dtype: str, ndim: int) -> Variable:
    if not pos and not negs:
        return _const(np.zeros((), dtype), dtype, ndim)
    if not negs:
        return _n_ary(add, pos)
    if not pos:
        return neg(_n_ary(add, negs))
    return sub(_n_ary(add, pos), _n_ary(add, negs))


def _rebuild_product(num: list[Variable], den: list[Variable], dtype: str, ndim: int) -> Variable:
    if not num and not den:
        return _const(np.ones((), dtype), dtype, ndim)
    if not den:
        return _n_ary(mul, num)
    if not num:
        num = [_const(np.ones((), dtype), dtype, ndim)]
    return true_div(_n_ary(mul, num), _n_ary(mul, den))


def _mixed_dtypes(node: Apply, family: _Family) -> list[Variable] | None:
    """The neutral and absorbing elements of a node whose operands have several dtypes
    (``x * 1.0`` with an int8 ``x`` is a float32 ``x``, not ``x``); ``x / x`` in any dtype.
    Nothing is regrouped: mixed-dtype arithmetic promotes as it goes."""
    out = node.outputs[0]
    dtype = out.type.dtype
    sop = _scalar_op(node)
    ndim = out.type.ndim
    if isinstance(sop, TrueDiv) and node.inputs[0] is node.inputs[1]:
        return _replacement(_const(np.ones((), dtype), dtype, ndim), out, list(node.inputs))
    if not isinstance(sop, (Add, Mul)):
        return None
    is_sum = isinstance(sop, Add)
    values = [_uniform_value(i) if not isinstance(i, Constant) or i.data.size else None for i in node.inputs]
    consts = [i for i, v in zip(node.inputs, values) if v is not None]
    others = [i for i, v in zip(node.inputs, values) if v is None]
    if not consts:
        return None
    if not is_sum and any(not np.any(v) for v in values if v is not None):
        return _replacement(_const(np.zeros((), dtype), dtype, ndim), out, list(node.inputs))
    neutral = 0 if is_sum else 1
    if len(others) != 1 or not all(np.all(v == neutral) for v in values if v is not None):
        return None
    return _replacement(others[0], out, consts)


@register_rewrite("canonicalize", "fast_run")
@node_rewriter(elemwise_of(Add, Sub, Neg))
def local_add_canonizer(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """A sum (``add``/``sub``/``neg`` nodes computing in one dtype) in the canonical form
    ``add(positive terms) - add(negative terms)``: flattened, constants added up, ``x + 0``
    and ``--x`` gone, a term and its negation cancelled (``x - x`` is 0, although
    ``inf - inf`` is NaN, as in PyTensor). The result keeps the output's shape and dtype."""
    if SUMS.member(node) is None:
        return None
    return _canonize(fgraph, node, SUMS)


@register_rewrite("canonicalize", "fast_run")
@node_rewriter(elemwise_of(Mul, TrueDiv, Reciprocal, Neg))
def local_mul_canonizer(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """A product (``mul``/``true_div``/``reciprocal``/``neg`` nodes computing in one dtype)
    in the canonical form ``mul(numerator) / mul(denominator)``: flattened, constants
    multiplied (``2 * (3 * x)`` is ``6 * x``), ``x * 1`` gone, ``x * 0`` zeros of the
    output's shape and dtype, a factor on both sides cancelled (``x * y / y`` is ``x``,
    ``x / x`` is 1), a factor ``-1`` a ``neg``. As in PyTensor, ``inf * 0`` and ``x / x`` at
    0 are not NaN after this."""
    if PRODUCTS.member(node) is None:
        return None
    return _canonize(fgraph, node, PRODUCTS)


def _flatten_nested(fgraph: FunctionGraph, node: Apply, family: _Family) -> list[Variable] | None:
    if family.member(node) is None:
        return None
    clients = fgraph.clients
    for i in node.inputs:
        if family.member(i.owner) is not None and len(clients.get(i, ())) == 1:
            return _canonize(fgraph, node, family)
    return None  # nothing nested: the canonizer decides in the pass's order


@register_rewrite("canonicalize", "fast_run")
@node_rewriter(elemwise_of(Add, Sub), roots_first=True)
def flatten_nested_sums(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """A sum of sums put in canonical form at its root (:func:`local_add_canonizer`)
    before the pass visits its inner nodes (``roots_first``): ``((a + b) + c) + ...`` of
    10,000 terms is flattened once, and the nodes it absorbs leave the graph unvisited."""
    return _flatten_nested(fgraph, node, SUMS)


@register_rewrite("canonicalize", "fast_run")
@node_rewriter(elemwise_of(Mul, TrueDiv), roots_first=True)
def flatten_nested_products(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """A product of products put in canonical form at its root
    (:func:`local_mul_canonizer`) before the pass visits its inner nodes."""
    return _flatten_nested(fgraph, node, PRODUCTS)


# --- exp and log ------------------------------------------------------------------------------


@register_rewrite("canonicalize", "fast_run")
@node_rewriter(elemwise_of(Log))
def local_log_exp(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """``log(exp(x))`` is ``x`` (exactly, where ``exp(x)`` overflows too), cast to the
    output's dtype."""
    if not isinstance(_scalar_op(node), Log):
        return None
    inner = node.inputs[0].owner
    if not isinstance(_scalar_op(inner), Exp):
        return None
    x = inner.inputs[0]
    if x.type.dtype[:7] == "complex":
        return None  # log(exp(z)) wraps the imaginary part to (-pi, pi]
    return _replacement(x, node.outputs[0], [])


@register_rewrite("canonicalize", "fast_run")
@node_rewriter(elemwise_of(Exp))
def local_exp_log(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """``exp(log(x))`` is ``x`` where ``x >= 0`` and NaN elsewhere (what ``log`` gives a
    negative number), as PyTensor rewrites it; real dtypes only."""
    if not isinstance(_scalar_op(node), Exp):
        return None
    inner = node.inputs[0].owner
    if not isinstance(_scalar_op(inner), Log):
        return None
    x = inner.inputs[0]
    out = node.outputs[0]
    if x.type.dtype[:7] == "complex" or out.type.dtype[:5] != "float":
        return None
    xf = cast(x, out.type.dtype)
    nan = _const(np.asarray(np.nan, out.type.dtype), out.type.dtype, out.type.ndim)
    return _replacement(switch(ge(xf, 0), xf, nan), out, [])


# --- useless layout and shape ops -------------------------------------------------------------


@register_rewrite("canonicalize", "fast_run")
@node_rewriter([DimShuffle])
def local_useless_dimshuffle(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """A DimShuffle keeping every dimension in place is its input, as is one that drops a
    dimension of length 1 (by its Type) and adds one in its place (``(0, 'x')`` of an
    ``(n, 1)`` matrix)."""
    op = node.op
    static = node.inputs[0].type.shape
    order = op.new_order
    if len(order) != op.input_ndim or any(
        d != p and not (d == "x" and static[p] == 1 and p not in order) for p, d in enumerate(order)
    ):
        return None
    x = node.inputs[0]
    return [x] if x.type == node.outputs[0].type else None


@register_rewrite("canonicalize", "fast_run")
@node_rewriter([DimShuffle])
def local_dimshuffle_dimshuffle(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """A DimShuffle of a DimShuffle is one DimShuffle (none when they undo each other:
    ``x.T.T`` is ``x``)."""
    inner = node.inputs[0].owner
    if inner is None or not isinstance(inner.op, DimShuffle):
        return None
    inner_order = inner.op.new_order
    order = ["x" if d == "x" else inner_order[d] for d in node.op.new_order]
    x = inner.inputs[0]
    if order == list(range(x.type.ndim)):
        return [x] if x.type == node.outputs[0].type else None
    new = DimShuffle(input_ndim=x.type.ndim, new_order=order)(x)
    return [new] if new.type == node.outputs[0].type else None


def _is_length_of(length: Variable, x: Variable, d: int) -> bool:
    """Whether the 0-d ``length`` is provably ``x.shape[d]``."""
    static = x.type.shape[d]
    if static is not None and isinstance(length, Constant):
        return int(np.asarray(length.data)) == static
    node = length.owner
    if node is None:
        return False
    if isinstance(node.op, Shape_i):
        return node.inputs[0] is x and node.op.i == d
    if isinstance(node.op, Subtensor) and node.op.idx_list in ((d,), (d - x.type.ndim,)):
        shp = node.inputs[0].owner  # x.shape[d]
        return shp is not None and isinstance(shp.op, Shape) and shp.inputs[0] is x
    if isinstance(_scalar_op(node), Cast) and node.inputs[0].type.dtype[:3] in ("int", "uin"):
        return _is_length_of(node.inputs[0], x, d)
    return False


@register_rewrite("canonicalize", "fast_run")
@node_rewriter([Reshape])
def local_useless_reshape(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """A Reshape to the shape its input already has: to the same static shape, to
    ``x.shape``, or to a vector of ``x``'s own lengths."""
    x, shp = node.inputs
    out = node.outputs[0]
    if x.type.ndim != out.type.ndim or not out.type.is_super(x.type):
        return None
    if None not in x.type.shape and x.type.shape == out.type.shape:
        return [x]
    if shp.owner is not None and isinstance(shp.owner.op, Shape) and shp.owner.inputs[0] is x:
        return [x]
    if isinstance(shp, Constant):
        entries = [constant(np.int64(s)) for s in np.asarray(shp.data).reshape(-1)]
    elif shp.owner is not None and isinstance(shp.owner.op, MakeVector):
        entries = list(shp.owner.inputs)
    else:
        return None
    if len(entries) == x.type.ndim and all(_is_length_of(e, x, d) for d, e in enumerate(entries)):
        return [x]
    return None


@register_rewrite("canonicalize", "fast_run")
@node_rewriter([SpecifyShape])
def local_useless_specify_shape(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """A SpecifyShape asserting only what the input's Type (or its own shape) already says."""
    x, *lengths = node.inputs
    for d, s in enumerate(lengths):
        if isinstance(s.type, NoneTypeT) or _is_length_of(s, x, d):
            continue
        return None
    return [x] if node.outputs[0].type.is_super(x.type) else None


@register_rewrite("canonicalize", "fast_run")
@node_rewriter([Alloc])
def local_useless_alloc(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """An Alloc of a value that already has the allocated shape is that value."""
    v, *lengths = node.inputs
    if v.type.ndim != len(lengths):
        return None
    if not all(_is_length_of(s, v, d) for d, s in enumerate(lengths)):
        return None
    return [v] if node.outputs[0].type.is_super(v.type) else None


@register_rewrite("canonicalize", "fast_run")
@node_rewriter([Alloc])
def local_alloc_of_alloc(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """``alloc(alloc(v, *s1), *s2)`` is ``alloc(v, *s2)`` when the inner shape is only 1s or
    lengths the outer one also has statically (so no run-time check is lost)."""
    inner, *lengths = node.inputs
    if inner.owner is None or not isinstance(inner.owner.op, Alloc):
        return None
    out = node.outputs[0]
    v = inner.owner.inputs[0]
    offset = out.type.ndim - inner.type.ndim
    for j, s in enumerate(inner.type.shape):
        if s != 1 and (s is None or s != out.type.shape[offset + j]):
            return None
    v_offset = inner.type.ndim - v.type.ndim
    for j, s in enumerate(v.type.shape):
        if s != 1 and s != inner.type.shape[v_offset + j]:
            return None  # the inner Alloc checks v's length at run time
    new = alloc(v, *lengths)
    return [new] if new.type == out.type else None


@register_rewrite("canonicalize", "fast_run")
@node_rewriter(elemwise_of(Cast))
def local_useless_cast(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """A cast to the dtype its input already has."""
    if not isinstance(_scalar_op(node), Cast):
        return None
    x = node.inputs[0]
    return [x] if x.type == node.outputs[0].type else None


@register_rewrite("canonicalize", "fast_run")
@node_rewriter(elemwise_of(Second))
def local_fill_to_alloc(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """``fill(x, v)`` (``second``) is ``alloc(v, *lengths)`` with the lengths read from
    ``x``'s shape (static ones as constants), so ``x`` is needed for its shape only (the
    shape rules may then find it without computing ``x``). The Alloc checks ``v`` against
    those lengths at run time, as the Elemwise checked ``v`` against ``x``."""
    if not isinstance(_scalar_op(node), Second):
        return None
    x, v = node.inputs
    out = node.outputs[0]
    offset = 0
    if v.owner is not None and isinstance(v.owner.op, DimShuffle) and v.owner.op.is_left_expand_dims:
        v0 = v.owner.inputs[0]
        offset = out.type.ndim - v0.type.ndim
    else:
        v0 = v
    lengths: list[Any] = []
    for d, static in enumerate(out.type.shape):
        xs = x.type.shape[d]
        if xs is None:  # read off x, so that the Alloc checks v against it at run time
            lengths.append(Shape_i(d)(x))
        elif xs != 1 or static is not None:
            lengths.append(constant(np.int64(static)))
        else:  # only v has this length
            lengths.append(Shape_i(d - offset)(v0))
    new = alloc(v0, *lengths)
    return [new] if new.type == out.type else None


# --- reductions and products ------------------------------------------------------------------


@register_rewrite("canonicalize", "fast_run")
@node_rewriter([Sum])
def local_sum_of_alloc(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """``sum(alloc(v, *shape))`` over axes along which ``v`` is broadcast is ``v`` times the
    number of elements summed, in the sum's output dtype (an Alloc of the rest when some
    axes are kept)."""
    a = node.inputs[0]
    if a.owner is None or not isinstance(a.owner.op, Alloc) or not isinstance(node.op.scalar_op, Add):
        return None
    v, *lengths = a.owner.inputs
    out = node.outputs[0]
    ndim = a.type.ndim
    axes = range(ndim) if node.op.axis is None else node.op.axis
    offset = ndim - v.type.ndim
    if any(d >= offset and v.type.shape[d - offset] != 1 for d in axes):
        return None  # v varies along a summed axis
    dtype = out.type.dtype
    drop = [d - offset for d in axes if d >= offset]
    if drop:
        v = DimShuffle(input_ndim=v.type.ndim, new_order=[d for d in range(v.type.ndim) if d not in drop])(v)
    count_static = [a.type.shape[d] for d in axes]
    if None not in count_static:
        count: Variable = constant(np.asarray(int(np.prod(count_static, dtype=np.int64)), dtype=dtype))
    else:
        count = cast(_n_ary(mul, [cast(lengths[d], "int64") for d in axes]), dtype)
    total = mul(cast(v, dtype), count)
    kept = [lengths[d] for d in range(ndim) if d not in axes]
    new = alloc(total, *kept) if kept else total
    return _replacement(new, out, [])


# --- indexing ---------------------------------------------------------------------------------


def _compose_entry(n: int | None, first: Any, second_entry: Any) -> Any:
    """The index of the input picked by ``second_entry`` applied after the slice ``first``
    along a dimension of static length ``n``; None where it cannot be worked out."""
    if isinstance(first, slice) and first == slice(None):
        return second_entry
    if isinstance(second_entry, slice) and second_entry == slice(None):
        return first
    if n is None:
        return None
    picked = range(n)[first]
    if isinstance(second_entry, slice):
        r = picked[second_entry]
        stop = r.stop if r.stop >= 0 else None
        return slice(r.start, stop, r.step)
    if not -len(picked) <= second_entry < len(picked):
        return None  # out of bounds: leave the error to run time
    return picked[second_entry]


@register_rewrite("canonicalize", "fast_run")
@node_rewriter([Subtensor])
def local_subtensor_of_subtensor(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """``x[a][b]`` with constant ints and slices is one Subtensor ``x[c]`` (slices composed
    along dimensions whose static length is known, or where one of them is ``:``)."""
    y = node.inputs[0]
    inner = y.owner
    if (
        inner is None
        or not isinstance(inner.op, Subtensor)
        or len(inner.inputs) != 1
        or len(node.inputs) != 1
    ):
        return None
    x = inner.inputs[0]
    first = list(inner.op.idx_list) + [slice(None)] * (x.type.ndim - len(inner.op.idx_list))
    later = list(node.op.idx_list)
    composed = []
    k = 0  # the dimension of y reached
    for d, e in enumerate(first):
        if not isinstance(e, slice):
            composed.append(e)
            continue
        e2 = later[k] if k < len(later) else slice(None)
        k += 1
        c = _compose_entry(x.type.shape[d], e, e2)
        if c is None:
            return None
        composed.append(c)
    while composed and isinstance(composed[-1], slice) and composed[-1] == slice(None):
        composed.pop()
    new = Subtensor(composed)(x) if composed else x
    return (
        [new]
        if node.outputs[0].type.is_super(new.type) and new.type.ndim == node.outputs[0].type.ndim
        else None
    )


# --- specialize -------------------------------------------------------------------------------


def _power(x: Variable, n: int) -> Variable:
    """``x ** n`` for an integer ``n >= 1`` by repeated squaring (sqr and mul)."""
    result = None
    square = x
    while n:
        if n & 1:
            result = square if result is None else mul(result, square)
        n >>= 1
        if n:
            square = sqr(square)
    assert result is not None
    return result


#: the largest integer exponent turned into multiplications
MAX_INTEGER_POWER = 8


@register_rewrite("specialize", "fast_run")
@node_rewriter(elemwise_of(Pow))
def local_pow_specialize(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """``x ** c`` for a constant ``c``: ``x`` (1), ``sqr`` (2), ``sqrt`` (0.5), ``reciprocal``
    (-1), ``1 / sqrt`` (-0.5), and integers up to ``MAX_INTEGER_POWER`` by repeated squaring
    (negative ones through ``reciprocal``, float dtypes only); ``x ** 0`` stays (NumPy's
    ``0 ** 0`` and ``nan ** 0`` are 1 too, but there is nothing to gain)."""
    if not isinstance(_scalar_op(node), Pow):
        return None
    x, e = node.inputs
    out = node.outputs[0]
    dtype = out.type.dtype
    value = _uniform_value(e)
    if value is None or value.dtype.kind not in "iuf" or not np.isfinite(value):
        return None
    c = float(value)
    is_float = dtype[:5] == "float"
    if dtype[:7] == "complex" or dtype == "bool":
        return None
    if not is_float and (x.type.dtype != dtype or c < 0 or c != int(c)):
        return None
    base = cast(x, dtype)
    if c == 0.5 and is_float:
        new = sqrt(base)
    elif c == -0.5 and is_float:
        new = reciprocal(sqrt(base))
    elif c == int(c) and 1 <= abs(c) <= MAX_INTEGER_POWER:
        new = _power(base, int(abs(c)))
        if c < 0:
            if not is_float:
                return None
            new = reciprocal(new)
    else:
        return None
    return _replacement(new, out, [e])


@register_rewrite("specialize", "fast_run")
@node_rewriter([Sum])
def local_sum_of_mul_to_dot(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """``sum(x * y)`` of two float64 vectors is ``dot(x, y)`` (BLAS). Not for float32:
    the sum accumulates float32 in float64, which ``sdot`` would not. Not where ``x`` or
    ``y`` is computed by an Elemwise: fusion puts the product in that Elemwise's loop, and
    the compiled loop accumulates the sum there, while a dot would read both vectors again
    (measured on the hierarchical model's gradient: a 17 µs pass over 80,000 elements)."""
    (prod,) = node.inputs
    if not isinstance(node.op.scalar_op, Add):
        return None  # a Prod
    pnode = prod.owner
    if not isinstance(_scalar_op(pnode), Mul) or len(pnode.inputs) != 2:
        return None
    if _single_client(fgraph, prod) is not node:
        return None  # the product is needed anyway
    x, y = pnode.inputs
    out = node.outputs[0]
    if out.type.ndim != 0 or x.type.ndim != 1 or out.type.dtype != "float64":
        return None
    if x.type.dtype != "float64" or y.type.dtype != "float64" or 1 in (x.type.shape[0], y.type.shape[0]):
        return None  # a broadcast operand: not an inner product
    if any(v.owner is not None and isinstance(v.owner.op, Elemwise) for v in (x, y)):
        return None  # (fused with its producer: see above)
    new = Dot()(x, y)
    return [new] if new.type == out.type else None


def _invariant(v: Variable) -> bool:
    """``v`` is one value broadcast everywhere (a static 1 on every dimension)."""
    return all(d == 1 for d in v.type.shape)


@register_rewrite("specialize", "fast_run")
@node_rewriter(elemwise_of(TrueDiv))
def local_div_of_div(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """``(x / a) / b`` → ``x / (a * b)`` and ``-(x / a) / b`` → ``-(x / (a * b))`` where ``a``
    and ``b`` are single values (floats, one dtype): one division per element instead of
    two. Canonicalize does this where ``x / a`` is read once; here it is read elsewhere too
    or was until specialize (the sum rules of ``reductions.py`` take the other readers of a
    gradient's ``(y - m) / sigma`` out of its loop), and the quotient, if still needed,
    costs what it cost before."""
    if not isinstance(_scalar_op(node), TrueDiv):
        return None
    top, b = node.inputs
    out = node.outputs[0]
    dtype = out.type.dtype
    if dtype[:5] != "float" or not _invariant(b) or b.type.dtype != dtype:
        return None
    negative = isinstance(_scalar_op(top.owner), Neg)
    inner = top.owner.inputs[0] if negative else top
    if not isinstance(_scalar_op(inner.owner), TrueDiv):
        return None
    x, a = inner.owner.inputs
    if not _invariant(a) or {x.type.dtype, a.type.dtype, top.type.dtype} != {dtype}:
        return None
    new = true_div(x, mul(a, b))
    return _replacement(neg(new) if negative else new, out, [])
