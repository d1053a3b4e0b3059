"""``pydotprint``: a graph drawn with Graphviz (DOT text, or a picture through ``dot``).

``format="dot"`` needs nothing installed; pictures need ``pip install arignote[viz]`` and
the Graphviz ``dot`` program.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np

from arignote.configdefaults import config
from arignote.graph.basic import Apply, Constant, Variable
from arignote.graph.fg import FunctionGraph
from arignote.graph.traversal import apply_ancestors
from arignote.printing.utils import _inner_graph_op, _is_function

__all__ = ["default_colorCodes", "pydotprint"]


#: fill colours of Apply nodes, by a substring of the Op's class name
default_colorCodes = {
    "Scan": "yellow",
    "Shape": "brown",
    "IfElse": "magenta",
    "Elemwise": "#FFAABB",
    "Subtensor": "#FFAAFF",
    "Alloc": "#FFAA22",
    "Output": "blue",
}
_INPUT_COLOR = "green"
_SHARED_COLOR = "cyan"
_CONSTANT_COLOR = "#FFF2CC"
_UNUSED_COLOR = "grey"
_DARK_COLORS = {"blue", "brown", "black", "navy", "darkblue", "darkgreen", "purple", "red"}


def _dot_quote(text: str) -> str:
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


class _DotGraph:
    """A directed graph, written out as Graphviz DOT text."""

    def __init__(self, name: str = "G"):
        self.name = name
        self.nodes: dict[str, dict] = {}
        self.edges: list[tuple[str, str, dict]] = []
        self.clusters: list[tuple[str, list[str]]] = []

    def add_node(self, key: str, **attrs: Any) -> None:
        self.nodes.setdefault(key, {}).update(attrs)

    def add_edge(self, src: str, dst: str, **attrs: Any) -> None:
        self.edges.append((src, dst, attrs))

    @staticmethod
    def _attrs(attrs: dict) -> str:
        if not attrs:
            return ""
        return " [" + ", ".join(f"{k}={_dot_quote(v)}" for k, v in attrs.items()) + "]"

    def source(self) -> str:
        lines = [f"digraph {_dot_quote(self.name)} {{"]
        for key, attrs in self.nodes.items():
            lines.append(f"  {_dot_quote(key)}{self._attrs(attrs)};")
        for src, dst, attrs in self.edges:
            lines.append(f"  {_dot_quote(src)} -> {_dot_quote(dst)}{self._attrs(attrs)};")
        for label, members in self.clusters:
            lines.append(f"  subgraph {_dot_quote('cluster_' + label)} {{")
            lines.append(f"    label={_dot_quote(label)};")
            lines.extend(f"    {_dot_quote(m)};" for m in members)
            lines.append("  }")
        lines.append("}")
        return "\n".join(lines) + "\n"


def _render(source: str, format: str) -> bytes:
    """Run Graphviz's ``dot`` on ``source``: through the ``graphviz`` package if installed,
    else the ``dot`` program directly."""
    hint = (
        f"pydotprint(format={format!r}) needs Graphviz to draw the picture: install the Python "
        "package with `pip install 'arignote[viz]'` (or `pip install graphviz`) and the Graphviz "
        "`dot` program (`apt-get install graphviz`, `brew install graphviz` or "
        "`conda install graphviz`). format='dot' writes the graph as DOT text with nothing installed."
    )
    try:
        import graphviz
    except ImportError:
        graphviz = None
    if graphviz is not None:
        try:
            return graphviz.Source(source).pipe(format=format)
        except graphviz.ExecutableNotFound as err:
            raise RuntimeError(f"The Graphviz `dot` program was not found. {hint}") from err
    import shutil  # (with subprocess, ~8 ms to import: only when a picture is drawn)
    import subprocess

    dot = shutil.which("dot")
    if dot is None:
        raise ImportError(hint)
    done = subprocess.run([dot, f"-T{format}"], input=source.encode(), capture_output=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(
            f"Graphviz `dot -T{format}` failed: {done.stderr.decode(errors='replace').strip()}"
        )
    return done.stdout


def _graph_of(fct: Any) -> tuple[FunctionGraph, Any]:
    if _is_function(fct):
        return fct.maker.fgraph, fct
    if isinstance(fct, FunctionGraph):
        return fct, fct
    if isinstance(fct, Variable):
        outputs = [fct]
    elif isinstance(fct, Apply):
        outputs = list(fct.outputs)
    elif isinstance(fct, (list, tuple)) and all(isinstance(v, Variable) for v in fct):
        outputs = list(fct)
    else:
        raise TypeError(
            "pydotprint takes a compiled function, a FunctionGraph, a Variable, an Apply or a list of "
            f"Variables, got {type(fct).__name__}"
        )
    return FunctionGraph(None, outputs, clone=False), None


def _updates_of(fgraph: FunctionGraph, fct: Any) -> dict[Variable, Variable]:
    """``{output computing an update: the input it updates}``."""
    mapping = getattr(fgraph, "update_mapping", None)
    if mapping:
        return {fgraph.outputs[o]: fgraph.inputs[i] for o, i in mapping.items()}
    updates: dict = {}
    expanded = getattr(getattr(fct, "maker", None), "expanded_inputs", None)
    if expanded is not None and len(expanded) == len(fgraph.inputs):
        outs = list(fgraph.outputs)
        for spec, inp in reversed(list(zip(expanded, fgraph.inputs))):
            if getattr(spec, "update", None) is not None and outs:
                updates[outs.pop()] = inp
    return updates


def _ancestor_nodes(var: Variable) -> set[Apply]:
    return set(apply_ancestors([var]))


def pydotprint(
    fct: Any,
    outfile: str | Path | None = None,
    compact: bool = True,
    format: str = "png",
    with_ids: bool = False,
    high_contrast: bool = True,
    cond_highlight: Any = None,
    colorCodes: dict | None = None,
    max_label_size: int = 70,
    scan_graphs: bool = False,
    var_with_name_simple: bool = False,
    print_output_file: bool = True,
    return_image: bool = False,
) -> Any:
    """Draw a graph with Graphviz: Apply nodes as ellipses, Variables as boxes.

    Inputs are green (shared variables cyan), constants cream, outputs blue, unused outputs
    grey; Apply nodes are filled by ``colorCodes`` (a substring of the Op's class name ->
    colour). An edge is blue into an input an Op views, red into one it destroys; with
    several inputs, edges carry the input's index. With ``compact``, unnamed intermediate
    Variables are not drawn: their Type labels the edge.

    ``fct``: a compiled function, a FunctionGraph, a Variable, an Apply or a list of
    Variables. ``format``: ``"dot"`` writes DOT text (nothing to install); ``"png"``,
    ``"svg"``, ``"pdf"``... need Graphviz (``pip install arignote[viz]`` and the ``dot``
    program). ``return_image``: return the bytes (DOT: the text) instead of writing
    ``outfile`` (default: ``config.compiledir/arignote.pydotprint.cpu.<format>``).
    ``with_ids``: add each node's toposort index. ``cond_highlight``: the name of an IfElse
    (or its Apply) whose branches are boxed. ``scan_graphs``: also draw inner graphs, to
    files named after ``outfile``.

    >>> import arignote.tensor as pt
    >>> x = pt.dvector("x")
    >>> print(pydotprint(pt.exp(x), format="dot", return_image=True))  # doctest: +ELLIPSIS
    digraph "arignote" {
      "node0" [label="Exp", shape="ellipse", style="filled", fillcolor="#FFAABB"];
      "var0" [label="name=x Vector(float64, shape=(?,))", shape="box", style="filled", fillcolor="green"];
      "var1" ...
    """
    if colorCodes is None:
        colorCodes = default_colorCodes
    fgraph, function = _graph_of(fct)
    outputs = list(fgraph.outputs)
    topo = fgraph.toposort()
    topo_index = {node: i for i, node in enumerate(topo)}
    updates = _updates_of(fgraph, function)
    for out in updates:
        if out in outputs:
            outputs.remove(out)
    output_set = set(outputs)
    shown_outputs = output_set | set(updates)

    g = _DotGraph("arignote")
    var_key: dict = {}
    var_text: dict = {}
    node_key: dict = {}
    node_text: dict = {}
    taken: set = set()

    def clip(text: str) -> str:
        return text if len(text) <= max_label_size else text[: max_label_size - 3] + "..."

    def var_label(var: Variable) -> tuple[str, str]:
        if var in var_key:
            return var_text[var], var_key[var]
        if var.name is not None:
            text = var.name if var_with_name_simple else f"name={var.name} {var.type}"
        elif isinstance(var, Constant):
            value = "val=" + str(np.asarray(var.data))
            text = f"{value.split(chr(10))[0]} {var.type}"
        elif var in updates and updates[var].name is not None:
            text = updates[var].name if var_with_name_simple else f"{updates[var].name} {var.type}"
        else:
            text = str(var.type)
        text = clip(text)
        var_key[var] = f"var{len(var_key)}"
        var_text[var] = text
        taken.add(text)
        return text, var_key[var]

    def apply_label(node: Apply) -> tuple[str, str]:
        if node in node_key:
            return node_text[node], node_key[node]
        text = str(node.op)
        if text in taken or with_ids:
            suffix = f" id={topo_index.get(node, len(node_key))}"
            text = (
                text[: max_label_size - 3 - len(suffix)] + suffix + "..."
                if len(text) + len(suffix) > max_label_size
                else text + suffix
            )
        elif len(text) > max_label_size:
            base = text[: max_label_size - 3] + "..."
            text, k = base, 1
            while text in taken:
                k += 1
                suffix = f" id={k}"
                text = base[: max_label_size - 3 - len(suffix)] + "..." + suffix
        taken.add(text)
        node_key[node] = f"node{len(node_key)}"
        node_text[node] = text
        return text, node_key[node]

    def filled(color: str) -> dict:
        if not high_contrast:
            return {"color": color}
        attrs = {"style": "filled", "fillcolor": color}
        if color in _DARK_COLORS:
            attrs["fontcolor"] = "white"
        return attrs

    for node in topo:
        text, key = apply_label(node)
        color = None
        cls_name = type(node.op).__name__
        for name, c in colorCodes.items():
            if name in cls_name:
                color = c
        attrs: dict = {"label": text, "shape": "ellipse"}
        if color is not None:
            attrs.update(filled(color))
        g.add_node(key, **attrs)

        viewed = {i for ins in (getattr(node.op, "view_map", None) or {}).values() for i in ins}
        destroyed = {i for ins in (getattr(node.op, "destroy_map", None) or {}).values() for i in ins}
        for idx, var in enumerate(node.inputs):
            vtext, vkey = var_label(var)
            edge: dict = {}
            label = str(idx) if len(node.inputs) > 1 else ""
            if label:
                edge["label"] = label
            if idx in viewed:
                edge["color"] = colorCodes.get("Output", "blue")
            elif idx in destroyed:
                edge["color"] = "red"
            if var.owner is None:
                if isinstance(var, Constant):
                    color = _CONSTANT_COLOR
                elif getattr(var, "_carries_value", False):
                    color = _SHARED_COLOR
                else:
                    color = _INPUT_COLOR
                g.add_node(vkey, label=vtext, shape="box", **filled(color))
                g.add_edge(vkey, key, **edge)
            elif var.name or not compact or var in shown_outputs:
                g.add_edge(vkey, key, **edge)
            else:  # compact: an unnamed intermediate is just an edge labelled with its Type
                edge["label"] = clip(f"{label} {var.type}" if label else str(var.type))
                g.add_edge(apply_label(var.owner)[1], key, **edge)

        for idx, var in enumerate(node.outputs):
            vtext, vkey = var_label(var)
            edge = {"label": str(idx)} if len(node.outputs) > 1 else {}
            if var in shown_outputs:
                g.add_edge(key, vkey, **edge)
                g.add_node(vkey, label=vtext, shape="box", **filled(colorCodes.get("Output", "blue")))
            elif not fgraph.clients.get(var):
                g.add_edge(key, vkey, **edge)
                g.add_node(vkey, label=vtext, shape="box", **filled(_UNUSED_COLOR))
            elif var.name or not compact:
                if compact:
                    edge["label"] = clip(f"{edge['label']} {var.type}" if edge else str(var.type))
                g.add_edge(key, vkey, **edge)
                g.add_node(vkey, label=vtext, shape="box")

    for var in outputs:  # an output that is an input of the graph: no node drew it
        if var.owner is None:
            g.add_node(
                var_label(var)[1],
                label=var_label(var)[0],
                shape="box",
                **filled(colorCodes.get("Output", "blue")),
            )

    for out, inp in updates.items():
        g.add_edge(
            var_label(inp)[1], var_label(out)[1], label="UPDATE", color=colorCodes.get("Output", "blue")
        )

    if cond_highlight is not None:
        cond = cond_highlight if isinstance(cond_highlight, Apply) else None
        if cond is None:
            for node in topo:
                if type(node.op).__name__ == "IfElse" and getattr(node.op, "name", None) == cond_highlight:
                    cond = node
        if cond is None:
            import warnings

            warnings.warn("pydotprint: cond_highlight is set but there is no such IfElse node", stacklevel=2)
        else:
            left = _ancestor_nodes(cond.inputs[1])
            right = _ancestor_nodes(cond.inputs[2])
            middle = left & right
            for label, members in (("Left", left - middle), ("Right", right - middle), ("Middle", middle)):
                keys = [node_key[n] for n in topo if n in members and n in node_key]
                g.clusters.append((label, keys))

    source = g.source()
    format = format.lower()
    text_format = format in ("dot", "gv")

    if outfile is None and not return_image:
        outfile = Path(config.compiledir) / f"arignote.pydotprint.cpu.{format}"
    if outfile is not None:
        outfile = Path(outfile)
        if outfile.suffix != f".{format}":
            outfile = outfile.with_suffix(f".{format}")

    if scan_graphs:
        for idx, node in enumerate(topo):
            holder = _inner_graph_op(node.op)
            if holder is None:
                continue
            inner_fn = getattr(holder, "_fn", None)
            inner = inner_fn if _is_function(inner_fn) else list(holder.inner_outputs)
            if outfile is not None:
                tag = re.sub(r"\W+", "_", str(getattr(holder, "name", None) or type(holder).__name__))
                inner_file = outfile.with_name(f"{outfile.stem}_{tag[:40].strip('_')}_{idx}{outfile.suffix}")
                pydotprint(
                    inner,
                    inner_file,
                    compact=compact,
                    format=format,
                    with_ids=with_ids,
                    high_contrast=high_contrast,
                    colorCodes=colorCodes,
                    max_label_size=max_label_size,
                    scan_graphs=scan_graphs,
                    var_with_name_simple=var_with_name_simple,
                    print_output_file=print_output_file,
                )

    data: str | bytes = source if text_format else _render(source, format)
    if return_image:
        return data
    assert outfile is not None
    outfile.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        outfile.write_text(data, encoding="utf-8")
    else:
        outfile.write_bytes(data)
    if print_output_file:
        print("The output file is available at", outfile)
    return None
