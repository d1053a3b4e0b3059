"""Tests of arignote.printing: debugprint/dprint (PyTensor 3's text format), pprint, pydotprint.

Expected texts were checked against PyTensor 3.0.7's output on the same graphs.
"""

from __future__ import annotations

import io
import shutil
import sys
import warnings
from types import SimpleNamespace

import numpy as np
import pytest

import arignote
import arignote.scalar as ps
import arignote.tensor as pt
from arignote.graph.basic import Apply, Variable
from arignote.graph.fg import FunctionGraph
from arignote.graph.op import Op
from arignote.printing import (
    FunctionPrinter,
    PPrinter,
    Print,
    Printer,
    PrinterState,
    char_from_number,
    debugprint,
    default_printer,
    dprint,
    op_debug_information,
    pp,
    pprint,
    pydotprint,
    register_node_annotator,
    unregister_node_annotator,
)
from arignote.scalar.composite import Composite
from arignote.tensor.conversion import is_literal_constant
from arignote.tensor.elemwise import Elemwise
from arignote.tensor.type import TensorType
from tests.toy import double


def lines(text: str) -> list[str]:
    return text.rstrip("\n").split("\n")


class FakeFunction:
    """What debugprint/pydotprint need of a compiled function: ``maker.fgraph`` (and
    ``vm.storage_map`` for print_storage)."""

    def __init__(self, fgraph: FunctionGraph, storage_map: dict | None = None):
        self.maker = SimpleNamespace(fgraph=fgraph)
        self.vm = SimpleNamespace(storage_map=storage_map if storage_map is not None else {})


@pytest.fixture
def graph():
    x = pt.dvector("x")
    y = pt.dmatrix("y")
    z = pt.exp(x) + y * 2.0
    w = z.sum(axis=0) + z.sum()
    return SimpleNamespace(x=x, y=y, z=z, w=w)


W_TREE = [
    "Add [id A]",
    " ├─ Sum{axis=0} [id B]",
    " │  └─ Add [id C]",
    " │     ├─ ExpandDims{axis=0} [id D]",
    " │     │  └─ Exp [id E]",
    " │     │     └─ x [id F]",
    " │     └─ Mul [id G]",
    " │        ├─ y [id H]",
    " │        └─ ExpandDims{axes=(0, 1)} [id I]",
    " │           └─ 2.0 [id J]",
    " └─ ExpandDims{axis=0} [id K]",
    "    └─ Sum{axes=None} [id L]",
    "       └─ Add [id C]",
    "          └─ ···",
]


# =========================================================================================
# debugprint: format
# =========================================================================================


