"""PdbBreakpoint: the monitored values pass unchanged; the debugger opens only when the
condition holds, and values changed there are what the node outputs."""

from __future__ import annotations

import numpy as np
import pytest

import arignote
import arignote.tensor as pt
from arignote.breakpoint import PdbBreakpoint
from arignote.gradient import verify_grad
from arignote.tensor import breakpoint as home


def test_the_debugger_opens_only_when_the_condition_holds(monkeypatch):
    calls = []

    def fake_debugger(name, monitored):  # what a user does at the prompt: look, then change
        calls.append((name, [m.copy() for m in monitored]))
        monitored[0] = monitored[0] * 0

    monkeypatch.setattr(home, "enter_debugger", fake_debugger)
    x, t = pt.dvector("x"), pt.dvector("t")
    mse = ((x - t) ** 2).sum()
    stop = PdbBreakpoint("MSE too high")
    out, seen_x = stop(pt.gt(mse, 100), mse, x)
    f = arignote.function([x, t], [out * 2, seen_x + 1], mode="FAST_COMPILE")

    got = f(np.array([10.0, 0.0]), np.array([10.0, 5.0]))  # mse 25: no stop
    np.testing.assert_allclose(got[0], 50.0)
    np.testing.assert_allclose(got[1], [11.0, 1.0])
    assert calls == []

    got = f(np.array([0.0, 0.0]), np.array([10.0, 5.0]))  # mse 125: stops
    ((name, monitored),) = calls
    assert name == "MSE too high"
    np.testing.assert_allclose(monitored[0], 125.0)
    np.testing.assert_allclose(monitored[1], [0.0, 0.0])
    np.testing.assert_allclose(got[0], 0.0)  # the value changed in the debugger
    np.testing.assert_allclose(got[1], [1.0, 1.0])


def test_shapes_gradients_and_bad_input():
    x = pt.dmatrix("x")
    stop = PdbBreakpoint("never")
    y = stop(pt.constant(np.bool_(False)), x)  # one monitored value: one output, as any Op
    assert tuple(arignote.function([x], y.shape)(np.zeros((2, 3)))) == (2, 3)
    # the gradient passes through the monitored value; the condition has none
    verify_grad(
        lambda a: PdbBreakpoint("g")(pt.gt(a.sum(), 1e9), a) ** 2,
        [np.random.default_rng(0).normal(size=(2, 2))],
    )
    with pytest.raises(TypeError, match="must be a scalar"):
        stop(pt.dvector("c"), x)
    with pytest.raises(TypeError, match="at least one value"):
        stop(pt.constant(np.bool_(True)))
    assert PdbBreakpoint("a") == PdbBreakpoint("a") != PdbBreakpoint("b")
