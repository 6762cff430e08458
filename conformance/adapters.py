"""Adapters: the only code that touches an implementation under test.

A driver talks to a ``SchedulerUnderTest``: ``add(seq_id, prompt_len, max_tokens)``,
``schedule() -> dict[str, int]``, ``update() -> list[str]``, ``outputs()`` (final
outputs, black box) and ``snapshot()`` (white box, or None). Built in: ``canonical``
(any module with docs/api.md's Scheduler/Sequence/SequenceStatus, from a file path or a
dotted name), ``spec`` (the reference model) and ``impl``. A custom adapter file
defines ``open_target(target) -> factory``; see docs/conformance.md.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import zlib
from collections.abc import Callable, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any, Protocol

from conformance.limits import RAISED
from conformance.retention import Kept
from conformance.sandbox import protocol, readers
from conformance.sandbox.keep import Keeper
from spec.model import Config, Sample, State
from spec.rules import add as spec_add
from spec.rules import initial_state, schedule, update
from spec.trace import Snapshot, snapshot_to_json


class SchedulerUnderTest(Protocol):
    """What a driver may do with one scheduler instance."""

    def add(self, seq_id: str, prompt_len: int, max_tokens: int) -> None: ...
    def schedule(self) -> object: ...  # should be a dict[str, int]; the driver checks
    def update(self) -> object: ...  # the finished seq_ids as a list[str]; the driver rejects anything else
    def outputs(self) -> dict[str, list[int]] | None: ...
    def snapshot(self) -> Mapping[str, Any] | None: ...  # a Snapshot, where a value it lacks may be None


Factory = Callable[[Config, Sample], SchedulerUnderTest]


class SnapshotError(Exception):
    """The white-box attributes exist but cannot be read as queues of sequences and their fields."""


class LoadError(Exception):
    """The target cannot be loaded or does not expose the interface; the CLI exits with 2."""


# --- the canonical API ----------------------------------------------------------------

class ApiNotes(dict[str, str]):
    """Values read although not of docs/api.md's types ("attribute:type" -> note); each new one goes to `sink` too
    (a report's notes: conformance.suite hands it over), so it shows in the order the runs found it."""

    sink: list[str] | None = None

    def __setitem__(self, key: str, text: str) -> None:
        super().__setitem__(key, text)
        if self.sink is not None:
            self.sink.append(text)


class CanonicalAdapter:
    """Drive a module with docs/api.md's Scheduler, Sequence and SequenceStatus, reading every value by value as the
    sandbox does (conformance/sandbox/readers.py): another type than docs/api.md's is a note, never a finding."""

    def __init__(self, module: ModuleType, config: Config, sample: Sample, notes: ApiNotes | None = None) -> None:
        self.module = module
        self.notes = ApiNotes() if notes is None else notes
        self.seqs: dict[str, Any] = {}
        self.added: set[str] = set()  # the seq_ids added so far, for the snapshots' decoder
        self.sent: dict[object, Any] = {}  # what the reader last read (readers.snapshot: it reads changes)
        self.snaps = protocol.Snapshots(self.added)
        self.white_box_note: str | None = None  # what the snapshots lacked, worded as the grader words it
        self.keeper = Keeper(self.seqs, Exception)  # every value schedule()/update() returned, read again at the end
        self.returned = self.keeper.returned
        self.steps = 0  # schedule() calls so far

        def sample_fn(seq: Any) -> int:
            seq_id, out = seq.seq_id, seq.output
            return sample(seq_id, tuple(out if type(out) is list else self.output(out, f"sample_fn({seq_id!r})")))

        self.sched = module.Scheduler(num_blocks=config.num_blocks, block_size=config.block_size,
                                      max_num_seqs=config.max_num_seqs,
                                      max_num_batched_tokens=config.max_num_batched_tokens,
                                      sample_fn=sample_fn, eos=config.eos)

    def add(self, seq_id: str, prompt_len: int, max_tokens: int) -> None:
        seq = self.module.Sequence(seq_id, prompt_len, max_tokens)
        self.seqs[seq_id] = seq
        self.added.add(seq_id)
        self.sched.add(seq)

    def schedule(self) -> object:
        got = self.sched.schedule()
        self.steps += 1
        self.keeper.schedule(self.steps, got)
        if type(got) is not dict and issubclass(type(got), dict):  # a non-dict: the driver rejects it
            readers.note(self.notes, "schedule()'s result", got)
        if issubclass(type(got), dict):  # a count of an int subclass is read by its value (drivers.batch_pairs)
            odd = next((v for v in dict.values(got) if type(v) is not int), None)
            if odd is not None and type(odd) is not bool and issubclass(type(odd), int):
                readers.note(self.notes, readers.COUNT, odd)
        return got

    def update(self) -> object:
        """The seq_ids of update()'s result, read by value; readers.Unreadable when it cannot be read."""
        done = self.sched.update()
        bound = len(self.seqs) + readers.MARGIN
        items = readers.read_items(done, "update()'s result", bound, readers.QUEUE_HINT, Exception)
        if type(done) is not list:
            readers.note(self.notes, "update()'s result", done)
        self.keeper.update(self.steps, done, items)
        return [getattr(s, "seq_id", s) for s in items]

    def retention(self) -> tuple[Kept, ...]:
        """What changed in the values the calls returned, read now (at the end of the run), as the sandbox child
        reports it: the same keeper, read by the same reader."""
        return protocol.kept(self.keeper.report(), self.steps, "the retention report")

    def output(self, out: object, what: str) -> list[Any]:
        """A sequence's output, read by value (the checks compare its tokens with the spec's)."""
        if type(out) is list:
            return list.copy(out)
        items = readers.read_items(out, f"{what}.output", readers.OUTPUT_MAX, readers.OUTPUT_HINT, Exception)
        readers.note(self.notes, "output", out)
        return items

    def outputs(self) -> dict[str, list[int]] | None:
        try:
            return {k: self.output(s.output, k) for k, s in self.seqs.items()}
        except (AttributeError, TypeError, readers.SubmissionProtocolError):
            return None

    def snapshot(self) -> dict[str, Any] | None:
        """The white-box state after the last call, read as the sandbox's child reads it and decoded as its parent
        decodes it (conformance/sandbox/readers.py snapshot, protocol.py Snapshots), so that check and the grader
        read every submission alike: a value the judge can do without and the submission does not give is None
        (conformance.observed.OPTIONAL_NAMES, OPTIONAL_FIELDS); None when it lacks another; SnapshotError when
        state that earlier snapshots read broke, or is there and cannot be read. self.white_box_note says what
        was missing."""
        sent = readers.snapshot(self.sched, self.seqs, self.sent, Exception, self.notes)
        try:
            got = self.snaps.read(sent, "snapshot", max(self.steps, 1), "schedule")
        except protocol.Malformed as e:
            raise SnapshotError(f"the white-box state cannot be read: {e}") from None
        if self.snaps.white_box_error is not None:
            raise SnapshotError(self.snaps.white_box_error["message"])
        self.white_box_note = self.snaps.note
        return got


class CanonicalFactory:
    """CanonicalAdapter's instances over `module`, once its names are checked; they share one ApiNotes."""

    def __init__(self, module: ModuleType) -> None:
        for name in ("Scheduler", "Sequence"):
            if not hasattr(module, name):
                raise LoadError(f"{module.__name__} has no {name!r}; a submission defines Scheduler, Sequence and "
                                "SequenceStatus as in docs/api.md, or use --adapter FILE for other names")
        self.module, self.notes = module, ApiNotes()
        self._apart: CanonicalFactory | None = None  # the second copy apart() made, on first use

    def __call__(self, config: Config, sample: Sample) -> CanonicalAdapter:
        return CanonicalAdapter(self.module, config, sample, self.notes)

    def apart(self) -> CanonicalFactory:
        """A factory over a second copy of the module, for runs of instances side by side and runs that stop
        unfinished: what they leave in the module's globals (a shared queue, a class attribute) stays in that
        copy, so no run judged on its own comes after it, as the sandbox child runs such probes last. One copy,
        made on first use, serves them all (they share it as they share the child in grading); a module with no
        file, or one that loads only once, is shared."""
        if self._apart is not None:
            return self._apart
        path = getattr(self.module, "__file__", None)
        self._apart = self
        if isinstance(path, str) and path.endswith(".py"):
            try:
                self._apart = CanonicalFactory(load_file(Path(path), f"{self.module.__name__}_apart"))
                self._apart.notes = self.notes
            except LoadError:
                pass
        return self._apart

    def hung_apart(self) -> None:
        """Instances apart ran out of time: the next apart() loads a fresh copy, as the sandbox starts a fresh child
        after a hang (a copy left mid-call, its globals half-changed, would make every later run there hang too)."""
        if self._apart is not self:
            self._apart = None


canonical_factory = CanonicalFactory  # a factory for CanonicalAdapter over a module


# --- the reference model --------------------------------------------------------------


class SpecAdapter:
    """Drive the pure model in spec/ through the same protocol as any submission."""

    def __init__(self, config: Config, sample: Sample) -> None:
        self.state: State = initial_state(config)
        self.sample = sample

    def add(self, seq_id: str, prompt_len: int, max_tokens: int) -> None:
        self.state = spec_add(self.state, seq_id, prompt_len, max_tokens)

    def schedule(self) -> object:
        self.state, batch = schedule(self.state)
        return dict(batch)

    def update(self) -> list[str]:
        self.state, done = update(self.state, self.sample)
        return [s.seq_id for s in done]

    def outputs(self) -> dict[str, list[int]] | None:
        return {q.seq_id: list(q.output) for q in self.state.seqs()}

    def snapshot(self) -> Snapshot | None:
        return snapshot_to_json(self.state)


# --- loading a target -----------------------------------------------------------------


def load_file(path: Path, name: str) -> ModuleType:
    """Execute the module file `path` as a new module `name` (any module of that name is replaced)."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickling look the module up by name
    folder = str(path.resolve().parent)
    sys.path.insert(0, folder)  # a submission may import helpers that sit beside it
    try:
        spec.loader.exec_module(module)
    except RAISED as e:  # sys.exit() at import too: the submission does not load, check goes on to say so
        del sys.modules[name]
        raise LoadError("importing {!r} raised {}: {}".format(str(path), *readers.describe(e))) from None
    finally:
        sys.path.remove(folder)
    return module


def load_module(target: str) -> ModuleType:
    """Import a submission from a file path (``mine/p07_scheduler.py``) or a dotted module name."""
    path = Path(target)
    if target.endswith(".py") or path.is_file():
        if not path.is_file():
            raise LoadError(f"no such file: {target!r}; pass the path of a .py file or a dotted module name")
        return load_file(path, "schedcheck_target_" + zlib.crc32(str(path.resolve()).encode()).to_bytes(4, "big").hex())
    try:
        return importlib.import_module(target)
    except ImportError as e:
        raise LoadError(f"cannot import {target!r} ({e}); pass a file path ending in .py, a dotted module "
                        "name on sys.path, 'spec' or 'impl'") from None
    except RAISED as e:
        raise LoadError("importing {!r} raised {}: {}".format(target, *readers.describe(e))) from None


def adapter_options(adapter: str) -> tuple[str, dict[str, str]]:
    """Split an adapter reference `FILE_OR_MODULE?key=value&...` into the adapter and its options. The options travel
    with the adapter's name, so a rerun hint, a replay and a check in a fresh process open the target the same way."""
    name, _, query = adapter.partition("?")
    options: dict[str, str] = {}
    for pair in filter(None, query.split("&")):
        key, sep, value = pair.partition("=")
        if not sep or not key.isidentifier():
            raise LoadError(f"adapter option {pair!r} in {adapter!r} is not key=value; write ADAPTER?key=value")
        options[key] = value
    return name, options


def load_target(target: str, adapter_file: str | None = None) -> Factory:
    """Resolve a target to a factory: a custom adapter (with its options), 'spec', 'impl', a path or a module."""
    if adapter_file is not None:
        name, options = adapter_options(adapter_file)
        module = load_module(name)
        opener = getattr(module, "open_target", None)
        if not callable(opener):
            raise LoadError(f"adapter file {name!r} defines no open_target(target) function; "
                            "see docs/conformance.md, 'Custom adapters'")
        try:
            factory = opener(target, **options)
        except TypeError as e:
            if not options:
                raise LoadError(f"{name}: open_target({target!r}) raised TypeError: {e}") from None
            raise LoadError(f"{name}: open_target({target!r}) takes no options {sorted(options)} ({e}); "
                            "drop them from the adapter reference") from None
        except LoadError:
            raise  # the adapter already says what is wrong and what to do
        except Exception as e:
            raise LoadError(f"{adapter_file}: open_target({target!r}) raised {type(e).__name__}: {e}") from None
        return factory  # type: ignore[no-any-return]
    if target == "spec":
        return SpecAdapter
    return canonical_factory(load_module(target))
