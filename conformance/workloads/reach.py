"""Workloads built to reach the values of the dimension table (conformance/workloads/dimensions.py).

The small scopes prove the rules on a few tiny requests and the scale families wander far
from them, but neither is aimed: a scheduler that caps max_num_seqs at 256, indexes a table by
crc32(seq_id) % 1024 or recurses once per step passes every workload that stays below the
threshold it breaks at. Here each threshold a real engine has (widths of integer types, batch
limits, table sizes, the recursion limit) is reached on purpose, on both sides, by the cheapest
workload that does it:

- numbers: for each v in 2**k - 1, 2**k, 2**k + 1, a workload whose block size and token budget
  are v and bind (a chunk of exactly v tokens, a sequence across a block boundary), one whose
  cache of v blocks fills, one with one block short, and one where a sequence grows to v tokens by
  preempting another; their tokens run through v - 1, v, v + 1 and their negatives, and their
  eos is v or -v and is sampled. One or two requests, a few steps each.
- crowds: max_num_seqs = M and M + 1 requests of one prompt token and two output tokens (running
  reaches M for two steps, so a batch of M is made twice; P2.full refuses the last one); the
  largest puts 2**12 + 1 requests in flight (past a waiting queue bounded to 2**12: a deque's maxlen
  drops its head silently). The spec's trace of a crowd costs a few steps, whatever its size. Beside them,
  turnover: v sequences finishing in one step while eight go on, and the (v + 1)-th add() after v finished
  (to 2**8 + 1 in quick, 2**12 + 1 in default).
- preemptions: one sequence decoding for the whole run inside a single block while another,
  admitted with a chunk of one block, cannot grow and preempts itself every step, and so is
  readmitted every step: one preemption per step, with the outputs of one sequence only (every
  call copies them). A queue whose ids sort differently from their arrival waits behind them.
- long runs: requests far apart, so most steps are idle calls; and a head that does not fit for 2**10 + 1
  (quick) and 2**11 + 1 (default) steps in a row, with a request behind it that would.
- ids: pairs whose CRC-32, FNV-1a and CPython string hashes share exactly the low k bits
  (k = 4..16), long ids sharing long prefixes, non-ASCII ids (two that differ only outside
  ASCII, an NFC/NFD pair, astral characters), ids that differ only in case, ids whose
  lexicographic, numeric and arrival orders differ, digits-only ids.
- instances: groups of schedulers alive at once with different configs, run call by call
  (conformance/checks/history.py ``interleave``); the lanes' equal ids are distinct objects. And
  2**4 + 1 schedulers made one per step (quick) while the first one's queue grows, so what a new one
  resets in shared state meets requests that came before it and after.

A profile's stage names a tier. ``quick`` holds numbers to 2**32 + 1 (exact in a JavaScript
program over the wire, too), crowds and groups of schedulers to 2**8 + 1, 2**8 + 1 preemptions
of one sequence and a run past twice the recursion limit; ``default`` adds numbers to
2**64 + 1, crowds to 2**12 + 1, 2**10 + 1 schedulers at once and 2**11 + 1 preemptions of one
sequence (about a second: its other sequence's output grows every step and is read after every
call); ``thorough`` adds the run of 10**4 steps, which costs seconds, because white-box checking
reads every sequence after every call, about 0.4 ms a step. Every workload
is feasible and deterministic; ``cases(tier)`` lists a tier's cases, cheapest kind first and
each kind in ascending size, so the first failure of a check is the smallest of its kind.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from conformance.workloads.hashes import COLLISION_BITS, HASHES, colliding_pair
from spec.feasible import ample_num_blocks, tightest_num_blocks
from spec.model import Config, Policy
from spec.trace import Request, Workload, make_workload, with_policy

TIERS = ("quick", "default", "thorough")
TAG = "reach"
QUICK_NUMBER_BITS = 32  # quick's numbers: to 2**32 + 1, the widths of int32 and uint32 (exact in JavaScript too)
QUICK_CROWD_BITS = 8  # quick's crowds: max_num_seqs up to 2**8 + 1
DEFAULT_CROWD_BITS = 10  # default's: up to 2**10 + 1, with 2**12 + 1 requests in flight
TURNOVER_BITS = 12  # default's: up to 2**12 + 1 sequences finishing in one step, and adds after as many finished
NUMBER_BITS = 64  # numbers up to 2**64 + 1
LONG_RUN_STEPS = 10**4  # the longest run (thorough): idle steps between far-apart requests
PREEMPTION_BITS = 8  # quick: one sequence preempted 2**8 + 1 times (a per-sequence counter in a byte wraps)
MOST_PREEMPTION_BITS = 11  # thorough: 2**11 + 1 times
QUICK_GROUP = 2**8 + 1  # schedulers alive at once: quick (tiny lanes: about 0.1 s)
DEFAULT_GROUP = 2**10 + 1  # ... default
JOINING = 2**4 + 1  # schedulers made one per step while the first runs (quick; the count is not what matters)


@dataclass(frozen=True, slots=True)
class Case:
    """What one run exercises: one workload alone, or several schedulers alive at once (a group)."""

    name: str
    workloads: tuple[Workload, ...]  # one: run alone; several: created together and stepped call by call

    @property
    def group(self) -> bool:
        return len(self.workloads) > 1


def around(k: int) -> tuple[int, int, int]:
    """Both sides of the threshold 2**k."""
    return 2**k - 1, 2**k, 2**k + 1


def thresholds(low: int, high: int) -> tuple[int, ...]:
    """Both sides of every power-of-two threshold 2**low .. 2**high, ascending, without repeats."""
    return tuple(sorted({v for k in range(low, high + 1) for v in around(k)}))


def _workload(config: Config, requests: Iterable[Request], name: str, base: dict[str, int] | None = None,
              eos_at: dict[str, set[int]] | None = None) -> Workload:
    return make_workload(config, list(requests), base=base, eos_at=eos_at, name=name, tags=(TAG,))


# --- numbers --------------------------------------------------------------------------------


def budget_and_block(v: int) -> Workload:
    """block_size = budget = v, both binding: a prompt of v + 1 tokens takes a chunk of exactly v, then
    crosses into its second block. Its tokens are v - 1, v, v + 1; the second request samples -(v + 1),
    then the eos -v."""
    a, b = Request("n1", v + 1, 3), Request("n2", 1, 3)
    config = Config(tightest_num_blocks(v, [a, b]) + 1, v, 2, v, eos=-v)
    return _workload(config, (a, b), f"budget-and-block-size-{v}", {"n1": v - 1, "n2": -v - 1}, {"n2": {1}})


def full_cache(v: int) -> Workload:
    """num_blocks = v (v >= 2), filled by the first step: a prompt of v - 1 tokens in blocks of one that
    finishes there, and a second request in the last block. Tokens -(v + 1), v - 1 and (a third request,
    later) -v, and the second request's eos v.

    No request needs the whole cache alone: a submission that needs one block more than a request's peak
    (one token too many) still fits, so it fails the differential check here instead of running to the
    step cap of a workload whose liveness bound (about v) no run can reach.
    """
    reqs = (Request("n1", v - 1, 1), Request("n2", 1, 2), Request("n3", 1, 1, 2))
    config = Config(v, 1, 2, v, eos=v)
    return _workload(config, reqs, f"num-blocks-{v}", {"n1": -v - 1, "n2": v - 1, "n3": -v}, {"n2": {1}})


def one_block_over(v: int) -> Workload:
    """num_blocks = v (v >= 2), all but one block filled by the first step (both, for v = 2); in the second each
    of the two sequences needs one block more, one more than is free, so the second gives its own up
    (P1.skip_self; for v = 2 the first preempts it) and runs after the first finishes. A submission that asks
    "does it fit?" in floating point ((used + need) / total <= 1.0) grants it from 2**53 blocks on, where the
    quotient of v + 1 and v rounds to 1.0. Tokens -(v + 1) and v - 1 on."""
    first = Request("n1", v - 2 if v > 2 else 1, 2)
    return _workload(Config(v, 1, 2, v), (first, Request("n2", 1, 2)), f"num-blocks-{v}-one-over",
                     {"n1": -v - 1, "n2": v - 1})


def grow_by_preemption(v: int) -> Workload:
    """num_blocks = v (v >= 2) in blocks of one, every block filled by the first step (a prompt of v - 1 tokens and
    one of 1); in the second the first grows to v tokens and preempts the second for the block (P1.preempt). A
    submission that counts blocks in floating point only where a sequence grows by preempting (math.ceil(tokens /
    block_size)) needs none from 2**53 + 1 tokens on, or two at 2**k - 1: the other kinds grow into free blocks,
    or admit, and never meet it (from outside). Tokens -(v + 1) and v - 1 on."""
    a, b = Request("n1", v - 1, 2), Request("n2", 1, 2)
    return _workload(Config(v, 1, 2, v), (a, b), f"grow-to-{v}-by-preemption", {"n1": -v - 1, "n2": v - 1})


def number_workloads(low: int, high: int) -> tuple[Workload, ...]:
    """The four kinds for every v around 2**low .. 2**high, ascending."""
    out = []
    for v in thresholds(low, high):
        out.append(budget_and_block(v))
        if v >= 2:
            out += [full_cache(v), one_block_over(v), grow_by_preemption(v)]
    return tuple(out)


# --- crowds ---------------------------------------------------------------------------------


def crowd(max_num_seqs: int, requests: int, max_tokens: int = 2) -> Workload:
    """`requests` requests of one prompt token at once under `max_num_seqs`, each finishing after `max_tokens`
    steps: with two, the first max_num_seqs run two steps together, so a batch of that size (and the dict
    or list that carries it) is made twice. The spec's trace has a few steps whatever the size."""
    reqs = [Request(f"c{i}", 1, max_tokens) for i in range(requests)]
    config = Config(requests * max_tokens, 1, max_num_seqs, requests)
    return _workload(config, reqs, f"crowd-{requests}-max-num-seqs-{max_num_seqs}")


