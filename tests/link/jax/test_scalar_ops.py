"""Every scalar op of :mod:`arignote.scalar`, as an Elemwise, under ``jax.jit``: the values,
dtypes and shapes of the reference VM (inputs of several dtypes, special values included)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special as sp

jax = pytest.importorskip("jax")

import arignote  # noqa: E402
import arignote.tensor as pt  # noqa: E402
from arignote.compile.mode import Mode  # noqa: E402
from arignote.scalar import basic, bessel, hypergeometric, incomplete, special  # noqa: E402
from arignote.scalar.op import ScalarOp  # noqa: E402
from arignote.tensor.elemwise import Elemwise  # noqa: E402

REFERENCE = Mode(linker="py", optimizer=None)
JAX_ONLY = Mode(linker="jax", optimizer=None)  # (no rewrite: the op itself runs)


def _instances() -> dict[str, ScalarOp]:
    found: dict[str, ScalarOp] = {}
    for module in (basic, special, bessel, incomplete, hypergeometric):
        for name, value in vars(module).items():
            if isinstance(value, ScalarOp) and not name.startswith("_") and value.name not in found:
                found[value.name] = value
    return found


OPS = _instances()

VALUES = {
    "float64": np.array([0.25, 0.5, 0.75, 1.5, 3.0, -0.5, 0.0]),
    "float32": np.array([0.25, 0.5, 0.75, 1.5, 3.0, -0.5, 0.0], dtype="float32"),
    "float16": np.array([0.25, 0.5, 0.75, 1.5, 3.0, -0.5, 0.0], dtype="float16"),
    "int64": np.array([1, 2, 3, 5, 7, -2, 0]),
    "int8": np.array([1, 2, 3, 5, 7, -2, 0], dtype="int8"),
    "bool": np.array([True, False, True, True, False, True, False]),
}


def _arity(op: ScalarOp) -> int:
    return 2 if op.nin < 0 else op.nin


def _graph(op: ScalarOp, dtypes: tuple[str, ...]):
    ins = [pt.vector(f"x{k}", dtype=d) for k, d in enumerate(dtypes)]
    outs = Elemwise(op)(*ins)
    return ins, outs if isinstance(outs, list) else [outs]


@pytest.mark.parametrize("name", sorted(OPS))
def test_scalar_op_matches_the_reference(name: str) -> None:
    op = OPS[name]
    n = _arity(op)
    checked = 0
    for dtype in ("float64", "float32", "float16", "int64", "int8", "bool"):
        dtypes = (dtype,) * n
        if name == "switch":
            dtypes = ("bool", dtype, dtype)
        try:
            ins, outs = _graph(op, dtypes)
        except (TypeError, ValueError, NotImplementedError):
            continue  # the op is not defined for these dtypes
        values = [VALUES[d] for d in dtypes]
        if name in ("int_div", "mod") and dtype in ("int64", "int8"):
            values[-1] = np.where(values[-1] == 0, 1, values[-1]).astype(dtype)  # (no division by 0)
        with np.errstate(all="ignore"):
            try:
                want = arignote.function(ins, outs, mode=REFERENCE)(*values)
            except (ValueError, ZeroDivisionError, OverflowError):
                continue
            got = arignote.function(ins, outs, mode=JAX_ONLY)(*values)
        for g, w in zip(got, want):
            assert g.dtype == w.dtype, (name, dtype, g.dtype, w.dtype)
            assert g.shape == w.shape
            if w.dtype.kind in "fc":
                rtol = {np.float16: 2e-3, np.float32: 1e-4, np.complex64: 1e-4}.get(w.dtype.type, 1e-9)
                np.testing.assert_allclose(
                    g, w, rtol=rtol, atol=rtol, equal_nan=True, err_msg=f"{name} {dtype}"
                )
            else:
                np.testing.assert_array_equal(g, w, err_msg=f"{name} {dtype}")
        checked += 1
    assert checked, f"{name}: no dtype was checked"


def test_hyp2f1_is_scipys_where_jax_scipys_never_returns() -> None:
    """jax.scipy's hyp2f1 does not return for a or c of 1e15 and more, and gives 0.5 for a
    divergent series: under JAX, hyp2f1 is SciPy's on the host, as its parameter
    derivatives are."""
    a, b, c, z = (pt.dvector(n) for n in "abcz")
    f = arignote.function([a, b, c, z], pt.hyp2f1(a, b, c, z), mode="JAX")
    vals = [
        np.array(v)
        for v in ([1e20, 3.0, 1e5, 2.0], [0.5, 0.5, 0.5, 1.5], [3.0, 1e20, 1e5, 4.0], [0.5, 0.5, -3.0, -0.25])
    ]
    np.testing.assert_allclose(f(*vals), sp.hyp2f1(*vals), rtol=1e-14, equal_nan=True)
