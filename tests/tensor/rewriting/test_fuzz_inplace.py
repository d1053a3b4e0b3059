"""Random graphs of the Ops that go in place or into BLAS calls (increments and sets of
subtensors, advanced increments, products folded into Gemm, elementwise chains), compiled
with the default linker, without fusion and on the VM: each computes what the graph as
written computes, twice in a row (buffers are reused between calls), and never changes the
caller's arrays."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import arignote
import arignote.tensor as pt

UNARY = [
    ("exp", lambda a: pt.exp(a * 0.1)),
    ("neg", lambda a: -a),
    ("tanh", pt.tanh),
    ("transpose", lambda a: a.T),
    ("inc_row", lambda a: pt.inc_subtensor(a[1], 1.5)),
    ("set_col", lambda a: pt.set_subtensor(a[:, 2], a[:, 0])),
    ("adv_inc", lambda a: pt.inc_subtensor(a[[0, 2, 0]], 2.0)),
    ("sum_plus", lambda a: a.sum(axis=0, keepdims=True) + a),
    ("sqr", lambda a: a**2),
    ("cube", lambda a: a**3),
]
BINARY = [
    ("add", lambda a, b: a + b),
    ("mul", lambda a, b: a * b),
    ("sub", lambda a, b: a - b),
    ("dot", lambda a, b: pt.dot(a, b) * 0.25),
    ("update", lambda a, b: a - 0.1 * pt.dot(a, b)),
    ("scaled_dot_t", lambda a, b: 2.0 * b + pt.dot(a.T, b)),
]
MODES = {
    "FAST_RUN": arignote.Mode(optimizer="fast_run"),
    "no fusion": arignote.Mode(optimizer="fast_run").excluding("fusion"),
    "VM": arignote.Mode(linker="vm", optimizer="fast_run"),
}
AS_WRITTEN = arignote.Mode(linker="vm", optimizer=None)


@st.composite
def graphs(draw: Any) -> tuple[list, list[int]]:
    steps = []
    n = draw(st.integers(1, 7))
    for k in range(n):
        available = 2 + k
        if draw(st.booleans()):
            steps.append(("u", draw(st.integers(0, len(UNARY) - 1)), draw(st.integers(0, available - 1)), 0))
        else:
            i = draw(st.integers(0, len(BINARY) - 1))
            steps.append(("b", i, draw(st.integers(0, available - 1)), draw(st.integers(0, available - 1))))
    outputs = draw(st.lists(st.integers(0, n + 1), min_size=1, max_size=4, unique=True))
    return steps, outputs


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs(), st.integers(0, 2**31 - 1))
# a negated term also returned, in a sum the BLAS rule rewrote: it was negated twice
@example(([("u", 1, 0, 0), ("b", 4, 0, 0), ("u", 0, 0, 0), ("b", 0, 3, 2)], [2, 5]), 0)
def test_in_place_and_blas_rewrites_compute_what_the_graph_says(case: tuple, seed: int) -> None:
    steps, outputs = case
    x, y = pt.dmatrix("x"), pt.dmatrix("y")
    values, names = [x, y], []
    for kind, i, a, b in steps:
        name, fn = UNARY[i] if kind == "u" else BINARY[i]
        values.append(fn(values[a]) if kind == "u" else fn(values[a], values[b]))
        names.append(name)
    outs = [values[min(k, len(values) - 1)] for k in outputs]
    rng = np.random.default_rng(seed)
    given_values = [rng.normal(size=(4, 4)) for _ in range(2)]
    want = arignote.function([x, y], outs, mode=AS_WRITTEN, on_unused_input="ignore")(
        *[v.copy() for v in given_values]
    )
    for mode_name, mode in MODES.items():
        args = [v.copy() for v in given_values]
        f = arignote.function([x, y], outs, mode=mode, on_unused_input="ignore")
        for call in ("first", "second"):
            got = f(*args)
            for arg, original in zip(args, given_values):
                np.testing.assert_array_equal(arg, original, err_msg=f"{mode_name} changed an input: {names}")
            for k, (g, w) in enumerate(zip(got, want)):
                np.testing.assert_allclose(
                    g, w, rtol=1e-9, atol=1e-9, err_msg=f"{mode_name}, {call} call: output {k} of {names}"
                )
