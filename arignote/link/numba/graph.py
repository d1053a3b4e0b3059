"""A whole FunctionGraph as ONE Numba function: the generated source, one line per node.

:func:`plan_graph` asks :func:`~arignote.link.numba.dispatch.numba_funcify` for each node's
function (a ``def`` of its own, named by its Op family and the hash of its text, shared by
nodes with the same text) and writes the graph's function, ``kernel``, calling them in
topological order, one statement per node with the Op in a comment (a sum, product, max or
min of an Elemwise's output that nothing else reads shares its Elemwise's statement: it is
accumulated inside that loop, and the intermediate array is never made)::

    @numba.njit(_SIG, cache=True, nogil=True, error_model='numpy')
    def kernel(a_mu, a_log_tau, z, k0, kp_float64):
        mu = a_mu[()]
        log_tau = a_log_tau[()]
        t0 = elemwise_1f2e3d4c(z)  # Sqr
        ...
        return _0d_float64(t8), t10

Values are locals: a 0-d tensor is a Numba scalar, anything else an array. Arguments are the
graph's inputs (0-d ones as 0-d arrays, read with ``[()]``), then its constants: each array
constant as an argument of its own, and the 0-d ones, with the constants of the Ops' own
functions (a fused body's literals), packed into one vector per dtype. So the text depends on
the graph's structure, dtypes and static broadcastable patterns only, never on a constant's
value (``x * 2`` and ``x * 3`` share their compiled code), and its hash is the key of the
function in the disk cache (:mod:`arignote.link.numba.cache`), compiled and loaded as the
per-node kernels are. The signature is explicit, so a value of another type never makes
Numba compile a second version: the call raises ``TypeError``. Its arrays are C-contiguous
(which lets LLVM vectorise the loops: a strided layout measured 1.7x slower on the
hierarchical model): the runner passes a contiguous copy of any other input, and a value of
another dtype or rank runs on tier 1.

Floating-point math is compiled with ``fastmath={'reassoc', 'contract'}`` (:data:`FASTMATH`):
reassociation lets a sum or a dot run in vector lanes (measured: 1.7x on the hierarchical
model), and contraction allows fused multiply-adds. Both only change rounding (a sum's order
of additions, as NumPy's pairwise sum differs from a loop's); the flags that assume no NaN or
infinity (which would drop the NaN checks of max/min and of softmax) are not used.

A graph with a node that has no Numba implementation (or a non-tensor input) raises
:class:`~arignote.link.numba.dispatch.NoNumbaImpl` naming the node.
"""

from __future__ import annotations

import hashlib
import keyword
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from arignote.graph.basic import Apply, Constant, Variable
from arignote.graph.fg import FunctionGraph
from arignote.link.numba.dispatch import NoNumbaImpl, numba_funcify
from arignote.link.numba.dispatch.basic import SUPPORTED_DTYPES, nb_dtype, ndim_of
from arignote.link.numba.dispatch.elemwise import elemwise_reducing, fusable_reduction
from arignote.link.numba.scalar_math import helper_import
from arignote.scalar.composite import Composite
from arignote.scalar.type import ScalarType
from arignote.tensor.elemwise import Elemwise
from arignote.tensor.type import TensorType

__all__ = ["GraphPlan", "plan_graph", "GRAPH_FORMAT"]

#: bumped when the generated text changes meaning (part of every key)
GRAPH_FORMAT = 3
#: the LLVM fast-math flags of every generated function (see the module's doc)
FASTMATH = "{'reassoc', 'contract'}"
_JIT = f"@numba.njit(nogil=True, error_model='numpy', boundscheck=False, fastmath={FASTMATH})"

_NB_SCALAR = {"bool": "boolean", **{d: d for d in SUPPORTED_DTYPES if d != "bool"}}
_NOT_WORD = re.compile(r"\W")


@dataclass(frozen=True)
class GraphPlan:
    """A graph's Numba function: ``source`` (the module; its function is ``kernel``), ``key``
    (its content hash), ``consts`` (the arguments after the inputs' values, in order),
    ``outputs`` (per output of the graph: ``"array"``, ``"0d"`` (the function returns a 0-d
    array), or ``"scalar"`` (a ScalarType's value: converted to ``dtype``)), ``out_dtypes``,
    ``kind`` (``"graph"``) and ``n_nodes``."""

    source: str
    key: str
    consts: tuple
    outputs: tuple
    out_dtypes: tuple
    n_nodes: int
    kind: str = "graph"


