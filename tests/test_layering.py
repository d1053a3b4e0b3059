"""The import layering of arignote, read from the source with ``ast`` (nothing is imported).

The package is built in layers, bottom to top: config, graph, scalar, tensor, gradient,
link/printing, compile, inner-graph Ops, and the package ``__init__``. A module imports from its
own layer or lower ones, at the top of the file, so that importing any module pulls in only what
lies below it, the import graph has no cycles, and each layer can be read (and tested) without
the ones above. The few places where a lower layer reaches up are listed below, each with why.

Counting follows the shared ``layering.py`` tool: an import statement counts once, relative
imports are resolved, imports under ``if TYPE_CHECKING:`` are left out (never executed), and an
import inside a function (or lambda) is lazy. The target of ``from arignote.x import y`` is the
module ``arignote.x.y`` when there is one, else ``arignote.x``.
"""

from __future__ import annotations

import ast
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from itertools import pairwise
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE_DIR = ROOT / "arignote"
TOP = PACKAGE_DIR.name

LAYER_NAMES: dict[int, str] = {
    1: "config",
    2: "graph",
    3: "scalar",
    4: "tensor",
    5: "gradient",
    6: "link/printing",
    7: "compile",
    8: "inner-graph Ops",
    9: "package",
}

# The first pattern that matches gives a module its layer. "x.*" matches x and the modules below
# it, "x*" any module whose name starts with x, and a plain name only that module.
LAYERS: tuple[tuple[str, int], ...] = (
    ("arignote.configdefaults", 1),
    ("arignote.configparser", 1),
    ("arignote.graph.*", 2),
    # pytensor.misc's path: containers, memory checks and a pickler of graphs
    ("arignote.misc.*", 2),
    ("arignote.scalar.*", 3),
    # TensorSymbolicOp is a SymbolicOp (an OpFromGraph); its home keeps PyTensor's path
    ("arignote.tensor.symbolic", 8),
    ("arignote.tensor.*", 4),
    # pytensor.assumptions's path: facts about matrices for the linear algebra rewrites
    ("arignote.assumptions.*", 4),
    ("arignote.sparse.*", 4),
    ("arignote.gradient", 5),
    ("arignote._gradient.*", 5),
    # the JAX backend translates every Op, inner-graph Ops included (IfElse -> lax.cond,
    # OpFromGraph inlined, Scan -> lax.scan): it sits with them, above compile
    ("arignote.link.jax.*", 8),
    # the Numba function of the Scan Op: it reads the Op, an inner-graph Op
    ("arignote.link.numba.dispatch.scan", 8),
    ("arignote.link.*", 6),
    ("arignote.printing.*", 6),
    # OpFromGraph is an inner-graph Op; its home keeps PyTensor's path under compile
    ("arignote.compile.builders", 8),
    ("arignote.compile._builders_grad", 8),
    ("arignote.compile.*", 7),
    # pytensor.raise_op's path: a face of tensor.raising (Assert, CheckAndRaise)
    ("arignote.raise_op", 4),
    # pytensor.breakpoint's path: a face of tensor.breakpoint (PdbBreakpoint)
    ("arignote.breakpoint", 4),
    # pytensor.basic's path: as_symbolic converts values to tensors, slices, None
    ("arignote.basic", 4),
    # plain-Python and NumPy helpers at pytensor.utils's and pytensor.npy_2_compat's paths
    ("arignote.utils", 1),
    ("arignote.npy_2_compat", 1),
    # SciPy's slow-to-import modules, imported on first use (lazy_module, LazyAttribute)
    ("arignote.lazy", 1),
    ("arignote.ifelse", 8),
    ("arignote.optimize", 8),
    ("arignote.scan*", 8),
    ("arignote", 9),
    # `python -m arignote.cache`: the kernel cache's command line, a face of link.numba.cache
    ("arignote.cache", 9),
)

# Top-level imports that go up a layer: public faces that keep PyTensor's module paths.
UPWARD_FACES: dict[tuple[str, str], str] = {
    ("arignote.tensor", "arignote.gradient"): (
        "the tensor face re-exports grad/jacobian/hessian: PyTensor users write pt.grad"
    ),
    ("arignote.compile", "arignote.compile.builders"): (
        "the compile package re-exports OpFromGraph, as pytensor.compile does"
    ),
    ("arignote.tensor.optimize", "arignote.optimize"): (
        "pytensor.tensor.optimize's path; the scipy.optimize Ops are inner-graph Ops and live in "
        "arignote.optimize, this face only re-exports them"
    ),
}

