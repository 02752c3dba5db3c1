"""Who a submission is and what a student is told: stable ids from paths, names that stay apart,
feedback that names no one else, and outputs that are never written through a planted link.

No sandbox here: these are the pieces, tested one by one on files in a temporary folder.
"""
import csv
import errno
import io
import json
import os
from pathlib import Path

import pytest

from labkit.grading import grader, outputs, report
from labkit.grading.identity import display_name, ids_for, make_id
from labkit.grading.intake import find_notebooks
from labkit.grading.journal import Journal, JournalBusy, read_entries
from _grading_support import MATERIAL

ODD_NAMES = ["a b", "a\nb", "a  b", "a\tb", " a b", "a\\nb", "a\u202eb", "José", "Jose"]


def test_names_that_differ_only_in_spaces_or_controls_stay_distinct_and_readable():
    shown = [display_name(n) for n in ODD_NAMES]
    ids = [make_id(n) for n in ODD_NAMES]
    assert len(set(shown)) == len(shown) and len(set(ids)) == len(ids)
    assert shown[:3] == ["a b", "a\\nb", "a \\x20b"]
    assert all("\n" not in s and "\t" not in s and "\u202e" not in s for s in shown)
    for i in ids:                        # safe as file names anywhere
        assert "/" not in i and not i.startswith(".") and i.isascii() and len(i) < 100
    assert make_id("ann") == "ann" and make_id("ann_lee-2.v1") == "ann_lee-2.v1"      # plain names kept


def test_names_that_are_not_utf8_keep_their_bytes_apart():
    raw = [b"\xff", b"\xfe", b"caf\xe9", b"caf\xc3\xa9"]            # Latin-1 and UTF-8 "cafe"
    ids = [make_id(r) for r in raw]
    assert len(set(ids)) == 4 and all(ids)
    assert display_name(b"caf\xe9") == "caf\\xe9" and display_name(b"caf\xc3\xa9") == "caf\u00e9"
    # a file name the file system returns for those bytes gives the same
    assert make_id(os.fsdecode(b"caf\xe9")) == ids[2]


def test_a_plain_name_cannot_take_a_hashed_id():
    assert make_id("a b") == "a b"                            # one space between words is plain
    hashed = make_id("a  b")
    assert "~" in hashed and make_id(hashed) != hashed        # spelling the id as a name gives another id


def test_ids_come_from_paths_not_from_the_order_notebooks_are_found(tmp_path):
    names = ["ann", "a b", "a\nb", "a  b"]
    for name in names:
        (tmp_path / name).mkdir()
        (tmp_path / name / "lab.ipynb").write_text("{}")
    (tmp_path / "ann" / "lab_v2.ipynb").write_text("{}")
    (tmp_path / os.fsdecode(b"\xff.ipynb")).write_text("{}")
    found = find_notebooks([tmp_path])
    forward, backward = ids_for(found), ids_for(list(reversed(found)))
    assert forward == backward
    submissions = [ids[2] for ids in forward.values()]
    assert len(set(submissions)) == len(found) == 6
    assert forward[tmp_path / "ann" / "lab.ipynb"] == ("ann", "ann", "ann+lab")
    assert forward[tmp_path / "ann" / "lab_v2.ipynb"][2] == "ann+lab_v2"
    # files given one by one: known by their stem, and by their folder when stems clash
    alone = ids_for([(tmp_path / "ann" / "lab.ipynb", None), (tmp_path / "a b" / "lab.ipynb", None)])
    assert sorted(v[2] for v in alone.values()) == sorted(["ann+lab", f"{make_id('a b')}+lab"])
    assert ids_for([(tmp_path / "ann" / "lab.ipynb", None)])[tmp_path / "ann" / "lab.ipynb"] == ("lab", "lab", "lab")


def _graded(student, submission_id, fingerprint, score=5.0):
    return {"student": student, "student_id": make_id(student), "submission_id": submission_id,
            "path": f"class/{student}.ipynb", "exercise": "27.4", "status": "graded", "reason": None,
            "score": score, "max_score": 5.0, "error": None, "flags": [], "seconds": 1.0, "fingerprint": fingerprint,
            "parts": [{"part": "27.4(a)", "verdict": "pass", "points": 3.0, "max_points": 3.0, "hints": [], "items": []},
                      {"part": "27.4(b)", "verdict": "pass", "points": 2.0, "max_points": 2.0, "hints": [], "items": []}],
            "written": [], "final": True}


