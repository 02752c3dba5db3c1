"""A control group per submission: one memory and one process limit for a whole sandbox.

The hierarchy logic is tested on fake cgroup folders (v1 and v2); the limits themselves on the
machine's own hierarchy when the grader can create groups there (root, cgroups mounted
read-write), where a notebook whose children together allocate more than its limit loses that
part -- and only that part, and nothing of a classmate's run.
"""
import os
from pathlib import Path

import nbformat
import pytest

from _grading_support import EXERCISES, INSTRUCTOR, solution_source, with_answers
from labkit.grading import cgroups, sandbox
from labkit.grading.__main__ import main
from labkit.grading.grader import grade_paths

HIERARCHY, WHY_NOT = cgroups.available()


def needs_groups(test):
    """A test of the control groups of real sandboxes: bubblewrap and a hierarchy we may write."""
    skip = pytest.mark.skipif(HIERARCHY is None, reason=f"no control group per submission here: {WHY_NOT}")
    return pytest.mark.sandbox(skip(test))
MIB = 2 ** 20

V1_MOUNTINFO = """\
25 30 0:22 / /sys/fs/cgroup ro,nosuid - tmpfs tmpfs ro,mode=755
31 25 0:27 / {root}/memory rw,relatime - cgroup cgroup rw,memory
32 25 0:28 / {root}/pids rw,relatime - cgroup cgroup rw,pids
33 25 0:29 / {root}/cpu rw,relatime - cgroup cgroup rw,cpu
34 25 0:30 / {root}/unified rw,relatime - cgroup2 cgroup2 rw
"""
V2_MOUNTINFO = "29 23 0:26 / {root} rw,nosuid,nodev - cgroup2 cgroup2 rw,nsdelegate\n"


def _fake_v1(tmp_path):
    root = tmp_path / "cg"
    for name in ("memory", "pids", "cpu", "unified"):
        (root / name).mkdir(parents=True)
    (root / "unified" / "cgroup.controllers").write_text("\n")
    info = tmp_path / "mountinfo"
    info.write_text(V1_MOUNTINFO.format(root=root))
    return root, info


def _fake_v2(tmp_path, controllers="cpu io memory pids"):
    root = tmp_path / "cg"
    root.mkdir()
    (root / "cgroup.controllers").write_text(controllers + "\n")
    (root / "cgroup.subtree_control").write_text("cpu\n")
    info = tmp_path / "mountinfo"
    info.write_text(V2_MOUNTINFO.format(root=root))
    return root, info


def test_v1_is_found_from_the_memory_and_pids_mounts(tmp_path):
    root, info = _fake_v1(tmp_path)
    # the fake has a cpu mount but no cpuacct one: a quota, but no CPU time to read
    assert cgroups.find_hierarchy(info) == cgroups.Hierarchy(1, root / "memory", root / "pids", root / "cpu", None)
    info.write_text(V1_MOUNTINFO.format(root=root).replace("rw,cpu\n", "rw,cpu,cpuacct\n"))
    assert cgroups.find_hierarchy(info) == cgroups.Hierarchy(1, root / "memory", root / "pids", root / "cpu",
                                                             root / "cpu")


def test_v2_is_found_only_with_both_controllers(tmp_path):
    root, info = _fake_v2(tmp_path)
    assert cgroups.find_hierarchy(info) == cgroups.Hierarchy(2, root, root, root, root)
    (root / "cgroup.controllers").write_text("io memory pids\n")          # no quota; cpu.stat still counts
    assert cgroups.find_hierarchy(info) == cgroups.Hierarchy(2, root, root, None, root)
    (root / "cgroup.controllers").write_text("cpu io memory\n")
    assert cgroups.find_hierarchy(info) is None
    assert cgroups.find_hierarchy(tmp_path / "no-such-mountinfo") is None


def test_a_v1_group_gets_memory_memsw_pids_and_cpu_limits(tmp_path):
    root, info = _fake_v1(tmp_path)
    group = cgroups.SubmissionGroup(cgroups.find_hierarchy(info), "slot-3", 1024 * MIB, 48, cpus=1.5)
    memory = root / "memory" / cgroups.PARENT / "slot-3"
    memory.mkdir(parents=True)              # as if a crashed grader had left it: reused
    (memory / "memory.memsw.limit_in_bytes").write_text("9223372036854771712\n")
    (memory / "memory.oom_control").write_text("oom_kill_disable 0\nunder_oom 0\noom_kill 4\n")
    group.create()
    assert (memory / "memory.limit_in_bytes").read_text() == str(1024 * MIB)
    assert (memory / "memory.memsw.limit_in_bytes").read_text() == str(1024 * MIB)
    assert (root / "pids" / cgroups.PARENT / "slot-3" / "pids.max").read_text() == "48"
    cpu = root / "cpu" / cgroups.PARENT / "slot-3"
    assert (cpu / "cpu.cfs_period_us").read_text() == "100000" and (cpu / "cpu.cfs_quota_us").read_text() == "150000"
    assert group.cpu_limited and group.cpu_usage_file() is None and group.cpu_seconds() is None
    (memory / "memory.oom_control").write_text("oom_kill_disable 0\nunder_oom 0\noom_kill 6\n")
    assert group.oom_kills() == 2                          # counted from the group's creation
    command = group.join_command()
    assert command[:2] == ["/bin/sh", "-c"] and command[4] == "3"
    assert sorted(command[5:]) == sorted(str(root / c / cgroups.PARENT / "slot-3" / "cgroup.procs")
                                         for c in ("cpu", "memory", "pids"))


