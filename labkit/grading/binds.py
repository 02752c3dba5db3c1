"""What the sandbox shows of the grader's Python: the interpreter, its libraries and labkit, as they really are.

A sandbox starts from an empty root and binds, read-only, only what its driver and kernel need.
A Python installation is more than ``sys.prefix``:

* the interpreter may be reached through links (a ``.venv`` that is a link to a venv elsewhere,
  a venv's ``bin/python`` that links to a pyenv or conda interpreter);
* its ``sys.path`` holds folders that ``.pth`` files add (anywhere on the disk) and the user's
  site folder;
* editable installs map packages to folders that are not on ``sys.path`` at all (setuptools'
  ``__editable__`` finders).

`layout` asks the interpreter itself -- a fresh ``python -c`` from ``/`` without PYTHONPATH, so
that the grader's working folder and a test runner's paths do not count -- for its
``sys.path``, prefixes and editable mappings, adds labkit's own folder and the folders of the
modules the driver and kernel import (`NEEDED`, as the grader found them), and turns that into
bind mounts of the real folders plus the links that lead to them, recreated inside so that every
path reads the same in the sandbox as outside.

`check` refuses, with `BindError` naming the folder and the reason, what cannot be shown safely
or at all: a folder around the instructor material other than the site folder of an installed
``labkit_instructor`` (which the sandbox covers with a package that refuses to import) -- a
repository's root, say, which also holds the worked solutions --, a folder the sandbox replaces
(/proc, /dev, /sys), or a module folder the sandbox's user may not read.
The grader then refuses to start and prints that message.
"""
from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# the top-level modules the driver and its kernel import (labkit's own dependencies included)
NEEDED = ("labkit", "nbclient", "nbformat", "jupyter_client", "jupyter_core", "ipykernel", "IPython", "zmq",
          "tornado", "traitlets", "numpy", "scipy", "matplotlib")
SYSTEM = ("/usr", "/etc")                  # bound whole by the sandbox
REPLACED = ("/proc", "/dev", "/sys")       # made fresh inside: nothing of the host's can be bound there
INSTRUCTOR_PACKAGE = "labkit_instructor"
SITE_FOLDERS = ("site-packages", "dist-packages")

QUERY = """
import json, site, sys
editable = {}
for name, module in list(sys.modules.items()):
    mapping = getattr(module, "MAPPING", None) if name.startswith("__editable__") else None
    if isinstance(mapping, dict):
        editable.update({str(k): str(v) for k, v in mapping.items()})
print(json.dumps({"path": sys.path, "prefixes": [sys.prefix, sys.base_prefix, sys.exec_prefix,
                  sys.base_exec_prefix], "editable": editable}))
"""


class BindError(RuntimeError):
    """A folder the sandbox needs cannot be shown to it; the message says which and why.

    Examples
    --------
    >>> try:
    ...     check(Layout(folders=[Path("/proc/python")]))
    ... except BindError as error:
    ...     print(error)
    /proc/python () cannot be shown inside the sandbox, which makes its own /proc, /dev, /sys; \
install the grader's Python elsewhere
    """


@dataclass
class Layout:
    """What a sandbox binds of the grader's Python.

    Attributes
    ----------
    folders : list of Path
        Real folders (no link on their path) bound read-only at the same place.
    links : list of (Path, str)
        Links recreated inside: (where, what it points to), as on the host.
    pythonpath : list of str
        PYTHONPATH of the driver and kernel: labkit's parent folder, then folders of `NEEDED`
        modules that the interpreter alone would not find.
    user_base : str or None
        The grader's user base when it imports from its user site (then set as PYTHONUSERBASE
        inside, and the user site stays on); None: the user site is off inside.
    sources : dict
        For each bound folder, why (for messages).

    Examples
    --------
    >>> Layout(folders=[Path("/opt/py/lib")], links=[(Path("/opt/venv"), "py")]).user_base is None
    True
    """
    folders: list = field(default_factory=list)
    links: list = field(default_factory=list)
    pythonpath: list = field(default_factory=list)
    user_base: str | None = None
    sources: dict = field(default_factory=dict)


