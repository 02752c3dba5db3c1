"""What students install holds no answers: the wheel, the public checks, the course build of the book.

The instructor material (instructor/labkit_instructor: worked solutions, model answers, hidden
checks) is a separate distribution; labkit's own wheel and its public checks must not contain or
compute what the hidden checks know.
"""
import copy
import json
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest
import yaml

from labkit.grading import check, public
from labkit.grading.material import MaterialError, load

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import book_config  # noqa: E402  (scripts/ is not a package)

MATERIAL = load(ROOT / "instructor")


def _solution_lines(exercise):
    """Distinctive lines of an exercise's worked solutions and model answers (long, not template text)."""
    templates = {line.strip() for c in exercise.cells for line in c.source.splitlines()}
    lines = set()
    for cell in exercise.cells:
        for line in (cell.solution or "").splitlines():
            line = line.strip()
            if len(line) >= 45 and line not in templates and not line.startswith("#"):
                lines.add(line)
    return lines


@pytest.fixture(scope="module")
def student_wheel(tmp_path_factory):
    # from a clean copy of what the wheel is made of, as a fresh clone would build it
    out, src = tmp_path_factory.mktemp("wheel"), tmp_path_factory.mktemp("src")
    shutil.copytree(ROOT / "labkit", src / "labkit", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, src / name)
    shutil.copytree(ROOT / "instructor", src / "instructor", ignore=shutil.ignore_patterns("__pycache__"))
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", str(src), "-w", str(out)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    (wheel,) = out.glob("labkit_marl-*.whl")        # the distribution is labkit-marl
    with zipfile.ZipFile(wheel) as z:
        return {name: z.read(name).decode("utf-8", "replace") for name in z.namelist()}


def test_the_student_wheel_holds_no_solution_and_no_hidden_check(student_wheel):
    names = list(student_wheel)
    assert any(n == "labkit/grading/public/ex27_4.py" for n in names)       # the public checks ship
    assert not [n for n in names if n.startswith("labkit_instructor") or "/exercises/" in n or "/checks/" in n]
    text = "\n".join(student_wheel.values())
    assert "labkit_instructor" not in "".join(n for n in names)
    for number, exercise in MATERIAL.EXERCISES.items():
        lines = _solution_lines(exercise)
        assert len(lines) >= 3, number
        leaked = [line for line in lines if line in text]
        assert not leaked, (number, leaked[:3])
        squeezed = " ".join(text.split())
        for cell in exercise.cells:
            if cell.solution and cell.role in ("answer", "written"):
                assert " ".join(cell.solution.split()) not in squeezed, (number, cell.slot)
    # the reference values of the hidden checks are not in it either (e.g. 27.2's equilibrium)
    assert "RPS_EQUILIBRIUM" not in text and "def _grade_27_" not in text


def test_the_student_wheel_declares_the_grading_extra(student_wheel):
    (metadata,) = [v for n, v in student_wheel.items() if n.endswith(".dist-info/METADATA")]
    requires = [line for line in metadata.splitlines() if line.startswith("Requires-Dist:")]
    core = [r for r in requires if "extra ==" not in r]
    assert not any(dep in r for r in core for dep in ("nbclient", "nbformat", "ipykernel"))
    grading = [r for r in requires if 'extra == "grading"' in r]
    # the notebook runner (nbclient, nbformat, ipykernel) and the feedback renderer
    # (Markdown with maths to HTML), nothing more
    assert {r.split()[1].split(">")[0] for r in grading} == {
        "nbclient", "nbformat", "ipykernel", "markdown-it-py", "mdit-py-plugins", "latex2mathml"}


def test_public_and_hidden_checks_describe_the_same_parts():
    assert list(public.SPECS) == list(MATERIAL.SPECS)
    for part, spec in MATERIAL.SPECS.items():
        mine = public.spec_for(part)
        assert (mine.names, mine.max_points) == (spec.names, spec.max_points), part
        assert set(mine.probes) == set(spec.probes), part            # the same names are functions
    assert [p for ex in MATERIAL.EXERCISES.values() for p in ex.parts] == list(public.SPECS)


