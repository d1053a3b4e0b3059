"""Differentiation of :class:`~arignote.scan.op.Scan`: back-propagation through time (a
backward scan) and the pushforward (a scan carrying tangents).

The backward scan runs the forward steps in reverse. At step ``t`` it recomputes that
step's inner graph from the stored recurrent values (only the states are kept from the
forward pass, not each step's intermediates) and pulls the output gradients back through
it. Gradients owed to earlier steps travel in a carry of ``L`` rows per recurrent output
(``L``: how far back its taps reach): row ``i`` holds what is owed to the value ``i + 1``
steps back. Gradients of the non-sequences are summed in carries too, so no per-step
gradient of a weight is kept. Only the last value of each carry is kept in memory.

Random draws inside the loop are stored by the forward pass (they cannot be recomputed
without the generator's state at each step), and the backward step reads them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from arignote._gradient.derivatives import grad, pushforward
from arignote._gradient.ops import ViewOp
from arignote.configdefaults import config
from arignote.graph.basic import Variable
from arignote.graph.null_type import disconnected_type, is_disconnected, is_null
from arignote.graph.replace import clone_replace
from arignote.graph.traversal import io_toposort
from arignote.scan.basic import scan
from arignote.scan.op import Scan
from arignote.scan.utils import ScanInfo, until
from arignote.tensor.alloc import zeros_like
from arignote.tensor.indexing.basic import inc_subtensor
from arignote.tensor.join import concatenate, stack
from arignote.tensor.shape import _zero_grad, shape_tuple, specify_shape
from arignote.tensor.type import TensorType
from arignote.tensor.ufuncs import cast, ge, minimum, switch

__all__ = ["scan_pullback", "scan_pushforward"]


def _is_float(v: Variable) -> bool:
    return isinstance(v.type, TensorType) and np.dtype(v.type.dtype).kind in "fc"


def _live(g: Any) -> bool:
    return g is not None and not is_disconnected(g) and not is_null(g)


def _frontier(op: Scan) -> list[Variable]:
    """Tensors of the inner graph computed from a recurrent state that is not a tensor
    (a random generator): the draws. The backward pass reads them, stored, rather than
    recompute them."""
    info = op.info
    _, rec_sl, _ = info.inner_slices()
    objects = {
        op.inner_inputs[sl.start]
        for sl in rec_sl
        if not isinstance(op.inner_inputs[sl.start].type, TensorType)
    }
    if not objects:
        return []
    tainted = set(objects)
    found = []
    for node in io_toposort(op.inner_inputs, op.inner_outputs):
        if any(i in tainted for i in node.inputs):
            for o in node.outputs:
                if isinstance(o.type, TensorType):
                    found.append(o)
                else:
                    tainted.add(o)
    return found


def _forward_with(op: Scan, inputs: list, extra: list[Variable]) -> list[Variable]:
    """The outputs of ``op`` on ``inputs``, every row kept, with the inner Variables
    ``extra`` stored as more per-step outputs."""
    info = op.info
    if not extra and not any(info.keep):
        return None  # type: ignore[return-value]
    n_out = info.n_rec + info.n_nit_sot
    outs = list(op.inner_outputs[:n_out]) + list(extra) + list(op.inner_outputs[n_out:])
    new_info = ScanInfo(
        info.seq_taps, info.rec_taps, info.n_nit_sot + len(extra), info.n_non_seqs, info.as_while
    )
    new_op = Scan(
        op.inner_inputs,
        outs,
        new_info,
        mode=op.mode,
        name=op.name,
        truncate_gradient=op.truncate_gradient,
        profile=op.profile,
    )
    return new_op(*inputs, return_list=True)


def _keep_last(outs: list[Variable], which: list[int]) -> list[Variable]:
    """Rebuild the Scan node of ``outs`` (a user-level result of :func:`scan`) so that the
    outer outputs ``which`` keep only their last row; return the node's outputs."""
    node = outs[0].owner
    while not isinstance(node.op, Scan):
        node = node.inputs[0].owner
    info = node.op.info
    keep = list(info.keep)
    for k in which:
        keep[k] = 1
    return node.op.with_info(info.with_keep(tuple(keep)))(*node.inputs, return_list=True)


