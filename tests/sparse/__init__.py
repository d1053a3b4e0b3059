"""Tests of arignote.sparse."""
