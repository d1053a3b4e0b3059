"""The vectorised exp, log1p, sin and cos of the generated Numba code
(``arignote.link.numba.vecmath``) against NumPy over their whole range and at their special
values; that the loops calling them vectorise; sin's guard for arguments beyond its range
reduction (the call is left to tier 1 in both tiers); float32 through them."""

from __future__ import annotations

import platform
import re

import numpy as np
import pytest

import arignote
import arignote.tensor as pt
from arignote.compile.mode import Mode
from arignote.link.numba.kernels import plan_node

numba = pytest.importorskip("numba")
vm = pytest.importorskip("arignote.link.numba.vecmath")

pytestmark = pytest.mark.usefixtures("empty_kernel_cache")

NAMES = ("exp", "log1p", "sin", "cos")


@pytest.fixture(scope="module")
def loops():
    """Each function called in a loop over a float64 array, as the generated kernels do."""
    ns = {"numba": numba, "vm": vm}
    out = {}
    for name in NAMES:
        exec(
            "@numba.njit('void(float64[::1], float64[::1])', error_model='numpy')\n"
            f"def loop(a, o):\n    for i in range(a.shape[0]):\n        o[i] = vm.{name}(a[i])\n",
            ns,
        )
        out[name] = ns["loop"]
    return out


def _run(loop, xs):
    xs = np.ascontiguousarray(xs, dtype=np.float64)
    o = np.empty_like(xs)
    loop(xs, o)
    return o


def _ulps(got, want):
    """|got - want| in units of want's last place (0 where both are NaN or equal)."""
    same = (got == want) | (np.isnan(got) & np.isnan(want))
    with np.errstate(invalid="ignore", over="ignore"):
        d = np.abs(got - want) / np.spacing(np.maximum(np.abs(want), np.finfo(np.float64).tiny))
    return np.where(same, 0.0, d)


def _points(name, rng):
    """About a million arguments across the function's whole range (log-uniform magnitudes,
    both signs) and where its reduction is hardest."""
    n = 250_000
    sign = rng.choice([-1.0, 1.0], n)
    if name == "exp":
        return np.concatenate([rng.uniform(-750, 712, n), rng.normal(size=n), rng.uniform(-745.2, -707, n)])
    if name == "log1p":
        return np.concatenate(
            [
                np.exp(rng.uniform(-745, 709, n)) * sign,
                rng.uniform(-1, 1, n),
                -1 + np.exp(rng.uniform(-36, 0, n)),
            ]
        )
    # sin, cos: up to TRIG_MAX, and multiples of pi/2 (r tiny: the reduction's hardest cases)
    k = np.concatenate([np.arange(1.0, 50_000), rng.integers(1, int(vm.TRIG_MAX / 1.6), n).astype(float)])
    return np.concatenate(
        [
            np.exp(rng.uniform(-745, np.log(vm.TRIG_MAX), n)) * sign,
            rng.normal(size=n),
            k * (np.pi / 2),
            -k * (np.pi / 2),
        ]
    )


SPECIALS = np.array(
    [0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, -5e-324, 2.2250738585072014e-308, 1e-300, -1e-320, 1.0, -1.0]
    + [-1.0000000000000002, -0.9999999999999999, 709.782712893384, 709.7827128933841, 710.0, 1e300, -1e300]
    + [-745.1332191019411, -745.1332191019412, -708.4, -740.0, 2.0**30, -(2.0**30), 1.7976931348623157e308]
)


@pytest.mark.parametrize("name", NAMES)
def test_within_one_ulp_of_numpy_over_the_whole_range(loops, name):
    xs = _in_range(name, np.concatenate([_points(name, np.random.default_rng(NAMES.index(name))), SPECIALS]))
    got = _run(loops[name], xs)
    with np.errstate(all="ignore"):
        want = getattr(np, name)(xs)
    u = _ulps(got, want)
    assert u.max() <= 1, (name, xs[u.argmax()], got[u.argmax()], want[u.argmax()])
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))


def _in_range(name, xs):
    """``xs`` less, for sin and cos, the finite arguments beyond their reduction (NaN there:
    the next test)."""
    if name in ("sin", "cos"):
        return xs[~(np.abs(xs) > vm.TRIG_MAX) | np.isinf(xs)]
    return xs


@pytest.mark.parametrize("name", NAMES)
def test_special_values_exactly(loops, name):
    xs = _in_range(name, SPECIALS)
    got = _run(loops[name], xs)
    with np.errstate(all="ignore"):
        want = getattr(np, name)(xs)
    exact = np.isinf(want) | (want == 0) | np.isnan(want) | np.isin(np.abs(xs), [0.0, 5e-324, np.inf])
    np.testing.assert_array_equal(got[exact], want[exact])  # inf, 0, NaN, the tiny: exactly
    num = ~np.isnan(want)
    np.testing.assert_array_equal(np.signbit(got[num]), np.signbit(want[num]))  # -0.0 stays -0.0
    assert _ulps(got, want).max() <= 1


