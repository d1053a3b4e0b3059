"""The seed documents' tensor examples, run with ``arignote`` in place of
pytensor/aesara/theano (printed output compared in PyTensor 3's format).

Sections follow the seeds: the "Types" page (``TensorType("float64", (2, None))``, the
v1/v2 comparisons, ``filter_variable`` and ``SpecifyShape``, ``lvector`` checks) and
Theano's "Graph Structures" page (``x + y``, ``x * 2.``, ``-ivector()``, the irow and
dmatrix constraints, clients, ``a + a ** 10``).
"""

from __future__ import annotations

import numpy as np
import pytest

import arignote
import arignote.tensor as tt  # the Theano page's spelling
from arignote.graph.basic import Apply, Constant, Variable
from arignote.graph.fg import FunctionGraph, Output
from arignote.tensor.elemwise import DimShuffle, Elemwise
from arignote.tensor.shape import SpecifyShape
from arignote.tensor.type import TensorType
from arignote.tensor.variable import TensorConstant, TensorVariable

# =========================================================================================
# The "Types" page
# =========================================================================================


@pytest.fixture
def v1():
    return TensorType("float64", (2, None))()


@pytest.fixture
def v2():
    return TensorType("float64", (2, 1))()


class TestTypesPage:
    def test_tensor_type_call_makes_a_tensor_variable(self, v1):
        # "TensorType(dtype, shape)() will construct a symbolic TensorVariable instance"
        assert isinstance(v1, TensorVariable) and isinstance(v1, Variable)
        assert isinstance(v1.type, TensorType)
        # "Type objects are not Python types/classes; they're instances of the Python class Type"
        assert not isinstance(v1.type, type)

    def test_v1_type(self, v1):
        # >>> v1.type
        # TensorType(float64, (2, ?))          (PyTensor 3: the repr below, str with '?')
        assert repr(v1.type) == "TensorType(float64, shape=(2, None))"
        assert str(v1.type) == "Matrix(float64, shape=(2, ?))"
        assert v1.type.dtype == "float64"
        assert v1.type.shape == (2, None)

    def test_v2_type(self, v2):
        # >>> v2.type
        # TensorType(float64, (2, 1))
        assert repr(v2.type) == "TensorType(float64, shape=(2, 1))"
        assert str(v2.type) == "Matrix(float64, shape=(2, 1))"

    def test_partial_shapes(self):
        # "TensorType("float64", (2, None)) could represent an array of shape (2, 0), (2, 1), etc."
        t = TensorType("float64", (2, None))
        for n in (0, 1, 7):
            assert t.is_valid_value(np.zeros((2, n)))
        assert not t.is_valid_value(np.zeros((3, 1)))
        assert not t.is_valid_value(np.zeros(2))  # the number of dimensions is fixed

    def test_in_same_class(self, v1, v2):
        # >>> v1.type.in_same_class(v2.type)
        # False
        assert v1.type.in_same_class(v2.type) is False

    def test_is_super(self, v1, v2):
        # >>> v1.type.is_super(v2.type)
        # True
        assert v1.type.is_super(v2.type) is True
        assert v2.type.is_super(v1.type) is False

    def test_filter_variable_to_the_more_specific(self, v1, v2):
        # >>> v1.type.filter_variable(v2)
        # <Matrix(float64, shape=(2, 1))>
        out = v1.type.filter_variable(v2)
        assert out is v2
        assert repr(out) == "<Matrix(float64, shape=(2, 1))>"

    def test_filter_variable_the_other_way_gives_specify_shape(self, v1, v2):
        # >>> v3 = v2.type.filter_variable(v1)
        # >>> v3
        # SpecifyShape.0
        v3 = v2.type.filter_variable(v1)
        assert str(v3) == "SpecifyShape.0"
        assert isinstance(v3.owner.op, SpecifyShape)
        # "This SpecifyShape uses v1 static shape as an input"
        x, *lengths = v3.owner.inputs
        assert x is v1
        assert all(isinstance(c, TensorConstant) for c in lengths)
        assert [int(c.data) for c in lengths] == [2, 1]
        assert [c.type for c in lengths] == [TensorType("int8", ())] * 2
        # "The Type for v3 should really have a static shape of (2, 1)": in PyTensor 3 it does
        assert v3.type == v2.type
        assert v1.type.is_super(v3.type) and v2.type.is_super(v3.type)
        # and at run time it asserts what it says
        np.testing.assert_array_equal(v3.eval({v1: np.ones((2, 1))}), np.ones((2, 1)))
        with pytest.raises(ValueError, match="does not match"):
            v3.eval({v1: np.ones((2, 2))})

    def test_dprint_of_v3(self, v1, v2):
        v3 = v2.type.filter_variable(v1)
        text = arignote.dprint(v3, print_type=True, file="str")
        assert text.rstrip("\n").splitlines() == [
            "SpecifyShape [id A] <Matrix(float64, shape=(2, 1))>",
            " ├─ <Matrix(float64, shape=(2, ?))> [id B] <Matrix(float64, shape=(2, ?))>",
            " ├─ 2 [id C] <Scalar(int8, shape=())>",
            " └─ 1 [id D] <Scalar(int8, shape=())>",
        ]

    def test_naive_equality_is_too_restrictive(self, v1, v2):
        # "simple naive comparisons like v1.type == v2.type may unnecessarily restrict logic"
        assert v1.type != v2.type
        assert v1.type.is_super(v2.type)

    def test_ops_check_inputs_with_is_super_or_in_same_class(self):
        # "checking something like x.type.is_super(lvector) or x.type.in_same_class(lvector)"
        x = tt.lvector("x")
        assert x.type.is_super(tt.lvector)
        assert x.type.in_same_class(tt.lvector)
        assert not tt.ivector("y").type.is_super(tt.lvector)
        assert not tt.lmatrix("z").type.in_same_class(tt.lvector)

    def test_tensor_type_may_share_memory_and_shape_info(self):
        # the TensorType part of the contract: may_share_memory, get_shape_info, get_size
        a = np.zeros((3, 4))
        t = tt.dmatrix
        assert t.may_share_memory(a, a[1:])
        assert not t.may_share_memory(a, a.copy())
        assert t.get_size(t.get_shape_info(a)) == a.nbytes == 96

    def test_values_eq_approx_for_tensors(self):
        # "a + a + a + a + a + a might not actually produce the exact same output as 6 * a
        # (try with a=0.1), but with values_eq_approx we do not necessarily mind."
        a = np.array([0.1])
        assert not tt.dvector.values_eq(a + a + a + a + a + a, 6 * a)
        assert tt.dvector.values_eq_approx(a + a + a + a + a + a, 6 * a)

    def test_filter_strict_and_downcast_for_tensors(self):
        # filter(strict=True) accepts only values already of the Type; otherwise a lossless
        # conversion, and a lossy one only with allow_downcast
        t = tt.dvector
        with pytest.raises(TypeError, match="strict"):
            t.filter([1.0], strict=True)
        np.testing.assert_array_equal(t.filter([1, 2]), [1.0, 2.0])
        with pytest.raises(TypeError, match="allow_downcast"):
            tt.ivector.filter([1.5])
        np.testing.assert_array_equal(tt.ivector.filter([1.5], allow_downcast=True), [1])


