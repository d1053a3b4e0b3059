"""``scan``: loops in a symbolic graph (recurrences, maps, reductions).

``scan(fn, sequences, outputs_info, non_sequences, n_steps)`` calls ``fn`` once, on
placeholders, to learn one step of the loop, and returns the outputs of a
:class:`~arignote.scan.op.Scan` node that runs that step ``n`` times, and the updates of
shared variables the steps make.

>>> import numpy as np
>>> import arignote
>>> import arignote.tensor as pt
>>> x = pt.dvector("x")
>>> total, updates = arignote.scan(lambda v, acc: acc + v, sequences=[x], outputs_info=[pt.constant(0.0, dtype="float64")])
>>> arignote.function([x], total)([1.0, 2.0, 3.0]).tolist()
[1.0, 3.0, 6.0]
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from arignote.graph.basic import Constant, Variable
from arignote.graph.replace import clone_replace
from arignote.graph.shared import SharedVariable
from arignote.graph.traversal import graph_inputs
from arignote.scan.op import Scan
from arignote.scan.utils import ScanInfo, until
from arignote.tensor.conversion import as_tensor_variable
from arignote.tensor.shape import shape_tuple
from arignote.tensor.type import TensorType
from arignote.tensor.ufuncs import cast

__all__ = ["scan"]


def _fn_name(fn: Callable) -> str:
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)
    code = getattr(fn, "__code__", None)
    if code is not None:
        return f"{name} ({code.co_filename}:{code.co_firstlineno})"
    return str(name)


def _as_list(x: Any) -> list:
    if x is None:
        return []
    if isinstance(x, (list, tuple)):
        return list(x)
    return [x]


def _as_var(x: Any, what: str) -> Variable:
    if isinstance(x, Variable):
        return x
    try:
        return as_tensor_variable(x)
    except (TypeError, ValueError) as err:
        raise TypeError(
            f"scan: {what} must be a Variable or an array, got {type(x).__name__} {x!r}: {err}"
        ) from None


def _check_taps(taps: Any, what: str) -> tuple[int, ...]:
    if isinstance(taps, (int, np.integer)):
        taps = [taps]
    if not isinstance(taps, (list, tuple)) or not taps:
        raise ValueError(f"scan: the taps of {what} must be a non-empty list of ints, got {taps!r}")
    for t in taps:
        if isinstance(t, bool) or not isinstance(t, (int, np.integer)):
            raise ValueError(f"scan: the taps of {what} must be ints, got {taps!r}")
    return tuple(int(t) for t in taps)


def _drop_first(t: Any) -> TensorType:
    return TensorType(t.dtype, t.shape[1:])


@dataclass
class _Rec:
    """A recurrent output: its initial value (rows of past values) and taps."""

    index: int  # its position among the step function's outputs
    init: Variable  # the rows, first row = earliest tap
    taps: tuple[int, ...]
    inner_type: Any
    given: Variable  # what the user gave (for messages)


def _parse_sequences(sequences: Any, go_backwards: bool) -> list[tuple[Variable, tuple[int, ...]]]:
    result = []
    for k, s in enumerate(_as_list(sequences)):
        if isinstance(s, dict):
            if "input" not in s:
                raise ValueError(f"scan: sequences[{k}] is a dict without 'input': {s!r}")
            var, taps = s["input"], s.get("taps", [0])
            taps = [0] if taps is None else taps
        else:
            var, taps = s, [0]
        var = _as_var(var, f"sequences[{k}]")
        if not isinstance(var.type, TensorType) or var.type.ndim < 1:
            raise TypeError(
                f"scan: sequences[{k}] ({var}, Type {var.type}) must be a tensor with at least one "
                "dimension (the loop runs over its first one)"
            )
        if go_backwards:
            var = var[::-1]
        result.append((var, _check_taps(taps, f"sequences[{k}]")))
    return result


def _parse_outputs_info(outputs_info: Any) -> list[_Rec | None]:
    specs: list[_Rec | None] = []
    for k, entry in enumerate(_as_list(outputs_info)):
        if entry is None:
            specs.append(None)
            continue
        if isinstance(entry, dict):
            init = entry.get("initial")
            taps = entry.get("taps", [-1])
            if init is None:
                if entry.get("taps") is not None:
                    raise ValueError(f"scan: outputs_info[{k}] has taps {entry['taps']} but no initial value")
                specs.append(None)
                continue
        else:
            init, taps = entry, [-1]
        taps = _check_taps([-1] if taps is None else taps, f"outputs_info[{k}]")
        if any(t >= 0 for t in taps):
            raise ValueError(
                f"scan: the taps of outputs_info[{k}] must be negative (steps back), got {list(taps)}"
            )
        given = init if isinstance(init, Variable) else _as_var(init, f"outputs_info[{k}]")
        L = -min(taps)
        if not isinstance(given.type, TensorType):
            if taps != (-1,):
                raise ValueError(
                    f"scan: outputs_info[{k}] ({given}, Type {given.type}) is not a tensor: only taps [-1] are possible"
                )
            specs.append(_Rec(k, given, taps, given.type, given))
            continue
        if taps == (-1,) and "taps" not in (entry if isinstance(entry, dict) else {}):
            inner = given.type
            rows = given[None]
        else:
            if given.type.ndim < 1:
                raise ValueError(
                    f"scan: the initial value of outputs_info[{k}] with taps {list(taps)} needs a first "
                    f"dimension of at least {L} rows (one per step back), got {given} of Type {given.type}"
                )
            inner = _drop_first(given.type)
            rows = given[:L]
        specs.append(_Rec(k, rows, taps, inner, given))
    return specs


def _split_returned(result: Any, fname: str) -> tuple[list, dict, Variable | None]:
    """The outputs, updates and stop condition a step function returned."""
    outputs: list = []
    updates: dict = {}
    cond = None
    parts = list(result) if isinstance(result, tuple) else [result]
    if isinstance(result, tuple) and not any(isinstance(p, (dict, until)) for p in parts):
        return list(result), {}, None
    for p in parts:
        if isinstance(p, until):
            cond = p.condition
        elif isinstance(p, Mapping):
            updates.update(p)
        elif isinstance(p, (list, tuple)):
            sub_outs, sub_updates, sub_cond = _split_returned(tuple(p), fname)
            outputs.extend(sub_outs)
            updates.update(sub_updates)
            cond = sub_cond if sub_cond is not None else cond
        elif p is not None:
            outputs.append(p)
    return outputs, updates, cond


def _check_output(k: int, out: Any, fname: str) -> Variable:
    if isinstance(out, Variable):
        return out
    try:
        return as_tensor_variable(out)
    except (TypeError, ValueError):
        raise TypeError(
            f"scan: output {k} of the step function {fname} is {type(out).__name__} {out!r}, not a "
            "Variable; a step function returns Variables (and optionally an updates dict and an until)"
        ) from None


def _type_mismatch(k: int, out: Variable, rec: _Rec, fname: str) -> str | None:
    it, ot = rec.inner_type, out.type
    if not isinstance(it, TensorType):
        if ot != it and type(ot) is not type(it):
            return f"has Type {ot} but its initial value {rec.given} has Type {it}"
        return None
    if not isinstance(ot, TensorType):
        return f"is {out} of Type {ot}, not a tensor like its initial value {rec.given} (Type {it})"
    problems = []
    if ot.dtype != it.dtype:
        problems.append(
            f"has dtype {ot.dtype} where the initial value has dtype {it.dtype} (fix: pt.cast(output, "
            f"'{it.dtype}') in the step function, or give an initial value of dtype {ot.dtype})"
        )
    if ot.ndim != it.ndim:
        rows = "" if rec.taps == (-1,) else f" (after its first dimension of {-min(rec.taps)} rows)"
        problems.append(
            f"has {ot.ndim} dimension(s) where the initial value{rows} has {it.ndim} (a recurrent output keeps "
            "its shape: fix the step function, or reshape the initial value)"
        )
    else:
        for d, (a, b) in enumerate(zip(ot.shape, it.shape)):
            if a is not None and b is not None and a != b:
                problems.append(
                    f"has static length {a} in dimension {d} where the initial value has {b} (fix the step "
                    "function, or pt.specify_shape the initial value)"
                )
    return "; ".join(problems) or None


def scan(
    fn: Callable,
    sequences: Any = None,
    outputs_info: Any = None,
    non_sequences: Any = None,
    n_steps: Any = None,
    truncate_gradient: int = -1,
    go_backwards: bool = False,
    mode: Any = None,
    name: str | None = None,
    profile: Any = False,
    allow_gc: bool | None = None,
    strict: bool = False,
    return_list: bool = False,
    return_updates: bool = True,
) -> Any:
    """Loop ``fn`` over ``sequences`` and/or ``n_steps`` steps, feeding back the outputs
    named in ``outputs_info``.

    ``fn`` is called once with, in this order: one value per sequence tap (``seq[t]``, or
    ``seq[t + tap]`` for ``dict(input=seq, taps=[...])``), one value per tap of each
    recurrent output (``outputs_info`` entry ``x0`` means taps ``[-1]`` with initial
    value ``x0``; ``dict(initial=rows, taps=[-2, -1])`` reads two steps back, ``rows[0]``
    being step ``-2``; ``None`` is an output that is not fed back), then the
    non-sequences. It returns its outputs (one per ``outputs_info`` entry when given),
    optionally with a dict of shared-variable updates and an :class:`~arignote.scan.utils.until`
    condition. Shared variables and other outer Variables it uses are added as
    non-sequences (with ``strict=True``, an unlisted shared variable is an error); random
    draws advance their generator from step to step.

    The number of steps is ``n_steps`` (at most; negative or zero: no step), or the
    length of the shortest sequence (less its taps' span), whichever is smaller.
    ``go_backwards`` runs over the sequences from their end. ``truncate_gradient``: how
    many steps back the gradient goes (-1: all).

    Returns ``(outputs, updates)``: each output has one row per step (a single Variable
    when there is one output, unless ``return_list``), ``updates`` maps each shared
    variable the steps update to its value after the last step. With
    ``return_updates=False`` only the outputs are returned.
    """
    fname = _fn_name(fn)
    seqs = _parse_sequences(sequences, go_backwards)
    recs_spec = _parse_outputs_info(outputs_info)
    non_seqs = [_as_var(v, f"non_sequences[{k}]") for k, v in enumerate(_as_list(non_sequences))]
    if n_steps is None and not seqs:
        raise ValueError(
            f"scan({fname}): give sequences or n_steps (the loop needs to know how many steps to run)"
        )

    # placeholders for one step
    args: list[Variable] = []
    seq_ph: list[list[Variable]] = []
    for k, (var, taps) in enumerate(seqs):
        t = _drop_first(var.type)
        phs = [
            t(name=f"{var.name or f'seq{k}'}[t{tap:+d}]" if tap else f"{var.name or f'seq{k}'}[t]")
            for tap in taps
        ]
        seq_ph.append(phs)
        args.extend(phs)
    rec_ph: list[list[Variable]] = []
    for rec in recs_spec:
        if rec is None:
            continue
        base = rec.given.name or f"out{rec.index}"
        phs = [rec.inner_type(name=f"{base}[t{tap:+d}]") for tap in rec.taps]
        rec_ph.append(phs)
        args.extend(phs)
    non_ph: list[Variable] = []
    for v in non_seqs:
        if isinstance(v, (Constant, SharedVariable)):
            non_ph.append(v)
        else:
            non_ph.append(v.type(name=v.name))
    args.extend(non_ph)

    result = fn(*args)
    outputs, updates, cond = _split_returned(result, fname)
    outputs = [_check_output(k, o, fname) for k, o in enumerate(outputs)]
    if recs_spec and len(outputs) != len(recs_spec):
        raise ValueError(
            f"scan: the step function {fname} returned {len(outputs)} output(s), but outputs_info has "
            f"{len(recs_spec)} entr{'y' if len(recs_spec) == 1 else 'ies'}; give one outputs_info entry per "
            "output (None for an output that is not fed back)"
        )
    if not recs_spec:
        recs_spec = [None] * len(outputs)
    recs = [r for r in recs_spec if r is not None]
    for rec in recs:
        problem = _type_mismatch(rec.index, outputs[rec.index], rec, fname)
        if problem:
            raise TypeError(f"scan: output {rec.index} of the step function {fname} {problem}")
    for k, o in enumerate(outputs):
        if recs_spec[k] is None and not isinstance(o.type, TensorType):
            raise TypeError(
                f"scan: output {k} of the step function {fname} ({o}, Type {o.type}) is not a tensor; only "
                "a tensor can be stacked over steps (give it an initial value in outputs_info to carry it)"
            )

    # shared variables: updated ones become recurrent states, the others non-sequences
    updates = dict(updates)
    for key in updates:
        if not isinstance(key, SharedVariable):
            raise TypeError(
                f"scan: the step function {fname} returned an update for {key!r}, which is not a shared variable"
            )
    roots_of = [*outputs, *updates.values(), *([cond] if cond is not None else [])]
    placeholders = set(args) - set(non_ph) | {
        p for p in non_ph if not isinstance(p, (Constant, SharedVariable))
    }
    free = _free_variables(roots_of, placeholders)
    explicit_shared = {v for v in non_seqs if isinstance(v, SharedVariable)}
    for v in free:
        if (
            isinstance(v, SharedVariable)
            and v not in updates
            and v.default_update is not None
            and v not in explicit_shared
        ):
            updates[v] = v.default_update
    if updates:
        roots_of = [*outputs, *updates.values(), *([cond] if cond is not None else [])]
        free = _free_variables(roots_of, placeholders)
    free = list(dict.fromkeys(free))
    if strict:
        hidden = [
            v for v in free if isinstance(v, SharedVariable) and v not in explicit_shared and v not in updates
        ]
        if hidden:
            raise ValueError(
                f"scan(strict=True): the step function {fname} uses the shared variable(s) "
                f"{', '.join(str(v) for v in hidden)} without their being passed in non_sequences; pass them "
                "explicitly, or use strict=False"
            )
    upd_keys = list(updates)
    state_ph = []
    replace: dict = {}
    for s in upd_keys:
        ph = s.type(name=s.name)
        state_ph.append(ph)
        replace[s] = ph
        value = updates[s]
        if not isinstance(value, Variable):
            value = as_tensor_variable(value)
        if (
            isinstance(s.type, TensorType)
            and isinstance(value.type, TensorType)
            and (value.type.dtype != s.type.dtype or value.type.ndim != s.type.ndim)
        ):
            raise TypeError(
                f"scan: the update of shared variable {s} (Type {s.type}) in the step function {fname} has "
                f"Type {value.type}; cast it (pt.cast(value, '{s.type.dtype}')) or fix its dimensions"
            )
        updates[s] = value
    implicit = [v for v in free if v not in replace and v not in explicit_shared]
    explicit_ph = []
    explicit_outer = []
    for v, ph in zip(non_seqs, non_ph):
        if isinstance(v, SharedVariable):
            if v in replace:  # updated: read as the state
                continue
            new = v.type(name=v.name)
            replace[v] = new
            explicit_ph.append(new)
        elif isinstance(v, Constant):
            continue
        else:
            explicit_ph.append(ph)
        explicit_outer.append(v)
    implicit_ph = []
    for v in implicit:
        new = v.type(name=v.name)
        replace[v] = new
        implicit_ph.append(new)

    inner_outs = [outputs[r.index] for r in recs] + [updates[s] for s in upd_keys]
    inner_outs += [o for k, o in enumerate(outputs) if recs_spec[k] is None]
    if cond is not None:
        inner_outs.append(cond)
    inner_outs = clone_replace(inner_outs, replace) if replace else list(inner_outs)
    inner_outs = [_fit_inner(o, rec) for o, rec in zip(inner_outs, recs)] + inner_outs[len(recs) :]
    for k, s in enumerate(upd_keys):
        i = len(recs) + k
        if isinstance(s.type, TensorType) and inner_outs[i].type != s.type:
            inner_outs[i] = s.type.filter_variable(inner_outs[i], allow_convert=True)

    inner_ins = [p for phs in seq_ph for p in phs] + [p for phs in rec_ph for p in phs] + state_ph
    inner_ins += explicit_ph + implicit_ph
    info = ScanInfo(
        seq_taps=tuple(t for _, t in seqs),
        rec_taps=tuple(r.taps for r in recs) + tuple((-1,) for _ in upd_keys),
        n_nit_sot=sum(1 for r in recs_spec if r is None),
        n_non_seqs=len(explicit_ph) + len(implicit_ph),
        as_while=cond is not None,
    )
    op = Scan(
        inner_ins,
        inner_outs,
        info,
        mode=mode,
        name=name,
        truncate_gradient=truncate_gradient,
        profile=profile,
    )

    if n_steps is None:
        var, taps = seqs[0]
        _, span = info.seq_span(0)
        steps = shape_tuple(var)[0] - span
    else:
        steps = n_steps
    steps = _as_steps(steps)
    state_init = [s[None] if isinstance(s.type, TensorType) else s for s in upd_keys]
    outer = op(
        steps,
        *[v for v, _ in seqs],
        *[r.init for r in recs],
        *state_init,
        *explicit_outer,
        *implicit,
        return_list=True,
    )
    n_rec = len(recs)
    user_outs: list[Variable] = [None] * len(outputs)  # type: ignore[list-item]
    for j, rec in enumerate(recs):
        o = outer[j]
        user_outs[rec.index] = o[-min(rec.taps) :] if isinstance(o.type, TensorType) else o
    nit = iter(outer[n_rec + len(upd_keys) :])
    for k in range(len(outputs)):
        if recs_spec[k] is None:
            user_outs[k] = next(nit)
    new_updates = {}
    for k, s in enumerate(upd_keys):
        o = outer[n_rec + k]
        new_updates[s] = o[-1] if isinstance(s.type, TensorType) else o
    for o, k in zip(user_outs, range(len(user_outs))):
        if o.name is None and outputs[k].name:
            o.name = outputs[k].name
    ret = user_outs if (return_list or len(user_outs) != 1) else user_outs[0]
    if not return_updates:
        return ret
    return ret, new_updates


def _free_variables(roots: list, placeholders: set) -> list[Variable]:
    """The roots of the step's graph that are not its arguments nor constants."""
    return [
        v
        for v in graph_inputs(roots, blockers=placeholders)
        if v not in placeholders and not isinstance(v, Constant)
    ]


def _fit_inner(o: Variable, rec: _Rec) -> Variable:
    """A recurrent output with the static lengths of its initial value where it has
    none (the Types then agree exactly)."""
    it, ot = rec.inner_type, o.type
    if isinstance(it, TensorType) and isinstance(ot, TensorType) and ot != it:
        return it.filter_variable(o, allow_convert=True) if it.is_super(ot) or _narrowable(ot, it) else o
    return o


def _narrowable(ot: TensorType, it: TensorType) -> bool:
    return ot.dtype == it.dtype and ot.ndim == it.ndim


def _as_steps(steps: Any) -> Variable:
    if isinstance(steps, (int, np.integer)) and not isinstance(steps, bool):
        return as_tensor_variable(np.int64(steps))
    var = as_tensor_variable(steps)
    if var.type.ndim != 0 or np.dtype(var.type.dtype).kind not in "iu":
        raise TypeError(f"scan: n_steps must be an integer scalar, got {steps!r} (Type {var.type})")
    return cast(var, "int64") if var.type.dtype != "int64" else var
