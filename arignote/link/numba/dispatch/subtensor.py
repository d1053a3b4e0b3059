"""Numba functions of indexing (:mod:`arignote.tensor.indexing`): basic reads
(``Subtensor``: a view) and writes (``IncSubtensor``), and integer-vector rows
(``AdvancedSubtensor1``, ``AdvancedIncSubtensor1``: repeated rows accumulate, as
``numpy.add.at``).

An integer index out of bounds raises ``IndexError`` (Numba itself does not check bounds),
and a value that does not fit the indexed part raises, as the reference VM does. Integer
entries kept in an Op's ``idx_list`` are part of the Op (its props), so they are written into
the source; symbolic entries are inputs.
"""

from __future__ import annotations

from typing import Any

from arignote.graph.basic import Apply
from arignote.link.numba.dispatch.basic import (
    INTS,
    NoNumbaImpl,
    NumbaImpl,
    check_types,
    ndim_of,
    numba_funcify,
)
from arignote.tensor.indexing.advanced import AdvancedIncSubtensor1, AdvancedSubtensor1
from arignote.tensor.indexing.basic import IncSubtensor, Subtensor
from arignote.tensor.indexing.index import is_placeholder

__all__: list[str] = []


def _basic_index(idx_list: Any, args: list[str], lines: list[str]) -> str:
    """The index expression for ``idx_list`` (symbolic entries from ``args``, in order),
    with bounds checks of its integers (and of a symbolic step) added to ``lines``."""
    it = iter(args)
    parts = []
    for d, e in enumerate(idx_list):
        if isinstance(e, slice):
            bits = []
            for k, p in enumerate((e.start, e.stop, e.step)):
                if is_placeholder(p):
                    name = next(it)
                    if k == 2:
                        lines.append(f"    if {name} == 0:")
                        lines.append("        raise ValueError('slice step cannot be zero')")
                    bits.append(name)
                else:
                    bits.append("" if p is None else str(int(p)))
            parts.append(":".join(bits[:2]) + (f":{bits[2]}" if bits[2] else ""))
        else:
            if is_placeholder(e):
                if e.ndim != 0 or e.dtype not in INTS:
                    raise NoNumbaImpl(f"index entry {e} is not a 0-d integer")
                name = next(it)
            else:
                name = str(int(e))
            lines.append(f"    if {name} < -x.shape[{d}] or {name} >= x.shape[{d}]:")
            lines.append(f"        raise IndexError('index out of bounds for dimension {d}')")
            parts.append(name)
    return ", ".join(parts)


def _index_args(node: Apply, first: int) -> list[str]:
    return [f"i{k}" for k in range(len(node.inputs) - first)]


@numba_funcify.register(Subtensor)
def _subtensor(op: Subtensor, node: Apply) -> NumbaImpl:
    check_types(node, str(op))
    args = _index_args(node, 1)
    lines = [f"def impl({', '.join(['x', *args])}):"]
    idx = _basic_index(op.idx_list, args, lines)
    lines.append(f"    return x[{idx}]" if idx else "    return x")
    return NumbaImpl("\n".join(lines) + "\n")


def _value_check(y: Any, target: str, tnd: int, lines: list[str], what: str) -> None:
    """Raise unless the value ``y`` fits the part named ``target`` (of rank ``tnd``):
    equal lengths, or a static 1 of ``y``'s Type."""
    ynd = ndim_of(y)
    if ynd > tnd:
        raise NoNumbaImpl(f"{what}: a value of more dimensions than the indexed part")
    lead = tnd - ynd
    for d in range(ynd):
        if y.type.shape[d] != 1:
            lines.append(f"    if y.shape[{d}] != {target}.shape[{lead + d}]:")
            lines.append(f"        raise ValueError('{what}: the value does not fit the indexed part')")


@numba_funcify.register(IncSubtensor)
def _inc_subtensor(op: IncSubtensor, node: Apply) -> NumbaImpl:
    check_types(node, str(op))
    y = node.inputs[1]
    args = _index_args(node, 2)
    lines = [f"def impl({', '.join(['x', 'y', *args])}):"]
    idx = _basic_index(op.idx_list, args, lines) or "..."
    lines.append("    o = x.copy()")
    tnd = ndim_of(node.outputs[0]) - sum(1 for e in op.idx_list if not isinstance(e, slice))
    if tnd == 0:  # one element
        lines.append(f"    o[{idx}] {'=' if op.set_instead_of_inc else '+='} y")
    else:
        lines.append(f"    part = o[{idx}]")
        _value_check(y, "part", tnd, lines, str(op))
        lines.append(f"    part[...] = {'y' if op.set_instead_of_inc else 'part + y'}")
    lines.append("    return o")
    return NumbaImpl("\n".join(lines) + "\n")


def _row_check(lines: list[str]) -> None:
    lines.append("        if r < -n or r >= n:")
    lines.append("            raise IndexError('row index out of bounds')")
    lines.append("        if r < 0:")
    lines.append("            r += n")


@numba_funcify.register(AdvancedSubtensor1)
def _advanced_subtensor1(op: AdvancedSubtensor1, node: Apply) -> NumbaImpl:
    check_types(node, str(op))
    x = node.inputs[0]
    nd = ndim_of(x)
    rest = "".join(f", x.shape[{d}]" for d in range(1, nd))
    lines = [
        "def impl(x, idx):",
        "    n = x.shape[0]",
        f"    o = np.empty((idx.shape[0]{rest}), x.dtype)",
        "    for k in range(idx.shape[0]):",
        "        r = idx[k]",
    ]
    _row_check(lines)
    lines.append("        o[k] = x[r]")
    lines.append("    return o")
    return NumbaImpl("\n".join(lines) + "\n")


@numba_funcify.register(AdvancedIncSubtensor1)
def _advanced_inc_subtensor1(op: AdvancedIncSubtensor1, node: Apply) -> NumbaImpl:
    check_types(node, str(op))
    x, y, _ = node.inputs
    nd, ynd = ndim_of(x), ndim_of(y)
    lines = ["def impl(x, y, idx):", "    n = x.shape[0]", "    o = x.copy()"]
    if ynd == nd:  # one value per index (or one for all, a static 1)
        if y.type.shape[0] != 1:
            lines.append("    if y.shape[0] != idx.shape[0]:")
            lines.append(f"        raise ValueError('{op}: the value has not one row per index')")
        for d in range(1, nd):
            if y.type.shape[d] != 1:
                lines.append(f"    if y.shape[{d}] != x.shape[{d}]:")
                lines.append(f"        raise ValueError('{op}: the value does not fit the rows')")
        value = "y[0]" if y.type.shape[0] == 1 else "y[k]"
    elif ynd < nd:
        for d in range(ynd):
            if y.type.shape[d] != 1:
                lines.append(f"    if y.shape[{d}] != x.shape[{nd - ynd + d}]:")
                lines.append(f"        raise ValueError('{op}: the value does not fit the rows')")
        value = "y"
    else:
        raise NoNumbaImpl(f"{op}: a value of more dimensions than x")
    lines += ["    for k in range(idx.shape[0]):", "        r = idx[k]"]
    _row_check(lines)
    if nd == 1:
        lines.append(f"        o[r] {'=' if op.set_instead_of_inc else '+='} {value}")
    else:
        lines.append("        row = o[r]")
        lines.append(f"        row[...] = {value if op.set_instead_of_inc else 'row + ' + value}")
    lines.append("    return o")
    return NumbaImpl("\n".join(lines) + "\n")
