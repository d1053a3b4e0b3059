"""Graph Variables as terms of logical-unification/etuples (the ``[unify]`` extra)."""

from __future__ import annotations

import pytest

pytest.importorskip("unification")
pytest.importorskip("etuples")

import numpy as np

import arignote.tensor as pt
from arignote.graph.rewriting.unify import etuple, etuplize, reify, unify


def test_etuplize_a_variable():
    x = pt.dvector("x")
    out = pt.exp(x) + 1
    e = etuplize(out)
    assert e[0] == pt.add and e[1][0] == pt.exp and e[1][1] is x
    assert e.evaled_obj is out


def test_unify_and_reify_on_variables():
    from unification import var

    x = pt.dvector("x")
    lv = var()
    s = unify(etuple(pt.exp, lv), pt.exp(x))
    assert s == {lv: x}
    assert unify(etuple(pt.log, lv), pt.exp(x)) is False
    built = reify(etuple(pt.log, lv), s).evaled_obj
    assert built.owner.op == pt.log and built.owner.inputs[0] is x
    # numbers unify with equal constants
    two = pt.constant(np.array([2.0]))
    assert unify(etuple(pt.mul, 2, lv), two * x) == {lv: x}
    assert unify(etuple(pt.mul, 3, lv), two * x) is False
