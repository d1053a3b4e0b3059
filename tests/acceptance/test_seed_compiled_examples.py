"""The seed documents' examples that compile a function, run with ``arignote`` in place of
theano/pytensor, and what the seeds say about compiled functions and the thunk protocol.

Printed output is compared in PyTensor 3's format (ids and box-drawing trees); where the
seed's output depends on a rewrite arignote does not have yet (constant folding), the test
says so and checks everything else.
"""

from __future__ import annotations

import shutil

import numpy as np
import pytest

import arignote as theano  # the Graph Structures page's spelling
import arignote.tensor as tt
from arignote.graph.basic import Apply, Constant
from arignote.graph.fg import Output
from arignote.graph.op import Op
from arignote.graph.utils import MissingInputError
from tests.toy import add, double, neg


def _has_foldable_nodes(fgraph) -> bool:
    """Nodes whose inputs are all constants: constant folding would have removed them."""
    return any(
        node.inputs and all(isinstance(i, Constant) for i in node.inputs) for node in fgraph.apply_nodes
    )


# =========================================================================================
# Graph Structures, "Graph Structures Extension"
# =========================================================================================


@pytest.fixture
def seed_f():
    # >>> v = theano.tensor.vector()
    # >>> f = theano.function([v], (v+1).sum())
    v = tt.vector()
    return v, theano.function([v], (v + 1).sum())


def test_seed_function_computes(seed_f):
    _, f = seed_f
    assert float(f([1.0, 2.0, 3.0])) == 9.0
    assert float(f(np.zeros(0))) == 0.0


def test_seed_debugprint_of_the_compiled_function(seed_f):
    # >>> theano.printing.debugprint(f)
    # Sum{acc_dtype=float64} [id A] '' 1
    # |Elemwise{add,no_inplace} [id B] '' 0
    # |TensorConstant{(1,) of 1.0} [id C]
    # |<TensorType(float64, vector)> [id D]
    _, f = seed_f
    text = theano.printing.debugprint(f, file="str")
    lines = text.rstrip("\n").splitlines()
    # what holds whatever rewrites ran: a Sum at the top, toposort positions at line ends
    assert lines[0].startswith("Sum{axes=None} [id A] ")
    assert lines[1].startswith(" └─ Add [id B] ")
    assert "<Vector(float64, shape=(?,))> [id " in text
    n_nodes = len(f.maker.fgraph.apply_nodes)
    assert lines[0] == f"Sum{{axes=None}} [id A] {n_nodes - 1}"
    if _has_foldable_nodes(f.maker.fgraph):
        pytest.xfail("the seed's graph has its constant folded; arignote has no constant folding yet")
    # PyTensor 3 prints the seed's graph as (the constant first, as canonicalize sorts it):
    assert lines == [
        "Sum{axes=None} [id A] 1",
        " └─ Add [id B] 0",
        "    ├─ [1.] [id C]",
        "    └─ <Vector(float64, shape=(?,))> [id D]",
    ] or lines == [
        "Sum{axes=None} [id A] 1",
        " └─ Add [id B] 0",
        "    ├─ <Vector(float64, shape=(?,))> [id C]",
        "    └─ [1.] [id D]",
    ]


def test_seed_clients_in_the_compiled_graph(seed_f):
    # >>> fgraph = f.maker.fgraph
    # >>> topo = fgraph.toposort()
    # >>> fgraph.clients[topo[0].outputs[0]]
    # [(Sum{acc_dtype=float64}(Elemwise{add,no_inplace}.0), 0)]
    # >>> fgraph.clients[topo[1].outputs[0]]
    # [('output', 0)]
    _, f = seed_f
    fgraph = f.maker.fgraph
    topo = fgraph.toposort()
    add_node, sum_node = topo[-2], topo[-1]
    if not _has_foldable_nodes(fgraph):
        assert topo == [add_node, sum_node]
    assert str(sum_node) == "Sum{axes=None}(Add.0)"
    # >>> # An internal variable
    # >>> var = topo[0].outputs[0]
    # >>> client = fgraph.clients[var][0]
    # >>> client
    # (Sum{acc_dtype=float64}(Elemwise{add,no_inplace}.0), 0)
    # >>> type(client[0])
    # <class 'theano.graph.basic.Apply'>
    # >>> assert client[0].inputs[client[1]] is var
    var = add_node.outputs[0]
    client = fgraph.clients[var][0]
    assert client == (sum_node, 0)
    assert str(client[0]) == "Sum{axes=None}(Add.0)"
    assert type(client[0]) is Apply
    assert client[0].inputs[client[1]] is var
    # >>> # An output of the graph
    # >>> var = topo[1].outputs[0]
    # >>> client = fgraph.clients[var][0]
    # >>> client
    # ('output', 0)             (PyTensor 3: an Output node, printed output[0](...))
    # >>> assert fgraph.outputs[client[1]] is var
    var = sum_node.outputs[0]
    client = fgraph.clients[var][0]
    assert isinstance(client[0].op, Output) and client[1] == 0
    assert fgraph.outputs[client[1]] is var


