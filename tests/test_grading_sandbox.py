"""The grading sandbox itself: what a cell inside sees, and what the grader does without one.

One sandboxed job answers most questions at once: its answer cells raise an error whose message
is a JSON report of what the cell found (user ids, processes, network, files, environment,
limits), which the driver's event carries out.
"""
import json
import os
import socket
from pathlib import Path

import labkit
import pytest

from _grading_support import EXERCISES, INSTRUCTOR, ROOT
from labkit.grading import cgroups, sandbox
from labkit.grading.__main__ import NO_SANDBOX_WARNING, main

needs_sandbox = pytest.mark.sandbox

PACKAGE = Path(labkit.__file__).resolve().parent

LOOK_AROUND = '''
import json, os, resource, socket
facts = {"uid": os.getuid(), "euid": os.geteuid(), "groups": os.getgroups()}
facts["pids"] = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
facts["env"] = sorted(os.environ)
facts["root"] = sorted(os.listdir("/"))
facts["limits"] = {name: resource.getrlimit(getattr(resource, name))[0]
                   for name in ("RLIMIT_AS", "RLIMIT_NPROC", "RLIMIT_CPU", "RLIMIT_FSIZE", "RLIMIT_NOFILE")}
def attempt(f):
    try:
        f()
        return "ok"
    except Exception as exc:
        return type(exc).__name__
facts["write_package"] = attempt(lambda: open(os.path.join(os.path.dirname(__import__("labkit").__file__),
                                                            "owned.py"), "w"))
facts["connect_out"] = attempt(lambda: socket.create_connection(("1.1.1.1", 53), timeout=2))
facts["connect_host_port"] = attempt(lambda: socket.create_connection(("127.0.0.1", PORT), timeout=2))
facts["interfaces"] = sorted(n for _, n in socket.if_nameindex())
facts["instructor"] = attempt(lambda: __import__("labkit_instructor"))
facts["visible"] = [p for p in PATHS if os.path.exists(p)]
facts["tmp_writable"] = attempt(lambda: open("/tmp/x", "w").write("x"))
facts["caps"] = [l for l in open("/proc/self/status").read().splitlines() if l.startswith(("CapEff", "NoNewPrivs"))]
# matplotlib's folder before anything imported matplotlib, and the grader's read-only files
facts["mpl_config"] = sorted(os.listdir(os.environ["MPLCONFIGDIR"])) if os.path.isdir(os.environ["MPLCONFIGDIR"]) else None
facts["font_list_write"] = attempt(lambda: open("/run/labkit/matplotlib/planted.json", "w"))
facts["cpu_usage"] = attempt(lambda: float(open("/run/labkit/cpu-usage").read().split()[-1]))
# a user namespace of its own would make the cell "root" there, free to mount over /usr
import ctypes, subprocess
done = subprocess.run(["unshare", "-Urm", "sh", "-c", "mount -t tmpfs none /usr && echo mounted"],
                      capture_output=True, text=True)
facts["unshare"] = [done.returncode, done.stdout + done.stderr]
libc = ctypes.CDLL(None, use_errno=True)
facts["unshare_call"] = [libc.unshare(0x10000000), ctypes.get_errno()]       # CLONE_NEWUSER
# the driver (the kernel's parent) cannot be read or traced by the kernel's code
driver = os.getppid()
facts["driver"] = open(f"/proc/{driver}/cmdline", "rb").read().replace(b"\\0", b" ").decode()
facts["driver_environ"] = attempt(lambda: open(f"/proc/{driver}/environ", "rb").read())
facts["driver_mem"] = attempt(lambda: open(f"/proc/{driver}/mem", "rb"))
facts["driver_fd"] = attempt(lambda: os.listdir(f"/proc/{driver}/fd"))
raise RuntimeError("FACTS" + json.dumps(facts))
'''