# Imports inside functions that go up a layer: a convenience of a lower layer that needs the
# machinery of a higher one only when called.
LAZY_UPWARD: dict[tuple[str, str], str] = {
    ("arignote.graph.basic", "arignote.compile.function"): (
        "Variable.eval compiles a function: the graph layer's convenience entry to the top"
    ),
    ("arignote.graph.basic", "arignote.link.perform"): (
        "Variable.eval matches the values given to the graph inputs with resolve_inputs, which "
        "the perform linker's callables share"
    ),
    ("arignote.compile.mode", "arignote.link.jax.linker"): (
        "mode='JAX' and Mode(linker='jax') import the JAX backend on first use: JAX is an "
        "optional dependency that import arignote never imports"
    ),
    ("arignote.link.numba.graph", "arignote.link.numba.dispatch.scan"): (
        "planning a graph registers the Scan Op's Numba function, which sits with the "
        "inner-graph Ops (it reads the Scan Op)"
    ),
    ("arignote.graph.basic", "arignote.printing.debug"): (
        "Variable.dprint, Apply.dprint and FunctionGraph.dprint print the graph (graph.basic's "
        "dprint_graph): convenience methods PyTensor has on them"
    ),
    ("arignote._gradient.check", "arignote.compile.function"): (
        "verify_grad compiles the function and its gradient to compare them numerically"
    ),
}

# Modules over MAX_LINES lines, each with why it is not split (yet).
MAX_LINES = 1100
OVERSIZE: dict[str, str] = {}

MAX_LAZY_SHARE = 0.10

# Modules that only re-export: a docstring, imports, ``__all__`` (and comments).
FACES: tuple[str, ...] = (
    "arignote/tensor/__init__.py",
    "arignote/tensor/basic.py",
    "arignote/tensor/math.py",
    "arignote/tensor/extra_ops.py",
    "arignote/scalar/math.py",
    "arignote/gradient.py",
    "arignote/tensor/optimize.py",
    "arignote/tensor/subtensor.py",
    "arignote/tensor/slinalg.py",
    "arignote/tensor/nlinalg.py",
    "arignote/tensor/linalg/__init__.py",
    "arignote/compile/sharedvalue.py",
    "arignote/link/basic.py",
)

DYNAMIC_IMPORTERS = frozenset({"import_module", "__import__"})

# Modules allowed a module ``__getattr__`` (PEP 562), each with why: what it imports on first
# access must be a plain import statement inside it, so this walk still sees the dependency.
MODULE_GETATTR: dict[str, str] = {
    "arignote.graph.basic": (
        "serves the traversal functions PyTensor 3 moved to graph.traversal (graph_inputs, "
        "ancestors, io_toposort, ...) with PyTensor's FutureWarning, as code written for "
        "earlier versions (PyMC's JAX samplers) imports them from here; traversal imports "
        "this module, so a top-level import would be a cycle"
    ),
    "arignote.compile.maker": (
        "serves function, which PyTensor 3 defines in compile/maker.py (from pytensor.compile.maker "
        "import function); its home, compile/function.py, imports this module, so a top-level "
        "import would be a cycle"
    ),
    "arignote": (
        "arignote.sparse is imported on first access (as in PyTensor): it imports scipy.sparse, "
        "~0.2 s, which most programs never need"
    ),
}

# Modules allowed an importlib call with a computed name, each with why.
DYNAMIC_IMPORT_SITES: dict[str, str] = {
    "arignote.lazy": (
        "imports a third-party module (scipy.special, scipy.linalg) on first use, so that "
        "import arignote does not pay ~0.2 s for each; it refuses arignote's own modules"
    ),
}
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


@dataclass(frozen=True)
class Site:
    """An import statement or importlib call: where, in which context, which modules it loads."""

    module: str
    path: Path
    node: ast.Import | ast.ImportFrom | ast.Call
    lazy: bool  # inside a function: runs when called, not when the module is imported
    type_checking: bool  # under ``if TYPE_CHECKING:``: never runs
    targets: tuple[str, ...]  # the arignote modules it loads, the module itself left out

    def where(self) -> str:
        return f"{self.path.relative_to(ROOT).as_posix()}:{self.node.lineno}"


