"""NanGuardMode: the first node that produces NaN, inf or a big value is reported, with
the output, what was found and the user's line; clean graphs run as under FAST_RUN."""

from __future__ import annotations

import inspect
import pickle
import sys
import warnings

import numpy as np
import pytest

import arignote
import arignote.tensor as pt
from arignote.compile.debug.nanguardmode import (
    NanGuardError,
    NanGuardLinker,
    NanGuardMode,
    contains_inf,
    contains_nan,
    find_problems,
)
from arignote.compile.mode import Mode, get_mode
from arignote.graph.basic import Apply
from arignote.graph.op import Op
from arignote.ifelse import ifelse

THIS_FILE = __file__


def _line_of(marker: str) -> int:
    lines = inspect.getsource(sys.modules[__name__]).splitlines()
    hits = [i + 1 for i, line in enumerate(lines) if line.rstrip().endswith(marker)]
    assert len(hits) == 1, (marker, hits)
    return hits[0]


@pytest.fixture(autouse=True)
def _quiet_numpy():
    with np.errstate(all="ignore"):
        yield


class SecondOutputNan(Op):
    """Two outputs: a copy of x, and NaN wherever x < 0."""

    __props__ = ()

    def make_node(self, x):
        x = pt.as_tensor_variable(x)
        return Apply(self, [x], [x.type(), x.type()])

    def perform(self, node, inputs, output_storage):
        x = inputs[0]
        output_storage[0][0] = x.copy()
        output_storage[1][0] = np.where(x < 0, np.nan, x)


def test_log_of_zero_is_minus_inf():
    x = pt.dvector("x")
    y = pt.log(x)  # log-line
    # without fusion: Log and the Mul after it stay two nodes (fused, they are one)
    f = arignote.function([x], y * 2, mode=NanGuardMode().excluding("fusion"))
    with pytest.raises(NanGuardError) as info:
        f(np.array([1.0, 0.0, 2.0]))
    err = info.value
    assert isinstance(err, AssertionError)  # as PyTensor raises
    assert err.node.op == y.owner.op  # the first bad node, not the Mul after it
    assert err.output_idx == 0
    assert err.problems == ["-inf (1 of 3 elements, first at index (1,))"]
    text = str(err)
    assert text.splitlines()[0] == (
        "NanGuardMode: output 0 (Log.0) of node Log(x) contains -inf (1 of 3 elements, first at index (1,))"
    )
    assert "input 0 (x): Type Vector(float64, shape=(?,))" in text
    assert f'File "{THIS_FILE}", line {_line_of("# log-line")}' in text
    assert "y = pt.log(x)" in text


def test_zero_over_zero_is_nan():
    x = pt.dvector("x")
    z = pt.dvector("z")
    f = arignote.function([x, z], x / z, mode=NanGuardMode())
    with pytest.raises(
        NanGuardError, match=r"contains NaN \(1 of 2 elements, first at index \(0,\)\)"
    ) as info:
        f(np.array([0.0, 1.0]), np.array([0.0, 2.0]))
    assert "of node True_div(x, z)" in str(info.value)


def test_exp_of_100_is_big():
    x = pt.dvector("x")
    f = arignote.function([x], pt.exp(x) + 1, mode="NanGuardMode")
    with pytest.raises(NanGuardError, match=r"big values, \|x\| up to 2\.688e\+43 > 1e\+10") as info:
        f(np.array([1.0, 100.0]))
    assert "Composite{(exp(i0) + 1.0)}(x)" in str(info.value)  # the fused node
    assert info.value.problems[0].endswith("(1 of 2 elements, first at index (1,))")


def test_infinity_from_overflow():
    x = pt.dvector("x")
    f = arignote.function([x], pt.exp(x), mode=NanGuardMode(big_is_error=False))
    with pytest.raises(NanGuardError, match=r"contains inf \(1 of 1 element"):
        f(np.array([1000.0]))


@pytest.mark.parametrize("mode", ["NanGuardMode", "instance"])
def test_clean_graphs_give_fast_run_results(mode):
    mode = NanGuardMode() if mode == "instance" else mode
    x = pt.dmatrix("x")
    v = pt.dvector("v")
    outs = [pt.exp(x) * 2 - pt.log1p(x**2), x.sum(axis=0) + v, pt.dot(x, v), pt.argmax(x, axis=1)]
    X = np.random.default_rng(0).random((4, 3))
    V = np.arange(3.0)
    expected = arignote.function([x, v], outs, mode="FAST_RUN")(X, V)
    got = arignote.function([x, v], outs, mode=mode)(X, V)
    for a, b in zip(expected, got):
        np.testing.assert_allclose(b, a)


