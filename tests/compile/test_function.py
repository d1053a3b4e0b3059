"""``arignote.function``: each of its arguments, the ways of calling the result, and the
errors for bad inputs and bad arguments."""

from __future__ import annotations

import importlib
import re
import warnings
from collections import OrderedDict

import numpy as np
import pytest

import arignote
import arignote.scalar as ps
import arignote.tensor as pt
from arignote import In, Mode, Out, function, shared
from arignote.compile.executor import Function
from arignote.compile.maker import UnusedInputError
from arignote.compile.mode import FAST_COMPILE, FAST_RUN
from arignote.configdefaults import config
from arignote.graph.utils import MissingInputError
from arignote.tensor.elemwise import Elemwise

PLAIN = Mode(linker="py", optimizer=None)


@pytest.fixture
def xy():
    return pt.dscalars("x", "y")


# -- inputs -------------------------------------------------------------------------------


def test_inputs_list_tuple_or_none(xy):
    x, y = xy
    assert float(function([x, y], x - y)(5, 3)) == 2.0
    assert float(function((x, y), x - y)(5, 3)) == 2.0
    assert float(function(None, pt.constant(4.0) * 2)()) == 8.0
    assert float(function([], pt.constant(4.0) * 2)()) == 8.0


@pytest.mark.parametrize("single", ["variable", "In"])
def test_a_single_input_must_be_wrapped_in_a_list(xy, single):
    x, _ = xy
    with pytest.raises(TypeError, match=r"must be a list.*\[x\]"):
        function(x if single == "variable" else In(x), x * 2)


def test_constants_as_inputs_are_rejected():
    c = pt.constant(1.0)
    with pytest.raises(TypeError, match="Constant"):
        function([c], c * 2)
    with pytest.raises(TypeError, match="Constant"):
        function([In(c)], c * 2)


def test_duplicate_inputs_are_rejected(xy):
    x, y = xy
    with pytest.raises(UnusedInputError, match="Input 2 .*x.* same Variable as input 0"):
        function([x, y, x], x + y)
    with pytest.raises(UnusedInputError, match="same Variable"):
        function([x, In(x, name="other")], x)


def test_shared_variables_are_not_explicit_inputs():
    s = shared(np.float64(1.0), name="s")
    with pytest.raises(TypeError, match="shared variable.*givens"):
        function([s], s * 2)


def test_an_intermediate_input_cuts_the_graph(xy):
    x, _ = xy
    h = x * 10
    out = h + 1
    f = function([h], out)
    assert float(f(2.0)) == 3.0  # h is given, x is not needed
    assert x not in f.maker.fgraph.inputs


def test_missing_input_names_the_variable_and_the_inputs(xy):
    x, y = xy
    with pytest.raises(MissingInputError, match=r"(?s)y.*inputs are: x"):
        function([x], x + y)


# -- outputs ------------------------------------------------------------------------------


def test_single_output_is_returned_alone(xy):
    x, y = xy
    out = function([x, y], x * y + 1)(2, 3)
    assert isinstance(out, np.ndarray) and out.shape == () and float(out) == 7.0


def test_list_and_tuple_of_outputs_give_a_list(xy):
    x, y = xy
    for outputs in ([x + y, x - y], (x + y, x - y)):
        res = function([x, y], outputs)(1, 2)
        assert isinstance(res, list)
        assert [float(r) for r in res] == [3.0, -1.0]
    assert function([x, y], [x + y])(1, 2)[0] == 3.0  # a list of one stays a list


def test_dict_of_outputs_gives_a_dict_in_the_same_order(xy):
    x, y = xy
    f = function([x, y], {"sum": x + y, "diff": x - y, "prod": x * y})
    res = f(4, 2)
    assert list(res) == ["sum", "diff", "prod"]
    assert {k: float(v) for k, v in res.items()} == {"sum": 6.0, "diff": 2.0, "prod": 8.0}
    with pytest.raises(TypeError, match="keys must be strings"):
        function([x], {1: x})


