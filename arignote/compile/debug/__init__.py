"""Debugging and profiling modes: where PyTensor 3 keeps them (``pytensor.compile.debug``).

* :mod:`~arignote.compile.debug.debugmode`: ``DebugMode``, which checks every node against
  the Op contract and every rewrite against the graph as written; its parts are
  ``errors`` (what it raises), ``describe`` (how values and nodes read in those errors),
  ``values`` (copying and comparing values), ``checks`` (the checks after each node) and
  ``rewrites`` (recording rewrites, and comparing with the graph as written at run time);
* :mod:`~arignote.compile.debug.nanguardmode`: ``NanGuardMode`` (NaN, inf, huge values);
* :mod:`~arignote.compile.debug.monitormode`: ``MonitorMode`` (your hooks before and after
  each node);
* :mod:`~arignote.compile.debug.profiling`: ``ProfileStats``.

``arignote.compile.debugmode``, ``arignote.compile.nanguardmode`` and
``arignote.compile.profiling`` give the same names.
"""
