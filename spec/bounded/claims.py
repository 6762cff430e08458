"""Each claim as z3 formulas over an unrolled run: the invariants I1..I6 and the derived facts.

A claim gives, per step k, a formula that is true exactly when the claim is broken
at step k (``bad(run, k)``); checks.py asks the solver whether any is satisfiable.
The invariant formulas restate spec/invariants.py over the encoding's state.
"""

from __future__ import annotations

from collections.abc import Iterator

import z3

from spec.bounded.encode import FINISHED, RUNNING, UNARRIVED, WAITING, Snap, Term, num, one_if, total
from spec.bounded.transition import Run


def _sum(terms: Iterator[Term] | list[Term]) -> Term:
    return total(terms)


def occurrences(s: Snap, slot: int, lo: Term | int, hi: Term) -> Term:
    return _sum([one_if(z3.And(lo <= t, t < hi, q == slot)) for t, q in enumerate(s.queue)])


def position(s: Snap, slot: int) -> Term:
    return _sum([z3.If(z3.And(t < s.r + s.w, q == slot), num(t), num(0)) for t, q in enumerate(s.queue)])


# --- state invariants ------------------------------------------------------------------


def i1_blocks_accounted(run: Run, s: Snap) -> z3.BoolRef:
    n = run.b.slots
    held = _sum([z3.If(s.status[j] == RUNNING, s.blocks[j], num(0)) for j in range(n)])
    per = [z3.If(s.status[j] == RUNNING, s.blocks[j] == run.bf(s.computed[j] + s.sched[j]), s.blocks[j] == 0)
           for j in range(n)]
    return z3.And(s.used == held, s.used <= run.x.num_blocks, *per)


def i3_computed_within_tokens(run: Run, s: Snap) -> z3.BoolRef:
    return z3.And(*[z3.And(s.computed[j] >= 0, s.computed[j] <= run.x.prompt_len[j] + s.out[j],
                           z3.Implies(s.status[j] == WAITING, s.computed[j] == 0)) for j in range(run.b.slots)])


def i6_one_queue_each(run: Run, s: Snap) -> z3.BoolRef:
    out = [s.r <= run.x.max_num_seqs, _sum([occurrences(s, j, 0, s.r + s.w) for j in range(run.b.slots)]) == s.r + s.w]
    for j in range(run.b.slots):
        st = s.status[j]
        out.append(z3.Or(st == UNARRIVED, st == WAITING, st == RUNNING, st == FINISHED))
        out.append(z3.Implies(st == RUNNING, occurrences(s, j, 0, s.r) == 1))
        out.append(z3.Implies(st == WAITING, occurrences(s, j, s.r, s.r + s.w) == 1))
        out.append(z3.Implies(z3.Or(st == FINISHED, st == UNARRIVED), occurrences(s, j, 0, s.r + s.w) == 0))
        out.append(occurrences(s, j, 0, s.r + s.w) <= 1)
    return z3.And(*out)


# --- step properties: (before, after); the batch is after's (schedule) or before's (update) -----


def i2_batch_within_budget(run: Run, before: Snap, after: Snap) -> z3.BoolRef:
    out = [_sum(list(after.sched)) <= run.x.budget]
    for j in range(run.b.slots):
        out.append(z3.Implies(after.times[j] > 0, z3.And(
            after.times[j] == 1, after.sched[j] >= 1, z3.Or(before.status[j] == WAITING, before.status[j] == RUNNING))))
    return z3.And(*out)


def i3_sampled_only_when_caught_up(run: Run, before: Snap, after: Snap, update: bool) -> z3.BoolRef:
    out = []
    for j in range(run.b.slots):
        if update:
            caught_up = before.computed[j] + before.sched[j] == run.x.prompt_len[j] + before.out[j]
            should = z3.And(before.times[j] > 0, caught_up)
            out.append(after.out[j] == before.out[j] + one_if(should))
        else:
            out.append(after.out[j] == before.out[j])
    return z3.And(*out)


def i4_preemption_keeps_output(run: Run, before: Snap, after: Snap) -> z3.BoolRef:
    out = []
    for j in range(run.b.slots):
        out.append(after.out[j] >= before.out[j])
        preempted = z3.And(before.status[j] == RUNNING, after.status[j] == WAITING)
        out.append(z3.Implies(preempted, z3.And(after.computed[j] == 0, after.blocks[j] == 0)))
    return z3.And(*out)


