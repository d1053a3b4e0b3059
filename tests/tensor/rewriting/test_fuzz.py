"""Random graphs from the Op catalogue, compiled with every mode: the rewritten graphs must
compute what the graph as written computes, and no rule may raise (the suite runs with
``config.on_opt_error = "raise"``). Where the graph as written overflows or is undefined
(inf, NaN), a rewritten graph may do better (that is what the stabilize rules are for, and
``x - x`` is 0 after canonicalize, as in PyTensor): only the finite values are compared,
and they must stay finite."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import arignote
import arignote.tensor as pt

MODES = {
    "FAST_RUN": arignote.Mode(optimizer="fast_run"),
    "FAST_COMPILE": arignote.Mode(optimizer="fast_compile"),
    "no fusion": arignote.Mode(optimizer="fast_run").excluding("fusion"),
}
UNREWRITTEN = arignote.Mode(optimizer=None)

# (name, arity, builder): each takes and returns float64 tensors of shape (3, 4) or
# broadcastable to it; the domain-restricted ones are fed values that keep them finite
# often enough, and NaN/inf results are compared NaN-equal anyway
UNARY: list[tuple[str, Callable[[Any], Any]]] = [
    ("neg", lambda a: -a),
    ("exp", pt.exp),
    ("log", lambda a: pt.log(pt.abs(a) + 0.5)),
    ("log1p", lambda a: pt.log1p(pt.abs(a))),
    ("tanh", pt.tanh),
    ("sigmoid", pt.sigmoid),
    ("softplus", pt.softplus),
    ("sqr", lambda a: a**2),
    ("pow3", lambda a: a**3),
    ("sqrt_abs", lambda a: pt.sqrt(pt.abs(a))),
    ("recip", lambda a: 1.0 / (pt.abs(a) + 1.0)),
    ("log_1p_exp", lambda a: pt.log(1 + pt.exp(a))),
    ("exp_m1", lambda a: pt.exp(a) - 1),
    ("times_one", lambda a: a * 1),
    ("plus_zero", lambda a: a + 0),
    ("times_zero", lambda a: a * 0),
    ("cast32", lambda a: pt.cast(a, "float32")),
    ("transpose_twice", lambda a: a.T.T),
    ("sum_keep", lambda a: a.sum(axis=1, keepdims=True)),
    ("max_keep", lambda a: a.max(axis=0, keepdims=True)),
    ("softmax", lambda a: pt.special.softmax(a, axis=-1)),
    ("sub_self", lambda a: a - a),
    ("div_self", lambda a: (a * a + 1.0) / (a * a + 1.0)),
    ("exp_log", lambda a: pt.exp(pt.log(pt.abs(a) + 1.0))),
    ("reshape_back", lambda a: a.reshape((-1,)).reshape(a.shape)),
]
BINARY: list[tuple[str, Callable[[Any, Any], Any]]] = [
    ("add", lambda a, b: a + b),
    ("sub", lambda a, b: a - b),
    ("mul", lambda a, b: a * b),
    ("div", lambda a, b: a / (pt.abs(b) + 1.0)),
    ("mul_div", lambda a, b: a * b / b),
    ("maximum", pt.maximum),
    ("switch", lambda a, b: pt.switch(a > b, a, b)),
    ("row_broadcast", lambda a, b: a + b.mean(axis=0, keepdims=True)),
]


@st.composite
def graphs(draw: Any) -> tuple[list[str], Any]:
    """A random expression over two (3, 4) inputs: a list of steps, each applying an Op of
    the catalogue to earlier values."""
    steps: list[tuple[str, int, int]] = []
    n = draw(st.integers(1, 8))
    for k in range(n):
        available = 2 + k
        if draw(st.booleans()):
            i = draw(st.integers(0, len(UNARY) - 1))
            steps.append(("u", i, draw(st.integers(0, available - 1))))
        else:
            i = draw(st.integers(0, len(BINARY) - 1))
            a = draw(st.integers(0, available - 1))
            b = draw(st.integers(0, available - 1))
            steps.append(("b", i, a * 1000 + b))
    outputs = draw(st.lists(st.integers(0, n + 1), min_size=1, max_size=3, unique=True))
    return steps, outputs


def _build(steps: list, outputs: list) -> tuple[list, list, list[str]]:
    x, y = pt.dmatrix("x"), pt.dmatrix("y")
    values = [x, y]
    names = []
    for kind, i, arg in steps:
        if kind == "u":
            name, fn = UNARY[i]
            values.append(pt.as_tensor_variable(fn(values[arg])))
        else:
            name, fn = BINARY[i]
            values.append(pt.as_tensor_variable(fn(values[arg // 1000], values[arg % 1000])))
        names.append(name)
    outs = [values[min(o, len(values) - 1)] for o in outputs]
    return [x, y], outs, names


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs(), st.integers(0, 2**31 - 1))
def test_every_mode_computes_what_the_graph_says(case: tuple, seed: int) -> None:
    steps, outputs = case
    inputs, outs, names = _build(steps, outputs)
    rng = np.random.default_rng(seed)
    values = [rng.normal(size=(3, 4)) * 3 for _ in inputs]
    with np.errstate(all="ignore"):
        want = arignote.function(inputs, outs, mode=UNREWRITTEN, on_unused_input="ignore")(*values)
        for mode_name, mode in MODES.items():
            got = arignote.function(inputs, outs, mode=mode, on_unused_input="ignore")(*values)
            for k, (g, w) in enumerate(zip(got, want)):
                assert g.dtype == w.dtype and g.shape == w.shape, (mode_name, names, k)
                finite = np.isfinite(w)
                assert np.isfinite(g[finite]).all(), (mode_name, names, k)
                # rewrites may change rounding (fused, reassociated, stabilized forms); in
                # float32 a stabilized form is the more exact one where the graph as written
                # cancels (log(1 + exp(-7)) loses ~6e-8 absolute): an absolute floor of 1e-6
                f32 = w.dtype == np.float32
                np.testing.assert_allclose(
                    g[finite],
                    w[finite],
                    rtol=1e-5 if f32 else 1e-9,
                    atol=1e-6 if f32 else 1e-12,
                    err_msg=f"{mode_name}: output {k} of {names}",
                )
