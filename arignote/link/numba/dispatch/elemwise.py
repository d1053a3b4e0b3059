"""Numba functions of :mod:`arignote.tensor.elemwise`'s Ops: ``Elemwise`` (any scalar op the
kernel templates write, fused ``Composite`` bodies included), ``DimShuffle`` and the
``CAReduce`` family (sum, product, max, min, all, any).

An Elemwise is one loop nest over the output, each input read at the element's index (index
0 where its Type is broadcastable), the body's scalar ops written out inside it; lengths that
differ where no Type says broadcastable raise, as the reference VM does. On 0-d values the
body is plain scalar code. In-place patterns are ignored: a whole-graph function allocates
its results (its inputs are never written).
"""

from __future__ import annotations

import numpy as np

from arignote.graph.basic import Apply
from arignote.link.numba.dispatch.basic import (
    FLOATS,
    INTS,
    NoNumbaImpl,
    NumbaImpl,
    check_types,
    nb_dtype,
    numba_funcify,
    overwritable,
    shape_tuple,
)
from arignote.link.numba.kernels import _as_body, _body_lines, _guard_lines, column_block_lines
from arignote.link.numba.scalar_math import helpers_for, libm_where_long
from arignote.scalar import basic as psb
from arignote.tensor.elemwise import CAReduce, DimShuffle, Elemwise

__all__: list[str] = []


def _lengths(node: Apply, names: list[str], ndim: int, lines: list[str], what: str) -> list[str]:
    """Statements setting ``n<d>`` (the output's length at each dimension) from the inputs
    not broadcastable there, raising where two of them differ; returns the length names."""
    out = []
    for d in range(ndim):
        srcs = [a for a, v in zip(names, node.inputs) if not v.type.broadcastable[d]]
        if not srcs:
            lines.append(f"    n{d} = 1")
        else:
            lines.append(f"    n{d} = {srcs[0]}.shape[{d}]")
            for a in srcs[1:]:
                lines.append(f"    if {a}.shape[{d}] != n{d}:")
                lines.append(f"        raise ValueError('{what}: input lengths differ at dimension {d}')")
        out.append(f"n{d}")
    return out


@numba_funcify.register(Elemwise)
def _elemwise(op: Elemwise, node: Apply) -> NumbaImpl:
    return elemwise_reducing(node, {})


def fusable_reduction(node: Apply) -> bool:
    """Whether the CAReduce ``node`` can run inside the loop of the Elemwise computing its
    input (:func:`elemwise_reducing`): a sum, product, max or min over any axes."""
    op = node.op
    return (
        isinstance(op, CAReduce)
        and type(op.scalar_op) in (psb.Add, psb.Mul, psb.Maximum, psb.Minimum)
        and "impl" not in op.scalar_op.__dict__
        and node.inputs[0].type.ndim > 0
    )


