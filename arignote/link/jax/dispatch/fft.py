"""JAX implementations of the real FFTs (:mod:`arignote.tensor.fft`): ``RFFTOp`` and
``IRFFTOp``, through ``jax.numpy.fft``.

The transform lengths are an input of these Ops; JAX needs them static. ``rfft`` and
``irfft`` compute them from the input's shape, which stays concrete under ``jax.jit``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax.numpy as jnp

from arignote.graph.basic import Apply
from arignote.link.jax.dispatch.basic import jax_funcify
from arignote.link.jax.dispatch.tensor_basic import static_ints
from arignote.tensor.fft import IRFFTOp, RFFTOp


@jax_funcify.register(RFFTOp)
def _rfft(op: RFFTOp, node: Apply | None = None, **kwargs: Any) -> Callable[..., Any]:
    def rfft(a: Any, s: Any) -> Any:
        a = jnp.asarray(a)
        spectrum = jnp.fft.rfftn(
            a, s=static_ints(s, node, "the transform lengths"), axes=tuple(range(1, a.ndim))
        )
        return jnp.stack([spectrum.real, spectrum.imag], axis=-1).astype(a.dtype)

    return rfft


@jax_funcify.register(IRFFTOp)
def _irfft(op: IRFFTOp, node: Apply | None = None, **kwargs: Any) -> Callable[..., Any]:
    def irfft(a: Any, s: Any) -> Any:
        a = jnp.asarray(a)
        if a.shape[-1] != 2:  # (shapes are static under jax.jit: checked while tracing, for free)
            raise ValueError(
                f"IRFFTOp: the last axis must hold the real and imaginary parts (length 2), got shape {a.shape}"
            )
        lengths = static_ints(s, node, "the transform lengths")
        out = jnp.fft.irfftn(a[..., 0] + 1j * a[..., 1], s=lengths, axes=tuple(range(1, a.ndim - 1)))
        size = 1
        for n in lengths:
            size *= n
        return (out * size).astype(a.dtype)

    return irfft
