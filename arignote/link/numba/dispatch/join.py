"""Numba function of :mod:`arignote.tensor.join`'s ``Join`` (``numpy.concatenate``): one
branch per possible axis (the axis is an input, usually a constant), each checking the other
lengths agree and copying the inputs into their parts of the result, cast to its dtype.
"""

from __future__ import annotations

from arignote.graph.basic import Apply
from arignote.link.numba.dispatch.basic import (
    NoNumbaImpl,
    NumbaImpl,
    check_types,
    nb_dtype,
    ndim_of,
    numba_funcify,
    shape_tuple,
)
from arignote.tensor.join import Join

__all__: list[str] = []


@numba_funcify.register(Join)
def _join(op: Join, node: Apply) -> NumbaImpl:
    check_types(node, str(op))
    arrays = node.inputs[1:]
    nd = ndim_of(node.outputs[0])
    if nd == 0:
        raise NoNumbaImpl(f"{op}: 0-d inputs")
    names = [f"a{k}" for k in range(len(arrays))]
    odt = nb_dtype(node.outputs[0].type.dtype)
    lines = [
        f"def impl(axis, {', '.join(names)}):",
        f"    if axis < -{nd} or axis >= {nd}:",
        f"        raise ValueError('Join: the axis is out of range for {nd}-d inputs')",
        f"    ax = axis % {nd}",
    ]
    for d in range(nd):
        lines.append(f"    {'if' if d == 0 else 'elif'} ax == {d}:")
        for a in names[1:]:
            for e in range(nd):
                if e != d:
                    lines.append(f"        if {a}.shape[{e}] != a0.shape[{e}]:")
                    lines.append(
                        f"            raise ValueError('Join: input lengths differ on dimension {e}')"
                    )
        total = " + ".join(f"{a}.shape[{d}]" for a in names)
        lengths = [total if e == d else f"a0.shape[{e}]" for e in range(nd)]
        lines.append(f"        o = np.empty({shape_tuple(lengths)}, {odt})")
        lines.append("        at = 0")
        lead = ":, " * d
        for a in names:
            lines.append(f"        o[{lead}at:at + {a}.shape[{d}]] = {a}")
            lines.append(f"        at += {a}.shape[{d}]")
    lines.append("    else:")
    lines.append(f"        o = np.empty({shape_tuple(['0'] * nd)}, {odt})")
    lines.append("    return o")
    return NumbaImpl("\n".join(lines) + "\n")