def test_checks_can_be_turned_off():
    x = pt.dvector("x")
    zero = np.zeros(1)
    assert np.isneginf(arignote.function([x], pt.log(x), mode=NanGuardMode(inf_is_error=False))(zero)).all()
    # (not x / x: canonicalize makes it 1, as in PyTensor)
    nan = arignote.function([x], pt.sqrt(x - 1.0), mode=NanGuardMode(nan_is_error=False))(zero)
    assert np.isnan(nan).all()
    big = arignote.function([x], pt.exp(x), mode=NanGuardMode(big_is_error=False))(np.array([100.0]))
    assert big[0] > 1e43
    with pytest.raises(ValueError, match="checks nothing"):
        NanGuardMode(False, False, False)


def test_integer_outputs_are_not_checked():
    i = pt.lvector("i")
    f = arignote.function([i], i * 1000, mode="NanGuardMode")
    assert (f(np.array([10**10])) == 10**13).all()


def test_inputs_are_checked():
    x = pt.dvector("x")
    f = arignote.function([x], x * 2, mode="NanGuardMode")
    with pytest.raises(NanGuardError, match=r"input 0 \(x\) of the function contains NaN") as info:
        f(np.array([1.0, np.nan]))
    assert info.value.node is None
    f = arignote.function([x], x * 2, mode=NanGuardMode(check_inputs=False, nan_is_error=False))
    assert np.isnan(f(np.array([np.nan]))).all()


def test_shared_variable_values_are_checked():
    s = arignote.shared(np.array([1.0, np.inf]), name="s")
    x = pt.dvector("x")
    f = arignote.function([x], x + s, mode="NanGuardMode")
    with pytest.raises(NanGuardError, match=r"\(s\) of the function contains inf"):
        f(np.zeros(2))


def test_which_output():
    x = pt.dvector("x")
    a, b = SecondOutputNan()(x)
    f = arignote.function([x], [a, b], mode="NanGuardMode")
    np.testing.assert_allclose(f(np.array([1.0, 2.0]))[1], [1.0, 2.0])
    with pytest.raises(
        NanGuardError, match=r"output 1 \(SecondOutputNan\.1\) of node SecondOutputNan\(x\)"
    ) as info:
        f(np.array([1.0, -2.0]))
    assert info.value.output_idx == 1


def test_untaken_ifelse_branch_is_not_computed():
    c = pt.lscalar("c")
    x = pt.dvector("x")
    f = arignote.function([c, x], ifelse(c, x * 2, pt.log(x - 10)), mode="NanGuardMode")
    np.testing.assert_allclose(f(1, np.ones(2)), [2.0, 2.0])
    with pytest.raises(NanGuardError, match="NaN"):
        f(0, np.ones(2))


def test_opt_out_per_variable():
    x = pt.dvector("x")
    y = pt.log(x)
    y.tag.nan_guard_mode_check = False
    f = arignote.function([x], y, mode="NanGuardMode")
    assert np.isneginf(f(np.zeros(1))).all()


def test_warn_action():
    x = pt.dvector("x")
    f = arignote.function([x], pt.log(x), mode=NanGuardMode(action="warn"))
    with pytest.warns(RuntimeWarning, match="contains -inf"):
        f(np.zeros(1))
    with pytest.raises(ValueError, match="action"):
        NanGuardMode(action="shrug")


def test_mode_interface():
    mode = NanGuardMode(big_is_error=False)
    assert isinstance(mode, Mode)
    assert isinstance(mode.linker, NanGuardLinker)
    assert isinstance(get_mode("NanGuardMode"), NanGuardMode)
    for derived in (mode.including("fusion"), mode.excluding("fusion")):
        assert type(derived) is NanGuardMode
        assert derived.big_is_error is False
        assert derived.linker.big_is_error is False
    assert "fusion" in mode.excluding("fusion").query.exclude
    assert NanGuardMode() == NanGuardMode()
    assert pickle.loads(pickle.dumps(mode)) == mode
    assert NanGuardMode(linker="vm_nogc").linker.allow_gc is False
    with pytest.raises(ValueError, match="Unknown linker"):
        NanGuardMode(linker="nope")


def test_error_pickles():
    x = pt.dvector("x")
    with pytest.raises(NanGuardError) as info:
        arignote.function([x], pt.log(x), mode="NanGuardMode")(np.zeros(1))
    clone = pickle.loads(pickle.dumps(info.value))
    assert str(clone) == str(info.value)
    assert clone.problems == info.value.problems


def test_helpers():
    assert contains_nan(np.array([1.0, np.nan]))
    assert not contains_nan(np.array([1.0, np.inf]))
    assert contains_inf(np.array([1.0, -np.inf]))
    assert not contains_inf(np.arange(3))
    assert not contains_nan(np.zeros(0))
    assert find_problems(np.float64(np.nan), True, True, True) == ["NaN (1 of 1 element)"]
    assert find_problems(np.array([1e11, 1.0], dtype=np.float32), True, True, True)[0].startswith(
        "big values"
    )
    assert find_problems(np.array([np.inf]), nan=True, inf=False, big=True) == []
    assert find_problems(np.array([1 + 1j * np.nan]), True, True, True) == [
        "NaN (1 of 1 element, first at index (0,))"
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert find_problems(np.full(3, np.nan), True, True, True)  # no all-NaN warnings
