"""The class list: who the students are, read from the file the LMS exports, and matched to submissions.

`read` takes any of these CSV files as the LMS writes them (comma or semicolon separated, with or
without a byte-order mark):

* **Canvas** gradebook export (Grades > Export): ``Student`` ("Smith, Jane"), ``ID`` (the user id
  Canvas download names carry), ``SIS User ID``, ``SIS Login ID``, ``Section``, then one column per
  assignment headed ``Title (assignment id)``; its ``Points Possible`` row and the test student are
  skipped. The assignment headers are kept, so that a gradebook written for Canvas fills the
  assignment that is already there (`Roster.column_for`).
* **Moodle** gradebook export or participants list: ``First name``, ``Last name`` (or ``Surname``),
  ``ID number``, ``Email address``, optionally ``Username``; its ``Assignment: Title (Real)`` columns
  are kept the same way.
* **Moodle** grading worksheet (assignment > Download grading worksheet): ``Identifier``
  ("Participant 12345", the number in the download's folder names), ``Full name``, ``Email address``.
* **Any** other class list with a name column (``name``) and at least one of ``id``, ``email``,
  ``login`` or ``username`` (case and spacing do not matter).

`Roster.match` finds the student of a submission: by Canvas user id or Moodle participant id
when the download names carry one, else by any id, login, e-mail address or name that equals the
submission's folder or file name once case and punctuation are ignored.
"""
from __future__ import annotations

import csv
import io
import re
from dataclasses import asdict, dataclass, field
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from labkit.grading.lms import Identity

# a class list of one student, as Canvas exports it (the examples below read it)
_CANVAS_EXAMPLE = ("Student,ID,SIS User ID,SIS Login ID,Section,Lab 15 (1234)\n"
                   "    Points Possible,,,,,10\n"
                   "\"Smith, Jane\",4321,s1,jsmith,A,\n")


class RosterError(ValueError):
    """A class list that cannot be read; the message says what was expected.

    Examples
    --------
    >>> try:
    ...     read("no-such-class-list.csv")
    ... except RosterError as error:
    ...     print(str(error).split(":")[0])
    cannot read the class list no-such-class-list.csv
    """


@dataclass
class Person:
    """One student of the class list (fields empty when the list does not have them).

    Attributes
    ----------
    name, sortable_name : str
        As people read it ("Jane Smith") and as Canvas sorts it ("Smith, Jane").
    id : str
        Canvas's user id, or the list's own id.
    sis_user_id, sis_login_id, section, email, username : str
        The columns of that name.
    idnumber : str
        Moodle's ID number.
    participant : str
        Moodle's participant id in one assignment (grading worksheet).
    row : int
        The line of the file it came from.

    Examples
    --------
    >>> Person(name="Jane Smith", email="jane.smith@example.org").name
    'Jane Smith'
    """
    name: str = ""                  # as people read it: "Jane Smith"
    sortable_name: str = ""         # as Canvas sorts it: "Smith, Jane"
    id: str = ""                    # Canvas user id, or the list's own id
    sis_user_id: str = ""
    sis_login_id: str = ""
    section: str = ""
    email: str = ""
    username: str = ""
    idnumber: str = ""              # Moodle's ID number
    participant: str = ""           # Moodle's participant id of one assignment
    row: int = 0                    # the line of the file it came from

    def as_dict(self) -> dict[str, Any]:
        """The fields as a dict.

        Returns
        -------
        dict

        Examples
        --------
        >>> Person(name="Jane Smith", row=2).as_dict()["row"]
        2
        """
        return asdict(self)

    def keys(self) -> set[str]:
        """Every normalized identifier this student can be recognised by (`normal`): ids, login,
        e-mail address and its local part, the names and their Canvas forms (`squash`).

        Returns
        -------
        set of str

        Examples
        --------
        >>> sorted(Person(name="Jane Smith", sortable_name="Smith, Jane", email="js@example.org").keys())
        ['janesmith', 'js', 'jsexampleorg', 'smithjane']
        """
        local = self.email.split("@")[0] if self.email else ""
        values = [self.id, self.sis_user_id, self.sis_login_id, self.email, local, self.username, self.idnumber,
                  self.name, self.sortable_name, squash(self.sortable_name), squash(self.name)]
        return {normal(v) for v in values if normal(v)}


