"""Random draws (:mod:`arignote.tensor.random`) have no Numba function: a graph that draws
runs on the per-node tiers, and its draws are NumPy's, so a seeded stream gives the same
values under every mode. Why not in Numba, although Numba's ``numpy.random.Generator``
methods do give NumPy's values for one seed (checked here for normal, uniform, gamma,
integers, exponential, poisson and beta with scalar parameters):

* a RandomVariable that is not in place draws from a *copy* of its generator, and compiled
  code cannot copy a ``Generator`` (nor can a whole-graph function's fixed signature hold
  one: the generator is not an array);
* many distributions draw through ``scipy.stats`` (``rng_fn_scipy``), which Numba cannot
  call, and others through NumPy methods Numba does not implement;
* with array parameters NumPy draws once per element in the broadcast result's order, which
  a loop in Numba would have to reproduce for each method: equal streams there rest on an
  implementation detail of NumPy, not on its documented API.

The refusal names the node (:class:`~arignote.link.numba.dispatch.NoNumbaImpl`), so
``f.vm.whole.reason`` says why the graph is not compiled whole.
"""

from __future__ import annotations

from arignote.graph.basic import Apply
from arignote.graph.op import Op
from arignote.link.numba.dispatch.basic import NoNumbaImpl, NumbaImpl, numba_funcify
from arignote.tensor.random.op import DefaultGeneratorMakerOp, RNGConsumerOp

__all__: list[str] = []


@numba_funcify.register(RNGConsumerOp)
@numba_funcify.register(DefaultGeneratorMakerOp)
def _random(op: Op, node: Apply) -> NumbaImpl:
    raise NoNumbaImpl(
        f"{op} draws from a numpy.random.Generator: random draws stay NumPy's on the per-node "
        "tiers (the same values for a seed under every mode; see arignote.link.numba.dispatch.random)"
    )