def test_no_outputs_is_an_empty_list():
    s = shared(np.float64(0.0))
    f = function([], None, updates={s: s + 1})
    assert f() == []
    assert f.maker.n_outputs == 0
    assert float(s.get_value()) == 1.0


def test_out_wrapped_outputs_and_bad_outputs(xy):
    x, _ = xy
    assert float(function([x], Out(x * 2))(3)) == 6.0
    assert [float(v) for v in function([x], [Out(x * 2), x + 1])(3)] == [6.0, 4.0]
    with pytest.raises(TypeError, match="outputs must be a Variable"):
        function([x], "x")
    with pytest.raises(TypeError, match="Output 1 .* not a Variable"):
        function([x], [x, object()])


def test_an_input_can_be_an_output_and_comes_back_as_a_copy():
    v = pt.dvector("v")
    a = np.arange(3.0)
    out = function([v], v)(a)
    np.testing.assert_array_equal(out, a)
    assert not np.shares_memory(out, a)


def test_output_subset(xy):
    x, y = xy
    f = function([x, y], [x + y, x - y, x * y])
    assert [float(v) for v in f(4, 2, output_subset=[2, 0])] == [8.0, 6.0]


# -- calling ------------------------------------------------------------------------------


def test_keyword_arguments_by_input_name(xy):
    x, y = xy
    f = function([x, In(y, name="why")], x - y)
    assert float(f(5, why=1)) == 4.0
    assert float(f(x=5, why=1)) == 4.0
    with pytest.raises(TypeError, match=r"no input named 'y'; inputs: \['why', 'x'\]"):
        f(5, y=1)
    with pytest.raises(TypeError, match=r"input 0 \('x'\) both by position and by name"):
        f(5, x=1)


def test_wrong_number_of_arguments_says_how_many(xy):
    x, y = xy
    f = function([x, y], x + y, name="adder")
    with pytest.raises(TypeError, match="function 'adder' takes 2 input\\(s\\), got 3"):
        f(1, 2, 3)
    with pytest.raises(TypeError, match=r"missing input 1 \('y'\)"):
        f(1)


def test_unnamed_inputs_are_labelled_by_position_and_variable():
    a, b = pt.dscalar(), pt.dscalar()
    f = function([a, b], a + b)
    with pytest.raises(TypeError, match=r"Bad input 1 \(<Scalar\(float64, shape=\(\)\)>\)"):
        f(1.0, "nope")


# -- bad input values ---------------------------------------------------------------------


def test_bad_dtype_names_input_type_and_what_was_given():
    fv = pt.fvector("fv")
    f = function([fv], fv * 2, name="f32")
    with pytest.raises(TypeError) as info:
        f(np.ones(3))
    msg = str(info.value)
    assert "Bad input 0 ('fv') of function 'f32'" in msg
    assert "expected Type Vector(float32, shape=(?,))" in msg
    assert "an ndarray of dtype float64 and shape (3,)" in msg
    assert "allow_downcast" in msg  # says how to get it through


def test_bad_ndim_names_input_type_and_shape():
    v = pt.dvector("v")
    f = function([v], v.sum())
    with pytest.raises(
        TypeError, match=r"(?s)Bad input 0 \('v'\).*shape \(2, 2\).*Wrong number of dimensions"
    ):
        f(np.ones((2, 2)))


def test_bad_static_shape_names_the_dimension():
    v = pt.tensor("v", dtype="float64", shape=(3,))
    f = function([v], v.sum())
    assert float(f(np.ones(3))) == 3.0
    with pytest.raises((TypeError, ValueError), match=r"(?s)Bad input 0 \('v'\).*shape \(4,\)"):
        f(np.ones(4))


