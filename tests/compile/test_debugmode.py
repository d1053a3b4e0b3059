"""DebugMode: good graphs give FAST_RUN's results; Ops and rewrites that break the Op
contract are caught with the right error, naming the node and the user's line."""

from __future__ import annotations

import inspect
import pickle
import sys
from dataclasses import replace

import numpy as np
import pytest

import arignote
import arignote.tensor as pt
from arignote.compile.debug.debugmode import DebugLinker, DebugMode
from arignote.compile.debug.errors import (
    BadDestroyMap,
    BadOptimization,
    BadThunkOutput,
    BadViewMap,
    DebugModeError,
    InvalidValueError,
    StochasticOrder,
)
from arignote.compile.debug.rewrites import DebugRewriteQuery, graph_signature
from arignote.compile.mode import FAST_RUN, Mode, RewriteQuery, get_mode
from arignote.graph.basic import Apply
from arignote.graph.fg import FunctionGraph
from arignote.graph.op import Op
from arignote.graph.rewriting.basic import node_rewriter
from arignote.graph.rewriting.db import rewrite_registry
from arignote.ifelse import ifelse
from arignote.link.python import register_python_thunk
from arignote.tensor.elemwise import Elemwise
from tests.toy import add, double, mul, neg

THIS_FILE = __file__


def _line_of(marker: str) -> int:
    lines = inspect.getsource(sys.modules[__name__]).splitlines()
    hits = [i + 1 for i, line in enumerate(lines) if line.rstrip().endswith(marker)]
    assert len(hits) == 1, (marker, hits)
    return hits[0]


def _scalar_name(node: Apply) -> str:
    return type(getattr(node.op, "scalar_op", None)).__name__


def _scalar_names(node: Apply) -> set[str]:
    """The scalar op's class name, or those of the body of a fused Composite."""
    body = getattr(getattr(node.op, "scalar_op", None), "fgraph", None)
    if body is None:
        return {_scalar_name(node)}
    return {type(inner.op).__name__ for inner in body.apply_nodes}


# ---------------------------------------------------------------------------------------
# Ops, good and bad
# ---------------------------------------------------------------------------------------


class VectorOp(Op):
    """One float vector in, one like it out."""

    __props__ = ()

    def make_node(self, x):
        x = pt.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])


class Nondeterministic(VectorOp):
    """Adds how many times it has run: never the same twice."""

    runs = 0

    def perform(self, node, inputs, output_storage):
        type(self).runs += 1
        output_storage[0][0] = inputs[0] + type(self).runs


class DebugPerformDisagrees(VectorOp):
    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0] * 2

    def debug_perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0] * 3


class DebugPerformAgrees(VectorOp):
    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0] * 2

    def debug_perform(self, node, inputs, output_storage):
        output_storage[0][0] = np.multiply(inputs[0], 2.0)


class ThunkDisagrees(VectorOp):
    """Its own make_thunk (a stand-in for compiled code) computes x * 2 + 1e-3."""

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0] * 2

    def make_thunk(self, node, storage_map, compute_map, no_recycling, impl=None):
        x_cell, out_cell = storage_map[node.inputs[0]], storage_map[node.outputs[0]]
        done = compute_map[node.outputs[0]]

        def thunk():
            out_cell[0] = x_cell[0] * 2 + 1e-3
            done[0] = True

        thunk.lazy = False
        return thunk


class ThunkOnly(VectorOp):
    """No perform at all: only make_thunk."""

    def make_thunk(self, node, storage_map, compute_map, no_recycling, impl=None):
        x_cell, out_cell = storage_map[node.inputs[0]], storage_map[node.outputs[0]]
        done = compute_map[node.outputs[0]]

        def thunk():
            out_cell[0] = -x_cell[0]
            done[0] = True

        return thunk


class WrongDtype(VectorOp):
    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0].astype("float32")


class WrongNdim(VectorOp):
    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0][None, :].copy()


class PythonFloat(VectorOp):
    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = float(inputs[0].sum())


class UndeclaredInplace(VectorOp):
    """Doubles its input in place and returns a copy: destroy_map does not say so."""

    def perform(self, node, inputs, output_storage):
        x = inputs[0]
        x *= 2
        output_storage[0][0] = x.copy()


