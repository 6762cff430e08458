"""The input dimensions of the API, stated as data: every one, the values the workloads must reach, and why.

A bug that lives past a threshold (a batch capped at 256, a table of 1024 slots, a recursion
per step, a uint16 block id) passes every workload that stays below it, however many there
are. So the thresholds are listed here, once, and measured: ``DIMENSIONS`` names each input
dimension of docs/api.md with the values a profile's workloads must reach (both sides of every
power-of-two threshold up to a realistic limit), and ``missing(profile)`` measures each on the
workloads that profile actually runs (``profile_cases``: golden cases, the corpus, every stage,
the token values), so a profile that stops reaching a value fails a test, and
docs/conformance.md's table is rendered from here (``render``).

What "reaches" means depends on the dimension, and each row says it:

- a count (requests in flight, queue lengths, steps, preemptions, tokens of a sequence) changes
  by one at a time inside the calls, so a run whose count peaks at p takes every value up to p;
- a config number reaches a value only when it binds: max_num_seqs refuses an admission (P2.full),
  the cache fills, a batch uses the whole budget, a sequence spans more than one block; a config
  value that never binds tests nothing;
- a token or eos value is reached when it is sampled (an eos, when it ends a sequence);
- ids are measured on the ids of one workload (collisions on ids added in the same step, so both
  are held at once); instances on the groups of schedulers alive at once, those made while the first runs, and on
  the count made.
"""

from __future__ import annotations

import re
import sys
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from conformance.beside import created_at
from conformance.checks.checkers import expected_trace
from conformance.checks.probes import golden_under
from conformance.profiles import PROFILES
from conformance.sources import stage_cases
from conformance.workloads.corpus import load_corpus
from conformance.workloads.hashes import COLLISION_BITS, HASHES
from conformance.workloads.reach import (
    DEFAULT_CROWD_BITS,
    LONG_RUN_STEPS,
    MOST_PREEMPTION_BITS,
    NUMBER_BITS,
    PREEMPTION_BITS,
    QUICK_CROWD_BITS,
    QUICK_NUMBER_BITS,
    TURNOVER_BITS,
    Case,
    around,
)
from conformance.workloads.sentinels import sentinel_workloads
from spec.model import DEFAULT_POLICY
from spec.trace import Trace, Workload, workload_to_json

Value = int | str
RECURSION_LIMIT = sys.getrecursionlimit()  # the limit the checked submission runs under (it runs in this process)


# --- what a target is -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Around:
    """Both sides of every threshold 2**k for k in low..high (and their negatives when signed)."""

    low: int
    high: int
    signed: bool = False

    def values(self) -> tuple[int, ...]:
        out = {v for k in range(self.low, self.high + 1) for v in around(k)}
        return tuple(sorted(out | ({-v for v in out} if self.signed else set())))

    def text(self) -> str:
        sign = "±(2^k - 1), ±2^k, ±(2^k + 1)" if self.signed else "2^k - 1, 2^k, 2^k + 1"
        return f"{sign} for k = {self.low}..{self.high}"


@dataclass(frozen=True, slots=True)
class Named:
    """One value with the reason it is there (2 x the recursion limit + 1, say)."""

    label: str
    value: Value

    def values(self) -> tuple[Value, ...]:
        return (self.value,)

    def text(self) -> str:
        return f"{self.label} ({_show(self.value)})"


@dataclass(frozen=True, slots=True)
class Listed:
    """Values named one by one (labels of id shapes, small numbers)."""

    items: tuple[Value, ...]

    def values(self) -> tuple[Value, ...]:
        return self.items

    def text(self) -> str:
        return ", ".join(_show(v) for v in self.items)


@dataclass(frozen=True, slots=True)
class PerKey:
    """`key/k` for every key and every k in low..high (a hash and a table size, say)."""

    keys: tuple[str, ...]
    low: int
    high: int

    def values(self) -> tuple[Value, ...]:
        return tuple(f"{key}/{k}" for key in self.keys for k in range(self.low, self.high + 1))

    def text(self) -> str:
        return f"key/k for key in {', '.join(self.keys)} and k = {self.low}..{self.high}"


Part = Around | Named | Listed | PerKey


