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

import json
import os
import time
import weakref
from typing import Any

from conformance.adapters import LoadError, SnapshotError
from conformance.wire.connection import (
    PROTOCOL,
    REPLY_SECONDS,
    SEE,
    TIMEOUT_ENV,
    Connection,
    Message,
    WireError,
    WireProtocolError,
)
from spec.model import Config, Sample
from spec.trace import Snapshot

__all__ = ["WireFactory", "WireInstance", "open_target"]


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
        self.alive: weakref.WeakSet[WireInstance] = weakref.WeakSet()  # instances still in use

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
        """A new instance. When no other instance is in use, its workload starts in step with the program: one
        that left replies nobody asked for, or answered the closing of earlier instances out of step, is started
        afresh, since what went wrong belongs to an earlier workload (which saw it, or failed for it)."""
        if self.conn.broken is None and self.freed:
            try:
                while self.freed:
                    gone = {"op": "close", "instance": self.freed.pop()}
                    with self.conn.exchange():
                        reply = self.conn.request(gone)
                        _expect(self.conn, reply, gone, reply.get("ok") is True, "{\"ok\": true}")
            except (WireError, WireProtocolError) as e:
                self.conn.stop(f"closing an earlier instance failed: {e}")
        if self.conn.broken is None and not self.alive and self.conn.unasked():  # none in use: start afresh
            self.conn.stop("it wrote replies that no message asked for")
        if self.conn.broken is not None:
            self.conn, self.name, self.snapshots = self._start()
            self.freed = []
        conn = self.conn
        instance = WireInstance(conn, self.next_instance, config, sample, self.snapshots)
        weakref.finalize(instance, self.freed.append, self.next_instance)  # no I/O here: closed at the next new
        self.alive.add(instance)
        self.next_instance += 1
        return instance

    def close(self) -> None:
        """Stop the program now (it is also stopped when the factory is collected, and at exit)."""
        self.conn.stop("closed")

    def __enter__(self) -> WireFactory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_target(cmd: str, reply_seconds: str | None = None) -> WireFactory:
    """The adapter entry point: start `cmd` and say hello; LoadError if it does not answer in kind.

    `reply_seconds` (the adapter option ``conformance.wire?reply_seconds=S``, what ``--wire-timeout`` gives),
    else the environment's SCHEDCHECK_WIRE_TIMEOUT, else REPLY_SECONDS."""
    seconds = reply_seconds if reply_seconds is not None else os.environ.get(TIMEOUT_ENV)
    try:
        reply = REPLY_SECONDS if seconds is None else float(seconds)
    except ValueError:
        raise LoadError(f"the wire timeout {seconds!r} is not a number of seconds") from None
    if not reply > 0:
        raise LoadError(f"the wire timeout must be > 0 seconds, got {reply:g}")
    return WireFactory(cmd, reply)


# --- the command line: `schedcheck check --wire CMD`, `schedcheck replay TRACE --wire CMD` ------------------

MAY_IMPORT: tuple[str, ...] = ("spec", "conformance")  # the packages this one builds on (tests/test_layers.py)