class DeclaredInplace(VectorOp):
    """The same, declared: output 0 is computed in the buffer of input 0."""

    destroy_map = {0: [0]}

    def perform(self, node, inputs, output_storage):
        x = inputs[0]
        x *= 2
        output_storage[0][0] = x


class UndeclaredView(VectorOp):
    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0][::-1]


class ReturnsInput(VectorOp):
    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0]


class DeclaredView(UndeclaredView):
    view_map = {0: [0]}


class TwoAliasedOutputs(Op):
    """Two outputs that are the same fresh array: neither is a declared view."""

    __props__ = ()

    def make_node(self, x):
        x = pt.as_tensor_variable(x)
        return Apply(self, [x], [x.type(), x.type()])

    def perform(self, node, inputs, output_storage):
        out = inputs[0] * 2
        output_storage[0][0] = out
        output_storage[1][0] = out


class AccumulatesIntoOutput(VectorOp):
    """Adds into whatever buffer is in its output cell: wrong when one is preallocated."""

    def perform(self, node, inputs, output_storage):
        z = output_storage[0][0]
        if z is None:
            z = np.zeros_like(inputs[0])
        z += inputs[0]
        output_storage[0][0] = z


class ReusesOutputCorrectly(VectorOp):
    """Reuses a preallocated buffer only when it has the right shape: correct."""

    def perform(self, node, inputs, output_storage):
        x = inputs[0]
        z = output_storage[0][0]
        if z is None or z.shape != x.shape:
            z = np.empty_like(x)
        np.multiply(x, 2, out=z)
        output_storage[0][0] = z


class Scaled(VectorOp):
    """An Op with params: perform gets them as a fourth argument."""

    __props__ = ("factor",)

    def __init__(self, factor):
        self.factor = factor

    def get_params(self, node):
        return self.factor

    def perform(self, node, inputs, output_storage, params):
        output_storage[0][0] = inputs[0] * params


class Twice(VectorOp):
    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0] * 2


# ---------------------------------------------------------------------------------------
# rewrites, good and bad (registered only for the test that uses them)
# ---------------------------------------------------------------------------------------


@node_rewriter([Elemwise], name="dm_test_exp_to_log")
def exp_to_log(fgraph, node):
    """Wrong: exp(x) -> log(x)."""
    if _scalar_name(node) == "Exp":
        return [pt.log(node.inputs[0])]
    return None


@node_rewriter([Elemwise], name="dm_test_exp_to_exp")
def exp_to_equivalent(fgraph, node):
    """Right: exp(x) -> exp(x) * 1.0 (once)."""
    if _scalar_name(node) == "Exp" and not getattr(node.tag, "dm_seen", False):
        new = pt.exp(node.inputs[0])
        new.owner.tag.dm_seen = True
        return [new * 1.0]
    return None


@node_rewriter([Elemwise], name="dm_test_double_neg")
def double_neg(fgraph, node):
    """Right: exp(x) -> -(-exp(x)) (once)."""
    if _scalar_name(node) == "Exp" and not getattr(node.tag, "dm_seen", False):
        new = pt.exp(node.inputs[0])
        new.owner.tag.dm_seen = True
        return [pt.neg(pt.neg(new))]
    return None


@node_rewriter([Elemwise], name="dm_test_drop_neg")
def drop_one_neg(fgraph, node):
    """Wrong: -(-y) -> -y."""
    inner = node.inputs[0].owner
    if _scalar_name(node) == "Neg" and inner is not None and _scalar_name(inner) == "Neg":
        return [node.inputs[0]]
    return None


@node_rewriter([Elemwise], name="dm_test_mutate_op")
def mutate_op_silently(fgraph, node):
    """Wrong, and invisible to the graph's features: swaps a node's Op in place."""
    if _scalar_name(node) == "Exp":
        node.op = pt.log(node.inputs[0]).owner.op
    return None


_twice_calls = [0]


@node_rewriter([Twice], name="dm_test_flaky_twice")
def flaky_twice(fgraph, node):
    """Right each time, but not the same graph each time."""
    _twice_calls[0] += 1
    x = node.inputs[0]
    return [x + x] if _twice_calls[0] % 2 else [x * 2.0]


