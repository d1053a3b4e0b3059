"""Two debugging helpers of PyTensor's: :func:`function_dump` (everything a ``function(...)``
call needs, pickled, to reproduce a compilation elsewhere) and
:class:`PrintCurrentFunctionGraph` (a graph rewriter that prints the graph as it is at its
place in a rewrite pipeline)."""

from __future__ import annotations

import pathlib
import pickle
import sys
from typing import Any

from arignote.graph.fg import FunctionGraph
from arignote.graph.rewriting.basic import GraphRewriter
from arignote.printing import debugprint

__all__ = ["PrintCurrentFunctionGraph", "function_dump"]


def function_dump(
    filename: str | pathlib.Path,
    inputs: Any,
    outputs: Any = None,
    mode: Any = None,
    updates: Any = None,
    givens: Any = None,
    no_default_updates: bool = False,
    accept_inplace: bool = False,
    name: str | None = None,
    rebuild_strict: bool = True,
    allow_input_downcast: bool | None = None,
    profile: Any = None,
    on_unused_input: str | None = None,
    extra_tag_to_remove: Any = None,
    trust_input: bool = False,
) -> None:
    """Pickle the arguments of a ``function(...)`` call to ``filename`` instead of compiling:
    the graph, shared variables with their values, and the options. Load and compile it with
    ``arignote.function(**pickle.load(open(filename, "rb")))``. (To leave out the values of
    large shared variables, ``set_value`` them to something small first.)
    ``extra_tag_to_remove`` is accepted for compatibility: arignote's graphs pickle without
    dropping tags.

    >>> import pickle, tempfile, os
    >>> import numpy as np
    >>> import arignote, arignote.tensor as pt
    >>> x = pt.dvector("x")
    >>> path = os.path.join(tempfile.mkdtemp(), "dump.pkl")
    >>> function_dump(path, [x], x * 2)
    >>> with open(path, "rb") as fh:
    ...     f = arignote.function(**pickle.load(fh))
    >>> f(np.array([1.0, 2.0]))
    array([2., 4.])
    """
    args = {
        "inputs": inputs,
        "outputs": outputs,
        "mode": mode,
        "updates": updates,
        "givens": givens,
        "no_default_updates": no_default_updates,
        "accept_inplace": accept_inplace,
        "name": name,
        "rebuild_strict": rebuild_strict,
        "allow_input_downcast": allow_input_downcast,
        "profile": profile,
        "on_unused_input": on_unused_input,
        "trust_input": trust_input,
    }
    limit = sys.getrecursionlimit()
    try:  # deep graphs pickle recursively
        sys.setrecursionlimit(max(limit, 100_000))
        with open(filename, "wb") as fh:
            pickle.dump(args, fh, protocol=pickle.HIGHEST_PROTOCOL)
    finally:
        sys.setrecursionlimit(limit)


class PrintCurrentFunctionGraph(GraphRewriter):
    """A rewriter that changes nothing and prints ``header`` and the graph (``debugprint``)
    each time it runs: put it into a rewrite database or a pipeline to see the graph at that
    point.

    >>> import arignote.tensor as pt
    >>> from arignote.graph.fg import FunctionGraph
    >>> x = pt.dvector("x")
    >>> PrintCurrentFunctionGraph("after stage 1").rewrite(FunctionGraph([x], [pt.exp(x)]))
    --- after stage 1
    Exp [id A] 0
     └─ x [id B]
    """

    def __init__(self, header: str):
        self.header = header
        self.name = f"PrintCurrentFunctionGraph({header!r})"

    def apply(self, fgraph: FunctionGraph, *args: Any, **kwargs: Any) -> None:
        print(f"--- {self.header}")
        debugprint(fgraph)
