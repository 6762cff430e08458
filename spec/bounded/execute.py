"""Run a rules module (spec.rules, or spec/rules.py with a fault from spec.faults) and judge every claim on it.

The sampler of the proofs is ``Draws``: the d-th token a sequence draws is
base + d, or eos where the workload says so. A token depends on the sequence and
on how many tokens it drew before, not on its output, so a sequence that lost
its output (``preempt_clears_output``) draws different tokens the second time,
and OUT (a preempted sequence's output equals its output in an unpreempted run)
can fail. In a correct run a sequence draws once per output position, so this
sampler and ``spec.trace.SampleRule`` give the same tokens.
"""

from __future__ import annotations

import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace

from spec.feasible import ample_num_blocks, liveness_bound
from spec.invariants import check_step
from spec.loop import Steps
from spec.model import Batch, Config, Event, State, Status
from spec.rules import peak_blocks
from spec.trace import Request, SampleRule, Workload

EOS = 0
STEP_CLAIMS = ("I1", "I2", "I3", "I4", "I5", "I6", "FA", "FB", "FC", "FD", "NP", "BO", "FIN", "FR", "SA", "CH",
               "AD", "PG")
RUN_CLAIMS = ("OUT", "LIVE")


@dataclass(slots=True)
class Draws:
    """The sampler: counts the draws of each sequence; draw d of s is eos iff d in eos_at[s], else base + d."""

    bases: Mapping[str, int]
    eos_at: Mapping[str, tuple[int, ...]]
    counts: dict[str, int] = field(default_factory=dict)

    def __call__(self, seq_id: str, output: tuple[int, ...]) -> int:
        d = self.counts.get(seq_id, 0)
        self.counts[seq_id] = d + 1
        return EOS if d in self.eos_at.get(seq_id, ()) else self.bases[seq_id] + d


@dataclass(slots=True)
class Recording:
    """A sampler that records each call: the (seq_id, token) it returned and the length of the output handed to it
    (SA)."""

    sample: Callable[[str, tuple[int, ...]], int]
    tokens: list[tuple[str, int]] = field(default_factory=list)
    seen: list[int] = field(default_factory=list)

    def __call__(self, seq_id: str, output: tuple[int, ...]) -> int:
        token = self.sample(seq_id, output)
        self.tokens.append((seq_id, token))
        self.seen.append(len(output))
        return token


def draws_for(workload: Workload) -> Draws:
    """The workload's sample rule read as draws: its eos positions become eos draw indices."""
    return Draws(dict(workload.sample.base), dict(workload.sample.eos_at))


@dataclass(frozen=True, slots=True)
class Step:
    """One step of a run: arrivals, schedule() with its decisions, update() with the tokens drawn."""

    step: int
    before: State  # after this step's arrivals
    batch: Batch
    events: tuple[Event, ...]  # schedule()'s decisions
    after_schedule: State
    tokens: tuple[tuple[str, int], ...]  # (seq_id, token) per sample call, in call order
    finished: tuple[str, ...]
    after_update: State
    error: str | None = None  # what the module raised in this step, if anything
    seen: tuple[int, ...] = ()  # len(output) handed to the sampler, per sample call (as `tokens`)


def run(rules: types.ModuleType, workload: Workload, max_steps: int, draws: Draws | None = None,
        start: State | None = None) -> tuple[Step, ...]:
    """Run `workload` on `rules` for at most `max_steps` steps (a faulty module may never drain), from the
    module's initial state or from `start` (its sequences count as arrived; `draws` should know their draws)."""
    sample = draws_for(workload) if draws is None else draws
    state: State = rules.initial_state(workload.config) if start is None else start
    steps: list[Step] = []
    run_steps: Steps[Request] = Steps(workload.requests, lambda r: r.arrival, lambda r: r.seq_id, max_steps)
    arrived = {q.seq_id for q in state.waiting + state.running}
    run_steps.unfinished.update(arrived)
    for k, arrivals in run_steps:
        before = state
        try:
            for r in arrivals:
                state = rules.add(state, r.seq_id, r.prompt_len, r.max_tokens)
                arrived.add(r.seq_id)
        except Exception as e:  # a faulty module may refuse a request the rules take: a finding too
            steps.append(Step(k, before, (), (), before, (), (), before, f"add({r.seq_id!r}) raised {e!r}"))
            break
        before = state
        recording = Recording(sample)
        try:
            mid, batch, events = rules.schedule_explained(state)
        except Exception as e:  # a faulty module may crash; that is a finding, not an error of the checker
            steps.append(Step(k, before, (), (), before, (), (), before, f"schedule() raised {e!r}"))
            break
        try:
            state, done, _ = rules.update_explained(mid, recording)
        except Exception as e:
            steps.append(Step(k, before, batch, events, mid, tuple(recording.tokens), (), mid,
                              f"update() raised {e!r}", tuple(recording.seen)))
            break
        steps.append(Step(k, before, batch, events, mid, tuple(recording.tokens), tuple(q.seq_id for q in done),
                          state, None, tuple(recording.seen)))
        # a faulty module may lose a sequence from every queue: the run ends when none is left to schedule
        run_steps.finished(arrived - {q.seq_id for q in state.waiting + state.running})
    return tuple(steps)


