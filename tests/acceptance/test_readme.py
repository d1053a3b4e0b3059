"""The README's Python examples run as written (and the main example runs)."""

import pathlib
import re
import runpy

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BLOCKS = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), flags=re.S)


def test_readme_has_python_examples():
    assert len(BLOCKS) >= 2


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_block_runs(index, capsys):
    # the backends' examples need their extras (CI runs this file again with each installed)
    if 'mode="JAX"' in BLOCKS[index] or "import jax\n" in BLOCKS[index]:
        pytest.importorskip("jax")
    if 'mode="NUMBA"' in BLOCKS[index]:
        pytest.importorskip("numba")
    exec(compile(BLOCKS[index], f"README.md block {index}", "exec"), {})


def test_main_example_runs(capsys):
    runpy.run_path(str(ROOT / "examples" / "graph_tour.py"), run_name="__main__")
    out = capsys.readouterr().out
    assert "value at x=2, y=3: 64.0" in out
