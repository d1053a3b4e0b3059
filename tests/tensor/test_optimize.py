"""``pt.optimize``: ``minimize``, ``minimize_scalar``, ``root``, ``root_scalar``. Solutions
against ``scipy.optimize`` called directly; gradients of the solution (implicit function
theorem) against closed forms and against finite differences that re-solve the problem at
perturbed parameters (float64 and float32); pushforwards against finite-difference JVPs;
the inner-graph protocol; errors for bad input."""

from __future__ import annotations

import pickle
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest
import scipy.optimize

import arignote
import arignote.tensor as pt
from arignote.gradient import DisconnectedInputError, disconnected_type, grad, jacobian
from arignote.graph.op import HasInnerGraph
from arignote.tensor.optimize import (
    MinimizeOp,
    RootOp,
    RootScalarOp,
    minimize,
    minimize_scalar,
    root,
    root_scalar,
)
from tests.tensor.utils import assert_infer_shape

TIGHT = {"tol": 1e-12}
NEWTON_TIGHT = {"tol": 1e-14}


def _fd_solution_grad(
    params: Sequence[Any], values: Sequence[np.ndarray], solve: Callable[..., Any], w: Any, eps: float
) -> list[np.ndarray]:
    """Central differences of ``sum(w * solve(*values))``, re-solving at each perturbed
    parameter entry."""
    out = []
    vals = [np.array(v, dtype=p.type.dtype, copy=True) for p, v in zip(params, values)]
    for v in vals:
        g = np.zeros(v.shape)
        for idx in np.ndindex(*v.shape):
            old = v[idx]
            v[idx] = old + eps
            up = float(np.sum(w * solve(*vals)))
            v[idx] = old - eps
            down = float(np.sum(w * solve(*vals)))
            v[idx] = old
            g[idx] = (up - down) / (2 * eps)
        out.append(g)
    return out


def _check_solution_grad(
    solution: Any,
    x0: Sequence[tuple[Any, Any]],
    params: Sequence[tuple[Any, Any]],
    rtol: float = 1e-6,
    atol: float = 1e-7,
    eps: float = 1e-6,
) -> list[np.ndarray]:
    """``grad(sum(w * solution), params)`` against finite differences of the solver."""
    inputs = [v for v, _ in x0] + [p for p, _ in params]
    start = [np.asarray(val, dtype=v.type.dtype) for v, val in x0]
    pvars, pvals = [p for p, _ in params], [val for _, val in params]
    solve = arignote.function(inputs, solution)
    w = np.random.default_rng(1).normal(size=np.shape(solve(*start, *pvals))).astype(solution.type.dtype)
    grads = grad(pt.sum(solution * pt.constant(w)), pvars)
    got = arignote.function(inputs, grads)(*start, *pvals)
    expected = _fd_solution_grad(pvars, pvals, lambda *p: solve(*start, *p), w, eps)
    for g, e, p in zip(got, expected, pvars):
        assert g.dtype == p.type.dtype
        np.testing.assert_allclose(g, e, rtol=rtol, atol=atol, err_msg=str(p))
    return got


# --- minimize --------------------------------------------------------------------------------------


def test_minimize_closed_form_and_its_gradient():
    x, a, b = pt.dscalar("x"), pt.dscalar("a"), pt.dscalar("b")
    x_star, success = minimize((x - a) ** 2 + b * x, x)
    assert x_star.type == x.type
    assert success.type.dtype == "bool"
    da, db = grad(x_star, [a, b])
    sol, ok, ga, gb = arignote.function([x, a, b], [x_star, success, da, db])(10.0, 3.0, -4.0)
    np.testing.assert_allclose(sol, 3.0 + 2.0, rtol=1e-6)
    assert ok is np.True_ or ok == True  # noqa: E712
    np.testing.assert_allclose([ga, gb], [1.0, -0.5], rtol=1e-9)


def _rosen_graph() -> tuple:
    x, a, b = pt.dvector("x"), pt.dscalar("a"), pt.dscalar("b")
    return x, a, b, ((a - x[:-1]) ** 2).sum() + b * ((x[1:] - x[:-1] ** 2) ** 2).sum()


