"""Basic indexing (Subtensor), inc_subtensor / set_subtensor on basic indices, printing.
Values against NumPy. The Subtensor rules are tested in tests/tensor/rewriting/."""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import arignote
import arignote.tensor as pt
from arignote import function
from arignote.tensor.elemwise import DimShuffle
from arignote.tensor.subtensor import IncSubtensor, Subtensor, inc_subtensor, set_subtensor
from tests.tensor.utils import assert_infer_shape

XV = np.arange(4 * 5 * 6, dtype="float64").reshape(4, 5, 6)


def _static() -> Any:
    return pt.tensor("xs", dtype="float64", shape=(4, 5, 6))


def _dynamic() -> Any:
    return pt.tensor("xn", dtype="float64", shape=(None, None, None))


BASIC_INDICES = [
    0,
    -1,
    3,
    slice(1, 3),
    slice(None, None, -1),
    slice(-2, None, -2),
    (slice(-2, None, -2), 1),
    (Ellipsis, 0),
    (None, 0),
    (0, None, slice(1, None), None),
    (Ellipsis, None),
    (1, Ellipsis, slice(None, None, 2)),
    (np.int64(2), -3),
    (np.int8(-4), np.uint8(4), 5),
    slice(10, -10, -1),
    slice(-10, 10, 3),
    (slice(None), slice(None, None, -3), slice(4, 0, -2)),
    (slice(2, 2), 0),
    (slice(None), slice(None), slice(None)),
    (slice(None, None, 1),),
    Ellipsis,
    (),
    (None,),
    (None, Ellipsis, None),
    (-4, -5, -6),
    (3, 4, 5),
]


@pytest.mark.parametrize("index", BASIC_INDICES, ids=repr)
def test_basic_index_values_and_static_shape(index: Any) -> None:
    expected = XV[index]
    for x in (_static(), _dynamic()):
        out = x[index]
        got = out.eval({x: XV}) if out is not x else XV
        assert got.shape == expected.shape
        np.testing.assert_array_equal(got, expected)
        assert out.type.dtype == "float64"
        assert out.type.ndim == expected.ndim
    # with every length static, every output length is static
    assert _static()[index].type.shape == expected.shape


def test_unknown_lengths_stay_unknown_only_where_they_must() -> None:
    x = pt.tensor("x", dtype="float32", shape=(None, 7, 1))
    assert x[0].type.shape == (7, 1)
    assert x[1:].type.shape == (None, 7, 1)
    assert x[:, ::2].type.shape == (None, 4, 1)
    assert x[:, -3:, :].type.shape == (None, 3, 1)
    assert x[:, :, ::-1].type.shape == (None, 7, 1)
    assert x[None, :, 0].type.shape == (1, None, 1)
    i = pt.lscalar("i")
    assert x[:, i:].type.shape == (None, None, 1)
    assert pt.tensor("e", shape=(0,))[2:5].type.shape == (0,)


def test_index_entry_kinds() -> None:
    x = pt.dmatrix("x")
    i = pt.lscalar("i")
    j = pt.iscalar("j")
    s = arignote.scalar.int64("s")
    xv = np.arange(12.0).reshape(3, 4)
    assert np.array_equal(x[pt.constant(1)].eval({x: xv}), xv[1])
    assert np.array_equal(x[i, j].eval({x: xv, i: 2, j: -1}), xv[2, -1])
    assert np.array_equal(x[s].eval({x: xv, s: 1}), xv[1])
    assert np.array_equal(x[np.array(2)].eval({x: xv}), xv[2])  # a 0-d integer array is an int
    # constant entries live in the props, symbolic ones are inputs
    assert x[1, 2:].owner.op.idx_list == (1, slice(2, None, None))
    node = x[i, j:].owner
    assert node.inputs == [x, i, j]


