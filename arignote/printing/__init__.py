"""Printing graphs: :func:`debugprint` (``dprint``), :func:`pprint` and :func:`pydotprint`.

:func:`debugprint` shows a graph as an indented tree, one line per Variable, in PyTensor 3's
format: the Op (or the Variable, for inputs and constants), an id such as ``[id A]`` so that
shared sub-graphs can be recognised, and options for types, shapes, memory maps and the
toposort position of each node of a compiled function. A sub-graph met a second time is not
printed again: its line is followed by ``···``. Ops that hold a graph of their own (fused
kernels) get a section ``Inner graphs:`` at the end.

>>> import arignote.tensor as pt
>>> x = pt.dvector("x")
>>> y = pt.exp(x) + x * 2.0
>>> _ = debugprint(y)
Add [id A]
 ├─ Exp [id B]
 │  └─ x [id C]
 └─ Mul [id D]
    ├─ x [id C]
    └─ ExpandDims{axis=0} [id E]
       └─ 2.0 [id F]

:func:`pprint` writes an expression the way one would on paper:

>>> pprint(y)
'(Exp(x) + (x * 2.0))'

:func:`pydotprint` draws the graph with Graphviz (``format="dot"`` needs nothing installed;
pictures need ``pip install arignote[viz]`` and the Graphviz ``dot`` program).

Nothing here recurses on the depth of a graph: a chain of 100,000 nodes prints (with a
``depth`` limit, or in full to a file, which is quadratic in size since every line is
indented by its depth).

The modules: ``debug`` (debugprint), ``pretty`` (pprint and its printers), ``dot``
(pydotprint), ``print_op`` (the ``Print`` Op); import the names from ``arignote.printing``.
"""

# Besides __all__, the other names this module had before it became a package (the
# private one: what pickles of Print Ops made before refer to)
from arignote.printing import debug, dot, informative, pretty, print_op
from arignote.printing.debug import *  # noqa: F403
from arignote.printing.dot import *  # noqa: F403
from arignote.printing.informative import *  # noqa: F403
from arignote.printing.pretty import *  # noqa: F403
from arignote.printing.pretty import greek as greek
from arignote.printing.pretty import special as special
from arignote.printing.print_op import *  # noqa: F403
from arignote.printing.print_op import _print_value as _print_value

__all__ = [*debug.__all__, *dot.__all__, *informative.__all__, *pretty.__all__, *print_op.__all__]
