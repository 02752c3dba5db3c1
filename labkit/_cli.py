"""Small argparse helpers shared by labkit's command lines and the repository's scripts.

A bad value becomes argparse's own usage error (exit status 2, the argument named, no traceback):

    >>> import argparse
    >>> parser = argparse.ArgumentParser(prog="demo")
    >>> _ = parser.add_argument("--rounds", type=at_least(1))
    >>> parser.parse_args(["--rounds", "3"]).rounds
    3
"""
from __future__ import annotations

import argparse
from collections.abc import Callable


def at_least(lowest: int) -> Callable[[str], int]:
    """An argparse ``type``: an integer no smaller than `lowest`.

    Parameters
    ----------
    lowest : int

    Returns
    -------
    callable
        str -> int, raising argparse.ArgumentTypeError for anything else.

    Examples
    --------
    >>> at_least(1)("4")
    4
    >>> at_least(1)("0")
    Traceback (most recent call last):
      ...
    argparse.ArgumentTypeError: must be at least 1, got 0
    """
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if value < lowest:
            raise argparse.ArgumentTypeError(f"must be at least {lowest}, got {value}")
        return value
    parse.__name__ = f"integer >= {lowest}"
    return parse


def positive_float(text: str) -> float:
    """An argparse ``type``: a number greater than 0.

    Parameters
    ----------
    text : str

    Returns
    -------
    float

    Raises
    ------
    argparse.ArgumentTypeError
        For text that is not a positive number.

    Examples
    --------
    >>> positive_float("0.25")
    0.25
    """
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {text}")
    return value


def version_text(prog: str) -> str:
    """"PROG (labkit X.Y.Z)", the installed labkit's version.

    Parameters
    ----------
    prog : str
        The program's name.

    Returns
    -------
    str

    Examples
    --------
    >>> import labkit
    >>> version_text("labkit-grade") == f"labkit-grade (labkit {labkit.__version__})"
    True
    """
    import labkit
    return f"{prog} (labkit {labkit.__version__})"


def add_version(parser: argparse.ArgumentParser, prog: str | None = None) -> argparse.ArgumentParser:
    """Give `parser` a ``--version`` option that prints labkit's version.

    Parameters
    ----------
    parser : argparse.ArgumentParser
    prog : str, optional
        The name printed (the parser's own by default).

    Returns
    -------
    argparse.ArgumentParser
        `parser` itself.

    Examples
    --------
    >>> parser = add_version(argparse.ArgumentParser(prog="demo"))
    >>> any(action.dest == "version" for action in parser._actions)
    True
    """
    parser.add_argument("--version", action="version", version=version_text(prog or parser.prog))
    return parser
