"""Record the output dtypes and static shapes of PyTensor 3 into ``tests/data/pytensor_output_dtypes.json``.

Run with an interpreter that has PyTensor 3 installed (the tests never import PyTensor)::

    /path/to/pytensor-venv/bin/python tools/pytensor_dtypes.py

The cases are those of ``tools/dtype_cases.py``: functions of ``pytensor.tensor`` and its
``math``, ``special``, ``linalg``, ``nlinalg``, ``slinalg`` and ``extra_ops`` modules, and the
Python operators, applied to symbolic inputs of each dtype (bool to complex128) and to mixed
pairs, Python ints, floats, bools and NumPy scalars. For each case id the file holds either
``{"dtypes": [...], "shapes": [...]}``, one entry per output (a static shape is a list with
``null`` for an unknown length), or ``{"raises": "<exception class name>"}`` when PyTensor
refuses to build the case. ``floatX`` must be PyTensor's default, float64, as the test assumes.
``tests/test_api_dtypes.py`` builds the same cases in arignote and compares.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import warnings
from pathlib import Path
from typing import Any

import pytensor
import pytensor.tensor as pt

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "data" / "pytensor_output_dtypes.json"


def load_cases_module() -> Any:
    """``tools/dtype_cases.py``, loaded by path (``tools`` is not a package)."""
    spec = importlib.util.spec_from_file_location("dtype_cases", ROOT / "tools" / "dtype_cases.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def record(build: Any) -> dict[str, Any]:
    """What building one case gives: its outputs' dtypes and static shapes, or the exception."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = build()
    except Exception as exc:  # any refusal is a result to record
        return {"raises": type(exc).__name__}
    outs = out if isinstance(out, list | tuple) else [out]
    return {
        "dtypes": [o.type.dtype for o in outs],
        "shapes": [list(o.type.shape) for o in outs],
    }


def main() -> None:
    if pytensor.config.floatX != "float64":
        sys.exit("run with PyTensor's default floatX (float64)")
    cases = load_cases_module().build_cases(pt)
    table = {case_id: record(build) for case_id, build in cases.items()}
    # A missing name is a mistake in the case table, not a result worth comparing.
    missing = [case_id for case_id, r in table.items() if r.get("raises") == "AttributeError"]
    if missing:
        sys.exit(f"cases that PyTensor has no function for: {missing}")
    data = {"pytensor_version": pytensor.__version__, "cases": table}
    OUT.write_text(json.dumps(data, indent=0, sort_keys=True) + "\n")
    raised = sum("raises" in r for r in table.values())
    print(f"{len(table)} cases ({raised} raise in PyTensor) written to {OUT}")


if __name__ == "__main__":
    main()
