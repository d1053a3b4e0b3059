"""The reference linker (``VMLinker``/``VM``): one storage cell and one compute flag per
Variable, a thunk per node from ``Op.make_thunk(node, storage_map, compute_map,
no_recycling)``, intermediates dropped after their last use, output cells cleared
between calls unless borrowed, and errors that point at the node."""

from __future__ import annotations

import numpy as np
import pytest

import arignote.tensor as pt
from arignote import Mode, Out, function
from arignote.graph.basic import Apply, Constant
from arignote.graph.fg import FunctionGraph
from arignote.graph.op import Op
from arignote.link.vm import VM, VMLinker
from tests.toy import add, divmod_op, double, mul, neg


def _link(inputs, outputs, values, linker=None, no_recycling=(), **kwargs):
    fg = FunctionGraph(inputs, outputs, clone=False)
    cells = [[v] for v in values]
    vm, out_cells = (linker or VMLinker()).make_vm(fg, cells, list(no_recycling), **kwargs)
    return fg, cells, vm, out_cells


class Recorder(Op):
    """Identity on doubles, by a thunk of its own that records what it was given."""

    __props__ = ()
    calls: list

    def make_node(self, x):
        return Apply(self, [x], [double()])

    def make_thunk(self, node, storage_map, compute_map, no_recycling, impl=None):
        Recorder.calls.append((node, storage_map, compute_map, list(no_recycling), impl))
        i, o, flag = storage_map[node.inputs[0]], storage_map[node.outputs[0]], compute_map[node.outputs[0]]

        def thunk():
            o[0] = i[0]
            flag[0] = True

        return thunk


@pytest.fixture(autouse=True)
def _fresh_recorder():
    Recorder.calls = []


def test_storage_and_compute_maps():
    x, y = double("x"), double("y")
    s = add(x, y)
    out = mul(s, 2.0)
    fg, cells, vm, out_cells = _link([x, y], [out], [3.0, 4.0])
    assert isinstance(vm, VM)
    # the input cells are the caller's, one fresh cell per other Variable
    assert vm.storage_map[x] is cells[0] and vm.storage_map[y] is cells[1]
    assert all(len(cell) == 1 for cell in vm.storage_map.values())
    assert len({id(c) for c in vm.storage_map.values()}) == len(vm.storage_map)
    const = out.owner.inputs[1]
    assert isinstance(const, Constant)
    assert vm.storage_map[const] == [2.0] and vm.compute_map[const] == [True]
    assert vm.compute_map[s] == [False] and vm.compute_map[out] == [False]
    assert out_cells == [vm.storage_map[out]]
    vm()
    assert out_cells[0][0] == 14.0
    assert vm.compute_map[s] == [True] and vm.compute_map[out] == [True]


def test_one_thunk_per_node_from_make_thunk():
    x = double("x")
    op = Recorder()
    out = neg(op(op(x)))
    fg, cells, vm, out_cells = _link([x], [out], [2.5])
    assert len(Recorder.calls) == 2 and len(vm.thunks) == 3
    node, storage_map, compute_map, no_recycling, impl = Recorder.calls[0]
    assert node in fg.apply_nodes and storage_map is vm.storage_map and compute_map is vm.compute_map
    assert no_recycling == [] and impl is None
    vm()
    assert out_cells[0][0] == -2.5
    cells[0][0] = 1.0  # new input value, same cell
    vm()
    assert out_cells[0][0] == -1.0


def test_thunks_run_in_topological_order():
    x = double("x")
    a = neg(x)
    b = add(a, x)
    c = mul(b, a)
    fg, cells, vm, out_cells = _link([x], [c, b], [3.0])
    order = {node: k for k, node in enumerate(vm.nodes)}
    assert order[a.owner] < order[b.owner] < order[c.owner]
    vm()
    assert [cell[0] for cell in out_cells] == [0.0, 0.0]