def crowd_workloads(low: int, high: int, largest: int | None = None) -> tuple[Workload, ...]:
    """A crowd of M + 1 under max_num_seqs = M for every M around 2**low .. 2**high; the last one with
    `largest` requests instead, of one step each (its two admissions already make two big batches)."""
    sizes = thresholds(low, high)
    return tuple(crowd(m, largest, 1) if largest is not None and m == sizes[-1] else crowd(m, m + 1)
                 for m in sizes)


STAYING = ("s9", "s10", "s8", "s100", "s1", "s11", "s0", "s2")  # ids out of their sorted orders


def finishing_together(v: int) -> Workload:
    """v sequences that finish in one update() (one prompt token, one output token each) while eight admitted
    before them go on, in an order their ids do not sort in: a scheduler that rebuilds running by a set
    difference, or another path, once that many finish at once loses the survivors' order. Three steps."""
    reqs = [Request(i, 1, 3) for i in STAYING] + [Request(f"f{i}", 1, 1) for i in range(v)]
    config = Config(ample_num_blocks(1, reqs), 1, len(reqs), len(reqs))
    return _workload(config, reqs, f"finish-{v}-at-once")


def add_after_finished(n: int) -> Workload:
    """The n-th add() of an instance made after the n - 1 before it all finished (n >= 2): a table of 2**k slots that
    hands a finished sequence's slot to a newcomer once it is full drops that sequence from finished. Two steps."""
    reqs = [Request(f"r{i}", 1, 1) for i in range(n - 1)] + [Request(f"r{n - 1}", 1, 1, 2)]
    config = Config(ample_num_blocks(1, reqs), 1, n - 1, n - 1)
    return _workload(config, reqs, f"add-{n}-after-{n - 1}-finished")


