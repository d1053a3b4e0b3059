"""BLAS rules: a sum of scaled products becomes one :class:`~arignote.tensor.gemm.Gemm`,
:class:`~arignote.tensor.gemm.Gemv` or :class:`~arignote.tensor.gemm.Ger` (specialize),
and these overwrite their first input where nobody else can see it (inplace).

:func:`local_blas_update` reads an ``add``/``sub`` expression (nested ``add``/``sub``/``neg``
nodes used only there included) as a list of signed terms, each ``scale * core`` where
``scale`` is a product of 0-d or fully broadcastable factors (constants or Variables) and
``core`` is

* a matrix ``dot(x, y)`` (or its transpose, ``dot(y.T, x.T)``): a Gemm term,
* a matrix-vector ``dot(A, x)`` or ``dot(x, A)``: a Gemv term,
* an outer product ``x[:, None] * y[None, :]`` (or ``dot`` of the two): a Ger term,

and folds one such term and one other term ``z`` (any term covering the output's shape,
itself possibly scaled) into ``beta * z + alpha * core``; the remaining terms are added to
the result as before, so the rule fires again on ``z + dot1 + dot2`` (a chain of Gemms).
An MLP's update ``w - lr * dot(x.T, g)`` is ``Gemm(w, -lr, x.T, g, 1)``.

Dtypes are kept exactly: the output, the product and both of its operands must have one
BLAS dtype (float32 or float64), so no product is computed in another precision than the
graph asked for; the scale factors and ``z`` are cast to it, as the ``mul``/``add`` nodes
did. A product or scale that is used elsewhere too is not folded (it would be computed
twice).

>>> import numpy as np
>>> import arignote
>>> import arignote.tensor as pt
>>> w, x, g = pt.fmatrix("w"), pt.fmatrix("x"), pt.fmatrix("g")
>>> f = arignote.function([w, x, g], w - np.float32(0.1) * pt.dot(x.T, g))
>>> [str(n.op) for n in f.maker.fgraph.toposort()]  # x.T is a view: no copy
['MatrixTranspose', 'Gemm{inplace=False}']
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from arignote.graph.basic import Apply, Constant, Variable
from arignote.graph.destroyhandler import view_root
from arignote.graph.fg import FunctionGraph
from arignote.graph.rewriting.basic import node_rewriter
from arignote.graph.rewriting.db import register_rewrite
from arignote.scalar.basic import Add, Mul, Neg, Sub
from arignote.tensor.axes import transpose
from arignote.tensor.conversion import constant
from arignote.tensor.elemwise import DimShuffle
from arignote.tensor.gemm import BLAS_DTYPES, Gemm, Gemv, Ger
from arignote.tensor.products import Dot
from arignote.tensor.rewriting.basic import register_specialize
from arignote.tensor.rewriting.elemwise import elemwise_of
from arignote.tensor.rewriting.elemwise import scalar_op_of as _scalar_op
from arignote.tensor.rewriting.inplace import destroy_handler
from arignote.tensor.shape import specify_shape
from arignote.tensor.ufuncs import add, cast, mul, neg, sub

__all__ = ["local_blas_inplace", "local_blas_update"]

#: how deep nested ``add``/``sub``/``neg`` (and ``mul``/``neg`` inside a term) are read
_MAX_DEPTH = 16


# --- reading the expression ------------------------------------------------------------------


def _only_client(fgraph: FunctionGraph, var: Variable, node: Apply) -> bool:
    """Whether ``node`` is the one use of ``var`` (once)."""
    clients = fgraph.clients.get(var, ())
    return len(clients) == 1 and clients[0][0] is node


def _covers(var: Variable, out: Variable) -> bool:
    """Whether ``var`` has ``out``'s rank and no broadcast dimension against it (a static
    1 where ``out`` is not 1), so it has ``out``'s shape at run time."""
    if var.type.ndim != out.type.ndim:
        return False
    return all(v != 1 or o == 1 for v, o in zip(var.type.shape, out.type.shape))


def _is_scalar_like(var: Variable) -> bool:
    return all(s == 1 for s in var.type.shape)


@dataclass
class _Term:
    """``sign * prod(scale) * core``: ``var`` the term as the sum reads it, entering the sum
    with ``var_sign`` (``sign`` also counts the negations read through inside ``var``)."""

    var: Variable
    sign: int
    scale: list[Variable]
    core: Variable
    private: bool = False  # ``var`` is used by the sum only
    var_sign: int = 1


