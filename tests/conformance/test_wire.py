"""The wire adapter: the example programs pass through a pipe, a planted bug gives the in-process mutant's
finding, and hostile programs give a clear finding or LoadError, never a hang or a traceback."""

import gc
import os
import shlex
import shutil
import sys
import textwrap
import time
from pathlib import Path

import pytest

from conformance.adapters import LoadError, load_target
from conformance.checks.workload import check_workload, probe_white_box
from conformance.cli import main
from conformance.drivers import run_workload
from conformance.profiles import Profile
from conformance.suite import run
from conformance.wire import WireFactory, open_target
from conformance.workloads.corpus import families_except
from spec.golden import case_named

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "wire"
PY = f"{shlex.quote(sys.executable)} {EXAMPLES / 'scheduler.py'}"
NODE = shutil.which("node")
JS = f"{shlex.quote(NODE or 'node')} {EXAMPLES / 'scheduler.js'}"
SMALL = Profile("wire-small", None, 10, 3, 10)  # golden + one corpus family + a few generated runs
needs_node = pytest.mark.skipif(NODE is None, reason="node is not on PATH")


def small_run(cmd: str, adapter: str | None = "conformance.wire"):
    return run(cmd, SMALL, adapter=adapter, families=("counterexamples",))


def rules(report) -> dict[str, str]:
    return {name: c.counterexample.finding.rule for name, c in report.checks.items() if c.counterexample}


# --- the examples ----------------------------------------------------------------------------------


def test_python_example_passes_golden_and_the_counterexample_corpus_through_the_wire():
    report = small_run(PY)
    assert report.verdict == "PASS", report.summary()
    assert report.white_box and report.notes == []
    assert report.checks["differential"].runs >= 77


def test_a_planted_bug_over_the_wire_gives_the_in_process_mutants_rules():
    wire = small_run(PY + " --bug victim_first")
    mutant = small_run("conformance/mutants/victim_first.py", adapter=None)
    assert wire.verdict == "FAIL"
    got, want = rules(wire), rules(mutant)
    assert got["differential"] == want["differential"] == "P2"
    assert {k: v for k, v in got.items() if k != "hygiene"} == want
    # a list of pairs shows what a dict hides: victim_first schedules a preempted sequence twice in one step
    assert "names 'a1' twice" in wire.checks["hygiene"].counterexample.finding.message


@needs_node
def test_node_example_passes_and_its_bug_switch_gives_the_mutants_differential_rule():
    assert small_run(JS).verdict == "PASS"
    assert rules(small_run(JS + " --bug victim_first"))["differential"] == "P2"


def test_replay_cli_takes_the_command_and_rejects_a_path_with_it(capsys):
    vector = str(ROOT / "conformance/workloads/data/counterexamples/capacity_off_by_one.golden.json")
    assert main(["replay", vector, str(ROOT / "conformance/mutants/victim_first.py")]) == 1
    in_process = capsys.readouterr().out.splitlines()[0]
    assert main(["replay", vector, "--wire", PY + " --bug victim_first"]) == 1
    assert capsys.readouterr().out.splitlines()[0] == in_process  # differential  FAIL  [P1.preempt] step 2: ...
    assert main(["replay", vector, "--wire", PY]) == 0
    assert f"PASS: --wire {shlex.quote(PY)} follows the spec" in capsys.readouterr().out
    assert main(["replay", vector, "impl", "--wire", PY]) == 2
    assert "takes no PATH" in capsys.readouterr().err
    assert main(["check", "--quiet"]) == 2
    assert main(["check", "impl", "--wire-timeout", "1", "--quiet"]) == 2


@pytest.mark.slow
def test_check_cli_names_the_command_and_writes_replayable_traces(tmp_path, capsys):
    trace_dir = tmp_path / "t"
    cmd = PY + " --bug victim_first"
    assert main(["check", "--wire", cmd, "--quiet", "--trace-dir", str(trace_dir)]) == 1
    out = capsys.readouterr().out
    assert f"schedcheck check --wire {shlex.quote(cmd)}" in out and "[P2]" in out
    assert f"(rerun: schedcheck replay {trace_dir / '0002_differential.json'} --wire {shlex.quote(cmd)})" in out
    assert main(["replay", str(trace_dir / "0002_differential.json"), "--wire", cmd]) == 1