# --- claims on one step ----------------------------------------------------------------


def fd_broken(events: tuple[Event, ...]) -> list[str]:
    """Fact (d): a sequence needed two victims in one step (only a sequence that was not running[-1] can)."""
    tries: dict[str, int] = {}
    for e in events:
        if e.rule in ("P1.preempt", "P1.skip_self") and e.seq_id is not None:
            tries[e.seq_id] = tries.get(e.seq_id, 0) + 1
    return [f"{seq_id} preempted {n} times to grow" for seq_id, n in tries.items() if n > 1]


def victims(s: Step) -> list[str]:
    """The sequences running before the step that schedule() reset, in running order: those it preempted, left
    waiting or admitted again from scratch (a sequence phase 1 kept has computed a token since it was admitted)."""
    after = {q.seq_id: q for q in s.after_schedule.seqs()}
    return [q.seq_id for q in s.before.running if q.seq_id in after and after[q.seq_id].num_computed == 0]


def np_broken(s: Step) -> str | None:
    """NP: schedule() adds one to num_preemptions per sequence it preempted, and update() leaves it alone."""
    grew, reset = s.after_schedule.num_preemptions - s.before.num_preemptions, len(victims(s))
    if grew != reset:
        return f"num_preemptions grew by {grew} in schedule(), which preempted {reset} sequences"
    if s.after_update.num_preemptions != s.after_schedule.num_preemptions:
        return f"update() changed num_preemptions from {s.after_schedule.num_preemptions} to " \
               f"{s.after_update.num_preemptions}"
    return None


def bo_broken(s: Step) -> str | None:
    """BO: the batch lists the running sequences phase 1 kept, in running order, then the admitted ones in the
    order of waiting after phase 1 (this step's victims in running order, then the old waiting queue)."""
    reset = victims(s)
    kept = [q.seq_id for q in s.before.running if q.seq_id not in reset]
    queue = reset + [q.seq_id for q in s.before.waiting]
    ids = [i for i, _ in s.batch]

    def rank(i: str) -> tuple[int, int]:
        return (0, kept.index(i)) if i in kept else (1, queue.index(i) if i in queue else len(queue))
    return None if ids == sorted(ids, key=rank) else f"batch {ids}, expected {sorted(ids, key=rank)}"


def fin_broken(s: Step) -> str | None:
    """FIN: update() appends the sequences it finishes to finished in batch order, keeps the earlier ones as they
    were, and returns exactly those it appended, in that order."""
    before, after = s.after_schedule.finished, s.after_update.finished
    new = [q.seq_id for q in after[len(before):]]
    in_batch = [i for i, _ in s.batch if i in new]
    if after[:len(before)] != before:
        return "update() changed the sequences finished before it"
    if new != in_batch or list(s.finished) != new:
        return f"finished {new} and returned {list(s.finished)}, in batch order {in_batch}"
    return None


def fr_broken(s: Step) -> str | None:
    """FR: update() finishes exactly the sequences it samples whose output reaches max_tokens or whose new token is
    eos (no claim said when a sequence finishes: a max_tokens clamped at 2**16 broke none)."""
    was, now = {q.seq_id for q in s.after_schedule.finished}, s.after_update.by_id()
    new = {q.seq_id for q in s.after_update.finished} - was
    eos, sampled = s.before.config.eos, {seq_id: token for seq_id, token in s.tokens}
    unsampled = sorted(new - set(sampled))
    if unsampled:
        return f"{unsampled[0]} finished without sampling a token"
    for seq_id, token in sampled.items():
        q = now.get(seq_id)
        if q is None:
            continue  # lost from every queue: I4 says so
        due = len(q.output) >= q.max_tokens or (eos is not None and token == eos)
        if (seq_id in new) != due:
            return (f"{seq_id} {'finished' if seq_id in new else 'did not finish'} with {len(q.output)} of "
                    f"max_tokens {q.max_tokens} tokens, the last {token} (eos {eos})")
    return None