class TestDebugprintFormat:
    def test_seed_example_specify_shape(self):
        v1 = TensorType("float64", (2, None))()
        v2 = TensorType("float64", (2, 1))()
        v3 = v2.type.filter_variable(v1)
        assert lines(arignote.dprint(v3, print_type=True, file="str")) == [
            "SpecifyShape [id A] <Matrix(float64, shape=(2, 1))>",
            " ├─ <Matrix(float64, shape=(2, ?))> [id B] <Matrix(float64, shape=(2, ?))>",
            " ├─ 2 [id C] <Scalar(int8, shape=())>",
            " └─ 1 [id D] <Scalar(int8, shape=())>",
        ]

    def test_tree_with_repeated_subgraph(self, graph):
        assert lines(debugprint(graph.w, file="str")) == W_TREE

    def test_dprint_is_debugprint_and_exported(self):
        assert dprint is debugprint
        assert arignote.dprint is debugprint and arignote.debugprint is debugprint
        assert arignote.pprint is pprint and arignote.pydotprint is pydotprint
        for name in ("debugprint", "dprint", "pprint", "pydotprint"):
            assert name in arignote.__all__

    def test_print_type_and_shape(self, graph):
        assert lines(debugprint(graph.w, print_type=True, print_shape=True, file="str")) == [
            "Add [id A] <Vector(float64, shape=(?,))> shape=(?,)",
            " ├─ Sum{axis=0} [id B] <Vector(float64, shape=(?,))> shape=(?,)",
            " │  └─ Add [id C] <Matrix(float64, shape=(?, ?))> shape=(?, ?)",
            " │     ├─ ExpandDims{axis=0} [id D] <Matrix(float64, shape=(1, ?))> shape=(1, ?)",
            " │     │  └─ Exp [id E] <Vector(float64, shape=(?,))> shape=(?,)",
            " │     │     └─ x [id F] <Vector(float64, shape=(?,))> shape=(?,)",
            " │     └─ Mul [id G] <Matrix(float64, shape=(?, ?))> shape=(?, ?)",
            " │        ├─ y [id H] <Matrix(float64, shape=(?, ?))> shape=(?, ?)",
            " │        └─ ExpandDims{axes=(0, 1)} [id I] <Matrix(float32, shape=(1, 1))> shape=(1, 1)",
            " │           └─ 2.0 [id J] <Scalar(float32, shape=())> shape=()",
            " └─ ExpandDims{axis=0} [id K] <Vector(float64, shape=(1,))> shape=(1,)",
            "    └─ Sum{axes=None} [id L] <Scalar(float64, shape=())> shape=()",
            "       └─ Add [id C] <Matrix(float64, shape=(?, ?))> shape=(?, ?)",
            "          └─ ···",
        ]

    def test_depth(self, graph):
        assert lines(debugprint(graph.w, depth=2, file="str")) == [
            "Add [id A]",
            " ├─ Sum{axis=0} [id B]",
            " └─ ExpandDims{axis=0} [id C]",
        ]
        assert lines(debugprint(graph.w, depth=1, file="str")) == ["Add [id A]"]
        assert debugprint(graph.w, depth=0, file="str") == ""
        full = debugprint(graph.w, depth=-1, file="str")
        assert full == debugprint(graph.w, depth=100, file="str")

    def test_depth_must_be_an_int(self, graph):
        with pytest.raises(TypeError, match="depth"):
            debugprint(graph.w, depth=1.5, file="str")

    @pytest.mark.parametrize(
        "id_type, first, last",
        [
            ("int", "Add [id 0]", "          └─ ···"),
            ("", "Add", "          └─ ···"),
        ],
    )
    def test_id_types(self, graph, id_type, first, last):
        out = lines(debugprint(graph.w, id_type=id_type, file="str"))
        assert out[0] == first and out[-1] == last
        if id_type == "int":
            assert out[5] == " │     │     └─ x [id 5]"
            assert out[-2] == "       └─ Add [id 2]"
        else:
            assert out[5] == " │     │     └─ x"

    def test_id_type_id_and_auto(self, graph):
        out = lines(debugprint(graph.w, id_type="id", file="str"))
        assert out[0] == f"Add [id {id(graph.w)}]"
        assert out[5] == f" │     │     └─ x [id {id(graph.x)}]"
        out = lines(debugprint(graph.w, id_type="auto", file="str"))
        assert out[0] == f"Add [id {graph.w.auto_name}]"
        with pytest.raises(ValueError, match="id_type"):
            debugprint(graph.w, id_type="letters", file="str")

    def test_char_ids_past_z(self):
        assert char_from_number(0) == "A" and char_from_number(25) == "Z"
        assert char_from_number(26) == "BA"  # PyTensor's ids: base 26, A is the zero digit
        x = pt.dscalar("x")
        terms = [x + float(i) for i in range(30)]
        out = lines(debugprint(terms, file="str"))
        # ids: Add A, x B, constant C, then two per term: the 30th Add is number 59 = 2 * 26 + 7
        assert out[-3:] == ["Add [id CH]", " ├─ x [id B]", " └─ 29.0 [id CI]"]

    def test_list_of_variables_shares_ids(self, graph):
        out = lines(debugprint([graph.w, graph.z], file="str"))
        assert out[: len(W_TREE)] == W_TREE
        assert out[len(W_TREE) :] == ["Add [id C]", " └─ ···"]

    def test_apply_prints_its_outputs(self, graph):
        assert lines(debugprint(graph.w.owner, file="str")) == W_TREE
        parts = pt.split(graph.x, [1, 2], 2)
        assert lines(debugprint(parts[0].owner, file="str")) == [
            "Split{2}.0 [id A]",
            " ├─ x [id B]",
            " ├─ 0 [id C]",
            " └─ [1 2] [id D]",
            "Split{2}.1 [id A]",
            " └─ ···",
        ]

    def test_names_and_stop_on_name(self, graph):
        graph.z.name = "zz"
        out = graph.w
        full = lines(debugprint(pt.log(graph.z) + 1, file="str"))
        assert full[2] == " │  └─ Add [id C] 'zz'"
        assert full[3] == " │     ├─ ExpandDims{axis=0} [id D]"
        assert lines(debugprint(pt.log(graph.z) + 1, stop_on_name=True, file="str")) == [
            "Add [id A]",
            " ├─ Log [id B]",
            " │  └─ Add [id C] 'zz'",
            " │     └─ ···",
            " └─ ExpandDims{axes=(0, 1)} [id D]",
            "    └─ 1 [id E]",
        ]
        assert lines(debugprint(graph.z, stop_on_name=True, file="str")) == ["Add [id A] 'zz'", " └─ ···"]
        assert lines(debugprint(out, file="str"))[2] == " │  └─ Add [id C] 'zz'"

    def test_done_and_used_ids_across_calls(self, graph):
        done: dict = {}
        debugprint(graph.z, done=done, file="str")
        assert done[graph.z.owner] == "[id A]" and done[graph.x] == "[id D]"
        # the second call does not expand what the first printed, but numbers afresh
        assert lines(debugprint(pt.log(graph.z), done=done, file="str")) == [
            "Log [id A]",
            " └─ Add [id B]",
            "    └─ ···",
        ]
        used: dict = {}
        debugprint(graph.z, used_ids=used, file="str")
        out = lines(debugprint(pt.log(graph.z), used_ids=used, file="str"))
        assert out[0] == "Log [id I]" and out[1] == " └─ Add [id A]"
        assert out[2] == "    ├─ ExpandDims{axis=0} [id B]"

    def test_multi_output_nodes_get_an_index(self):
        x = pt.dvector("x")
        a, b = pt.split(x, [1, 2], 2)
        out = lines(debugprint(a + b, file="str"))
        assert out[0] == "Add [id A]"
        assert out[1] == " ├─ Split{2}.0 [id B]"
        assert out[-2:] == [" └─ Split{2}.1 [id B]", "    └─ ···"]

    def test_scalar_graph(self):
        s, t = ps.float64("s"), ps.float64("t")
        assert lines(debugprint(ps.exp(s) + s * t, print_type=True, file="str")) == [
            "add [id A] <float64>",
            " ├─ exp [id B] <float64>",
            " │  └─ s [id C] <float64>",
            " └─ mul [id D] <float64>",
            "    ├─ s [id C] <float64>",
            "    └─ t [id E] <float64>",
        ]

    def test_toy_types_and_numbers(self):
        a = double("a")
        assert lines(debugprint(a, file="str")) == ["a [id A]"]
        assert lines(debugprint([1, 2.5, np.arange(3)], file="str")) == ["1", "2.5", "[0 1 2]"]

    def test_in_out_like_objects_print_their_variable(self, graph):
        wrapped = SimpleNamespace(variable=graph.w)
        assert lines(debugprint(wrapped, file="str")) == W_TREE

    def test_unprintable_object(self):
        with pytest.raises(TypeError, match="cannot print"):
            debugprint("x", file="str")
        with pytest.raises(TypeError, match="cannot print"):
            debugprint(object(), file="str")


