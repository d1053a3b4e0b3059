"""Every case of ``tools/dtype_cases.py`` gives arignote the output dtypes and static shapes of PyTensor 3.

``tests/data/pytensor_output_dtypes.json`` holds, per case, PyTensor's output dtypes and static
shapes or the exception it raised; ``tools/pytensor_dtypes.py`` writes it from an installed
PyTensor (this test never imports PyTensor). The cases are built here in arignote from the same
definitions. Where PyTensor raises, arignote must raise a TypeError, ValueError or
NotImplementedError. A sample of cases is also compiled and run: the computed array must have
the dtype and a shape compatible with the static shape of its Variable.

Static shapes must be equal, except that arignote may know a length greater than 1 that
PyTensor leaves unknown (``svd``'s outputs): the broadcastable pattern is the same.
``DIFFERS`` keys are regular expressions over case ids; each must match a case, and each case
it matches must still differ (so the list only shrinks).
"""

from __future__ import annotations

import importlib.util
import json
import re
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import arignote
import arignote.tensor as pt
from arignote.graph.traversal import explicit_graph_inputs

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "pytensor_output_dtypes.json"

# Deliberate differences: a regular expression matching case ids (whole), and the reason.
_BITWISE = r"(and_|or_|xor|bitwise_and|x[&|^]y)"
_NUMBER = r"(py3|py300|py0\.1|py0\.5|np\.(int8|int64|float32)\(2\)|np\.float64\(0\.5\))"
_INT = r"(py3|py300|np\.int(8|64)\(2\))"
DIFFERS: dict[str, str] = {
    # where NumPy has no such function for the dtypes, arignote refuses when building
    r"(floor_div|int_div|mod|x//y)\(.*complex.*\)": "NumPy has no complex floor division or "
    "remainder: refused when building (PyTensor builds the node)",
    rf"(x//{_NUMBER}|{_NUMBER}(//|%)x)\(complex\d+\)": "as above, with a Python or NumPy scalar",
    r"(arctan2|deg2rad|logaddexp)\(.*complex.*\)": "NumPy has no complex arctan2, deg2rad or "
    "logaddexp: refused when building",
    _BITWISE + r"\((int\d+,uint64|uint64,int\d+)\)": "bitwise ops of uint64 and a signed int: NumPy "
    "has no common integer dtype and PyTensor's float64 node fails when run; refused when building",
    rf"x[&|^]{_INT}\(uint64\)": "as above, with a Python or NumPy int",
    r"(inc_subtensor\(x\[0\],|x\[0\]\.inc\()(bool<-int8|int\d+<-float\d+)\)": "an increment that changes "
    "kind: PyTensor builds a node whose run fails (NumPy refuses the in-place add); refused when building",
    r"linalg\.eigh\(complex\d+\)": "PyTensor types the eigenvectors of complex input float; they are complex",
    r"linalg\.tensorinv\(.*\)": "PyTensor types the inverse like its input (shape (2, 2, 4), int for "
    "int); as NumPy's it is (4, 2, 2) and float",
    r"(var|std)(\(axis=0\))?\(complex\d+\)": "NumPy's variance of complex input is real (mean of "
    "|x - mean|^2); PyTensor's is the complex mean of squared deviations",
    r"(as_tensor|constant)\(py2\*\*63\)": "2**63 does not fit int64 (PyTensor's constant wraps to "
    "-2**63): uint64, as NumPy",
    r"constant\(pyTrue\)": "pt.constant(True) refuses with a message (PyTensor makes an int8, not a bool)",
    r"linalg\.lstsq\(.*\)": "numpy.linalg.lstsq's outputs: a vector solution for a vector b, float32 "
    "kept; PyTensor's are float64 matrices",
    r"linalg\.norm\(int8\)|linalg\.norm\(ord=1,axis=1\)\(int\d+\)": "integer input is computed in float64, as "
    "numpy.linalg.norm",
    r"extra_ops\.bincount\((int8|uint8|uint64)\)": "counts are int64, as NumPy's (PyTensor counts in the "
    "input's dtype: int8 counts wrap past 127)",
    # cases PyTensor refuses and NumPy computes: arignote computes them as NumPy does
    _BITWISE + r"\((bool,int8|int8,bool)\)": "NumPy's bitwise ops of bool and int8 give int8",
    rf"x[&|^]{_INT}\(bool\)": "as above, with a Python or NumPy int",
    r"i?round\((bool|u?int\d+)\)": "NumPy rounds integers (keeping the dtype)",
    r"argmin\(complex\d+\)": "NumPy orders complex numbers (real part first)",
    r"(is|all)close\((bool|complex\d+),float32\)": "NumPy compares bools and complex numbers with floats",
    r"extra_ops\.bincount(\(weights float32\))?\(bool\)": "NumPy counts bools",
    r"extra_ops\.diff\(bool\)": "NumPy's diff of bools is !=",
    r"extra_ops\.fill_diagonal\(uint(8|64),py2\)": "NumPy writes the Python int 2 into unsigned ints",
    r"extra_ops\.repeat\(uint64\)": "NumPy repeats uint64 values",
    r"extra_ops\.unravel_index\(uint(8|64)\)": "NumPy takes unsigned indices",
    r"linalg\.slogdet\(complex\d+\)": "NumPy's slogdet takes complex input",
    r"x\[scalar bool\]": "NumPy's x[True] adds an axis of length 1 (PyTensor: NotImplementedError)",
}

