"""How DebugMode and NanGuardMode describe values, nodes and graphs in their errors."""

from __future__ import annotations

import reprlib
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from arignote.graph.basic import Apply, Variable
from arignote.graph.fg import FunctionGraph
from arignote.printing import debugprint


def _num(x: Any) -> str:
    """A NumPy scalar as its plain Python repr (``1.5``, not ``np.float64(1.5)``)."""
    return repr(x.item()) if isinstance(x, np.generic) else repr(x)


def _summary(value: Any) -> str:
    """A one-line description of a value: type, shape, dtype, range and (small) contents."""
    if isinstance(value, np.ndarray):
        parts = [f"ndarray shape {value.shape}, dtype {value.dtype}"]
        if value.size and value.dtype.kind in "biufc":
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                if value.dtype.kind in "fc":
                    n_nan = int(np.isnan(value).sum())
                    n_inf = int(np.isinf(value).sum())
                    finite = value[np.isfinite(value)]
                    if finite.size and value.dtype.kind == "f":
                        word = "finite " if finite.size < value.size else ""
                        parts.append(f"{word}min {_num(finite.min())}, {word}max {_num(finite.max())}")
                    if n_nan:
                        parts.append(f"{n_nan} NaN")
                    if n_inf:
                        parts.append(f"{n_inf} inf")
                else:
                    parts.append(f"min {_num(value.min())}, max {_num(value.max())}")
        if value.size <= 10:
            parts.append(f"value {np.array2string(value, separator=', ')}")
        return ", ".join(parts)
    if isinstance(value, np.generic):
        return f"NumPy {value.dtype} scalar {_num(value)}"
    if value is None:
        return "None"
    return f"{type(value).__name__} {reprlib.repr(value)}"


def _difference(expected: Any, got: Any) -> str:
    """Where two values differ: dtypes, shapes, or the largest elementwise difference."""
    try:
        a, b = np.asarray(expected), np.asarray(got)
    except Exception:
        return "the values are not arrays; compare them above"
    notes = []
    if a.dtype != b.dtype:
        notes.append(f"dtypes differ ({a.dtype} expected, {b.dtype} got)")
    if a.shape != b.shape:
        notes.append(f"shapes differ ({a.shape} expected, {b.shape} got)")
        return "; ".join(notes)
    if a.dtype.kind not in "biufc" or b.dtype.kind not in "biufc":
        return "; ".join(notes) or "the values differ"
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kind = np.result_type(a, b, np.float64)
        af, bf = a.astype(kind), b.astype(kind)
        same = (af == bf) | (np.isnan(af) & np.isnan(bf))
        n_diff = int((~same).sum())
        if not n_diff:
            notes.append("no element differs (a Type's values_eq_approx may be too strict)")
            return "; ".join(notes)
        absdiff = np.abs(af - bf)
        absdiff[same] = 0
        finite = np.where(np.isfinite(absdiff), absdiff, -1.0)
        k = int(np.argmax(finite)) if (finite >= 0).any() else int(np.argmax(~same))
        where = np.unravel_index(k, a.shape) if a.ndim else ()
        mad = absdiff.flat[k]
        rel = mad / np.abs(af.flat[k]) if af.flat[k] != 0 else np.inf
        notes.append(
            f"max abs diff {float(np.real(mad)):.6g} at index {tuple(int(i) for i in where)} "
            f"(expected {_num(a.flat[k])}, got {_num(b.flat[k])}; rel diff {float(np.real(rel)):.3g}); "
            f"{n_diff} of {a.size} element(s) differ"
        )
    return "; ".join(notes)


def _site(node: Apply | None) -> str:
    if node is None:
        return "<not created by an Apply node>"
    try:
        return node.creation_site
    except Exception:  # pragma: no cover - defensive: a foreign Apply without a trace
        return "<unknown location>"


def _indent(text: str, prefix: str = "    ") -> str:
    return "\n".join(prefix + line for line in str(text).splitlines())


def _var_label(var: Variable) -> str:
    node = var.owner
    if node is not None and var.index is not None:
        return f"output {var.index} ({var}) of node {node}"
    return f"variable {var}"


def _inputs_lines(node: Apply, values: Sequence[Any] | None) -> list[str]:
    lines = []
    for i, var in enumerate(node.inputs):
        text = f"    input {i} ({var}): Type {var.type}"
        if values is not None and i < len(values):
            text += f", {_summary(values[i])}"
        lines.append(text)
    return lines


def _graph_text(var: Variable, depth: int = 6) -> str:
    try:
        return str(debugprint(var, depth=depth, file="str")).rstrip()
    except Exception:
        return str(var)


def _graph_text_fg(fgraph: FunctionGraph) -> str:
    try:
        return str(debugprint(fgraph, file="str")).rstrip()
    except Exception:
        return str(fgraph)
