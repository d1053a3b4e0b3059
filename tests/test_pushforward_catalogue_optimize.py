"""Pushforward catalogue, part 4: the scipy.optimize Ops (a solution differentiated by the
implicit function theorem) and the convolutions of ``pt.signal``. The checks are in
``test_pushforward_catalogue_harness.py``.

A solver's answer is accurate to its tolerance only, so the finite differences of the
optimisation cases take a wider step (the solution is smooth in the parameters) and a looser
tolerance. The starting point has no influence on the solution: both routes must give it a
zero tangent (its own case, without finite differences: a solver's last digits do move with it).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import arignote.tensor as pt
from arignote.tensor.optimize import minimize, minimize_scalar, root, root_scalar
from arignote.tensor.signal import convolve1d, convolve2d
from tests.test_pushforward_catalogue_harness import (
    Builder,
    Case,
    case_params,
    integer_outputs,
    rand,
    run_case,
    run_each_input,
    run_integer_outputs,
    several_inputs,
)

SOLVER_FD = {"fd_eps": 1e-4, "fd_tol": (1e-4, 1e-5)}


def solved(problem: Any, start_only: bool = False, **kw: Any) -> Builder:
    """``problem(dtype) -> (inputs, values, x0, outputs)``; the tangents go to the parameters
    (``start_only``: to the starting point alone, whose tangent must come out zero)."""

    def build(dtype: str) -> Case:
        inputs, values, x0, outputs = problem(dtype)
        if start_only:
            return Case(inputs, values, outputs, wrt=[x0], fd=False)
        params = [v for v in inputs if v is not x0]
        return Case(inputs, values, outputs, wrt=params, **{**SOLVER_FD, **kw})

    return build


def _minimize(dtype: str) -> tuple:
    x, a, b = (
        pt.tensor("x", dtype=dtype, shape=(None,)),
        pt.tensor("a", dtype=dtype, shape=(None,)),
        pt.scalar("b", dtype=dtype),
    )
    x_star, ok = minimize(((x - a) ** 2).sum() + b * (x**4).sum(), x, optimizer_kwargs={"tol": 1e-12})
    vals = [np.zeros(3, dtype), np.asarray([0.5, -1.0, 0.8], dtype), np.asarray(0.3, dtype)]
    return [x, a, b], vals, x, [x_star, ok]


def _minimize_scalar(dtype: str) -> tuple:
    x, a, b = pt.scalar("x", dtype=dtype), pt.scalar("a", dtype=dtype), pt.scalar("b", dtype=dtype)
    x_star, ok = minimize_scalar(pt.cosh(x - a) + b * x, x, optimizer_kwargs={"tol": 1e-12})
    return [x, a, b], [np.asarray(v, dtype) for v in (0.0, 0.5, 0.4)], x, [x_star, ok]


def _root(dtype: str) -> tuple:
    x, a, b = (
        pt.tensor("x", dtype=dtype, shape=(None,)),
        pt.scalar("a", dtype=dtype),
        pt.scalar("b", dtype=dtype),
    )
    eqs = pt.stack([x[0] + x[1] ** 3 - a, pt.exp(x[0]) - b * x[1] - 2.0])
    sol, ok = root(eqs, x, optimizer_kwargs={"tol": 1e-13})
    return (
        [x, a, b],
        [np.asarray([0.5, 0.5], dtype), np.asarray(1.5, dtype), np.asarray(0.7, dtype)],
        x,
        [sol, ok],
    )


def _root_scalar(dtype: str) -> tuple:
    x, a = pt.scalar("x", dtype=dtype), pt.scalar("a", dtype=dtype)
    sol, ok = root_scalar(x**3 + x - a, x, method="newton", jac=True)
    return [x, a], [np.asarray(1.0, dtype), np.asarray(3.0, dtype)], x, [sol, ok]


OPTIMIZE = "arignote.optimize."

OPTIMIZE_CASES: dict[str, list[Builder]] = {
    OPTIMIZE + "MinimizeOp": [solved(_minimize), solved(_minimize, start_only=True)],
    OPTIMIZE + "MinimizeScalarOp": [solved(_minimize_scalar, fd_eps=1e-3, fd_tol=(1e-3, 1e-4))],
    OPTIMIZE + "RootOp": [solved(_root), solved(_root, start_only=True)],
    OPTIMIZE + "RootScalarOp": [solved(_root_scalar), solved(_root_scalar, start_only=True)],
}


# --- convolutions ---------------------------------------------------------------------------------


def conv(fn: Any, shape_a: tuple, shape_b: tuple, **kw: Any) -> Builder:
    def build(dtype: str) -> Case:
        a = pt.tensor("a", dtype=dtype, shape=(None,) * len(shape_a))
        b = pt.tensor("b", dtype=dtype, shape=(None,) * len(shape_b))
        vals = [rand(*shape_a, dtype=dtype), rand(*shape_b, seed=1, dtype=dtype)]
        return Case([a, b], vals, [fn(a, b, **kw)])

    return build


SIGNAL = "arignote.tensor.signal.conv."

SIGNAL_CASES: dict[str, list[Builder]] = {
    SIGNAL + "Convolve1d": [
        conv(convolve1d, (6,), (3,), mode="full"),
        conv(convolve1d, (6,), (3,), mode="valid"),
        conv(convolve1d, (3,), (6,), mode="valid"),  # the kernel is the longer one
        conv(convolve1d, (5,), (2,), mode="same"),
        conv(convolve1d, (2, 5), (3,), mode="full"),  # a batch of signals
    ],
    SIGNAL + "Convolve2d": [
        conv(convolve2d, (4, 5), (2, 3), mode="full"),
        conv(convolve2d, (4, 5), (2, 3), mode="valid", method="fft"),
        conv(convolve2d, (4, 5), (3, 2), mode="same", boundary="wrap"),
    ],
}

CASES: dict[str, list[Builder]] = {**OPTIMIZE_CASES, **SIGNAL_CASES}

# Known mismatches: "ClassName[i]" -> what is wrong (strict xfails; the lead fixes the rule).
XFAIL: dict[str, str] = {}
XFAIL_EACH: dict[str, str] = {}
XFAIL_INT: dict[str, str] = {}

F32 = ["Convolve1d[0]", "Convolve2d[0]"]


@pytest.mark.parametrize("name, builder", case_params(CASES, XFAIL))
def test_pushforward_matches_pullback(name: str, builder: Builder) -> None:
    run_case(name, builder)


@pytest.mark.parametrize("name, builder", case_params(CASES, XFAIL_EACH, keep=several_inputs))
def test_pushforward_matches_pullback_each_input(name: str, builder: Builder) -> None:
    run_each_input(name, builder)


@pytest.mark.parametrize("name, builder", [p for p in case_params(CASES, XFAIL) if p.id in F32])
def test_pushforward_matches_pullback_float32(name: str, builder: Builder) -> None:
    run_case(name, builder, "float32")


@pytest.mark.parametrize("name, builder", case_params(CASES, XFAIL_INT, keep=integer_outputs))
def test_integer_outputs_disconnected_alike(name: str, builder: Builder) -> None:
    run_integer_outputs(name, builder)