class LogTimesTwo(VectorOp):
    """log(x) * 2 in one node (what a fusion-like rewrite would build)."""

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = np.log(inputs[0]) * 2


@node_rewriter([Elemwise], name="dm_test_absorb_log")
def absorb_log_times_two(fgraph, node):
    """Right: log(x) * 2 -> LogTimesTwo(x); the Log node leaves the graph."""
    if _scalar_name(node) != "Mul":
        return None
    inner = node.inputs[0].owner
    if inner is not None and _scalar_name(inner) == "Log":
        return [LogTimesTwo()(inner.inputs[0])]
    return None


@pytest.fixture
def registered():
    """``registered(stage, rule, alone=False)`` registers ``rule`` (tagged ``rule.name``)
    for the test only; returns a DebugMode running FAST_RUN's rules and it, or (``alone``)
    only the rules registered so far in this test."""
    added = []

    def register(stage, rule, alone=False):
        rewrite_registry.register(stage, rule, "dm_test")
        added.append((stage, rule))
        if alone:
            names = frozenset(r.name for _, r in added)
            return DebugMode(RewriteQuery(include=names, stages=("canonicalize", "specialize")))
        return DebugMode().including(rule.name)

    yield register
    for stage, rule in added:
        rewrite_registry._rules[stage] = [(r, t) for r, t in rewrite_registry._rules[stage] if r is not rule]


# ---------------------------------------------------------------------------------------
# good graphs
# ---------------------------------------------------------------------------------------

RNG = np.random.default_rng(42)
X = RNG.random((4, 3)) + 0.5
V = RNG.random(3) + 0.5


def _graphs():
    x = pt.dmatrix("x")
    v = pt.dvector("v")
    return {
        "elemwise": ([x], [pt.exp(x) * 2 + pt.log1p(x**2) - pt.sqrt(pt.abs(x))]),
        "reductions": ([x], [x.sum(axis=0), x.max(axis=1), x.mean(), pt.argmax(x, axis=1)]),
        "dimshuffle_views": ([x], [x.T, x.dimshuffle(1, "x", 0), x.T + 1]),
        "reshape": ([x], [x.reshape((-1,)), x.flatten(), x.shape]),
        "products": ([x, v], [pt.dot(x, v), x @ x.T, pt.outer(v, v)]),
        "join": ([x], [pt.concatenate([x, x], axis=0), pt.stack([x, x])]),
        "softmax": ([x], [pt.special.softmax(x, axis=-1), pt.special.log_softmax(x, axis=-1)]),
        "alloc": ([v], [pt.zeros_like(v), pt.ones((3, 2)), pt.alloc(v, 2, 3), pt.arange(5)]),
        "sort": ([v], [pt.sort(v), pt.argsort(v), pt.cumsum(v)]),
        "repeated_input": ([v], [v * v + v, (v - v).sum()]),
        "declared_view_op": ([v], [DeclaredView()(v) * 2, DeclaredView()(v)]),
        "op_with_params": ([v], [Scaled(3.0)(v)]),
        "debug_perform_agrees": ([v], [DebugPerformAgrees()(v)]),
        "thunk_only_op": ([v], [ThunkOnly()(v) + 1]),
        "reuses_output_buffer": ([v], [ReusesOutputCorrectly()(v)]),
    }


def _args(inputs):
    return [X if var.name == "x" else V for var in inputs]


@pytest.mark.parametrize("name", list(_graphs()))
@pytest.mark.parametrize("mode", ["DebugMode", "instance", "prealloc_all"])
def test_good_graphs_give_fast_run_results(name, mode):
    inputs, outputs = _graphs()[name]
    if mode == "instance":
        mode = DebugMode()
    elif mode == "prealloc_all":
        mode = DebugMode(check_preallocated_output="ALL")
    expected = arignote.function(inputs, outputs, mode="FAST_RUN")(*_args(inputs))
    f = arignote.function(inputs, outputs, mode=mode)
    for _ in range(2):  # a second call reuses the storage of the first
        got = f(*_args(inputs))
        assert len(got) == len(expected)
        for a, b in zip(expected, got):
            np.testing.assert_allclose(b, a)
            assert np.asarray(b).dtype == np.asarray(a).dtype


