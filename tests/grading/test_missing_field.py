"""A scheduler whose Sequence has no `num_blocks` at all (it keeps the count under another name) has the rest of its
state judged, with a note, by both commands (tests/grading/test_partial_white_box.py has more of this).

Both failed it (from outside): `check`'s adapter took the missing field for a malformed one (I6 on every vector),
and the grader's parent, once a snapshot with no sequence in it had been read, took the field for one that broke
(I6 where the first request arrives after step 1), and read the final outputs from the white-box snapshot alone,
so the five golden cases saw none. A field read once and gone later is still a finding, in both.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from conformance import drivers
from conformance.adapters import Factory, load_target
from conformance.checks import checkers, whitebox
from conformance.grading.observe import observed_trace
from conformance.sandbox.run import run_in_sandbox
from conformance.sandbox.types import Limits, WorkloadResult
from spec.golden import case_named
from spec.model import Config
from spec.trace import Request, Workload, make_workload, run_workload

IMPL = Path(__file__).resolve().parents[2] / "impl" / "scheduler.py"
LIMITS = Limits(workload_seconds=2.0, workload_cpu_seconds=2, startup_seconds=5.0, run_seconds=30.0,
                cpu_seconds=20, memory_bytes=256 << 20, processes=16, output_bytes=1 << 20)
LATE = make_workload(Config(8, 2, 2, 8), [Request("a1", 3, 2, arrival=3), Request("a2", 2, 2, arrival=3)],
                     name="late-arrivals")  # two snapshots with no sequence in them come first
WORKLOADS = [case_named("example2").workload, LATE]
# the count of blocks each sequence holds, under another name (`__slots__` too): the attribute does not exist
HIDDEN = re.compile(r"\b(seq|head|victim)\.num_blocks\b")


def without_num_blocks(tmp_path: Path, gone_after: int | None = None) -> Path:
    text = HIDDEN.sub(r"\1.held_", IMPL.read_text())
    text = text.replace('"num_computed", "num_blocks", "status")', '"num_computed", "held_", "status")')
    text = text.replace("        self.num_blocks = 0  # KV blocks held; 0 unless running\n",
                        "        self.held_ = 0  # KV blocks held; 0 unless running\n")
    text = text.replace("num_blocks={self.num_blocks}", "num_blocks={self.held_}")
    if gone_after is not None:  # there, read, and gone from step `gone_after` on: a property that stops answering
        text += ("\n\n_steps = [0]\n_schedule = Scheduler.schedule\n\n\ndef _counted(self):\n    _steps[0] += 1\n"
                 "    return _schedule(self)\n\n\ndef _num_blocks(self):\n"
                 f"    if _steps[0] >= {gone_after}:\n        raise AttributeError('num_blocks')\n"
                 "    return self.held_\n\n\n"
                 "Scheduler.schedule = _counted\nSequence.num_blocks = property(_num_blocks)\n")
    path = tmp_path / "p07_scheduler.py"
    path.write_text(text)
    assert not HIDDEN.search(text) and '"num_blocks", "status"' not in text, "a Sequence still has num_blocks"
    return path


def lazy_num_blocks(tmp_path: Path) -> Path:
    """impl with a Sequence that gets num_blocks on first use (no __slots__, none set in __init__): a sequence waiting
    for its first step has no such attribute, one that ran has it (from outside: a correct style both commands failed,
    I6 "after earlier steps read it", as another sequence's num_blocks had been read)."""
    slots = '("seq_id", "prompt_len", "max_tokens", "output", "num_computed", "num_blocks", "status")'
    text = IMPL.read_text().replace(f"    __slots__ = {slots}\n", "")
    text = text.replace("        self.num_blocks = 0  # KV blocks held; 0 unless running\n", "")
    text = re.sub(r"\b(seq|head|victim)\.num_blocks \+= ", r'\1.num_blocks = getattr(\1, "num_blocks", 0) + ', text)
    text = re.sub(r"\b(seq|head|victim)\.num_blocks\b(?!\s*=[^=])", r'getattr(\1, "num_blocks", 0)', text)
    path = tmp_path / "p07_scheduler.py"
    path.write_text(text)
    return path


def both(workload: Workload, got: WorkloadResult, factory: Factory, named: str) -> tuple[dict[str, Any], ...]:
    """The grader's trace (from the sandbox's `got`) and check's (run by `factory`) of `workload`, each checked: no
    white-box error, a note naming `named`, the spec's outputs, no invariant or differential finding."""
    traces = observed_trace(workload, got), drivers.run_workload(workload, factory)
    spec_outputs = {s.seq_id: list(s.output) for s in run_workload(workload).final.finished}
    for observed in traces:
        assert observed["white_box_error"] is None, observed["white_box_error"]
        assert named in observed["note"], observed["note"]
        assert observed["outputs"] == spec_outputs
        assert whitebox.invariants(workload, observed) == [] and checkers.differential(workload, observed) == []
    return traces


# a1 runs from step 1 (its num_blocks read); a2 arrives at step 2 and waits behind it (max_num_seqs 1): no num_blocks
WAITS = make_workload(Config(8, 2, 1, 8), [Request("a1", 3, 2), Request("a2", 2, 2, arrival=2)], name="waits")


def test_a_field_a_sequence_gets_on_first_use_is_missing_until_then_not_broken_in_both(tmp_path: Path) -> None:
    path = lazy_num_blocks(tmp_path)
    sandboxed = run_in_sandbox(path, [WAITS], LIMITS)
    factory = load_target(str(path))
    for observed in both(WAITS, sandboxed.workloads[0], factory, "a2.num_blocks"):
        # the snapshots that lack it are judged too, num_blocks being a value the judge can do without
        assert all(s[k] is not None for s in observed["steps"] for k in ("after_schedule", "after_update"))


def test_a_sequence_without_num_blocks_is_checked_black_box_by_both_commands(tmp_path: Path) -> None:
    path = without_num_blocks(tmp_path)
    sandboxed = run_in_sandbox(path, WORKLOADS, LIMITS)
    factory = load_target(str(path))
    for workload, got in zip(WORKLOADS, sandboxed.workloads, strict=True):
        both(workload, got, factory, "num_blocks")


@pytest.mark.parametrize("gone_after", [4])  # a1 and a2 arrive at step 3, read then
def test_a_field_read_and_then_gone_is_a_finding_in_both(tmp_path: Path, gone_after: int) -> None:
    path = without_num_blocks(tmp_path, gone_after)
    sandboxed = run_in_sandbox(path, [LATE], LIMITS)
    graded, checked = observed_trace(LATE, sandboxed.workloads[0]), drivers.run_workload(LATE, load_target(str(path)))
    for observed in (graded, checked):
        error = observed["white_box_error"]
        assert error is not None and "after earlier steps read it" in error["message"], observed["note"]
        assert "num_blocks" in error["message"]


def test_an_attribute_missing_for_a_whole_long_run_costs_its_reasons_once(tmp_path: Path) -> None:
    """A Scheduler with no num_preemptions whose __getattr__ explains, at length, what it has instead: the child sent
    the reasons of what was missing with every snapshot, so a correct run of 2,049 steps passed the report's cap and
    was a protocol error in grade (99.88, and PASS in check; from outside). They are sent when they change now."""
    from conformance.workloads.reach import blocked_head

    text = IMPL.read_text().replace("self.num_preemptions", "self._preemptions")
    assert text.count("self._preemptions") == 2
    explained = "        raise AttributeError(f'no attribute {name!r}; ' + 'what it keeps instead ' * 90)\n\n"
    text = text.replace("class Scheduler:\n", "class Scheduler:\n    def __getattr__(self, name):\n" + explained, 1)
    path = tmp_path / "p07_scheduler.py"
    path.write_text(text)
    run = blocked_head(2049)
    got = run_in_sandbox(path, [run], LIMITS).workloads[0]
    assert got.status == "ok", got.cause
    observed = observed_trace(run, got)
    assert "num_preemptions" in observed["note"] and observed["white_box_error"] is None
    assert observed["outputs"] == {s.seq_id: list(s.output) for s in run_workload(run).final.finished}


def test_every_missing_scheduler_attribute_is_named_in_checks_note(tmp_path: Path) -> None:
    """check's note named the first missing Scheduler attribute only, the grader's every one (from outside)."""
    text = IMPL.read_text().replace("self.num_preemptions", "self._preemptions").replace("self.finished", "self._done")
    path = tmp_path / "p07_scheduler.py"
    path.write_text(text)
    observed = drivers.run_workload(LATE, load_target(str(path)))
    assert observed["white_box_error"] is None
    assert all(f"no attribute {name!r}" in observed["note"] for name in ("num_preemptions", "finished")), \
        observed["note"]
