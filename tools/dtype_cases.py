"""The cases of the dtype comparison with PyTensor 3, written for either library.

``build_cases(pt)`` takes ``pytensor.tensor`` or ``arignote.tensor`` and returns, by case id, a
function of no arguments that builds the case's output Variable (or a list of them) from fresh
symbolic inputs. ``tools/pytensor_dtypes.py`` runs them in PyTensor and records each output's
dtype and static shape (or the exception raised); ``tests/test_api_dtypes.py`` runs them in
arignote and compares. This file imports neither library, so the test can load it by path.

Inputs have static shapes (a matrix is ``(2, 3)``, a vector ``(3,)``) so that the static shape
of each output is part of the comparison; a few cases use unknown lengths (``None``).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

import numpy as np

DTYPES = [
    "bool",
    "int8",
    "uint8",
    "int16",
    "int32",
    "int64",
    "uint64",
    "float16",
    "float32",
    "float64",
    "complex64",
    "complex128",
]
INTS = ["int8", "uint8", "int16", "int32", "int64", "uint64"]
FLOATS = ["float16", "float32", "float64"]
REALS = ["bool", *INTS, *FLOATS]

# Mixed pairs for binary functions: every same-dtype pair, then the mixtures users hit.
MIXED = [
    ("int8", "float32"),
    ("int32", "float32"),
    ("int64", "float32"),
    ("int64", "float64"),
    ("uint8", "int8"),
    ("uint8", "int16"),
    ("uint64", "int64"),
    ("int16", "float16"),
    ("int8", "float16"),
    ("bool", "int8"),
    ("bool", "float32"),
    ("bool", "bool"),
    ("int32", "int64"),
    ("float16", "float32"),
    ("float32", "float64"),
    ("float32", "complex64"),
    ("float64", "complex64"),
    ("int64", "complex64"),
    ("complex64", "complex128"),
    ("uint8", "float32"),
    ("int8", "uint64"),
]
PAIRS = [(d, d) for d in DTYPES] + [p for p in MIXED if p[0] != p[1]] + [("bool", "bool")]
PAIRS = list(dict.fromkeys(PAIRS))
# A smaller set for the costlier families (linear algebra, joins, indexing).
FEW_PAIRS = [
    ("int8", "int8"),
    ("int64", "int64"),
    ("float32", "float32"),
    ("float64", "float64"),
    ("int8", "float32"),
    ("int64", "float32"),
    ("float32", "float64"),
    ("uint8", "int8"),
    ("bool", "int8"),
    ("complex64", "float64"),
]

# Python and NumPy scalars, by the name used in case ids.
SCALARS: dict[str, Any] = {
    "py3": 3,
    "py300": 300,
    "py0.5": 0.5,
    "py0.1": 0.1,
    "pyTrue": True,
    "np.int8(2)": np.int8(2),
    "np.int64(2)": np.int64(2),
    "np.float32(2)": np.float32(2),
    "np.float64(0.5)": np.float64(0.5),
}

OPERATORS: dict[str, Callable[[Any, Any], Any]] = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "/": lambda a, b: a / b,
    "//": lambda a, b: a // b,
    "%": lambda a, b: a % b,
    "**": lambda a, b: a**b,
    "&": lambda a, b: a & b,
    "|": lambda a, b: a | b,
    "^": lambda a, b: a ^ b,
    "<": lambda a, b: a < b,
    ">=": lambda a, b: a >= b,
}

# Operators also tried with the Python or NumPy scalar on the left.
REFLECTED = ["+", "-", "/", "//", "%", "**"]

UNARY = [
    "neg",
    "abs",
    "sign",
    "exp",
    "exp2",
    "expm1",
    "log",
    "log2",
    "log10",
    "log1p",
    "sqrt",
    "sqr",
    "square",
    "sin",
    "cos",
    "tan",
    "arcsin",
    "arctanh",
    "tanh",
    "cosh",
    "floor",
    "ceil",
    "round",
    "trunc",
    "iround",
    "deg2rad",
    "reciprocal",
    "invert",
    "bitwise_not",
    "real",
    "imag",
    "angle",
    "conj",
    "isnan",
    "isinf",
    "sigmoid",
    "softplus",
    "erf",
    "gammaln",
    "log1mexp",
    "sgn",
]
# Functions of ``pt.special`` (not ``pt``).
SPECIAL_UNARY = ["softmax", "log_softmax", "logit"]

BINARY = [
    "add",
    "sub",
    "mul",
    "true_div",
    "int_div",
    "floor_div",
    "mod",
    "pow",
    "maximum",
    "minimum",
    "eq",
    "neq",
    "lt",
    "ge",
    "and_",
    "or_",
    "xor",
    "bitwise_and",
    "arctan2",
    "logaddexp",
]


def _module(pt: Any, name: str) -> Any:
    """``pt.<name>`` whether or not the package exposes the submodule as an attribute."""
    return importlib.import_module(f"{pt.__name__}.{name}")


def build_cases(pt: Any) -> dict[str, Callable[[], Any]]:
    """Every case, by id, as a function that builds its output(s) in the library ``pt``."""
    cases: dict[str, Callable[[], Any]] = {}

    def add(case_id: str, build: Callable[[], Any]) -> None:
        assert case_id not in cases, case_id
        cases[case_id] = build

    def mat(dtype: str, shape: tuple[int | None, ...] = (2, 3)) -> Any:
        return pt.tensor(dtype=dtype, shape=shape)

    def vec(dtype: str, n: int | None = 3) -> Any:
        return pt.tensor(dtype=dtype, shape=(n,))

    def scal(dtype: str) -> Any:
        return pt.tensor(dtype=dtype, shape=())

    special = _module(pt, "special")
    math = _module(pt, "math")
    linalg = _module(pt, "linalg")
    nlinalg = _module(pt, "nlinalg")
    slinalg = _module(pt, "slinalg")
    extra_ops = _module(pt, "extra_ops")

    # Elementwise unary functions.
    for name in UNARY:
        for d in DTYPES:
            add(f"{name}({d})", lambda name=name, d=d: getattr(pt, name)(mat(d)))
    for name in SPECIAL_UNARY:
        for d in DTYPES:
            add(f"special.{name}({d})", lambda name=name, d=d: getattr(special, name)(mat(d)))
    for d in DTYPES:
        add(f"-x({d})", lambda d=d: -mat(d))
        add(f"~x({d})", lambda d=d: ~mat(d))
        add(f"abs(x)({d})", lambda d=d: abs(mat(d)))

    # Elementwise binary functions over pairs, with broadcasting of a row against a matrix.
    for name in BINARY:
        for a, b in PAIRS:
            add(f"{name}({a},{b})", lambda name=name, a=a, b=b: getattr(pt, name)(mat(a), vec(b)))
    for a, b in PAIRS:
        add(f"math.true_div({a},{b})", lambda a=a, b=b: math.true_div(vec(a), vec(b)))
    # Operators between tensors, both ways round for mixed pairs.
    for sym, op in OPERATORS.items():
        for a, b in PAIRS:
            add(f"x{sym}y({a},{b})", lambda op=op, a=a, b=b: op(mat(a), vec(b)))
            if a != b:
                add(f"x{sym}y({b},{a})", lambda op=op, a=a, b=b: op(vec(b), mat(a)))
    # Operators with Python and NumPy scalars, on either side.
    for sym, op in OPERATORS.items():
        for d in DTYPES:
            for sname, s in SCALARS.items():
                add(f"x{sym}{sname}({d})", lambda op=op, d=d, s=s: op(vec(d), s))
                if sym in REFLECTED:
                    add(f"{sname}{sym}x({d})", lambda op=op, d=d, s=s: op(s, vec(d)))
    # Scalar-shaped (0-d) tensors against vectors: a 0-d input must not decide the dtype alone.
    for a, b in FEW_PAIRS:
        add(f"scalar+vector({a},{b})", lambda a=a, b=b: scal(a) + vec(b))

    # Casts, between every pair of dtypes.
    for a in DTYPES:
        for b in DTYPES:
            add(f"cast({a}->{b})", lambda a=a, b=b: pt.cast(mat(a), b))
    for d in DTYPES:
        add(f"as_tensor(x).astype(float32)({d})", lambda d=d: mat(d).astype("float32"))

    # Reductions, with and without their dtype arguments.
    for d in DTYPES:
        for name in ["sum", "prod", "mean", "var", "std", "max", "min", "argmax", "all", "any"]:
            add(f"{name}({d})", lambda name=name, d=d: getattr(pt, name)(mat(d)))
            add(f"{name}(axis=0)({d})", lambda name=name, d=d: getattr(pt, name)(mat(d), axis=0))
        add(f"sum(keepdims)({d})", lambda d=d: pt.sum(mat(d), axis=1, keepdims=True))
        add(f"x.sum()({d})", lambda d=d: mat(d).sum())
        add(f"x.mean(axis=1)({d})", lambda d=d: mat(d).mean(axis=1))
        for out in ["int64", "float32", "float64", "int8", "uint8"]:
            add(f"sum(dtype={out})({d})", lambda d=d, out=out: pt.sum(mat(d), dtype=out))
            add(f"prod(dtype={out})({d})", lambda d=d, out=out: pt.prod(mat(d), dtype=out))
        for acc in ["float64", "int64", "float32"]:
            add(f"sum(acc_dtype={acc})({d})", lambda d=d, acc=acc: pt.sum(mat(d), acc_dtype=acc))
        add(
            f"mean(dtype=float32)({d})",
            lambda d=d: pt.mean(mat(d), dtype="float32"),
        )
        add(f"mean(acc_dtype=float64)({d})", lambda d=d: pt.mean(mat(d), acc_dtype="float64"))
        add(f"cumsum({d})", lambda d=d: pt.cumsum(mat(d), axis=0))
        add(f"cumsum(axis=None)({d})", lambda d=d: pt.cumsum(mat(d)))
        add(f"cumprod({d})", lambda d=d: pt.cumprod(mat(d), axis=1))
        add(f"argmin({d})", lambda d=d: pt.argmin(mat(d), axis=1))
        add(f"max_and_argmax({d})", lambda d=d: list(math.max_and_argmax(mat(d), axis=1)))
        add(f"sort({d})", lambda d=d: pt.sort(mat(d)))
        add(f"argsort({d})", lambda d=d: pt.argsort(mat(d)))
        add(f"sort(axis=None)({d})", lambda d=d: pt.sort(mat(d), axis=None))
        add(f"logsumexp({d})", lambda d=d: pt.logsumexp(mat(d), axis=1))

    # switch, where and clip.
    for c in ["bool", "int8"]:
        for a, b in FEW_PAIRS:
            add(f"switch({c},{a},{b})", lambda c=c, a=a, b=b: pt.switch(mat(c), mat(a), vec(b)))
            add(f"where({c},{a},{b})", lambda c=c, a=a, b=b: pt.where(vec(c), vec(a), mat(b)))
    for d in DTYPES:
        add(f"switch(bool,{d},py0)", lambda d=d: pt.switch(vec("bool"), vec(d), 0))
        add(f"switch(bool,{d},py0.5)", lambda d=d: pt.switch(vec("bool"), vec(d), 0.5))
        add(f"where(bool,py1,{d})", lambda d=d: pt.where(vec("bool"), 1, vec(d)))
        add(f"clip({d},py0,py1)", lambda d=d: pt.clip(vec(d), 0, 1))
        add(f"clip({d},py0.5,py2.5)", lambda d=d: pt.clip(vec(d), 0.5, 2.5))
        add(f"clip({d},int8,float32)", lambda d=d: pt.clip(vec(d), scal("int8"), scal("float32")))

    # Constructors.
    for stop_name, stop in [("py5", 5), ("py5.0", 5.0), ("py300", 300), ("np.float32(5)", np.float32(5))]:
        add(f"arange({stop_name})", lambda stop=stop: pt.arange(stop))
    add("arange(py1,py5,py2)", lambda: pt.arange(1, 5, 2))
    add("arange(py0,py1,py0.25)", lambda: pt.arange(0, 1, 0.25))
    for d in ["int8", "int32", "int64", "uint8", "float32", "float64"]:
        add(f"arange(scalar {d})", lambda d=d: pt.arange(scal(d)))
        add(f"arange(py5,dtype={d})", lambda d=d: pt.arange(5, dtype=d))
        add(f"arange(scalar int64,dtype={d})", lambda d=d: pt.arange(scal("int64"), dtype=d))
    for d in [None, "float32", "int64", "int8"]:
        add(f"linspace(py0,py1,py5,dtype={d})", lambda d=d: pt.linspace(0, 1, 5, dtype=d))
        add(f"eye(py3,dtype={d})", lambda d=d: pt.eye(3, dtype=d))
        add(f"eye(py2,py3,dtype={d})", lambda d=d: pt.eye(2, 3, dtype=d))
        add(f"identity_like({d})", lambda d=d: pt.identity_like(mat(d or "float64", (3, 3))))
        for ctor in ["zeros", "ones"]:
            add(f"{ctor}((2,3),dtype={d})", lambda ctor=ctor, d=d: getattr(pt, ctor)((2, 3), dtype=d))
            add(f"{ctor}(py4,dtype={d})", lambda ctor=ctor, d=d: getattr(pt, ctor)(4, dtype=d))
        add(f"full((2,3),py7,dtype={d})", lambda d=d: pt.full((2, 3), 7, dtype=d))
        add(f"full((2,3),py0.5,dtype={d})", lambda d=d: pt.full((2, 3), 0.5, dtype=d))
        add(f"eye(scalar int64,dtype={d})", lambda d=d: pt.eye(scal("int64"), dtype=d))
        add(f"zeros(scalar int64,dtype={d})", lambda d=d: pt.zeros(scal("int64"), dtype=d))
    add("linspace(py0,py1,py5,endpoint=False)", lambda: pt.linspace(0, 1, 5, endpoint=False))
    add("linspace(scalar int8,py1,py5)", lambda: pt.linspace(scal("int8"), 1, 5))
    add("linspace(scalar float32,py1,py5)", lambda: pt.linspace(scal("float32"), 1, 5))
    for d in DTYPES:
        add(f"zeros_like({d})", lambda d=d: pt.zeros_like(mat(d)))
        add(f"ones_like({d},dtype=float32)", lambda d=d: pt.ones_like(mat(d), dtype="float32"))
        add(f"full_like({d},py0.5)", lambda d=d: pt.full_like(mat(d), 0.5))
        add(f"full((2,3),scalar {d})", lambda d=d: pt.full((2, 3), scal(d)))
        add(f"alloc({d},py2,py3)", lambda d=d: pt.alloc(scal(d), 2, 3))
        add(f"as_tensor(np {d} array)", lambda d=d: pt.as_tensor(np.ones((2, 3), dtype=d)))
        add(f"fill({d},py0.5)", lambda d=d: pt.fill(mat(d), 0.5))
        add(f"second({d},float32)", lambda d=d: pt.second(mat(d), vec("float32")))
    for name, value in [
        ("py3", 3),
        ("py300", 300),
        ("py-1", -1),
        ("py2**40", 2**40),
        ("py2**63", 2**63),
        ("py0.5", 0.5),
        ("py0.1", 0.1),
        ("py1e40", 1e40),
        ("pyTrue", True),
        ("py1j", 1j),
        ("[1,2]", [1, 2]),
        ("[1,2.5]", [1, 2.5]),
        ("[True,False]", [True, False]),
        ("np.float32(2)", np.float32(2)),
    ]:
        add(f"as_tensor({name})", lambda value=value: pt.as_tensor(value))
        add(f"constant({name})", lambda value=value: pt.constant(value))

    # Joins.
    for a, b in FEW_PAIRS:
        add(f"concatenate({a},{b})", lambda a=a, b=b: pt.concatenate([mat(a), mat(b)], axis=0))
        add(
            f"concatenate(axis=1)({a},{b})",
            lambda a=a, b=b: pt.concatenate([mat(a), mat(b, (2, None))], axis=1),
        )
        add(f"stack({a},{b})", lambda a=a, b=b: pt.stack([vec(a), vec(b)]))
        add(f"stack(axis=1)({a},{b})", lambda a=a, b=b: pt.stack([vec(a), vec(b)], axis=1))
        add(f"join({a},{b})", lambda a=a, b=b: pt.join(0, vec(a), vec(b, None)))
        add(f"horizontal_stack({a},{b})", lambda a=a, b=b: pt.horizontal_stack(mat(a), mat(b)))
    add("stack(py1,py2.5)", lambda: pt.stack([1, 2.5]))
    add("stack(scalar int8,py300)", lambda: pt.stack([scal("int8"), 300]))

    # Indexing.
    for d in DTYPES:
        add(f"x[0]({d})", lambda d=d: mat(d)[0])
        add(f"x[1:]({d})", lambda d=d: mat(d)[1:])
        add(f"x[:,::2]({d})", lambda d=d: mat(d)[:, ::2])
        add(f"x[None]({d})", lambda d=d: mat(d)[None])
        add(f"x[-1,0]({d})", lambda d=d: mat(d)[-1, 0])
        add(f"x.T({d})", lambda d=d: mat(d).T)
        add(f"x.flatten()({d})", lambda d=d: mat(d).flatten())
        add(f"x.reshape((3,2))({d})", lambda d=d: mat(d).reshape((3, 2)))
        add(f"x.dimshuffle(1,x,0)({d})", lambda d=d: mat(d).dimshuffle(1, "x", 0))
    for i in ["int8", "uint8", "int32", "int64", "uint64", "bool", "float32"]:
        add(f"x[idx {i}]", lambda i=i: mat("float32")[vec(i, 2)])
        add(f"x[:,idx {i}]", lambda i=i: mat("float32")[:, vec(i)])
        add(f"x[scalar {i}]", lambda i=i: mat("float32")[scal(i)])
    add("x[mask]", lambda: mat("float32")[mat("bool")])
    for a, b in [*FEW_PAIRS, ("int8", "float64"), ("float16", "float32"), ("int64", "int8")]:
        add(f"set_subtensor(x[0],{a}<-{b})", lambda a=a, b=b: pt.set_subtensor(mat(a)[0], vec(b)))
        add(f"inc_subtensor(x[0],{a}<-{b})", lambda a=a, b=b: pt.inc_subtensor(mat(a)[0], vec(b)))
        add(
            f"set_subtensor(x[idx],{a}<-{b})",
            lambda a=a, b=b: pt.set_subtensor(mat(a)[vec("int64", 2)], mat(b)),
        )
        add(f"x[0].set({a}<-{b})", lambda a=a, b=b: mat(a)[0].set(vec(b)))
        add(f"x[0].inc({a}<-{b})", lambda a=a, b=b: mat(a)[0].inc(vec(b)))
    add("set_subtensor(x[0],float32<-py0.5)", lambda: pt.set_subtensor(mat("float32")[0], 0.5))
    add("set_subtensor(x[0],int8<-py0.5)", lambda: pt.set_subtensor(mat("int8")[0], 0.5))
    add("inc_subtensor(x[0],int8<-py300)", lambda: pt.inc_subtensor(mat("int8")[0], 300))

    # Products.
    for a, b in [*FEW_PAIRS, ("int32", "int32"), ("float16", "float16"), ("bool", "bool")]:
        add(f"dot(mat,mat)({a},{b})", lambda a=a, b=b: pt.dot(mat(a), mat(b, (3, 4))))
        add(f"dot(vec,vec)({a},{b})", lambda a=a, b=b: pt.dot(vec(a), vec(b)))
        add(f"dot(mat,vec)({a},{b})", lambda a=a, b=b: pt.dot(mat(a), vec(b)))
        add(f"matmul({a},{b})", lambda a=a, b=b: pt.matmul(mat(a, (5, 2, 3)), mat(b, (3, 4))))
        add(f"x@y({a},{b})", lambda a=a, b=b: mat(a) @ mat(b, (3, None)))
        add(
            f"tensordot({a},{b})",
            lambda a=a, b=b: pt.tensordot(mat(a, (2, 3, 4)), mat(b, (3, 4)), axes=2),
        )
        add(f"outer({a},{b})", lambda a=a, b=b: pt.outer(vec(a), vec(b, 4)))
        add(f"linalg.kron({a},{b})", lambda a=a, b=b: linalg.kron(mat(a), mat(b)))
        add(f"vecdot({a},{b})", lambda a=a, b=b: math.vecdot(mat(a), vec(b)))
        add(f"dot(scalar,{a},{b})", lambda a=a, b=b: pt.dot(scal(a), mat(b)))

    for d in DTYPES:
        add(f"dot(py2,{d})", lambda d=d: pt.dot(2, mat(d)))

    # Linear algebra.
    for d in ["int8", "int64", "float16", "float32", "float64", "complex64", "complex128"]:
        sq = lambda d=d: mat(d, (3, 3))  # noqa: E731 - a square input for this dtype
        add(f"nlinalg.matrix_inverse({d})", lambda sq=sq: nlinalg.matrix_inverse(sq()))
        add(f"linalg.inv({d})", lambda sq=sq: linalg.inv(sq()))
        add(f"nlinalg.det({d})", lambda sq=sq: nlinalg.det(sq()))
        add(f"linalg.slogdet({d})", lambda sq=sq: list(linalg.slogdet(sq())))
        add(f"linalg.pinv({d})", lambda d=d: linalg.pinv(mat(d)))
        add(f"linalg.eigh({d})", lambda sq=sq: list(linalg.eigh(sq())))
        add(f"linalg.eig({d})", lambda sq=sq: list(linalg.eig(sq())))
        add(f"linalg.svd({d})", lambda d=d: list(linalg.svd(mat(d))))
        add(f"linalg.svd(compute_uv=False)({d})", lambda d=d: linalg.svd(mat(d), compute_uv=False))
        add(f"linalg.qr({d})", lambda d=d: list(linalg.qr(mat(d, (3, 2)))))
        add(f"linalg.norm({d})", lambda d=d: linalg.norm(mat(d)))
        add(f"linalg.norm(ord=1,axis=1)({d})", lambda d=d: linalg.norm(mat(d), ord=1, axis=1))
        add(f"linalg.matrix_power({d})", lambda sq=sq: linalg.matrix_power(sq(), 3))
        add(f"nlinalg.trace({d})", lambda sq=sq: nlinalg.trace(sq()))
        add(f"linalg.cholesky({d})", lambda sq=sq: linalg.cholesky(sq()))
        add(f"linalg.solve({d})", lambda d=d, sq=sq: linalg.solve(sq(), vec(d)))
        add(f"linalg.solve({d},float32)", lambda sq=sq: linalg.solve(sq(), vec("float32")))
        add(f"slinalg.solve_triangular({d})", lambda d=d, sq=sq: slinalg.solve_triangular(sq(), vec(d)))
        add(f"slinalg.expm({d})", lambda sq=sq: slinalg.expm(sq()))
        add(f"linalg.lstsq({d})", lambda d=d: list(nlinalg.lstsq(mat(d, (3, 2)), vec(d), -1)))
        add(f"linalg.tensorinv({d})", lambda d=d: linalg.tensorinv(mat(d, (2, 2, 4)), ind=2))
        add(f"diag(vector {d})", lambda d=d: pt.diag(vec(d)))
        add(f"diag(matrix {d})", lambda sq=sq: pt.diag(sq()))
        add(f"diagonal({d})", lambda d=d: pt.diagonal(mat(d)))
        add(f"tril({d})", lambda sq=sq: pt.tril(sq()))

    # extra_ops.
    for d in DTYPES:
        add(f"extra_ops.diff({d})", lambda d=d: extra_ops.diff(mat(d), axis=1))
        add(f"extra_ops.repeat({d})", lambda d=d: extra_ops.repeat(vec(d), 2))
        add(f"extra_ops.squeeze({d})", lambda d=d: extra_ops.squeeze(mat(d, (1, 3))))
        add(f"extra_ops.broadcast_to({d})", lambda d=d: extra_ops.broadcast_to(vec(d), (2, 3)))
        add(f"extra_ops.fill_diagonal({d},py2)", lambda d=d: extra_ops.fill_diagonal(mat(d, (3, 3)), 2))
        add(f"extra_ops.searchsorted({d})", lambda d=d: extra_ops.searchsorted(vec(d), vec(d, 2)))
        add(f"extra_ops.unique({d})", lambda d=d: extra_ops.unique(vec(d)))
        add(f"extra_ops.compress({d})", lambda d=d: extra_ops.compress(vec("bool"), vec(d)))
        add(f"extra_ops.cumop-cumsum({d})", lambda d=d: extra_ops.cumsum(vec(d)))
    for d in ["bool", "int8", "uint8", "int64", "uint64", "float32"]:
        add(f"extra_ops.bincount({d})", lambda d=d: extra_ops.bincount(vec(d)))
        add(
            f"extra_ops.bincount(weights float32)({d})",
            lambda d=d: extra_ops.bincount(vec(d), weights=vec("float32")),
        )
        add(f"extra_ops.unravel_index({d})", lambda d=d: list(extra_ops.unravel_index(vec(d), (2, 3))))
    add(
        "extra_ops.ravel_multi_index",
        lambda: extra_ops.ravel_multi_index([vec("int64"), vec("int64")], (2, 3)),
    )

    # Statistics and other math.
    for d in DTYPES:
        add(f"median({d})", lambda d=d: pt.median(mat(d)))
        add(f"ptp({d})", lambda d=d: pt.ptp(mat(d), axis=0))
        add(f"max(keepdims)({d})", lambda d=d: pt.max(mat(d), axis=0, keepdims=True))
        add(f"isclose({d},float32)", lambda d=d: pt.isclose(mat(d), vec("float32")))
        add(f"allclose({d},float32)", lambda d=d: pt.allclose(mat(d), vec("float32")))
        add(f"logaddexp({d},py1)", lambda d=d: pt.logaddexp(vec(d), 1))
        add(f"clip({d},{d},{d})", lambda d=d: pt.clip(mat(d), vec(d), vec(d)))
    return cases