class TestDebugprintFiles:
    def test_stdout_returns_the_input(self, graph, capsys):
        assert debugprint(graph.w) is graph.w
        assert lines(capsys.readouterr().out) == W_TREE

    def test_file_object_is_written_and_returned(self, graph):
        buf = io.StringIO()
        assert debugprint(graph.w, file=buf) is buf
        assert lines(buf.getvalue()) == W_TREE

    def test_bad_file(self, graph):
        with pytest.raises(TypeError, match="file"):
            debugprint(graph.w, file=3)


# =========================================================================================
# debugprint: function graphs and compiled functions
# =========================================================================================


def _with_positions(fgraph: FunctionGraph, template: list[str], nodes: list[Apply]) -> list[str]:
    pos = {n: i for i, n in enumerate(fgraph.toposort())}
    return [t.format(*[pos[n] for n in nodes]) for t in template]


class TestDebugprintFunctions:
    def test_function_graph_prints_toposort_positions(self, graph):
        fg = FunctionGraph([graph.x, graph.y], [graph.w, pt.log(graph.z)], clone=False)
        out = lines(debugprint(fg, file="str"))
        pos = {n: i for i, n in enumerate(fg.toposort())}
        assert out[0] == f"Add [id A] {pos[graph.w.owner]}"
        assert out[2] == f" │  └─ Add [id C] {pos[graph.z.owner]}"
        assert out[5] == " │     │     └─ x [id F]"
        log_node = fg.outputs[1].owner
        assert out[-3:] == [
            f"Log [id M] {pos[log_node]}",
            f" └─ Add [id C] {pos[graph.z.owner]}",
            "    └─ ···",
        ]
        # every Apply line ends with its position, every input line with its id
        for line in out:
            if "Add" in line or "Exp" in line or "Sum" in line or "Mul" in line or "Expand" in line:
                assert line.split()[-1].isdigit()

    def test_compiled_function_stand_in(self, graph):
        fg = FunctionGraph([graph.x, graph.y], [graph.w], clone=False)
        fn = FakeFunction(fg)
        text = debugprint(fn, file="str")
        assert text == debugprint(fg, file="str")
        pos = {n: i for i, n in enumerate(fg.toposort())}
        assert lines(text)[0] == f"Add [id A] {pos[graph.w.owner]}"
        # the positions are the toposort's, so every position appears once
        numbers = [int(line.split()[-1]) for line in lines(text) if line.split()[-1].isdigit()]
        assert sorted(set(numbers)) == list(range(len(fg.apply_nodes)))

    def test_compiled_function_marks_the_nodes_run_through_perform(self):
        x = pt.dmatrix("x")
        out = pt.exp(x).sum() + pt.cumsum(x, axis=0).sum()  # CumOp: no fast implementation
        f = arignote.function([x], out, mode=arignote.Mode(optimizer=None))
        text = debugprint(f, file="str")
        pos = {n: i for i, n in enumerate(f.maker.fgraph.toposort())}
        slow = next(n for n in pos if str(n.op) == "Cumsum{axis=0}")
        slow_line = next(line for line in lines(text) if "Cumsum{axis=0} [id" in line)
        assert slow_line.endswith(f"] {pos[slow]} [perform]")
        for line in lines(text):
            # the Python backend runs Elemwise, DimShuffle and CAReduce with thunks of its own
            if line.lstrip(" │├└─").split(" ")[0] in ("Add", "Exp", "Sum{axes=None}", "ExpandDims{axis=0}"):
                assert "[perform]" not in line
        with_types = debugprint(f, print_type=True, file="str")
        assert f"<Matrix(float64, shape=(?, ?))> {pos[slow]} [perform]" in with_types
        # the graph itself, not compiled, carries no marker (PyTensor's format)
        assert "[perform]" not in debugprint(out, file="str")
        assert debugprint(f.maker.fgraph, file="str") == text.replace(" [perform]", "")
        # a DebugMode function runs the same thunks
        g = arignote.function([x], out, mode="DebugMode")
        assert "Cumsum" in debugprint(g, file="str") and " [perform]" in debugprint(g, file="str")

    def test_print_fgraph_inputs(self, graph):
        fg = FunctionGraph([graph.x, graph.y], [graph.z], clone=False)
        out = lines(debugprint(fg, print_fgraph_inputs=True, file="str"))
        assert out[:2] == ["→ x [id A]", "→ y [id B]"]
        assert out[2].startswith("Add [id C] ")
        assert " │     └─ x [id A]" in out and "    ├─ y [id B]" in out

    def test_print_storage(self):
        x = pt.dvector("x")
        y = pt.exp(x)
        fg = FunctionGraph([x], [y], clone=False)
        storage = {fg.inputs[0]: [np.array([0.0])], fg.outputs[0]: [None]}
        out = lines(debugprint(FakeFunction(fg, storage), print_storage=True, file="str"))
        assert out == ["Exp [id A] 0 [None]", " └─ x [id B] [array([0.])]"]
        assert lines(debugprint(FakeFunction(fg, storage), file="str")) == ["Exp [id A] 0", " └─ x [id B]"]

    def test_destroy_and_view_maps(self):
        x, y = pt.dvector("x"), pt.dvector("y")
        inplace_add = Elemwise(ps.add, inplace_pattern={0: 0})
        out = inplace_add(x, y).dimshuffle("x", 0)
        assert lines(debugprint(out, print_destroy_map=True, file="str")) == [
            "ExpandDims{axis=0} [id A]",
            " └─ Add[0<-0] [id B] d={0: [0]}",
            "    ├─ x [id C]",
            "    └─ y [id D]",
        ]
        assert lines(debugprint(out, print_view_map=True, file="str"))[:2] == [
            "ExpandDims{axis=0} [id A] v={0: [0]}",
            " └─ Add[0<-0] [id B]",
        ]
        assert lines(debugprint(out, print_memory_map=True, file="str"))[:2] == [
            "ExpandDims{axis=0} [id A] v={0: [0]}",
            " └─ Add[0<-0] [id B] d={0: [0]}",
        ]

    def test_print_op_info(self):
        class Tapped(Op):
            __props__ = ()

            def make_node(self, a, b):
                return Apply(self, [a, b], [a.type()])

            def perform(self, node, inputs, output_storage):
                output_storage[0][0] = inputs[0] + inputs[1]

        @op_debug_information.register(Tapped)
        def _(op, node):
            return {node: {node.inputs[0]: "tap -1", node.outputs[0]: "the result"}}

        a, b = double("a"), double("b")
        out = Tapped()(a, b)
        assert lines(debugprint(out, print_op_info=True, file="str")) == [
            "Tapped [id A] (the result)",
            " ├─ a [id B] (tap -1)",
            " └─ b [id C]",
        ]
        assert lines(debugprint(out, file="str"))[0] == "Tapped [id A]"

    def test_node_annotator_hook(self, graph):
        def slow(node, context):
            return "(perform)" if str(node.op) == "Exp" and context is not None else None

        register_node_annotator(slow)
        try:
            fg = FunctionGraph([graph.x], [pt.exp(graph.x)], clone=False)
            assert lines(debugprint(fg, file="str")) == ["Exp [id A] 0 (perform)", " └─ x [id B]"]
            assert lines(debugprint(pt.exp(graph.x), file="str"))[0] == "Exp [id A]"
        finally:
            unregister_node_annotator(slow)
        assert lines(debugprint(fg, file="str"))[0] == "Exp [id A] 0"


