"""The wire transport: one program, started once, spoken to in JSON Lines over its stdin and stdout.

A Connection owns the subprocess (its own process group, killed whole), sends one message per
line and reads one reply per line under a deadline; anything else (no reply in time, garbage, an
exit, an endless line) is a WireProtocolError naming the message, what came back and what to do.
"""

from __future__ import annotations

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

from conformance.limits import count_hang

PROTOCOL = "schedcheck-wire/1"
REPLY_SECONDS = 10.0  # default time the program has for each reply (an update's whole sample exchange included)
TIMEOUT_ENV = "SCHEDCHECK_WIRE_TIMEOUT"  # overrides REPLY_SECONDS; `schedcheck check --wire-timeout` sets it
# Bytes in one line from the program; a longer one is a flood. The largest honest line is a snapshot of the
# reach stage's long-id workload: nine ids of up to 2^16 + 2 characters, each in a queue and as a row's key (~1.2 MB).
MAX_LINE = 1 << 24
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

    def unasked(self) -> bool:
        """Output is waiting that no message asked for (or the program's stdout closed): between workloads,
        where every reply has been read, this means the program answered out of step, late or twice."""
        return bool(self.buffer.strip()) or bool(self.poll.poll(0))

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


