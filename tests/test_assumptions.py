"""arignote.assumptions (pytensor.assumptions's path) and the linear algebra rewrites that use
it (arignote.tensor.rewriting.linalg): facts declared, inferred from Ops and constants, joined
through implications; each rewrite checked structurally (the LAPACK Op is gone) and by value
against the unrewritten graph (FAST_COMPILE keeps the Op) on matrices with the structure."""

from __future__ import annotations

import numpy as np
import pytest

import arignote
import arignote.tensor as pt
from arignote.assumptions import (
    ALL_KEYS,
    DIAGONAL,
    IMPLIES,
    LOWER_TRIANGULAR,
    ORTHOGONAL,
    PERMUTATION,
    POSITIVE_DEFINITE,
    SELECTION,
    SYMMETRIC,
    UPPER_TRIANGULAR,
    AssumptionFeature,
    AssumptionKey,
    ConflictingAssumptionsError,
    FactState,
    SpecifyAssumptions,
    assume,
    assumption_tags,
    check_assumption,
    register_assumption,
    register_implies,
    summarize_assumptions,
)
from arignote.graph.fg import FunctionGraph
from arignote.graph.op import Op
from arignote.graph.rewriting.utils import rewrite_graph
from arignote.tensor.linalg.decompositions import Cholesky
from arignote.tensor.linalg.inverse import Det, MatrixInverse
from arignote.tensor.linalg.solve import Solve, SolveTriangular

RNG = np.random.default_rng(7)


def facts(var) -> dict:
    feature = AssumptionFeature()
    return {k: feature.get(var, k) for k in ALL_KEYS}


def ops_of(f) -> list[type]:
    out = []
    for node in f.maker.fgraph.apply_nodes:
        op = getattr(node.op, "core_op", node.op)
        out.append(type(op))
    return out


def both(inputs, output, values):
    """The FAST_RUN function (rewritten) and its value, and the FAST_COMPILE value (no
    specialize stage: the Op itself)."""
    fast = arignote.function(inputs, output)
    ref = arignote.function(inputs, output, mode="FAST_COMPILE")
    return fast, fast(*values), ref(*values)


def spd(n: int) -> np.ndarray:
    m = RNG.normal(size=(n, n))
    return m @ m.T + n * np.eye(n)


# --- facts -------------------------------------------------------------------------------------------


def test_fact_states_join_and_keys():
    assert FactState.TRUE | FactState.FALSE == FactState.CONFLICT
    assert FactState.UNKNOWN | FactState.TRUE == FactState.TRUE
    assert FactState.of(None) == FactState.UNKNOWN and FactState.of(False) == FactState.FALSE
    assert DIAGONAL.name == "diagonal" and DIAGONAL.label == "diag" and len(set(ALL_KEYS)) == 8
    assert set(IMPLIES[DIAGONAL]) == {LOWER_TRIANGULAR, UPPER_TRIANGULAR, SYMMETRIC}
    assert set(IMPLIES[PERMUTATION]) == {SELECTION, ORTHOGONAL} and IMPLIES[POSITIVE_DEFINITE] == [SYMMETRIC]


def test_declared_facts_and_implications():
    x = pt.dmatrix("x")
    d = facts(assume(x, diagonal=True))
    assert d[DIAGONAL] == d[SYMMETRIC] == d[LOWER_TRIANGULAR] == d[UPPER_TRIANGULAR] == FactState.TRUE
    assert d[POSITIVE_DEFINITE] == FactState.UNKNOWN
    # not symmetric: then neither diagonal nor positive definite
    ns = facts(assume(x, symmetric=False))
    assert ns[DIAGONAL] == ns[POSITIVE_DEFINITE] == FactState.FALSE and ns[ORTHOGONAL] == FactState.UNKNOWN
    assert facts(x)[DIAGONAL] == FactState.UNKNOWN
    assert assume(x) is x  # nothing declared: nothing added
    assert isinstance(assume([x, x], orthogonal=True), list)
    op = assume(x, symmetric=True, diagonal=False).owner.op
    assert op == SpecifyAssumptions({"diagonal": FactState.FALSE, "symmetric": FactState.TRUE})
    assert str(op) == "SpecifyAssumptions{!diagonal, symmetric}"