@dataclass
class Roster:
    """A class list as `read` finds it.

    Attributes
    ----------
    kind : str
        ``"canvas"``, ``"moodle"``, ``"moodle-worksheet"`` or ``"generic"``.
    people : list of Person
        The students, in the file's order.
    columns : list of str
        The LMS's own assignment columns, as headed (Canvas and Moodle gradebook exports).
    path : str
        The file read.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     _ = Path(folder, "grades.csv").write_text(_CANVAS_EXAMPLE)
    ...     roster = read(Path(folder, "grades.csv"))
    >>> roster.kind, [p.name for p in roster.people], roster.columns
    ('canvas', ['Jane Smith'], ['Lab 15 (1234)'])
    """
    kind: str                                         # canvas, moodle, moodle-worksheet or generic
    people: list = field(default_factory=list)
    columns: list = field(default_factory=list)       # the LMS's own assignment columns, as headed
    path: str = ""

    def match(self, identity: Identity | None, student_id: str = "") -> Person | None:
        """The `Person` who handed in a submission, or None.

        By Canvas user id or Moodle participant id first; else by the download's name, login or
        `student_id`, when exactly one student has it among their `Person.keys`.

        Parameters
        ----------
        identity : labkit.grading.lms.Identity or None
            What the download name says (Canvas user id, Moodle participant id, names).
        student_id : str
            The grader's id of the submission (its folder, or its file's name).

        Returns
        -------
        Person or None

        Examples
        --------
        >>> from labkit.grading.lms import canvas_name
        >>> roster = Roster("generic", [Person(name="Jane Smith", id="4321", sis_login_id="jsmith")])
        >>> roster.match(canvas_name("smithjane_4321_999_lab15.ipynb")).name
        'Jane Smith'
        >>> roster.match(None, "JSmith").name, roster.match(None, "someone-else")
        ('Jane Smith', None)
        """
        if identity is not None and identity.user_id:
            found = [p for p in self.people if p.id == identity.user_id]
            if found:
                return found[0]
        if identity is not None and identity.participant:
            found = [p for p in self.people if p.participant == identity.participant]
            if found:
                return found[0]
        candidates = [identity.name if identity is not None else "", identity.login if identity is not None else "",
                      student_id]
        for key in (normal(c) for c in candidates if c):
            found = [p for p in self.people if key in p.keys()]
            if len(found) == 1:
                return found[0]
        return None

    def column_for(self, exercise: str, exercises: Mapping[str, Any]) -> str | None:
        """The LMS's own column header for an exercise's assignment (from the exported
        gradebook), or None when the list has none or several that name it.

        Parameters
        ----------
        exercise : str
            The exercise's number, a key of `exercises`.
        exercises : mapping {number: exercise}
            The exercises (objects with a ``title`` and a ``slug``).

        Returns
        -------
        str or None

        Examples
        --------
        >>> from types import SimpleNamespace
        >>> exercises = {"L15": SimpleNamespace(title="Poker bots", slug="lab15-poker")}
        >>> Roster("canvas", columns=["Lab 15 (1234)", "Quiz 2 (77)"]).column_for("L15", exercises)
        'Lab 15 (1234)'
        """
        from labkit.grading.lms import named_exercise
        title = exercises[exercise].title.lower()
        found = [c for c in self.columns if named_exercise(_column_title(c), exercises) == exercise
                 or title in _column_title(c).lower()]
        return found[0] if len(found) == 1 else None


def normal(text: object) -> str:
    """`text` lower-cased with everything but letters and digits removed.

    Parameters
    ----------
    text : object
        Made a string (None is the empty string).

    Returns
    -------
    str

    Examples
    --------
    >>> normal("Jane  Smith!"), normal(None)
    ('janesmith', '')
    """
    return re.sub(r"[\W_]+", "", str(text or "").casefold())


def squash(sortable_name: str | None) -> str:
    """Canvas's file-name form of a sortable name: "Smith, Jane" -> "smithjane".

    Parameters
    ----------
    sortable_name : str or None

    Returns
    -------
    str

    Examples
    --------
    >>> squash("Smith, Jane")
    'smithjane'
    """
    return re.sub(r"\W+", "", str(sortable_name or "")).lower()


def _column_title(header):
    """An assignment header without its id or type: "Lab 15 (1234)" -> "Lab 15",
    "Assignment: Lab 15 (Real)" -> "Lab 15"."""
    title = re.sub(r"\s*\((\d+|Real|Letter|Percentage|Feedback)\)\s*$", "", header)
    return re.sub(r"^(Assignment|Quiz)\s*:\s*", "", title)


CANVAS_FIXED = ("student", "id", "sis user id", "sis login id", "root account", "section", "integration id")
CANVAS_TOTALS = re.compile(r"(Current|Final|Unposted) (Score|Points|Grade)|Override (Score|Grade)|Total", re.I)
MOODLE_FIXED = ("first name", "last name", "surname", "id number", "institution", "department", "email address",
                "username", "last downloaded from this course", "full name", "identifier", "status", "grade",
                "maximum grade", "grade can be changed", "last modified (submission)", "last modified (grade)",
                "feedback comments")
GENERIC = {"name": ("name", "full name", "student name", "student"), "id": ("id", "student id", "student_id"),
           "email": ("email", "e-mail", "email address", "mail"), "login": ("login", "sis login id", "login id"),
           "username": ("username", "user name", "user"), "section": ("section", "group")}


