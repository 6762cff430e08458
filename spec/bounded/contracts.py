"""CrossHair contracts (PEP 316 docstrings) on the spec's helpers and phase functions, mirroring I1..I6.

CrossHair cannot build a State by itself, so each contract is a wrapper over small ints: the
helpers' contracts build one sequence, the phase contracts build a state between two steps with
``between_steps`` (its hypothesis is the strengthened invariant of docs/proofs.md, "Induction"),
and ``run_keeps_invariants`` drives add/schedule/update from the empty state. Each ``post:`` line
is one condition with its own time limit, set by the ``# crosshair:`` comments below (20 s of
CPU, 60 s for run_keeps_invariants). Check with ``crosshair check spec.bounded.contracts``: no
output means no counterexample was found, a bounded search and not a proof; ``--report_all``
says which conditions were confirmed over all paths.
"""

from __future__ import annotations

from dataclasses import replace

from spec.bounded.stepfacts import (  # the post: lines below read these
    Step,
    all_kept_run,  # noqa: F401
    fcfs,  # noqa: F401
    finish_frees,  # noqa: F401
    preempted_to_head,  # noqa: F401
    spent,  # noqa: F401
    victim_freed,  # noqa: F401
    within_limits,  # noqa: F401
)
from spec.invariants import check_all_finished, check_step
from spec.model import Config, Seq, State, Status
from spec.rules import (
    add,
    blocks_for,
    chunk,
    initial_state,
    phase1_running,
    phase2_waiting,
    preempt,
    schedule,
    try_grow,
    update,
)

EOS = 0  # the config's eos; every other sampled token is 100 + its position, never 0
IDS = ("a", "b", "c")  # sequence ids in arrival order
RUN_STEPS = 4  # schedule/update steps in run_keeps_invariants

# crosshair: per_condition_timeout=20


def blocks_for_rounds_up(block_size: int, tokens: int) -> int:
    """Return blocks_for: the fewest blocks of block_size that hold tokens.

    pre: 1 <= block_size <= 64
    pre: 0 <= tokens <= 4096
    post: __return__ * block_size >= tokens
    post: tokens == 0 or (__return__ - 1) * block_size < tokens
    """
    return blocks_for(block_size, tokens)


def try_grow_keeps_accounting(num_blocks: int, block_size: int, used: int, held: int, tokens: int) -> bool:
    """Grow one running sequence: blocks_used moves with its num_blocks and never passes num_blocks (I1).

    pre: 1 <= block_size <= 8 and 1 <= num_blocks <= 64
    pre: 0 <= held <= used <= num_blocks
    pre: 0 <= tokens <= 512
    post: __return__
    """
    state = State(Config(num_blocks, block_size, 1, 1), blocks_used=used)
    seq = Seq("s", 1, 1, num_blocks=held, status=Status.RUNNING)
    grown = try_grow(state, seq, tokens)
    if grown is None:
        return used + blocks_for(state.config.block_size, tokens) - held > num_blocks
    s2, q2 = grown
    return (s2.blocks_used - used == q2.num_blocks - held and s2.blocks_used <= num_blocks
            and q2.num_blocks == max(held, blocks_for(state.config.block_size, tokens)))


def chunk_stays_within_tokens(prompt_len: int, out_len: int, computed: int, budget: int) -> int:
    """chunk: 1 <= n <= budget and num_computed + n <= num_tokens (I2, I3).

    pre: 1 <= prompt_len <= 256 and 0 <= out_len <= 64 and 1 <= budget <= 256
    pre: 0 <= computed < prompt_len + out_len
    post: 1 <= __return__ <= budget
    post: computed + __return__ <= prompt_len + out_len
    """
    seq = Seq("s", prompt_len, 64, tuple(range(out_len)), num_computed=computed)
    return chunk(seq, budget)


# --- states between steps ----------------------------------------------------------------


def literal(value: int, limit: int) -> int:
    """Return `value` (0 <= value <= limit) as a plain int.

    Under CrossHair this splits the search on the value, so blocks_for's division by block_size
    stays linear for the solver (induction.py sweeps block_size for the same reason).
    """
    return next(v for v in range(limit + 1) if v == value)


