"""The loop on NumPy scalars (arignote/scan/scalar_loop.py): used when every value of the
step is 0-d, and bit for bit the general loop's results (dtypes kept, integer wrap-around,
NaN, inf), with the general loop's errors (the node, the step) when a step raises."""

from __future__ import annotations

import numpy as np
import pytest

import arignote
import arignote.tensor as pt
from arignote import config
from arignote.scan.loop import loop_for
from arignote.scan.op import Scan
from arignote.scan.utils import until


@pytest.fixture
def fast_run_default():
    """The loop on scalars is tier 1's: its tests make FAST_RUN the default mode (of the
    outer function and of the scan's inner one), so that they run under every run mode."""
    with config.change_flags(mode="FAST_RUN"):
        yield


tier1 = pytest.mark.usefixtures("fast_run_default")


def scans(f):
    return [n.op for n in f.maker.fgraph.apply_nodes if isinstance(n.op, Scan)]


def run_both(build, args, monkeypatch):
    """The compiled function's outputs with the loop on scalars, and without it (the general
    loop), each from a new graph; plus whether the first used it."""
    fast = arignote.function(*build())
    general = []
    with monkeypatch.context() as m:  # (the general loop, if it runs, says so)
        m.setattr("arignote.scan.op.loop_for", lambda plan: general.append(plan) or loop_for(plan))
        got = fast(*args)
    used = [op.scalar_loop() is not None for op in scans(fast)]
    assert not (all(used) and general), "the loop on scalars handed over without an error"
    with monkeypatch.context() as m:
        m.setattr(Scan, "scalar_loop", lambda self: None)
        ref = arignote.function(*build())(*args)
    return got, ref, used


def assert_same_bits(got, ref):
    got = got if isinstance(got, list) else [got]
    ref = ref if isinstance(ref, list) else [ref]
    assert len(got) == len(ref)
    for a, b in zip(got, ref):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a.view(f"u{a.dtype.itemsize}"), b.view(f"u{b.dtype.itemsize}"))


def affine(dtype, n=50):
    def build():
        x0, a = pt.scalar("x0", dtype=dtype), pt.scalar("a", dtype=dtype)
        xs, _ = arignote.scan(
            lambda x, a: x * a + pt.cast(1.0, dtype), outputs_info=[x0], non_sequences=[a], n_steps=n
        )
        return [x0, a], xs

    return build


@tier1
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_affine_recurrence_bit_identical_and_dtype_kept(dtype, monkeypatch):
    args = [np.asarray(0.3, dtype), np.asarray(1.0001, dtype)]
    got, ref, used = run_both(affine(dtype), args, monkeypatch)
    assert used == [True]
    assert got.dtype == np.dtype(dtype)
    assert_same_bits(got, ref)
    x, expected = np.asarray(0.3, dtype)[()], []
    for _ in range(50):
        x = x * np.asarray(1.0001, dtype)[()] + np.asarray(1.0, dtype)[()]
        expected.append(x)
    assert_same_bits(got, np.array(expected, dtype))


@tier1
def test_nan_and_inf_propagate(monkeypatch):
    got, ref, used = run_both(affine("float64", 5), [np.asarray(np.nan), np.asarray(2.0)], monkeypatch)
    assert used == [True] and np.isnan(got).all()
    assert_same_bits(got, ref)
    with np.errstate(over="ignore"):
        got, ref, _ = run_both(affine("float64", 8), [np.asarray(1e300), np.asarray(1e10)], monkeypatch)
    assert np.isinf(got[-1])
    assert_same_bits(got, ref)


@tier1
@pytest.mark.parametrize("dtype", ["int64", "int8", "uint8"])
def test_integer_states_wrap_as_arrays_do(dtype, monkeypatch):
    def build():
        c0 = pt.scalar("c0", dtype=dtype)
        cs, _ = arignote.scan(
            lambda c: c * pt.cast(3, dtype) + pt.cast(1, dtype), outputs_info=[c0], n_steps=30
        )
        return [c0], cs

    got, ref, used = run_both(build, [np.asarray(1, dtype)], monkeypatch)
    assert used == [True] and got.dtype == np.dtype(dtype)
    assert_same_bits(got, ref)


