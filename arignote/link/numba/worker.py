"""``python -m arignote.link.numba.worker KEY...``: compile kernels out of process.

Each KEY names a kernel module in the disk cache (:mod:`arignote.link.numba.cache`);
importing it makes Numba compile it and store the machine code (``cache=True``), then the
entry is marked ready. The process that asked loads it from the cache. Exit status 1 when
some kernel failed (its entry is removed, the error printed).
"""

from __future__ import annotations

import sys
import traceback

from arignote.link.numba import cache
from arignote.link.numba.linker import _import_entry


def main(keys: list[str]) -> int:
    failed = 0
    for key in keys:
        if cache.is_ready(key):
            continue
        if cache.read_entry(key) is None:
            print(f"no valid kernel entry {key} in {cache.kernel_dir()}", file=sys.stderr)
            failed += 1
            continue
        try:
            _import_entry(key)
        except Exception:
            traceback.print_exc()
            cache.remove_entry(key)
            failed += 1
            continue
        cache.mark_ready(key)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
