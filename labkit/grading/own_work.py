"""Own work: which library code a part's answer may not call while the grader probes it.

A part that asks for an algorithm (Lab 15's NashConv, CFR, Monte Carlo CFR...) states in the
exercise which labkit functions the student may use -- the game, its arrays and `TabularPolicy`
-- and which it asks them to write. An `OwnWork` rule holds that statement; `CallMonitor`
enforces it in the kernel while the part's probe calls run.

How the monitor sees a call
---------------------------
It is a profile function (``sys.setprofile``, and ``threading.setprofile`` for threads started
later), installed around each probe call. Python calls it when any function starts ("call") and
when a built-in is called ("c_call"). A call is *guarded* when the function's code comes from a
guarded file (``labkit/evaluate.py``, ``labkit/cfr.py``...; OpenSpiel's Python files) or when the
built-in belongs to ``pyspiel``; it is *the student's* when the frame that made it is not genuine
library code. Matching by the file a code object was compiled from, not by the name it is reached
through, catches every route to the same code: ``lk.nash_conv``, ``labkit.evaluate.nash_conv``,
``getattr``, ``importlib``, a reloaded module, a method of a solver made in an earlier cell.
"Genuine" is checked against the code compiled from the read-only file on disk, so a trampoline
compiled under a labkit file name does not pass for labkit.

The monitor reports; it does not refuse (the student's code runs on, and the grader gives the
part 0 with a hint naming the call). Switching the monitor off during a probe (``sys.setprofile``,
``threading.setprofile``) is seen and reported the same way, and so is starting another process
(``os.fork``, ``subprocess``), whose calls no profile function can see.
"""
from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from contextlib import AbstractContextManager
    from types import CodeType, FrameType

# labkit's modules that hold no solver or evaluator: the games, the compiled tree, policies,
# messages, data, and the grading machinery itself (relative to the labkit package folder)
ALLOWED = ("__init__.py", "games", "tree.py", "policy.py", "_messages.py", "data", "grading")
# functions of an allowed module that compute what the parts ask for (own reach is half of a
# best response and of CFR's average)
GUARDED_FUNCTIONS = {"policy.py": ("realization_weights", "infoset_own_reach", "_own_depth_levels",
                                   "_own_depth_index")}
FOREIGN_PACKAGES = ("open_spiel",)       # pure-Python packages guarded as a whole, if installed
FOREIGN_BUILTINS = ("pyspiel",)          # compiled modules whose functions are guarded
MAX_FINDINGS = 3


@dataclass(frozen=True)
class OwnWork:
    """What a part asks the student to write, in words that complete "L15(d) asks you to ...".

    While the part's probe calls run, calls into labkit's solvers and evaluators (every labkit
    module but `ALLOWED`, and `GUARDED_FUNCTIONS`) and into OpenSpiel are reported.

    Attributes
    ----------
    task : str
        What the part asks for, e.g. ``"write NashConv yourself"``.

    Examples
    --------
    >>> OwnWork("write NashConv yourself").task
    'write NashConv yourself'
    """
    task: str

    def message(self, part: str, finding: Mapping[str, Any]) -> str:
        """The hint for one finding, e.g. "L15(d) asks you to write NashConv yourself; your
        `nash_conv` called `labkit.nash_conv`" (see the module function `message`).

        Parameters
        ----------
        part : str
        finding : dict
            One of `CallMonitor.watch`'s findings.

        Returns
        -------
        str

        Examples
        --------
        >>> rule = OwnWork("write NashConv yourself")
        >>> rule.message("L15(d)", {"name": "my_nash_conv", "called": "labkit.nash_conv", "thread": True})
        'L15(d) asks you to write NashConv yourself; your `my_nash_conv` called `labkit.nash_conv` (in a thread)'
        """
        return message(part, self.task, finding)

    def summary(self, part: str, findings: Iterable[Any]) -> str:
        """One hint for all the findings of a part: those of one function and one kind are
        named together ("your `cfr` called `labkit.CFR`, `labkit.CFR.run` and ...").

        Parameters
        ----------
        part : str
        findings : iterable of dict
            Anything else in it is skipped (findings come back from the kernel).

        Returns
        -------
        str
            The hints joined by ``"; "``; empty for no findings.

        Examples
        --------
        >>> rule = OwnWork("write CFR yourself")
        >>> print(rule.summary("L16(b)", [{"name": "my_cfr", "called": "labkit.CFR"},
        ...                               {"name": "my_cfr", "called": "labkit.CFR.run"},
        ...                               {"name": "my_cfr", "called": "os.fork", "process": True}, "junk"]))
        L16(b) asks you to write CFR yourself; your `my_cfr` called `labkit.CFR` and `labkit.CFR.run`;
        L16(b) asks you to write CFR yourself; your `my_cfr` started another process (`os.fork`),
        whose calls the grader cannot see
        """
        groups: dict[tuple[Any, bool, bool, bool, bool], list[str]] = {}
        for finding in findings:
            if isinstance(finding, dict):
                key = (finding.get("name"), bool(finding.get("thread")), bool(finding.get("static")),
                       bool(finding.get("tampered")), bool(finding.get("process")))
                groups.setdefault(key, []).append(str(finding.get("called", "?")))
        hints = []
        for (name, thread, static, tampered, process), called in groups.items():
            names = list(dict.fromkeys(called))
            joined = names[0] if len(names) == 1 else "`, `".join(names[:-1]) + "` and `" + names[-1]
            hints.append(message(part, self.task, {"name": name, "called": joined, "thread": thread,
                                                   "static": static, "tampered": tampered, "process": process}))
        return "; ".join(hints)


