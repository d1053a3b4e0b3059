"""Kernel calls split over threads (arignote.link.numba.threads): every row computed once,
whichever thread is free; errors after the helpers stop; the thread count's setting; a
forked child's own pool; and, with Numba, split calls agreeing with the reference VM."""

from __future__ import annotations

import itertools
import multiprocessing
import threading

import numpy as np
import pytest

import arignote
import arignote.tensor as pt
from arignote.compile.mode import Mode
from arignote.link.numba import linker as nl
from arignote.link.numba import threads as th


def _recording_kernel(seen: list, lock: threading.Lock, beyond_at: int | None = None):
    def kernel(out, start, stop):
        with lock:
            seen.append((start, stop, threading.get_ident()))
        out[start:stop] += np.arange(start, stop)
        return beyond_at is not None and start <= beyond_at < stop

    return kernel


@pytest.mark.parametrize("rows,threads", [(2, 2), (7, 2), (1000, 2), (1000, 3), (5, 4)])
def test_every_row_is_computed_once(rows, threads):
    seen: list = []
    out = np.zeros(rows)
    beyond = th.split_call(_recording_kernel(seen, threading.Lock()), (out,), rows, threads)
    assert beyond is False
    np.testing.assert_array_equal(out, np.arange(rows))  # each row once: += would show twice
    pieces = sorted((a, b) for a, b, _ in seen)
    assert pieces[0][0] == 0 and pieces[-1][1] == rows
    assert all(b == c for (_, b), (c, _) in itertools.pairwise(pieces))  # no gap, no overlap
    assert len(pieces) == min(rows, 2 * threads)


def test_a_piece_asking_for_tier_1_is_reported():
    out = np.zeros(100)
    assert th.split_call(_recording_kernel([], threading.Lock(), beyond_at=90), (out,), 100, 2) is True


def test_the_caller_takes_every_piece_when_no_helper_runs():
    # a helper that cannot start (its thread is held) leaves all the work to the caller
    # instead of making the call wait for it
    th.split_call(lambda out, a, b: False, (None,), 4, 2)  # (the pool exists)
    gate = threading.Event()
    blockers = [th._pool.submit(gate.wait) for _ in range(th._pool_size)]  # every helper busy
    try:
        seen: list = []
        out = np.zeros(10)
        th.split_call(_recording_kernel(seen, threading.Lock()), (out,), 10, 2)
        np.testing.assert_array_equal(out, np.arange(10))
        assert {ident for *_, ident in seen} == {threading.get_ident()}
    finally:
        gate.set()
        for b in blockers:
            b.result(timeout=10)


def test_an_error_is_raised_after_the_helpers_stop():
    finished = []

    def kernel(out, start, stop):
        if start == 0:
            raise TypeError("no matching signature")
        finished.append(start)
        return False

    with pytest.raises(TypeError, match="no matching signature"):
        th.split_call(kernel, (None,), 8, 2)
    # (whatever a helper had started was over before the error reached the caller)
    assert all(isinstance(s, int) for s in finished)


def test_pieces_follow_the_estimated_time():
    assert th.pieces_for(1, 1e9, 1000) == 1
    assert th.pieces_for(2, th.SPLIT_NS - 1, 1000) == 1
    assert th.pieces_for(2, 1e9, 1) == 1  # one row cannot be split
    assert th.pieces_for(4, th.SPLIT_NS, 1000) == 2  # each share at least half of SPLIT_NS
    assert th.pieces_for(4, 1.6 * th.SPLIT_NS, 1000) == 3
    assert th.pieces_for(4, 1e9, 3) == 3


@pytest.mark.parametrize("raw", ["0", "-2", "two"])
def test_a_bad_thread_count_names_the_variable(monkeypatch, raw):
    monkeypatch.setattr(th, "_threads", None)
    monkeypatch.setenv("ARIGNOTE_KERNEL_THREADS", raw)
    with pytest.raises(ValueError, match=f"ARIGNOTE_KERNEL_THREADS must be a positive integer, got '{raw}'"):
        th.kernel_threads()


