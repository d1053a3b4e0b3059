"""The pushforward catalogue: every Op class of arignote that defines a pushforward (R_op),
checked against the Jacobian-vector product its pullback gives (issue 5).

This file finds the classes (importing every module of arignote) and holds the coverage tests:
each class has cases in one of the case files (``test_pushforward_catalogue_ops.py``,
``_linalg.py``, ``_optimize.py``, ``_scalar.py`` for the scalar ops inside Elemwise), is a random variable
(checked here: both routes call its draws disconnected), one of the identities whose point is
to have no derivative (checked here), or an abstract base listed in SKIP with the reason.
The comparison itself is in ``test_pushforward_catalogue_harness.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import arignote
import arignote.tensor as pt
from arignote import function
from arignote.gradient import (
    DisconnectedInputError,
    NullTypeGradError,
    Rop,
    disconnected_grad,
    pushforward_through_pullback,
    undefined_grad,
)
from arignote.graph.null_type import NullType
from arignote.tensor.elemwise import Elemwise
from tests.test_pushforward_catalogue_harness import (
    disconnected_alike,
    pushforward_op_classes,
    qualname,
    resolve,
    scalar_op_classes,
)
from tests.test_pushforward_catalogue_linalg import LINALG_ALL_CASES
from tests.test_pushforward_catalogue_ops import OPS_CASES
from tests.test_pushforward_catalogue_optimize import CASES as OPTIMIZE_CASES
from tests.test_pushforward_catalogue_scalar import SCALAR_CASES, SCALAR_SKIP

CASES = {**OPS_CASES, **LINALG_ALL_CASES, **OPTIMIZE_CASES}

RV = "arignote.tensor.random.basic."

# A draw with symbolic float parameters (the inputs that get tangents); ``ints`` are fixed.
RvBuilder = Callable[[Any], tuple[Any, list, list]]


def rv(fn: Callable[..., Any], *floats: Any, ints: tuple = (), before: bool = False, **kw: Any) -> RvBuilder:
    """``fn(*ints, *floats, rng=rng, **kw)`` (``before``: the ints come first, else last), each
    float parameter a Variable of its value's shape."""

    def build(rng: Any) -> tuple[Any, list, list]:
        params = [
            pt.tensor(f"p{i}", dtype="float64", shape=(None,) * np.ndim(v)) for i, v in enumerate(floats)
        ]
        args = [*ints, *params] if before else [*params, *ints]
        out = fn(*args, rng=rng, **kw)
        return out, params, [np.asarray(v, dtype="float64") for v in floats]

    return build


def rv_of_ints(fn: Callable[..., Any], *values: float, **kw: Any) -> RvBuilder:
    """A draw whose parameters are integers, computed from float inputs (truncated)."""

    def build(rng: Any) -> tuple[Any, list, list]:
        params = [pt.dscalar(f"p{i}") for i in range(len(values))]
        out = fn(*[pt.cast(p, "int64") for p in params], rng=rng, **kw)
        return out, params, [np.asarray(v) for v in values]

    return build


