"""A whole-graph Numba function called directly (values in, the function, values out) by a
compiled function's plain call, and the calls it leaves to tier 1."""

from __future__ import annotations

import numpy as np
import pytest

import arignote
import arignote.tensor as pt
from arignote.compile.mode import Mode
from arignote.link.python.codegen import REFUSED
from tests.concurrency import wrong_in_threads

pytest.importorskip("numba")


def _graph():
    x, y = pt.dvectors("x", "y")
    return [x, y], [pt.exp(x) * y, (x * y).sum()]


def test_the_plain_call_runs_the_whole_graph_function(empty_kernel_cache):
    ins, outs = _graph()
    f = arignote.function(ins, outs, mode="NUMBA")
    ref = arignote.function(ins, outs, mode=Mode("vm", "fast_run"))
    a, b = np.linspace(-1, 1, 50), np.linspace(0, 2, 50)
    for _ in range(2):
        got = f(a, b)
    assert f.vm.whole.state == "in use" and f._plain is not None
    assert f.vm.direct_program[0] is f.vm.whole.program
    for g, w in zip(got, ref(a, b)):
        np.testing.assert_allclose(g, w, rtol=1e-12)
    assert isinstance(got[1], np.ndarray) and got[1].shape == ()  # a 0-d output stays an array
    # a call the function raises on goes to tier 1, which raises the reference's error
    assert f.vm.whole.program(a, b[:3]) is REFUSED
    with pytest.raises(ValueError) as want:
        ref(a, b[:3])
    with pytest.raises(ValueError) as err:
        f(a, b[:3])
    assert str(err.value) == str(want.value)
    assert "Apply node that caused the error" in err.value.__notes__[0]
    # a read-only, strided input is passed as a contiguous copy
    ro = a[::-1].copy()[::-1]
    ro.flags.writeable = False
    np.testing.assert_allclose(f(ro, b)[0], np.exp(ro) * b, rtol=1e-12)


def test_plain_calls_of_the_whole_graph_from_threads(empty_kernel_cache):
    ins, outs = _graph()
    f = arignote.function(ins, outs, mode="NUMBA")
    f(np.ones(4), np.ones(4))
    f(np.ones(4), np.ones(4))
    assert f._plain is not None

    def call_ok(k: int) -> bool:
        a, b = np.full(100, 0.01 * k), np.arange(100.0)
        e, s = f(a, b)
        return bool(np.allclose(e, np.exp(a) * b) and np.isclose(s, (a * b).sum()))

    assert wrong_in_threads(call_ok, n_calls=300) == []
