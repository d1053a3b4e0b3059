"""Every public name of PyTensor 3's main modules exists at the same path in arignote.

``tests/data/pytensor_public_names.json`` lists PyTensor 3's public names per module; it is
written by ``tools/pytensor_names.py`` from an installed PyTensor (this test never imports
PyTensor). A name arignote does not have must be in one of the lists below, with its reason.
Names in ``NOT_YET`` must not exist (an entry that has landed fails the test, so the list
only shrinks); names in ``BEING_BUILT`` are other work in progress and may land any time.
"""

from __future__ import annotations

import importlib
import json
import warnings
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data" / "pytensor_public_names.json"

# Each entry: (module, names, reason). A name arignote lacks must be in exactly one.

# The C backend (generated C code, its compiler cache and lock, its linkers) and backends
# not planned: arignote's fast tiers are generated Python, Numba and JAX.
OTHER_BACKENDS: list[tuple[str, set[str], str]] = [
    ("pytensor.compile", {"C", "CVM", "compilelock"}, "the C backend's modes and compiler lock"),
    (
        "pytensor.compile",
        {"register_deep_copy_op_c_code", "register_view_op_c_code"},
        "C code of the copy and view Ops",
    ),
    ("pytensor.scalar", {"C_CODE_PATH"}, "where the C backend's code lives"),
    ("pytensor.tensor", {"blas_c", "blas_headers", "elemwise_cgen"}, "C code generation modules"),
    ("pytensor.compile", {"PYTORCH"}, "no PyTorch backend is planned (scale-out goes through JAX)"),
]

# Work that other changes are landing now: listed so that this test does not block them;
# these names may appear any time, and each entry goes when its work lands.
BEING_BUILT: list[tuple[str, set[str], str]] = []

# PyTensor's Op classes behind functions that arignote composes from other Ops (so there is
# no Op class of their own to export).
COMPOSED_HERE: list[tuple[str, set[str], str]] = [
    (
        "pytensor.tensor.nlinalg",
        {"KroneckerProduct", "TensorInv", "TensorSolve"},
        "kron, tensorinv and tensorsolve are compositions of reshapes, products and solves",
    ),
    (
        "pytensor.tensor.slinalg",
        {"BaseBlockDiagonal", "BlockDiagonal"},
        "block_diag is a composition of set_subtensor on zeros",
    ),
    (
        "pytensor.sparse",
        {"ColScaleCSC", "RowScaleCSC"},
        "col_scale and row_scale are products with a dense vector (mul_s_v, with transposes)",
    ),
]

# Implementation details of PyTensor's modules that arignote does differently (not the API
# a user programs against).
INTERNALS: list[tuple[str, set[str], str]] = [
    (
        "pytensor.compile",
        {
            "AddDestroyHandler",
            "AddFeatureOptimizer",
            "AliasedMemoryError",
            "alias_root",
            "infer_reuse_pattern",
            "insert_deepcopy",
            "local_useless",
            "view_tree_set",
        },
        "PyTensor's FunctionMaker copies aliased outputs and adds its in-place machinery with "
        "these; arignote's maker uses the DestroyHandler and its executor's output checks "
        "(Supervisor and add_supervisor_to_fgraph exist: code that rewrites a graph by hand uses them)",
    ),
    (
        "pytensor.compile",
        {"OPT_FAST_RUN_STABLE", "OPT_O2", "OPT_O3", "OPT_STABILIZE", "OPT_UNSAFE"},
        "queries of optdb positions and tags (o2, o3, unsafe, stable) that arignote's pipeline "
        "does not have; OPT_FAST_RUN, OPT_FAST_COMPILE, OPT_MERGE and OPT_NONE exist",
    ),
    (
        "pytensor.gradient",
        {"V", "as_list_or_tuple", "grad_time", "mode_not_slow", "null_type"},
        "module-level helpers of PyTensor's gradient.py (a TypeVar, a list coercion, a timing "
        "global, a mode check, a NullType instance)",
    ),
    (
        "pytensor.graph.basic",
        {"OpType", "OptionalApplyType", "clone_node_and_cache", "default_node_formatter", "op_as_string"},
        "typing variables and helpers of PyTensor's cloning and printing",
    ),
    (
        "pytensor.printing",
        {
            "GraphNode",
            "IDTypesType",
            "StorageMapType",
            "VALID_ASSOC",
            "get_node_by_id",
            "hex_digest",
            "position_independent_str",
            "use_ascii",
            "var_descriptor",
        },
        "helpers of PyTensor's printers and pydot drawing",
    ),
    (
        "pytensor.scalar",
        {
            "float_out_nocomplex",
            "int_out_nocomplex",
            "real_out",
            "same_out_min8",
            "unary_out_lookup",
            "NumpyAutocaster",
            "autocast_float",
            "autocast_float_as",
            "autocast_int",
            "convert",
            "as_common_dtype",
            "mod_check",
        },
        "PyTensor's output-type rules and Python-number autocasting; arignote's are in "
        "scalar/op.py and tensor/conversion.py under their own names",
    ),
    (
        "pytensor.scalar",
        {
            "BinaryBitOp",
            "UnaryBitOp",
            "LogicalComparison",
            "FixedLogicalComparison",
            "ScalarInnerGraphOp",
            "ScalarConstantSignature",
        },
        "base classes of PyTensor's scalar ops (arignote's: ScalarOp, BitwiseOp, Comparison)",
    ),
    (
        "pytensor.scalar",
        {"Grad2F1Loop"},
        "the ScalarLoop subclass of PyTensor's hyp2f1 parameter derivatives (a series summed in a "
        "loop, subclassed for its rewrites to find); arignote's are the Hyp2F1Grad op "
        "(scalar/hypergeometric.py)",
    ),
    (
        "pytensor.scalar",
        {
            "bool",
            "complexs",
            "complexs128",
            "complexs64",
            "floats",
            "ints",
            "discrete_dtypes",
            "round_half_away_from_zero_",
            "round_half_away_from_zero_vec",
            "round_half_away_from_zero_vec32",
            "round_half_away_from_zero_vec64",
            "ComplexError",
            "IntegerDivisionError",
            "disconnected_type",
            "hyp2f1_grad",
            "pprint",
            "sharedvar",
        },
        "helpers and imports of PyTensor's scalar/basic.py (several-variable constructors, "
        "NumPy rounding helpers, errors of its C code, names it imports)",
    ),
]

