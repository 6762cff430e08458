"""The sandbox child's driver: run a submission through whole workloads and return plain JSON data.

conformance.sandbox.boot loads this source inside the sandboxed child (it arrives in the job file,
assembled with readers.py, keep.py, conformance/beside.py and spec/loop.py, since the project tree is
hidden there), and
sandbox.bench imports it in-process to measure the sandbox's overhead. Beyond those two parts it
uses the standard library only. Every value the submission gives back goes through readers.py;
nothing it returns is trusted: the parent validates every field (docs/sandbox.md).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Generator
from typing import Any

from conformance.beside import beside_workload, created_at
from conformance.sandbox.keep import Keeper
from conformance.sandbox.readers import (
    NOTED,
    SubmissionProtocolError,
    describe,
    exact_str,
    output_items,
    read_batch,
    read_seqs,
    snapshot,
    take_notes,
)
from conformance.sandbox.wireshim import load_wire
from spec.loop import RESAMPLE_SHIFT, Steps, changed_by_caller

PROTOCOL = 1
REPORT_MAX = 2 << 20  # bytes of one workload's steps; correct runs stay far below it (a test checks): the corpus's
# under 0.3 MB, the reach tiers' crowds and run of 2,049 steps under 0.7 MB. A run that stalls reports up to this
# much, and the parent reads and judges all of it: a larger cap makes a stalling submission slower to grade
REPORT_PER_ID_CHAR = 128  # ... or this many per character of its ids, if more: a step names each id a few times
# (batch, samples, rows, queues), so a correct run with ids of 2**16 characters reports up to 20 bytes per character
PROBES = ("mutate", "beside", "resample")  # the probes a workload may ask for ("probe" in its JSON: one, or several
# joined by "+", conformance.sandbox.run prepare); the parent answers the child's probe question with the sum of
# their bits, 2 ** (place here), or 0 for none
MUTATE, BESIDE, RESAMPLE = 1, 2, 4  # change every dict schedule() returns before update(); two instances, call by
# call; a position sampled again gets a new token (spec/loop.py RESAMPLE_SHIFT), as from a real model. A run
# compared with a resample probe (its fresh-dict or two-instance probe) resamples too: both draw by one model
PROBE_MAX = MUTATE | BESIDE | RESAMPLE
_type, _len, _int, _str, _issubclass = type, len, int, str, issubclass


def probe_code(asked: object) -> int:
    """The bits of the probes a workload's "probe" names ("mutate", "beside+resample", ...); 0 for none."""
    names = asked.split("+") if isinstance(asked, str) else []
    return sum(1 << PROBES.index(n) for n in set(names) if n in PROBES)


def _reject(value: object) -> None:
    raise TypeError(f"cannot send a {type(value).__name__} to the parent")


def _make_encoder() -> Callable[[object], str]:
    """A compact JSON encoder built from the C accelerator, which patched builtins or json cannot reach."""
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return json.JSONEncoder(separators=(",", ":"), allow_nan=False).encode
    chunks = make(None, _reject, json.encoder.encode_basestring_ascii, None, ":", ",", False, False, False)
    return lambda obj: "".join(chunks(obj, 0))


encode = _make_encoder()


class RefusedImport(ImportError):
    """The submission imported one of the grader's own packages."""


class Refuser:
    """Refuse the project's packages by name; a diagnostic, not a security boundary.

    A meta path finder needs only find_spec; not deriving from importlib.abc.MetaPathFinder spares every
    child the import of importlib.abc (a quarter of its start-up)."""

    def __init__(self, names: list[str]) -> None:
        self.names = frozenset(names)
        self.hits: list[str] = []

    def find_spec(self, fullname: str, path: object = None, target: object = None) -> None:
        top = fullname.partition(".")[0]
        if top in self.names:
            self.hits.append(fullname)
            raise RefusedImport(f"import of {fullname!r} refused: a submission may not import the grader's "
                                f"packages ({', '.join(sorted(self.names))}); submit a self-contained module")
        return None