def test_string_mode_is_a_debugmode():
    x = pt.dvector("x")
    f = arignote.function([x], pt.exp(x), mode="DebugMode")
    assert isinstance(f.maker.mode, DebugMode)
    assert isinstance(get_mode("DEBUG_MODE"), DebugMode)
    np.testing.assert_allclose(f(V), np.exp(V))


def test_lazy_ifelse_passes():
    c = pt.lscalar("c")
    v = pt.dvector("v")
    f = arignote.function([c, v], ifelse(c, v * 2, v - 1), mode="DebugMode")
    np.testing.assert_allclose(f(1, V), V * 2)
    np.testing.assert_allclose(f(0, V), V - 1)


def test_shared_variable_updates():
    s = arignote.shared(np.zeros(3), name="s")
    v = pt.dvector("v")
    f = arignote.function([v], s.sum(), updates=[(s, s + v)], mode=DebugMode())
    assert f(np.ones(3)) == 0.0
    assert f(np.ones(3)) == 3.0
    np.testing.assert_allclose(s.get_value(), [2.0, 2.0, 2.0])


def test_declared_inplace_op_passes():
    v = pt.dvector("v")
    f = arignote.function([v], DeclaredInplace()(pt.exp(v)), mode=DebugMode(), accept_inplace=True)
    np.testing.assert_allclose(f(V), np.exp(V) * 2)


def test_inplace_elemwise_passes():
    v = pt.dvector("v")
    mul = (v * 2).owner.op.scalar_op
    out = Elemwise(mul, {0: 0})(pt.exp(v), pt.as_tensor_variable(np.array([3.0])))
    f = arignote.function([v], out, mode=DebugMode(), accept_inplace=True)
    np.testing.assert_allclose(f(V), np.exp(V) * 3)


def test_non_array_types():
    """Values that are Python floats (the seeds' DoubleType) are checked too."""
    x, y = double("x"), double("y")
    f = arignote.function([x, y], add(mul(x, y), neg(x)), mode=DebugMode())
    assert f(2.0, 3.0) == 4.0


@pytest.mark.parametrize("alone", [False, True])
def test_good_rewrite_passes(registered, alone):
    mode = registered("canonicalize", exp_to_equivalent, alone=alone)
    if not alone:  # FAST_RUN's product canonicalization would drop the `* 1.0` it adds
        mode = mode.excluding("local_mul_canonizer")
    v = pt.dvector("v")
    f = arignote.function([v], pt.exp(v) + 1, mode=mode)
    # it fired (the Mul it adds may be inside the node fusion made of the expression)
    assert any("Mul" in _scalar_names(n) for n in f.maker.fgraph.apply_nodes)
    np.testing.assert_allclose(f(V), np.exp(V) + 1)


# ---------------------------------------------------------------------------------------
# the mode object
# ---------------------------------------------------------------------------------------


def test_mode_interface():
    mode = DebugMode(check_isfinite=False, stability_patience=2)
    assert isinstance(mode, Mode)
    assert isinstance(mode.linker, DebugLinker)
    assert isinstance(mode.query, DebugRewriteQuery)
    for derived in (mode.including("fusion"), mode.excluding("fusion"), mode.requiring("fast_run")):
        assert type(derived) is DebugMode
        assert derived.check_isfinite is False
        assert derived.stability_patience == 2
        assert derived.linker.check_isfinite is False
    assert "fusion" in mode.excluding("fusion").query.exclude
    assert "fusion" in mode.including("fusion").query.include
    assert mode.clone(check_py_code=False).linker.check_py_code is False
    assert replace(mode, name="mine").name == "mine"
    assert DebugMode() == DebugMode()
    assert hash(DebugMode()) == hash(DebugMode())
    assert DebugMode() != FAST_RUN
    assert pickle.loads(pickle.dumps(mode)) == mode
    assert "DebugMode" in str(mode)


