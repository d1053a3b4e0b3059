"""Every public attribute of PyTensor 3's core classes exists on arignote's class of the same path.

``tests/data/pytensor_public_attributes.json`` lists, per class, the public names of the class
and of a small instance of it; it is written by ``tools/pytensor_attributes.py`` from an
installed PyTensor (this test never imports PyTensor). Here arignote's class at the same path
(``pytensor`` -> ``arignote``) and an instance built by the same code (the tool's
``instances("arignote")``) must have each name, unless ``NOT_PROVIDED`` says why not.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "pytensor_public_attributes.json"

_C = "C code generation of PyTensor's C backend (arignote's fast tiers are generated Python, Numba and JAX)"
_SCAN_LAYOUT = (
    "PyTensor's Scan layout (mit-mot, mit-sot and sit-sot groups, nit-sot length inputs, untraced "
    "states, argument offsets); arignote's Scan has its own (ScanInfo: sequences, recurrent outputs, "
    "nit-sot outputs, non-sequences) and no such view yet, as for ScanArgs in test_api_names"
)
_C_NAMES = {
    "ScalarType": (
        "c_cleanup c_code_cache_version c_compile_args c_declare c_element_type c_extract c_extract_out "
        "c_header_dirs c_headers c_init c_init_code c_is_simple c_lib_dirs c_libraries c_literal "
        "c_no_compile_args c_support_code c_sync dtype_specs"
    ),
    "TensorType": (
        "c_cleanup c_code_cache_version c_compile_args c_declare c_element_type c_extract c_extract_out "
        "c_header_dirs c_headers c_init c_init_code c_is_simple c_lib_dirs c_libraries c_literal "
        "c_no_compile_args c_support_code c_sync dtype_specs dtype_specs_map"
    ),
    "Elemwise": (
        "c_cleanup_code_struct c_code c_code_cache_version c_code_cache_version_apply c_code_cleanup "
        "c_compile_args c_header_dirs c_headers c_init_code c_init_code_apply c_init_code_struct "
        "c_lib_dirs c_libraries c_no_compile_args c_support_code c_support_code_apply "
        "c_support_code_struct get_params params_type make_c_thunk openmp gxx_support_openmp "
        "test_gxx_support update_self_openmp"
    ),
    "DimShuffle": (
        "SECTIONS backward_re section_re c_cleanup_code_struct c_code c_code_cache_version "
        "c_code_cache_version_apply c_code_cleanup c_compile_args c_func_file c_func_name c_header_dirs "
        "c_headers c_init_code c_init_code_apply c_init_code_struct c_lib_dirs c_libraries "
        "c_no_compile_args c_support_code c_support_code_apply c_support_code_struct check_input "
        "code_sections format_c_function_args func_codes func_files func_name get_c_macros get_params "
        "get_path load_c_code make_c_thunk params_type"
    ),
}
_SCAN_LAYOUT_NAMES = (
    "inner_mitmot inner_mitmot_grouped inner_mitmot_outs inner_mitmot_outs_grouped inner_mitsot "
    "inner_mitsot_grouped inner_mitsot_outs inner_sitsot inner_sitsot_outs inner_untraced_sit_sot "
    "inner_untraced_sit_sot_outs mintaps mitmots_preallocated n_tap_outs nit_sot_arg_offset "
    "oldest_inner_mitsot outer_mitmot outer_mitmot_outs outer_mitsot outer_mitsot_outs outer_nitsot "
    "outer_sitsot outer_sitsot_outs outer_untraced_sit_sot outer_untraced_sit_sot_outs output_types "
    "seqs_arg_offset untraced_sit_sot_arg_offset vector_outs vector_seqs"
)

# "Class.name": why arignote does not have it. PyTensor internals only: what a user calls is
# implemented, not listed here.
NOT_PROVIDED: dict[str, str] = {
    **{f"{cls}.{name}": _C for cls, names in _C_NAMES.items() for name in names.split()},
    **{f"Scan.{name}": _SCAN_LAYOUT for name in _SCAN_LAYOUT_NAMES.split()},
    "TensorType.context_name": "the device context of PyTensor's removed GPU backend (devices go through JAX here)",
    "TensorType.filter_checks_isfinite": (
        "a flag PyTensor 3's filter never reads (its DebugMode sets it); arignote's DebugMode "
        "checks NaN/inf itself (check_isfinite)"
    ),
    "Elemwise.nfunc_spec": (
        "the name of the NumPy function PyTensor's Elemwise.perform looks up; arignote's scalar "
        "ops compute with their own impl"
    ),
    "Elemwise.nfunc": "PyTensor's Elemwise.perform cache of the function nfunc_spec names (None until run)",
    "Elemwise.ufunc": "PyTensor's Elemwise.perform cache of a np.frompyfunc of the scalar op (None until run)",
    "Mode.fn_time": "a counter PyTensor 3 sets to 0 and never updates (call_time is kept)",
    "Scan.allow_gc": (
        "whether PyTensor's inner VM frees intermediate values between steps; arignote's loop "
        "plan owns its buffers"
    ),
    "Scan.strict": "PyTensor's flag that scan's inner graph had no implicit shared inputs; arignote's scan collects them itself",
    "Scan.prepare_fgraph": "how PyTensor's Scan rewrites its inner graph before compiling it; arignote's compiles it with its mode",
    "Scan.validate_inner_graph": "PyTensor's check of its Scan layout's inner Types; arignote's Scan checks its layout when built",
}


def _tool():
    spec = importlib.util.spec_from_file_location(
        "pytensor_attributes", ROOT / "tools" / "pytensor_attributes.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_BUILDERS = _tool().instances("arignote")
_RECORDED: dict[str, list[str]] = json.loads(DATA.read_text())


def _ours(path: str) -> type:
    module_name, class_name = ("arignote" + path[len("pytensor") :]).rsplit(".", 1)
    return getattr(importlib.import_module(module_name), class_name)


def _has(cls: type, instance: object | None, name: str) -> bool:
    if name in dir(cls) or (instance is not None and name in dir(instance)):
        return True
    return hasattr(cls, name) or (instance is not None and hasattr(instance, name))


def test_the_recorded_list_covers_the_core_classes():
    for path in (
        "pytensor.graph.basic.Variable",
        "pytensor.tensor.variable.TensorVariable",
        "pytensor.compile.executor.Function",
        "pytensor.scan.op.Scan",
    ):
        assert _RECORDED[path], path
    assert "outputs" in _RECORDED["pytensor.compile.executor.Function"]
    short = {path.rsplit(".", 1)[1] for path in _RECORDED}
    assert len(short) == len(_RECORDED), "two recorded classes share a name"
    for key, reason in NOT_PROVIDED.items():
        cls, name = key.split(".")
        assert reason and cls in short, key
        path = next(p for p in _RECORDED if p.endswith("." + cls))
        assert name in _RECORDED[path], f"{key} is not a recorded name"


@pytest.mark.parametrize("path", sorted(_RECORDED))
def test_every_pytensor_public_attribute_exists(path):
    cls = _ours(path)
    build = _BUILDERS.get(path[len("pytensor.") :])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        instance = build() if build is not None else None
    if instance is not None:
        assert isinstance(instance, cls), f"the instance built for {path} is a {type(instance).__name__}"
    short = cls.__name__
    missing = {n for n in _RECORDED[path] if not _has(cls, instance, n)}
    exempt = {n for n in _RECORDED[path] if f"{short}.{n}" in NOT_PROVIDED}
    landed = exempt - missing
    assert not landed, (
        f"these exist now; remove them from NOT_PROVIDED: {sorted(f'{short}.{n}' for n in landed)}"
    )
    assert not missing - exempt, (
        f"arignote's {short} lacks these public names of {path}: {sorted(missing - exempt)}"
    )
