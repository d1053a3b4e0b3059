"""The Numba function of a :class:`~arignote.scan.op.Scan` node: the whole loop compiled.

The step is the inner graph's own Numba function (its rewritten graph, the one the Python
loop runs, written by :func:`~arignote.link.numba.graph.inner_function`), and the loop runs
over buffers allocated once per call, as the Python loop of :mod:`arignote.scan.loop` does:
each step reads its sequence rows and recurrent taps, calls the step, and writes each
output into its row (a row whose shape differs from the initial value's, or from the first
step's, raises). The results are the Python loop's, layout included:

* a stop condition (``until``): the loop stops after the first step whose condition is
  true, and each output keeps the rows of the steps run (the buffers are sized for
  ``n_steps``, as the Python loop's are);
* an output kept as its last rows (``xs[-1]`` after the rewrite that keeps only the last
  ``k`` steps): a ring of rows, written modulo its length, and returned oldest row first.
  A recurrent ring here has one row more than its taps and ``k`` need, so that the row a
  step writes is never one it read (a step output may be a view of its input).

Loops that carry a random generator stay on the per-node tiers (the Python loop). NumPy's
streams are not the obstacle: Numba's ``Generator`` methods give NumPy's values for the same
state (checked for ``normal``, ``gamma`` and float32 ``standard_normal``). But the random
Ops have no Numba implementation in this backend, and one would need more than the draw:
an arignote random Op leaves its input generator as it was and returns a new one, while a
Numba function draws from the caller's bit generator in place, so each call would have to
copy the generator on the Python side first, and its result would be the copy. Until that
exists such a loop raises ``NoNumbaImpl`` (an inner value that is not a tensor), which keeps
a seeded stream's values exactly the Python loop's.

A loop built with ``profile=True`` stays on the Python loop too: it is what records the
calls, steps and time per step that the loop's profile (``Scan.loop_summary``) reports.

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


def _copy_row(lines: list[str], indent: str, dst: str, row: str, src: str, ndim: int) -> None:
    """Lines copying the array ``src`` (of rank ``ndim``; a scalar when 0) into row ``row``
    of ``dst``, element by element: an array assigned to a slice would make Numba compile
    its shape-mismatch message (string formatting: seconds of compile per process), and
    the shapes are checked before."""
    idx = [f"i{d}" for d in range(ndim)]
    for d, i in enumerate(idx):
        lines.append(f"{indent}{'    ' * d}for {i} in range({src}.shape[{d}]):")
    at = ", ".join(idx)
    lines.append(
        f"{indent}{'    ' * ndim}{dst}[{', '.join([row, *idx])}] = {src}[{at}]"
        if ndim
        else f"{indent}{dst}[{row}] = {src}"
    )


def _last_rows(lines: list[str], out: str, buf: str, rows: str, total: str, keep: int, ndim: int) -> None:
    """Lines setting ``out`` to the last ``min(keep, total)`` of ``total`` positions written
    into the ring ``buf`` of ``rows`` rows (rank ``ndim``), oldest first (what the Python
    loop returns)."""
    lines.append(f"    kk = min({keep}, {total})")
    lines.append(f"    {out} = np.empty((kk,) + {buf}.shape[1:], {buf}.dtype)")
    lines.append("    for i in range(kk):")
    lines.append(f"        last_{out} = {buf}[({total} - kk + i) % {rows}]")
    _copy_row(lines, "        ", out, "i", f"last_{out}", ndim - 1)


@numba_funcify.register(Scan)
def _scan(op: Scan, node: Apply) -> NumbaImpl:
    info = op.info
    check_types(node, str(op))
    if op.profile:
        raise NoNumbaImpl(f"{op}: profiled (profile=True): the Python loop records its steps")
    inner = op.fn.maker.fgraph  # (the step as the Python loop runs it: rewritten)
    if any(not isinstance(v.type, TensorType) for v in [*inner.inputs, *inner.outputs]):
        raise NoNumbaImpl(
            f"{op}: an inner value that is not a tensor (a random generator: see the module's doc)"
        )
    step = inner_function(inner)
    n_seq, n_rec, n_non, n_nit = info.n_seqs, info.n_rec, info.n_non_seqs, info.n_nit_sot
    keep = info.keep
    seqs = [f"s{i}" for i in range(n_seq)]
    inits = [f"r{j}" for j in range(n_rec)]
    nons = [f"q{m}" for m in range(n_non)]
    ks = [f"k{c}" for c in range(len(step.consts))]
    lines = [f"def impl({', '.join(['n_steps', *seqs, *inits, *nons, *ks])}):", "    n = n_steps"]
    for i, s in enumerate(seqs):
        _, span = info.seq_span(i)
        lines.append(f"    n = min(n, {s}.shape[0] - {span})")
    lines.append("    n = max(n, 0)")
    # rows of each buffer (an expression) and the row step t writes (a function of t)
    rows: list[str] = []
    for j, r in enumerate(inits):
        L = info.rec_len(j)
        t = node.outputs[j].type
        rows.append(str(max(keep[j], L) + 1) if keep[j] else f"({L} + n)")
        lines.append(f"    if {r}.shape[0] != {L}:")
        lines.append(
            f"        raise ValueError('Scan: the initial value of recurrent output {j} has not {L} rows')"
        )
        rest = "".join(f", {r}.shape[{d}]" for d in range(1, t.ndim))
        lines.append(f"    b{j} = np.empty(({rows[j]}{rest}), {nb_dtype(t.dtype)})")
        lines.append(f"    for l in range({L}):")
        lines.append(f"        init{j} = {r}[l]")
        _copy_row(lines, "        ", f"b{j}", "l", f"init{j}", t.ndim - 1)
    late = []  # stacked outputs whose rows' shape is the first step's: allocated then
    for m in range(n_nit):
        o = n_rec + m
        t = node.outputs[o].type
        rows.append(f"min({keep[o]}, n)" if keep[o] else "n")
        if keep[o]:
            lines.append(f"    R{o} = {rows[o]}")
            rows[o] = f"R{o}"
        if t.ndim == 1:
            lines.append(f"    b{o} = np.empty({rows[o]}, {nb_dtype(t.dtype)})")
        else:
            zeros = ", ".join(str(d or 0) for d in t.shape[1:])
            lines.append(f"    b{o} = np.empty((0, {zeros}), {nb_dtype(t.dtype)})")
            late.append(o)

    def row(b: int, at: str) -> str:
        return f"({at}) % {rows[b]}" if keep[b] else at

    # the step's array arguments typed C-contiguous where they are (a sequence reversed for
    # a gradient is a view of any layout, but its rows are contiguous): Numba then knows the
    # layout, and the step's loops vectorise (np.ascontiguousarray checks at run time and
    # copies only a value that is not contiguous: a transposed weight, once per call)
    args = []
    for i in range(n_seq):
        off, _ = info.seq_span(i)
        reads = [f"s{i}[t + {tap + off}]" for tap in info.seq_taps[i]]
        args += [f"np.ascontiguousarray({r})" for r in reads] if node.inputs[1 + i].type.ndim > 1 else reads
    for j in range(n_rec):
        L = info.rec_len(j)
        args += [f"b{j}[{row(j, f't + {L + tap}')}]" for tap in info.rec_taps[j]]
    for m, q in enumerate(nons):
        if node.inputs[1 + n_seq + n_rec + m].type.ndim > 0:
            lines.append(f"    {q} = np.ascontiguousarray({q})")
    args += nons + ks
    outs = [f"v{k}" for k in range(n_rec + n_nit)] + (["stop"] if info.as_while else [])
    lines.append("    done = n")
    lines.append("    for t in range(n):")
    lines.append(f"        {', '.join(outs)}, = {step.name}({', '.join(args)})")
    for j in range(n_rec):
        if node.outputs[j].type.ndim > 1:
            lines.append(f"        if v{j}.shape != b{j}.shape[1:]:")
            lines.append(f"            raise ValueError('Scan: output {j} changed shape')")
        lines.append(f"        w{j} = {row(j, f't + {info.rec_len(j)}')}")
        _copy_row(lines, "        ", f"b{j}", f"w{j}", f"v{j}", node.outputs[j].type.ndim - 1)
    for o in range(n_rec, n_rec + n_nit):
        if o in late:
            lines.append("        if t == 0:")
            lines.append(f"            b{o} = np.empty(({rows[o]},) + v{o}.shape, b{o}.dtype)")
            lines.append(f"        elif v{o}.shape != b{o}.shape[1:]:")
            lines.append(f"            raise ValueError('Scan: output {o} changed shape')")
        lines.append(f"        w{o} = {row(o, 't')}")
        _copy_row(lines, "        ", f"b{o}", f"w{o}", f"v{o}", node.outputs[o].type.ndim - 1)
    if info.as_while:
        lines.append("        if stop:")
        lines.append("            done = t + 1")
        lines.append("            break")
    unknown = [o for o in late if None in node.outputs[o].type.shape[1:]]
    if unknown:
        # no step ran: the rows' shape is a step's, which only shape inference says (the
        # reference Scan's row_shapes): the call goes back to tier 1
        lines.append("    if done == 0:")
        lines.append(
            f"        raise ValueError('Scan: no step ran, and the rows of output {unknown[0]} have unknown lengths')"
        )
    results = []
    for b in range(n_rec + n_nit):
        total = f"{info.rec_len(b)} + done" if b < n_rec else "done"
        if keep[b]:
            _last_rows(lines, f"y{b}", f"b{b}", rows[b], total, keep[b], node.outputs[b].type.ndim)
            results.append(f"y{b}")
        elif info.as_while:
            results.append(f"b{b}[:{total}]")
        else:
            results.append(f"b{b}")
    if len(results) == 1:  # (one output: the value, not a tuple)
        lines.append(f"    return {results[0]}")
    else:
        lines.append(f"    return {', '.join(results)}")
    return NumbaImpl("\n".join(lines) + "\n", step.consts, step.definitions)
