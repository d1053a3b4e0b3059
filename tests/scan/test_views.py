"""scan.views.filter: the rows of sequences for which a predicate holds."""

from __future__ import annotations

import numpy as np
import pytest

import arignote
import arignote.tensor as pt
from arignote.scan.views import filter as scan_filter


def test_filter_keeps_the_rows_where_the_predicate_holds():
    x, y = pt.dvector("x"), pt.dvector("y")
    xv, yv = np.array([0.0, 2.0, 1.0, 3.0]), np.array([5.0, 6.0, 7.0, 8.0])
    f = arignote.function(
        [x, y],
        [
            scan_filter(lambda a: a > 1, x),
            scan_filter(lambda a: a > 1, x, go_backwards=True),
            *scan_filter(lambda a, b: a > 1, [x, y]),  # one mask for both
            *scan_filter(lambda a, b: [a > 1, b > 6], [x, y]),  # one mask each
            scan_filter(lambda a, t: a > t, x, non_sequences=[pt.constant(0.5)]),
        ],
    )
    single, backwards, both_x, both_y, each_x, each_y, with_arg = f(xv, yv)
    np.testing.assert_array_equal(single, xv[xv > 1])
    np.testing.assert_array_equal(backwards, xv[xv > 1])  # the kept rows stay in order
    np.testing.assert_array_equal(both_x, xv[xv > 1])
    np.testing.assert_array_equal(both_y, yv[xv > 1])
    np.testing.assert_array_equal(each_x, xv[xv > 1])
    np.testing.assert_array_equal(each_y, yv[yv > 6])
    np.testing.assert_array_equal(with_arg, xv[xv > 0.5])


def test_filter_refuses_masks_that_do_not_fit():
    x, y = pt.dvector("x"), pt.dvector("y")
    with pytest.raises(TypeError, match="several masks"):
        scan_filter(lambda a: [a > 1, a > 2], x)
    with pytest.raises(ValueError, match="2 masks for 3 sequences"):
        scan_filter(lambda a, b, c: [a > 1, b > 2], [x, y, x])
    with pytest.raises(TypeError, match="boolean masks"):
        scan_filter(lambda a: a * 2, x)
