"""Elemwise, DimShuffle and CAReduce as Ops: make_node (types and static shapes), perform
(against NumPy), infer_shape, printing, aliasing, and the errors for bad input.

The user-facing functions built on them (``pt.add``, ``pt.sum``, ...) are tested over
dtypes in ``test_math.py``; random broadcasting patterns in
``test_broadcasting_properties.py``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import arignote.scalar as ps
import arignote.tensor as pt
from arignote.graph.basic import Apply
from arignote.link.perform import evaluate
from arignote.scalar.op import ScalarOp, upcast_out
from arignote.tensor.elemwise import CAReduce, DimShuffle, Elemwise, normalize_axis
from arignote.tensor.type import TensorType
from tests.tensor.utils import assert_infer_shape

rng = np.random.default_rng(42)


def tensor(shape: tuple, dtype: str = "float64", name: str = "x") -> Any:
    return pt.tensor(name, dtype=dtype, shape=shape)


def run_perform(node: Apply, values: list[np.ndarray]) -> list[Any]:
    """Call ``perform`` directly (no filtering, no copies of the inputs)."""
    storage: list[list[Any]] = [[None] for _ in node.outputs]
    node.op.perform(node, values, storage)
    return [cell[0] for cell in storage]


# --- Elemwise: make_node ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "shapes, expected",
    [
        ([(2, 3), (2, 3)], (2, 3)),
        ([(None, None), (None, None)], (None, None)),
        ([(1, None), (3, 1)], (3, None)),
        ([(None, None), (3, 1)], (3, None)),
        ([(None,), (1,)], (None,)),
        ([(1, 1), (1,)], (1, 1)),
        ([(1,), (1,), (1,)], (1,)),
        ([(), ()], ()),
        ([(4, 5), ()], (4, 5)),
        ([(0, None), (1, 7)], (0, 7)),
        ([(None, 1, 5), (2, None, 1), (1,)], (2, None, 5)),
    ],
)
def test_elemwise_static_output_shape(shapes: list[tuple], expected: tuple) -> None:
    inputs = [tensor(s, name=f"x{i}") for i, s in enumerate(shapes)]
    out = pt.add(*inputs)
    assert out.type.shape == expected
    assert out.type.dtype == "float64"
    # the inputs of fewer dimensions are left-padded with broadcastable dimensions
    assert [i.type.ndim for i in out.owner.inputs] == [len(expected)] * len(shapes)


def test_elemwise_pads_with_expand_dims() -> None:
    x, y = pt.dmatrix("x"), pt.dvector("y")
    out = x * y
    padded = out.owner.inputs[1]
    assert str(padded.owner.op) == "ExpandDims{axis=0}"
    assert padded.type.shape == (1, None)
    assert out.owner.inputs[0] is x
    c = (x * 2.0).owner.inputs[1]
    assert str(c.owner.op) == "ExpandDims{axes=(0, 1)}"


@pytest.mark.parametrize(
    "shapes, dim",
    [([(2, 3), (3, 3)], 0), ([(None, 4), (5,)], 1), ([(2,), (3,), (1,)], 0), ([(2, 1, 3), (1, 5, 4)], 2)],
)
def test_elemwise_mismatched_static_shapes_are_an_error(shapes: list[tuple], dim: int) -> None:
    inputs = [tensor(s, name=f"in{i}") for i, s in enumerate(shapes)]
    with pytest.raises(ValueError, match=f"Incompatible static shapes at dimension {dim}") as info:
        pt.add(*inputs)
    assert "in0" in str(info.value) and "in1" in str(info.value)


def test_elemwise_wrong_number_of_inputs() -> None:
    x = pt.dvector("x")
    with pytest.raises(TypeError, match="takes 2 inputs, got 3"):
        pt.sub(x, x, x)
    with pytest.raises(TypeError, match="takes 1 inputs, got 2"):
        pt.exp(x, x)
    with pytest.raises(TypeError, match="needs at least one input"):
        pt.add()


def test_elemwise_needs_a_scalar_op() -> None:
    with pytest.raises(TypeError, match="needs a ScalarOp"):
        Elemwise(lambda a: a)  # type: ignore[arg-type]


def test_elemwise_illegal_dtype_names_the_op_and_inputs() -> None:
    b = tensor((None,), "bool", "b")
    with pytest.raises(TypeError, match=r"Sub.*bool.*Vector\(bool"):
        b - b
    with pytest.raises(TypeError, match="Invert.*float64"):
        pt.invert(pt.dvector("x"))


def test_elemwise_props_equality_and_hash() -> None:
    assert pt.add == Elemwise(ps.add)
    assert Elemwise(ps.add) == Elemwise(ps.add)
    assert hash(Elemwise(ps.add)) == hash(Elemwise(ps.add))
    assert Elemwise(ps.add) != Elemwise(ps.mul)
    assert Elemwise(ps.add, {0: 0}) != Elemwise(ps.add)
    assert Elemwise(ps.add, {0: 1}) == Elemwise(ps.add, {0: 1})


# --- Elemwise: perform ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "xshape, yshape, xval, yval",
    [
        ((), (), (), ()),
        ((None,), (None,), (0,), (0,)),
        ((None, None), (1, None), (0, 3), (1, 3)),
        ((None, 1), (None,), (4, 1), (0,)),
        ((2, None), (None,), (2, 5), (5,)),
        ((None, None, None), (), (2, 3, 4), ()),
        ((1, 1), (None, None), (1, 1), (3, 2)),
    ],
)
def test_elemwise_values_0d_empty_and_broadcast(xshape, yshape, xval, yval) -> None:
    x, y = tensor(xshape, name="x"), tensor(yshape, name="y")
    a, b = rng.normal(size=xval), rng.normal(size=yval)
    for out, ref in [(x + y, a + b), (x * y - x, a * b - a), (pt.maximum(x, y), np.maximum(a, b))]:
        got = out.eval({x: a, y: b}, on_unused_input="ignore")
        assert isinstance(got, np.ndarray) and got.dtype == "float64"
        np.testing.assert_allclose(got, ref)
        assert got.shape == np.broadcast_shapes(np.shape(a), np.shape(b))
        assert_infer_shape(out, {x: a, y: b})


@pytest.mark.parametrize("n", [3, 4, 7])
def test_elemwise_variadic_add_and_mul(n: int) -> None:
    shapes = [(None, None), (1, None), (None,), ()]
    values = {(None, None): (2, 3), (1, None): (1, 3), (None,): (3,), (): ()}
    xs = [tensor(shapes[k % 4], name=f"x{k}") for k in range(n)]
    vals = [rng.normal(size=values[shapes[k % 4]]) for k in range(n)]
    s, p = pt.add(*xs), pt.mul(*xs)
    assert len(s.owner.inputs) == n and s.type.shape == (None, None)
    givens = dict(zip(xs, vals))
    ref_s, ref_p = vals[0], vals[0]
    for v in vals[1:]:
        ref_s, ref_p = ref_s + v, ref_p * v
    np.testing.assert_allclose(s.eval(givens), ref_s)
    np.testing.assert_allclose(p.eval(givens), ref_p)
    assert_infer_shape(s, givens)
    assert_infer_shape(p, givens)


def test_elemwise_variadic_dtype_upcast() -> None:
    a, b, c = tensor((None,), "int8", "a"), tensor((None,), "uint8", "b"), tensor((None,), "float32", "c")
    out = pt.add(a, b, c)
    assert out.dtype == np.result_type(np.int8, np.uint8, np.float32).name
    got = out.eval(
        {a: np.array([1, -2], "int8"), b: np.array([3, 250], "uint8"), c: np.array([0.5, 1.5], "f4")}
    )
    np.testing.assert_allclose(got, [4.5, 249.5])
    assert got.dtype == out.dtype


def test_runtime_broadcast_of_unknown_length_is_an_error() -> None:
    x, y = pt.dvector("x"), pt.dvector("y")
    out = x + y
    with pytest.raises(ValueError, match="shape mismatch at dimension 0") as info:
        out.eval({x: np.ones(3), y: np.ones(1)})
    msg = str(info.value)
    assert "(3,)" in msg and "(1,)" in msg and "statically" in msg
    with pytest.raises(ValueError, match="shape mismatch at dimension 0") as info:
        out.eval({x: np.ones(3), y: np.ones(2)})
    assert "statically" not in str(info.value)
    # lengths of 1 on both sides are fine, and a static 1 broadcasts
    np.testing.assert_allclose(out.eval({x: np.ones(1), y: np.ones(1)}), [2.0])
    z = tensor((1,), name="z")
    np.testing.assert_allclose((x + z).eval({x: np.ones(3), z: np.ones(1)}), [2.0] * 3)


def test_runtime_mismatch_in_a_later_dimension() -> None:
    x, y = pt.dmatrix("x"), tensor((2, None), name="y")
    with pytest.raises(ValueError, match="dimension 1"):
        (x * y).eval({x: np.ones((2, 3)), y: np.ones((2, 4))})


def test_outputs_never_alias_inputs() -> None:
    x, y = pt.dmatrix("x"), pt.dvector("y")
    a, b = rng.normal(size=(2, 3)), rng.normal(size=3)
    for out in [pt.identity(x), pt.tensor_copy(x), pt.real(x), pt.second(x, y), pt.second(y, x)]:
        got = out.eval({x: a, y: b}, on_unused_input="ignore")
        assert not np.shares_memory(got, a) and not np.shares_memory(got, b), out
        assert got.flags.writeable, out
    got = pt.second(x, y).eval({x: a, y: b}, on_unused_input="ignore")
    np.testing.assert_array_equal(got, np.broadcast_to(b, (2, 3)))
    # NumPy's imag of a real array is a read-only array: the output is a writeable copy
    got = pt.imag(x).eval({x: a})
    assert got.flags.writeable and not got.any()


def test_perform_identity_copies_when_numpy_returns_the_input() -> None:
    x = pt.dvector("x")
    node = pt.identity(x).owner
    a = np.arange(3.0)
    (out,) = run_perform(node, [a])
    assert out is not a and not np.shares_memory(out, a)
    np.testing.assert_array_equal(out, a)


def test_inplace_pattern_destroys_the_declared_input() -> None:
    op = Elemwise(ps.add, {0: 0})
    assert op.destroy_map == {0: [0]}
    assert Elemwise(ps.add).destroy_map == {}
    assert str(op) == "Add[0<-0]"
    x, y = pt.dmatrix("x"), pt.dvector("y")
    node = op(x, y).owner
    a, b = np.ones((2, 3)), np.arange(3.0)
    (out,) = run_perform(node, [a, b[None, :]])  # node.inputs[1] is y padded to (1, n)
    assert out is a
    np.testing.assert_array_equal(a, 1 + np.broadcast_to(b, (2, 3)))
    np.testing.assert_array_equal(b, np.arange(3.0))


def test_inplace_pattern_on_the_second_input() -> None:
    op = Elemwise(ps.mul, {0: 1})
    x, y = pt.dvector("x"), pt.dvector("y")
    node = op(x, y).owner
    a, b = np.array([2.0, 3.0]), np.array([4.0, 5.0])
    (out,) = run_perform(node, [a, b])
    assert out is b
    np.testing.assert_array_equal(b, [8.0, 15.0])
    np.testing.assert_array_equal(a, [2.0, 3.0])


def test_inplace_pattern_needs_matching_type() -> None:
    x, y = pt.dmatrix("x"), pt.dvector("y")
    with pytest.raises(TypeError, match="in place of input 1"):
        Elemwise(ps.add, {0: 1})(x, y)  # y is broadcast: smaller than the output
    i = pt.ivector("i")
    with pytest.raises(TypeError, match="in place of input 0"):
        Elemwise(ps.add, {0: 0})(i, y)  # int32 input, float64 output


def test_multi_output_elemwise() -> None:
    a, b = ps.float64("a"), ps.float64("b")
    op = Elemwise(ps.Composite([a, b], [a + b, a * b]))
    x, y = pt.dmatrix("x"), tensor((1, None), name="y")
    o1, o2 = op(x, y)
    assert o1.type.shape == o2.type.shape == (None, None)
    va, vb = rng.normal(size=(2, 3)), rng.normal(size=(1, 3))
    r1, r2 = evaluate([o1, o2], {x: va, y: vb})
    np.testing.assert_allclose(r1, va + vb)
    np.testing.assert_allclose(r2, va * vb)
    assert_infer_shape(o1, {x: va, y: vb})


def test_elemwise_infer_shape_prefers_a_non_broadcast_input() -> None:
    x, y, z = tensor((1, None), name="x"), tensor((None, 1), name="y"), tensor((None, None), name="z")
    out = pt.add(x, y, z)
    node = out.owner
    shapes = [(1, "x1"), ("y0", 1), ("z0", "z1")]
    assert node.op.infer_shape(None, node, shapes) == [("y0", "x1")]
    givens = {x: np.ones((1, 4)), y: np.ones((3, 1)), z: np.ones((3, 4))}
    assert_infer_shape(out, givens)
    s = tensor((5, None), name="s")
    assert node.op.infer_shape(None, (s + z).owner, [(5, "s1"), ("z0", "z1")]) == [(5, "s1")]


@pytest.mark.parametrize(
    "build, text",
    [
        (lambda x: x * x, "Mul"),
        (lambda x: x + x, "Add"),
        (lambda x: pt.cast(x, "int8"), "Cast{int8}"),
        (lambda x: pt.switch(x > 0, x, 0), "Switch"),
        (lambda x: pt.eq(x, x), "Eq"),
        (lambda x: x // x, "Int_div"),
        (lambda x: x / x, "True_div"),
        (lambda x: pt.exp(x), "Exp"),
        (lambda x: pt.isnan(x), "Isnan"),
        (lambda x: pt.gammaln(x), "Gammaln"),
    ],
)
def test_elemwise_str_is_pytensor_form(build, text: str) -> None:
    x = pt.dvector("x")
    assert str(build(x).owner.op) == text


# --- DimShuffle ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "in_shape, order, text, out_shape",
    [
        ((None, None), ("x", 0, 1), "ExpandDims{axis=0}", (1, None, None)),
        ((None,), ("x", "x", 0), "ExpandDims{axes=(0, 1)}", (1, 1, None)),
        ((None, None), (0, "x", 1), "ExpandDims{axis=1}", (None, 1, None)),
        ((1, None), (1,), "Squeeze{axis=0}", (None,)),
        ((1, 3, 1), (1,), "Squeeze{axes=(0, 2)}", (3,)),
        ((2, 3, 4), (1, 0, 2), "Transpose{axes=(1, 0, 2)}", (3, 2, 4)),
        ((2, None), (1, 0), "MatrixTranspose", (None, 2)),
        ((None, 3, 1), (2, "x", 0, 1), "DimShuffle{order=[2,x,0,1]}", (1, 1, None, 3)),
        ((1, None), ("x", 1), "DimShuffle{order=[x,1]}", (1, None)),
        ((), ("x",), "ExpandDims{axis=0}", (1,)),
        ((1,), (), "Squeeze{axis=0}", ()),
    ],
)
def test_dimshuffle(in_shape, order, text, out_shape) -> None:
    x = tensor(in_shape)
    out = x.dimshuffle(*order) if order else DimShuffle(input_ndim=len(in_shape), new_order=())(x)
    assert str(out.owner.op) == text
    assert out.type.shape == out_shape
    value = rng.normal(size=tuple(3 if s is None else s for s in in_shape))
    got = out.eval({x: value})
    kept = [d for d in order if d != "x"]
    dropped = [d for d in range(len(in_shape)) if d not in kept]
    ref = np.transpose(value, kept + dropped).reshape([value.shape[d] for d in kept])
    ref = np.expand_dims(ref, [i for i, d in enumerate(order) if d == "x"])
    np.testing.assert_array_equal(got, ref)
    assert got.shape == ref.shape
    assert_infer_shape(out, {x: value})


def test_dimshuffle_output_is_a_declared_view() -> None:
    x = pt.dmatrix("x")
    out = x.T
    assert out.owner.op.view_map == {0: [0]}
    assert not out.owner.op.destroy_map
    a = rng.normal(size=(2, 3))
    (res,) = run_perform(out.owner, [a])
    assert np.shares_memory(res, a)
    np.testing.assert_array_equal(res, a.T)


def test_dimshuffle_empty_input() -> None:
    x = pt.dmatrix("x")
    out = x.dimshuffle(1, "x", 0)
    got = out.eval({x: np.zeros((0, 4))})
    assert got.shape == (4, 1, 0)
    assert_infer_shape(out, {x: np.zeros((0, 4))})


def test_dimshuffle_errors() -> None:
    x = pt.dmatrix("x")
    with pytest.raises(ValueError, match="cannot drop dimension 1"):
        x.dimshuffle(0)
    with pytest.raises(ValueError, match="neither 'x' nor a dimension"):
        DimShuffle(input_ndim=2, new_order=(0, 2))
    with pytest.raises(ValueError, match="neither 'x' nor a dimension"):
        DimShuffle(input_ndim=2, new_order=(0, "y"))
    with pytest.raises(ValueError, match="appears twice"):
        DimShuffle(input_ndim=2, new_order=(0, 0, 1))
    with pytest.raises(TypeError, match="non-negative int"):
        DimShuffle(input_ndim=-1, new_order=())
    with pytest.raises(TypeError, match="expects a 3-d input"):
        DimShuffle(input_ndim=3, new_order=(0, 1, 2))(x)


def test_dimshuffle_props() -> None:
    a = DimShuffle(input_ndim=2, new_order=(1, 0))
    b = DimShuffle(input_ndim=2, new_order=[1, 0])
    assert a == b and hash(a) == hash(b)
    assert a != DimShuffle(input_ndim=2, new_order=(0, 1))
    assert a.is_transpose and not a.is_expand_dims and not a.is_squeeze
    e = DimShuffle(input_ndim=1, new_order=("x", 0))
    assert e.is_expand_dims and e.is_left_expand_dims and e.augment == [0]
    s = DimShuffle(input_ndim=2, new_order=(1,))
    assert s.is_squeeze and s.drop == [0]


# --- CAReduce -------------------------------------------------------------------------------


class PyAdd(ScalarOp):
    """An addition with no ``ufunc``: CAReduce must reduce it with ``impl``."""

    nin = 2
    identity = 0
    commutative = associative = True

    def impl(self, a: Any, b: Any) -> Any:
        return np.add(a, b)


class PyMax(PyAdd):
    identity = None

    def impl(self, a: Any, b: Any) -> Any:
        return np.maximum(a, b)


py_add = PyAdd(upcast_out, name="py_add")
py_max = PyMax(upcast_out, name="py_max")


@pytest.mark.parametrize("axis", [None, (0,), (1,), (0, 2), (2,), ()])
def test_careduce_generic_scalar_op_matches_numpy(axis) -> None:
    x = pt.tensor3("x")
    value = rng.normal(size=(2, 3, 4))
    for sop, ref in [(py_add, np.sum), (py_max, np.max), (ps.add, np.sum), (ps.maximum, np.max)]:
        out = CAReduce(sop, axis=axis)(x)
        kept = tuple(s for d, s in enumerate(x.type.shape) if axis is not None and d not in axis)
        assert out.type.shape == kept
        np.testing.assert_allclose(out.eval({x: value}), ref(value, axis=axis))
        assert_infer_shape(out, {x: value})


def test_careduce_generic_empty_axes() -> None:
    x = pt.dmatrix("x")
    value = np.zeros((0, 3))
    np.testing.assert_array_equal(CAReduce(py_add, axis=0)(x).eval({x: value}), np.zeros(3))
    np.testing.assert_array_equal(CAReduce(py_add)(x).eval({x: value}), 0.0)
    assert CAReduce(py_max, axis=1)(x).eval({x: value}).shape == (0,)
    with pytest.raises(ValueError, match="empty axis 0.*no identity"):
        CAReduce(py_max, axis=0)(x).eval({x: value})
    with pytest.raises(ValueError, match="empty axis 0.*no identity"):
        CAReduce(ps.maximum)(x).eval({x: value})


def test_careduce_str() -> None:
    assert str(CAReduce(ps.add, axis=0)) == "CAReduce{add, axis=0}"
    assert str(CAReduce(ps.maximum, axis=(0, 2))) == "CAReduce{maximum, axes=[0, 2]}"
    assert str(CAReduce(ps.mul)) == "CAReduce{mul, axes=None}"


def test_careduce_needs_a_binary_scalar_op() -> None:
    with pytest.raises(ValueError, match="binary scalar op"):
        CAReduce(ps.exp)
    with pytest.raises(TypeError, match="needs a ScalarOp"):
        CAReduce(np.add)  # type: ignore[arg-type]


def test_careduce_resolves_negative_axes() -> None:
    x = pt.tensor3("x")
    out = CAReduce(ps.add, axis=-1)(x)
    assert out.owner.op.axis == (2,)
    assert out.owner.op == CAReduce(ps.add, axis=2)
    assert out.type.shape == (None, None)
    value = rng.normal(size=(2, 3, 4))
    np.testing.assert_allclose(out.eval({x: value}), value.sum(-1))
    with pytest.raises(ValueError, match="out of bounds"):
        CAReduce(ps.add, axis=3)(x)
    with pytest.raises(ValueError, match="repeated axis"):
        CAReduce(ps.add, axis=(0, -3))(x)


def test_careduce_dtype_names_are_normalised() -> None:
    a = CAReduce(ps.add, dtype=np.float32, acc_dtype="float64")
    b = CAReduce(ps.add, dtype="float32", acc_dtype=np.dtype("float64"))
    assert a == b and a.dtype == "float32" and a.acc_dtype == "float64"


def test_careduce_output_is_fresh() -> None:
    x = pt.dmatrix("x")
    value = rng.normal(size=(2, 3))
    for op in [CAReduce(ps.add, axis=()), CAReduce(ps.maximum, axis=()), CAReduce(py_add, axis=())]:
        out = op(x)
        assert out.type.shape == (None, None)
        got = out.eval({x: value})
        np.testing.assert_array_equal(got, value)
        assert not np.shares_memory(got, value)


# --- normalize_axis -------------------------------------------------------------------------


def test_normalize_axis() -> None:
    assert normalize_axis(None, 3) is None
    assert normalize_axis(-1, 3) == (2,)
    assert normalize_axis(np.int64(1), 3) == (1,)
    assert normalize_axis([2, -3], 3) == (0, 2)
    assert normalize_axis((), 3) == ()
    assert normalize_axis(pt.constant(1), 2) == (1,)
    assert normalize_axis(pt.constant(np.array([0, -1])), 2) == (0, 1)
    with pytest.raises(ValueError, match="axis 3 is out of bounds for a tensor of 3 dimension"):
        normalize_axis(3, 3)
    with pytest.raises(ValueError, match="axis -4 is out of bounds"):
        normalize_axis((0, -4), 3)
    with pytest.raises(ValueError, match=r"repeated axis in \(1, -2\)"):
        normalize_axis((1, -2), 3)
    with pytest.raises(TypeError, match="axis must be"):
        normalize_axis(1.0, 3)
    with pytest.raises(TypeError, match="axis must be"):
        normalize_axis((0, 1.5), 3)
    with pytest.raises(ValueError, match="out of bounds for a tensor of 0"):
        normalize_axis(0, 0)


def test_tensor_type_of_outputs() -> None:
    x = tensor((2, None, 1), "float32")
    out = pt.exp(x)
    assert isinstance(out.type, TensorType)
    assert out.type == TensorType("float32", (2, None, 1))


@pytest.mark.parametrize(
    "build",
    [
        lambda x: pt.sum(x, axis=2),
        lambda x: pt.max(x, axis=-3),
        lambda x: pt.argmax(x, axis=2),
        lambda x: pt.mean(x, axis=5),
        lambda x: pt.all(x, axis=2),
        lambda x: pt.var(x, axis=2),
        lambda x: pt.sort(x, axis=2),
        lambda x: pt.argsort(x, axis=2),
        lambda x: pt.cumsum(x, axis=2),
        lambda x: pt.diff(x, axis=2),
        lambda x: pt.squeeze(x, axis=2),
        lambda x: pt.expand_dims(x, 3),
        lambda x: pt.swapaxes(x, 0, 2),
        lambda x: pt.moveaxis(x, 0, 2),
        lambda x: pt.take(x, [0], axis=2),
        lambda x: pt.repeat(x, 2, axis=2),
        lambda x: pt.flip(x, axis=2),
        lambda x: pt.special.softmax(x, axis=2),
        lambda x: pt.logsumexp(x, axis=2),
        lambda x: pt.unique(x, axis=2),
        lambda x: pt.roll(x, 1, axis=2),
        lambda x: pt.median(x, axis=2),
        lambda x: pt.ptp(x, axis=2),
        lambda x: pt.tensordot(x, x, axes=[[2], [0]]),
        lambda x: pt.diagonal(x, axis1=0, axis2=2),
        lambda x: pt.shape_padaxis(x, 3),
        lambda x: pt.take(pt.dscalar("s"), [0], axis=0),
    ],
)
def test_an_axis_out_of_range_is_numpys_axis_error(build):
    """An axis out of range is NumPy's AxisError (both a ValueError and an IndexError), as
    in NumPy and PyTensor, whatever function takes it."""
    x = pt.dmatrix("x")
    with pytest.raises(np.exceptions.AxisError) as info:
        build(x)
    assert isinstance(info.value, ValueError) and isinstance(info.value, IndexError)
    assert "out of" in str(info.value)


def test_a_repeated_axis_stays_a_value_error():
    x = pt.dmatrix("x")
    with pytest.raises(ValueError, match="repeated") as info:
        pt.sum(x, axis=(0, 0))
    assert not isinstance(info.value, IndexError)


@pytest.mark.parametrize(
    ("op", "ufunc"),
    [(pt.add, np.add), (pt.sub, np.subtract), (pt.maximum, np.maximum), (pt.mul, np.multiply)],
)
def test_outer_matches_numpys_ufunc_outer(op, ufunc):
    x, y = pt.dvector("x"), pt.imatrix("y")
    xv, yv = np.array([0.5, -1.0, 2.0]), np.arange(6, dtype="int32").reshape(2, 3)
    out = op.outer(x, y)
    want = ufunc.outer(xv, yv)
    assert out.type.ndim == 3 and out.type.dtype == want.dtype
    np.testing.assert_array_equal(out.eval({x: xv, y: yv}), want)
    c = op.outer(pt.constant(np.ones((2, 1))), x)  # static lengths carry over
    assert c.type.shape == (2, 1, None)


def test_outer_of_a_unary_op_is_refused():
    with pytest.raises(NotImplementedError, match="Exp.outer needs a binary op"):
        pt.exp.outer(pt.dvector("x"), pt.dvector("y"))


# -- node typing helpers and connection pattern ---------------------------------------------


def test_get_output_info_gives_the_nodes_dtypes_shapes_and_padded_inputs():
    x = pt.tensor("x", dtype="float32", shape=(None, 3))
    v = pt.tensor("v", dtype="int16", shape=(3,))
    op = pt.add
    dtypes, shapes, inputs = op.get_output_info(x, v)
    node = op.make_node(x, v)
    assert dtypes == [o.type.dtype for o in node.outputs]
    assert dtypes == [np.result_type(np.float32, np.int16).name]
    assert shapes == [o.type.shape for o in node.outputs] == [(None, 3)]
    assert inputs[0] is x and inputs[1].type.shape == (1, 3)
    with pytest.raises(ValueError):
        op.get_output_info(x, pt.tensor("w", shape=(4,)))


def test_make_scalar_node_works_on_one_element_of_each_input():
    op = pt.mul
    node = op.make_scalar_node(pt.dmatrix("a"), pt.ivector("b"))
    assert node.op == op.scalar_op
    assert [i.type.dtype for i in node.inputs] == ["float64", "int32"]
    assert node.outputs[0].type.dtype == "float64"


def test_connection_pattern_follows_the_scalar_op():
    x, y = pt.dmatrix("x"), pt.dmatrix("y")
    node = (x + y).owner
    assert node.op.connection_pattern(node) == [[True], [True]]
    node = pt.second(x, y).owner  # fill: the values of its first input are not used
    assert node.op.connection_pattern(node) == [[False], [True]]


@pytest.mark.parametrize(
    "ndim, order, matrix_t, left_expanded_t, right_expand",
    [
        (2, (1, 0), True, True, False),
        (3, (0, 2, 1), True, True, False),
        (2, ("x", 1, 0), False, True, False),
        (3, (1, 0, 2), False, False, False),
        (2, (0, 1, "x"), False, False, True),
        (1, (0, "x", "x"), False, False, True),
        (2, ("x", 0, 1), False, False, False),
    ],
)
def test_dimshuffle_classifies_transposes_and_expansions(
    ndim, order, matrix_t, left_expanded_t, right_expand
):
    op = DimShuffle(input_ndim=ndim, new_order=order)
    assert (op.is_matrix_transpose, op.is_left_expanded_matrix_transpose, op.is_right_expand_dims) == (
        matrix_t,
        left_expanded_t,
        right_expand,
    )
    # NumPy: the same axes moved as np.transpose/np.expand_dims would
    value = np.arange(np.prod(range(2, 2 + ndim))).reshape(range(2, 2 + ndim))
    kept = [d for d in order if d != "x"]
    expected = np.expand_dims(value.transpose(kept), [i for i, d in enumerate(order) if d == "x"])
    out = op(pt.as_tensor_variable(value)).eval()
    np.testing.assert_array_equal(out, expected)
    if matrix_t:
        np.testing.assert_array_equal(out, np.swapaxes(value, -1, -2))