def test_similar_answers_reach_the_instructor_and_never_a_student():
    results = [_graded("ann", "ann", "f1"), _graded("bob", "bob", "f1"), _graded("cy", "cy", "f2"),
               _graded("dee", "dee", None)]
    grader.finish(results, MATERIAL)
    ann, bob, cy, dee = results
    assert ann["similar_to"] == ["bob"] and bob["similar_to"] == ["ann"] and cy["similar_to"] == dee["similar_to"] == []
    assert ann["status"] == bob["status"] == "flagged" and cy["status"] == "graded"
    for mine, other in ((ann, "bob"), (bob, "ann")):
        student_facing = report.feedback_markdown(mine) + report.feedback_html(mine)
        assert other not in student_facing
    rows = list(csv.DictReader(io.StringIO(report.csv_text(results))))
    assert [r["similar_to"] for r in rows] == ["bob", "ann", "", ""]
    similarity = list(csv.DictReader(io.StringIO(report.similarity_text(results))))
    assert [(r["group"], r["submission_id"]) for r in similarity] == [("1", "ann"), ("1", "bob")]
    assert "same answers as bob (instructor only)" in report.format_table(results)


def test_feedback_files_are_named_by_submission_and_stay_the_same(tmp_path):
    writer = report.FeedbackWriter(tmp_path)
    first = writer.add(_graded("a  b", make_id("a  b"), None))
    again = writer.add(_graded("a  b", make_id("a  b"), None, score=4.0))    # the same notebook graded again
    other = writer.add(_graded(display_name("a\nb"), make_id("a\nb"), None))
    assert first == again != other
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([f"{first}.md", f"{first}.html",
                                                                 f"{other}.md", f"{other}.html"])
    assert "4 / 5 points" in (tmp_path / f"{first}.md").read_text()
    assert "# Feedback: a\\nb\n" in (tmp_path / f"{other}.md").read_text()      # the name, escaped, on one line


def test_no_output_is_written_through_a_planted_link(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    folder = tmp_path / "out"
    folder.mkdir()
    for name in ("whole.txt", "lines.txt"):
        (folder / name).symlink_to(victim)
    outputs.write_new(folder / "whole.txt", "new\n")
    lines = outputs.open_new(folder / "lines.txt")
    lines.write_line("one")
    lines.close()
    assert victim.read_text() == "precious\n"
    assert not (folder / "whole.txt").is_symlink() and (folder / "whole.txt").read_text() == "new\n"
    assert not (folder / "lines.txt").is_symlink() and (folder / "lines.txt").read_text() == "one\n"
    assert sorted(p.name for p in folder.iterdir()) == ["lines.txt", "whole.txt"]       # no temporary left


def test_a_full_disk_leaves_whole_lines_and_names_the_file(tmp_path, monkeypatch):
    log = outputs.open_new(tmp_path / "journal.jsonl")
    log.write_line(json.dumps({"n": 1}))
    real_write = os.write

    def half_then_full(fd, data):        # half a line fits, then the disk is full
        if len(data) > 8:
            real_write(fd, bytes(data[:8]))
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data)
    monkeypatch.setattr(os, "write", half_then_full)
    with pytest.raises(outputs.OutputError) as caught:
        log.write_line(json.dumps({"n": 2, "padding": "x" * 40}))
    monkeypatch.setattr(os, "write", real_write)
    log.write_line(json.dumps({"n": 3}))
    log.close()
    assert caught.value.disk_full and str(tmp_path / "journal.jsonl") in str(caught.value)
    assert [json.loads(line)["n"] for line in (tmp_path / "journal.jsonl").read_text().splitlines()] == [1, 3]


def test_the_journal_keeps_final_rows_of_unchanged_notebooks(tmp_path):
    journal = Journal(tmp_path, command=["labkit-grade", "x"])
    with pytest.raises(JournalBusy):                      # one grader per output folder
        Journal(tmp_path)
    journal.record({**_graded("ann", "ann", None), "sha256": "a" * 64})
    journal.record({**_graded("bob", "bob", None), "sha256": "b" * 64, "final": False}, final=False)
    journal.close()
    with open(tmp_path / "labkit-grade-journal.jsonl", "a") as f:
        f.write('{"submission_id": "cy", "res')           # a line cut short by a crash
    resumed = Journal(tmp_path, resume=True)
    assert resumed.cached("ann", "a" * 64)["score"] == 5.0
    assert resumed.cached("ann", "c" * 64) is None         # the notebook changed since
    assert resumed.cached("bob", "b" * 64) is None         # not final: graded again
    assert resumed.cached("cy", None) is None
    resumed.close()
    assert set(read_entries(tmp_path / "labkit-grade-journal.jsonl")) == {"ann", "bob"}
    fresh = Journal(tmp_path)                             # without --resume: the old journal is kept aside
    fresh.close()
    assert (tmp_path / "labkit-grade-journal.jsonl.previous").exists()
    assert read_entries(tmp_path / "labkit-grade-journal.jsonl") == {}
