"""pack / unpack (``arignote.tensor.reshape``), and the small PyTensor names beside them."""

from __future__ import annotations

import numpy as np
import pytest

import arignote.tensor as pt
from arignote import function
from arignote.gradient import grad
from arignote.tensor.reshape import pack, unpack


def _vals(*shapes: tuple, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.normal(size=s) for s in shapes]


@pytest.mark.parametrize(
    "shapes, keep, packed_shape",
    [
        (((2, 3), (4,)), None, (10,)),
        (((), (3,)), None, (4,)),
        (((2, 3), (2, 5, 6)), 0, (2, 33)),
        (((4, 2, 3), (5, 2, 3)), (-2, -1), (9, 2, 3)),
        (((2, 4, 3), (2, 5, 3)), (0, -1), (2, 9, 3)),
        (((2, 3), (2,)), 0, (2, 4)),
        (((0, 3), (2,)), None, (2,)),
    ],
)
def test_round_trip_against_numpy(shapes: tuple, keep: object, packed_shape: tuple) -> None:
    xs = [pt.tensor(f"x{k}", dtype="float64", shape=s) for k, s in enumerate(shapes)]
    vals = _vals(*shapes)
    packed, packed_shapes = pack(*xs, keep_axes=keep)
    assert packed.type.shape == packed_shape  # static shapes carry through
    got = function(xs, packed)(*vals)
    front = 0 if keep is None else len([a for a in np.atleast_1d(keep) if a >= 0])
    back = 0 if keep is None else len([a for a in np.atleast_1d(keep) if a < 0])
    flat = [v.reshape(*v.shape[:front], -1, *v.shape[v.ndim - back :]) for v in vals]
    np.testing.assert_array_equal(got, np.concatenate(flat, axis=front))
    outs = unpack(packed, packed_shapes, keep_axes=keep)
    assert [o.type.shape for o in outs] == [x.type.shape for x in xs]
    for o, v in zip(function(xs, outs)(*vals), vals):
        np.testing.assert_array_equal(o, v)


def test_unknown_shapes_and_gradient_through_the_round_trip() -> None:
    x, y = pt.dmatrix("x"), pt.dvector("y")
    packed, shapes = pack(x, y)
    x2, y2 = unpack(packed * 2.0, shapes)
    cost = (x2**2).sum() + y2.sum()
    gx, gy = grad(cost, [x, y])
    xv, yv = _vals((2, 3), (4,))
    got = function([x, y], [gx, gy])(xv, yv)
    np.testing.assert_allclose(got[0], 8 * xv)
    np.testing.assert_allclose(got[1], 2 * np.ones(4))


@pytest.mark.parametrize(
    "keep, match",
    [(1, "must be 0, 1"), (-2, "must end at -1"), ((0, 0), "twice"), ("a", "must be ints")],
)
def test_bad_keep_axes(keep: object, match: str) -> None:
    with pytest.raises((ValueError, TypeError), match=match):
        pack(pt.tensor3("x"), keep_axes=keep)


def test_too_few_dimensions_and_bad_unpack() -> None:
    with pytest.raises(ValueError, match=r"input 1 .* has 1 dimension.*keeps 2"):
        pack(pt.dmatrix("x"), pt.dvector("y"), keep_axes=(0, -1))
    with pytest.raises(ValueError, match="no tensors"):
        pack()
    packed, shapes = pack(pt.dmatrix("x"))
    with pytest.raises(ValueError, match="should have 2 dimensions"):
        unpack(packed, shapes, keep_axes=0)
    with pytest.raises(ValueError, match="vector of known length"):
        unpack(packed, [pt.lvector("s")])


def test_reshape_is_still_the_function_and_small_names() -> None:
    x = pt.dmatrix("x")
    assert pt.reshape(x, (6,)).type.ndim == 1  # the module import did not shadow it
    assert pt.pack is pack and pt.unpack is unpack
    assert pt.grad is grad and pt.jacobian is not None and pt.hessian is not None
    assert pt.is_flat(pt.dvector()) and not pt.is_flat(x) and pt.is_flat(x, 2)
    assert pt.dscalar().type in pt.float_types and pt.lvector().type in pt.int_vector_types
    assert pt.cmatrix().type in pt.complex_matrix_types
    a, b = pt.dscalars("ab")
    np.testing.assert_array_equal(pt.stacklists([[a], [b]]).eval({a: 1.0, b: 2.0}), [[1.0], [2.0]])
