"""``scan_checkpoints``: a scan whose gradient needs memory for about ``n / N + N`` states
instead of ``n``, by recomputing segments of ``N`` steps.

The loop runs as an outer scan over segments of ``save_every_N`` steps, each an inner
scan; only the states at segment ends are stored. Back-propagation through a segment
recomputes its ``N`` states from the stored one (the gradient of the inner scan), then
drops them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from arignote.graph.basic import Variable
from arignote.scan.basic import _as_list, _as_steps, scan
from arignote.tensor.alloc import zeros
from arignote.tensor.conversion import as_tensor_variable
from arignote.tensor.join import concatenate
from arignote.tensor.ranges import arange
from arignote.tensor.shape import reshape, shape_tuple
from arignote.tensor.ufuncs import minimum

__all__ = ["scan_checkpoints"]


def scan_checkpoints(
    fn: Callable,
    sequences: Any = None,
    outputs_info: Any = None,
    non_sequences: Any = None,
    name: str = "checkpointscan_fn",
    n_steps: Any = None,
    save_every_N: int = 10,
    padding: bool = True,
    return_updates: bool = True,
) -> Any:
    """Like :func:`arignote.scan` for sequences without taps and outputs with taps
    ``[-1]`` (or ``None``), returning each output's value at the end of every segment of
    ``save_every_N`` steps: use only the last row (``out[-1]``), the final value.

    ``padding``: sequences whose length is not a multiple of ``save_every_N`` are padded
    with zeros (the padded steps are not run); with ``padding=False`` the length must be
    a multiple.

    >>> import numpy as np
    >>> import arignote
    >>> import arignote.tensor as pt
    >>> from arignote.gradient import grad
    >>> x = pt.dvector("x")
    >>> acc, _ = scan_checkpoints(lambda v, a: a * 0.5 + v, sequences=[x],
    ...                           outputs_info=[pt.constant(np.float64(0.0))], save_every_N=4)
    >>> f = arignote.function([x], [acc[-1], grad(acc[-1], x)])
    >>> [np.round(v, 4).tolist() for v in f(np.ones(6))]
    [1.9688, [0.0312, 0.0625, 0.125, 0.25, 0.5, 1.0]]
    """
    if isinstance(save_every_N, bool) or not isinstance(save_every_N, (int, np.integer)) or save_every_N < 1:
        raise ValueError(f"scan_checkpoints: save_every_N must be a positive int, got {save_every_N!r}")
    N = int(save_every_N)
    seqs = []
    for k, s in enumerate(_as_list(sequences)):
        if isinstance(s, dict):
            if list(s.get("taps", [0]) or [0]) != [0]:
                raise ValueError(
                    f"scan_checkpoints: sequences[{k}] has taps {s['taps']}; only taps [0] are supported"
                )
            s = s["input"]
        seqs.append(as_tensor_variable(s))
    infos = _as_list(outputs_info)
    for k, o in enumerate(infos):
        if isinstance(o, dict):
            if list(o.get("taps", [-1]) or [-1]) != [-1]:
                raise ValueError(
                    f"scan_checkpoints: outputs_info[{k}] has taps {o['taps']}; only taps [-1] are supported"
                )
            infos[k] = o.get("initial")
    non_seqs = _as_list(non_sequences)
    if n_steps is None and not seqs:
        raise ValueError("scan_checkpoints: give sequences or n_steps")
    n = _as_steps(n_steps if n_steps is not None else shape_tuple(seqs[0])[0])
    n_seg = (n + (N - 1)) // N

    padded = []
    for s in seqs:
        length = shape_tuple(s)[0]
        if padding:
            pad = n_seg * N - length
            s = concatenate([s, zeros((pad, *shape_tuple(s)[1:]), dtype=s.type.dtype)])
        padded.append(reshape(s, (n_seg, N, *shape_tuple(s)[1:]), ndim=s.type.ndim + 1))
    starts = arange(n_seg) * N
    n_seqs, n_rec = len(padded), sum(1 for o in infos if o is not None)

    def segment(*args: Variable) -> list[Variable]:
        start = args[0]
        seg_seqs = list(args[1 : 1 + n_seqs])
        states = list(args[1 + n_seqs : 1 + n_seqs + n_rec])
        rest = list(args[1 + n_seqs + n_rec :])
        it = iter(states)
        inner_info = [next(it) if o is not None else None for o in infos]
        outs, _ = scan(
            fn,
            sequences=seg_seqs,
            outputs_info=inner_info if infos else None,
            non_sequences=rest,
            n_steps=minimum(N, n - start),
            name=f"{name}_inner",
            return_list=True,
        )
        return [o[-1] for o in outs]

    outer_info = list(infos) if infos else None
    outs, updates = scan(
        segment,
        sequences=[starts, *padded],
        outputs_info=outer_info,
        non_sequences=non_seqs,
        n_steps=n_seg,
        name=name,
        return_list=True,
    )
    result = outs[0] if len(outs) == 1 else outs
    return (result, updates) if return_updates else result
