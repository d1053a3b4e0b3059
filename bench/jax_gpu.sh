#!/usr/bin/env bash
# The JAX backend's checks on a machine with a GPU, as one command: the devices JAX sees, the
# JAX benchmark (bench/jax_backend.py, every workload, with the optimised programs of
# arignote and of hand-written JAX written out for comparison) and the JAX test-suite.
# Run from the repository root with a Python that has JAX for the GPU, NumPy, SciPy and
# pytest (arignote itself comes from the checkout). Results go to $OUT (default
# /tmp/jax-gpu): devices.txt, bench.txt, bench.json, checks.txt (bench/jax_checks.py),
# exit.txt, hlo.tgz (the dumps, packed: the device tool brings back at most 8 files),
# tests.txt. Each stage has a time limit so that the whole fits in about 9 minutes:
#
#     bash bench/jax_gpu.sh    (BENCH_ARGS="--compile-repeats 5" passes options to the benchmark)
set -uo pipefail
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false
OUT="${OUT:-/tmp/jax-gpu}"
PY="${PYTHON:-python3}"
mkdir -p "$OUT"
{ nvidia-smi -L; "$PY" -c "import jax, numpy, scipy; print('jax', jax.__version__, 'numpy', numpy.__version__, 'scipy', scipy.__version__, jax.devices())"; } 2>&1 | tee "$OUT/devices.txt"
timeout 300 "$PY" bench/jax_backend.py ${BENCH_ARGS:-} --out "$OUT/bench.json" --dump-hlo "$OUT/hlo" 2>&1 | tee "$OUT/bench.txt"
# what a check costs a call: staged in the program, and as a host callback
timeout 60 "$PY" bench/jax_checks.py 2>&1 | tee "$OUT/checks.txt"
# a failed check, then exit: the call raises the check's error, and JAX has nothing left to
# raise at exit (off the CPU it kept the failure in a token: "Exception ignored in atexit")
"$PY" - >"$OUT/exit.txt" 2>&1 <<'PY'
import numpy as np, arignote, arignote.tensor as pt
from arignote.raise_op import Assert
x = pt.dvector("x")
f = arignote.function([x], Assert("x must be positive")(x, pt.all(x > 0)), mode="JAX")
try:
    f(np.array([-1.0]))
except AssertionError as err:
    print("raised:", err)
PY
{ cat "$OUT/exit.txt"; grep -q "Exception ignored" "$OUT/exit.txt" && echo "exit: NOT clean" || echo "exit: clean"; } | tail -3
tar czf "$OUT/hlo.tgz" -C "$OUT" hlo && rm -r "$OUT/hlo"
# Every failure is listed (-rf), up to 60, so that one run shows what a JAX version or the GPU changes.
timeout 200 "$PY" -m pytest -q -p no:cacheprovider --maxfail=60 -rf tests/link/jax arignote/link/jax \
    $("$PY" -c "import xdist" 2>/dev/null && echo "-n 8") >"$OUT/tests.txt" 2>&1
tail -80 "$OUT/tests.txt"
