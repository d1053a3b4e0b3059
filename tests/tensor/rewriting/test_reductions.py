"""The sum rules (arignote/tensor/rewriting/reductions.py): a factor that is the same along the
summed axes moves out of the sum. Each case is checked for structure (where the division or
negation ended up) and value (the unrewritten graph's, FAST_RUN's and the rules' structure
agree, with the output's Type unchanged)."""

from __future__ import annotations

import numpy as np
import pytest

import arignote
import arignote.tensor as pt
from arignote.graph.fg import FunctionGraph
from arignote.graph.rewriting.basic import apply_node_rewriters
from arignote.graph.traversal import ancestors
from arignote.scalar import basic as ps
from arignote.tensor.elemwise import Elemwise
from arignote.tensor.products import Dot
from arignote.tensor.reductions import Prod, Sum
from arignote.tensor.rewriting import reductions as rules
from arignote.tensor.type import tensor
from tests.tensor.rewriting.test_math import RNG, STRUCTURE, UNREWRITTEN, check

RULES = [rules.local_sum_of_neg, rules.local_sum_of_mul_or_div]


def _rewritten(inputs, outputs) -> tuple[FunctionGraph, int]:
    fg = FunctionGraph(list(inputs), list(outputs))
    return fg, apply_node_rewriters(fg, RULES)


def _summed_op(fg: FunctionGraph):
    """The scalar op of the Elemwise a Sum of ``fg`` reads (None: an input)."""
    (node,) = [n for n in fg.apply_nodes if type(n.op) is Sum]
    owner = node.inputs[0].owner
    return None if owner is None else type(owner.op.scalar_op)


def _sum_reads(f, scalar_op: type) -> bool:
    """Whether a Sum of the compiled ``f`` reads an Elemwise of ``scalar_op``."""
    for n in f.maker.fgraph.apply_nodes:
        owner = n.inputs[0].owner if isinstance(n.op, Sum) else None
        if owner is not None and isinstance(owner.op, Elemwise) and isinstance(owner.op.scalar_op, scalar_op):
            return True
    return False


def test_rules_are_registered_in_specialize() -> None:
    from arignote.graph.rewriting.db import rewrite_registry

    spec = {r.name for r in rewrite_registry.query("specialize", ["fast_run"])}
    assert {"local_sum_of_neg", "local_sum_of_mul_or_div"} <= spec


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_sum_of_a_negation(dtype: str) -> None:
    x = pt.matrix("x", dtype=dtype)
    fg, n = _rewritten([x], [(-x).sum(), (-x).sum(axis=1)])
    assert n == 2
    for out in fg.outputs:
        assert isinstance(out.owner.op.scalar_op, ps.Neg) and isinstance(out.owner.inputs[0].owner.op, Sum)
    f = check([x], [(-x).sum(), (-x).sum(axis=1), (-x).sum(axis=0, dtype="float64")])
    assert not _sum_reads(f, ps.Neg)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_sum_of_a_division_by_a_broadcast_value(dtype: str) -> None:
    x = pt.matrix("x", dtype=dtype)
    s = pt.scalar("s", dtype=dtype)
    col = tensor("col", dtype=dtype, shape=(None, 1))
    # the division by a scalar leaves every sum; by a column, the sums over rows only
    outs = [(x / s).sum(), (x / s).sum(axis=0), (x / col).sum(axis=1), (x / col).sum(axis=0)]
    fg, n = _rewritten([x, s, col], outs)
    assert n == 3
    divided_after = [
        isinstance(o.owner.op, Elemwise) and isinstance(o.owner.op.scalar_op, ps.TrueDiv) for o in fg.outputs
    ]
    assert divided_after == [True, True, True, False]
    check([x, s, col], outs, positive=True)


