"""JAX is an optional dependency: without it arignote imports and runs, and asking for the
JAX mode says what is missing (checked in a subprocess where ``import jax`` fails)."""

from __future__ import annotations

import subprocess
import sys

CODE = """
import sys
sys.modules["jax"] = None  # import jax fails, as where it is not installed
import arignote, arignote.tensor as pt
from arignote.compile.mode import Mode, get_mode
x = pt.dvector("x")
assert arignote.function([x], x + 1)([1.0]).tolist() == [2.0]
for ask in (lambda: get_mode("JAX"), lambda: Mode(linker="jax"), lambda: arignote.function([x], x, mode="JAX")):
    try:
        ask()
    except ImportError as err:
        assert "arignote[jax]" in str(err), err
    else:
        raise AssertionError("no error without JAX")
print("ok")
"""


def test_without_jax_the_jax_mode_says_what_is_missing() -> None:
    done = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "ok"
