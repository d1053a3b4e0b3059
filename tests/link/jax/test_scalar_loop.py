"""The JAX backend runs ``Elemwise(ScalarLoop)`` (one ``lax.while_loop``) as the reference VM does."""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")

import arignote  # noqa: E402
import arignote.tensor as pt  # noqa: E402
from arignote.scalar import ScalarLoop  # noqa: E402
from arignote.scalar.basic import add, float64, ge, int64, mul, true_div  # noqa: E402
from arignote.tensor.elemwise import Elemwise  # noqa: E402


def test_for_and_while_loops_in_jax():
    x, a, k = float64("x"), float64("a"), int64("k")
    power = ScalarLoop(init=[x], update=[mul(x, a)], constant=[a])
    half = true_div(x, 2.0)
    halving = ScalarLoop(init=[x, k], update=[half, add(k, 1)], until=~ge(half, 1.0))
    n, xs, ks = pt.lvector("n"), pt.dvector("xs"), pt.lvector("ks")
    outs = [Elemwise(power)(n, xs, xs), *Elemwise(halving)(n, xs, ks)]
    values = (np.array([0, 3, 100, 2]), np.array([1.5, 0.9, 20.0, 20.0]), np.zeros(4, "int64"))
    ref = arignote.function([n, xs, ks], outs, mode="FAST_COMPILE")(*values)
    got = arignote.function([n, xs, ks], outs, mode="JAX")(*values)
    for r, g in zip(ref, got):
        assert r.dtype == g.dtype
        np.testing.assert_allclose(g, r, rtol=1e-12)
    with pytest.raises(Exception, match="n_steps is negative"):
        arignote.function([n, xs], outs[0], mode="JAX")(np.array([-1]), np.array([1.0]))
