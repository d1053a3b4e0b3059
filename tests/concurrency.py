"""Calls from several threads at once, for the tests of call paths that take no lock."""

from __future__ import annotations

import threading
from collections.abc import Callable


def wrong_in_threads(call_ok: Callable[[int], bool], n_threads: int = 4, n_calls: int = 200) -> list[int]:
    """Run ``call_ok(k)`` ``n_calls`` times on each of ``n_threads`` threads (``k``: the
    thread's number, for values of its own) and return the numbers of the threads that saw
    a wrong result (``call_ok`` returned False), each once."""
    wrong: list[int] = []

    def work(k: int) -> None:
        for _ in range(n_calls):
            if not call_ok(k):
                wrong.append(k)
                return

    threads = [threading.Thread(target=work, args=(k,)) for k in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return wrong
