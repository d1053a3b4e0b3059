"""JAX implementations of arignote's Ops, one module per Op family, registered by Op type.

The modules are imported here for their registrations; the package's layer is that of the
inner-graph Ops (``IfElse``, ``OpFromGraph``, ``Scan`` have JAX functions here too).
"""

from arignote.link.jax.dispatch import (  # noqa: F401  (imported for their registrations)
    blockwise,
    builders,
    compile_ops,
    elemwise,
    extra_ops,
    fft,
    graph,
    ifelse,
    linalg_host,
    linalg_lu,
    math,
    nlinalg,
    optimize,
    raising,
    random,
    scalar,
    scalar_loop,
    scalar_special,
    scan,
    searching,
    signal,
    slices,
    slinalg,
    sort,
    sparse,
    special,
    subtensor,
    tensor_basic,
)
from arignote.link.jax.dispatch.basic import jax_funcify, jax_typify
from arignote.link.jax.dispatch.graph import JAXNodeError, funcify_fgraph

__all__ = ["JAXNodeError", "funcify_fgraph", "jax_funcify", "jax_typify"]
