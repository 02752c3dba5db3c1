"""The statements chapter 6 (chapters/06_hindsight_rationality.ipynb) shows its readers, as tests.

The chapter prints its scratch fixed point beside labkit's solver and the NashConv of EFR-CF beside
CFR's; these tests hold the claims behind those lines (the chapter's own function, run here).
EFR-CF against CFR round by round, for the chapter's 20 iterations on Leduc, is
tests/test_efr.py::test_cf_equals_labkit_cfr.
"""
import ast
import json
from pathlib import Path

import numpy as np
import pytest

from labkit.efr import transformation_fixed_point

CHAPTER = Path(__file__).resolve().parents[1] / "chapters" / "06_hindsight_rationality.ipynb"


def chapter_function(name):
    """The function `name` as the chapter defines it (compiled from its code cell, run with numpy)."""
    cells = json.loads(CHAPTER.read_text(encoding="utf-8"))["cells"]
    for cell in cells:
        if cell["cell_type"] != "code" or f"def {name}(" not in "".join(cell["source"]):
            continue
        tree = ast.parse("".join(cell["source"]))
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and node.name == name:
                namespace = {"np": np}
                exec(compile(ast.Module([node], []), str(CHAPTER), "exec"), namespace)
                return namespace[name]
    raise AssertionError(f"the chapter defines no {name}")


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_scratch_fixed_point_is_the_librarys(n):
    from_scratch = chapter_function("fixed_point_from_scratch")
    rng = np.random.default_rng(n)
    for _ in range(20):
        external = rng.random(n) * (rng.random(n) < 0.7)
        internal = rng.random((n, n)) * (1 - np.eye(n)) + 1e-3 * (1 - np.eye(n))   # one closed class
        weights = np.r_[external, internal.ravel()][None]
        library = transformation_fixed_point(weights, np.ones((1, n), bool), external_offset=0,
                                             internal_offset=n)[0]
        np.testing.assert_allclose(from_scratch(external, internal), library, atol=1e-12)
