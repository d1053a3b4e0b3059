"""Calls nested in opposite orders on two threads cannot deadlock (issue 11).

Function A's call, holding its locks, calls function B from a Python Op while another
thread's call of B calls A: each waits for a lock the other holds. So does a thread inside
``with locked(s):`` calling a function another thread is inside, waiting for ``s``. The
thread whose wait would close the cycle raises ``DeadlockError`` (its call changes
nothing and frees its locks), and the other thread finishes. Every thread runs with a
timeout, so a regression fails instead of hanging."""

from __future__ import annotations

import sys
import threading
import time

import numpy as np
import pytest

from arignote import function, shared
from arignote.compile.sharedvalue import locked
from arignote.graph import container as container_module
from arignote.graph.basic import Apply
from arignote.graph.container import DeadlockError
from arignote.graph.op import Op

TIMEOUT = 20.0


class PyCall(Op):
    """Adds one to its input, calling ``self.callback()`` first (as a Python Op might)."""

    __props__ = ("tag",)

    def __init__(self, tag: str):
        self.tag = tag
        self.callback = lambda: None

    def make_node(self, x):
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        self.callback()
        output_storage[0][0] = np.array(inputs[0] + 1)


def _threads(*targets):
    """Run each target in its own thread; ``[(result or None, error or None)]``, failing
    the test if any thread is still running after TIMEOUT seconds (a deadlock)."""
    boxes = [{} for _ in targets]

    def run(fn, box):
        try:
            box["value"] = fn()
        except BaseException as err:
            box["error"] = err

    threads = [threading.Thread(target=run, args=(fn, box), daemon=True) for fn, box in zip(targets, boxes)]
    for th in threads:
        th.start()
    deadline = time.monotonic() + TIMEOUT
    for th in threads:
        th.join(max(0.0, deadline - time.monotonic()))
    assert not any(th.is_alive() for th in threads), "deadlock: a thread never returned"
    return [(box.get("value"), box.get("error")) for box in boxes]


def _wait_until(predicate, what: str) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting until {what}"
        time.sleep(0.001)


def _waiting_threads() -> int:
    return len(container_module._waiting)


def _pair():
    """Functions A and B, each updating its own shared variable through a PyCall Op."""
    a = shared(np.float64(0.0), name="a")
    b = shared(np.float64(0.0), name="b")
    op_a, op_b = PyCall("A"), PyCall("B")
    fa = function([], a, updates={a: op_a(a)}, name="A")
    fb = function([], b, updates={b: op_b(b)}, name="B")
    return a, b, op_a, op_b, fa, fb


def _nest(op, inner, barrier, local):
    """``op``'s perform calls ``inner`` once per outer call (not from the inner call),
    after both threads are inside their outer calls."""

    def callback():
        if getattr(local, "inside", False):
            return
        local.inside = True
        try:
            barrier.wait()
            inner()
        finally:
            local.inside = False

    op.callback = callback


def test_opposite_nesting_on_two_threads_raises_instead_of_deadlocking():
    a, b, op_a, op_b, fa, fb = _pair()
    barrier, local = threading.Barrier(2, timeout=TIMEOUT), threading.local()
    _nest(op_a, fb, barrier, local)  # A's call calls B
    _nest(op_b, fa, barrier, local)  # B's call calls A
    results = _threads(fa, fb)
    errors = [err for _, err in results if err is not None]
    assert len(errors) == 1, results  # one thread is refused, the other finishes
    (err,) = errors
    assert isinstance(err, DeadlockError) and isinstance(err, RuntimeError)
    msg = str(err)
    assert "Deadlock avoided" in msg and "inside a call of function" in msg
    assert "the lock of function 'A'" in msg and "the lock of function 'B'" in msg
    # the refused outer call changed nothing; the other ran both calls
    values = sorted([float(a.get_value()), float(b.get_value())])
    assert values == [1.0, 1.0], values  # finished: its own update and the nested call's
    # nothing is left locked or registered
    op_a.callback = op_b.callback = lambda: None
    assert float(fa()) == 1.0 and float(fb()) == 1.0
    assert _waiting_threads() == 0


def test_opposite_nesting_with_a_shared_variable_in_common_never_hangs():
    s = shared(np.float64(0.0), name="s")
    op_a, op_b = PyCall("A"), PyCall("B")
    fa = function([], s, updates={s: op_a(s)}, name="A")
    fb = function([], s, updates={s: op_b(s)}, name="B")
    local = threading.local()

    def nest(op, inner):
        def callback():
            if not getattr(local, "inside", False):
                local.inside = True
                try:
                    inner()
                finally:
                    local.inside = False

        op.callback = callback

    nest(op_a, fb)
    nest(op_b, fa)
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # force interleaving
    try:
        refused = 0
        for _ in range(20):
            before = float(s.get_value())
            results = _threads(fa, fb)
            errors = [err for _, err in results if err is not None]
            assert all(isinstance(err, DeadlockError) for err in errors), errors
            refused += len(errors)
            # each finished outer call added 1 (its update, from the value it read, replaces
            # the nested call's)
            assert float(s.get_value()) == before + (2 - len(errors))
    finally:
        sys.setswitchinterval(old)
    assert _waiting_threads() == 0


