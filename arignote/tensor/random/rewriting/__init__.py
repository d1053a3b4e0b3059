"""The rewrites of random variables, at ``pytensor.tensor.random.rewriting``'s path: the home
is :mod:`arignote.tensor.random.rewriting.basic` (see its doc for which run in the pipeline
and which a user applies)."""

from arignote.tensor.random.rewriting.basic import (
    is_rv_used_in_graph,
    local_dimshuffle_rv_lift,
    local_rv_size_lift,
    local_subtensor_rv_lift,
    random_make_inplace,
    sidestep_unused_rng_consumer,
)

__all__ = [
    "is_rv_used_in_graph",
    "local_dimshuffle_rv_lift",
    "local_rv_size_lift",
    "local_subtensor_rv_lift",
    "random_make_inplace",
    "sidestep_unused_rng_consumer",
]
