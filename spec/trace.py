"""Workloads and traces: run the model to completion and record every step.

A workload is data (config, requests with arrival steps, a sample rule); a
trace is what the model did with it, step by step. Both read and write the JSON
format of docs/trace-format.md, which is the test-vector and counterexample
format of the whole project.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TypedDict

from spec.errors import InvalidConfig, InvalidWorkload, SpecError
from spec.feasible import liveness_bound
from spec.loop import Steps
from spec.model import DEFAULT_POLICY, Batch, Config, Event, Policy, Sample, State
from spec.rules import add, initial_state, schedule_explained, update_explained

FORMAT_VERSION = 1
RULES_VERSION = "p07-rules/1"


@dataclass(frozen=True, slots=True)
class Request:
    """One request of a workload, added before the schedule() of step `arrival`."""

    seq_id: str
    prompt_len: int
    max_tokens: int
    arrival: int = 1  # steps count from 1; 1 means before the first schedule()


@dataclass(frozen=True, slots=True)
class SampleRule:
    """The model of the LLM as data: output token k of sequence s is base[s] + k, or eos at eos_at[s]."""

    base: tuple[tuple[str, int], ...] = ()  # per-sequence first token
    eos_at: tuple[tuple[str, tuple[int, ...]], ...] = ()  # output positions that sample eos
    eos: int | None = None  # the token sampled at those positions (the config's eos)
    # the two as dicts, made once: a call that rebuilt them cost O(requests), so a crowd's run O(requests^2)
    tables: tuple[dict[str, int], dict[str, tuple[int, ...]]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "tables", (dict(self.base), dict(self.eos_at)))

    def __call__(self, seq_id: str, output: tuple[int, ...]) -> int:
        base, eos_at = self.tables
        k = len(output)
        if k in eos_at.get(seq_id, ()):
            assert self.eos is not None
            return self.eos
        return base[seq_id] + k


@dataclass(frozen=True, slots=True)
class Workload:
    """Config, requests in arrival order and the sample rule: everything a run depends on."""

    config: Config
    requests: tuple[Request, ...]
    sample: SampleRule
    name: str = ""
    tags: tuple[str, ...] = ()


def with_policy(w: Workload, policy: Policy) -> Workload:
    """`w` judged under `policy` (spec/model.py POLICIES); the same workload when it already is."""
    return w if w.config.policy == policy else replace(w, config=replace(w.config, policy=policy))


def make_workload(config: Config, requests: Iterable[Request], base: Mapping[str, int] | None = None,
                  eos_at: Mapping[str, Iterable[int]] | None = None, name: str = "",
                  tags: Iterable[str] = ()) -> Workload:
    """Build a workload; a sequence without a base gets 100 * (its index + 1), as in the card."""
    reqs = tuple(requests)
    base = dict(base or {})
    positions = {k: tuple(sorted(set(v))) for k, v in (eos_at or {}).items() if v}
    if positions and config.eos is None:
        raise InvalidWorkload(f"sample.eos_at is {positions} but config.eos is None; set config.eos to a token")
    rule = SampleRule(
        base=tuple((r.seq_id, base.get(r.seq_id, 100 * (i + 1))) for i, r in enumerate(reqs)),
        eos_at=tuple(sorted(positions.items())), eos=config.eos)
    return Workload(config, reqs, rule, name, tuple(tags))


@dataclass(frozen=True, slots=True)
class Step:
    """One schedule() + update() pair and what it did."""

    step: int
    added: tuple[str, ...]  # requests added just before this schedule()
    batch: Batch
    events: tuple[Event, ...]  # schedule's decisions, then update's
    sampled: tuple[tuple[str, int], ...]  # sample calls in order: (seq_id, token)
    finished: tuple[str, ...]  # what update() returned
    after_schedule: State
    after_update: State


@dataclass(frozen=True, slots=True)
class Trace:
    """A whole run of the model on a workload."""

    workload: Workload
    steps: tuple[Step, ...] = field(default=())

    @property
    def final(self) -> State:
        return self.steps[-1].after_update if self.steps else initial_state(self.workload.config)

    def outputs(self) -> dict[str, tuple[int, ...]]:
        """Each finished sequence's output."""
        return {s.seq_id: s.output for s in self.final.finished}


