"""Compiled functions survive pickling (loaded in a fresh process, nothing recompiled,
same results) and calls from several threads at once."""

from __future__ import annotations

import contextlib
import gc
import json
import os
import pickle
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import arignote.tensor as pt
from arignote import In, Mode, Out, function, shared
from arignote.graph.basic import Apply
from arignote.graph.op import Op
from arignote.printing import debugprint

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Run in the fresh process: anything that would compile (build a FunctionMaker, run a
# rewrite, call function()) raises, then the pickled function is loaded and called.
CHILD = r"""
import importlib, json, pickle, sys
import numpy as np
function_module = importlib.import_module("arignote.compile.function")
maker_module = importlib.import_module("arignote.compile.maker")
mode_module = importlib.import_module("arignote.compile.mode")

def forbidden(*args, **kwargs):
    raise AssertionError("recompiled in the child process")

maker_module.FunctionMaker.__init__ = forbidden
mode_module.RewriteQuery.__call__ = forbidden
function_module.function = forbidden
maker_module.FunctionMaker.create = forbidden

with open(sys.argv[1], "rb") as fh:
    f, s, calls = pickle.load(fh)
from arignote.printing import debugprint
out = {"dprint": debugprint(f, file="str"), "name": f.name, "trust": f.trust_input,
       "shared_is_s": f.get_shared()[0] is s, "results": []}
for args, kwargs in calls:
    res = f(*args, **kwargs)
    out["results"].append({k: np.asarray(v).tolist() for k, v in res.items()})
out["s"] = np.asarray(s.get_value()).tolist()
print(json.dumps(out))
"""


def _tolist(res: dict) -> dict:
    return {k: np.asarray(v).tolist() for k, v in res.items()}


def test_a_pickled_function_runs_in_a_fresh_process_without_recompiling(tmp_path):
    x = pt.dvector("x")
    k = pt.dscalar("k")
    acc = pt.dscalar("acc")
    s = shared(np.arange(3.0), name="s")
    c = pt.constant(np.array([0.0, 0.5, 0.0]), name="c")
    # (eval() caches a compiled function on a root Variable: the pickle leaves it out)
    c.eval()
    x.eval({x: np.ones(3)})
    f = function(
        [x, In(k, name="k"), In(acc, update=acc + k)],
        {"scaled": x * k + s + c, "total": Out(x.sum() + acc, borrow=True)},
        updates={s: s + 1},
        name="pickled",
    )
    f(np.ones(3), 2.0, 0.0)  # some state: s and acc's cell have moved on
    calls = [
        ((np.ones(3), 2.0, 1.0), {}),
        ((np.arange(3.0),), {"k": 0.5, "acc": 3.0}),
        ((), {"x": np.full(3, 2.0), "k": 2.0, "acc": 10.0}),
    ]
    path = tmp_path / "f.pkl"
    with open(path, "wb") as fh:
        pickle.dump((f, s, calls), fh)
    expected = [_tolist(f(*args, **kwargs)) for args, kwargs in calls]
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(path)],
        env=dict(os.environ, PYTHONPATH=REPO),
        cwd=str(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["results"] == expected
    assert out["s"] == s.get_value().tolist()
    assert out["dprint"] == debugprint(f, file="str")
    assert out["name"] == "pickled" and out["trust"] is False and out["shared_is_s"] is True


def test_root_variables_evaluated_before_pickling_load_with_their_state():
    """``eval()`` caches its compiled function on the Variable. A root Variable's pickle
    leaves that cache out: loaded first, it would link the function before the Variable
    had its own state (``TensorConstant has no attribute 'data'``, or ``type`` for an
    input). Interned constants (``as_tensor_variable(2.0)``) carry every earlier eval's
    cache, so an unrelated eval could break a later pickle in the same process."""
    two = pt.as_tensor_variable(2.0)
    c = pt.constant(np.arange(3.0), name="c")
    x = pt.dvector("x")
    assert float(two.eval()) == 2.0 and c.eval().tolist() == [0.0, 1.0, 2.0]
    assert x.eval({x: np.ones(2)}).tolist() == [1.0, 1.0]
    f = function([x], x * two + c)
    for protocol in (2, pickle.HIGHEST_PROTOCOL):
        g = pickle.loads(pickle.dumps(f, protocol))
        np.testing.assert_array_equal(g(np.ones(3)), [2.0, 3.0, 4.0])
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        loaded = pickle.loads(pickle.dumps(c, protocol))
        assert "_fn_cache" not in vars(loaded) and loaded.name == "c"
        np.testing.assert_array_equal(loaded.data, c.data)
    assert "_fn_cache" in vars(c)  # (the original keeps its cache)


def test_pickling_twice_in_one_thread_with_collections_between():
    """The order-hint tables of one pickle (registered per thread by node id) are gone
    before the next: the same function pickles to the same bytes after other graphs were
    pickled, dropped and collected (their ids free for reuse), and both load."""
    x = pt.dvector("x")
    y = x
    for i in range(30):
        y = pt.exp(y * 0.5) - float(i)
    f = function([x], y)
    first = pickle.dumps(f)
    for _ in range(3):
        z = pt.dvector("z")
        pickle.loads(pickle.dumps(function([z], pt.log1p(z * 2.0) + 1.0)))
        del z
        gc.collect()
    second = pickle.dumps(f)
    assert first == second
    for blob in (first, second):
        np.testing.assert_array_equal(pickle.loads(blob)(np.zeros(2)), f(np.zeros(2)))


def test_pickle_round_trip_in_process_keeps_state_and_options():
    x = pt.dvector("x")
    s = shared(np.zeros(2), name="s")
    f = function([x], (x + s).sum(), updates={s: s + x}, trust_input=True)
    f(np.ones(2))
    g, s2 = pickle.loads(pickle.dumps((f, s)))
    assert g.trust_input is True and s2 is not s
    assert g.get_shared() == [s2]
    assert float(g(np.ones(2))) == float(f(np.ones(2))) == 4.0
    np.testing.assert_array_equal(s2.get_value(), s.get_value())
    # the copy is independent: its shared variable is its own
    g(np.ones(2))
    assert s2.get_value()[0] == 3.0 and s.get_value()[0] == 2.0


def test_pickling_a_function_alone_carries_its_shared_values():
    s = shared(np.float64(5.0), name="s")
    f = function([], s * 2)
    g = pickle.loads(pickle.dumps(f))
    s.set_value(1.0)
    assert float(f()) == 2.0 and float(g()) == 10.0


def test_pickling_after_profile_and_errors():
    x = pt.dvector("x")
    y = pt.dvector("y")
    f = function([x, y], x + y, profile=True)
    f(np.ones(2), np.ones(2))
    with pytest.raises(ValueError):
        f(np.ones(2), np.ones(3))
    g = pickle.loads(pickle.dumps(f))
    np.testing.assert_array_equal(g(np.ones(2), np.ones(2)), [2, 2])
    with pytest.raises(ValueError, match="dimension 0"):
        g(np.ones(2), np.ones(3))


# -- threads ------------------------------------------------------------------------------


class SlowDouble(Op):
    """``2 * x`` by a thunk of its own (``make_thunk``) that sleeps before it reads its
    input cell, so that another thread gets the GIL in the middle of every call."""

    __props__ = ()

    def make_node(self, x):
        return Apply(self, [x], [x.type()])

    def make_thunk(self, node, storage_map, compute_map, no_recycling, impl=None):
        in_cell, out_cell = storage_map[node.inputs[0]], storage_map[node.outputs[0]]
        done = compute_map[node.outputs[0]]

        def thunk():
            time.sleep(0.0002)
            out_cell[0] = in_cell[0] * 2
            done[0] = True

        return thunk


def _hammer(f, n_threads: int, n_calls: int) -> list[tuple[float, float]]:
    """Call ``f(v)`` from several threads at once; (given, got) for every call."""
    seen: list[tuple[float, float]] = []
    lock = threading.Lock()
    start = threading.Barrier(n_threads)

    def work(t: int) -> None:
        start.wait()
        mine = []
        for i in range(n_calls):
            v = float(t * 1000 + i)
            mine.append((v, float(f(v))))
        with lock:
            seen.extend(mine)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(n_threads)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    return seen


def test_concurrent_calls_get_their_own_results():
    x = pt.dscalar("x")
    f = function([x], SlowDouble()(x) + 1, mode=Mode(optimizer=None))
    seen = _hammer(f, n_threads=4, n_calls=40)
    assert len(seen) == 160
    assert all(got == 2 * given + 1 for given, got in seen)


def test_the_lock_is_what_makes_concurrent_calls_correct():
    # the same test without the lock: calls interleave and some get another's input
    x = pt.dscalar("x")
    f = function([x], SlowDouble()(x) + 1, mode=Mode(optimizer=None))
    f._lock = contextlib.nullcontext()
    seen = _hammer(f, n_threads=4, n_calls=40)
    assert any(got != 2 * given + 1 for given, got in seen)


def test_concurrent_updates_are_all_applied():
    count = shared(np.int64(0), name="count")
    total = shared(np.float64(0.0), name="total")
    x = pt.dscalar("x")
    f = function([x], count, updates=[(count, count + 1), (total, total + SlowDouble()(x))])
    seen = _hammer(f, n_threads=3, n_calls=30)
    assert int(count.get_value()) == 90
    assert sorted(int(got) for _, got in seen) == list(range(90))  # each call saw its own count
    assert float(total.get_value()) == sum(2 * given for given, _ in seen)


def test_concurrent_eval_of_one_variable():
    x = pt.dvector("x")
    y = (x * 3).sum()
    results: list[float] = []

    def work(k: int) -> None:
        for i in range(20):
            results.append((k, i, float(y.eval({x: np.full(2, float(k * 100 + i))}))))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(3)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert len(results) == 60
    assert all(got == 6 * (k * 100 + i) for k, i, got in results)
