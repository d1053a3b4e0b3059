"""Toy Types and Ops for testing the graph core without tensors.

``double`` is the seeds' DoubleType (Python floats); the Ops compute on floats through
``perform`` so graphs built from them can be evaluated.
"""

from __future__ import annotations

from arignote.graph.basic import Apply, Variable
from arignote.graph.op import Op
from arignote.graph.type import Type


class DoubleType(Type):
    """The seeds' example Type: Python floats."""

    def filter(self, x, strict=False, allow_downcast=None):
        if strict:
            if isinstance(x, float):
                return x
            raise TypeError("expected a float!")
        if allow_downcast:
            return float(x)
        x_float = float(x)
        if x_float == x:
            return x_float
        raise TypeError(
            f"The double type cannot accurately represent value {x} (of type {type(x)}): "
            "you must explicitly allow downcasting if you want to do this."
        )

    def values_eq_approx(self, x, y, tolerance=1e-4):
        return abs(x - y) / (abs(x) + abs(y)) < tolerance

    def __eq__(self, other):
        return type(self) is type(other)

    def __hash__(self):
        return hash(type(self))

    def __str__(self):
        return "double"


double = DoubleType()


class IntType(Type):
    """Python ints; a different Type from ``double`` (for type-mismatch tests)."""

    def filter(self, x, strict=False, allow_downcast=None):
        if isinstance(x, bool) or not isinstance(x, int):
            if strict or not float(x).is_integer():
                raise TypeError(f"expected an int, got {x!r}")
            return int(x)
        return x

    def __eq__(self, other):
        return type(self) is type(other)

    def __hash__(self):
        return hash(type(self))

    def __str__(self):
        return "int"


integer = IntType()


def as_double(x) -> Variable:
    return x if isinstance(x, Variable) else double.make_constant(x)


class BinaryOp(Op):
    """``fn(a, b)`` on doubles."""

    __props__ = ("name",)
    nin = 2

    def __init__(self, name, fn):
        self.name = name
        self.fn = fn

    def make_node(self, *inputs):
        if len(inputs) != self.nin:
            raise TypeError(f"{self.name} takes {self.nin} inputs, got {len(inputs)}")
        inputs = [as_double(i) for i in inputs]
        for i in inputs:
            if i.type != double:
                raise TypeError(f"{self.name}: expected a double input, got {i.type}")
        return Apply(self, inputs, [double()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = self.fn(*inputs)

    def __str__(self):
        return self.name


class UnaryOp(BinaryOp):
    nin = 1


add = BinaryOp("add", lambda a, b: a + b)
mul = BinaryOp("mul", lambda a, b: a * b)
sub = BinaryOp("sub", lambda a, b: a - b)
neg = UnaryOp("neg", lambda a: -a)


class DivMod(Op):
    """Two outputs: quotient and remainder; ``default_output`` unset."""

    __props__ = ()

    def make_node(self, a, b):
        a, b = as_double(a), as_double(b)
        return Apply(self, [a, b], [double(), double()])

    def perform(self, node, inputs, output_storage):
        q, r = divmod(*inputs)
        output_storage[0][0] = float(q)
        output_storage[1][0] = float(r)


divmod_op = DivMod()
