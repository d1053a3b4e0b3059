"""Optimisation and root finding inside a graph: ``minimize``, ``minimize_scalar``, ``root``
and ``root_scalar`` (``scipy.optimize`` run on a compiled objective).

Each function packages the graph of the objective (or the equations) as the inner graph
of one Op. When the outer graph runs, the Op compiles that graph once (with its gradient
and, when asked, its Hessian or Jacobian) and hands it to SciPy; the solver's answer and
its success flag are the Op's two outputs, ``(solution, success)``. The parameters of
the problem are found automatically: every non-constant input of the objective's graph
other than ``x`` itself (the value of ``x`` is the starting point).

The solution is differentiable with respect to the parameters through the implicit
function theorem. A root ``x*`` of ``F(x, theta) = 0`` moves with ``theta`` as
``dx*/dtheta = -J^{-1} dF/dtheta`` (``J = dF/dx`` at the root); a minimiser solves
``grad_x f(x, theta) = 0``, so the same rule holds with ``J`` the Hessian. The pullback
solves one linear system with ``J^T`` and pulls the result back through ``F`` (no
Jacobian with respect to ``theta`` is formed); the pushforward pushes the parameter
tangents through ``F`` and solves with ``J``. The starting point has no influence on the
solution (a zero gradient), and the success flag none at all.

>>> import numpy as np
>>> import arignote
>>> import arignote.tensor as pt
>>> from arignote.optimize import minimize
>>> x, a, b = pt.dscalar("x"), pt.dscalar("a"), pt.dscalar("b")
>>> x_star, success = minimize((x - a) ** 2 + b * x, x)
>>> f = arignote.function([x, a, b], [x_star, success, *arignote.grad(x_star, [a, b])])
>>> [round(float(v), 6) for v in f(0.0, 3.0, 1.0)]
[2.5, 1.0, 1.0, -0.5]
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from copy import copy
from typing import Any

import numpy as np

from arignote._gradient.derivatives import grad, jacobian, pushforward
from arignote.compile.builders import _filter_inputs
from arignote.compile.function import function
from arignote.graph.basic import Apply, Constant, Variable, clone_get_equiv
from arignote.graph.fg import FunctionGraph
from arignote.graph.null_type import disconnected_type, is_disconnected
from arignote.graph.op import HasInnerGraph, Op, io_connection_pattern
from arignote.graph.replace import clone_replace
from arignote.graph.traversal import ancestors, graph_inputs
from arignote.scalar.type import get_scalar_type
from arignote.tensor.conversion import as_tensor_variable, scalar_from_tensor
from arignote.tensor.join import join, split
from arignote.tensor.linalg.solve import solve
from arignote.tensor.reductions import prod
from arignote.tensor.shape import _zero_grad, flatten, reshape
from arignote.tensor.type import TensorType
from arignote.tensor.ufuncs import cast
from arignote.tensor.variable import TensorVariable

__all__ = ["minimize", "minimize_scalar", "root", "root_scalar"]

# compiling an inner function happens once per Op, even when two threads first use it
_compile_lock = threading.RLock()


# --- building the problem -----------------------------------------------------------------------


def _as_variables(xs: Any, output: Variable, what: str, name: str) -> tuple[list[TensorVariable], bool]:
    """The unknowns as a list (and whether one Variable was given): float tensors, all
    distinct, each one an ancestor of ``output``."""
    single = not isinstance(xs, (list, tuple))
    items = [xs] if single else list(xs)
    if not items:
        raise ValueError(f"{what}: no variables to solve for ({name} is empty)")
    ancestry = set(ancestors([output]))
    seen: set = set()
    for k, v in enumerate(items):
        label = name if single else f"{name}[{k}]"
        if not isinstance(v, TensorVariable) or isinstance(v, Constant):
            raise ValueError(
                f"{what}: {label} must be a symbolic tensor (not a constant), got {type(v).__name__} {v!r}"
            )
        if np.dtype(v.type.dtype).kind != "f":
            raise TypeError(f"{what}: {label} ({v}) must be a float tensor, got Type {v.type}")
        if v in seen:
            raise ValueError(f"{what}: {label} ({v}) appears twice among the variables")
        seen.add(v)
        if v not in ancestry:
            raise ValueError(
                f"{what}: {label} ({v}) must be an input to the computational graph of {output}; the "
                "objective does not depend on it"
            )
    return items, single


def _as_output(output: Any, what: str, name: str, scalar: bool) -> TensorVariable:
    try:
        out = as_tensor_variable(output)
    except (TypeError, ValueError) as err:
        raise ValueError(f"{what}: {name} must be a tensor expression, got {type(output).__name__}") from err
    if np.dtype(out.type.dtype).kind not in "fiub":
        raise TypeError(f"{what}: {name} ({out}) must be real-valued, got Type {out.type}")
    if scalar and out.type.ndim != 0:
        raise ValueError(f"{what}: {name} must be a scalar (0-d) tensor, got {out} of Type {out.type}")
    return out


def _find_parameters(output: Variable, xs: Sequence[Variable]) -> list[Variable]:
    """The parameters of the problem: the root Variables ``output`` depends on other than
    through ``xs`` (constants excluded), in graph order."""
    blocked = set(xs)
    return [
        v
        for v in graph_inputs([output], blockers=blocked)
        if v not in blocked and not isinstance(v, Constant)
    ]


def _check_options(what: str, method: Any, optimizer_kwargs: Any) -> dict:
    if not isinstance(method, str):
        raise TypeError(f"{what}: method must be the name of a scipy.optimize method, got {method!r}")
    if optimizer_kwargs is None:
        return {}
    if not isinstance(optimizer_kwargs, dict):
        raise TypeError(f"{what}: optimizer_kwargs must be a dict, got {type(optimizer_kwargs).__name__}")
    return dict(optimizer_kwargs)


# --- symbolic packing (the unknowns as one vector) ------------------------------------------------


def _flat(v: Variable) -> Variable:
    if v.type.ndim == 1:
        return v
    if v.type.ndim == 0:
        return v.dimshuffle("x")
    return flatten(v, 1)


def _pack(vs: Sequence[Variable]) -> Variable:
    """The tensors flattened and joined into one vector."""
    flats = [_flat(v) for v in vs]
    return flats[0] if len(flats) == 1 else join(0, *flats)


def _columns(jac: Variable, x: Variable) -> Variable:
    """A Jacobian ``(N, *x.shape)`` as a matrix ``(N, x.size)``."""
    if x.type.ndim == 0:
        return jac.dimshuffle(0, "x")
    if x.type.ndim == 1:
        return jac
    return flatten(jac, 2)


def _unpack(z: Variable, like: Sequence[Variable]) -> list[Variable]:
    """The vector ``z`` cut into pieces shaped like ``like`` (the inverse of ``_pack``)."""
    if len(like) == 1:
        (v,) = like
        return [z if v.type.ndim == 1 else reshape(z, tuple(v.shape) if v.type.ndim else ())]
    sizes = [prod(v.shape) if v.type.ndim else 1 for v in like]
    pieces = split(z, sizes, len(like))
    return [reshape(p, tuple(v.shape) if v.type.ndim else ()) for p, v in zip(pieces, like)]


class _Layout:
    """The unknowns' shapes and dtypes, to go between their values and SciPy's float64
    vector."""

    def __init__(self, values: Sequence[np.ndarray]):
        self.shapes = [np.shape(v) for v in values]
        self.dtypes = [np.asarray(v).dtype for v in values]
        self.sizes = [int(np.prod(s)) for s in self.shapes]

    def pack(self, values: Sequence[np.ndarray]) -> np.ndarray:
        return np.concatenate([np.asarray(v, dtype="float64").ravel() for v in values])

    def unpack(self, z: Any) -> list[np.ndarray]:
        z = np.asarray(z, dtype="float64").ravel()
        out, start = [], 0
        for shape, dtype, size in zip(self.shapes, self.dtypes, self.sizes):
            out.append(z[start : start + size].reshape(shape).astype(dtype))
            start += size
        return out


def _float64(value: Any) -> np.ndarray:
    return np.asarray(value, dtype="float64")


# --- the Ops --------------------------------------------------------------------------------------


class ScipyWrapperOp(Op, HasInnerGraph):
    """Base of the ``scipy.optimize`` Ops: inputs ``(*x0, *parameters)``, outputs
    ``(*solution, success)``.

    The inner graph maps ``(*x, *parameters)`` to the objective (``is_minimization``) or
    to the equations. Subclasses say what to compile (``_compiled_outputs``) and how to
    call SciPy (``perform``). Each Op is its own (equality is identity). ``jac`` and
    ``hess``: whether SciPy is given the derivatives (for the subclasses that use them).
    """

    is_minimization: bool = True
    #: the options that printing the Op shows
    _shown: tuple[str, ...] = ("method",)

    def __init__(
        self,
        xs: Sequence[Variable],
        args: Sequence[Variable],
        output: Variable,
        method: str,
        optimizer_kwargs: dict | None = None,
        use_vectorized_jac: bool = False,
        *,
        jac: bool = False,
        hess: bool = False,
    ):
        roots = [*xs, *args]
        memo = {v: v.type(name=v.name) for v in roots}
        equiv = clone_get_equiv([], [output], copy_inputs=False, copy_orphans=False, memo=memo)
        self.fgraph = FunctionGraph([memo[v] for v in roots], [equiv[output]], clone=False)
        self.n_vars = len(xs)
        self.method = method
        self.optimizer_kwargs = dict(optimizer_kwargs or {})
        self.use_vectorized_jac = bool(use_vectorized_jac)
        self.jac = bool(jac)
        self.hess = bool(hess)
        self._reset_caches()

    def _reset_caches(self) -> None:
        self._fns: dict[str, Any] = {}
        self._implicit_cache: tuple | None = None
        self._pattern: list[list[bool]] | None = None

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        for key in ("_fns", "_implicit_cache", "_pattern"):
            state.pop(key, None)
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._reset_caches()

    def __str__(self) -> str:
        options = ", ".join(f"{k}={getattr(self, k)}" for k in self._shown)
        return f"{type(self).__name__}({options})"

    # -- the inner graph ----------------------------------------------------------------------

    @property
    def inner_vars(self) -> list[Variable]:
        return self.inner_inputs[: self.n_vars]

    @property
    def inner_args(self) -> list[Variable]:
        return self.inner_inputs[self.n_vars :]

    def clone(self) -> ScipyWrapperOp:
        """A copy with its own copy of the inner graph."""
        res = copy(self)
        equiv = clone_get_equiv(self.inner_inputs, self.inner_outputs, clone_inner_graphs=True)
        res.fgraph = FunctionGraph(
            [equiv[v] for v in self.inner_inputs], [equiv[v] for v in self.inner_outputs], clone=False
        )
        res._reset_caches()
        return res

    def _compiled_outputs(self) -> dict[str, list[Variable]]:
        """The inner functions SciPy calls, by name, as lists of inner outputs."""
        raise NotImplementedError(f"{type(self).__name__} must define _compiled_outputs")  # pragma: no cover

    def compiled(self, name: str) -> Any:
        """The inner function ``name`` (compiled on first use, then reused)."""
        fn = self._fns.get(name)
        if fn is None:
            with _compile_lock:
                fn = self._fns.get(name)
                if fn is None:
                    outputs = self._compiled_outputs()[name]
                    fn = function(self.inner_inputs, outputs, on_unused_input="ignore")
                    fn.trust_input = True  # make_node checked the Types; perform casts the unknowns
                    self._fns[name] = fn
        return fn

    @property
    def fn(self) -> Any:
        """The compiled objective (with whatever derivatives the solver is given)."""
        return self.compiled("fun")

    # -- building nodes -----------------------------------------------------------------------

    def make_node(self, *inputs: Any) -> Apply:
        if len(inputs) != len(self.inner_inputs):
            raise ValueError(
                f"{self} takes {len(self.inner_inputs)} inputs ({self.n_vars} starting point(s), then "
                f"{len(self.inner_args)} parameter(s)), got {len(inputs)}"
            )
        checked = _filter_inputs(self, inputs, [v.type for v in self.inner_inputs])
        outputs = [v.type() for v in self.inner_vars] + [get_scalar_type("bool")("success")]
        return Apply(self, checked, outputs)

    def infer_shape(self, fgraph: Any, node: Apply, shapes: Sequence[tuple]) -> list[tuple]:
        return [*shapes[: self.n_vars], ()]

    # -- the implicit function ------------------------------------------------------------------

    def _implicit_function(self) -> list[Variable]:
        """The pieces of ``F`` with ``F(x*, theta) = 0`` at the solution."""
        out = self.inner_outputs[0]
        if not self.is_minimization:
            return [out]
        return list(grad(out, self.inner_vars, disconnected_inputs="ignore"))

    def _jacobian_of(self, F: Variable) -> Variable:
        """``dF/dx`` of the vector ``F`` as an ``(N, N)`` matrix."""
        xs = self.inner_vars
        vectorize = self.use_vectorized_jac or F.type.shape[0] is None
        jacs = jacobian(F, xs, disconnected_inputs="ignore", vectorize=vectorize)
        cols = [_columns(j, x) for j, x in zip(jacs, xs)]
        return cols[0] if len(cols) == 1 else join(1, *cols)

    def implicit(self) -> tuple[Variable, Variable, bool]:
        """``(F, J, scalar)``: the implicit function as one vector (a 0-d ``F`` and ``J``
        when the problem has one 0-d unknown and one equation), and its Jacobian in x."""
        if self._implicit_cache is None:
            pieces = self._implicit_function()
            xs = self.inner_vars
            if len(xs) == 1 and xs[0].type.ndim == 0 and len(pieces) == 1 and pieces[0].type.ndim == 0:
                (F,) = pieces
                J = grad(F, xs[0], disconnected_inputs="ignore")
                self._implicit_cache = (F, J, True)
            else:
                F = _pack(pieces)
                self._implicit_cache = (F, self._jacobian_of(F), False)
        return self._implicit_cache

    def connection_pattern(self, node: Apply | None = None) -> list[list[bool]]:
        """The solution depends on each parameter the implicit function ``F`` depends on
        (the starting point: connected, with a zero gradient); the success flag on none."""
        if self._pattern is None:
            F = self.implicit()[0]
            through_F = io_connection_pattern(self.inner_inputs, [F])
            m = self.n_vars
            self._pattern = [[k < m or row[0]] * m + [False] for k, row in enumerate(through_F)]
        return [list(r) for r in self._pattern]

    # -- differentiation ------------------------------------------------------------------------

    def _to_outer(self, solutions: Sequence[Variable], args: Sequence[Variable]) -> dict:
        return {**dict(zip(self.inner_vars, solutions)), **dict(zip(self.inner_args, args))}

    def pullback(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]
    ) -> list:
        """Zeros for the starting point; for each parameter ``theta``,
        ``-(dF/dtheta)^T w`` with ``J^T w = g`` (``g``: the solution's output gradient)."""
        m = self.n_vars
        solutions, args = outputs[:m], inputs[m:]
        gs = output_grads[:m]
        if all(is_disconnected(g) for g in gs):
            return [disconnected_type() for _ in inputs]
        pattern = self.connection_pattern()
        result: list = [_zero_grad(x0) for x0 in inputs[:m]] + [disconnected_type() for _ in args]
        wanted = [k for k in range(len(args)) if pattern[m + k][0]]
        if not wanted:
            return result
        F, J, scalar = self.implicit()
        outer = self._to_outer(solutions, args)
        g = [_zero_grad(s) if is_disconnected(gi) else as_tensor_variable(gi) for s, gi in zip(solutions, gs)]
        J_outer = clone_replace(J, outer)
        if scalar:
            w = -(g[0] / J_outer)
        else:
            w = -solve(J_outer.T, _pack(g), b_ndim=1)
        w_inner = TensorType(F.type.dtype, (None,) * F.type.ndim)("w")
        terms = grad(
            None,
            [self.inner_args[k] for k in wanted],
            known_grads={F: w_inner},
            disconnected_inputs="ignore",
            return_disconnected="disconnected",
            null_gradients="return",
        )
        terms = clone_replace(list(terms), {**outer, w_inner: cast(w, F.type.dtype)})
        for k, term in zip(wanted, terms):
            result[m + k] = _zeros_for(args[k]) if is_disconnected(term) else term
        return result

    def pushforward(
        self, inputs: Sequence[Variable], outputs: Sequence[Variable], eval_points: Sequence[Variable]
    ) -> list:
        """``dx* = -J^{-1} (dF/dtheta . dtheta)``; the starting point's tangent has no
        effect, and the success flag has none."""
        m = self.n_vars
        solutions, args = outputs[:m], inputs[m:]
        pattern = self.connection_pattern()
        active = [
            k
            for k in range(len(args))
            if pattern[m + k][0]
            and not is_disconnected(eval_points[m + k])
            and np.dtype(getattr(args[k].type, "dtype", "int64")).kind in "fc"
        ]
        if not active:
            return [disconnected_type() for _ in outputs]
        F, J, scalar = self.implicit()
        placeholders = [_broad_type(self.inner_args[k].type)() for k in active]
        dF = pushforward(
            F,
            [self.inner_args[k] for k in active],
            placeholders,
            disconnected_outputs="ignore",
            return_disconnected="zero",
        )
        replace = self._to_outer(solutions, args)
        for k, p in zip(active, placeholders):
            t = eval_points[m + k]
            if isinstance(p.type, TensorType):  # a tangent in another float dtype is cast
                t = as_tensor_variable(t)
                t = cast(t, p.type.dtype) if t.type.dtype != p.type.dtype else t
            replace[p] = t
        dF_outer, J_outer = clone_replace([dF, J], replace)
        if scalar:
            dz = -(dF_outer / J_outer)
            pieces = [dz]
        else:
            pieces = _unpack(-solve(J_outer, dF_outer, b_ndim=1), solutions)
        tangents = [
            cast(p, s.type.dtype) if p.type.dtype != s.type.dtype else p for p, s in zip(pieces, solutions)
        ]
        return [*tangents, disconnected_type()]


def _broad_type(t: Any) -> Any:
    """``t`` with every length unknown (a placeholder that any tangent fits)."""
    if isinstance(t, TensorType):
        return TensorType(t.dtype, (None,) * t.ndim)
    return t


def _zeros_for(v: Variable) -> Variable:
    if isinstance(v.type, TensorType):
        return _zero_grad(v)
    return scalar_from_tensor(_zero_grad(as_tensor_variable(v)))


class MinimizeOp(ScipyWrapperOp):
    """``scipy.optimize.minimize`` of the inner objective, from the starting point(s)
    given as the first inputs. ``jac``: give SciPy the gradient; ``hess``: the Hessian."""

    is_minimization = True
    _shown = ("method", "jac", "hess")

    def _compiled_outputs(self) -> dict[str, list[Variable]]:
        f = self.inner_outputs[0]
        outputs = {"fun": [f]}
        if self.jac:  # the implicit function of a minimisation is the gradient
            outputs["fun"].append(_flat(self.implicit()[0]))
        if self.hess:
            outputs["hess"] = [self.implicit()[1]]
        return outputs

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        from scipy import optimize

        m = self.n_vars
        layout, args = _Layout(inputs[:m]), tuple(inputs[m:])
        fun_fn = self.fn

        def fun(z: np.ndarray) -> Any:
            out = fun_fn(*layout.unpack(z), *args)
            return (float(out[0]), _float64(out[1]).ravel()) if self.jac else float(out[0])

        hess = None
        if self.hess:
            hess_fn = self.compiled("hess")
            size = sum(layout.sizes)

            def hess(z: np.ndarray) -> np.ndarray:
                return _float64(hess_fn(*layout.unpack(z), *args)[0]).reshape(size, size)

        res = optimize.minimize(
            fun,
            layout.pack(inputs[:m]),
            jac=True if self.jac else None,  # None: SciPy's default (no warning for methods without one)
            hess=hess,
            method=self.method,
            **self.optimizer_kwargs,
        )
        for cell, value in zip(output_storage, layout.unpack(res.x)):
            cell[0] = value
        output_storage[m][0] = np.bool_(res.success)


class MinimizeScalarOp(ScipyWrapperOp):
    """``scipy.optimize.minimize_scalar`` of the inner objective of one 0-d unknown (the
    starting value is not used: the scalar methods bracket or bound the minimum)."""

    is_minimization = True

    def _compiled_outputs(self) -> dict[str, list[Variable]]:
        return {"fun": [self.inner_outputs[0]]}

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        from scipy import optimize

        x0, *args = inputs
        dtype, fun_fn = np.asarray(x0).dtype, self.fn

        def fun(z: Any) -> float:
            return float(fun_fn(np.asarray(z, dtype=dtype), *args)[0])

        res = optimize.minimize_scalar(fun, method=self.method, **self.optimizer_kwargs)
        output_storage[0][0] = np.asarray(res.x, dtype=dtype)
        output_storage[1][0] = np.bool_(res.success)


class RootOp(ScipyWrapperOp):
    """``scipy.optimize.root`` of the inner equations (as many as unknowns), from the
    starting point(s) given as the first inputs. ``jac``: give SciPy the Jacobian."""

    is_minimization = False
    _shown = ("method", "jac")

    def _compiled_outputs(self) -> dict[str, list[Variable]]:
        F = _pack([self.inner_outputs[0]])
        if not self.jac:
            return {"fun": [F]}
        return {"fun": [F, self.implicit()[1]]}

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        from scipy import optimize

        m = self.n_vars
        layout, args = _Layout(inputs[:m]), tuple(inputs[m:])
        fun_fn = self.fn
        size = sum(layout.sizes)

        def fun(z: np.ndarray) -> Any:
            out = fun_fn(*layout.unpack(z), *args)
            values = _float64(out[0]).ravel()
            if values.shape[0] != size:
                raise ValueError(
                    f"{self}: the equations have {values.shape[0]} values for {size} unknowns; a root "
                    "needs as many equations as unknowns"
                )
            return (values, _float64(out[1]).reshape(size, size)) if self.jac else values

        jac = True if self.jac else None  # None: SciPy's default (no warning for methods without one)
        res = optimize.root(
            fun, layout.pack(inputs[:m]), jac=jac, method=self.method, **self.optimizer_kwargs
        )
        for cell, value in zip(output_storage, layout.unpack(res.x)):
            cell[0] = value
        output_storage[m][0] = np.bool_(res.success)


class RootScalarOp(ScipyWrapperOp):
    """``scipy.optimize.root_scalar`` of one equation in one 0-d unknown; ``jac`` and
    ``hess`` give SciPy its first and second derivatives."""

    is_minimization = False
    _shown = ("method", "jac", "hess")

    def _compiled_outputs(self) -> dict[str, list[Variable]]:
        f = self.inner_outputs[0]
        x = self.inner_vars[0]
        outputs = [f]
        if self.jac:
            outputs.append(grad(f, x, disconnected_inputs="ignore"))
        if self.hess:
            outputs.append(grad(outputs[1], x, disconnected_inputs="ignore"))
        return {"fun": outputs}

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        from scipy import optimize

        x0, *args = inputs
        dtype, fun_fn = np.asarray(x0).dtype, self.fn
        last: dict = {}

        def at(z: Any) -> list:
            # SciPy asks for f, f' and f'' at the same point one after the other: compute once
            key = float(z)
            if last.get("z") != key:
                last["z"], last["out"] = key, fun_fn(np.asarray(z, dtype=dtype), *args)
            return last["out"]

        res = optimize.root_scalar(
            lambda z: float(at(z)[0]),
            x0=float(x0),
            fprime=(lambda z: float(at(z)[1])) if self.jac else None,
            fprime2=(lambda z: float(at(z)[2])) if self.hess else None,
            method=self.method,
            **self.optimizer_kwargs,
        )
        output_storage[0][0] = np.asarray(res.root, dtype=dtype)
        output_storage[1][0] = np.bool_(res.converged)


# --- the public functions ----------------------------------------------------------------------


def minimize(
    objective: Any,
    x: TensorVariable | Sequence[TensorVariable],
    method: str = "BFGS",
    jac: bool = True,
    hess: bool = False,
    use_vectorized_jac: bool = False,
    optimizer_kwargs: dict | None = None,
) -> tuple[Any, Variable]:
    """Minimise the scalar ``objective`` over ``x`` with ``scipy.optimize.minimize``.

    ``x``: the unknown (a float tensor of any shape, whose value is the starting point),
    or a list of them (solved for together). Every other non-constant input of
    ``objective``'s graph is a parameter. ``jac``/``hess``: pass SciPy the gradient /
    Hessian (built symbolically). ``use_vectorized_jac``: build the Hessian in one
    vectorised pass (always done when its size is not known statically) instead of one
    pass per row. ``optimizer_kwargs``: more keywords for ``scipy.optimize.minimize``
    (``tol``, ``options``, ``bounds``, ...).

    Returns ``(solution, success)``: the minimiser (shaped like ``x``; a list when ``x``
    is a list) and a boolean scalar, SciPy's report of convergence. When ``success`` is
    False the solution is the solver's last iterate. The solution is differentiable in
    the parameters.

    >>> import numpy as np
    >>> import arignote.tensor as pt
    >>> x, c = pt.dvector("x"), pt.dvector("c")
    >>> x_star, ok = minimize(((x - c) ** 2).sum(), x)
    >>> x_star.eval({x: np.zeros(2), c: np.array([1.0, -2.0])}).round(6)
    array([ 1., -2.])
    """
    objective = _as_output(objective, "minimize", "objective", scalar=True)
    xs, single = _as_variables(x, objective, "minimize", "x")
    kwargs = _check_options("minimize", method, optimizer_kwargs)
    args = _find_parameters(objective, xs)
    op = MinimizeOp(xs, args, objective, method, kwargs, use_vectorized_jac, jac=jac, hess=hess)
    *solution, success = op(*xs, *args)
    return (solution[0] if single else solution), success


def minimize_scalar(
    objective: Any, x: TensorVariable, method: str = "brent", optimizer_kwargs: dict | None = None
) -> tuple[Variable, Variable]:
    """Minimise the scalar ``objective`` over the 0-d ``x`` with
    ``scipy.optimize.minimize_scalar`` (``method``: ``"brent"``, ``"golden"`` or
    ``"bounded"``, with ``bounds`` or ``bracket`` in ``optimizer_kwargs``). The value of
    ``x`` is not used as a start (the scalar methods bracket the minimum themselves).

    Returns ``(solution, success)``, as :func:`minimize`.

    >>> import arignote.tensor as pt
    >>> x, a = pt.dscalar("x"), pt.dscalar("a")
    >>> x_star, ok = minimize_scalar(pt.cosh(x - a), x)
    >>> round(float(x_star.eval({x: 0.0, a: 0.5})), 5)
    0.5
    """
    objective = _as_output(objective, "minimize_scalar", "objective", scalar=True)
    (xv,), _ = _as_variables(x, objective, "minimize_scalar", "x")
    if xv.type.ndim != 0:
        raise ValueError(f"minimize_scalar: x must be a scalar (0-d) tensor, got {xv} of Type {xv.type}")
    kwargs = _check_options("minimize_scalar", method, optimizer_kwargs)
    args = _find_parameters(objective, [xv])
    op = MinimizeScalarOp([xv], args, objective, method, kwargs)
    solution, success = op(xv, *args)
    return solution, success


def _check_square(equations: Variable, xs: Sequence[Variable], what: str) -> None:
    sizes = [_static_size(v) for v in (equations, *xs)]
    if None not in sizes and sizes[0] != sum(sizes[1:]):  # type: ignore[arg-type]
        raise ValueError(
            f"{what}: the equations ({equations.type}) have {sizes[0]} values for {sum(sizes[1:])} "  # type: ignore[arg-type]
            "unknowns; a root needs as many equations as unknowns"
        )


def _static_size(v: Variable) -> int | None:
    shape = v.type.shape
    return None if None in shape else int(np.prod(shape))


def root(
    equations: Any,
    variables: TensorVariable | Sequence[TensorVariable],
    method: str = "hybr",
    jac: bool = True,
    use_vectorized_jac: bool = False,
    optimizer_kwargs: dict | None = None,
) -> tuple[Any, Variable]:
    """Solve ``equations == 0`` for ``variables`` with ``scipy.optimize.root``.

    ``equations``: a tensor with as many values as the unknowns together. ``variables``:
    the unknown (a float tensor whose value is the starting point) or a list of them.
    ``jac``: pass SciPy the Jacobian (built symbolically; ``use_vectorized_jac`` as in
    :func:`minimize`). ``optimizer_kwargs``: more keywords for ``scipy.optimize.root``.

    Returns ``(solution, success)``, as :func:`minimize`.

    >>> import numpy as np
    >>> import arignote.tensor as pt
    >>> x, a = pt.dvector("x"), pt.dscalar("a")
    >>> eqs = pt.stack([x[0] + x[1] - a, x[0] - x[1]])
    >>> sol, ok = root(eqs, x)
    >>> sol.eval({x: np.zeros(2), a: 3.0}).round(6)
    array([1.5, 1.5])
    """
    equations = _as_output(equations, "root", "equations", scalar=False)
    xs, single = _as_variables(variables, equations, "root", "variables")
    _check_square(equations, xs, "root")
    kwargs = _check_options("root", method, optimizer_kwargs)
    args = _find_parameters(equations, xs)
    op = RootOp(xs, args, equations, method, kwargs, use_vectorized_jac, jac=jac)
    *solution, success = op(*xs, *args)
    return (solution[0] if single else solution), success


def root_scalar(
    equation: Any,
    variable: TensorVariable,
    method: str = "secant",
    jac: bool = False,
    hess: bool = False,
    optimizer_kwargs: dict | None = None,
) -> tuple[Variable, Variable]:
    """Solve the scalar ``equation == 0`` for the 0-d ``variable`` with
    ``scipy.optimize.root_scalar``, starting from ``variable``'s value.

    ``jac``/``hess``: pass SciPy the first / second derivative (``"newton"`` and
    ``"halley"`` use them; ``hess`` needs ``jac``). Bracketing methods (``"brentq"``,
    ``"bisect"``, ...) take ``bracket`` in ``optimizer_kwargs``.

    Returns ``(solution, success)``, as :func:`minimize`.

    >>> import arignote.tensor as pt
    >>> x, a = pt.dscalar("x"), pt.dscalar("a")
    >>> sol, ok = root_scalar(x**3 - a, x, method="newton", jac=True)
    >>> round(float(sol.eval({x: 1.0, a: 8.0})), 6)
    2.0
    """
    equation = _as_output(equation, "root_scalar", "equation", scalar=True)
    (xv,), _ = _as_variables(variable, equation, "root_scalar", "variable")
    if xv.type.ndim != 0:
        raise ValueError(f"root_scalar: variable must be a scalar (0-d) tensor, got {xv} of Type {xv.type}")
    if hess and not jac:
        raise ValueError("root_scalar: hess=True needs jac=True (no method uses f'' without f')")
    kwargs = _check_options("root_scalar", method, optimizer_kwargs)
    args = _find_parameters(equation, [xv])
    op = RootScalarOp([xv], args, equation, method, kwargs, jac=jac, hess=hess)
    solution, success = op(xv, *args)
    return solution, success