def test_intermediates_are_dropped_after_their_last_use():
    x = double("x")
    a = neg(x)
    b = add(a, 1.0)
    c = mul(b, a)  # a's last user
    fg, cells, vm, out_cells = _link([x], [c], [3.0])
    vm()
    assert out_cells[0][0] == 6.0
    assert vm.storage_map[a] == [None] and vm.storage_map[b] == [None]
    assert vm.storage_map[x] == [3.0]  # inputs are kept
    fg, cells, vm, out_cells = _link([x], [c], [3.0], linker=VMLinker(allow_gc=False))
    vm()
    assert vm.storage_map[a] == [-3.0] and vm.storage_map[b] == [-2.0]


def test_an_unused_output_of_a_multi_output_node_is_dropped():
    x, y = double("x"), double("y")
    q, r = divmod_op(x, y)
    fg, cells, vm, out_cells = _link([x, y], [neg(q)], [17.0, 5.0])
    vm()
    assert out_cells[0][0] == -3.0
    assert vm.storage_map[r] == [None] and vm.storage_map[q] == [None]


def test_output_that_is_an_input_or_a_constant():
    x = double("x")
    c = double.make_constant(4.0)
    fg, cells, vm, out_cells = _link([x], [x, c, neg(x)], [1.5])
    vm()
    assert [cell[0] for cell in out_cells] == [1.5, 4.0, -1.5]
    assert out_cells[0] is cells[0]


class Reuser(Op):
    """Doubles a vector into its output cell, reusing the buffer left there (the seeds'
    "pre-allocated output_storage"), and reports whether it found one."""

    __props__ = ()
    found: list

    def make_node(self, x):
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        cell = output_storage[0]
        Reuser.found.append(cell[0] is not None)
        if cell[0] is None or cell[0].shape != inputs[0].shape:
            cell[0] = np.empty_like(inputs[0])
        np.multiply(inputs[0], 2, out=cell[0])


@pytest.mark.parametrize("borrow", [False, True])
def test_output_cells_are_cleared_between_calls_unless_borrowed(borrow):
    Reuser.found = []
    v = pt.dvector("v")
    f = function([v], Out(Reuser()(v), borrow=borrow), mode=Mode(optimizer=None))
    first = f(np.ones(2))
    second = f(np.full(2, 3.0))
    np.testing.assert_array_equal(second, [6, 6])
    assert Reuser.found == [False, borrow]
    if borrow:  # the buffer was reused: the first result was overwritten
        assert first is second
    else:
        np.testing.assert_array_equal(first, [2, 2])


def test_no_recycling_in_make_vm():
    Reuser.found = []
    v = pt.dvector("v")
    out = Reuser()(v)
    fg, cells, vm, out_cells = _link([v], [out], [np.ones(2)], no_recycling=[out])
    vm()
    vm()
    assert Reuser.found == [False, False]
    assert vm.pre_call_clear == [vm.storage_map[out]]


def test_intermediate_buffers_are_reused_without_gc():
    Reuser.found = []
    v = pt.dvector("v")
    f = function([v], Reuser()(v) + 1, mode=Mode(linker="vm_nogc", optimizer=None))
    f(np.ones(2))
    f(np.ones(2))
    assert Reuser.found == [False, True]
    Reuser.found = []
    g = function([v], Reuser()(v) + 1, mode=Mode(linker="vm", optimizer=None))
    g(np.ones(2))
    g(np.ones(2))
    assert Reuser.found == [False, False]


class SetsNothing(Op):
    __props__ = ()

    def make_node(self, x):
        return Apply(self, [x], [double()])

    def perform(self, node, inputs, output_storage):
        pass


def test_a_perform_that_sets_no_output_is_an_error_naming_it():
    x = double("x")
    fg, cells, vm, out_cells = _link([x], [neg(SetsNothing()(x))], [1.0])
    with pytest.raises(ValueError, match=r"SetsNothing.perform did not set output 0 of SetsNothing\(x\)"):
        vm()


def test_make_thunk_must_return_a_callable():
    class NoThunk(Op):
        __props__ = ()

        def make_node(self, x):
            return Apply(self, [x], [double()])

        def make_thunk(self, node, storage_map, compute_map, no_recycling, impl=None):
            return 42

    x = double("x")
    with pytest.raises(TypeError, match="make_thunk returned 42, not a callable"):
        _link([x], [NoThunk()(x)], [1.0])


