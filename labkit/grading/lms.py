"""Who handed in a file, and for which assignment: the names Canvas and Moodle give downloaded submissions.

An LMS download is one assignment's submissions, named so that each file can be traced to a student:

* **Canvas** ("Download Submissions") puts every file in one folder, named
  ``<name>[_late]_<user id>_<attachment id>_<file name as uploaded>``, where ``<name>`` is the
  student's sortable name ("Smith, Jane") lower-cased with everything but letters, digits and
  ``_`` removed (``smithjane``), ``late`` marks a late submission and the user id is the one the
  gradebook's ``ID`` column holds. A second file of the same name gets ``-1``, ``-2`` ... before its
  extension.
* **Moodle** (assignment, "Download all submissions") gives each student a folder
  ``<Full Name>_<participant id>_assignsubmission_file_/`` holding the files as uploaded (older
  versions, or with "download submissions in folders" off, put the same prefix before every file
  name instead). Underscores in the name become spaces; with anonymous submissions the name is
  ``Participant``. The participant id is the number in the assignment's grading worksheet
  (``Participant 12345``), not the user's id.

`identity` reads those names into an `Identity`; `detect` decides which LMS a class folder came
from. `assignments` decides which exercise each notebook was handed in *for*: a folder whose name
names an exercise (``lab15/``, ``27_4 submissions/``) is that exercise's assignment, and an LMS
download is one assignment, the exercise most of its notebooks are. A notebook of another exercise
handed in for an assignment earns nothing there (`refuse_wrong_exercise`), rather than the points of
the easier exercise it is.
"""
from __future__ import annotations

import collections
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

LMS_NAMES = ("canvas", "moodle")

# <name>[_late]_<user id>_<attachment id>_<file>; the name itself may hold "_" (Canvas keeps word
# characters), so the ids are found from the left after the shortest name that fits
_CANVAS = re.compile(r"^(?P<login>[a-z0-9][a-z0-9_]*?)_(?P<late>late_)?(?P<user>\d+)_(?P<attachment>\d+)_(?P<file>.+)$")
# <Full Name>_<participant id>_assignsubmission_<plugin>_ (a folder, or the prefix of a file name)
_MOODLE = re.compile(r"^(?P<name>.*?)_(?P<participant>\d+)_assignsubmission_(?P<plugin>[a-z]+)_(?P<file>.*)$")
_COPY_SUFFIX = re.compile(r"-\d+(?=\.ipynb$)")      # Canvas: a second file of the same name


@dataclass
class Identity:
    """What a downloaded file's path says about who handed it in (fields None when not known).

    Attributes
    ----------
    lms : {"canvas", "moodle"} or None
        The LMS whose names the path has.
    name : str or None
        Moodle's full name, or Canvas's squashed sortable name.
    login : str or None
        Canvas: the squashed sortable name, e.g. ``"smithjane"``.
    user_id : str or None
        Canvas: the user id (the gradebook's ID column).
    submission_id : str or None
        Canvas: the attachment id.
    participant : str or None
        Moodle: the participant id of the assignment.
    late : bool
        Canvas marks late submissions in the name.
    filename : str or None
        The file name as the student uploaded it.

    Examples
    --------
    >>> canvas_name("smithjane_late_4321_999_lab15.ipynb").late
    True
    """
    lms: str | None = None              # "canvas", "moodle" or None
    name: str | None = None             # Moodle's full name, or Canvas's squashed sortable name
    login: str | None = None            # Canvas: the squashed sortable name, e.g. "smithjane"
    user_id: str | None = None          # Canvas: the user id (the gradebook's ID column)
    submission_id: str | None = None    # Canvas: the attachment id
    participant: str | None = None      # Moodle: the participant id of the assignment
    late: bool = False                  # Canvas marks late submissions in the name
    filename: str | None = None         # the file name as the student uploaded it

    def as_dict(self) -> dict[str, Any]:
        """The fields as a dict (for the grades' JSON).

        Returns
        -------
        dict

        Examples
        --------
        >>> Identity("moodle", "Jane Smith", participant="12345").as_dict()["participant"]
        '12345'
        """
        return asdict(self)


def canvas_name(filename: str) -> Identity | None:
    """The `Identity` in a Canvas download name, or None if `filename` is not one.

    Parameters
    ----------
    filename : str
        ``<name>[_late]_<user id>_<attachment id>_<file name as uploaded>``.

    Returns
    -------
    Identity or None

    Examples
    --------
    >>> found = canvas_name("smithjane_4321_999_lab15.ipynb")
    >>> found.login, found.user_id, found.submission_id, found.filename
    ('smithjane', '4321', '999', 'lab15.ipynb')
    >>> canvas_name("lab15.ipynb") is None
    True
    """
    m = _CANVAS.match(filename)
    if m is None:
        return None
    login = m["login"]
    return Identity("canvas", login, login, m["user"], m["attachment"], late=bool(m["late"]),
                    filename=m["file"])


