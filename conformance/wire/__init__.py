"""The wire adapter: check a scheduler written in any language, run as a subprocess speaking JSON Lines.

The suite starts the program once (``shlex.split(cmd)``, no shell), says hello,
then drives any number of scheduler instances over the program's stdin and
stdout, one JSON object per line (docs/wire-protocol.md is the protocol). Nothing
the program sends is trusted: no hello, a reply that is not JSON or lacks a field,
a silence past the timeout, an exit or an endless line becomes a ``LoadError`` at
start or a ``WireProtocolError`` in the call, which the driver records as a
finding. After a broken exchange the program is killed (its whole process group)
and the next instance starts a fresh one. Use: ``--adapter conformance.wire``
with the command as the target, which is what ``schedcheck check --wire`` does.
"""

from __future__ import annotations

import argparse
import json
import os
import select
import shlex
import signal
import subprocess
import threading
import time
import weakref
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import IO, Any

from conformance.adapters import LoadError, Snapshot, SnapshotError
from conformance.drivers import count_hang
from spec.model import Config, Sample

PROTOCOL = "schedcheck-wire/1"
REPLY_SECONDS = 10.0  # default time the program has for each reply (an update's whole sample exchange included)
TIMEOUT_ENV = "SCHEDCHECK_WIRE_TIMEOUT"  # overrides REPLY_SECONDS; `schedcheck check --wire-timeout` sets it
MAX_LINE = 1 << 20  # bytes in one line from the program; a longer one is a flood
STDERR_KEEP = 4096  # bytes of the program's stderr kept for error messages
SEE = "see docs/wire-protocol.md"
Message = dict[str, Any]  # one JSON object on one line
_encode = json.JSONEncoder(separators=(",", ":")).encode  # json.dumps with options builds an encoder per call


class WireError(Exception):
    """The program answered {"error": ...}: the submission raised."""


class WireProtocolError(Exception):
    """The program broke the protocol; unless only a batch's content was wrong, it has been killed."""


def _drain(stream: IO[bytes], keep: bytearray) -> None:
    """Read the program's stderr to its end (so it never blocks on a full pipe), keeping only the tail."""
    with suppress(OSError, ValueError):
        while chunk := stream.read(4096):
            keep += chunk
            del keep[:-STDERR_KEEP]
        stream.close()


def _kill(proc: subprocess.Popen[bytes]) -> None:
    """Kill the program's process group and reap it (finalizer: no reference to the Connection)."""
    if proc.returncode is None:  # not reaped yet, so its pid (== its group id) is still ours
        with suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        with suppress(OSError):
            proc.kill()  # in case it left its group (setsid)
    for stream in (proc.stdin, proc.stdout):
        with suppress(OSError):
            stream.close()  # type: ignore[union-attr]
    proc.wait()


