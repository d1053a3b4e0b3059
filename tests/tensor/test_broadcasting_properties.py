"""Random broadcasting patterns: Elemwise against a plain model of PyTensor 3's rule.

Every input dimension has a static length (1, ``None`` or a known length) and a run-time
length consistent with it. The model, written here independently of the library:

- statically, the known lengths other than 1 of a dimension must agree (else ``make_node``
  raises); the output's static length is that length, else 1 when every input has a
  static 1 there, else unknown;
- at run time, every input whose static length is not 1 must have the same length (a
  run-time 1 does not broadcast), else ``perform`` raises; the values are then NumPy's
  broadcast.

A second property does the same for reductions over random axes (negative, unordered,
with keepdims).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import arignote.tensor as pt
from tests.tensor.utils import assert_infer_shape

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def dimension(draw: Any, target: int) -> tuple[int | None, int]:
    """(static length, run-time length) of one input dimension whose output length is ``target``."""
    runtime = draw(st.sampled_from([target] * 6 + [1, 0, 2, 3]))
    if runtime == 1:
        static = draw(st.sampled_from([1, 1, None]))
    else:
        static = draw(st.sampled_from([None, runtime]))
    return static, runtime


@st.composite
def broadcast_inputs(draw: Any, n_inputs: int) -> list[tuple[tuple, tuple]]:
    """``n_inputs`` (static shape, run-time shape) pairs of up to 4 dimensions."""
    ndim = draw(st.integers(0, 4))
    targets = draw(st.lists(st.integers(0, 3), min_size=ndim, max_size=ndim))
    inputs = []
    for _ in range(n_inputs):
        in_ndim = draw(st.integers(0, ndim))
        dims = [draw(dimension(t)) for t in targets[ndim - in_ndim :]]
        inputs.append((tuple(s for s, _ in dims), tuple(r for _, r in dims)))
    return inputs


def model(inputs: list[tuple[tuple, tuple]]) -> tuple[str, Any]:
    """("static error", dim) | ("runtime error", dim) | ("ok", static output shape)."""
    ndim = max((len(s) for s, _ in inputs), default=0)
    padded = [((1,) * (ndim - len(s)) + s, (1,) * (ndim - len(r)) + r) for s, r in inputs]
    out_static = []
    for d in range(ndim):
        statics = [s[d] for s, _ in padded]
        known = {s for s in statics if s is not None and s != 1}
        if len(known) > 1:
            return "static error", d
        out_static.append(known.pop() if known else 1 if all(s == 1 for s in statics) else None)
    for d in range(ndim):
        lengths = {r[d] for s, r in padded if s[d] != 1}
        if len(lengths) > 1:
            return "runtime error", d
    return "ok", tuple(out_static)


def values_for(inputs: list[tuple[tuple, tuple]], dtype: str = "float64") -> list[np.ndarray]:
    return [(np.arange(int(np.prod(r)), dtype=dtype).reshape(r) + k) for k, (_, r) in enumerate(inputs)]


@SETTINGS
@given(n=st.integers(1, 4), data=st.data())
def test_variadic_add_mul_broadcasting(n: int, data: Any) -> None:
    inputs = data.draw(broadcast_inputs(n))
    xs = [pt.tensor(f"x{k}", dtype="float64", shape=s) for k, (s, _) in enumerate(inputs)]
    outcome, detail = model(inputs)
    event(outcome)
    if outcome == "static error":
        with pytest.raises(ValueError, match=f"Incompatible static shapes at dimension {detail}"):
            pt.add(*xs)
        return
    add, mul = pt.add(*xs), pt.mul(*xs)
    assert add.type.shape == mul.type.shape
    vals = values_for(inputs)
    givens = dict(zip(xs, vals))
    if outcome == "runtime error":
        assert add.type.shape != detail  # the static shape cannot have caught it
        with pytest.raises(ValueError, match=f"shape mismatch at dimension {detail}"):
            add.eval(givens)
        return
    assert add.type.shape == detail
    ref_add, ref_mul = vals[0], vals[0]
    for v in vals[1:]:
        ref_add, ref_mul = ref_add + v, ref_mul * v
    got = add.eval(givens)
    np.testing.assert_array_equal(got, ref_add)
    assert got.shape == np.broadcast_shapes(*(v.shape for v in vals))
    assert all(s is None or s == g for s, g in zip(add.type.shape, got.shape))
    np.testing.assert_array_equal(mul.eval(givens), ref_mul)
    assert_infer_shape(add, givens)


@SETTINGS
@given(data=st.data())
def test_switch_and_binary_broadcasting(data: Any) -> None:
    inputs = data.draw(broadcast_inputs(3))
    c = pt.tensor("c", dtype="bool", shape=inputs[0][0])
    a = pt.tensor("a", dtype="float32", shape=inputs[1][0])
    b = pt.tensor("b", dtype="int16", shape=inputs[2][0])
    outcome, detail = model(inputs)
    outcome2, detail2 = model(inputs[1:])
    if outcome2 == "static error":
        with pytest.raises(ValueError, match="Incompatible static shapes"):
            pt.maximum(a, b)
    else:
        mx = pt.maximum(a, b)
        assert mx.dtype == "float32" and mx.type.shape == (detail2 if outcome2 == "ok" else mx.type.shape)
    if outcome == "static error":
        with pytest.raises(ValueError, match=f"dimension {detail}"):
            pt.switch(c, a, b)
        return
    out = pt.switch(c, a, b)
    assert out.dtype == "float32"
    cv = values_for(inputs[:1], "int64")[0] % 2 == 0
    av, bv = values_for(inputs[1:2], "float32")[0], values_for(inputs[2:], "int16")[0] - 5
    givens = {c: cv, a: av, b: bv}
    if outcome == "runtime error":
        with pytest.raises(ValueError, match=f"dimension {detail}"):
            out.eval(givens)
        return
    assert out.type.shape == detail
    np.testing.assert_array_equal(out.eval(givens), np.where(cv, av, bv).astype("float32"))
    assert_infer_shape(out, givens)


@st.composite
def reduction_case(draw: Any) -> tuple[tuple, tuple, Any, bool]:
    ndim = draw(st.integers(0, 4))
    runtime = tuple(draw(st.lists(st.integers(0, 3), min_size=ndim, max_size=ndim)))
    static = tuple(
        draw(st.sampled_from([None, r])) if r != 1 else draw(st.sampled_from([None, 1])) for r in runtime
    )
    kind = draw(st.sampled_from(["none", "int", "tuple"]))
    if kind == "none" or ndim == 0:
        axis = None if kind == "none" or draw(st.booleans()) else ()
    elif kind == "int":
        axis = draw(st.integers(-ndim, ndim - 1))
    else:
        chosen = draw(st.lists(st.integers(0, ndim - 1), unique=True, max_size=ndim))
        axis = tuple(a - ndim if draw(st.booleans()) else a for a in chosen)  # some negative
    return static, runtime, axis, draw(st.booleans())


REDUCERS = {
    "sum": (pt.sum, np.sum, True),
    "prod": (pt.prod, np.prod, True),
    "max": (pt.max, np.max, False),
    "min": (pt.min, np.min, False),
    "any": (pt.any, np.any, True),
}


@SETTINGS
@given(case=reduction_case(), name=st.sampled_from(sorted(REDUCERS)))
def test_reductions_over_random_axes(case: tuple, name: str) -> None:
    static, runtime, axis, keepdims = case
    fn, ref_fn, has_identity = REDUCERS[name]
    x = pt.tensor("x", dtype="float64", shape=static)
    out = fn(x, axis=axis, keepdims=keepdims)
    ndim = len(static)
    axes = set(range(ndim)) if axis is None else {a % ndim for a in np.atleast_1d(axis).tolist()}
    if keepdims:
        assert out.type.shape == tuple(1 if d in axes else s for d, s in enumerate(static))
    else:
        assert out.type.shape == tuple(s for d, s in enumerate(static) if d not in axes)
    value = np.linspace(-1, 1, int(np.prod(runtime))).reshape(runtime)
    empty = any(runtime[a] == 0 for a in axes)
    event(f"{name}: empty reduced axis" if empty else name)
    if empty and not has_identity:
        with pytest.raises(ValueError, match="empty"):
            out.eval({x: value})
        return
    np_axis = tuple(sorted(axes)) if axis is not None else None
    ref = ref_fn(value, axis=np_axis, keepdims=keepdims)
    got = out.eval({x: value})
    assert got.shape == np.shape(ref)
    # a backend may add in another order (Numba's reassociating loops): the sum of n values
    # of at most 1 may then differ by n rounding steps, however close to 0 it is
    np.testing.assert_allclose(got, ref, atol=value.size * np.finfo(np.float64).eps)
    assert_infer_shape(out, {x: value})
