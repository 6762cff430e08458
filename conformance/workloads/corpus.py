"""The frozen corpus: versioned workload vectors under conformance/workloads/data/<family>/, tagged by feature.

Each vector is a workload JSON file (spec.trace.workload_to_json) naming the rules
version it follows. ``features`` derives the feature tags from the spec's run, so
tags cannot drift from behaviour. ``run_corpus`` is the reusable "corpus ->
per-check, per-feature results" function that the suite and grading share.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from conformance.adapters import Factory
from conformance.checks.checkers import Finding, expected_trace
from conformance.checks.workload import WORKLOAD_CHECKS, check_workload
from conformance.limits import HangLimit
from spec.errors import InvalidWorkload
from spec.feasible import tightest_num_blocks
from spec.trace import RULES_VERSION, Workload, workload_from_json

CORPUS_DIR = Path(__file__).parent / "data"
MANIFEST = "MANIFEST.json"
PROBE_EVERY = 10  # the fresh-dict and two-instance probes run on every 10th vector: any workload shows those bugs


@dataclass(frozen=True)
class Vector:
    """One frozen workload and where it lives."""

    family: str  # the folder: exhaustive, edge, counterexamples, ...
    name: str  # the file name without .json
    workload: Workload

    @property
    def vector_id(self) -> str:
        return f"{self.family}/{self.name}"


def features(w: Workload) -> tuple[str, ...]:
    """The features a workload exercises under the spec, sorted: the tags of the pass matrix."""
    trace = expected_trace(w)
    c = w.config
    tags: set[str] = set()
    rules = {e.rule for s in trace.steps for e in s.events}
    named = {"U.partial": "chunked-prefill", "P1.preempt": "preemption", "P1.skip_self": "self-preemption",
             "P2.stop": "fcfs-stop", "P2.full": "max-num-seqs", "P1.budget": "budget-cut"}
    tags.update(tag for rule, tag in named.items() if rule in rules)
    preempted: dict[str, int] = {}
    running_before: set[str] = set()
    for s in trace.steps:
        admitted = {e.seq_id for e in s.events if e.rule == "P2"}
        phase1 = {e.seq_id for e in s.events if e.rule == "P1"}
        still = {q.seq_id for q in s.after_schedule.running}
        victims = {i for i in running_before if i not in still or (i in admitted and i not in phase1)}
        if len(victims) >= 2:
            tags.add("double-preemption")
        if victims & admitted:
            tags.add("readmit-same-step")
        for i in victims:
            preempted[i] = preempted.get(i, 0) + 1
        if any(e.rule == "P2.stop" for e in s.events) and len(s.after_schedule.waiting) >= 2:
            tags.add("head-of-line")
        for e in s.events:
            if e.rule == "U.finish" and dict(e.data).get("reason") == "eos":
                tags.update(("eos", "eos-token-0") if c.eos == 0 else ("eos",))
            if e.rule == "U.partial" and int(dict(e.data)["num_computed"] or 0) % c.block_size == 0:
                tags.add("chunk-on-block-boundary")
        if len(s.after_schedule.running) == c.max_num_seqs and c.max_num_seqs > 1:
            tags.add("max-num-seqs-running")
        running_before = {q.seq_id for q in s.after_update.running}
    if any(n >= 2 for n in preempted.values()):
        tags.add("repeat-preemption")
    if any(0 in v for _, v in w.sample.eos_at):
        tags.add("eos-first-token")
    if any(r.arrival > 1 for r in w.requests):
        tags.add("arrivals")
    if c.block_size == 1:
        tags.add("block-size-1")
    if c.max_num_batched_tokens < c.max_num_seqs:
        tags.add("budget-below-max-num-seqs")
    if c.num_blocks == tightest_num_blocks(c.block_size, w.requests):
        tags.add("kv-one-peak")
    tags.update(scale_features(w, len(trace.steps), preempted,
                               max((len(s.after_schedule.waiting) for s in trace.steps), default=0)))
    return tuple(sorted(tags))


SMALL_INTS = range(-5, 257)  # CPython caches these: `is` on them cannot tell a copy from the original
CROWD, BURST, LONG_RUN, THRASH = 20, 8, 200, 5  # thresholds of the scale tags


def scale_features(w: Workload, steps: int, preempted: dict[str, int], max_waiting: int) -> set[str]:
    """The scale tags: numbers beyond the small scopes (no small-scope workload carries one)."""
    c = w.config
    tags: set[str] = set()
    big = [c.block_size, c.max_num_batched_tokens, *(r.prompt_len for r in w.requests)]
    if c.block_size >= 256 or max(r.prompt_len for r in w.requests) >= 1000 or (
            c.eos is not None and c.eos not in SMALL_INTS):
        tags.add("large-numbers")
    if max(big) >= 2**53:
        tags.add("past-2^53")
    if len(w.requests) >= CROWD:
        tags.add("crowd")
    if max_waiting >= max(8, 4 * c.max_num_seqs):
        tags.add("long-waiting-queue")
    arrivals: dict[int, int] = {}
    for r in w.requests:
        arrivals[r.arrival] = arrivals.get(r.arrival, 0) + 1
    if max(arrivals.values()) >= BURST:
        tags.add("burst")
    if steps >= LONG_RUN:
        tags.add("long-run")
    if any(n >= THRASH for n in preempted.values()):
        tags.add("thrash")
    return tags


def load_corpus(root: Path = CORPUS_DIR, families: Iterable[str] | None = None) -> tuple[list[Vector], list[str]]:
    """Every vector under `root` in a fixed order, plus notes on files that could not be read."""
    vectors: list[Vector] = []
    notes: list[str] = []
    wanted = set(families) if families is not None else None
    for path in sorted(root.glob("*/*.json")):
        family = path.parent.name
        if wanted is not None and family not in wanted:
            continue
        try:
            obj = json.loads(path.read_text())
            if not isinstance(obj, dict) or obj.get("format") not in ("schedcheck/workload", "schedcheck/trace"):
                continue  # not a workload vector (a result or coverage file)
            if obj.get("rules", RULES_VERSION) != RULES_VERSION:
                notes.append(f"{family}/{path.stem}: follows rules {obj.get('rules')!r}, not {RULES_VERSION}; skipped")
                continue
            vectors.append(Vector(family, path.stem, workload_from_json(obj)))
        except (OSError, json.JSONDecodeError, InvalidWorkload) as e:
            notes.append(f"{family}/{path.stem}: unreadable vector ({e}); skipped")
    return vectors, notes


def family_names(root: Path = CORPUS_DIR) -> list[str]:
    """Every corpus family (a folder under `root`), sorted."""
    return sorted(p.name for p in root.iterdir() if p.is_dir())


def family_arg(name: str) -> str:
    """An argparse type: a known corpus family name, or a usage error that lists the known ones."""
    if name not in family_names():
        raise argparse.ArgumentTypeError(f"corpus family {name!r} does not exist; choose one of "
                                         f"{', '.join(family_names())}")
    return name


def families_except(excluded: Iterable[str] | None) -> list[str] | None:
    """The families to load when `excluded` are left out (None: every family, as load_corpus's default)."""
    drop = set(excluded or ())
    return None if not drop else [f for f in family_names() if f not in drop]


@dataclass
class CorpusResult:
    """Per-check and per-feature outcomes of a corpus run, plus the first failure of each check."""

    runs: dict[str, int]  # check -> vectors judged
    failed: dict[str, list[str]]  # check -> ids of failing vectors, in corpus order
    features: dict[str, dict[str, int]]  # feature -> {"pass": n, "fail": n}
    first: dict[str, tuple[Vector, Finding]]  # check -> its first failing vector and finding
    lead: dict[str, Finding] = field(default_factory=dict)  # failing vector id -> its earliest finding (root causes)
    seconds_to_first: float | None = None  # wall time from the start to the first failure (terminal only)
    stopped: bool = False  # the submission hung too often (HangLimit): the vectors after the last judged were not run


def run_corpus(vectors: Iterable[Vector], factory: Factory, white_box: bool = True,
               checks: Iterable[str] = WORKLOAD_CHECKS,
               progress: Callable[[int], None] | None = None) -> CorpusResult:
    """Run every check on every vector; a vector passes a feature row when all its checks pass."""
    checks = tuple(checks)
    result = CorpusResult({c: 0 for c in checks}, {c: [] for c in checks}, {}, {})
    start = time.perf_counter()
    for i, v in enumerate(vectors):
        try:
            found = check_workload(v.workload, factory, white_box, only=checks, extra_probes=i % PROBE_EVERY == 0)
        except HangLimit:  # what was judged so far stands; the caller decides what to do next
            result.stopped = True
            break
        ok = True
        for check, finding in found.items():
            result.runs[check] += 1
            if finding is not None:
                ok = False
                result.failed[check].append(v.vector_id)
                result.first.setdefault(check, (v, finding))
                if v.vector_id not in result.lead or finding.step < result.lead[v.vector_id].step:
                    result.lead[v.vector_id] = finding
                if result.seconds_to_first is None:
                    result.seconds_to_first = time.perf_counter() - start
        for tag in v.workload.tags or features(v.workload):
            row = result.features.setdefault(tag, {"pass": 0, "fail": 0})
            row["pass" if ok else "fail"] += 1
        if progress is not None:
            progress(i + 1)
    return result
