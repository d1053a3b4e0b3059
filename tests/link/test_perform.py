"""``Variable.eval`` / :func:`arignote.link.perform.evaluate`: running a graph through
each node's thunk."""

from __future__ import annotations

import inspect
import sys

import numpy as np
import pytest

from arignote.graph.basic import Apply, Constant, Variable
from arignote.graph.op import Op
from arignote.graph.type import Type
from arignote.graph.utils import MissingInputError
from arignote.link.perform import describe_node_failure, evaluate
from tests.toy import add, divmod_op, double, integer, mul, neg, sub


def _line_of(marker: str) -> int:
    lines = inspect.getsource(sys.modules[__name__]).splitlines()
    hits = [i + 1 for i, line in enumerate(lines) if line.rstrip().endswith(marker)]
    assert len(hits) == 1, (marker, hits)
    return hits[0]


class Counting(Op):
    """Identity that counts its runs."""

    def __init__(self):
        self.runs = 0

    def make_node(self, x):
        return Apply(self, [x], [double()])

    def perform(self, node, inputs, output_storage):
        self.runs += 1
        output_storage[0][0] = inputs[0]


class Fails(Op):
    __props__ = ()

    def make_node(self, *inputs):
        return Apply(self, list(inputs), [double()])

    def perform(self, node, inputs, output_storage):
        raise ZeroDivisionError("boom")


class SetsNothing(Op):
    __props__ = ()

    def make_node(self, x):
        return Apply(self, [x], [double()])

    def perform(self, node, inputs, output_storage):
        pass


class Arr(Type):
    """float64 numpy arrays."""

    __props__ = ()

    def filter(self, data, strict=False, allow_downcast=None):
        return np.asarray(data, dtype="float64")


