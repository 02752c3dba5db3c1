"""Run an exercise's answer cells in this process and grade them with its hidden checks, the way the
grader does in a kernel: each name of a part collected, each function called at the hidden probe
arguments (deep copies) and timed, the results made plain JSON: the reporter's own `collect`."""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT / "instructor") not in sys.path:          # the instructor distribution, from the repository
    sys.path.insert(0, str(ROOT / "instructor"))


class Harness:
    def __init__(self, exercise, parts):
        self.exercise = exercise
        self.specs = {spec.part: spec for spec in parts}
        self.parts = [c.part for c in exercise.cells if c.role == "check"]

    def cells(self, wanted, solution=True, edits=None):
        """The setup cells and the answer cells (solutions or templates) of the parts `wanted`
        (a predicate), in order; `edits` = {part: [(old, new), ...]} turns a solution wrong."""
        sources = []
        for cell in self.exercise.cells:
            if cell.role == "setup":
                sources.append(cell.source)
            elif cell.role == "answer" and wanted(cell.part):
                source = cell.solution if solution else cell.source
                for old, new in (edits or {}).get(cell.part, []):
                    assert old in source, f"the edit {old!r} no longer applies to {cell.part}"
                    source = source.replace(old, new)
                sources.append(source)
        return sources

    @staticmethod
    def run(sources):
        namespace = {"__name__": "__exercise__"}
        for source in sources:
            exec(compile(source, "<answer>", "exec"), namespace)
        return namespace

    def collect(self, part, namespace):
        """What the sealed reporter records for `part`: {name: value or [results at the probes]},
        with the seconds of each probe call under ``"__seconds__"`` (the reporter's own collector,
        given the hidden spec)."""
        from labkit.grading.reporter import collect
        return collect(part, namespace, spec=self.specs[part])

    def grade(self, part, namespace):
        """(points, hints) of one part."""
        items = self.specs[part].grade(self.collect(part, namespace))
        assert sum(i.max_points for i in items) == self.specs[part].max_points
        return sum(i.points for i in items), [i.hint for i in items if i.hint]

    @staticmethod
    def public(part, namespace):
        """What `check(part)` prints in the student's own kernel: the public format checks at the
        public probes (`labkit.grading.public`), as a `FormatResult`."""
        from labkit.grading.public import feedback
        from labkit.grading.reporter import collect
        return feedback(part, collect(part, namespace))