class Connection:
    """One running program: a message out, a reply in; on any broken exchange the program is killed."""

    def __init__(self, cmd: str, reply_seconds: float) -> None:
        self.cmd = cmd
        self.reply_seconds = reply_seconds
        self.broken: str | None = None  # why the program was stopped, once it was
        self.buffer = bytearray()  # stdout bytes read but not yet consumed as lines
        self.stderr = bytearray()
        try:
            argv = shlex.split(cmd)
            self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE, bufsize=0, start_new_session=True)
        except (OSError, ValueError, IndexError) as e:
            raise WireProtocolError(f"cannot start {cmd!r}: {e}; pass the command that runs your program, "
                                    "e.g. --wire \"node scheduler.js\"") from None
        assert self.proc.stderr is not None
        self.drain = threading.Thread(target=_drain, args=(self.proc.stderr, self.stderr), daemon=True)
        self.drain.start()
        assert self.proc.stdout is not None
        self.stdout = self.proc.stdout.fileno()
        self.poll = select.poll()
        self.poll.register(self.stdout, select.POLLIN)
        self.stop_process = weakref.finalize(self, _kill, self.proc)

    def fail(self, what: Message, problem: str, hint: str, ending: bool = False) -> WireProtocolError:
        """Stop the program; the error names the exchange, what came back, how it ended, and the fix.

        what: the message whose reply was awaited. ending: the program is probably exiting (its stdout
        closed), so wait a moment for its exit code.
        """
        exited = self._settle(0.5 if ending else 0.0)
        self.stop(problem)
        self.drain.join(1.0)
        code = ""
        if exited is not None:
            code = f"; the program exited with code {exited}" if exited >= 0 else \
                f"; the program was killed by signal {-exited}"
        lines = [x for x in self.stderr.decode("utf-8", "replace").splitlines() if x.strip()][-5:]
        tail = f"; its stderr ends: {' | '.join(lines)[-600:]!r}" if lines else ""
        sent = json.dumps(what)[:200]
        exchange = f"the hello (the program's first reply, to {sent})" if what["op"] == "hello" else f"reply to {sent}"
        return WireProtocolError(f"{exchange}: {problem}{code}{tail}; {hint}")

    def _settle(self, seconds: float) -> int | None:
        """The exit code if the program exits within `seconds`, without reaping it (None: still running).

        Not reaping keeps its pid, and so its process group, ours until stop() kills the group.
        """
        if self.proc.returncode is not None or not hasattr(os, "waitid"):
            return self.proc.poll()
        deadline = time.monotonic() + seconds
        while True:
            try:
                info = os.waitid(os.P_PID, self.proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            except ChildProcessError:
                return self.proc.poll()
            if info is not None:
                return info.si_status if info.si_code == os.CLD_EXITED else -info.si_status
            if time.monotonic() > deadline:
                return None
            time.sleep(0.01)

    def stop(self, why: str) -> None:
        if self.broken is None:
            self.broken = why
        self.stop_process()

    @contextmanager
    def exchange(self) -> Iterator[None]:
        """One request and its replies; anything but an error reply leaves the stream unusable, so stop."""
        if self.broken is not None:
            raise WireProtocolError(f"the program was stopped after an earlier error ({self.broken})")
        try:
            yield
        except WireError:
            raise
        except BaseException as e:  # a timeout of the whole run included: a late reply would be misread
            self.stop(str(e) or type(e).__name__)
            raise

    def send(self, message: dict[str, Any], what: Message) -> None:
        data = memoryview((_encode(message) + "\n").encode())
        assert self.proc.stdin is not None
        try:
            while data:
                data = data[os.write(self.proc.stdin.fileno(), data):]
        except OSError:
            raise self.fail(what, "the program stopped reading its stdin", "keep reading until stdin closes",
                            ending=True) from None

    def read(self, what: Message, deadline: float) -> dict[str, Any]:
        """The next JSON object from the program; {"error": ...} raises WireError."""
        line = self._line(what, deadline)
        try:
            reply = json.loads(line)
        except (ValueError, RecursionError):
            raise self.fail(what, f"the reply is not JSON: {line[:200]!r}",
                            "write exactly one JSON object per line on stdout and logs on stderr") from None
        if not isinstance(reply, dict):
            raise self.fail(what, f"the reply is a JSON {type(reply).__name__}, not an object: {line[:200]!r}",
                            SEE)
        if "error" in reply:
            raise WireError(str(reply["error"])[:2000])
        return reply

    def _line(self, what: Message, deadline: float) -> str:
        while True:
            end = self.buffer.find(b"\n")
            if end >= 0:
                line = bytes(self.buffer[:end]).decode("utf-8", "replace")
                del self.buffer[:end + 1]
                if line.strip():
                    return line
                continue
            if len(self.buffer) > MAX_LINE:
                raise self.fail(what, f"a line longer than {MAX_LINE} bytes without a newline "
                                f"(it starts {bytes(self.buffer[:80])!r})", "end every message with a newline")
            left = deadline - time.monotonic()
            if left <= 0 or not self.poll.poll(left * 1000):
                count_hang()  # a program that stopped answering costs a reply timeout per run: the suite stops
                raise self.fail(what, f"no reply within {self.reply_seconds:g} s",
                                "answer every message with one line and flush stdout, or give more time "
                                "with --wire-timeout SECONDS")
            chunk = os.read(self.stdout, 1 << 16)
            if not chunk:
                raise self.fail(what, "the program closed its stdout before replying",
                                "keep running until stdin closes, and report a failed call as {\"error\": ...}",
                                ending=True)
            self.buffer += chunk

    def request(self, message: Message) -> dict[str, Any]:
        """Send one message and read its one reply."""
        self.send(message, message)
        return self.read(message, time.monotonic() + self.reply_seconds)


def _expect(conn: Connection, reply: dict[str, Any], what: Message, ok: bool, wanted: str) -> None:
    if not ok:
        raise conn.fail(what, f"expected {wanted}, got {json.dumps(reply)[:300]}", SEE)


def _is_int(x: object) -> bool:
    return type(x) is int


def _snapshot_problem(snap: object) -> str | None:
    """Why a snapshot does not have the shape of spec.trace.snapshot_to_json, or None."""
    if not isinstance(snap, dict):
        return f"the snapshot is a {type(snap).__name__}, not an object"
    for key in ("blocks_used", "num_preemptions"):
        if not _is_int(snap.get(key)):
            return f"{key} is {snap.get(key)!r}, expected an integer"
    for key in ("waiting", "running", "finished"):
        queue = snap.get(key)
        if not isinstance(queue, list) or not all(type(x) is str for x in queue):
            return f"{key} is {queue!r}, expected a list of seq_id strings"
    seqs = snap.get("seqs")
    if not isinstance(seqs, dict):
        return f"seqs is {seqs!r}, expected an object seq_id -> fields"
    for seq_id, q in seqs.items():
        if not isinstance(q, dict) or not all(_is_int(q.get(k)) for k in ("num_computed", "num_tokens", "num_blocks")) \
                or type(q.get("status")) is not str or not isinstance(q.get("output"), list) \
                or not all(_is_int(t) for t in q["output"]):
            return (f"seqs[{seq_id!r}] is {q!r}, expected num_computed, num_tokens, num_blocks (integers), "
                    "status (a string) and output (a list of integers)")
    return None


class WireInstance:
    """One scheduler instance inside the program: the SchedulerUnderTest protocol over the wire."""

    def __init__(self, conn: Connection, instance: int, config: Config, sample: Sample, snapshots: bool) -> None:
        self.conn = conn
        self.instance = instance
        self.sample = sample
        self.snapshots = snapshots
        self.missing = None if snapshots else "the wire program announced \"snapshot\": false in its hello"
        self._call({"op": "new", "config": {"num_blocks": config.num_blocks, "block_size": config.block_size,
                                            "max_num_seqs": config.max_num_seqs,
                                            "max_num_batched_tokens": config.max_num_batched_tokens,
                                            "eos": config.eos}}, "ok", lambda v: v is True, "{\"ok\": true}")

    def _call(self, message: dict[str, Any], field: str, valid: Any, wanted: str) -> Any:
        message = {"op": message["op"], "instance": self.instance, **message}
        with self.conn.exchange():
            reply = self.conn.request(message)
            _expect(self.conn, reply, message, field in reply and valid(reply[field]), wanted)
            return reply[field]

    def add(self, seq_id: str, prompt_len: int, max_tokens: int) -> None:
        self._call({"op": "add", "seq_id": seq_id, "prompt_len": prompt_len, "max_tokens": max_tokens},
                   "ok", lambda v: v is True, "{\"ok\": true}")

    def schedule(self) -> object:
        def pairs(batch: object) -> bool:
            return isinstance(batch, list) and all(
                isinstance(p, list) and len(p) == 2 and type(p[0]) is str and _is_int(p[1]) for p in batch)
        batch = self._call({"op": "schedule"}, "batch", pairs, "{\"batch\": [[seq_id, n], ...]} (a list of "
                           "[string, integer] pairs in scheduling order)")
        result = {seq_id: n for seq_id, n in batch}
        if len(result) < len(batch):
            twice = next(i for k, (i, _) in enumerate(batch) if i in (p[0] for p in batch[:k]))
            raise WireProtocolError(f"the batch {batch} names {twice!r} twice; a sequence appears at "
                                    "most once per step, with all its tokens in one pair")
        return result

    def update(self) -> list[str]:
        what = {"op": "update", "instance": self.instance}
        with self.conn.exchange():
            self.conn.send(what, what)
            deadline = time.monotonic() + self.conn.reply_seconds  # for the whole exchange, samples included
            while True:
                reply = self.conn.read(what, deadline)
                if "finished" in reply:
                    done = reply["finished"]
                    _expect(self.conn, reply, what, isinstance(done, list) and all(type(x) is str for x in done),
                            "{\"finished\": [seq_id, ...]}")
                    return list(done)
                ask: Any = reply.get("sample")
                _expect(self.conn, reply, what, isinstance(ask, dict) and type(ask.get("seq_id")) is str
                        and isinstance(ask.get("output"), list) and all(_is_int(t) for t in ask["output"]),
                        "{\"sample\": {\"seq_id\": ..., \"output\": [...]}} or {\"finished\": [...]}")
                try:
                    token = self.sample(ask["seq_id"], tuple(ask["output"]))
                except Exception as e:
                    raise self.conn.fail(what, f"the program asked for a sample of {ask['seq_id']!r}, which the "
                                         f"workload cannot give ({type(e).__name__}: {e})",
                                         "ask only for sequences that were added") from None
                self.conn.send({"token": token}, what)

    def outputs(self) -> dict[str, list[int]] | None:
        def valid(out: object) -> bool:
            return isinstance(out, dict) and all(isinstance(v, list) and all(_is_int(t) for t in v)
                                                 for v in out.values())
        out = self._call({"op": "outputs"}, "outputs", valid, "{\"outputs\": {seq_id: [token, ...]}}")
        return {k: list(v) for k, v in out.items()}

    def snapshot(self) -> Snapshot | None:
        if not self.snapshots:
            return None
        snap = self._call({"op": "snapshot"}, "snapshot", lambda v: True, "{\"snapshot\": {...}}")
        problem = _snapshot_problem(snap)
        if problem is not None:
            raise SnapshotError(f"the wire snapshot is malformed: {problem} ({SEE}, 'snapshot')")
        return snap  # type: ignore[no-any-return]


class WireFactory:
    """Make scheduler instances inside one running program; start a fresh program after one broke."""

    def __init__(self, cmd: str, reply_seconds: float = REPLY_SECONDS) -> None:
        self.cmd = cmd
        self.reply_seconds = reply_seconds
        self.next_instance = 1
        try:
            self.conn, self.name, self.snapshots = self._start()
        except WireProtocolError as e:
            raise LoadError(str(e)) from None
        self.freed: list[int] = []  # instances of self.conn that the suite dropped, to close before the next new

    def _start(self) -> tuple[Connection, str, bool]:
        conn = Connection(self.cmd, self.reply_seconds)
        what = {"op": "hello", "protocol": PROTOCOL}
        with conn.exchange():
            try:
                reply = conn.request(what)
            except WireError as e:
                raise conn.fail(what, f"the program answered with an error: {e}", SEE) from None
            if reply.get("protocol") != PROTOCOL:
                raise conn.fail(what, f"the program speaks {reply.get('protocol')!r}, this suite {PROTOCOL!r}",
                                f"answer the hello with {{\"ok\": true, \"protocol\": \"{PROTOCOL}\", ...}}")
            _expect(conn, reply, what, reply.get("ok") is True and type(reply.get("name")) is str
                    and type(reply.get("snapshot")) is bool,
                    f"{{\"ok\": true, \"protocol\": \"{PROTOCOL}\", \"name\": \"...\", \"snapshot\": true|false}}")
        return conn, reply["name"], reply["snapshot"]

    def __call__(self, config: Config, sample: Sample) -> WireInstance:
        if self.conn.broken is not None:
            self.conn, self.name, self.snapshots = self._start()
            self.freed = []
        conn = self.conn
        while self.freed:
            gone = {"op": "close", "instance": self.freed.pop()}
            with conn.exchange():
                reply = conn.request(gone)
                _expect(conn, reply, gone, reply.get("ok") is True, "{\"ok\": true}")
        instance = WireInstance(conn, self.next_instance, config, sample, self.snapshots)
        weakref.finalize(instance, self.freed.append, self.next_instance)  # no I/O here: closed at the next new
        self.next_instance += 1
        return instance

    def close(self) -> None:
        """Stop the program now (it is also stopped when the factory is collected, and at exit)."""
        self.conn.stop("closed")

    def __enter__(self) -> WireFactory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_target(cmd: str) -> WireFactory:
    """The adapter-file entry point: start `cmd` and say hello; LoadError if it does not answer in kind."""
    seconds = os.environ.get(TIMEOUT_ENV)
    try:
        reply_seconds = REPLY_SECONDS if seconds is None else float(seconds)
    except ValueError:
        raise LoadError(f"{TIMEOUT_ENV}={seconds!r} is not a number of seconds") from None
    if not reply_seconds > 0:
        raise LoadError(f"the wire timeout must be > 0 seconds, got {reply_seconds:g}")
    return WireFactory(cmd, reply_seconds)


# --- the command line: `schedcheck check --wire CMD`, `schedcheck replay TRACE --wire CMD` ------------------


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--wire", metavar="CMD", help="check a program in any language that speaks the wire "
                        "protocol on stdin/stdout (docs/wire-protocol.md); CMD is quoted and run without a shell")
    parser.add_argument("--wire-timeout", metavar="SECONDS", type=float,
                        help=f"seconds the wire program has for each reply (default {REPLY_SECONDS:g})")


def target_from_args(args: argparse.Namespace) -> tuple[str, str | None, str]:
    """(target, adapter, the target as typed on a command line) from PATH/--adapter/--wire; ValueError if unclear."""
    if args.wire is None:
        if args.path is None:
            raise ValueError("give PATH (a submission file, a dotted module, 'impl' or 'spec') or --wire \"CMD\"")
        if args.wire_timeout is not None:
            raise ValueError("--wire-timeout applies only with --wire")
        typed = args.path if args.adapter is None else f"{shlex.quote(args.path)} --adapter {args.adapter}"
        return args.path, args.adapter, typed  # as typed: rerun hints must carry the adapter too
    if args.path is not None or args.adapter is not None:
        raise ValueError(f"--wire runs a program and takes no PATH or --adapter (got {args.path or args.adapter!r}); "
                         "put the program's arguments inside the quoted command")
    if args.wire_timeout is not None:
        os.environ[TIMEOUT_ENV] = repr(args.wire_timeout)  # read by open_target, which the suite calls
    return args.wire, __name__, f"--wire {shlex.quote(args.wire)}"