# What arignote leaves out on purpose, with why.
LEFT_OUT: list[tuple[str, set[str], str]] = [
    (
        "pytensor.sparse",
        {"bsr_matrix", "bsr_dmatrix", "bsr_fmatrix"},
        "BSR (block sparse rows) Variables: PyTensor has the Type but no Op computes with it; "
        "arignote's sparse Types are CSR and CSC",
    ),
    (
        "pytensor.sparse",
        {"generic", "ivector", "disconnected_type", "minimum", "psb"},
        "what pytensor/sparse/__init__.py imports for itself (a Type instance, a tensor "
        "constructor, the gradient's DisconnectedType, the dense minimum, a module alias)",
    ),
]

# Names still to add (this list only shrinks: an entry that exists fails the test).
NOT_YET: list[tuple[str, set[str], str]] = []


def _by_module(entries: list[tuple[str, set[str], str]]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for module, names, reason in entries:
        assert reason and names, module
        overlap = out.setdefault(module, set()) & names
        assert not overlap, f"listed twice in {module}: {overlap}"
        out[module] |= names
    return out


def _load(key: str = "modules") -> dict[str, list[str]]:
    return json.loads(DATA.read_text())[key]


def _has(module, name: str, is_submodule: bool) -> bool:
    if hasattr(module, name):
        return True
    if not is_submodule:
        return False
    # a submodule is an attribute only once imported: import it
    try:
        importlib.import_module(f"{module.__name__}.{name}")
    except ModuleNotFoundError:
        return False
    return True


def _missing(module_name: str, names: list[str]) -> set[str]:
    ours = "arignote" + module_name[len("pytensor") :]
    submodules = set(_load("submodules").get(module_name, ()))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        module = importlib.import_module(ours)
        return {name for name in names if not _has(module, name, name in submodules)}


MODULES = sorted(_load())


def test_the_recorded_list_covers_the_main_modules():
    modules = _load()
    for name in ("pytensor", "pytensor.tensor", "pytensor.scalar", "pytensor.tensor.math"):
        assert modules[name], name
    assert "exp" in modules["pytensor.tensor"] and "function" in modules["pytensor"]
    for entries in (OTHER_BACKENDS, BEING_BUILT, COMPOSED_HERE, INTERNALS, LEFT_OUT, NOT_YET):
        assert set(_by_module(entries)) <= set(modules)


@pytest.mark.parametrize("module_name", MODULES)
def test_every_pytensor_public_name_exists(module_name):
    names = _load()[module_name]
    missing = _missing(module_name, names)
    lists = {
        "OTHER_BACKENDS": OTHER_BACKENDS,
        "COMPOSED_HERE": COMPOSED_HERE,
        "INTERNALS": INTERNALS,
        "LEFT_OUT": LEFT_OUT,
        "NOT_YET": NOT_YET,
    }
    explained: set[str] = set()
    for list_name, entries in lists.items():
        listed = _by_module(entries).get(module_name, set())
        assert not listed & explained, f"{module_name}: {sorted(listed & explained)} in two lists"
        explained |= listed
        landed = listed - missing
        assert not landed, (
            f"these {module_name} names exist now; remove them from {list_name}: {sorted(landed)}"
        )
    allowed = _by_module(BEING_BUILT).get(module_name, set())
    unexplained = missing - explained - allowed
    assert not unexplained, f"arignote lacks these public names of {module_name}: {sorted(unexplained)}"
    unknown = (explained | allowed) - set(names)
    assert not unknown, f"not public names of {module_name}: {sorted(unknown)}"