def turnover_workloads(low: int, high: int) -> tuple[Workload, ...]:
    """finishing_together(v) and add_after_finished(v) for every v around 2**low .. 2**high, ascending."""
    return tuple(w for v in thresholds(low, high) for w in (finishing_together(v), *(
        (add_after_finished(v),) if v >= 2 else ())))


# --- long runs ------------------------------------------------------------------------------


def past_recursion(recursion_limit: int) -> int:
    """Steps past twice the recursion limit: a submission recursing once per step (or every other) dies."""
    return 2 * recursion_limit + 1


def self_preemption_run(preemptions: int) -> Workload:
    """A run with one preemption in each of about `preemptions` steps, all of one sequence.

    l1 decodes for the whole run in one block of `preemptions` + 8 tokens; l2 (two blocks of prompt) is
    admitted with a chunk of one block, cannot get its second block next step (the cache has two) and
    preempts itself, then is admitted again with one block in the same step. The requests behind it
    wait the whole run: their arrival order differs from their ids' lexicographic and numeric orders.
    Only l1's output grows (every call copies it), so the run stays cheap for its length.
    """
    block = preemptions + 8
    waiting = [Request(i, 1, 2) for i in ("r9", "r10", "r8", "r100")]
    reqs = [Request("l1", 1, block), Request("l2", 2 * block, 1), *waiting]
    config = Config(2, block, 2, block + 1)
    return _workload(config, reqs, f"self-preemption-{preemptions}")


