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

# The C backend (generated C code, its compiler cache and lock, its linkers): arignote has
# no C backend; its fast tiers are generated Python, Numba and JAX.
C_BACKEND = {
    "pytensor.compile": {
        "C",
        "CVM",
        "compilelock",
        "register_deep_copy_op_c_code",
        "register_view_op_c_code",
        "PYTORCH",  # a PyTorch backend: not planned (scale-out goes through JAX)
    },
    "pytensor.scalar": {"C_CODE_PATH"},
    "pytensor.tensor": {"blas_c", "blas_headers", "elemwise_cgen"},
}

# Work that other changes are landing now (scan, the JAX backend): listed so that this test
# does not block them; each entry goes when its work lands.
BEING_BUILT = {
    "pytensor": {"wrap_jax"},
    "pytensor.compile": {"JAX"},
}

# Names to add (this list only shrinks).
NOT_YET: dict[str, set[str]] = {
    "pytensor": {
        "assumptions",
        "basic",
        "misc",
        "npy_2_compat",
        "raise_op",
        "utils",
    },
    "pytensor.compile": {
        "AddDestroyHandler",
        "AddFeatureOptimizer",
        "AliasedMemoryError",
        "NUMBA",
        "OPT_FAST_COMPILE",
        "OPT_FAST_RUN",
        "OPT_FAST_RUN_STABLE",
        "OPT_MERGE",
        "OPT_NONE",
        "OPT_O2",
        "OPT_O3",
        "OPT_STABILIZE",
        "OPT_UNSAFE",
        "PrintCurrentFunctionGraph",
        "ProfileStats",
        "Supervisor",
        "add_supervisor_to_fgraph",
        "alias_root",
        "aliasing",
        "function_dump",
        "infer_reuse_pattern",
        "insert_deepcopy",
        "local_useless",
        "optdb",
        "predefined_linkers",
        "predefined_modes",
        "predefined_optimizers",
        "register_linker",
        "register_optimizer",
        "view_tree_set",
    },
    "pytensor.gradient": {
        "V",
        "as_list_or_tuple",
        "grad_time",
        "mode_not_slow",
        "null_type",
    },
    "pytensor.graph.basic": {
        "OpType",
        "OptionalApplyType",
        "clone_node_and_cache",
        "default_node_formatter",
        "op_as_string",
    },
    "pytensor.printing": {
        "GraphNode",
        "IDTypesType",
        "StorageMapType",
        "VALID_ASSOC",
        "get_node_by_id",
        "hex_digest",
        "min_informative_str",
        "position_independent_str",
        "use_ascii",
        "var_descriptor",
    },
    "pytensor.scalar": {
        "BinaryBitOp",
        "ComplexError",
        "FixedLogicalComparison",
        "Grad2F1Loop",
        "IntegerDivisionError",
        "LogicalComparison",
        "NumpyAutocaster",
        "ScalarConstantSignature",
        "ScalarInnerGraphOp",
        "ScalarLoop",
        "UnaryBitOp",
        "as_common_dtype",
        "autocast_float",
        "autocast_float_as",
        "autocast_int",
        "bool",
        "complexs",
        "complexs128",
        "complexs64",
        "convert",
        "disconnected_type",
        "discrete_dtypes",
        "float_out_nocomplex",
        "floats",
        "hyp2f1_grad",
        "int_out_nocomplex",
        "ints",
        "loop",
        "mod_check",
        "pprint",
        "real_out",
        "round_half_away_from_zero_",
        "round_half_away_from_zero_vec",
        "round_half_away_from_zero_vec32",
        "round_half_away_from_zero_vec64",
        "same_out_min8",
        "sharedvar",
        "unary_out_lookup",
    },
    "pytensor.tensor": {
        "NoneSliceConst",
        "exceptions",
        "make_slice",
        "slicetype",
        "symbolic",
        "utils",
        "values_eq_approx_always_true",
    },
    "pytensor.tensor.linalg": {
        "lu",
        "lu_factor",
        "lu_solve",
        "ordqz",
        "pivot_to_permutation",
        "qz",
        "schur",
        "solve_discrete_are",
        "tridiagonal_lu_factor",
        "tridiagonal_lu_solve",
    },
    "pytensor.tensor.nlinalg": {
        "KroneckerProduct",
        "TensorInv",
        "TensorSolve",
    },
    "pytensor.tensor.random": {
        "rewriting",
        "variable",
    },
    "pytensor.tensor.slinalg": {
        "BaseBlockDiagonal",
        "BlockDiagonal",
        "LU",
        "LUFactor",
        "PivotToPermutations",
        "QZ",
        "Schur",
        "lu",
        "lu_factor",
        "lu_solve",
        "ordqz",
        "pivot_to_permutation",
        "qz",
        "schur",
        "solve_discrete_are",
    },
}


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
    assert set(C_BACKEND) | set(BEING_BUILT) | set(NOT_YET) <= set(modules)


@pytest.mark.parametrize("module_name", MODULES)
def test_every_pytensor_public_name_exists(module_name):
    names = _load()[module_name]
    missing = _missing(module_name, names)
    allowed = C_BACKEND.get(module_name, set()) | BEING_BUILT.get(module_name, set())
    todo = NOT_YET.get(module_name, set())
    unexplained = missing - allowed - todo
    assert not unexplained, f"arignote lacks these public names of {module_name}: {sorted(unexplained)}"
    landed = todo - missing
    assert not landed, f"these {module_name} names exist now; remove them from NOT_YET: {sorted(landed)}"
    unknown = (allowed | todo) - set(names)
    assert not unknown, f"not public names of {module_name}: {sorted(unknown)}"
