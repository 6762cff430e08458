"""A wire program as a docs/api.md module, inside the sandbox child.

A submission in another language is a folder with a ``wire.toml`` naming its command. In the child,
this shim starts the program (in the read-only /sandbox, as the run's uid, under the run's limits)
and presents it to the driver as ``Scheduler`` and ``Sequence`` classes: each call becomes one
exchange of docs/wire-protocol.md, and after each call the program's snapshot is copied onto plain
Python objects that the driver reads exactly as it reads a Python submission's. So one driver, one
trace format and one judge serve both kinds. As under ``check --wire``, one program serves the child's workloads,
a new instance each; after an exchange broke (a bad reply, an exit, a sample the driver refused)
the next workload starts a fresh program, so a desynchronized conversation never spills over.
Standard library only: it is part of the child's driver text (conformance/sandbox/spawn.py
assembles it).
"""

from __future__ import annotations

import io
import json
import os
from collections import deque
from collections.abc import Callable
from typing import Any

from conformance.sandbox.oneproc import forbid_processes
from conformance.sandbox.readers import SubmissionProtocolError

WIRE_PROTOCOL = "schedcheck-wire/1"  # conformance.wire.connection.PROTOCOL (a test keeps the two equal)
WIRE_LINE_MAX = 1 << 24  # bytes of one line from the program (conformance.wire.connection.MAX_LINE)
QUEUES = ("waiting", "running", "finished")
ROW = ("num_computed", "num_tokens", "num_blocks")


class WireStatus:
    """A status as the driver reads it (``seq.status.name``)."""

    __slots__ = ("name",)

    def __init__(self, name: Any) -> None:
        self.name = name


class WireSequence:
    """One request as the driver sees it: the fields the program last reported for it."""

    def __init__(self, seq_id: str, prompt_len: int, max_tokens: int) -> None:
        self.seq_id, self.prompt_len, self.max_tokens = seq_id, prompt_len, max_tokens
        # what the program reported, unchecked: the driver's readers check every value as it reads it
        self.num_computed: Any = 0
        self.num_tokens: Any = prompt_len
        self.num_blocks: Any = 0
        self.status: WireStatus = WireStatus("WAITING")
        self.output: Any = []


def start_failure(name: str, cwd: str, e: OSError) -> str:
    """Why the command did not start, in terms of what the submitter can change."""
    where = os.path.join(cwd, name)
    if "/" in name and os.path.isfile(where) and e.errno == 2:  # the file is there: its #! line names what is not
        return (f"the command {name!r} of wire.toml could not start: it exists, so the interpreter on its #! line "
                "is not installed in the sandbox (it has /usr and /bin of the grading machine); name one that is")
    return (f"the command {name!r} of wire.toml could not start: {e.strerror or e}; give a path inside the "
            "folder (./prog) or a program on PATH (/usr/bin:/bin) that runs from the sandbox's root, which holds "
            "/usr and /bin of the grading machine but not /etc (a runtime reached through /etc/alternatives, as "
            "Debian's java, is not there: docs/grading.md, 'Programs in other languages')")


def confine() -> None:
    """In the program's process, before its exec: refuse it every new process. Whether that held is read back
    from /proc (Program.confined), so a machine without seccomp still runs the program, on the rlimits alone."""
    forbid_processes(threads=True)