# =========================================================================================
# Theano's "Graph Structures" page
# =========================================================================================


class TestGraphStructuresPage:
    def test_x_plus_y(self):
        # x = tt.dmatrix('x'); y = tt.dmatrix('y'); z = x + y
        x = tt.dmatrix("x")
        y = tt.dmatrix("y")
        z = x + y
        assert x.owner is None and y.owner is None
        assert isinstance(z.owner, Apply)
        assert z.owner.inputs == [x, y]
        assert z.owner.outputs[0] is z
        assert z.owner.op == tt.add
        assert z.type == tt.dmatrix

    def test_x_times_two(self):
        # >>> x = theano.tensor.dmatrix('x')
        # >>> y = x * 2.
        x = tt.dmatrix("x")
        y = x * 2.0
        # >>> type(y.owner)  ->  Apply
        assert type(y.owner) is Apply
        # >>> y.owner.op.name  ->  'Elemwise{mul,no_inplace}' (PyTensor 3 prints Mul)
        assert isinstance(y.owner.op, Elemwise)
        assert y.owner.op == tt.mul
        assert str(y.owner.op) == "Mul"
        # >>> len(y.owner.inputs)  ->  2
        assert len(y.owner.inputs) == 2
        # >>> y.owner.inputs[0]  ->  x
        assert y.owner.inputs[0] is x
        assert str(y.owner.inputs[0]) == "x"
        # >>> y.owner.inputs[1]  ->  InplaceDimShuffle{x,x}.0 (PyTensor 3: ExpandDims{axes=(0, 1)}.0)
        two = y.owner.inputs[1]
        assert str(two) == "ExpandDims{axes=(0, 1)}.0"
        # >>> type(y.owner.inputs[1])  ->  TensorVariable
        assert type(two) is TensorVariable
        # >>> type(y.owner.inputs[1].owner)  ->  Apply
        assert type(two.owner) is Apply
        # >>> y.owner.inputs[1].owner.op  ->  a DimShuffle object
        assert isinstance(two.owner.op, DimShuffle)
        assert two.owner.op.new_order == ("x", "x")
        # >>> y.owner.inputs[1].owner.inputs  ->  [TensorConstant{2.0}]
        (c,) = two.owner.inputs
        assert isinstance(c, TensorConstant)
        assert c.data == 2.0 and c.dtype == "float32"  # 2.0 fits float32
        assert str(c) == "2.0"
        # "2 was first broadcasted to a matrix of same shape as x"
        assert two.type.broadcastable == (True, True)
        assert y.type == tt.dmatrix
        np.testing.assert_array_equal(
            y.eval({x: np.arange(6.0).reshape(2, 3)}), np.arange(6.0).reshape(2, 3) * 2
        )

    def test_irow_constraints(self):
        # irow: an ndarray, of 32-bit integers, of shape 1xN
        irow = tt.irow
        assert irow == TensorType("int32", (1, None))
        good = np.zeros((1, 5), dtype="int32")
        assert irow.filter(good, strict=True) is good
        assert isinstance(irow.filter([[1, 2, 3]]), np.ndarray)
        assert str(irow.filter([[1, 2, 3]]).dtype) == "int32"
        with pytest.raises(TypeError, match="strict"):
            irow.filter([[1, 2]], strict=True)  # not an ndarray
        with pytest.raises(TypeError, match="int64"):
            irow.filter(np.zeros((1, 5), dtype="int64"))  # not int32
        with pytest.raises(TypeError, match="dimension 0: expected 1, got 2"):
            irow.filter(np.zeros((2, 5), dtype="int32"))  # not 1xN
        with pytest.raises(TypeError, match="Wrong number of dimensions"):
            irow.filter(np.zeros(5, dtype="int32"))

    def test_dmatrix_constraints(self):
        # dmatrix: an ndarray, of 64-bit floats, of shape MxN with no restriction on M or N
        dmatrix = tt.dmatrix
        for shape in [(0, 0), (1, 7), (5, 1), (3, 4)]:
            value = np.zeros(shape)
            out = dmatrix.filter(value, strict=True)
            assert isinstance(out, np.ndarray) and str(out.dtype) == "float64" and len(out.shape) == 2
        with pytest.raises(TypeError, match="float32"):
            dmatrix.filter(np.zeros((2, 2), dtype="float32"), strict=True)
        with pytest.raises(TypeError, match="Wrong number of dimensions"):
            dmatrix.filter(np.zeros(3))

    def test_irow_and_dmatrix_are_different_types_of_one_python_class(self):
        # "irow and dmatrix both use numpy.ndarray ... yet they are different Types"
        assert tt.irow != tt.dmatrix
        assert type(tt.irow) is type(tt.dmatrix) is TensorType
        assert type(tt.irow.filter([[1]])) is type(tt.dmatrix.filter([[1.0]])) is np.ndarray

    def test_negation_of_an_ivector(self):
        # >>> x = theano.tensor.ivector()
        # >>> y = -x
        x = tt.ivector()
        y = -x
        assert isinstance(x, Variable) and isinstance(y, Variable)
        # "The Type of both x and y is theano.tensor.ivector"
        assert x.type == tt.ivector and y.type == tt.ivector
        # "y is the Variable corresponding to the output of the computation"
        assert x.owner is None
        assert y.owner.op == tt.neg
        assert y.owner.inputs == [x]
        assert y.owner.outputs[y.index] is y
        np.testing.assert_array_equal(y.eval({x: np.array([1, -2], dtype="int32")}), [-1, 2])

    def test_variable_fields(self):
        # "A Variable r contains four important fields: type, owner, index, name"
        x = tt.dmatrix("x")
        y = x * 2.0
        assert y.type == tt.dmatrix and y.owner is not None and y.index == 0 and y.name is None
        assert x.name == "x" and x.owner is None

    def test_constant_has_data_and_no_owner(self):
        c = tt.constant([1.0, 2.0])
        assert isinstance(c, Constant)
        assert c.owner is None
        np.testing.assert_array_equal(c.data, [1.0, 2.0])
        # "it is assumed that the Op will not under any circumstances modify the input"
        assert not c.data.flags.writeable

    def test_constants_are_not_function_inputs(self):
        c = tt.constant(1.0)
        with pytest.raises(TypeError):
            arignote.function([c], c * 2)

    def test_clients_of_the_seed_graph(self):
        # >>> v = theano.tensor.vector()
        # >>> f = theano.function([v], (v+1).sum())
        # The seed inspects the compiled graph (test_seed_compiled_examples.py does);
        # here the same structure, uncompiled.
        v = tt.vector()
        fgraph = FunctionGraph([v], [(v + 1).sum()])
        topo = fgraph.toposort()
        add_node, sum_node = topo[-2], topo[-1]
        assert add_node.op == tt.add
        assert isinstance(sum_node.op, tt.CAReduce)
        # an internal variable: its client is the Sum node, at input 0
        var = add_node.outputs[0]
        client = fgraph.clients[var][0]
        assert client == (sum_node, 0)
        assert type(client[0]) is Apply
        assert client[0].inputs[client[1]] is var
        # an output of the graph: its client is an Output node (PyTensor 3's "output")
        var = sum_node.outputs[0]
        client = fgraph.clients[var][0]
        assert isinstance(client[0].op, Output)
        assert fgraph.outputs[client[1]] is var

    def test_a_plus_a_to_the_tenth(self):
        # >>> a = theano.tensor.vector("a")
        # >>> b = a + a ** 10
        # >>> print(f([0, 1, 2]))   ->   [ 0. 2. 1026.]
        a = tt.vector("a")
        b = a + a**10
        np.testing.assert_array_equal(b.eval({a: [0, 1, 2]}), [0.0, 2.0, 1026.0])

    def test_a_plus_a_to_the_tenth_compiled(self):
        a = tt.vector("a")
        b = a + a**10
        f = arignote.function([a], b)
        np.testing.assert_array_equal(f([0, 1, 2]), [0.0, 2.0, 1026.0])
