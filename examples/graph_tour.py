"""A first look at arignote's graph core: build a graph, print it, walk it, run it.

Run: python examples/graph_tour.py

Tensors come later; this example defines its own Type (the seeds' DoubleType: Python
floats) and two Ops, the way the Type and Op contracts describe.
"""

from arignote.graph.basic import Apply
from arignote.graph.fg import FunctionGraph
from arignote.graph.op import Op
from arignote.graph.traversal import ancestors, graph_inputs, io_toposort
from arignote.graph.type import Type


class DoubleType(Type):
    """Values are Python floats; ints convert when no precision is lost."""

    def filter(self, x, strict=False, allow_downcast=None):
        if strict:
            if isinstance(x, float):
                return x
            raise TypeError("expected a float!")
        if allow_downcast:
            return float(x)
        if float(x) == x:
            return float(x)
        raise TypeError(f"DoubleType cannot represent {x!r} exactly; pass allow_downcast=True")

    def __eq__(self, other):
        return type(self) is type(other)

    def __hash__(self):
        return hash(type(self))

    def __str__(self):
        return "double"


double = DoubleType()


class BinOp(Op):
    """An arithmetic Op on doubles; ``name`` is its identity (its only prop)."""

    __props__ = ("name",)
    _fns = {"add": float.__add__, "mul": float.__mul__}

    def __init__(self, name):
        self.name = name

    def make_node(self, a, b):
        a, b = (v if hasattr(v, "type") else double.make_constant(v) for v in (a, b))
        return Apply(self, [a, b], [double()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = self._fns[self.name](*inputs)

    def __str__(self):
        return self.name


add, mul = BinOp("add"), BinOp("mul")

x, y = double("x"), double("y")
b = add(x, mul(x, y))  # x + x * y
c = mul(b, b)  # (x + x * y) ** 2, with b used twice

print("c is", c, "computed by", c.owner)
print("inputs:", list(graph_inputs([c])))
print("ancestors:", [str(v) for v in ancestors([c])])
print("nodes in order:", io_toposort([x, y], [c]))

fg = FunctionGraph([x, y], [c])  # a clone with clients, as the compiler sees it
b_copy = fg.outputs[0].owner.inputs[0]
print("clients of b:", [(str(node), i) for node, i in fg.clients[b_copy]])
print("value at x=2, y=3:", c.eval({x: 2, y: 3}))

# The same ideas with tensors: `import arignote.tensor as pt` is PyTensor's array language.
import numpy as np  # noqa: E402

import arignote.tensor as pt  # noqa: E402

m = pt.dmatrix("m")
v = pt.dvector("v")
s = pt.special.softmax(m @ v + 1.0)  # Dot, then an Elemwise Add with a broadcast constant
print("softmax node:", s.owner, "of type", s.type)
print("value:", s.eval({m: np.eye(3), v: np.array([1.0, 2.0, 3.0])}))