def moodle_name(part: str) -> Identity | None:
    """The `Identity` in a Moodle folder name (or file name prefix), or None if `part` is not one.

    Parameters
    ----------
    part : str
        ``<Full Name>_<participant id>_assignsubmission_<plugin>_[file name]``.

    Returns
    -------
    Identity or None

    Examples
    --------
    >>> found = moodle_name("Jane Smith_12345_assignsubmission_file_")
    >>> found.name, found.participant, found.filename
    ('Jane Smith', '12345', None)
    """
    m = _MOODLE.match(part)
    if m is None:
        return None
    name = " ".join(m["name"].split()) or None
    return Identity("moodle", name, participant=m["participant"], filename=m["file"] or None)


def identity(path: str | Path, root: str | Path | None = None, lms: str | None = None) -> Identity:
    """The `Identity` of a submission from its path below `root` (the folder given to the grader).

    Parameters
    ----------
    path : str or Path
        The notebook.
    root : str or Path, optional
        The folder it was found under; only the parts of `path` below it are read.
    lms : {"canvas", "moodle", None}
        Read the names as this LMS's; None tries both (a name that fits neither gives an
        `Identity` with ``lms=None``).

    Returns
    -------
    Identity
        At least the file name.

    Examples
    --------
    >>> found = identity("class/Jane Smith_12345_assignsubmission_file_/lab15.ipynb", "class")
    >>> found.lms, found.name, found.filename
    ('moodle', 'Jane Smith', 'lab15.ipynb')
    >>> identity("class/jane/lab15.ipynb", "class")
    Identity(lms=None, name=None, login=None, user_id=None, submission_id=None, participant=None, late=False,
             filename='lab15.ipynb')
    """
    path = Path(path)
    parts = path.relative_to(root).parts if root is not None and _below(path, root) else path.parts
    if lms in (None, "moodle"):
        for part in parts:                    # the student's folder, or a prefixed file name
            found = moodle_name(part)
            if found is not None:
                if found.filename is None or part != parts[-1]:
                    found.filename = parts[-1]
                return found
    if lms in (None, "canvas"):
        found = canvas_name(parts[-1])
        if found is not None:
            return found
    return Identity(filename=parts[-1])


def _below(path, root):
    try:
        Path(path).relative_to(root)
        return True
    except ValueError:
        return False


def detect(paths_and_roots: Iterable[tuple[str | Path, str | Path | None]]) -> str | None:
    """The LMS most of the notebooks' names come from ("canvas", "moodle"), or None.

    A layout counts when at least half of the notebooks fit it (Moodle's is tried first: a Moodle
    file name can also look like a Canvas one).

    Parameters
    ----------
    paths_and_roots : iterable of (path, root)
        As `labkit.grading.intake.find_notebooks` gives them.

    Returns
    -------
    {"canvas", "moodle"} or None

    Examples
    --------
    >>> detect([("class/smithjane_4321_999_lab15.ipynb", "class"), ("class/notes.ipynb", "class")])
    'canvas'
    >>> detect([]) is None
    True
    """
    pairs = list(paths_and_roots)
    if not pairs:
        return None
    votes = collections.Counter(identity(p, r).lms for p, r in pairs)
    for lms in ("moodle", "canvas"):          # a Moodle file name can also look like a Canvas one
        if votes[lms] * 2 >= len(pairs):
            return lms
    return None


def original_filename(path: str | Path, root: str | Path | None = None, lms: str | None = None) -> str:
    """The file name the student uploaded (the LMS prefix and Canvas's ``-N`` copy suffix removed).

    Parameters
    ----------
    path, root, lms
        As for `identity`.

    Returns
    -------
    str

    Examples
    --------
    >>> original_filename("class/smithjane_4321_999_lab15-1.ipynb", "class")
    'lab15.ipynb'
    """
    name = identity(path, root, lms).filename or Path(path).name
    return _COPY_SUFFIX.sub("", name)


# ------------------------------------------------------------ which assignment a notebook was for


