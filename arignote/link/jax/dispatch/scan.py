"""JAX implementation of :class:`arignote.scan.op.Scan`: the loop as one ``jax.lax.scan``.

The inner graph becomes the body (its nodes' JAX functions, inlined: XLA compiles the loop
once, not a call per step). The carry holds, for each recurrent output, the last rows its
taps reach back to; the sequences are sliced once, per tap, to the rows the steps read. The
outputs are those of :meth:`Scan.perform`: a recurrent output is its initial rows followed by
one row per step, a nit-sot output one row per step, and ``keep`` leaves the last rows only:
such an output is carried through the loop as a window of its last rows, never stacked
(the gradient of a weight, summed over the steps, keeps one partial sum, not one per step).

The number of steps decides the outputs' lengths, so it must be static: a constant, a value
computed from the (static) shapes of the loop's inputs (``x.shape[0] - 1``, what ``scan``
over sequences builds), or a concrete value outside ``jax.jit``. A while loop (``until``) runs the steps with a "stopped"
flag and keeps the rows up to the stop, whose count is known only from the values: eager
evaluation only. A random generator's state is a JAX key carried through the loop: each step
draws with the key it reads and gives the next one, so draws differ per step and the
generator's update after the loop is the last key.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from arignote.graph.basic import Apply
from arignote.link.jax.dispatch.basic import jax_funcify
from arignote.link.jax.dispatch.graph import funcify_fgraph
from arignote.link.jax.dispatch.static import concrete, shape_value, static_input
from arignote.scan.op import Scan
from arignote.tensor.random.type import RandomGeneratorType
from arignote.tensor.type import TensorType

__all__: list[str] = []


def _key_where(stopped: Any, old: Any, new: Any) -> Any:
    """``old`` where ``stopped``, else ``new``: of two JAX keys (``where`` of their bits)."""
    bits = jnp.where(stopped, jax.random.key_data(old), jax.random.key_data(new))
    return jax.random.wrap_key_data(bits, impl=jax.random.key_impl(new))


def _last_rows(full: Any, keep: int) -> Any:
    """All rows (``keep`` 0) or the last ``keep`` of them, as ``Scan.perform`` returns them."""
    if not keep:
        return full
    return full[max(full.shape[0] - keep, 0) :]


@jax_funcify.register(Scan)
def _scan(op: Scan, node: Apply | None = None, **kwargs: Any) -> Callable[..., Any]:
    info = op.info
    states = [op.inner_inputs[sl.start].type for sl in info.inner_slices()[1]]
    for t in states:
        if not isinstance(t, TensorType | RandomGeneratorType):
            raise NotImplementedError(f"{op} (node {node}): a recurrent state of Type {t} has no JAX form")
    # a generator state is a JAX key, carried as it is: each step reads the last key and
    # gives the next (no rows, no window), and the output is the key after the last step
    keys = {j for j, t in enumerate(states) if isinstance(t, RandomGeneratorType)}
    body = funcify_fgraph(op.fgraph, **kwargs)
    n_rec, n_nit = info.n_rec, info.n_nit_sot
    rec_lens = [info.rec_len(j) for j in range(n_rec)]
    fixed_steps = static_input(node, 0)
    dtypes = [
        None if k in keys else o.type.numpy_dtype for k, o in enumerate(op.inner_outputs[: n_rec + n_nit])
    ]
    keep_of = info.keep
    nit_shapes = [op.inner_outputs[n_rec + m].type.shape for m in range(n_nit)]
    # outputs carried as a window of their last rows (see scan() below)
    windowed = [bool(keep_of[j]) and not info.as_while and j not in keys for j in range(n_rec)] + [
        bool(keep_of[n_rec + m]) and not info.as_while and None not in nit_shapes[m] for m in range(n_nit)
    ]
    nit_windowed = [m for m in range(n_nit) if windowed[n_rec + m]]

    def steps(n_steps: Any, inputs: tuple) -> int:
        """n_steps: a constant, computed from the inputs' (static) shapes, or concrete."""
        if fixed_steps is not None:
            return int(fixed_steps)
        from_shapes = shape_value(node.inputs[0], {v: np.shape(x) for v, x in zip(node.inputs[1:], inputs)})
        if from_shapes is not None:
            return int(from_shapes)
        return int(concrete(n_steps, node, "n_steps"))

    def scan(n_steps: Any, *inputs: Any) -> Any:
        _, seqs, inits, non_seqs = op.split_outer((n_steps, *inputs))
        seqs = [jnp.asarray(s) for s in seqs]
        inits = [i if j in keys else jnp.asarray(i).astype(d) for j, (i, d) in enumerate(zip(inits, dtypes))]
        n = steps(n_steps, inputs)
        for i, s in enumerate(seqs):  # a shorter sequence gives fewer steps
            n = min(n, s.shape[0] - info.seq_span(i)[1])
        n = max(n, 0)
        for j, (init, length) in enumerate(zip(inits, rec_lens)):
            if j not in keys and init.shape[0] != length:
                raise ValueError(
                    f"{op}: the initial value of recurrent output {j} must have {length} rows (one per "
                    f"step back its taps {list(info.rec_taps[j])} reach), got shape {init.shape}"
                )
        # per sequence tap: the rows that steps 0..n-1 read
        xs = []
        for i, s in enumerate(seqs):
            off, _ = info.seq_span(i)
            xs.extend(s[tap + off : tap + off + n] for tap in info.seq_taps[i])
        # An output of which only the last ``keep`` rows are used is carried as a window of
        # its last rows, not stacked one row per step (a weight gradient summed over the
        # steps would otherwise store every partial sum). A recurrent window also holds
        # what its taps read; a nit-sot window needs the row's shape (static in its Type).
        sizes = [max(rec_lens[j], keep_of[j]) if windowed[j] else rec_lens[j] for j in range(n_rec)]
        windows0 = []
        for j, (init, size) in enumerate(zip(inits, sizes)):
            if j in keys:
                windows0.append(init)
                continue
            pad = size - rec_lens[j]
            windows0.append(
                jnp.concatenate([jnp.zeros((pad, *init.shape[1:]), init.dtype), init]) if pad else init
            )
        for m in nit_windowed:
            windows0.append(jnp.zeros((keep_of[n_rec + m], *nit_shapes[m]), dtypes[n_rec + m]))
        sizes = sizes + [keep_of[n_rec + m] for m in nit_windowed]
        stacked = [k for k in range(n_rec + n_nit) if not windowed[k] and k not in keys]

        def step(carry: tuple, rows: list) -> tuple:
            windows, stopped = carry
            taps_in = [
                w if j in keys else w[size + tap]
                for j, (w, size, taps) in enumerate(zip(windows, sizes, info.rec_taps))
                for tap in taps
            ]
            outs = body(*rows, *taps_in, *non_seqs)
            new = [
                o if d is None else jnp.asarray(o).astype(d) for o, d in zip(outs[: n_rec + n_nit], dtypes)
            ]
            if info.as_while:  # after the stop, nothing moves
                new = [
                    _key_where(stopped, w, r) if j in keys else jnp.where(stopped, w[-1], r)
                    for j, (w, r) in enumerate(zip(windows, new[:n_rec]))
                ] + new[n_rec:]
            pushed = [*new[:n_rec], *(new[n_rec + m] for m in nit_windowed)]
            windows = tuple(
                r if k in keys else r[None] if size == 1 else jnp.concatenate([w[1:], r[None]])
                for k, (w, r, size) in enumerate(zip(windows, pushed, sizes))
            )
            if not info.as_while:
                return (windows, stopped), tuple(new[k] for k in stacked)
            stopped_now = stopped | jnp.asarray(outs[n_rec + n_nit]).astype(bool)
            return (windows, stopped_now), (tuple(new[k] for k in stacked), ~stopped)

        carry0 = (tuple(windows0), jnp.bool_(False))
        (windows, _), ys = jax.lax.scan(step, carry0, xs, length=n)
        done = n
        if info.as_while:
            ys, ran = ys
            done = int(np.sum(concrete(ran, node, "the number of steps a while loop runs")))
        rows_out = dict(zip(stacked, ys))
        final = dict(zip([*range(n_rec), *(n_rec + m for m in nit_windowed)], windows))
        results = []
        for k in range(n_rec + n_nit):
            keep = keep_of[k]
            if k in keys:  # a generator's key after the last step
                results.append(final[k])
            elif windowed[k]:  # the last rows, from the window
                size = final[k].shape[0]
                available = (rec_lens[k] if k < n_rec else 0) + done
                results.append(final[k][size - min(keep, available) :])
            elif k < n_rec:
                results.append(_last_rows(jnp.concatenate([inits[k], rows_out[k][:done]]), keep))
            else:
                results.append(_last_rows(rows_out[k][:done], keep))
        return tuple(results) if len(results) > 1 else results[0]

    return scan
