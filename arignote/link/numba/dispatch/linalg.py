"""Numba functions of the linear algebra a model's log-density uses most: :mod:`arignote.tensor.linalg`'s
``Cholesky`` (NumPy's, which Numba calls through LAPACK) and ``SolveTriangular`` (substitution
loops: a triangular solve is as many multiply-adds as LAPACK's, and Numba has no ``trsv``).

Only the computation that succeeds is written here: a matrix that is not positive definite,
a zero on a triangular matrix's diagonal or a non-finite input raises, and the call is
computed again on tier 1, whose Op gives NaNs or raises as its ``on_error`` says.
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
from arignote.tensor.linalg.decompositions import Cholesky
from arignote.tensor.linalg.solve import SolveTriangular

__all__: list[str] = []


def _floats_only(node: Apply, what: str) -> None:
    check_types(node, what)
    out = node.outputs[0].type.dtype
    if out not in FLOATS:
        raise NoNumbaImpl(f"{what}: an output of dtype {out} (the Numba backend writes {FLOATS})")


@numba_funcify.register(Cholesky)
def _cholesky(op: Cholesky, node: Apply) -> NumbaImpl:
    _floats_only(node, str(op))
    dtype = nb_dtype(node.outputs[0].type.dtype)
    # NumPy's factor reads the lower triangle: the upper factor of x is that of x.T, transposed
    factor = "np.linalg.cholesky(a)" if op.lower else "np.ascontiguousarray(np.linalg.cholesky(a.T).T)"
    return NumbaImpl(
        "def impl(x):\n"
        "    if x.shape[0] != x.shape[1]:\n"
        "        raise ValueError('Cholesky: the matrix is not square')\n"
        f"    a = np.ascontiguousarray(x).astype({dtype})\n"
        "    if x.shape[0] == 0:\n"
        "        return a\n"
        "    if not np.all(np.isfinite(a)):\n"
        "        raise ValueError('Cholesky: NaN or infinity in the input')\n"
        f"    return {factor}\n"
    )


@numba_funcify.register(SolveTriangular)
def _solve_triangular(op: SolveTriangular, node: Apply) -> NumbaImpl:
    _floats_only(node, str(op))
    dtype = nb_dtype(node.outputs[0].type.dtype)
    rows = "range(n)" if op.lower else "range(n - 1, -1, -1)"
    done = "range(i)" if op.lower else "range(i + 1, n)"
    vector = op.b_ndim == 1
    lines = [
        "def impl(a, b):",
        "    n = a.shape[0]",
        "    if a.shape[1] != n or b.shape[0] != n:",
        "        raise ValueError('SolveTriangular: a is not square or b has not its rows')",
        f"    x = b.astype({dtype})",  # (a copy: the solution is written over it)
        f"    for i in {rows}:",
    ]
    if not op.unit_diagonal:
        lines += [
            "        d = a[i, i]",
            "        if d == 0:",
            "            raise ValueError('SolveTriangular: a zero on the diagonal')",
        ]
    if vector:
        lines += [
            "        s = x[i]",
            f"        for j in {done}:",
            "            s -= a[i, j] * x[j]",
            f"        x[i] = {'s' if op.unit_diagonal else 's / d'}",
        ]
    else:  # (row by row: the inner loop runs along contiguous rows of x, and vectorises)
        lines += [
            "        xi = x[i]",
            f"        for j in {done}:",
            "            aij = a[i, j]",
            "            xj = x[j]",
            "            for c in range(xi.shape[0]):",
            "                xi[c] -= aij * xj[c]",
        ]
        if not op.unit_diagonal:
            lines += ["        for c in range(xi.shape[0]):", "            xi[c] /= d"]
    lines.append("    return x")
    return NumbaImpl("\n".join(lines) + "\n")