def _facts(job_cells, monkeypatch=None):
    job = {"cells": [["setup", None, "import numpy"], *job_cells], "timeout": 30, "setup_timeout": 60,
           "budget": 120, "seals": [{"nonce": "0" * 32, "specs": {}}]}
    run = sandbox.run_driver(job, sandbox=True, wall=200)
    cells = [e for e in run.events if e.get("event") == "cell"]
    return run, cells


@pytest.fixture(scope="module")
def host_port():
    """A port listening on the host's loopback: a sandboxed cell must not reach it."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    yield server.getsockname()[1]
    server.close()


@pytest.fixture(scope="module")
def inside(host_port, tmp_path_factory):
    paths = [str(ROOT / "solutions"), str(ROOT / "tests"), str(INSTRUCTOR), str(Path.home() / ".bashrc"),
             str(tmp_path_factory.getbasetemp()), "/home"]
    run, cells = _facts([["answer", "x", LOOK_AROUND.replace("PORT", str(host_port)).replace("PATHS", repr(paths))]])
    (event,) = cells
    assert event["status"] == "error" and "FACTS" in event["error"], (event, run.stderr)
    return {**json.loads(event["error"].split("FACTS", 1)[1]), "confinement": run.confinement}


@needs_sandbox
def test_a_sandbox_has_its_own_unprivileged_user_and_processes(inside):
    if os.geteuid() == 0:
        assert sandbox.UID_BASE <= inside["uid"] < sandbox.UID_BASE + sandbox.SLOTS
        assert inside["euid"] == inside["uid"] and inside["groups"] in ([], [inside["uid"]])
        assert "CapEff:\t0000000000000000" in inside["caps"] and "NoNewPrivs:\t1" in inside["caps"]
    assert len(inside["pids"]) <= 5                      # init, driver, kernel: nothing of the host


@needs_sandbox
def test_the_kernel_starts_with_the_graders_font_list_and_reads_its_cpu_counter(inside):
    """The grader builds matplotlib's font list once and the driver copies it into the kernel's
    own matplotlib folder before the kernel starts (each kernel building it cost ~4 CPU-s); the
    shared copy is read-only. /run/labkit, where both grader files are bound, is readable inside
    (bubblewrap made it mode 700, and the driver's meter silently lost the control group's CPU
    counter)."""
    if sandbox.matplotlib_font_cache() is None:
        pytest.skip("matplotlib's font list could not be built here")
    assert any(name.startswith("fontlist-") for name in inside["mpl_config"] or []), inside["mpl_config"]
    assert inside["font_list_write"] != "ok"
    if inside["confinement"].startswith("cgroup"):
        assert inside["cpu_usage"] == "ok", inside["cpu_usage"]


@needs_sandbox
def test_a_sandbox_has_no_network_and_a_read_only_package(inside):
    assert inside["connect_out"] != "ok" and inside["connect_host_port"] != "ok"
    assert inside["interfaces"] == ["lo"]
    assert inside["write_package"] in ("OSError", "PermissionError")
    assert inside["tmp_writable"] == "ok"
    assert inside["visible"] == []                       # no repository, home, submissions, material
    assert inside["instructor"] in ("ModuleNotFoundError", "ImportError")


@needs_sandbox
def test_no_user_namespace_can_be_made_inside(inside):
    code, text = inside["unshare"]
    assert code != 0 and "mounted" not in text and "Operation not permitted" in text
    assert inside["unshare_call"] == [-1, 1]                 # EPERM


@needs_sandbox
def test_the_kernel_cannot_read_or_trace_its_driver(inside):
    assert "-m labkit.grading.driver" in inside["driver"]       # it is the driver we looked at
    assert inside["driver_environ"] == inside["driver_mem"] == inside["driver_fd"] == "PermissionError"


@needs_sandbox
def test_a_sandbox_sees_a_clean_environment_and_its_limits(inside):
    assert not [k for k in inside["env"] if "SECRET" in k or k.startswith(("SSH", "AWS"))]
    assert set(inside["env"]) <= set(sandbox.environment("/tmp")) | {"JPY_PARENT_PID", "PYDEVD_USE_FRAME_EVAL",
                                                                   "CLICOLOR", "CLICOLOR_FORCE", "FORCE_COLOR", "PAGER", "GIT_PAGER", "PWD",
                                                                   "TERM", "MPLBACKEND", "JPY_SESSION_NAME"}
    limits = sandbox.DEFAULT_LIMITS
    assert inside["limits"]["RLIMIT_AS"] == limits.memory
    assert inside["limits"]["RLIMIT_FSIZE"] == limits.file_size
    assert inside["limits"]["RLIMIT_NOFILE"] == limits.open_files
    if os.geteuid() == 0:            # with a control group, its pids.max is the tighter limit
        grouped = cgroups.available()[0] is not None
        assert inside["limits"]["RLIMIT_NPROC"] == limits.processes + (sandbox.NPROC_SLACK if grouped else 0)


@needs_sandbox
def test_an_installed_instructor_package_cannot_be_imported_inside(monkeypatch):
    """Simulate labkit-instructor installed next to labkit: the sandbox covers it with a package
    that refuses to import. (Not under /tmp, which the sandbox replaces by its own.)"""
    import dataclasses
    import shutil
    import tempfile
    site = Path(tempfile.mkdtemp(prefix="labkit-site-", dir="/var/tmp"))
    site.chmod(0o755)
    monkeypatch.setattr(sandbox, "_blocker", {})
    shutil.copytree(PACKAGE, site / "labkit", ignore=shutil.ignore_patterns("__pycache__", "data"))
    shutil.copytree(INSTRUCTOR / "labkit_instructor", site / "labkit_instructor",
                    ignore=shutil.ignore_patterns("__pycache__"))
    layout = sandbox.python_layout()
    with_site = dataclasses.replace(layout, folders=[*layout.folders, site], pythonpath=[*layout.pythonpath, str(site)])
    monkeypatch.setattr(sandbox, "python_layout", lambda hidden=(): with_site)
    probe = ("import os, sys\nsys.path.insert(0, %r)\n"
             "listing = sorted(os.listdir(%r))\n"
             "try:\n    import labkit_instructor\n    outcome = 'imported'\n"
             "except ImportError as exc:\n    outcome = str(exc)\n"
             "raise RuntimeError(f'{outcome} {listing}')\n") % (str(site), str(site / "labkit_instructor"))
    try:
        run, cells = _facts([["answer", "x", probe]])
    finally:
        shutil.rmtree(site)
    assert len(cells) == 1, run.stderr
    (event,) = cells
    assert "not available inside the grading sandbox" in event["error"], event
    assert "['__init__.py']" in event["error"]             # the real modules are not even listed


def test_the_grader_refuses_without_a_sandbox_and_says_how_to_get_one(tmp_path, monkeypatch, capsys):
    nb = tmp_path / "sub.ipynb"
    import nbformat
    nbformat.write(EXERCISES["27.2"].notebook(), nb)
    monkeypatch.setattr(sandbox, "_checked", {})
    monkeypatch.setattr(sandbox.shutil, "which", lambda name: None)
    assert main([str(nb), "--instructor", str(INSTRUCTOR)]) == 2
    err = capsys.readouterr().err
    assert "refusing to grade" in err and "apt-get install bubblewrap" in err and "--no-sandbox" in err


def test_no_sandbox_grades_with_a_warning_on_every_run(tmp_path, capfd):
    import nbformat
    nbformat.write(EXERCISES["27.2"].notebook(solution=True), tmp_path / "sub.ipynb")
    for _ in range(2):
        assert main([str(tmp_path / "sub.ipynb"), "--instructor", str(INSTRUCTOR), "--no-sandbox"]) == 0
        out, err = capfd.readouterr()
        assert "total  7/7" in out
        assert err.count(NO_SANDBOX_WARNING) >= 1
        assert "WARNING | Kernel" not in err and "Traceback" not in err      # no per-kernel noise