# =========================================================================================
# debugprint: inner graphs
# =========================================================================================


@pytest.fixture
def fused():
    i0, i1 = ps.float64("i0"), ps.float64("i1")
    e = ps.add(ps.exp(i0), ps.mul(i1, i0))
    comp = Composite([i0, i1], [ps.log(e), e])
    x, y = pt.dvector("x"), pt.dvector("y")
    return SimpleNamespace(comp=comp, x=x, y=y, outs=Elemwise(comp)(x, y))


class TestInnerGraphs:
    def test_composite_inner_graph_section(self, fused):
        name = str(fused.outs[0].owner.op)
        assert lines(debugprint(fused.outs, file="str")) == [
            f"{name}.0 [id A]",
            " ├─ x [id B]",
            " └─ y [id C]",
            f"{name}.1 [id A]",
            " └─ ···",
            "",
            "Inner graphs:",
            "",
            f"{name} [id A]",
            " ← log [id D]",
            "    └─ add [id E]",
            "       ├─ exp [id F]",
            "       │  └─ i0 [id G]",
            "       └─ mul [id H]",
            "          ├─ i1 [id I]",
            "          └─ i0 [id G]",
            " ← add [id E]",
            "    └─ ···",
        ]

    def test_inner_graph_of_a_compiled_function(self, fused):
        fg = FunctionGraph([fused.x, fused.y], fused.outs, clone=False)
        out = lines(debugprint(FakeFunction(fg), print_type=True, print_fgraph_inputs=True, file="str"))
        name = str(fg.outputs[0].owner.op)
        assert out[:6] == [
            "→ x [id A] <Vector(float64, shape=(?,))>",
            "→ y [id B] <Vector(float64, shape=(?,))>",
            f"{name}.0 [id C] <Vector(float64, shape=(?,))> 0",
            " ├─ x [id A] <Vector(float64, shape=(?,))>",
            " └─ y [id B] <Vector(float64, shape=(?,))>",
            f"{name}.1 [id C] <Vector(float64, shape=(?,))> 0",
        ]
        assert out[7:13] == [
            "",
            "Inner graphs:",
            "",
            f"{name} [id C]",
            " → i0 [id D] <float64>",
            " → i1 [id E] <float64>",
        ]
        assert out[13] == " ← log [id F] <float64>"
        assert out[-2:] == [" ← add [id G] <float64>", "    └─ ···"]

    def test_nested_inner_graphs_come_after_their_parent(self):
        i0, j0 = ps.float64("i0"), ps.float64("j0")
        inner_op = Composite([i0], [ps.exp(i0) * 2.0])
        inner = inner_op(j0)
        outer_op = Composite([j0], [ps.log(inner) + inner])
        x = pt.dvector("x")
        out = Elemwise(outer_op)(x) + pt.exp(x)
        text = lines(debugprint(out, file="str"))
        assert text[:5] == [
            "Add [id A]",
            f" ├─ {outer_op} [id B]",
            " │  └─ x [id C]",
            " └─ Exp [id D]",
            "    └─ x [id C]",
        ]
        assert text[5:8] == ["", "Inner graphs:", ""]
        assert text[8] == f"{outer_op} [id B]"
        assert text[9:14] == [
            " ← add [id E]",
            "    ├─ log [id F]",
            f"    │  └─ {inner_op} [id G]",
            "    │     └─ j0 [id H]",
            f"    └─ {inner_op} [id G]",
        ]
        assert text[15:] == [
            "",
            f"{inner_op} [id G]",
            " ← mul [id I]",
            "    ├─ exp [id J]",
            "    │  └─ i0 [id K]",
            "    └─ 2.0 [id L]",
        ]
        assert "Inner graphs:" not in debugprint(out, print_inner_graphs=False, file="str")

    def test_depth_limits_inner_graphs_too(self, fused):
        out = lines(debugprint(fused.outs[0], depth=1, file="str"))
        name = str(fused.outs[0].owner.op)
        assert out == [
            f"{name}.0 [id A]",
            "",
            "Inner graphs:",
            "",
            f"{name} [id A]",
            " ← log [id B]",
            " ← add [id C]",
        ]