@pytest.mark.parametrize(
    "value", ["text", None, object(), [1.0, "a"], {"a": 1}], ids=["str", "None", "object", "mixed", "dict"]
)
def test_python_objects_are_clear_errors(value):
    x = pt.dscalar("x")
    f = function([x], x + 1)
    with pytest.raises((TypeError, ValueError), match=r"Bad input 0 \('x'\).*expected Type Scalar\(float64"):
        f(value)


def test_nan_and_empty_arrays_are_values_not_errors():
    v = pt.dvector("v")
    f = function([v], v * 2)
    assert np.isnan(f(np.array([np.nan]))).all()
    assert f(np.empty(0)).shape == (0,)


def test_lists_and_python_numbers_are_converted():
    v = pt.dvector("v")
    np.testing.assert_array_equal(function([v], v + 1)([1, 2]), [2.0, 3.0])
    i = pt.lscalar("i")
    assert function([i], i * 2)(3) == 6


# -- runtime errors inside nodes ----------------------------------------------------------


def test_shape_mismatch_says_which_dimensions_disagree():
    x, y = pt.dvector("x"), pt.dvector("y")
    f = function([x, y], x + y)  # NODE-LINE
    with pytest.raises(ValueError) as info:
        f(np.ones(3), np.ones(4))
    assert re.search(r"dimension 0.*\(3,\).*\(4,\)", str(info.value))
    note = "\n".join(info.value.__notes__)
    assert "Apply node that caused the error: Add(x, y)" in note
    assert "input 0 (x): Type Vector(float64, shape=(?,)), shape (3,), dtype float64" in note
    assert "input 1 (y): Type Vector(float64, shape=(?,)), shape (4,), dtype float64" in note
    # a dprint of the node, with Types
    assert "Add [id A] <Vector(float64, shape=(?,))>" in note
    assert " ├─ x [id B] <Vector(float64, shape=(?,))>" in note
    # the user's line that created it
    assert __file__ in note and "NODE-LINE" in note


def test_error_inside_a_custom_op_keeps_its_type_and_gains_the_note():
    class Boom(arignote.Op):
        __props__ = ()

        def make_node(self, x):
            return arignote.Apply(self, [x], [x.type()])

        def perform(self, node, inputs, output_storage):
            raise ZeroDivisionError("boom")

    x = pt.dmatrix("x")
    f = function([x], Boom()(pt.exp(x)), mode=PLAIN)
    with pytest.raises(ZeroDivisionError, match="boom") as info:
        f(np.ones((2, 5)))
    (note,) = info.value.__notes__
    assert "input 0 (Exp.0): Type Matrix(float64, shape=(?, ?)), shape (2, 5), dtype float64" in note
    assert "Boom [id A]" in note and "Exp [id B]" in note and "x [id C]" in note


def test_node_error_dprint_is_depth_limited():
    x = pt.dvector("x")
    deep = x
    for _ in range(30):
        deep = pt.sin(deep)
    y = pt.dvector("y")
    f = function([x, y], deep + y, mode=PLAIN)
    with pytest.raises(ValueError) as info:
        f(np.ones(2), np.ones(3))
    note = info.value.__notes__[0]
    dprint_lines = [line for line in note.splitlines() if "[id " in line]
    assert 2 <= len(dprint_lines) <= 20


# -- mode ---------------------------------------------------------------------------------


def test_mode_by_name_or_object(xy):
    x, _ = xy
    assert function([x], x * 2).maker.mode is FAST_RUN  # the default
    assert function([x], x * 2, mode="FAST_COMPILE").maker.mode is FAST_COMPILE
    assert function([x], x * 2, mode=PLAIN).maker.mode is PLAIN
    with pytest.raises(ValueError, match="Unknown mode 'NOPE'"):
        function([x], x, mode="NOPE")
    with config.change_flags(mode="FAST_COMPILE"):
        assert function([x], x * 2).maker.mode is FAST_COMPILE