@pytest.mark.parametrize(
    "start, stop, step",
    [
        (None, None, -1),
        (1, None, 2),
        (-2, None, -1),
        (None, -1, -2),
        (5, -9, -1),
        (-9, 9, 3),
        (2, 1, 1),
        (0, 0, -1),
    ],
)
def test_symbolic_slices_match_numpy(start: Any, stop: Any, step: Any) -> None:
    x = pt.dmatrix("x")
    a, b, c = pt.lscalar("a"), pt.lscalar("b"), pt.lscalar("c")
    syms = [a if start is not None else None, b if stop is not None else None, c]
    out = x[1:, syms[0] : syms[1] : syms[2]]
    f = function([x, a, b, c], out, on_unused_input="ignore")
    for n in (0, 1, 4, 7):
        xv = np.arange(3.0 * n).reshape(3, n)
        got = f(xv, start or 0, stop or 0, step)
        np.testing.assert_array_equal(got, xv[1:, start:stop:step])
        givens = {x: xv, a: start or 0, b: stop or 0, c: step}
        assert_infer_shape(out, givens)


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_random_basic_indices_against_numpy(data: Any) -> None:
    """Random basic index tuples (ints, slices, None, Ellipsis; constant or symbolic
    entries) on a random shape: values and inferred shapes as NumPy's."""
    shape = tuple(data.draw(st.lists(st.integers(0, 5), min_size=1, max_size=3)))
    xv = np.arange(int(np.prod(shape)), dtype="float64").reshape(shape)
    sym_vals: dict = {}
    syms: list = []

    def part(value: int | None) -> Any:
        if value is None or not data.draw(st.booleans()):
            return value
        v = pt.lscalar(f"s{len(syms)}")
        syms.append(v)
        sym_vals[v] = value
        return v

    def axis_entry(n: int) -> tuple[Any, Any]:
        """(symbolic-or-constant entry, NumPy entry) indexing an axis of length ``n``."""
        if n > 0 and data.draw(st.booleans()):
            v = data.draw(st.integers(-n, n - 1))
            return part(v), v
        bound = st.one_of(st.none(), st.integers(-7, 7))
        a, b = data.draw(bound), data.draw(bound)
        c = data.draw(st.one_of(st.none(), st.sampled_from([-3, -2, -1, 1, 2, 3])))
        return slice(part(a), part(b), part(c)), slice(a, b, c)

    # entries for the axes [0, k) (the rest is kept whole), or with an Ellipsis standing
    # for [k, m), entries for [0, k) and [m, ndim); new axes anywhere
    ndim = len(shape)
    k = data.draw(st.integers(0, ndim))
    use_ellipsis = data.draw(st.booleans())
    pairs: list = [axis_entry(shape[d]) for d in range(k)]
    if use_ellipsis:
        m = data.draw(st.integers(k, ndim))
        pairs.append((Ellipsis, Ellipsis))
        pairs.extend(axis_entry(shape[d]) for d in range(m, ndim))
    for _ in range(data.draw(st.integers(0, 2))):
        pairs.insert(data.draw(st.integers(0, len(pairs))), (None, None))
    entries = [e for e, _ in pairs]
    np_entries = [e for _, e in pairs]
    x = pt.tensor("x", dtype="float64", shape=(None,) * len(shape))
    out = x[tuple(entries)]
    expected = xv[tuple(np_entries)]
    givens = {x: xv, **sym_vals}
    got = function(list(givens), out, on_unused_input="ignore")(*givens.values()) if out is not x else xv
    np.testing.assert_array_equal(got, expected)
    assert got.shape == expected.shape
    if out.owner is not None and isinstance(out.owner.op, Subtensor):
        assert_infer_shape(out, givens)
    xs = pt.tensor("xs", dtype="float64", shape=shape)
    static = xs[tuple(np_entries)].type.shape
    assert static == expected.shape


# --- errors --------------------------------------------------------------------------------


def test_too_many_indices() -> None:
    x = pt.dmatrix("x")
    with pytest.raises(IndexError, match="too many indices for x: it is 2-dimensional.*3 were indexed"):
        x[0, 0, 0]
    with pytest.raises(IndexError, match="too many indices"):
        pt.dscalar("s")[0]
    with pytest.raises(IndexError, match="single ellipsis"):
        x[..., 0, ...]


@pytest.mark.parametrize("bad", [1.0, np.float32(2), slice(0.5, None), slice(None, 2.0)])
def test_float_index_is_an_error(bad: Any) -> None:
    x = pt.dvector("x")
    with pytest.raises((IndexError, TypeError), match="float|integer"):
        x[bad]


