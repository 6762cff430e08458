"""Isolation by construction: what the child can see, read, keep and spend, at every level the machine has.

A probe submission walks the filesystem from inside the sandbox and prints what it finds; hostile
submissions (tests/grading/hostile/, appended to the reference scheduler) each try one escape and
misbehave visibly if it works, so "ok" means the attack failed. Markers and canaries live in this
test's temporary folders only.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from pathlib import Path

import pytest

from conformance.sandbox.isolation import LEVELS, works
from conformance.sandbox.run import run_in_sandbox
from conformance.sandbox.types import Limits, PlannedRun, SandboxResult
from spec.model import Config
from spec.trace import Request, make_workload
from tests.grading.test_sandbox import ARRIVALS, SELF_PREEMPTION, SWEPT, TIGHT, hostile

PROJECT = Path(__file__).resolve().parents[2]
AVAILABLE = [level for level in LEVELS if works(level)]
ROOT = Path(__file__).resolve().parents[2]
NAMESPACES = [level for level in AVAILABLE if level != "process-group"]
RUNTIME_TOPS = {"bin", "dev", "lib", "lib32", "lib64", "libx32", "proc", "sandbox", "sbin", "tmp", "usr"}

WALK_FILES = r'''
import json, os, sys
skip = ("/proc", "/sys", "/dev", "/usr", "/bin", "/sbin", "/lib", {runtime!r})
seen, readable = [], []
for root, dirs, files in os.walk("/"):
    if root.startswith(skip) and root != "/":
        dirs[:] = []
        continue
    seen += [os.path.join(root, name) for name in files]
'''  # every file outside the runtime, in `seen` (a format string: {runtime} is the interpreter's prefix)
WALK = WALK_FILES + r'''
status = dict(l.split(":", 1) for l in open("/proc/self/status").read().splitlines() if ":" in l)
for path in ({canary!r}, "/etc/shadow", {project!r} + "/spec/rules.py"):
    try:
        open(path, "rb").read(1)
        readable.append(path)
    except OSError:
        pass
print(json.dumps({{"tops": sorted(os.listdir("/")), "files": sorted(seen)[:200], "readable": readable,
                  "uid": os.getuid(), "gid": os.getgid(), "cap": int(status["CapEff"], 16)}}))
sys.stdout.flush()
raise SystemExit("walked")
'''


def at(level: str, limits: Limits = TIGHT) -> Limits:
    return dataclasses.replace(limits, isolation=level)


def walk(level: str, tmp_path: Path) -> dict[str, object]:
    private = tmp_path / "grader-private"
    private.mkdir(mode=0o700)
    canary = private / "canary.txt"
    canary.write_text("secret")
    path = tmp_path / "walk" / "p07_scheduler.py"
    path.parent.mkdir()
    path.write_text(WALK.format(runtime=os.path.realpath(sys.base_prefix), canary=str(canary), project=str(PROJECT)))
    result = run_in_sandbox(path, [SELF_PREEMPTION], at(level))
    assert result.load_error is not None and "walked" in result.load_error, (result.load_error, result.stderr)
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.mark.long
@pytest.mark.parametrize("level", AVAILABLE)
def test_no_level_gives_capabilities_root_or_the_graders_private_files(level: str, tmp_path: Path) -> None:
    seen = walk(level, tmp_path)
    assert seen["cap"] == 0
    if os.geteuid() == 0:
        assert seen["uid"] != 0 and seen["gid"] != 0
    assert not [p for p in seen["readable"] if "canary" in p or p == "/etc/shadow"], seen["readable"]


@pytest.mark.parametrize("level", NAMESPACES)
def test_the_namespace_levels_show_the_runtime_and_the_submission_only(level: str, tmp_path: Path) -> None:
    seen = walk(level, tmp_path)
    runtime_top = Path(os.path.realpath(sys.base_prefix)).parts[1]
    assert set(seen["tops"]) <= RUNTIME_TOPS | {runtime_top}, seen["tops"]
    assert seen["files"] == ["/sandbox/p07_scheduler.py"], seen["files"]
    assert seen["readable"] == []


def test_every_result_reports_its_level_and_the_childs_own_privileges() -> None:
    from tests.grading.test_sandbox import CORRECT

    result = run_in_sandbox(CORRECT, [SELF_PREEMPTION], TIGHT)
    assert result.isolation.level == AVAILABLE[0] and result.child_cap_eff == 0
    assert result.isolation.no_capabilities and result.notes == ()
    if os.geteuid() == 0:
        assert result.child_uid is not None and result.child_uid >= 0x30000


def run_case(name: str, tmp_path: Path, level: str | None = None, workloads: list[object] | None = None,
             limits: Limits = TIGHT) -> SandboxResult:
    return run_in_sandbox(hostile(name, tmp_path), workloads or [SELF_PREEMPTION],
                          dataclasses.replace(limits, isolation=level))


@pytest.mark.long
@pytest.mark.parametrize(("name", "status", "words"), [
    ("read_by_handle", "ok", ""),
    ("read_host_files", "ok", ""),
    ("capabilities", "ok", ""),
    ("shm_fill", "ok", ""),
    ("deep_dirs", "ok", ""),
    ("slow_correct", "ok", ""),
    ("fork_burner", "cpu_limit", "CPU time (its whole process tree)"),
    ("rt_signal", "signal", "SIGRTMIN+3"),
])
def test_hostile_case_gets_its_verdict(name: str, status: str, words: str, tmp_path: Path) -> None:
    result = run_case(name, tmp_path, limits=SWEPT if name == "fork_burner" else TIGHT)
    got = result.workloads[0]
    assert got.status == status and words in got.cause, got.cause
    assert result.survivors == 0 and result.load_error is None


def test_daemons_die_with_the_workload_that_started_them(tmp_path: Path) -> None:
    result = run_case("daemon_burner", tmp_path, None, [SELF_PREEMPTION, ARRIVALS, SELF_PREEMPTION], SWEPT)
    assert [w.status for w in result.workloads] == ["ok", "ok", "ok"], result.causes()
    assert result.children == 1 and result.survivors == 0
    assert result.cpu_seconds < 1.5  # three daemons never burned for long


def test_state_left_by_one_child_is_gone_for_the_next(tmp_path: Path) -> None:
    level = NAMESPACES[0] if NAMESPACES else pytest.skip("no namespace level on this machine")
    before = set(os.listdir("/dev/shm")) | set(os.listdir("/tmp"))
    assert run_case("shared_drop", tmp_path, level).workloads[0].status == "ok"
    picked = run_case("shared_pickup", tmp_path, level)
    assert picked.workloads[0].status == "ok", picked.workloads[0].cause
    after = set(os.listdir("/dev/shm")) | set(os.listdir("/tmp"))
    assert not {n for n in after - before if n.startswith("schedcheck-hostile")}


def test_cpu_of_the_whole_tree_is_counted_not_wall_time(tmp_path: Path) -> None:
    quick = run_case("read_by_handle", tmp_path)
    path = hostile("slow_correct", tmp_path)
    path.write_text(path.read_text().replace("n < 100_000", "n < 4_000_000"))  # about 0.2 s per Scheduler()
    slow = run_in_sandbox(path, [SELF_PREEMPTION], TIGHT)
    assert quick.workloads[0].status == slow.workloads[0].status == "ok"
    assert slow.workloads[0].seconds > quick.workloads[0].seconds + 0.05  # CPU seconds, whatever the load


def test_a_report_flood_is_cut_at_the_parents_caps(tmp_path: Path) -> None:
    limits = dataclasses.replace(TIGHT, report_bytes=4 << 20)
    result = run_case("report_flood", tmp_path, None, [SELF_PREEMPTION, ARRIVALS], limits)
    assert all(w.status in ("protocol", "load_error") for w in result.workloads), result.causes()
    assert result.survivors == 0


def test_the_fresh_dict_probe_is_invisible_before_the_call_returns(tmp_path: Path) -> None:
    probe = PlannedRun(SELF_PREEMPTION, "mutate")
    result = run_case("probe_frames", tmp_path, None, [SELF_PREEMPTION, probe, ARRIVALS])
    assert [w.status for w in result.workloads] == ["ok", "ok", "ok"], result.causes()


def test_the_probe_channel_is_empty_until_the_child_asks(tmp_path: Path) -> None:
    """The flag is written only when the driver asks, after the first schedule() returned: nothing to tee."""
    probe = PlannedRun(SELF_PREEMPTION, "mutate")
    result = run_case("probe_peek", tmp_path, None, [SELF_PREEMPTION, probe, ARRIVALS])
    assert [w.status for w in result.workloads] == ["ok", "ok", "ok"], result.causes()


def test_a_syntax_error_reaches_the_report_structured(tmp_path: Path) -> None:
    path = tmp_path / "p07_scheduler.py"
    path.write_text((Path(__file__).parent / "hostile" / "syntax_error.txt").read_text())
    result = run_in_sandbox(path, [SELF_PREEMPTION], TIGHT)
    failure = result.load_failure
    assert failure is not None and failure.kind == "syntax" and failure.exc_type == "SyntaxError"
    assert (failure.file, failure.line, failure.text, failure.column) == ("p07_scheduler.py", 8, "def broken(:", 12)
    assert result.load_error is not None and "SyntaxError" in result.load_error


def test_an_import_error_reaches_the_report_structured(tmp_path: Path) -> None:
    path = tmp_path / "p07_scheduler.py"
    path.write_text("import numpy_that_is_not_there\n")
    failure = run_in_sandbox(path, [SELF_PREEMPTION], TIGHT).load_failure
    assert failure is not None and (failure.kind, failure.exc_type) == ("exception", "ModuleNotFoundError")
    assert "numpy_that_is_not_there" in failure.message and failure.line is None


@pytest.mark.long
@pytest.mark.parametrize("level", [level for level in AVAILABLE if level != AVAILABLE[0]])
@pytest.mark.parametrize("name", ["read_by_handle", "capabilities", "fork_burner"])
def test_weaker_levels_keep_the_privilege_and_cpu_guarantees(level: str, name: str, tmp_path: Path) -> None:
    result = run_case(name, tmp_path, level, limits=SWEPT)
    assert result.isolation.level == level and result.child_cap_eff == 0
    assert result.workloads[0].status == ("cpu_limit" if name == "fork_burner" else "ok"), result.causes()
    assert result.survivors == 0


def test_the_submission_budget_counts_restarts_so_its_cut_is_the_same_every_run(tmp_path: Path) -> None:
    from conformance.sandbox.budget import submission_budget

    with submission_budget(60, 300) as budget:
        budget.restarts = 2
        first = run_case("os_exit", tmp_path, None, [SELF_PREEMPTION, ARRIVALS, SELF_PREEMPTION])
        (tmp_path / "again").mkdir()
        second = run_case("os_exit", tmp_path / "again", None, [ARRIVALS, SELF_PREEMPTION])
    assert [w.status for w in first.workloads] == ["exit", "exit", "exit"]
    assert first.children == 3 and second.children == 1  # a new call's first child is not a restart
    assert [w.status for w in second.workloads] == ["exit", "abandoned"]  # a crash's doing, not a timeout's
    assert "2 restarts" in second.workloads[1].cause


THREAD_AT_IMPORT = "import threading\nthreading.Thread(target=lambda: None).start()\n"
FORK_IN_SCHEDULE = ("import os as _os\n_plain = Scheduler.schedule\n\n\ndef _forking(self):\n"
                    "    if _os.fork() == 0:\n        _os._exit(0)\n    return _plain(self)\n\n\n"
                    "Scheduler.schedule = _forking\n")


@pytest.mark.parametrize("level", AVAILABLE)
def test_without_the_filter_the_child_can_start_no_thread_and_no_process(level: str, tmp_path: Path) -> None:
    """A scheduler needs no thread or process, and what a thread burns depends on scheduling luck: where the
    kernel refuses the one-process filter, the default limits (processes=0) still make starting one fail,
    the same way every run, at every level that runs the child as a non-root uid."""
    base = (ROOT / "impl" / "scheduler.py").read_text()
    for name, tail, want in (("thread", THREAD_AT_IMPORT, "load_error"), ("fork", FORK_IN_SCHEDULE, "exception")):
        path = tmp_path / name / "p07_scheduler.py"
        path.parent.mkdir()
        path.write_text(base + "\n\n" + tail)
        limits = dataclasses.replace(SWEPT, processes=Limits().processes, isolation=level)
        result = run_in_sandbox(path, [SELF_PREEMPTION], limits)
        if not result.isolation.non_root:
            pytest.skip(f"{level} runs the child as root here: RLIMIT_NPROC does not bind root")
        assert [w.status for w in result.workloads] == [want], result.causes()
        assert ("can't start new thread" if name == "thread" else "BlockingIOError") in \
            (result.load_error or "") + result.workloads[0].cause


SET_OF_SEQUENCES = ("\n\nclass Scheduler(Scheduler):  # finished sequences collected in a set, as a student might\n"
                    "    def update(self):\n        return list(set(super().update()))\n")
RANDOM_VICTIM = ("\n\nimport random as _random\n_plain = Scheduler.schedule\n\n\ndef _schedule(self):\n"
                 "    self.running.sort(key=lambda q: _random.random())  # a tie broken by chance\n"
                 "    return _plain(self)\n\n\nScheduler.schedule = _schedule\n")
CROWD = make_workload(Config(2000, 4, 400, 4000), [Request(f"r{i}", 3, 2) for i in range(300)], name="crowd")


@pytest.mark.parametrize("tail", [SET_OF_SEQUENCES, RANDOM_VICTIM], ids=["set-of-objects", "random"])
def test_a_submission_that_depends_on_addresses_or_random_does_the_same_every_run(tail, tmp_path):
    """The child runs without address-space randomization and with `random` seeded, so a set of a few hundred
    Sequence objects (ordered by their addresses) and an unseeded random draw come out the same each run."""
    path = tmp_path / "p07_scheduler.py"
    path.write_text((ROOT / "impl" / "scheduler.py").read_text() + tail)
    runs = [run_in_sandbox(path, [CROWD], Limits()).workloads[0] for _ in range(2)]
    assert runs[0].trace is not None and runs[0].steps
    assert runs[0].steps == runs[1].steps and runs[0].status == runs[1].status


def test_the_child_can_only_move_the_start_of_workload_zero_earlier() -> None:
    """The parent may read `loaded` after workload 0 began (a loaded machine); the child's own CPU figure then marks
    where the import ended. Only a valid figure counts, and the parent takes the smaller of it and its sample, so a
    child that lies can only be charged more."""
    from conformance.sandbox.watch import loaded_cpu
    assert loaded_cpu({"cpu_us": 250_000}) == 0.25
    for bad in ({}, {"cpu_us": -1}, {"cpu_us": True}, {"cpu_us": 0.5}, {"cpu_us": "1"}):
        assert loaded_cpu(bad) == float("inf"), bad