def test_what_ops_and_constants_show():
    x, v = pt.dmatrix("x"), pt.dvector("v")
    d = assume(x, diagonal=True)
    low = assume(x, lower_triangular=True)
    assert facts(pt.eye(3))[PERMUTATION] == FactState.TRUE  # identity: a permutation, PD, orthogonal
    assert facts(pt.eye(3))[POSITIVE_DEFINITE] == FactState.TRUE
    assert (
        facts(pt.eye(3, 4))[DIAGONAL] == FactState.TRUE
        and facts(pt.eye(3, 4))[ORTHOGONAL] == FactState.UNKNOWN
    )
    assert facts(pt.eye(3, k=1))[DIAGONAL] == FactState.UNKNOWN
    assert facts(pt.diag(v))[DIAGONAL] == FactState.TRUE
    assert (
        facts(low.T)[UPPER_TRIANGULAR] == FactState.TRUE
        and facts(low.T)[LOWER_TRIANGULAR] == FactState.UNKNOWN
    )
    assert facts(pt.linalg.cholesky(x))[LOWER_TRIANGULAR] == FactState.TRUE
    assert facts(pt.linalg.cholesky(x, lower=False))[UPPER_TRIANGULAR] == FactState.TRUE
    assert facts(x @ x.T)[SYMMETRIC] == FactState.TRUE and facts(x.T @ x)[SYMMETRIC] == FactState.TRUE
    assert facts(x @ x)[SYMMETRIC] == FactState.UNKNOWN
    assert facts(d @ d)[DIAGONAL] == FactState.TRUE and facts(d @ x)[DIAGONAL] == FactState.UNKNOWN
    assert facts(d * x)[DIAGONAL] == FactState.TRUE  # zeros stay zeros
    assert facts(d * 3.0)[DIAGONAL] == FactState.TRUE and facts(d + 1.0)[DIAGONAL] == FactState.UNKNOWN
    assert facts(d * v)[DIAGONAL] == FactState.TRUE and facts(d + v)[SYMMETRIC] == FactState.UNKNOWN
    assert facts(d + 1.0)[SYMMETRIC] == FactState.TRUE and facts(-low)[LOWER_TRIANGULAR] == FactState.TRUE
    pd = assume(x, positive_definite=True)
    assert (
        facts(pd + pd)[POSITIVE_DEFINITE] == FactState.TRUE
        and facts(pd - pd)[POSITIVE_DEFINITE] == FactState.UNKNOWN
    )
    assert facts(pt.linalg.inv(pd))[POSITIVE_DEFINITE] == FactState.TRUE
    stack = assume(pt.dtensor3("s"), upper_triangular=True)
    assert facts(stack[None])[UPPER_TRIANGULAR] == FactState.TRUE  # a new batch dimension
    assert facts(pt.linalg.inv(stack))[UPPER_TRIANGULAR] == FactState.TRUE  # Blockwise: the core Op's rule
    c = facts(pt.constant(np.array([[0.0, 1.0], [1.0, 0.0]])))
    assert (
        c[PERMUTATION] == c[SYMMETRIC] == FactState.TRUE
        and c[DIAGONAL] == c[POSITIVE_DEFINITE] == FactState.FALSE
    )
    assert facts(pt.constant(spd(3)))[POSITIVE_DEFINITE] == FactState.TRUE


def test_conflicts_are_errors():
    v = pt.dvector("v")
    with pytest.raises(ConflictingAssumptionsError, match="declared not diagonal, but the graph shows"):
        assume(pt.diag(v), diagonal=False)
    with pytest.raises(ConflictingAssumptionsError, match="declared not symmetric"):
        assume(pt.eye(3), symmetric=False)  # through an implication: diagonal, so symmetric
    with pytest.raises(
        ConflictingAssumptionsError, match="declared positive_definite, but the graph shows it is not"
    ):
        facts(assume(assume(pt.dmatrix("x"), symmetric=False), positive_definite=True))