def test_float_tensor_index_is_an_error() -> None:
    x = pt.dvector("x")
    with pytest.raises(IndexError, match="dtype float64.*only integer and boolean"):
        x[pt.dscalar("f")]
    # a TypeError too, as PyTensor raises, for code that catches that
    for bad in [pt.dscalar("f"), pt.fvector("v"), pt.zvector("z")]:
        with pytest.raises(TypeError, match="only integer and boolean"):
            x[bad]
        with pytest.raises(TypeError, match="only integer and boolean"):
            pt.set_subtensor(x[bad], 1.0)
    with pytest.raises(TypeError, match="slice start in index 0 must be an integer"):
        x[pt.dscalar("f") :]
    with pytest.raises(TypeError, match="cannot index with 'a'"):
        x["a"]


def test_out_of_bounds_constant_index_at_build_time() -> None:
    x = pt.tensor("x", dtype="float64", shape=(3, None))
    with pytest.raises(IndexError, match="index 3 is out of bounds for axis 0 with size 3"):
        x[3]
    with pytest.raises(IndexError, match="index -4 is out of bounds for axis 0 with size 3"):
        x[-4]
    x[5:9]  # slices clamp: fine
    x[0, 100]  # axis 1 has no static length: checked at run time


def test_out_of_bounds_at_run_time() -> None:
    x = pt.dmatrix("x")
    i = pt.lscalar("i")
    f = function([x, i], x[1, i])
    assert f(np.ones((2, 3)), 2) == 1.0
    with pytest.raises(IndexError, match=r"index 3 is out of bounds for axis 1 with size 3.*shape \(2, 3\)"):
        f(np.ones((2, 3)), 3)
    with pytest.raises(IndexError, match="axis 0 with size 0"):
        function([x], x[0])(np.ones((0, 3)))


def test_zero_step() -> None:
    x = pt.dvector("x")
    with pytest.raises(ValueError, match="step cannot be zero"):
        x[::0]
    c = pt.lscalar("c")
    with pytest.raises(ValueError, match="step cannot be zero"):
        function([x, c], x[::c])(np.ones(3), 0)


def test_item_assignment_is_a_type_error() -> None:
    x = pt.dvector("x")
    with pytest.raises(
        TypeError, match=r"does not support item assignment.*set_subtensor\(x\[idx\], y\).*\.inc"
    ):
        x[0] = 1.0


def test_bad_op_construction() -> None:
    x = pt.dmatrix("x")
    with pytest.raises(TypeError, match="basic index entries"):
        Subtensor((None,))
    with pytest.raises(ValueError, match="expected 1 index input"):
        Subtensor((pt.lscalar().type,))(x)
    with pytest.raises(TypeError, match="index input 0.*expects a 0-d int64"):
        Subtensor((pt.lscalar().type,))(x, pt.iscalar())
    with pytest.raises(IndexError, match="too many indices"):
        Subtensor((0, 0, 0))(x)


# --- ops, merging, printing ------------------------------------------------------------------


def test_equal_indexings_merge() -> None:
    x = pt.dmatrix("x")
    i = pt.lscalar("i")
    assert x[0].owner.op == x[0].owner.op
    assert hash(x[1:, ::2].owner.op) == hash(x[1:, ::2].owner.op)
    assert x[0].owner.op != x[1].owner.op
    assert x[0, :].owner.op == x[0].owner.op  # trailing full slices are dropped
    f = function([x, i], [x[i, 1:] * 2, x[i, 1:] + 1])
    subs = [n for n in f.maker.fgraph.toposort() if isinstance(n.op, Subtensor)]
    assert len(subs) == 1


@pytest.mark.parametrize(
    "build, text",
    [
        (lambda x, i: x[i, 1:], "Subtensor{i, 1:}"),
        (lambda x, i: x[0, ::-1], "Subtensor{0, ::-1}"),
        (lambda x, i: x[1:3, i:], "Subtensor{1:3, start:}"),
        (lambda x, i: x[:i:i], "Subtensor{:stop:step}"),
        (lambda x, i: pt.set_subtensor(x[:3], 1.0), "SetSubtensor{:3}"),
        (lambda x, i: pt.inc_subtensor(x[i], 1.0), "IncSubtensor{i}"),
        (lambda x, i: x[[0, 1]], "AdvancedSubtensor1"),
        (lambda x, i: x[:, [0, 1]], "AdvancedSubtensor{:, idx}"),
        (lambda x, i: x[x > 0], "AdvancedSubtensor{mask}"),
        (lambda x, i: pt.inc_subtensor(x[[0, 1]], 1.0), "AdvancedIncSubtensor1"),
        (lambda x, i: pt.set_subtensor(x[[0, 1]], 1.0), "AdvancedSetSubtensor1"),
        (lambda x, i: pt.set_subtensor(x[i, [0, 1]], 1.0), "AdvancedSetSubtensor{i, idx}"),
    ],
)
def test_op_names(build: Any, text: str) -> None:
    x = pt.dmatrix("x")
    i = pt.lscalar("i")
    assert str(build(x, i).owner.op) == text


