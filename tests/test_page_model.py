"""The chapters that follow the book's page model keep it (see the contributors' page).

Read from the stored notebooks, no execution: code cells at most 88 columns; an "In this chapter"
box that says what the reader will learn and needs first; Summary, Exercises and Further reading
at the end, in that order; every published figure the only output of its cell (folded with
hide-input), with a name, caption and alt text in the cell's myst-nb metadata (no glue directive,
which JupyterLab cannot render), referenced by number; and no kernel-only widget
(ipywidgets.interact) shown on the website.
"""
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ON_THE_MODEL = ["01_many_learners", "02_learning_dynamics", "03_counterfactual_regret",
                "04_scaling_up", "05_self_play_and_populations", "06_hindsight_rationality",
                "07_cooperation", "09_lab15_leduc",
                "08_general_sum_and_language"]
PUBLISH_NAME = re.compile(r"""["'](fig-[\w-]+)["']\s*,?\s*\)\s*$""")


def _cells(name):
    nb = json.loads((ROOT / "chapters" / f"{name}.ipynb").read_text(encoding="utf-8"))
    return [(c["cell_type"], "".join(c["source"]), c.get("metadata", {}).get("tags", []))
            for c in nb["cells"]]


def _markdown(cells):
    return "\n".join(source for kind, source, _ in cells if kind == "markdown")


@pytest.mark.parametrize("name", ON_THE_MODEL)
def test_code_cells_fit_the_column(name):
    long = [line for kind, source, _ in _cells(name) if kind == "code"
            for line in source.splitlines() if len(line) > 88]
    assert not long, f"{name}: {len(long)} code lines wider than 88 columns, e.g. {long[0]!r}"


@pytest.mark.parametrize("name", ON_THE_MODEL)
def test_opening_box_and_closing_sections(name):
    cells = _cells(name)
    opening = next(source for kind, source, _ in cells if kind == "markdown")
    assert "{admonition} In this chapter" in opening, f"{name}: no 'In this chapter' box"
    assert "**You will learn**" in opening and "**You need first**" in opening
    headings = re.findall(r"(?m)^## (.+)$", _markdown(cells))
    assert headings[-3:] == ["Summary", "Exercises", "Further reading"], headings[-3:]
    closing = _markdown(cells).split("## Exercises")[-1]
    assert "../exercises/" in closing, f"{name}: the Exercises section links no exercise"
    assert "{cite:" in closing.split("## Further reading")[-1], f"{name}: further reading cites nothing"


@pytest.mark.parametrize("name", ON_THE_MODEL)
def test_every_figure_is_numbered_captioned_described_and_cited(name):
    nb = json.loads((ROOT / "chapters" / f"{name}.ipynb").read_text(encoding="utf-8"))
    markdown = _markdown(_cells(name))
    published = []
    for cell in nb["cells"]:
        source = "".join(cell["source"])
        if cell["cell_type"] != "code" or "lk.plot.publish(" not in source:
            continue
        figure = PUBLISH_NAME.search(source.rstrip())
        assert figure, f"{name}: a figure cell must end with lk.plot.publish(fig, 'fig-...')"
        label = figure.group(1)
        published.append(label)
        tags = cell["metadata"].get("tags", [])
        # the figure is the cell's own output: shown (not removed), under a folded input
        assert "hide-input" in tags and "remove-output" not in tags, f"{label}: tags {tags}"
        mystnb = cell["metadata"].get("mystnb", {})
        options = mystnb.get("figure", {})
        assert options.get("name") == label, f"{label}: the cell's mystnb.figure.name is {options.get('name')!r}"
        assert str(options.get("caption", "")).strip(), f"{label}: no caption"
        alt = str(mystnb.get("image", {}).get("alt", ""))
        assert len(alt.split()) >= 8, f"{label}: no alt text worth the name"
        images = [o for o in cell.get("outputs", []) if "image/png" in o.get("data", {})]
        assert len(images) == 1 and len(cell["outputs"]) == 1, f"{label}: the figure must be the only output"
        assert "{numref}`" + label + "`" in markdown, f"{label} is never referred to by number"
    assert published, f"{name}: no numbered figure"
    assert "{glue" not in markdown, f"{name}: a glue directive, which JupyterLab cannot render"


@pytest.mark.parametrize("name", ON_THE_MODEL)
def test_kernel_only_widgets_are_left_out_of_the_website(name):
    for kind, source, tags in _cells(name):
        if kind == "code" and "interact(" in source:
            assert "remove-cell" in tags, f"{name}: an interact widget shows on the site and does nothing"
