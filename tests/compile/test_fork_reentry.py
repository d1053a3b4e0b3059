"""A forked child is not left with locked functions or shared variables, and a function
called again from inside its own call raises a clear error instead of deadlocking."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import arignote.tensor as pt
from arignote import function, shared
from arignote.graph.basic import Apply
from arignote.graph.op import Op

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Run in a fresh process: a thread is inside a call (holding the function's lock and the
# shared variable's) when the main thread forks. The child (with a watchdog alarm, and
# os._exit so it never runs the parent's cleanup) calls the function, another function
# using the shared variable, get_value and set_value; the parent checks its exit status
# with a timeout, so a regression fails instead of hanging.
FORK_SCRIPT = textwrap.dedent(
    r"""
    import os, signal, sys, threading, time
    import numpy as np
    import arignote.tensor as pt
    from arignote import function, shared
    from arignote.graph.basic import Apply
    from arignote.graph.op import Op

    inside, release = threading.Event(), threading.Event()

    class Block(Op):
        __props__ = ()
        def make_node(self, x):
            return Apply(self, [x], [x.type()])
        def perform(self, node, inputs, out):
            if threading.current_thread() is not threading.main_thread() and not release.is_set():
                inside.set()
                release.wait(30)
            out[0][0] = np.array(inputs[0] + 1)

    s = shared(np.float64(0.0), name="s")
    step = function([], s, updates={s: Block()(s)}, name="step")
    other = function([], s * 2, name="other")
    worker = threading.Thread(target=step)
    worker.start()
    assert inside.wait(30), "the worker never got inside its call"

    pid = os.fork()
    if pid == 0:  # the child: only this thread exists here
        signal.alarm(20)  # a deadlock kills the child (exit status != 0)
        try:
            release.set()
            ok = float(step()) == 0.0 and float(other()) == 2.0 and float(s.get_value()) == 1.0
            s.set_value(5.0)
            ok = ok and float(step()) == 5.0 and float(s.get_value()) == 6.0
        except BaseException as err:
            print("child failed:", repr(err), flush=True)
            os._exit(3)
        os._exit(0 if ok else 4)
    deadline = time.monotonic() + 60
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            print("child hung"); sys.exit(5)
        time.sleep(0.01)
    release.set()
    worker.join(30)
    code = os.waitstatus_to_exitcode(status)
    print("child exit", code)
    sys.exit(0 if code == 0 and float(s.get_value()) == 1.0 else 6)
    """
)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork is POSIX only")
def test_a_forked_child_can_call_functions_a_thread_was_inside(tmp_path):
    done = subprocess.run(
        [sys.executable, "-c", FORK_SCRIPT],
        env=dict(os.environ, PYTHONPATH=REPO),
        cwd=str(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "child exit 0" in done.stdout


class CallBack(Op):
    """Calls ``self.callback()`` from its perform (as a Python Op or a hook might)."""

    __props__ = ()

    def __init__(self):
        self.callback = None

    def make_node(self, x):
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        self.callback()
        output_storage[0][0] = np.array(inputs[0] * 2)


def _run_in_thread(fn, timeout: float = 20.0):
    """``fn()`` in a thread: its result or exception, or a failure if it hangs."""
    box: dict = {}

    def run():
        try:
            box["value"] = fn()
        except BaseException as err:
            box["error"] = err

    th = threading.Thread(target=run, daemon=True)
    th.start()
    th.join(timeout)
    assert not th.is_alive(), "deadlock: the call never returned"
    if "error" in box:
        raise box["error"]
    return box["value"]


def test_calling_a_function_from_inside_its_own_call_raises():
    op = CallBack()
    x = pt.dscalar("x")
    s = shared(np.float64(1.0), name="s")
    f = function([x], op(x) + s, updates={s: s + 1}, name="reentrant")
    op.callback = lambda: f(1.0)
    with pytest.raises(
        RuntimeError, match=r"function 'reentrant' was called again from inside a call of itself"
    ):
        _run_in_thread(lambda: f(1.0))
    assert float(s.get_value()) == 1.0  # the failed call changed nothing
    op.callback = lambda: None
    assert float(_run_in_thread(lambda: f(3.0))) == 7.0  # and the function is not locked
    assert float(s.get_value()) == 2.0


def test_reentry_through_a_copy_sharing_storage_raises():
    op = CallBack()
    x = pt.dscalar("x")
    f = function([x], op(x), name="outer")
    g = f.copy(share_memory=True, name="inner")
    op.callback = lambda: g(1.0)
    with pytest.raises(
        RuntimeError, match=r"function 'inner' was called again .* 'outer', which shares its storage"
    ):
        _run_in_thread(lambda: f(1.0))
    h = f.copy(name="independent")  # its own storage: it may run inside f's call
    op.callback = lambda: h.vm is not None
    assert float(_run_in_thread(lambda: f(2.0))) == 4.0


def test_other_functions_and_values_may_be_used_from_inside_a_call():
    # shared variables' locks are re-entrant: a callback may read them, set them, or call
    # another function that uses them, on the calling thread
    op = CallBack()
    x = pt.dscalar("x")
    s = shared(np.float64(1.0), name="s")
    read = function([], s * 10)
    seen = []
    op.callback = lambda: seen.append((float(s.get_value()), float(read())))
    f = function([x], op(x) + s, updates={s: s + 1})
    assert float(_run_in_thread(lambda: f(1.0))) == 3.0
    assert seen == [(1.0, 10.0)] and float(s.get_value()) == 2.0


def test_a_waiting_thread_is_not_taken_for_reentry():
    # another thread waiting for the lock is just waiting
    started, go = threading.Event(), threading.Event()
    op = CallBack()
    op.callback = lambda: (started.set(), go.wait(10))
    x = pt.dscalar("x")
    f = function([x], op(x))
    first = threading.Thread(target=f, args=(1.0,))
    first.start()
    assert started.wait(10)
    op.callback = lambda: None
    timer = threading.Timer(0.05, go.set)
    timer.start()
    assert float(_run_in_thread(lambda: f(4.0))) == 8.0
    first.join(10)
    timer.join()
