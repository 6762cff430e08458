"""The rules of the P07 scheduler, in the order of docs/rules.md.

Helpers (``blocks_for``, ``try_grow``, ``preempt``), then schedule() as two
phases (``phase1_running``, ``phase2_waiting``), then update() and add().
Each guard carries its rule id in a comment; the same id is in the Event the
guard emits, so an explanation is the behaviour, not a description of it.
"""

from __future__ import annotations

from dataclasses import replace

from spec.errors import InvalidRequest, ProtocolError
from spec.model import Batch, Config, Event, Sample, Seq, State, Status

# --- helpers --------------------------------------------------------------------------


def blocks_for(block_size: int, tokens: int) -> int:
    """Return the KV blocks needed to hold `tokens` tokens: ceil(tokens / block_size)."""
    return -(-tokens // block_size)


def peak_blocks(block_size: int, prompt_len: int, max_tokens: int) -> int:
    """Return the most blocks a request can ever hold: its last sampled token is never computed."""
    return blocks_for(block_size, prompt_len + max_tokens - 1)


def try_grow(state: State, seq: Seq, tokens: int) -> tuple[State, Seq] | None:
    """Give `seq` the blocks to hold `tokens` tokens, or return None and change nothing.

    need = blocks_for(tokens) - seq.num_blocks; need <= 0 succeeds with no change;
    blocks_used + need <= num_blocks takes the blocks (both counters).
    """
    need = blocks_for(state.config.block_size, tokens) - seq.num_blocks
    if need <= 0:
        return state, seq
    if state.blocks_used + need > state.config.num_blocks:
        return None
    return replace(state, blocks_used=state.blocks_used + need), replace(seq, num_blocks=seq.num_blocks + need)


def preempt(state: State) -> tuple[State, Seq]:
    """Preempt running[-1]: free its blocks, forget its KV, push it to the head of waiting.

    Only num_computed, num_blocks and status change; output is kept (I4), so the
    sequence recomputes prompt + output when it is admitted again.
    """
    victim = state.running[-1]
    requeued = replace(victim, num_computed=0, num_blocks=0, status=Status.WAITING)
    state = replace(
        state,
        running=state.running[:-1],
        waiting=(requeued,) + state.waiting,
        blocks_used=state.blocks_used - victim.num_blocks,
        num_preemptions=state.num_preemptions + 1,
    )
    return state, victim


def chunk(seq: Seq, budget: int) -> int:
    """Return n = min(tokens not yet computed, budget): 1 in a decode, more in a prefill."""
    return min(seq.remaining, budget)


def _grow_event(rule: str, state: State, seq: Seq, n: int, tail: str) -> Event:
    held = seq.num_computed + n
    need = blocks_for(state.config.block_size, held) - seq.num_blocks
    free = state.config.num_blocks - state.blocks_used
    msg = (
        f"{seq.seq_id} needs {need + seq.num_blocks} blocks (+{max(need, 0)}) to hold "
        f"{seq.num_computed} + {n} = {held} tokens, {state.blocks_used} + {max(need, 0)} "
        f"{'>' if need > free else '<='} {state.config.num_blocks}{tail}"
    )
    data = (("n", n), ("tokens", held), ("need", max(need, 0)), ("blocks_used", state.blocks_used),
            ("num_blocks", state.config.num_blocks))
    return Event(rule, seq.seq_id, msg, data)


# --- schedule() -----------------------------------------------------------------------


def phase1_running(state: State, budget: int) -> tuple[State, int, Batch, tuple[Event, ...]]:
    """Schedule the running sequences in order, preempting running[-1] when blocks run out (P1).

    By index i from 0 while i < len(running) and budget > 0: n = min(remaining, budget);
    while try_grow fails, preempt running[-1]; if that was the sequence itself it is
    skipped and i does not advance; otherwise it is scheduled and i advances.
    """
    batch: Batch = ()
    events: list[Event] = []
    i = 0
    while i < len(state.running) and budget > 0:
        seq = state.running[i]
        n = chunk(seq, budget)
        while (grown := try_grow(state, seq, seq.num_computed + n)) is None:
            before = state
            state, victim = preempt(state)
            # P1.skip_self: the victim is the sequence itself; skip it, i stays (running is shorter)
            if victim.seq_id == seq.seq_id:
                events.append(_grow_event("P1.skip_self", before, seq, n,
                                          f": preempt {seq.seq_id} = running[-1], itself; skip it"))
                break
            # P1.preempt: free running[-1]'s blocks and retry the same sequence
            events.append(_grow_event("P1.preempt", before, seq, n,
                                      f": preempt {victim.seq_id} = running[-1], freeing {victim.num_blocks}"))
        else:
            # P1: it fits; schedule n tokens of it
            state, seq = grown
            state = replace(state, running=state.running[:i] + (seq,) + state.running[i + 1:])
            batch += ((seq.seq_id, n),)
            budget -= n
            events.append(Event("P1", seq.seq_id, f"{seq.seq_id} runs {n} (budget left {budget})",
                                (("n", n), ("budget", budget))))
            i += 1
    # P1.budget: the budget ran out before the end of running; the rest wait a step
    if i < len(state.running):
        left = ", ".join(s.seq_id for s in state.running[i:])
        events.append(Event("P1.budget", None, f"budget is 0: {left} not scheduled this step", (("budget", budget),)))
    return state, budget, batch, tuple(events)


def phase2_waiting(state: State, budget: int) -> tuple[State, int, Batch, tuple[Event, ...]]:
    """Admit waiting sequences from the head, strictly first come first served (P2).

    While waiting and budget > 0 and len(running) < max_num_seqs: n = min(remaining,
    budget); if the head does not fit, stop (nobody behind it may jump the queue);
    otherwise pop it, mark it RUNNING, append it to running and schedule n.
    """
    batch: Batch = ()
    events: list[Event] = []
    while state.waiting and budget > 0:
        head = state.waiting[0]
        # P2.full: max_num_seqs sequences are running; nobody else is admitted
        if len(state.running) >= state.config.max_num_seqs:
            events.append(Event("P2.full", head.seq_id,
                                f"{len(state.running)} running = max_num_seqs {state.config.max_num_seqs}: "
                                f"{head.seq_id} waits", (("running", len(state.running)),)))
            break
        n = chunk(head, budget)
        # P2.whole: under vllm-v1 (reserve_full_isl) the head waits unless blocks for its whole sequence are free now
        if not whole_sequence_fits(state, head):
            events.append(_grow_event("P2.whole", state, head, head.remaining,
                                      ": vllm-v1 admits only a sequence whose every token would fit; stop"))
            break
        grown = try_grow(state, head, head.num_computed + n)
        # P2.stop: the head does not fit; nobody behind it may jump the queue
        if grown is None:
            events.append(_grow_event("P2.stop", state, head, n, ": stop admitting (FCFS)"))
            break
        # P2: admit the head with n tokens
        state, head = grown
        head = replace(head, status=Status.RUNNING)
        state = replace(state, waiting=state.waiting[1:], running=state.running + (head,))
        batch += ((head.seq_id, n),)
        budget -= n
        events.append(Event("P2", head.seq_id, f"admit {head.seq_id} with {n} (budget left {budget})",
                            (("n", n), ("budget", budget))))
    return state, budget, batch, tuple(events)


def whole_sequence_fits(state: State, head: Seq) -> bool:
    """Under p07 always; under vllm-v1, whether blocks for all num_tokens of the head are free (it still takes
    only the chunk's blocks): vLLM's scheduler_reserve_full_isl admission gate, on by default (off: always)."""
    if not state.config.policy.reserve_full_isl:
        return True
    need = blocks_for(state.config.block_size, head.num_tokens) - head.num_blocks
    return state.blocks_used + need <= state.config.num_blocks


def schedule_explained(state: State) -> tuple[State, Batch, tuple[Event, ...]]:
    """Run phase 1 then phase 2 with one shared budget; return the state, batch and decisions."""
    # S.protocol: the previous batch has not been applied
    if state.pending is not None:
        raise ProtocolError("schedule() called twice without update(); call update() to apply the "
                            f"pending batch {dict(state.pending)} first")
    budget = state.config.max_num_batched_tokens
    preemptions = state.num_preemptions
    state, budget, batch1, events1 = phase1_running(state, budget)
    admits, events_policy = admits_after_phase1(state, state.num_preemptions > preemptions)
    state, budget, batch2, events2 = phase2_waiting(state, budget if admits else 0)
    batch = batch1 + batch2
    return replace(state, pending=batch), batch, events1 + events_policy + events2


def admits_after_phase1(state: State, preempted: bool) -> tuple[bool, tuple[Event, ...]]:
    """Whether phase 2 runs this step: always under p07; under vllm-v1 only if phase 1 preempted nobody."""
    # P2.policy: vllm-v1 admits nobody in a step that preempted
    if preempted and state.config.policy.holds_after_preemption and state.waiting:
        return False, (Event("P2.policy", state.waiting[0].seq_id,
                             f"policy {state.config.policy}: this step preempted, so {state.waiting[0].seq_id} and the "
                             "rest of waiting are not admitted until the next step",
                             (("policy", str(state.config.policy)),)),)
    return True, ()


def schedule(state: State) -> tuple[State, Batch]:
    """Decide who runs this step and how many tokens each computes."""
    state, batch, _ = schedule_explained(state)
    return state, batch


# --- update() -------------------------------------------------------------------------


def finish(state: State, seq: Seq) -> State:
    """Move a running sequence to finished and return its blocks (U.finish)."""
    done = replace(seq, num_blocks=0, status=Status.FINISHED)
    return replace(
        state,
        running=tuple(s for s in state.running if s.seq_id != seq.seq_id),
        finished=state.finished + (done,),
        blocks_used=state.blocks_used - seq.num_blocks,
    )


def apply_one(state: State, seq_id: str, n: int, sample: Sample) -> tuple[State, Seq, tuple[Event, ...]]:
    """Apply n computed tokens to one scheduled sequence; sample only when it has caught up."""
    index = next(i for i, s in enumerate(state.running) if s.seq_id == seq_id)
    seq = state.running[index]
    # U.compute: the KV of n more tokens is computed
    seq = replace(seq, num_computed=seq.num_computed + n)
    # U.partial: a chunked prefill that is not complete samples nothing
    if seq.num_computed < seq.num_tokens:
        event = Event("U.partial", seq_id, f"{seq_id} computed {seq.num_computed}/{seq.num_tokens}: no sample",
                      (("num_computed", seq.num_computed), ("num_tokens", seq.num_tokens)))
        return replace(state, running=state.running[:index] + (seq,) + state.running[index + 1:]), seq, (event,)
    # U.sample: num_computed == num_tokens, so one token is sampled and appended
    token = sample(seq_id, seq.output)
    seq = replace(seq, output=seq.output + (token,))
    state = replace(state, running=state.running[:index] + (seq,) + state.running[index + 1:])
    events = [Event("U.sample", seq_id, f"{seq_id} samples {token} (output {len(seq.output)}/{seq.max_tokens})",
                    (("token", token), ("len_output", len(seq.output))))]
    eos = state.config.eos
    # U.finish: eos sampled, or max_tokens reached (the token is appended first)
    if (eos is not None and token == eos) or len(seq.output) >= seq.max_tokens:
        why = "eos" if eos is not None and token == eos else "max_tokens"
        events.append(Event("U.finish", seq_id, f"{seq_id} finishes ({why}), freeing {seq.num_blocks} blocks",
                            (("reason", why), ("freed", seq.num_blocks))))
        state = finish(state, seq)
    return state, seq, tuple(events)


def update_explained(state: State, sample: Sample) -> tuple[State, tuple[Seq, ...], tuple[Event, ...]]:
    """Apply the pending batch in batch order; return the state, the finished sequences and decisions."""
    # U.protocol: nothing was scheduled since the last update
    if state.pending is None:
        raise ProtocolError("update() called without a preceding schedule(); call schedule() first")
    finished_before = len(state.finished)
    events: list[Event] = []
    for seq_id, n in state.pending:
        state, _, seq_events = apply_one(state, seq_id, n, sample)
        events.extend(seq_events)
    state = replace(state, pending=None)
    return state, state.finished[finished_before:], tuple(events)


def update(state: State, sample: Sample) -> tuple[State, tuple[Seq, ...]]:
    """Apply the last batch and return the sequences that finished in it."""
    state, done, _ = update_explained(state, sample)
    return state, done


# --- add() and the initial state -------------------------------------------------------


def initial_state(config: Config) -> State:
    """Return an empty scheduler for `config`."""
    return State(config=config)


def check_request(state: State, seq_id: object, prompt_len: object, max_tokens: object) -> None:
    """Raise InvalidRequest unless the request is well formed, new and feasible alone."""
    if type(seq_id) is not str:
        raise InvalidRequest(f"seq_id must be a str, got {seq_id!r} ({type(seq_id).__name__}); name requests by string")
    for name, value in (("prompt_len", prompt_len), ("max_tokens", max_tokens)):
        if type(value) is not int or value < 1:
            raise InvalidRequest(f"request {seq_id!r}: {name} must be an int >= 1, got {value!r}; "
                                 "every request has a prompt and may generate at least one token")
    if state.find(seq_id) is not None:
        raise InvalidRequest(f"request {seq_id!r} was already added; seq ids must be unique")
    assert isinstance(prompt_len, int) and isinstance(max_tokens, int)
    config = state.config
    peak = prompt_len + max_tokens - 1
    need = blocks_for(config.block_size, peak)
    if need > config.num_blocks:
        raise InvalidRequest(
            f"request {seq_id!r} can never be scheduled: it may hold {peak} tokens (prompt_len {prompt_len} + "
            f"max_tokens {max_tokens} - 1), which needs {need} blocks of size {config.block_size}, but num_blocks "
            f"is {config.num_blocks}; raise num_blocks to at least {need} or shorten the request")


def add(state: State, seq_id: str, prompt_len: int, max_tokens: int) -> State:
    """Append a new request to the tail of waiting (arrival order)."""
    check_request(state, seq_id, prompt_len, max_tokens)
    return replace(state, waiting=state.waiting + (Seq(seq_id, prompt_len, max_tokens),))