def test_mode_arguments():
    assert DebugMode("fast_compile").query.stages == get_mode("FAST_COMPILE").query.stages
    assert DebugMode(optimizer=None).query.stages == ()
    custom = RewriteQuery(include=frozenset({"fast_run"}), exclude=frozenset({"fusion"}))
    assert "fusion" in DebugMode(optimizer=custom).query.exclude
    assert DebugMode(check_preallocated_output="previous:wrong_size").check_preallocated_output == (
        "previous",
        "wrong_size",
    )
    with pytest.raises(ValueError, match="own linker"):
        DebugMode(linker="vm")
    with pytest.raises(ValueError, match="unknown kind"):
        DebugMode(check_preallocated_output=["sideways"])
    with pytest.raises(ValueError, match="stability_patience"):
        DebugMode(stability_patience=-1)


def test_error_classes():
    for cls in (
        BadThunkOutput,
        BadOptimization,
        BadDestroyMap,
        BadViewMap,
        InvalidValueError,
        StochasticOrder,
    ):
        assert issubclass(cls, DebugModeError)
    assert str(BadOptimization("a message")) == "a message"
    assert str(InvalidValueError("another")) == "another"


# ---------------------------------------------------------------------------------------
# bad Ops
# ---------------------------------------------------------------------------------------


def _compile_bad(op, mode="DebugMode", **kwargs):
    v = pt.dvector("v")
    out = op(v)  # bad-op-line
    return arignote.function([v], out + 1, mode=mode, **kwargs)


def _assert_names_node(err, op_name):
    text = str(err)
    assert f"{op_name}(v)" in text  # str(node)
    assert f'File "{THIS_FILE}", line {_line_of("# bad-op-line")}' in text
    assert "out = op(v)" in text


def test_nondeterministic_perform():
    f = _compile_bad(Nondeterministic())
    with pytest.raises(BadThunkOutput) as info:
        f(V)
    err = info.value
    _assert_names_node(err, "Nondeterministic")
    assert err.r is err.r.owner.outputs[0]
    assert err.offending_op() is Nondeterministic
    text = str(err)
    assert "output 0 (Nondeterministic.0)" in text
    assert "perform (the function's thunk" in text
    assert "perform (run 1 on copies of the inputs)" in text
    assert "max abs diff 1" in text
    assert "ndarray shape (3,), dtype float64" in text


def test_debug_perform_disagrees_with_perform():
    f = _compile_bad(DebugPerformDisagrees())
    with pytest.raises(BadThunkOutput) as info:
        f(V)
    _assert_names_node(info.value, "DebugPerformDisagrees")
    assert "debug_perform (run 1" in str(info.value)
    np.testing.assert_allclose(info.value.val1, V * 2)
    np.testing.assert_allclose(info.value.val2, V * 3)


def test_make_thunk_disagrees_with_perform():
    f = _compile_bad(ThunkDisagrees())
    with pytest.raises(BadThunkOutput) as info:
        f(V)
    _assert_names_node(info.value, "ThunkDisagrees")
    assert "ThunkDisagrees.make_thunk (the function's thunk)" in str(info.value)
    # tolerance comes from values_eq_approx: without the py check it runs
    f = _compile_bad(ThunkDisagrees(), mode=DebugMode(check_py_code=False))
    np.testing.assert_allclose(f(V), V * 2 + 1e-3 + 1)


class BackendDisagrees(VectorOp):
    """Its perform doubles; the Python backend's thunk registered for it (below) adds
    1e-3 more, as a wrong fast thunk would."""

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0] * 2


@register_python_thunk(BackendDisagrees)
def _backend_disagrees_thunk(op, node, storage_map, compute_map, no_recycling, impl=None):
    x_cell, out_cell = storage_map[node.inputs[0]], storage_map[node.outputs[0]]
    done = compute_map[node.outputs[0]]

    def thunk():
        out_cell[0] = x_cell[0] * 2 + 1e-3
        done[0] = True

    return thunk


def test_the_python_backend_s_thunk_is_checked_against_perform():
    """DebugMode runs the thunk the function runs (the Python backend's, by Op type) and
    compares it with perform."""
    f = _compile_bad(BackendDisagrees())
    with pytest.raises(BadThunkOutput) as info:
        f(V)
    _assert_names_node(info.value, "BackendDisagrees")
    assert "the Python backend's BackendDisagrees thunk (the function's thunk)" in str(info.value)
    f = _compile_bad(BackendDisagrees(), mode=DebugMode(check_py_code=False))
    np.testing.assert_allclose(f(V), V * 2 + 1e-3 + 1)
    # the registered Elemwise thunks agree with perform
    x = pt.dvector("x")
    g = arignote.function([x], pt.exp(x).sum() + x.dimshuffle("x", 0), mode="DebugMode")
    np.testing.assert_allclose(g(V), np.exp(V).sum() + V[None, :])


