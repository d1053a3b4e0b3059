"""``arignote.config``: its flags, ``ARIGNOTE_FLAGS`` and ``change_flags``."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import arignote
import arignote.tensor as pt
from arignote.compile.mode import FAST_COMPILE
from arignote.configdefaults import config
from arignote.configparser import Config, ConfigParam, boolean, enum, parse_flags

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _run(code: str, flags: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, ARIGNOTE_FLAGS=flags, PYTHONPATH=REPO)
    return subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=REPO, capture_output=True, text=True, timeout=120
    )


def test_defaults():
    assert arignote.config is config
    assert (config.floatX, config.mode) == ("float64", "FAST_RUN")
    # the suite runs with on_opt_error="raise" (tests/conftest.py); the default is "warn"
    assert config._params["on_opt_error"].default == "warn"
    assert config.on_unused_input == "raise"
    assert "floatX = 'float64'" in config.describe()
    assert {"floatX", "mode", "on_opt_error"} <= set(dir(config))


def test_flags_are_read_from_the_environment():
    code = (
        "import arignote, arignote.tensor as pt\n"
        "c = arignote.config\n"
        "print(c.floatX, c.mode, c.on_opt_error, pt.vector().dtype)\n"
        "x = pt.scalar('x')\n"
        "f = arignote.function([x], x * 2)\n"
        "print(f.maker.mode.name, f(1.5).dtype)\n"
    )
    done = _run(code, "floatX=float32, mode=FAST_COMPILE,on_opt_error=raise")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["float32", "FAST_COMPILE", "raise", "float32", "FAST_COMPILE", "float32"]


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        ("floatX=float128", "bad value for flag 'floatX'"),
        ("nosuchflag=1", "unknown flag 'nosuchflag'"),
        ("floatX", "expected name=value"),
    ],
)
def test_bad_flags_in_the_environment_fail_at_import(flags, message):
    done = _run("import arignote", flags)
    assert done.returncode != 0
    assert "ARIGNOTE_FLAGS" in done.stderr and message in done.stderr


def test_change_flags_is_a_context_manager_and_a_decorator():
    with config.change_flags(floatX="float32", mode="FAST_COMPILE"):
        assert config.floatX == "float32"
        assert pt.vector().dtype == "float32"
        x = pt.scalar("x")
        assert arignote.function([x], x * 2).maker.mode is FAST_COMPILE
    assert config.floatX == "float64" and config.mode == "FAST_RUN"

    @config.change_flags(floatX="float16")
    def make():
        return pt.vector().dtype

    assert make() == "float16" and config.floatX == "float64"


def test_change_flags_restores_after_an_error():
    with pytest.raises(RuntimeError), config.change_flags(floatX="float32"):
        raise RuntimeError
    assert config.floatX == "float64"
    with (
        pytest.raises(ValueError, match="bad value for flag 'mode'"),
        config.change_flags(floatX="float32", mode="SLOW"),
    ):
        pass  # pragma: no cover
    assert config.floatX == "float64" and config.mode == "FAST_RUN"
    with pytest.raises(AttributeError, match="no flag 'floatx'"), config.change_flags(floatx="float32"):
        pass  # pragma: no cover


def test_setting_a_flag_is_validated():
    old = config.on_opt_error
    try:
        config.on_opt_error = "raise"
        assert config.on_opt_error == "raise"
        with pytest.raises(ValueError, match="expected one of"):
            config.on_opt_error = "explode"
        assert config.on_opt_error == "raise"
    finally:
        config.on_opt_error = old
    with pytest.raises(AttributeError, match="known flags"):
        _ = config.no_such_flag


def test_parse_flags_and_converters():
    assert parse_flags(" a=1, b = x ,,") == {"a": "1", "b": "x"}
    with pytest.raises(ValueError, match="expected name=value"):
        parse_flags("=1")
    assert boolean("Yes") is True and boolean("0") is False and boolean(True) is True
    with pytest.raises(ValueError):
        boolean("maybe")
    with pytest.raises(ValueError):
        enum("a", "b")("c")


def test_a_config_of_its_own(monkeypatch):
    monkeypatch.setenv("MY_FLAGS", "debug=on")
    c = Config(
        [
            ConfigParam("debug", False, "print more", boolean),
            ConfigParam("level", "low", "how much", enum("low", "high")),
        ],
        env_var="MY_FLAGS",
    )
    assert c.debug is True and c.level == "low"
    c.level = "high"
    assert "level = 'high': how much" in c.describe()


def test_the_mode_flag_accepts_every_predefined_mode():
    from arignote.compile.mode import predefined_modes

    for name in predefined_modes:  # what CI sets through ARIGNOTE_FLAGS=mode=...
        with config.change_flags(mode=name):
            assert config.mode == name
