"""The Numba function of a :class:`~arignote.scan.op.Scan` node: the whole loop compiled.

The step is the inner graph's own Numba function (its rewritten graph, the one the Python
loop runs, written by :func:`~arignote.link.numba.graph.inner_function`), and the loop runs
over buffers allocated once per call, as the Python loop of :mod:`arignote.scan.loop` does:
each step reads its sequence rows and recurrent taps, calls the step, and writes each
output into its row (a row whose shape differs from the initial value's, or from the first
step's, raises). Loops the Python loop runs but this does not (a stop condition, a state
that is not a tensor such as a random generator, outputs kept as a ring of their last rows)
raise ``NoNumbaImpl``: their graph stays on the per-node tiers.

This module sits with the inner-graph Ops (it reads the Scan Op), above the link layer;
:mod:`arignote.link.numba.graph` imports it when it plans a graph.
"""

from __future__ import annotations

from arignote.graph.basic import Apply
from arignote.link.numba.dispatch.basic import NoNumbaImpl, NumbaImpl, check_types, nb_dtype, numba_funcify
from arignote.link.numba.graph import inner_function
from arignote.scan.op import Scan
from arignote.tensor.type import TensorType

__all__: list[str] = []


@numba_funcify.register(Scan)
def _scan(op: Scan, node: Apply) -> NumbaImpl:
    info = op.info
    if info.as_while:
        raise NoNumbaImpl(f"{op}: a loop with a stop condition")
    if any(info.keep):
        raise NoNumbaImpl(f"{op}: outputs kept as a ring of their last rows")
    check_types(node, str(op))
    inner = op.fn.maker.fgraph  # (the step as the Python loop runs it: rewritten)
    if any(not isinstance(v.type, TensorType) for v in [*inner.inputs, *inner.outputs]):
        raise NoNumbaImpl(f"{op}: an inner value that is not a tensor")
    step = inner_function(inner)
    n_seq, n_rec, n_non = info.n_seqs, info.n_rec, info.n_non_seqs
    seqs = [f"s{i}" for i in range(n_seq)]
    inits = [f"r{j}" for j in range(n_rec)]
    nons = [f"q{m}" for m in range(n_non)]
    ks = [f"k{c}" for c in range(len(step.consts))]
    lines = [f"def impl({', '.join(['n_steps', *seqs, *inits, *nons, *ks])}):", "    n = n_steps"]
    for i, s in enumerate(seqs):
        _, span = info.seq_span(i)
        lines.append(f"    n = min(n, {s}.shape[0] - {span})")
    lines.append("    n = max(n, 0)")
    bufs = []
    for j, r in enumerate(inits):
        L = info.rec_len(j)
        t = node.outputs[j].type
        lines.append(f"    if {r}.shape[0] != {L}:")
        lines.append(
            f"        raise ValueError('Scan: the initial value of recurrent output {j} has not {L} rows')"
        )
        rest = "".join(f", {r}.shape[{d}]" for d in range(1, t.ndim))
        lines.append(f"    b{j} = np.empty(({L} + n{rest}), {nb_dtype(t.dtype)})")
        lines.append(f"    b{j}[:{L}] = {r}")
        bufs.append(f"b{j}")
    nit = []
    for m in range(info.n_nit_sot):
        o = n_rec + m
        t = node.outputs[o].type
        if t.ndim == 1:
            lines.append(f"    b{o} = np.empty(n, {nb_dtype(t.dtype)})")
        else:  # (its rows' shape is the first step's: allocated then)
            zeros = ", ".join(str(d or 0) for d in t.shape[1:])
            lines.append(f"    b{o} = np.empty((0, {zeros}), {nb_dtype(t.dtype)})")
            nit.append(o)
        bufs.append(f"b{o}")
    args = []
    for i in range(n_seq):
        off, _ = info.seq_span(i)
        args += [f"s{i}[t + {tap + off}]" for tap in info.seq_taps[i]]
    for j in range(n_rec):
        L = info.rec_len(j)
        args += [f"b{j}[t + {L + tap}]" for tap in info.rec_taps[j]]
    args += nons + ks
    outs = [f"v{k}" for k in range(n_rec + info.n_nit_sot)]
    lines.append("    for t in range(n):")
    lines.append(f"        {', '.join(outs)}, = {step.name}({', '.join(args)})")
    for j in range(n_rec):
        if node.outputs[j].type.ndim > 1:
            lines.append(f"        if v{j}.shape != b{j}.shape[1:]:")
            lines.append(f"            raise ValueError('Scan: output {j} changed shape')")
        lines.append(f"        b{j}[t + {info.rec_len(j)}] = v{j}")
    for m in range(info.n_nit_sot):
        o = n_rec + m
        if o in nit:
            lines.append("        if t == 0:")
            lines.append(f"            b{o} = np.empty((n,) + v{o}.shape, b{o}.dtype)")
            lines.append(f"        elif v{o}.shape != b{o}.shape[1:]:")
            lines.append(f"            raise ValueError('Scan: output {o} changed shape')")
        lines.append(f"        b{o}[t] = v{o}")
    lines.append(f"    return {', '.join(bufs)}{',' if len(bufs) == 1 else ''}")
    if len(bufs) == 1:  # (one output: the value, not a tuple)
        lines[-1] = f"    return {bufs[0]}"
    return NumbaImpl("\n".join(lines) + "\n", step.consts, step.definitions)
