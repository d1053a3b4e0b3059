"""Shared pieces of the graph core: scratchpads, errors, ``MetaType``, user-code sites."""

from __future__ import annotations

import inspect
import os
import sys

import pytest

from arignote.graph import utils
from arignote.graph.basic import Apply
from arignote.graph.op import Op
from arignote.graph.utils import (
    InconsistencyError,
    MetaObject,
    MetaType,
    MethodNotDefined,
    MissingInputError,
    Scratchpad,
    ValidatingScratchpad,
    format_site,
    user_frame_site,
)
from tests.toy import double, integer


def _line_of(marker: str) -> int:
    """Line number in this file of the (unique) line that ends with ``marker``."""
    lines = inspect.getsource(sys.modules[__name__]).splitlines()
    hits = [i + 1 for i, line in enumerate(lines) if line.rstrip().endswith(marker)]
    assert len(hits) == 1, (marker, hits)
    return hits[0]


# --- Scratchpad -------------------------------------------------------------------------


def test_scratchpad_holds_anything():
    s = Scratchpad()
    s.a = 1
    s.b = [2]
    assert (s.a, s.b) == (1, [2])
    assert s.__dict__ == {"a": 1, "b": [2]}
    with pytest.raises(AttributeError):
        s.missing


def test_scratchpad_clear():
    s = Scratchpad()
    s.a = 1
    s.clear()
    assert s.__dict__ == {}
    assert not hasattr(s, "a")


def test_scratchpad_update_copies_attributes_and_returns_self():
    a, b = Scratchpad(), Scratchpad()
    a.x, a.y = 1, 2
    b.y, b.z = 20, 30
    assert a.__update__(b) is a
    assert a.__dict__ == {"x": 1, "y": 20, "z": 30}
    assert b.__dict__ == {"y": 20, "z": 30}


def test_scratchpad_equality_and_unhashable():
    a, b = Scratchpad(), Scratchpad()
    assert a == b
    a.x = 1
    assert a != b
    b.x = 1
    assert a == b
    with pytest.raises(TypeError):
        hash(a)


def test_scratchpad_str_and_info(capsys):
    s = Scratchpad()
    s.k = "v"
    assert str(s) == "scratchpad{'k': 'v'}"
    assert repr(s) == str(s)
    s.info()
    out = capsys.readouterr().out
    assert "Scratchpad instance at" in out
    assert "  k: v" in out


def test_validating_scratchpad_filters_one_attribute():
    seen = []

    def positive(value):
        seen.append(value)
        if value <= 0:
            raise ValueError("must be positive")
        return float(value)

    s = ValidatingScratchpad("test_value", positive)
    assert isinstance(s, Scratchpad)
    s.test_value = 3
    assert s.test_value == 3.0 and isinstance(s.test_value, float)
    s.other = -1  # not validated
    assert s.other == -1
    assert seen == [3]
    with pytest.raises(ValueError, match="must be positive"):
        s.test_value = -2
    assert s.test_value == 3.0


def test_validating_scratchpad_still_validates_after_clear():
    s = ValidatingScratchpad("v", int)
    s.v = "7"
    s.clear()
    assert not hasattr(s, "v")
    s.v = "8"
    assert s.v == 8


# --- errors -----------------------------------------------------------------------------


def test_error_classes():
    assert issubclass(MethodNotDefined, Exception)
    assert issubclass(InconsistencyError, Exception)
    assert issubclass(utils.TestValueError, Exception)
    x = double("x")
    err = MissingInputError("no value for x", variable=x)
    assert err.variable is x
    assert str(err) == "no value for x"
    assert MissingInputError("m").variable is None


# --- MetaType / MetaObject --------------------------------------------------------------


def test_metatype_generates_identity_from_props():
    class Pair(MetaObject):
        __props__ = ("a", "b")

        def __init__(self, a, b):
            self.a, self.b = a, b

    assert isinstance(Pair, MetaType)
    p = Pair(1, "z")
    assert p._props() == (1, "z")
    assert p._props_dict() == {"a": 1, "b": "z"}
    assert p == Pair(1, "z") and hash(p) == hash(Pair(1, "z"))
    assert p != Pair(2, "z")
    assert str(p) == "Pair{a=1, b='z'}"


def test_metatype_leaves_classes_without_props_alone():
    class Plain(metaclass=MetaType):
        pass

    assert "_props" not in Plain.__dict__
    assert Plain() != Plain()
    assert Plain.__str__ is object.__str__