def named_exercise(name: str, exercises: Mapping[str, Any]) -> str | None:
    """The exercise a folder or file name names (its slug, or its number such as ``27_4``,
    ``27.4`` or ``lab15``), or None when it names none or several.

    Parameters
    ----------
    name : str
        A folder or file name.
    exercises : mapping {number: exercise}
        The exercises (objects with a ``slug``).

    Returns
    -------
    str or None
        The exercise's number.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> exercises = {"L15": SimpleNamespace(slug="lab15-poker"), "27.4": SimpleNamespace(slug="27-4-regret")}
    >>> named_exercise("Lab 15 submissions", exercises), named_exercise("27_4", exercises)
    ('L15', '27.4')
    >>> named_exercise("misc", exercises) is None
    True
    """
    lowered = name.lower()
    found = set()
    for number, ex in exercises.items():
        pattern = r"(?<![\d.])" + re.escape(number.lower()).replace(r"\.", "[._ -]") + r"(?![\d])"
        if ex.slug.lower() in lowered or re.search(pattern, lowered):
            found.add(number)
        elif number.upper().startswith("L") and re.search(r"(?<![a-z])lab[ _-]?" + re.escape(number[1:]) + r"(?!\d)",
                                                          lowered):
            found.add(number)               # "L15" is also written "lab15", "Lab 15"
    return found.pop() if len(found) == 1 else None


def student_folders(root: str | Path, parts: Sequence[str], exercises: Mapping[str, Any]) -> list[str]:
    """The folders of a path below the class folder `root` that may name a student: assignment
    folders at the top are left out.

    A folder is an assignment's when it names an exercise (`named_exercise`), is not a Moodle
    student's folder, and holds LMS download names or more than one entry (a student's own folder
    ``jane-27_4/`` holds one).

    Parameters
    ----------
    root : str or Path
        The class folder.
    parts : sequence of str
        The path's parts below it, the file last.
    exercises : mapping {number: exercise}
        The exercises (objects with a ``slug``).

    Returns
    -------
    list of str
        Folder names, outermost first.

    Examples
    --------
    >>> import tempfile
    >>> from types import SimpleNamespace
    >>> exercises = {"L15": SimpleNamespace(slug="lab15-poker")}
    >>> with tempfile.TemporaryDirectory() as root:
    ...     for student in ("jane", "bo"):
    ...         Path(root, "lab15", student).mkdir(parents=True)
    ...     print(student_folders(root, ["lab15", "jane", "answers.ipynb"], exercises))
    ['jane']
    """
    parts, at = list(parts), Path(root)
    while len(parts) > 1 and moodle_name(parts[0]) is None and named_exercise(parts[0], exercises) is not None:
        inside = parts[1]
        try:
            entries = sum(1 for _ in (at / parts[0]).iterdir())
        except OSError:
            entries = 0
        if not (canvas_name(inside) or moodle_name(inside) or entries > 1):
            break
        at, parts = at / parts[0], parts[1:]
    return parts[:-1]


def assignment_folder(path: str | Path, root: str | Path,
                      exercises: Mapping[str, Any]) -> tuple[Path, str] | tuple[None, None]:
    """The folder (below `root`, or `root` itself) nearest to `path` whose name names an
    exercise (Moodle students' folders left out), and that exercise.

    Parameters
    ----------
    path : str or Path
        A notebook below `root`.
    root : str or Path
        The class folder.
    exercises : mapping {number: exercise}
        The exercises (objects with a ``slug``).

    Returns
    -------
    (Path, str) or (None, None)
        The folder and the exercise's number.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> exercises = {"L15": SimpleNamespace(slug="lab15-poker")}
    >>> folder, number = assignment_folder("class/lab15/jane.ipynb", "class", exercises)
    >>> folder.as_posix(), number
    ('class/lab15', 'L15')
    """
    path, root = Path(path), Path(root)
    folders = [root] + [root.joinpath(*path.relative_to(root).parts[:k])
                        for k in range(1, len(path.relative_to(root).parts))]
    for folder in reversed(folders):
        if moodle_name(folder.name) is not None:         # a student's folder names a student
            continue
        number = named_exercise(folder.name, exercises)
        if number is not None:
            return folder, number
    return None, None