def test_the_public_checks_import_only_the_student_package():
    """Each exercise's ``PUBLIC_CHECKS`` become a module of labkit that students install
    (labkit/grading/public/<name>.py): they may import labkit, numpy and the standard library,
    never the instructor package where the hidden checks and solutions are."""
    import ast
    assert sorted(MATERIAL.PUBLIC_SOURCES) == sorted(MATERIAL.MODULES)      # every exercise has them
    for name, source in MATERIAL.PUBLIC_SOURCES.items():
        tree = ast.parse(source)
        imported = [alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names]
        imported += [node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]
        assert "labkit.grading.public.base" in imported, name
        assert not [m for m in imported if m.split(".")[0] not in ("labkit", "numpy", "__future__", "math",
                                                                     "functools", "itertools")], (name, imported)
        assert "labkit_instructor" not in source, name


def test_public_probes_differ_from_the_hidden_ones():
    from labkit.grading.fresh import has_marker
    from labkit.grading.wire import encode
    for part, spec in MATERIAL.SPECS.items():
        for name, calls in spec.probes.items():
            # a fresh marker is no input: each call draws its own from a secret (labkit.grading.fresh)
            hidden = {json.dumps(encode(tuple(a))) for a in calls if not has_marker(a)}
            shown = {json.dumps(encode(tuple(a))) for a in public.spec_for(part).probes[name]}
            assert not hidden & shown, (part, name)


def _stored_check_lines(folder):
    lines = {}
    for ex in MATERIAL.EXERCISES.values():
        nb = nbformat.read(ROOT / folder / ex.filename, as_version=4)
        for cell in nb.cells:
            if "check" in cell.metadata.get("tags", []):
                lines[cell.metadata["labkit"]["part"]] = "".join(o.get("text", "") for o in cell.outputs)
    return lines


def test_the_worked_solutions_pass_their_public_checks_in_the_notebook():
    lines = _stored_check_lines("solutions")
    assert set(lines) == set(public.SPECS)
    for part, text in lines.items():
        verdict, *checked = text.splitlines()
        assert re.fullmatch(rf"{re.escape(part)}: public checks pass \((\d+) checks?\) "
                            r"-- the grader scores it on its own cases", verdict), text
        # no grade in the notebook: no points, no score
        assert checked and checked[0].startswith("    checked: ") and not re.search(r"\d points?\b", text) and "/" not in verdict
        assert all(line.startswith(" " * 13) for line in checked[1:]), text
        # every check is listed, each of them once (the labels are joined by "; ")
        listed = " ".join(line.strip() for line in checked).removeprefix("checked: ")
        assert len(listed.split("; ")) == int(re.search(r"\((\d+) check", verdict)[1])
        assert max(len(line) for line in text.splitlines()) <= 88, text


def test_a_passing_verdict_fits_the_page_and_lists_every_check():
    # the longest part name and labels long enough to need several lines, one longer than a line
    labels = ["outcome_sampling_regrets returns increments at the player's infosets",
              "sampled_regret_means returns a (936, 3) array", "x is a number",
              "a label " + "that goes on and on " * 6 + "until it ends"]
    lines = public.FormatResult("L15(g)", labels, []).lines()
    assert lines[0] == "L15(g): public checks pass (4 checks) -- the grader scores it on its own cases"
    assert lines[1] == "    checked: outcome_sampling_regrets returns increments at the player's infosets;"
    assert lines[2] == "             sampled_regret_means returns a (936, 3) array; x is a number;"
    assert all(len(line) <= 88 for line in lines) and all(line.startswith(" " * 13) for line in lines[2:])
    assert " ".join(" ".join(lines[1:]).split()) == "checked: " + "; ".join(" ".join(x.split()) for x in labels)
    one = public.FormatResult("27.2(a)", ["value is a number"], []).lines()
    assert one == ["27.2(a): public checks pass (1 check) -- the grader scores it on its own cases",
                   "    checked: value is a number"]


def test_a_not_ready_verdict_counts_the_failures_and_prints_every_hint(capsys):
    result = public.FormatResult("27.4(b)", ["a is a number", "b is a probability"], ["b is a probability: no"])
    assert result.lines() == ["27.4(b): not ready -- 1 of 2 public checks fail", "    hint: b is a probability: no"]
    check("27.4(b)")              # outside a notebook no name is defined: both checks fail
    assert capsys.readouterr().out == (
        "27.4(b): not ready -- 3 of 3 public checks fail\n"
        "    hint: ev_bet_jack(q) returns a number: `ev_bet_jack` is not defined\n"
        "    hint: ev_bet_jack at a public point: `ev_bet_jack` is not defined\n"
        "    hint: call_queen_p2 is a probability: `call_queen_p2` is not defined\n")