def blocked_head(steps: int) -> Workload:
    """A waiting head that does not fit for `steps` steps in a row, with a request behind it that would (P2.stop
    holds it back every one of them: a scheduler that lets it by after a patience of so many steps, to keep the
    queue moving, breaks FCFS once the head has waited that long).

    h1 decodes for the whole run, one block more each step, in a cache that always keeps one block free; h2 (the
    head) asks for one block more than the free ones from step 2 on, and gets them only when h1 finishes; h3
    needs the one free block. The budget takes h2's prompt whole, so it is never admitted with a smaller chunk.
    """
    reqs = [Request("h1", 1, steps + 2), Request("h2", steps + 2, 1, 2), Request("h3", 1, 1, 2)]
    return _workload(Config(steps + 3, 1, 3, steps + 3), reqs, f"blocked-head-{steps}")


def idle_run(steps: int) -> Workload:
    """A run of at least `steps` steps that is mostly idle calls (white-box checking reads every sequence
    after every call, so few sequences keep it cheap): three requests queue behind max_num_seqs = 1 just
    before step 2**k for k = 10.. and before the last step, with ids out of lexicographic and numeric
    order; one arrives first, to start the run."""
    points = sorted({2**k - 2 for k in range(10, steps.bit_length()) if 2**k < steps} | {steps - 2})
    reqs = [Request("t1", 1, 2, 1)] + [Request(f"t{at}-{i}", 1, 2, at) for at in points for i in (9, 10, 8)]
    return _workload(Config(2, 1, 1, 4), reqs, f"idle-run-{steps}")


# --- ids ------------------------------------------------------------------------------------


def collision_workload(hash_name: str) -> Workload:
    """For every k in 4..16, two ids whose `hash_name` shares exactly the low k bits, all running at once."""
    ids = [i for k in COLLISION_BITS for i in colliding_pair(hash_name, k, f"req-{k}-")]  # a prefix per k: no repeats
    reqs = [Request(i, 1, 2) for i in ids]
    config = Config(ample_num_blocks(1, reqs), 1, len(reqs), 2 * len(reqs))
    return _workload(config, reqs, f"ids-colliding-under-{hash_name}")


PREFIX_PATTERN = "chatcmpl-0123456789abcdef-"