@tier1
def test_sequences_taps_nit_sot_math_and_mixed_dtypes(monkeypatch):
    def build():
        v = pt.dvector("v")
        f0 = pt.fvector("f0")
        k = pt.fscalar("k")

        def step(e_prev, e, f1, f2, k):
            new = f1 + f2 * k  # float32 state
            other = pt.tanh(e * e_prev) + pt.sqrt(pt.abs(e)) + pt.switch(e > 0, e, -e) / 3.0
            return new, other, pt.maximum(e, pt.exp(-e))

        (fs, others, ms), _ = arignote.scan(
            step,
            sequences=[{"input": v, "taps": [-1, 0]}],
            outputs_info=[{"initial": f0, "taps": [-1, -2]}, None, None],
            non_sequences=[k],
        )
        return [v, f0, k], [fs, others, ms]

    args = [
        np.random.default_rng(0).normal(size=40),
        np.asarray([0.5, 0.25], "float32"),
        np.asarray(0.7, "float32"),
    ]
    got, ref, used = run_both(build, args, monkeypatch)
    assert used == [True]
    assert got[0].dtype == np.float32
    assert_same_bits(got, ref)


@tier1
def test_until_go_backwards_and_last_value_only(monkeypatch):
    def build():
        v = pt.dvector("v")
        acc0 = pt.dscalar("acc0")
        accs, _ = arignote.scan(
            lambda e, acc: (acc + e, until(acc + e > 5.0)),
            sequences=[v],
            outputs_info=[acc0],
            go_backwards=True,
        )
        return [v, acc0], [accs, accs[-1]]

    got, ref, used = run_both(build, [np.arange(10.0), np.asarray(0.0)], monkeypatch)
    assert got[0].tolist() == [9.0]  # 9 > 5 at the first step
    assert_same_bits(got, ref)
    got, ref, _ = run_both(build, [np.ones(10) * 0.5, np.asarray(0.0)], monkeypatch)
    assert got[0].tolist() == [0.5 * k for k in range(1, 11)] and got[1] == 5.0
    assert_same_bits(got, ref)


@tier1
def test_only_when_every_value_is_0d_and_tier1():
    x0 = pt.dscalar("x0")
    xs, _ = arignote.scan(lambda x: x * 2.0, outputs_info=[x0], n_steps=3)
    (op,) = scans(arignote.function([x0], xs))
    assert op.scalar_loop() is not None
    assert "for t in range(t0, n)" in op.scalar_loop().source
    v0 = pt.dvector("v0")  # a vector state: the general loop
    vs, _ = arignote.scan(lambda v: v * 2.0, outputs_info=[v0], n_steps=3)
    (op,) = scans(arignote.function([v0], vs))
    assert op.scalar_loop() is None
    # a mode asked for (here the reference VM) runs its own steps
    xs, _ = arignote.scan(lambda x: x * 2.0, outputs_info=[x0], n_steps=3, mode="FAST_COMPILE")
    f = arignote.function([x0], xs)
    (op,) = scans(f)
    assert op.scalar_loop() is None
    assert f(1.0).tolist() == [2.0, 4.0, 8.0]
    xs, _ = arignote.scan(lambda x: x * 2.0, outputs_info=[x0], n_steps=3, profile=True)
    (op,) = scans(arignote.function([x0], xs))
    assert op.scalar_loop() is None


@tier1
def test_a_step_that_raises_names_the_node_and_the_step():
    x0, d = pt.dscalar("x0"), pt.dvector("d")
    xs, _ = arignote.scan(lambda e, x: x / e, sequences=[d], outputs_info=[x0])
    f = arignote.function([x0, d], xs)
    with np.errstate(divide="raise"):
        with pytest.raises(FloatingPointError) as info:
            f(1.0, np.array([1.0, 2.0, 4.0, 0.0, 1.0]))
    notes = "\n".join(getattr(info.value, "__notes__", []))
    assert "raised at step 3 of Scan" in notes and "node that caused the error: True_div" in notes
    assert scans(f)[0].scalar_loop() is not None  # (it handed the step over to the general loop)
    # and without the error state: inf, as the general loop gives
    with np.errstate(divide="ignore"):
        out = f(1.0, np.array([1.0, 0.0, 2.0]))
    assert out.tolist() == [1.0, np.inf, np.inf]


def test_zero_steps_and_nit_sot_only():
    x0, n = pt.dscalar("x0"), pt.iscalar("n")
    (xs, ys), _ = arignote.scan(lambda x: (x * 2.0, x + 1.0), outputs_info=[x0, None], n_steps=n)
    f = arignote.function([x0, n], [xs, ys])
    for steps in (0, -1):
        a, b = f(1.0, steps)
        assert a.shape == (0,) and b.shape == (0,) and b.dtype == np.float64
    a, b = f(1.0, 3)
    assert a.tolist() == [2.0, 4.0, 8.0] and b.tolist() == [2.0, 3.0, 5.0]