@pytest.mark.parametrize("part", list(public.SPECS))
def test_public_checks_hint_at_blanks_and_never_crash_on_garbage(part):
    spec = public.spec_for(part)
    blank = {name: {"__error__": "it still holds the placeholder `...`"} for name in spec.names}
    result = public.feedback(part, blank)
    assert not result.ok and result.hints and result.line().startswith(f"{part}: not ready")
    for junk in [None, 7, "rock", [], [[1, 2], [3]], {"x": 1}, float("nan"), True]:
        result = public.feedback(part, {name: copy.deepcopy(junk) for name in spec.names})
        assert result.line().startswith(f"{part}: ")
    assert not public.feedback(part, "not even a dict").ok


def test_public_checks_do_not_know_the_answers():
    # wrong answers that the public cases cannot tell apart (a value inside its bounds, the right
    # function with the wrong probability, half of the equilibria) pass them; the hidden checks fail them
    wrong = {"27.2(a)": {"value": 0.5},
             "27.4(b)": {"ev_bet_jack": [-1.1], "call_queen_p2": 0.9},
             "27.6(a)": {"pure_equilibria": [["a", "a"]]}}
    for part, value in wrong.items():
        assert public.feedback(part, value).ok, part
        assert MATERIAL.grade_part(part, value).points < MATERIAL.spec_for(part).max_points, part


def test_the_material_loader_says_how_to_get_the_material(tmp_path):
    with pytest.raises(MaterialError, match="--instructor DIR"):
        load(tmp_path)
    # as on a machine where labkit-instructor is not installed (whatever this environment holds)
    script = ("import sys; sys.modules['labkit_instructor'] = None\n"
              "from labkit.grading.__main__ import main\nraise SystemExit(main(['x.ipynb']))")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert done.returncode == 2, done.stderr
    assert "pip install" in done.stderr and "--instructor" in done.stderr


def test_the_course_build_of_the_book_has_no_solution_pages(tmp_path):
    target = tmp_path / "_toc.yml"
    subprocess.run([sys.executable, str(ROOT / "scripts" / "book_config.py"), "--out", str(tmp_path), "--no-solutions"],
                   check=True, timeout=60, capture_output=True)
    full = (ROOT / "_toc.yml").read_text()
    files = book_config.toc_files(yaml.safe_load(target.read_text()))
    assert "solutions/27_4_kuhn_poker_by_hand" in full
    assert not [f for f in files if f.startswith("solutions/")]
    assert {f"exercises/{ex.slug}" for ex in MATERIAL.EXERCISES.values()} <= set(files)
    assert "chapters/01_many_learners" in files and "book/instructors" in files
    # and `make book SOLUTIONS=0` builds from that toc
    dry = subprocess.run(["make", "-n", "book", "SOLUTIONS=0"], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert "book_config.py" in dry.stdout and "--no-solutions" in dry.stdout


def test_the_notebook_side_needs_no_grading_extra():
    script = ("import sys\nfor name in ('nbclient', 'nbformat', 'jupyter_client', 'labkit_instructor'):\n"
              "    sys.modules[name] = None\n"
              "import labkit\nfrom labkit.grading import check\nfrom labkit.grading.reporter import collect\n"
              "from labkit.grading import public\n"
              "print(public.feedback('27.4(b)', collect('27.4(b)', {'ev_bet_jack': lambda q: -0.5 - 1.5 * q, "
              "'call_queen_p2': 0.5})).line())\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout == "27.4(b): public checks pass (3 checks) -- the grader scores it on its own cases\n"


@pytest.mark.slow
def test_the_course_site_is_built_without_solution_pages(tmp_path):
    jupyter_book = Path(sys.executable).parent / "jupyter-book"
    if not jupyter_book.exists():
        pytest.skip("jupyter-book is not installed in this environment")
    config = tmp_path / "config"
    subprocess.run([sys.executable, str(ROOT / "scripts" / "book_config.py"), "--out", str(config),
                    "--no-solutions"], check=True, timeout=60, capture_output=True)
    done = subprocess.run([str(jupyter_book), "build", "-W", "--path-output", str(tmp_path),
                           "--config", str(config / "_config.yml"), "--toc", str(config / "_toc.yml"), str(ROOT)],
                          capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    html = tmp_path / "_build" / "html"
    pages = {p.relative_to(html).as_posix() for p in html.rglob("*.html")}
    assert "exercises/27_4_kuhn_poker_by_hand.html" in pages
    assert not [p for p in pages if p.startswith("solutions/")]
    assert "solutions/" not in (html / "exercises" / "27_4_kuhn_poker_by_hand.html").read_text()