class ArrSum(Op):
    __props__ = ()

    def make_node(self, a, b):
        return Apply(self, [a, b], [Arr()()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0] + inputs[1]


# --- values -------------------------------------------------------------------------------


def test_values():
    x, y = double("x"), double("y")
    z = add(mul(x, y), neg(x))
    assert z.eval({x: 2.0, y: 5.0}) == 8.0
    assert sub(x, y).eval({x: 1.0, y: 3.0}) == -2.0


def test_inputs_are_filtered_through_their_type():
    x = double("x")
    out = neg(x).eval({x: 3})
    assert out == -3.0 and type(out) is float
    assert x.eval({x: 2}) == 2.0 and type(x.eval({x: 2})) is float


def test_keys_by_input_name():
    x, y = double("x"), double("y")
    assert sub(x, y).eval({"x": 5.0, "y": 2.0}) == 3.0
    assert sub(x, y).eval({"x": 5.0, y: 1.0}) == 4.0


def test_key_by_name_of_an_intermediate_variable():
    x, y = double("x"), double("y")
    z = add(x, y)
    z.name = "z"
    assert mul(z, 2.0).eval({"z": 3.0}) == 6.0


def test_unknown_name_is_a_value_error():
    x = double("x")
    with pytest.raises(ValueError, match="no variable of the graph named 'q'"):
        neg(x).eval({"q": 1.0})


def test_ambiguous_name_is_a_value_error():
    x1, x2 = double("x"), double("x")
    with pytest.raises(ValueError, match="2 variables of the graph named 'x'; pass the Variable itself"):
        add(x1, x2).eval({"x": 1.0})
    assert add(x1, x2).eval({x1: 1.0, x2: 2.0}) == 3.0


@pytest.mark.parametrize("key", [1, 1.5, None, ("x",)])
def test_non_variable_non_str_key_is_a_type_error(key):
    x = double("x")
    with pytest.raises(TypeError, match="eval: keys must be Variables or input names"):
        neg(x).eval({key: 1.0})


def test_value_rejected_by_type_names_input_and_type():
    x = double("x")
    with pytest.raises(TypeError) as info:
        neg(x).eval({x: 2**53 + 1})
    assert str(info.value).startswith("Bad value for input x (expected Type double): ")
    assert "cannot accurately represent" in str(info.value)
    with pytest.raises(ValueError, match=r"Bad value for input x \(expected Type double\)"):
        neg(x).eval({x: "not a number"})
    i = integer("i")
    with pytest.raises(TypeError, match=r"Bad value for input i \(expected Type int\): expected an int"):
        i.eval({i: 2.5})


def test_rejected_value_with_an_unusual_exception_class_keeps_it():
    class TwoArgError(ValueError):
        def __init__(self, code, detail):
            super().__init__(f"{code}: {detail}")

    class Picky(Type):
        def filter(self, data, strict=False, allow_downcast=None):
            raise TwoArgError(7, "no")

    p = Picky()("p")
    with pytest.raises(TwoArgError) as info:
        p.eval({p: 1})
    assert str(info.value) == "7: no"
    assert any("Bad value for input p (expected Type Picky)" in n for n in info.value.__notes__)


def test_missing_input_names_variable_and_type():
    x, y = double("x"), double("y")
    z = add(x, y)
    with pytest.raises(MissingInputError) as info:
        z.eval({x: 1.0})
    msg = str(info.value)
    assert "no value given for input y of Type double" in msg
    assert "used by add(x, y)" in msg
    assert info.value.variable is y


def test_missing_input_that_is_the_output():
    x = double("x")
    with pytest.raises(MissingInputError, match="no value given for input x of Type double") as info:
        x.eval()
    assert info.value.variable is x


def test_intermediate_variables_can_be_given():
    op = Counting()
    x, y = double("x"), double("y")
    z = op(add(x, y))
    w = mul(z, 10.0)
    assert w.eval({z: 4.0}) == 40.0  # no x, y needed: the graph is cut at z
    assert op.runs == 0
    assert w.eval({x: 1.0, y: 2.0}) == 30.0
    assert op.runs == 1
    # given values win over what the graph would compute
    assert w.eval({z: 4.0, x: 1.0, y: 2.0}, on_unused_input="ignore") == 40.0
    assert op.runs == 1


def test_one_given_output_of_a_multi_output_node():
    x, y = double("x"), double("y")
    q, r = divmod_op(x, y)
    assert add(q, r).eval({x: 7.0, y: 2.0}) == 4.0
    assert add(q, r).eval({q: 100.0, x: 7.0, y: 2.0}) == 101.0
    assert add(q, r).eval({r: 100.0, x: 7.0, y: 2.0}) == 103.0
    assert add(q, q).eval({q: 100.0}) == 200.0


def test_constants_are_used():
    x = double("x")
    assert add(x, 1.5).eval({x: 1.0}) == 2.5
    assert add(1.0, 2.0).eval() == 3.0
    assert add(1.0, 2.0).eval({}) == 3.0
    c = double.make_constant(4.0)
    assert c.eval() == 4.0
    assert isinstance(add(x, 1.5).owner.inputs[1], Constant)


def test_node_error_keeps_its_type_and_gains_a_note():
    x, y = double("x"), double("y")
    node = Apply(Fails(), [x, y], [double()])  # SITE-FAIL
    out = add(node.outputs[0], 1.0)
    with pytest.raises(ZeroDivisionError) as info:
        out.eval({x: 1.0, y: 2.0})
    assert str(info.value) == "boom"
    (note,) = info.value.__notes__
    assert "Apply node that caused the error: Fails(x, y)" in note
    assert "input 0 (x): Type double, value of Python type float" in note
    assert "input 1 (y): Type double" in note
    assert f'File "{__file__}", line {_line_of("# SITE-FAIL")}' in note
    assert "SITE-FAIL" in note


def test_node_error_note_points_at_the_line_that_used_the_op():
    x = double("x")
    out = Fails()(x)  # USED-HERE
    with pytest.raises(ZeroDivisionError) as info:
        out.eval({x: 1.0})
    # not the `return Apply(...)` inside Fails.make_node: the line that called the Op
    assert __file__ in info.value.__notes__[0]
    assert "out = Fails()(x)  # USED-HERE" in info.value.__notes__[0]


def test_node_error_note_has_shapes_and_dtypes():
    a, b = Arr()("a"), Arr()("b")
    failing = Fails()(ArrSum()(a, b))
    with pytest.raises(ZeroDivisionError) as info:
        failing.eval({a: np.zeros((2, 3)), b: np.ones((2, 3))})
    assert "input 0 (ArrSum.0): Type Arr, shape (2, 3), dtype float64" in info.value.__notes__[0]


def test_describe_node_failure_directly():
    x = double("x")
    node = neg(x).owner
    text = describe_node_failure(node, [None])
    assert text.splitlines()[0] == "Apply node that caused the error: neg(x)"
    assert "input 0 (x): Type double, value of Python type NoneType" in text
    assert "Node created at: " in text


def test_perform_that_sets_no_output_names_the_op():
    x = double("x")
    with pytest.raises(ValueError, match=r"SetsNothing.perform did not set output 0 of SetsNothing\(x\)"):
        SetsNothing()(x).eval({x: 1.0})


def test_perform_that_sets_no_intermediate_output_names_the_op():
    x = double("x")
    with pytest.raises(ValueError, match=r"SetsNothing.perform did not set output 0"):
        neg(SetsNothing()(x)).eval({x: 1.0})


def test_multi_output_nodes():
    x, y = double("x"), double("y")
    q, r = divmod_op(x, y)
    assert q.eval({x: 17.0, y: 5.0}) == 3.0
    assert r.eval({x: 17.0, y: 5.0}) == 2.0
    assert evaluate([q, r], {x: 17.0, y: 5.0}) == [3.0, 2.0]
    assert sub(q, r).eval({x: 17.0, y: 5.0}) == 1.0


def test_evaluate_several_outputs_sharing_nodes():
    op = Counting()
    x = double("x")
    a = op(x)
    b = add(a, 1.0)
    c = mul(a, 2.0)
    assert evaluate([b, c, a], {x: 3.0}) == [4.0, 6.0, 3.0]
    assert op.runs == 1


def test_reused_subexpression():
    op = Counting()
    x = double("x")
    a = op(x)
    b = add(a, a)
    c = add(b, b)
    assert c.eval({x: 1.5}) == 6.0
    assert op.runs == 1
    assert mul(c, b).eval({x: 1.0}) == 8.0


def test_deep_chain_is_not_recursive():
    x = double("x")
    out = x
    for _ in range(5000):
        out = add(out, 1.0)
    assert out.eval({x: 0.0}) == 5000.0


def test_unexpected_keyword_argument():
    x = double("x")
    assert neg(x).eval({x: 1.0}, mode="FAST_RUN") == -1.0  # keywords go to function()
    with pytest.raises(TypeError, match="bogus"):
        neg(x).eval({x: 1.0}, bogus=1)


def test_evaluate_returns_a_list():
    x = double("x")
    assert evaluate([neg(x)], {"x": 2.0}) == [-2.0]
    assert evaluate([], {}) == []


def test_graph_with_a_duck_typed_type():
    class Duck:
        """Not a Type subclass: a Type is any object with the contract's methods."""

        def filter(self, data, strict=False, allow_downcast=None):
            return str(data)

        def __str__(self):
            return "Duck"

    class Concat(Op):
        def make_node(self, a, b):
            return Apply(self, [a, b], [Variable(Duck())])

        def perform(self, node, inputs, output_storage):
            output_storage[0][0] = inputs[0] + inputs[1]

    d = Duck()
    a, b = Variable(d, name="a"), Variable(d, name="b")
    assert Concat()(a, b).eval({a: 1, b: 2}) == "12"