@pytest.mark.parametrize(
    "method,jac,hess",
    [
        ("BFGS", True, False),
        ("L-BFGS-B", True, False),
        ("Newton-CG", True, True),
        ("trust-exact", True, True),
        ("Nelder-Mead", False, False),
    ],
)
def test_minimize_matches_scipy(method, jac, hess):
    x, a, b, objective = _rosen_graph()  # with a = 1, b = 100: scipy.optimize.rosen
    opts = (
        {"options": {"xatol": 1e-10, "fatol": 1e-14, "maxiter": 20000}} if method == "Nelder-Mead" else TIGHT
    )
    x_star, success = minimize(objective, x, method=method, jac=jac, hess=hess, optimizer_kwargs=opts)
    x0 = np.array([0.5, 0.3, 0.8, 1.2])
    got, ok = arignote.function([x, a, b], [x_star, success])(x0, 1.0, 100.0)
    expected = scipy.optimize.minimize(
        scipy.optimize.rosen,
        x0,
        method=method,
        jac=scipy.optimize.rosen_der if jac else None,
        hess=scipy.optimize.rosen_hess if hess else None,
        **opts,
    )
    assert bool(ok) == expected.success
    np.testing.assert_allclose(got, expected.x, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(got, np.ones(4), rtol=1e-5)  # rosen's minimiser


def test_minimize_gradient_matches_resolving():
    x, a, b, objective = _rosen_graph()
    x_star, _ = minimize(objective, x, method="trust-exact", hess=True, optimizer_kwargs=NEWTON_TIGHT)
    _check_solution_grad(x_star, [(x, [0.5, 0.3, 0.2])], [(a, 0.8), (b, 3.0)], rtol=1e-5, atol=1e-8)


def test_minimize_gradient_with_matrix_and_vector_parameters():
    x, A, c = pt.dvector("x"), pt.dmatrix("A"), pt.dvector("c")
    objective = 0.5 * x @ (A @ A.T + pt.eye(3)) @ x - c @ x + 0.1 * pt.sum(pt.cosh(x))
    x_star, _ = minimize(objective, x, method="trust-exact", hess=True, optimizer_kwargs={"tol": 1e-13})
    rng = np.random.default_rng(0)
    _check_solution_grad(
        x_star, [(x, np.zeros(3))], [(A, rng.normal(size=(3, 3))), (c, rng.normal(size=3))], rtol=1e-5
    )


def test_minimize_float32():
    x, a = pt.fvector("x"), pt.fvector("a")
    x_star, success = minimize(((x - a) ** 2).sum() + (x**4).sum(), x)
    assert x_star.type.dtype == "float32"
    value = x_star.eval({x: np.zeros(2, "float32"), a: np.array([1.0, -0.5], "float32")})
    assert value.dtype == np.float32
    # d/dx: 2(x - a) + 4x^3 = 0
    np.testing.assert_allclose(2 * (value - [1.0, -0.5]) + 4 * value**3, 0, atol=1e-4)
    _check_solution_grad(
        x_star, [(x, np.zeros(2))], [(a, np.array([1.0, -0.5], "float32"))], rtol=2e-2, atol=2e-3, eps=1e-2
    )


def test_minimize_several_variables_of_any_shape():
    y, z, c = pt.dmatrix("y"), pt.dscalar("z"), pt.dscalar("c")
    objective = ((y - c) ** 2).sum() + (z + 2 * c) ** 2 + 0.1 * z * y.sum()
    (y_star, z_star), success = minimize(objective, [y, z], optimizer_kwargs=TIGHT)
    assert y_star.type == y.type and z_star.type == z.type
    f = arignote.function([y, z, c], [y_star, z_star, success])
    ys, zs, ok = f(np.zeros((2, 2)), 0.0, 1.0)

    def flat(v: np.ndarray) -> float:
        return _np_objective(v[:4].reshape(2, 2), v[4], 1.0)

    expected = scipy.optimize.minimize(flat, np.zeros(5), **TIGHT).x
    np.testing.assert_allclose(np.append(ys.ravel(), zs), expected, rtol=1e-5, atol=1e-7)
    assert ys.shape == (2, 2) and np.ndim(zs) == 0 and bool(ok)
    _check_solution_grad(z_star + y_star.sum(), [(y, np.zeros((2, 2))), (z, 0.0)], [(c, 1.0)])


def _np_objective(y: np.ndarray, z: float, c: float) -> float:
    return float(((y - c) ** 2).sum() + (z + 2 * c) ** 2 + 0.1 * z * y.sum())


def test_minimize_parameters_found_through_the_graph():
    x = pt.dvector("x")
    log_scale = pt.dscalar("log_scale")
    shift = arignote.shared(np.array([1.0, 2.0]), name="shift")
    scale = pt.exp(log_scale)  # an intermediate: the parameter is its root, log_scale
    objective = (scale * (x - shift) ** 2).sum() + 3.0 * pt.sum(x**4) * 0.01
    x_star, _ = minimize(objective, x, optimizer_kwargs=TIGHT)
    op = x_star.owner.op
    assert isinstance(op, MinimizeOp) and isinstance(op, HasInnerGraph)
    assert set(x_star.owner.inputs[1:]) == {log_scale, shift}  # constants are not parameters
    g_shift = grad(x_star.sum(), shift)
    value = arignote.function([x, log_scale], [x_star, g_shift])(np.zeros(2), 0.3)
    assert value[1].shape == (2,)
    _check_solution_grad(x_star, [(x, np.zeros(2))], [(log_scale, 0.3)], rtol=1e-5)


def test_minimize_over_an_intermediate_variable():
    z = pt.dvector("z")
    x = 2.0 * z  # the starting point comes from z; the unknown is x itself
    objective = ((x - 3.0) ** 2).sum()
    x_star, _ = minimize(objective, x)
    assert x_star.owner.inputs == [x]
    np.testing.assert_allclose(x_star.eval({z: np.zeros(2)}), [3.0, 3.0], rtol=1e-6)


def test_gradient_of_the_starting_point_is_zero_and_additive_parameters_disconnected():
    x, a, c = pt.dvector("x"), pt.dvector("a"), pt.dscalar("c")
    x_star, success = minimize(((x - a) ** 2).sum() + c, x)  # c moves the value, not the minimiser
    g_x0 = grad(x_star.sum(), x)
    np.testing.assert_array_equal(g_x0.eval({x: np.ones(2)}), np.zeros(2))
    with pytest.raises(DisconnectedInputError):
        grad(x_star.sum(), c)
    assert grad(x_star.sum(), c, disconnected_inputs="ignore").eval({c: 1.0}) == 0
    pattern = x_star.owner.op.connection_pattern(x_star.owner)
    expected = {x: [True, False], a: [True, False], c: [False, False]}
    assert pattern == [expected[i] for i in x_star.owner.inputs]


def test_unconverged_solution_reports_failure():
    x, a, b, objective = _rosen_graph()
    x_star, success = minimize(objective, x, optimizer_kwargs={"options": {"maxiter": 2}})
    got, ok = arignote.function([x, a, b], [x_star, success])(np.array([-1.0, 1.0, 2.0]), 1.0, 100.0)
    assert not bool(ok)
    expected = scipy.optimize.minimize(
        scipy.optimize.rosen, [-1.0, 1.0, 2.0], jac=scipy.optimize.rosen_der, options={"maxiter": 2}
    )
    assert not expected.success
    np.testing.assert_allclose(got, expected.x, rtol=1e-8)  # the same last iterate
    assert got.shape == (3,)


def test_minimize_pushforward():
    x, a, b, objective = _rosen_graph()
    x_star, _ = minimize(objective, x, method="trust-exact", hess=True, optimizer_kwargs=NEWTON_TIGHT)
    _check_solver_pushforward(x_star, [x], [np.array([0.5, 0.3, 0.2])], {a: (0.8, 0.3), b: (3.0, -1.0)})


def _check_solver_pushforward(
    solution: Any, x0s: list, starts: list, params: dict, eps: float = 1e-6
) -> None:
    """The Op's pushforward at the parameters' values in the direction of their tangents,
    against central differences of the solver."""
    node = solution.owner
    k_out = node.outputs.index(solution)
    tangents = [
        pt.constant(np.asarray(params[i][1], dtype=i.type.dtype)) if i in params else disconnected_type()
        for i in node.inputs
    ]
    jvp = node.op.pushforward(list(node.inputs), list(node.outputs), tangents)[k_out]
    pvars = list(params)
    values = [np.asarray(params[p][0], dtype=p.type.dtype) for p in pvars]
    got = arignote.function([*x0s, *pvars], jvp)(*starts, *values)
    solve = arignote.function([*x0s, *pvars], solution)

    def at(step: float) -> np.ndarray:
        return solve(*starts, *(v + step * np.asarray(params[p][1]) for p, v in zip(pvars, values)))

    np.testing.assert_allclose(got, (at(eps) - at(-eps)) / (2 * eps), rtol=1e-5, atol=1e-7)


def test_pushforward_without_tangents_is_disconnected():
    x, a = pt.dscalar("x"), pt.dscalar("a")
    x_star, _ = minimize((x - a) ** 2, x)
    node = x_star.owner
    out = node.op.pushforward(node.inputs, node.outputs, [pt.constant(1.0), disconnected_type()])
    assert all(isinstance(o.type, type(disconnected_type().type)) for o in out)


def test_vectorised_jacobian_of_the_solution():
    x, c = pt.dvector("x"), pt.dvector("c")
    # minimiser of sum((x - c)^2) + sum(x)^2: x* = c - sum(c)/(n + 1) (n = 3)
    x_star, _ = minimize(((x - c) ** 2).sum() + x.sum() ** 2, x, optimizer_kwargs=TIGHT)
    J = jacobian(x_star, c)
    got = J.eval({x: np.zeros(3), c: np.array([1.0, 2.0, -1.0])})
    np.testing.assert_allclose(got, np.eye(3) - 1.0 / 4.0, atol=1e-8)


# --- minimize_scalar ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "method,kwargs", [("brent", {}), ("golden", {}), ("bounded", {"bounds": (-3.0, 3.0)})]
)
def test_minimize_scalar_matches_scipy(method, kwargs):
    x, k = pt.dscalar("x"), pt.dscalar("k")
    x_star, success = minimize_scalar((x - k) ** 2 + pt.exp(x), x, method=method, optimizer_kwargs=kwargs)
    got, ok = arignote.function([x, k], [x_star, success])(0.0, 1.0)
    expected = scipy.optimize.minimize_scalar(lambda v: (v - 1.0) ** 2 + np.exp(v), method=method, **kwargs)
    assert bool(ok) and expected.success
    np.testing.assert_allclose(got, expected.x, rtol=1e-6)
    # x* solves 2 (x - k) + e^x = 0, so dx*/dk = 2 / (2 + e^x*)
    np.testing.assert_allclose(grad(x_star, k).eval({x: 0.0, k: 1.0}), 2 / (2 + np.exp(got)), rtol=1e-4)


