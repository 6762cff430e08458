"""One sandbox child seen from the parent: start it, read its pipes with caps, enforce the limits, end it.

The child is started by conformance/sandbox/spawn.py. Limits are checked every POLL seconds against
the CPU time of the child's whole process tree.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import selectors
import tempfile
import time
from typing import Any

from conformance.sandbox import protocol, record
from conformance.sandbox.budget import current, remove_tree
from conformance.sandbox.child import BESIDE
from conformance.sandbox.memo import digest
from conformance.sandbox.procs import TICK, host_pid, kill, kill_tree, strays_in, tree_sample
from conformance.sandbox.proctree import ProcFiles
from conformance.sandbox.program import WireProgram
from conformance.sandbox.record import Run, Trace, ended, idle_limit, judge_trace, load_failure, stopped, wall_limit
from conformance.sandbox.spawn import PROJECT, RLIMITS, base_dir, fresh_uid, start
from conformance.sandbox.types import LoadFailure

LINE_MAX = 8 << 20  # bytes of one message (more for a workload with long ids: Run.extra_bytes)
POLL = 1 / 64  # seconds between two checks of the limits: an idle span is measured to within this (at 0.2 s, a
# 0.6 s sleep under the 0.5 s idle limit timed out or not by where the checks fell: the same file graded two ways)
IMPORT_SLACK = 0.5  # CPU seconds past startup_seconds before a poll stops an import: an import that ends is judged
# when it says 'loaded' (by the importing process's own CPU), so where polls fall decides nothing; the slack is more
# than the child spends before the import starts (its interpreter, the job's JSON), so no poll stops an import
# that check would let load


class Child:
    """One child process on workloads[first:]: reads its pipes, checks its messages and limits, records results."""

    def __init__(self, run: Run, submission: bytes | WireProgram, first: int, run_deadline: float) -> None:
        self.run, self.run_deadline, self.token, self.first = run, run_deadline, secrets.token_hex(16), first
        self.uid = fresh_uid() if os.geteuid() == 0 else None
        self.wire = isinstance(submission, WireProgram)
        self.current = first  # the workload the child is working on
        self.hello = self.loaded = False
        self.exit_info: dict[str, Any] | None = None
        self.crash: str | None = None
        self.malformed: str | None = None
        self.stop: str | None = None  # the limit the parent stopped it at: cpu, idle, wall, run, budget, deadline
        self.messages = 0
        self.asked = -1  # the last workload whose probe question was answered (local index)
        self.worker: int | None = None  # the worker's host pid, found from its hello
        self.cpu = self.phase_cpu = 0.0
        self.driver = self.phase_driver = 0.0  # a wire worker's own CPU: the trusted driver's, not the program's
        self.walked: list[tuple[int, list[bytes], int]] = []  # the tree as sample() last read it
        self.files = ProcFiles()  # its /proc files, kept open from one sample to the next
        self.base = tempfile.mkdtemp(dir=base_dir())
        try:
            self.proc, self.report, self.answer = start(run, self.base, self.uid, self.token, submission, first)
        except BaseException:
            remove_tree(self.base)
            raise
        self.phase_start = self.heard = time.monotonic()  # heard: when the child last sent a whole message or ran
        run.children += 1

    def limits(self) -> tuple[float, float, float]:
        """(CPU, idle, hard wall) seconds of the phase: importing, or one workload."""
        lim = self.run.limits
        if self.loaded:
            cpu = lim.cpu_for(self.run.items[self.current][1]) if self.current < len(self.run.items) else 0
            return cpu, idle_limit(lim.workload_seconds), wall_limit(lim.workload_seconds)
        return lim.startup_seconds + IMPORT_SLACK, lim.startup_seconds, wall_limit(lim.startup_seconds)

    def new_phase(self, now: float) -> None:
        self.phase_start, self.phase_cpu, self.phase_driver = now, self.cpu, self.driver

    def used(self) -> float:
        """The phase's CPU that counts against its limit: the tree's, less a wire worker's own. That worker runs
        none of the program's code; what it spends reading the program's replies (every snapshot holds every
        output, so a run of 2^11 steps reads megabytes) is the grader's, and counted it put a correct program
        near the limit on a loaded machine. A Python submission runs in its worker: all of it counts."""
        return (self.cpu - self.phase_cpu) - (self.driver - self.phase_driver)

    def sample(self) -> bool:
        """Update the tree's CPU time; whether a process of it is running or runnable right now, or ran since the
        last sample (its CPU time grew: a tree that computes in short bursts between sleeps is not idle)."""
        cpu, running, self.walked = tree_sample(self.proc.pid, self.files)
        running = running or cpu > self.cpu
        self.cpu = max(self.cpu, cpu)
        if self.wire and self.worker is not None:
            own = [f for pid, f, _ in self.walked if pid == self.worker]
            if own:
                with contextlib.suppress(ValueError, IndexError):
                    self.driver = max(self.driver, (int(own[0][11]) + int(own[0][12])) / TICK)  # utime + stime
        return running

    def check_limits(self, now: float) -> None:
        """Stop the child at the first limit it crossed: budget, CPU, the run, the hard wall, or idleness.

        Idle means: no process of the tree was running or runnable at any sample, and the child wrote
        nothing, for idle_after seconds. A process starved by a loaded machine is runnable, so it is
        never idle; only sleeping or blocked trees are.
        """
        if self.sample():
            self.heard = now
        used, elapsed = self.used(), now - self.phase_start
        cpu_limit, idle_after, hard_wall = self.limits()
        budget = current()
        if budget is not None and not budget.left(self.cpu):
            self.stop = budget.spent_on(self.cpu)
        elif used > cpu_limit:
            self.stop = "cpu"
        elif now >= self.run_deadline:
            self.stop = "run"
        elif elapsed >= hard_wall:
            self.stop = "wall"
        elif min(elapsed, now - self.heard) >= idle_after:
            self.stop = "idle"

    def on_line(self, line: bytes) -> None:
        """One report line: a trace whose exact bytes were read before for this workload is not read again, and
        the running workload's probe question, in the bytes the driver writes, is answered without parsing."""
        run = self.run
        self.messages += 1
        if self.messages > 2 * len(run.items) + 8:  # a probe question and a trace per workload
            raise protocol.Malformed(f"more than {2 * len(run.items) + 8} messages from one child")
        key = b""
        if self.loaded and self.current < len(run.items):
            local = self.current - self.first
            if line == b'{"type":"probe","workload":%d}' % local:  # the driver's own bytes for this question:
                self.on_probe({"type": "probe", "workload": local})  # parsed, they are this message
                return
            key = digest(line, run.key(self.current))
            known = record.TRACES.get(key)
            if known is not None and known.workload == self.current - self.first:
                self.on_trace(self.whole(known), key)
                return
        msg = protocol.parse_line(line)
        if msg["type"] == "trace" and key:
            trace = self.read(msg)
            record.TRACES.put(key, trace, len(line))
            self.on_trace(trace, key)
        else:
            self.on_message(msg)

    def on_message(self, msg: dict[str, Any]) -> None:
        """Advance the protocol by one message (raises protocol.Malformed); docs/sandbox.md has the order."""
        kind, run, now = msg["type"], self.run, time.monotonic()
        if kind == "exit":  # from the supervisor: the worker is gone; drain what is left, briefly
            self.sample()
            if self.worker is not None and any(pid == self.worker for pid, _, _ in self.walked):
                raise protocol.Malformed("an exit message came while the worker still runs (only the supervisor "
                                         "reports one, once it has reaped the worker)")
            self.exit_info, self.run_deadline = msg, min(self.run_deadline, now + 1.0)
        elif kind == "crash":
            self.crash = protocol.clean(str(msg.get("message"))[:500])
        elif not self.hello:
            if kind != "hello":
                raise protocol.Malformed(f"the first message is {kind[:40]!r}, not 'hello'")
            self.hello = True
            self.check_hello(msg)
        elif not self.loaded:
            if kind == "load_error":
                run.fail_load(load_failure(msg.get("error")))
            elif kind != "loaded":
                raise protocol.Malformed(f"expected 'loaded' or 'load_error', got {kind[:40]!r}")
            else:
                self.check_alone(msg.get("one_process"))
                self.sample()
                if min(self.used(), loaded_cpu(msg)) > run.limits.startup_seconds:  # the import's verdict, given
                    self.stop = "cpu"  # as it ends: a poll's alone depended on where the polls fell (0 in one
                    return  # grade, 100 in the next); a child that understates gains at most IMPORT_SLACK
            self.loaded = True
            self.sample()
            self.new_phase(now)
            self.phase_cpu = min(self.phase_cpu, loaded_cpu(msg))
        elif kind == "trace" and self.current < len(run.items):
            self.on_trace(self.read(msg), b"")
        elif kind == "probe" and self.current < len(run.items):
            self.on_probe(msg)
        elif kind != "bye" or self.current != len(run.items):
            raise protocol.Malformed(f"unexpected message {kind[:40]!r}")

    def on_probe(self, msg: dict[str, Any]) -> None:
        """Answer the one probe question of the running workload (asked after its first schedule() returned)."""
        local = self.current - self.first
        if msg.get("workload") != local or self.asked == local:
            raise protocol.Malformed(f"a probe question for workload {str(msg.get('workload'))[:20]} arrived while "
                                     f"workload {local} was running" + (" (asked twice)" if self.asked == local
                                                                         else ""))
        self.asked = local
        try:
            os.write(self.answer, bytes([self.run.items[self.current][3]]))
        except OSError as e:  # the child closed its end: it will not read the answer
            raise protocol.Malformed(f"the probe channel is closed ({e.strerror})") from None

    def read(self, msg: dict[str, Any]) -> Trace:
        if msg.get("workload") != self.current - self.first:
            raise protocol.Malformed(f"a trace for workload {str(msg.get('workload'))[:20]} arrived while "
                                     f"workload {self.current} was running")
        return self.whole(record.read_trace(self.run, self.current, msg))

    def whole(self, trace: Trace) -> Trace:
        """`trace`, if it holds what the run was asked for: a two-instance probe answered (the question comes after
        the first schedule() returned) must send the second instance's trace; without it the two were never
        compared, and the probe would pass by not running."""
        asked = self.asked == self.current - self.first and self.run.items[self.current][3] & BESIDE
        if asked and trace.decoded.beside is None:
            raise protocol.Malformed("a two-instance probe was answered, but its trace has no 'beside'")
        return trace

    def on_trace(self, trace: Trace, key: bytes) -> None:
        """The workload running now ended with this trace: record it, clear strays, start the next phase."""
        run = self.run
        run.refused += trace.refused
        self.sample()
        now = time.monotonic()
        used, wall = self.used(), now - self.phase_start
        if used > self.limits()[0]:  # past the limit by the end, whether or not a 0.2 s sample caught it running:
            stopped(run, self.current, "cpu", used, wall)  # the cut depends on the CPU used, never on when we looked
        else:
            judge_trace(run, self.current, trace, used, wall, key)
        if self.worker is not None and not self.wire:  # what a workload started dies with it: the next one
            kill(strays_in(self.walked, self.worker))  # starts clean (in the tree sample() just read; a wire
            # program is swept by the worker, which runs none of its code: killing here would race that)
        self.current += 1
        self.new_phase(now)

    def check_hello(self, msg: dict[str, Any]) -> None:
        """Note limits the child could not set, capabilities it kept, a project it can see (before any import)."""
        run = self.run
        applied, hidden, cap, uid = msg.get("rlimits"), msg.get("hidden"), msg.get("cap_eff"), msg.get("uid")
        unset = [name for name in RLIMITS if type(applied) is not dict or name not in applied]
        if unset:
            run.notes.append(f"the child could not set {', '.join(unset)}; those limits were not in force")
        if run.iso.hides_project and (type(hidden) is not list or str(PROJECT) not in hidden):
            run.notes.append(f"the project directory {PROJECT} could not be hidden from the child")
        pid = msg.get("pid")
        self.worker = host_pid(self.proc.pid, pid) if type(pid) is int and pid > 0 else None
        run.cap_eff = cap if type(cap) is int else None
        run.uid = uid if type(uid) is int else None
        if run.cap_eff != 0:
            run.notes.append(f"the child reported capabilities {cap!r}; it should have none")

    def check_alone(self, why: object) -> None:
        """Note a child whose submission could start processes: the kernel refused the one-process filter."""
        run = self.run
        held = why is None
        run.one_process = held if run.one_process is None else run.one_process and held
        if not held and why != "off":
            run.notes.append(f"new processes were not refused ({protocol.clean(str(why))[:200]}): the submission's "
                             "helpers were held by RLIMIT_NPROC and the sweeps of its tree alone (docs/sandbox.md)")

    def pump(self) -> None:
        """Read all three pipes until they close, a message is malformed, or a limit is crossed."""
        assert self.proc.stdout is not None and self.proc.stderr is not None
        sel = selectors.DefaultSelector()
        for fd, name in ((self.proc.stdout.fileno(), "stdout"), (self.proc.stderr.fileno(), "stderr"),
                         (self.report, "report")):
            os.set_blocking(fd, False)
            sel.register(fd, selectors.EVENT_READ, name)
        pieces: list[bytes] = []  # the message being read, joined once its newline arrives (a long one comes in
        held, received, checked = 0, 0, time.monotonic()  # pieces of 1 MB: joining at each would copy it again)
        allowed = self.run.limits.report_bytes + sum(self.run.extra_bytes(i) for i in range(self.first,
                                                                                             len(self.run.items)))
        while sel.get_map() and self.malformed is None and self.run.load_error is None and self.stop is None:
            for key, _ in sel.select(POLL):
                data = os.read(key.fd, 1 << 20)
                if not data:
                    sel.unregister(key.fd)
                elif key.data != "report":
                    self.run.capture(key.data, data)
                elif (received := received + len(data)) > allowed:
                    self.malformed = f"the reports exceeded {allowed} bytes"
                else:
                    if b"\n" in data:
                        *lines, rest = (b"".join(pieces) + data).split(b"\n")
                        pieces, held = [rest], len(rest)
                    else:
                        lines = []
                        pieces.append(data)
                        held += len(data)
                    if held > (longest := LINE_MAX + self.run.extra_bytes(self.current)):
                        self.malformed = f"a message is longer than {longest} bytes"
                    try:
                        for line in filter(None, lines):
                            if self.stop is not None:  # stopped at a limit by an earlier line (an import past its
                                break  # CPU limit as it said 'loaded'): what follows is not read
                            self.on_line(line)
                    except (protocol.Malformed, RecursionError, MemoryError) as e:
                        self.malformed = str(e)[:300] or type(e).__name__
                    if any(lines):  # a whole message is progress (bytes alone, on any pipe, are not: a tree that
                        self.heard = time.monotonic()  # sleeps writing a byte a second is idle); the time we
                        # spent reading it is never the child's idleness
            now = time.monotonic()
            if self.malformed is None and self.run.load_error is None and now - checked >= POLL:
                checked = now
                self.check_limits(now)
        sel.close()

    def close(self) -> None:
        self.run.survivors += kill_tree(self.run.iso, self.proc, self.token, self.uid)
        self.cpu = max(self.cpu, self.phase_cpu)
        self.run.cpu += self.cpu
        budget = current()
        if budget is not None:
            budget.cpu_used += self.cpu
        self.files.close()
        os.close(self.report)
        os.close(self.answer)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()
        remove_tree(self.base)

    def conclude(self) -> int:
        """Record how the child ended; return the workload the next child starts from."""
        run, current_index = self.run, self.current
        used, wall = self.used(), time.monotonic() - self.phase_start
        if run.load_error is not None or current_index == len(run.items):
            return len(run.items)
        if self.stop in ("budget", "deadline"):
            run.budget_spent = True
            stopped(run, current_index, self.stop, used, wall)
            return len(run.items)
        if self.stop == "wall" and (current_index if self.loaded else -1) not in run.reruns:
            run.reruns.add(current_index if self.loaded else -1)  # maybe starved by load: once more, fresh
            return current_index
        if self.malformed is not None and self.hello and not self.loaded:  # written while the module was imported:
            # every fresh child would write it again, so the module does not load (not a crash of one workload)
            run.fail_load(LoadFailure("protocol", "", "importing the submission wrote to the grader's report "
                                      f"channel: {self.malformed}"))
            return len(run.items)
        if self.malformed is not None:
            run.finish(current_index, "protocol", f"protocol: the child's report for workload {current_index} is "
                       f"malformed: {self.malformed}", used, wall)
        elif not self.hello:
            tail = bytes(run.streams["stderr"][-300:]).decode(errors="replace")
            run.notes.append(f"the sandbox did not start: {tail}")
            for index in range(current_index, len(run.items)):
                run.finish(index, "sandbox_error", f"sandbox_error: the {run.iso.level} sandbox failed to start "
                           "(see the notes); this is a fault of the grader's machine, not of the submission")
            return len(run.items)
        elif not self.loaded:
            self.import_ended()
            return len(run.items)
        elif self.stop is not None:
            stopped(run, current_index, self.stop, used, wall)
        else:
            ended(run, current_index, self.exit_info, self.crash, used, wall)
        return current_index + 1

    def import_ended(self) -> None:
        """The child never said 'loaded': a timeout (any limit) or an end while importing."""
        info, lim = self.exit_info or {}, self.run.limits
        doing = "starting the program and its hello" if self.wire else "importing the submission"
        if self.stop is not None:
            wall = wall_limit(lim.startup_seconds)
            self.run.fail_load(LoadFailure("timeout", "", f"{doing} ran past its limits "
                                           f"({lim.startup_seconds:g} s of CPU, {lim.startup_seconds:g} s idle or "
                                           f"{wall:g} s of wall time)"))
        else:
            self.run.fail_load(LoadFailure("ended", "", f"the process ended while {doing} "
                                           f"(exit code {info.get('code')}, signal {info.get('signal')})"))


def run_child(run: Run, submission: bytes | WireProgram, first: int, run_deadline: float) -> int:
    """Run one child from workload `first`; return the index the next child should start from."""
    child = Child(run, submission, first, run_deadline)
    try:
        child.pump()
    finally:
        child.close()
    return child.conclude()


def loaded_cpu(msg: dict[str, Any]) -> float:
    """The CPU the child had used when it sent `loaded` (infinity when it did not say): where workload 0's phase
    starts. The parent reads the message later on a loaded machine, after workload 0 has begun; sampled then, the
    import phase would take workload 0's first CPU seconds. The child's word can only move that start earlier
    (the parent takes the smaller of the two), which charges the submission more, never less."""
    cpu = msg.get("cpu_us")  # microseconds: the protocol has only ints
    return cpu / 1e6 if type(cpu) is int and cpu >= 0 else float("inf")
