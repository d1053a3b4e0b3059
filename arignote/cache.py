"""``python -m arignote.cache [info|clear]``: the size of arignote's kernel cache, or clear it
(see :mod:`arignote.link.numba.cache`)."""

from __future__ import annotations

import sys

from arignote.link.numba.cache import clear, info, main

__all__ = ["clear", "info", "main"]

if __name__ == "__main__":
    sys.exit(main())
