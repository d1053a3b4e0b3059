"""The loop of a step on 0-d values, as straight-line Python on NumPy scalars.

A recurrence on scalars (``x_t = x_{t-1} * a + 1``, a cumulative sum) spends its steps in
glue: each step of the general loop (:mod:`arignote.scan.loop`) writes 0-d arrays into the
inner function's cells, calls its generated function, whose thunks call one ufunc each
on 0-d arrays, and copies the result into its row (about 2 µs a step). When every value of
the rewritten inner graph is 0-d and every node an elementwise op that NumPy computes the
same way on scalars, the whole loop is one generated function instead: the step's nodes
are lines on local NumPy scalars (about 0.1 µs a step), the sequences' elements and the
state are read as scalars, and each output is written into its row of the buffer.

The values are the general loop's, bit for bit: a node is written as the NumPy ufunc the
tier-1 thunk calls (:func:`~arignote.link.python.elemwise._direct_call` decides it, for the
node's input and output dtypes), which computes a scalar with the same loop as a 0-d
array, or, for ``+ - * /`` and negation on float32 or float64 values of the output's
dtype, as NumPy's scalar operators, which compute the same IEEE operation in that dtype
(they are faster than a ufunc call); a ``switch`` whose branches have the output's dtype is
a conditional expression. A node of any other kind (a fused body, a cast to an
integer, a shape) leaves the Op on the general loop.

A step that raises (an error NumPy's error state asks for, a warning made an error) hands
over: :func:`scalar_loop_for`'s function returns the step, and the general loop runs from
that step on, so an error names the node and the step as it always does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from arignote.graph.basic import Constant, Variable
from arignote.graph.fg import FunctionGraph
from arignote.link.python.elemwise import _direct_call
from arignote.scalar import basic as psb
from arignote.scan.loop import LoopPlan
from arignote.tensor.elemwise import Elemwise
from arignote.tensor.type import TensorType

__all__ = ["scalar_loop_for"]

#: scalar op type -> the Python operator NumPy's scalars compute it with (float32/float64
#: operands of the output's dtype only: the same IEEE operation as the ufunc's loop)
_OPERATORS: dict[type, str] = {psb.Add: "+", psb.Sub: "-", psb.Mul: "*", psb.TrueDiv: "/"}
_FLOATS = ("float32", "float64")


def _is_0d(v: Variable) -> bool:
    return isinstance(v.type, TensorType) and v.type.ndim == 0


def _spell(node: Any, names: list[str], ns: dict) -> str | None:
    """The expression computing ``node``'s one output from the scalars ``names``, or None."""
    op = node.op
    if not isinstance(op, Elemwise) or op.nout != 1:
        return None
    sop = op.scalar_op
    out_dtype = node.outputs[0].type.dtype
    in_dtypes = [v.type.dtype for v in node.inputs]
    if out_dtype in _FLOATS and all(d == out_dtype for d in in_dtypes) and "impl" not in sop.__dict__:
        sym = _OPERATORS.get(type(sop))
        own_impl = type(sop).impl in (psb.Add.impl, psb.Sub.impl, psb.Mul.impl, psb.TrueDiv.impl)
        if sym is not None and own_impl and len(names) >= 2 and (sym in "+*" or len(names) == 2):
            # (left to right, as the tier-1 "chain" of an n-ary add or multiply)
            expr = names[0]
            for name in names[1:]:
                expr = f"({expr} {sym} {name})"
            return expr
        if type(sop) is psb.Neg and type(sop).impl is psb.Neg.impl and len(names) == 1:
            return f"(-{names[0]})"
    if (
        type(sop) is psb.Switch
        and "impl" not in sop.__dict__
        and type(sop).impl is psb.Switch.impl
        and in_dtypes[1] == in_dtypes[2] == out_dtype
    ):
        # np.where's choice (a nonzero condition, NaN included, is true), no cast needed
        return f"({names[1]} if {names[0]} else {names[2]})"
    direct = _direct_call(sop, [np.dtype(d) for d in in_dtypes], np.dtype(out_dtype))
    if direct is None:
        return None
    kind, fn = direct
    if kind == "cast":  # float to float only: NumPy's scalar constructors convert as astype
        if not (in_dtypes[0] in _FLOATS and out_dtype in _FLOATS):
            return None
        ns[f"_dt_{out_dtype}"] = np.dtype(out_dtype).type
        return f"_dt_{out_dtype}({names[0]})"
    name = f"_u_{fn.__name__}"
    if ns.setdefault(name, fn) is not fn:
        return None
    if kind == "chain":
        expr = names[0]
        for other in names[1:]:
            expr = f"{name}({expr}, {other})"
        return expr
    return f"{name}({', '.join(names)})"