def message(part: str, task: str, finding: Mapping[str, Any]) -> str:
    """The hint for one finding: which function of the student's called what, or switched the
    grader's record off (``tampered``), or started another process (``process``); ``static``
    findings (read from the code, not seen running) say "uses".

    Parameters
    ----------
    part : str
        E.g. ``"L15(d)"``.
    task : str
        What the part asks for (`OwnWork.task`).
    finding : dict
        ``name`` (the student's function), ``called``, and the flags ``thread``, ``tampered``,
        ``process``, ``static``.

    Returns
    -------
    str

    Examples
    --------
    >>> print(message("L15(d)", "write NashConv yourself", {"name": "f", "called": "sys.setprofile", "tampered": True}))
    L15(d) asks you to write NashConv yourself; your `f` switched off the grader's record of the functions
    it calls (`sys.setprofile`)
    >>> message("L15(d)", "write NashConv yourself", {"name": "f", "called": "labkit.best_response", "static": True})
    'L15(d) asks you to write NashConv yourself; your `f` uses `labkit.best_response`'
    """
    name = finding.get("name", "?")
    where = " (in a thread)" if finding.get("thread") else ""
    if finding.get("tampered"):
        return (f"{part} asks you to {task}; your `{name}` switched off the grader's record of the "
                f"functions it calls (`{finding.get('called', '?')}`){where}")
    if finding.get("process"):
        return (f"{part} asks you to {task}; your `{name}` started another process "
                f"(`{finding.get('called', '?')}`), whose calls the grader cannot see{where}")
    verb = "uses" if finding.get("static") else "called"
    return f"{part} asks you to {task}; your `{name}` {verb} `{finding.get('called', '?')}`{where}"


def _labkit_folder():
    import labkit
    return os.path.dirname(os.path.abspath(labkit.__file__))


def guarded_files(folder: str | None = None) -> dict[str, tuple[str, ...] | None]:
    """{path: None (every function) or a tuple of guarded function names} for labkit's files:
    every Python file outside `ALLOWED`, and the files of `GUARDED_FUNCTIONS` with their names.

    Parameters
    ----------
    folder : str, optional
        labkit's package folder (default: the one imported).

    Returns
    -------
    dict of str to (tuple of str or None)

    Examples
    --------
    >>> files = {os.path.relpath(path, _labkit_folder()): names for path, names in guarded_files().items()}
    >>> files["cfr.py"], files["policy.py"][0], "tree.py" in files, os.path.join("games", "kuhn.py") in files
    (None, 'realization_weights', False, False)
    """
    folder = folder or _labkit_folder()
    out: dict[str, tuple[str, ...] | None] = {}
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in files:
            if not name.endswith(".py"):
                continue
            path = os.path.join(root, name)
            relative = os.path.relpath(path, folder)
            top = relative.split(os.sep)[0]
            if relative in GUARDED_FUNCTIONS:
                out[path] = GUARDED_FUNCTIONS[relative]
            elif top not in ALLOWED:
                out[path] = None
    return out