def test_sum_of_a_division_of_a_broadcast_value_keeps_its_divisions() -> None:
    x, s = pt.dvector("x"), pt.dscalar("s")
    fg, n = _rewritten([x, s], [(s / x).sum()])
    assert n == 0
    check([x, s], (s / x).sum(), positive=True)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_sum_of_a_product_with_broadcast_factors(dtype: str) -> None:
    x, y = pt.matrix("x", dtype=dtype), pt.matrix("y", dtype=dtype)
    s = pt.scalar("s", dtype=dtype)
    row = tensor("row", dtype=dtype, shape=(1, None))
    outs = [(s * x * row).sum(axis=0), (x * y * s).sum(), (2.5 * x).sum(axis=1), (x * row).sum(axis=1)]
    fg, n = _rewritten([x, y, s, row], outs)
    assert n == 3
    xc, sc = fg.inputs[0], fg.inputs[2]  # (the graph's copies)
    # s * row * sum(x): both factors outside, from the nested product
    first = fg.outputs[0].owner
    assert isinstance(first.op.scalar_op, ps.Mul) and len(first.inputs) == 3
    assert isinstance(first.inputs[2].owner.op, Sum) and first.inputs[2].owner.inputs[0] is xc
    assert first.inputs[0].owner.inputs[0] is sc and first.inputs[1].owner.inputs[0] is fg.inputs[3]
    # s * sum(x * y): the product of the two matrices stays inside
    second = fg.outputs[1].owner
    assert second.inputs[0] is sc and isinstance(second.inputs[1].owner.op, Sum)
    assert isinstance(second.inputs[1].owner.inputs[0].owner.op.scalar_op, ps.Mul)
    # (2.5 * x).sum(axis=1): the constant outside (broadcast along the kept axis)
    third = fg.outputs[2].owner
    assert third.inputs[0].owner.inputs[0].data == 2.5 and third.inputs[1].owner.inputs[0] is xc
    # (x * row).sum(axis=1): the row varies along the summed axis: nothing moves
    assert _summed_op(FunctionGraph([x, row], [outs[3]], clone=False)) is ps.Mul
    check([x, y, s, row], outs)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_factors_inside_squares_negations_and_products(dtype: str) -> None:
    x, y = pt.matrix("x", dtype=dtype), pt.matrix("y", dtype=dtype)
    s, t = pt.scalar("s", dtype=dtype), pt.scalar("t", dtype=dtype)
    outs = [
        pt.sqr(x / s).sum(),  # sum(sqr(x)) / sqr(s)
        (-(x / s) * y).sum(axis=0),  # -(sum(x * y) / s)
        (pt.sqr(t * x) / s).sum(axis=1),  # sqr(t) * sum(sqr(x)) / s
        (-(x / s) * (y / t)).sum(),  # -(sum(x * y) / (s * t))
    ]
    fg, n = _rewritten([x, y, s, t], outs)
    assert n == 4
    for out in fg.outputs:  # no division left under a Sum; each Sum reads x (or x * y)
        sums = [v.owner for v in ancestors([out]) if v.owner is not None and type(v.owner.op) is Sum]
        assert len(sums) == 1
        under = ancestors(sums[0].inputs)
        assert not any(
            v.owner is not None and isinstance(getattr(v.owner.op, "scalar_op", None), ps.TrueDiv)
            for v in under
        )
    first = fg.outputs[0].owner
    assert isinstance(first.op.scalar_op, ps.TrueDiv)
    assert isinstance(first.inputs[0].owner.inputs[0].owner.op.scalar_op, ps.Sqr)
    assert isinstance(fg.outputs[1].owner.op.scalar_op, ps.Neg)
    check([x, y, s, t], outs, positive=True)


def test_what_is_left_as_it_is() -> None:
    i, j = pt.ivector("i"), pt.iscalar("j")
    x, s = pt.dvector("x"), pt.dscalar("s")
    f32 = pt.fvector("f32")
    cases = [
        (-i).sum(),  # integers wrap before an int64 sum
        (i * j).sum(),
        (x / s).prod(),  # prod(x) / s ** n overflows where the product is finite
        (-x).prod(),
        (x * s).sum(dtype="float32"),  # s * sum(x) would be float64
        (f32 * s).sum(),  # f32 promoted by s: sum(f32) would add float32 values
        pt.sqr(x * x).sum(),  # nothing to move
        (x / (s * x)).sum(),  # the denominator varies
        pt.exp(x / s).sum(),  # not through other functions
    ]
    for out in cases:
        inputs = [v for v in (i, j, x, s, f32) if v in ancestors([out])]
        _, n = _rewritten(inputs, [out])
        assert n == 0, out
    check([x, s, f32], [(x * s).sum(dtype="float32"), (f32 * s).sum()])