def test_wrong_dtype():
    f = _compile_bad(WrongDtype())
    with pytest.raises(InvalidValueError) as info:
        f(V)
    err = info.value
    _assert_names_node(err, "WrongDtype")
    assert err.v.dtype == np.float32
    assert "output 0 (WrongDtype.0)" in str(err)
    assert "dtype float32" in str(err)
    assert "float64" in str(err)


def test_wrong_ndim():
    f = _compile_bad(WrongNdim())
    with pytest.raises(InvalidValueError, match="Wrong number of dimensions") as info:
        f(V)
    _assert_names_node(info.value, "WrongNdim")


def test_python_float_instead_of_array():
    with pytest.raises(InvalidValueError, match="got float"):
        _compile_bad(PythonFloat())(V)


def test_undeclared_inplace():
    f = _compile_bad(UndeclaredInplace())
    with pytest.raises(BadDestroyMap) as info:
        f(V.copy())
    err = info.value
    _assert_names_node(err, "UndeclaredInplace")
    assert err.idx == 0
    np.testing.assert_allclose(err.old_val, V)
    np.testing.assert_allclose(err.new_val, V * 2)
    text = str(err)
    assert "modified its input 0 (v)" in text
    assert "destroy_map={}" in text
    assert "max abs diff" in text


def test_undeclared_view():
    f = _compile_bad(UndeclaredView())
    with pytest.raises(BadViewMap) as info:
        f(V)
    err = info.value
    _assert_names_node(err, "UndeclaredView")
    assert err.output_idx == 0
    assert err.in_alias_idx == [0]
    assert "shares memory with input(s) 0 (v)" in str(err)
    assert "view_map={}" in str(err)


def test_returning_the_input_is_an_undeclared_view():
    with pytest.raises(BadViewMap, match="view_map = \\{0: \\[0\\]\\}"):
        _compile_bad(ReturnsInput())(V)


def test_declared_view_passes():
    np.testing.assert_allclose(_compile_bad(DeclaredView())(V), V[::-1] + 1)


def test_outputs_aliasing_each_other():
    v = pt.dvector("v")
    a, b = TwoAliasedOutputs()(v)
    f = arignote.function([v], [a + 1, b + 2], mode="DebugMode")
    with pytest.raises(BadViewMap) as info:
        f(V)
    assert info.value.out_alias_idx == [1]
    assert "shares memory with output(s) 1" in str(info.value)


def test_preallocated_output_check():
    # the default run leaves output cells empty: no error
    np.testing.assert_allclose(_compile_bad(AccumulatesIntoOutput())(V), V + 1)
    f = _compile_bad(AccumulatesIntoOutput(), mode=DebugMode(check_preallocated_output=["c_contiguous"]))
    with pytest.raises(BadThunkOutput) as info:
        f(V)
    assert "preallocated 'c_contiguous' output cells" in str(info.value)
    f = _compile_bad(AccumulatesIntoOutput(), mode=DebugMode(check_preallocated_output="previous"))
    f(V)  # no previous output yet
    with pytest.raises(BadThunkOutput, match="preallocated 'previous'"):
        f(V)


def test_non_finite_outputs():
    v = pt.dvector("v")
    out = pt.log(v)
    with pytest.raises(InvalidValueError, match="non-finite") as info, np.errstate(divide="ignore"):
        arignote.function([v], out, mode="DebugMode")(np.zeros(2))
    assert "Log(v)" in str(info.value)
    f = arignote.function([v], out, mode=DebugMode(check_isfinite=False))
    with np.errstate(divide="ignore"):
        assert np.isneginf(f(np.zeros(2))).all()


def test_errors_pickle():
    with pytest.raises(BadDestroyMap) as info:
        _compile_bad(UndeclaredInplace())(V.copy())
    clone = pickle.loads(pickle.dumps(info.value))
    assert type(clone) is BadDestroyMap
    assert str(clone) == str(info.value)