def test_dprint() -> None:
    x = pt.dmatrix("x")
    i = pt.lscalar("i")
    text = arignote.dprint(x[i, 1:], file="str")
    assert text.splitlines() == ["Subtensor{i, 1:} [id A]", " ├─ x [id B]", " └─ i [id C]"]


def test_new_axes_are_a_dimshuffle() -> None:
    x = pt.dmatrix("x")
    out = x[None, 0]
    assert isinstance(out.owner.op, DimShuffle)
    assert isinstance(out.owner.inputs[0].owner.op, Subtensor)
    assert x[None].owner.op == DimShuffle(input_ndim=2, new_order=("x", 0, 1))
    assert x[...] is x and x[()] is x
    assert isinstance(x[:].owner.op, Subtensor)


# --- infer_shape ---------------------------------------------------------------------------


def test_infer_shape_subtensor() -> None:
    x = pt.tensor3("x", dtype="float64")
    a, b, c = pt.lscalar("a"), pt.lscalar("b"), pt.lscalar("c")
    xv = np.zeros((5, 6, 7))
    for out, vals in [
        (x[a], {a: -2}),
        (x[1:, a:b:c], {a: -1, b: -10, c: -2}),
        (x[::-1, 2:, b], {b: 3}),
        (x[a::c, :b], {a: 10, c: -3, b: 4}),
        (x[:, :, ::c], {c: 4}),
    ]:
        assert_infer_shape(out, {x: xv, **vals})


def test_infer_shape_inc_subtensor() -> None:
    x = pt.dmatrix("x")
    i = pt.lscalar("i")
    out = pt.inc_subtensor(x[i, ::2], 1.0)
    assert_infer_shape(out, {x: np.zeros((3, 5)), i: 1})


# --- inc_subtensor / set_subtensor -------------------------------------------------------------


INC_CASES = [
    (0, (6,)),
    ((slice(1, 3), slice(None, None, -2)), (2, 3)),
    ((Ellipsis, -1), (4,)),
    ((slice(None), 2), ()),
    ((slice(None), slice(2, 4)), (2,)),
    ((slice(None, None, -1), slice(1, 2)), (4, 1)),
    ((1, slice(None)), (1,)),
    ((2, 3), ()),
]


@pytest.mark.parametrize("index, y_shape", INC_CASES, ids=repr)
@pytest.mark.parametrize("set_", [False, True])
def test_inc_and_set_subtensor_values(index: Any, y_shape: tuple, set_: bool) -> None:
    xv = np.arange(24.0).reshape(4, 6)
    yv = np.random.default_rng(0).normal(size=y_shape)
    x = pt.dmatrix("x")
    y = pt.tensor("y", dtype="float64", shape=tuple(1 if s == 1 else None for s in y_shape))
    out = (set_subtensor if set_ else inc_subtensor)(x[index], y)
    assert isinstance(out.owner.op, IncSubtensor) and out.owner.op.set_instead_of_inc == set_
    expected = xv.copy()
    if set_:
        expected[index] = yv
    else:
        expected[index] += yv
    before = xv.copy()
    got = function([x, y], out)(xv, yv)
    np.testing.assert_allclose(got, expected)
    np.testing.assert_array_equal(xv, before)  # the input is never modified
    assert out.type == x.type


def test_set_and_inc_methods() -> None:
    x = pt.dvector("x")
    xv = np.arange(5.0)
    np.testing.assert_array_equal(x[1:3].set(0.0).eval({x: xv}), [0, 0, 0, 3, 4])
    np.testing.assert_array_equal(x[-1].inc(10.0).eval({x: xv}), [0, 1, 2, 3, 14])


def test_inc_through_new_axes() -> None:
    x = pt.dmatrix("x")
    xv = np.zeros((2, 3))
    got = pt.set_subtensor(x[None, 0, :, None], np.ones((1, 3, 1))).eval({x: xv})
    np.testing.assert_array_equal(got, [[1, 1, 1], [0, 0, 0]])
    got = pt.inc_subtensor(x[None, 1], [1.0, 2.0, 3.0]).eval({x: xv})
    np.testing.assert_array_equal(got, [[0, 0, 0], [1, 2, 3]])
    with pytest.raises(ValueError, match="does not fit the new axes"):
        pt.set_subtensor(x[None, 0], np.ones((2, 3)))


