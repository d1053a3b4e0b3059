"""add_supervisor_to_fgraph and a mode's rewrites run on a FunctionGraph by hand: what code
that compiles a graph itself (PyMC's JAX samplers) does, with PyTensor's names."""

from __future__ import annotations

import numpy as np
import pytest

import arignote.tensor as pt
from arignote.compile import FAST_RUN, In, Supervisor, add_supervisor_to_fgraph
from arignote.compile.aliasing import Supervisor as face_supervisor
from arignote.graph.destroyhandler import Supervisor as home_supervisor
from arignote.graph.fg import FunctionGraph
from arignote.link.vm import VMLinker


def _in_place_nodes(fg: FunctionGraph) -> list:
    return [n for n in fg.toposort() if getattr(n.op, "destroy_map", None)]


def _run(fg: FunctionGraph, *values: np.ndarray) -> list:
    runner, outputs = VMLinker().make_vm(fg, [[v] for v in values], [])
    runner()
    return [cell[0] for cell in outputs]


def test_the_names_are_one_class():
    assert Supervisor is face_supervisor is home_supervisor


@pytest.mark.parametrize("mutable", [False, True])
def test_fast_run_rewrites_overwrite_only_a_mutable_input(mutable):
    x = pt.dvector("x")
    y = pt.inc_subtensor(x[1:], 1.0)  # in place into x where x may be overwritten
    fg = FunctionGraph([x], [y * 2.0], clone=True)
    add_supervisor_to_fgraph(fg, [In(x, mutable=mutable)])
    FAST_RUN.optimizer.rewrite(fg)
    assert any(n.inputs[0] is fg.inputs[0] for n in _in_place_nodes(fg)) == mutable
    value = np.array([1.0, 2.0, 3.0])
    kept = value.copy()
    (out,) = _run(fg, value)
    np.testing.assert_allclose(out, [2.0, 6.0, 8.0])
    if not mutable:
        np.testing.assert_array_equal(value, kept)


def test_a_graph_already_in_place_is_refused_unless_accepted():
    x = pt.dvector("x")
    y = pt.exp(x)
    fg = FunctionGraph([x], [pt.inc_subtensor(y[1:], 1.0, inplace=True)], clone=False)
    with pytest.raises(TypeError, match="must not contain in-place operations.*IncSubtensor"):
        add_supervisor_to_fgraph(fg, [In(x)])
    add_supervisor_to_fgraph(fg, [In(x)], accept_inplace=True)
    assert fg._supervisor.protected == [x] and fg.has_destroyers([y])


def test_specs_must_match_the_inputs():
    x, w = pt.dvector("x"), pt.dvector("w")
    fg = FunctionGraph([x, w], [x + w], clone=False)
    with pytest.raises(ValueError, match="1 input specs for 2 inputs"):
        add_supervisor_to_fgraph(fg, [In(x)])


def test_a_mode_query_rewrites_a_graph_as_function_does():
    x = pt.dvector("x")
    out = pt.log(1 + pt.exp(x))  # softplus, stabilised by the rewrites
    fg = FunctionGraph([x], [out], clone=True)
    fg.attach_feature(Supervisor(fg.inputs))
    timings = FAST_RUN.optimizer.rewrite(fg)
    assert "stabilize" in timings
    assert FAST_RUN.provided_optimizer is FAST_RUN.optimizer and FAST_RUN.provided_linker is FAST_RUN.linker
    (got,) = _run(fg, np.array([-800.0, 0.0, 800.0]))
    np.testing.assert_allclose(got, [0.0, np.log(2.0), 800.0])
