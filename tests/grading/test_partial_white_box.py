"""A scheduler that lacks a white-box value the judge can do without (num_preemptions, blocks_used, the finished
queue; a Sequence's num_tokens, num_blocks or status) has the rest of its state judged by both commands, and the
rules derive what it lacks: a correct one passes, one whose state breaks an invariant fails it.

From outside: a scheduler whose exposed blocks_used lagged behind its frees (I1) dropped num_preemptions, every
snapshot was then unreadable as a whole, the white-box checks were skipped, and it got 100 against its bug's 79.65.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from conformance import drivers
from conformance.adapters import load_target
from conformance.checks import whitebox
from conformance.checks.workload import probe_white_box
from conformance.grading.observe import observed_trace
from conformance.observed import PARTLY
from conformance.sandbox.run import run_in_sandbox
from conformance.sandbox.types import Limits
from spec.golden import case_named, check_case, golden_cases
from spec.model import Config
from spec.trace import Request, make_workload

GOLDEN = {c.name for c in golden_cases()}
IMPL = Path(__file__).resolve().parents[2] / "impl" / "scheduler.py"
LIMITS = Limits(workload_seconds=2.0, workload_cpu_seconds=2, startup_seconds=5.0, run_seconds=60.0,
                cpu_seconds=40, memory_bytes=256 << 20, processes=16, output_bytes=1 << 20)
# preemptions (example2, self_preemption), finishes with blocks to free, a second request arriving later
WORKLOADS = [case_named("example2").workload, case_named("self_preemption").workload, case_named("budget16").workload,
             make_workload(Config(6, 2, 2, 4), [Request("a1", 3, 3), Request("a2", 4, 2, arrival=2),
                                                 Request("a3", 2, 4, arrival=2)], name="tight")]


def sub(text: str, pattern: str, repl: str, count: int) -> str:
    """re.sub that must replace exactly `count` times (impl changed: this test's edits need updating)."""
    out, n = re.subn(pattern, repl, text)
    assert n == count, f"{pattern!r} replaced {n} times, expected {count}"
    return out


# what each lacking submission renames, so that the attribute does not exist
LACKS: dict[str, Callable[[str], str]] = {
    "num_preemptions": lambda t: sub(t, r"self\.num_preemptions\b", "self._preempted", 2),
    "blocks_used": lambda t: sub(t, r"self\.blocks_used\b", "self._used", 8),
    "finished": lambda t: sub(t, r"self\.finished\b", "self._done", 2),
    "num_blocks": lambda t: sub(sub(t, r"\b(seq|head|victim|q|s)\.num_blocks\b", r"\1.held_", 13),
                                r'"num_blocks", "status"\)', '"held_", "status")', 1).replace(
        "self.num_blocks = 0  # KV blocks held", "self.held_ = 0  # KV blocks held").replace(
        "num_blocks={self.num_blocks}", "num_blocks={self.held_}"),
    "status": lambda t: sub(sub(t, r"\b(seq|head|victim|q|s|self)\.status\b", r"\1.where_", 7),
                            r'"num_blocks", "status"\)', '"num_blocks", "where_")', 1),
}
# a bug each lacking submission can still show in the state it gives, and the invariant it breaks
BUGS: dict[str, tuple[Callable[[str], str], str]] = {
    # blocks_used lowered at the next schedule(), not in the update() that freed them (black box: the same)
    "blocks_used lags": (lambda t: sub(sub(t, r"self\.blocks_used -= freed", "self._late = freed", 1),
                                       r"\n        used = self\.blocks_used\n        batch",
                                       "\n        self.blocks_used -= getattr(self, '_late', 0)\n        self._late = 0"
                                       "\n        used = self.blocks_used\n        batch", 1), "I1"),
    # a finished sequence keeps its count of blocks, though they are freed (black box: the same)
    "finished keeps num_blocks": (lambda t: sub(t, r"\n\s*seq\.num_blocks = 0\n", "\n", 1), "I1"),
    # a finished sequence, out of running, shows status RUNNING (black box: the same)
    "finished stays RUNNING": (lambda t: sub(t, r"(\n( {16})self\.blocks_used -= freed\n)",
                                             r"\1\2for s in done:\n\2    s.status = _RUNNING\n", 1), "I6"),
}
# values it gives in a form docs/api.md does not name, or only from some point on
SHOWS: dict[str, Callable[[str], str]] = {
    # finished kept in a set: no finishing order to read (before: U.finish on most runs, in both)
    "finished in a set": lambda t: sub(sub(t, r"self\.finished: list\[Sequence\] = \[\]", "self.finished = set()", 1),
                                       r"finished\.append\(seq\)", "finished.add(seq)", 1),
    # block counts kept as floats, whole numbers: read by their value (before: the grader took them for missing,
    # its white-box checks were skipped, and a white-box bug cost nothing there)
    "num_blocks a float": lambda t: sub(t, r"self\.num_blocks = 0  #", "self.num_blocks = 0.0  #", 1),
    # num_blocks read through a table a sequence joins when admitted: KeyError before (check took it for a broken
    # field once another sequence's was read), and int(None), a TypeError, in the same place (a finding in check)
    "num_blocks raises KeyError while never admitted": lambda t: _held(t, "raise KeyError(self.seq_id)"),
    "num_blocks raises TypeError while never admitted": lambda t: _held(t, "return int(None)"),
    # num_tokens a plain method, no property: not a count, so missing (a finding in check before)
    "num_tokens a method": lambda t: sub(t, r"    @property\n    def num_tokens\(self\)", "    def num_tokens(self)",
                                         1),
    # running read from the first update() on: the first snapshots are skipped, the rest judged (before: check's
    # probe turned white box off for the whole check, and the grader stopped judging at the first)
    "running from the first update": lambda t: sub(sub(sub(t, r"self\.running\b", "self._running", 5),
                                                       r"\n        self\._batch = None\n        running = ",
                                                       "\n        self._batch = None\n        self._updated = True"
                                                       "\n        running = ", 1),
                                                   r"\n    def update\(self\)",
                                                   "\n    @property\n    def running(self):\n"
                                                   "        if not getattr(self, '_updated', False):\n"
                                                   "            raise AttributeError('running')\n"
                                                   "        return self._running\n\n    def update(self)", 1),
}
def _held(text: str, before_admitted: str) -> str:
    """impl whose num_blocks is a property that does `before_admitted` for a sequence that never ran."""
    text = LACKS["num_blocks"](text)
    return sub(text, r"    @property\n    def num_tokens\(self\)",
               "    @property\n    def num_blocks(self):\n"
               "        if self.status is _WAITING and self.num_computed == 0 and not self.output:\n"
               f"            {before_admitted}\n"
               "        return self.held_\n\n    @property\n    def num_tokens(self)", 1)


CASES = [("num_preemptions", "blocks_used lags"), ("num_blocks", "blocks_used lags"), ("status", "blocks_used lags"),
         ("blocks_used", "finished keeps num_blocks"), ("finished", "finished stays RUNNING"),
         ("num_preemptions", "finished stays RUNNING")]


def written(tmp_path: Path, lacks: str, bug: str | None) -> Path:
    text = IMPL.read_text()
    if bug is not None:
        text = BUGS[bug][0](text)
    text = LACKS[lacks](text)
    path = tmp_path / "p07_scheduler.py"
    path.write_text(text)
    return path


def judged(path: Path) -> list[tuple[str, list[whitebox.Finding] | list[str]]]:
    """The invariants check's findings on every workload, and the golden check's mismatches on the card's cases, by
    both commands: check's in-process driver, then the grader's sandbox; each trace's note says what was not given,
    and the state was judged."""
    factory = load_target(str(path))
    sandboxed = run_in_sandbox(path, WORKLOADS, LIMITS)
    out = []
    for workload, got in zip(WORKLOADS, sandboxed.workloads, strict=True):
        for command, observed in (("check", drivers.run_workload(workload, factory)),
                                  ("grade", observed_trace(workload, got))):
            assert observed["white_box_error"] is None, (command, observed["white_box_error"])
            assert (observed["note"] or "").startswith(PARTLY), (command, observed["note"])
            assert observed["steps"][0].get("after_update") is not None, (command, "the state was not judged")
            out.append((command, whitebox.invariants(workload, observed)))
            if workload.name in GOLDEN:  # the card's values, where it gives them (from outside: "num_preemptions is
                out.append((command, check_case(case_named(workload.name), observed)))  # None, the card says 1")
    return out


@pytest.mark.parametrize("lacks", sorted(LACKS))
def test_a_correct_scheduler_that_lacks_a_value_passes_in_both(tmp_path: Path, lacks: str) -> None:
    for command, found in judged(written(tmp_path, lacks, None)):
        assert found == [], (command, found)


@pytest.mark.parametrize(("lacks", "bug"), CASES)
def test_a_bug_in_the_state_it_gives_is_found_in_both(tmp_path: Path, lacks: str, bug: str) -> None:
    results = judged(written(tmp_path, lacks, bug))
    for command in ("check", "grade"):
        rules = {f.rule for c, found in results if c == command for f in found if isinstance(f, whitebox.Finding)}
        assert rules == {BUGS[bug][1]}, (command, rules)
    assert [str(f) for c, found in results if c == "check" for f in found] == \
        [str(f) for c, found in results if c == "grade" for f in found]


def test_a_sequence_in_neither_queue_is_named_so_without_a_finished_queue(tmp_path: Path) -> None:
    results = judged(written(tmp_path, "finished", "finished stays RUNNING"))
    message = next(f.message for _, found in results for f in found if isinstance(f, whitebox.Finding))
    assert "is in neither waiting nor running, yet its status is RUNNING" in message, message


@pytest.mark.parametrize("lacks", ["num_blocks", "status"])
def test_a_field_every_sequence_lacks_costs_its_reason_once_in_the_report(tmp_path: Path, lacks: str) -> None:
    """The child sent every changed row's reasons with it, at every call: a correct scheduler whose Sequence has no
    num_blocks passed the report's cap (2 MB) at step 27 of a crowd of 2^12 + 1 requests, a protocol error in the
    grader where check passed it. Reasons go with a row now only when they change, each text once a workload."""
    from conformance.workloads.reach import crowd

    run = crowd(256, (1 << 12) + 1)
    got = run_in_sandbox(written(tmp_path, lacks, None), [run], LIMITS).workloads[0]
    assert got.status == "ok", got.cause
    observed = observed_trace(run, got)
    assert (observed["note"] or "").startswith(PARTLY) and whitebox.invariants(run, observed) == []


def shown(tmp_path: Path, shows: str, bug: str | None) -> Path:
    text = IMPL.read_text()
    if bug is not None:
        text = BUGS[bug][0](text)
    path = tmp_path / "p07_scheduler.py"
    path.write_text(SHOWS[shows](text))
    return path


def both_commands(path: Path) -> list[tuple[str, list[whitebox.Finding]]]:
    """The invariants check's findings on every workload by check (its own choice of white box included) and by
    the grader."""
    factory = load_target(str(path))
    on = probe_white_box(load_target(str(path))).on
    sandboxed = run_in_sandbox(path, WORKLOADS, LIMITS)
    return [(command, whitebox.invariants(workload, observed))
            for workload, got in zip(WORKLOADS, sandboxed.workloads, strict=True)
            for command, observed in (("check", drivers.run_workload(workload, factory, white_box=on)),
                                      ("grade", observed_trace(workload, got)))]


@pytest.mark.parametrize("shows", sorted(SHOWS))
def test_a_correct_scheduler_that_shows_its_state_so_passes_in_both(tmp_path: Path, shows: str) -> None:
    for command, found in both_commands(shown(tmp_path, shows, None)):
        assert found == [], (command, found)


@pytest.mark.parametrize("shows", ["num_blocks a float", "running from the first update"])
def test_a_bug_in_state_shown_so_is_found_in_both(tmp_path: Path, shows: str) -> None:
    results = both_commands(shown(tmp_path, shows, "blocks_used lags"))
    for command in ("check", "grade"):
        assert {f.rule for c, found in results if c == command for f in found} == {"I1"}, (command, results)


def test_a_field_that_vanishes_after_it_was_read_is_a_finding_even_if_it_came_late(tmp_path: Path) -> None:
    """num_blocks missing until a sequence first computes, read while it runs, gone once it finishes (where the bug
    'a finished sequence keeps its blocks' would show): before, a field a sequence lacked at its first reading was
    never taken for read, so it could vanish later unseen."""
    text = sub(BUGS["finished keeps num_blocks"][0](IMPL.read_text()), r"\b(seq|head|victim|q|s)\.num_blocks\b",
               r"\1.held_", 12)
    text = text.replace('"num_computed", "num_blocks", "status")', '"num_computed", "held_", "status")').replace(
        "self.num_blocks = 0  # KV blocks held", "self.held_ = 0  # KV blocks held")
    text = text.replace("    @property\n    def num_tokens(self)",
                        "    @property\n    def num_blocks(self):\n"
                        "        if self.status is _FINISHED or self.num_computed == 0 and not self.output:\n"
                        "            raise AttributeError('num_blocks')\n"
                        "        return self.held_\n\n    @property\n    def num_tokens(self)", 1)
    path = tmp_path / "p07_scheduler.py"
    path.write_text(text)
    factory = load_target(str(path))
    sandboxed = run_in_sandbox(path, WORKLOADS, LIMITS)
    for workload, got in zip(WORKLOADS, sandboxed.workloads, strict=True):
        for command, observed in (("check", drivers.run_workload(workload, factory)),
                                  ("grade", observed_trace(workload, got))):
            error = observed["white_box_error"]
            assert error is not None and "after earlier steps read it" in error["message"], (command, observed["note"])
