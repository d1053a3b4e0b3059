"""Signal processing on tensors: ``pt.signal.convolve1d`` and ``pt.signal.convolve2d``
(the Ops are in :mod:`arignote.tensor.signal.conv`)."""

from arignote.tensor.signal import conv
from arignote.tensor.signal.conv import convolve1d, convolve2d

__all__ = ["conv", "convolve1d", "convolve2d"]