def test_mixed_float_dtypes() -> None:
    """A float32 sum accumulated in float64 of a division by a float32 scalar, and a
    float64 scale of a float32 product of float32 vectors."""
    f32, g32, t = pt.fvector("f32"), pt.fvector("g32"), pt.fscalar("t")
    s = pt.dscalar("s")
    outs = [(f32 / t).sum(dtype="float64"), (-f32).sum(dtype="float64"), (s * (f32 * g32)).sum()]
    fg, n = _rewritten([f32, g32, t, s], outs)
    assert n == 2  # the last: s * (f32 * g32) is a float64 product of a promoted vector
    values = [np.abs(RNG.normal(size=5)).astype("float32") + 0.5 for _ in range(2)]
    values += [np.float32(1.7), np.float64(0.3)]
    want = arignote.function([f32, g32, t, s], outs, mode=UNREWRITTEN)(*values)
    got = arignote.function([f32, g32, t, s], outs)(*values)
    for g, w in zip(got, want):  # (float32 quotients summed, or one float64 quotient)
        assert g.dtype == w.dtype == np.float64
        np.testing.assert_allclose(g, w, rtol=1e-6)


def test_a_prod_is_not_a_sum() -> None:
    x, s = pt.dvector("x"), pt.dscalar("s")
    out = (x * s).prod()
    fg, n = _rewritten([x, s], [out])
    assert n == 0 and isinstance(fg.outputs[0].owner.op, Prod)
    check([x, s], [out, (x / s).prod(), (-x).prod()], positive=True)


def test_a_gradient_through_a_scale_divides_once() -> None:
    """The hierarchical model's shape: ``sum(((y - m) / sigma) ** 2)``, whose gradient in
    ``sigma`` is a sum of divisions by ``sigma ** 2``: after the rules (and
    ``local_div_of_div``), the loop over the data divides once per element, for the one
    output that needs each element's quotient."""
    y, m, log_sigma = pt.dvector("y"), pt.dvector("m"), pt.dscalar("log_sigma")
    sigma = pt.exp(log_sigma)
    logp = (-0.5 * ((y - m) / sigma) ** 2).sum() - y.shape[0] * log_sigma
    grads = arignote.grad(logp, [m, log_sigma])
    f = check([y, m, log_sigma], [logp, *grads])
    g = arignote.function([y, m, log_sigma], [logp, *grads], mode=STRUCTURE)
    divisions = [
        n
        for n in g.maker.fgraph.apply_nodes
        if isinstance(n.op, Elemwise)
        and isinstance(n.op.scalar_op, ps.TrueDiv)
        and n.outputs[0].type.ndim == 1
    ]
    # only the gradient in m, (y - m) / (sigma * sigma): the sums divide their totals
    assert len(divisions) == 1
    assert not _sum_reads(f, ps.TrueDiv) and not _sum_reads(g, ps.TrueDiv)


def test_a_sum_of_a_product_with_an_elemwise_result_is_not_a_dot() -> None:
    """``sum(exp(x) * y)``: the product joins the exp's loop, where the compiled function
    accumulates the sum; a Dot would read both vectors again (``local_sum_of_mul_to_dot``)."""
    x, y = pt.dvectors("x", "y")
    f = check([x, y], (pt.exp(x) * y).sum())
    assert not any(isinstance(n.op, Dot) for n in f.maker.fgraph.apply_nodes)
    f = check([x, y], (x * y).sum())  # two inputs: the inner product
    assert [type(n.op) for n in f.maker.fgraph.toposort()] == [Dot]