def between_steps(num_blocks: int, block_size: int, max_num_seqs: int, budget: int, running: int,
                  p0: int, m0: int, o0: int, p1: int, m1: int, o1: int, computed: int,
                  p2: int, m2: int, o2: int) -> State | None:
    """A state between two steps with sequences a, b, c (prompt_len p, max_tokens m, o outputs), or None.

    The first `running` of a, b, c run and the rest wait, so running + waiting is arrival
    order. Every running sequence but the last is decoding (num_computed = num_tokens - 1),
    the last has computed `computed` tokens (1 <= computed < num_tokens), and each holds
    exactly blocks_for(num_computed); a waiting one holds nothing and may have output (it was
    preempted). Every request fits alone, and len(running) <= max_num_seqs and <= the budget.
    The domain is small: num_blocks, budget <= 8, block_size <= 4, max_num_seqs <= 3,
    prompt_len <= 6, max_tokens <= 4.
    """
    shapes = ((p0, m0, o0), (p1, m1, o1), (p2, m2, o2))
    # every test on the ints comes before CrossHair splits on block_size, running and the outputs
    ok = (1 <= num_blocks <= 8 and 1 <= block_size <= 4 and 1 <= max_num_seqs <= 3 and 1 <= budget <= 8
          and 0 <= running <= max_num_seqs and running <= budget)
    for p, m, o in shapes:  # each request fits alone: blocks_for(p + m - 1) <= num_blocks
        ok = ok and 1 <= p <= 6 and 0 <= o < m <= 4 and p + m - 1 <= num_blocks * block_size
    if not ok:
        return None
    config = Config(num_blocks, literal(block_size, 4), max_num_seqs, budget, eos=EOS)
    running = literal(running, 3)
    nc = [p + o - 1 for p, _, o in shapes[:running]]  # num_computed of the running: decoding
    if running:
        nc[-1] = computed  # except running[-1], which may be in a chunked prefill
    if not all(1 <= c < p + o for c, (p, _, o) in zip(nc, shapes, strict=False)):
        return None
    if sum(blocks_for(config.block_size, c) for c in nc) > num_blocks:
        return None
    seqs = [Seq(IDS[i], p, m, tuple(100 + k for k in range(o))) for i, (p, m, o) in enumerate(shapes)]
    run = tuple(replace(q, num_computed=c, num_blocks=blocks_for(config.block_size, c), status=Status.RUNNING)
                for q, c in zip(seqs, nc, strict=False))
    return State(config, waiting=tuple(seqs[running:]), running=run, blocks_used=sum(q.num_blocks for q in run))


def phase1_keeps_invariants(num_blocks: int, block_size: int, max_num_seqs: int, budget: int, running: int,
                            p0: int, m0: int, o0: int, p1: int, m1: int, o1: int, computed: int,
                            p2: int, m2: int, o2: int) -> Step:
    """Phase 1 keeps I1..I6, schedules every sequence it does not preempt (fact a) and requeues victims at the head.

    pre: between_steps(num_blocks, block_size, max_num_seqs, budget, running, p0, m0, o0, p1, m1, o1, computed, p2, m2, o2) is not None
    post: not check_step(__return__.before, __return__.batch, __return__.after)
    post: spent(__return__) and within_limits(__return__) and all_kept_run(__return__)
    post: preempted_to_head(__return__)
    """  # noqa: E501
    state = between_steps(num_blocks, block_size, max_num_seqs, budget, running, p0, m0, o0, p1, m1, o1, computed,
                          p2, m2, o2)
    assert state is not None
    after, left, batch, _ = phase1_running(state, budget)
    return Step(state, batch, replace(after, pending=batch), budget, left)


def phase2_keeps_invariants(num_blocks: int, block_size: int, max_num_seqs: int, budget: int, running: int,
                            p0: int, m0: int, o0: int, p1: int, m1: int, o1: int, computed: int,
                            p2: int, m2: int, o2: int) -> Step:
    """Phase 2, after phase 1, keeps I1..I6, never passes max_num_seqs and admits strictly first come first served.

    pre: between_steps(num_blocks, block_size, max_num_seqs, budget, running, p0, m0, o0, p1, m1, o1, computed, p2, m2, o2) is not None
    post: not check_step(__return__.before, __return__.batch, __return__.after)
    post: spent(__return__) and within_limits(__return__) and fcfs(__return__)
    """  # noqa: E501
    state = between_steps(num_blocks, block_size, max_num_seqs, budget, running, p0, m0, o0, p1, m1, o1, computed,
                          p2, m2, o2)
    assert state is not None
    mid, left1, batch1, _ = phase1_running(state, budget)
    after, left, batch2, _ = phase2_waiting(mid, left1)
    return Step(mid, batch2, replace(after, pending=batch1 + batch2), left1, left)


