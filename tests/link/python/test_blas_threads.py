"""The BLAS thread limit of compiled functions' matrix products: each library's count
(NumPy's, SciPy's) is lowered for a large product only while it runs and restored after to
its own value (once, for nested calls), small products and an unlimited setting leave it
alone, and bad settings raise."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

import arignote
import arignote.tensor as pt
from arignote.compile.mode import Mode
from arignote.link.numba import NumbaLinker
from arignote.link.python import blas_threads as bt


class _FakeBlas:
    """A BLAS thread count that records what is set."""

    def __init__(self, count: int):
        self.count = count
        self.sets: list[int] = []

    def set(self, n: int) -> None:
        self.sets.append(n)
        self.count = n

    def get(self) -> int:
        return self.count


@pytest.fixture
def fake(monkeypatch):
    blas = _FakeBlas(4)
    monkeypatch.setattr(bt, "_controls", [(blas.set, blas.get)])
    monkeypatch.setattr(bt, "_with_scipy", True)
    monkeypatch.setattr(bt, "_limit", 1)
    return blas


def test_each_library_is_lowered_and_restored_to_its_own_count(monkeypatch):
    numpy_lib, scipy_lib = _FakeBlas(4), _FakeBlas(2)
    monkeypatch.setattr(bt, "_controls", [(numpy_lib.set, numpy_lib.get), (scipy_lib.set, scipy_lib.get)])
    monkeypatch.setattr(bt, "_with_scipy", True)
    monkeypatch.setattr(bt, "_limit", 2)
    assert bt.limited_call(lambda: (numpy_lib.count, scipy_lib.count)) == (2, 2)
    assert numpy_lib.sets == [2, 4] and numpy_lib.count == 4
    assert scipy_lib.sets == []  # (already at the limit)


def test_limited_call_lowers_the_count_only_meanwhile_and_restores_it_once(fake):
    seen = []

    def inner():
        seen.append(fake.count)
        return bt.limited_call(lambda: seen.append(fake.count) or "done")

    assert bt.limited_call(inner) == "done"
    assert seen == [1, 1] and fake.sets == [1, 4] and fake.count == 4


def test_an_exception_restores_the_count(fake):
    with pytest.raises(ZeroDivisionError):
        bt.limited_call(lambda: 1 / 0)
    assert fake.count == 4 and bt._depth == 0


def test_no_limit_or_a_count_already_low_sets_nothing(fake, monkeypatch):
    monkeypatch.setattr(bt, "_limit", None)
    bt.limited_call(lambda: None)
    monkeypatch.setattr(bt, "_limit", 8)
    bt.limited_call(lambda: None)
    assert fake.sets == []


def test_the_product_thunks_run_large_products_under_the_limit(fake):
    x, y = pt.matrices("x", "y")
    v = pt.vector("v")
    f = arignote.function(
        [x, y, v], [pt.dot(x, y), pt.dot(x, v)], mode=Mode(NumbaLinker(jit="never"), "fast_run")
    )
    rng = np.random.default_rng(0)
    small = rng.normal(size=(8, 8)), rng.normal(size=(8, 8)), rng.normal(size=8)
    for got, want in zip(f(*small), [small[0] @ small[1], small[0] @ small[2]]):
        np.testing.assert_allclose(got, want, rtol=1e-12)
    assert fake.sets == []  # (512 multiply-adds: under THREADED_WORK)
    big = rng.normal(size=(64, 64)), rng.normal(size=(64, 64)), rng.normal(size=64)
    for got, want in zip(f(*big), [big[0] @ big[1], big[0] @ big[2]]):
        np.testing.assert_allclose(got, want, rtol=1e-12)
    assert fake.sets == [1, 4]  # the matrix product (64**3); the 64x64 gemv is under


@pytest.mark.parametrize("library", ["numpy", "scipy"])
def test_the_real_library_count_is_restored(library):
    if library == "scipy":
        import scipy.linalg.blas  # noqa: F401  (its library is controlled once loaded)
    control = bt.numpy_blas_thread_control() if library == "numpy" else bt.blas_thread_control()
    if control is None:
        pytest.skip(f"{library}'s BLAS is not an OpenBLAS with a thread count")
    addresses = {ctypes.cast(c[0], ctypes.c_void_p).value for c in bt.blas_thread_controls()}
    assert ctypes.cast(control[0], ctypes.c_void_p).value in addresses
    setter, getter = control
    before = getter()
    saved_limit = bt.blas_thread_limit()
    try:
        setter(2)
        bt.set_blas_thread_limit(1)
        assert bt.limited_call(getter) == 1
        assert getter() == 2
    finally:
        setter(before)
        bt.set_blas_thread_limit(saved_limit)


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "2"])
def test_a_bad_limit_raises(bad):
    with pytest.raises(ValueError, match="positive int or None"):
        bt.set_blas_thread_limit(bad)


@pytest.mark.parametrize(
    ("raw", "want"), [("3", 3), ("0", None), (" 1 ", 1), ("two", "whole number"), ("-2", "0 or more")]
)
def test_the_environment_variable(monkeypatch, raw, want):
    monkeypatch.setenv("ARIGNOTE_BLAS_THREADS", raw)
    if isinstance(want, str):
        with pytest.raises(ValueError, match=want):
            bt._default_limit()
    else:
        assert bt._default_limit() == want


def test_the_default_is_no_limit(monkeypatch):
    # (on a quiet 2-core machine the library's own 2 threads made an MLP step 3.3 ms, 1 made it 5.5)
    monkeypatch.delenv("ARIGNOTE_BLAS_THREADS", raising=False)
    assert bt._default_limit() is None
