"""Rewrite rules for tensor graphs; importing this registers them (arignote.tensor does)."""

from arignote.tensor.rewriting import elemwise, shape, subtensor  # noqa: F401