def test_the_thread_count_is_read_from_the_environment(monkeypatch):
    monkeypatch.setattr(th, "_threads", None)
    monkeypatch.setenv("ARIGNOTE_KERNEL_THREADS", "3")
    assert th.kernel_threads() == 3
    monkeypatch.setattr(th, "_threads", None)
    monkeypatch.delenv("ARIGNOTE_KERNEL_THREADS")
    assert 1 <= th.kernel_threads() <= th.MAX_THREADS


@pytest.mark.parametrize("bad", [0, 1.5, True, "2"])
def test_the_linker_refuses_a_bad_thread_count(bad):
    with pytest.raises(ValueError, match="threads must be None or a positive integer"):
        nl.NumbaLinker(threads=bad)


def _split_in_child(queue) -> None:
    out = np.zeros(50)
    th.split_call(_recording_kernel([], threading.Lock()), (out,), 50, 2)
    queue.put(float(out.sum()))


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(), reason="needs fork")
def test_a_forked_child_splits_with_its_own_threads():
    th.split_call(lambda out, a, b: False, (None,), 4, 2)  # the parent's pool has a thread
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    child = ctx.Process(target=_split_in_child, args=(queue,))
    child.start()
    child.join(60)
    assert not child.is_alive(), "the child hung waiting for its parent's thread"
    assert queue.get(timeout=5) == float(np.arange(50).sum())


# -- with Numba: split calls against the reference VM ----------------------------------------


def test_large_calls_split_and_agree(empty_kernel_cache, monkeypatch):
    pytest.importorskip("numba")
    calls: list = []
    real = nl.split_call

    def spy(kernel, args, rows, parts):
        calls.append((rows, parts))
        return real(kernel, args, rows, parts)

    monkeypatch.setattr(nl, "split_call", spy)
    x, y, v = pt.vectors("x", "y", "v")
    X = pt.matrix("X")
    # a map, a reduction of a fused input (rows), a plain reduction over columns, softmax's rows
    outs = [
        (x * y + x) * (y - 2.5),
        pt.sum(pt.exp(X) * v, axis=1),
        X.max(axis=0),
        pt.special.softmax(X, axis=1),
    ]
    mode = Mode(nl.NumbaLinker(jit="sync", threads=3, whole_graph="never"), "fast_run")
    f = arignote.function([x, y, X, v], outs, mode=mode)
    ref = arignote.function([x, y, X, v], outs, mode=Mode("vm", "fast_run"))
    rng = np.random.default_rng(3)
    args = (
        rng.normal(size=600_000),
        rng.normal(size=600_000),
        rng.normal(size=(1000, 1600)),
        rng.normal(size=1600),
    )
    for got, want in zip(f(*args), ref(*args)):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    assert len(calls) == 4 and all(parts > 1 for _, parts in calls)
    assert sorted(rows for rows, _ in calls) == [1000, 1000, 1600, 600_000]
    # small calls stay on the calling thread
    calls.clear()
    small = (args[0][:100], args[1][:100], args[2][:10, :10], args[3][:10])
    for got, want in zip(f(*small), ref(*small)):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    assert calls == []


def test_plain_reductions_get_a_kernel_only_when_calls_can_be_split(empty_kernel_cache):
    pytest.importorskip("numba")
    X = pt.matrix("X")
    a = np.random.default_rng(4).normal(size=(600, 500))
    one = arignote.function(
        [X], X.sum(axis=1), mode=Mode(nl.NumbaLinker(jit="background", threads=1), "fast_run")
    )
    assert one.vm.tier2 == []  # on one thread NumPy's reduction is as fast
    two = arignote.function(
        [X], X.sum(axis=1), mode=Mode(nl.NumbaLinker(jit="background", threads=2, hot_elements=1), "fast_run")
    )
    (slot,) = two.vm.tier2
    for _ in range(3):
        np.testing.assert_allclose(two(a), a.sum(axis=1), rtol=1e-12, atol=1e-12)
    assert nl.wait_for_kernels(300)
    np.testing.assert_allclose(two(a), a.sum(axis=1), rtol=1e-12, atol=1e-12)
    assert slot.state == "tier 2"
