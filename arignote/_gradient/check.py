"""Checking a symbolic gradient numerically: ``verify_grad`` against central finite
differences (``numeric_grad``), raising ``GradientError`` when they disagree."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from arignote._gradient.derivatives import grad
from arignote.tensor.conversion import as_tensor_variable
from arignote.tensor.reductions import sum as tsum
from arignote.tensor.type import TensorType

__all__ = ["GradientError", "numeric_grad", "verify_grad"]


class GradientError(Exception):
    """``verify_grad`` found the symbolic gradient disagreeing with finite differences.

    ``arg``: the input; ``err_pos``: the index of its worst element; ``val1``/``val2``:
    the analytic and numeric gradients there; ``abs_err``/``rel_err``: their differences.
    """

    def __init__(
        self,
        arg: int,
        err_pos: Any,
        shape: tuple,
        val1: Any,
        val2: Any,
        abs_err: Any,
        rel_err: Any,
        abs_tol: float,
        rel_tol: float,
    ):
        super().__init__()
        self.arg, self.err_pos, self.shape = arg, err_pos, shape
        self.val1, self.val2 = val1, val2
        self.abs_err, self.rel_err = abs_err, rel_err
        self.abs_tol, self.rel_tol = abs_tol, rel_tol

    def __str__(self) -> str:
        return (
            f"GradientError: the analytic and the numeric gradient differ for input {self.arg} "
            f"(shape {self.shape}); worst at index {self.err_pos}: analytic {self.val1!r}, numeric "
            f"{self.val2!r}, absolute error {self.abs_err:.3g} (tolerance {self.abs_tol:g}), "
            f"relative error {self.rel_err:.3g} (tolerance {self.rel_tol:g})"
        )


# Central differences: the truncation error is O(eps^2) and the rounding error about
# (machine epsilon x |cost|) / eps; these steps balance the two for each precision.
_TYPE_EPS = {"float64": 1e-6, "float32": 4e-3, "float16": 1e-1}
# An element fails only when both its absolute and its relative error are above these.
_TYPE_TOL = {"float64": 1e-4, "float32": 1e-2, "float16": 5e-2}


class numeric_grad:
    """Central finite-difference gradient of the scalar function ``f`` at the float
    arrays ``pt``: ``gf[i]`` is shaped like ``pt[i]``.

    ``eps`` defaults by the least precise dtype among ``pt``. Each element is moved by
    ``+eps`` and ``-eps`` and divided by the step actually taken (after rounding).
    """

    type_eps = _TYPE_EPS

    def __init__(self, f: Callable, pt: Sequence[np.ndarray], eps: float | None = None):
        arrays = [np.array(p, copy=True) for p in pt]
        for i, a in enumerate(arrays):
            if a.dtype.name not in self.type_eps:
                raise TypeError(
                    f"numeric_grad: input {i} has dtype {a.dtype}; only real float inputs can be moved"
                )
        if eps is None:
            eps = max(self.type_eps[a.dtype.name] for a in arrays)
        self.eps = eps
        self.gf = []
        for a in arrays:
            g = np.zeros(a.shape, dtype="float64")
            flat = a.reshape(-1)  # a view: moving flat[j] moves a
            gflat = g.reshape(-1)
            for j in range(flat.size):
                orig = flat[j]
                flat[j] = orig + eps
                hi = float(flat[j])
                f_hi = float(np.asarray(f(*arrays), dtype="float64"))
                flat[j] = orig - eps
                lo = float(flat[j])
                f_lo = float(np.asarray(f(*arrays), dtype="float64"))
                flat[j] = orig
                gflat[j] = (f_hi - f_lo) / (hi - lo)
            self.gf.append(g)

    @staticmethod
    def abs_rel_err(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Absolute and relative differences of ``a`` and ``b`` (relative to the larger)."""
        a = np.asarray(a, dtype="float64")
        b = np.asarray(b, dtype="float64")
        abs_err = np.abs(a - b)
        scale = np.maximum(np.abs(a), np.abs(b))
        with np.errstate(divide="ignore", invalid="ignore"):
            rel_err = np.where(scale > 0, abs_err / np.where(scale > 0, scale, 1.0), 0.0)
        return abs_err, rel_err

    def worst(
        self, analytic: Sequence[np.ndarray], abs_tol: float, rel_tol: float
    ) -> tuple[float, int, tuple, float, float, float, float] | None:
        """The element that fails by the largest margin: ``(margin, input, index, analytic,
        numeric, abs_err, rel_err)``, or ``None`` if none fails."""
        best = None
        for i, (a, n) in enumerate(zip(analytic, self.gf)):
            a = np.asarray(a, dtype="float64").reshape(n.shape)
            abs_err, rel_err = self.abs_rel_err(a, n)
            bad = ~((abs_err <= abs_tol) | (rel_err <= rel_tol))  # NaN fails too
            if not bad.any():
                continue
            margin = np.where(bad, np.fmin(abs_err / abs_tol, rel_err / rel_tol), -1.0)
            margin = np.where(np.isnan(margin) & bad, np.inf, margin)
            flat = int(np.argmax(margin))
            pos = np.unravel_index(flat, n.shape)
            m = float(margin.reshape(-1)[flat])
            if best is None or m > best[0]:
                best = (
                    m,
                    i,
                    tuple(int(p) for p in pos),
                    float(a[pos]),
                    float(n[pos]),
                    float(abs_err[pos]),
                    float(rel_err[pos]),
                )
        return best