# -- updates ------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["dict", "pairs", "ordered"])
def test_updates_as_dict_or_pairs(kind):
    s = shared(np.float64(0.0), name="s")
    x = pt.dscalar("x")
    pairs = [(s, s + x)]
    updates = {"dict": dict(pairs), "pairs": pairs, "ordered": OrderedDict(pairs)}[kind]
    f = function([x], s, updates=updates)
    assert [float(f(v)) for v in (1.0, 2.0, 3.0)] == [0.0, 1.0, 3.0]
    assert float(s.get_value()) == 6.0


def test_updates_errors():
    s = shared(np.zeros(3, dtype="float32"), name="s")
    x = pt.dscalar("x")
    with pytest.raises(TypeError, match="updates keys must be shared variables"):
        function([x], x, updates={x: x + 1})
    with pytest.raises(ValueError, match="updated twice"):
        function([x], x, updates=[(s, s + 1), (s, s + 2)])
    with pytest.raises(TypeError, match=r"(?s)update of shared variable s.*float32.*float64.*astype"):
        function([x], x, updates={s: s + x})
    with pytest.raises(TypeError, match="dict or a list of"):
        function([x], x, updates=3)


def test_update_is_converted_to_the_shared_type_when_it_can_be():
    s = shared(np.zeros(3), name="s", shape=(3,))
    v = pt.dvector("v")  # shape (?,): narrowed to (3,) with a runtime check
    f = function([v], [], updates={s: v})
    f(np.ones(3))
    np.testing.assert_array_equal(s.get_value(), np.ones(3))
    with pytest.raises(ValueError):
        f(np.ones(4))
    np.testing.assert_array_equal(s.get_value(), np.ones(3))  # a failed call updates nothing


# -- givens -------------------------------------------------------------------------------


def test_givens_substitutes_variables():
    x = pt.dvector("x")
    z = pt.dscalar("z")
    f = function([z], x.sum() * z, givens={x: pt.stack([z, z])})
    assert float(f(3.0)) == 18.0
    s = shared(np.ones(3), name="s")
    g = function([], s.sum(), givens=[(s, pt.ones(3) * 2)])
    assert float(g()) == 6.0
    assert s not in g.get_shared()


def test_givens_values_and_errors():
    x = pt.dscalar("x")
    y = pt.dscalar("y")
    assert float(function([], x * 2, givens={x: 3.0})()) == 6.0  # a value becomes a constant
    with pytest.raises(RuntimeError, match="givens replaces x, which is input 0"):
        function([x], x * 2, givens={x: y})
    with pytest.raises(TypeError, match="givens keys must be Variables"):
        function([y], y, givens={"x": y})
    with pytest.raises(TypeError, match="cannot replace the Constant"):
        function([y], y, givens={pt.constant(1.0): y})
    with pytest.raises(ValueError, match="appears twice in givens"):
        function([y], x, givens=[(x, y), (x, y * 2)])


def test_rebuild_strict(xy):
    x, _ = xy
    v = pt.dvector("v")
    i = pt.iscalar("i")
    with pytest.raises(TypeError, match="cannot use v in place of x"):
        function([v], x * 2, givens={x: v})
    # rebuild_strict=False: any Type, the graph is rebuilt around it
    np.testing.assert_array_equal(function([v], x * 2, givens={x: v}, rebuild_strict=False)([1, 2]), [2, 4])
    out = function([i], x * 2, givens={x: i}, rebuild_strict=False)(3)
    assert out == 6 and out.dtype == np.int32


# -- no_default_updates -------------------------------------------------------------------


def test_default_updates_and_no_default_updates():
    cnt = shared(np.int64(0), name="cnt")
    cnt.default_update = cnt + 1
    f = function([], cnt)
    assert [int(f()) for _ in range(3)] == [0, 1, 2]
    g = function([], cnt, no_default_updates=True)
    assert [int(g()) for _ in range(2)] == [3, 3]
    h = function([], cnt, no_default_updates=[cnt])
    assert int(h()) == 3 and int(h()) == 3
    other = shared(np.int64(0), name="other")
    other.default_update = other + 10
    k = function([], cnt + other, no_default_updates=[cnt])
    assert [int(k()) for _ in range(2)] == [3, 13]
    assert int(cnt.get_value()) == 3
    # an explicit update wins over the default one
    e = function([], cnt, updates={cnt: cnt * 2})
    e()
    assert int(cnt.get_value()) == 6