def test_metaobject_ne_follows_eq():
    class Weird(MetaObject):
        def __eq__(self, other):
            return NotImplemented if other == "?" else True

        __hash__ = object.__hash__

    assert (Weird() != Weird()) is False
    assert Weird().__ne__("?") is NotImplemented


def test_props_must_be_a_tuple_of_strings():
    with pytest.raises(TypeError, match=r"Bad\.__props__ must be a tuple of attribute names, got \['a'\]"):

        class Bad(MetaObject):
            __props__ = ["a"]

    with pytest.raises(TypeError, match=r"Bad2\.__props__"):

        class Bad2(MetaObject):
            __props__ = (1,)


# --- where the user created something ---------------------------------------------------


def _site_of_my_caller():
    return user_frame_site()


def test_user_frame_site_skip_zero_is_the_caller():
    site = user_frame_site(0)  # SITE-A
    assert site == (__file__, _line_of("# SITE-A"), "test_user_frame_site_skip_zero_is_the_caller")


def test_user_frame_site_default_skips_one_frame():
    site = _site_of_my_caller()  # SITE-B
    assert site == (__file__, _line_of("# SITE-B"), "test_user_frame_site_default_skips_one_frame")


def test_apply_trace_points_at_the_user_line():
    x = double("x")
    node = Apply(Op(), [x], [double()])  # SITE-C
    assert node.trace == (__file__, _line_of("# SITE-C"), "test_apply_trace_points_at_the_user_line")
    assert not node.trace[0].startswith(os.path.dirname(utils.__file__))


class _IntNeg(Op):
    __props__ = ()
    itypes = [integer]
    otypes = [integer]

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = -inputs[0]


def test_trace_skips_frames_inside_arignote():
    # the Apply is made by Op.make_node (inside arignote), called by Op.__call__
    out = _IntNeg()(integer("i"))  # SITE-D
    assert out.owner.trace == (__file__, _line_of("# SITE-D"), "test_trace_skips_frames_inside_arignote")


def test_user_frame_site_none_when_every_frame_is_inside(monkeypatch):
    monkeypatch.setattr(utils, "_PACKAGE_DIR", "")  # every file is "inside"
    assert user_frame_site(0) is None


def test_format_site_shows_file_line_function_and_source():
    site = user_frame_site(0)  # SITE-E
    text = format_site(site)
    line = _line_of("# SITE-E")
    assert text == (
        f'File "{__file__}", line {line}, in test_format_site_shows_file_line_function_and_source\n'
        "    site = user_frame_site(0)  # SITE-E"
    )


def test_format_site_without_source():
    assert format_site(("/no/such/file.py", 3, "f")) == 'File "/no/such/file.py", line 3, in f'
    assert format_site(None) == "<unknown location>"


def test_apply_creation_site():
    node = Apply(Op(), [double()], [double()])  # SITE-F
    assert node.creation_site == format_site(node.trace)
    assert f"line {_line_of('# SITE-F')}, in test_apply_creation_site" in node.creation_site
    assert "SITE-F" in node.creation_site


def test_tag_trace_helpers_record_the_callers_stack():
    import arignote.tensor as _pt
    from arignote.graph.utils import add_tag_trace, get_variable_trace_string, simple_extract_stack

    def inner():
        return simple_extract_stack()

    stack = inner()
    assert stack[-1][2] == "inner" and stack[-1][0] == __file__
    assert stack[-1][3] == "return simple_extract_stack()"  # the source line
    assert stack[-2][2] == "test_tag_trace_helpers_record_the_callers_stack"
    assert len(simple_extract_stack(limit=1)) == 1
    assert simple_extract_stack(skips=[__file__])[-1][0] != __file__  # the innermost frames skipped
    with pytest.raises(ValueError, match="limit"):
        simple_extract_stack(limit=-2)

    x = _pt.dvector("x")
    y = _pt.exp(x)
    assert "test_utils.py" in get_variable_trace_string(y)  # the node's recorded line
    assert get_variable_trace_string(x) == ""
    assert add_tag_trace(y, user_line=2) is y
    (frames,) = y.tag.trace
    assert len(frames) == 2 and frames[-1][0] == __file__ and "add_tag_trace(y" in frames[-1][3]
    text = get_variable_trace_string(y)
    assert text.startswith("\nBacktrace when that variable is created:") and "add_tag_trace(y" in text
    with pytest.raises(TypeError, match="Variable or an Apply"):
        add_tag_trace(3)
