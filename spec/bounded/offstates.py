"""One step from drawn states off the reachable set: the encoding against spec.rules, claim flags included.

FA and FD read flags of the encoding (``budget_out``, ``multi_victim``) that no correct run raises: on
the stream both sides say false at every step, so a flag computed wrong (its attempt index shifted, say)
agrees there and its claim is "proved" about nothing. Here both sides take one step from the same drawn
state, where the invariants need not hold (a sequence other than running[-1] may be in the middle of its
prefill, running may outnumber the budget), so the spec's own decisions do raise each flag; every field
and every flag must agree. The induction reasons about such free states too. Each flag must be raised
``quotas.QUOTA`` times at each block size (``FlagCounts``), or the validation fails.
"""

from __future__ import annotations

import random
import types
from dataclasses import dataclass, field, replace

import z3

import spec.rules
from spec.bounded import quotas
from spec.bounded.encode import Bounds, Snap
from spec.bounded.execute import EOS, Draws, Recording, Step
from spec.bounded.induction import free_state
from spec.bounded.validate import FLAGS, STREAM, Mismatch, Validator, expected, first_difference, spec_flags
from spec.bounded.witness import Slots, concrete, snap_pairs
from spec.model import Config, Policy, Seq, State, Status
from spec.trace import Request, Workload, make_workload

START = 2  # the step taken from a drawn state: present requests arrived at step 1, arriving ones come now
MIN_STATES = 40  # states per block size, however soon the flags fill their quotas
ATTEMPTS = 2_000  # states per block size at most


@dataclass(frozen=True, slots=True)
class Drawn:
    """A state between steps, and the requests arriving before the next step (the workload's arrival-2 ones)."""

    state: State  # without the arriving requests
    workload: Workload  # every slot's request in slot order; arrival 1: in `state`, START: arrives now
    slot: dict[str, str]  # seq_id -> r0, r1, ...


def _seq(rng: random.Random, seq_id: str, shape: tuple[int, int], role: str, bs: int, base: int) -> Seq:
    """A sequence of the drawn state (its output the draws base, base + 1, ...): running ones anywhere in their
    prefill or decode, waiting ones with the output they kept, arriving ones new."""
    p, m = shape
    o = rng.randint(1, m) if role == "finished" else rng.randint(0, m - 1)
    output = tuple(base + d for d in range(o))
    if role == "finished":
        return Seq(seq_id, p, m, output, p + o - 1, 0, Status.FINISHED)
    if role == "running":
        nc = rng.randint(0, p + o - 1)
        return Seq(seq_id, p, m, output, nc, spec.rules.blocks_for(bs, nc), Status.RUNNING)
    return Seq(seq_id, p, m, output if role == "waiting" else ())


def draw(rng: random.Random, b: Bounds, bs: int) -> Drawn:
    """A state within `b` at block size `bs`: each slot running (most), waiting, finished or arriving now
    (arriving ones last), queues in a drawn order, blocks exact for what each running sequence computed, and
    half the time a cache with no block to spare (so growing preempts, often more than one victim)."""
    n = b.slots
    while True:
        roles = sorted((rng.choice(("running",) * 4 + ("waiting", "finished", "arriving")) for _ in range(n)),
                       key=lambda r: r == "arriving")
        shapes = [(rng.randint(1, b.prompt_len), rng.randint(1, b.max_tokens)) for _ in range(n)]
        names = [f"s{k}" for k in rng.sample(range(10), n)]  # ids that do not sort in slot order
        peak = max(spec.rules.peak_blocks(bs, p, m) for p, m in shapes)
        seqs = [_seq(rng, names[j], shape, role, bs, 100 * (j + 1))
                for j, (shape, role) in enumerate(zip(shapes, roles, strict=True))]
        used = sum(q.num_blocks for q in seqs if q.status is Status.RUNNING)
        if max(peak, used) > b.num_blocks:
            continue
        tight = max(peak, used)  # half the states have no block free beyond what they must
        config = Config(tight if rng.random() < 0.5 else rng.randint(tight, b.num_blocks), bs,
                        rng.randint(1, b.max_num_seqs),
                        rng.randint(1, b.budget), EOS, b.policy)
        running = [q for q, r in zip(seqs, roles, strict=True) if r == "running"]
        waiting = [q for q, r in zip(seqs, roles, strict=True) if r == "waiting"]
        rng.shuffle(running)
        rng.shuffle(waiting)
        state = State(config, tuple(waiting), tuple(running),
                      tuple(q for q, r in zip(seqs, roles, strict=True) if r == "finished"), used, rng.randint(0, 5))
        reqs = [Request(q.seq_id, q.prompt_len, q.max_tokens, START if r == "arriving" else 1)
                for q, r in zip(seqs, roles, strict=True)]
        eos = {q.seq_id: [len(q.output)] for q in seqs if rng.random() < 0.3}  # the next draw is eos
        workload = make_workload(config, reqs, {q.seq_id: 100 * (j + 1) for j, q in enumerate(seqs)}, eos)
        return Drawn(state, workload, {q.seq_id: f"r{j}" for j, q in enumerate(seqs)})