# ---------------------------------------------------------------------------------------
# bad rewrites
# ---------------------------------------------------------------------------------------


def test_bad_rewrite(registered):
    mode = registered("canonicalize", exp_to_log, alone=True)
    v = pt.dvector("v")
    out = pt.exp(v) * 2  # rewritten-line
    f = arignote.function([v], out, mode=mode)
    with pytest.raises(BadOptimization) as info:
        f(V)
    err = info.value
    assert err.reason == "dm_test_exp_to_log"
    assert err.output_idx is None
    np.testing.assert_allclose(err.old_r_val, np.exp(V))
    np.testing.assert_allclose(err.new_r_val, np.log(V))
    text = str(err)
    assert "the rewrite 'dm_test_exp_to_log' replaced Exp.0 (computed by Exp(v)) with Log.0" in text
    assert "max abs diff" in text
    assert f"line {_line_of('# rewritten-line')}" in text
    # the same graph without the bad rule is fine
    np.testing.assert_allclose(arignote.function([v], out, mode="DebugMode")(V), np.exp(V) * 2)


def test_bad_rewrite_among_fast_run_rules(registered):
    mode = registered("canonicalize", exp_to_log)
    v = pt.dvector("v")
    f = arignote.function([v], pt.exp(v) * 2 + 1, mode=mode)
    with pytest.raises(BadOptimization) as info:
        f(V)
    assert info.value.reason == "dm_test_exp_to_log"


def test_bad_rewrite_whose_result_is_rewritten_again(registered):
    """The wrong Log node is absorbed by a later (right) rewrite: the blame still goes to
    the rewrite that made it, whose value is recomputed although it left the graph."""
    registered("canonicalize", exp_to_log)
    mode = registered("specialize", absorb_log_times_two, alone=True)
    v = pt.dvector("v")
    f = arignote.function([v], pt.exp(v) * 2, mode=mode)
    assert any(isinstance(n.op, LogTimesTwo) for n in f.maker.fgraph.apply_nodes)
    assert not any(_scalar_name(n) == "Log" for n in f.maker.fgraph.apply_nodes)
    with pytest.raises(BadOptimization) as info:
        f(V)
    assert info.value.reason == "dm_test_exp_to_log"
    np.testing.assert_allclose(info.value.new_r_val, np.log(V))


def test_chain_of_rewrites(registered):
    registered("canonicalize", double_neg)
    mode = registered("specialize", drop_one_neg, alone=True)
    v = pt.dvector("v")
    out = pt.exp(v) * 3  # chain-line
    f = arignote.function([v], out, mode=mode)
    with pytest.raises(BadOptimization) as info:
        f(V)
    err = info.value
    assert err.reason == ("dm_test_double_neg", "dm_test_drop_neg")
    assert "the rewrites 'dm_test_double_neg' then 'dm_test_drop_neg'" in str(err)
    assert "stands for Exp.0 (computed by Exp(v)) of the graph as written" in str(err)
    assert f"line {_line_of('# chain-line')}" in str(err)


def test_rewrite_invisible_to_features_caught_on_outputs(registered):
    mode = registered("canonicalize", mutate_op_silently, alone=True)
    v = pt.dvector("v")
    f = arignote.function([v], pt.exp(v) + 1, mode=mode)
    with pytest.raises(BadOptimization) as info:
        f(V)
    assert info.value.output_idx == 0
    assert "output 0 of the rewritten graph" in str(info.value)


def test_unstable_rewrites(registered):
    mode = registered("canonicalize", flaky_twice)
    v = pt.dvector("v")
    with pytest.raises(StochasticOrder, match="different graph"):
        arignote.function([v], Twice()(v), mode=mode)
    f = arignote.function([v], Twice()(v), mode=replace(mode, stability_patience=0))
    np.testing.assert_allclose(f(V), V * 2)


def test_graph_signature_is_structural():
    v = pt.dvector("v")
    a = FunctionGraph([v], [pt.exp(v) * 2])
    b = FunctionGraph([v], [pt.exp(v) * 2])
    c = FunctionGraph([v], [pt.exp(v) * 3])
    assert graph_signature(a) == graph_signature(b)
    assert graph_signature(a) != graph_signature(c)