def _show(v: Value) -> str:
    return f"{v:,}" if isinstance(v, int) else v


# --- what a run reaches ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Seen:
    """What one case reached of one dimension: values, every int in some spans, or a count to add up."""

    values: frozenset[Value] = frozenset()
    spans: tuple[tuple[int, int], ...] = ()  # (low, high), both included
    count: int = 0  # for a dimension that adds up over the whole process (instances created)


NOTHING = Seen()


def upto(peak: int, low: int = 1) -> Seen:
    """Every value from `low` to `peak`: what a count that changes by one at a time takes."""
    return Seen(spans=((low, peak),)) if peak >= low else NOTHING


def of(values: Iterable[Value]) -> Seen:
    return Seen(values=frozenset(values))


Measure = Callable[[Case], Seen]


@dataclass(frozen=True, slots=True)
class Dimension:
    """One input dimension of the API and the values the workloads must reach in it."""

    name: str
    what: str  # what is measured
    reached: str  # when a run reaches a value
    why: str  # the thresholds real engines and real code have in this dimension
    quick: tuple[Part, ...]  # targets every profile reaches
    default: tuple[Part, ...]  # targets default and thorough add (too slow for quick's 10 s)
    measure: Measure = field(compare=False, repr=False)
    thorough: tuple[Part, ...] = ()  # targets only thorough reaches (seconds of checking each)
    cumulative: bool = False  # the count adds up over every case of the profile (one process)

    def parts(self, profile: str = "default") -> tuple[Part, ...]:
        """The targets of `profile` (a profile reaches its base's targets too)."""
        return self.quick + (self.default if profile != "quick" else ()) + \
            (self.thorough if profile == "thorough" else ())

    def targets(self, profile: str = "default") -> tuple[Value, ...]:
        return tuple(dict.fromkeys(v for p in self.parts(profile) for v in p.values()))


# --- measures -------------------------------------------------------------------------------


def _single(case: Case) -> tuple[Workload, Trace] | None:
    """The workload of a case run alone, with the spec's trace of it (cached); None for a group."""
    return None if case.group else (case.workloads[0], expected_trace(case.workloads[0]))


def _on_trace(fn: Callable[[Workload, Trace], Seen]) -> Measure:
    def measure(case: Case) -> Seen:
        got = _single(case)
        return NOTHING if got is None else fn(*got)
    return measure


def in_flight(w: Workload, t: Trace) -> Seen:
    peak = now = 0
    for s in t.steps:
        now += len(s.added)
        peak = max(peak, now)
        now -= len(s.finished)
    return upto(peak)


def waiting_length(w: Workload, t: Trace) -> Seen:
    peak, before = 0, 0
    for s in t.steps:
        peak = max(peak, before + len(s.added), len(s.after_schedule.waiting))
        before = len(s.after_update.waiting)
    return upto(peak)


def running_length(w: Workload, t: Trace) -> Seen:
    return upto(max((len(s.after_schedule.running) for s in t.steps), default=0))


def finished_per_step(w: Workload, t: Trace) -> Seen:
    return of({len(s.finished) for s in t.steps} - {0})


def adds_after_finish(w: Workload, t: Trace) -> Seen:
    """The numbers of the add() calls made after some sequence finished: the n-th add() of the instance, for each."""
    added = finished = 0
    spans = []
    for s in t.steps:
        if finished and s.added:
            spans.append((added + 1, added + len(s.added)))
        added, finished = added + len(s.added), finished + len(s.finished)
    return Seen(spans=tuple(spans))


def max_num_seqs_binds(w: Workload, t: Trace) -> Seen:
    full = any(e.rule == "P2.full" for s in t.steps for e in s.events)
    return of((w.config.max_num_seqs,)) if full else NOTHING


def steps(w: Workload, t: Trace) -> Seen:
    return upto(len(t.steps))


PREEMPTING = ("P1.preempt", "P1.skip_self")


def preemptions_per_sequence(w: Workload, t: Trace) -> Seen:
    """Each preemption takes running[-1]: a step's victims are the tail of running as the step began."""
    counts: dict[str, int] = {}
    running: tuple[str, ...] = ()
    for s in t.steps:
        victims = sum(e.rule in PREEMPTING for e in s.events)
        for seq_id in running[len(running) - victims:]:
            counts[seq_id] = counts.get(seq_id, 0) + 1
        running = tuple(q.seq_id for q in s.after_update.running)
    return upto(max(counts.values(), default=0))