class Fails(Op):
    __props__ = ()

    def make_node(self, x):
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        raise ArithmeticError("cannot do that")


def test_an_error_in_a_node_gains_a_note():
    m = pt.dmatrix("m")
    out = Fails()(pt.exp(m)) * 2  # FAILS-HERE
    f = function([m], out, mode=Mode(optimizer=None))
    with pytest.raises(ArithmeticError, match="cannot do that") as info:
        f(np.ones((2, 3), dtype="float64"))
    (note,) = info.value.__notes__
    lines = note.splitlines()
    assert lines[0] == "Apply node that caused the error: Fails(Exp.0)"
    assert "  input 0 (Exp.0): Type Matrix(float64, shape=(?, ?)), shape (2, 3), dtype float64" in lines
    start = lines.index("Debug print of the node (3 levels):")
    assert lines[start + 1 : start + 4] == [
        "  Fails [id A] <Matrix(float64, shape=(?, ?))>",
        "   └─ Exp [id B] <Matrix(float64, shape=(?, ?))>",
        "      └─ m [id C] <Matrix(float64, shape=(?, ?))>",
    ]
    assert any(line.startswith("Node created at: File ") and __file__ in line for line in lines)
    assert "FAILS-HERE" in note


def test_the_note_survives_a_failing_printer(monkeypatch):
    import arignote.printing

    def broken(*args, **kwargs):
        raise RuntimeError("printer bug")

    monkeypatch.setattr(arignote.printing, "debugprint", broken)
    x = double("x")
    fg, cells, vm, out_cells = _link([x], [Fails()(x)], [1.0])
    with pytest.raises(ArithmeticError) as info:
        vm()
    assert "(debugprint failed: RuntimeError: printer bug)" in info.value.__notes__[0]


class _Profile:
    def __init__(self):
        self.nodes = []

    def record_node(self, node, seconds, storage_map):
        assert seconds >= 0 and node.outputs[0] in storage_map
        self.nodes.append(node)


def test_profile_records_every_node():
    x = double("x")
    out = neg(add(x, 1.0))
    prof = _Profile()
    fg, cells, vm, out_cells = _link([x], [out], [1.0], profile=prof)
    vm()
    vm()
    assert prof.nodes == vm.nodes * 2
    assert out_cells[0][0] == -2.0
    prof_fail = _Profile()
    fg, cells, vm, out_cells = _link([x], [neg(Fails()(x))], [1.0], profile=prof_fail)
    with pytest.raises(ArithmeticError) as info:
        vm()
    assert "Fails(x)" in info.value.__notes__[0]


def test_thunk_maker_overrides_make_thunk():
    x = double("x")
    out = neg(x)
    fg = FunctionGraph([x], [out], clone=False)
    made = []

    def thunk_maker(node):
        made.append(node)

        def thunk():
            vm.storage_map[out][0] = 99.0

        return thunk

    vm, out_cells = VMLinker().make_vm(fg, [[2.0]], [], thunk_maker=thunk_maker)
    vm()
    assert made == [out.owner] and out_cells[0][0] == 99.0


def test_linker_equality_and_repr():
    assert VMLinker() == VMLinker(allow_gc=True) != VMLinker(allow_gc=False)
    assert hash(VMLinker()) == hash(VMLinker(allow_gc=True))
    assert repr(VMLinker(allow_gc=False)) == "VMLinker(allow_gc=False)"


def test_compiled_function_runs_on_the_vm():
    x = pt.dvector("x")
    f = function([x], pt.exp(x).sum() + x.sum(), mode=Mode(linker="vm"))
    assert isinstance(f.vm, VM)
    assert f.vm.storage_map[f.maker.fgraph.inputs[0]] is f.input_storage[0].storage
    assert f.output_storage[0] is f.vm.storage_map[f.maker.fgraph.outputs[0]]
    assert float(f(np.zeros(3))) == 3.0