RV_CASES: dict[str, RvBuilder] = {
    RV + "NormalRV": rv(pt.random.normal, [0.0, 1.0], 2.0),
    RV + "UniformRV": rv(pt.random.uniform, -1.0, [2.0, 3.0]),
    RV + "BernoulliRV": rv(pt.random.bernoulli, [0.2, 0.7]),
    RV + "BetaRV": rv(pt.random.beta, 2.0, [3.0, 1.0]),
    RV + "BinomialRV": rv(pt.random.binomial, [0.3, 0.6], ints=(10,), before=True),
    RV + "BetaBinomialRV": rv(pt.random.betabinom, 2.0, 3.0, ints=(10,), before=True),
    RV + "CategoricalRV": rv(pt.random.categorical, [0.2, 0.3, 0.5]),
    RV + "CauchyRV": rv(pt.random.cauchy, 0.5, 2.0),
    RV + "ChoiceWithReplacement": rv(pt.random.choice, [1.5, -2.0, 3.0], size=(4,)),
    RV + "ChoiceWithoutReplacement": rv(pt.random.choice, [1.5, -2.0, 3.0], size=(2,), replace=False),
    RV + "DirichletRV": rv(pt.random.dirichlet, [1.0, 2.0, 3.0]),
    RV + "ExponentialRV": rv(pt.random.exponential, [1.0, 2.5]),
    RV + "GammaRV": rv(lambda k, s, rng: pt.random.gamma(k, scale=s, rng=rng), 2.0, 3.0),
    RV + "GenGammaRV": rv(pt.random.gengamma, 1.5, 2.0, 0.5),
    RV + "GeometricRV": rv(pt.random.geometric, 0.3),
    RV + "GumbelRV": rv(pt.random.gumbel, 0.5, 2.0),
    RV + "HalfCauchyRV": rv(pt.random.halfcauchy, 0.0, 2.0),
    RV + "HalfNormalRV": rv(pt.random.halfnormal, 0.0, 2.0),
    RV + "HyperGeometricRV": rv_of_ints(pt.random.hypergeometric, 10.2, 5.7, 4.1),
    RV + "IntegersRV": rv_of_ints(pt.random.integers, 3.5, 10.2),
    RV + "InvGammaRV": rv(pt.random.invgamma, 2.0, 4.0),
    RV + "LaplaceRV": rv(pt.random.laplace, 1.0, 2.0),
    RV + "LogNormalRV": rv(pt.random.lognormal, 0.5, 0.2),
    RV + "LogisticRV": rv(pt.random.logistic, 1.0, 2.0),
    RV + "MultinomialRV": rv(pt.random.multinomial, [0.2, 0.3, 0.5], ints=(10,), before=True),
    RV + "MvNormalRV": rv(pt.random.multivariate_normal, [0.0, 1.0], [[2.0, 0.5], [0.5, 1.0]]),
    RV + "NegBinomialRV": rv(pt.random.negative_binomial, 0.4, ints=(5,), before=True),
    RV + "ParetoRV": rv(pt.random.pareto, 2.0, 1.5),
    RV + "PermutationRV": rv(pt.random.permutation, [1.5, -2.0, 3.0, 0.5]),
    RV + "PoissonRV": rv(pt.random.poisson, [1.0, 5.0]),
    RV + "StudentTRV": rv(pt.random.t, 3.0, 0.5, 2.0),
    RV + "TriangularRV": rv(pt.random.triangular, 0.0, 1.0, 3.0),
    RV + "TruncExponentialRV": rv(pt.random.truncexpon, 2.0, 0.5, 1.5),
    RV + "VonMisesRV": rv(pt.random.vonmises, 0.5, 2.0),
    RV + "WaldRV": rv(pt.random.wald, 1.0, 2.0),
    RV + "WeibullRV": rv(pt.random.weibull, 1.5),
}

# Identities whose derivative is by design not a derivative of the value: tested below.
SPECIAL = {"arignote._gradient.ops.UndefinedGrad", "arignote._gradient.ops.DisconnectedGrad"}

# Classes with no case of their own: abstract bases, each covered through its subclasses.
SKIP: dict[str, str] = {
    "arignote.tensor.random.op.RandomVariable": "abstract base of the random variables (each is in RV_CASES)",
    RV + "ScipyRandomVariable": "abstract base of the random variables SciPy draws (each is in RV_CASES)",
    "arignote.tensor.linalg.solve.SolveBase": "abstract base of Solve, SolveTriangular, CholeskySolve (each has cases)",
    "arignote.tensor.reductions._BoolReduce": "abstract base of All and Any_ (each has a case)",
    "arignote.optimize.ScipyWrapperOp": "abstract base of the scipy.optimize Ops (each has cases)",
    "arignote.tensor.signal.conv._Convolve": "abstract base of Convolve1d and Convolve2d (each has cases)",
    "arignote.graph.op.PassThroughOp": "base of ViewOp, DeepCopyOp, SpecifyAssumptions (each has a case)",
}


def test_every_op_with_a_pushforward_has_a_case() -> None:
    found = set(pushforward_op_classes())
    covered = set(CASES) | set(RV_CASES) | SPECIAL | set(SKIP)
    assert not found - covered, (
        f"Op classes with a pushforward but no catalogue case: {sorted(found - covered)}"
    )
    assert not covered - found, (
        f"catalogue entries that are no such Op class (renamed?): {sorted(covered - found)}"
    )
    assert not set(CASES) & set(SKIP), "a class is both a case and skipped"