def _sum_terms(fgraph: FunctionGraph, root: Apply, dtype: str) -> list[tuple[int, Variable, bool]]:
    """The signed leaves of the sum rooted at ``root`` (nested add/sub/neg nodes computing
    in ``dtype`` and used only by the sum are read through), each with whether the sum is
    its only use."""
    terms: list[tuple[int, Variable, bool]] = []
    stack: list[tuple[Variable, int, Apply | None, int]] = [(root.outputs[0], 1, None, 0)]
    while stack:
        var, sign, parent, depth = stack.pop()
        node = var.owner
        sop = _scalar_op(node)
        if (
            parent is None
            or (
                isinstance(sop, (Add, Sub, Neg))
                and depth < _MAX_DEPTH
                and var.type.dtype == dtype
                and _only_client(fgraph, var, parent)
            )
        ) and node is not None:
            if isinstance(sop, Add):
                stack.extend((i, sign, node, depth + 1) for i in reversed(node.inputs))
            elif isinstance(sop, Sub):
                stack.append((node.inputs[1], -sign, node, depth + 1))
                stack.append((node.inputs[0], sign, node, depth + 1))
            else:
                stack.append((node.inputs[0], -sign, node, depth + 1))
            continue
        terms.append((sign, var, parent is not None and _only_client(fgraph, var, parent)))
    return terms


def _product(fgraph: FunctionGraph, var: Variable, sign: int, private: bool, dtype: str) -> _Term:
    """``var`` read as ``sign * prod(scale) * core`` through the ``mul``/``neg`` nodes
    computing in ``dtype`` that only it uses. The core is the one factor that is not
    fully broadcastable (``core`` is ``var`` itself where there is not exactly one,
    except for the two factors of an outer product, kept as a ``mul`` of them)."""
    var_sign = sign
    scale: list[Variable] = []
    others: list[Variable] = []
    stack: list[tuple[Variable, Apply | None, int]] = [(var, None, 0)]
    while stack:
        v, parent, depth = stack.pop()
        node = v.owner
        sop = _scalar_op(node)
        if (
            isinstance(sop, (Mul, Neg))
            and depth < _MAX_DEPTH
            and v.type.dtype == dtype
            and (parent is None or _only_client(fgraph, v, parent))
            and _covers(v, var)
        ):
            if isinstance(sop, Neg):
                sign = -sign
                stack.append((node.inputs[0], node, depth + 1))
            else:
                stack.extend((i, node, depth + 1) for i in reversed(node.inputs))
            continue
        (scale if _is_scalar_like(v) and v is not var else others).append(v)
    if len(others) == 1:
        return _Term(var, sign, scale, others[0], private, var_sign)
    if len(others) == 2 and _outer_operands(others[0], others[1]) is not None:
        return _Term(var, sign, scale, mul(*others), private, var_sign)  # read again by _core
    return _Term(var, var_sign, [], var, private, var_sign)


def _vector_as(v: Variable, order: tuple) -> Variable | None:
    """The vector ``u`` when ``v`` is ``DimShuffle(u)`` to ``order`` (``(0, 'x')``: a
    column, ``('x', 0)``: a row)."""
    node = v.owner
    if node is None or not isinstance(node.op, DimShuffle):
        return None
    if node.op.input_ndim != 1 or node.op.new_order != order:
        return None
    return node.inputs[0]


def _outer_operands(a: Variable, b: Variable) -> tuple[Variable, Variable] | None:
    """``(x, y)`` when ``{a, b}`` is ``{x[:, None], y[None, :]}``."""
    for col, row in ((a, b), (b, a)):
        x, y = _vector_as(col, (0, "x")), _vector_as(row, ("x", 0))
        if x is not None and y is not None:
            return x, y
    return None


@dataclass
class _Core:
    """A product ``kind`` ("gemm", "gemv" or "ger") of ``operands`` (the Op's two)."""

    kind: str
    operands: tuple[Variable, Variable]


