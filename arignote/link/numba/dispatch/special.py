"""Numba functions of :mod:`arignote.tensor.special`: ``Softmax`` and ``LogSoftmax`` along
one axis of a vector or matrix, a row at a time (its maximum subtracted first; an infinite
maximum is not subtracted by LogSoftmax, as the reference does).
"""

from __future__ import annotations

from arignote.graph.basic import Apply
from arignote.link.numba.dispatch.basic import (
    FLOATS,
    NoNumbaImpl,
    NumbaImpl,
    check_types,
    nb_dtype,
    numba_funcify,
)
from arignote.tensor.elemwise import normalize_axis
from arignote.tensor.special import LogSoftmax, Softmax

__all__: list[str] = []

_ROW_SOFTMAX = """\
        m = -np.inf
        for j in range(n):
            v = {cast}(r[j])
            if v > m or v != v:
                m = v
        s = 0.0
        for j in range(n):
            e = np.exp({cast}(r[j]) - m)
            q[j] = e
            s += e
        for j in range(n):
            q[j] = q[j] / s
"""

_ROW_LOGSOFTMAX = """\
        m = -np.inf
        for j in range(n):
            v = {cast}(r[j])
            if v > m or v != v:
                m = v
        if not np.isfinite(m):
            m = 0.0
        s = 0.0
        for j in range(n):
            s += np.exp({cast}(r[j]) - m)
        ls = np.log(s)
        for j in range(n):
            q[j] = {cast}(r[j]) - m - ls
"""


def _softmax(op: Softmax | LogSoftmax, node: Apply, row: str) -> NumbaImpl:
    check_types(node, str(op))
    x = node.inputs[0]
    nd = x.type.ndim
    odt = node.outputs[0].type.dtype
    if nd not in (1, 2) or odt not in FLOATS:
        raise NoNumbaImpl(f"{op}: only vectors and matrices of floats")
    axes = normalize_axis(op.axis, nd) if op.axis is not None else tuple(range(nd))
    if len(axes) != 1 and nd != 1:
        raise NoNumbaImpl(f"{op}: over several axes")
    cast = nb_dtype(odt)
    lines = ["def impl(x):"]
    if nd == 1:
        lines.append("    rows = np.expand_dims(x, 0)")
    else:
        lines.append("    rows = x" if axes == (1,) else "    rows = x.T")
    lines += [
        f"    o = np.empty(rows.shape, {cast})",
        "    n = rows.shape[1]",
        "    for i in range(rows.shape[0]):",
        "        r = rows[i]",
        "        q = o[i]",
    ]
    lines.append(row.format(cast=cast).rstrip("\n"))
    if nd == 1:
        lines.append("    return o[0]")
    else:
        lines.append("    return o" if axes == (1,) else "    return np.ascontiguousarray(o.T)")
    return NumbaImpl("\n".join(lines) + "\n")


@numba_funcify.register(Softmax)
def _softmax_op(op: Softmax, node: Apply) -> NumbaImpl:
    return _softmax(op, node, _ROW_SOFTMAX)


@numba_funcify.register(LogSoftmax)
def _log_softmax_op(op: LogSoftmax, node: Apply) -> NumbaImpl:
    return _softmax(op, node, _ROW_LOGSOFTMAX)