def sa_broken(s: Step) -> str | None:
    """SA: update() hands the sampler each sequence's whole output (as it was after schedule()): a model conditions
    on all of it. The proofs' sampler counts draws and never reads the output, so no other claim sees a cut one."""
    had = s.after_schedule.by_id()
    for (seq_id, _), length in zip(s.tokens, s.seen, strict=True):
        q = had.get(seq_id)
        if q is not None and length != len(q.output):
            return f"sample({seq_id!r}, output) was handed {length} tokens of its output of {len(q.output)}"
    return None


def ch_broken(s: Step) -> str | None:
    """CH: schedule() gives each sequence it runs n = min(tokens left to compute, budget left), spending the budget
    in the order of running after it (phase 1's kept sequences, then phase 2's admitted ones)."""
    batch = dict(s.batch)
    left = s.before.config.max_num_batched_tokens
    for q in s.after_schedule.running:
        n = batch.get(q.seq_id)
        if n is None:
            return None  # not scheduled: I2 and FA speak of that
        if n != min(q.num_tokens - q.num_computed, left):
            return f"{q.seq_id} runs {n} of its {q.num_tokens - q.num_computed} tokens left, budget left {left}"
        left -= n
    return None


def ad_broken(s: Step) -> str | None:
    """AD: phase 2 stops admitting only at a gate: after schedule(), waiting is empty, or its head is held by the
    budget, by max_num_seqs or by the free blocks for its chunk; under vllm-v1 also by the blocks for its whole
    sequence, or because this step preempted. A scheduler that admits fewer than it may waits for nothing."""
    if not s.after_schedule.waiting:
        return None
    c, after, head = s.before.config, s.after_schedule, s.after_schedule.waiting[0]
    left = c.max_num_batched_tokens - sum(n for _, n in s.batch)
    free = c.num_blocks - after.blocks_used
    n = min(head.num_tokens - head.num_computed, left)
    held = (left <= 0 or len(after.running) >= c.max_num_seqs
            or -(-(head.num_computed + n) // c.block_size) - head.num_blocks > free)  # ceil, computed here
    if c.policy.reserve_full_isl:
        held = held or -(-head.num_tokens // c.block_size) - head.num_blocks > free
    if c.policy.holds_after_preemption:
        held = held or after.num_preemptions > s.before.num_preemptions
    if held:
        return None
    return (f"{head.seq_id} waits at the head with {n} tokens to run, budget left {left}, "
            f"{len(after.running)} running of max_num_seqs {c.max_num_seqs}, {free} blocks free")


def pg_broken(s: Step) -> str | None:
    """PG: phase 2 admits only through the policy's gates: under holds_after_preemption nobody in a step whose phase 1
    preempted (P2.policy); under reserve_full_isl each admitted head only if blocks for its whole sequence were free
    when it was admitted (P2.whole). AD says phase 2 stops only at a gate; PG says it stops at each of these."""
    c, before, after = s.before.config, s.before, s.after_schedule
    if not (c.policy.holds_after_preemption or c.policy.reserve_full_isl):
        return None  # the card's policy has neither gate: no work at every step of its model check
    had = before.by_id()
    # admitted by phase 2 (which appends, in order): waiting before the step, or preempted in phase 1 (which resets
    # num_computed, and schedule() computes nothing) and admitted again in the same step
    admitted = [q for q in after.running if q.seq_id in had and (had[q.seq_id].status is Status.WAITING
                                                                  or had[q.seq_id].num_computed > q.num_computed)]
    if not admitted:
        return None
    if c.policy.holds_after_preemption and after.num_preemptions > before.num_preemptions:
        return f"{admitted[0].seq_id} is admitted in a step that preempted"
    if c.policy.reserve_full_isl:
        taken = sum(q.num_blocks for q in admitted)  # the blocks this and the later admissions took
        for q in admitted:
            free = c.num_blocks - (after.blocks_used - taken)
            need = -(-q.num_tokens // c.block_size)  # a waiting sequence holds no block (I1)
            if need > free:
                return f"{q.seq_id} is admitted with {free} blocks free, and its whole sequence needs {need}"
            taken -= q.num_blocks
    return None


def step_violations(s: Step) -> dict[str, list[str]]:
    """Every step claim broken by this step, by claim id; 'crash' if the module raised."""
    out: dict[str, list[str]] = {}

    def add(claim: str, message: str) -> None:
        out.setdefault(claim, []).append(f"step {s.step}: {message}")
    if s.error is not None:
        add("crash", s.error)
        return out
    for v in check_step(s.before, s.batch, s.after_schedule) + check_step(
            s.after_schedule, s.after_schedule.pending or (), s.after_update):
        add(v.invariant, str(v))
    budget = s.before.config.max_num_batched_tokens
    for e in s.events:
        if e.rule == "P1.budget":
            add("FA", e.message)
    if max(len(s.after_schedule.running), len(s.after_update.running)) > budget:
        add("FB", f"more running than max_num_batched_tokens {budget}")
    for q in s.after_update.running[:-1]:
        if q.remaining != 1:
            add("FC", f"{q.seq_id} is not running[-1] and has {q.remaining} tokens left")
    for m in fd_broken(s.events):
        add("FD", m)
    for claim, broken in (("NP", np_broken), ("BO", bo_broken), ("FIN", fin_broken), ("FR", fr_broken),
                          ("SA", sa_broken), ("CH", ch_broken), ("AD", ad_broken), ("PG", pg_broken)):
        found = broken(s)
        if found is not None:
            add(claim, found)
    return out


def potential(state: State, requests: tuple[Request, ...]) -> int:
    """LIVE's ranking function Phi: the work of every request not yet finished (prompt_len + max_tokens - 1 each,
    arrived or not), minus what running[0] has computed (running[0] is never preempted)."""
    done = {q.seq_id for q in state.finished}
    left = sum(r.prompt_len + r.max_tokens - 1 for r in requests if r.seq_id not in done)
    return left - (state.running[0].num_computed if state.running else 0)


def live_broken(before: State, s: Step, requests: tuple[Request, ...]) -> str | None:
    """LIVE on one step (`before`: the state the step starts from, before its arrivals): Phi is negative, grows, or
    fails to drop by >= 1 in a step with arrived, unfinished work; or the step is the liveness bound and work is
    left."""
    was, now = potential(before, requests), potential(s.after_update, requests)
    if was < 0:
        return f"Phi is {was} before step {s.step}"
    if now > was - (1 if s.before.waiting or s.before.running else 0):
        return f"Phi went from {was} to {now} in step {s.step}"
    if s.step == liveness_bound(requests) and len(s.after_update.finished) < len(requests):
        return f"work left after step {s.step}, the liveness bound"
    return None


# --- claims on a whole run ----------------------------------------------------------------


def ample(workload: Workload) -> Workload:
    """The same workload on a cache that holds every request's peak at once: nobody is ever preempted."""
    c = workload.config
    room = ample_num_blocks(c.block_size, workload.requests)
    return replace(workload, config=Config(room, c.block_size, c.max_num_seqs, c.max_num_batched_tokens, c.eos))


def outputs(steps: tuple[Step, ...]) -> dict[str, tuple[int, ...]]:
    return {q.seq_id: q.output for q in steps[-1].after_update.finished} if steps else {}


def drained(steps: tuple[Step, ...]) -> bool:
    return bool(steps) and steps[-1].error is None and not (steps[-1].after_update.waiting
                                                            or steps[-1].after_update.running)


def run_violations(rules: types.ModuleType, workload: Workload, steps: int) -> dict[str, list[str]]:
    """OUT and LIVE on the first `steps` steps of a run, against an unpreempted run of the same module."""
    out: dict[str, list[str]] = {}
    bound = liveness_bound(workload.requests)
    tight = run(rules, workload, max(steps, bound))
    roomy = run(rules, ample(workload), max(steps, bound))
    if not drained(tight[:bound]) and all(s.error is None for s in tight[:bound]):
        out["LIVE"] = [f"not drained after the liveness bound {bound} steps"]
    a, b = outputs(tight), outputs(roomy)
    diff = [f"{i}: {list(a[i])} with preemption, {list(b[i])} without" for i in sorted(a.keys() & b.keys())
            if a[i] != b[i]]
    if diff:
        out["OUT"] = diff
    return out


def violations(rules: types.ModuleType, workload: Workload, steps: int) -> dict[str, list[str]]:
    """Every claim broken on the workload within `steps` steps (LIVE and OUT look as far as they need)."""
    out: dict[str, list[str]] = {}
    for s in run(rules, workload, steps):
        for claim, found in step_violations(s).items():
            out.setdefault(claim, []).extend(found)
    for claim, found in run_violations(rules, workload, steps).items():
        out.setdefault(claim, []).extend(found)
    return out


def alone(rules: types.ModuleType, config: Config, request: Request, first: int,
          eos_draws: tuple[int, ...]) -> tuple[int, ...]:
    """The output of one request run alone on an ample cache (no preemption), with the proofs' sampler."""
    room = peak_blocks(config.block_size, request.prompt_len, request.max_tokens)
    solo = Config(room, config.block_size, config.max_num_seqs, config.max_num_batched_tokens, config.eos)
    rule = SampleRule(((request.seq_id, first),), ((request.seq_id, eos_draws),) if eos_draws else (), EOS)
    steps = run(rules, Workload(solo, (replace(request, arrival=1),), rule), liveness_bound((request,)) + 1)
    return outputs(steps).get(request.seq_id, ())
