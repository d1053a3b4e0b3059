"""Fusion: chains of Elemwise nodes become one Elemwise of a Composite, the unit a backend compiles to one loop."""
