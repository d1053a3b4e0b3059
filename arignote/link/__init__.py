"""Linkers: turning a FunctionGraph into something that runs."""
