"""Submissions in other languages: a folder with a wire.toml, graded in the same sandbox as a Python module.

The program is examples/wire/scheduler.py run by the system's python3 (it stands for any language:
the sandbox sees a command, not Python). Hostile programs are small preludes that try one thing and
then, where the test needs a working scheduler, exec the example.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from conformance.checks import checkers
from conformance.grading.collect import collect
from conformance.grading.observe import observed_trace
from conformance.sandbox.isolation import LEVELS, works
from conformance.sandbox.program import WIRE_PROCESSES, wire_command
from conformance.sandbox.run import run_in_sandbox
from conformance.sandbox.types import Limits
from tests.grading.test_isolation import WALK_FILES
from tests.grading.test_sandbox import ARRIVALS, SELF_PREEMPTION, SWEPT, TIGHT, WORKLOADS, assert_matches_reference

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "wire" / "scheduler.py"
AVAILABLE = [level for level in LEVELS if works(level)]
NAMESPACES = [level for level in AVAILABLE if level != "process-group"]
pytestmark = pytest.mark.skipif(not shutil.which("python3", path="/usr/bin:/bin"),
                                reason="the wire programs here run on the system's python3 (/usr/bin/python3)")


def program(tmp_path: Path, command: object, prelude: str | None = None, name: str = "prog") -> Path:
    """A submission folder: the example scheduler, an optional prelude script, and a wire.toml."""
    folder = tmp_path / name
    folder.mkdir()
    shutil.copy(EXAMPLE, folder / "scheduler.py")
    if prelude is not None:
        (folder / "prelude.py").write_text(prelude)
    (folder / "wire.toml").write_text(f"command = {json.dumps(command)}\n")
    return folder


def at(level: str | None, limits: Limits = TIGHT) -> Limits:
    return dataclasses.replace(limits, isolation=level)


def test_a_wire_program_is_observed_exactly_like_the_reference(tmp_path: Path) -> None:
    result = run_in_sandbox(program(tmp_path, ["python3", "scheduler.py"]), WORKLOADS, TIGHT)
    assert result.load_error is None, (result.load_error, result.stderr)
    for workload, observed in zip(WORKLOADS, result.workloads, strict=True):
        assert_matches_reference(workload, observed)


def test_a_planted_bug_in_a_wire_program_is_the_finding_of_the_same_bug_in_python(tmp_path: Path) -> None:
    """The example's --bug victim_first and the catalog's victim_first module: the same first finding."""
    from conformance.mutants.build import source

    module = tmp_path / "victim_first" / "p07_scheduler.py"
    module.parent.mkdir()
    module.write_text(source("victim_first"))
    found = []
    for path in (program(tmp_path, "python3 scheduler.py --bug victim_first"), module):
        result = run_in_sandbox(path, [SELF_PREEMPTION], TIGHT)
        assert result.workloads[0].status == "ok", result.workloads[0].cause
        found.append(checkers.differential(SELF_PREEMPTION, observed_trace(SELF_PREEMPTION, result.workloads[0])))
    assert found[0] and found[0] == found[1], found


SPY = WALK_FILES + r'''worker = os.getppid()
supervisor = int(open(f"/proc/{{worker}}/stat").read().rpartition(")")[2].split()[1])
for path in ({canary!r}, "/etc/shadow", {project!r} + "/spec/rules.py", f"/proc/{{worker}}/mem",
             f"/proc/{{worker}}/environ", f"/proc/{{supervisor}}/mem", f"/proc/{{supervisor}}/environ"):
    try:
        open(path, "rb").read(1)
        readable.append(path)
    except OSError:
        pass
for pid in (worker, supervisor):
    try:
        readable += [f"/proc/{{pid}}/fd/" + fd for fd in os.listdir(f"/proc/{{pid}}/fd")]
    except OSError:
        pass
status = dict(l.split(":", 1) for l in open("/proc/self/status").read().splitlines() if ":" in l)
print(json.dumps({{"files": sorted(seen)[:200], "readable": readable, "cap": int(status["CapEff"], 16),
                  "uid": os.getuid()}}), file=sys.stderr)
sys.exit(3)
'''


def spy(level: str, tmp_path: Path) -> dict[str, object]:
    private = tmp_path / "grader-private"
    private.mkdir(mode=0o700)
    canary = private / "canary.txt"
    canary.write_text("secret")
    text = SPY.format(runtime=os.path.realpath(sys.base_prefix), canary=str(canary), project=str(ROOT))
    result = run_in_sandbox(program(tmp_path, ["python3", "prelude.py"], text), [SELF_PREEMPTION], at(level))
    assert result.load_failure is not None and result.load_failure.kind == "wire", result.load_error
    assert "exited with code 3" in result.load_failure.message
    return json.loads(result.stderr.strip().splitlines()[-1])


@pytest.mark.long
@pytest.mark.parametrize("level", AVAILABLE)
def test_a_wire_program_gets_no_capabilities_no_private_files_and_not_the_workers_memory(level: str,
                                                                                          tmp_path: Path) -> None:
    seen = spy(level, tmp_path)
    assert seen["cap"] == 0
    if os.geteuid() == 0:
        assert seen["uid"] != 0
    assert not [p for p in seen["readable"] if "canary" in p or p == "/etc/shadow" or p.startswith("/proc/")], \
        seen["readable"]  # the worker and the supervisor: no memory, environment or descriptors (the probe channel)


@pytest.mark.parametrize("level", NAMESPACES)
def test_a_wire_program_sees_the_runtime_and_its_own_folder_only(level: str, tmp_path: Path) -> None:
    seen = spy(level, tmp_path)
    assert seen["files"] == ["/sandbox/prelude.py", "/sandbox/scheduler.py", "/sandbox/wire.toml"], seen["files"]
    assert seen["readable"] == []  # not the project, nothing of the worker or the supervisor


FORK = r'''
import os, sys, time
count = 0
try:
    for _ in range(500):
        if os.fork() == 0:
            time.sleep(3600)
            os._exit(0)
        count += 1
except OSError:
    pass
print(f"forked {count}", file=sys.stderr, flush=True)
os.execv(sys.executable, [sys.executable, "scheduler.py"])
'''


@pytest.mark.skipif(os.geteuid() != 0, reason="RLIMIT_NPROC binds the run's own uid only when the grader is root")
def test_without_the_filter_a_wire_program_that_forks_is_capped_and_leaves_nothing_behind(tmp_path: Path) -> None:
    """Where the kernel refuses the one-process filter: RLIMIT_NPROC and the sweeps."""
    result = run_in_sandbox(program(tmp_path, ["python3", "prelude.py"], FORK), WORKLOADS, SWEPT)
    forked = int(result.stderr.split("forked ")[1].split()[0])
    assert 0 < forked < WIRE_PROCESSES, result.stderr
    assert [w.status for w in result.workloads] == ["ok", "ok"], [w.cause for w in result.workloads]
    assert result.survivors == 0


SPIN = r'''
import sys
sys.argv = ["scheduler.py"]
import scheduler
plain = scheduler.Scheduler.schedule
def schedule(self):
    while "a2" in self.seqs:
        pass
    return plain(self)
scheduler.Scheduler.schedule = schedule
scheduler.main()
'''


def test_a_wire_program_that_spins_is_stopped_on_its_cpu_time_and_the_next_workload_runs(tmp_path: Path) -> None:
    limits = dataclasses.replace(TIGHT, workload_seconds=1.0, workload_cpu_seconds=1)
    result = run_in_sandbox(program(tmp_path, ["python3", "prelude.py"], SPIN), [SELF_PREEMPTION, ARRIVALS], limits)
    spun, after = result.workloads
    assert spun.hung, (spun.status, spun.cause)
    assert_matches_reference(ARRIVALS, after)
    assert result.children == 2 and result.survivors == 0


@pytest.mark.parametrize(("command", "prelude", "words"), [
    (["python3", "prelude.py"], "import sys; sys.exit(3)", "sent no reply to hello (it exited with code 3)"),
    (["python3", "prelude.py"], "print('hello, world', flush=True)", "is not one JSON object"),
    (["./no-such-program"], None, "'./no-such-program' of wire.toml could not start"),
    (["no-such-runtime"], None, "holds /usr and /bin of the grading machine but not /etc"),
    (["python3", "prelude.py"],
     "import json, sys\nsys.stdin.readline()\n"
     "print(json.dumps({'ok': True, 'protocol': 'schedcheck-wire/1', 'snapshot': False}), flush=True)\n"
     "sys.stdin.readline()", '"snapshot": true'),
])
def test_a_program_that_cannot_start_or_greet_is_a_load_error_that_says_why(
        tmp_path: Path, command: list[str], prelude: str | None, words: str) -> None:
    result = run_in_sandbox(program(tmp_path, command, prelude), WORKLOADS, TIGHT)
    assert result.load_failure is not None and result.load_failure.kind == "wire", result.load_error
    assert words in result.load_failure.message
    assert [w.status for w in result.workloads] == ["load_error", "load_error"]


def test_a_program_that_never_greets_times_out_at_startup(tmp_path: Path) -> None:
    limits = dataclasses.replace(TIGHT, startup_seconds=1.0)
    result = run_in_sandbox(program(tmp_path, ["python3", "prelude.py"], "import time; time.sleep(60)"),
                            [SELF_PREEMPTION], limits)
    assert result.load_failure is not None and result.load_failure.kind == "timeout", result.load_error
    assert "starting the program and its hello ran past its limits" in result.load_failure.message
    assert result.survivors == 0


def test_a_shebang_naming_a_missing_interpreter_is_named(tmp_path: Path) -> None:
    folder = program(tmp_path, "./run.sh")
    (folder / "run.sh").write_text("#!/nonexistent/bin/python9\n")
    (folder / "run.sh").chmod(0o755)
    result = run_in_sandbox(folder, [SELF_PREEMPTION], TIGHT)
    assert result.load_failure is not None and "the interpreter on its #! line" in result.load_failure.message


CLOSE = r'''
import os, signal, sys, time
sys.argv = ["scheduler.py"]
import scheduler
plain = scheduler.handle
def handle(message, instances, bug):
    if message.get("op") == "schedule":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        os.close(1)
        os.close(0)
        while True:
            time.sleep(1)
    return plain(message, instances, bug)
scheduler.handle = handle
scheduler.main()
'''


def test_a_program_that_closes_its_pipes_and_stays_is_a_protocol_finding_not_a_timeout(tmp_path: Path) -> None:
    result = run_in_sandbox(program(tmp_path, ["python3", "prelude.py"], CLOSE), WORKLOADS, TIGHT)
    assert [w.status for w in result.workloads] == ["protocol", "protocol"], [w.cause for w in result.workloads]
    assert all("closed the pipe and is still running" in w.cause for w in result.workloads)
    assert result.survivors == 0


@pytest.mark.parametrize(("text", "words"), [
    ('command = 3', "command = \"./run\" or command = [\"node\", \"scheduler.js\"]"),
    ('command = []', "command is empty"),
    ('command = "python3 \'open"', "cannot be split"),
    ('command = "./run"\nshell = true', "unknown keys ['shell']"),
    ('command = ', "not valid TOML"),
    ('command = ' + '[' * 3000 + ']' * 3000, "nested too deeply"),
])
def test_a_bad_wire_toml_is_refused_up_front_naming_the_field_and_value(text: str, words: str) -> None:
    argv, problem = wire_command(text)
    assert argv == () and words in problem, problem


def test_collect_takes_wire_folders_and_refuses_links_inside_them(tmp_path: Path) -> None:
    class_dir = tmp_path / "class"
    class_dir.mkdir()
    program(class_dir, ["python3", "scheduler.py"], name="good")
    linked = program(class_dir, ["python3", "scheduler.py"], name="linked")
    (linked / "answers.py").symlink_to(ROOT / "impl" / "scheduler.py")
    bad = program(class_dir, ["python3", "scheduler.py"], name="bad")
    (bad / "wire.toml").write_text("command = 3\n")
    hard = program(class_dir, ["python3", "scheduler.py"], name="hard")
    (tmp_path / "reference.py").write_text("answers = {}\n")  # outside the class, as an instructor's file is
    os.link(tmp_path / "reference.py", hard / "answers.py")
    big = program(class_dir, ["python3", "scheduler.py"], name="big")
    with open(big / "weights.bin", "wb") as f:
        f.truncate(17 << 20)  # sparse: refused by its size, never read
    entries = {e.name: e for e in collect(class_dir, tmp_path / "work")}
    assert entries["big"].module is None and "too large" in entries["big"].problem
    assert entries["good"].module == class_dir / "good" and entries["good"].problem == ""
    assert entries["linked"].module is None and "'answers.py' is not a regular file" in entries["linked"].problem
    assert entries["bad"].module is None and "got 3" in entries["bad"].problem
    assert entries["hard"].module is None and "'answers.py' is a hard link" in entries["hard"].problem
    from conformance.grading.feedback import missing_md

    shown = missing_md(entries["bad"].source, entries["bad"].problem)
    assert "wire protocol" in shown and "p07_scheduler" not in shown


def test_a_file_name_that_is_not_utf8_in_a_wire_folder_is_part_of_its_identity_and_runs(tmp_path: Path) -> None:
    """Before: the held-out key and the class run's identity of the entry encoded file names as UTF-8, and a file
    named b"notes-\\xff.txt" raised UnicodeEncodeError before any entry was graded: no grade, no summary."""
    from conformance.grading.batch import grade_all
    from conformance.grading.records import entry_identity
    from conformance.grading.rubric import load_rubric

    class_dir = tmp_path / "class"
    class_dir.mkdir()
    odd = program(class_dir, ["python3", "scheduler.py"], name="odd")
    program(class_dir, ["python3", "scheduler.py"], name="plain")
    with open(os.fsencode(odd) + b"/notes-\xff.txt", "wb") as f:
        f.write(b"notes\n")
    entries = {e.name: e for e in collect(class_dir, tmp_path / "work")}
    assert entries["odd"].module == odd and entries["odd"].problem == ""
    assert entry_identity(entries["odd"]) != entry_identity(entries["plain"])
    result = run_in_sandbox(odd, [SELF_PREEMPTION], TIGHT)
    assert [w.status for w in result.workloads] == ["ok"], result.causes()

    def graded(entry: object, rubric: object) -> object:  # the class run's own steps, not a whole grade
        raise RuntimeError("graded")

    graded_now = grade_all(list(entries.values()), tmp_path / "out", load_rubric(), graded, progress=None)
    assert graded_now == 2  # both reached grading (each a grader error here), none lost before it


def test_the_childs_wire_protocol_is_the_suites() -> None:
    from conformance.sandbox import wireshim
    from conformance.wire import connection

    assert wireshim.WIRE_PROTOCOL == connection.PROTOCOL
    assert wireshim.WIRE_LINE_MAX == connection.MAX_LINE


@pytest.mark.long
def test_a_correct_wire_program_gets_the_grade_of_the_reference(tmp_path: Path) -> None:
    from conformance.grading.collect import Entry
    from conformance.grading.judge import grade_one
    from conformance.grading.rubric import load_rubric

    rubric = load_rubric()
    folder = program(tmp_path, ["python3", "scheduler.py"])
    wire_grade = grade_one(Entry("wire", folder, folder), rubric)
    impl = ROOT / "impl" / "scheduler.py"
    python_grade = grade_one(Entry("impl", impl, impl), rubric)
    assert wire_grade.isolation == python_grade.isolation
    assert [i.score for i in wire_grade.items] == [i.score for i in python_grade.items]
    assert wire_grade.score == python_grade.score == 100


def test_the_report_of_a_program_that_does_not_start_quotes_its_stderr(tmp_path: Path) -> None:
    from conformance.grading.feedback import load_error_md

    prelude = "import sys\nprint('config.json: no such file', file=sys.stderr)\nsys.exit(2)\n"
    result = run_in_sandbox(program(tmp_path, ["python3", "prelude.py"], prelude), [SELF_PREEMPTION], TIGHT)
    assert result.load_error is not None
    short, full = load_error_md(result, result.load_error)
    assert short.startswith("does not start") and "p07_scheduler" not in full
    assert "exited with code 2" in full and "config.json: no such file" in full


ECHO = r'''
import json, sys
sys.argv = ["scheduler.py"]
import scheduler
plain, echoed = scheduler.handle, []
def handle(message, instances, bug):
    reply = plain(message, instances, bug)
    if message.get("op") == "close" and not echoed:  # the first close is answered twice, in one write
        echoed.append(1)
        sys.stdout.write(json.dumps(reply) + "\n")
    return reply
scheduler.handle = handle
scheduler.main()
'''


def test_a_reply_nobody_asked_for_does_not_reach_the_next_workload(tmp_path: Path) -> None:
    """The first workload's close is answered twice: the extra reply is left in the pipe. The next workload gets a
    fresh program, and so its run is the reference's; read by the same program it would answer out of step."""
    result = run_in_sandbox(program(tmp_path, ["python3", "prelude.py"], ECHO), [SELF_PREEMPTION, ARRIVALS], TIGHT)
    assert result.load_error is None, (result.load_error, result.stderr)
    for workload, observed in zip([SELF_PREEMPTION, ARRIVALS], result.workloads, strict=True):
        assert_matches_reference(workload, observed)


def test_a_program_gone_before_hello_is_told_the_same_whether_the_write_or_the_read_sees_it() -> None:
    """The worker writes hello, then reads. A program that exits at once is seen by the write (a closed pipe) or by
    the read (no reply), whichever the scheduler lets happen first: the words were two, so the feedback varied
    between runs of the same program. Here the program has certainly exited before the write."""
    import subprocess
    import sys

    from conformance.sandbox.readers import SubmissionProtocolError
    from conformance.sandbox.wireshim import Program

    program = Program.__new__(Program)
    program.proc = subprocess.Popen([sys.executable, "-c", "import sys; sys.exit(3)"], stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE)
    program.proc.wait()
    with pytest.raises(SubmissionProtocolError) as e:
        program.send({"op": "hello"}, "hello")
    assert str(e.value) == "the program sent no reply to hello (it exited with code 3)"
