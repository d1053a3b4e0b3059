"""``ifelse``: a conditional whose untaken branch is never computed.

``ifelse(cond, then, else)`` is the value of ``then`` when the scalar ``cond`` is nonzero
and of ``else`` otherwise. Unlike ``switch`` (elementwise, computes both sides), the
:class:`IfElse` Op is *lazy*: under the reference VM it first asks for the condition,
then only for the inputs of the branch it takes, so the nodes that only the other
branch needs never run.

>>> import numpy as np
>>> import arignote
>>> import arignote.tensor as pt
>>> from arignote.ifelse import ifelse
>>> c = pt.scalar("c", dtype="int64")
>>> x = pt.dvector("x")
>>> f = arignote.function([c, x], ifelse(c, x * 2, x - 1))
>>> f(1, [1.0, 2.0]), f(0, [1.0, 2.0])
(array([2., 4.]), array([0., 1.]))
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import numpy as np

from arignote.configdefaults import config
from arignote.graph.basic import Apply, Constant, Variable
from arignote.graph.fg import FunctionGraph
from arignote.graph.null_type import disconnected_type, is_disconnected
from arignote.graph.op import Op
from arignote.graph.rewriting.basic import node_rewriter
from arignote.graph.rewriting.registry import register_rewrite
from arignote.graph.traversal import ancestors
from arignote.tensor.alloc import zeros_like
from arignote.tensor.conversion import as_tensor_variable, constant
from arignote.tensor.shape import _zero_grad
from arignote.tensor.type import TensorType
from arignote.tensor.ufuncs import cast

__all__ = [
    "IfElse",
    "ifelse",
    "ifelse_constant_condition",
    "ifelse_merge_same_condition",
    "ifelse_nested_same_condition",
    "ifelse_same_branches",
]


def _truth(value: Any) -> bool:
    """Whether a condition value selects the ``then`` branch (nonzero, NaN included)."""
    return bool(value)


def _copy_value(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return value.copy()
    return copy.deepcopy(value)


class IfElse(Op):
    """``IfElse(n_outs)(cond, *then_values, *else_values)``: ``n_outs`` outputs, each the
    ``then`` value when ``cond`` (a 0-d tensor) is nonzero, else the ``else`` value.

    Inputs are ``[cond, then_0, ..., then_{n-1}, else_0, ..., else_{n-1}]``; ``then_i``
    and ``else_i`` have compatible Types (for tensors: same dtype and number of
    dimensions) and output ``i`` has their join (static lengths kept where both agree).

    Its thunk is lazy (see :meth:`make_thunk`); :meth:`perform` serves linkers that
    compute every input first. Outputs are copies of the chosen values, unless
    ``as_view``: then output ``i`` is the ``then_i`` value itself (``view_map``
    ``{i: [1 + i]}``) and the ``else`` values are still copied, so the declared view map
    is exact. ``name`` only labels the Op (printing, ``pydotprint(cond_highlight=...)``)
    and takes no part in equality.
    """

    __props__ = ("as_view", "n_outs")

    def __init__(self, n_outs: int, as_view: bool = False, name: str | None = None):
        if isinstance(n_outs, bool) or not isinstance(n_outs, (int, np.integer)) or n_outs < 0:
            raise TypeError(f"IfElse: n_outs must be a non-negative int, got {n_outs!r}")
        self.n_outs = int(n_outs)
        self.as_view = bool(as_view)
        self.name = name
        if self.as_view:
            self.view_map = {i: [1 + i] for i in range(self.n_outs)}

    def __str__(self) -> str:
        parts = [p for p in (self.name, "inplace" if self.as_view else None) if p]
        return "if{" + ",".join(parts) + "}"

    # -- building -------------------------------------------------------------------------

    def make_node(self, condition: Any, *branches: Any) -> Apply:
        n = self.n_outs
        if len(branches) != 2 * n:
            raise ValueError(
                f"{self} with n_outs={n} takes a condition and {2 * n} branch values "
                f"({n} then, {n} else), got {len(branches)} branch value(s)"
            )
        cond = _as_condition(condition)
        then_in, else_in, outputs = [], [], []
        for i, (t, f) in enumerate(zip(branches[:n], branches[n:])):
            t, f = _as_branch_pair(t, f)
            out_type = _join_types(i, t, f)
            then_in.append(t)
            else_in.append(f)
            outputs.append(out_type())
        return Apply(self, [cond, *then_in, *else_in], outputs)

    # -- running --------------------------------------------------------------------------

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        """Non-lazy evaluation (every input already computed): pick one branch's values."""
        n = self.n_outs
        if _truth(inputs[0]):
            values, view = inputs[1 : 1 + n], self.as_view
        else:
            values, view = inputs[1 + n :], False
        for cell, value in zip(output_storage, values):
            cell[0] = value if view else _copy_value(value)

    def make_thunk(
        self,
        node: Apply,
        storage_map: dict,
        compute_map: dict,
        no_recycling: Sequence[Variable],
        impl: str | None = None,
    ) -> Any:
        """A lazy thunk: called repeatedly, it returns the indices of the inputs it still
        needs (first the condition, then only the chosen branch's values) and, once it
        has them, sets the outputs and their ``compute_map`` flags and returns ``[]``.

        Without a ``compute_map`` (a linker that runs every input first) the thunk is the
        ordinary non-lazy one over :meth:`perform`.
        """
        if compute_map is None:
            return self.make_py_thunk(node, storage_map, compute_map, no_recycling)
        n = self.n_outs
        cond_cell = storage_map[node.inputs[0]]
        cond_done = compute_map[node.inputs[0]]
        branches = []
        for first, view in ((1, self.as_view), (1 + n, False)):
            vars_ = node.inputs[first : first + n]
            branches.append(
                (
                    [storage_map[v] for v in vars_],
                    [compute_map[v] for v in vars_],
                    list(range(first, first + n)),
                    view,
                )
            )
        then_branch, else_branch = branches
        out_cells = [storage_map[v] for v in node.outputs]
        out_done = [compute_map[v] for v in node.outputs]

        def thunk() -> list[int]:
            if not cond_done[0]:
                return [0]
            cells, done, indices, view = then_branch if _truth(cond_cell[0]) else else_branch
            missing = [i for i, flag in zip(indices, done) if not flag[0]]
            if missing:
                return missing
            for out, cell, flag in zip(out_cells, cells, out_done):
                out[0] = cell[0] if view else _copy_value(cell[0])
                flag[0] = True
            return []

        thunk.lazy = True  # type: ignore[attr-defined]
        thunk.inputs = [storage_map[v] for v in node.inputs]  # type: ignore[attr-defined]
        thunk.outputs = out_cells  # type: ignore[attr-defined]
        return thunk

    # -- shapes and gradients -------------------------------------------------------------

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[Any]) -> list[Any]:
        """Each output dimension is the taken branch's: a length both branches agree on
        is kept as it is, the others are chosen by one lazy ``IfElse`` on the condition
        (so asking for the shape computes only the shapes of the branch taken)."""
        n = self.n_outs
        then_shapes, else_shapes = shapes[1 : 1 + n], shapes[1 + n :]
        result: list[Any] = []
        pairs: list[tuple[Any, Any]] = []
        slots: list[tuple[int, int]] = []
        for i, (ts, fs) in enumerate(zip(then_shapes, else_shapes)):
            if not isinstance(ts, (list, tuple)) or not isinstance(fs, (list, tuple)):
                result.append(None)  # not a tensor: no shape to infer
                continue
            dims: list[Any] = []
            for d, (st, sf) in enumerate(zip(ts, fs)):
                if st is sf or (_is_int(st) and _is_int(sf) and int(st) == int(sf)):
                    dims.append(int(st) if _is_int(st) else st)
                else:
                    slots.append((i, d))
                    pairs.append((_as_length(st), _as_length(sf)))
                    dims.append(None)
            result.append(dims)
        if pairs:
            label = "shape" if self.name is None else f"shape_{self.name}"
            chosen = IfElse(len(pairs), name=label)(
                node.inputs[0], *(t for t, _ in pairs), *(f for _, f in pairs), return_list=True
            )
            for (i, d), value in zip(slots, chosen):
                result[i][d] = value
        return [tuple(dims) if dims is not None else None for dims in result]

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        """The condition decides every output's elements; ``then_i`` and ``else_i`` reach
        only output ``i``."""
        n = self.n_outs
        pattern = [[True] * n]
        for _ in range(2):
            pattern.extend([j == i for j in range(n)] for i in range(n))
        return pattern

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        """The condition gets a zero gradient; ``then_i`` gets ``g_i`` where the condition
        held and zeros otherwise, ``else_i`` the other way round. Both are IfElse nodes on
        the same condition, so the untaken branch's values are not computed for them."""
        n = self.n_outs
        cond, thens, elses = inputs[0], inputs[1 : 1 + n], inputs[1 + n :]
        then_terms, else_terms = [], []
        for g, t, e in zip(output_grads, thens, elses):
            if is_disconnected(g):
                then_terms.append(disconnected_type())
                else_terms.append(disconnected_type())
                continue
            zero = zeros_like(g)
            then_terms.append(_fit(ifelse(cond, g, zero), t, cast))
            else_terms.append(_fit(ifelse(cond, zero, g), e, cast))
        return [_zero_grad(cond), *then_terms, *else_terms]

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], tangents: Sequence[Variable]
    ) -> list:
        """The tangent of output ``i`` is the chosen branch's tangent."""
        n = self.n_outs
        ts = list(tangents[1:])
        branches = [_zero_grad(v) if is_disconnected(t) else t for v, t in zip(inputs[1:], ts)]
        return IfElse(n)(inputs[0], *branches, return_list=True)