def schedule_keeps_invariants(num_blocks: int, block_size: int, max_num_seqs: int, budget: int, running: int,
                              p0: int, m0: int, o0: int, p1: int, m1: int, o1: int, computed: int,
                              p2: int, m2: int, o2: int) -> Step:
    """schedule() keeps I1..I6 within all three budgets, and schedules someone whenever anyone is unfinished.

    pre: between_steps(num_blocks, block_size, max_num_seqs, budget, running, p0, m0, o0, p1, m1, o1, computed, p2, m2, o2) is not None
    post: not check_step(__return__.before, __return__.batch, __return__.after)
    post: spent(__return__) and within_limits(__return__) and len(__return__.batch) >= 1
    """  # noqa: E501
    state = between_steps(num_blocks, block_size, max_num_seqs, budget, running, p0, m0, o0, p1, m1, o1, computed,
                          p2, m2, o2)
    assert state is not None
    after, batch = schedule(state)
    return Step(state, batch, after, budget, budget - sum(n for _, n in batch))


def update_keeps_invariants(num_blocks: int, block_size: int, max_num_seqs: int, budget: int, running: int,
                            p0: int, m0: int, o0: int, p1: int, m1: int, o1: int, computed: int,
                            p2: int, m2: int, o2: int, eos_a: int, eos_b: int, eos_c: int) -> Step:
    """update() after schedule() keeps I1..I6 (samples exactly at catch-up) and frees what finished sequences held.

    eos_x != 0: sequence x samples eos if it samples in this update.

    pre: between_steps(num_blocks, block_size, max_num_seqs, budget, running, p0, m0, o0, p1, m1, o1, computed, p2, m2, o2) is not None
    post: not check_step(__return__.before, __return__.batch, __return__.after)
    post: finish_frees(__return__)
    """  # noqa: E501
    state = between_steps(num_blocks, block_size, max_num_seqs, budget, running, p0, m0, o0, p1, m1, o1, computed,
                          p2, m2, o2)
    assert state is not None
    eos = dict(zip(IDS, (eos_a, eos_b, eos_c), strict=True))
    scheduled, batch = schedule(state)
    after, _ = update(scheduled, lambda seq_id, output: EOS if eos[seq_id] else 100 + len(output))
    return Step(scheduled, batch, after, 0, 0)


def preempt_resets_victim(num_blocks: int, block_size: int, max_num_seqs: int, budget: int, running: int,
                          p0: int, m0: int, o0: int, p1: int, m1: int, o1: int, computed: int,
                          p2: int, m2: int, o2: int) -> Step:
    """preempt takes running[-1] to the head of waiting with (0, 0) and its output, keeping I1, I3, I6.

    pre: running >= 1
    pre: between_steps(num_blocks, block_size, max_num_seqs, budget, running, p0, m0, o0, p1, m1, o1, computed, p2, m2, o2) is not None
    post: not check_step(__return__.before, (), __return__.after)
    post: preempted_to_head(__return__) and len(__return__.after.running) == running - 1 and victim_freed(__return__)
    """  # noqa: E501
    state = between_steps(num_blocks, block_size, max_num_seqs, budget, running, p0, m0, o0, p1, m1, o1, computed,
                          p2, m2, o2)
    assert state is not None
    after, _ = preempt(state)
    return Step(state, (), after, 0, 0)


# --- runs from the empty state -----------------------------------------------------------


def run_keeps_invariants(num_blocks: int, block_size: int, max_num_seqs: int, budget: int,
                         p0: int, m0: int, p1: int, m1: int, arrival1: int, eos0: int, eos1: int) -> tuple[str, ...]:
    """Every add/schedule/update of a RUN_STEPS-step run keeps I1..I6; blocks are all returned at the end.

    Request a arrives before step 0, b before step arrival1; x samples eos as its output number eosx.

    pre: 1 <= num_blocks <= 6 and 1 <= block_size <= 3 and 1 <= max_num_seqs <= 2 and 1 <= budget <= 6
    pre: 1 <= p0 <= 5 and 1 <= p1 <= 5 and 1 <= m0 <= 3 and 1 <= m1 <= 3
    pre: 0 <= arrival1 < 4 and 0 <= eos0 <= 3 and 0 <= eos1 <= 3
    pre: p0 + m0 - 1 <= num_blocks * block_size and p1 + m1 - 1 <= num_blocks * block_size
    post: __return__ == ()
    """
    # crosshair: per_condition_timeout=60
    eos_at = {"a": eos0, "b": eos1}
    config = Config(num_blocks, literal(block_size, 3), max_num_seqs, budget, eos=EOS)
    state = add(initial_state(config), "a", p0, m0)
    found: list[str] = []
    for k in range(RUN_STEPS):
        if k == arrival1:
            before, state = state, add(state, "b", p1, m1)
            found += map(str, check_step(before, (), state))
        before, (state, batch) = state, schedule(state)
        found += map(str, check_step(before, batch, state))
        before, (state, _) = state, update(state, lambda s, out: EOS if len(out) == eos_at[s] else 100 + len(out))
        found += map(str, check_step(before, batch, state))
    found += map(str, check_all_finished(state))
    return tuple(found)