def foreign_files() -> tuple[dict[str, None], tuple[str, ...]]:
    """{path: None} for every Python file of the guarded pure-Python packages that are installed
    (found without importing them), and their folders.

    Returns
    -------
    (dict of str to None, tuple of str)
        Both empty where none of `FOREIGN_PACKAGES` is installed.

    Examples
    --------
    >>> files, folders = foreign_files()
    >>> all(path.endswith(".py") and path.startswith(folders) for path in files)
    True
    """
    import importlib.util
    files: dict[str, None] = {}
    folders: list[str] = []
    for package in FOREIGN_PACKAGES:
        try:
            spec = importlib.util.find_spec(package)
        except (ImportError, ValueError):
            spec = None
        for location in (spec.submodule_search_locations or []) if spec else []:
            folders.append(os.path.join(os.path.abspath(location), ""))
            for root, dirs, names in os.walk(location):
                dirs[:] = [d for d in dirs if d != "__pycache__"]
                files.update({os.path.join(os.path.abspath(root), n): None for n in names if n.endswith(".py")})
    return files, tuple(folders)


def _with_real_paths(paths):
    """The paths as given and as resolved, so that a link in the way changes nothing."""
    out = dict(paths)
    for path, value in paths.items():
        out.setdefault(os.path.realpath(path), value)
    return out


