#!/usr/bin/env python
"""Build labkit's wheel (and, with --instructor, labkit-instructor's) from a clean copy of the sources.

    python scripts/build_wheel.py --out dist                 # dist/labkit_marl-<version>-py3-none-any.whl
    python scripts/build_wheel.py --out dist --instructor    # and dist/labkit_instructor-*.whl

The sources are copied first (labkit/, instructor/, pyproject.toml, README.md, LICENSE, without
__pycache__), so the build never writes build/ or *.egg-info into the repository and the wheel
holds exactly what the package declares. Used by the JupyterLite site (scripts/build_lite.py) and
the wheel tests (tests/test_grading_wheel.py, tests/test_wheel_anywhere.py).
"""
from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROJECT_FILES = ("pyproject.toml", "README.md", "LICENSE")


def build_wheels(out: Path, instructor: bool = False, python: str = sys.executable, leave_out=()) -> dict:
    """Build the wheels into `out`; returns {"labkit": path, "instructor": path (if asked)}.

    `leave_out`: glob patterns of files under labkit/ to leave out of labkit's wheel, relative to
    the repository (e.g. "labkit/data/efr/*.npz", for the browser's wheel).
    """
    out = Path(out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    unwanted = shutil.ignore_patterns("__pycache__", "*.pyc", "build", "*.egg-info")

    def skip(folder, names):
        relative = Path(folder).resolve().relative_to(ROOT)
        return set(unwanted(folder, names)) | {name for name in names for pattern in leave_out
                                               if (relative / name).match(pattern)}
    with tempfile.TemporaryDirectory(prefix="labkit-wheel-") as tmp:
        src = Path(tmp) / "src"
        shutil.copytree(ROOT / "labkit", src / "labkit", ignore=skip)
        for name in PROJECT_FILES:
            shutil.copy(ROOT / name, src / name)
        targets = [str(src)]
        if instructor:
            shutil.copytree(ROOT / "instructor", src / "instructor", ignore=skip)
            targets.append(str(src / "instructor"))
        done = subprocess.run([python, "-m", "pip", "wheel", "--no-deps", "-q", *targets, "-w", str(out)],
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"pip wheel failed:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}")
    wheels = {"labkit": _newest(out, "labkit_marl-*.whl")}
    if instructor:
        wheels["instructor"] = _newest(out, "labkit_instructor-*.whl")
    return wheels


def _newest(folder: Path, pattern: str) -> Path:
    found = sorted(folder.glob(pattern), key=lambda p: p.stat().st_mtime)
    if not found:
        raise RuntimeError(f"no {pattern} in {folder}")
    return found[-1]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "dist", help="folder for the wheels (default dist/)")
    parser.add_argument("--instructor", action="store_true", help="also build labkit-instructor's wheel")
    sys.path.insert(0, str(ROOT))
    from labkit._cli import add_version
    add_version(parser)
    args = parser.parse_args(argv)
    for path in build_wheels(args.out, args.instructor).values():
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