def trace_line(index: int, trace: dict[str, object], refused: list[str]) -> str:
    """The trace message of workload `index`: drive()'s steps are already encoded, so they are spliced in (and a
    second instance's, for a two-instance probe)."""
    kept = {"kept": trace["kept"]} if "kept" in trace else {}
    head = encode({"type": "trace", "workload": index, "stop": trace["stop"], "error": trace["error"],
                   "refused": refused, **kept, **take_notes()})
    steps: Any = trace["steps"]
    tail = ""
    if "beside" in trace:
        tail = ',"beside":' + lane_text(trace["beside"])
    if "group" in trace:
        lanes: Any = trace["group"]
        tail = ',"group":[' + ",".join(lane_text(t) for t in lanes) + "]"
    return head[:-1] + ',"steps":[' + ",".join(steps) + "]" + tail + "}"


def lane_text(trace: Any) -> str:
    """A second instance's trace (a two-instance probe's, or a group's), as JSON: how it stopped, and its steps."""
    head = encode({"stop": trace["stop"], "error": trace["error"]})
    return head[:-1] + ',"steps":[' + ",".join(trace["steps"]) + "]}"


def report_max(id_chars: int) -> int:
    """The bytes one workload's steps may take, for ids of `id_chars` characters in all (the parent allows a
    message and a child's reports as much more, conformance/sandbox/watch.py)."""
    return max(REPORT_MAX, REPORT_PER_ID_CHAR * id_chars)


def never() -> int:
    return 0


RESERVED_KINDS = ("bad_result", "CallTimeout")  # error kinds the driver itself gives (docs/trace-format.md)


def exception_kind(e: BaseException) -> tuple[str, str]:
    """An error record's kind and message for an exception the submission raised; never a reserved kind."""
    name, message = describe(e)
    return (f"{name} (raised)" if name in RESERVED_KINDS else name), message


class Lane:
    """One instance's run, paused between its calls (run_lane); its trace once the run has ended."""

    def __init__(self, steps: Generator[int, None, dict[str, object]]) -> None:
        self.steps = steps
        self.trace: dict[str, object] | None = None

    def advance(self) -> int | None:
        """Run to the next pause: what the lane says there (a probe's code after its first schedule(), else 0);
        None once the run has ended."""
        if self.trace is not None:
            return None
        try:
            return next(self.steps)
        except StopIteration as e:
            self.trace = e.value
            return None

    def ended(self) -> dict[str, object]:
        assert self.trace is not None, "the lane is still running"
        return self.trace


def drive(module: Any, workload: dict[str, Any], step_cap: int, white_box: bool = True,
          probed: Callable[[], int] = never, keep: bool = True) -> dict[str, object]:
    """Run one workload through the docs/api.md protocol; the observed trace of docs/trace-format.md as plain
    JSON data, each step's record already encoded as JSON text (trace_line makes the message).

    Every run takes this same path. Whether the run is a probe is asked of ``probed`` only after the first
    schedule() has returned (in the sandbox it reads the parent's probe channel), so nothing the submission
    can see before or during its first call tells a probe from a scored run. `keep`: keep every returned
    value and read it again at the end (conformance/sandbox/keep.py).
    """
    if "group" in workload:  # schedulers alive at once: openly a group, nothing to hide
        return group(module, workload, step_cap)
    first = Lane(run_lane(module, workload, step_cap, white_box, probed, keep))
    while (said := first.advance()) is not None:
        if said & BESIDE:
            first.steps.close()  # the run so far only kept the probe unseen: the two instances start afresh
            return pair(module, workload, step_cap, bool(said & RESAMPLE))
    assert first.trace is not None
    return first.trace


def pair(module: Any, workload: dict[str, Any], step_cap: int, resample: bool = False) -> dict[str, object]:
    """A two-instance probe: the workload beside a second one with another config (conformance/beside.py), in
    the order `check` runs them (conformance/checks/history.py ``interleave``): the second instance created
    first, then each step the first's schedule(), the second's, the first's update(), the second's. A lane
    that ends leaves the other to run alone. Both black box: they are judged by their calls alone. `resample`: the
    first draws as a resample probe, as the run it is compared with did."""
    first, second = together(module, [workload, beside_workload(workload)], step_cap, resample)
    return {**first, "beside": second}