@pytest.mark.slow
@pytest.mark.parametrize("example", ["py", "js"])
def test_examples_pass_the_quick_profile(example):
    if example == "js" and NODE is None:
        pytest.skip("node is not on PATH")
    # JavaScript numbers are exact only up to 2**53: the JS example cannot hold scale-large-numbers' prompts
    families = families_except(["scale-large-numbers"]) if example == "js" else None
    report = run(PY if example == "py" else JS, "quick", adapter="conformance.wire", families=families)
    assert report.verdict == "PASS", report.summary()


# --- hostile programs ------------------------------------------------------------------------------

HOSTILE = textwrap.dedent("""
    import json, os, subprocess, sys, time
    sys.path.insert(0, {examples!r})
    import scheduler as ok
    mode = sys.argv[1]
    if mode == "silent":
        time.sleep(60)
    if mode == "exit":
        print("cannot open the model: no such file", file=sys.stderr)
        sys.exit(3)
    if mode == "spawn":
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    instances, schedules = dict(), 0
    while True:
        message = ok.receive()
        if message["op"] == "hello" and mode in ("old", "blind"):
            ok.send(dict(ok=True, protocol="schedcheck-wire/" + ("0" if mode == "old" else "1"), name=mode,
                         snapshot=mode != "blind"))
            continue
        if message["op"] == "snapshot" and mode == "badsnap":
            ok.send(dict(snapshot=dict(blocks_used="3")))
            continue
        if message["op"] == "close" and mode == "echo_close" and not os.path.exists(__file__ + ".echoed"):
            open(__file__ + ".echoed", "w").close()  # one reply too many, once in all the program's runs
            sys.stdout.write(json.dumps(ok.handle(message, instances, None)) + chr(10) + json.dumps(dict(ok=True))
                             + chr(10))
            sys.stdout.flush()  # both lines in one write: the extra one is there when the next workload starts
            continue
        if message["op"] == "schedule":
            schedules += 1
            if schedules == 2:
                if mode == "garbage":
                    print("step 2 went fine")
                    sys.stdout.flush()
                    continue
                if mode == "hang":
                    time.sleep(60)
                if mode == "crash":
                    print("Traceback: IndexError: pop from empty list", file=sys.stderr)
                    sys.exit(7)
                if mode == "segv":
                    os.kill(os.getpid(), 11)
                if mode == "shape":
                    ok.send(dict(batch=dict(a1=1)))
                    continue
                if mode == "huge":
                    sys.stdout.write("x" * (17 << 20))
                    sys.stdout.flush()
                    time.sleep(60)
                if mode == "error":
                    ok.send(dict(error="RuntimeError: the batch planner gave up"))
                    continue
        ok.send(ok.handle(message, instances, None))
""")


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    path = tmp_path_factory.mktemp("wire") / "hostile.py"
    path.write_text(HOSTILE.format(examples=str(EXAMPLES)))
    return lambda mode: f"{shlex.quote(sys.executable)} {path} {mode}"


def hygiene_message(factory) -> str:
    found = check_workload(case_named("example2").workload, factory, only=("hygiene",), extra_probes=False)
    finding = found["hygiene"]
    assert finding is not None and finding.rule == "H.raised" and finding.step == 2
    return finding.message


@pytest.mark.parametrize("mode, says", [
    ("garbage", "the reply is not JSON: 'step 2 went fine'; write exactly one JSON object per line"),
    ("hang", "no reply within 0.5 s"),
    ("crash", "exited with code 7; its stderr ends: 'Traceback: IndexError: pop from empty list'"),
    ("segv", "the program closed its stdout before replying; the program was killed by signal 11"),
    ("shape", 'expected {"batch": [[seq_id, n], ...]}'),
    ("huge", "a line longer than 16777216 bytes"),
    ("error", "WireError: RuntimeError: the batch planner gave up"),
])
def test_a_hostile_program_is_a_clear_finding_at_the_step_it_misbehaves(hostile, mode, says):
    with WireFactory(hostile(mode), reply_seconds=0.5) as factory:
        message = hygiene_message(factory)
        assert says in message, message
        assert "Traceback (most recent" not in message
        if mode == "error":  # an error reply leaves the program usable; it misbehaves at its 2nd schedule only
            assert check_workload(case_named("example1").workload, factory)["hygiene"] is None
        else:  # after a broken exchange the next instance gets a fresh program, which misbehaves again
            assert says in hygiene_message(factory)


