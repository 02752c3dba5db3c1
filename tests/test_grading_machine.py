"""What the grader shares with the machine: slot locks that hold across graders and environments,
the Python installation a sandbox must see, and the seccomp filter against user namespaces.

The end-to-end runs (two graders at once, a venv behind a link) are in test_grading_infra.py.
"""
import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from labkit.grading import binds, hardening, slots

HOLD_A_SLOT = textwrap.dedent("""
    import sys
    from labkit.grading.slots import Slot
    with Slot() as slot:
        print(slot.number, slot.uid, flush=True)
        sys.stdin.read()          # hold it until the test closes our stdin
""")


def _holder(env):
    proc = subprocess.Popen([sys.executable, "-c", HOLD_A_SLOT], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True, env=env)
    return proc, proc.stdout.readline().split()


def test_two_graders_with_different_temporary_folders_get_different_slots(tmp_path):
    env_a = {**os.environ, "TMPDIR": str(tmp_path / "a")}
    env_b = {**os.environ, "TMPDIR": str(tmp_path / "b")}
    for env in (env_a, env_b):
        Path(env["TMPDIR"]).mkdir()
    first, (number_a, uid_a) = _holder(env_a)
    try:
        second, (number_b, uid_b) = _holder(env_b)
        second.communicate("")
    finally:
        first.communicate("")
    assert number_a != number_b
    if os.geteuid() == 0:
        assert uid_a != uid_b
        assert slots.lock_folder() == Path("/run/labkit-grade")
    assert not str(slots.lock_folder()).startswith(str(tmp_path))