def test_a_v2_group_enables_its_controllers_and_forbids_swap(tmp_path, monkeypatch):
    root, info = _fake_v2(tmp_path)
    writes = []
    write = cgroups._write
    monkeypatch.setattr(cgroups, "_write", lambda path, text: (writes.append((Path(path), text)), write(path, text)))
    group = cgroups.SubmissionGroup(cgroups.find_hierarchy(info), "slot-0", 512 * MIB, 32, cpus=0.5)
    folder = root / cgroups.PARENT / "slot-0"
    (root / cgroups.PARENT).mkdir()
    (root / cgroups.PARENT / "cgroup.subtree_control").write_text("memory\n")
    folder.mkdir()
    (folder / "memory.swap.max").write_text("max\n")
    (folder / "memory.events").write_text("low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n")
    (folder / "cpu.stat").write_text("usage_usec 2500000\nuser_usec 2000000\n")
    group.create()
    enabled = {(p.parent, text) for p, text in writes if p.name == "cgroup.subtree_control"}
    # the root had cpu: memory and pids are added; the parent had memory: pids and cpu are added
    assert enabled == {(root, "+memory"), (root, "+pids"), (root / cgroups.PARENT, "+pids"),
                       (root / cgroups.PARENT, "+cpu")}
    assert (folder / "memory.max").read_text() == str(512 * MIB)
    assert (folder / "memory.swap.max").read_text() == "0"
    assert (folder / "pids.max").read_text() == "32"
    assert (folder / "cpu.max").read_text() == "50000 100000"
    assert group.folders == [folder]
    assert group.cpu_seconds() == 2.5
    (folder / "memory.events").write_text("low 0\nhigh 0\nmax 9\noom 3\noom_kill 3\n")
    assert group.oom_kills() == 2


def test_without_a_hierarchy_the_probe_says_why(tmp_path):
    info = tmp_path / "mountinfo"
    info.write_text("25 30 0:22 / /sys/fs/cgroup ro,nosuid - tmpfs tmpfs ro,mode=755\n")
    hierarchy, why = cgroups._probe(info)
    assert hierarchy is None and "memory and pids controllers" in why


def test_limits_refuse_nonsense():
    with pytest.raises(ValueError, match="at least 256 MiB"):
        sandbox.Limits(memory=100 * MIB)
    with pytest.raises(ValueError, match="processes must be at least"):
        sandbox.Limits(processes=3)
    with pytest.raises(ValueError, match="Limits.cpu must be a positive integer"):
        sandbox.Limits(cpu=0)
    with pytest.raises(ValueError, match="Limits.cpus must be a number of CPUs"):
        sandbox.Limits(cpus=0)


@pytest.mark.parametrize("option, value, message", [("--memory", "100", "--memory must be at least 256"),
                                                    ("--processes", "4", "--processes must be at least 16"),
                                                    ("--cpus", "0", "--cpus must be at least 0.01")])
def test_the_command_line_checks_its_limits(tmp_path, capsys, option, value, message):
    nbformat.write(EXERCISES["27.2"].notebook(), tmp_path / "sub.ipynb")
    assert main([str(tmp_path / "sub.ipynb"), "--instructor", str(INSTRUCTOR), option, value]) == 2
    assert message in capsys.readouterr().err


def test_without_control_groups_the_grader_says_so_once_and_uses_rlimits(tmp_path, capfd, monkeypatch):
    nbformat.write(EXERCISES["27.2"].notebook(solution=True), tmp_path / "a.ipynb")
    nbformat.write(EXERCISES["27.2"].notebook(solution=True), tmp_path / "b.ipynb")
    monkeypatch.setattr(cgroups, "available", lambda *a: (None, "cgroups are read-only here"))
    assert main([str(tmp_path), "--instructor", str(INSTRUCTOR), "--no-sandbox", "--memory", "1536",
                 "--workers", "2"]) == 0
    out, err = capfd.readouterr()
    assert out.count("total  7/7") == 2
    assert err.count("no control group per notebook (cgroups are read-only here)") == 1
    assert "1536 MiB of address space each" in err


LOOK_AT_GROUP = '''
import os, time
pids = []
for _ in range(60):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(30)
        os._exit(0)
    pids.append(pid)
raise RuntimeError(f"FORKED {len(pids)}")
'''


