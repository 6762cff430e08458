"""Every time and count README.md and docs/ quote is the stored measurement it comes from (bench/figures.py).

The checks run on the repository's files; the tests after them show on a copy that each check fails when a
figure goes stale (a stored value changed, a figure edited by hand, a new figure written by hand), and says
what to run next.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from bench import figures
from bench.checktime import merged_check_times
from bench.testtime import summary

ROOT = figures.ROOT


def test_every_figure_is_as_stored() -> None:
    problems = figures.check()
    assert not problems, "\n".join(map(str, problems))


def test_every_time_like_figure_is_registered_or_allowed() -> None:
    problems = figures.unregistered()
    assert not problems, "\n".join(map(str, problems))


def test_every_allowed_constant_is_still_in_a_doc() -> None:
    """An allowance that matches nothing any more is dead, and would hide the next figure that happened to fit."""
    texts = {d: (ROOT / d).read_text() for d in figures.docs()}
    dead = [a for a in figures.ALLOWED
            if not any(re.search(a.pattern.replace(" ", r"\s+"), t) for d, t in texts.items()
                       if a.doc in ("*", d))]
    assert not dead, dead


def test_every_source_is_stored_and_dated() -> None:
    store = figures.Store()
    for s in figures.SOURCES.values():
        assert (ROOT / s.path).exists(), f"{s.path} is missing: `{s.command}` writes it"
        if s.date_key:
            assert "undated" not in store.when(s), f"{s.path} has no {s.date_key}"


# --- on a copy: each check fails when a figure is stale --------------------------------------------------------

@pytest.fixture
def copy(tmp_path: Path) -> Path:
    """The docs and every stored measurement, copied: what the checks read, to be spoiled."""
    shutil.copy(ROOT / "README.md", tmp_path)
    shutil.copytree(ROOT / "docs", tmp_path / "docs", symlinks=True)
    for s in figures.SOURCES.values():
        (tmp_path / s.path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / s.path, tmp_path / s.path)
    return tmp_path


def edit_json(root: Path, path: str, **values: object) -> None:
    data = json.loads((root / path).read_text())
    data.update(values)
    (root / path).write_text(json.dumps(data))


def edit_text(root: Path, doc: str, old: str, new: str) -> None:
    text = (root / doc).read_text()
    assert text.count(old) == 1, old
    (root / doc).write_text(text.replace(old, new))


def test_a_new_measurement_makes_the_docs_stale_and_rewrite_brings_them_up_to_date(copy: Path) -> None:
    store = figures.Store(copy)
    was, measured = store.value("throughput.per_minute"), store.value("throughput.measured")
    before = store.value("throughput_reach.before.per_minute")
    now = round(was + 1.3, 1)  # a new measurement, whatever the stored one is
    edit_json(copy, figures.SOURCES["throughput"].path, per_minute=now, measured="2099-12-04")
    messages = [p.message for p in figures.check(copy)]
    readme = next(m for m in messages if m.startswith(f"README.md quotes {was} "))
    assert f"bench/measured/throughput-course.json says {now}" in readme
    assert f"at **{was} submissions per minute** on 2 cores" in readme  # the snippet, as the doc has it
    assert "measured 2099-12-04 by `python -m bench --grade-throughput --class course --copies 2 --jobs 2`" in readme
    assert readme.endswith("run `python -m bench --figures` to rewrite the docs")
    assert any(m.startswith(f"docs/bench.md quotes {was} ") for m in messages)  # the table's latest row
    assert any(m.startswith(f"docs/bench.md quotes {measured} ") for m in messages)  # and its date
    ratio = next(m for m in messages if "times as long" in m)  # a figure computed from the new one
    assert f"quotes {before / was:.1f} " in ratio and f" say {before / now:.1f} " in ratio

    changes, problems = figures.rewrite(copy)
    assert not problems
    assert {(c.doc, c.old, c.new) for c in changes} >= {("README.md", str(was), str(now)),
                                                        ("README.md", measured, "2099-12-04")}
    assert f"at **{now} submissions per\nminute**" in (copy / "README.md").read_text()  # the line breaks kept
    assert figures.check(copy) == [] and figures.unregistered(copy) == []


def test_a_figure_edited_by_hand_is_reported_with_the_command_that_measures_it(copy: Path) -> None:
    passed = figures.Store(copy).value("tests.default.passed")
    [quoted] = re.findall(r"[0-9,]+ tests in [0-9]+ min [0-9]+ s", (copy / "README.md").read_text())
    assert quoted.startswith(f"{passed:,} tests")
    edit_text(copy, "README.md", quoted, quoted.replace(f"{passed:,}", f"{passed + 51:,}", 1))
    [problem] = figures.check(copy)
    assert problem.doc == "README.md" and f"{passed + 51:,} tests in" in problem.snippet
    assert f"README.md quotes {passed + 51:,} " in problem.message
    assert f"bench/measured/tests.json says {passed:,}" in problem.message
    assert "by `python -m bench --test-time`" in problem.message
    figures.rewrite(copy)
    assert quoted in (copy / "README.md").read_text()


def test_a_record_says_it_is_one(copy: Path) -> None:
    edit_text(copy, "docs/engines.md", "| 17.9 s (8.1 s) |", "| 16.0 s (8.1 s) |")
    [problem] = figures.check(copy)
    assert "docs/engines.md quotes 16.0 " in problem.message
    assert "bench/measured/records/vllm-2026-12-02.json says 17.9" in problem.message
    assert "measured 2026-12-02 by `schedcheck check --adapter conformance.engines.vllm" in problem.message
    assert "(a record of code since changed)" in problem.message


def test_a_block_of_command_output_is_checked_and_rewritten_whole(copy: Path) -> None:
    line = next(x for x in (copy / "docs/bench.md").read_text().splitlines() if x.startswith("impl       default"))
    edit_text(copy, "docs/bench.md", line, line.replace("impl       default", "impl       default  1", 1))
    [problem] = figures.check(copy)
    assert problem.doc == "docs/bench.md" and "target     profile   seconds" in problem.message
    assert "bench/measured/check-time.json" in problem.message and "python -m bench --figures" in problem.message
    figures.rewrite(copy)
    assert figures.check(copy) == []


def test_a_quote_whose_words_changed_is_reported_not_skipped(copy: Path) -> None:
    edit_text(copy, "docs/grading.md", "Both releases pass (6 tests, about", "Both releases passed (6 tests, about")
    [problem] = figures.check(copy)
    assert "docs/grading.md no longer has the text “Both releases pass ({ubuntu.tests:,} tests" in problem.message
    assert "change its Quote in bench/figures.py" in problem.message
    lint = figures.unregistered(copy)  # and its figures, no longer registered, are hand-written now
    assert [(p.doc, p.message.split(" quotes ")[1].split(" in ")[0]) for p in lint] == [
        ("docs/grading.md", "'6 tests'"), ("docs/grading.md", "'2 minutes'")]


def test_a_missing_measurement_names_the_command_that_writes_it(copy: Path) -> None:
    data = json.loads((copy / figures.SOURCES["tests"].path).read_text())
    del data["long"]
    (copy / figures.SOURCES["tests"].path).write_text(json.dumps(data))
    problems = figures.check(copy)
    assert problems and all("bench/measured/tests.json (`python -m bench --test-time`), which cannot be read"
                            in p.message for p in problems)


def test_a_new_hand_written_time_fails_the_lint(copy: Path) -> None:
    edit_text(copy, "docs/grading.md", "## Scale\n", "## Scale\n\nA class of 80 now grades in 3 min 10 s.\n")
    problem, _ = figures.unregistered(copy)  # "3 min" and "10 s"
    assert problem.doc == "docs/grading.md" and "'3 min'" in problem.message
    assert "A class of 80 now grades in 3 min 10 s" in problem.snippet
    assert "register it in bench/figures.py QUOTES" in problem.message and "ALLOWED" in problem.message
    edit_text(copy, "README.md", "# schedcheck\n", "# schedcheck\n\nIt grades 12 submissions per minute, 1.5x as\n")
    assert {p.message.split(" quotes ")[1].split(" in ")[0] for p in figures.unregistered(copy)} == {
        "'3 min'", "'10 s'", "'12 submissions per minute'", "'1.5x'"}


# --- how figures are written and measured -----------------------------------------------------------------------

@pytest.mark.parametrize(("value", "fmt", "text"), [
    (196, "min_s", "3 min 16 s"), (49.6, "min_s", "50 s"), (3923.5, "min", "65"), (152.3, "min.1", "2.5"),
    (43, "r10", "40"), (1449, ",", "1,449"), (1.205, ".2f", "1.21"), ([667.3, 818.3, 617.6], ".0f", "667, 818, 618"),
])
def test_a_value_is_written_as_the_docs_write_it(value: object, fmt: str, text: str) -> None:
    assert figures.written(value, fmt) == text


def test_a_key_reads_paths_filters_extremes_and_ratios() -> None:
    store = figures.Store()

    def raw(name: str) -> Any:  # the stored file itself, read here without the key language
        return json.loads((ROOT / figures.SOURCES[name].path).read_text())
    results = raw("bench")["results"]
    assert store.value("bench.results[workload=W1].impl_over_floor") == \
        next(r for r in results if r["workload"] == "W1")["impl_over_floor"]
    assert len(store.value("bench.results[workload=F*].impl.ns_per_seq")) == \
        sum(r["workload"].startswith("F") for r in results)
    assert store.value("min(check_time.rows[profile=quick].cpu_seconds)") == \
        min(r["cpu_seconds"] for r in raw("check_time")["rows"] if r["profile"] == "quick")
    assert store.value("throughput_reach.before.per_minute/throughput.per_minute") == pytest.approx(
        raw("throughput_reach")["before"]["per_minute"] / raw("throughput")["per_minute"])
    with pytest.raises(figures.Missing):
        store.value("check_time.rows[profile=quick].cpu_seconds")  # three rows where the key promises one


def test_the_test_time_reads_pytests_summary_line() -> None:
    run = summary("python -m pytest -q -n auto", "....\n1449 passed, 2 skipped, 356 deselected in 196.23s (0:03:16)\n")
    assert (run.passed, run.seconds, run.bad) == (1449, 196.23, 0)
    assert summary("x", "== 1 failed, 71 passed in 440.01s (0:07:20) ==").bad == 1
    with pytest.raises(ValueError, match="no pytest summary line"):
        summary("x", "INTERNALERROR")


def test_a_check_time_run_of_some_rows_keeps_the_others() -> None:
    old = [{"target": "impl", "profile": "quick", "seconds": 1.0},
           {"target": "spec", "profile": "quick", "seconds": 2.0}]
    run = {"rows": [{"target": "spec", "profile": "quick", "seconds": 3.0},
                    {"target": "impl", "profile": "default", "seconds": 4.0}]}
    merged = merged_check_times(old, run, {"measured": "2026-12-04", "commit": "abcdef0"})
    assert [(r["target"], r["profile"], r["seconds"]) for r in merged["rows"]] == [
        ("impl", "quick", 1.0), ("spec", "quick", 3.0), ("impl", "default", 4.0)]
    assert merged["rows"][1]["measured"] == "2026-12-04" and "measured" not in merged["rows"][0]
