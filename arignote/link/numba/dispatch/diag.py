"""Numba functions of :mod:`arignote.tensor.diag` for matrices: ``ExtractDiag`` of a matrix's
diagonal (a copy: the values a view would show) and ``AllocDiag`` of a vector into a matrix.
Diagonals of other axes of higher-rank tensors have none (the graph stays on the per-node
tiers).
"""

from __future__ import annotations

from arignote.graph.basic import Apply
from arignote.link.numba.dispatch.basic import NoNumbaImpl, NumbaImpl, check_types, ndim_of, numba_funcify
from arignote.tensor.diag import AllocDiag, ExtractDiag

__all__: list[str] = []


def _start(offset: int) -> tuple[int, int]:
    """Where diagonal ``offset`` of a matrix starts: (row, column)."""
    return max(-offset, 0), max(offset, 0)


@numba_funcify.register(ExtractDiag)
def _extract_diag(op: ExtractDiag, node: Apply) -> NumbaImpl:
    check_types(node, str(op))
    if ndim_of(node.inputs[0]) != 2 or (op.axis1 % 2, op.axis2 % 2) != (0, 1):
        raise NoNumbaImpl(f"{op}: only the diagonals of a matrix's rows and columns are written")
    r0, c0 = _start(op.offset)
    return NumbaImpl(
        "def impl(x):\n"
        f"    n = max(0, min(x.shape[0] - {r0}, x.shape[1] - {c0}))\n"
        "    o = np.empty(n, x.dtype)\n"
        "    for i in range(n):\n"
        f"        o[i] = x[i + {r0}, i + {c0}]\n"
        "    return o\n"
    )


@numba_funcify.register(AllocDiag)
def _alloc_diag(op: AllocDiag, node: Apply) -> NumbaImpl:
    check_types(node, str(op))
    if ndim_of(node.inputs[0]) != 1 or (op.axis1 % 2, op.axis2 % 2) != (0, 1):
        raise NoNumbaImpl(f"{op}: only a vector on a matrix's diagonal is written")
    r0, c0 = _start(op.offset)
    return NumbaImpl(
        "def impl(x):\n"
        f"    n = x.shape[0] + {abs(op.offset)}\n"
        "    o = np.zeros((n, n), x.dtype)\n"
        "    for i in range(x.shape[0]):\n"
        f"        o[i + {r0}, i + {c0}] = x[i]\n"
        "    return o\n"
    )