def test_minimize_scalar_gradient_and_float32():
    x, k = pt.dscalar("x"), pt.dscalar("k")
    x_star, _ = minimize_scalar(pt.cosh(x - k) + 0.1 * x**2, x, optimizer_kwargs={"tol": 1e-12})
    # Brent's method places the minimum to ~sqrt(machine eps): a wider difference step
    _check_solution_grad(x_star, [(x, 0.0)], [(k, 0.7)], rtol=1e-4, atol=1e-6, eps=1e-3)
    xf, kf = pt.fscalar("xf"), pt.fscalar("kf")
    xs, _ = minimize_scalar((xf - kf) ** 2, xf)
    assert xs.type.dtype == "float32"
    assert xs.eval({xf: np.float32(0), kf: np.float32(1.5)}).dtype == np.float32
    np.testing.assert_allclose(grad(xs, kf).eval({xf: np.float32(0), kf: np.float32(1.5)}), 1.0, rtol=1e-5)


# --- root --------------------------------------------------------------------------------------------


def _system() -> tuple:
    v, p, q = pt.dvector("v"), pt.dscalar("p"), pt.dvector("q")
    eqs = pt.stack([v[0] ** 2 + v[1] - p, v[0] - v[1] ** 3 - q[0], pt.sin(v[2]) + v[0] * q[1]])
    return v, p, q, eqs


