"""docs/engines.md states each engine's known differences as its adapter does: one table row per Difference of
conformance/engines/<engine>.py, named alike, citing the source lines the adapter cites. The adapters import their
engine only when loaded, so this runs without any engine installed."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conformance.engines import nanovllm, sglang

ENGINES = Path(__file__).resolve().parents[2] / "docs" / "engines.md"
ROW = re.compile(r"^\| `([a-z0-9-]+)` \|(.*)$", re.M)


def section(title: str) -> str:
    text = ENGINES.read_text()
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end >= 0 else len(text)]


def rows(title: str) -> dict[str, str]:
    """The rows of the section's table of differences (its header's first cell is "difference"): name -> the rest."""
    text = section(title)
    start = text.index("\n| difference |")
    end = text.find("\n\n", start + 1)
    return {m.group(1): m.group(2) for m in ROW.finditer(text[start:end if end >= 0 else len(text)])}


@pytest.mark.parametrize(("title", "module"), [("nano-vllm", nanovllm), ("SGLang", sglang)])
def test_the_docs_table_of_differences_is_the_adapters(title: str, module: object) -> None:
    stated = {d.name: d for d in module.DIFFERENCES}  # type: ignore[attr-defined]
    documented = rows(title)
    assert set(documented) == set(stated), f"docs/engines.md '{title}' vs DIFFERENCES: {set(documented) ^ set(stated)}"
    for name, rest in documented.items():
        first = re.split(r"[;(]", stated[name].source)[0].strip()
        cited = first.split(":")[-1].split(",")[0].strip()  # the first line numbers the adapter cites
        assert cited in rest, f"{title} {name}: the docs row cites no {cited!r} ({stated[name].source})"


def test_a_difference_the_docs_leave_out_is_seen(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    page = tmp_path / "engines.md"
    page.write_text(ENGINES.read_text().replace("| `whole-prompt` |", "| whole prompt |"))
    monkeypatch.setattr(__import__(__name__, fromlist=["ENGINES"]), "ENGINES", page)
    with pytest.raises(AssertionError, match="whole-prompt"):
        test_the_docs_table_of_differences_is_the_adapters("nano-vllm", nanovllm)