class Program:
    """The running program: one JSON object per line each way, every reply read with a bounded length."""

    def __init__(self, argv: list[str], cwd: str, alone: bool) -> None:
        import subprocess  # here, not at the top: the child of a Python submission never needs it

        try:  # `alone`: the program, and all it execs, may start threads but no process (oneproc.py)
            self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=cwd,
                                         close_fds=True, preexec_fn=confine if alone else None)
        except OSError as e:
            raise SubmissionProtocolError(start_failure(argv[0], cwd, e)) from None
        reply = self.ask({"op": "hello", "protocol": WIRE_PROTOCOL}, "hello")
        if reply.get("ok") is not True or reply.get("protocol") != WIRE_PROTOCOL:
            raise SubmissionProtocolError(f"the hello reply must be {{\"ok\": true, \"protocol\": "
                                          f"\"{WIRE_PROTOCOL}\", ...}}, got {json.dumps(reply)[:200]}")
        self.snapshots = reply.get("snapshot") is True
        self.broken = False  # an exchange failed half-way: the next workload needs a fresh program
        self.instances = 0

    def send(self, message: dict[str, object], what: str) -> None:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
            self.proc.stdin.flush()
        except OSError:
            ended = self.ended()
            if self.proc.returncode is not None:  # it exited: the same words whether the write or the read saw it
                raise SubmissionProtocolError(f"the program sent no reply to {what} ({ended})") from None
            raise SubmissionProtocolError(f"the program closed its stdin before {what} ({ended})") from None

    def read(self, what: str) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline(WIRE_LINE_MAX + 1)
        if not line:
            raise SubmissionProtocolError(f"the program sent no reply to {what} ({self.ended()})")
        if len(line) > WIRE_LINE_MAX:
            raise SubmissionProtocolError(f"the reply to {what} is longer than {WIRE_LINE_MAX} bytes")
        try:
            reply = json.loads(line)
        except ValueError:
            raise SubmissionProtocolError(f"the reply to {what} is not one JSON object: {line[:120]!r}; write "
                                          "logs to stderr, never to stdout") from None
        except RecursionError:
            raise SubmissionProtocolError(f"the reply to {what} is nested too deeply to read") from None
        if type(reply) is not dict:
            raise SubmissionProtocolError(f"the reply to {what} must be a JSON object, got {line[:120]!r}")
        if "error" in reply:
            raise SubmissionProtocolError(f"the program answered {what} with an error: "
                                          f"{str(reply['error'])[:300]}")
        return reply

    def ask(self, message: dict[str, object], what: str) -> dict[str, Any]:
        self.send(message, what)
        return self.read(what)

    def unasked(self) -> bool:
        """Output is waiting that no message asked for (or stdout closed): after a workload, whose replies have all
        been read, the program answered out of step, late or twice, and the next workload needs a fresh one."""
        stdout = self.proc.stdout
        assert isinstance(stdout, io.BufferedReader)
        fd = stdout.fileno()
        os.set_blocking(fd, False)  # peek returns what is buffered or readable now, and never waits
        try:
            return bool(stdout.peek(1))
        except OSError:
            return True
        finally:
            os.set_blocking(fd, True)

    def pids(self) -> list[int]:
        return [self.proc.pid] if self.proc.poll() is None else []

    def ended(self) -> str:
        """How the program stands after its stdout or stdin closed: usually exiting, so wait for it a moment."""
        import subprocess

        try:  # briefly: a longer wait with nothing running would be taken for an idle tree
            code = self.proc.wait(timeout=0.2)
        except subprocess.TimeoutExpired:
            return "it closed the pipe and is still running"
        return f"it exited with code {code}" if code >= 0 else f"it was killed by signal {-code}"

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


def field(reply: dict[str, Any], key: str, kind: type, what: str) -> Any:
    value = reply.get(key)
    if type(value) is not kind:
        raise SubmissionProtocolError(f"the reply to {what} needs {key!r} as a {kind.__name__}, "
                                      f"got {json.dumps(value)[:200]}")
    return value


class WireModule:
    """What the driver imports: ``Scheduler`` makes a new instance in the program (a fresh program if the
    last exchange broke)."""

    Sequence = WireSequence

    def __init__(self, argv: list[str], cwd: str, white_box: bool, alone: bool) -> None:
        self.argv, self.cwd, self.white_box, self.alone = argv, cwd, white_box, alone
        self.program = self.greeted()
        self.alive: list[int] = []  # the instances of the workload being run, closed when it has ended (release)

    def greeted(self) -> Program:
        program = Program(self.argv, self.cwd, self.alone)
        if self.white_box and not program.snapshots:
            program.stop()
            raise SubmissionProtocolError('grading reads the state after every call: answer the hello with '
                                          '"snapshot": true and implement the snapshot message '
                                          '(docs/wire-protocol.md)')
        return program

    def confined(self) -> str | None:
        """None when the running program is under the one-process filter, else why it is not (from /proc: the
        kernel's word, not the program's)."""
        try:
            with open(f"/proc/{self.program.proc.pid}/status", "rb") as f:
                modes = [line.split()[1:2] for line in f if line.startswith(b"Seccomp:")]
        except OSError as e:
            return f"the program's seccomp mode could not be read: {e.strerror}"
        return None if modes == [[b"2"]] else "the kernel refused the seccomp filter for the program"

    def keep(self) -> list[int]:
        """The program's pid while it can serve the next workload (the child's sweep spares it)."""
        return [] if self.program.broken else self.program.pids()

    def release(self) -> None:
        """After a workload: close its instances (two in a two-instance probe), so the program holds none."""
        program, alive = self.program, self.alive
        self.alive = []
        for instance in alive:
            if program.broken or program.proc.poll() is not None:
                return
            try:
                reply = program.ask({"op": "close", "instance": instance}, "close")
                program.broken = reply.get("ok") is not True
            except BaseException:  # noqa: BLE001 - whatever broke, the next workload starts a fresh program
                program.broken = True
        if not program.broken and program.proc.poll() is None and program.unasked():
            program.broken = True  # a reply left over would be read as the next workload's

    def start(self) -> Program:
        program = self.program
        if program.broken or program.proc.poll() is not None:
            program.stop()
            self.program = program = self.greeted()
        self.alive.append(program.instances + 1)
        return program

    def Scheduler(self, *, num_blocks: int, block_size: int, max_num_seqs: int, max_num_batched_tokens: int,
                  sample_fn: Callable[[Any], int], eos: int | None) -> WireScheduler:  # noqa: N802 - the API name
        config: dict[str, object] = {"num_blocks": num_blocks, "block_size": block_size, "max_num_seqs": max_num_seqs,
                  "max_num_batched_tokens": max_num_batched_tokens, "eos": eos}
        return WireScheduler(self.start(), config, sample_fn, self.white_box)