def group(module: Any, workload: dict[str, Any], step_cap: int) -> dict[str, object]:
    """Schedulers alive at once, each with its own config: the workload and those of its "group", run as `check`
    runs a reach tier's group (conformance/checks/history.py ``interleave``), black box."""
    first, *rest = together(module, [workload, *workload["group"]], step_cap)
    return {**first, "group": rest}


def together(module: Any, workloads: list[dict[str, Any]], step_cap: int,
             resample_first: bool = False) -> list[dict[str, object]]:
    """Instances stepped call by call (conformance/checks/history.py ``interleave``, the order `check` uses): the
    first is created before step 1, every other one just before the step of its first request (``created_at``),
    those of one step last to first; then each step, every live one's schedule() in order, then the update() of each
    that scheduled. A lane that ends leaves the others running. Their traces, in the order of `workloads`."""
    starts = [1, *(created_at(w) for w in workloads[1:])]
    lanes = [Lane(run_lane(module, w, step_cap, False, never, False, resample_first and i == 0, starts[i]))
             for i, w in enumerate(workloads)]
    made = [False] * len(lanes)
    step = 0
    while True:
        step += 1
        for i in reversed(range(len(lanes))):
            if not made[i] and starts[i] <= step:
                made[i] = True
                lanes[i].advance()  # created
        scheduled = [lane for i, lane in enumerate(lanes) if made[i] and lane.advance() is not None]
        if not scheduled and all(made):
            return [lane.ended() for lane in lanes]
        for lane in scheduled:
            lane.advance()


