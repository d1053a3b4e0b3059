"""The documented many-device example (``examples/jax_sharding.py``): logp and its gradient
over a batch sharded across two devices give the same numbers as one draw at a time.

It runs in a subprocess: XLA reads ``XLA_FLAGS`` (two CPU devices) only when JAX starts.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("jax")

ROOT = Path(__file__).resolve().parents[3]


def test_sharded_logp_and_gradient_on_two_devices() -> None:
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=2", JAX_PLATFORMS="cpu")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "jax_sharding.py")],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    lines = dict(line.split(": ", 1) for line in done.stdout.strip().splitlines())
    assert lines["devices"] == "2" and lines["shards"] == "2"
    assert float(lines["max_abs_difference"]) < 1e-9
