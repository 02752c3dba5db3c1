"""Helpers the grading tests share: the instructor material, notebooks with some answers replaced, hashes."""
import hashlib
from pathlib import Path

from labkit.grading.material import load

ROOT = Path(__file__).resolve().parent.parent
INSTRUCTOR = ROOT / "instructor"
MATERIAL = load(INSTRUCTOR)
EXERCISES = MATERIAL.EXERCISES


def with_answers(number, answers, solution=True):
    """An exercise notebook (the worked solution, unexecuted, by default) with some answer
    cells replaced: answers = {slot: source}."""
    nb = EXERCISES[number].notebook(solution=solution)
    for cell in nb.cells:
        slot = cell.metadata.get("labkit", {}).get("slot")
        if cell.metadata.get("labkit", {}).get("role") == "answer" and slot in answers:
            cell.source = answers[slot]
    return nb


def solution_source(number, slot):
    return next(c.solution for c in EXERCISES[number].cells if c.role == "answer" and c.slot == slot)


def hashes(*folders):
    """sha256 of every regular file under the folders (symlinks and FIFOs by their kind only)."""
    out = {}
    for folder in map(Path, folders):
        for p in sorted(folder.rglob("*")):
            if "__pycache__" in p.parts:
                continue
            if p.is_symlink():
                out[str(p)] = "link:" + str(p.readlink())
            elif p.is_file():
                out[str(p)] = hashlib.sha256(p.read_bytes()).hexdigest()
            elif not p.is_dir():
                out[str(p)] = "special"
    return out
