"""mode='JAX' runs rfft / irfft (and their gradients) as the reference VM does."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("jax")

import arignote
import arignote.tensor as pt
from arignote.tensor.fft import irfft, rfft


@pytest.mark.parametrize("n", [6, 5])
def test_fft_under_jax_matches_the_reference_vm(n):
    x = pt.dtensor3("x")
    v = np.random.default_rng(0).normal(size=(2, 3, n))
    spectrum = rfft(x, norm="ortho")
    back = irfft(rfft(x), is_odd=n % 2 == 1)
    cost = (spectrum**2).sum() + (back * x).sum()
    outs = [spectrum, back, arignote.grad(cost, x)]
    got = arignote.function([x], outs, mode="JAX")(v)
    want = arignote.function([x], outs, mode="FAST_COMPILE")(v)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(got[1], v, atol=1e-12)


def test_a_spectrum_without_its_two_parts_is_refused_under_jax() -> None:
    z = pt.dtensor3("z")
    f = arignote.function([z], irfft(z), mode="JAX")
    with pytest.raises(ValueError, match="real and imaginary parts"):
        f(np.zeros((1, 3, 3)))