def long_ids(k: int) -> Workload:
    """Ids that share a prefix of exactly 2**k - 1, 2**k and 2**k + 1 characters, and those prefixes alone
    (an id that is a prefix of another). A table keyed by a truncated id holds two of them in one slot."""
    ids = []
    for length in around(k):
        prefix = (PREFIX_PATTERN * (length // len(PREFIX_PATTERN) + 1))[:length]
        ids += [prefix + "+", prefix + "=", prefix]
    reqs = [Request(i, 1, 2) for i in ids]
    config = Config(ample_num_blocks(1, reqs), 1, 3, 8)
    return _workload(config, reqs, f"ids-sharing-prefix-2^{k}")


NON_ASCII = ("é1", "è1", "序列-1", "序列-2", "😀-1", "🙂-1", "café", "cafe\u0301", "R1", "r1", "s1", "s1 ")


def character_workloads() -> tuple[Workload, ...]:
    """Ids that differ only outside ASCII, only in case, only in trailing space, or only in Unicode
    normalization (NFC and NFD), with characters from one, two and four bytes wide: all running at once,
    then queued behind max_num_seqs = 2."""
    reqs = [Request(i, 1, 2) for i in NON_ASCII]
    return tuple(_workload(Config(ample_num_blocks(1, reqs), 1, seqs, 2 * len(reqs)), reqs,
                           f"ids-characters-max-num-seqs-{seqs}") for seqs in (len(reqs), 2))


ORDERS = (("r9", "r10", "r8", "r100", "r11"), ("10", "9", "100", "8", "11"), ("a10", "b9", "a9", "b10"))


def order_workloads() -> tuple[Workload, ...]:
    """Ids whose arrival, lexicographic and numeric orders all differ, queued behind max_num_seqs = 2
    (FCFS must follow arrival), some arriving in the same step and some later."""
    out = []
    for ids in ORDERS:
        reqs = [Request(i, 1, 2, 1 if n < 3 else 2) for n, i in enumerate(ids)]
        out.append(_workload(Config(ample_num_blocks(1, reqs), 1, 2, 3), reqs, "ids-ordered-" + "-".join(ids)))
    return tuple(out)


def id_workloads(long_low: int, long_high: int, rest: bool) -> tuple[Workload, ...]:
    """Collisions, characters and orders (when `rest`) and long ids for 2**long_low .. 2**long_high."""
    head = tuple(collision_workload(h) for h in HASHES) + character_workloads() + order_workloads() if rest else ()
    return head + tuple(long_ids(k) for k in range(long_low, long_high + 1))


# --- instances ------------------------------------------------------------------------------


def lane(i: int) -> Workload:
    """The i-th scheduler of a group: its own config (every field varies with i) and tokens; the same ids
    as every other lane, as new string objects."""
    reqs = [Request(f"a{j}", 2 + (i + j) % 3, 2, 1 + j // 2) for j in range(1, 4)]
    block_size = 1 + i % 4
    config = Config(tightest_num_blocks(block_size, reqs) + i % 2, block_size, 1 + i % 3, 2 + i % 5)
    return _workload(config, reqs, f"lane-{i}", {r.seq_id: 1000 * (i + 1) + 10 * n for n, r in enumerate(reqs)})


def group(size: int) -> Case:
    """`size` schedulers created one after another and alive at once, each with its own config."""
    return Case(f"instances-{size}-alive", tuple(lane(i) for i in range(size)))


def joining(size: int) -> Case:
    """The first scheduler and `size` more, one made at each step while the first's waiting queue grows: the first
    admits one sequence at a time and gets one to three requests every step; scheduler i is created before step
    i + 1, that of its one request (conformance/beside.py created_at). What a new scheduler's __init__ resets in
    shared state (a module's arrival clock, a class's table) meets the first's queue: requests keyed before the
    reset, and requests after it that a reset clock keys alike or lower."""
    reqs = [Request(f"q{j}-{k}", 2, 2, j) for j in range(1, size + 2) for k in range(1 + j % 3)]
    first = _workload(Config(tightest_num_blocks(2, reqs), 2, 1, 4), reqs, "joined-0")
    return Case(f"instances-{size}-joining", (first, *(late_lane(i) for i in range(1, size + 1))))


def late_lane(i: int) -> Workload:
    """The i-th scheduler to join (joining): one request, at step i + 1, under its own config."""
    req = Request("a1", 2 + i % 3, 2, i + 1)
    block_size = 1 + i % 4
    config = Config(tightest_num_blocks(block_size, [req]) + i % 2, block_size, 1 + i % 3, 2 + i % 5)
    return _workload(config, [req], f"joined-{i}", {"a1": 1000 * (i + 1)})


def group_lanes(source: str, policy: Policy) -> tuple[Workload, ...]:
    """The lanes of the group a finding's source names (``reach/instances-N-alive``, ``reach/instances-N-joining``)
    under `policy`, or () when the source is no group: a finding of a group needs the whole group to show again."""
    for case in (group(QUICK_GROUP), group(DEFAULT_GROUP), joining(JOINING)):
        if source == f"{TAG}/{case.name}":
            return tuple(with_policy(w, policy) for w in case.workloads)
    return ()


# --- tiers ----------------------------------------------------------------------------------


def cases(tier: str, recursion_limit: int | None = None) -> tuple[Case, ...]:
    """The cases a tier adds, in run order; the long run's length follows the recursion limit in force
    (this process's, where the submission runs, unless given)."""
    if tier not in TIERS:
        raise ValueError(f"reach tier {tier!r} is unknown; choose one of {', '.join(TIERS)}")
    return tier_cases(tier, sys.getrecursionlimit() if recursion_limit is None else recursion_limit)


@lru_cache(maxsize=8)
def tier_cases(tier: str, limit: int) -> tuple[Case, ...]:
    """The cases of `tier` under recursion limit `limit` (built once: a tier's workloads are values)."""
    if tier == "quick":
        singles = (id_workloads(1, 10, rest=True) + number_workloads(1, QUICK_NUMBER_BITS)
                   + crowd_workloads(1, QUICK_CROWD_BITS) + turnover_workloads(1, QUICK_CROWD_BITS)
                   + (self_preemption_run(2**PREEMPTION_BITS + 1),
                                                             blocked_head(2**10 + 1),
                                                             idle_run(max(past_recursion(limit), 2**11 + 1))))
        groups: tuple[Case, ...] = (group(QUICK_GROUP), joining(JOINING))
    elif tier == "default":
        singles = (id_workloads(11, 16, rest=False) + number_workloads(QUICK_NUMBER_BITS + 1, NUMBER_BITS)
                   + crowd_workloads(QUICK_CROWD_BITS + 1, DEFAULT_CROWD_BITS, largest=2**12 + 1)
                   + turnover_workloads(QUICK_CROWD_BITS + 1, TURNOVER_BITS)
                   + (blocked_head(2**11 + 1), self_preemption_run(2**MOST_PREEMPTION_BITS + 1)))
        groups = (group(DEFAULT_GROUP),)
    else:
        singles = (idle_run(max(LONG_RUN_STEPS, past_recursion(limit))),)
        groups = ()
    return tuple(Case(w.name, (w,)) for w in singles) + groups