def _np_system(v: np.ndarray, p: float, q: np.ndarray) -> np.ndarray:
    return np.array([v[0] ** 2 + v[1] - p, v[0] - v[1] ** 3 - q[0], np.sin(v[2]) + v[0] * q[1]])


@pytest.mark.parametrize("method,jac", [("hybr", True), ("lm", True), ("hybr", False), ("krylov", False)])
def test_root_matches_scipy(method, jac):
    v, p, q, eqs = _system()
    sol, success = root(eqs, v, method=method, jac=jac)
    start, pv, qv = np.array([1.0, 0.5, 0.1]), 2.0, np.array([0.2, 0.3])
    got, ok = arignote.function([v, p, q], [sol, success])(start, pv, qv)
    expected = scipy.optimize.root(_np_system, start, args=(pv, qv), method=method)
    assert bool(ok) and expected.success
    np.testing.assert_allclose(got, expected.x, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(_np_system(got, pv, qv), 0, atol=1e-6)


def test_root_gradient_matches_resolving():
    v, p, q, eqs = _system()
    sol, _ = root(eqs, v, optimizer_kwargs={"tol": 1e-13})
    _check_solution_grad(sol, [(v, [1.0, 0.5, 0.1])], [(p, 2.0), (q, np.array([0.2, 0.3]))], rtol=1e-5)


def test_root_pushforward():
    v, p, q, eqs = _system()
    sol, _ = root(eqs, v, optimizer_kwargs={"tol": 1e-13})
    _check_solver_pushforward(
        sol, [v], [np.array([1.0, 0.5, 0.1])], {p: (2.0, 1.0), q: ([0.2, 0.3], [0.5, -1.0])}
    )


def test_root_of_a_scalar_equation_and_several_variables():
    x, a = pt.dscalar("x"), pt.dscalar("a")
    sol, ok = root(x**3 - a, x)
    assert sol.type == x.type
    np.testing.assert_allclose(sol.eval({x: 1.0, a: 27.0}), 3.0, rtol=1e-8)
    np.testing.assert_allclose(grad(sol, a).eval({x: 1.0, a: 27.0}), 1 / 27.0, rtol=1e-6)
    u, w = pt.dvector("u"), pt.dscalar("w")
    (us, ws), ok2 = root(pt.concatenate([u - w, pt.stack([w + u.sum() - a])]), [u, w])
    got = arignote.function([u, w, a], [us, ws, ok2])(np.zeros(2), 0.0, 6.0)
    np.testing.assert_allclose(got[0], [2.0, 2.0], rtol=1e-8)
    np.testing.assert_allclose(got[1], 2.0, rtol=1e-8)
    _check_solution_grad(us.sum() + ws, [(u, np.zeros(2)), (w, 0.0)], [(a, 6.0)])


def test_root_float32():
    v, c = pt.fvector("v"), pt.fvector("c")
    sol, _ = root(v**3 + v - c, v)
    assert sol.type.dtype == "float32"
    _check_solution_grad(
        sol, [(v, np.zeros(2))], [(c, np.array([2.0, 10.0], "float32"))], rtol=2e-2, atol=2e-3, eps=1e-2
    )


# --- root_scalar --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "method,jac,hess,kwargs",
    [
        ("secant", False, False, {}),
        ("newton", True, False, {}),
        ("halley", True, True, {}),
        ("brentq", False, False, {"bracket": (0.0, 5.0)}),
    ],
)
def test_root_scalar_matches_scipy_and_closed_form_gradient(method, jac, hess, kwargs):
    x, a = pt.dscalar("x"), pt.dscalar("a")
    sol, success = root_scalar(x**3 - a, x, method=method, jac=jac, hess=hess, optimizer_kwargs=kwargs)
    f = arignote.function([x, a], [sol, success, grad(sol, a)])
    got, ok, g = f(1.0, 8.0)
    expected = scipy.optimize.root_scalar(
        lambda v: v**3 - 8.0,
        x0=1.0,
        fprime=(lambda v: 3 * v**2) if jac else None,
        fprime2=(lambda v: 6 * v) if hess else None,
        method=method,
        **kwargs,
    )
    assert bool(ok) and expected.converged
    np.testing.assert_allclose(got, expected.root, rtol=1e-9)
    np.testing.assert_allclose(g, 1 / (3 * 2.0**2), rtol=1e-7)  # x = a^(1/3)