def test_seed_the_graph_is_cloned_at_the_start_of_compilation(seed_f):
    # "The graph gets cloned at the start of compilation, so modifications done during
    # compilation won't affect the user graph."
    v, f = seed_f
    fgraph = f.maker.fgraph
    assert v not in fgraph.variables
    assert fgraph.inputs[0] is not v and fgraph.inputs[0].type == v.type
    user_out = (v + 1).sum()
    before = (user_out.owner, user_out.owner.inputs[0].owner)
    theano.function([v], user_out)
    assert (user_out.owner, user_out.owner.inputs[0].owner) == before
    assert not hasattr(v, "clients")


def test_seed_a_constant_is_not_a_function_input():
    # "A constant does not need to be specified in a function's list of inputs. In fact,
    # doing so will raise an exception."
    c = tt.constant(np.array([1.0, 2.0]))
    v = tt.vector("v")
    f = theano.function([v], v + c)
    np.testing.assert_array_equal(f([1.0, 1.0]), [2.0, 3.0])
    with pytest.raises(TypeError, match="Constant"):
        theano.function([v, c], v + c)


# =========================================================================================
# Graph Structures, "Optimizations": a + a ** 10
# =========================================================================================


def test_seed_a_plus_a_to_the_tenth(tmp_path, capsys):
    # >>> a = theano.tensor.vector("a") # declare symbolic variable
    # >>> b = a + a ** 10 # build symbolic expression
    # >>> f = theano.function([a], b) # compile function
    # >>> print(f([0, 1, 2])) # prints `array([0,2,1026])`
    # [ 0. 2. 1026.]
    a = tt.vector("a")
    b = a + a**10
    f = theano.function([a], b)
    print(f([0, 1, 2]))
    assert capsys.readouterr().out.split() == ["[", "0.", "2.", "1026.]"]
    # >>> theano.printing.pydotprint(b, outfile="./pics/symbolic_graph_unopt.png", ...)
    # The output file is available at ./pics/symbolic_graph_unopt.png
    if shutil.which("dot") is None:  # the picture needs the program, with or without the package
        pytest.skip("Graphviz's `dot` program is not on PATH: the PNG pictures cannot be drawn")
    for graph, name in ((b, "symbolic_graph_unopt"), (f, "symbolic_graph_opt")):
        out = tmp_path / "pics" / f"{name}.png"
        theano.printing.pydotprint(graph, outfile=str(out), var_with_name_simple=True)
        assert capsys.readouterr().out.strip() == f"The output file is available at {out}"
        assert out.exists() and out.stat().st_size > 0


# =========================================================================================
# Graph Structures: the first examples, compiled
# =========================================================================================


def test_seed_x_times_two_compiled():
    # >>> x = theano.tensor.dmatrix('x')
    # >>> y = x * 2.
    x = tt.dmatrix("x")
    y = x * 2.0
    f = theano.function([x], y)
    np.testing.assert_array_equal(f(np.arange(4.0).reshape(2, 2)), [[0, 2], [4, 6]])
    assert f(np.ones((0, 3))).shape == (0, 3)


def test_seed_negated_ivector_compiled():
    # >>> x = theano.tensor.ivector()
    # >>> y = -x
    x = tt.ivector()
    f = theano.function([x], -x)
    out = f(np.array([1, -2, 3], dtype="int32"))
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, [-1, 2, -3])
    with pytest.raises(TypeError, match=r"Bad input 0 .*int32"):
        f(np.array([1.5]))