def head_blocked_steps(w: Workload, t: Trace) -> Seen:
    """The longest run of steps whose admission stopped at a head that does not fit (P2.stop) while a request
    behind it needs no more than the blocks left free."""
    longest = now = 0
    for s in t.steps:
        waiting = s.after_schedule.waiting
        free = w.config.num_blocks - s.after_schedule.blocks_used
        behind = any(-(-q.num_tokens // w.config.block_size) <= free for q in waiting[1:])
        now = now + 1 if behind and any(e.rule == "P2.stop" for e in s.events) else 0
        longest = max(longest, now)
    return upto(longest)


def preemptions_total(w: Workload, t: Trace) -> Seen:
    return upto(t.final.num_preemptions)


def tokens_per_sequence(w: Workload, t: Trace) -> Seen:
    return Seen(spans=tuple((q.prompt_len, q.num_tokens) for q in t.final.seqs()))


def block_size_binds(w: Workload, t: Trace) -> Seen:
    spans = any(q.num_blocks >= 2 for s in t.steps for q in s.after_schedule.running)
    return of((w.config.block_size,)) if spans else NOTHING


def num_blocks_binds(w: Workload, t: Trace) -> Seen:
    full = any(s.after_schedule.blocks_used == w.config.num_blocks for s in t.steps)
    return of((w.config.num_blocks,)) if full else NOTHING


def num_blocks_one_short(w: Workload, t: Trace) -> Seen:
    """num_blocks, when a running sequence needs a block while at most one is free and is preempted for it, or
    preempts another (P1.preempt, P1.skip_self): the fit tested at the cache's very edge."""
    used = 0  # blocks_used as the step began
    for s in t.steps:
        if used >= w.config.num_blocks - 1 and any(e.rule in PREEMPTING for e in s.events):
            return of((w.config.num_blocks,))
        used = s.after_update.blocks_used
    return NOTHING


def budget_binds(w: Workload, t: Trace) -> Seen:
    whole = any(sum(n for _, n in s.batch) == w.config.max_num_batched_tokens for s in t.steps)
    return of((w.config.max_num_batched_tokens,)) if whole else NOTHING


def tokens(w: Workload, t: Trace) -> Seen:
    return of(token for s in t.steps for _, token in s.sampled)


def eos_ends(w: Workload, t: Trace) -> Seen:
    ended = any(e.rule == "U.finish" and dict(e.data).get("reason") == "eos" for s in t.steps for e in s.events)
    return of((w.config.eos,)) if ended and w.config.eos is not None else NOTHING


def _ids(case: Case) -> list[str]:
    return [r.seq_id for r in case.workloads[0].requests] if not case.group else []


def id_lengths(case: Case) -> Seen:
    return of(len(i.encode()) for i in _ids(case))


def shared_prefixes(case: Case) -> Seen:
    """Common UTF-8 prefixes of two ids that both go on past it (neighbours in sorted order have the longest)."""
    ids = sorted(i.encode() for i in _ids(case))
    out = set()
    for a, b in zip(ids, ids[1:], strict=False):
        n = next((k for k, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
        if n < min(len(a), len(b)):
            out.add(n)
    return of(out)


def hash_collisions(case: Case) -> Seen:
    """`hash/k` when two ids added in the same step share exactly the low k bits of that hash."""
    out: set[Value] = set()
    if case.group:
        return NOTHING
    by_step: dict[int, list[str]] = {}
    for r in case.workloads[0].requests:
        by_step.setdefault(r.arrival, []).append(r.seq_id)
    for ids in by_step.values():
        for name, h in HASHES.items():
            hashed = [h(i) for i in ids]
            for k in COLLISION_BITS:
                buckets: dict[int, set[int]] = {}
                for x in hashed:
                    buckets.setdefault(x & ((1 << k) - 1), set()).add(x >> k & 1)
                if any(len(bits) == 2 for bits in buckets.values()):
                    out.add(f"{name}/{k}")
    return of(out)


def _pair(ids: list[str], key: Callable[[str], str]) -> bool:
    """Two different ids that `key` makes equal."""
    return len({key(i) for i in ids}) < len(set(ids))


CHARACTERS: dict[str, Callable[[list[str]], bool]] = {
    "ascii": lambda ids: any(i.isascii() for i in ids),
    "latin-1": lambda ids: any(127 < max(map(ord, i), default=0) < 256 for i in ids),
    "two-byte": lambda ids: any(255 < max(map(ord, i), default=0) < 65536 for i in ids),
    "astral": lambda ids: any(max(map(ord, i), default=0) >= 65536 for i in ids),
    "differ-outside-ascii": lambda ids: _pair(ids, lambda i: i.encode("ascii", "replace").decode()),
    "nfc-nfd-pair": lambda ids: _pair(ids, lambda i: unicodedata.normalize("NFC", i)),
    "case-pair": lambda ids: _pair(ids, str.casefold),
    "space-pair": lambda ids: _pair(ids, str.strip),
    "digits-only": lambda ids: any(i.isascii() and i.isdigit() for i in ids),
}


def characters(case: Case) -> Seen:
    ids = _ids(case)
    return of(name for name, holds in CHARACTERS.items() if ids and holds(ids))


SUFFIX = re.compile(r"^(.*?)(\d+)$")


def _numeric(ids: list[str]) -> list[str] | None:
    """The ids in numeric order (by prefix, then the number they end with), or None if one has no number."""
    parts = [SUFFIX.match(i) for i in ids]
    if any(p is None for p in parts):
        return None
    return [p.group(0) for p in sorted((p for p in parts if p is not None),
                                       key=lambda p: (p.group(1), int(p.group(2))))]


def orders(case: Case) -> Seen:
    if case.group:
        return NOTHING
    arrival = [r.seq_id for r in sorted(case.workloads[0].requests, key=lambda r: r.arrival)]
    lexicographic, numeric = sorted(arrival), _numeric(arrival)
    found = {"lexicographic-differs-from-arrival": lexicographic != arrival,
             "numeric-differs-from-arrival": numeric is not None and numeric != arrival,
             "lexicographic-differs-from-numeric": numeric is not None and numeric != lexicographic}
    return of(name for name, holds in found.items() if holds)


def identity(case: Case) -> Seen:
    """Equal ids held by schedulers alive at once, as distinct string objects."""
    seen: dict[str, str] = {}
    for w in case.workloads if case.group else ():
        for r in w.requests:
            if r.seq_id in seen and seen[r.seq_id] is not r.seq_id:
                return of(("equal-ids-distinct-objects",))
            seen.setdefault(r.seq_id, r.seq_id)
    return NOTHING


def alive_at_once(case: Case) -> Seen:
    """A group keeps all its schedulers alive; a generated workload also runs beside a second instance
    (conformance/checks/history.py ``instances``); a golden case or a corpus vector is counted alone."""
    if case.group:
        return upto(len(case.workloads))
    return upto(1 if case.name.startswith(("golden/", "corpus/")) else 2)


def made_mid_run(case: Case) -> Seen:
    """Schedulers of a group made after step 1 (conformance/beside.py created_at) while the first has requests
    that arrived before and one that arrives after: the k-th such scheduler for every k up to their count."""
    if not case.group:
        return NOTHING
    arrivals = [r.arrival for r in case.workloads[0].requests]
    made = [created_at(workload_to_json(w)) for w in case.workloads[1:]]
    return upto(sum(1 for s in made if min(arrivals) < s <= max(arrivals)))


def created(case: Case) -> Seen:
    """Instances this case makes in the submission's module: a workload's run and its run on an ample cache
    (equivalence); each lane of a group run alone (the lanes themselves run on a second copy of the module,
    conformance/checks/history.py ``apart``)."""
    return Seen(count=len(case.workloads) if case.group else 2 * len(case.workloads))


R = RECURSION_LIMIT
QUICK_NUMBERS = Around(1, QUICK_NUMBER_BITS)
DEFAULT_NUMBERS = Around(QUICK_NUMBER_BITS + 1, NUMBER_BITS)

DIMENSIONS: tuple[Dimension, ...] = (
    Dimension("requests-in-flight", "requests added and not yet finished, at once",
              "a count: every value up to the run's peak",
              "max_num_seqs 256/512/1024 of real engines: a crowd larger than the largest",
              (Around(1, QUICK_CROWD_BITS),), (Around(QUICK_CROWD_BITS + 1, 12),), _on_trace(in_flight)),
    Dimension("waiting-length", "len(waiting) after any call (one add() at a time)",
              "a count: every value up to the run's peak",
              "bounded request queues (a deque with maxlen, a ring of 2^k slots)",
              (Around(1, QUICK_CROWD_BITS),), (Around(QUICK_CROWD_BITS + 1, 12),), _on_trace(waiting_length)),
    Dimension("running-length", "len(running) after schedule()",
              "a count: every value up to the run's peak",
              "CUDA-graph batch sizes, fixed arrays of batch slots",
              (Around(1, QUICK_CROWD_BITS),), (Around(QUICK_CROWD_BITS + 1, DEFAULT_CROWD_BITS),),
              _on_trace(running_length)),
    Dimension("finished-per-step", "sequences one update() finishes", "when one update() finishes exactly that many",
              "running rebuilt another way (a set difference, a compaction) past a batch of 2^k finishing",
              (Around(1, QUICK_CROWD_BITS),), (Around(QUICK_CROWD_BITS + 1, TURNOVER_BITS),),
              _on_trace(finished_per_step)),
    Dimension("adds-after-a-finish", "the n-th add() of an instance, made after some sequence finished",
              "when that add() comes after a finish", "tables of 2^k slots that hand a finished sequence's slot "
              "to a newcomer once full", (Around(2, QUICK_CROWD_BITS),),
              (Around(QUICK_CROWD_BITS + 1, TURNOVER_BITS),), _on_trace(adds_after_finish)),
    Dimension("max-num-seqs", "the config's max_num_seqs", "when it binds: P2.full refuses an admission",
              "256, 512, 1024: the limits engines ship with, and the caps a submission may add",
              (Listed((1,)), Around(1, QUICK_CROWD_BITS)), (Around(QUICK_CROWD_BITS + 1, DEFAULT_CROWD_BITS),),
              _on_trace(max_num_seqs_binds)),
    Dimension("steps-per-run", "schedule()/update() pairs on one instance", "a count: every value up to the run's "
              "length", "recursion once per step dies at the recursion limit; step counters of fixed width; runs "
              "of 10^4 steps", (Around(1, 11), Named("2 x recursion limit + 1", 2 * R + 1)), (), _on_trace(steps),
              thorough=(Around(12, 13), Named("10^4", LONG_RUN_STEPS))),
    Dimension("preemptions-per-sequence", "times one sequence is preempted (P1.preempt or P1.skip_self)",
              "a count: every value up to its peak", "per-sequence counters in a byte or a short; admission "
              "counters that wrap at 2^10; event logs bounded to a thousand entries",
              (Around(1, PREEMPTION_BITS),), (Around(PREEMPTION_BITS + 1, MOST_PREEMPTION_BITS),),
              _on_trace(preemptions_per_sequence)),
    Dimension("preemptions-total", "num_preemptions", "a count: every value up to its peak",
              "counters in a byte or a short; a count kept in a bounded log", (Around(1, PREEMPTION_BITS),),
              (Around(PREEMPTION_BITS + 1, MOST_PREEMPTION_BITS),), _on_trace(preemptions_total)),
    Dimension("head-blocked-steps", "steps in a row in which the waiting head does not fit (P2.stop) while a "
              "request behind it would", "a count: every value up to the longest such run",
              "anti-starvation patience: after so many blocked steps a later request is let by",
              (Around(1, 10),), (Around(11, 11),), _on_trace(head_blocked_steps)),
    Dimension("tokens-per-sequence", "num_tokens of one sequence (prompt_len + len(output))",
              "a count: every value from prompt_len to its last num_tokens",
              "context lengths of 2^12..2^20; int32, float (2^53) and int64 arithmetic on token counts",
              (QUICK_NUMBERS,), (DEFAULT_NUMBERS,), _on_trace(tokens_per_sequence)),
    Dimension("block-size", "the config's block_size", "when it binds: a sequence holds two blocks or more",
              "block sizes 16..256; uint16 and int32 fields; float division",
              (Listed((1,)), QUICK_NUMBERS), (DEFAULT_NUMBERS,), _on_trace(block_size_binds)),
    Dimension("num-blocks", "the config's num_blocks", "when it binds: blocks_used reaches it",
              "block tables past 2^16 blocks (uint16 block ids), int32 and int64 counters",
              (QUICK_NUMBERS,), (DEFAULT_NUMBERS,), _on_trace(num_blocks_binds)),
    Dimension("num-blocks-one-short", "the config's num_blocks, with at most one block free",
              "when a running sequence then needs a block more than is free (P1.preempt or P1.skip_self)",
              "a fit asked in floating point ((used + need) / total <= 1.0 passes one block past 2^53); int32 and "
              "int64 counters of free blocks", (Listed((2,)), Around(2, QUICK_NUMBER_BITS)), (DEFAULT_NUMBERS,),
              _on_trace(num_blocks_one_short)),
    Dimension("max-num-batched-tokens", "the config's token budget", "when it binds: a batch uses all of it",
              "step budgets of 8192..65536 tokens; int32 clamps; float budgets",
              (QUICK_NUMBERS,), (DEFAULT_NUMBERS,), _on_trace(budget_binds)),
    Dimension("token-values", "tokens sample_fn returns", "when it is sampled",
              "token arrays of int8..int64 and uint; -1 and 0 as markers; the small-int cache (-5..256)",
              (Listed((0, 1, -1)), Around(1, QUICK_NUMBER_BITS, signed=True)),
              (Around(QUICK_NUMBER_BITS + 1, NUMBER_BITS, signed=True),), _on_trace(tokens)),
    Dimension("eos-values", "the config's eos", "when a sequence samples it and ends there",
              "eos stored in a narrower type, or compared with `is`",
              (Listed((0, 1, -1)), Around(1, QUICK_NUMBER_BITS, signed=True)),
              (Around(QUICK_NUMBER_BITS + 1, NUMBER_BITS, signed=True),), _on_trace(eos_ends)),
    Dimension("id-length", "length of a seq_id in UTF-8 bytes", "when an id of that length is added",
              "fixed char[2^k] buffers, uint8/uint16 length prefixes",
              (Around(1, 10),), (Around(11, 16),), id_lengths),
    Dimension("id-shared-prefix", "UTF-8 prefix two ids share before they differ", "when two such ids are added",
              "ids truncated to a fixed width (request ids are long and share prefixes: chatcmpl-...)",
              (Around(1, 10),), (Around(11, 16),), shared_prefixes),
    Dimension("id-hash-collision", "two ids added together whose hash shares exactly the low k bits",
              "when two such ids are in one workload's step",
              "tables of 2^k slots indexed by crc32, FNV-1a or Python's hash() (PYTHONHASHSEED=0) of the id",
              (PerKey(tuple(HASHES), COLLISION_BITS[0], COLLISION_BITS[-1]),), (), hash_collisions),
    Dimension("id-characters", "what a workload's ids are made of", "when its ids have the shape",
              "ids encoded to ASCII, case-folded, stripped or normalized into keys; one, two and four bytes "
              "per character", (Listed(tuple(CHARACTERS)),), (), characters),
    Dimension("id-order", "arrival order against the ids' sorted orders", "when a workload's orders differ",
              "queues or batches sorted by id, lexicographically (r10 before r9) or by the number in it",
              (Listed(("lexicographic-differs-from-arrival", "numeric-differs-from-arrival",
                       "lexicographic-differs-from-numeric")),), (), orders),
    Dimension("id-identity", "equal ids that are distinct str objects, in schedulers alive at once",
              "in a group of instances", "ids compared with `is`, interned, or keyed by id()",
              (Listed(("equal-ids-distinct-objects",)),), (), identity),
    Dimension("instances-alive-at-once", "Scheduler instances alive and stepped call by call",
              "a count: every value up to the group's size",
              "class attributes and module globals, fixed registries of 2^k instances",
              (Around(1, 8),), (Around(9, 10),),
              alive_at_once),
    Dimension("instances-made-mid-run", "schedulers of a group made while the first runs, between its requests",
              "a count: the k-th such scheduler, every k up to the group's",
              "state an __init__ resets or takes from shared state (a module's arrival clock, a class's table)",
              (Around(1, 4),), (), made_mid_run),
    Dimension("instances-created", "Scheduler instances made in one process", "a count over the whole profile "
              "(at least two per workload: its run and its run on an ample cache)",
              "registries keyed by id(self) (addresses are reused), instance counters of fixed width",
              (Around(1, 11),), (), created, cumulative=True),
)
BY_NAME = {d.name: d for d in DIMENSIONS}


# --- measuring a profile --------------------------------------------------------------------


@dataclass
class Tally:
    """What the cases so far reached, per dimension."""

    values: dict[str, set[Value]] = field(default_factory=dict)
    spans: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)

    def add(self, case: Case) -> None:
        for d in DIMENSIONS:
            seen = d.measure(case)
            self.values.setdefault(d.name, set()).update(seen.values)
            self.spans.setdefault(d.name, []).extend(seen.spans)
            self.counts[d.name] = self.counts.get(d.name, 0) + seen.count

    def reaches(self, d: Dimension, v: Value) -> bool:
        if v in self.values.get(d.name, ()):
            return True
        if not isinstance(v, int):
            return False
        spans = self.spans.get(d.name, []) + ([(1, self.counts[d.name])] if d.cumulative else [])
        return any(lo <= v <= hi for lo, hi in spans)


def missing(cases: Iterable[Case], profile: str = "default") -> dict[str, tuple[Value, ...]]:
    """Per dimension, the targets of `profile` that no case reaches (empty dict: all reached)."""
    tally = Tally()
    for case in cases:
        tally.add(case)
    out = {}
    for d in DIMENSIONS:
        left = tuple(v for v in d.targets(profile) if not tally.reaches(d, v))
        if left:
            out[d.name] = left
    return out


def profile_cases(name: str) -> Iterator[Case]:
    """Every workload the profile runs, in run order, as cases (deterministic): golden cases, the whole
    corpus, each stage's workloads (the edge-biased and scale examples drawn exactly as the run draws
    them), the reach stage's groups, the token values. The lockstep machine's runs are not workloads
    (they stay within its 20..50 rules of a few tiny requests) and are left out."""
    for c in golden_under(DEFAULT_POLICY, []):
        yield Case(f"golden/{c.name}", (c.workload,))
    for v in load_corpus()[0]:
        yield Case(f"corpus/{v.vector_id}", (v.workload,))
    for stage in PROFILES[name].stages():
        yield from stage_cases(stage)
    for w in sentinel_workloads():
        yield Case(f"token-values/{w.name}", (w,))


# --- the table in docs/conformance.md -------------------------------------------------------


def render() -> str:
    """The dimension table of docs/conformance.md, as markdown (a test keeps the copy there equal)."""
    rows = ["| dimension | what is measured | a run reaches a value | targets, every profile | default and "
            "thorough add | thorough adds | thresholds it stands for |",
            "|---|---|---|---|---|---|---|"]
    for d in DIMENSIONS:
        quick, default, thorough = ("; ".join(p.text() for p in parts) or "-"
                                    for parts in (d.quick, d.default, d.thorough))
        rows.append(f"| {d.name} | {d.what} | {d.reached} | {quick} | {default} | {thorough} | {d.why} |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    """Print the table for docs/conformance.md, or (--missing PROFILE) the values that profile does not reach."""
    import argparse
    parser = argparse.ArgumentParser(prog="python -m conformance.workloads.dimensions", description=main.__doc__)
    parser.add_argument("--missing", metavar="PROFILE", choices=sorted(PROFILES),
                        help="measure the profile's workloads and list the targets none of them reaches")
    args = parser.parse_args(argv)
    if args.missing is None:
        print(render())
        return 0
    left = missing(profile_cases(args.missing), args.missing)
    for name, values in left.items():
        print(f"{name}: {', '.join(_show(v) for v in values)}")
    print(f"{args.missing}: every listed value is reached" if not left else
          f"{args.missing}: {sum(map(len, left.values()))} values of {len(left)} dimensions not reached")
    return 1 if left else 0


if __name__ == "__main__":
    raise SystemExit(main())