class CallMonitor:
    """Reports the student's calls into guarded code while a probe call runs.

    Build it before any student code runs (the sealed reporter does); it captures what it needs
    (``sys.setprofile``, the guarded files) so that replacing them later changes nothing. Use::

        with monitor.watch("nash_conv") as findings:
            result = function(*args)
        # findings: [{"name": "nash_conv", "called": "labkit.nash_conv", "thread": False}, ...]

    Parameters
    ----------
    threads : bool
        Install the profile function for good in the threads started from now on
        (``threading.setprofile``): the sealed reporter's choice, made before any student code
        runs. Without it (the notebook's own check) only threads started during a watch have it.

    Examples
    --------
    A function written here (not in labkit's files) that calls labkit's NashConv is reported:

    >>> import labkit as lk
    >>> monitor = CallMonitor()
    >>> def my_nash_conv(game, policy):
    ...     return lk.nash_conv(game, policy)
    >>> game = lk.games.load("kuhn_poker")
    >>> with monitor.watch("my_nash_conv") as findings:
    ...     value = my_nash_conv(game, lk.uniform_policy(game))
    >>> findings
    [{'called': 'labkit.nash_conv', 'thread': False, 'name': 'my_nash_conv'}]
    """

    def __init__(self, threads: bool = False) -> None:
        import sys
        import threading
        self._setprofile, self._getprofile = sys.setprofile, sys.getprofile
        self._threading = threading
        self._threading_setprofile = threading.setprofile
        self._get_ident, self._main = threading.get_ident, threading.main_thread().ident
        folder = _labkit_folder()
        self._folders = (os.path.join(folder, ""), os.path.join(os.path.realpath(folder), ""))
        # the grader's own frames: a guarded function called straight from them is the probed
        # callable itself (functools.partial(lk.nash_conv, leduc), say)
        self._grading = tuple(os.path.join(f, "grading", "") for f in self._folders)
        foreign, self._foreign_folders = foreign_files()
        self._guarded = _with_real_paths({**guarded_files(folder), **foreign})
        # path -> {(first line, qualified name): bytecode}
        self._genuine: dict[str, dict[tuple[int, str], bytes]] = {}
        self._roots = _library_roots(self._folders + self._foreign_folders)
        self._current_frames = sys._current_frames
        self._state = [None]                   # [findings list] while a watch is open
        self._hook = self._make_hook()
        self._threads = threads
        if threads:
            threading.setprofile(self._hook)

    # ---------------------------------------------------------------- the profile function
    def _make_hook(self):
        import sys
        import threading
        state, guarded, builtins = self._state, self._guarded, FOREIGN_BUILTINS
        starters = _process_starters()
        switch_off, switch_off_threads = sys.setprofile, threading.setprofile.__code__
        record, get_ident, main = self._record, self._get_ident, self._main

        def hook(frame, event, arg):
            findings = state[0]
            if findings is None:
                return
            if event == "call":
                code = frame.f_code
                names = guarded.get(code.co_filename, False)
                if names is None or (names and code.co_name in names):
                    record(findings, frame.f_back, frame, None, get_ident() != main)
                elif code is switch_off_threads:
                    record(findings, frame.f_back, None, "threading.setprofile", get_ident() != main)
            elif event == "c_call":
                if arg is switch_off:
                    record(findings, frame, None, "sys.setprofile", get_ident() != main)
                elif arg in starters:
                    record(findings, frame, None, starters[arg], get_ident() != main, tampered="process")
                else:
                    module = getattr(arg, "__module__", None)
                    if module and module.split(".")[0] in builtins:
                        record(findings, frame, None, f"{module}.{getattr(arg, '__name__', '?')}",
                               get_ident() != main, tampered=False)
        return hook

    def _record(self, findings, caller, frame, called, in_thread, tampered=None):
        if frame is not None and frame.f_code.co_name == "<module>":
            return                              # importing a module is not using it
        if caller is None and (not in_thread or findings):
            return                              # called from C with no Python caller: numba compiling
            #                                     a kernel (a thread's entry point is the exception)
        if self.made_by_library(caller):
            return                              # labkit calling its own helpers
        if len(findings) >= MAX_FINDINGS:
            return
        if tampered is None:
            tampered = called is not None       # only the switches are named by the hook
        finding = {"called": called or self.public_name(frame), "thread": bool(in_thread)}
        if tampered == "process":
            finding["process"] = True
        elif tampered:
            finding["tampered"] = True
        if finding not in findings:
            findings.append(finding)

    # ---------------------------------------------------------------- genuine library code
    def made_by_library(self, caller: FrameType | None) -> bool:
        """True when the call was made by labkit itself: going up from `caller` through
        installed libraries' code (numba compiling a kernel, importlib), the first frame that is
        not such code is labkit's. False when it is the student's: code written in the notebook
        or in a file of their own, or code that claims a library's file name but is not what the
        file on disk compiles to.

        Parameters
        ----------
        caller : frame or None
            The frame that made the call.

        Returns
        -------
        bool

        Examples
        --------
        >>> import sys
        >>> import labkit as lk
        >>> monitor = CallMonitor()
        >>> try:
        ...     lk.nash_conv("no_such_game", None)
        ... except ValueError as exc:
        ...     inside = exc.__traceback__.tb_next.tb_frame                # nash_conv's own frame
        >>> monitor.made_by_library(inside), monitor.made_by_library(sys._getframe())
        (True, False)
        """
        frame = caller
        while frame is not None:
            code = frame.f_code
            if not code.co_filename.startswith("<frozen "):
                if not self.is_library(code) or code.co_filename.startswith(self._grading):
                    return False                # the student's code, or the probe call itself
                if code.co_filename.startswith(self._folders):
                    return True
            frame = frame.f_back                # another library's code: look at who called it
        return False

    def is_library(self, code: CodeType) -> bool:
        """True for code of an installed library (labkit, OpenSpiel, the standard library,
        site-packages) as its file on disk compiles it; the student can write neither there.

        Parameters
        ----------
        code : code object

        Returns
        -------
        bool

        Examples
        --------
        >>> import json
        >>> def mine():
        ...     pass
        >>> monitor = CallMonitor()
        >>> monitor.is_library(json.dumps.__code__), monitor.is_library(mine.__code__)
        (True, False)
        """
        return code.co_filename.startswith(self._roots) and self.is_genuine(code)

    def busy_threads(self) -> int:
        """How many threads other than this one are running the student's code right now
        (a frame of theirs anywhere on the thread's stack).

        Returns
        -------
        int

        Examples
        --------
        >>> import threading
        >>> monitor, stop = CallMonitor(), threading.Event()
        >>> before = monitor.busy_threads()         # whatever else runs in this process
        >>> def waiting():                          # code of "the student's", waiting in a thread
        ...     stop.wait()
        >>> thread = threading.Thread(target=waiting)
        >>> thread.start()
        >>> monitor.busy_threads() - before
        1
        >>> stop.set(); thread.join()
        >>> monitor.busy_threads() - before
        0
        """
        here, count = self._get_ident(), 0
        frame: FrameType | None     # for mypy only: a local annotation is never evaluated
        for ident, frame in self._current_frames().items():
            if ident == here:
                continue
            while frame is not None:
                code = frame.f_code
                if not code.co_filename.startswith("<frozen ") and not self.is_library(code):
                    count += 1
                    break
                frame = frame.f_back
        return count

    def is_genuine(self, code: CodeType) -> bool:
        """True for a code object compiled from a file as it is on disk (labkit's, OpenSpiel's,
        the standard library's...); False for anything else, such as notebook code or code
        compiled under a file name it does not come from.

        Parameters
        ----------
        code : code object

        Returns
        -------
        bool

        Examples
        --------
        A function compiled under the name of labkit's file ``evaluate.py`` does not pass for it:

        >>> import labkit.evaluate
        >>> monitor = CallMonitor()
        >>> namespace, source = {}, "def nash_conv(game, policy):\\n    return 0.0\\n"
        >>> exec(compile(source, labkit.evaluate.__file__, "exec"), namespace)
        >>> monitor.is_genuine(labkit.evaluate.nash_conv.__code__), monitor.is_genuine(namespace["nash_conv"].__code__)
        (True, False)
        """
        path = code.co_filename
        table = self._genuine.get(path)
        if table is None:
            table = self._genuine[path] = _compiled_codes(path)
        return table.get((code.co_firstlineno, _qualname(code))) == code.co_code

    def public_name(self, frame: FrameType) -> str:
        """How the student reached the guarded code: ``labkit.nash_conv``, ``labkit.CFRPlus``,
        ``labkit.CFRPlus.run``, ``labkit.evaluate.edge_probabilities``, or OpenSpiel's module path.

        Parameters
        ----------
        frame : frame
            The guarded function's own frame.

        Returns
        -------
        str

        Examples
        --------
        >>> import labkit as lk
        >>> try:
        ...     lk.nash_conv("no_such_game", None)
        ... except ValueError as exc:
        ...     inside = exc.__traceback__.tb_next.tb_frame                # nash_conv's own frame
        >>> CallMonitor().public_name(inside)
        'labkit.nash_conv'
        """
        code = frame.f_code
        module = _module_name(code.co_filename, self._folders, self._foreign_folders)
        qualname = _qualname(code)
        owner = None
        if "." in qualname and code.co_argcount and code.co_varnames[0] in ("self", "cls"):
            try:
                first = frame.f_locals.get(code.co_varnames[0])
                owner = first if isinstance(first, type) else type(first)
            except Exception:
                owner = None
        if owner is not None:
            public = next((c for c in owner.__mro__ if str(getattr(c, "__module__", "")).startswith(
                ("labkit.", "open_spiel."))), owner)
            method = qualname.rsplit(".", 1)[1]
            base = _root_name(public.__name__, public) or f"{public.__module__}.{public.__qualname__}"
            return base if method == "__init__" else f"{base}.{method}"
        return _root_name(qualname, None, module) or f"{module}.{qualname}"

    # ---------------------------------------------------------------- watching
    def watch(self, name: str) -> AbstractContextManager[list[dict[str, Any]]]:
        """A context manager: the findings of the student's calls while it is open (a list
        that fills as they happen), each with ``name`` (the probed function) added.

        Parameters
        ----------
        name : str
            The probed function, as the hints name it.

        Returns
        -------
        context manager
            Entering it gives the list of findings; at most `MAX_FINDINGS` are kept, and
            switching the monitor off inside is itself a finding.

        Examples
        --------
        >>> import sys
        >>> monitor = CallMonitor()
        >>> with monitor.watch("sneaky") as findings:
        ...     sys.setprofile(None)
        >>> findings
        [{'called': 'sys.setprofile', 'thread': False, 'tampered': True, 'name': 'sneaky'}]
        """
        return _Watch(self, name)