# Differences in special functions, which another engineer owns: reported, not fixed here.
OTHER_WORK: dict[str, str] = {
    r"sigmoid\(complex\d+\)": "refused for complex input; PyTensor computes a complex sigmoid",
    r"(softplus|gammaln|log1mexp)\(complex\d+\)": "refused for complex input; PyTensor builds a node "
    "that fails when run",
    r"special\.(log_)?softmax\(bool\)": "computed in float32; PyTensor refuses bool input",
}

REFUSALS = (TypeError, ValueError, NotImplementedError)


def _load_cases() -> dict[str, Any]:
    spec = importlib.util.spec_from_file_location("dtype_cases", ROOT / "tools" / "dtype_cases.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.build_cases(pt)


CASES = _load_cases()
RECORDED: dict[str, dict[str, Any]] = json.loads(DATA.read_text())["cases"]


def _build(case_id: str) -> list[Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = CASES[case_id]()
    return list(out) if isinstance(out, list | tuple) else [out]


def _difference(case_id: str) -> str | None:
    """How arignote's result for the case differs from PyTensor's, or None when it does not."""
    expected = RECORDED[case_id]
    try:
        outs = _build(case_id)
    except Exception as exc:  # compared with what PyTensor did below
        if "raises" in expected:
            if isinstance(exc, REFUSALS) and str(exc):
                return None
            return f"raises {type(exc).__name__}({exc}), not a clear TypeError/ValueError"
        return f"raises {type(exc).__name__}: {exc}; PyTensor gives {expected}"
    got = {
        "dtypes": [o.type.dtype for o in outs],
        "shapes": [list(o.type.shape) for o in outs],
    }
    if "raises" in expected:
        return f"gives {got}; PyTensor raises {expected['raises']}"
    if got["dtypes"] != expected["dtypes"] or not _same_static_shapes(got["shapes"], expected["shapes"]):
        return f"gives {got}; PyTensor gives {expected}"
    return None


def _same_static_shapes(got: list, expected: list) -> bool:
    """Equal, but for lengths above 1 that arignote knows where PyTensor's are unknown."""
    if len(got) != len(expected):
        return False
    for g, e in zip(got, expected, strict=True):
        if len(g) != len(e):
            return False
        if any(
            gs != es and not (es is None and gs is not None and gs > 1) for gs, es in zip(g, e, strict=True)
        ):
            return False
    return True


def _known(case_id: str) -> str | None:
    """The pattern of ``DIFFERS`` or ``OTHER_WORK`` that names the case, if any."""
    for pattern in (*DIFFERS, *OTHER_WORK):
        if re.fullmatch(pattern, case_id):
            return pattern
    return None


def test_case_table_matches_the_recording() -> None:
    assert set(CASES) == set(RECORDED), "rerun tools/pytensor_dtypes.py"


def test_every_known_difference_names_a_case() -> None:
    unused = [p for p in (*DIFFERS, *OTHER_WORK) if not any(re.fullmatch(p, c) for c in RECORDED)]
    assert not unused


@pytest.mark.parametrize("case_id", sorted(RECORDED))
def test_output_dtype_and_shape(case_id: str) -> None:
    difference = _difference(case_id)
    pattern = _known(case_id)
    if pattern is not None:
        assert difference is not None, f"{case_id} now matches PyTensor: narrow the entry {pattern!r}"
        return
    assert difference is None, f"{case_id}: {difference}"


def _value(var: Any, rng: np.random.Generator) -> np.ndarray:
    """An input value for ``var``: ones for bools and integers (safe indices and divisors: an
    integer division by zero raises), else random."""
    shape = tuple(3 if s is None else s for s in var.type.shape)
    dtype = np.dtype(var.type.dtype)
    if dtype.kind in "biu":
        return np.ones(shape, dtype=dtype)
    value = rng.uniform(0.1, 0.9, size=shape)
    if dtype.kind == "c":
        value = value + 0.25j
    return value.astype(dtype)


# Every 23rd case that builds in both libraries, skipping linear algebra (its random inputs
# may be singular or not positive definite).
SAMPLE = [
    case_id
    for i, case_id in enumerate(sorted(RECORDED))
    if i % 23 == 0 and "raises" not in RECORDED[case_id] and "linalg" not in case_id
]


@pytest.mark.parametrize("case_id", SAMPLE)
def test_computed_dtype(case_id: str) -> None:
    if _difference(case_id) is not None:
        pytest.skip("differs from PyTensor already (see test_output_dtype_and_shape)")
    outs = _build(case_id)
    inputs = list(explicit_graph_inputs(outs))
    rng = np.random.default_rng(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = arignote.function(inputs, outs)(*[_value(v, rng) for v in inputs])
    for out, result in zip(outs, results, strict=True):
        result = np.asarray(result)
        assert result.dtype == out.type.dtype, case_id
        assert result.ndim == out.type.ndim, case_id
        for static, actual in zip(out.type.shape, result.shape, strict=True):
            assert static is None or static == actual, case_id
