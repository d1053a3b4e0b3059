"""Linkers: turning a FunctionGraph into something that runs.

``vm`` is the reference linker (a Python VM over one thunk per node); ``python`` is the
Python backend that gives each node its thunk, by Op type.
"""