def read(path: str | Path) -> Roster:
    r"""The `Roster` in a class list file (see the module's docstring for the formats).

    Parameters
    ----------
    path : str or Path
        A CSV file (UTF-8, comma or semicolon separated).

    Returns
    -------
    Roster

    Raises
    ------
    RosterError
        When the file cannot be read or has none of the columns listed above.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     _ = Path(folder, "list.csv").write_text("Name;E-mail\nJane Smith;js@example.org\n")
    ...     roster = read(Path(folder, "list.csv"))
    >>> roster.kind, roster.people[0].email, roster.people[0].row
    ('generic', 'js@example.org', 2)
    """
    path = Path(path)
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except OSError as exc:
        raise RosterError(f"cannot read the class list {path}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise RosterError(f"the class list {path} is not UTF-8 text (save it as CSV UTF-8)") from None
    rows = _rows(text)
    if not rows:
        raise RosterError(f"the class list {path} is empty")
    header = [h.strip() for h in rows[0]]
    lowered = [h.lower() for h in header]
    if len(lowered) > 2 and lowered[0] == "student" and lowered[1] == "id" and "section" in lowered:
        roster = _canvas(header, rows[1:])
    elif "identifier" in lowered and "full name" in lowered:
        roster = _worksheet(lowered, rows[1:])
    elif "first name" in lowered and ("email address" in lowered or "id number" in lowered):
        roster = _moodle(header, rows[1:])
    else:
        roster = _generic(lowered, rows[1:], path)
    roster.path = str(path)
    if not roster.people:
        raise RosterError(f"the class list {path} has a header ({', '.join(header[:8])}) but no students")
    return roster


def _rows(text):
    sample = text[:4096]
    delimiter = ";" if sample.count(";") > sample.count(",") else ","
    return [row for row in csv.reader(io.StringIO(text), delimiter=delimiter) if any(c.strip() for c in row)]


def _cell(row, index):
    return row[index].strip() if index is not None and index < len(row) else ""


def _canvas(header, rows):
    lowered = [h.lower() for h in header]
    at = {name: lowered.index(name) if name in lowered else None for name in CANVAS_FIXED}
    columns = [h for h in header[at["section"] + 1:] if h and not CANVAS_TOTALS.search(h)]
    people = []
    for k, row in enumerate(rows, start=2):
        student = _cell(row, at["student"])
        if "points possible" in student.lower() or normal(student) in ("studenttest", "teststudent"):
            continue
        last, _, first = student.partition(",")
        people.append(Person(name=f"{first.strip()} {last.strip()}".strip() if first else student,
                             sortable_name=student, id=_cell(row, at["id"]), sis_user_id=_cell(row, at["sis user id"]),
                             sis_login_id=_cell(row, at["sis login id"]), section=_cell(row, at["section"]), row=k))
    return Roster("canvas", people, columns)


def _moodle(header, rows):
    lowered = [h.lower() for h in header]
    col = {name: lowered.index(name) if name in lowered else None for name in MOODLE_FIXED}
    last = col["last name"] if col["last name"] is not None else col["surname"]
    columns = [h for h, low in zip(header, lowered, strict=True) if low not in MOODLE_FIXED and h]
    people = []
    for k, row in enumerate(rows, start=2):
        first, surname = _cell(row, col["first name"]), _cell(row, last)
        people.append(Person(name=f"{first} {surname}".strip(), sortable_name=f"{surname}, {first}".strip(", "),
                             email=_cell(row, col["email address"]), username=_cell(row, col["username"]),
                             idnumber=_cell(row, col["id number"]), row=k))
    return Roster("moodle", people, columns)


def _worksheet(lowered, rows):
    col = {name: lowered.index(name) if name in lowered else None for name in MOODLE_FIXED}
    people = []
    for k, row in enumerate(rows, start=2):
        number = re.search(r"(\d+)\s*$", _cell(row, col["identifier"]))
        people.append(Person(name=_cell(row, col["full name"]), email=_cell(row, col["email address"]),
                             participant=number.group(1) if number else "", row=k))
    return Roster("moodle-worksheet", people)


def _generic(lowered, rows, path):
    col = {}
    for key, names in GENERIC.items():
        col[key] = next((lowered.index(n) for n in names if n in lowered), None)
    if col["name"] is None or all(col[k] is None for k in ("id", "email", "login", "username")):
        raise RosterError(f"the class list {path} has the columns {', '.join(lowered[:10]) or 'none'}; expected a "
                          "Canvas or Moodle export, or a name column and one of id, email, login, username")
    people = []
    for k, row in enumerate(rows, start=2):
        people.append(Person(name=_cell(row, col["name"]), id=_cell(row, col["id"]), email=_cell(row, col["email"]),
                             sis_login_id=_cell(row, col["login"]), username=_cell(row, col["username"]),
                             section=_cell(row, col["section"]), row=k))
    return Roster("generic", people)
