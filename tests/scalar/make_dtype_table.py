"""Record PyTensor's output dtypes for the scalar ops into ``data/pytensor_dtypes.json``.

Run with an interpreter that has PyTensor 3 installed (not needed by the tests)::

    /path/to/pytensor-venv/bin/python tests/scalar/make_dtype_table.py

For each op below and each combination of input dtypes (unary: every dtype; binary: every
ordered pair; ternary: a representative set; add and mul also over triples) it builds the op
on fresh scalar variables and records the output dtype, or ``"error"`` when PyTensor refuses
to build the node; also ``cast`` (``"target:input"``) and ``upcast``. The full table is for
``floatX=float64``; for ``floatX=float32`` only the entries that differ are stored. Only these
facts are stored; the test (``test_dtype_table.py``) reads the JSON and never imports PyTensor.
xlogx, xlogy0, iv and kv are tensor-level helpers in PyTensor 3: they are built on 0-d
tensors.
"""

from __future__ import annotations

import itertools
import json
import sys
import warnings
from pathlib import Path

DTYPES = [
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float16",
    "float32",
    "float64",
    "complex64",
    "complex128",
]

UNARY = [
    "neg",
    "reciprocal",
    "abs",
    "sign",
    "sqr",
    "sqrt",
    "invert",
    "floor",
    "ceil",
    "trunc",
    "round_half_to_even",
    "round_half_away_from_zero",
    "exp",
    "exp2",
    "expm1",
    "log",
    "log2",
    "log10",
    "log1p",
    "sin",
    "cos",
    "tan",
    "arcsin",
    "arccos",
    "arctan",
    "sinh",
    "cosh",
    "tanh",
    "arcsinh",
    "arccosh",
    "arctanh",
    "deg2rad",
    "rad2deg",
    "erf",
    "erfc",
    "erfcx",
    "erfinv",
    "erfcinv",
    "gamma",
    "gammaln",
    "psi",
    "tri_gamma",
    "sigmoid",
    "softplus",
    "log1mexp",
    "log1pexp",
    "xlogx",
    "i0",
    "i1",
    "j0",
    "j1",
    "identity",
    "real",
    "imag",
    "angle",
    "conj",
    "isnan",
    "isinf",
]

BINARY = [
    "add",
    "sub",
    "mul",
    "true_div",
    "int_div",
    "mod",
    "pow",
    "maximum",
    "minimum",
    "eq",
    "neq",
    "lt",
    "le",
    "gt",
    "ge",
    "and_",
    "or_",
    "xor",
    "arctan2",
    "gammainc",
    "gammaincc",
    "xlogy0",
    "second",
    "complex",
    "complex_from_polar",
    "jv",
    "iv",
    "ive",
    "kv",
    "kve",
    "owens_t",
    "gammal",
    "gammau",
    "gammaincinv",
    "gammainccinv",
]

TERNARY = ["clip", "switch", "betainc", "betaincinv"]
# representative triples: every dtype in each position with a fixed float64/int8 background,
# plus all-equal triples
TERNARY_SETS = sorted(
    {(d, d, d) for d in DTYPES}
    | {(d, "float32", "float32") for d in DTYPES}
    | {("float32", d, "float32") for d in DTYPES}
    | {("float32", "float32", d) for d in DTYPES}
    | {(d, "int8", "int8") for d in DTYPES}
    | {("int8", d, "int8") for d in DTYPES}
    | {("int8", "int8", d) for d in DTYPES}
    | {("bool", a, b) for a, b in itertools.product(DTYPES, repeat=2)}
)

# add and mul take any number of inputs: recorded over the ternary set plus the triples whose
# promotion depends on the grouping (NumPy's promotion is not associative)
VARIADIC = ["add", "mul"]


def _grouping_sensitive_triples() -> set:
    import numpy as np

    return {
        t
        for t in itertools.product(DTYPES, repeat=3)
        if np.promote_types(np.promote_types(t[0], t[1]), t[2]) != np.result_type(*t)
    }


CAST_TARGETS = DTYPES


def _scalar_op(name: str):
    import pytensor.scalar as ps
    import pytensor.scalar.math as psm

    if name == "log1pexp":
        name = "softplus"  # the tensor-level alias of softplus
    for mod in (ps, psm):
        if hasattr(mod, name):
            return getattr(mod, name)
    return None


def _builder(name: str):
    """A function from input dtypes to the output dtype (raising when PyTensor refuses)."""
    import pytensor.scalar as ps
    import pytensor.tensor as pt

    op = _scalar_op(name)
    if op is not None:

        def build(*dtypes: str) -> str:
            out = op(*(ps.get_scalar_type(d)() for d in dtypes))
            return out.type.dtype

        return build

    # xlogx, xlogy0 (pytensor.tensor.xlogx), iv, kv (pytensor.tensor.math): tensor-level
    # helpers in PyTensor 3; use 0-d tensors
    import pytensor.tensor.xlogx as xl

    fn = getattr(xl, name, None) or getattr(pt, name)

    def build_tensor(*dtypes: str) -> str:
        return fn(*(pt.tensor(dtype=d, shape=()) for d in dtypes)).type.dtype

    return build_tensor


def _record(name: str, combos) -> dict:
    build = _builder(name)
    table = {}
    for dtypes in combos:
        try:
            out = build(*dtypes)
        except Exception:
            out = "error"
        table[",".join(dtypes)] = out
    return table


def make_table() -> dict:
    import pytensor
    import pytensor.scalar as ps

    tables = {}
    for floatX in ("float64", "float32"):
        with pytensor.config.change_flags(floatX=floatX):
            ops: dict = {}
            for name in UNARY:
                ops[name] = _record(name, [(d,) for d in DTYPES])
            for name in BINARY:
                ops[name] = _record(name, list(itertools.product(DTYPES, repeat=2)))
            for name in TERNARY:
                ops[name] = _record(name, TERNARY_SETS)
            triples = sorted(set(TERNARY_SETS) | _grouping_sensitive_triples())
            for name in VARIADIC:
                ops[name].update(_record(name, triples))
            casts = {}
            for target in CAST_TARGETS:
                for d in DTYPES:
                    try:
                        out = ps.cast(ps.get_scalar_type(d)(), target).type.dtype
                    except Exception:
                        out = "error"
                    casts[f"{target}:{d}"] = out
            ops["cast"] = casts
            upcast = {}
            for a, b in itertools.product(DTYPES, repeat=2):
                upcast[f"{a},{b}"] = ps.upcast(a, b)
            for triple in triples:
                upcast[",".join(triple)] = ps.upcast(*triple)
            ops["upcast"] = upcast
            tables[floatX] = ops
    # floatX=float64 in full; for floatX=float32 only the entries that differ
    differences = {
        op: {k: v for k, v in entries.items() if tables["float64"][op][k] != v}
        for op, entries in tables["float32"].items()
    }
    return {
        "source": f"pytensor {pytensor.__version__}",
        "dtypes": DTYPES,
        "ops": tables["float64"],
        "floatX_float32_differences": {op: d for op, d in differences.items() if d},
    }


def main() -> None:
    out = Path(__file__).parent / "data" / "pytensor_dtypes.json"
    out.parent.mkdir(exist_ok=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # deprecation warnings of the helpers used
        table = make_table()
    text = json.dumps(table, indent=0, sort_keys=True) + "\n"
    out.write_text(text)
    print(f"wrote {out} ({len(text)} bytes)", file=sys.stderr)


if __name__ == "__main__":
    main()
