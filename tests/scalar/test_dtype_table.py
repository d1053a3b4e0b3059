"""Output dtypes of every scalar op against PyTensor 3's, recorded in ``data/pytensor_dtypes.json``
(by ``make_dtype_table.py``; this test reads only the JSON).

Every entry must match, except the few where PyTensor and arignote disagree on whether the
combination is legal at all. Those are decided by NumPy/SciPy semantics, and the decision is
checked here too: where the NumPy/SciPy function behind the op raises for those dtypes we
raise a ``TypeError`` when building the node; where it computes, we give its result dtype.
"""

from __future__ import annotations

import itertools
import json
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.special as sp

import arignote.scalar as ps
import arignote.scalar.math as psm
from arignote.configdefaults import config
from arignote.scalar.type import get_scalar_type

TABLE = json.loads((Path(__file__).parent / "data" / "pytensor_dtypes.json").read_text())
DTYPES = TABLE["dtypes"]
OPS = TABLE["ops"]
FLOAT32_DIFFERENCES = TABLE["floatX_float32_differences"]
OP_NAMES = sorted(name for name in OPS if name not in ("cast", "upcast"))


def get_op(name):
    for module in (ps, psm):
        if hasattr(module, name):
            return getattr(module, name)
    raise AssertionError(f"arignote.scalar has no op {name}")


def our_dtype(op, dtypes):
    try:
        return op(*(get_scalar_type(d)() for d in dtypes)).type.dtype
    except TypeError:
        return "error"


# --- the deliberate disagreements, decided by NumPy/SciPy ----------------------------------


def _log1pexp(x):
    return np.logaddexp(np.zeros((), np.asarray(x).dtype), x)


# The NumPy/SciPy function each disagreeing op stands for; None: no such function.
NUMPY_REFERENCE = {
    "and_": np.bitwise_and,
    "or_": np.bitwise_or,
    "xor": np.bitwise_xor,
    "arctan2": np.arctan2,
    "deg2rad": np.deg2rad,
    "rad2deg": np.rad2deg,
    "int_div": np.floor_divide,
    "mod": np.remainder,
    "erfc": sp.erfc,
    "gammainc": sp.gammainc,
    "gammaincc": sp.gammaincc,
    "gammaln": sp.gammaln,
    "i0": sp.i0,
    "i1": sp.i1,
    "j0": sp.j0,
    "j1": sp.j1,
    "sigmoid": sp.expit,
    "softplus": _log1pexp,
    "log1pexp": _log1pexp,
    # log(1 - exp(x)) is for real x <= 0: it picks a formula by comparing x with -log(2),
    # which means nothing for complex x; there is no NumPy/SciPy function to follow
    "log1mexp": None,
    "jv": sp.jv,
    "iv": sp.iv,
    "ive": sp.ive,
    "kv": sp.kv,
    "kve": sp.kve,
    "owens_t": sp.owens_t,
    "gammal": sp.gammainc,
    "gammau": sp.gammaincc,
    "gammaincinv": sp.gammaincinv,
    "gammainccinv": sp.gammainccinv,
}

# Why each disagreement is what it is (also the report's list).
REASONS = {
    "and_": "bool with int: NumPy computes (bool is 0/1), PyTensor refuses; "
    "int with uint64: NumPy has no common integer type (float64) and refuses, PyTensor says float64",
    "arctan2": "complex: no NumPy loop",
    "deg2rad": "complex: no NumPy loop",
    "rad2deg": "complex: no NumPy loop",
    "int_div": "complex: NumPy's floor_divide has no complex loop",
    "mod": "complex: NumPy's remainder has no complex loop",
    "erfc": "complex: SciPy's erfc has complex loops (PyTensor refuses)",
    "gammainc": "complex: no SciPy loop",
    "gammaln": "complex: no SciPy loop (loggamma is another function)",
    "i0": "complex: no SciPy loop",
    "sigmoid": "complex: scipy.special.expit has no complex loop",
    "softplus": "complex: numpy.logaddexp has no complex loop",
    "log1mexp": "complex: defined on the real line only",
    "jv": "complex order: SciPy takes a complex argument, not a complex order",
    "iv": "complex order: SciPy takes a complex argument, not a complex order",
    "ive": "complex order: SciPy takes a complex argument, not a complex order",
    "kv": "complex order: SciPy takes a complex argument, not a complex order; bool: PyTensor's "
    "kv negates its bool argument and refuses, SciPy computes",
    "kve": "complex order: SciPy takes a complex argument, not a complex order",
    "owens_t": "complex: no SciPy loop",
    "gammal": "complex: no SciPy loop (gammainc times gamma)",
    "gammau": "complex: no SciPy loop (gammaincc times gamma)",
    "gammaincinv": "complex: no SciPy loop",
    "gammainccinv": "complex: no SciPy loop",
}


def numpy_dtype(name, dtypes):
    """The result dtype of the NumPy/SciPy function behind ``name``, or "error"."""
    fn = NUMPY_REFERENCE[name]
    if fn is None:
        return "error"
    args = [np.ones((), dtype=d)[()] for d in dtypes]
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            result = fn(*args)
    except TypeError:
        return "error"
    return np.asarray(result).dtype.name


