"""JAX implementations of :mod:`arignote.tensor.signal`'s convolutions: ``Convolve1d`` and
``Convolve2d`` (core Ops; a batch of them is a ``Blockwise``).

Both are computed as the full convolution (``jax.scipy.signal.convolve``, direct or by FFT as
the Op's ``method`` says) and then cut to the mode's window, so that the windows are exactly
arignote's: ``"same"`` keeps ``in1``'s length centred on the full result, ``"valid"`` the
positions where one input covers the other (whichever is longer).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax.numpy as jnp
import jax.scipy.signal as jss

from arignote.graph.basic import Apply
from arignote.link.jax.dispatch.basic import jax_funcify
from arignote.tensor.signal.conv import _Convolve

__all__: list[str] = []


def _window(mode: str, n: int, k: int) -> slice:
    """The part of a full convolution (length ``n + k - 1``) that ``mode`` keeps along one axis."""
    if mode == "full":
        return slice(None)
    if mode == "same":
        start = (k - 1) // 2
        return slice(start, start + n)
    start = min(n, k) - 1  # "valid"
    return slice(start, start + max(n, k) - min(n, k) + 1)


@jax_funcify.register(_Convolve)  # Convolve1d and Convolve2d
def _convolve(op: _Convolve, node: Apply | None = None, **kwargs: Any) -> Callable[..., Any]:
    mode, dtype = op.mode, node.outputs[0].type.numpy_dtype
    method = {"fft": "fft", "direct": "direct"}.get(getattr(op, "method", "direct"), "auto")

    def convolve(a: Any, b: Any) -> Any:
        a, b = jnp.asarray(a).astype(dtype), jnp.asarray(b).astype(dtype)
        if a.size == 0 or b.size == 0:
            raise ValueError(
                f"{op}: cannot convolve an empty array: in1 has shape {a.shape}, in2 has shape {b.shape}"
            )
        if mode == "valid" and not (
            all(n >= k for n, k in zip(a.shape, b.shape)) or all(n <= k for n, k in zip(a.shape, b.shape))
        ):
            raise ValueError(
                f"{op}: in 'valid' mode one input must be at least as large as the other along every "
                f"axis; in1 has shape {a.shape}, in2 has shape {b.shape}"
            )
        full = jss.convolve(a, b, mode="full", method=method)
        return full[tuple(_window(mode, n, k) for n, k in zip(a.shape, b.shape))].astype(dtype)

    return convolve