def test_inc_subtensor_needs_an_indexing() -> None:
    x = pt.dmatrix("x")
    with pytest.raises(TypeError, match="x must be the result of indexing a tensor.*an input of the graph"):
        pt.set_subtensor(x, 1.0)
    with pytest.raises(TypeError, match=r"computed by Exp.*set_subtensor\(t\[idx\], y\)"):
        pt.set_subtensor(pt.exp(x), 1.0)
    with pytest.raises(TypeError, match="inc_subtensor: x must be"):
        pt.inc_subtensor(x.T, 1.0)


def test_inc_subtensor_value_shape_errors() -> None:
    x = pt.tensor("x", dtype="float64", shape=(4, 3))
    with pytest.raises(
        ValueError, match=r"value of shape \(2,\).*cannot be broadcast to the indexed shape \(3,\)"
    ):
        pt.set_subtensor(x[0], np.ones(2))
    with pytest.raises(TypeError, match="1-d.*value.*2-d.*too many dimensions"):
        pt.set_subtensor(x[0], pt.dmatrix("m"))
    x = pt.dmatrix("x")
    y = pt.dvector("y")
    f = function([x, y], pt.inc_subtensor(x[0], y))
    with pytest.raises(
        ValueError, match=r"cannot increment the indexed part of shape \(3,\) with a value of shape \(2,\)"
    ):
        f(np.zeros((2, 3)), np.ones(2))
    # a length-1 value whose Type does not say so does not broadcast
    with pytest.raises(ValueError, match=r"shape \(1,\)"):
        f(np.zeros((2, 3)), np.ones(1))


@pytest.mark.parametrize(
    "x_dtype, y_dtype, set_",
    [
        ("int8", "float32", True),
        ("int64", "float64", True),
        ("uint8", "int8", True),
        ("bool", "int8", True),
        ("uint8", "int8", False),
        ("int16", "int64", False),
    ],
)
def test_write_casts_the_value_to_x_dtype_as_pytensor(x_dtype: str, y_dtype: str, set_: bool) -> None:
    x = pt.tensor("x", dtype=x_dtype, shape=(2, 3))
    y = pt.tensor("y", dtype=y_dtype, shape=(3,))
    out = pt.set_subtensor(x[0], y) if set_ else pt.inc_subtensor(x[0], y)
    assert out.type.dtype == x_dtype
    X = np.arange(6).reshape(2, 3).astype(x_dtype)
    # (a float out of an integer dtype's range casts to what the platform gives: NumPy's
    # wraps on x86, XLA's saturates; only an integer value's wrap-around is defined)
    big = 300.0 if np.dtype(y_dtype).kind in "iub" else 100.5
    Y = np.array([1.7, -2.2, big]).astype(y_dtype)
    got = function([x, y], out)(X, Y)
    # NumPy: assignment casts; an integer increment wraps around in x's dtype
    expected = X.copy()
    if set_:
        expected[0] = Y
    else:
        expected[0] = (X[0].astype(np.int64) + Y.astype(np.int64)).astype(x_dtype)
    assert got.dtype == np.dtype(x_dtype)
    np.testing.assert_array_equal(got, expected)


def test_inc_subtensor_dtype_rules() -> None:
    xi = pt.imatrix("xi")
    with pytest.raises(TypeError, match="dtype int32; a value of dtype float64.*upcast"):
        pt.inc_subtensor(xi[0], pt.dvector("y"))
    # a set casts any real value to x's dtype, as PyTensor's (and NumPy's assignment)
    out = pt.set_subtensor(xi[0], 1.5)
    assert out.type.dtype == "int32"
    got = out.eval({xi: np.zeros((2, 2), "int32")})
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, [[1, 1], [0, 0]])
    # a constant that fits is given x's dtype; a narrower dtype of the same kind is cast
    xf = pt.fmatrix("xf")
    out = pt.set_subtensor(xf[0], 0.5)
    assert out.owner.inputs[1].type.dtype == "float32" and out.type.dtype == "float32"
    yd = pt.dvector("yd")
    got = pt.inc_subtensor(xf[0], yd).eval({xf: np.zeros((2, 2), "float32"), yd: np.array([1.0, 2.0])})
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, [[1, 2], [0, 0]])
    out = pt.inc_subtensor(xi[1], 3)
    assert out.type.dtype == "int32"
    np.testing.assert_array_equal(out.eval({xi: np.zeros((2, 2), "int32")}), [[0, 0], [3, 3]])