def assignments(intakes: Sequence[Any], roots: Mapping[str, str | None], exercises: Mapping[str, Any],
                lms: str | None = None, expected: str | None = None) -> dict[str, str | None]:
    """{intake path: the exercise it was handed in for, or None when nothing says}.

    Parameters
    ----------
    intakes : list of labkit.grading.intake.Intake
        Every notebook as read (their ``exercise`` is what each notebook is).
    roots : dict {intake path: root folder given, or None}
    exercises : dict {number: Exercise}
    lms : str or None
        The LMS the class folder came from: a whole download is one assignment.
    expected : str, optional
        The ``--exercise`` given: every notebook was handed in for it.

    A notebook under a folder that names an exercise was handed in for that exercise. In an LMS
    download (a root whose notebooks have LMS names), the assignment's exercises are those that at
    least half of its students handed in (one, usually; several when the assignment asks for several
    notebooks); a notebook of any other exercise was handed in for the first of them its student
    did not hand in (and for nothing, so it is graded as what it is, when the student handed in them all).

    Returns
    -------
    dict {intake path: exercise number or None}

    Examples
    --------
    Two notebooks in a folder ``lab15/``, one of them the notebook of another exercise:

    >>> from types import SimpleNamespace
    >>> exercises = {"L15": SimpleNamespace(slug="lab15-poker"), "27.4": SimpleNamespace(slug="27-4-regret")}
    >>> jane = SimpleNamespace(path="class/lab15/jane.ipynb", exercise="27.4", student="jane")
    >>> bo = SimpleNamespace(path="class/lab15/bo.ipynb", exercise="L15", student="bo")
    >>> assignments([jane, bo], {jane.path: "class", bo.path: "class"}, exercises)
    {'class/lab15/jane.ipynb': 'L15', 'class/lab15/bo.ipynb': 'L15'}
    """
    out: dict[str, str | None] = {}
    groups: dict[str, list[Any]] = collections.defaultdict(list)
    for intake in intakes:
        root = roots.get(intake.path)
        if expected is not None:
            out[intake.path] = expected
            continue
        if root is None:
            out[intake.path] = None
            continue
        folder, number = assignment_folder(intake.path, root, exercises)
        out[intake.path] = number
        if number is None and lms is not None and identity(intake.path, root, lms).lms == lms:
            groups[str(root)].append(intake)
    order = list(exercises)
    for root, members in groups.items():
        student = {i.path: _student_key(i, root, lms) for i in members}
        handed = collections.defaultdict(set)          # exercise -> students who handed it in
        for i in members:
            if i.exercise:
                handed[i.exercise].add(student[i.path])
        everyone = set(student.values())
        required = sorted((n for n, who in handed.items() if 2 * len(who) >= len(everyone)), key=order.index)
        for i in members:
            if i.exercise in required:
                out[i.path] = i.exercise
                continue
            mine = {j.exercise for j in members if student[j.path] == student[i.path]}
            missing = [n for n in required if n not in mine]
            out[i.path] = missing[0] if missing else None
    return out


def _student_key(intake, root, lms):
    ident = identity(intake.path, root, lms)
    return ident.user_id or ident.participant or intake.student


def refuse_wrong_exercise(intakes: Sequence[Any], handed_in_for: Mapping[str, str | None],
                          exercises: Mapping[str, Any]) -> list[Any]:
    """Make every notebook handed in for another exercise than it is not gradable, with a message
    for the student (in place).

    It then counts for the assignment, with that exercise's maximum, and earns nothing there; it
    is not graded as the exercise it is. A file that could not be read counts for its assignment
    too.

    Parameters
    ----------
    intakes : sequence of labkit.grading.intake.Intake
        The notebooks as read (``path``, ``exercise`` and ``error`` are used; the last two are set).
    handed_in_for : mapping {intake path: exercise number or None}
        As `assignments` gives it.
    exercises : mapping {number: exercise}
        The exercises (``number``, ``title`` and ``filename``, for the message).

    Returns
    -------
    list
        The notebooks refused.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> exercises = {"L15": SimpleNamespace(number="L15", title="Poker bots", filename="lab15.ipynb"),
    ...              "27.4": SimpleNamespace(number="27.4", title="Regret", filename="27_4.ipynb")}
    >>> jane = SimpleNamespace(path="jane.ipynb", exercise="27.4", error=None)
    >>> [i.path for i in refuse_wrong_exercise([jane], {"jane.ipynb": "L15"}, exercises)], jane.exercise
    (['jane.ipynb'], 'L15')
    >>> print(jane.error)
    this notebook is exercise 27.4 (Regret), but it was handed in for exercise L15 (Poker bots): it earns no
    points there. Hand in the notebook of exercise L15 (lab15.ipynb).
    """
    refused = []
    for intake in intakes:
        target = handed_in_for.get(intake.path)
        if intake.error and intake.exercise is None and target is not None:
            intake.exercise = target          # unreadable: its row shows the assignment's maximum
        if intake.error or target is None or intake.exercise in (None, target):
            continue
        mine, theirs = exercises[intake.exercise], exercises[target]
        intake.error = (f"this notebook is exercise {mine.number} ({mine.title}), but it was handed in for "
                        f"exercise {theirs.number} ({theirs.title}): it earns no points there. Hand in the "
                        f"notebook of exercise {theirs.number} ({theirs.filename}).")
        intake.exercise = target
        refused.append(intake)
    return refused
