"""Calls from several threads: a call's reads and updates of shared variables are one
atomic step with respect to other calls (of any function) and to ``get_value`` /
``set_value``; functions sharing variables never deadlock each other.

Each test forces interleaving (a tiny switch interval and an Op that sleeps in the
middle of a call, releasing the GIL), so without the locks they fail every time."""

from __future__ import annotations

import sys
import threading
import time

import numpy as np
import pytest

import arignote.tensor as pt
from arignote import function, shared
from arignote.graph.basic import Apply
from arignote.graph.op import Op
from arignote.graph.shared import locked


class Slow(Op):
    """The identity, by a thunk that sleeps (releasing the GIL) before it reads its input,
    or after it (``read_first``): another thread runs in the middle of every call."""

    __props__ = ("read_first",)

    def __init__(self, read_first: bool = False):
        self.read_first = read_first

    def make_node(self, x):
        x = pt.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def make_thunk(self, node, storage_map, compute_map, no_recycling, impl=None):
        in_cell, out_cell = storage_map[node.inputs[0]], storage_map[node.outputs[0]]
        done = compute_map[node.outputs[0]]

        read_first = self.read_first

        def thunk():
            if read_first:
                value = np.array(in_cell[0], copy=True)
                time.sleep(0.0002)
            else:
                time.sleep(0.0002)
                value = np.array(in_cell[0], copy=True)
            out_cell[0] = value
            done[0] = True

        return thunk


slow = Slow()
read_then_wait = Slow(read_first=True)


@pytest.fixture(autouse=True)
def _switch_often():
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(old)


def _run(workers, timeout: float = 30.0) -> None:
    """Start the ``workers`` (callables) together; fail (instead of hanging) on a deadlock,
    re-raise the first error of a worker."""
    errors: list[BaseException] = []
    start = threading.Barrier(len(workers))

    def wrap(work):
        def run():
            start.wait()
            try:
                work()
            except BaseException as err:
                errors.append(err)

        return run

    threads = [threading.Thread(target=wrap(w), daemon=True) for w in workers]
    for th in threads:
        th.start()
    deadline = time.monotonic() + timeout
    for th in threads:
        th.join(max(0.0, deadline - time.monotonic()))
    assert not any(th.is_alive() for th in threads), "deadlock: threads still running"
    if errors:
        raise errors[0]


def test_two_functions_updating_one_counter_lose_no_increment():
    count = shared(np.int64(0), name="count")
    inc = function([], [], updates={count: read_then_wait(count) + 1}, name="inc")
    inc_too = function([], count, updates={count: read_then_wait(count) + 1}, name="inc_too")

    def work():
        for i in range(50):
            (inc if i % 2 else inc_too)()

    _run([work] * 8)
    assert int(count.get_value()) == 400


def test_each_call_sees_the_counter_it_moved_on():
    count = shared(np.int64(0), name="count")
    a = function([], read_then_wait(count), updates={count: count + 1})
    b = function([], read_then_wait(count), updates={count: count + 1})
    seen: list[int] = []
    lock = threading.Lock()

    def work(f):
        def run():
            mine = [int(f()) for _ in range(30)]
            with lock:
                seen.extend(mine)

        return run

    _run([work(a), work(b)] * 3)
    assert sorted(seen) == list(range(180))  # no two calls read the same count


def test_set_value_during_calls_never_shows_half_a_state():
    # two reads of one variable (one of them slow) and a second variable set together
    # with it: every result is one state, all old or all new
    a = shared(np.zeros(3), name="a")
    b = shared(np.zeros(3), name="b")
    f = function([], [slow(a), a, slow(b), b])
    results: list = []
    lock = threading.Lock()

    def caller():
        mine = [f() for _ in range(60)]
        with lock:
            results.extend(mine)

    def setter():
        for i in range(1, 120):
            with locked(a, b):
                a.set_value(np.full(3, float(i)))
                time.sleep(0.0001)
                b.set_value(np.full(3, float(i)))
            time.sleep(0.0001)

    _run([caller] * 4 + [setter])
    assert len(results) == 240
    for r in results:
        values = np.concatenate(r)
        assert (values == values[0]).all(), r


def test_set_value_of_one_variable_is_atomic_with_a_call():
    a = shared(np.zeros(4), name="a")
    f = function([], read_then_wait(a) - slow(a))  # two reads of a, 0.4 ms apart

    results: list = []

    def caller():
        results.extend(f() for _ in range(60))

    def setter():
        for i in range(1, 200):
            a.set_value(np.full(4, float(i)))
            time.sleep(0.0001)

    _run([caller] * 4 + [setter])
    assert len(results) == 240 and all((r == 0).all() for r in results)


class SlowView(Op):
    """Its input itself (a view), after a pause: between two in-place steps of a call."""

    __props__ = ()
    view_map = {0: [0]}

    def make_node(self, x):
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        time.sleep(0.0002)
        output_storage[0][0] = inputs[0]


def test_get_value_sees_a_value_before_or_after_a_call():
    # v is updated in place in two steps (FAST_RUN makes both IncSubtensors overwrite
    # it), with a pause between: get_value never returns the half-updated array
    v = shared(np.zeros(6), name="v")
    half = SlowView()(pt.inc_subtensor(v[:3], 1.0))
    step = function([], [], updates={v: pt.inc_subtensor(half[3:], 1.0)}, mode="FAST_RUN")
    assert sum(bool(node.op.destroy_map) for node in step.maker.fgraph.apply_nodes) == 2
    seen: list = []

    def caller():
        for _ in range(40):
            step()

    def reader():
        for _ in range(300):
            seen.append(v.get_value())
            time.sleep(0.00005)

    _run([caller, caller, reader])
    assert float(v.get_value()[0]) == 80
    assert all((s == s[0]).all() for s in seen)


def test_functions_taking_shared_variables_in_opposite_orders_do_not_deadlock():
    a = shared(np.float64(0.0), name="a")
    b = shared(np.float64(0.0), name="b")
    ab = function([], [], updates={a: read_then_wait(a) + b, b: b + 1})
    ba = function([], [], updates={b: read_then_wait(b) + 1, a: a - b})

    def work(f):
        def run():
            for _ in range(40):
                f()

        return run

    _run([work(ab), work(ba)] * 3, timeout=30.0)
    assert float(b.get_value()) == 240.0


def test_a_function_without_shared_variables_takes_only_its_own_lock():
    x = pt.dscalar("x")
    f = function([x], x + 1)
    assert f._held == ()
    s = shared(np.float64(1.0))
    g = function([x], x + s + s)
    assert g._held == (s.container.lock,)