def i5_preempted_to_head(run: Run, before: Snap, after: Snap, update: bool) -> z3.BoolRef:
    n = run.b.slots
    if update:  # update() neither preempts nor admits: waiting is unchanged
        same = [z3.Implies(t < before.w, pick_at(after, after.r + t) == pick_at(before, before.r + t))
                for t in range(n)]
        return z3.And(after.w == before.w, *same)
    pos = [position(before, j) for j in range(n)]
    expected = [z3.Or(before.status[j] == WAITING, z3.And(before.status[j] == RUNNING, after.status[j] == WAITING))
                for j in range(n)]
    admitted = [z3.And(after.times[j] > 0, before.status[j] != RUNNING) for j in range(n)]
    in_w = [occurrences(after, j, after.r, after.r + after.w) > 0 for j in range(n)]
    pos_w = [position(after, j) for j in range(n)]
    rest = [z3.And(expected[j], z3.Not(admitted[j])) for j in range(n)]
    out = [after.w == _sum([one_if(c) for c in rest])]
    for x in range(n):
        out += [z3.Implies(admitted[x], expected[x]), in_w[x] == rest[x]]
        for y in range(n):
            if x == y:
                continue
            out.append(z3.Implies(z3.And(admitted[x], rest[y]), pos[x] < pos[y]))
            in_order = (after.order[x] < after.order[y]) == (pos[x] < pos[y])
            out.append(z3.Implies(z3.And(admitted[x], admitted[y]), in_order))
            out.append(z3.Implies(z3.And(in_w[x], in_w[y]), (pos_w[x] < pos_w[y]) == (pos[x] < pos[y])))
    return z3.And(*out)


def pick_at(s: Snap, idx: Term) -> Term:
    out: Term = num(-1)
    for t in range(len(s.queue) - 1, -1, -1):
        out = z3.If(idx == t, s.queue[t], out)
    return out


# --- per-step "broken" formulas, by claim ---------------------------------------------


def bad_invariant(name: str, run: Run, k: int) -> z3.BoolRef:
    """The invariant `name` fails after step k's schedule() or update()."""
    pre, mid, post = run.pre[k], run.mid[k], run.post[k]
    if name == "I1":
        ok = z3.And(i1_blocks_accounted(run, mid), i1_blocks_accounted(run, post))
    elif name == "I2":
        ok = i2_batch_within_budget(run, pre, mid)
    elif name == "I3":
        ok = z3.And(i3_computed_within_tokens(run, mid), i3_computed_within_tokens(run, post),
                    i3_sampled_only_when_caught_up(run, pre, mid, False),
                    i3_sampled_only_when_caught_up(run, mid, post, True))
    elif name == "I4":
        ok = z3.And(i4_preemption_keeps_output(run, pre, mid), i4_preemption_keeps_output(run, mid, post))
    elif name == "I5":
        ok = z3.And(i5_preempted_to_head(run, pre, mid, False), i5_preempted_to_head(run, mid, post, True))
    elif name == "I6":
        ok = z3.And(i6_one_queue_each(run, mid), i6_one_queue_each(run, post))
    else:
        raise ValueError(f"unknown invariant {name!r}; use I1..I6")
    return z3.Not(ok)


def all_finished(run: Run, s: Snap) -> z3.BoolRef:
    return z3.And(*[s.status[j] == FINISHED for j in range(run.b.slots)])


def decoding_except_last(run: Run, s: Snap) -> z3.BoolRef:
    """Fact (c): every running sequence but running[-1] has exactly one token left to compute."""
    out = []
    for t in range(run.b.slots):
        q = s.queue[t]
        for j in range(run.b.slots):
            out.append(z3.Implies(z3.And(t < s.r - 1, q == j),
                                  s.computed[j] + s.sched[j] == run.x.prompt_len[j] + s.out[j] - 1))
    return z3.And(*out)


def potential(run: Run, s: Snap) -> Term:
    """Phi: unfinished work, minus what running[0] has computed (it is never preempted)."""
    x, n = run.x, run.b.slots
    left = _sum([z3.If(s.status[j] != FINISHED, x.prompt_len[j] + x.max_tokens[j] - 1, num(0)) for j in range(n)])
    head = pick_at(s, num(0))
    first = _sum([z3.If(head == j, s.computed[j], num(0)) for j in range(n)])
    return left - z3.If(s.r > 0, first, num(0))


def bad_ranking(run: Run, before: Snap, pre: Snap, after: Snap) -> z3.BoolRef:
    """LIVE per step: Phi is negative, grows, or fails to drop by >= 1 in a step with arrived, unfinished work
    (`before`: the state the step starts from; `pre`: after its arrivals; `after`: after its update())."""
    return z3.Or(potential(run, before) < 0, potential(run, after) > potential(run, before),
                 z3.And(pre.r + pre.w > 0, potential(run, after) > potential(run, before) - 1))


def liveness_bound(run: Run) -> Term:
    """(last arrival - 1) + sum(prompt_len + max_tokens - 1): spec.trace.liveness_bound as a term."""
    x = run.x
    return x.arrival[-1] - 1 + _sum([x.prompt_len[j] + x.max_tokens[j] - 1 for j in range(run.b.slots)])


# --- what the validation compares beyond the invariants: num_preemptions, the order of the batch --------------


