"""The loop of a :class:`~arignote.scan.op.Scan` node, as one generated Python function.

Each Scan Op gets a function written for its layout (which inputs are read at which tap,
which outputs are kept whole or as a ring of last rows), one line per feed and per write,
like the tier-1 glue of a compiled graph: it takes the inner function's virtual machine,
the number of steps and the per-call arrays, and runs the steps. It is the one place a
compiled backend replaces to run the whole loop natively (:func:`loop_for` takes the plan;
``Scan.perform`` only allocates buffers and assembles the outputs).

What a step does: write into the inner function's input cells the sequence rows (views)
and the recurrent values its taps read (the previous step's output itself for tap -1, a
view of the buffer for deeper taps); copy the inputs an inner node overwrites; run the
virtual machine; copy each output into its row (checking its shape: a recurrent value or
a stacked output keeps one shape); stop after a step whose stop condition is true.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["LoopPlan", "StepError", "loop_for"]


@dataclass(frozen=True)
class LoopPlan:
    """The static layout of a loop. ``seq_feeds``: (input cell, sequence, row offset)
    per sequence tap; ``rec_feeds``: (input cell, buffer, tap) per recurrent tap;
    ``ring``: per buffer, whether it is a ring of the last rows (else one row per step);
    ``starts``: per buffer, the row of its first step; ``objects``: (input cell, output
    cell) of the recurrent values that are not tensors; ``writes``: (output cell, buffer);
    ``n_nit``: the last ``n_nit`` buffers are allocated at the first step; ``n_const``:
    non-sequences written again each step (an inner node overwrites them);
    ``protect``: whether some input must be copied before each step; ``cond``: a stop
    condition; ``fresh``: the output cells that a node of the inner function fills at
    every step (emptied once read, so that no node writes into an array the loop holds)."""

    seq_feeds: tuple[tuple[int, int, int], ...]
    rec_feeds: tuple[tuple[int, int, int], ...]
    ring: tuple[bool, ...]
    starts: tuple[int, ...]
    objects: tuple[tuple[int, int], ...]
    writes: tuple[tuple[int, int], ...]
    n_nit: int
    n_const: int
    protect: bool
    cond: bool
    fresh: frozenset[int] = frozenset()


class StepError(Exception):
    """An error inside the loop, with the step it happened at."""

    def __init__(self, step: int, err: BaseException):
        super().__init__(str(err))
        self.step = step
        self.err = err


def _shape_error(b: int, got: tuple, expected: tuple, first: bool) -> ValueError:
    where = "its first step" if first else "its initial value"
    return ValueError(
        f"output {b} of the step function has shape {got} at this step, but {where} gave shape "
        f"{expected}; a scan output keeps one shape for all steps"
    )


_CACHE: dict[LoopPlan, Any] = {}


def loop_for(plan: LoopPlan) -> Any:
    """The loop function for ``plan`` (generated once per layout).

    It is called as ``loop(vm, n, C, O, S, B, R, SH, consts, protect, t0)`` with ``C``/``O``
    the inner function's input and output cells, ``S`` the sequences, ``B`` the buffers
    (``None`` for a stacked output not allocated yet), ``R`` the rows of each ring,
    ``SH`` the shape of each buffer's rows (``None`` until known), ``consts`` the
    (cell, value) pairs to write again each step, ``protect`` the input cells to copy
    before each step and ``t0`` the first step (0, or where the loop on scalars of
    :mod:`arignote.scan.scalar_loop` handed over); it returns the number of steps run.
    """
    fn = _CACHE.get(plan)
    if fn is None:
        fn = _CACHE[plan] = _build(plan)
    return fn


def _copy_value(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return value.copy()
    if hasattr(value, "bit_generator"):  # a NumPy Generator: a new one in the same state
        new = np.random.Generator(type(value.bit_generator)())
        new.bit_generator.state = value.bit_generator.state
        return new
    return value


def _row(b: int, expr: str, plan: LoopPlan) -> str:
    return f"(({expr}) % R{b})" if plan.ring[b] else expr


def _build(plan: LoopPlan) -> Any:
    n_bufs = len(plan.ring)
    nit_first = n_bufs - plan.n_nit
    lines = ["def loop(vm, n, C, O, S, B, R, SH, consts, protect, t0=0):"]
    add = lines.append
    cells = sorted(
        {c for c, _, _ in plan.seq_feeds} | {c for c, _, _ in plan.rec_feeds} | {c for c, _ in plan.objects}
    )
    for c in cells:
        add(f"    c{c} = C[{c}]")
    outs = sorted({o for o, _ in plan.writes} | {o for _, o in plan.objects})
    for o in outs:
        add(f"    o{o} = O[{o}]")
    if plan.cond:
        add("    cond = O[-1]")
    for s in sorted({s for _, s, _ in plan.seq_feeds}):
        add(f"    s{s} = S[{s}]")
    for b in range(n_bufs):
        add(f"    b{b} = B[{b}]; sh{b} = SH[{b}]; R{b} = R[{b}]")
    # the previous value of each buffer read at tap -1: an array of its own
    prev = sorted({b for _, b, tap in plan.rec_feeds if tap == -1})
    for b in prev:
        add(f"    p{b} = b{b}[{_row(b, f't0 + {plan.starts[b] - 1}', plan)}, ...].copy()")
    for k, (ci, _) in enumerate(plan.objects):
        add(f"    h{k} = C[{ci}][0]")
    add("    t = t0")
    add("    try:")
    add("        for t in range(t0, n):")
    body = []
    for c, s, off in plan.seq_feeds:
        body.append(f"c{c}[0] = s{s}[t + {off}, ...]")
    for c, b, tap in plan.rec_feeds:
        if tap == -1:
            body.append(f"c{c}[0] = p{b}")
        else:
            body.append(f"c{c}[0] = b{b}[{_row(b, f't + {plan.starts[b] + tap}', plan)}, ...]")
    for k, (ci, _) in enumerate(plan.objects):
        body.append(f"c{ci}[0] = h{k}")
    if plan.n_const:
        body.append("for cell, value in consts: cell[0] = value")
    if plan.protect:
        body.append("for cell in protect: cell[0] = copy(cell[0])")
    body.append("vm()")
    for o, b in plan.writes:
        body.append(f"v = o{o}[0]; o{o}[0] = None" if o in plan.fresh else f"v = o{o}[0]")
        if b >= nit_first:
            body.append(f"if b{b} is None:")
            body.append(f"    v = asarray(v); sh{b} = v.shape")
            body.append(f"    b{b} = B[{b}] = empty(((R{b} or n), *sh{b}), v.dtype)")
            body.append(f"elif v.shape != sh{b}: raise shape_error({b}, v.shape, sh{b}, True)")
        else:
            body.append(f"if v.shape != sh{b}: raise shape_error({b}, v.shape, sh{b}, False)")
        row = _row(b, f"t + {plan.starts[b]}", plan)
        body.append(f"r = {row}; b{b}[r] = v")
        if b in prev:
            # the next step may overwrite it (an owned input): never a view of the buffer
            body.append(f"p{b} = v if v.base is None and type(v) is ndarray else v.copy()")
    for k, (_, o) in enumerate(plan.objects):
        body.append(f"h{k} = o{o}[0]")
    if plan.cond:
        body.append("if cond[0]:")
        body.append("    n = t + 1")
        body.append("    break")
    lines.extend("            " + line for line in body)
    add("    except Exception as err:")
    add("        raise StepError(t, err) from err")
    for k, (ci, _) in enumerate(plan.objects):
        add(f"    C[{ci}][0] = h{k}")
    add("    return n")
    source = "\n".join(lines) + "\n"
    namespace: dict[str, Any] = {
        "StepError": StepError,
        "shape_error": _shape_error,
        "copy": _copy_value,
        "asarray": np.asarray,
        "empty": np.empty,
        "ndarray": np.ndarray,
    }
    exec(compile(source, "<arignote scan loop>", "exec"), namespace)
    loop = namespace["loop"]
    loop.source = source  # type: ignore[attr-defined]
    return loop
