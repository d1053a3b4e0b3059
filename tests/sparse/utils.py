"""Shared checks for the sparse tests: random matrices and gradients by finite differences.

A gradient with respect to a sparse input is checked at its stored entries (perturbing
``value.data``); a *regular* gradient is also checked at the other entries (adding the
entry), a *structured* one must be zero there.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp

import arignote
from arignote.compile.mode import Mode

HAS_JAX = importlib.util.find_spec("jax") is not None

#: the modes every compiled result is compared across: FAST_RUN, FAST_COMPILE, the
#: reference VM without rewrites, and the JAX backend where JAX is installed
MODES = ("FAST_RUN", "FAST_COMPILE", Mode(linker="vm", optimizer=None), *(("JAX",) if HAS_JAX else ()))


def random_sparse(
    fmt: str, shape: tuple[int, int], seed: int, density: float = 0.5, dtype: str = "float64"
) -> Any:
    """A random CSR/CSC matrix with no stored zeros (values in [0.5, 1.5] with random signs)."""
    rng = np.random.default_rng(seed)
    mask = rng.random(shape) < density
    values = rng.uniform(0.5, 1.5, size=shape) * rng.choice([-1.0, 1.0], size=shape)
    return sp.csr_matrix(np.where(mask, values, 0.0).astype(dtype)).asformat(fmt)


def as_dense(v: Any) -> np.ndarray:
    return v.toarray() if sp.issparse(v) else np.asarray(v)


def _perturbed(value: Any, pos: Any, delta: float) -> Any:
    if not sp.issparse(value):
        out = np.array(value, dtype="float64")
        out[pos] += delta
        return out
    if isinstance(pos, int):  # a stored entry, by storage position
        out = value.copy()
        out.data = out.data.astype("float64")
        out.data[pos] += delta
        return out
    dense = value.toarray().astype("float64")  # an entry not stored: store it
    dense[pos] += delta
    return sp.csr_matrix(dense).asformat(value.format)


def numeric_grad(
    f: Callable, values: Sequence[Any], k: int, structured_only: bool, eps: float = 1e-6
) -> np.ndarray:
    """Central differences of the scalar ``f(*values)`` with respect to ``values[k]``, as a
    dense array; for a sparse value, at its stored entries only when ``structured_only``
    (NaN elsewhere)."""
    value = values[k]

    def at(v: Any) -> float:
        args = list(values)
        args[k] = v
        return float(f(*args))

    out = np.full(np.shape(as_dense(value)), np.nan)
    if sp.issparse(value):
        stored = set()
        rows, cols = _coordinates(value)
        for n, (i, j) in enumerate(zip(rows, cols)):
            out[i, j] = (at(_perturbed(value, n, eps)) - at(_perturbed(value, n, -eps))) / (2 * eps)
            stored.add((i, j))
        if not structured_only:
            for pos in np.ndindex(out.shape):
                if pos not in stored:
                    out[pos] = (at(_perturbed(value, pos, eps)) - at(_perturbed(value, pos, -eps))) / (
                        2 * eps
                    )
        return out
    for pos in np.ndindex(out.shape):
        out[pos] = (at(_perturbed(value, pos, eps)) - at(_perturbed(value, pos, -eps))) / (2 * eps)
    return out


def _coordinates(value: Any) -> tuple[np.ndarray, np.ndarray]:
    major = np.repeat(np.arange(len(value.indptr) - 1), np.diff(value.indptr))
    return (major, value.indices) if value.format == "csr" else (value.indices, major)


def check_grads(
    inputs: Sequence[Any],
    cost: Any,
    values: Sequence[Any],
    structured: Sequence[bool | None],
    rtol: float = 1e-5,
) -> list[Any]:
    """``grad(cost, inputs)`` agrees with finite differences of ``cost`` (NumPy values of a
    compiled function) in every mode; ``structured[k]`` says how input ``k``'s gradient is
    checked: ``False`` (regular) at every entry, ``True`` (structured) at the stored entries
    and zero elsewhere, ``None`` at the stored entries only. Returns the gradients."""
    grads = arignote.grad(cost, list(inputs))
    f_cost = arignote.function(list(inputs), cost)
    results = None
    for mode in MODES:
        f = arignote.function(list(inputs), grads, mode=mode)
        got = f(*values)
        if results is None:
            results = got
        for k, g in enumerate(got):
            assert sp.issparse(g) == sp.issparse(results[k])
            np.testing.assert_allclose(as_dense(g), as_dense(results[k]), rtol=1e-12, atol=1e-12)
    for k, value in enumerate(values):
        expected = numeric_grad(f_cost, values, k, structured_only=structured[k] is not False)
        got = as_dense(results[k])
        known = ~np.isnan(expected)
        np.testing.assert_allclose(got[known], expected[known], rtol=rtol, atol=1e-6, err_msg=f"input {k}")
        if structured[k] is True and sp.issparse(value):
            stored = np.zeros(got.shape, dtype=bool)
            stored[_coordinates(value)] = True
            assert not got[~stored].any(), f"input {k}: a structured gradient outside the stored entries"
    return results