def reset(run: Run, pre: Snap, mid: Snap, j: int) -> z3.BoolRef:
    """Slot j was running before the step and schedule() reset it: preempted, left waiting or admitted again from
    scratch (a sequence phase 1 kept has computed a token since it was admitted)."""
    return z3.And(pre.status[j] == RUNNING, mid.computed[j] == 0)


def bad_preemptions(run: Run, k: int) -> z3.BoolRef:
    """NP fails at step k: schedule() did not add one to num_preemptions per sequence it reset, or update()
    changed it."""
    pre, mid, post = run.pre[k], run.mid[k], run.post[k]
    victims = _sum([one_if(reset(run, pre, mid, j)) for j in range(run.b.slots)])
    return z3.Or(mid.preemptions - pre.preemptions != victims, post.preemptions != mid.preemptions)


def bad_batch_order(run: Run, k: int) -> z3.BoolRef:
    """BO fails at step k: two sequences of the batch are not in the order (running ones phase 1 kept, in running
    order; then the admitted ones, in the order of waiting after phase 1, which is the order of the queue before
    the step: victims keep their running order at the head of waiting)."""
    pre, mid, n = run.pre[k], run.mid[k], run.b.slots
    group = [z3.If(z3.And(pre.status[j] == RUNNING, z3.Not(reset(run, pre, mid, j))), num(0), num(1))
             for j in range(n)]
    pos = [position(pre, j) for j in range(n)]
    out = []
    for x in range(n):
        for y in range(n):
            if x != y:
                first = z3.Or(group[x] < group[y], z3.And(group[x] == group[y], pos[x] < pos[y]))
                out.append(z3.And(mid.times[x] > 0, mid.times[y] > 0, (mid.order[x] < mid.order[y]) != first))
    return z3.Or(*out)


# --- how much runs and who is admitted: CH and AD -----------------------------------------------------------


def bad_chunks(run: Run, k: int) -> z3.BoolRef:
    """CH fails at step k: a sequence running after schedule(), with every one before it in running order in the
    batch, runs other than min(tokens left to compute, the budget those before it left)."""
    mid, x, n = run.mid[k], run.x, run.b.slots
    running = [mid.status[j] == RUNNING for j in range(n)]
    pos = [position(mid, j) for j in range(n)]
    out = []
    for j in range(n):
        earlier = [z3.And(running[i], pos[i] < pos[j]) for i in range(n) if i != j]
        others = [i for i in range(n) if i != j]
        spent = _sum([z3.If(e, mid.sched[i], num(0)) for e, i in zip(earlier, others, strict=True)])
        all_in = z3.And(*[z3.Implies(e, mid.times[i] > 0) for e, i in zip(earlier, others, strict=True)])
        left, tokens = x.budget - spent, x.prompt_len[j] + mid.out[j] - mid.computed[j]
        want = z3.If(tokens < left, tokens, left)
        out.append(z3.And(running[j], all_in, mid.times[j] > 0, mid.sched[j] != want))
    return z3.Or(*out)


def bad_admission(run: Run, k: int) -> z3.BoolRef:
    """AD fails at step k: after schedule() the head of waiting is held by no gate: budget is left, a seat of
    max_num_seqs is free and the blocks for its chunk are free (under vllm-v1 also those for its whole sequence,
    and the step preempted nobody)."""
    pre, mid, x, n = run.pre[k], run.mid[k], run.x, run.b.slots
    head = pick_at(mid, mid.r)

    def of_head(values: tuple[Term, ...]) -> Term:
        return _sum([z3.If(head == j, values[j], num(0)) for j in range(n)])
    left, free = x.budget - _sum(list(mid.sched)), x.num_blocks - mid.used
    tokens, computed, blocks = of_head(x.prompt_len) + of_head(mid.out), of_head(mid.computed), of_head(mid.blocks)
    chunk = z3.If(tokens - computed < left, tokens - computed, left)
    held = [left <= 0, mid.r >= x.max_num_seqs, run.bf(computed + chunk) - blocks > free]
    if run.b.policy.reserve_full_isl:
        held.append(run.bf(tokens) - blocks > free)
    if run.b.policy.holds_after_preemption:
        held.append(mid.preemptions > pre.preemptions)
    return z3.And(mid.w > 0, z3.Not(z3.Or(*held)))


def bad_finish(run: Run, k: int) -> z3.BoolRef:
    """FR fails at step k: update() finished a sequence that did not sample a token reaching max_tokens or eos, or
    did not finish one that did."""
    mid, post, x = run.mid[k], run.post[k], run.x
    out = []
    for j in range(run.b.slots):
        due = z3.And(post.drawn[j] > mid.drawn[j], z3.Or(run.eos_next(mid, j), post.out[j] >= x.max_tokens[j]))
        out.append(z3.And(mid.status[j] != FINISHED, post.status[j] == FINISHED) != due)
    return z3.Or(*out)
