#!/usr/bin/env python
"""Write the configuration `make book` builds with, from the committed _config.yml and _toc.yml.

    python scripts/book_config.py --out _build/config                 # the public book
    python scripts/book_config.py --out _build/config --no-solutions  # a course's book, no solution pages

The one setting that turns on the launch buttons is `repository.url` in _config.yml (the repository that
holds this book, e.g. https://github.com/ORG/REPO). While it is empty the book shows no Binder, Colab or
JupyterHub button at all, never a dead one; once it is set, Binder and Colab buttons appear on every
notebook page, and a JupyterHub button too when `launch_buttons.jupyterhub_url` is set. `--repository
URL` overrides the setting for one build.

Prints the two paths to pass to Jupyter Book: ``--config OUT/_config.yml --toc OUT/_toc.yml``.
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
BINDER = "https://mybinder.org"
COLAB = "https://colab.research.google.com"
REPOSITORY_PATTERN = re.compile(r"^https://[A-Za-z0-9.-]+/[\w.-]+/[\w.-]+/?$")


def launch_settings(config: dict, repository: str | None) -> dict:
    """The config with launch buttons on when a repository URL is known, and off otherwise."""
    config = dict(config)
    repo = dict(config.get("repository") or {})
    url = (repository if repository is not None else repo.get("url") or "").strip()
    if url and not REPOSITORY_PATTERN.match(url):
        raise ValueError(f"repository URL {url!r} should look like https://github.com/ORG/REPO")
    buttons = dict(config.get("launch_buttons") or {})
    html = dict(config.get("html") or {})
    repo["url"] = url.rstrip("/")
    if url:
        buttons.setdefault("binderhub_url", BINDER)
        buttons["binderhub_url"] = buttons["binderhub_url"] or BINDER
        buttons["colab_url"] = buttons.get("colab_url") or COLAB
    else:
        for key in ("binderhub_url", "colab_url", "jupyterhub_url"):
            buttons[key] = ""
    html["use_repository_button"] = bool(url)
    config["repository"], config["launch_buttons"], config["html"] = repo, buttons, html
    return config


def without_solutions(toc: dict) -> dict:
    """The table of contents with every page under solutions/ removed."""
    def prune(node):
        if isinstance(node, dict):
            kept = {k: prune(v) for k, v in node.items()}
            for key in ("sections", "chapters", "parts"):
                if isinstance(kept.get(key), list):
                    kept[key] = [n for n in kept[key] if not str(n.get("file", "")).startswith("solutions/")]
                    if not kept[key]:
                        del kept[key]
            return kept
        if isinstance(node, list):
            return [prune(n) for n in node]
        return node
    return prune(toc)


def toc_files(toc: dict) -> list:
    """Every page of a table of contents (its "file" entries, paths without the suffix), in order."""
    found = []

    def walk(node):
        if isinstance(node, dict):
            if "file" in node:
                found.append(str(node["file"]))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)
    walk(toc)
    return found


def absolute_extension_paths(config: dict) -> dict:
    """Jupyter Book resolves local extension folders against the config file's folder: make them absolute."""
    sphinx = dict(config.get("sphinx") or {})
    if sphinx.get("local_extensions"):
        sphinx["local_extensions"] = {name: str((ROOT / path).resolve())
                                      for name, path in sphinx["local_extensions"].items()}
    config["sphinx"] = sphinx
    return config


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="_build/config", help="folder for the generated files")
    parser.add_argument("--repository", metavar="URL", help="override repository.url of _config.yml")
    parser.add_argument("--no-solutions", action="store_true", help="leave the solution pages out")
    sys.path.insert(0, str(ROOT))
    from labkit._cli import add_version
    add_version(parser)
    args = parser.parse_args(argv)
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    try:
        config = absolute_extension_paths(launch_settings(config, args.repository))
    except ValueError as err:
        parser.error(str(err))
    if args.no_solutions:
        toc = without_solutions(toc)
    out = (ROOT / args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    (out / "_config.yml").write_text(yaml.safe_dump(config, sort_keys=False, allow_unicode=True), encoding="utf-8")
    (out / "_toc.yml").write_text(yaml.safe_dump(toc, sort_keys=False, allow_unicode=True), encoding="utf-8")
    print(f"--config {out / '_config.yml'} --toc {out / '_toc.yml'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