@needs_groups
def test_a_sandbox_runs_in_a_group_of_its_own_which_is_removed_after(monkeypatch):
    made, seen = [], {}
    original_create, original_remove = cgroups.SubmissionGroup.create, cgroups.SubmissionGroup.remove

    def create(self):
        made.append(self)
        return original_create(self)

    def remove(self):           # what the group held, read just before it goes
        if self.cpu_folder is not None:
            name = "cpu.cfs_quota_us" if self.hierarchy.version == 1 else "cpu.max"
            seen["quota"] = (self.cpu_folder / name).read_text().split()[0]
            stat = dict(line.split() for line in (self.cpu_folder / "cpu.stat").read_text().splitlines())
            seen["periods"] = int(stat.get("nr_periods", 0))      # quota periods in which it ran
        seen["cpu"] = self.cpu_seconds()
        return original_remove(self)
    monkeypatch.setattr(cgroups.SubmissionGroup, "create", create)
    monkeypatch.setattr(cgroups.SubmissionGroup, "remove", remove)
    job = {"cells": [["setup", None, "import numpy"], ["answer", "x", LOOK_AT_GROUP]], "timeout": 60,
           "setup_timeout": 60, "budget": 120, "seals": [{"nonce": "0" * 32, "specs": {}}]}
    run = sandbox.run_driver(job, sandbox=True, limits=sandbox.Limits(processes=32, cpus=0.75), wall=600)
    (group,) = made
    cells = [e for e in run.events if e.get("event") == "cell"]
    assert run.confinement == f"cgroup v{HIERARCHY.version}"
    forked = int(cells[0]["error"].split("FORKED ")[1])
    assert 0 < forked < 32 - 3                       # bwrap, the driver and the kernel count too
    assert run.process_limit_hits >= 1
    assert all(not folder.exists() for folder in group.folders)        # removed, its sleepers killed
    if HIERARCHY.cpu is not None:                    # the whole sandbox under one CPU quota
        assert group.cpu_limited and seen["quota"] == "75000" and seen["periods"] > 0
    if HIERARCHY.cpuacct is not None:                # and its CPU time counted: the kernel's start, numpy
        assert seen["cpu"] > 0.1 and run.cpu_seconds == seen["cpu"]


HOG = '''
import os
children = []
for _ in range(8):
    pid = os.fork()
    if pid == 0:
        block = bytearray(500 * 1024 * 1024)
        for k in range(0, len(block), 4096):       # touch every page: resident, not just reserved
            block[k] = 1
        os._exit(0)
    children.append(pid)
statuses = [os.waitpid(pid, 0)[1] for pid in children]
'''


@needs_groups
def test_children_that_together_pass_the_memory_limit_cost_that_part_only(tmp_path):
    folder = tmp_path / "class"
    folder.mkdir()
    hog = with_answers("27.2", {"27.2(a)": solution_source("27.2", "27.2(a)") + "\n" + HOG})
    nbformat.write(hog, folder / "hog.ipynb")
    nbformat.write(EXERCISES["27.2"].notebook(solution=True), folder / "honest.ipynb")
    results = {r["student"]: r for r in grade_paths([folder], instructor=INSTRUCTOR, executor=2,
                                                    limits=sandbox.Limits(memory=1024 * MIB))}
    parts = {p["part"]: p for p in results["hog"]["parts"]}
    assert parts["27.2(a)"]["verdict"] == "out-of-memory" and parts["27.2(a)"]["points"] == 0
    assert "memory limit of 1024 MiB reached" in parts["27.2(a)"]["hints"][0]
    assert parts["27.2(b)"]["verdict"] == parts["27.2(c)"]["verdict"] == "pass"      # the kernel went on
    assert results["hog"]["score"] == 7 - parts["27.2(a)"]["max_points"]
    assert results["honest"]["score"] == 7 and results["honest"]["status"] == "graded"


def test_an_oom_after_the_last_event_explains_the_parts_never_reached():
    from labkit.grading.grader import _verdicts
    from labkit.grading.checking import part_spec

    class Run:
        events = [{"event": "cell", "index": 0, "status": "ok", sandbox.SANDBOX_KEY: {"oom_kills": 0}}]
        oom_kills, process_limit_hits, memory, processes, note, stderr = 1, 0, 768 * MIB, 64, None, ""
    plan = [("answer", "p1", ""), ("check", "p1", ""), ("answer", "p2", ""), ("check", "p2", "")]
    specs = {p: part_spec(p, ["x"], lambda v: None, 2) for p in ("p1", "p2")}
    p1, p2 = _verdicts(plan, Run, ["0" * 32], specs, None)
    assert p1.verdict == p2.verdict == "out-of-memory"
    assert "memory limit of 768 MiB reached" in p2.hints[0]


def test_an_oom_in_the_setup_is_named_for_every_part():
    from labkit.grading.grader import _verdicts
    from labkit.grading.checking import part_spec

    class Run:
        events = [{"event": "fatal", "error": "the kernel died", sandbox.SANDBOX_KEY: {"oom_kills": 1}}]
        oom_kills, process_limit_hits, memory, processes, note, stderr = 1, 0, 512 * MIB, 64, None, ""
    plan = [("setup", None, ""), ("answer", "p1", ""), ("check", "p1", "")]
    (p1,) = _verdicts(plan, Run, ["0" * 32], {"p1": part_spec("p1", ["x"], lambda v: None, 2)}, None)
    assert p1.verdict == "out-of-memory" and "memory limit of 512 MiB reached" in p1.hints[0]