def test_a_call_inside_locked_while_another_thread_waits_inside_that_function():
    s = shared(np.float64(0.0), name="s")
    op = PyCall("F")
    f = function([], s, updates={s: op(s)}, name="F")
    entered = threading.Event()

    def hold_then_call():
        with locked(s):
            entered.set()
            _wait_until(lambda: _waiting_threads() == 1, "the other thread waits for s")
            return f()  # needs F's lock, held by the thread waiting for s

    def call():
        assert entered.wait(TIMEOUT)
        return f()  # takes F's lock, then waits for s

    (r1, e1), (r2, e2) = _threads(hold_then_call, call)
    assert isinstance(e1, DeadlockError) and e2 is None, (e1, e2)
    assert "entering locked" not in str(e1) and "shared variable 's'" in str(e1)
    assert float(s.get_value()) == 1.0 and float(r2) == 0.0


def test_get_value_inside_a_call_against_a_thread_in_locked():
    s = shared(np.float64(0.0), name="s")
    t = shared(np.float64(5.0), name="t")
    op = PyCall("F")
    f = function([], s, updates={s: op(s)}, name="F")
    barrier = threading.Barrier(2, timeout=TIMEOUT)
    seen = []

    def callback():
        if threading.current_thread().name == "caller":
            barrier.wait()  # the other thread now holds t
            seen.append(float(t.get_value()))  # waits for t, holding F's lock

    op.callback = callback

    def in_locked():
        with locked(t):
            barrier.wait()
            _wait_until(lambda: _waiting_threads() == 1, "the caller waits for t")
            return f()  # needs F's lock: the cycle closes here

    th_results: list = []  # the caller is named, so the callback knows it
    caller = threading.Thread(target=lambda: th_results.append(_catch(f)), name="caller", daemon=True)
    caller.start()
    ((r, e),) = _threads(in_locked)
    caller.join(TIMEOUT)
    assert not caller.is_alive(), "deadlock: the caller never returned"
    assert isinstance(e, DeadlockError), e
    assert th_results == [(0.0, None)] and seen == [5.0]
    assert float(s.get_value()) == 1.0


def _catch(fn):
    try:
        return (float(fn()), None)
    except BaseException as err:
        return (None, err)


def test_nesting_in_one_order_on_every_thread_is_never_refused():
    a, b, op_a, op_b, fa, fb = _pair()
    local = threading.local()

    def callback():
        if not getattr(local, "inside", False):
            local.inside = True
            try:
                fb()
            finally:
                local.inside = False

    op_a.callback = callback  # A -> B only
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        results = _threads(
            *([lambda: [fa() for _ in range(20)]] * 2 + [lambda: [fb() for _ in range(20)]] * 2)
        )
    finally:
        sys.setswitchinterval(old)
    assert all(err is None for _, err in results), results
    assert float(a.get_value()) == 40.0 and float(b.get_value()) == 80.0


def test_a_nested_call_waiting_for_a_busy_thread_just_waits():
    # the holder of the lock is running (not waiting): no cycle, so no error
    a, b, op_a, op_b, fa, fb = _pair()
    inside, go = threading.Event(), threading.Event()
    op_b.callback = lambda: (
        (inside.set(), go.wait(TIMEOUT)) if threading.current_thread().name == "slow" else None
    )
    op_a.callback = fb  # A's call calls B, busy on the other thread
    slow = threading.Thread(target=fb, name="slow", daemon=True)
    slow.start()
    assert inside.wait(TIMEOUT)
    timer = threading.Timer(0.1, go.set)
    timer.start()
    ((r, e),) = _threads(fa)
    slow.join(TIMEOUT)
    timer.join()
    assert e is None and float(r) == 0.0
    assert float(a.get_value()) == 1.0 and float(b.get_value()) == 2.0


@pytest.mark.parametrize("n", [3])
def test_a_cycle_through_three_threads_is_found(n):
    values = [shared(np.float64(0.0), name=f"v{k}") for k in range(n)]
    ops = [PyCall(f"F{k}") for k in range(n)]
    fns = [function([], v, updates={v: op(v)}, name=f"F{k}") for k, (v, op) in enumerate(zip(values, ops))]
    barrier, local = threading.Barrier(n, timeout=TIMEOUT), threading.local()
    for k in range(n):
        _nest(ops[k], fns[(k + 1) % n], barrier, local)  # F0 -> F1 -> F2 -> F0
    results = _threads(*fns)
    errors = [err for _, err in results if err is not None]
    assert len(errors) == 1 and isinstance(errors[0], DeadlockError), results
    assert _waiting_threads() == 0