def test_skipped_classes_are_bases_of_covered_ones() -> None:
    """SKIP holds only bases; each has a subclass with a case (so nothing hides there)."""
    cases = [resolve(n) for n in [*CASES, *RV_CASES]]
    for name in SKIP:
        base = resolve(name)
        assert any(issubclass(c, base) and c is not base for c in cases), f"{name} covers nothing"


def test_every_scalar_op_has_a_case() -> None:
    found = set(scalar_op_classes())
    covered = set(SCALAR_CASES) | set(SCALAR_SKIP)
    assert not found - covered, f"scalar ops without a catalogue case: {sorted(found - covered)}"
    assert not covered - found, (
        f"scalar catalogue entries that are no scalar op (renamed?): {sorted(covered - found)}"
    )


def test_every_elemwise_of_the_tensor_namespace_is_covered() -> None:
    """Each ``pt.<name>`` that is an Elemwise: its scalar op has a case."""
    missing = {
        name: qualname(type(obj.scalar_op))
        for name in dir(pt)
        if isinstance(obj := getattr(pt, name), Elemwise)
        and qualname(type(obj.scalar_op)) not in SCALAR_CASES
    }
    assert not missing, f"pt functions whose scalar op has no case: {missing}"


# --- random variables: draws are not differentiable in their parameters -----------------------------


@pytest.mark.parametrize("name", sorted(RV_CASES), ids=lambda n: n.rsplit(".", 1)[-1])
def test_random_variable_draws_are_disconnected_on_both_routes(name: str) -> None:
    rng = arignote.shared(np.random.default_rng(3))
    value, params, values = RV_CASES[name](rng)
    assert type(value.owner.op) is resolve(name)
    assert disconnected_alike([value], params) == "disconnected"
    tangents = [p.type() for p in params]
    rop = Rop(value, params, tangents, disconnected_outputs="ignore", use_op_rop_implementation=True)
    (pb,) = pushforward_through_pullback([value], params, tangents, disconnected_outputs="ignore")
    fn = function([*params, *tangents], [value, rop, pb], on_unused_input="ignore")
    draw, got, via_pb = fn(*values, *values)
    assert got.shape == via_pb.shape == draw.shape
    assert not np.any(got) and not np.any(via_pb)


def test_random_generator_output_is_disconnected_on_both_routes() -> None:
    rng = arignote.shared(np.random.default_rng(3))
    mu = pt.dvector("mu")
    next_rng = pt.random.normal(mu, rng=rng).owner.outputs[0]
    assert disconnected_alike([next_rng], [mu]) == "disconnected"


# --- the identities that change only the derivative ----------------------------------------------


def test_undefined_grad_is_undefined_on_both_routes() -> None:
    """Rop gives a NullType tangent; the pullback route's reverse pass meets the undefined
    term and raises (each route's way of saying "undefined")."""
    x, t = pt.dvector("x"), pt.dvector("t")
    out = undefined_grad(x) * x
    assert type(out.owner.inputs[0].owner.op) is resolve("arignote._gradient.ops.UndefinedGrad")
    rop = Rop(out, x, t, use_op_rop_implementation=True)
    assert isinstance(rop.type, NullType)
    with pytest.raises(NullTypeGradError, match="UndefinedGrad"):
        pushforward_through_pullback([out], [x], [t])


def test_disconnected_grad_is_disconnected_on_both_routes() -> None:
    x, y, tx = pt.dvector("x"), pt.dvector("y"), pt.dvector("tx")
    out = disconnected_grad(x) * y
    assert type(out.owner.inputs[0].owner.op) is resolve("arignote._gradient.ops.DisconnectedGrad")
    assert disconnected_alike([out], [x]) == "disconnected"
    with pytest.raises(DisconnectedInputError):
        Rop(out, x, tx, use_op_rop_implementation=True)
    # through y the tangent flows as usual, x's value scaling it (the same on both routes)
    ty = pt.dvector("ty")
    rop = Rop(out, [x, y], [tx, ty], use_op_rop_implementation=True)
    (pb,) = pushforward_through_pullback([out], [x, y], [tx, ty])
    vals = [np.array([1.5, -2.0]), np.array([0.3, 0.4]), np.array([7.0, 8.0]), np.array([1.0, -1.0])]
    got, via_pb = function([x, y, tx, ty], [rop, pb], on_unused_input="ignore")(*vals)
    np.testing.assert_allclose(got, [1.5, 2.0])
    np.testing.assert_allclose(via_pb, [1.5, 2.0])