@dataclass(frozen=True)
class Package:
    files: dict[str, Path]
    trees: dict[str, ast.Module]
    sites: tuple[Site, ...]

    def imports(self) -> list[Site]:
        """The internal imports that run, each statement once (the share's denominator)."""
        return [s for s in self.sites if s.targets and not s.type_checking]

    def edges(self, *, lazy: bool) -> Iterator[tuple[Site, str]]:
        """(statement, imported module) for the top-level or the lazy imports that run."""
        return ((s, t) for s in self.imports() if s.lazy == lazy for t in s.targets)


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE_DIR.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def resolve(module: str, is_pkg: bool, node: ast.ImportFrom) -> str:
    """The absolute module name a (possibly relative) ``from ... import`` reads from."""
    if node.level == 0:
        return node.module or ""
    base = module.split(".") if is_pkg else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def is_type_checking(test: ast.expr) -> bool:
    return getattr(test, "id", None) == "TYPE_CHECKING" or getattr(test, "attr", None) == "TYPE_CHECKING"


def call_name(call: ast.Call) -> str | None:
    return getattr(call.func, "attr", None) or getattr(call.func, "id", None)


def dynamic_name(call: ast.Call) -> str | None:
    """The literal module name given to ``import_module``/``__import__``, None when computed."""
    arg = call.args[0] if call.args else None
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return arg.value
    return None


def find_imports(
    tree: ast.Module, calls: bool
) -> Iterator[tuple[ast.Import | ast.ImportFrom | ast.Call, bool, bool]]:
    """Import statements (and importlib calls), with whether lazy and whether TYPE_CHECKING only.

    Import statements sit in statement bodies, so expressions are entered only when ``calls``
    (the source names an importlib accessor): this walk is most of the test's time.
    """
    blocks = (ast.stmt, ast.ExceptHandler, ast.match_case)
    stack: list[tuple[ast.AST, bool, bool]] = [(tree, False, False)]
    while stack:
        node, lazy, tc = stack.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node, lazy, tc
            continue
        if isinstance(node, ast.Call) and call_name(node) in DYNAMIC_IMPORTERS:
            yield node, lazy, tc
        lazy = lazy or isinstance(node, FUNCTIONS)
        if isinstance(node, ast.If) and is_type_checking(node.test):
            # only the body is for type checkers; an else branch runs
            stack += [(c, lazy, True) for c in node.body]
            stack += [(c, lazy, tc) for c in node.orelse]
        else:
            stack += [(c, lazy, tc) for c in ast.iter_child_nodes(node) if calls or isinstance(c, blocks)]