def test_seed_undeclared_input_is_an_error():
    x = tt.dmatrix("x")
    y = tt.dmatrix("y")
    with pytest.raises(MissingInputError, match="y"):
        theano.function([x], x + y)


# =========================================================================================
# The Type page: the DoubleType example, compiled
# =========================================================================================


def test_seed_double_type_in_a_compiled_function():
    x, y = double("x"), double("y")
    f = theano.function([x, y], add(x, neg(y)))
    assert f(3, 1) == 2.0 and isinstance(f(3, 1), float)
    assert f(x=2.5, y=0.5) == 2.0
    # filter: a value the double type cannot hold exactly needs allow_downcast
    big = 2**53 + 1
    with pytest.raises(TypeError, match=r"(?s)Bad input 0 \('x'\).*cannot accurately represent"):
        f(big, 0)
    g = theano.function([x, y], add(x, neg(y)), allow_input_downcast=True)
    assert g(big, 0) == float(big)
    # strict: only floats
    h = theano.function([theano.In(x, strict=True), y], add(x, y))
    assert h(1.0, 2) == 3.0
    with pytest.raises(TypeError, match="expected a float"):
        h(1, 2)


# =========================================================================================
# The Op page: make_thunk, perform's storage cells, compute_map
# =========================================================================================


class ThunkDouble(Op):
    """An Op that defines make_thunk instead of perform, as the seed allows: the thunk
    reads its input cell, writes its output cell, and marks the output computed."""

    __props__ = ()
    seen_impl: list = []

    def make_node(self, x):
        x = tt.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def make_thunk(self, node, storage_map, compute_map, no_recycling, impl=None):
        ThunkDouble.seen_impl.append(impl)
        (inp,) = node.inputs
        (out,) = node.outputs
        in_cell, out_cell, done = storage_map[inp], storage_map[out], compute_map[out]

        def thunk():
            assert compute_map[inp][0]  # "1: the value is valid"
            out_cell[0] = in_cell[0] * 2
            done[0] = True

        return thunk


def test_seed_make_thunk_replaces_perform():
    x = tt.dvector("x")
    f = theano.function([x], ThunkDouble()(x) + 1)
    np.testing.assert_array_equal(f([1.0, 2.0]), [3.0, 5.0])
    assert ThunkDouble.seen_impl[-1] in (None, "py")
    out_var = f.maker.fgraph.outputs[0].owner.inputs[0]
    assert f.vm.compute_map[out_var][0]  # the thunk marked it computed


class Preallocating(Op):
    """perform that reuses a buffer it finds in output_storage (right dtype, maybe the
    wrong shape), as the seed describes."""

    __props__ = ()
    reused: list = []

    def make_node(self, x):
        x = tt.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        (x,) = inputs
        cell = output_storage[0]
        if cell[0] is not None:
            assert cell[0].dtype == x.dtype
        if cell[0] is not None and cell[0].shape == x.shape:
            Preallocating.reused.append(True)
            np.negative(x, out=cell[0])
        else:
            Preallocating.reused.append(False)
            cell[0] = -x


def test_seed_output_storage_may_persist_between_calls():
    # "A Mode may allow output_storage elements to persist between evaluations, or it
    # may reset output_storage cells to hold a value of None."
    Preallocating.reused = []
    x = tt.dvector("x")
    keep = theano.function([x], Preallocating()(x) * 2, mode=theano.Mode(linker="vm_nogc"))
    for n in (3, 3, 4):
        np.testing.assert_array_equal(keep(np.ones(n)), -2 * np.ones(n))
    assert Preallocating.reused == [False, True, False]  # the wrong shape is not reused
    Preallocating.reused = []
    reset = theano.function([x], Preallocating()(x) * 2, mode=theano.Mode(linker="vm"))
    reset(np.ones(3))
    reset(np.ones(3))
    assert Preallocating.reused == [False, False]


def test_seed_perform_results_are_determined_by_the_inputs():
    # "if it is evaluated once on inputs A and returned B, then if ever inputs C, equal to
    # A, are presented again, then outputs equal to B must be returned again."
    x = tt.dvector("x")
    f = theano.function([x], (Preallocating()(x) + x) * 3)
    a = np.array([1.0, -2.0])
    first = f(a)
    for _ in range(3):
        np.testing.assert_array_equal(f(a.copy()), first)