def test_root_scalar_gradient_matches_resolving_and_pushforward():
    x, a, b = pt.dscalar("x"), pt.dscalar("a"), pt.dscalar("b")
    sol, _ = root_scalar(
        pt.tanh(x) - a * x + b, x, method="newton", jac=True, optimizer_kwargs={"xtol": 1e-14}
    )
    _check_solution_grad(sol, [(x, 1.0)], [(a, 0.5), (b, 0.3)], rtol=1e-6)
    _check_solver_pushforward(sol, [x], [1.0], {a: (0.5, 1.0), b: (0.3, -2.0)})
    assert isinstance(sol.owner.op, RootScalarOp)
    assert str(sol.owner.op) == "RootScalarOp(method=newton, jac=True, hess=False)"


# --- the Op ------------------------------------------------------------------------------------------


def test_inner_graph_protocol_clone_and_pickle():
    x, a = pt.dvector("x"), pt.dvector("a")
    sol, success = root(x - a, x)
    op = sol.owner.op
    assert isinstance(op, RootOp) and str(op) == "RootOp(method=hybr, jac=True)"
    assert [v.type for v in op.inner_inputs] == [x.type, a.type]
    assert len(op.inner_outputs) == 1
    assert op != op.clone()  # each problem's Op is its own
    clone = op.clone()
    assert clone.inner_inputs[0] is not op.inner_inputs[0]
    values = {x: np.zeros(2), a: np.array([1.0, 2.0])}
    np.testing.assert_allclose(clone(x, a)[0].eval(values), [1.0, 2.0])
    restored = pickle.loads(pickle.dumps(op))
    np.testing.assert_allclose(restored(x, a)[0].eval(values), [1.0, 2.0])
    assert callable(op.fn)
    assert_infer_shape(sol, values)