def test_a_workload_starts_in_step_after_an_earlier_one_left_a_reply_nobody_asked_for(hostile):
    """A program that answers out of step (a late reply, one too many) is started afresh before the next
    workload: its findings belong to the earlier workload, never to an innocent one run after it."""
    w = case_named("example2").workload
    with WireFactory(hostile("echo_close"), reply_seconds=0.5) as factory:
        first = run_workload(w, factory)
        assert first["stop"] == "done"
        gc.collect()  # its instance is closed when the next one is made: the program answers that close twice
        again = run_workload(w, factory)
        assert again["stop"] == "done" and again["steps"] == first["steps"], again.get("error")
        assert factory.conn.broken is None  # the fresh program's own conversation


@pytest.mark.parametrize("mode, says", [
    ("silent", "no reply within 0.5 s"),
    ("exit", "exited with code 3; its stderr ends: 'cannot open the model: no such file'"),
    ("old", "the program speaks 'schedcheck-wire/0', this suite 'schedcheck-wire/1'"),
])
def test_a_program_that_does_not_say_hello_properly_is_a_load_error(hostile, mode, says):
    with pytest.raises(LoadError, match="hello") as e:
        WireFactory(hostile(mode), reply_seconds=0.5)
    assert says in str(e.value)


def test_snapshots_false_is_a_note_and_a_malformed_snapshot_an_invariants_finding(hostile):
    with WireFactory(hostile("blind")) as factory:
        assert probe_white_box(factory).note == ('white-box checks skipped: the wire program announced "snapshot": '
                                                  'false in its hello')
        assert all(f is None for f in check_workload(case_named("example2").workload, factory).values())
    with WireFactory(hostile("badsnap")) as factory:
        finding = check_workload(case_named("example2").workload, factory, only=("invariants",))["invariants"]
        assert finding.rule == "I6" and "blocks_used is '3', expected an integer" in finding.message


def test_a_command_that_cannot_start_is_a_load_error_with_the_fix(capsys):
    with pytest.raises(LoadError, match="cannot start 'no-such-program --flag'.*--wire"):
        load_target("no-such-program --flag", "conformance.wire")
    assert main(["check", "--wire", "no-such-program", "--quiet"]) == 2
    assert "cannot load --wire no-such-program: cannot start" in capsys.readouterr().err


def living_members(group: int) -> set[int]:
    """Processes of a process group that are not zombies (a killed child waits for its new parent to reap it)."""
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()  # after the command name: state, ppid, pgrp
        except OSError:
            continue
        if int(fields[2]) == group and fields[0] != "Z":
            found.add(int(stat.parent.name))
    return found


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_the_program_and_its_children_are_killed_when_the_factory_closes(hostile):
    factory = open_target(hostile("spawn"))
    proc = factory.conn.proc
    assert len(living_members(proc.pid)) == 2  # the program and the child it spawned, in one process group
    factory.close()
    assert proc.returncode is not None
    for _ in range(1500):  # a kill takes effect within milliseconds; waiting up to 30 s only absorbs load
        if not living_members(proc.pid):
            break
        time.sleep(0.02)
    assert not living_members(proc.pid), "the spawned child outlived the program"


def test_a_program_that_stops_answering_stops_the_suite_after_a_few_hangs(hostile, monkeypatch):
    """Each run waits one reply timeout; like an endless loop in process, the hangs are counted and the run stops."""
    from conformance import suite

    report = suite.run(hostile("hang"), "quick", adapter="conformance.wire?reply_seconds=0.3")
    assert report.verdict == "FAIL"
    assert any(n.startswith("stopped early:") for n in report.notes), report.notes
    assert any("no reply within 0.3 s" in cx.finding.message for cx in report.counterexamples)


def test_the_wire_timeout_travels_as_an_adapter_option_not_through_the_environment(monkeypatch):
    """`--wire-timeout` becomes part of the adapter's name, so a rerun, a replay and a fresh process open the
    program the same way; the check never writes the process environment."""
    import argparse

    from conformance.adapters import LoadError, adapter_options
    from conformance.wire.cli import target_from_args
    from conformance.wire.connection import TIMEOUT_ENV

    monkeypatch.delenv(TIMEOUT_ENV, raising=False)
    args = argparse.Namespace(wire="node x.js", path=None, adapter=None, wire_timeout=0.5)
    target, adapter, typed = target_from_args(args)
    assert (target, adapter_options(adapter)) == ("node x.js", ("conformance.wire", {"reply_seconds": "0.5"}))
    assert typed.endswith("--wire-timeout 0.5") and TIMEOUT_ENV not in os.environ
    with pytest.raises(LoadError, match="not key=value"):
        adapter_options("conformance.wire?0.5")