def scalar_loop_for(fgraph: FunctionGraph, plan: LoopPlan, non_seq_cells: range) -> Callable | None:
    """The loop of the inner graph ``fgraph`` (the inner function's rewritten graph, its
    inputs in the order of the cells ``plan`` names) as one function on NumPy scalars, or
    None when some value is not 0-d or some node has no scalar spelling.

    It is called as ``loop(n, t0, S, B, R, N)``: steps ``t0`` to ``n - 1``, ``S`` the
    sequences, ``B`` the buffers (all allocated), ``R`` the rows of each ring (0: one row
    per step), ``N`` the non-sequences' scalars by cell; it returns ``(steps, None)``
    when it ran them all (fewer after a true stop condition), else ``(t, error)`` for the
    step ``t`` that raised, whose writes have not begun.
    """
    if plan.objects or plan.protect or plan.n_const:
        return None
    variables = [*fgraph.inputs, *fgraph.outputs]
    for node in fgraph.apply_nodes:
        variables.extend(node.inputs)
        variables.extend(node.outputs)
    if not all(_is_0d(v) for v in variables):
        return None
    ns: dict[str, Any] = {}
    name_of: dict[Variable, str] = {}
    for k, v in enumerate(fgraph.inputs):
        name_of[v] = f"i{k}"
    body: list[str] = []

    def named(v: Variable) -> str | None:
        """``v``'s name in the loop's text (a constant gets one the first time), else None."""
        if v not in name_of:
            if not isinstance(v, Constant):
                return None
            name_of[v] = f"_k{len(ns)}"
            ns[name_of[v]] = np.asarray(v.data, dtype=v.type.dtype)[()]
        return name_of[v]

    for j, node in enumerate(fgraph.toposort()):
        args = [named(v) for v in node.inputs]
        if None in args:
            return None
        expr = _spell(node, args, ns)
        if expr is None:
            return None
        name_of[node.outputs[0]] = f"v{j}"
        body.append(f"v{j} = {expr}")
    outs = [named(v) for v in fgraph.outputs]
    if None in outs:
        return None

    def row(b: int, expr: str) -> str:
        return f"({expr}) % R{b}" if plan.ring[b] else expr

    n_bufs = len(plan.ring)
    prev = sorted({b for _, b, tap in plan.rec_feeds if tap == -1})
    lines = ["def loop(n, t0, S, B, R, N):"]
    for s in sorted({s for _, s, _ in plan.seq_feeds}):
        lines.append(f"    s{s} = S[{s}]")
    for b in range(n_bufs):
        lines.append(f"    b{b} = B[{b}]; R{b} = R[{b}]")
    for c in non_seq_cells:
        lines.append(f"    i{c} = N[{c}]")
    for b in prev:
        lines.append(f"    p{b} = b{b}[{row(b, f't0 + {plan.starts[b] - 1}')}]")
    lines.append("    t = t0")
    lines.append("    try:")
    lines.append("        for t in range(t0, n):")
    step = []
    for c, s, off in plan.seq_feeds:
        step.append(f"i{c} = s{s}[t + {off}]")
    for c, b, tap in plan.rec_feeds:
        step.append(f"i{c} = p{b}" if tap == -1 else f"i{c} = b{b}[{row(b, f't + {plan.starts[b] + tap}')}]")
    step.extend(body)
    for o, b in plan.writes:
        step.append(f"b{b}[{row(b, f't + {plan.starts[b]}')}] = {outs[o]}")
        if b in prev:
            step.append(f"p{b} = {outs[o]}")
    if plan.cond:
        step.append(f"if {outs[-1]}:")
        step.append("    return t + 1, None")
    lines.extend("            " + line for line in step)
    lines.append("    except Exception as err:")
    lines.append("        return t, err")
    lines.append("    return n, None")
    source = "\n".join(lines) + "\n"
    exec(compile(source, "<arignote scalar scan loop>", "exec"), ns)
    loop = ns["loop"]
    loop.source = source  # type: ignore[attr-defined]
    return loop