def one_step(rules: types.ModuleType, d: Drawn) -> Step:
    """The spec's step START from the drawn state: arrivals, schedule(), update() with the proofs' sampler."""
    state = d.state
    for r in d.workload.requests:
        if r.arrival == START:
            state = rules.add(state, r.seq_id, r.prompt_len, r.max_tokens)
    counts = {q.seq_id: len(q.output) for q in d.state.seqs()}
    draws = Draws(dict(d.workload.sample.base), dict(d.workload.sample.eos_at), counts)
    recording = Recording(draws)
    mid, batch, events = rules.schedule_explained(state)
    after, done, _ = rules.update_explained(mid, recording)
    return Step(START, state, batch, events, mid, tuple(recording.tokens), tuple(q.seq_id for q in done), after,
                None, tuple(recording.seen))


def state_pins(init: Snap, d: Drawn) -> list[tuple[z3.ExprRef, int]]:
    """The encoding's free start state, each term with the drawn state's value (in an order fixed by N)."""
    index = {seq_id: int(name[1:]) for seq_id, name in d.slot.items()}
    drawn = {q.seq_id: len(q.output) for q in d.state.seqs()}  # its output is the draws it made
    return snap_pairs(init, concrete(d.state, Slots(index, drawn), len(d.slot)))


def flags_for(policy: Policy) -> tuple[str, ...]:
    """The flags a policy can raise (P2.whole exists under reserve_full_isl only): each must be raised QUOTA times."""
    return tuple(f for f in FLAGS if f != "held_whole" or policy.reserve_full_isl)


@dataclass(slots=True)
class FlagCounts:
    """Drawn states compared, and how often each flag was raised, per block size."""

    flags: tuple[str, ...] = FLAGS
    states: dict[int, int] = field(default_factory=dict)
    raised: dict[tuple[str, int], int] = field(default_factory=dict)

    def count(self, bs: int, flags: list[bool]) -> None:
        self.states[bs] = self.states.get(bs, 0) + 1
        for name, up in zip(FLAGS, flags, strict=True):
            self.raised[(name, bs)] = self.raised.get((name, bs), 0) + up

    def short(self, sizes: tuple[int, ...]) -> list[tuple[str, int]]:
        return [(f, bs) for f in self.flags for bs in sizes if self.raised.get((f, bs), 0) < quotas.QUOTA]

    def to_json(self, sizes: tuple[int, ...]) -> dict[str, object]:
        return {"states": sum(self.states.values()),
                "raised": {f: {str(bs): self.raised.get((f, bs), 0) for bs in sizes} for f in self.flags},
                "short": [f"{f} at block_size {bs}" for f, bs in self.short(sizes)]}


def validate_states(seed: int, b: Bounds = STREAM, rules: types.ModuleType = spec.rules
                    ) -> tuple[list[Mismatch], FlagCounts]:
    """Compare one step of the encoding and of `rules` from drawn states, block size by block size, until each
    flag is raised QUOTA times there (and MIN_STATES states are compared); stop at the first difference."""
    one = replace(b, steps=1)
    init = free_state(b.slots, "o")
    v = Validator(one, rules, init=init, start=START)
    counts = FlagCounts(flags_for(b.policy))
    sizes = tuple(range(1, b.block_size + 1))
    for bs in sizes:
        rng = random.Random(f"{seed}-states-{b.policy}-{bs}")
        for k in range(ATTEMPTS):
            if k >= MIN_STATES and not any(size == bs for _, size in counts.short(sizes)):
                break
            d = draw(rng, b, bs)
            w = replace(d.workload, name="drawn state")
            try:
                s = one_step(rules, d)
            except Exception as e:  # the spec raised on a state the encoding steps from
                return [Mismatch(w, START, "spec.rules ran", "a step", f"{type(e).__name__}: {e}", d.state)], counts
            m = v.model(w, extra=state_pins(init, d))
            assert m is not None
            if not v.unwound(m):
                return [Mismatch(w, START, "unwind", "one more loop round needed", "none", d.state)], counts
            want = expected(s, b.slots, d.slot)
            found = first_difference(v.observed(m, 1), want)
            if found is not None:
                return [Mismatch(w, START, *found, d.state)], counts
            counts.count(bs, spec_flags(s.events))
    return [], counts
