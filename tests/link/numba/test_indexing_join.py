"""Advanced indexing and Join in the whole-graph Numba function, against the reference VM:
many cases in one graph (one compile), then the errors (raised as the reference VM's)."""

from __future__ import annotations

import numpy as np
import pytest

import arignote
import arignote.tensor as pt
from arignote.compile.mode import Mode
from arignote.tensor.indexing.advanced import AdvancedSubtensor
from arignote.tensor.join import Join

numba = pytest.importorskip("numba")


pytestmark = pytest.mark.usefixtures("empty_kernel_cache")


def _graph():
    X = pt.tensor("X", dtype="float64", shape=(None, None, None))
    M = pt.dmatrix("M")
    v = pt.dvector("v")
    iv, jv = pt.lvectors("iv", "jv")
    im = pt.lmatrix("im")
    i = pt.lscalar("i")
    mask = pt.bvector("mask").astype("bool")
    mask2 = pt.bmatrix("mask2").astype("bool")
    n = pt.lscalar("n")
    a = pt.lvector("a")
    outs = [
        M[im],  # a matrix of row numbers
        M[:, iv],  # along the second axis
        M[iv, jv],  # two arrays broadcast together (pairs)
        M[im, jv[1:]],  # ranks 2 and 1 broadcast
        X[iv, :, jv],  # not adjacent: the broadcast dimension first
        X[:, iv, jv],  # adjacent after a slice
        X[1:, iv, ::-1],  # a slice on either side
        X[i, iv],  # an int among arrays
        X[None, iv, 1],  # a new axis, a literal int
        X[..., jv],  # an Ellipsis
        X[:, iv, ..., jv],  # an Ellipsis for no dimension still separates them: the block first
        v[mask],  # a boolean mask
        M[mask2],  # a 2-d mask
        M[mask, 1:n],  # a mask and a symbolic slice
        pt.join(0, M, M * 2),  # along rows
        pt.join(1, M, iv[:, None] * 1.0, M[:, :1]),  # along columns, an int input cast
        pt.join(0, v, iv, a),  # float with ints
        pt.join(-1, X, X),  # a negative axis
        pt.join(n - 2, M, M + 1),  # a symbolic axis
    ]
    return [X, M, v, iv, jv, im, i, mask.owner.inputs[0], mask2.owner.inputs[0], n, a], outs


def _args(rng):
    X = rng.normal(size=(4, 3, 5))
    M = rng.normal(size=(3, 3))
    v = rng.normal(size=3)
    iv = np.array([0, -1, 2])
    jv = np.array([2, 0, -3])
    im = np.array([[0, 2], [1, -1]])
    mask = np.array([1, 0, 1], np.int8)
    mask2 = (rng.random((3, 3)) > 0.5).astype(np.int8)
    return [X, M, v, iv, jv, im, np.array(2), mask, mask2, np.array(3), np.array([7, 8])]


def test_advanced_indexing_and_join_match_the_reference_vm():
    ins, outs = _graph()
    f = arignote.function(ins, outs, mode="NUMBA")
    ref = arignote.function(ins, outs, mode=Mode("vm", "fast_run"))
    assert f.vm.whole.state == "in use", f.vm.whole.reason
    types = {type(nd.op) for nd in f.maker.fgraph.toposort()}
    assert AdvancedSubtensor in types and Join in types
    rng = np.random.default_rng(0)
    args = _args(rng)
    for k, (g, w) in enumerate(zip(f(*args), ref(*args))):
        assert g.dtype == w.dtype and g.shape == w.shape, (k, g.shape, w.shape)
        np.testing.assert_array_equal(g, w, err_msg=f"output {k}")
    assert f.vm.whole.state == "in use"
    # another draw of the masks and lengths, then errors: raised as the reference VM raises
    args[8] = np.ones((3, 3), np.int8)
    args[9] = np.array(2)
    for g, w in zip(f(*args), ref(*args)):
        np.testing.assert_array_equal(g, w)
    for k, bad in [(3, np.array([0, 3, 1])), (7, np.array([1, 0], np.int8)), (4, np.array([0, 1]))]:
        wrong = list(args)
        wrong[k] = bad
        with pytest.raises(IndexError) as want:
            ref(*wrong)
        with pytest.raises(IndexError) as got:
            f(*wrong)
        assert str(got.value).split("\n")[0] == str(want.value).split("\n")[0]
    wrong = list(args)
    wrong[9] = np.array(5)  # axis 3 of 2-d inputs
    with pytest.raises(ValueError, match="axis"):
        f(*wrong)