def scan_pullback(op: Scan, inputs: list, outputs: list, output_grads: list) -> list:
    """Gradients of a Scan node's inputs (see the module docstring)."""
    info = op.info
    _n_steps, seqs, inits, non_seqs = op.split_outer(inputs)
    n_rec, n_nit = info.n_rec, info.n_nit_sot
    seq_sl, rec_sl, non_sl = info.inner_slices()
    ins = op.inner_inputs
    result: list[Any] = [disconnected_type()] + [None] * (len(inputs) - 1)

    live = [_live(g) and isinstance(o.type, TensorType) for g, o in zip(output_grads, outputs)]
    if not any(live):
        return [disconnected_type() for _ in inputs]

    frontier = _frontier(op)
    fwd = _forward_with(op, inputs, frontier)
    if fwd is None:
        fwd = list(outputs)
    stored = fwd[n_rec + n_nit : n_rec + n_nit + len(frontier)]
    output_grads = list(output_grads)
    for k, keep in enumerate(info.keep):
        if keep and live[k]:  # the gradient of the last rows only: zeros before them
            g = output_grads[k]
            full = zeros_like(fwd[k])
            output_grads[k] = inc_subtensor(full[shape_tuple(fwd[k])[0] - shape_tuple(g)[0] :], g)

    tensor_recs = [j for j in range(n_rec) if isinstance(ins[rec_sl[j].start].type, TensorType)]
    float_recs = [j for j in tensor_recs if _is_float(ins[rec_sl[j].start])]
    float_non = [m for m in range(info.n_non_seqs) if _is_float(ins[non_sl.start + m])]
    float_seqs = [i for i in range(info.n_seqs) if _is_float(ins[seq_sl[i].start])]

    # steps run: read off a stored output
    first = next((k for k in range(n_rec + n_nit) if isinstance(fwd[k].type, TensorType)), None)
    if first is None:
        return [disconnected_type() for _ in inputs]
    n = shape_tuple(fwd[first])[0]
    if first < n_rec:
        n = n - info.rec_len(first)
    if info.as_while or not isinstance(n, Variable):
        n = cast(n, "int64") if isinstance(n, Variable) else n
    n_b = n if op.truncate_gradient < 0 else minimum(n, op.truncate_gradient)

    # the backward scan's sequences (reversed in time) and what each is
    b_seqs: list[Variable] = []
    g_rec = {}
    for j in float_recs:
        if live[j]:
            g = output_grads[j]
            g_rec[j] = len(b_seqs)
            b_seqs.append(g[info.rec_len(j) :][::-1])
    g_nit = {}
    for m in range(n_nit):
        o = n_rec + m
        if live[o] and _is_float(op.inner_outputs[o]):
            g_nit[m] = len(b_seqs)
            b_seqs.append(output_grads[o][::-1])
    seq_pos = {}
    for i, s in enumerate(seqs):
        off, _ = info.seq_span(i)
        for k, tap in zip(range(seq_sl[i].start, seq_sl[i].stop), info.seq_taps[i]):
            seq_pos[k] = len(b_seqs)
            b_seqs.append(s[tap + off : tap + off + n][::-1])
    for j in tensor_recs:
        L = info.rec_len(j)
        for k, tap in zip(range(rec_sl[j].start, rec_sl[j].stop), info.rec_taps[j]):
            seq_pos[k] = len(b_seqs)
            b_seqs.append(fwd[j][L + tap : L + tap + n][::-1])
    front_pos = []
    for f in stored:
        front_pos.append(len(b_seqs))
        b_seqs.append(f[::-1])
    # each step's outputs, stored by the forward pass: the pullback reads them instead of
    # recomputing them (tanh's derivative from tanh's value, ...)
    out_pos = {}
    for j in tensor_recs:
        L = info.rec_len(j)
        out_pos[j] = len(b_seqs)
        b_seqs.append(fwd[j][L : L + n][::-1])
    for m in range(n_nit):
        if isinstance(fwd[n_rec + m].type, TensorType):
            out_pos[n_rec + m] = len(b_seqs)
            b_seqs.append(fwd[n_rec + m][::-1])
    n_seq_args = len(b_seqs)

    carry_init = [zeros_like(inits[j]) for j in float_recs] + [zeros_like(non_seqs[m]) for m in float_non]
    b_non = list(non_seqs) + [inits[j] for j in range(n_rec) if j not in tensor_recs]
    wrt_ks = [k for i in float_seqs for k in range(seq_sl[i].start, seq_sl[i].stop)]
    wrt_ks += [k for j in float_recs for k in range(rec_sl[j].start, rec_sl[j].stop)]
    wrt_ks += [non_sl.start + m for m in float_non]

    def step(*args: Variable) -> list[Variable]:
        seq_args = args[:n_seq_args]
        carries = args[n_seq_args : n_seq_args + len(carry_init)]
        rest = args[n_seq_args + len(carry_init) :]
        env: dict = {}
        for k, pos in seq_pos.items():
            env[ins[k]] = seq_args[pos]
        for m in range(info.n_non_seqs):
            env[ins[non_sl.start + m]] = rest[m]
        objs = iter(rest[info.n_non_seqs :])
        for j in range(n_rec):
            if j not in tensor_recs:
                env[ins[rec_sl[j].start]] = next(objs)
        for f, pos in zip(frontier, front_pos):
            env[f] = seq_args[pos]
        outs = clone_replace(list(op.inner_outputs[: n_rec + n_nit]), env)
        known = {}
        for c, j in enumerate(float_recs):
            gy = carries[c][0]
            if j in g_rec:
                gy = gy + seq_args[g_rec[j]]
            known[ViewOp()(outs[j])] = cast(gy, outs[j].type.dtype)
        for m, pos in g_nit.items():
            o = outs[n_rec + m]
            known[ViewOp()(o)] = cast(seq_args[pos], o.type.dtype)
        wrt = [env[ins[k]] for k in wrt_ks]
        ds = grad(None, wrt, known_grads=known, disconnected_inputs="ignore", return_disconnected="zero")
        ds = clone_replace(list(ds), {outs[k]: seq_args[pos] for k, pos in out_pos.items()})
        d_of = {k: cast(d, ins[k].type.dtype) for k, d in zip(wrt_ks, ds)}
        new_carries = []
        for c, j in enumerate(float_recs):
            C = carries[c]
            L = info.rec_len(j)
            rows = []
            for r in range(L):
                terms = [
                    d_of[k]
                    for k, tap in zip(range(rec_sl[j].start, rec_sl[j].stop), info.rec_taps[j])
                    if tap == -(r + 1)
                ]
                row = terms[0] if terms else zeros_like(C[0])
                for extra in terms[1:]:
                    row = row + extra
                rows.append(row)
            if L == 1:  # nothing owed further back: the carry is this step's term
                new_carries.append(stack(rows))
                continue
            shifted = concatenate([C[1:], zeros_like(C[:1])])
            new_carries.append(shifted + stack(rows))
        for c, m in enumerate(float_non):
            new_carries.append(carries[len(float_recs) + c] + d_of[non_sl.start + m])
        seq_ds = [d_of[k] for i in float_seqs for k in range(seq_sl[i].start, seq_sl[i].stop)]
        return new_carries + seq_ds

    n_carry = len(carry_init)
    n_seq_d = sum(len(info.seq_taps[i]) for i in float_seqs)
    outs, _ = scan(
        step,
        sequences=b_seqs,
        outputs_info=carry_init + [None] * n_seq_d,
        non_sequences=b_non,
        n_steps=n_b,
        name=f"grad_of_{op.name or 'scan_fn'}",
        mode=op.mode,
        return_list=True,
    )
    raw = _keep_last(outs, list(range(n_carry))) if n_carry else None
    finals = [raw[c][0] for c in range(n_carry)] if n_carry else []
    seq_ds = outs[n_carry:]

    complete = None if op.truncate_gradient < 0 else ge(n_b, n)
    for c, j in enumerate(float_recs):
        L = info.rec_len(j)
        init_g = finals[c][::-1]
        if complete is not None:
            init_g = switch(complete, init_g, zeros_like(init_g))
        if live[j]:
            init_g = init_g + output_grads[j][:L]
        result[1 + info.n_seqs + j] = init_g
    for c, m in enumerate(float_non):
        result[1 + info.n_seqs + n_rec + m] = finals[len(float_recs) + c]
    d_iter = iter(seq_ds)
    for i in float_seqs:
        s = seqs[i]
        off, _ = info.seq_span(i)
        g = zeros_like(s)
        for tap in info.seq_taps[i]:
            d = next(d_iter)[::-1]
            start = tap + off + (n - n_b) if op.truncate_gradient >= 0 else tap + off
            g = _inc_rows(g, start, d, n_b)
        result[1 + i] = g
    for k, (inp, r) in enumerate(zip(inputs, result)):
        if k == 0:
            continue
        if r is not None and isinstance(inp.type, TensorType):
            result[k] = _like(r, inp)
        if r is None:
            result[k] = _zero_grad(inp) if isinstance(inp.type, TensorType) else disconnected_type()
    return result


