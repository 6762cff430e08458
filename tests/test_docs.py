"""Every link in the README and docs resolves, and the docs cite only pages the repository has."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted([ROOT / "README.md", *ROOT.glob("docs/*.md"), *ROOT.glob("examples/**/README.md")])
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"```.*?```", re.S)


def slug(heading: str) -> str:
    """The anchor a Markdown renderer gives a heading: lower case, punctuation dropped, spaces to dashes."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    body = FENCE.sub("", page.read_text())
    return {slug(m.group(1)) for m in re.finditer(r"^#{1,6}\s+(.+)$", body, re.M)}


def links(page: Path) -> list[str]:
    return LINK.findall(FENCE.sub("", page.read_text()))


def broken_links(page: Path) -> list[str]:
    broken = []
    for target in links(page):
        if re.match(r"[a-z]+:", target):
            continue  # an outside address: not checked offline
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            broken.append(f"{target} (no file {dest})")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            broken.append(f"{target} (no heading #{anchor} in {dest.name})")
    return broken


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page):
    broken = broken_links(page)
    assert not broken, f"{page.name} links to what is not there: " + "; ".join(broken)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_docs_cite_our_own_rules_and_api_pages(page):
    """The rules and the interface are docs/rules.md and docs/api.md; no page cites a file we do not ship."""
    text = page.read_text()
    assert not re.search(r"(?<![\w/])(RULES|API)\.md", text), (
        f"{page.name} cites RULES.md or API.md; link docs/rules.md or docs/api.md instead")


def test_the_link_check_sees_a_broken_link(tmp_path):
    page = tmp_path / "page.md"
    (tmp_path / "other.md").write_text("## A `code` heading, with punctuation\n")
    page.write_text("# Title\n[ok](#title) [missing](nowhere.md) [bad anchor](#nope) "
                    "[ok too](other.md#a-code-heading-with-punctuation) [web](https://example.org/x)\n")
    assert [b.split(" ")[0] for b in broken_links(page)] == ["nowhere.md", "#nope"]
