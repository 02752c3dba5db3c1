"""labkit.data: the cached results live inside the package and no notebook reads a relative path."""
import json
from pathlib import Path

import pytest

import labkit as lk

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted([*ROOT.glob("chapters/*.ipynb"), *ROOT.glob("exercises/*.ipynb"),
                    *ROOT.glob("solutions/*.ipynb")])


def test_every_folder_is_inside_the_package():
    package = Path(lk.__file__).parent / "data"
    for folder in lk.data.FOLDERS:
        assert (package / folder).is_dir(), folder
        assert lk.data.path(folder).is_dir()
    assert not (ROOT / "data").exists(), "the cached results moved to labkit/data/"


def test_readers_return_the_stored_content():
    text = (Path(lk.__file__).parent / "data" / "lab15" / "settings.json").read_text(encoding="utf-8")
    assert lk.data.read_json("lab15", "settings.json") == json.loads(text)
    rows = lk.data.read_csv("book", "ch05_psro_leduc.csv")
    header = (Path(lk.__file__).parent / "data" / "book" / "ch05_psro_leduc.csv").read_text().splitlines()[0]
    assert rows and list(rows[0]) == header.split(",")


def test_bad_names_say_what_exists():
    with pytest.raises(ValueError, match="one of"):
        lk.data.path("../etc")
    with pytest.raises(FileNotFoundError, match="settings.json"):
        lk.data.path("lab15", "no_such_file.csv")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_no_notebook_reads_files_beside_the_repository(path):
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        if cell["cell_type"] == "code":
            source = "".join(cell["source"])
            assert "../data" not in source and '"..") / "data"' not in source, path.name