def _fit(g: Variable, x: Variable, cast: Any) -> Variable:
    """``g`` in ``x``'s float dtype (integer branches get a floatX gradient)."""
    dtype = x.type.dtype if np.dtype(x.type.dtype).kind in "fc" else config.floatX
    return cast(g, dtype)


# --- helpers -----------------------------------------------------------------------------


def _is_int(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def _as_length(value: Any) -> Variable:
    """A shape entry as an int64 0-d tensor (the dtype every length must share here)."""
    if _is_int(value):
        return constant(np.int64(value))
    var = as_tensor_variable(value)
    if var.type.dtype != "int64":
        var = cast(var, "int64")
    return var


def _as_condition(condition: Any) -> Variable:
    if isinstance(condition, (bool, np.bool_)):
        condition = np.bool_(condition)
    try:
        cond = as_tensor_variable(condition)
    except (TypeError, ValueError) as err:
        raise TypeError(
            f"The condition of ifelse must be a scalar (a 0-d tensor of a numeric or bool dtype), got {condition!r}: {err}"
        ) from None
    if cond.type.ndim != 0:
        raise TypeError(
            f"The condition of ifelse must be a scalar (a 0-d tensor), got {cond} of Type {cond.type} "
            f"({cond.type.ndim}-d); reduce it first (e.g. pt.any(c) or pt.all(c)), or use switch for "
            "an elementwise choice"
        )
    return cond


def _as_branch_pair(t: Any, f: Any) -> tuple[Variable, Variable]:
    """Both branch values as Variables; a raw value (not a Variable) becomes a constant,
    of the other branch's dtype when it holds the value exactly."""
    t_sym, f_sym = isinstance(t, Variable), isinstance(f, Variable)
    if t_sym and f_sym:
        return t, f
    if not t_sym and not f_sym:
        t, f = _literal(t), _literal(f)
        if t.type.dtype != f.type.dtype:
            common = np.promote_types(t.type.dtype, f.type.dtype).name
            t, f = constant(t.data.astype(common)), constant(f.data.astype(common))
        return t, f
    if t_sym:
        return t, _literal(f, _dtype_of(t))
    return _literal(t, _dtype_of(f)), f


def _dtype_of(var: Variable) -> str | None:
    return getattr(var.type, "dtype", None) if isinstance(var.type, TensorType) else None


def _literal(value: Any, dtype: str | None = None) -> Variable:
    if isinstance(value, (bool, np.bool_)):
        value = np.bool_(value)
    if dtype is not None and not isinstance(value, np.ndarray):
        try:
            return constant(value, dtype=dtype)
        except (TypeError, ValueError):
            pass  # not exact in that dtype: keep its own, and let the Type check explain
    return as_tensor_variable(value)


def _join_types(i: int, t: Variable, f: Variable) -> Any:
    """The Type of output ``i``: the join of the two branch Types, or a TypeError naming
    both when they are incompatible."""
    tt, ft = t.type, f.type
    if isinstance(tt, TensorType) and isinstance(ft, TensorType):
        if tt.dtype != ft.dtype or tt.ndim != ft.ndim:
            what = []
            if tt.dtype != ft.dtype:
                what.append(f"dtypes {tt.dtype} and {ft.dtype}")
            if tt.ndim != ft.ndim:
                what.append(f"{tt.ndim} and {ft.ndim} dimensions")
            raise TypeError(
                f"ifelse: the then and else values of output {i} have incompatible Types: then {t} "
                f"is {tt}, else {f} is {ft} ({' and '.join(what)}); both branches need the same "
                "dtype and number of dimensions (cast one of them first)"
            )
        shape = tuple(a if a == b else None for a, b in zip(tt.shape, ft.shape))
        return tt if shape == tt.shape else tt.clone(shape=shape)
    if tt == ft or (type(tt) is type(ft) and tt.is_super(ft)):
        return tt
    if type(tt) is type(ft) and ft.is_super(tt):
        return ft
    raise TypeError(
        f"ifelse: the then and else values of output {i} have incompatible Types: then {t} is "
        f"{tt}, else {f} is {ft}"
    )


def ifelse(
    condition: Any,
    then_branch: Any,
    else_branch: Any,
    name: str | None = None,
) -> Any:
    """``then_branch`` if the scalar ``condition`` is nonzero, else ``else_branch``;
    only the branch taken is computed.

    ``condition``: a 0-d tensor (any numeric or bool dtype) or a Python/NumPy scalar.
    ``then_branch`` and ``else_branch``: a Variable each, or sequences of Variables of
    the same length whose pairs have the same dtype and number of dimensions (a raw
    value is made a constant, of the other side's dtype when that holds it exactly).
    Each output's static shape keeps the lengths on which both sides agree.

    Returns one Variable for single values, else a list (a tuple when ``then_branch``
    is a tuple). ``name`` labels the :class:`IfElse` Op.
    """
    kind = type(then_branch) if isinstance(then_branch, (list, tuple)) else None
    thens = list(then_branch) if kind is not None else [then_branch]
    elses = list(else_branch) if isinstance(else_branch, (list, tuple)) else [else_branch]
    if len(thens) != len(elses):
        raise ValueError(
            f"ifelse: the then branch has {len(thens)} value(s) and the else branch {len(elses)}; "
            "both must give the same number of outputs"
        )
    outs = IfElse(len(thens), name=name)(condition, *thens, *elses, return_list=True)
    if kind is None:
        return outs[0]
    return tuple(outs) if kind is tuple else list(outs)


# -- rewrite rules ------------------------------------------------------------------------------


def _condition_value(cond: Variable) -> bool | None:
    """The truth of a constant condition (None: not a constant)."""
    if isinstance(cond, Constant):
        return _truth(cond.data)
    return None


@register_rewrite("canonicalize", "fast_run", "fast_compile", "ifelse")
@node_rewriter([IfElse])
def ifelse_constant_condition(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """``ifelse(c, then, else)`` of a constant ``c``: the branch it chooses (the other
    one's nodes are then pruned)."""
    taken = _condition_value(node.inputs[0])
    if taken is None:
        return None
    n = node.op.n_outs
    return list(node.inputs[1 : 1 + n] if taken else node.inputs[1 + n :])


@register_rewrite("canonicalize", "fast_run", "ifelse")
@node_rewriter([IfElse])
def ifelse_same_branches(fgraph: FunctionGraph, node: Apply) -> dict[Variable, Variable] | None:
    """An output whose two branches are the same Variable is that Variable, whatever the
    condition; the node keeps the other outputs (or goes, when none is left)."""
    op, cond = node.op, node.inputs[0]
    n = op.n_outs
    thens, elses = node.inputs[1 : 1 + n], node.inputs[1 + n :]
    same = [i for i in range(n) if thens[i] is elses[i]]
    if not same:
        return None
    keep = [i for i in range(n) if i not in same]
    replacements = {node.outputs[i]: thens[i] for i in same}
    if keep:
        rest = IfElse(len(keep), as_view=op.as_view, name=op.name)(
            cond, *(thens[i] for i in keep), *(elses[i] for i in keep), return_list=True
        )
        replacements.update((node.outputs[i], out) for i, out in zip(keep, rest))
    return replacements


@register_rewrite("canonicalize", "fast_run", "ifelse")
@node_rewriter([IfElse])
def ifelse_nested_same_condition(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """``ifelse(c, ifelse(c, a, b), d)`` is ``ifelse(c, a, d)``: inside a branch of a
    conditional on ``c``, a conditional on the same ``c`` has already chosen (the then
    side in the then branch, the else side in the else branch)."""
    op, cond = node.op, node.inputs[0]
    n = op.n_outs
    branches = list(node.inputs[1:])
    changed = False
    for k, v in enumerate(branches):
        inner = v.owner
        if inner is None or not isinstance(inner.op, IfElse) or inner.inputs[0] is not cond:
            continue
        m, i = inner.op.n_outs, inner.outputs.index(v)
        branches[k] = inner.inputs[1 + i] if k < n else inner.inputs[1 + m + i]
        changed = True
    if not changed:
        return None
    return IfElse(n, as_view=op.as_view, name=op.name)(cond, *branches, return_list=True)


#: conditionals on the same condition that one application of the merge rule looks at
MERGE_CANDIDATES = 8


def _inside_a_branch(fgraph: FunctionGraph, node: Apply) -> bool:
    """Whether what ``node`` computes reaches a branch value of some conditional: it may then
    run only when that branch is taken, and must stay apart."""
    seen: set[Variable] = set()
    todo = list(node.outputs)
    while todo:
        v = todo.pop()
        if v in seen:
            continue
        seen.add(v)
        for client, i in fgraph.clients.get(v, ()):
            if isinstance(client.op, IfElse) and i > 0:
                return True
            todo.extend(getattr(client, "outputs", ()))
    return False


def _one_needs_the_other(a: Apply, b: Apply) -> bool:
    outs_a, outs_b = set(a.outputs), set(b.outputs)
    return any(v in outs_b for v in ancestors(a.inputs)) or any(v in outs_a for v in ancestors(b.inputs))


@register_rewrite("specialize", "fast_run", "ifelse")
@node_rewriter([IfElse])
def ifelse_merge_same_condition(fgraph: FunctionGraph, node: Apply) -> dict[Variable, Variable] | None:
    """Two conditionals on the same condition, neither needing the other's outputs, as one:
    one choice instead of two (one ``lax.cond`` under JAX), each branch's values together.
    Only conditionals that always run are merged: one inside a branch of another runs only
    when that branch is taken (nested conditionals stay lazy)."""
    cond = node.inputs[0]
    others = [
        c
        for c, _ in fgraph.clients.get(cond, ())
        if c is not node
        and isinstance(c.op, IfElse)
        and c.inputs[0] is cond
        and c.op.as_view == node.op.as_view
    ]
    if not others or _inside_a_branch(fgraph, node):
        return None
    # (each candidate costs two walks of the graph: a few are looked at per application, and
    # the equilibrium applies the rule again to the merged node)
    for other in others[:MERGE_CANDIDATES]:
        if _inside_a_branch(fgraph, other) or _one_needs_the_other(node, other):
            continue
        a, b = node.op.n_outs, other.op.n_outs
        merged = IfElse(a + b, as_view=node.op.as_view, name=node.op.name or other.op.name)(
            cond,
            *node.inputs[1 : 1 + a],
            *other.inputs[1 : 1 + b],
            *node.inputs[1 + a :],
            *other.inputs[1 + b :],
            return_list=True,
        )
        return dict(zip([*node.outputs, *other.outputs], merged))
    return None