def test_make_node_checks_the_inputs():
    x, a = pt.dvector("x"), pt.dvector("a")
    sol, _ = minimize(((x - a) ** 2).sum(), x)
    op = sol.owner.op
    with pytest.raises(ValueError, match="takes 2 inputs"):
        op(x)
    with pytest.raises(TypeError, match="input 1 must have Type"):
        op(x, pt.dmatrix("m"))


def test_bad_problems_are_reported():
    x, a = pt.dvector("x"), pt.dscalar("a")
    objective = ((x - a) ** 2).sum()
    with pytest.raises(ValueError, match="objective must be a scalar"):
        minimize(x - a, x)
    with pytest.raises(ValueError, match="must be an input to the computational graph"):
        minimize(objective, pt.dvector("y"))
    with pytest.raises(ValueError, match="must be a symbolic tensor"):
        minimize(objective, pt.constant(np.zeros(2)))
    with pytest.raises(TypeError, match="must be a float tensor"):
        n = pt.lscalar("n")
        minimize((n - a) ** 2, n)
    with pytest.raises(ValueError, match="appears twice"):
        minimize(objective, [x, x])
    with pytest.raises(ValueError, match="no variables"):
        minimize(objective, [])
    with pytest.raises(TypeError, match="method must be"):
        minimize(objective, x, method=None)
    with pytest.raises(TypeError, match="optimizer_kwargs must be a dict"):
        minimize(objective, x, optimizer_kwargs=[("tol", 1e-3)])
    with pytest.raises(ValueError, match="x must be a scalar"):
        minimize_scalar(objective, x)
    with pytest.raises(ValueError, match="hess=True needs jac=True"):
        root_scalar(a**2 - 2, a, hess=True)
    with pytest.raises(ValueError, match="variable must be a scalar"):
        root_scalar(objective, x)
    with pytest.raises(ValueError, match="2 values for 3 unknowns"):
        z3 = pt.tensor("z", dtype="float64", shape=(3,))
        root(z3[:2] * 2.0, z3)


def test_non_square_system_at_run_time():
    x = pt.dvector("x")
    sol, _ = root(pt.concatenate([x, x]) - 1.0, x)
    with pytest.raises(ValueError, match="4 values for 2 unknowns"):
        sol.eval({x: np.zeros(2)})


def test_unknown_method_is_scipys_error():
    x = pt.dscalar("x")
    sol, _ = minimize((x - 1.0) ** 2, x, method="no-such-method")
    with pytest.raises(ValueError, match="no-such-method"):
        sol.eval({x: 0.0})