# -- accept_inplace -----------------------------------------------------------------------


def test_accept_inplace_and_mutable_inputs():
    x, y = pt.dvector("x"), pt.dvector("y")
    z = Elemwise(ps.add, {0: 0})(x, y)  # overwrites x
    with pytest.raises(TypeError, match="in-place operation .*accept_inplace=True"):
        function([x, y], z)
    f = function([x, y], z, accept_inplace=True)
    a = np.ones(3)
    np.testing.assert_array_equal(f(a, np.ones(3)), [2, 2, 2])
    np.testing.assert_array_equal(a, [1, 1, 1])  # not mutable: the caller's array is kept
    # (the per-node VM writes into a mutable input; a whole-graph Numba function, which the
    # NUMBA mode would run, never writes into a graph input: it may, not must)
    g = function([In(x, mutable=True), y], z, accept_inplace=True, mode="FAST_RUN")
    np.testing.assert_array_equal(g(a, np.ones(3)), [2, 2, 2])
    np.testing.assert_array_equal(a, [2, 2, 2])  # mutable: worked on in place


# -- name ---------------------------------------------------------------------------------


def test_name_is_used_in_str_and_errors(xy):
    x, _ = xy
    f = function([x], x * 2, name="doubler")
    assert f.name == "doubler" and str(f) == "Function(doubler)"
    with pytest.raises(TypeError, match="function 'doubler'"):
        f("a")


# -- allow_input_downcast -----------------------------------------------------------------


def test_allow_input_downcast():
    fv = pt.fvector("fv")
    with pytest.raises(TypeError, match="loss of precision"):
        function([fv], fv * 2)(np.ones(3))
    out = function([fv], fv * 2, allow_input_downcast=True)(np.ones(3))
    assert out.dtype == np.float32
    # None (default): a value that fits exactly goes through, one that does not is refused
    i = pt.iscalar("i")
    assert function([i], i * 2)(np.int64(3)) == 6
    with pytest.raises(TypeError, match="exactly"):
        function([i], i * 2)(np.int64(2**40))
    assert function([i], i * 2, allow_input_downcast=True)(np.int64(2**40)) == 0  # wraps
    # the In setting wins over the function's
    f = function([In(fv, allow_downcast=False)], fv * 2, allow_input_downcast=True)
    with pytest.raises(TypeError):
        f(np.ones(3))


# -- profile ------------------------------------------------------------------------------


def test_profile_argument(xy):
    from arignote.compile.debug.profiling import ProfileStats

    x, _ = xy
    assert function([x], x * 2).profile is None
    f = function([x], x * 2, profile=True)
    assert isinstance(f.profile, ProfileStats)
    f(1.0)
    f(2.0)
    assert f.profile.fct_callcount == 2
    mine = ProfileStats(message="mine")
    assert function([x], x * 2, profile=mine).profile is mine


# -- on_unused_input ----------------------------------------------------------------------


def test_on_unused_input(xy):
    x, y = xy
    with pytest.raises(UnusedInputError, match=r"input 1 \(y\), which is not needed"):
        function([x, y], x * 2)
    with pytest.warns(UserWarning, match=r"input 1 \(y\)") as rec:
        f = function([x, y], x * 2, on_unused_input="warn")
    assert rec[0].filename == __file__  # points at the caller
    assert float(f(2, 99)) == 4.0  # the unused input is still an argument
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert float(function([x, y], x * 2, on_unused_input="ignore")(2, 0)) == 4.0
    with pytest.raises(ValueError, match="on_unused_input must be"):
        function([x, y], x, on_unused_input="sometimes")
    with config.change_flags(on_unused_input="ignore"):
        function([x, y], x * 2)
    # an input only its own update uses is used
    acc = pt.dscalar("acc")
    function([In(acc, update=acc + 1), x], x * 2)


