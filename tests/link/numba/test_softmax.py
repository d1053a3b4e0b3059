"""Softmax and LogSoftmax in both Numba tiers (the per-node ``"rows"`` kernel and the
whole-graph function) against the reference VM: every axis, several adjacent axes, all axes,
rows of ``-inf``, ``+inf`` and NaN, empty inputs, float32, non-contiguous inputs."""

from __future__ import annotations

import numpy as np
import pytest

import arignote
import arignote.tensor as pt
from arignote.compile.mode import Mode
from arignote.link.numba import linker as nl
from arignote.link.numba.kernels import pays, plan_op

numba = pytest.importorskip("numba")

pytestmark = pytest.mark.usefixtures("empty_kernel_cache")


def _outputs(v):
    sm, lsm = pt.special.softmax, pt.special.log_softmax
    if v.type.ndim == 2:
        return [sm(v, axis=1), sm(v, axis=0), lsm(v, axis=1), lsm(v, axis=0), sm(v), lsm(v)]
    return [sm(v, axis=(1, 2)), lsm(v, axis=1), sm(v, axis=(0, 1)), lsm(v, axis=2)]


def _values(shape, dtype, rng):
    v = (rng.normal(size=shape) * 10).astype(dtype)
    if len(shape) == 2:
        v[1] = -np.inf  # a row of -inf: NaN for Softmax and LogSoftmax
        v[2, 3] = np.nan
        v[3, 0] = np.inf
        v[4, :3] = -np.inf  # some -inf: zeros
        v[5, 2] = -np.inf
    return v


@pytest.mark.parametrize(
    ("mode", "dtype", "shape"),
    [
        ("NUMBA_KERNELS", "float64", (7, 9)),
        ("NUMBA_KERNELS", "float32", (7, 9)),
        ("NUMBA_KERNELS", "float64", (3, 4, 5)),
        # (the whole-graph function calls the same row code: one graph, its compile is seconds)
        ("NUMBA", "float64", (7, 9)),
    ],
)
def test_softmax_matches_the_reference_vm(mode, dtype, shape):
    rng = np.random.default_rng(0)
    v = pt.tensor("v", dtype=dtype, shape=(None,) * len(shape))
    outs = _outputs(v)
    f = arignote.function([v], outs, mode=mode)
    if mode == "NUMBA":
        assert f.vm.whole.state == "in use", f.vm.whole.reason
    else:
        assert {s.plan.kind for s in f.vm.tier2} == {"rows"} and all(s.state == "tier 2" for s in f.vm.tier2)
    ref = arignote.function([v], outs, mode=Mode("vm", "fast_run"))
    tol = 2e-6 if dtype == "float32" else 1e-14
    x = _values(shape, dtype, rng)
    for args in ([x], [np.asfortranarray(x)], [x[::-1]]):  # non-contiguous inputs too
        for k, (got, want) in enumerate(zip(f(*args), ref(*args))):
            assert got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=f"output {k}")
    empty = np.zeros((0, *shape[1:]), dtype)
    for got in f(empty):
        assert got.shape == empty.shape and got.dtype == empty.dtype


def test_rows_kernel_is_planned_and_pays():
    x = pt.dmatrix("x")
    node = pt.special.softmax(x, axis=-1).owner
    plan = plan_op(node.op, node)
    assert plan.kind == "rows" and plan.keep == (1, 2) and pays(plan)
    assert "_arignote_exp(" in plan.source and "_arignote_maxnum(" in plan.source
    # axes that are not adjacent, and integer inputs, stay on tier 1
    t = pt.dtensor3("t")
    node = pt.special.softmax(t, axis=(0, 2)).owner
    assert plan_op(node.op, node) is None
    i = pt.lmatrix("i")
    node = pt.special.softmax(i, axis=1).owner
    assert plan_op(node.op, node) is None


def test_background_tier_swaps_the_rows_kernel_in_once_hot():
    x = pt.dmatrix("x")
    mode = Mode(nl.NumbaLinker(jit="background", hot_elements=100_000, whole_graph="never"), "fast_run")
    f = arignote.function([x], pt.special.softmax(x, axis=1), mode=mode)
    (slot,) = f.vm.tier2
    assert slot.plan is None  # planned once hot
    v = np.random.default_rng(1).normal(size=(300, 200))
    want = np.exp(v - v.max(1, keepdims=True))
    want /= want.sum(1, keepdims=True)
    for _ in range(3):
        np.testing.assert_allclose(f(v), want, rtol=1e-14)
    assert nl.wait_for_kernels(timeout=120)
    assert slot.state == "tier 2" and slot.plan.kind == "rows"
    np.testing.assert_allclose(f(v), want, rtol=1e-14)
    (node,) = f.maker.fgraph.toposort()
    assert f.vm.impl_of(node) == "numba"
