"""``vectorize_graph`` of a :class:`~arignote.scan.op.Scan`: one loop over batched steps.

A scan whose sequences, initial values or non-sequences gain a leading batch dimension
becomes one Scan whose step is the step function vectorised (``vectorize_graph`` of the
inner graph), not a loop over the batch of loops: each step works on a whole batch at
once. The time axis stays the loop's axis, so a batched sequence ``(B, T, ...)`` is fed as
``(T, B, ...)``, a batched initial value ``(B, taps, ...)`` as ``(taps, B, ...)``, and the
outputs come back with the batch first again, ``(B, T, ...)``.

A recurrent state is batched when its initial value is, or when its step reads anything
batched (found by iterating to a fixed point: a state made batched can make others so); a
batched state with an unbatched initial value starts from that value repeated over the
batch. Outputs that depend on nothing batched stay unbatched. The rule declines (and
``vectorize_graph`` falls back to its generic per-row loop) for a batched number of steps,
an ``until`` condition that depends on batched values (each row would stop at another
step), and loops carrying values that are not tensors (random generators).
"""

from __future__ import annotations

from arignote.graph.basic import Apply, Variable
from arignote.graph.replace import batch_graph, register_batch_rule
from arignote.graph.traversal import io_toposort
from arignote.scan.op import Scan
from arignote.tensor.alloc import broadcast_batch
from arignote.tensor.shape import batch_length
from arignote.tensor.type import TensorType

__all__: list[str] = []


def _swap01(v: Variable) -> Variable:
    """``v`` with its first two dimensions exchanged (batch and time)."""
    return v.dimshuffle(1, 0, *range(2, v.type.ndim))


def _depends(inputs: list[Variable], outputs: list[Variable], marked: set[Variable]) -> set[Variable]:
    """The variables between ``inputs`` and ``outputs`` that depend on a ``marked`` one."""
    reached = set(marked)
    for node in io_toposort(inputs, outputs):
        if any(i in reached for i in node.inputs):
            reached.update(node.outputs)
    return reached


@register_batch_rule(Scan)
def _batch_scan(op: Scan, node: Apply, args: list, batched: list) -> list[tuple[Variable, bool]] | None:
    info = op.info
    ins, outs = list(op.inner_inputs), list(op.inner_outputs)
    if batched[0] or not all(isinstance(v.type, TensorType) for v in (*ins, *outs)):
        return None
    n_steps, seqs, inits, nons = op.split_outer(args)
    a, b = 1 + info.n_seqs, 1 + info.n_seqs + info.n_rec
    seq_b, init_b, non_b = batched[1:a], batched[a:b], batched[b:]
    seq_sl, rec_sl, non_sl = info.inner_slices()
    marked: set[Variable] = set()
    for i, sl in enumerate(seq_sl):
        if seq_b[i]:
            marked.update(ins[sl])
    for m, k in enumerate(range(non_sl.start, non_sl.stop)):
        if non_b[m]:
            marked.add(ins[k])
    rec_b = list(init_b)
    while True:  # a state is batched when its step reads a batched value
        for j, sl in enumerate(rec_sl):
            if rec_b[j]:
                marked.update(ins[sl])
        reached = _depends(ins, outs, marked)
        grown = [rec_b[j] or outs[j] in reached for j in range(info.n_rec)]
        if grown == rec_b:
            break
        rec_b = grown
    if info.as_while and outs[-1] in reached:
        return None  # each row would stop at its own step: not one loop
    n = batch_length(next(x for x, f in zip(args, batched) if f))
    # the step, vectorised over its batched inputs
    new_ins = [
        TensorType(v.type.dtype, (None, *v.type.shape))(name=v.name) if v in marked else v for v in ins
    ]
    stepped = batch_graph(outs, {v: w for v, w in zip(ins, new_ins) if v is not w})
    new_outs = list(outs)
    out_b = [False] * info.n_outer_outputs
    for k in range(info.n_outer_outputs):
        if k < info.n_rec and rec_b[k]:
            # a state batched by its initial value alone: its step's value repeated
            new_outs[k] = (
                stepped[k]
                if stepped[k] is not None
                else broadcast_batch(outs[k], batch_length(new_ins[rec_sl[k].start]))
            )
            out_b[k] = True
        elif k >= info.n_rec and stepped[k] is not None:
            new_outs[k] = stepped[k]
            out_b[k] = True
    # the outer inputs, time first
    new_seqs = [_swap01(s) if f else s for s, f in zip(seqs, seq_b)]
    new_inits = []
    for init, f, want in zip(inits, init_b, rec_b):
        if want and not f:
            init = broadcast_batch(init, n)
        new_inits.append(_swap01(init) if want else init)
    new_op = Scan(
        new_ins,
        new_outs,
        info,
        mode=op.mode,
        name=op.name,
        truncate_gradient=op.truncate_gradient,
        profile=op.profile,
    )
    results = new_op(n_steps, *new_seqs, *new_inits, *nons, return_list=True)
    return [(_swap01(r) if f else r, f) for r, f in zip(results, out_b)]
