"""The white-box check's shortcut (a call whose inputs are the spec's gets the spec's own verdict) changes no finding.

The same observed traces are judged with the shortcut and without it (``_spec_calls`` empty, so every
call is judged from the submission's snapshot); the findings must be equal, for a correct
submission and for every catalog bug, on the golden cases and a slice of the corpus.
"""

from __future__ import annotations

import pytest

from conformance.adapters import load_target
from conformance.checks import whitebox
from conformance.drivers import run_workload
from conformance.grading.calibrate import write_class
from conformance.grading.judge import corpus_cases, corpus_id

CASES = 120


@pytest.fixture(scope="module")
def observed(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[str, object, dict[str, object]]]:
    dest = tmp_path_factory.mktemp("shortcut-class")
    workloads = [c.workload for c in corpus_cases(corpus_id())[0][:CASES]]
    out = []
    for path in write_class(dest):
        factory = load_target(str(path))
        out += [(path.stem, w, run_workload(w, factory)) for w in workloads]
    return out


@pytest.mark.long
def test_the_shortcut_changes_no_finding(observed: list, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[type-arg]
    fast = [whitebox.invariants(w, o) for _, w, o in observed]
    monkeypatch.setattr(whitebox, "_spec_calls", lambda w: ())
    slow = [whitebox.invariants(w, o) for _, w, o in observed]
    differ = [(name, w.name) for (name, w, _), a, b in zip(observed, fast, slow, strict=True) if a != b]
    assert not differ, f"the shortcut changed findings: {differ[:5]}"
    assert sum(map(bool, slow)) >= 10, "too few findings to compare: widen CASES"


def test_a_submission_that_leaves_the_spec_is_judged_on_its_own_state(observed: list) -> None:  # type: ignore[type-arg]
    """Once a snapshot differs from the spec's, its own invariants are checked: a state that breaks I1
    is named as I1 even though every earlier call took the shortcut."""
    name, w, o = next((n, w, o) for n, w, o in observed if n == "correct" and len(o["steps"]) >= 3)
    import copy

    broken = copy.deepcopy(o)
    snap = broken["steps"][2]["after_update"]
    snap["blocks_used"] = w.config.num_blocks + 1
    found = whitebox.invariants(w, broken)
    assert found and found[0].rule == "I1" and found[0].step == 3, found
    assert whitebox.invariants(w, o) == [], f"{name} on {w.name}"


def test_the_spec_state_given_as_json_judges_as_the_state_itself() -> None:
    """_call compares a snapshot with the spec's state after the call; given that state already as JSON (as
    _spec_calls gives it), every call's verdict is the one computed from the state, equal or not."""
    from dataclasses import replace

    from spec.model import Seq, State
    from spec.trace import snapshot_to_json

    for case in corpus_cases(corpus_id())[0][:40]:
        w = case.workload
        requests = {r.seq_id: (r.prompt_len, r.max_tokens) for r in w.requests}
        before = State(w.config)
        for spec in whitebox.expected_trace(w).steps:
            arrivals = tuple(Seq(i, *requests[i]) for i in spec.added)
            before = replace(before, waiting=before.waiting + arrivals)
            pending = [[i, n] for i, n in spec.batch]
            for call, state in (("schedule", spec.after_schedule), ("update", spec.after_update)):
                want = snapshot_to_json(state)
                for snap in (want, {**want, "blocks_used": want["blocks_used"] + 1}):  # the spec's, and one off
                    fresh = whitebox._call(spec.step, call, w.config, requests, before, tuple(spec.batch), snap,
                                           pending, spec)
                    given = whitebox._call(spec.step, call, w.config, requests, before, tuple(spec.batch), snap,
                                           pending, spec, want)
                    assert given == fresh
                before = whitebox.to_state(w.config, requests, want, pending if call == "schedule" else None)
