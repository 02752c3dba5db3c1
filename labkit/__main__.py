"""``python -m labkit``: what labkit is, its version, what is installed, and the commands there are.

    python -m labkit              # the overview
    python -m labkit compile      # compile the numba kernels once for this installation
    python -m labkit --version
"""
from __future__ import annotations

import argparse
import importlib.util
import sys

import labkit
from labkit._cli import add_version

ABOUT = """\
labkit {version}: games, solvers and exact evaluation for the book on multi-agent RL and self-play.

  import labkit as lk
  game = lk.games.load("leduc_poker")          # Kuhn, Leduc, goofspiel, matrix games, OpenSpiel games
  solver = lk.CFRPlus(game)                    # also CFR, DCFR, MCCFR, MMD, PSRO, EFR
  solver.run(100)
  lk.nash_conv(game, solver.average_policy())  # exact, from best responses

Installed from {location}
Python {python}; optional parts: {extras}
Compiled kernels: {kernels}

Commands
  python -m labkit compile                  compile the CFR/MCCFR kernels once for this installation
  python -m labkit.experiments efr ...      the EFR paper's tournaments (--help for the options)
  labkit-grade SUBMISSIONS/ ...             grade exercise notebooks (python -m labkit.grading; needs the
                                            "grading" extra and bubblewrap)

The book: the Jupyter Book in the repository labkit comes from (README.md there: `make book` builds it
into _build/html); its page "labkit's API" documents every function, with examples.
"""

OPTIONAL = {"numba": "fast", "pyspiel": "openspiel", "jax": "deep", "nbclient": "grading", "cmeel": "paper"}


def _extras() -> str:
    found = [f"{extra} ({module})" for module, extra in OPTIONAL.items() if importlib.util.find_spec(module)]
    return ", ".join(found) or "none"


def _kernels() -> str:
    from labkit import kernels
    if not kernels.available():
        return "numpy only (pip install numba for the compiled kernels)"
    return f"numba, default backend {kernels.backend()!r}"


def main(argv: list[str] | None = None) -> int:
    """The command line of ``python -m labkit``.

    Parameters
    ----------
    argv : list of str, optional
        The arguments (sys.argv[1:] by default).

    Returns
    -------
    int
        The exit status.

    Examples
    --------
    >>> main(["--version"])
    Traceback (most recent call last):
      ...
    SystemExit: 0
    """
    parser = argparse.ArgumentParser(prog="python -m labkit", description="What labkit is, and its commands.")
    parser.add_argument("command", nargs="?", choices=["compile"],
                        help="compile: compile the numba kernels for this installation")
    add_version(parser)
    args = parser.parse_args(argv)
    if args.command == "compile":
        from labkit import kernels
        if not kernels.available():
            print("numba is not installed: labkit runs its numpy code, nothing to compile", file=sys.stderr)
            return 0
        states = kernels.compile_all()
        for name, state in states.items():
            print(f"{name}: {'compiled now' if state in ('cold', 'none') else 'already compiled'}"
                  + ("" if state != "none" else " (no writable cache folder: compiled again in every process)"))
        return 0
    print(ABOUT.format(version=labkit.__version__, location=labkit.__path__[0],
                       python=sys.version.split()[0], extras=_extras(), kernels=_kernels()), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