def _label(node: Apply) -> str:
    """The Op in a comment: its structure only (a fused body's text would show its
    constants, which must not change the source)."""
    op = node.op
    if isinstance(op, Elemwise) and isinstance(op.scalar_op, Composite):
        names = [type(n.op).__name__.lower() for n in op.scalar_op.fgraph.toposort()]
        text = f"Composite{{{', '.join(names)}}}"
    else:
        text = str(op).replace("\n", " ")
    return text if len(text) <= 70 else text[:67] + "..."


def _array_type(dtype: str, ndim: int) -> str:
    return f"numba.types.Array(numba.types.{_NB_SCALAR[dtype]}, {ndim}, 'C')"


class _Writer:
    """Writes a graph's function: ``kernel`` (the module's entry, ``inner=False``) or, for
    an inner graph (``inner=True``), a helper taking its inputs' values as they are (0-d as
    scalars) and returning its outputs' (see :func:`inner_function`)."""

    def __init__(self, fgraph: FunctionGraph, nodes: list[Apply], inner: bool = False):
        self.inner = inner
        self.extra: list[str] = []  # helpers' own module-level definitions, in order
        self.fgraph = fgraph
        self.nodes = nodes
        self.helpers: dict[str, str] = {}  # source -> name
        self.helper_text: list[str] = []
        self.names: dict[Variable, str] = {}
        self.used: set[str] = {"kernel", "np", "numba"}
        self.args: list[str] = []
        self.arg_types: list[str] = []
        self.consts: list[Any] = []
        self.packs: dict[str, list] = {}  # dtype -> scalar constants packed in a vector
        self.lines: list[str] = []
        self.wrap0d: set[str] = set()

    def fresh(self, hint: str | None, default: str) -> str:
        base = _NOT_WORD.sub("_", hint or "").strip("_")
        if not base or not base.isidentifier() or keyword.iskeyword(base) or base[0].isdigit():
            base = default
        name, k = base, 1
        while name in self.used:
            name, k = f"{base}_{k}", k + 1
        self.used.add(name)
        return name

    def packed(self, value: Any) -> str:
        """An expression reading the 0-d constant ``value`` from its dtype's pack."""
        dtype = np.asarray(value).dtype.name
        if dtype not in SUPPORTED_DTYPES:
            raise NoNumbaImpl(f"a constant of dtype {dtype}")
        pack = self.packs.setdefault(dtype, [])
        pack.append(value)
        return f"kp_{dtype}[{len(pack) - 1}]"

    def ref(self, var: Variable) -> str:
        name = self.names.get(var)
        if name is not None:
            return name
        if isinstance(var, Constant):
            data = var.data
            if data is None:
                return "None"
            if not isinstance(var.type, (TensorType, ScalarType)) or var.type.dtype not in SUPPORTED_DTYPES:
                raise NoNumbaImpl(f"the constant {var} of Type {var.type}")
            if ndim_of(var) == 0:
                self.names[var] = expr = self.packed(np.asarray(data, dtype=var.type.dtype)[()])
                return expr
            name = self.fresh(None, f"k{len(self.consts)}")
            self.args.append(name)
            self.arg_types.append(_array_type(var.type.dtype, var.type.ndim))
            # (a writeable C-contiguous copy: the signature is fixed, and Numba types read-only
            # arrays apart)
            self.consts.append(np.array(data, dtype=var.type.dtype, copy=True, order="C"))
            self.names[var] = name
            return name
        raise NoNumbaImpl(f"{var} is not computed before it is used")

    def array_arg(self, value: np.ndarray) -> str:
        """A new argument holding the array ``value`` (a writeable copy)."""
        name = self.fresh(None, f"k{len(self.consts)}")
        self.args.append(name)
        self.arg_types.append(_array_type(value.dtype.name, value.ndim))
        self.consts.append(np.array(value, copy=True, order="C"))
        return name

    def helper(self, node: Apply, impl: Any = None) -> tuple[str, list[str]]:
        impl = numba_funcify(node.op, node) if impl is None else impl
        for text in impl.helpers:
            if text not in self.extra:
                self.extra.append(text)
        text = impl.source
        if not text.startswith("def impl("):
            raise ValueError(f"numba_funcify({node.op}) must define impl first, got {text[:40]!r}")
        name = self.helpers.get(text)
        if name is None:
            family = _NOT_WORD.sub("_", type(node.op).__name__.lower())
            name = f"{family}_{hashlib.sha256(text.encode()).hexdigest()[:8]}"
            self.helpers[text] = name
            self.helper_text.append(_JIT + "\n" + text.replace("def impl(", f"def {name}(", 1))
        consts = []
        for c in impl.consts:
            if isinstance(c, np.ndarray) and c.ndim > 0:
                if c.dtype.name not in SUPPORTED_DTYPES:
                    raise NoNumbaImpl(f"a constant of dtype {c.dtype}")
                consts.append(self.array_arg(c))
            else:
                consts.append(self.packed(c))
        return name, consts

    def fusions(self) -> tuple[dict[Apply, dict[int, Apply]], set[Apply]]:
        """The reductions computed inside the loop of the Elemwise making their input
        (:func:`~arignote.link.numba.dispatch.elemwise.elemwise_reducing`): per Elemwise, its
        output index -> the CAReduce, where that reduction is the output's only reader and
        the output is not one of the graph's; and the set of those reductions."""
        fused: dict[Apply, dict[int, Apply]] = {}
        absorbed: set[Apply] = set()
        members = set(self.nodes)
        outputs = set(self.fgraph.outputs)
        for node in self.nodes:
            src = node.inputs[0].owner if node.inputs else None
            if src is None or src not in members or not isinstance(src.op, Elemwise):
                continue
            var = node.inputs[0]
            readers = list(self.fgraph.clients.get(var, ()))
            if len(readers) != 1 or var in outputs or not fusable_reduction(node):
                continue
            fused.setdefault(src, {})[src.outputs.index(var)] = node
            absorbed.add(node)
        return fused, absorbed

    def _inner(self, head: list[str], body: list[str]) -> InnerFunction:
        lines = [*body[:-1], body[-1].rstrip(",") + ("," if len(self.fgraph.outputs) == 1 else "")]
        text = f"def inner({', '.join(self.args)}):\n" + "\n".join(lines) + "\n"
        name = f"inner_{hashlib.sha256(text.encode()).hexdigest()[:12]}"
        definition = _JIT + "\n" + text.replace("def inner(", f"def {name}(", 1)
        return InnerFunction(name, (*self.extra, *self.helper_text, definition), tuple(self.consts))

    def write(self) -> GraphPlan | InnerFunction:
        fg = self.fgraph
        body: list[str] = []
        refused: dict[Variable, str] = {}  # (named when a node reads them: its reason first)
        for var in fg.inputs:
            t = var.type
            if not isinstance(t, TensorType) or t.dtype not in SUPPORTED_DTYPES:
                refused[var] = f"the input {var} of Type {t}"
                continue
            if t.ndim == 0 and not self.inner:
                arg = self.fresh(f"a_{var.name or ''}", f"a{len(self.args)}")
                local = self.fresh(var.name, f"x{len(self.args)}")
                body.append(f"    {local} = {arg}[()]")
            else:
                arg = local = self.fresh(var.name, f"x{len(self.args)}")
            self.args.append(arg)
            self.arg_types.append(_array_type(t.dtype, t.ndim))
            self.names[var] = local
        fused, absorbed = self.fusions()
        for k, node in enumerate(self.nodes):
            if node in absorbed:
                continue  # (computed in its input's loop)
            reduced = fused.get(node, {})
            try:
                name, own = self.helper(node, elemwise_reducing(node, reduced) if reduced else None)
                for v in node.inputs:
                    if v in refused:
                        raise NoNumbaImpl(refused[v])
                args = [self.ref(v) for v in node.inputs] + own
            except NoNumbaImpl as err:
                raise NoNumbaImpl(f"node {k} ({_label(node)}): {err}") from None
            outs = []
            for j, v in enumerate(node.outputs):
                if j in reduced:
                    v = reduced[j].outputs[0]
                outs.append(self.fresh(v.name, f"t{k}" if len(node.outputs) == 1 else f"t{k}_{j}"))
                self.names[v] = outs[-1]
            label = " + ".join([_label(node), *(_label(r) for r in reduced.values())])
            body.append(f"    {', '.join(outs)} = {name}({', '.join(args)})  # {label}")
        if refused:
            raise NoNumbaImpl(next(iter(refused.values())))
        rets, kinds, dtypes = [], [], []
        for v in fg.outputs:
            expr = self.ref(v)
            if self.inner:
                rets.append(expr)
                kinds.append("value")
            elif isinstance(v.type, TensorType) and v.type.ndim == 0:
                wrap = f"_0d_{v.type.dtype}"
                self.wrap0d.add(v.type.dtype)
                rets.append(f"{wrap}({expr})")
                kinds.append("0d")
            elif isinstance(v.type, TensorType):
                rets.append(expr)
                kinds.append("array")
            elif isinstance(v.type, ScalarType):
                rets.append(expr)
                kinds.append("scalar")
            else:
                raise NoNumbaImpl(f"the output {v} of Type {v.type}")
            dtypes.append(v.type.dtype)
        body.append(f"    return {', '.join(rets)}{',' if len(rets) == 1 else ''}")
        # the packs: one vector argument per dtype
        for dtype, values in sorted(self.packs.items()):
            self.args.append(f"kp_{dtype}")
            self.arg_types.append(_array_type(dtype, 1))
            self.consts.append(np.array(values, dtype=dtype))
        head = ["import numba", "import numpy as np", "", ""]
        for dtype in sorted(self.wrap0d):
            head += [
                "@numba.njit(nogil=True)",
                f"def _0d_{dtype}(v):",
                f"    o = np.empty((), {nb_dtype(dtype)})",
                "    o[()] = v",
                "    return o",
                "",
                "",
            ]
        for text in [*self.extra, *self.helper_text]:
            head += [text, ""]
        sig = ",\n    ".join(self.arg_types)
        head += [f"_SIG = (\n    {sig}{',' if len(self.arg_types) == 1 else ''}\n)", "", ""]
        head.append(
            "@numba.njit([_SIG], cache=True, nogil=True, error_model='numpy', boundscheck=False, "
            f"fastmath={FASTMATH})"
        )
        head.append(f"def kernel({', '.join(self.args)}):")
        if self.inner:
            return self._inner(head, body)
        source = _on_huge_pages("\n".join(head + body) + "\n")
        key = hashlib.sha256(f"arignote-graph-{GRAPH_FORMAT}\n{source}".encode()).hexdigest()[:40]
        return GraphPlan(source, key, tuple(self.consts), tuple(kinds), tuple(dtypes), len(self.nodes))


