"""``schedcheck api``, ``schedcheck rules``, ``schedcheck docs [NAME]``: the project's pages, from the package.

A student who installed schedcheck from a wheel has no checkout to open docs/api.md in; the
pages ship inside the package (``conformance/docs``), so every message that names a page can
name the command that prints it.
"""

from __future__ import annotations

import argparse
import sys
from importlib import resources
from importlib.abc import Traversable

SHORTCUTS = {"api": "api", "rules": "rules"}  # subcommand -> page


def pages() -> dict[str, Traversable]:
    """Every shipped page by name (api, rules, grading, ...)."""
    folder = resources.files("conformance").joinpath("docs")
    return {p.name.removesuffix(".md"): p for p in folder.iterdir() if p.name.endswith(".md")}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    if parser.prog.split()[-1] == "docs":
        parser.add_argument("name", nargs="?", help="the page to print (leave it out for the list)")


def main(args: argparse.Namespace) -> int:
    name = SHORTCUTS.get(args.command) or getattr(args, "name", None)
    found = pages()
    if name is None:
        print("pages (schedcheck docs NAME): " + ", ".join(sorted(found)))
        return 0
    page = found.get(name.removesuffix(".md").removeprefix("docs/"))
    if page is None:
        print(f"schedcheck docs: no page {name!r}; the pages are: {', '.join(sorted(found))}", file=sys.stderr)
        return 2
    sys.stdout.write(page.read_text(encoding="utf-8"))
    return 0
