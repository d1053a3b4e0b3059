"""Real-input fast Fourier transforms over a batch (PyTensor's ``tensor.fft``).

:func:`rfft` transforms each of the ``m`` real arrays of an input of shape ``(m, ..., n)``
over all its axes but the first, keeping the ``n // 2 + 1`` non-redundant frequencies of the
last: the result has shape ``(m, ..., n // 2 + 1, 2)``, the real and imaginary parts side by
side in the last axis (``numpy.fft.rfftn`` of each batch entry). :func:`irfft` is its
inverse. Both are differentiable. ``norm`` is NumPy's: ``None`` scales only the inverse by
``1 / n``, ``"ortho"`` both ways by ``1 / sqrt(n)``, ``"no_norm"`` neither.

>>> import numpy as np
>>> import arignote.tensor as pt
>>> x = pt.dmatrix("x")
>>> v = np.array([[1.0, 2.0, 3.0, 4.0]])
>>> f = rfft(x).eval({x: v})
>>> f.shape
(1, 3, 2)
>>> np.allclose(f[..., 0] + 1j * f[..., 1], np.fft.rfft(v))
True
>>> np.allclose(irfft(rfft(x)).eval({x: v}), v)
True
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from arignote.graph.basic import Apply, Variable
from arignote.graph.null_type import disconnected_type
from arignote.graph.op import Op
from arignote.tensor.conversion import as_tensor_variable
from arignote.tensor.indexing.basic import set_subtensor
from arignote.tensor.type import TensorType
from arignote.tensor.ufuncs import sqrt

__all__ = ["IRFFTOp", "RFFTOp", "irfft", "irfft_op", "rfft", "rfft_op"]

_NORMS = (None, "ortho", "no_norm")


def _float_input(op: Op, a: Any, min_ndim: int, what: str) -> Variable:
    a = as_tensor_variable(a)
    if a.type.ndim < min_ndim:
        raise TypeError(
            f"{type(op).__name__}: the input must have at least {min_ndim} dimensions ({what}), got {a.type}"
        )
    if not a.type.dtype.startswith("float"):
        raise TypeError(f"{type(op).__name__}: the input must be real floats, got {a.type}")
    return a


def _lengths(op: Op, s: Any, count: int) -> Variable:
    s = as_tensor_variable(s)
    if s.type.ndim != 1 or not s.type.dtype.startswith(("int", "uint")):
        raise TypeError(
            f"{type(op).__name__}: the transform lengths s must be a vector of integers, got {s.type}"
        )
    if s.type.shape[0] is not None and s.type.shape[0] != count:
        raise ValueError(
            f"{type(op).__name__}: s must have {count} lengths (one per transformed axis), got {s.type.shape[0]}"
        )
    return s


def _half_spectrum_interior(s: Variable, ndim: int) -> tuple:
    """The index of the frequencies that stand for two in a half spectrum of last length
    ``s[-1]`` (all but the zero frequency and, for an even length, the Nyquist one), in an
    array of ``ndim`` dimensions whose last holds the real and imaginary parts."""
    return (*(slice(None),) * (ndim - 2), slice(1, s[-1] // 2 + s[-1] % 2), slice(None))


class RFFTOp(Op):
    """The unnormalised real FFT of each batch entry: ``(m, ...)`` real to
    ``(m, ..., s[-1] // 2 + 1, 2)``, over the lengths ``s`` (default: the input's)."""

    __props__ = ()

    def make_node(self, a: Any, s: Any = None) -> Apply:
        a = _float_input(self, a, 2, "the first indexes the batch")
        s = a.shape[1:] if s is None else _lengths(self, s, a.type.ndim - 1)
        return Apply(self, [a, s], [TensorType(a.type.dtype, shape=(None,) * a.type.ndim + (2,))()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        a, s = inputs
        spectrum = np.fft.rfftn(a, s=tuple(int(n) for n in s), axes=tuple(range(1, a.ndim)))
        out = np.empty((*spectrum.shape, 2), dtype=a.dtype)
        out[..., 0] = spectrum.real
        out[..., 1] = spectrum.imag
        output_storage[0][0] = out

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list[tuple]:
        s = node.inputs[1]
        n = node.inputs[0].type.ndim - 1
        return [(shapes[0][0], *(s[k] for k in range(n - 1)), s[n - 1] // 2 + 1, 2)]

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        return [[True], [False]]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        (g,) = output_grads
        s = inputs[1]
        # the inverse transform counts each interior frequency twice: halve their cotangent
        idx = _half_spectrum_interior(s, g.type.ndim)
        g = set_subtensor(g[idx], g[idx] * 0.5)
        return [irfft_op(g, s), disconnected_type()]


class IRFFTOp(Op):
    """The unnormalised inverse of :class:`RFFTOp`: ``(m, ..., k, 2)`` (real and imaginary
    parts) to real ``(m, ...)`` of lengths ``s`` (default: the input's, the last
    ``2 * (k - 1)``), multiplied by ``prod(s)``."""

    __props__ = ()

    def make_node(self, a: Any, s: Any = None) -> Apply:
        a = _float_input(self, a, 3, "the first indexes the batch, the last holds real and imaginary parts")
        if s is None:
            s = a.shape[1:-1]
            s = set_subtensor(s[-1], (s[-1] - 1) * 2)
        else:
            s = _lengths(self, s, a.type.ndim - 2)
        return Apply(self, [a, s], [TensorType(a.type.dtype, shape=(None,) * (a.type.ndim - 1))()])

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        a, s = inputs
        if a.shape[-1] != 2:
            raise ValueError(
                f"IRFFTOp: the last axis must hold the real and imaginary parts (length 2), got shape {a.shape}"
            )
        lengths = tuple(int(n) for n in s)
        out = np.fft.irfftn(a[..., 0] + 1j * a[..., 1], s=lengths, axes=tuple(range(1, a.ndim - 1)))
        output_storage[0][0] = (out * np.prod(lengths)).astype(a.dtype)

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list[tuple]:
        s = node.inputs[1]
        return [(shapes[0][0], *(s[k] for k in range(node.inputs[0].type.ndim - 2)))]

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        return [[True], [False]]

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        (g,) = output_grads
        s = inputs[1]
        spectrum = rfft_op(g, s)
        idx = _half_spectrum_interior(s, spectrum.type.ndim)
        return [set_subtensor(spectrum[idx], spectrum[idx] * 2), disconnected_type()]


rfft_op = RFFTOp()
irfft_op = IRFFTOp()


def _check_norm(norm: Any) -> None:
    if norm not in _NORMS:
        raise ValueError(f"norm must be None, 'ortho' or 'no_norm', got {norm!r}")


def rfft(inp: Any, norm: str | None = None) -> Variable:
    """The FFT of each of the ``m`` real arrays of ``inp`` (shape ``(m, ..., n)``): shape
    ``(m, ..., n // 2 + 1, 2)``, real and imaginary parts in the last axis. ``norm``:
    ``None`` or ``"no_norm"`` (unscaled) or ``"ortho"`` (scaled by ``1 / sqrt`` of the
    transform's size)."""
    _check_norm(norm)
    inp = as_tensor_variable(inp)
    out = rfft_op(inp)
    if norm == "ortho":
        s = out.owner.inputs[1]
        out = out / sqrt(s.prod().astype(inp.type.dtype))
    return out


def irfft(inp: Any, norm: str | None = None, is_odd: bool = False) -> Variable:
    """The real arrays whose :func:`rfft` is ``inp`` (shape ``(m, ..., k, 2)``): shape
    ``(m, ..., n)`` with ``n = 2 * (k - 1)``, or ``2 * (k - 1) + 1`` when ``is_odd``.
    ``norm``: ``None`` (scaled by ``1 / n``, NumPy's default), ``"ortho"`` (``1 / sqrt``) or
    ``"no_norm"`` (unscaled)."""
    _check_norm(norm)
    if is_odd not in (True, False):
        raise ValueError(f"is_odd must be True or False, got {is_odd!r}")
    inp = as_tensor_variable(inp)
    if inp.type.ndim < 3:
        raise TypeError(
            "irfft: the input must have at least 3 dimensions (batch, frequencies, real and imaginary parts), "
            f"got {inp.type}"
        )
    s = inp.shape[1:-1]
    s = set_subtensor(s[-1], (s[-1] - 1) * 2 + int(is_odd))
    out = irfft_op(inp, s)
    if norm is None:
        out = out / s.prod().astype(inp.type.dtype)
    elif norm == "ortho":
        out = out / sqrt(s.prod().astype(inp.type.dtype))
    return out