def run_lane(module: Any, workload: dict[str, Any], step_cap: int, white_box: bool, probed: Callable[[], int],
             keep: bool, resampled: bool = False, start: int = 1) -> Generator[int, None, dict[str, object]]:
    """One instance's run, pausing once it is created and after each schedule() and each update() (pair runs a
    second instance in the pauses); its trace is the generator's value. One function, as drivers._run is: each
    call's result goes into the step record as it returns. Created before step `start` (together), it has an empty
    record, with no call, for each step before."""
    config = workload["config"]
    base: dict[str, int] = workload["sample"]["base"]
    eos_at = {k: frozenset(v) for k, v in workload["sample"].get("eos_at", {}).items()}
    eos = config["eos"]
    seqs: dict[str, object] = {}
    keeper = Keeper(seqs) if keep else None
    steps: list[str] = []  # each step's record, encoded once
    size, most = 0, report_max(sum(_len(r["seq_id"]) for r in workload["requests"]))
    sampled: list[list[object]] = []
    sample_error: list[str] = []
    times: dict[tuple[str, int], int] = {}  # samples of each position so far
    resample = [False]  # whether this run is a resample probe (known after the first schedule())
    sent: dict[object, Any] = {}  # rows, queues and missing reasons last sent, for snapshot's deltas
    heard: dict[str, list[int]] = {}  # the output sample_fn last read of each sequence (readers.output_items)
    record: dict[str, object] | None = None  # the step being run: sent even when a call in it fails

    def sample_fn(seq: Any) -> int:
        """The model: token k of s is base[s] + k, or eos at the positions eos_at[s]; in a resample probe, shifted
        by RESAMPLE_SHIFT per earlier sample of the position."""
        try:
            seq_id = exact_str(seq.seq_id, "sample_fn(seq): seq.seq_id")
            if seq_id not in seqs:
                raise SubmissionProtocolError(f"sample_fn got unknown seq_id {seq_id!r}")
            heard[seq_id] = output_items(seq.output, f"sample_fn({seq_id!r}): seq", NOTED, heard.get(seq_id))
            k = _len(heard[seq_id])
        except SubmissionProtocolError as e:
            sample_error.append(str(e))
            raise
        # a real model hands back a token it has just computed, never the eos object the scheduler was given (as
        # conformance.drivers fresh_int): `token is eos` must not pass
        token = _int(_str(eos)) if k in eos_at.get(seq_id, ()) else base[seq_id] + k
        again = times.get((seq_id, k), 0)
        times[seq_id, k] = again + 1
        if resample[0]:
            token += RESAMPLE_SHIFT * again
        sampled.append([seq_id, k, token])
        return token

    def ended(stop: str, error: dict[str, object] | None) -> dict[str, object]:
        if record is not None and stop == "error":
            steps.append(encode(record))  # the step that failed, with what its calls returned before
        trace: dict[str, object] = {"steps": steps, "stop": stop, "error": error}
        if keeper is not None and stop == "done":
            trace["kept"] = keeper.report()
        return trace

    run: Steps[dict[str, Any]] = Steps(workload["requests"], lambda r: r["arrival"], lambda r: r["seq_id"],
                                       step_cap)
    run.step = start - 1
    steps.extend(encode({"step": k, "added": [], "schedule": [], "sampled": [], "finished": []})
                 for k in range(1, start))
    step, call = 0 if start == 1 else start, "create"  # a constructor that raises: step 0, or the step it came at
    try:
        sched = module.Scheduler(num_blocks=config["num_blocks"], block_size=config["block_size"],
                                 max_num_seqs=config["max_num_seqs"],
                                 max_num_batched_tokens=config["max_num_batched_tokens"],
                                 sample_fn=sample_fn, eos=eos)
        yield 0
        for step, arrivals in run:
            added: list[str] = []
            record = {"step": step, "added": added}
            for r in arrivals:
                call = f"add({r['seq_id']!r})"
                seq = module.Sequence(r["seq_id"], r["prompt_len"], r["max_tokens"])
                sched.add(seq)
                seqs[r["seq_id"]] = seq
                added.append(r["seq_id"])
            call = "schedule"
            del sampled[:]  # a sample_fn call during schedule() is recorded with this step too
            returned = sched.schedule()
            record["schedule"] = read_batch(returned)
            if keeper is not None:
                keeper.schedule(step, returned)
            probe = probed()  # asked only now, after the call returned
            if probe & BESIDE:
                yield probe  # drive drops this run and starts the two instances
            if probe & MUTATE and _issubclass(_type(returned), dict):  # a subclass too, as `check` changes it
                changed_by_caller(returned, seqs, step)  # the caller's to change; a conforming scheduler never notices
            # a position sampled twice inside this first schedule() went unshifted: the parent, which shifts it, then
            # finds the report malformed, a finding on a scheduler already wrong
            resample[0] = resampled or bool(probe & RESAMPLE)
            white_box = white_box and not probe & MUTATE  # judged by its calls alone, as `check` runs it
            if white_box:
                record["after_schedule"] = snapshot(sched, seqs, sent)
            yield 0
            call = "update"
            done = sched.update()
            if sample_error:
                raise SubmissionProtocolError(sample_error[0])
            record["sampled"] = list(sampled)
            objects, finished = read_seqs(done, "update()'s result", seqs)
            record["finished"] = finished
            if keeper is not None:
                keeper.update(step, done, objects)
            run.finished(finished, bool(record["schedule"]))
            if white_box:
                record["after_update"] = snapshot(sched, seqs, sent)
            text, record = encode(record), None
            size += _len(text) + 1
            if size > most:
                raise SubmissionProtocolError(
                    f"the report of this workload passed {most >> 20} MB in step {step} (every step's "
                    f"batch and state are reported) without every request finishing; the largest correct run "
                    f"of the corpus reports far less: look for steps that repeat without progress")
            steps.append(text)
            yield 0
    except SubmissionProtocolError as e:
        return ended("error", {"step": step, "call": call, "kind": "bad_result", "message": str(e)[:500]})
    except GeneratorExit:
        raise  # drive never leaves a lane unfinished; this is the interpreter closing a lane it dropped
    except BaseException as e:  # noqa: BLE001 - SystemExit, KeyboardInterrupt and custom BaseExceptions too
        if sample_error:  # the submission swallowed or replaced our protocol error
            return ended("error", {"step": step, "call": "update", "kind": "bad_result",
                                   "message": sample_error[0][:500]})
        kind, message = exception_kind(e)
        return ended("error", {"step": step, "call": call, "kind": kind, "message": message})
    return ended("done" if run.done else "bound", None)


# what boot.py calls on the driver module (in the sandbox, readers.py is part of that one module)
__all__ = ["BESIDE", "MUTATE", "PROBE_MAX", "PROTOCOL", "REPORT_MAX", "RESERVED_KINDS", "RefusedImport", "Refuser",
           "SubmissionProtocolError", "describe", "drive", "encode", "exception_kind", "load_wire", "never",
           "trace_line"]