def _core(fgraph: FunctionGraph, term: _Term, dtype: str) -> _Core | None:
    """What BLAS product the term's core is (its operands all of ``dtype``), if any."""
    core = term.core
    node = core.owner
    if node is None or core.type.dtype != dtype or not term.private:
        return None
    if core is not term.var and len(fgraph.clients.get(core, ((None, 0),))) != 1:
        return None  # the product is computed anyway: folding it would compute it twice
    if isinstance(node.op, DimShuffle) and node.op.new_order == (1, 0):  # dot(x, y).T
        inner = node.inputs[0]
        if inner.owner is None or type(inner.owner.op) is not Dot or not _only_client(fgraph, inner, node):
            return None
        x, y = inner.owner.inputs
        if x.type.ndim != 2 or y.type.ndim != 2 or not _all_dtype((x, y), dtype):
            return None
        return _Core("gemm", (transpose(y), transpose(x)))
    if type(node.op) is Dot:
        x, y = node.inputs
        if not _all_dtype((x, y), dtype):
            return None
        if x.type.ndim == 2 and y.type.ndim == 2:
            pair = _outer_operands(x, y)
            return _Core("ger", pair) if pair is not None else _Core("gemm", (x, y))
        if x.type.ndim == 2 and y.type.ndim == 1:
            return _Core("gemv", (x, y))
        if x.type.ndim == 1 and y.type.ndim == 2:
            return _Core("gemv", (transpose(y), x))
        return None
    if isinstance(_scalar_op(node), Mul) and len(node.inputs) == 2:  # an outer product
        pair = _outer_operands(*node.inputs)
        if pair is not None and _all_dtype(pair, dtype):
            return _Core("ger", pair)
    return None


def _all_dtype(vs: Sequence[Variable], dtype: str) -> bool:
    return all(v.type.dtype == dtype for v in vs)


def _scale_value(factors: Sequence[Variable], sign: int, dtype: str) -> Variable:
    """``sign * prod(factors)`` as a 0-d tensor of ``dtype`` (a constant when all are)."""
    if all(isinstance(f, Constant) for f in factors):
        value = np.asarray(sign, dtype=dtype)
        with np.errstate(all="ignore"):
            for f in factors:
                value = np.asarray(value * np.asarray(f.data).astype(dtype).reshape(()), dtype=dtype)
        return constant(value, dtype=dtype)
    parts: list[Variable] = []
    for f in factors:
        if isinstance(f, Constant):
            part: Variable = constant(np.asarray(f.data).astype(dtype).reshape(()), dtype=dtype)
        else:
            node = f.owner
            if node is not None and isinstance(node.op, DimShuffle) and node.inputs[0].type.ndim == 0:
                part = node.inputs[0]  # x[None, None] of a 0-d x: x itself
            elif f.type.ndim:
                part = DimShuffle(input_ndim=f.type.ndim, new_order=())(f)
            else:
                part = f
            if part.type.dtype != dtype:
                part = cast(part, dtype)
        parts.append(part)
    value = parts[0] if len(parts) == 1 else mul(*parts)
    return neg(value) if sign < 0 else value


def _fit(new: Variable, out: Variable) -> Variable | None:
    """``new`` with ``out``'s Type (its static shape asserted where ``new`` knows less)."""
    if new.type.dtype != out.type.dtype or new.type.ndim != out.type.ndim:
        return None
    if not out.type.is_super(new.type):
        new = specify_shape(new, out.type.shape)
    return new if out.type.is_super(new.type) else None


def _pick_z(terms: list[_Term], skip: int, out: Variable, ndim: int, unscaled: bool) -> int | None:
    """The term to use as ``z``: one covering the output, preferring one of the output's
    dtype without a scale (for Ger: only ``+z``)."""
    best = None
    for i, t in enumerate(terms):
        if i == skip or not _covers(t.var, out) or t.var.type.ndim != ndim:
            continue
        if unscaled and (t.sign != 1 or t.core is not t.var):
            continue
        rank = (t.var.type.dtype != out.type.dtype, bool(t.scale))
        if best is None or rank < best[0]:
            best = (rank, i)
    return None if best is None else best[1]


def _reaches_dot(node: Apply) -> bool:
    """Whether a Dot computes an input of ``node`` through the sums, products, negations and
    DimShuffles the rule reads through (a cheap test before reading the terms)."""
    stack = list(node.inputs)
    seen: set = set()
    while stack:
        owner = stack.pop().owner
        if owner is None or owner in seen:
            continue
        if len(seen) > 64:
            return True  # a large tree: let the rule read it
        seen.add(owner)
        if isinstance(owner.op, Dot):
            return True
        if isinstance(owner.op, DimShuffle) or isinstance(_scalar_op(owner), (Add, Sub, Neg, Mul)):
            stack.extend(owner.inputs)
    return False


