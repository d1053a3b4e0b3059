"""The flags arignote reads, and the global ``config`` object (``arignote.config``)."""

from __future__ import annotations

import os

from arignote.configparser import Config, ConfigParam, boolean, enum

__all__ = ["config"]


def _path(value: object) -> str:
    return os.path.abspath(os.path.expanduser(str(value)))


_cache_home = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")

config = Config(
    [
        ConfigParam(
            "floatX",
            "float64",
            "dtype of float variables made without an explicit dtype (and of Python floats "
            "that fit it exactly)",
            enum("float64", "float32", "float16"),
        ),
        ConfigParam(
            "mode",
            "FAST_RUN",
            "default compilation mode of function()",
            enum(
                "FAST_RUN",
                "FAST_COMPILE",
                "DebugMode",
                "NanGuardMode",
                "PYTHON",
                "NUMBA",
                "NUMBA_KERNELS",
                "JAX",
            ),
        ),
        ConfigParam(
            "on_opt_error",
            "warn",
            "what a rewrite that raises does: warn and skip it, raise, or ignore",
            enum("warn", "raise", "ignore", "pdb"),
        ),
        ConfigParam(
            "on_unused_input",
            "raise",
            "default of function(on_unused_input=...)",
            enum("raise", "warn", "ignore"),
        ),
        ConfigParam(
            "warn_float64",
            "ignore",
            "what to do when a float64 variable is created while floatX is smaller",
            enum("ignore", "warn", "raise"),
        ),
        ConfigParam(
            "compiledir",
            os.path.join(_cache_home, "arignote"),
            "directory of the on-disk compilation cache",
            _path,
        ),
        ConfigParam(
            "trace_rewrites",
            False,
            "print which rewrite fired, and where it is defined",
            boolean,
        ),
        ConfigParam(
            "optimizer_verbose",
            False,
            "print each replacement a rewrite makes, as PyTensor does: "
            "'rewriting: rewrite <name> replaces <var> of <node> with <new var> of <new node>'",
            boolean,
        ),
    ]
)