class _Watch:
    def __init__(self, monitor, name):
        self.monitor, self.name, self.findings = monitor, name, []

    def __enter__(self):
        m = self.monitor
        self._previous = m._getprofile()
        if not m._threads:
            self._previous_threads = getattr(m._threading, "_profile_hook", None)
            m._threading_setprofile(m._hook)
        m._state[0] = self.findings
        m._setprofile(m._hook)
        return self.findings

    def __exit__(self, *exc):
        m = self.monitor
        still = m._getprofile() is m._hook
        m._state[0] = None                      # first, so that the calls below are not seen
        m._setprofile(None if self._previous is m._hook else self._previous)
        if not m._threads:
            m._threading_setprofile(self._previous_threads)
        if not still and not any(f.get("tampered") for f in self.findings):
            self.findings.append({"called": "sys.setprofile", "thread": False, "tampered": True})
        for finding in self.findings:
            finding["name"] = self.name
        return False


def _process_starters():
    """{built-in: name} of the functions that start another process, whose calls no profile
    function sees (os.fork, os.posix_spawn, subprocess's fork_exec, os.system, the exec family)."""
    import importlib
    out = {}
    for module, names in (("os", ("fork", "forkpty", "posix_spawn", "posix_spawnp", "system", "execv", "execve")),
                          ("_posixsubprocess", ("fork_exec",))):
        try:
            found = importlib.import_module(module)
        except ImportError:
            continue
        for name in names:
            function = getattr(found, name, None)
            if function is not None:
                out[function] = f"{module.lstrip('_')}.{name}"
    return out