@register_specialize("blas")
@node_rewriter(elemwise_of(Add, Sub))
def local_blas_update(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """``beta * z + alpha * dot(x, y)`` (and ``z - dot``, ``dot * alpha + z``, transposed
    products, matrix-vector products and outer products, inside a longer sum too) as one
    Gemm, Gemv or Ger of the output's dtype (float32 or float64 only; see the module)."""
    if not isinstance(_scalar_op(node), (Add, Sub)):
        return None
    out = node.outputs[0]
    dtype = out.type.dtype
    if dtype not in BLAS_DTYPES or out.type.ndim not in (1, 2):
        return None
    if out.type.ndim == 1 and not _reaches_dot(node):
        return None  # a vector sum holds a Gemv only through a product by a Dot
    leaves = _sum_terms(fgraph, node, dtype)
    if len(leaves) < 2:
        return None
    terms = [_product(fgraph, v, s, private, dtype) for s, v, private in leaves]
    for i, term in enumerate(terms):
        if not _covers(term.var, out) or term.var.type.dtype != dtype:
            continue
        core = _core(fgraph, term, dtype)
        if core is None or (core.kind == "gemv") != (out.type.ndim == 1):
            continue
        ger = core.kind == "ger"
        j = _pick_z(terms, i, out, out.type.ndim, unscaled=False)
        if j is None:
            continue
        zt = terms[j]
        if ger and (zt.sign != 1 or zt.core is not zt.var):  # Ger has no beta: a k=1 Gemm
            x, y = core.operands
            core = _Core("gemm", (x.dimshuffle(0, "x"), y.dimshuffle("x", 0)))
            ger = False
        z = zt.core if zt.core is not zt.var and _covers(zt.core, out) else zt.var
        beta_factors, beta_sign = (zt.scale, zt.sign) if z is zt.core else ([], zt.var_sign)
        if z.type.dtype != dtype:
            z = cast(z, dtype)
        alpha = _scale_value(term.scale, term.sign, dtype)
        a, b = core.operands
        if ger:
            new = Ger()(z, alpha, a, b)
        else:
            beta = _scale_value(beta_factors, beta_sign, dtype)
            new = (Gemm() if core.kind == "gemm" else Gemv())(z, alpha, a, b, beta)
        rest = [t for k, t in enumerate(terms) if k not in (i, j)]
        if rest:
            # (the other terms as the sum reads them: a term's own negations stay in it)
            pos = [new, *(t.var for t in rest if t.var_sign > 0)]
            negs = [t.var for t in rest if t.var_sign < 0]
            new = pos[0] if len(pos) == 1 else add(*pos)
            if negs:
                new = sub(new, negs[0] if len(negs) == 1 else add(*negs))
        fitted = _fit(new, out)
        return None if fitted is None else [fitted]
    return None


# --- in place --------------------------------------------------------------------------------


@register_rewrite("inplace", "fast_run", "blas")
@node_rewriter([Gemm, Gemv, Ger])
def local_blas_inplace(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """Gemm/Gemv/Ger writing into their first input when nothing else reads it afterwards,
    it is not a protected value (a graph input not mutable, a constant, an output) and it
    does not share memory with another input (a product's operand)."""
    op = node.op
    handler = destroy_handler(fgraph)
    if op.inplace or not handler.can_destroy(fgraph, node, 0):
        return None
    root = view_root(node.inputs[0])
    if any(view_root(v) is root for v in node.inputs[1:]):
        return None
    if _a_reader_runs_after(fgraph, handler, node, root):
        return None
    return type(op)(inplace=True).make_node(*node.inputs).outputs


#: how many nodes :func:`_a_reader_runs_after` visits before it gives up (and the node
#: stays out of place: always safe)
_MAX_WALK = 20_000


def _a_reader_runs_after(fgraph: FunctionGraph, handler: Any, node: Apply, root: Variable) -> bool:
    """Whether another reader of ``root`` (or of a view of it) must run after ``node``,
    following the inputs' owners and, for a node that overwrites an input, the other
    readers of what it overwrites (they run first). Two Gemms each overwriting what the
    other reads would each have to run after the other; the data dependencies alone do not
    show it. Gives True (do not overwrite) past ``_MAX_WALK`` nodes."""
    readers = [
        c
        for v in handler.view_tree(root)
        for c, _ in fgraph.clients.get(v, ())
        if c is not node and isinstance(c, Apply) and c.outputs
    ]
    seen: set = set()
    todo = list(readers)
    while todo:
        n = todo.pop()
        if n is node:
            return True
        if n in seen:
            continue
        seen.add(n)
        if len(seen) > _MAX_WALK:
            return True
        todo.extend(v.owner for v in n.inputs if v.owner is not None)
        for positions in (getattr(n.op, "destroy_map", None) or {}).values():
            for i in positions:
                for v in handler.view_tree(view_root(n.inputs[i])):
                    todo.extend(c for c, _ in fgraph.clients.get(v, ()) if c is not n and c.outputs)
    return False