@dataclass(frozen=True)
class InnerFunction:
    """An inner graph's Numba function (:func:`inner_function`): ``name``, ``definitions``
    (the module-level texts it needs, its own last), ``consts`` (arrays passed after its
    inputs, in order)."""

    name: str
    definitions: tuple
    consts: tuple


def inner_function(fgraph: FunctionGraph) -> InnerFunction:
    """The Numba function computing ``fgraph`` (an inner graph, e.g. a loop's step): it takes
    the inputs' values (0-d ones as scalars), then :attr:`InnerFunction.consts`, and returns
    the outputs' values as a tuple; raises ``NoNumbaImpl`` as :func:`plan_graph`."""
    return _Writer(fgraph, fgraph.toposort(), inner=True).write()


#: the generated code's name of :func:`arignote.link.numba.hugepages.empty`
EMPTY_NAME = "_arignote_empty"


def _on_huge_pages(source: str) -> str:
    """``source`` with its arrays allocated by :func:`arignote.link.numba.hugepages.empty`
    (``np.empty`` advised onto transparent huge pages from 4 MiB, as NumPy's arrays are)."""
    if "np.empty(" not in source:
        return source
    head, sep, rest = source.partition("import numpy as np\n")
    line = helper_import("hugepages", "empty", EMPTY_NAME)
    return f"{head}{sep}{line}\n{rest.replace('np.empty(', EMPTY_NAME + '(')}"


def plan_graph(fgraph: FunctionGraph, nodes: list[Apply] | None = None) -> GraphPlan:
    """The whole-graph Numba function of ``fgraph`` (``nodes``: its topological order);
    raises :class:`~arignote.link.numba.dispatch.NoNumbaImpl` naming the first node (or
    input) the backend cannot write."""
    # the Scan Op's function: registered from its own layer (it reads the Scan Op)
    import arignote.link.numba.dispatch.scan  # noqa: F401

    return _Writer(fgraph, fgraph.toposort() if nodes is None else nodes).write()
