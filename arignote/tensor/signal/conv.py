"""Discrete linear convolution of tensors: ``convolve1d`` and ``convolve2d``.

The core Ops, :class:`Convolve1d` (``(n),(k)->(o)``) and :class:`Convolve2d`
(``(n0,n1),(k0,k1)->(o0,o1)``), convolve one pair of arrays; the public functions apply
them over any leading (batch) dimensions through
:func:`arignote.tensor.blockwise.blockwise_apply`, broadcasting the batch dimensions like
NumPy. The output length along each convolved axis, for lengths ``n`` (``in1``) and ``k``
(``in2``), is

- ``"full"``: ``n + k - 1``, every overlap of the two arrays;
- ``"valid"``: ``max(n, k) - min(n, k) + 1``, only full overlaps (one input must be at
  least as long as the other along every axis);
- ``"same"``: ``n``, the middle of the full result (``scipy.signal.convolve``'s rule).

The gradient of a convolution is a correlation of the output gradient: writing any mode
as a window of the full convolution, the output gradient is first put back in its place
in a zero array of the full output's shape; each input's gradient is then the "valid"
convolution of that array with the other input reversed.

>>> import numpy as np
>>> import arignote.tensor as pt
>>> from arignote.tensor.signal import convolve1d
>>> x, h = pt.dvector("x"), pt.dvector("h")
>>> convolve1d(x, h).eval({x: np.array([1.0, 2.0, 3.0]), h: np.array([0.0, 1.0, 0.5])})
array([0. , 1. , 2.5, 4. , 1.5])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from arignote.graph.basic import Apply, Constant, Variable
from arignote.graph.null_type import disconnected_type, is_disconnected
from arignote.graph.op import Op
from arignote.scalar.type import upcast
from arignote.tensor.blockwise import blockwise_apply
from arignote.tensor.conversion import as_tensor_variable
from arignote.tensor.indexing.basic import flip
from arignote.tensor.pad import pad
from arignote.tensor.products import _product_rule
from arignote.tensor.shape import _grad_like, dim_length
from arignote.tensor.type import TensorType
from arignote.tensor.ufuncs import maximum, minimum
from arignote.tensor.variable import TensorVariable

__all__ = ["Convolve1d", "Convolve2d", "convolve1d", "convolve2d"]

ConvMode = Literal["full", "valid", "same"]
MODES = ("full", "valid", "same")
METHODS = ("auto", "direct", "fft")
#: scipy.signal.convolve2d's boundary names (and its aliases) -> numpy.pad's mode
_BOUNDARIES = {"fill": "constant", "pad": "constant", "wrap": "wrap", "circular": "wrap"}
_BOUNDARIES.update({"symm": "symmetric", "symmetric": "symmetric"})

Length = Any  # a Python int (static) or a 0-d integer Variable


def _check_mode(mode: Any, what: str) -> str:
    if mode not in MODES:
        raise ValueError(f"{what}: mode must be one of {MODES}, got {mode!r}")
    return mode


def _static_outdim_length(mode: str, n: int | None, k: int | None) -> int | None:
    if mode == "same":
        return n
    if n is None or k is None:
        return None
    return n + k - 1 if mode == "full" else abs(n - k) + 1


def _dominance_clash(n_shape: Sequence[int | None], k_shape: Sequence[int | None]) -> bool:
    """True when neither input is at least as long as the other along every axis (where
    the lengths are known): a "valid" convolution of such inputs is not defined."""
    pairs = [(n, k) for n, k in zip(n_shape, k_shape) if n is not None and k is not None]
    return any(n > k for n, k in pairs) and any(n < k for n, k in pairs)


class _Convolve(Op):
    """Base of the core convolution Ops: ``mode`` is fixed per Op, so the output's static
    shape follows from the inputs'. Subclasses set ``ndim`` and define ``_convolve``."""

    __props__: tuple[str, ...] = ("mode",)
    ndim: int = 0

    def __init__(self, mode: ConvMode = "full"):
        self.mode = _check_mode(mode, type(self).__name__)

    @property
    def gufunc_signature(self) -> str:
        n = ",".join(f"n{d}" for d in range(self.ndim))
        k = ",".join(f"k{d}" for d in range(self.ndim))
        # "same" keeps in1's lengths: saying so lets Blockwise size empty batches statically
        out = n if self.mode == "same" else ",".join(f"o{d}" for d in range(self.ndim))
        return f"({n}),({k})->({out})"

    def __str__(self) -> str:
        return f"{type(self).__name__}{{mode={self.mode}}}"

    def _with_mode(self, mode: str) -> _Convolve:
        return type(self)(mode)

    # -- building -----------------------------------------------------------------------------

    def _check_valid(self, n_shape: Sequence[int | None], k_shape: Sequence[int | None]) -> None:
        """In "valid" mode, a ValueError for shapes of which neither dominates (static
        shapes when the graph is built, the arrays' shapes when it runs)."""
        if self.mode == "valid" and _dominance_clash(n_shape, k_shape):
            raise ValueError(
                f"{self}: in 'valid' mode one input must be at least as large as the other along every "
                f"axis; in1 has shape {n_shape}, in2 has shape {k_shape}"
            )

    def make_node(self, in1: Any, in2: Any) -> Apply:
        in1, in2 = as_tensor_variable(in1), as_tensor_variable(in2)
        for name, v in (("in1", in1), ("in2", in2)):
            if v.type.ndim != self.ndim:
                raise ValueError(
                    f"{self}: {name} must be {self.ndim}-d, got {v} of Type {v.type} "
                    f"(use convolve{self.ndim}d for inputs with batch dimensions)"
                )
            if np.dtype(v.type.dtype).kind not in "biufc":
                raise TypeError(f"{self}: {name} must be numeric, got {v} of Type {v.type}")
            if 0 in v.type.shape:
                raise ValueError(f"{self}: {name} ({v}, Type {v.type}) is empty; nothing to convolve")
        n_shape, k_shape = in1.type.shape, in2.type.shape
        self._check_valid(n_shape, k_shape)
        shape = tuple(_static_outdim_length(self.mode, n, k) for n, k in zip(n_shape, k_shape))
        out = TensorType(upcast(in1.type.dtype, in2.type.dtype), shape)()
        return Apply(self, [in1, in2], [out])

    # -- running ------------------------------------------------------------------------------

    def _convolve(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        raise NotImplementedError(f"{type(self).__name__} must define _convolve")  # pragma: no cover

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        a, b = (np.asarray(v) for v in inputs)
        if a.size == 0 or b.size == 0:
            raise ValueError(
                f"{self}: cannot convolve an empty array: in1 has shape {a.shape}, in2 has shape {b.shape}"
            )
        self._check_valid(a.shape, b.shape)
        out = self._convolve(a, b)
        output_storage[0][0] = np.asarray(out, dtype=node.outputs[0].type.dtype)

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list[tuple]:
        n_shape, k_shape = shapes
        out = []
        for static, n, k in zip(node.outputs[0].type.shape, n_shape, k_shape):
            if static is not None:
                out.append(static)
            elif self.mode == "full":
                out.append(n + k - 1)
            elif self.mode == "valid":
                out.append(maximum(n, k) - minimum(n, k) + 1)
            else:
                out.append(n)
        return [tuple(out)]

    # -- differentiation ----------------------------------------------------------------------

    def _full_pad(self, x: Variable, h: Variable) -> list[tuple[Length, Length]]:
        """Where this mode's output sits in the full convolution: the zeros before and
        after it along each axis."""
        widths = []
        for d in range(self.ndim):
            n, k = dim_length(x, d), dim_length(h, d)
            if self.mode == "full":
                widths.append((0, 0))
            elif self.mode == "same":
                widths.append(((k - 1) // 2, k // 2))
            else:  # valid: the full overlaps start after min(n, k) - 1 partial ones
                m = min(n, k) if isinstance(n, int) and isinstance(k, int) else minimum(n, k)
                widths.append((m - 1, m - 1))
        return widths

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        """The output gradient, embedded in the full output's shape, convolved ("valid")
        with the other input reversed."""
        x, h = inputs
        g = output_grads[0]
        if is_disconnected(g):
            return [disconnected_type(), disconnected_type()]
        g = as_tensor_variable(g)
        widths = self._full_pad(x, h)
        if any(not (isinstance(w, int) and w == 0) for pair in widths for w in pair):
            g = pad(g, widths, mode="constant")
        valid = self._with_mode("valid")
        gx = valid(g, flip(h))
        gh = valid(g, flip(x))
        return [_grad_like(gx, x), _grad_like(gh, h)]

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], eval_points: Sequence[Variable]
    ) -> list:
        """``conv(dx, h) + conv(x, dh)``: a convolution is bilinear (a missing tangent
        counts as zero)."""
        return _product_rule(self, inputs, eval_points)


class Convolve1d(_Convolve):
    """The convolution of two vectors (``numpy.convolve``; ``mode`` as in
    :func:`convolve1d`)."""

    ndim = 1

    def _convolve(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        if self.mode != "same":
            return np.convolve(a, b, mode=self.mode)
        start = (b.shape[0] - 1) // 2  # numpy's own "same" keeps max(n, k) values, not n
        return np.convolve(a, b, mode="full")[start : start + a.shape[0]]


class Convolve2d(_Convolve):
    """The convolution of two matrices (``scipy.signal.convolve``, with ``method`` one of
    ``"auto"``, ``"direct"``, ``"fft"``; ``mode`` as in :func:`convolve2d`)."""

    __props__ = ("mode", "method")
    ndim = 2

    def __init__(self, mode: ConvMode = "full", method: Literal["auto", "direct", "fft"] = "auto"):
        super().__init__(mode)
        if method not in METHODS:
            raise ValueError(f"Convolve2d: method must be one of {METHODS}, got {method!r}")
        self.method = method

    def __str__(self) -> str:
        return f"Convolve2d{{mode={self.mode}, method={self.method}}}"

    def _with_mode(self, mode: str) -> _Convolve:
        return Convolve2d(mode, self.method)

    def _convolve(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        from scipy import signal  # slow to import: only when a convolution runs

        return signal.convolve(a, b, mode=self.mode, method=self.method)


# --- the public functions ------------------------------------------------------------------------


def _at_least(v: Any, ndim: int, name: str, what: str) -> TensorVariable:
    v = as_tensor_variable(v)
    if v.type.ndim < ndim:
        raise ValueError(f"{what}: {name} must have at least {ndim} dimension(s), got {v} of Type {v.type}")
    return v


def convolve1d(in1: Any, in2: Any, mode: ConvMode = "full") -> TensorVariable:
    """The discrete linear convolution of ``in1`` (``(..., N)``) and ``in2`` (``(..., K)``)
    along their last axis, over broadcast leading (batch) dimensions.

    ``mode``: ``"full"`` (length ``N + K - 1``), ``"valid"`` (``max(N, K) - min(N, K) + 1``,
    no zero padding) or ``"same"`` (length ``N``, centred on the full result), as
    ``scipy.signal.convolve``.

    >>> import numpy as np
    >>> import arignote.tensor as pt
    >>> x = pt.dmatrix("x")
    >>> y = convolve1d(x, np.array([1.0, -1.0]), mode="valid")
    >>> y.eval({x: np.array([[1.0, 4.0, 9.0], [0.0, 1.0, 0.0]])})
    array([[ 3.,  5.],
           [ 1., -1.]])
    """
    _check_mode(mode, "convolve1d")
    in1 = _at_least(in1, 1, "in1", "convolve1d")
    in2 = _at_least(in2, 1, "in2", "convolve1d")
    return blockwise_apply(Convolve1d(mode), in1, in2)


def _is_zero(value: Any) -> bool:
    if isinstance(value, Constant):
        value = value.data
    if isinstance(value, Variable):
        return False
    return bool(np.all(np.asarray(value) == 0))


def convolve2d(
    in1: Any,
    in2: Any,
    mode: ConvMode = "full",
    boundary: Literal["fill", "wrap", "symm"] = "fill",
    fillvalue: Any = 0,
    method: Literal["auto", "direct", "fft"] = "auto",
) -> TensorVariable:
    """The discrete linear convolution of ``in1`` (``(..., N, M)``) and ``in2``
    (``(..., K, L)``) over their last two axes, over broadcast leading (batch) dimensions,
    as ``scipy.signal.convolve2d``.

    ``mode``: ``"full"``, ``"valid"`` or ``"same"`` (see :func:`convolve1d`, per axis).
    ``boundary``: how ``in1`` is extended beyond its edges in the ``"full"`` and ``"same"``
    modes: ``"fill"`` (with ``fillvalue``, default 0), ``"wrap"`` (periodically) or
    ``"symm"`` (mirrored, edge included). ``method``: ``"direct"``, ``"fft"`` or ``"auto"``
    (SciPy picks the faster).

    >>> import numpy as np
    >>> import arignote.tensor as pt
    >>> img = pt.dmatrix("img")
    >>> blur = np.full((2, 2), 0.25)
    >>> convolve2d(img, blur, mode="valid").eval({img: np.arange(9.0).reshape(3, 3)})
    array([[2., 3.],
           [5., 6.]])
    """
    _check_mode(mode, "convolve2d")
    if boundary not in _BOUNDARIES:
        raise ValueError(f"convolve2d: boundary must be 'fill', 'wrap' or 'symm', got {boundary!r}")
    if method not in METHODS:
        raise ValueError(f"convolve2d: method must be one of {METHODS}, got {method!r}")
    in1 = _at_least(in1, 2, "in1", "convolve2d")
    in2 = _at_least(in2, 2, "in2", "convolve2d")
    if np.ndim(fillvalue) != 0 or (isinstance(fillvalue, Variable) and fillvalue.type.ndim != 0):
        raise ValueError(f"convolve2d: fillvalue must be a scalar, got {fillvalue!r}")
    pad_mode = _BOUNDARIES[boundary]
    if mode != "valid" and not (pad_mode == "constant" and _is_zero(fillvalue)):
        # extend in1 as the boundary says; a "valid" convolution of the result is the answer
        in1 = _extend(in1, in2, mode, pad_mode, fillvalue)
        mode = "valid"
    return blockwise_apply(Convolve2d(mode, method), in1, in2)


def _extend(in1: Variable, in2: Variable, mode: str, pad_mode: str, fillvalue: Any) -> Variable:
    widths: list[tuple[Length, Length]] = [(0, 0)] * (in1.type.ndim - 2)
    for d in (in2.type.ndim - 2, in2.type.ndim - 1):
        k = dim_length(in2, d)
        # "full" sees k - 1 extended values on each side; "same" keeps in1's length
        widths.append((k - 1, k - 1) if mode == "full" else (k // 2, (k - 1) // 2))
    if pad_mode == "constant":
        return pad(in1, widths, mode="constant", constant_values=fillvalue)
    return pad(in1, widths, mode=pad_mode)
