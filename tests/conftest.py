"""Test-suite settings: a rewrite that raises is a bug, so it fails the test."""

from arignote.configdefaults import config

config.on_opt_error = "raise"
