"""The chapters that follow the book's page model keep it (see the contributors' page).

Read from the stored notebooks, no execution: code cells at most 88 columns; an "In this chapter"
box that says what the reader will learn and needs first; Summary, Exercises and Further reading
at the end, in that order; every published figure placed by a {glue:figure} with a name, alt text
and a caption, referenced by number, from a cell folded with hide-input and remove-output; and no
kernel-only widget (ipywidgets.interact) shown on the website.
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
    cells = _cells(name)
    markdown = _markdown(cells)
    published = []
    for kind, source, tags in cells:
        if kind == "code" and "lk.plot.publish(" in source:
            figure = PUBLISH_NAME.search(source.rstrip())
            assert figure, f"{name}: a figure cell must end with lk.plot.publish(fig, 'fig-...')"
            published.append(figure.group(1))
            assert {"hide-input", "remove-output"} <= set(tags), f"{figure.group(1)}: tags {tags}"
    assert published, f"{name}: no numbered figure"
    for figure in published:
        block = re.search(r"```\{glue:figure\} " + re.escape(figure) + r"\n(.*?)```", markdown, re.S)
        assert block, f"{name}: no {{glue:figure}} places {figure}"
        options, _, caption = block.group(1).partition("\n\n")
        assert f":name: {figure}" in options, f"{figure}: no :name:"
        alt = re.search(r"(?m)^:alt: (.+)$", options)
        assert alt and len(alt.group(1).split()) >= 8, f"{figure}: no alt text worth the name"
        assert caption.strip(), f"{figure}: no caption"
        assert "{numref}`" + figure + "`" in markdown, f"{figure} is never referred to by number"


@pytest.mark.parametrize("name", ON_THE_MODEL)
def test_kernel_only_widgets_are_left_out_of_the_website(name):
    for kind, source, tags in _cells(name):
        if kind == "code" and "interact(" in source:
            assert "remove-cell" in tags, f"{name}: an interact widget shows on the site and does nothing"
