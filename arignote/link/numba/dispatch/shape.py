"""Numba functions of shapes and simple constructors: :mod:`arignote.tensor.shape`
(``Shape``, ``Shape_i``, ``SpecifyShape``, ``Reshape``, ``MakeVector``),
:mod:`arignote.tensor.alloc` (``Alloc``, ``Eye``), :mod:`arignote.tensor.ranges` (``ARange``)
and :mod:`arignote.tensor.conversion`
(``TensorFromScalar``, ``ScalarFromTensor``: a 0-d tensor already is a scalar here).
"""

from __future__ import annotations

from arignote.graph.basic import Apply, Constant
from arignote.link.numba.dispatch.basic import (
    NoNumbaImpl,
    NumbaImpl,
    check_types,
    nb_dtype,
    ndim_of,
    numba_funcify,
    shape_tuple,
)
from arignote.tensor.alloc import Alloc, Eye
from arignote.tensor.conversion import ScalarFromTensor, TensorFromScalar
from arignote.tensor.ranges import ARange
from arignote.tensor.shape import MakeVector, Reshape, Shape, Shape_i, SpecifyShape

__all__: list[str] = []


@numba_funcify.register(Shape)
def _shape(op: Shape, node: Apply) -> NumbaImpl:
    check_types(node, str(op))
    nd = ndim_of(node.inputs[0])
    items = ", ".join(f"x.shape[{d}]" for d in range(nd))
    return NumbaImpl(
        f"def impl(x):\n    return np.array([{items}], np.int64)\n"
        if nd
        else "def impl(x):\n    return np.empty(0, np.int64)\n"
    )


@numba_funcify.register(Shape_i)
def _shape_i(op: Shape_i, node: Apply) -> NumbaImpl:
    check_types(node, str(op))
    return NumbaImpl(f"def impl(x):\n    return np.int64(x.shape[{op.i}])\n")


@numba_funcify.register(SpecifyShape)
def _specify_shape(op: SpecifyShape, node: Apply) -> NumbaImpl:
    check_types(node, str(op), node.inputs[:1])
    entries = node.inputs[1:]
    lines = [
        f"def impl(x, {', '.join(f's{d}' for d in range(len(entries)))}):" if entries else "def impl(x):"
    ]
    for d, e in enumerate(entries):
        if isinstance(e, Constant) and e.data is None:
            continue
        check_types(node, str(op), [e])
        lines.append(f"    if x.shape[{d}] != s{d}:")
        lines.append(
            f"        raise ValueError('SpecifyShape: dimension {d} differs from the shape specified')"
        )
    lines.append("    return x")
    return NumbaImpl("\n".join(lines) + "\n")


@numba_funcify.register(Reshape)
def _reshape(op: Reshape, node: Apply) -> NumbaImpl:
    check_types(node, str(op))
    nd = op.ndim
    if ndim_of(node.inputs[0]) == 0 or nd == 0:
        raise NoNumbaImpl(f"{op}: to or from a 0-d tensor")
    # a -1 length is the rest (as NumPy's); np.reshape in Numba wants a contiguous array
    lines = [
        "def impl(x, s):",
        f"    if s.shape[0] != {nd}:",
        "        raise ValueError('Reshape: wrong length')",
    ]
    lines.append(f"    shape = {shape_tuple([f'np.int64(s[{d}])' for d in range(nd)])}")
    lines.append("    return np.ascontiguousarray(x).reshape(shape)")
    return NumbaImpl("\n".join(lines) + "\n")


@numba_funcify.register(MakeVector)
def _make_vector(op: MakeVector, node: Apply) -> NumbaImpl:
    check_types(node, str(op))
    n = len(node.inputs)
    odt = nb_dtype(node.outputs[0].type.dtype)
    args = [f"a{k}" for k in range(n)]
    lines = [f"def impl({', '.join(args)}):", f"    o = np.empty({n}, {odt})"]
    lines += [f"    o[{k}] = {a}" for k, a in enumerate(args)]
    lines.append("    return o")
    return NumbaImpl("\n".join(lines) + "\n")


@numba_funcify.register(Alloc)
def _alloc(op: Alloc, node: Apply) -> NumbaImpl:
    check_types(node, str(op))
    v = node.inputs[0]
    out = node.outputs[0].type
    nd, vnd = out.ndim, ndim_of(v)
    ls = [f"s{d}" for d in range(nd)]
    lines = [f"def impl(v, {', '.join(ls)}):" if ls else "def impl(v):"]
    if nd == 0:
        lines.append(f"    return {nb_dtype(out.dtype)}(v)")
        return NumbaImpl("\n".join(lines) + "\n")
    for d in range(nd):
        lines.append(f"    if s{d} < 0:")
        lines.append("        raise ValueError('Alloc: negative length')")
    off = nd - vnd
    for j in range(vnd):
        if v.type.shape[j] != 1:
            lines.append(f"    if v.shape[{j}] != s{off + j}:")
            lines.append("        raise ValueError('Alloc: the value does not fit the shape')")
    lines.append(f"    o = np.empty({shape_tuple(ls)}, {nb_dtype(out.dtype)})")
    if vnd == 0:
        lines.append("    o.fill(v)")
    else:
        loop = [f"j{d}" for d in range(nd)]
        for d in range(nd):
            lines.append(f"{'    ' * (d + 1)}for j{d} in range(s{d}):")
        vidx = ", ".join("0" if v.type.shape[j] == 1 else loop[off + j] for j in range(vnd))
        lines.append(f"{'    ' * (nd + 1)}o[{', '.join(loop)}] = v[{vidx}]")
    lines.append("    return o")
    return NumbaImpl("\n".join(lines) + "\n")


@numba_funcify.register(TensorFromScalar)
def _tensor_from_scalar(op: TensorFromScalar, node: Apply) -> NumbaImpl:
    check_types(node, str(op))
    return NumbaImpl(f"def impl(x):\n    return {nb_dtype(node.outputs[0].type.dtype)}(x)\n")


@numba_funcify.register(ScalarFromTensor)
def _scalar_from_tensor(op: ScalarFromTensor, node: Apply) -> NumbaImpl:
    check_types(node, str(op))
    return NumbaImpl(f"def impl(x):\n    return {nb_dtype(node.outputs[0].type.dtype)}(x)\n")


@numba_funcify.register(Eye)
def _eye(op: Eye, node: Apply) -> NumbaImpl:
    check_types(node, str(op))
    dtype = nb_dtype(op.dtype)
    return NumbaImpl(
        "def impl(n, m, k):\n"
        "    if n < 0 or m < 0:\n"
        "        raise ValueError('Eye: a negative length')\n"
        f"    o = np.zeros((n, m), {dtype})\n"
        "    for i in range(max(0, -k), min(n, m - k)):\n"
        f"        o[i, i + k] = {dtype}(1)\n"
        "    return o\n"
    )


@numba_funcify.register(ARange)
def _arange(op: ARange, node: Apply) -> NumbaImpl:
    check_types(node, str(op))
    kinds = {v.type.dtype[0] for v in node.inputs}
    if op.dtype.startswith(("int", "uint")) and kinds - {"i", "u"}:
        # (NumPy steps such a range in the integer dtype; the float range cast would differ)
        raise NoNumbaImpl(f"{op}: an integer range of float bounds")
    return NumbaImpl(
        "def impl(start, stop, step):\n"
        "    if step == 0:\n"
        "        raise ValueError('ARange: step is 0')\n"
        f"    return np.arange(start, stop, step).astype({nb_dtype(op.dtype)})\n"
    )
