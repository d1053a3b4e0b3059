"""rfft / irfft (tensor/fft.py) against numpy.fft, with gradients by finite differences."""

from __future__ import annotations

import numpy as np
import pytest

import arignote
import arignote.tensor as pt
from arignote.gradient import verify_grad
from arignote.tensor.fft import IRFFTOp, RFFTOp, irfft, irfft_op, rfft, rfft_op


def _complex(a: np.ndarray) -> np.ndarray:
    return a[..., 0] + 1j * a[..., 1]


@pytest.mark.parametrize("shape", [(3, 8), (2, 7), (2, 4, 5)])
@pytest.mark.parametrize("norm", [None, "ortho", "no_norm"])
def test_rfft_matches_numpy_and_irfft_inverts_it(shape, norm):
    rng = np.random.default_rng(0)
    v = rng.normal(size=shape)
    x = pt.tensor("x", dtype="float64", shape=(None,) * len(shape))
    axes = tuple(range(1, len(shape)))
    f = arignote.function(
        [x], [rfft(x, norm=norm), irfft(rfft(x, norm=norm), norm=norm, is_odd=shape[-1] % 2 == 1)]
    )
    spectrum, back = f(v)
    numpy_norm = "ortho" if norm == "ortho" else "backward"
    assert spectrum.shape == (*shape[:-1], shape[-1] // 2 + 1, 2)
    np.testing.assert_allclose(_complex(spectrum), np.fft.rfftn(v, axes=axes, norm=numpy_norm), atol=1e-12)
    if norm == "no_norm":  # unscaled both ways: the round trip is scaled by the size
        back = back / np.prod(shape[1:])
    np.testing.assert_allclose(back, v, atol=1e-12)


def test_irfft_matches_numpy_and_keeps_float32():
    rng = np.random.default_rng(1)
    spec = rng.normal(size=(2, 5, 2)).astype("float32")
    z = pt.tensor("z", dtype="float32", shape=(None, None, 2))
    even, odd = arignote.function([z], [irfft(z), irfft(z, is_odd=True)])(spec)
    assert even.dtype == odd.dtype == np.float32 and even.shape == (2, 8) and odd.shape == (2, 9)
    np.testing.assert_allclose(even, np.fft.irfft(_complex(spec), n=8), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(odd, np.fft.irfft(_complex(spec), n=9), rtol=1e-5, atol=1e-6)


def test_the_ops_infer_their_shapes_and_take_explicit_lengths():
    x = pt.dmatrix("x")
    v = np.arange(12.0).reshape(2, 6)
    assert tuple(arignote.function([x], rfft(x).shape)(v)) == (2, 4, 2)
    # explicit lengths zero-pad (or crop) as numpy.fft does
    padded = rfft_op(x, np.array([8], dtype="int64")).eval({x: v})
    np.testing.assert_allclose(_complex(padded), np.fft.rfft(v, n=8), atol=1e-12)
    z = pt.dtensor3("z")
    back = irfft_op(z, np.array([6], dtype="int64")).eval({z: rfft(x).eval({x: v})})
    np.testing.assert_allclose(back / 6, v, atol=1e-12)
    assert isinstance(rfft(x).owner.op, RFFTOp) and isinstance(irfft_op(pt.dtensor3("w")).owner.op, IRFFTOp)


@pytest.mark.parametrize("n", [6, 5])
def test_gradients_by_finite_differences(n):
    rng = np.random.default_rng(2)
    verify_grad(lambda a: rfft(a), [rng.normal(size=(2, n))], rng=rng)
    verify_grad(lambda a: rfft(a, norm="ortho"), [rng.normal(size=(2, 3, n))], rng=rng)
    verify_grad(lambda a: irfft(a, is_odd=n % 2 == 1), [rng.normal(size=(2, n // 2 + 1, 2))], rng=rng)


def test_bad_input_is_refused_clearly():
    with pytest.raises(TypeError, match="at least 2 dimensions"):
        rfft(pt.dvector("v"))
    with pytest.raises(TypeError, match="real floats"):
        rfft(pt.lmatrix("m"))
    with pytest.raises(TypeError, match="at least 3 dimensions"):
        irfft(pt.dmatrix("m"))
    with pytest.raises(ValueError, match="norm"):
        rfft(pt.dmatrix("m"), norm="forward")
    with pytest.raises(ValueError, match="is_odd"):
        irfft(pt.dtensor3("t"), is_odd=1.5)
    with pytest.raises(TypeError, match="vector of integers"):
        rfft_op(pt.dmatrix("m"), pt.dvector("s"))
    with pytest.raises(ValueError, match="must have 1 lengths"):
        rfft_op(pt.dmatrix("m"), np.array([4, 4], dtype="int64"))
    z = pt.dtensor3("z")
    with pytest.raises(ValueError, match="real and imaginary parts"):
        irfft(z).eval({z: np.zeros((1, 3, 3))})