def elemwise_reducing(node: Apply, reduced: dict[int, Apply]) -> NumbaImpl:
    """The Elemwise ``node``'s function, where each output ``j`` in ``reduced`` is not made:
    the CAReduce ``reduced[j]`` (:func:`fusable_reduction`, its only reader) accumulates it
    inside the loop, and the function returns that reduction's value in its place (no
    intermediate array: measured on the hierarchical model, each one saved a write and a
    read of 80,000 elements)."""
    op = node.op
    check_types(node, str(op))
    comp = _as_body(op, node)
    if comp is None:
        raise NoNumbaImpl(f"{op}: no Numba template for its scalar op {op.scalar_op}")
    ndim = node.outputs[0].type.ndim
    if any(v.type.ndim != ndim for v in node.inputs):
        raise NoNumbaImpl(f"{op}: inputs of ranks other than the output's")
    ins = [f"a{k}" for k in range(len(node.inputs))]
    consts: list = []
    indent = "    " * (ndim + 1)
    # (sin and cos: vectorised where a guard can leave the call to tier 1, in loops; libm's
    # on 0-d values)
    guards: list[str] | None = [] if ndim else None
    made = _body_lines(comp, [f"x{k}" for k in range(len(ins))], indent, consts, {}, guards)
    if made is None:
        raise NoNumbaImpl(f"{op}: a scalar op or dtype of its body has no Numba template")
    body, outs, _ = made
    cs = [f"c{k}" for k in range(len(consts))]
    odts = [v.type.dtype for v in node.outputs]
    lines = [f"def impl({', '.join([*ins, *cs])}):"]
    if ndim == 0:
        lines += [f"    x{k} = {a}" for k, a in enumerate(ins)]
        lines += body
        rets = [f"{nb_dtype(d)}({o})" for d, o in zip(odts, outs)]
        lines.append(f"    return {rets[0] if len(rets) == 1 else ', '.join(rets)}")
        source = libm_where_long("\n".join(lines) + "\n")
        return NumbaImpl(source, tuple(consts), tuple(helpers_for(source)))
    lengths = _lengths(node, ins, ndim, lines, "Elemwise")
    shape = shape_tuple(lengths)
    loop = [f"j{d}" for d in range(ndim)]
    steps = {}
    rets = []
    for j, d in enumerate(odts):
        red = reduced.get(j)
        if red is None:
            i = dict(op.inplace_pattern).get(j)
            same = i is not None and node.inputs[i].type == node.outputs[j].type
            if same and overwritable(node, i):  # (in place: each element read, then written)
                lines.append(f"    o{j} = a{i}")
            else:
                lines.append(f"    o{j} = np.empty({shape}, {nb_dtype(d)})")
            rets.append(f"o{j}")
            continue
        rop = red.op
        acc = rop.acc_dtype or red.outputs[0].type.dtype
        init, step, identity = _init(rop, acc)
        axes = tuple(range(ndim)) if rop.axis is None else tuple(rop.axis)
        keep = [e for e in range(ndim) if e not in axes]
        if not identity:
            lines.append(f"    if {' * '.join(lengths[e] for e in axes)} == 0:")
            lines.append(f"        raise ValueError('{rop}: an empty axis has no identity to reduce to')")
        rdt = red.outputs[0].type.dtype
        if keep:
            lines.append(
                f"    o{j} = np.full({shape_tuple([lengths[e] for e in keep])}, {init}, {nb_dtype(acc)})"
            )
            target = f"o{j}[{', '.join(loop[e] for e in keep)}]"
            rets.append(f"o{j}" if acc == rdt else f"o{j}.astype({nb_dtype(rdt)})")
        else:
            lines.append(f"    o{j} = {init}")
            target = f"o{j}"
            rets.append(f"{nb_dtype(rdt)}(o{j})")
        steps[j] = (target, step, nb_dtype(acc))
    if guards:
        lines.append("    beyond = False")
    for d in range(ndim):
        lines.append(f"{'    ' * (d + 1)}for j{d} in range(n{d}):")
    for k, (a, v) in enumerate(zip(ins, node.inputs)):
        idx = ", ".join("0" if b else j for b, j in zip(v.type.broadcastable, loop))
        lines.append(f"{indent}x{k} = {a}[{idx}]")
    lines += body
    lines += _guard_lines(guards or [], indent)
    for j, name in enumerate(outs):
        if j in steps:
            target, step, cast = steps[j]
            lines.append(f"{indent}{target} = {step.format(a=target, v=f'{cast}({name})')}")
        else:
            lines.append(f"{indent}o{j}[{', '.join(loop)}] = {name}")
    if guards:  # (the whole-graph function's caller then computes the call on tier 1)
        lines.append("    if beyond:")
        lines.append("        raise ValueError('a value the vectorised reduction leaves to tier 1')")
    lines.append(f"    return {', '.join(rets)}")
    source = libm_where_long("\n".join(lines) + "\n")
    return NumbaImpl(source, tuple(consts), tuple(helpers_for(source)))


@numba_funcify.register(DimShuffle)
def _dimshuffle(op: DimShuffle, node: Apply) -> NumbaImpl:
    check_types(node, str(op))
    out = node.outputs[0].type
    lines = ["def impl(x):"]
    if op.input_ndim == 0:
        if out.ndim == 0:
            lines.append("    return x")
        else:
            lines.append(f"    return np.full({shape_tuple(['1'] * out.ndim)}, x, {nb_dtype(out.dtype)})")
        return NumbaImpl("\n".join(lines) + "\n")
    expr = "x"
    if op.drop:  # (dropped dimensions have length 1: index 0 there)
        idx = ", ".join("0" if d in op.drop else ":" for d in range(op.input_ndim))
        expr = f"x[{idx}]"
    kept = list(op.shuffle)
    order = sorted(kept)
    perm = [order.index(d) for d in kept]
    if not kept:  # every dimension dropped: a scalar, maybe given new axes
        if out.ndim:
            return NumbaImpl(
                f"def impl(x):\n    return np.full({shape_tuple(['1'] * out.ndim)}, {expr}, "
                f"{nb_dtype(out.dtype)})\n"
            )
        return NumbaImpl(f"def impl(x):\n    return {expr}\n")
    lines.append(f"    y = {expr}")
    if perm != sorted(perm):
        # (as_strided, not np.transpose with axes: Numba's check of the axes compiles an
        # error message's string formatting, seconds of compile per process)
        shape = shape_tuple([f"y.shape[{p}]" for p in perm])
        strides = shape_tuple([f"y.strides[{p}]" for p in perm])
        lines.append(f"    y = np.lib.stride_tricks.as_strided(y, shape={shape}, strides={strides})")
    for a in op.augment:
        lines.append(f"    y = np.expand_dims(y, {a})")
    lines.append("    return y")
    return NumbaImpl("\n".join(lines) + "\n")


