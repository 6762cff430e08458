"""Retention, aliasing, two instances with different configs, and process history: each probe catches a fault
planted in a small submission written here, passes impl, the spec and the reference, and a history-dependent
counterexample replays in a fresh process."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conformance.adapters import load_target
from conformance.checks.history import instances, other_workload
from conformance.checks.workload import check_workload
from conformance.profiles import Profile
from conformance.suite import run
from spec.golden import case_named
from spec.model import DEFAULT_POLICY

ROOT = Path(__file__).resolve().parents[2]
HEADER = "from impl.scheduler import Scheduler as Base, Sequence, SequenceStatus\n\n\n"
FAULTS = {
    # update() hands out one list and refills it every call: a caller's earlier result changes under it
    "reuses_update_list": """
        class Scheduler(Base):
            def update(self):
                got = super().update()
                if not hasattr(self, "mine"):
                    self.mine = []
                self.mine[:] = got
                return self.mine
        """,
    # ... the same with a deque (docs/api.md: any container that reads as a list)
    "reuses_update_deque": """
        import collections

        class Scheduler(Base):
            def update(self):
                got = super().update()
                if not hasattr(self, "mine"):
                    self.mine = collections.deque()
                self.mine.clear()
                self.mine.extend(got)
                return self.mine
        """,
    # schedule()'s dict is fresh, but the scheduler writes into it later
    "writes_returned_dict": """
        class Scheduler(Base):
            def schedule(self):
                self.last = super().schedule()
                return self.last

            def update(self):
                got = super().update()
                self.last["done"] = len(got)
                return got
        """,
    # update() returns copies, not the caller's Sequence objects
    "returns_copies": """
        import copy

        class Scheduler(Base):
            def update(self):
                return [copy.copy(s) for s in super().update()]
        """,
    # finished sequences are "cleaned up" one call later
    "resets_finished": """
        class Scheduler(Base):
            def update(self):
                for s in self.finished:
                    s.num_computed = 0
                return super().update()
        """,
    # block_size lives in a class-level dict: the last instance created wins
    "shared_config": """
        class Scheduler(Base):
            shared = {}

            @property
            def block_size(self):
                return Scheduler.shared["block_size"]

            @block_size.setter
            def block_size(self, value):
                Scheduler.shared["block_size"] = value
        """,
    # from the third instance in the process on, one token less of budget
    "third_instance": """
        CREATED = [0]

        class Scheduler(Base):
            def __init__(self, *args, **kwargs):
                super().__init__(*args, **kwargs)
                CREATED[0] += 1
                if CREATED[0] >= 3 and self.max_num_batched_tokens > 1:
                    self.max_num_batched_tokens -= 1
        """,
}
CORRECT = ["impl", "spec", "conformance/mutants/reference_scheduler.py"]
CASES = ["example1", "example2", "self_preemption"]


def write(tmp_path, name):
    p = tmp_path / f"{name}.py"
    p.write_text(HEADER + textwrap.dedent(FAULTS[name]))
    return str(p)


@pytest.mark.parametrize("name, rule", [("reuses_update_list", "H.retained"), ("reuses_update_deque", "H.retained"),
                                        ("writes_returned_dict", "H.retained"),
                                        ("returns_copies", "H.aliased"), ("resets_finished", "H.retained")])
def test_values_kept_to_the_end_of_the_run_catch_changes_and_aliasing(tmp_path, name, rule):
    factory = load_target(write(tmp_path, name))
    found = check_workload(case_named("example1").workload, factory, only=("hygiene",), extra_probes=False)
    assert found["hygiene"] is not None and found["hygiene"].rule == rule, found


def test_a_list_reused_across_calls_is_named_as_such(tmp_path):
    p = tmp_path / "same_list.py"
    p.write_text(HEADER + textwrap.dedent("""
        class Scheduler(Base):
            NONE = []  # returned whenever nothing finished

            def update(self):
                return super().update() or Scheduler.NONE
        """))
    found = check_workload(case_named("self_preemption").workload, load_target(str(p)), only=("hygiene",),
                           extra_probes=False)["hygiene"]
    assert found.rule == "H.aliased" and "same object as step 1's update() result" in found.message


def test_two_instances_with_different_configs_catch_a_class_level_config(tmp_path):
    w = case_named("example1").workload
    assert other_workload(w).config.block_size != w.config.block_size
    [f] = instances(w, load_target(write(tmp_path, "shared_config")))
    assert f.rule == "H.instances" and "block_size=5" in f.message
    assert check_workload(w, load_target(write(tmp_path, "shared_config")), only=("hygiene",))["hygiene"].rule == \
        "H.instances"


@pytest.mark.parametrize("target", CORRECT)
def test_correct_schedulers_pass_every_probe(target):
    factory = load_target(str(ROOT / target) if target.endswith(".py") else target)
    for case in CASES:
        w = case_named(case).workload
        assert check_workload(w, factory, only=("hygiene", "invariants", "equivalence")) == \
            {"hygiene": None, "invariants": None, "equivalence": None}
        assert instances(w, factory) == []


def replay(trace, target):
    """Replay in a fresh process: (exit code, the differential line)."""
    done = subprocess.run([sys.executable, "-m", "conformance", "replay", str(trace), target], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    return done.returncode, next(line for line in done.stdout.splitlines() if line.startswith("differential"))


def test_a_history_dependent_counterexample_carries_its_prelude_and_replays_in_a_fresh_process(tmp_path):
    fault = write(tmp_path, "third_instance")
    report = run(fault, Profile("tiny", None, 3, 2, 5), families=("counterexamples",))
    cx = report.checks["hygiene"].counterexample  # no run fails on a fresh copy: hygiene's, not differential's
    assert report.checks["differential"].status == "pass", report.summary()
    assert cx is not None and cx.finding.rule == "H.history" and "differential [P2" in cx.finding.message
    assert [p["mode"] for p in cx.prelude] == ["before", "before"]  # the third instance in a process fails
    from conformance.reports.traces import write_all

    [trace, _] = write_all(cx, 1, tmp_path / "t", fault)
    assert "prelude" in json.loads(trace.read_text())
    code, line = replay(trace, fault)
    assert code == 1 and line.split()[1] == "FAIL"
    assert replay(trace, "impl") == (0, "differential  pass")
    bare = json.loads(trace.read_text())
    del bare["prelude"]  # without its history the same workload's first run follows the spec
    (tmp_path / "bare.json").write_text(json.dumps(bare))
    assert replay(tmp_path / "bare.json", fault)[1] == "differential  pass"


@pytest.mark.long
def test_state_keyed_by_id_replays_in_a_fresh_process_by_running_the_case_until_it_fails(tmp_path):
    """A registry keyed by id(self) (tests/conformance/unseen: impl_registry_by_id): a new instance inherits the
    ids of a freed one only when the allocator gives it the same address, after no fixed count of earlier runs.
    The counterexample asks replay to run it until it fails (at most REPEAT_MAX times), and replay and the
    pytest file, each in a fresh process, fail; the correct impl passes both."""
    from conformance.reports.traces import write_all
    from tests.conformance.unseen.planted import source

    fault = tmp_path / "registry.py"
    fault.write_text(source("impl_registry_by_id"))
    report = run(str(fault), Profile("tiny", None, 3, 2, 5), families=("counterexamples",))
    cx = report.checks["hygiene"].counterexample
    assert cx is not None and cx.finding.rule == "H.history", report.summary()
    assert cx.prelude == [{"mode": "repeat", "times": 256}]
    trace, test_file = write_all(cx, 1, tmp_path / "t", str(fault))
    done = subprocess.run([sys.executable, "-m", "conformance", "replay", str(trace), str(fault)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "the first that failed" in done.stdout, done.stdout + done.stderr
    assert replay(trace, "impl")[0] == 0
    pytest_run = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(test_file)]
    failed = subprocess.run(pytest_run, capture_output=True, text=True, timeout=120)
    assert failed.returncode == 1 and "already added" in failed.stdout, failed.stdout
    ok = tmp_path / "ok.py"
    ok.write_text((ROOT / "impl" / "scheduler.py").read_text())
    passed = subprocess.run(pytest_run, capture_output=True, text=True, timeout=120,
                            env={**os.environ, "SCHEDCHECK_SUBMISSION": str(ok)})
    assert passed.returncode == 0, passed.stdout


@pytest.mark.long
def test_a_finding_of_schedulers_alive_at_once_is_confirmed_and_replayed_with_the_whole_group(tmp_path):
    """Arenas shared past 256 instances (tests/conformance/unseen: impl_instance_arenas): the finding needs the
    257 schedulers of the group alive at once. A fresh copy confirms it by running the group again (not the lane
    alone, which passes, and once made the finding [H.history] with no replay), and the trace's prelude is the
    group, so replay and the pytest file fail in a fresh process; impl passes both."""
    from conformance.checks.diagnosis import history_prelude
    from conformance.checks.fresh import Fresh
    from conformance.checks.history import group_finding
    from conformance.reports.report import Counterexample
    from conformance.reports.traces import write_all
    from conformance.workloads.reach import group_lanes
    from tests.conformance.unseen.planted import source

    fault = tmp_path / "arenas.py"
    fault.write_text(source("impl_instance_arenas"))
    lanes = list(group_lanes("reach/instances-257-alive", DEFAULT_POLICY))
    finding, lane = group_finding(lanes, load_target(str(fault)))
    assert finding is not None and finding.rule == "H.instances"
    confirmed = Fresh.of(str(fault), None, False).confirm("hygiene", lane, finding, "reach/instances-257-alive")
    assert confirmed is not None and confirmed.rule == "H.instances"
    cx = Counterexample("hygiene", finding, lane, "reach/instances-257-alive")
    prelude, note = history_prelude(str(fault), None, cx, False)
    assert note is None and prelude is not None and [p["mode"] for p in prelude] == ["group"] * 257
    trace, test_file = write_all(Counterexample("hygiene", finding, lane, cx.source, prelude), 1, tmp_path / "t",
                                 str(fault))
    done = subprocess.run([sys.executable, "-m", "conformance", "replay", str(trace), str(fault)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "257 schedulers alive at once" in done.stdout, done.stdout + done.stderr
    assert replay(trace, "impl")[0] == 0
    failed = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(test_file)],
                            capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert failed.returncode == 1 and "257 schedulers alive at once" in failed.stdout, failed.stdout
