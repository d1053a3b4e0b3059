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
    ("pytensor.compile.mode", {"C", "CVM"}, "the C backend's modes"),
    (
        "pytensor.compile.mode",
        {"PYTORCH", "MLX"},
        "no PyTorch or MLX backend is planned (scale-out goes through JAX)",
    ),
    (
        "pytensor.compile.ops",
        {"register_deep_copy_op_c_code", "register_view_op_c_code"},
        "C code of the copy and view Ops",
    ),
    (
        "pytensor.tensor.shape",
        {"register_shape_c_code", "register_shape_i_c_code"},
        "C code of the shape Ops",
    ),
    (
        "pytensor.tensor.blockwise",
        {"BlockwiseWithCoreShape", "OpWithCoreShape"},
        "wrappers that PyTensor's Numba backend puts around Blockwise nodes to pass their core "
        "shapes; arignote's Numba tier computes them in its kernels",
    ),
    (
        "pytensor.tensor.random.op",
        {"RandomVariableWithCoreShape"},
        "the wrapper PyTensor's Numba backend puts around draws to pass their core shape",
    ),
    (
        "pytensor.link.jax.dispatch",
        {"blas", "einsum", "linalg", "pad", "shape"},
        "PyTensor's per-topic files of jax_funcify registrations; arignote's are split by its own "
        "topics (dispatch/tensor_basic.py, nlinalg.py, slinalg.py, ...): jax_funcify is the API",
    ),
    (
        "pytensor.tensor.random.rewriting",
        {"jax", "numba"},
        "PyTensor's rewrites of random draws for its JAX and Numba backends; arignote's backends "
        "translate draws in their dispatch (link/jax/dispatch/random.py, link/numba/dispatch/random.py)",
    ),
    ("pytensor.tensor.blas", {"ldflags"}, "the BLAS link flags of the C backend"),
    (
        "pytensor.utils",
        {
            "LOCAL_BITWIDTH",
            "NDARRAY_C_VERSION",
            "NPY_RAVEL_AXIS",
            "PYTHON_INT_BITWIDTH",
            "call_subprocess_Popen",
            "maybe_add_to_os_environ_pathlist",
            "output_subprocess_Popen",
            "subprocess_Popen",
        },
        "constants and subprocess helpers of the C backend's compiler calls",
    ),
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
    (
        "pytensor.sparse.basic",
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
        {"as_list_or_tuple", "grad_time", "mode_not_slow"},
        "module-level helpers of PyTensor's gradient.py (a list coercion, a timing global, a mode check)",
    ),
    (
        "pytensor.graph.basic",
        {"clone_node_and_cache", "default_node_formatter", "op_as_string"},
        "helpers of PyTensor's cloning and printing",
    ),
    (
        "pytensor.printing",
        {
            "GraphNode",
            "IDTypesType",
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
    (
        "pytensor.compile.aliasing",
        {"alias_root", "infer_reuse_pattern", "insert_deepcopy", "view_tree_set"},
        "PyTensor's FunctionMaker copies aliased outputs with these; arignote's executor checks "
        "its outputs for aliasing itself (Supervisor and add_supervisor_to_fgraph exist)",
    ),
    (
        "pytensor.compile.executor",
        {"AliasedMemoryError", "DUPLICATE"},
        "an error and a sentinel of PyTensor's Function internals (its aliasing checks, its "
        "duplicate-input marker)",
    ),
    (
        "pytensor.compile.mode",
        {"AddDestroyHandler", "AddFeatureOptimizer", "local_useless"},
        "PyTensor's optdb entries that attach features and its group of useless-node rules; "
        "arignote's maker attaches the DestroyHandler itself and register_useless registers "
        "into canonicalize and specialize",
    ),
    (
        "pytensor.compile.mode",
        {"OPT_FAST_RUN_STABLE", "OPT_MINIMUM", "OPT_O2", "OPT_O3", "OPT_STABILIZE", "OPT_UNSAFE"},
        "queries of optdb positions and tags that arignote's pipeline does not have; "
        "OPT_FAST_RUN, OPT_FAST_COMPILE, OPT_MERGE and OPT_NONE exist",
    ),
    (
        "pytensor.compile.mode",
        {"fast_run_linkers_to_mode"},
        "the table PyTensor's get_mode uses to pick FAST_RUN's mode from config.linker",
    ),
    (
        "pytensor.compile.builders",
        {"construct_nominal_fgraph", "infer_shape"},
        "helpers of PyTensor's OpFromGraph (its inner graph's nominal inputs, its shape "
        "inference); arignote's OpFromGraph does both itself",
    ),
    (
        "pytensor.compile.ops",
        {"TypeCastingOp", "load_back"},
        "the C-code base class of PyTensor's view-like casts and an unpickling helper",
    ),
    (
        "pytensor.compile.rebuild",
        {"construct_function_ins_and_outs"},
        "how PyTensor's function() and scan() pair In/Out wrappers with the rebuilt graph",
    ),
    (
        "pytensor.graph.rewriting.basic",
        {
            "ChangeTracker",
            "DispatchingFeature",
            "NodeProcessingGraphRewriter",
            "OpToRewriterTracker",
            "pre_constant_merge",
            "pre_greedy_node_rewriter",
        },
        "the bookkeeping of PyTensor's rewriting engine (change tracking, per-Op dispatch, "
        "greedy pre-rewriting); arignote's engine is a worklist with RulesByOp",
    ),
    (
        "pytensor.graph.rewriting.basic",
        {"CheckStackTraceFeature", "CheckStackTraceRewriter", "check_stack_trace"},
        "PyTensor's test helpers that check rewrites copied tag.trace; arignote records the "
        "user's line on each node (copy_stack_trace exists)",
    ),
    (
        "pytensor.graph.utils",
        {"AssocList"},
        "a list-backed mapping PyTensor's internals use for unhashable keys",
    ),
    (
        "pytensor.graph.features",
        {"register_feature_callback"},
        "the decorator that marks the Feature methods PyTensor's FunctionGraph dispatches "
        "callbacks to (arignote's FunctionGraph calls the methods a Feature has)",
    ),
    (
        "pytensor.raise_op",
        {"vectorize_check_and_raise"},
        "a batch rule registered in vectorize_graph's per-Op registry (vectorize_graph is the API)",
    ),
    (
        "pytensor.tensor.shape",
        {"vectorize_shape"},
        "a batch rule registered in vectorize_graph's per-Op registry (vectorize_graph is the API)",
    ),
    (
        "pytensor.tensor.elemwise",
        {"vectorize_careduce", "vectorize_dimshuffle", "get_normalized_batch_axes"},
        "batch rules registered in vectorize_graph's per-Op registry and their axis helper",
    ),
    (
        "pytensor.tensor.elemwise",
        {"DimShufflePrinter", "scalar_elemwise"},
        "PyTensor's pretty-printer of DimShuffle (arignote's is printing/pretty.py's) and the "
        "decorator its math module builds Elemwise functions with",
    ),
    (
        "pytensor.tensor.random.op",
        {"vectorize_random_variable"},
        "a batch rule registered in vectorize_graph's per-Op registry (vectorize_graph is the API)",
    ),
    (
        "pytensor.tensor.random.op",
        {"AbstractRNGConstructor"},
        "the base class of PyTensor's default_rng Op",
    ),
    (
        "pytensor.tensor.random.type",
        {"AbstractRandomGeneratorType", "gen_states_keys", "numpy_bit_gens"},
        "PyTensor's base Type and the tables its generator Type uses to check and copy NumPy "
        "bit-generator states",
    ),
    (
        "pytensor.tensor.random.variable",
        {"RNG_AND_DRAW", "UNSET", "warn_reuse"},
        "a type alias, a sentinel and a warning helper of PyTensor's random-generator Variable",
    ),
    (
        "pytensor.tensor.blockwise",
        {"vectorize_node_fallback"},
        "the default batch rule (wrap the node in Blockwise); arignote's is in graph/replace.py's registry",
    ),
    (
        "pytensor.tensor.einsum",
        {"CONTRACTION_STEP", "PATH"},
        "type aliases of PyTensor's contraction-path code",
    ),
    (
        "pytensor.tensor.rewriting.basic",
        {
            "broadcast_like_elemwise",
            "broadcasted_by",
            "elemwise_of",
            "equivalent_up_to_constant_casting",
            "get_simplified_broadcast_shape",
            "get_simplified_shape",
            "is_an_upcast",
        },
        "helpers of PyTensor's tensor rewrites",
    ),
    (
        "pytensor.tensor.rewriting.basic",
        {
            "extract_diag_of_transpose",
            "local_alloc_empty_to_zeros",
            "local_alloc_sink_dimshuffle",
            "local_alloc_unary",
            "local_cast_cast",
            "local_dimshuffle_alloc",
            "local_elemwise_alloc",
            "local_join_1",
            "local_join_empty",
            "local_join_make_vector",
            "local_join_of_alloc",
            "local_join_to_repeat",
            "local_merge_alloc",
            "local_merge_switch_same_cond",
            "local_scalar_tensor_scalar",
            "local_second_sink",
            "local_second_to_alloc",
            "local_sum_make_vector",
            "local_tensor_scalar_tensor",
            "local_useless_alloc",
            "local_useless_elemwise",
            "local_useless_fill",
            "local_useless_split",
            "local_useless_switch",
            "local_view_op",
            "remove_tensor_copy",
            "topological_second_sink",
        },
        "PyTensor's individual rewrite rules; arignote's rules are in tensor/rewriting/<topic>.py "
        "under their own names (register_*, the constant folders and the Assert removals exist here)",
    ),
    (
        "pytensor.tensor.variable",
        {"DenseConstantMeta", "DenseTensorConstant", "DenseTensorVariable", "DenseVariableMeta"},
        "PyTensor's deprecated isinstance shims from when dense and sparse Variables shared "
        "TensorVariable (use TensorVariable and TensorConstant)",
    ),
    (
        "pytensor.tensor.variable",
        {"get_unique_constant_value"},
        "a helper of PyTensor's rewrites (the one value of a constant that repeats it)",
    ),
    (
        "pytensor.scan.basic",
        {"get_updates_and_outputs"},
        "how PyTensor's scan sorts what the step function returned; arignote's scan does it "
        "in scan/basic.py (_split_returned)",
    ),
    (
        "pytensor.assumptions",
        {
            "alloc",
            "blockwise",
            "diagonal",
            "dimshuffle",
            "dot",
            "elemwise",
            "orthogonal",
            "permutation",
            "positive_definite",
            "reshape",
            "selection",
            "shape",
            "subtensor",
            "symmetric",
            "triangular",
        },
        "PyTensor's files of assumption rules, one per Op or property; arignote's rules are in "
        "assumptions/rules.py (assume and the properties are in the package)",
    ),
    (
        "pytensor.compile.debug.debugmode",
        {
            "DataDestroyed",
            "OutputGuard",
            "check_eq",
            "data_destroyed",
            "default_make_thunk",
            "output_guard",
            "str_diagnostic",
            "validity_hint",
        },
        "helpers of PyTensor's DebugMode checks; arignote's DebugMode does its checks in "
        "compile/debug/debugmode.py under its own names",
    ),
    (
        "pytensor.compile.debug.nanguardmode",
        {"flatten", "logger"},
        "a helper and the logger of PyTensor's NanGuardMode",
    ),
    (
        "pytensor.compile.debug.profiling",
        {
            "extended_open",
            "logger",
            "print_global_stats",
            "pytensor_imported_time",
            "register_profiler_printer",
            "total_fct_exec_time",
            "total_graph_rewrite_time",
            "total_time_linker",
        },
        "process-wide timing globals, the logger and printing hooks of PyTensor's profiler "
        "(ProfileStats is the API)",
    ),
    (
        "pytensor.graph.destroyhandler",
        {"ProtocolError", "inplace_candidates"},
        "an error of PyTensor's DestroyHandler bookkeeping and the helper its in-place rewrites "
        "use; arignote's in-place pass is tensor/rewriting/inplace.py",
    ),
    ("pytensor.misc.pkl_utils", {"min_recursion"}, "the recursion limit PyTensor's pickler sets"),
    (
        "pytensor.scan.op",
        {
            "ScanMethodsMixin",
            "TensorConstructorType",
            "check_broadcast",
            "copy_var_format",
            "err_msg1",
            "err_msg2",
            "err_msg3",
            "profile_printer",
        },
        "helpers, messages and profile printing of PyTensor's Scan Op",
    ),
    (
        "pytensor.scan.utils",
        {
            "FieldInfo",
            "InnerFunctionError",
            "ScanProfileStats",
            "Validator",
            "default_filter_scanargs",
            "expand_empty",
            "forced_replace",
            "reconstruct_graph",
            "safe_index",
            "safe_new",
            "traverse",
        },
        "helpers of PyTensor's scan construction, rewrites and profiling",
    ),
    (
        "pytensor.sparse.variable",
        {"override_dense"},
        "the decorator PyTensor builds SparseVariable's dense fallbacks with",
    ),
    (
        "pytensor.tensor.blas",
        {"BatchedDot", "Dot22", "Dot22Scalar", "GemmRelated", "must_initialize_y_gemv", "view_roots"},
        "the C backend's specialised products (Dot22, its batched dot) and helpers of its BLAS "
        "rewrites; arignote's BLAS rewrites make Gemm, Gemv and Ger (tensor/rewriting/blas.py)",
    ),
    (
        "pytensor.tensor.exceptions",
        {"AdvancedIndexingError"},
        "an error PyTensor defines but no longer raises (indexing errors are IndexError and "
        "TypeError, as here)",
    ),
    ("pytensor.tensor.interpolate", {"pad_or_return"}, "a helper of PyTensor's interp"),
    (
        "pytensor.tensor.random.rewriting",
        {"dfs_rewriter", "integer_dtypes", "optdb"},
        "what pytensor/tensor/random/rewriting/__init__.py imports for itself",
    ),
    (
        "pytensor.tensor.sharedvar",
        {"load_shared_variable", "scalar_constructor"},
        "an unpickling helper and the constructor PyTensor registers for NumPy scalars "
        "(shared(np.float64(1.0)) works here through the tensor constructor)",
    ),
    (
        "pytensor.utils",
        {"NoDuplicateOptWarningFilter", "add_lazy_dispatcher", "get_unbound_function", "lazy_scipy_module"},
        "helpers of PyTensor's internals (a logging filter, dispatch and import helpers)",
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
    (
        "pytensor.compile.mode",
        {"VM"},
        "in PyTensor 3 a one-element tuple holding a Mode (a stray comma); Mode(linker='vm') "
        "and FAST_COMPILE are the Python VM here",
    ),
    (
        "pytensor.link.basic",
        {
            "JITLinker",
            "Linker",
            "LocalLinker",
            "PerformLinker",
            "ThunkAndContainersType",
            "WrapLinker",
            "WrapLinkerMany",
        },
        "PyTensor's linker class hierarchy; arignote's linkers (VMLinker, PyGenLinker, NumbaLinker, "
        "JAXLinker) share no base class of that interface, and a backend registers per-Op "
        "implementations (singledispatch) rather than subclassing a Linker",
    ),
    (
        "pytensor.graph.features",
        {
            "BadOptimization",
            "FullHistory",
            "HistoryEntry",
            "NoOutputFromInplace",
            "PreserveVariableAttributes",
        },
        "features of PyTensor's rewriting and DebugMode machinery (undo history, in-place "
        "guards on outputs, attribute copying); arignote's DebugMode error is "
        "compile.debug.errors.BadOptimization and its maker guards outputs itself",
    ),
    (
        "pytensor.ifelse",
        {
            "CondMerge",
            "acceptable_ops",
            "cond_make_inplace",
            "cond_merge_ifs_false",
            "cond_merge_ifs_true",
            "cond_merge_random_op",
            "cond_remove_identical",
            "ifelse_lift_single_if_through_acceptable_ops",
        },
        "PyTensor's rewrites of IfElse nodes under their names; arignote's are its own "
        "(ifelse_constant_condition, ifelse_same_branches, ifelse_nested_same_condition, "
        "ifelse_merge_same_condition, which "
        "merges only conditionals outside other branches; no lifting through Elemwise yet), and "
        "its IfElse is in place through the as_view outputs",
    ),
    (
        "pytensor.tensor.einsum",
        {"Einsum"},
        "einsum is built from existing Ops (tensordot, matmul, sum, indexing), with no "
        "OpFromGraph subclass of its own",
    ),
    (
        "pytensor.tensor.utils",
        {"import_func_from_string"},
        "a helper that imports a NumPy/SciPy function by its dotted name, for PyTensor's Elemwise C code",
    ),
    (
        "pytensor.sparse.basic",
        {"bsr_matrix", "bsr_dmatrix", "bsr_fmatrix"},
        "BSR (block sparse rows) Variables: PyTensor has the Type but no Op computes with it; "
        "arignote's sparse Types are CSR and CSC",
    ),
    (
        "pytensor.sparse.variable",
        {"constant"},
        "arignote.sparse.constant is the function (its home, sparse/conversion.py, imports "
        "sparse/variable.py, so it is not served from there)",
    ),
    (
        "pytensor.scan.utils",
        {"ScanArgs"},
        "PyTensor's editable view of a Scan node's inputs and outputs by role (PyMC's logprob "
        "uses it); arignote's Scan keeps its own layout (scan/op.py) and has no such view yet",
    ),
    (
        "pytensor.tensor.xlogx",
        {"xlogx", "xlogy0"},
        "in PyTensor 3 pt.xlogx is this deprecated module; here pt.xlogx and pt.xlogy0 are the "
        "elementwise functions (special.xlogy is the current one), and a module of that name "
        "would replace pt.xlogx when imported",
    ),
    (
        "pytensor.tensor.fourier",
        {"Fourier", "fft"},
        "PyTensor's legacy complex FFT Op (tensor.fft's rfft and irfft are the current API)",
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
        try:
            module = importlib.import_module(ours)
        except ModuleNotFoundError as err:
            if err.name != ours:  # the module exists but fails to import
                raise
            return set(names)  # no such module: every name is missing
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
    if module_name.startswith("pytensor.link.jax"):
        pytest.importorskip("jax")  # (the backend imports JAX; CI's JAX job checks these)
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