def _init(op: CAReduce, acc: str) -> tuple[str, str, bool]:
    """(initial value, step template with {a} and {v}, whether it has an identity)."""
    t = type(op.scalar_op)
    if t is psb.Add:
        return f"{nb_dtype(acc)}(0)", "{a} + {v}", True
    if t is psb.Mul:
        return f"{nb_dtype(acc)}(1)", "{a} * {v}", True
    if t in (psb.Maximum, psb.Minimum):
        big = t is psb.Maximum
        if acc in FLOATS:
            init = f"{nb_dtype(acc)}({'-' if big else ''}np.inf)"
        elif acc in INTS:
            info = np.iinfo(acc)
            init = f"{nb_dtype(acc)}({info.min if big else info.max})"
        else:
            raise NoNumbaImpl(f"{op}: no Numba max/min of {acc}")
        cmp = ">" if big else "<"
        return init, "{v} if (({v} " + cmp + " {a}) | ({v} != {v})) else {a}", False
    if t is psb.AND:
        return "True", "{a} and ({v} != 0)", True
    if t is psb.OR:
        return "False", "{a} or ({v} != 0)", True
    raise NoNumbaImpl(f"{op}: no Numba reduction with {op.scalar_op}")


@numba_funcify.register(CAReduce)
def _careduce(op: CAReduce, node: Apply) -> NumbaImpl:
    check_types(node, str(op))
    if "impl" in op.scalar_op.__dict__:
        raise NoNumbaImpl(f"{op}: a scalar op with its own function")
    (x,) = node.inputs
    out = node.outputs[0].type
    nd = x.type.ndim
    acc = op.acc_dtype or out.dtype
    if type(op.scalar_op) in (psb.AND, psb.OR):
        acc = "bool"
    init, step, identity = _init(op, acc)
    if nd == 0:
        return NumbaImpl(f"def impl(x):\n    return {nb_dtype(out.dtype)}(x)\n")
    axes = tuple(range(nd)) if op.axis is None else tuple(op.axis)
    keep = [d for d in range(nd) if d not in axes]
    lines = ["def impl(x):"]
    if not identity:
        size = " * ".join(f"x.shape[{d}]" for d in axes) or "1"
        lines.append(f"    if {size} == 0:")
        lines.append(f"        raise ValueError('{op}: an empty axis has no identity to reduce to')")
    cast = nb_dtype(acc)
    if nd == 2 and axes == (0,):
        lines += ["    n0, n1 = x.shape", f"    o = np.full((n1,), {init}, {cast})"]
        lines += column_block_lines(
            ["x"], ((False, False),), [], [], "x0", "{a} = " + step, cast, "n0", "range(n1)", "o"
        )
        lines += [
            "    for j0 in range(j0, n0):",
            "        for j1 in range(n1):",
            f"            v = {cast}(x[j0, j1])",
            f"            o[j1] = {step.format(a='o[j1]', v='v')}",
        ]
        lines.append("    return o" if acc == out.dtype else f"    return o.astype({nb_dtype(out.dtype)})")
        return NumbaImpl("\n".join(lines) + "\n")
    if keep:
        lines.append(f"    o = np.full({shape_tuple([f'x.shape[{d}]' for d in keep])}, {init}, {cast})")
        target = f"o[{', '.join(f'j{d}' for d in keep)}]"
    else:
        lines.append(f"    o = {init}")
        target = "o"
    for d in range(nd):
        lines.append(f"{'    ' * (d + 1)}for j{d} in range(x.shape[{d}]):")
    pad = "    " * (nd + 1)
    lines.append(f"{pad}v = {cast}(x[{', '.join(f'j{d}' for d in range(nd))}])")
    lines.append(f"{pad}{target} = {step.format(a=target, v='v')}")
    if keep:
        lines.append("    return o" if acc == out.dtype else f"    return o.astype({nb_dtype(out.dtype)})")
    else:
        lines.append(f"    return {nb_dtype(out.dtype)}(o)")
    return NumbaImpl("\n".join(lines) + "\n")