def test_inplace_prop_and_destroy_map() -> None:
    x = pt.dvector("x")
    out = pt.inc_subtensor(x[1:], 1.0, inplace=True)
    assert out.owner.op.inplace and out.owner.op.destroy_map == {0: [0]}
    assert pt.inc_subtensor(x[1:], 1.0).owner.op.destroy_map == {}
    assert out.owner.op != pt.inc_subtensor(x[1:], 1.0).owner.op
    node = out.owner
    xv = np.zeros(3)
    storage = [[None]]
    node.op.perform(node, [xv, np.asarray(1.0)], storage)
    assert storage[0][0] is xv and xv.tolist() == [0.0, 1.0, 1.0]


@pytest.mark.parametrize("axis", [None, 0, -1, (0, 2)])
def test_flip(axis: Any) -> None:
    x = pt.tensor3("x", dtype="float64")
    out = pt.flip(x, axis)
    assert isinstance(out.owner.op, Subtensor)
    np.testing.assert_array_equal(out.eval({x: XV}), np.flip(XV, axis))
    with pytest.raises(ValueError, match="out of bounds"):
        pt.flip(x, 3)


def test_tensor_variables_inside_numpy_containers() -> None:
    """Indexable Variables are still not sequences: NumPy keeps them as objects."""
    x = pt.dvector("x")
    arr = np.array([x, x], dtype=object)
    assert arr.shape == (2,) and arr[0] is x
    with pytest.raises(TypeError, match="Cannot iterate"):
        list(x)


def test_graphs_with_indexing_pickle() -> None:
    import pickle

    x = pt.dmatrix("x")
    i = pt.lscalar("i")
    out = pt.inc_subtensor(x[i, ::-1], 1.0) + pt.set_subtensor(x[:, [0, 0]], 2.0) + x[x > 0].sum()
    out2, x2, i2 = pickle.loads(pickle.dumps((out, x, i)))
    xv = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(out2.eval({x2: xv, i2: 1}), out.eval({x: xv, i: 1}))
    assert out2.owner.inputs[0].owner.op == out.owner.inputs[0].owner.op


def test_pytensor_names_importable_from_this_module() -> None:
    shape_module = importlib.import_module("arignote.tensor.shape")  # pt.shape is the function
    from arignote.tensor.subtensor import get_scalar_constant_value, get_vector_length, specify_broadcastable

    assert specify_broadcastable is shape_module.specify_broadcastable
    assert get_vector_length(pt.as_tensor_variable([1, 2, 3])) == 3
    assert get_scalar_constant_value(pt.constant(4)) == 4
    with pytest.raises(ImportError):
        from arignote.tensor.subtensor import no_such_name  # noqa: F401


def test_get_constant_idx() -> None:
    from arignote.tensor.exceptions import NotScalarConstantError
    from arignote.tensor.subtensor import get_constant_idx

    a, i, s = pt.dmatrix("a"), pt.lscalar("i"), pt.lscalar("s")
    b = a[i, 1:3]
    op, inputs = b.owner.op, b.owner.inputs
    assert get_constant_idx(op.idx_list, inputs, allow_partial=True) == [inputs[1], slice(1, 3, None)]
    with pytest.raises(NotScalarConstantError):
        get_constant_idx(op.idx_list, inputs)
    c = a[pt.constant(2) + 1, : pt.constant(4) : 2]  # constants computed in the graph are read
    got = get_constant_idx(c.owner.op.idx_list, c.owner.inputs)
    assert got == [3, slice(None, 4, 2)] and type(got[0]) is int
    # only_process_constants: a computed index is not looked into
    with pytest.raises(NotScalarConstantError):
        get_constant_idx(c.owner.op.idx_list, c.owner.inputs, only_process_constants=True)
    # the inc Ops: the value input comes before the index inputs
    d = set_subtensor(a[::s, 0], pt.dvector("v"))
    assert get_constant_idx(d.owner.op.idx_list, d.owner.inputs, allow_partial=True) == [
        slice(None, None, d.owner.inputs[2]),
        0,
    ]
