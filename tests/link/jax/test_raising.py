"""The JAX backend checks ``Assert``/``CheckAndRaise`` conditions when the function runs."""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")

import arignote  # noqa: E402
import arignote.tensor as pt  # noqa: E402
from arignote.raise_op import Assert, CheckAndRaise  # noqa: E402


def test_assert_in_jax():
    x = pt.dvector("x")
    y = Assert("x must be positive")(x, pt.all(x > 0)) * 2.0
    f = arignote.function([x], y, mode="JAX")
    np.testing.assert_array_equal(f(np.array([1.0, 2.0])), [2.0, 4.0])
    with pytest.raises(Exception, match="x must be positive"):
        f(np.array([-1.0]))
    g = arignote.function([x], CheckAndRaise(ValueError, "never")(x), mode="JAX")  # no condition
    np.testing.assert_array_equal(g(np.ones(2)), np.ones(2))