def verify_grad(
    fun: Callable,
    pt: Sequence[Any],
    n_tests: int = 2,
    rng: Any = None,
    eps: float | None = None,
    out_type: str | None = None,
    abs_tol: float | None = None,
    rel_tol: float | None = None,
    mode: Any = None,
    cast_to_output_type: bool = False,
    no_debug_ref: bool = True,
) -> None:
    """Check the symbolic gradient of ``fun`` at the point ``pt`` against central finite
    differences; raise :class:`GradientError` (naming the worst element) if they differ.

    ``fun`` takes one symbolic tensor per array of ``pt`` and returns one tensor. The
    cost checked is ``sum(fun(*pt) * r)`` for a random projection ``r`` (``n_tests``
    different ones, drawn from ``rng``). ``eps`` and the tolerances default by dtype
    (float64: 1e-6 and 1e-4, float32: 4e-3 and 1e-2); an element fails when its absolute
    error is above ``abs_tol`` and its relative error above ``rel_tol``. ``mode`` is
    passed to ``function``. ``out_type``, ``cast_to_output_type`` and ``no_debug_ref`` are
    accepted for PyTensor compatibility.
    """
    from arignote.compile.function import function

    if not isinstance(pt, (list, tuple)):
        raise TypeError(f"verify_grad: pt must be a list of arrays, got {type(pt).__name__}")
    arrays = [np.array(p) for p in pt]
    for i, a in enumerate(arrays):
        if a.dtype.name not in _TYPE_EPS:
            raise TypeError(
                f"verify_grad: input {i} has dtype {a.dtype}; only real float inputs can be checked "
                "(give float arrays)"
            )
    if rng is None:
        rng = np.random.default_rng(20240917)
    symbolic = [
        TensorType(a.dtype.name, tuple(1 if s == 1 else None for s in a.shape))(f"input {i}")
        for i, a in enumerate(arrays)
    ]
    out = fun(*symbolic)
    if isinstance(out, (list, tuple)):
        if len(out) != 1:
            raise TypeError(f"verify_grad: fun must return one tensor, got {len(out)}")
        (out,) = out
    out = as_tensor_variable(out)
    if np.dtype(out.type.dtype).kind not in "f":
        raise TypeError(f"verify_grad: fun returned {out.type}; its output must be a real float tensor")
    dtypes = [a.dtype.name for a in arrays] + [out.type.dtype]
    if eps is None:
        eps = max(_TYPE_EPS.get(d, 1e-6) for d in dtypes)
    if abs_tol is None:
        abs_tol = max(_TYPE_TOL.get(d, 1e-4) for d in dtypes)
    if rel_tol is None:
        rel_tol = max(_TYPE_TOL.get(d, 1e-4) for d in dtypes)
    out_fn = function(symbolic, out, mode=mode, on_unused_input="ignore")
    out_shape = np.shape(out_fn(*arrays))
    proj = TensorType(out.type.dtype, tuple(1 if s == 1 else None for s in out_shape))("random_projection")
    cost = tsum(out * proj)
    cost_fn = function([*symbolic, proj], cost, mode=mode, on_unused_input="ignore")
    grads = grad(cost, symbolic, disconnected_inputs="ignore")
    grad_fn = function([*symbolic, proj], grads, mode=mode, on_unused_input="ignore")
    for _ in range(n_tests):
        r = np.asarray(rng.uniform(0.5, 1.5, size=out_shape), dtype=out.type.dtype)
        analytic = grad_fn(*arrays, r)
        numeric = numeric_grad(lambda *xs, r=r: cost_fn(*xs, r), arrays, eps)
        worst = numeric.worst(analytic, abs_tol, rel_tol)
        if worst is not None:
            _, i, pos, a_val, n_val, abs_err, rel_err = worst
            raise GradientError(i, pos, arrays[i].shape, a_val, n_val, abs_err, rel_err, abs_tol, rel_tol)
