"""JAXLinker: a rewritten FunctionGraph as one ``jax.jit``-ed function (``mode="JAX"``).

The graph's nodes become one pure function (:func:`~arignote.link.jax.dispatch.graph.
funcify_fgraph`, each node's JAX function chosen by Op type), compiled by ``jax.jit`` on the
first call (and again for inputs of new shapes or dtypes, as ``jax.jit`` does). A call:

* passes the input cells' values to the compiled function: NumPy arrays are copied to the
  device by JAX; a shared variable's value that is already on the device (left there by an
  earlier call's update) is passed as it is, and a NumPy value of a shared variable is copied
  once and reused while the variable holds the same object;
* converts a ``numpy.random.Generator`` to a JAX key (:func:`generator_to_key`: the same
  generator state always gives the same key, so a seed gives reproducible draws), and a
  SciPy sparse matrix to a ``BCOO`` (:mod:`~arignote.link.jax.dispatch.sparse.values`; a
  shared variable's is cached while it holds the same matrix). Sparse outputs, and the
  new values of sparse shared variables, come back as SciPy matrices of their Type's
  format;
* stores the outputs: NumPy arrays (read-only views of the device buffers where JAX allows it,
  zero-copy on CPU) unless the linker was made with ``device_outputs=True``; the new values of
  shared variables stay on the device (``get_value`` copies them back,
  :func:`arignote.graph.container.host_value`), and a generator's next state stays a JAX key
  until read back as a Generator (:func:`key_to_generator`).

Donation: the buffer of a shared array that the function updates is donated to the compiled
function (``jax.jit``'s ``donate_argnums``), which writes the update over it instead of
allocating a new buffer per call (a training step's parameters are updated in place, as a
hand-written JAX step with ``donate_argnums`` does). The old value is then gone: a device
value taken with ``get_value(borrow=True, return_internal_type=True)`` is invalid after the
next call that updates the variable (PyTensor's ``borrow`` contract: a borrowed value may be
overwritten by later calls). Values JAX cannot reuse are left alone: a NumPy value of the
variable is copied to the device first (never overwritten), a buffer NumPy still reads is
not donated (JAX's own check), and an update of another shape than its variable's is not
donated (checked while tracing). Nothing is donated by a program that runs host code (a
check that raises while the program runs, a SciPy function through a callback), so that a
failed call leaves the shared values as they were, nor by one with static arguments.

Static arguments: ``jax.jit`` traces with abstract values, so a node whose output *shape*
depends on an input's value (``pt.zeros(n)`` with ``n`` an input) cannot be traced. When
tracing fails that way and the graph has integer scalar inputs, they become static arguments
of ``jax.jit`` (one compilation per distinct value, PyTensor's JAX backend's behaviour for
shape arguments); a graph that still cannot be traced raises
:class:`~arignote.link.jax.dispatch.graph.JAXNodeError` naming the node.

Which rewrites run before (:data:`JAX_EXCLUDED`): none of the in-place stage (JAX arrays are
immutable: in-place variants buy nothing and XLA reuses buffers itself), no fusion into
``Composite`` kernels (XLA fuses elementwise chains better, and a fused body would only be
inlined back), and no BLAS specialisation (``Gemm``/``Gemv``/``Ger`` exist for NumPy's BLAS
calls; ``jnp.dot`` is XLA's own). Canonicalisation, stabilisation and specialisation run as in
FAST_RUN: they make graphs smaller and numerically safer for every backend.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import checkify

from arignote.compile.mode import JAX_EXCLUDED, Mode, RewriteQuery
from arignote.graph.basic import Apply, Variable
from arignote.graph.container import register_device_type
from arignote.graph.fg import FunctionGraph
from arignote.graph.shared import SharedVariable
from arignote.graph.utils import MetaObject
from arignote.link.jax.dispatch.graph import JAXNodeError, funcify_fgraph
from arignote.link.jax.dispatch.random import generator_to_key, key_to_generator
from arignote.link.jax.dispatch.sparse.values import to_bcoo, to_scipy
from arignote.link.jax.dispatch.static import functional_checks, host_error
from arignote.scalar.type import ScalarType
from arignote.sparse.type import SparseTensorType
from arignote.tensor.random.type import RandomGeneratorType
from arignote.tensor.type import TensorType

__all__ = [
    "JAXLinker",
    "JAX_EXCLUDED",
    "generator_to_key",
    "jax_mode",
    "key_to_generator",
]

#: the name ``impl_of`` gives every node: it runs inside the one compiled JAX function
JAX = "jax"


def _array_to_host(value: jax.Array) -> Any:
    if jnp.issubdtype(value.dtype, jax.dtypes.prng_key):
        return key_to_generator(value)
    return np.array(value)  # a writeable host copy


def _register_device_types() -> None:
    """Shared variables may hold JAX arrays and keys between calls (see the module's doc)."""
    for cls in {type(jnp.zeros(())), type(jax.random.key(0))}:
        register_device_type(cls, _array_to_host)


_register_device_types()


def jax_mode(device_outputs: bool = False) -> Mode:
    """The JAX mode: FAST_RUN's rewrites less :data:`JAX_EXCLUDED`, linked by :class:`JAXLinker`."""
    return Mode(JAXLinker(device_outputs=device_outputs), RewriteQuery().excluding(*JAX_EXCLUDED), name="JAX")


class JAXLinker(MetaObject):
    """Links a FunctionGraph into one ``jax.jit``-ed function (see the module's doc).

    ``device_outputs``: return the outputs as JAX arrays on the device (no copy to the host)
    instead of NumPy arrays.
    """

    __props__ = ("device_outputs",)

    def __init__(self, device_outputs: bool = False):
        self.device_outputs = bool(device_outputs)

    def __repr__(self) -> str:
        return f"JAXLinker(device_outputs={self.device_outputs})"

    def __str__(self) -> str:
        return repr(self)

    def make_vm(
        self,
        fgraph: FunctionGraph,
        input_storage: Sequence[list],
        no_recycling: Sequence[Variable],
        profile: Any = None,
        thunk_maker: Callable | None = None,
    ) -> tuple[JAXRunner, list[list]]:
        """``(runner, output cells)``, as :meth:`arignote.link.vm.VMLinker.make_vm`."""
        if thunk_maker is not None:
            raise ValueError(
                "JAXLinker runs the whole graph as one JAX function: it cannot run per-node thunks "
                "(DebugMode's checks need the Python backend: use mode='DebugMode')"
            )
        runner = JAXRunner(fgraph, list(input_storage), self.device_outputs)
        return runner, runner.output_cells


def _output_converter(var: Variable, device_outputs: bool) -> Callable[[Any], Any] | None:
    """How an output value of ``var`` is handed back (None: as it is)."""
    vtype = var.type
    if isinstance(vtype, RandomGeneratorType):
        return key_to_generator
    if isinstance(vtype, SparseTensorType):  # a BCOO inside: a SciPy matrix of the Type's format
        return lambda v: to_scipy(v, vtype.format, vtype.dtype)
    if device_outputs:
        return None
    if isinstance(vtype, ScalarType):
        return lambda v: np.asarray(v)[()]
    return np.asarray


def _input_kind(var: Variable) -> str:
    vtype = var.type
    if isinstance(vtype, RandomGeneratorType):
        return "rng"
    if isinstance(vtype, SparseTensorType):
        return "sparse"
    if isinstance(vtype, TensorType | ScalarType):
        return "array"
    return "static"  # a slice, None, a Python object: part of the compiled function's key


class JAXRunner:
    """The callable a :class:`JAXLinker` links: computes the output cells from the input
    cells with one compiled JAX function. It carries what the executor and the tools read
    from a runner (``fgraph``, ``nodes``, ``thunks``, ``storage_map``, ``impl_of``, ...)."""

    #: the executor leaves device values in shared cells for this runner (see the module's doc)
    takes_device_values = True
    #: outputs never share memory with inputs or with each other: ``jax.jit`` returns new
    #: buffers, even for an output that is an input (the executor then checks no aliasing)
    fresh_outputs = True
    lazy = False
    profile = None

    def __init__(self, fgraph: FunctionGraph, input_storage: list[list], device_outputs: bool):
        self.fgraph = fgraph
        self.nodes: list[Apply] = fgraph.toposort()
        self.thunks: list[Callable] = []
        self.input_cells = input_storage
        self.output_cells: list[list] = [[None] for _ in fgraph.outputs]
        self.storage_map = dict(zip(fgraph.inputs, input_storage))
        for var, cell in zip(fgraph.outputs, self.output_cells):
            self.storage_map.setdefault(var, cell)
        self.compute_map: dict = {}
        self.graph_fn = funcify_fgraph(fgraph)
        self.kinds = [_input_kind(v) for v in fgraph.inputs]
        self.shared = [isinstance(v, SharedVariable) for v in fgraph.inputs]
        # outputs that become a shared variable's next value stay on the device
        updates = getattr(fgraph, "update_mapping", None) or {}
        # (a sparse variable's next value comes back as a SciPy matrix: its Type has the format)
        keep = {o for o, i in updates.items() if self.shared[i] and self.kinds[i] != "sparse"}
        # shared arrays that an update replaces: their buffers are donated to the compiled
        # function (see the module's doc), {input index: index of its update output}
        self.donations = {i: o for o, i in updates.items() if self.shared[i] and self.kinds[i] == "array"}
        self.converters = [
            None if k in keep else _output_converter(v, device_outputs) for k, v in enumerate(fgraph.outputs)
        ]
        self.out_dtypes = [getattr(v.type, "dtype", None) for v in fgraph.outputs]
        # outputs copied to the host: their copies are all started before the first is
        # waited for (on a GPU, one round trip per call instead of one per output)
        self.host_outputs = tuple(
            k
            for k, (c, v) in enumerate(zip(self.converters, fgraph.outputs))
            if c is not None and not isinstance(v.type, RandomGeneratorType | SparseTensorType)
        )
        # integer scalars that may have to be static arguments (a length, a count)
        self.static_candidates = tuple(
            k
            for k, v in enumerate(fgraph.inputs)
            if self.kinds[k] == "array" and v.type.ndim == 0 and v.type.dtype[:3] in ("int", "uin")
        )
        self.static_argnums: tuple[int, ...] = tuple(
            k for k, kind in enumerate(self.kinds) if kind == "static"
        )
        # outputs copied to the host are copied all at once, where that is a copy (see _off_host)
        self._async_copies = len(self.host_outputs) > 1
        #: whether the outputs live on an accelerator (known once a call has settled)
        self._on_device = False
        self._plan_args()
        self._device_cache: dict[int, tuple[Any, Any]] = {}
        self.donate_argnums: tuple[int, ...] = ()
        self._donated: frozenset[int] = frozenset()
        self._jitted: Callable | None = None
        #: the error class of each check staged while tracing (see _checkified)
        self._staged: list[type] = []
        #: the program with its checks as host callbacks, which raise their own errors
        #: (compiled when a staged check first fails: see _replay)
        self._with_callbacks: Callable | None = None
        self._settled = False  # whether a call has traced successfully with the current argnums
        self._direct: Callable[[], list] | None = None  # see call_direct
        #: whether the program calls host code, which may fail while it runs (None: not yet
        #: checked); such a program donates nothing and keeps the general call path
        self._runs_host_code: bool | None = None
        #: once a call has settled the compiled function and every input passes as it is:
        #: ``(program, converters)``, where the outputs of a call with the (checked) input
        #: values are ``program(*values)``, each converted by its converter (None: as it is),
        #: with nothing else to do; else None
        self.direct_program: tuple[Callable, tuple] | None = None

    # -- what the tools read from a runner ------------------------------------------------

    def impl_of(self, node: Apply) -> str:
        """Every node runs inside the compiled JAX function."""
        return JAX

    # -- compiling --------------------------------------------------------------------------

    def traced_function(self) -> Callable:
        """The function ``jax.jit`` compiles: the graph's, outputs cast to their Types' dtypes.

        While tracing, it checks that each donated input's update has the input's shape
        (else the buffer could not be reused, and JAX would warn on every compilation):
        one that has not raises :class:`_Undonatable`, and the call compiles again without
        donating it."""
        graph_fn, dtypes = self.graph_fn, self.out_dtypes
        donated = [(i, self.donations[i]) for i in self.donate_argnums]

        def arignote_jax_fn(*values: Any) -> tuple:
            outs = graph_fn(*values)
            outs = tuple(
                o.astype(d) if d is not None and hasattr(o, "dtype") and o.dtype != np.dtype(d) else o
                for o, d in zip(outs, dtypes)
            )
            for i, o in donated:
                if np.shape(outs[o]) != np.shape(values[i]):
                    raise _Undonatable(i)
            return outs

        return arignote_jax_fn

    def _jit(self) -> Callable:
        if self._jitted is None:
            # (a static argument retraces per value: no donation then, see _may_fail)
            self.donate_argnums = () if self.static_argnums else tuple(sorted(self.donations))
            self._donated = frozenset(self.donate_argnums)
            self._traced_fn = self.traced_function()
            self._staged = []
            self._with_callbacks = None
            self._jitted = jax.jit(
                _checkified(self._traced_fn, self.static_argnums, self._staged),
                static_argnums=self.static_argnums,
                donate_argnums=self.donate_argnums,
            )
        return self._jitted

    def _flag_failed(self, failed: Any, results: Sequence[Any]) -> bool:
        """Whether the staged checks' flag ``failed`` says one failed. On a device, the copies
        of the outputs that go to the host start with the flag's, so that reading the flag
        and then the outputs is one round trip to the device, not two."""
        if self._on_device:
            failed.copy_to_host_async()
            for k in self.host_outputs:
                results[k].copy_to_host_async()
        return bool(np.asarray(failed))  # (1 µs, where bool() of a JAX array takes 4)

    def _replay(self, args: Sequence[Any]) -> None:
        """A staged check failed: run the program again with its checks as host callbacks,
        which raise the check's own error, the offending values in its message, as the other
        backends do (compiled at the first failure)."""
        if self._with_callbacks is None:
            self._with_callbacks = jax.jit(self._traced_fn, static_argnums=self.static_argnums)
        try:
            jax.block_until_ready(self._with_callbacks(*args))
        except jax.errors.JaxRuntimeError as err:
            original = host_error(err)
            if original is None:
                raise
            raise original from None
        # (the replay computes what the program did, so it fails as it did; were it not to,
        # the error of the checks', when they are all of one class)
        classes = set(self._staged)
        raise (classes.pop() if len(classes) == 1 else ValueError)("a check of the compiled program failed")

    # -- calling ----------------------------------------------------------------------------

    def _args(self) -> list[Any]:
        """The compiled function's arguments: the input cells' values, with generators as
        keys, static values as Python values, and NumPy values of shared variables as
        their cached device copies (the inputs needing none of this are passed as they are)."""
        args = [cell[0] for cell in self.input_cells]
        if self._plain:
            return args
        static = self.static_argnums
        for k in self._special:
            value = args[k]
            if self.kinds[k] == "rng":
                if isinstance(value, np.random.Generator):
                    args[k] = generator_to_key(value)
            elif self.kinds[k] == "sparse":  # a SciPy matrix: its BCOO (cached for a shared one)
                args[k] = self._converted(k, value, to_bcoo) if self.shared[k] else to_bcoo(value)
            elif k in static:
                args[k] = value.item() if hasattr(value, "item") else value
            elif isinstance(value, np.ndarray | np.generic):  # a shared variable's
                if k in self._donated:  # a copy of its own: the call consumes it
                    args[k] = jax.device_put(value)
                    continue
                args[k] = self._converted(k, value, jax.device_put)
        return args

    def _converted(self, k: int, value: Any, convert: Callable[[Any], Any]) -> Any:
        """``convert(value)`` for shared input ``k``, made once while the variable holds the
        same object (the device copy of a NumPy value, the BCOO of a SciPy matrix)."""
        hit = self._device_cache.get(k)
        if hit is not None and hit[0] is value:
            return hit[1]
        converted = convert(value)
        self._device_cache[k] = (value, converted)
        return converted

    def _plan_args(self) -> None:
        """Which inputs :meth:`_args` must look at (see there), for the current argnums."""
        self._special = tuple(
            k
            for k, kind in enumerate(self.kinds)
            if kind in ("rng", "sparse") or k in self.static_argnums or self.shared[k]
        )
        self._plain = not self._special

    def __call__(self) -> None:
        jitted = self._jitted or self._jit()
        args = self._args()
        while True:
            try:
                if self.donate_argnums and self._runs_host_code is None:
                    # traced once here (jax.jit's cache keeps the trace for the call)
                    plain = jax.jit(self._traced_fn, static_argnums=self.static_argnums)
                    self._runs_host_code = _may_fail(plain.trace(*args).jaxpr.jaxpr)
                    if self._runs_host_code:
                        self.donations.clear()  # a failed call must leave the shared values
                        self._jitted = None
                        jitted = self._jit()
                failed, results = jitted(*args)
                # (on a device, reading the flag starts the outputs' copies: see _flag_failed)
                copying = failed is not None and self._on_device
                if failed is not None and self._flag_failed(failed, results):
                    self._replay(args)
                if not self._settled or self._runs_host_code:
                    # off the CPU the program runs after the call returns, and failing host
                    # code fails it then: wait here, where its error is turned into its own
                    jax.block_until_ready(results)
                break
            except _Undonatable as err:  # (raised while tracing: nothing was consumed)
                del self.donations[err.index]
            except jax.errors.JaxRuntimeError as err:
                # host code failed while the program ran (a check, a SciPy routine): raise
                # its own error, which JAX only reports as text
                original = host_error(err)
                if original is None:
                    raise
                raise original from None
            except JAXNodeError as err:
                # the graph needs concrete values of integer inputs (a length): make them
                # static, once (when they already are, the error is the graph's own)
                more = tuple(sorted({*self.static_argnums, *self.static_candidates}))
                if self._settled or more == self.static_argnums or not _shape_error(err):
                    raise
                self.static_argnums = more
                self._plan_args()
            self._jitted = None
            jitted = self._jit()
            args = self._args()
        if not self._settled:
            self._settled = True
            self._on_device = bool(self.host_outputs) and _off_host(results[self.host_outputs[0]])
            self._async_copies = self._async_copies and self._on_device
            if self._runs_host_code is None:  # (the trace is jax.jit's cached one)
                self._runs_host_code = _may_fail(jitted.trace(*args).jaxpr.jaxpr)
        if self._async_copies and not copying:
            for k in self.host_outputs:
                copy = getattr(results[k], "copy_to_host_async", None)
                if copy is not None:
                    copy()
        for cell, value, convert in zip(self.output_cells, results, self.converters):
            cell[0] = value if convert is None else convert(value)

    def call_direct(self) -> list:
        """One call, the outputs' values returned as a list, the output cells left as they
        are: for a caller that takes the values as they come (fresh arrays, no update to
        apply), as :class:`~arignote.compile.executor.Function` does for a plain call. Once
        a call has settled the compiled function, a call whose inputs all pass as they are
        is one generated function: the compiled function called with the input cells'
        values and each output converted, with none of the per-call bookkeeping of
        :meth:`__call__` (static arguments, generators, shared values' device copies: a
        runner with any of them keeps going through it); and :attr:`direct_program` offers
        the compiled function and the converters to a caller that writes that call itself
        (:mod:`arignote.compile.plain_call`)."""
        direct = self._direct
        if direct is not None:
            return direct()
        self()
        # (a program that runs host code may fail: its calls keep going through __call__,
        # which waits for it and raises the host code's own error)
        if self._settled and self._plain and self._jitted is not None and not self._runs_host_code:
            program = _unpacked(self._jitted, self)
            if self._async_copies and not self._staged:  # (a checked program starts them)
                program = _starting_copies(program, self.host_outputs)
            self._direct = self._make_direct(program)
            self.direct_program = (program, tuple(self.converters))
        return [cell[0] for cell in self.output_cells]

    def _make_direct(self, program: Callable) -> Callable[[], list]:
        names: dict[str, Any] = {"_jitted": program}
        ins = []
        for k, cell in enumerate(self.input_cells):
            names[f"_c{k}"] = cell
            ins.append(f"_c{k}[0]")
        outs = []
        for k, convert in enumerate(self.converters):
            if convert is None:
                outs.append(f"r[{k}]")
            else:
                names[f"_f{k}"] = convert
                outs.append(f"_f{k}(r[{k}])")
        source = f"def run():\n    r = _jitted({', '.join(ins)})\n    return [{', '.join(outs)}]\n"
        exec(compile(source, "<arignote jax call>", "exec"), names)
        return names["run"]


def _checkified(fn: Callable, static_argnums: tuple[int, ...], staged: list[type]) -> Callable:
    """``fn`` returning ``(whether a check failed, its outputs)`` (None: it has no check), its
    checks staged in the program
    (:func:`~arignote.link.jax.dispatch.static.functional_checks`, which appends each check's
    error class to ``staged``). Static arguments reach ``fn`` as the Python values
    ``jax.jit`` gives (checkify would trace them)."""
    static = frozenset(static_argnums)

    def checked(*values: Any) -> Any:
        fixed = {k: values[k] for k in static}

        def run(*dynamic: Any) -> Any:
            given = iter(dynamic)
            with functional_checks(staged):
                return fn(*(fixed[k] if k in fixed else next(given) for k in range(len(values))))

        before = len(staged)
        try:
            error, outputs = checkify.checkify(run, errors=checkify.user_checks)(
                *(v for k, v in enumerate(values) if k not in static)
            )
        except (ValueError, NotImplementedError) as err:
            if "checkify" not in str(err).lower():
                raise
            # a construct checkify cannot carry its checks through (a vmap of a while loop,
            # as in some of jax.scipy's special functions): the checks stay host callbacks
            del staged[before:]
            return None, fn(*values)
        # whether a check failed, as one boolean: the error's boolean leaves are its "failed"
        # flags (its others, the failed check's code, are not needed: the replay raises the
        # check's own error), and reading one boolean costs 1 µs where error.get() costs 6
        flags = [leaf for leaf in jax.tree.leaves(error) if leaf.dtype == bool]
        if len(staged) == before or not flags:
            return None, outputs  # (no check: no output more)
        return jnp.any(jnp.stack(flags)), outputs

    return checked


def _unpacked(jitted: Callable, runner: JAXRunner) -> Callable:
    """The outputs of ``jitted`` (a :func:`_checkified` program), raising a failed check's
    own error (:meth:`JAXRunner._replay`)."""
    if not runner._staged:

        def program(*args: Any) -> Any:
            return jitted(*args)[1]

        return program

    flag_failed = runner._flag_failed

    def checked_program(*args: Any) -> Any:
        failed, results = jitted(*args)
        if failed is not None and flag_failed(failed, results):
            runner._replay(args)
        return results

    return checked_program


def _starting_copies(jitted: Callable, host_outputs: tuple[int, ...]) -> Callable:
    """``jitted``, starting the copies of the outputs at ``host_outputs`` to the host before
    it returns them (they are converted one by one: each then waits for its own copy only,
    all of them travelling at once)."""

    def program(*args: Any) -> Any:
        results = jitted(*args)
        for k in host_outputs:
            results[k].copy_to_host_async()
        return results

    return program


#: primitives that run host code, which may raise while the program runs (a failed check)
_HOST_PRIMITIVES = frozenset({"debug_callback", "pure_callback", "io_callback"})


def _may_fail(jaxpr: Any) -> bool:
    """Whether ``jaxpr`` (or one nested in it) calls host code, which may raise while the
    program runs: donated buffers would then be lost with the call, so none are donated."""
    for eqn in jaxpr.eqns:
        if eqn.primitive.name in _HOST_PRIMITIVES:
            return True
        for param in eqn.params.values():
            for sub in param if isinstance(param, tuple | list) else (param,):
                inner = getattr(sub, "jaxpr", sub)
                if hasattr(inner, "eqns") and _may_fail(inner):
                    return True
    return False


class _Undonatable(Exception):
    """Raised while tracing: the update of donated input ``index`` has another shape."""

    def __init__(self, index: int):
        super().__init__(index)
        self.index = index


def _off_host(value: Any) -> bool:
    """Whether ``value`` lives on an accelerator: copying outputs to the host there is worth
    starting early (on the CPU, NumPy reads JAX's buffers in place)."""
    devices = getattr(value, "devices", None)
    return devices is not None and any(d.platform != "cpu" for d in devices())


def _shape_error(err: BaseException) -> bool:
    """Whether ``err`` (a JAXNodeError) comes from a value JAX needed concretely."""
    cause = err.__cause__
    names = {
        "ConcretizationTypeError",
        "TracerIntegerConversionError",
        "TracerBoolConversionError",
        "TracerArrayConversionError",
        "NonConcreteBooleanIndexError",
        "DataDependentShapeError",
    }
    while cause is not None:
        if type(cause).__name__ in names:
            return True
        cause = cause.__cause__
    return False