@cache
def package() -> Package:
    """Every module of arignote, parsed once, with its import sites."""
    files = {module_name(p): p for p in sorted(PACKAGE_DIR.rglob("*.py"))}
    trees: dict[str, ast.Module] = {}
    sites: list[Site] = []

    def target(name: str) -> str | None:
        while name and name not in files:
            name = name.rpartition(".")[0]
        return name or None

    for mod, path in files.items():
        is_pkg = path.name == "__init__.py"
        source = path.read_text()
        tree = trees[mod] = ast.parse(source, str(path))
        calls = any(name in source for name in DYNAMIC_IMPORTERS)
        for node, lazy, tc in find_imports(tree, calls):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [al.name for al in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = resolve(mod, is_pkg, node)
                names = [f"{base}.{al.name}" if f"{base}.{al.name}" in files else base for al in node.names]
            elif (name := dynamic_name(node)) is not None:
                names = [name]
            found = (target(n) for n in names if n.split(".")[0] == TOP)
            internal = tuple(dict.fromkeys(t for t in found if t and t != mod))
            sites.append(Site(mod, path, node, lazy, tc, internal))
    sites.sort(key=lambda s: (s.path, s.node.lineno))
    return Package(files, trees, tuple(sites))


def matches(module: str, pattern: str) -> bool:
    if pattern.endswith(".*"):
        stem = pattern[:-2]
        return module == stem or module.startswith(stem + ".")
    if pattern.endswith("*"):
        return module.startswith(pattern[:-1])
    return module == pattern


def layer_of(module: str) -> int | None:
    return next((layer for pattern, layer in LAYERS if matches(module, pattern)), None)


def describe(module: str) -> str:
    layer = layer_of(module)
    return f"{module} ({LAYER_NAMES[layer]}, layer {layer})" if layer else f"{module} (no layer)"


def upward(pkg: Package, *, lazy: bool) -> dict[tuple[str, str], list[Site]]:
    """The top-level (or lazy) imports that go to a higher layer, by (importer, imported)."""
    found: dict[tuple[str, str], list[Site]] = {}
    for s, t in pkg.edges(lazy=lazy):
        low, high = layer_of(s.module), layer_of(t)
        if low is not None and high is not None and high > low:
            found.setdefault((s.module, t), []).append(s)
    return found


def test_every_module_has_a_layer() -> None:
    """A new module (a new top-level one, say) must be given its place in LAYERS first."""
    missing = sorted(m for m in package().files if layer_of(m) is None)
    assert not missing, "modules in no layer: assign each a layer in LAYERS (tests/test_layering.py): " + (
        ", ".join(missing)
    )


def test_no_upward_import_at_top_level() -> None:
    """Importing a module loads only its own layer and those below, faces aside."""
    found = upward(package(), lazy=False)
    bad = [
        f"{s.where()}: {describe(importer)} imports {describe(imported)} at top level"
        for (importer, imported), sites in sorted(found.items())
        if (importer, imported) not in UPWARD_FACES
        for s in sites
    ]
    assert not bad, "upward imports (import downward, or list a face in UPWARD_FACES):\n" + "\n".join(bad)
    stale = sorted(set(UPWARD_FACES) - set(found))
    assert not stale, f"UPWARD_FACES entries no longer upward top-level imports, remove them: {stale}"


def test_lazy_upward_imports_are_listed() -> None:
    """An import inside a function may reach up only where LAZY_UPWARD says why."""
    found = upward(package(), lazy=True)
    bad = [
        f"{s.where()}: {describe(importer)} imports {describe(imported)} inside a function"
        for (importer, imported), sites in sorted(found.items())
        if (importer, imported) not in LAZY_UPWARD
        for s in sites
    ]
    assert not bad, "lazy upward imports not in LAZY_UPWARD:\n" + "\n".join(bad)
    stale = sorted(set(LAZY_UPWARD) - set(found))
    assert not stale, f"LAZY_UPWARD entries no longer lazy upward imports, remove them: {stale}"


def test_lazy_import_share() -> None:
    """Imports belong at the top: lazy ones hide dependencies (and cycles) from a reader."""
    imports = package().imports()
    lazy = [s for s in imports if s.lazy]
    share = len(lazy) / len(imports)
    assert share <= MAX_LAZY_SHARE, (
        f"{len(lazy)} of {len(imports)} internal imports are inside functions ({share:.1%}), "
        f"over {MAX_LAZY_SHARE:.0%}:\n" + "\n".join(f"{s.where()}: {', '.join(s.targets)}" for s in lazy)
    )


def strongly_connected(nodes: set[str], edges: dict[str, set[str]]) -> list[list[str]]:
    """Components of more than one module (iterative Tarjan: no recursion limit to hit)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    sccs: list[list[str]] = []
    for start in sorted(nodes):
        if start in index:
            continue
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        work = [(start, iter(sorted(edges[start])))]
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp: list[str] = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    sccs.append(sorted(comp))
    return sccs


def shortest_cycle(start: str, edges: dict[str, set[str]]) -> list[str]:
    """A shortest import chain from ``start`` back to itself (breadth first)."""
    prev: dict[str, str] = {}
    queue = deque([start])
    while queue:
        v = queue.popleft()
        for w in sorted(edges[v]):
            if w == start:
                path = [v]
                while path[-1] != start:
                    path.append(prev[path[-1]])
                return [*reversed(path), start]
            if w not in prev:
                prev[w] = v
                queue.append(w)
    raise AssertionError(f"{start} is in no cycle")


def test_no_cycle_among_top_level_imports() -> None:
    """A cycle makes the import order matter (half-initialised modules); package inits count."""
    pkg = package()
    edges: dict[str, set[str]] = {m: set() for m in pkg.files}
    first: dict[tuple[str, str], Site] = {}
    for s, t in pkg.edges(lazy=False):
        edges[s.module].add(t)
        first.setdefault((s.module, t), s)
    report = []
    for component in strongly_connected(set(pkg.files), edges):
        chain = shortest_cycle(component[0], edges)
        steps = "\n".join(f"    {a} -> {b}  ({first[a, b].where()})" for a, b in pairwise(chain))
        report.append(f"{len(component)} modules: {', '.join(component)}\n  one cycle:\n{steps}")
    assert not report, "cycles among top-level imports:\n" + "\n".join(report)


def module_level(tree: ast.Module) -> Iterator[ast.AST]:
    """The statements that run at module level, into if/try/with blocks but not defs/classes."""
    todo: list[ast.AST] = list(tree.body)
    while todo:
        node = todo.pop()
        yield node
        if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for field in ("body", "orelse", "finalbody", "handlers"):
            todo += [c for c in getattr(node, field, []) if isinstance(c, ast.stmt | ast.ExceptHandler)]


def test_no_dynamic_imports_or_module_getattr() -> None:
    """importlib accessors and a module ``__getattr__`` hide imports from readers and this walk."""
    pkg = package()
    bad: list[str] = []
    for s in pkg.sites:
        if isinstance(s.node, ast.Call):
            # a computed name may be an arignote module: the walk can't tell, so it fails too
            name = dynamic_name(s.node)
            if name is None and s.module in DYNAMIC_IMPORT_SITES:
                continue
            if name is None or name.split(".")[0] in (TOP, ""):
                shown = "<computed name>" if name is None else repr(name)
                bad.append(f"{s.where()}: {s.module} calls {call_name(s.node)}({shown})")
    for mod, tree in pkg.trees.items():
        # module level only: a class's __getattr__ (the config object's, say) is fine
        bad += [
            f"{pkg.files[mod].relative_to(ROOT).as_posix()}:{node.lineno}: {mod} defines a module __getattr__"
            for node in module_level(tree)
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            and node.name == "__getattr__"
            and mod not in MODULE_GETATTR
        ]
    assert not bad, "dynamic imports and module __getattr__ (import plainly, at the top):\n" + "\n".join(
        sorted(bad)
    )


def test_tensor_does_not_import_link() -> None:
    """The backend seam: backends register their tensor thunks from their side.

    Lazy and TYPE_CHECKING imports count too: tensor code knows nothing of the backends.
    """
    bad = [
        f"{s.where()}: {s.module} imports {t}" + (" (inside a function)" if s.lazy else "")
        for s in package().sites
        if matches(s.module, "arignote.tensor.*")
        for t in s.targets
        if matches(t, "arignote.link.*")
    ]
    assert not bad, "arignote.tensor imports arignote.link:\n" + "\n".join(bad)


def test_package_does_not_import_the_tensor_face() -> None:
    """Inside the package, import the home of a name, not ``arignote.tensor as pt``.

    The face imports every tensor module (and gradient), so a module that imports it depends on
    all of them and closes cycles. Docstring examples are strings, so the ast walk skips them.
    """
    pkg = package()
    bad: list[str] = []
    for s in pkg.sites:
        node = s.node
        if isinstance(node, ast.Import):
            bad += [
                f"{s.where()}: import {al.name} as {al.asname}"
                for al in node.names
                if al.name == f"{TOP}.tensor" and al.asname
            ]
        elif isinstance(node, ast.ImportFrom):
            base = resolve(s.module, pkg.files[s.module].name == "__init__.py", node)
            bad += [
                f"{s.where()}: from {TOP} import tensor" + (f" as {al.asname}" if al.asname else "")
                for al in node.names
                if base == TOP and al.name == "tensor"
            ]
    assert not bad, "the tensor face imported inside the package:\n" + "\n".join(bad)


def is_face_statement(node: ast.stmt, first: bool) -> bool:
    if first and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
        return isinstance(node.value.value, str)
    if isinstance(node, ast.Import | ast.ImportFrom):
        return True
    if isinstance(node, ast.Assign):
        return all(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)
    if isinstance(node, ast.AnnAssign | ast.AugAssign):
        return isinstance(node.target, ast.Name) and node.target.id == "__all__"
    return False


@pytest.mark.parametrize("face", FACES)
def test_faces_only_reexport(face: str) -> None:
    """A face keeps PyTensor's module path; what it names is defined in a home module."""
    path = ROOT / face
    if not path.exists():
        pytest.skip(f"{face} does not exist (yet)")
    tree = ast.parse(path.read_text(), str(path))
    bad = [
        f"{face}:{node.lineno}: {type(node).__name__} {ast.unparse(node).splitlines()[0][:80]}"
        for i, node in enumerate(tree.body)
        if not is_face_statement(node, i == 0)
    ]
    assert not bad, "a face holds only a docstring, imports and __all__; move these to a home:\n" + "\n".join(
        bad
    )


def test_module_size() -> None:
    """Past about a thousand lines a module holds several subjects: split it by content."""
    sizes = {
        p.relative_to(ROOT).as_posix(): len(p.read_text().splitlines()) for p in package().files.values()
    }
    over = {p: n for p, n in sizes.items() if n > MAX_LINES}
    bad = sorted(f"{p}: {n} lines" for p, n in over.items() if p not in OVERSIZE)
    assert not bad, f"modules over {MAX_LINES} lines (split them, or list them in OVERSIZE):\n" + "\n".join(
        bad
    )
    stale = sorted(set(OVERSIZE) - set(over))
    assert not stale, f"OVERSIZE entries no longer over {MAX_LINES} lines, remove them: {stale}"