def _ask_interpreter(executable):
    """The interpreter's own sys.path, prefixes and editable mappings (see `QUERY`)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON") or k == "PYTHONHOME"}
    done = subprocess.run([executable, "-c", QUERY], capture_output=True, text=True, cwd="/", env=env, timeout=120)
    if done.returncode != 0:
        raise BindError(f"the grader's Python ({executable}) could not describe itself: "
                        f"{done.stderr.strip().splitlines()[-1:] or done.returncode}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def resolve(path: str | os.PathLike[str], limit: int = 40) -> tuple[Path, list[tuple[Path, str]]]:
    """(real path, links met on the way): every link on `path`, in order, as (link, its target).

    Unlike ``os.path.realpath`` this keeps the links, so that the sandbox can recreate them.

    Parameters
    ----------
    path : str or path
        Absolute.
    limit : int, default 40
        Links followed at most.

    Returns
    -------
    (pathlib.Path, list of (pathlib.Path, str))

    Raises
    ------
    BindError
        On a loop of links.

    Examples
    --------
    >>> import os, tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     os.makedirs(os.path.join(folder, "real", "lib"))
    ...     os.symlink("real", os.path.join(folder, "venv"))
    ...     real, links = resolve(os.path.join(folder, "venv", "lib"))
    ...     print(real == Path(folder).resolve() / "real" / "lib", [(link.name, target) for link, target in links])
    True [('venv', 'real')]
    """
    links, current, pending, hops = [], Path("/"), list(Path(path).parts[1:]), 0
    while pending:
        name = pending.pop(0)
        if name in ("", "."):
            continue
        if name == "..":
            current = current.parent
            continue
        candidate = current / name
        if candidate.is_symlink():
            hops += 1
            if hops > limit:
                raise BindError(f"{path} has a loop of symbolic links")
            target = os.readlink(candidate)
            links.append((candidate, target))
            rest = Path(target)
            pending = list(rest.parts[1:] if rest.is_absolute() else rest.parts) + pending
            current = Path("/") if rest.is_absolute() else current
        else:
            current = candidate
    return current, links


def _module_folder(name):
    """(folder of the module `name` as the grader imports it, the sys.path entry holding it), or None."""
    import importlib.util
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    if spec.submodule_search_locations:
        folder = Path(list(spec.submodule_search_locations)[0])
    elif spec.origin and os.path.isabs(spec.origin):
        folder = Path(spec.origin).parent
    else:
        return None
    entry = folder.parent if spec.submodule_search_locations else folder
    return folder, entry


def _inside(path, folders):
    return any(path == f or f in path.parents for f in folders)


def layout(hidden: Iterable[Any] = ()) -> Layout:
    """The `Layout` of this process's interpreter (see the module's docstring).

    Parameters
    ----------
    hidden : iterable of Path
        Folders of the instructor material (``labkit_instructor``): never bound, and an
        editable mapping to one is left out.

    Returns
    -------
    Layout

    Raises
    ------
    BindError
        When the interpreter cannot describe itself.

    Examples
    --------
    >>> import labkit
    >>> found = layout()
    >>> any(Path(labkit.__file__).resolve().is_relative_to(folder) for folder in found.folders)
    True
    """
    import labkit
    hidden = [Path(h).resolve() for h in hidden]
    asked = _ask_interpreter(sys.executable)
    wanted: dict[Path, str] = {}                  # path as used -> why

    def want(path, why):
        if path and os.path.isabs(path) and os.path.exists(path):
            wanted.setdefault(str(path), why)

    for p in asked["prefixes"] + [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix]:
        want(p, "a prefix of the grader's Python")
    want(str(Path(sys.executable).parent), "the folder of the grader's Python")
    want(str(Path(os.path.realpath(sys.executable)).parent.parent), "the installation of the grader's Python")
    for entry in asked["path"]:
        want(entry, "on the grader's Python's sys.path (a site folder or a .pth file)")
    for name, target in asked["editable"].items():
        if name.split(".")[0] != INSTRUCTOR_PACKAGE and not _inside(Path(target).resolve(), hidden):
            want(target, f"an editable install of {name}")
    package = Path(labkit.__file__).parent
    want(str(package), "labkit, as the grader imports it")
    pythonpath = [str(package.parent)]
    for name in NEEDED[1:]:
        found = _module_folder(name)
        if found and not any(_inside(Path(found[0]).resolve(), [Path(w).resolve()]) for w in wanted):
            want(str(found[1]), f"where the grader imports {name} from")
            pythonpath.append(str(found[1]))
    user_base = None
    import site
    if site.ENABLE_USER_SITE and site.USER_SITE in sys.path and os.path.isdir(site.USER_SITE):
        want(site.USER_SITE, "the user's site folder")
        user_base = site.USER_BASE

    out = Layout(pythonpath=pythonpath, user_base=user_base)
    real: dict[Any, Any] = {}
    for path, why in wanted.items():
        target, links = resolve(path)
        real.setdefault(target, why)
        out.links += [link for link in links if link not in out.links]
    system = [Path(s) for s in SYSTEM]
    kept = [p for p in sorted(real, key=lambda p: len(p.parts)) if not _inside(p, system)]
    for p in kept:
        if not _inside(p, out.folders):
            out.folders.append(p)
            out.sources[p] = real[p]
    top = {Path("/") / name for name in ("bin", "sbin", "lib", "lib64", "lib32", "libx32")}
    out.links = [(where, target) for where, target in out.links
                 if where not in top and not _inside(where, out.folders + system)]
    return out


def _readable_by_others(folder, bound):
    """None if a process of another uid can enter the folders from `bound` down to `folder` and
    list `folder`; else the first one it cannot, with its mode and owner."""
    chain = [folder] + [p for p in folder.parents if p == bound or bound in p.parents]
    for p in reversed(chain):
        info = os.stat(p)
        need = stat.S_IXOTH | (stat.S_IROTH if p == folder else 0)
        if info.st_mode & need != need:
            return f"{p} (mode {stat.S_IMODE(info.st_mode):o}, owner uid {info.st_uid})"
    return None


def check(out: Layout, hidden: Iterable[Any] = (), sandbox_uid: int | None = None) -> None:
    """Raise `BindError` if `out` cannot be shown to a sandbox safely and usefully.

    Parameters
    ----------
    out : Layout
    hidden : iterable of Path
        Folders of the instructor material.
    sandbox_uid : int, optional
        The uid the sandbox runs as when it is not this process's (as root); then every
        `NEEDED` module's folder must be readable by others.

    Raises
    ------
    BindError
        A folder the sandbox makes its own, a folder around the instructor material, or a module
        folder the sandbox's user cannot read.

    Examples
    --------
    A course folder that holds the instructor material is never bound:

    >>> try:
    ...     check(Layout(folders=[Path("/srv/course")]), hidden=["/srv/course/instructor/labkit_instructor"])
    ... except BindError as error:
    ...     print(str(error).split(";")[0])
    /srv/course () also holds the instructor material (/srv/course/instructor/labkit_instructor)
    """
    hidden = [Path(h).resolve() for h in hidden]
    for folder in out.folders:
        why = out.sources.get(folder, "")
        if folder == Path("/") or _inside(folder, [Path(r) for r in REPLACED]):
            raise BindError(f"{folder} ({why}) cannot be shown inside the sandbox, which makes its own "
                            f"{', '.join(REPLACED)}; install the grader's Python elsewhere")
        for material in hidden:
            # an installed package (in a site folder) is covered inside; a source tree around it is not
            installed = material.parent.name in SITE_FOLDERS
            if folder in material.parent.parents and not installed:
                raise BindError(f"{folder} ({why}) also holds the instructor material ({material}); the sandbox "
                                "would show it to students. Install labkit so that its folder does not contain the "
                                "material (pip install . or an editable install of labkit alone), or keep the "
                                "material elsewhere")
    if sandbox_uid is None or sandbox_uid == os.geteuid():
        return
    for name in NEEDED:
        found = _module_folder(name)
        if not found:
            continue
        # as the grader imports it (maybe through a link in a bound folder) and where it really is
        for folder in dict.fromkeys([Path(found[0]), Path(found[0]).resolve()]):
            bound = next((f for f in out.folders if _inside(folder, [f])), None)
            if bound is None:
                continue                  # under /usr: the system's own permissions
            blocked = _readable_by_others(folder, bound)
            if blocked:
                raise BindError(f"the sandbox runs as uid {sandbox_uid}, which cannot read {blocked}, on the way to "
                                f"the grader's {name}; make it readable (chmod -R o+rX) or install the grader's "
                                "Python where other users can read it")


def arguments(out: Layout) -> list[str]:
    """bubblewrap arguments for `out`: the folders their links need, the binds, then the links.

    Parameters
    ----------
    out : Layout

    Returns
    -------
    list of str

    Examples
    --------
    >>> arguments(Layout(folders=[Path("/opt/py/lib")], links=[(Path("/opt/venv"), "py")]))
    ['--perms', '0755', '--dir', '/opt', '--perms', '0755', '--dir', '/opt/py', '--ro-bind', '/opt/py/lib', \
'/opt/py/lib', '--symlink', 'py', '/opt/venv']
    """
    args, made = [], set()
    targets = [p for p in out.folders] + [where for where, _ in out.links]
    for path in targets:
        for parent in reversed(path.parents):
            if str(parent) != "/" and parent not in made and not _inside(parent, [Path(s) for s in SYSTEM]) \
                    and not _inside(parent, out.folders):
                made.add(parent)
    for parent in sorted(made, key=lambda p: len(p.parts)):
        args += ["--perms", "0755", "--dir", str(parent)]
    for folder in out.folders:
        args += ["--ro-bind", str(folder), str(folder)]
    for where, target in out.links:
        args += ["--symlink", target, str(where)]
    return args