def load_wire(argv: list[str], cwd: str, white_box: bool, alone: bool) -> WireModule:
    """Start the program and greet it, so that one that cannot start is a load error, not 300 failures."""
    return WireModule(argv, cwd, white_box, alone)


def exchange(method: Callable[..., Any]) -> Callable[..., Any]:
    """A call whose failure leaves the conversation in an unknown state: mark the program broken."""
    def call(self: WireScheduler, *args: Any) -> Any:
        try:
            return method(self, *args)
        except BaseException:
            self.program.broken = True
            raise
    return call


class WireScheduler:
    """One instance in the program; the queues and fields are those of its last snapshot."""

    def __init__(self, program: Program, config: dict[str, object], sample_fn: Callable[[Any], int],
                 white_box: bool) -> None:
        self.program, self.sample_fn, self.white_box = program, sample_fn, white_box
        self.seqs: dict[str, WireSequence] = {}
        self.waiting: deque[WireSequence] = deque()
        self.running: list[WireSequence] = []
        self.finished: list[WireSequence] = []
        self.blocks_used: Any = 0
        self.num_preemptions: Any = 0
        program.instances += 1
        self.instance = program.instances
        self.new(config)

    @exchange
    def new(self, config: dict[str, object]) -> None:
        self.ok(self.program.ask({"op": "new", "instance": self.instance, "config": config}, "new"), "new")

    def ok(self, reply: dict[str, Any], what: str) -> None:
        if reply.get("ok") is not True:
            raise SubmissionProtocolError(f"the reply to {what} must be {{\"ok\": true}}, "
                                          f"got {json.dumps(reply)[:200]}")

    def seq(self, seq_id: object, what: str) -> WireSequence:
        if type(seq_id) is not str or seq_id not in self.seqs:
            raise SubmissionProtocolError(f"{what} names {json.dumps(seq_id)[:80]}, which was never added")
        return self.seqs[seq_id]

    @exchange
    def add(self, seq: WireSequence) -> None:
        what = f"add({seq.seq_id!r})"
        self.ok(self.program.ask({"op": "add", "instance": self.instance, "seq_id": seq.seq_id,
                                  "prompt_len": seq.prompt_len, "max_tokens": seq.max_tokens}, what), what)
        self.seqs[seq.seq_id] = seq  # the driver reads the state only after schedule() and update()

    @exchange
    def schedule(self) -> dict[str, int]:
        reply = self.program.ask({"op": "schedule", "instance": self.instance}, "schedule")
        pairs = field(reply, "batch", list, "schedule")
        batch: dict[str, int] = {}
        for pair in pairs:
            if type(pair) is not list or len(pair) != 2 or type(pair[1]) is not int:
                raise SubmissionProtocolError(f"a batch item must be [seq_id, n], got {json.dumps(pair)[:120]}")
            seq_id = self.seq(pair[0], "the batch").seq_id
            if seq_id in batch:
                raise SubmissionProtocolError(f"the batch lists {seq_id!r} twice; each sequence appears once")
            batch[seq_id] = pair[1]
        self.mirror()
        return batch

    @exchange
    def update(self) -> list[WireSequence]:
        self.program.send({"op": "update", "instance": self.instance}, "update")
        while True:
            reply = self.program.read("update")
            if "sample" not in reply:
                break
            ask = field(reply, "sample", dict, "update's sample request")
            seq = self.seq(ask.get("seq_id"), "a sample request")
            output = field(ask, "output", list, "update's sample request")
            seq.output = list(output)  # the driver checks it is a list of ints, as for a Python sequence
            self.program.send({"token": self.sample_fn(seq)}, "a token")
        done = [self.seq(s, "update's finished list") for s in field(reply, "finished", list, "update")]
        self.mirror()
        return done

    def mirror(self) -> None:
        """Copy the program's snapshot onto the objects the driver reads (white box only)."""
        if not self.white_box:
            return
        snap = field(self.program.ask({"op": "snapshot", "instance": self.instance}, "snapshot"), "snapshot", dict,
                     "snapshot")
        for name in ("blocks_used", "num_preemptions"):
            setattr(self, name, snap.get(name))  # the driver checks the types and names a wrong one
        queues = {q: [self.seq(s, f"the snapshot's {q}") for s in field(snap, q, list, "snapshot")] for q in QUEUES}
        self.waiting, self.running, self.finished = deque(queues["waiting"]), queues["running"], queues["finished"]
        rows = field(snap, "seqs", dict, "snapshot")
        for seq_id, row in rows.items():
            seq = self.seq(seq_id, "the snapshot's seqs")
            if type(row) is not dict:
                raise SubmissionProtocolError(f"the snapshot's seqs[{seq_id!r}] must be an object")
            seq.num_computed, seq.num_tokens, seq.num_blocks = (row.get(k) for k in ROW)
            seq.status, seq.output = WireStatus(row.get("status")), row.get("output")