# =========================================================================================
# debugprint: deep graphs
# =========================================================================================


def chain(n: int) -> tuple[Variable, Variable]:
    x = pt.dscalar("x")
    y = x
    for i in range(n):
        y = pt.exp(y) if i % 2 else y + 1.0
    return x, y


class CountingFile:
    def __init__(self):
        self.chars = 0
        self.newlines = 0
        self.tail = ""

    def write(self, text):
        self.chars += len(text)
        self.newlines += text.count("\n")
        self.tail = (self.tail + text)[-200:]

    def flush(self):
        pass


class TestDeepGraphs:
    @pytest.mark.slow
    def test_100k_chain_depth_limited(self):
        x, y = chain(100_000)
        old = sys.getrecursionlimit()
        sys.setrecursionlimit(1000)
        try:
            out = lines(debugprint(y, depth=4, file="str"))
        finally:
            sys.setrecursionlimit(old)
        assert out == [
            "Exp [id A]",
            " └─ Add [id B]",
            "    ├─ Exp [id C]",
            "    │  └─ Add [id D]",
            "    └─ 1.0 [id E]",
        ]

    def test_20k_chain_full_and_limited(self):
        old = sys.getrecursionlimit()
        sys.setrecursionlimit(1000)  # far below the depth: nothing may recurse on it
        try:
            x, y = chain(20_000)
            limited = lines(debugprint(y, depth=30, file="str"))
            assert len(limited) == 30 + 14  # 30 levels, plus a constant beside each Add
            sink = CountingFile()
            assert debugprint(y, file=sink) is sink
        finally:
            sys.setrecursionlimit(old)
        # 20,000 ops, 10,000 uses of the (one, cached) constant, one input; each use of the
        # constant has its own id (PyTensor makes one constant per use): the deepest line, the
        # constant beside the first Add, is printed last and has the last id, 30,000
        assert sink.newlines == 20_000 + 10_000 + 1
        assert sink.tail.endswith(f"└─ 1.0 [id {char_from_number(30_000)}]\n")
        assert sink.chars > 3 * 20_000 * 20_000 // 2  # every line is indented by its depth

    def test_wide_graph(self):
        x = pt.dvector("x")
        total = x
        for i in range(3000):
            total = total + pt.exp(x * float(i))
        assert lines(debugprint(total, depth=3, file="str")) == [
            "Add [id A]",
            " ├─ Add [id B]",
            " │  ├─ Add [id C]",
            " │  └─ Exp [id D]",
            " └─ Exp [id E]",
            "    └─ Mul [id F]",
        ]