def _like(g: Variable, x: Variable) -> Variable:
    """``g`` with ``x``'s dtype (a float ``x``) and static shape."""
    if _is_float(x) and g.type.dtype != x.type.dtype:
        g = cast(g, x.type.dtype)
    if any(s is not None for s in x.type.shape) and g.type.shape != x.type.shape:
        g = specify_shape(g, x.type.shape)
    return g


def _inc_rows(g: Variable, start: Any, d: Variable, n: Any) -> Variable:
    return inc_subtensor(g[start : start + n], d)


def scan_pushforward(op: Scan, inputs: list, tangents: list) -> list:
    """Tangents of a Scan node's outputs: one scan that computes each step's outputs and
    their tangents together (the tangents of the recurrent outputs are fed back too)."""
    info = op.info
    n_steps, seqs, inits, non_seqs = op.split_outer(inputs)
    _, t_seqs, t_inits, t_non = op.split_outer(tangents)
    n_rec, n_nit = info.n_rec, info.n_nit_sot
    seq_sl, rec_sl, non_sl = info.inner_slices()
    ins = op.inner_inputs

    def tangent(v: Variable, t: Any) -> Variable:
        if t is None or is_disconnected(t) or not _is_float(v):
            return _zero_grad(v) if isinstance(v.type, TensorType) else None  # type: ignore[return-value]
        return t

    t_seqs = [tangent(v, t) for v, t in zip(seqs, t_seqs)]
    t_inits = [tangent(v, t) for v, t in zip(inits, t_inits)]
    t_non = [tangent(v, t) for v, t in zip(non_seqs, t_non)]
    tensor_recs = [j for j in range(n_rec) if isinstance(ins[rec_sl[j].start].type, TensorType)]

    sequences = []
    for i, s in enumerate(seqs):
        sequences.append({"input": s, "taps": list(info.seq_taps[i])})
        sequences.append(
            {
                "input": cast(t_seqs[i], s.type.dtype) if _is_float(s) else t_seqs[i],
                "taps": list(info.seq_taps[i]),
            }
        )
    outputs_info: list[Any] = []
    for j in range(n_rec):
        if j in tensor_recs:
            outputs_info.append({"initial": inits[j], "taps": list(info.rec_taps[j])})
            outputs_info.append(
                {"initial": _float_like(t_inits[j], inits[j]), "taps": list(info.rec_taps[j])}
            )
        else:
            outputs_info.append(inits[j])
    outputs_info += [None] * (2 * n_nit)
    non = list(non_seqs) + list(t_non)

    def step(*args: Variable) -> Any:
        it = iter(args)
        env: dict = {}
        tan: dict = {}
        for i in range(info.n_seqs):
            vals = [next(it) for _ in info.seq_taps[i]]
            tvals = [next(it) for _ in info.seq_taps[i]]
            for k, v, tv in zip(range(seq_sl[i].start, seq_sl[i].stop), vals, tvals):
                env[ins[k]], tan[ins[k]] = v, tv
        for j in range(n_rec):
            vals = [next(it) for _ in info.rec_taps[j]]
            for k, v in zip(range(rec_sl[j].start, rec_sl[j].stop), vals):
                env[ins[k]] = v
            if j in tensor_recs:
                tvals = [next(it) for _ in info.rec_taps[j]]
                for k, tv in zip(range(rec_sl[j].start, rec_sl[j].stop), tvals):
                    tan[ins[k]] = tv
        rest = list(it)
        for m in range(info.n_non_seqs):
            env[ins[non_sl.start + m]] = rest[m]
            tan[ins[non_sl.start + m]] = rest[info.n_non_seqs + m]
        outs = clone_replace(list(op.inner_outputs), env)
        wrt = [env[k] for k in tan if _is_float(k)]
        ts = [cast(tan[k], k.type.dtype) for k in tan if _is_float(k)]
        results = []
        for k in range(n_rec + n_nit):
            o = outs[k]
            results.append(o)
            if k < n_rec and k not in tensor_recs:
                continue
            if _is_float(o) and wrt:
                jv = pushforward(o, wrt, ts, disconnected_outputs="ignore", return_disconnected="zero")
                results.append(cast(jv, o.type.dtype))
            elif isinstance(o.type, TensorType):
                results.append(_zero_grad(o))
        if info.as_while:
            return results, until(outs[-1])
        return results

    outs, _ = scan(
        step,
        sequences=sequences,
        outputs_info=outputs_info,
        non_sequences=non,
        n_steps=n_steps,
        name=f"rop_of_{op.name or 'scan_fn'}",
        mode=op.mode,
        return_list=True,
    )
    result: list[Any] = []
    it = iter(outs)
    for j in range(n_rec):
        next(it)
        if j not in tensor_recs:
            result.append(None)
            continue
        t_out = next(it)
        full = concatenate([cast(t_inits[j], t_out.type.dtype), t_out])
        keep = info.keep[j]
        result.append(full[-keep:] if keep else full)
    for m in range(n_nit):
        next(it)
        t_out = next(it)
        keep = info.keep[n_rec + m]
        result.append(t_out[-keep:] if keep else t_out)
    return result


def _float_like(t: Variable, v: Variable) -> Variable:
    dtype = v.type.dtype if np.dtype(v.type.dtype).kind in "fc" else config.floatX
    return cast(t, dtype)
