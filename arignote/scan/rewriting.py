"""Rewrite rules for Scan nodes (filled in below)."""