def run(config: Config, requests: Sequence[Request], sample: Sample, name: str = "") -> Trace:
    """Drive the model to completion: add arrivals, then schedule() and update(), step by step."""
    workload = (Workload(config, tuple(requests), sample, name) if isinstance(sample, SampleRule)
                else Workload(config, tuple(requests), SampleRule(), name))
    for r in requests:
        if type(r.arrival) is not int or r.arrival < 1:
            raise InvalidWorkload(f"request {r.seq_id!r}: arrival must be an int >= 1, got {r.arrival!r}")
    bound = liveness_bound(requests)
    state = initial_state(config)
    steps: list[Step] = []
    calls: list[tuple[str, int]] = []  # every sample call of the run: (seq_id, token)

    def recording(seq_id: str, output: tuple[int, ...]) -> int:
        token = sample(seq_id, output)
        calls.append((seq_id, token))
        return token

    run_steps: Steps[Request] = Steps(requests, lambda r: r.arrival, lambda r: r.seq_id, bound)
    for step, arrivals in run_steps:
        for r in arrivals:
            state = add(state, r.seq_id, r.prompt_len, r.max_tokens)
        after_schedule, batch, s_events = schedule_explained(state)
        first_call = len(calls)
        state, done, u_events = update_explained(after_schedule, recording)
        run_steps.finished(s.seq_id for s in done)
        steps.append(Step(step, tuple(r.seq_id for r in arrivals), batch, s_events + u_events,
                          tuple(calls[first_call:]), tuple(s.seq_id for s in done), after_schedule, state))
    if not run_steps.done:
        raise SpecError(f"the model ran past the liveness bound {bound} steps; this is a bug in the spec")
    return Trace(workload, tuple(steps))


def run_workload(workload: Workload) -> Trace:
    """Run a workload with its own sample rule."""
    trace = run(workload.config, workload.requests, workload.sample, workload.name)
    return Trace(workload, trace.steps)


# --- JSON ------------------------------------------------------------------------------


def config_to_json(c: Config) -> dict[str, object]:
    """The config as JSON; "policy" is written only when it is not the card's, so card traces stay as they were."""
    return {"num_blocks": c.num_blocks, "block_size": c.block_size, "max_num_seqs": c.max_num_seqs,
            "max_num_batched_tokens": c.max_num_batched_tokens, "eos": c.eos,
            **({} if c.policy == DEFAULT_POLICY else {"policy": str(c.policy)})}


def workload_to_json(w: Workload) -> dict[str, object]:
    return {
        "format": "schedcheck/workload", "version": FORMAT_VERSION, "rules": RULES_VERSION,
        "name": w.name, "tags": list(w.tags), "config": config_to_json(w.config),
        "requests": [{"seq_id": r.seq_id, "prompt_len": r.prompt_len, "max_tokens": r.max_tokens,
                      "arrival": r.arrival} for r in w.requests],
        "sample": {"base": dict(w.sample.base), "eos_at": {k: list(v) for k, v in w.sample.eos_at}},
    }


class SeqFields(TypedDict):
    """One sequence's fields in a snapshot."""

    num_computed: int
    num_tokens: int
    num_blocks: int
    status: str  # the status's name: WAITING, RUNNING or FINISHED
    output: list[int]


class Snapshot(TypedDict):
    """The white-box state after one call, as every trace holds it (docs/trace-format.md)."""

    blocks_used: int
    num_preemptions: int
    waiting: list[str]  # seq_ids, head first
    running: list[str]  # seq_ids, admission order
    finished: list[str]  # seq_ids, finishing order
    seqs: dict[str, SeqFields]  # every added sequence, by seq_id in sorted order


def snapshot_to_json(s: State) -> Snapshot:
    return {
        "blocks_used": s.blocks_used, "num_preemptions": s.num_preemptions,
        "waiting": [q.seq_id for q in s.waiting], "running": [q.seq_id for q in s.running],
        "finished": [q.seq_id for q in s.finished],
        "seqs": {q.seq_id: {"num_computed": q.num_computed, "num_tokens": q.num_tokens,
                            "num_blocks": q.num_blocks, "status": q.status.name, "output": list(q.output)}
                 for q in sorted(s.seqs(), key=lambda q: q.seq_id)},
    }


