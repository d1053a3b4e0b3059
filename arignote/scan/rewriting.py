"""Rewrite rules for :class:`~arignote.scan.op.Scan` nodes.

- :func:`scan_push_out_invariants`: inner computations that depend only on the
  non-sequences (and constants) are computed once, outside the loop.
- :func:`scan_remove_unused_outputs`: outputs nobody reads, recurrent states that only
  feed themselves and non-sequences nothing reads are dropped from the loop.
- :func:`scan_keep_last_rows`: an output read only through its last rows (``xs[-1]``,
  the final state of a recurrence, a shared variable's update) keeps only those rows in
  memory while the loop runs, O(taps) instead of O(steps).
- :func:`scan_merge_same_sequences`: two loops over the same sequences for the same
  number of steps, independent of each other, run as one.

The inner graphs themselves are rewritten by the same pipeline as any function, when
the inner function is compiled.
"""

from __future__ import annotations

from typing import Any

from arignote.graph.basic import Apply, Constant, Variable
from arignote.graph.fg import FunctionGraph, Output
from arignote.graph.replace import clone_replace
from arignote.graph.rewriting.basic import node_rewriter
from arignote.graph.rewriting.registry import register_rewrite
from arignote.graph.traversal import ancestors, io_toposort
from arignote.scan.op import Scan
from arignote.scan.utils import ScanInfo
from arignote.tensor.indexing.basic import Subtensor
from arignote.tensor.type import TensorType

__all__ = [
    "scan_keep_last_rows",
    "scan_merge_same_sequences",
    "scan_push_out_invariants",
    "scan_remove_unused_outputs",
]


def _rebuild(op: Scan, inner_inputs: list, inner_outputs: list, info: ScanInfo) -> Scan:
    return Scan(
        inner_inputs,
        inner_outputs,
        info,
        mode=op.mode,
        name=op.name,
        truncate_gradient=op.truncate_gradient,
        profile=op.profile,
    )


# --- invariants ---------------------------------------------------------------------------------


def _pushable(node: Apply) -> bool:
    """A node that may run once instead of every step: deterministic, tensors only."""
    if any(not isinstance(v.type, TensorType) for v in (*node.inputs, *node.outputs)):
        return False
    return not getattr(node.op, "destroy_map", None)