@pytest.mark.parametrize("name", OP_NAMES)
def test_output_dtypes_match_pytensor(name):
    op = get_op(name)
    mismatches, decided = [], 0
    for key, expected in OPS[name].items():
        dtypes = key.split(",")
        got = our_dtype(op, dtypes)
        if got == expected:
            continue
        if "error" not in (got, expected) or name not in NUMPY_REFERENCE:
            mismatches.append(f"{name}({key}): PyTensor {expected}, arignote {got}")
            continue
        # PyTensor and we disagree on legality: NumPy/SciPy decides
        reference = numpy_dtype(name, dtypes)
        if reference != got:
            mismatches.append(f"{name}({key}): PyTensor {expected}, arignote {got}, NumPy {reference}")
        decided += 1
    assert not mismatches, "\n".join(mismatches)


def test_every_disagreement_is_listed():
    """The disagreements are exactly the ops in NUMPY_REFERENCE (no stale entries)."""
    disagreeing = {
        name
        for name in OP_NAMES
        for key, expected in OPS[name].items()
        if our_dtype(get_op(name), key.split(",")) != expected
    }
    assert disagreeing == set(NUMPY_REFERENCE)


@pytest.mark.parametrize("name", sorted(FLOAT32_DIFFERENCES))
def test_floatX_float32(name):
    op = get_op(name)
    with config.change_flags(floatX="float32"):
        for key, expected in FLOAT32_DIFFERENCES[name].items():
            assert our_dtype(op, key.split(",")) == expected, key
    # and the default floatX gives the float64 entries again
    for key in FLOAT32_DIFFERENCES[name]:
        assert our_dtype(op, key.split(",")) == OPS[name][key], key


def test_cast_table():
    for key, expected in OPS["cast"].items():
        target, dtype = key.split(":")
        try:
            got = ps.cast(get_scalar_type(dtype)(), target).type.dtype
        except TypeError:
            got = "error"
        assert got == expected, key


def test_upcast_table():
    """Pairs, and triples (promoted left to right, as PyTensor)."""
    for key, expected in OPS["upcast"].items():
        assert ps.upcast(*key.split(",")) == expected, key


def test_table_covers_the_issue():
    """Every op of the issue is in the table, over every dtype (or pair of dtypes)."""
    wanted = (
        "add sub mul true_div int_div mod pow neg reciprocal abs sign sqr sqrt maximum minimum clip "
        "eq neq lt le gt ge and_ or_ xor invert switch floor ceil trunc round_half_to_even "
        "round_half_away_from_zero exp exp2 expm1 log log2 log10 log1p sin cos tan arcsin arccos "
        "arctan sinh cosh tanh arcsinh arccosh arctanh erf erfc erfcx erfinv erfcinv gamma gammaln "
        "psi tri_gamma gammainc gammaincc sigmoid softplus log1mexp log1pexp xlogx xlogy0 betainc "
        "i0 i1 j0 j1 identity second real imag angle conj complex"
    ).split()
    assert set(wanted) <= set(OPS)
    for name in wanted:
        arities = {len(key.split(",")) for key in OPS[name]}
        for arity in arities - {3}:
            assert sum(len(key.split(",")) == arity for key in OPS[name]) == len(DTYPES) ** arity, name
    # add and mul also over triples, including those whose promotion depends on the grouping
    assert OPS["add"]["int16,uint16,float16"] == "float64"
    assert OPS["upcast"]["int16,uint16,float16"] == "float64"


# --- impl computes in the output dtype ---------------------------------------------------


def _sample(dtype, as_array):
    # 1, 2, 3 are legal for every op (no division by zero, in every domain but a few
    # where the result is nan/inf, which is fine here); bools are all True (divisors)
    values = np.array([True, True, True]) if dtype == "bool" else np.array([1, 2, 3]).astype(dtype)
    return values if as_array else values[1]


@pytest.mark.parametrize("name", OP_NAMES)
def test_impl_returns_the_output_dtype(name):
    """On arrays and on NumPy scalars, ``impl`` gives exactly the output Type's dtype for every
    legal input dtype combination (Composite bodies chain impls without casting)."""
    op = get_op(name)
    wrong = []
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        for key in OPS[name]:
            dtypes = key.split(",")
            try:
                node = op(*(get_scalar_type(d)() for d in dtypes)).owner
            except TypeError:
                continue
            out = node.outputs[0].type.dtype
            for as_array in (True, False):
                result = node.op.impl(*(_sample(d, as_array) for d in dtypes))
                if np.asarray(result).dtype != out or np.ndim(result) != (1 if as_array else 0):
                    wrong.append(f"{name}({key}) array={as_array}: {np.asarray(result).dtype}, type {out}")
    assert not wrong, "\n".join(wrong[:20])


def test_ternary_ops_over_all_dtype_triples_do_not_crash():
    """clip/switch/betainc/betaincinv: the table holds a representative set; every triple builds or
    raises TypeError (never another exception)."""
    for name in ("clip", "switch", "betainc", "betaincinv"):
        op = get_op(name)
        for dtypes in itertools.product(DTYPES, repeat=3):
            our_dtype(op, dtypes)