def _library_roots(extra=()):
    """Folders of installed code: the interpreter's prefixes, the site-packages, and `extra`."""
    import site
    import sys
    folders = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix, *extra}
    try:
        folders.update(site.getsitepackages())
    except AttributeError:                      # some virtualenvs lack it
        pass
    out = set()
    for folder in folders:
        for form in (os.path.abspath(folder), os.path.realpath(folder)):
            out.add(os.path.join(form, ""))
    return tuple(sorted(out))


def _qualname(code):
    """A code object's qualified name (Python 3.11 on; its plain name before)."""
    return getattr(code, "co_qualname", code.co_name)


def _compiled_codes(path):
    """{(first line, qualified name): bytecode} of every code object in a file, compiled afresh."""
    try:
        with open(path, "rb") as f:
            source = f.read()
        top = compile(source, path, "exec", dont_inherit=True)
    except (OSError, SyntaxError, ValueError):
        return {}
    table, stack = {}, [top]
    while stack:
        code = stack.pop()
        table[(code.co_firstlineno, _qualname(code))] = code.co_code
        stack.extend(c for c in code.co_consts if hasattr(c, "co_code"))
    return table


def _module_name(path, folders, foreign):
    path = os.path.abspath(path)
    for folder in folders:
        if path.startswith(folder):
            relative = os.path.relpath(path, folder)
            parts = ["labkit", *relative[:-3].split(os.sep)]
            return ".".join(p for p in parts if p != "__init__")
    for prefix in foreign:
        if path.startswith(prefix):
            package = os.path.basename(prefix.rstrip(os.sep))
            relative = os.path.relpath(path, prefix)
            return ".".join([package, *relative[:-3].split(os.sep)])
    return os.path.basename(path)


def _root_name(name, owner=None, module=None):
    """``labkit.<name>`` when the package exports that very object (or the lazy name), else None."""
    import sys
    labkit = sys.modules.get("labkit")
    if labkit is None or "." in name:
        return None
    lazy = getattr(labkit, "_LAZY", {})
    if owner is not None:
        return f"labkit.{name}" if lazy.get(name) == owner.__module__ or \
            labkit.__dict__.get(name) is owner else None
    exported = labkit.__dict__.get(name)
    if exported is not None and getattr(exported, "__module__", None) == module:
        return f"labkit.{name}"
    return None
