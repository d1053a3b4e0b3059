"""Small pieces of ``scan``: :class:`until` (the early-stop marker a step function returns)
and :class:`ScanInfo` (how the inputs and outputs of a :class:`~arignote.scan.op.Scan`
node are laid out)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from arignote.graph.basic import Variable
from arignote.tensor.conversion import as_tensor_variable

__all__ = ["ScanInfo", "until"]


class until:
    """Returned by a step function (with its outputs) to stop the loop early: the loop
    stops after the first step whose ``condition`` is true, that step included, and
    ``n_steps`` becomes the most steps it may run.

    >>> import arignote
    >>> import arignote.tensor as pt
    >>> from arignote.scan.utils import until
    >>> x0 = pt.dscalar("x0")
    >>> ys, _ = arignote.scan(lambda x: (x * 2, until(x * 2 > 10)), outputs_info=[x0], n_steps=100)
    >>> arignote.function([x0], ys)(1.0).tolist()
    [2.0, 4.0, 8.0, 16.0]
    """

    def __init__(self, condition: Any):
        cond = as_tensor_variable(condition)
        if cond.type.ndim != 0:
            raise TypeError(
                f"until: the condition must be a scalar (0-d), got {cond} of Type {cond.type}; reduce it "
                "first (pt.any / pt.all)"
            )
        self.condition: Variable = cond


@dataclass(frozen=True)
class ScanInfo:
    """The layout of a Scan node.

    Outer inputs: ``n_steps``, the sequences, one initial value per recurrent output, the
    non-sequences. Inner inputs: one per sequence tap, one per recurrent tap, then the
    non-sequences. Inner outputs: the recurrent outputs, the outputs that are not fed back
    ("nit-sot"), and the stop condition when ``as_while``. Outer outputs: the recurrent
    outputs (a tensor one holds its initial rows, then one row per step; any other Type
    holds its final value) and the nit-sot outputs (one row per step).

    ``seq_taps[i]``: the taps of sequence ``i`` (step ``t`` reads
    ``seq[t + tap - min(taps + [0])]``). ``rec_taps[j]``: the (negative) taps of recurrent
    output ``j``; its initial value has ``-min(taps)`` rows. ``keep[k]`` for each outer
    output (recurrent then nit-sot): 0 keeps every row; ``m > 0`` keeps only the last ``m``
    rows (the loop then holds ``max(m, taps)`` rows in memory, not one per step).
    """

    seq_taps: tuple[tuple[int, ...], ...]
    rec_taps: tuple[tuple[int, ...], ...]
    n_nit_sot: int
    n_non_seqs: int
    as_while: bool = False
    keep: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if not self.keep:
            object.__setattr__(self, "keep", (0,) * (len(self.rec_taps) + self.n_nit_sot))
        for taps in self.rec_taps:
            if not taps or any(t >= 0 for t in taps):
                raise ValueError(f"ScanInfo: recurrent taps must be negative, got {taps}")

    @property
    def n_seqs(self) -> int:
        return len(self.seq_taps)

    @property
    def n_rec(self) -> int:
        return len(self.rec_taps)

    @property
    def n_outer_outputs(self) -> int:
        return self.n_rec + self.n_nit_sot

    def seq_span(self, i: int) -> tuple[int, int]:
        """``(offset, span)`` of sequence ``i``: step ``t`` reads row ``t + tap + offset`` and
        the sequence gives ``len - span`` steps."""
        taps = self.seq_taps[i]
        lo, hi = min(min(taps), 0), max(max(taps), 0)
        return -lo, hi - lo

    def rec_len(self, j: int) -> int:
        """Rows of initial value recurrent output ``j`` needs."""
        return -min(self.rec_taps[j])

    def inner_slices(self) -> tuple[list[slice], list[slice], slice]:
        """Where each sequence's and recurrent output's taps, and the non-sequences, sit
        among the inner inputs."""
        k = 0
        seqs, recs = [], []
        for taps in self.seq_taps:
            seqs.append(slice(k, k + len(taps)))
            k += len(taps)
        for taps in self.rec_taps:
            recs.append(slice(k, k + len(taps)))
            k += len(taps)
        return seqs, recs, slice(k, k + self.n_non_seqs)

    def with_keep(self, keep: tuple[int, ...]) -> ScanInfo:
        return ScanInfo(self.seq_taps, self.rec_taps, self.n_nit_sot, self.n_non_seqs, self.as_while, keep)
