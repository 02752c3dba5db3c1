"""Write a table of contents without the solution pages, for a course's own build of the book.

    python scripts/course_toc.py _toc.yml _build/_toc_course.yml

`make book SOLUTIONS=0` runs this and builds the site from the result (the default `make book`
keeps the solutions). Every entry whose file lies under solutions/ is dropped, with its sections.
"""
import sys
from pathlib import Path

import yaml


def without_solutions(node):
    """A copy of a toc node (dict or list) with every solutions/ entry removed."""
    if isinstance(node, list):
        kept = [without_solutions(n) for n in node
                if not (isinstance(n, dict) and str(n.get("file", "")).startswith("solutions/"))]
        return kept
    if isinstance(node, dict):
        out = {}
        for key, value in node.items():
            value = without_solutions(value)
            if key == "sections" and not value:
                continue                  # an exercise whose only section was its solution
            out[key] = value
        return out
    return node


def main(source, target):
    toc = yaml.safe_load(Path(source).read_text(encoding="utf-8"))
    Path(target).parent.mkdir(parents=True, exist_ok=True)
    Path(target).write_text(yaml.safe_dump(without_solutions(toc), sort_keys=False), encoding="utf-8")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