# -- trust_input --------------------------------------------------------------------------


def test_trust_input_skips_checks():
    v = pt.dvector("v")
    f = function([v], v + 1, trust_input=True)
    assert f.trust_input is True
    np.testing.assert_array_equal(f(np.ones(2)), [2.0, 2.0])
    # no check: what is given goes to the ops as it is
    assert f(np.ones((2, 2))).shape == (2, 2)
    f.trust_input = False
    with pytest.raises(TypeError, match="Wrong number of dimensions"):
        f(np.ones((2, 2)))
    # keyword calls work with trust_input too
    g = function([v], v * 2, trust_input=True)
    np.testing.assert_array_equal(g(v=np.ones(2)), [2.0, 2.0])


# -- the Function object ------------------------------------------------------------------


def test_function_attributes():
    x = pt.dvector("x")
    s = shared(np.zeros(3), name="s")
    f = function([x], (x * s).sum(), updates={s: s + x}, name="acc")
    assert isinstance(f, Function)
    assert f.get_shared() == [s]
    assert f.maker.fgraph.inputs[0].type == x.type
    assert len(f.maker.fgraph.outputs) == 2  # the output, then the update
    assert f.maker.fgraph.update_mapping == {1: 1}
    assert f.fn is f.vm
    text = f.dprint(file="str")
    assert "Dot" in text and "Add" in text  # sum(x * s) of two vectors is their dot after specialize


def test_free_drops_intermediate_values():
    x = pt.dvector("x")
    f = function([x], pt.exp(x).sum(), mode=Mode(linker="vm_nogc", optimizer=None))
    f(np.ones(3))
    held = [v for v, cell in f.vm.storage_map.items() if v.owner is not None and cell[0] is not None]
    assert held
    f.free()
    assert all(cell[0] is None for v, cell in f.vm.storage_map.items() if v.owner is not None)
    assert float(f(np.ones(3))) == pytest.approx(3 * np.e)


def test_copy():
    x = pt.dscalar("x")
    s = shared(np.float64(0.0), name="s")
    f = function([x], s, updates={s: s + x}, name="f")
    c = f.copy(name="c")
    assert c.name == "c" and c.maker.fgraph is f.maker.fgraph
    assert float(c(1.0)) == 0.0 and float(f(1.0)) == 1.0  # same shared variable
    assert float(s.get_value()) == 2.0
    d = f.copy(delete_updates=True)
    assert float(d(5.0)) == 2.0 and float(s.get_value()) == 2.0
    assert len(f.maker.fgraph.outputs) == 2  # the original keeps its updates
    s2 = shared(np.float64(100.0), name="s2")
    e = f.copy(swap={s: s2})
    assert float(e(1.0)) == 100.0
    assert float(s2.get_value()) == 101.0 and float(s.get_value()) == 2.0
    assert e.get_shared() == [s2]
    with pytest.raises(ValueError, match="not a shared variable of this function"):
        f.copy(swap={s2: s})
    with pytest.raises(TypeError, match="has Type"):
        f.copy(swap={s: shared(np.zeros(2))})


def test_copy_share_memory_shares_input_containers():
    x = pt.dscalar("x")
    acc = pt.dscalar("acc")
    f = function([In(acc, update=acc + x), x], acc)
    f(0.0, 1.0)
    shared_copy = f.copy(share_memory=True)
    own_copy = f.copy()
    assert shared_copy.input_storage[0] is f.input_storage[0]
    assert own_copy.input_storage[0] is not f.input_storage[0]
    assert float(own_copy.input_storage[0].value) == 1.0  # a copy of the state at copy time
    assert float(shared_copy(5.0, 2.0)) == 5.0
    assert float(f.input_storage[0].value) == 7.0  # f sees the update its copy made
    assert float(own_copy.input_storage[0].value) == 1.0


