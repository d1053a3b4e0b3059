"""NumPy/SciPy as the oracle for scalar ops: edge values per dtype, references, comparison.

``check_op(op, reference, dtypes)`` builds the op on scalar Variables of ``dtypes`` (skipping
combinations it refuses with ``TypeError``), runs ``impl`` on arrays of edge values (the
inputs broadcast against each other: an outer product), compares with ``reference`` computed
in float64/complex128 (or natively, for discrete outputs) and cast to the output dtype, checks
the result dtype is the output Type's, then checks ``impl`` on NumPy scalars and ``.eval()``
on the scalar graph agree with the array result.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence

import numpy as np

from arignote.scalar.type import all_types, discrete_types, get_scalar_type

ALL_DTYPES = list(all_types)
REAL_DTYPES = [d for d in ALL_DTYPES if not d.startswith("complex")]
FLOAT_EDGES = [
    0.0,
    -0.0,
    0.25,
    0.5,
    -0.5,
    1.0,
    -1.0,
    1.5,
    -1.5,
    2.5,
    -2.5,
    3.0,
    7.0,
    -7.0,
    10.0,
    -10.0,
    100.0,
    -100.0,
    1e-30,
    1e30,
    np.inf,
    -np.inf,
    np.nan,
]
INT_EDGES = [0, 1, 2, 3, 7, -1, -2, -7, 100, -100, 127, -128]
COMPLEX_EDGES = [0, 1 + 1j, -0.5 + 2j, 3 - 1j, 1j, -2, 0.5, -1j]

RTOL = {"float16": 2e-3, "float32": 1e-5, "complex64": 1e-5, "float64": 1e-12, "complex128": 1e-12}


def edge_values(dtype: str, positive: bool = False) -> np.ndarray:
    """Edge points representable in ``dtype`` (all of them: no rounding of the inputs)."""
    if dtype == "bool":
        values = np.array([False, True])
    elif dtype.startswith("complex"):
        values = np.array(COMPLEX_EDGES, dtype=dtype)
    elif dtype.startswith("float"):
        with np.errstate(over="ignore"):
            values = np.array(FLOAT_EDGES).astype(dtype)
    else:
        info = np.iinfo(dtype)
        ints = [v for v in [*INT_EDGES, int(info.max), int(info.min)] if info.min <= v <= info.max]
        values = np.array(sorted(set(ints)), dtype=dtype)
    if positive:
        values = values[np.real(values) > 0] if values.dtype.kind != "b" else values[values]
    return values


def _wide(dtypes: Sequence[str], out: str) -> str:
    return "complex128" if any(d.startswith("complex") for d in (*dtypes, out)) else "float64"


def reference_values(
    reference: Callable, args: Sequence[np.ndarray], out: str, native: bool = False
) -> np.ndarray:
    """``reference(*args)`` as the op's output dtype: computed natively for discrete outputs
    (integer wrap-around included) or when ``native``, else in float64/complex128."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        if native or out in discrete_types:
            result = reference(*args)
        else:
            wide = _wide([a.dtype.name for a in args], out)
            result = reference(*(a.astype(wide) for a in args))
        return np.asarray(result).astype(out)


def assert_values(got, expected: np.ndarray, out: str, what: str = "") -> None:
    got = np.asarray(got)
    assert got.dtype == out, f"{what}: dtype {got.dtype}, expected {out}"
    assert got.shape == expected.shape, f"{what}: shape {got.shape}, expected {expected.shape}"
    if out in discrete_types:
        np.testing.assert_array_equal(got, expected, err_msg=what)
    else:
        wide = "complex128" if out.startswith("complex") else "float64"
        # below the smallest normal number, flushing to zero or not is the platform's business
        atol = float(np.finfo(out).tiny)
        np.testing.assert_allclose(
            got.astype(wide), expected.astype(wide), rtol=RTOL[out], atol=atol, equal_nan=True, err_msg=what
        )


def grid(values: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Each input on its own axis, so that the op broadcasts them into an outer product."""
    n = len(values)
    return [v.reshape([-1 if k == i else 1 for k in range(n)]) for i, v in enumerate(values)]


def check_op(
    op,
    reference: Callable,
    dtypes: Sequence[str],
    values: Sequence[np.ndarray] | None = None,
    keep: Callable | None = None,
    native: bool = False,
    n_eval: int = 3,
) -> bool:
    """Check ``op`` on inputs of ``dtypes`` against ``reference``; False if the op refuses
    these dtypes (TypeError when building the node).

    ``keep(*broadcast_inputs)`` masks out the points not to compare (outside what the op
    promises, e.g. integer division by zero): those points are not fed to the op at all.
    """
    try:
        node = op(*(get_scalar_type(d)() for d in dtypes)).owner
    except TypeError:
        return False
    out = node.outputs[0].type.dtype
    if values is None:
        values = [edge_values(d) for d in dtypes]
    args = grid(values)
    shape = np.broadcast_shapes(*(a.shape for a in args))
    if keep is not None:
        with np.errstate(all="ignore"):
            mask = np.broadcast_to(keep(*args), shape)
        flat = [np.broadcast_to(a, shape)[mask] for a in args]
    else:
        flat = None
    what = f"{op}({', '.join(dtypes)}) -> {out}"
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        if flat is None:
            got = node.op.impl(*args)
            expected = reference_values(reference, args, out, native)
            points = [np.broadcast_to(a, shape).ravel() for a in args]
            got_flat = np.asarray(got).ravel()
        else:
            got = node.op.impl(*flat)
            expected = reference_values(reference, flat, out, native)
            points, got_flat = flat, np.asarray(got)
        assert_values(got, expected, out, what)
        # NumPy scalars, and the scalar graph through eval, agree with the array result
        n = len(got_flat)
        inputs = node.inputs
        for k in sorted({0, n // 2, n - 1, *range(0, n, max(1, n // max(1, n_eval)))})[: n_eval + 2]:
            scalars = [p[k] for p in points]
            one = node.op.impl(*scalars)
            assert_values(one, got_flat[k], out, f"{what} impl on scalars {scalars}")
            value = node.outputs[0].eval(dict(zip(inputs, scalars)))
            assert isinstance(value, np.generic), f"{what}: eval gave {type(value)}"
            assert_values(value, got_flat[k], out, f"{what} eval on {scalars}")
    return True