def test_bad_declarations_say_what_is_wrong():
    with pytest.raises(TypeError, match="matrix assumptions need a matrix"):
        assume(pt.dvector("v"), diagonal=True)
    with pytest.raises(TypeError, match="diagonal must be True, False or None, got 1"):
        assume(pt.dmatrix("x"), diagonal=1)
    with pytest.raises(ValueError, match="unknown assumption 'banded'"):
        SpecifyAssumptions({"banded": FactState.TRUE})


def test_check_assumption_attaches_one_feature_and_follows_changes():
    x = pt.dmatrix("x")
    y = pt.exp(assume(x, diagonal=True))
    fg = FunctionGraph([x], [y, assume(x, diagonal=True)])
    spec = fg.outputs[1]
    assert check_assumption(fg, spec, SYMMETRIC) and not check_assumption(fg, fg.outputs[0], DIAGONAL)
    assert sum(isinstance(f, AssumptionFeature) for f in fg._features) == 1
    check_assumption(fg, spec, DIAGONAL)
    assert sum(isinstance(f, AssumptionFeature) for f in fg._features) == 1
    assert check_assumption(None, spec, DIAGONAL) and not check_assumption(None, 3.0, DIAGONAL)
    # the declaration drained into the feature survives the node's removal
    rewrite_graph(fg, include=("canonicalize",))
    assert not any(isinstance(n.op, SpecifyAssumptions) for n in fg.apply_nodes)
    assert check_assumption(fg, fg.outputs[1], DIAGONAL)


def test_summaries_and_tags():
    x = pt.dmatrix("x")
    feature = AssumptionFeature()
    assert summarize_assumptions(feature, assume(x, diagonal=True)) == "{diag}"
    assert summarize_assumptions(feature, assume(x, symmetric=False)) == "{!sym}"
    assert summarize_assumptions(feature, assume(x, permutation=True)) == "{perm}"
    assert summarize_assumptions(feature, x) == ""
    y = assume(x, positive_definite=True)
    tags = assumption_tags(pt.linalg.inv(y))
    assert tags[y] == "{pd}" and x not in tags


def test_user_keys_rules_and_implications():
    banded = AssumptionKey("tridiagonal_test", "tri")

    class Tridiag(Op):
        __props__ = ()

        def make_node(self, v):
            v = pt.as_tensor_variable(v)
            return arignote.graph.basic.Apply(self, [v], [pt.dmatrix()])

        def perform(self, node, inputs, out):
            out[0][0] = np.diag(inputs[0]) + np.diag(inputs[0][1:], 1) + np.diag(inputs[0][1:], -1)

    @register_assumption(SYMMETRIC, Tridiag)
    def _sym(key, op, feature, fgraph, node, states):
        return [FactState.TRUE]

    register_implies(DIAGONAL, banded)
    try:
        m = Tridiag()(pt.dvector("v"))
        assert facts(m)[SYMMETRIC] == FactState.TRUE
        assert AssumptionFeature().get(assume(pt.dmatrix(), diagonal=True), SYMMETRIC) == FactState.TRUE
    finally:
        IMPLIES[DIAGONAL].remove(banded)


# --- the rewrites --------------------------------------------------------------------------------


@pytest.mark.parametrize("b_shape", [(4,), (4, 2)])
def test_solve_with_a_diagonal_matrix_divides(b_shape):
    a, b = pt.dmatrix("a"), pt.tensor("b", dtype="float64", shape=(None,) * len(b_shape))
    x = pt.linalg.solve(assume(a, diagonal=True), b, b_ndim=len(b_shape))
    av, bv = np.diag(RNG.uniform(1, 3, 4)), RNG.normal(size=b_shape)
    f, got, want = both([a, b], x, [av, bv])
    assert Solve not in ops_of(f)
    np.testing.assert_allclose(got, want)
    np.testing.assert_allclose(got, np.linalg.solve(av, bv))


@pytest.mark.parametrize("lower", [True, False])
def test_solve_with_a_triangular_matrix_is_a_triangular_solve(lower):
    a, b = pt.dmatrix("a"), pt.dvector("b")
    key = {"lower_triangular": True} if lower else {"upper_triangular": True}
    f, got, want = both([a, b], pt.linalg.solve(assume(a, **key), b), [_tri(lower), RNG.normal(size=4)])
    assert SolveTriangular in ops_of(f) and Solve not in ops_of(f)
    np.testing.assert_allclose(got, want)
    lowered = [n.op for n in f.maker.fgraph.apply_nodes if isinstance(n.op, SolveTriangular)]
    assert lowered[0].lower is lower