# =========================================================================================
# pprint
# =========================================================================================


class TestPprint:
    @pytest.fixture
    def v(self):
        return SimpleNamespace(x=pt.dvector("x"), y=pt.dvector("y"), m=pt.dmatrix("m"), s=pt.dscalar("s"))

    def test_expressions(self, v):
        x, y, m, s = v.x, v.y, v.m, v.s
        cases = [
            (x + y * 2.0, "(x + (y * 2.0))"),
            (x - y, "(x - y)"),
            (-x, "(-x)"),
            (x / y, "(x / y)"),
            (x // y, "(x // y)"),
            (x**2, "(x ** 2)"),
            (x % y, "Mod(x, y)"),
            (pt.exp(x), "Exp(x)"),
            (abs(x), "|x|"),
            (pt.sum(m, axis=0), "sum(m, axis=(0,))"),
            (m.sum(), "sum(m, axis=None)"),
            (m.max(axis=1), "Max{axis=1}(m)"),
            (m.T, "m.T"),
            (m.dimshuffle(1, "x", 0), "DimShuffle{1, x, 0}(m)"),
            (pt.switch(x > 0, x, y), "Switch(Gt(x, 0), x, y)"),
            (pt.cast(x, "float32"), "float32(x)"),
            (pt.alloc(s, 3), "alloc(s, 3)"),
            (pt.stack([s, s]), "[s, s]"),
            (pt.join(0, x, y), "join(0, x, y)"),
            (pt.as_tensor(3.0) + x, "(3.0 + x)"),
            ((x + y) * (x - y), "((x + y) * (x - y))"),
            (x + y + s, "((x + y) + s)"),
            (pt.second(x, y), "fill(x, y)"),
            (pt.exp(x).sum(), "sum(Exp(x), axis=None)"),
            (pt.neg(x) + 1, "((-x) + 1)"),
            (pt.dot(m, m), "(m \\dot m)"),
            (pt.tensor_copy(x), "x"),
            (pt.dvector() + 1, "(<Vector(float64, shape=(?,))> + 1)"),
            (pt.dscalar("alpha") + 1, "(\\alpha + 1)"),
        ]
        for expr, text in cases:
            assert pprint(expr) == text, text
        assert pp is pprint

    def test_scalar_expressions(self):
        p, q = ps.float64("p"), ps.float64("q")
        assert [pprint(e) for e in (p + q, p - q, p * q, p / q, p % q, -p, p**q, ps.exp(p))] == [
            "(p + q)",
            "(p - q)",
            "(p * q)",
            "(p / q)",
            "(p % q)",
            "(-p)",
            "(p ** q)",
            "exp(p)",
        ]

    def test_process_graph(self):
        a, b = pt.dscalars("a", "b")
        assert pprint.process_graph([a, b], [a + b, a * b]) == "out[0] = (a + b)\nout[1] = (a * b)"
        assert pprint.process_graph([a, b], [a + b]) == "return (a + b)"
        assert pprint([a, b], [a + b], {}) == "return (a + b)"
        c = a + b
        c.name = "c"
        assert pprint(c * 2) == "((a + b) * 2)"
        # named intermediates are referred to by name in a program
        assert (
            pprint.process_graph([a, b], [c * 2, c], {}, True)
            == "inputs: a, b\nout[0] = (c * 2)\nc = (a + b)"
        )

    def test_process_graph_updates(self):
        a = pt.dscalar("a")
        acc = pt.dscalar("acc")
        text = pprint.process_graph([a, acc], [a * 2], {acc: acc + a})
        assert text == "acc <- (acc + a)\nreturn (a * 2)"

    def test_assign_by_op_class_and_condition(self, v):
        class Upper(Printer):
            def process(self, var, pstate):
                return f"EXP[{pstate.pprinter.process(var.owner.inputs[0], pstate)}]"

        printer = pprint.clone()
        printer.assign(pt.exp(v.x).owner.op, Upper())
        assert printer(pt.exp(v.x) + 1) == "(EXP[x] + 1)"
        assert pprint(pt.exp(v.x) + 1) == "(Exp(x) + 1)"  # the original is untouched
        printer = pprint.clone_assign(Elemwise, default_printer)
        assert printer(v.x + 1) == "Add(x, 1)"
        printer = pprint.clone_assign(lambda pstate, r: r.name == "x", FunctionPrinter(["never"]))
        with pytest.raises(TypeError, match="not the output of an operation"):
            printer(v.x + v.y)

        class Named(Printer):
            def process(self, var, pstate):
                return "<" + str(var.name) + ">"

        printer = pprint.clone_assign(lambda pstate, r: r.name is not None, Named())
        assert printer(v.x + v.y) == "(<x> + <y>)"
        with pytest.raises(TypeError, match="condition"):
            pprint.clone().assign(3, Named())

    def test_printer_state(self, v):
        state = PrinterState(pprinter=pprint, custom=1)
        expr = v.x + 1
        assert pprint.process(expr, state) == "(x + 1)"
        # texts of inputs are dropped once every node using them is printed
        assert state.custom == 1 and state.memo == {expr: "(x + 1)"}
        assert pprint(expr, {"custom": 2}) == "(x + 1)"
        with pytest.raises(TypeError):
            pprint()

    def test_empty_printer(self, v):
        assert PPrinter()(v.x) == ""

    def test_deep_chain_does_not_recurse(self):
        old = sys.getrecursionlimit()
        sys.setrecursionlimit(1000)
        try:
            x, y = chain(5000)
            text = pprint(y)
        finally:
            sys.setrecursionlimit(old)
        assert text.startswith("Exp((Exp((Exp(") and text.endswith("+ 1.0)) + 1.0))")
        assert text.count("Exp(") == 2500 and text.count("+ 1.0") == 2500


# =========================================================================================
# Print
# =========================================================================================


class TestPrintOp:
    def test_passes_the_value_through_and_prints(self, capsys):
        x = pt.dvector("x")
        y = Print("x is")(x) * 2
        np.testing.assert_array_equal(y.eval({x: np.array([1.0, 2.0])}), [2.0, 4.0])
        assert capsys.readouterr().out == "x is __str__ = [1. 2.]\n"
        seen = []
        z = Print("m", global_fn=lambda op, value: seen.append((op.message, value.shape)))(x)
        z.eval({x: np.zeros(3)})
        assert seen == [("m", (3,))]
        assert str(Print("hi")) == "Print{message='hi'}"
        assert Print("hi") == Print("hi") and Print("a") != Print("b")
        assert Print().view_map == {0: [0]}


# =========================================================================================
# pydotprint
# =========================================================================================


class TestPydotprint:
    def test_dot_text_structure(self, graph):
        dot = pydotprint(graph.w, format="dot", return_image=True)
        assert dot.startswith('digraph "arignote" {\n') and dot.endswith("}\n")
        body = dot.splitlines()
        nodes = [line for line in body if "shape=" in line]
        edges = [line for line in body if "->" in line]
        applies = [line for line in nodes if 'shape="ellipse"' in line]
        boxes = [line for line in nodes if 'shape="box"' in line]
        assert len(applies) == 9  # every Apply node
        # compact: inputs x, y, the constant 2.0 and the output are the only boxes
        assert len(boxes) == 4
        assert any(
            'label="name=x Vector(float64, shape=(?,))"' in b and 'fillcolor="green"' in b for b in boxes
        )
        assert any(
            'label="val=2.0 Scalar(float32, shape=())"' in b and 'fillcolor="#FFF2CC"' in b for b in boxes
        )
        assert any('fillcolor="blue"' in b and 'fontcolor="white"' in b for b in boxes)
        assert any('label="Exp"' in a and 'fillcolor="#FFAABB"' in a for a in applies)
        # inputs of a two-input node are numbered; unnamed intermediates label the edge
        assert any('label="0"' in e for e in edges) and any(
            'label="1 Matrix(float32, shape=(1, 1))"' in e for e in edges
        )
        # DimShuffle views its input: blue edge
        assert any('color="blue"' in e for e in edges)
        # the repeated label gets a toposort index
        assert sum('label="Add' in a for a in applies) == 2 and any("id=" in a for a in applies)

    def test_not_compact_with_ids(self, graph):
        dot = pydotprint(graph.w, format="dot", return_image=True, compact=False, with_ids=True)
        boxes = [line for line in dot.splitlines() if 'shape="box"' in line]
        assert len(boxes) == 4 + 8  # every intermediate Variable gets its box
        assert all("id=" in line for line in dot.splitlines() if 'shape="ellipse"' in line)

    def test_writes_dot_file_without_graphviz(self, graph, tmp_path, monkeypatch, capsys):
        monkeypatch.setitem(sys.modules, "graphviz", None)
        monkeypatch.setattr(shutil, "which", lambda name: None)
        target = tmp_path / "g.txt"
        assert pydotprint(graph.w, outfile=target, format="dot") is None
        written = tmp_path / "g.dot"
        assert written.read_text().startswith("digraph")
        assert "The output file is available at" in capsys.readouterr().out
        pydotprint(graph.w, outfile=str(tmp_path / "quiet.dot"), format="dot", print_output_file=False)
        assert capsys.readouterr().out == ""
        with pytest.raises(ImportError, match=r"pip install .*graphviz"):
            pydotprint(graph.w, outfile=tmp_path / "g.png")

    def test_default_outfile_is_in_compiledir(self, graph, tmp_path):
        with arignote.config.change_flags(compiledir=str(tmp_path / "cache")):
            pydotprint(graph.w, format="dot", print_output_file=False)
        assert (tmp_path / "cache" / "arignote.pydotprint.cpu.dot").exists()

    def test_inputs_accepted(self, graph):
        fg = FunctionGraph([graph.x, graph.y], [graph.w], clone=False)
        dot = pydotprint(fg, format="dot", return_image=True)
        assert dot == pydotprint(FakeFunction(fg), format="dot", return_image=True)
        assert dot == pydotprint(graph.w.owner, format="dot", return_image=True)
        assert dot == pydotprint([graph.w], format="dot", return_image=True)
        with pytest.raises(TypeError, match="pydotprint takes"):
            pydotprint("x", format="dot", return_image=True)

    def test_updates_unused_outputs_and_input_outputs(self):
        a, acc = pt.dscalar("a"), pt.dscalar("acc")
        parts = pt.split(pt.stack([a, a]), [1, 1], 2)
        fg = FunctionGraph([a, acc], [parts[0], acc + a, a], clone=False, update_mapping={1: 1})
        dot = pydotprint(fg, format="dot", return_image=True)
        assert 'label="UPDATE"' in dot
        assert 'fillcolor="grey"' in dot  # parts[1] is computed but not used
        assert dot.count('label="name=a Scalar(float64, shape=())"') == 1

    def test_cond_highlight_without_ifelse_warns(self, graph):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            dot = pydotprint(graph.w, format="dot", return_image=True, cond_highlight="nope")
        assert any("cond_highlight" in str(w.message) for w in caught)
        assert "subgraph" not in dot

    def test_inner_graphs_to_separate_files(self, fused, tmp_path):
        pydotprint(
            fused.outs, outfile=tmp_path / "main.dot", format="dot", scan_graphs=True, print_output_file=False
        )
        files = sorted(p.name for p in tmp_path.iterdir())
        assert "main.dot" in files and len(files) == 2
        inner = next(tmp_path / f for f in files if f != "main.dot").read_text()
        assert 'label="log"' in inner and 'label="name=i0 float64"' in inner

    def test_render_png_and_svg(self, graph, tmp_path):
        # the graphviz Python package is optional: without it pydotprint runs `dot` itself
        if shutil.which("dot") is None:
            pytest.skip("the Graphviz dot program is not installed")
        png = pydotprint(graph.w, format="png", return_image=True)
        assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 1000
        pydotprint(
            [graph.w, pt.log(graph.z)], outfile=tmp_path / "graph.svg", format="svg", print_output_file=False
        )
        svg = (tmp_path / "graph.svg").read_text()
        assert "<svg" in svg and "Exp" in svg and "name=x" in svg


# -- Variable.dprint and the ids of shared Python-number constants --------------------------


def test_variable_dprint_method():
    x = pt.dvector("x")
    y = pt.exp(x).sum()
    assert y.dprint(file="str") == debugprint(y, file="str")
    assert (
        y.dprint(print_type=True, file="str").splitlines()[0]
        == "Sum{axes=None} [id A] <Scalar(float64, shape=())>"
    )
    assert double("d").dprint(file="str") == "d [id A]\n"  # on every Variable, not only tensors


def test_each_use_of_a_number_literal_gets_its_own_id():
    # ``y + 1.0`` and ``w * 1.0`` share one cached constant, where PyTensor makes two: the
    # printout is PyTensor's, one id per use
    y = pt.vector("y")
    w = y + 1.0
    z = w * 1.0
    one = w.owner.inputs[1].owner.inputs[0]
    assert one is z.owner.inputs[1].owner.inputs[0] and is_literal_constant(one)
    assert lines(z.dprint(file="str")) == [
        "Mul [id A]",
        " ├─ Add [id B]",
        " │  ├─ y [id C]",
        " │  └─ ExpandDims{axis=0} [id D]",
        " │     └─ 1.0 [id E]",
        " └─ ExpandDims{axis=0} [id F]",
        "    └─ 1.0 [id G]",
    ]
    # an explicit constant is a new one each time (as in PyTensor): used twice, one id
    c = pt.constant(1.0)
    assert c is not pt.constant(1.0) and not is_literal_constant(c)
    assert lines((y + c + c).dprint(file="str"))[-1] == "    └─ 1.0 [id E]"
    # a compiled graph shares constants (PyTensor merges them): one id
    f = arignote.function([y], z + pt.exp(w), mode=arignote.Mode(optimizer=None))
    text = debugprint(f, file="str")
    assert text.count("1.0 [id F]") == 2 and "[id G]" in text
