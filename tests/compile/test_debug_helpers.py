"""``function_dump``, ``PrintCurrentFunctionGraph`` and ``min_informative_str``."""

from __future__ import annotations

import pickle

import numpy as np

import arignote
import arignote.tensor as pt
from arignote.compile import PrintCurrentFunctionGraph, function_dump
from arignote.graph.fg import FunctionGraph
from arignote.graph.rewriting.basic import SequentialGraphRewriter
from arignote.printing import min_informative_str


def test_function_dump_round_trip_with_shared_values_and_updates(tmp_path):
    x = pt.dvector("x")
    w = arignote.shared(np.array([1.0, 2.0]), name="w")
    path = tmp_path / "dump.pkl"
    function_dump(path, [x], (x * w).sum(), updates={w: w + 1.0}, name="f", on_unused_input="warn")
    with open(path, "rb") as fh:
        args = pickle.load(fh)
    assert args["name"] == "f" and args["on_unused_input"] == "warn"
    f = arignote.function(**args)
    assert f(np.array([1.0, 1.0])) == 3.0
    (w2,) = args["updates"]
    np.testing.assert_array_equal(w2.get_value(), [2.0, 3.0])  # the copy's value moved on
    np.testing.assert_array_equal(w.get_value(), [1.0, 2.0])  # not the original's


def test_print_current_function_graph_prints_and_changes_nothing(capsys):
    x = pt.dvector("x")
    fg = FunctionGraph([x], [pt.log(pt.exp(x))])
    before = str(fg)
    SequentialGraphRewriter(PrintCurrentFunctionGraph("here")).rewrite(fg)
    out = capsys.readouterr().out
    assert out.startswith("--- here\n") and "Log" in out and "Exp" in out
    assert str(fg) == before


def test_min_informative_str_stops_at_names_and_reuses_tags():
    x, y = pt.dvector("x"), pt.dvector("y")
    named = (x + y).sum()
    named.name = "total"
    z = pt.exp(named) * named
    assert min_informative_str(z) == "A. Mul\n B. Exp\n  C. total\n C"
    c = pt.constant(np.arange(3.0))
    text = min_informative_str(x + c)
    assert text.splitlines()[0] == "A. Add" and text.splitlines()[1] == " B. x"
    assert min_informative_str(x, indent_level=2) == "  A. x"