def trace_to_json(t: Trace) -> dict[str, object]:
    return {
        "format": "schedcheck/trace", "version": FORMAT_VERSION, "rules": RULES_VERSION,
        "workload": workload_to_json(t.workload),
        "steps": [{
            "step": s.step, "added": list(s.added), "schedule": [[i, n] for i, n in s.batch],
            "sampled": [[i, tok] for i, tok in s.sampled], "finished": list(s.finished),
            "events": [e.to_json() for e in s.events],
            "after_schedule": snapshot_to_json(s.after_schedule), "after_update": snapshot_to_json(s.after_update),
        } for s in t.steps],
        "outputs": {k: list(v) for k, v in sorted(t.outputs().items())},
        "num_preemptions": t.final.num_preemptions,
    }


def _get(obj: Mapping[str, object], key: str, where: str) -> object:
    if key not in obj:
        raise InvalidWorkload(f"{where}: missing field {key!r}; see docs/trace-format.md")
    return obj[key]


def _int(obj: Mapping[str, object], key: str, where: str) -> int:
    value = _get(obj, key, where)
    if type(value) is not int:
        raise InvalidWorkload(f"{where}.{key} must be an int, got {value!r}")
    return value


def _str(obj: Mapping[str, object], key: str, where: str) -> str:
    value = _get(obj, key, where)
    if not isinstance(value, str):
        raise InvalidWorkload(f"{where}.{key} must be a string, got {value!r}")
    return value


def _object(value: object, where: str) -> dict[str, object]:
    if not isinstance(value, dict):
        raise InvalidWorkload(f"{where} must be a JSON object, got {value!r}")
    return value


def workload_from_json(obj: object) -> Workload:
    """Read a workload (or the workload of a trace) from parsed JSON, naming any bad field."""
    top = _object(obj, "a workload")
    if top.get("format") == "schedcheck/trace":
        top = _object(top.get("workload"), "trace.workload")
    version = top.get("version", FORMAT_VERSION)
    if version != FORMAT_VERSION:
        raise InvalidWorkload(f"workload.version is {version!r}; this schedcheck reads version {FORMAT_VERSION}")
    c = _object(_get(top, "config", "workload"), "workload.config")
    eos = c.get("eos")
    if eos is not None and type(eos) is not int:
        raise InvalidWorkload(f"workload.config.eos must be an int or null, got {eos!r}")
    where = "workload.config"
    try:
        policy = Policy.parse(c.get("policy", str(DEFAULT_POLICY)))
    except InvalidConfig as e:
        raise InvalidWorkload(f"workload.config.policy: {e}") from None
    config = Config(_int(c, "num_blocks", where), _int(c, "block_size", where), _int(c, "max_num_seqs", where),
                    _int(c, "max_num_batched_tokens", where), eos, policy)
    raw = _get(top, "requests", "workload")
    if not isinstance(raw, list):
        raise InvalidWorkload(f"workload.requests must be a list, got {raw!r}")
    requests = []
    for i, item in enumerate(raw):
        where = f"workload.requests[{i}]"
        r = _object(item, where)
        arrival = _int(r, "arrival", where) if "arrival" in r else 1
        requests.append(Request(_str(r, "seq_id", where), _int(r, "prompt_len", where),
                                _int(r, "max_tokens", where), arrival))
    sample = _object(top.get("sample", {}), "workload.sample")
    base = _object(sample.get("base", {}), "workload.sample.base")
    eos_at = _object(sample.get("eos_at", {}), "workload.sample.eos_at")
    known = {r.seq_id for r in requests}
    bases: dict[str, int] = {}
    for seq_id, value in base.items():
        if seq_id not in known or type(value) is not int:
            raise InvalidWorkload(f"workload.sample.base[{seq_id!r}] = {value!r}: needs a known seq_id and an int")
        bases[seq_id] = value
    positions: dict[str, list[int]] = {}
    for seq_id, value in eos_at.items():
        if seq_id not in known or not isinstance(value, list) or any(type(k) is not int or k < 0 for k in value):
            raise InvalidWorkload(f"workload.sample.eos_at[{seq_id!r}] = {value!r}: needs a known seq_id and "
                                  "a list of output positions >= 0")
        positions[seq_id] = value
    tags = top.get("tags", [])
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise InvalidWorkload(f"workload.tags must be a list of strings, got {tags!r}")
    return make_workload(config, requests, bases, positions, str(top.get("name", "")), tags)


def load_workload(path: str | Path) -> Workload:
    """Read a workload or trace JSON file."""
    try:
        obj = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise InvalidWorkload(f"cannot read workload {str(path)!r}: {e}") from None
    return workload_from_json(obj)