def test_a_slot_held_by_an_older_grader_is_not_taken(tmp_path, monkeypatch):
    """labkit 0.2 locked slots in $TMPDIR/labkit-grade-slots-<uid>/slot-N only."""
    import fcntl
    import tempfile
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)
    with slots.Slot() as probe:
        free = probe.number
    legacy = tmp_path / slots.LEGACY_FOLDER.format(uid=os.geteuid())
    legacy.mkdir(mode=0o700, exist_ok=True)
    fd = os.open(legacy / f"slot-{free}", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        with slots.Slot() as slot:
            assert slot.number != free
    finally:
        os.close(fd)


def test_an_unsafe_lock_folder_is_refused(tmp_path, monkeypatch):
    planted = tmp_path / "planted"
    planted.mkdir(mode=0o777)
    planted.chmod(0o777)
    monkeypatch.setattr(slots, "_candidate_folders", lambda uid: [planted])
    with pytest.raises(slots.SlotError, match="writable by other users"):
        slots.lock_folder()
    link = tmp_path / "link"
    link.symlink_to(tmp_path)
    monkeypatch.setattr(slots, "_candidate_folders", lambda uid: [link])
    with pytest.raises(slots.SlotError, match="not a folder"):
        slots.lock_folder()


def test_links_on_the_way_are_kept_to_be_made_again_inside(tmp_path):
    real = tmp_path / "real" / "venv"
    real.mkdir(parents=True)
    (tmp_path / "venv-link").symlink_to(real)
    (real / "inner").mkdir()
    (tmp_path / "rel").symlink_to("venv-link/inner")
    target, links = binds.resolve(tmp_path / "rel")
    assert target == real / "inner"
    assert links == [(tmp_path / "rel", "venv-link/inner"), (tmp_path / "venv-link", str(real))]
    layout = binds.Layout(folders=[real], links=[(tmp_path / "venv-link", str(real))])
    args = binds.arguments(layout)
    assert args[-3:] == ["--symlink", str(real), str(tmp_path / "venv-link")]
    assert ["--ro-bind", str(real), str(real)] == args[args.index("--ro-bind"):args.index("--ro-bind") + 3]


def test_a_folder_holding_the_instructor_material_is_refused(tmp_path):
    repo = tmp_path / "repo"
    (repo / "instructor" / "labkit_instructor").mkdir(parents=True)
    material = repo / "instructor" / "labkit_instructor"
    with pytest.raises(binds.BindError, match="also holds the instructor material"):
        binds.check(binds.Layout(folders=[repo], sources={repo: "on sys.path"}), hidden=[material])
    # the folder that holds the package itself is fine: the sandbox covers the package
    binds.check(binds.Layout(folders=[repo / "instructor"]), hidden=[material])
    # and so is a venv in whose site folder labkit-instructor is installed
    venv = tmp_path / "venv"
    installed = venv / "lib" / "python3.11" / "site-packages" / "labkit_instructor"
    installed.mkdir(parents=True)
    binds.check(binds.Layout(folders=[venv]), hidden=[installed])
    with pytest.raises(binds.BindError, match="makes its own"):
        binds.check(binds.Layout(folders=[Path("/proc/self")]))


def test_a_module_folder_the_sandbox_user_cannot_read_is_refused(tmp_path, monkeypatch):
    site = tmp_path / "site"
    (site / "numpy").mkdir(parents=True)
    site.chmod(0o700)
    monkeypatch.setattr(binds, "_module_folder", lambda name: (site / name, site) if name == "numpy" else None)
    with pytest.raises(binds.BindError) as caught:
        binds.check(binds.Layout(folders=[site]), sandbox_uid=os.geteuid() + 1)
    assert str(site) in str(caught.value) and "mode 700" in str(caught.value) and "numpy" in str(caught.value)
    site.chmod(0o755)
    binds.check(binds.Layout(folders=[site]), sandbox_uid=os.geteuid() + 1)


def test_this_interpreters_layout_binds_its_real_folders():
    layout = binds.layout()
    real = Path(os.path.realpath(sys.executable))
    assert any(real == f or f in real.parents for f in layout.folders + [Path("/usr")])
    assert all(f == Path(os.path.realpath(f)) for f in layout.folders)          # real paths only
    import labkit
    assert any(Path(labkit.__file__).resolve().parent == f or f in Path(labkit.__file__).resolve().parents
               for f in layout.folders)


def test_the_seccomp_program_is_well_formed():
    for machine in hardening.ARCHITECTURES:
        code = hardening.user_namespace_filter(machine)
        assert len(code) % 8 == 0 and len(code) // 8 == 13
    with pytest.raises(hardening.HardeningError, match="no seccomp filter"):
        hardening.user_namespace_filter("sparc")


@pytest.mark.skipif(not Path("/usr/bin/unshare").exists(), reason="util-linux's unshare is not installed")
def test_a_hardened_process_and_its_children_cannot_make_user_namespaces():
    script = textwrap.dedent("""
        import subprocess, sys
        from labkit.grading.hardening import harden
        before = subprocess.run(["unshare", "-U", "true"]).returncode
        harden()
        after = subprocess.run(["unshare", "-U", "true"], capture_output=True, text=True)
        print(before, after.returncode, "Operation not permitted" in after.stderr)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    before, after, refused = done.stdout.split()
    if before != "0":
        pytest.skip("this machine allows no user namespaces at all")
    assert after != "0" and refused == "True", done.stderr


def test_the_lock_folder_is_not_writable_by_others():
    folder = slots.lock_folder()
    mode = stat.S_IMODE(os.lstat(folder).st_mode)
    assert not mode & 0o022 and os.lstat(folder).st_uid == os.geteuid()


def test_the_driver_keeps_the_iri_grammar_out_and_still_refuses_a_malformed_notebook(tmp_path):
    """The driver leaves out rfc3987_syntax (jsonschema would build its grammar at import, most of
    the driver's start); nbformat's validation still refuses a malformed notebook there."""
    code = """
import sys
import labkit.grading.driver as driver
import nbformat
assert sys.modules.get("rfc3987_syntax") is None, "the IRI grammar was loaded"
driver._write_master({"cells": [["setup", None, "import labkit"]]}, sys.argv[1])
nbformat.validate(nbformat.read(sys.argv[1] + "/master.ipynb", as_version=4))
bad = nbformat.v4.new_notebook()
bad.cells.append({"cell_type": "code", "source": 1, "metadata": {}})     # no outputs, a number for source
try:
    nbformat.validate(bad)
except nbformat.ValidationError as exc:
    print("refused:", str(exc).splitlines()[0])
"""
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("refused:"), done.stdout + done.stderr[-2000:]


def test_the_instructor_material_computes_its_heavy_probes_on_first_use():
    """Importing labkit_instructor runs no solver: Lab 15's, 6.1's and 4.1's probe lists are
    computed when first used, once, and hold what their functions compute."""
    code = """
import sys
import labkit_instructor
from labkit_instructor.exercises import ex4_1, ex6_1, lab15
from labkit_instructor.checks.base import Lazy
lazy = [v for m in (ex4_1, ex6_1, lab15) for v in vars(m).values() if isinstance(v, Lazy)]
assert len(lazy) >= 10 and all(v._items is None for v in lazy), lazy
assert "numba" not in sys.modules, "a solver ran at import"
import numpy as np
assert len(lab15.NASH_CONV_PROBES) == lab15.PROBE_POLICIES + lab15.FRESH_POLICIES
assert list(lab15.FRESH_INDICES) == [3, 4]
assert all(np.array_equal(a, b) for a, b in zip(lab15.POLICIES, lab15._probe_policies()))
assert all(np.array_equal(a, b) for a, b in zip(ex6_1.RECORDINGS[0], ex6_1.recorded_cfr(25)))
print("ok")
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=900)
    if "No module named 'labkit_instructor'" in done.stderr:
        pytest.skip("labkit-instructor is not installed")
    assert done.stdout.strip() == "ok", done.stderr[-2000:]


def test_a_reference_asked_for_by_two_grading_threads_at_once_is_computed_once():
    """The hidden checks keep their reference runs with `computed_once`: while one thread computes
    a value, another asking for the same arguments waits for it instead of computing it again
    (plain lru_cache would run it twice), and other arguments are not held up."""
    base = pytest.importorskip("labkit_instructor.checks.base")
    import threading
    import time
    calls, started, release = [], threading.Event(), threading.Event()

    @base.computed_once
    def reference(name):
        calls.append(name)
        if name == "slow":
            started.set()
            release.wait(60)
        return f"value of {name}"

    results = []
    first = threading.Thread(target=lambda: results.append(reference("slow")))
    first.start()
    assert started.wait(60)
    second = threading.Thread(target=lambda: results.append(reference("slow")))
    second.start()
    assert reference("other") == "value of other"      # another argument: not blocked
    time.sleep(0.2)                                    # give the second thread time to start
    release.set()
    first.join(60)
    second.join(60)
    assert results == ["value of slow", "value of slow"]
    assert sorted(calls) == ["other", "slow"]