def _tri(lower: bool) -> np.ndarray:
    m = RNG.normal(size=(4, 4)) + 4 * np.eye(4)
    return np.tril(m) if lower else np.triu(m)


def test_solve_with_positive_definite_symmetric_and_orthogonal_matrices():
    a, b = pt.dmatrix("a"), pt.dmatrix("b")
    bv = RNG.normal(size=(4, 3))
    f, got, want = both([a, b], pt.linalg.solve(assume(a, positive_definite=True), b), [spd(4), bv])
    assert [n.op.assume_a for n in f.maker.fgraph.apply_nodes if isinstance(n.op, Solve)] == ["pos"]
    np.testing.assert_allclose(got, want)
    sym = spd(4) - 10 * np.eye(4)  # symmetric, indefinite
    f, got, want = both([a, b], pt.linalg.solve(assume(a, symmetric=True), b), [sym, bv])
    assert [n.op.assume_a for n in f.maker.fgraph.apply_nodes if isinstance(n.op, Solve)] == ["sym"]
    np.testing.assert_allclose(got, want)
    q, _ = np.linalg.qr(RNG.normal(size=(4, 4)))
    f, got, want = both([a, b], pt.linalg.solve(assume(a, orthogonal=True), b), [q, bv])
    assert Solve not in ops_of(f)
    np.testing.assert_allclose(got, want, atol=1e-12)
    # what the graph shows: x @ x.T + I is symmetric (not declared)
    f, got, want = both([a, b], pt.linalg.solve(a @ a.T + pt.eye(4), b), [RNG.normal(size=(4, 4)), bv])
    assert [n.op.assume_a for n in f.maker.fgraph.apply_nodes if isinstance(n.op, Solve)] == ["sym"]
    np.testing.assert_allclose(got, want)


def test_no_fact_no_rewrite():
    a, b = pt.dmatrix("a"), pt.dvector("b")
    f = arignote.function([a, b], [pt.linalg.solve(a, b), pt.linalg.det(a), pt.linalg.inv(a)])
    assert {Solve, Det, MatrixInverse} <= set(ops_of(f))


def test_inverse_determinant_and_cholesky_of_structured_matrices():
    a = pt.dmatrix("a")
    dv = np.diag(RNG.uniform(1, 3, 4))
    d = assume(a, diagonal=True)
    f, got, want = both([a], [pt.linalg.inv(d), pt.linalg.det(d), pt.linalg.cholesky(d)], [dv])
    assert not {MatrixInverse, Det, Cholesky} & set(ops_of(f))
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w)
    np.testing.assert_allclose(got[2], np.linalg.cholesky(dv))
    f, got, want = both([a], pt.linalg.det(assume(a, upper_triangular=True)), [_tri(False)])
    assert Det not in ops_of(f)
    np.testing.assert_allclose(got, want)
    q, _ = np.linalg.qr(RNG.normal(size=(4, 4)))
    f, got, want = both([a], pt.linalg.inv(assume(a, orthogonal=True)), [q])
    assert MatrixInverse not in ops_of(f)
    np.testing.assert_allclose(got, want, atol=1e-12)
    # a stack of triangular matrices: the Blockwise determinant
    s = pt.dtensor3("s")
    sv = np.stack([_tri(True), _tri(True)])
    f, got, want = both([s], pt.linalg.det(assume(s, lower_triangular=True)), [sv])
    assert Det not in ops_of(f)
    np.testing.assert_allclose(got, np.linalg.det(sv))


def test_gradients_pass_through_the_declaration():
    a, b = pt.dmatrix("a"), pt.dvector("b")
    cost = pt.linalg.solve(assume(a, diagonal=True), b).sum()
    av, bv = np.diag([2.0, 4.0]), np.array([1.0, 3.0])
    ga, gb = arignote.function([a, b], arignote.grad(cost, [a, b]))(av, bv)
    np.testing.assert_allclose(gb, [0.5, 0.25])
    np.testing.assert_allclose(np.diag(ga), [-1 / 4.0, -3 / 16.0])
