"""Test-suite settings: a rewrite that raises is a bug, so it fails the test.

BLAS runs on one thread per test process: the tests use small matrices, for which
OpenBLAS's threads only contend with each other and with the other pytest workers (a 3x3
solve took 10-16 ms with threads on a loaded 2-core machine, microseconds without). This
must be set before NumPy loads its BLAS, hence first.
"""

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

from arignote.configdefaults import config  # noqa: E402

config.on_opt_error = "raise"
