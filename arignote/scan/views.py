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

__all__ = ["foldl", "foldr", "map", "reduce"]


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