# -- Variable.eval ------------------------------------------------------------------------


def test_eval_compiles_once_and_caches_the_function(monkeypatch):
    # (the attribute arignote.compile.function is the function; the module is here)
    function_module = importlib.import_module("arignote.compile.function")
    compiled = []
    real = function_module.function

    def counting(*args, **kwargs):
        compiled.append(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(function_module, "function", counting)
    x = pt.dvector("x")
    y = (x * 2).sum()
    assert float(y.eval({x: np.ones(3)})) == 6.0
    assert float(y.eval({x: np.arange(3.0)})) == 6.0
    assert float(y.eval({"x": np.ones(2)})) == 4.0  # by name: the same input, the same function
    assert len(compiled) == 1
    (fn,) = y._fn_cache.values()
    assert isinstance(fn, Function)
    assert float(y.eval({x: np.ones(3)}, mode="FAST_COMPILE")) == 6.0  # other options: compiled again
    assert len(compiled) == 2 and compiled[1] == {"mode": "FAST_COMPILE"}
    assert float(pt.constant(3.0).eval()) == 3.0
    with pytest.raises(TypeError, match=r"Bad value for input x.*Wrong number of dimensions"):
        y.eval({x: np.ones((2, 2))})


def test_copy_with_profile():
    from arignote.compile.debug.profiling import ProfileStats

    x = pt.dscalar("x")
    f = function([x], x * 2, profile=True)
    assert f.copy().profile is None
    c = f.copy(profile=True)
    assert isinstance(c.profile, ProfileStats) and c.profile is not f.profile
    c(1.0)
    assert c.profile.fct_callcount == 1 and f.profile.fct_callcount == 0


def test_pytensor_3_paths_of_function_and_unused_input_error():
    import arignote
    from arignote.compile.maker import UnusedInputError as MakerError
    from arignote.compile.maker import function as maker_function
    from arignote.compile.rebuild import UnusedInputError

    assert maker_function is arignote.function and MakerError is UnusedInputError
    import arignote.tensor as _pt

    x, y = _pt.dscalar("x"), _pt.dscalar("y")
    with pytest.raises(UnusedInputError, match="not needed"):
        maker_function([x, y], x * 2)
    assert maker_function([x], x * 2)(3.0) == 6.0


# -- PyTensor's attributes of Function and FunctionMaker --------------------------------------


def test_function_outputs_unpack_single_and_return_none(xy):
    x, y = xy
    single = function([x], 2 * x)
    assert single.unpack_single and not single.return_none
    assert [type(o) for o in single.outputs] == [Out] and single.outputs[0].variable.owner is not None
    assert float(single(3.0)) == 6.0
    many = function([x, y], [x + y, Out(x * y, borrow=True)])
    assert not many.unpack_single and [o.borrow for o in many.outputs] == [False, True]
    assert many(2.0, 3.0) == [5.0, 6.0]
    # no outputs: function() returns [] (as PyTensor's); a maker given None returns None
    acc = shared(np.float64(0.0))
    assert function([x], None, updates={acc: acc + x})(1.0) == []
    from arignote.compile.maker import FunctionMaker

    f = FunctionMaker([x], None, updates={acc: acc + x}).create()
    assert f.return_none and f(2.0) is None and float(acc.get_value()) == 3.0


def test_function_maker_takes_pytensor_style_arguments(xy):
    from arignote.compile.maker import FunctionMaker

    x, y = xy
    acc = shared(np.float64(1.0), name="acc")
    maker = FunctionMaker([x, (y, y + 1)], x * acc, mode=PLAIN, updates={acc: acc * 2}, trust_input=True)
    assert maker.unpack_single and not maker.return_none and maker.trust_input
    assert maker.on_unused_input == config.on_unused_input
    assert maker.function_class is Function and maker.linker is maker.mode.linker
    expanded = maker.expanded_inputs
    assert [i.variable for i in expanded] == [x, y, acc]
    assert expanded[2].implicit and expanded[2].update is not None
    assert maker.required == [True, True, False]
    f = maker.create()
    assert f.trust_input and isinstance(f, Function)
    assert float(f(np.float64(3.0), np.float64(0.0))) == 3.0
    assert float(acc.get_value()) == 2.0
    assert Mode().function_maker is FunctionMaker


def test_function_maker_wraps_and_checks_inputs(xy):
    from arignote.compile.maker import FunctionMaker

    x, y = xy
    assert FunctionMaker.wrap_in(x).variable is x
    assert FunctionMaker.wrap_in((x, x + 1)).update is not None
    assert FunctionMaker.wrap_out(x).variable is x
    with pytest.raises(TypeError, match="pair must be"):
        FunctionMaker.wrap_in((x, y, x))
    with pytest.raises(TypeError, match="must be a Variable, an In"):
        FunctionMaker.wrap_in(3)
    with pytest.raises(TypeError, match="must be a Variable or an Out"):
        FunctionMaker.wrap_out("y")
    ins, outs = [In(x), In(y)], [Out(x * 2)]
    with pytest.raises(UnusedInputError, match="input 1"):
        FunctionMaker.check_unused_inputs(ins, outs, "raise")
    with pytest.warns(UserWarning, match="input 1"):
        FunctionMaker.check_unused_inputs(ins, outs, "warn")
    FunctionMaker.check_unused_inputs(ins, outs, "ignore")
    with pytest.raises(ValueError, match="on_unused_input"):
        FunctionMaker.check_unused_inputs(ins, outs, "loud")


def test_function_maker_create_and_prepare_fgraph(xy):
    from arignote.compile.maker import FunctionMaker

    x, y = xy
    z = pt.dvector("z")
    doubled = z * 2
    fgraph, updates = FunctionMaker.create_fgraph([In(x), In(z, update=doubled)], [Out(pt.exp(x) * 1)])
    assert len(fgraph.outputs) == 2 and fgraph.update_mapping == {1: 1}
    # (root inputs only: the graph is not copied)
    assert len(updates) == 1 and updates[0].variable is doubled is fgraph.outputs[1]
    assert FunctionMaker.create_fgraph([In(x)], [Out(x + 1)], force_clone=True)[0].inputs[0] is not x
    FunctionMaker.prepare_fgraph([], [], [], fgraph, "FAST_RUN", None)
    assert not any(  # the multiplication by one was rewritten away
        n.op == pt.mul and any(getattr(i, "data", None) == 1 for i in n.inputs) for n in fgraph.apply_nodes
    )
    inplace = pt.exp(x).owner.op.__class__(pt.exp.scalar_op, {0: 0})(x)
    with pytest.raises(TypeError, match="in-place operation"):
        FunctionMaker.create_fgraph([In(x)], [Out(inplace)])
    fgraph, _ = FunctionMaker.create_fgraph([In(x)], [Out(inplace)], accept_inplace=True)
    assert fgraph.outputs[0].owner.op.destroy_map == {0: [0]}


def test_pickling_a_function_with_aliased_values_warns_or_raises():
    import pickle

    base = np.arange(6.0)
    a = shared(base, borrow=True, name="a")
    b = shared(base[2:], borrow=True, name="b")
    f = function([], a.sum() + b.sum())
    with pytest.warns(UserWarning, match="share memory"):
        g = pickle.loads(pickle.dumps(f))
    assert float(g()) == base.sum() + base[2:].sum()
    f.pickle_aliased_memory_strategy = "raise"
    with pytest.raises(ValueError, match="a.*b.*share memory"):
        pickle.dumps(f)
    f.pickle_aliased_memory_strategy = "ignore"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pickle.dumps(f)
    f.pickle_aliased_memory_strategy = "sometimes"
    with pytest.raises(ValueError, match="pickle_aliased_memory_strategy"):
        pickle.dumps(f)