@register_rewrite("canonicalize", "fast_run", "scan")
@node_rewriter([Scan])
def scan_push_out_invariants(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """Compute outside the loop what the step computes from non-sequences and constants
    alone (e.g. ``W.T`` or ``exp(b)`` of weights): passed in as new non-sequences."""
    op: Scan = node.op
    info = op.info
    ins, outs = op.inner_inputs, op.inner_outputs
    _, _, non_sl = info.inner_slices()
    non_inner = ins[non_sl]
    _, _, _, non_outer = op.split_outer(node.inputs)
    invariant: dict = dict(zip(non_inner, non_outer))  # inner variable -> outer equivalent
    pushed_nodes = []
    for inner in io_toposort(ins, outs):
        if not _pushable(inner):
            continue
        if all(isinstance(v, Constant) or v in invariant for v in inner.inputs):
            pushed_nodes.append(inner)
            for o in inner.outputs:
                invariant[o] = None  # outer value built below
    if not pushed_nodes:
        return None
    # which invariant values are read by non-invariant nodes or are outputs
    needed: list[Variable] = []
    seen: set = set()
    pushed_set = set(pushed_nodes)
    for inner in io_toposort(ins, outs):
        if inner in pushed_set:
            continue
        for v in inner.inputs:
            if v.owner in pushed_set and v not in seen:
                seen.add(v)
                needed.append(v)
    for o in outs:
        if o.owner in pushed_set and o not in seen:
            seen.add(o)
            needed.append(o)
    if not needed:
        return None
    outer_values = clone_replace(
        needed, {k: v for k, v in invariant.items() if v is not None and k in set(non_inner)}
    )
    new_ph = [v.type(name=v.name) for v in needed]
    new_outs = clone_replace(list(outs), dict(zip(needed, new_ph)))
    new_info = ScanInfo(
        info.seq_taps, info.rec_taps, info.n_nit_sot, info.n_non_seqs + len(needed), info.as_while, info.keep
    )
    new_op = _rebuild(op, [*ins, *new_ph], new_outs, new_info)
    return new_op(*node.inputs, *outer_values, return_list=True)


# --- unused outputs ------------------------------------------------------------------------------


def _used(fgraph: FunctionGraph, v: Variable) -> bool:
    return bool(fgraph.clients.get(v))


@register_rewrite("canonicalize", "fast_run", "scan")
@node_rewriter([Scan])
def scan_remove_unused_outputs(fgraph: FunctionGraph, node: Apply) -> dict | None:
    """Drop the outputs nobody reads (a nit-sot output, or a recurrent output whose
    state no kept output's step depends on) and the non-sequences no kept output reads
    (e.g. a weight whose only use was pushed out of the loop)."""
    op: Scan = node.op
    info = op.info
    ins, outs = op.inner_inputs, op.inner_outputs
    seq_sl, rec_sl, non_sl = info.inner_slices()
    n_rec, n_nit = info.n_rec, info.n_nit_sot
    keep_rec = [_used(fgraph, node.outputs[j]) for j in range(n_rec)]
    keep_nit = [_used(fgraph, node.outputs[n_rec + m]) for m in range(n_nit)]
    # a recurrent state read by the step of a kept output (or the stop condition) stays
    roots = [outs[j] for j in range(n_rec) if keep_rec[j]] + [
        outs[n_rec + m] for m in range(n_nit) if keep_nit[m]
    ]
    roots += list(outs[n_rec + n_nit :])
    changed = True
    while changed:
        changed = False
        reached = _inputs_reached(ins, roots)
        for j in range(n_rec):
            if not keep_rec[j] and any(ins[k] in reached for k in range(rec_sl[j].start, rec_sl[j].stop)):
                keep_rec[j] = True
                roots.append(outs[j])
                changed = True
    reached = _inputs_reached(ins, roots)
    keep_non = [ins[k] in reached for k in range(non_sl.start, non_sl.stop)]
    if all(keep_rec) and all(keep_nit) and all(keep_non):
        return None
    if not any(keep_rec) and not any(keep_nit):
        return None  # nothing is used: the node goes away with its clients anyway
    new_ins = [ins[k] for sl in seq_sl for k in range(sl.start, sl.stop)]
    new_ins += [ins[k] for j in range(n_rec) if keep_rec[j] for k in range(rec_sl[j].start, rec_sl[j].stop)]
    new_ins += [v for v, kept_v in zip(ins[non_sl], keep_non) if kept_v]
    new_outs = [outs[j] for j in range(n_rec) if keep_rec[j]]
    new_outs += [outs[n_rec + m] for m in range(n_nit) if keep_nit[m]]
    new_outs += list(outs[n_rec + n_nit :])
    kept = [j for j in range(n_rec) if keep_rec[j]] + [n_rec + m for m in range(n_nit) if keep_nit[m]]
    new_info = ScanInfo(
        info.seq_taps,
        tuple(info.rec_taps[j] for j in range(n_rec) if keep_rec[j]),
        sum(keep_nit),
        sum(keep_non),
        info.as_while,
        tuple(info.keep[k] for k in kept),
    )
    new_op = _rebuild(op, new_ins, new_outs, new_info)
    n_steps, seqs, inits, non_seqs = op.split_outer(node.inputs)
    new_node_outs = new_op(
        n_steps,
        *seqs,
        *[inits[j] for j in range(n_rec) if keep_rec[j]],
        *[v for v, kept_v in zip(non_seqs, keep_non) if kept_v],
        return_list=True,
    )
    return {node.outputs[k]: new for k, new in zip(kept, new_node_outs)}


def _inputs_reached(ins: list, roots: list) -> set:
    return set(ancestors(roots, blockers=ins)) & set(ins)


# --- last rows only ------------------------------------------------------------------------------


def _last_rows_needed(fgraph: FunctionGraph, out: Variable, first_row: int) -> tuple[int, list] | None:
    """How many last rows of ``out`` its readers need, and the reads ``(node, via_slice)``;
    None if some reader needs more (or all of it)."""
    need = 0
    reads = []
    for client, _ in fgraph.clients.get(out, ()):
        if isinstance(client.op, Output) or not isinstance(client.op, Subtensor):
            return None
        idx = client.op.idx_list
        first = idx[0] if idx else None
        if isinstance(first, int) and not isinstance(first, bool) and first < 0:
            need = max(need, -first)
            reads.append(client)
            continue
        if isinstance(first, slice) and first == slice(first_row, None, None) and len(idx) == 1:
            # out[L:] (the user's view of a recurrence): its readers must all be last rows
            inner = _last_rows_needed(fgraph, client.outputs[0], -1)
            if inner is None:
                return None
            need = max(need, inner[0])
            reads.extend(inner[1])
            continue
        return None
    return (need, reads) if need else None


@register_rewrite("specialize", "fast_run", "scan")
@node_rewriter([Scan])
def scan_keep_last_rows(fgraph: FunctionGraph, node: Apply) -> dict | None:
    """Outputs read only as ``out[-i]`` (possibly after the ``out[L:]`` that drops a
    recurrence's initial rows) keep only their last ``max(i)`` rows while the loop runs."""
    op: Scan = node.op
    info = op.info
    keep = list(info.keep)
    reads_of: dict[int, list] = {}
    for k, out in enumerate(node.outputs):
        if keep[k] or not isinstance(out.type, TensorType):
            continue
        first_row = info.rec_len(k) if k < info.n_rec else 0
        found = _last_rows_needed(fgraph, out, first_row)
        if found is None:
            continue
        keep[k] = found[0]
        reads_of[k] = found[1]
    if not reads_of:
        return None
    new_outs = op.with_info(info.with_keep(tuple(keep)))(*node.inputs, return_list=True)
    replace: dict[Any, Any] = {}
    for k, out in enumerate(node.outputs):
        if k in reads_of:
            for read in reads_of[k]:
                new_read = read.op(new_outs[k], *read.inputs[1:])
                replace[read.outputs[0]] = new_read
        elif fgraph.clients.get(out):
            replace[out] = new_outs[k]
    return replace


# --- merging loops over the same sequences -----------------------------------------------------


def _mergeable(a: Apply, b: Apply) -> bool:
    oa, ob = a.op, b.op
    ia, ib = oa.info, ob.info
    return (
        a is not b
        and isinstance(ob, Scan)
        and not ia.as_while
        and not ib.as_while
        and a.inputs[0] is b.inputs[0]
        and ia.seq_taps == ib.seq_taps
        and a.inputs[1 : 1 + ia.n_seqs] == b.inputs[1 : 1 + ib.n_seqs]
        and oa.truncate_gradient == ob.truncate_gradient
        and oa.mode == ob.mode
    )


@register_rewrite("specialize", "fast_run", "scan")
@node_rewriter([Scan])
def scan_merge_same_sequences(fgraph: FunctionGraph, node: Apply) -> dict | None:
    """Two loops over the same sequences for the same number of steps, neither reading
    the other's outputs, become one loop (one pass over the data, one inner call per
    step)."""
    info = node.op.info
    if info.as_while or not info.n_seqs:
        return None
    other = None
    for client, _ in fgraph.clients.get(node.inputs[1], ()):
        if isinstance(client.op, Scan) and _mergeable(node, client):
            other = client
            break
    if other is None:
        return None
    if set(node.outputs) & set(ancestors(other.inputs)) or set(other.outputs) & set(ancestors(node.inputs)):
        return None  # one reads the other: they cannot run together
    a, b = node.op, other.op
    ia, ib = a.info, b.info
    a_seq, a_rec, a_non = ia.inner_slices()
    b_seq, b_rec, b_non = ib.inner_slices()
    # b's sequence placeholders become a's, its other inner inputs fresh ones (the two
    # inner graphs may share Variables: one Op made from the other)
    replace = {v: v.type(name=v.name) for v in b.inner_inputs}
    replace.update({b.inner_inputs[k]: a.inner_inputs[k] for sl in b_seq for k in range(sl.start, sl.stop)})
    b_ins = [replace[v] for v in b.inner_inputs]
    b_outs = clone_replace(list(b.inner_outputs), replace)
    ins = [a.inner_inputs[k] for sl in a_seq for k in range(sl.start, sl.stop)]
    ins += [a.inner_inputs[k] for sl in a_rec for k in range(sl.start, sl.stop)]
    ins += [b_ins[k] for sl in b_rec for k in range(sl.start, sl.stop)]
    ins += list(a.inner_inputs[a_non]) + list(b_ins[b_non])
    ao, bo = a.inner_outputs, b_outs
    outs = list(ao[: ia.n_rec]) + list(bo[: ib.n_rec]) + list(ao[ia.n_rec :]) + list(bo[ib.n_rec :])
    keep = ia.keep[: ia.n_rec] + ib.keep[: ib.n_rec] + ia.keep[ia.n_rec :] + ib.keep[ib.n_rec :]
    merged_info = ScanInfo(
        ia.seq_taps,
        ia.rec_taps + ib.rec_taps,
        ia.n_nit_sot + ib.n_nit_sot,
        ia.n_non_seqs + ib.n_non_seqs,
        False,
        keep,
    )
    merged = _rebuild(a, ins, outs, merged_info)
    n_steps, seqs, a_inits, a_nons = a.split_outer(node.inputs)
    _, _, b_inits, b_nons = b.split_outer(other.inputs)
    new = merged(n_steps, *seqs, *a_inits, *b_inits, *a_nons, *b_nons, return_list=True)
    na, nb = ia.n_rec, ib.n_rec
    new_a = new[:na] + new[na + nb : na + nb + ia.n_nit_sot]
    new_b = new[na : na + nb] + new[na + nb + ia.n_nit_sot :]
    result = {}
    for old, rep in [*zip(node.outputs, new_a), *zip(other.outputs, new_b)]:
        if fgraph.clients.get(old):
            result[old] = rep
    return result
