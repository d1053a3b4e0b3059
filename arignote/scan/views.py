"""``map``, ``reduce``, ``foldl`` and ``foldr``: common loops written with :func:`scan`.

>>> import arignote
>>> import arignote.tensor as pt
>>> x = pt.dvector("x")
>>> squares = arignote.map(lambda v: v * v, x, return_updates=False)
>>> arignote.function([x], squares)([1.0, 2.0, 3.0]).tolist()
[1.0, 4.0, 9.0]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from arignote.scan.basic import scan

__all__ = ["filter", "foldl", "foldr", "map", "reduce"]


def map(
    fn: Callable,
    sequences: Any,
    non_sequences: Any = None,
    truncate_gradient: int = -1,
    go_backwards: bool = False,
    mode: Any = None,
    name: str | None = None,
    return_updates: bool = True,
) -> Any:
    """``fn`` applied to each row of the sequences: ``scan`` with no recurrent output."""
    return scan(
        fn,
        sequences=sequences,
        outputs_info=None,
        non_sequences=non_sequences,
        truncate_gradient=truncate_gradient,
        go_backwards=go_backwards,
        mode=mode,
        name=name,
        return_updates=return_updates,
    )


def reduce(
    fn: Callable,
    sequences: Any,
    outputs_info: Any,
    non_sequences: Any = None,
    go_backwards: bool = False,
    mode: Any = None,
    name: str | None = None,
    return_updates: bool = True,
) -> Any:
    """The final value of each output of ``scan(fn, sequences, outputs_info)`` (only the
    last step is kept in memory once the function is compiled)."""
    outs, updates = scan(
        fn,
        sequences=sequences,
        outputs_info=outputs_info,
        non_sequences=non_sequences,
        go_backwards=go_backwards,
        mode=mode,
        name=name,
        return_list=True,
    )
    last = [o[-1] for o in outs]
    result = last[0] if len(last) == 1 else last
    return (result, updates) if return_updates else result


def foldl(
    fn: Callable,
    sequences: Any,
    outputs_info: Any,
    non_sequences: Any = None,
    mode: Any = None,
    name: str | None = None,
    return_updates: bool = True,
) -> Any:
    """``reduce`` from the first row to the last."""
    return reduce(fn, sequences, outputs_info, non_sequences, False, mode, name, return_updates)


def foldr(
    fn: Callable,
    sequences: Any,
    outputs_info: Any,
    non_sequences: Any = None,
    mode: Any = None,
    name: str | None = None,
    return_updates: bool = True,
) -> Any:
    """``reduce`` from the last row to the first."""
    return reduce(fn, sequences, outputs_info, non_sequences, True, mode, name, return_updates)


def filter(
    fn: Callable,
    sequences: Any,
    non_sequences: Any = None,
    go_backwards: bool = False,
    mode: Any = None,
    name: str | None = None,
) -> Any:
    """The rows of ``sequences`` for which the predicate ``fn`` holds: ``fn`` is scanned over
    the rows (with ``non_sequences``) and its boolean results index the sequences.

    ``fn`` returns one mask for all the sequences, or (a list) one per sequence. A single
    sequence gives a single result, a list of them a list. ``go_backwards`` runs the predicate
    from the last row; the rows kept stay in their order.

    >>> import numpy as np
    >>> import arignote.tensor as pt
    >>> x = pt.dvector("x")
    >>> filter(lambda v: v > 1, x).eval({x: np.array([0.0, 2.0, 1.0, 3.0])}).tolist()
    [2.0, 3.0]
    """
    mask = scan(
        fn,
        sequences=sequences,
        outputs_info=None,
        non_sequences=non_sequences,
        go_backwards=go_backwards,
        mode=mode,
        name=name,
        return_updates=False,
    )
    seqs = list(sequences) if isinstance(sequences, (list, tuple)) else None
    if isinstance(mask, (list, tuple)):
        if seqs is None:
            raise TypeError(
                "filter: fn returned several masks, so the sequences must be a list or tuple of as many"
            )
        if len(mask) != len(seqs):
            raise ValueError(f"filter: fn returned {len(mask)} masks for {len(seqs)} sequences")
        masks = list(mask)
    else:
        masks = [mask] * (1 if seqs is None else len(seqs))
    if go_backwards:  # scan's outputs follow its steps: the mask of the last row comes first
        masks = [m[::-1] for m in masks]
    for m in masks:
        if m.type.dtype != "bool":
            raise TypeError(f"filter: fn must return boolean masks, got {m.type} (compare, e.g. v > 0)")
    if seqs is None:
        return sequences[masks[0]]
    return [seq[m] for seq, m in zip(seqs, masks, strict=True)]
