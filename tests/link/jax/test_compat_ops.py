"""The JAX backend runs the LU factorisations, lstsq and the ``compile.ops`` Ops as the
reference VM does."""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")

import arignote  # noqa: E402
import arignote.tensor as pt  # noqa: E402
from arignote.compile.ops import as_op, deep_copy_op  # noqa: E402
from arignote.tensor import linalg  # noqa: E402

RNG = np.random.default_rng(11)


def _both(inputs, outputs, *values):
    ref = arignote.function(inputs, outputs, mode="FAST_COMPILE")(*values)
    got = arignote.function(inputs, outputs, mode="JAX")(*values)
    return ref, got


def test_lu_family_in_jax():
    a = pt.dmatrix("a")
    b = pt.dvector("b")
    value, rhs = RNG.normal(size=(4, 4)), RNG.normal(size=4)
    lu_, piv = linalg.lu_factor(a)
    outs = [
        *linalg.lu(a),
        *linalg.lu(a, permute_l=True),
        *linalg.lu(a, p_indices=True),
        lu_,
        piv,
        linalg.pivot_to_permutation(piv, inverse=True),
        linalg.lu_solve((lu_, piv), b),
    ]
    ref, got = _both([a, b], outs, value, rhs)
    for r, g in zip(ref, got):
        np.testing.assert_allclose(np.asarray(g), r, atol=1e-12)
        assert np.asarray(g).dtype == r.dtype


@pytest.mark.parametrize("shape", [(5, 3), (3, 5)])
def test_lstsq_in_jax(shape):
    a, b = pt.dmatrix("a"), pt.dvector("b")
    values = RNG.normal(size=shape), RNG.normal(size=shape[0])
    ref, got = _both([a, b], linalg.lstsq(a, b), *values)
    for r, g in zip(ref, got):
        np.testing.assert_allclose(np.asarray(g), r, atol=1e-10)


def test_python_function_ops_in_jax():
    @as_op(itypes=[pt.dvector], otypes=[pt.dvector], infer_shape=lambda fgraph, node, shapes: [shapes[0]])
    def host_sort(v):
        return np.sort(v)

    x = pt.dvector("x")
    value = np.array([3.0, 1.0, 2.0])
    ref, got = _both([x], [host_sort(x) * 2.0, deep_copy_op(x)], value)
    for r, g in zip(ref, got):
        np.testing.assert_allclose(np.asarray(g), r)

    @as_op(itypes=[pt.dvector], otypes=[pt.dvector])
    def no_shape(v):
        return np.sort(v)

    with pytest.raises(Exception, match="give as_op an infer_shape"):
        arignote.function([x], no_shape(x), mode="JAX")(value)
