"""The generated code's own scalar math (``arignote.link.numba.scalar_math``) against NumPy
and against exact values: tanh over its whole range, its special values, and inside the
generated Elemwise loops of both Numba tiers."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

import arignote
import arignote.tensor as pt
from arignote.link.numba.kernels import plan_node
from arignote.link.numba.scalar_math import INLINE_MAX, TANH, TANH_NAME, helpers_for, libm_where_long

numba = pytest.importorskip("numba")

pytestmark = pytest.mark.usefixtures("empty_kernel_cache")


@pytest.fixture(scope="module")
def tanh_loop():
    """The helper called in a loop as the generated code calls it (inlined, under the
    generated functions' fast-math flags)."""
    ns = {"numba": numba, "np": np}
    exec(TANH, ns)
    exec(
        "@numba.njit(error_model='numpy', fastmath={'reassoc', 'contract'})\n"
        "def loop(a, o):\n"
        "    for i in range(a.shape[0]):\n"
        f"        o[i] = {TANH_NAME}(a[i])\n",
        ns,
    )

    def run(values):
        a = np.asarray(values, dtype=np.float64)
        o = np.empty_like(a)
        ns["loop"](a, o)
        return o

    return run


def _exact_tanh(x: float) -> Fraction:
    """tanh(x) as a rational, from exp's series (|x| < 2 here: 90 terms are plenty)."""
    z, term, e = Fraction(2 * x), Fraction(1), Fraction(0)
    for n in range(1, 90):
        e += term
        term = term * z / n
    return (e - 1) / (e + 1)


def test_tanh_matches_numpy_over_its_range(tanh_loop):
    rng = np.random.default_rng(0)
    scales = [1e-300, 1e-20, 1e-8, 1e-3, 0.1, 0.35, 0.7, 1.0, 3.0, 10.0, 19.0, 30.0, 1e3, 1e300]
    xs = np.concatenate([rng.normal(size=4000) * s for s in scales])
    # around the range reduction's steps (multiples of ln2 / 2) and the clamp at 20
    steps = np.arange(1, 60) * math.log(2) / 2
    xs = np.concatenate([xs, steps, np.nextafter(steps, 0), np.nextafter(steps, 99), -steps])
    xs = np.concatenate([xs, [19.06, 19.1, 20.0, 20.0000001, 709.0, 710.0, 1.7e308, 5e-324, 2.2e-308]])
    got, want = tanh_loop(xs), np.tanh(xs)
    np.testing.assert_allclose(got, want, rtol=1e-15, atol=0)
    assert np.all(np.abs(got) <= 1.0)


def test_tanh_special_values(tanh_loop):
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 5e-324, -5e-324])
    got = tanh_loop(specials)
    np.testing.assert_array_equal(got, np.tanh(specials))
    num = ~np.isnan(specials)  # (a NaN's sign means nothing)
    np.testing.assert_array_equal(np.signbit(got[num]), np.signbit(specials[num]))  # -0.0 stays -0.0


def test_tanh_within_two_ulp_of_the_exact_value(tanh_loop):
    rng = np.random.default_rng(1)
    xs = np.concatenate([rng.normal(size=150) * 0.5, rng.uniform(0.3, 1.9, size=150), [1e-9, 0.17, 1.0]])
    got = tanh_loop(xs)
    for x, g in zip(xs, got):
        exact = _exact_tanh(float(x))
        err = abs(Fraction(float(g)) - exact) / Fraction(math.ulp(float(exact)))
        assert err <= 2, (x, float(err))


def test_generated_loops_use_it_in_both_tiers():
    x = pt.dvector("x")
    f = arignote.function([x], pt.tanh(x * 0.5) + x, mode="NUMBA")
    assert f.vm.whole.state == "in use", f.vm.whole.reason
    assert f.vm.whole.source.count(f"def {TANH_NAME}(") == 1
    v = np.array([-30.0, -1.0, -0.0, 0.0, 1e-12, 0.3, 2.0, 25.0, np.inf, np.nan])
    np.testing.assert_allclose(f(v), np.tanh(v * 0.5) + v, rtol=1e-15)
    # float32 through the float64 helper, rounded once
    y = pt.fvector("y")
    g = arignote.function([y], pt.tanh(y), mode="NUMBA")
    w = np.linspace(-12, 12, 1001, dtype=np.float32)
    got = g(w)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, np.tanh(w), rtol=2e-7, atol=1e-30)
    # the per-node kernel of a fused body carries the definition in its own module
    fused = [n for n in f.maker.fgraph.toposort() if plan_node(n) is not None]
    assert fused and all(TANH in plan_node(n).source for n in fused)
    assert helpers_for("y = x + 1") == []


def test_a_long_body_calls_libm_instead_of_inlining_many_copies():
    """Each inlined copy is forty Numba IR statements: a fused chain of many tanh inlined
    took minutes to compile, so past INLINE_MAX calls a body calls libm's."""
    few = "\n".join(f"v = {TANH_NAME}(v)" for _ in range(INLINE_MAX))
    assert libm_where_long(few) == few and helpers_for(libm_where_long(few)) == [TANH]
    many = few + f"\nv = {TANH_NAME}(v)"
    assert (
        TANH_NAME not in libm_where_long(many) and libm_where_long(many).count("np.tanh(") == INLINE_MAX + 1
    )
    x = pt.dvector("x")
    y = x
    for _ in range(3 * INLINE_MAX):
        y = pt.tanh(y * 0.9 + 0.1)
    f = arignote.function([x], y, mode="FAST_RUN")  # (fused: one kernel)
    (node,) = [n for n in f.maker.fgraph.toposort() if plan_node(n) is not None]
    source = plan_node(node).source
    assert TANH_NAME not in source and source.count("np.tanh(") == 3 * INLINE_MAX