def test_sin_and_cos_beyond_their_reduction_give_nan_and_the_guard_says_so(loops):
    beyond = np.array([2.0**30 * (1 + 2**-52), 1e10, -3e300, 1.7976931348623157e308])
    assert np.isnan(_run(loops["sin"], beyond)).all() and np.isnan(_run(loops["cos"], beyond)).all()
    guard = numba.njit(lambda a: [vm.trig_beyond(v) for v in a])
    assert guard(beyond) == [True] * 4
    assert guard(np.array([2.0**30, 1.0, np.inf, -np.inf, np.nan, 0.0])) == [False] * 6


def test_the_loops_vectorise(loops):
    if platform.machine() not in ("x86_64", "AMD64"):
        pytest.skip("reads x86 assembly")
    for name, loop in loops.items():
        asm = loop.inspect_asm(loop.signatures[0])
        # packed double arithmetic (xmm with SSE2 alone, ymm/zmm with AVX)
        assert re.search(r"\bv?(mul|fmadd\w*)pd\s", asm), name


def test_huge_sin_arguments_are_computed_by_tier_1_in_both_tiers():
    x = pt.dvector("x")
    y = pt.sin(x) * pt.exp(-x * x * 1e-20) + pt.cos(x * 2.0)
    v = np.linspace(-5, 5, 20_000)
    v[7] = 3e15  # beyond TRIG_MAX: the kernels hand the call back
    ref = arignote.function([x], y, mode=Mode("vm", "fast_run"))(v)
    for mode in ("NUMBA_KERNELS", "NUMBA"):
        f = arignote.function([x], y, mode=mode)
        np.testing.assert_allclose(f(v), ref, rtol=1e-15, atol=1e-15)
        np.testing.assert_allclose(f(v[8:]), ref[8:], rtol=1e-15, atol=1e-15)
    (node,) = [n for n in f.maker.fgraph.toposort() if plan_node(n) is not None]
    plan = plan_node(node)
    assert plan.guarded and "_arignote_trig_beyond(" in plan.source and "_arignote_sin(" in plan.source
    # a reduction computing its fused input in its loop hands the call back too
    g = arignote.function([x], pt.sum(pt.sin(x) * 2.0), mode="NUMBA_KERNELS")
    (slot,) = g.vm.tier2
    assert slot.plan.kind == "reduce" and slot.plan.guarded and slot.state == "tier 2"
    np.testing.assert_allclose(g(v), np.sum(np.sin(v) * 2.0), rtol=1e-12)
    np.testing.assert_allclose(g(v[8:]), np.sum(np.sin(v[8:]) * 2.0), rtol=1e-12)


def test_float32_is_computed_in_float64_and_rounded_once():
    x = pt.fvector("x")
    # (negated: exact, and a fused node, which has a kernel)
    outs = [-pt.exp(x), -pt.log1p(pt.abs(x)), -pt.sin(x), -pt.cos(x)]
    f = arignote.function([x], outs, mode="NUMBA_KERNELS")
    assert f.vm.tier2 and all(s.state == "tier 2" for s in f.vm.tier2)
    assert all(f.vm.impl_of(n) == "numba" for n in f.maker.fgraph.toposort())
    v = np.concatenate(
        [np.linspace(-100, 100, 20_001), [88.7, 89.0, -104.0, 0.0, -0.0, np.inf, -np.inf, np.nan]]
    )
    v = v.astype(np.float32)
    v64 = v.astype(np.float64)
    with np.errstate(all="ignore"):
        wants = [np.exp(v64), np.log1p(np.abs(v64)), np.sin(v64), np.cos(v64)]
    for got, want in zip(f(v), wants):
        got = -got
        assert got.dtype == np.float32
        # within one float32 ulp of the exact value rounded (a double rounding at most)
        w32 = want.astype(np.float32)
        with np.errstate(invalid="ignore"):
            err = np.abs(got.astype(np.float64) - w32) / np.spacing(
                np.maximum(np.abs(w32), np.float32(1e-38))
            )
        assert np.nanmax(np.where(got == w32, 0, err)) <= 1
        np.testing.assert_array_equal(np.isnan(got), np.isnan(w32))


def test_kernel_sources_import_the_functions_with_a_hash_of_their_module():
    x = pt.dvector("x")
    f = arignote.function([x], pt.exp(x) * 2 + pt.log1p(x), mode=Mode("vm", "fast_run"))
    (node,) = f.maker.fgraph.toposort()
    source = plan_node(node).source
    assert "from arignote.link.numba.vecmath import exp as _arignote_exp  # vecmath " in source
    assert "import log1p as _arignote_log1p" in source and "np.exp(" not in source
