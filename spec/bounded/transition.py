"""schedule() and update() over symbolic states (see ``encode``), unrolled for N slots and K steps.

``Run`` builds the whole run: ``pre[k]`` after step k's arrivals, ``mid[k]`` after
its schedule(), ``post[k]`` after its update() (index 0 of ``post`` is the empty
initial state). Each function follows the rule of spec/rules.py with the same id;
``spec.bounded.validate`` checks that they do, step by step, against spec.rules.
"""

from __future__ import annotations

from dataclasses import replace

import z3

from spec.bounded.encode import (
    FINISHED,
    RUNNING,
    UNARRIVED,
    WAITING,
    Bounds,
    Inputs,
    Snap,
    Term,
    blocks_for,
    merge,
    num,
    one_if,
    pick,
    put,
    total,
    var,
)

# Faults of spec/faults.py that the encoding can carry (a second statement of the bug, so validate.py checks it
# against the patched spec): the relational induction of OUT must fail on it.
ENCODED_FAULTS = ("preempt_clears_output",)


class Run:
    """The unrolled run of the model on symbolic inputs."""

    rounds = 0  # extra (or, negative, fewer) rounds of each unrolled loop; 0 is the exact unrolling

    def __init__(self, bounds: Bounds, inputs: Inputs, tag: str = "", init: Snap | None = None,
                 start: Term | int = 1, fault: str | None = None,
                 first_eos: tuple[Term, ...] | None = None) -> None:
        """Unroll bounds.steps steps from `init` (default: empty), the first one numbered `start`.

        `fault`: one of ENCODED_FAULTS, encoded as spec/faults.py states it (validate.py checks the two agree).
        `first_eos`: per slot, the index of the first draw that is eos (instead of the table inputs.eos)."""
        if fault is not None and fault not in ENCODED_FAULTS:
            raise ValueError(f"fault {fault!r} has no encoding; encoded: {', '.join(ENCODED_FAULTS)} (other faults "
                             "are checked by model checking the patched spec: prove --inject)")
        self.b, self.x, self.tag = bounds, inputs, tag
        self.fault, self.first_eos = fault, first_eos
        self.defs: list[z3.BoolRef] = []  # definitions of the named intermediate terms
        self.unwind: list[list[z3.BoolRef]] = []  # per step; each false: one more loop round would change nothing
        self.preempted_now: list[z3.BoolRef] = []  # per step: phase 1 preempted someone
        self.budget_out: list[z3.BoolRef] = []  # per step: phase 1 stopped with running sequences left over
        self.multi_victim: list[z3.BoolRef] = []  # per step: a non-last running sequence needed 2+ victims
        self.preempted_other: list[z3.BoolRef] = []  # per step: a sequence preempted another to grow (P1.preempt)
        self.preempted_self: list[z3.BoolRef] = []  # per step: a sequence preempted itself (P1.skip_self)
        self.held_whole: list[z3.BoolRef] = []  # per step: vllm-v1 kept the head waiting, its whole did not fit
        self._count = 0
        n, zero = bounds.slots, num(0)
        z = tuple(zero for _ in range(n))
        given, init = init, Snap(tuple(num(UNARRIVED) for _ in range(n)), z, z, z, z, z, z, z,
                    tuple(num(n) for _ in range(n)), zero, zero, zero, zero, zero)
        init = init if given is None else given
        self.pre: list[Snap] = [init]
        self.mid: list[Snap] = [init]
        self.post: list[Snap] = [init]
        self.marks = [0]  # len(defs) after each step: a query about step k needs only defs[:marks[k]]
        for k in range(1, bounds.steps + 1):
            self.step(start + (k - 1))
            self.marks.append(len(self.defs))

    # --- naming and helpers ----------------------------------------------------------------

    def name(self, s: Snap) -> Snap:
        """Replace every field by a fresh constant defined equal to it: keeps the terms small."""
        self._count += 1
        pre = f"{self.tag}_{self._count}"

        def one(label: str, t: Term) -> Term:
            v = var(f"{label}{pre}")
            self.defs.append(v == t)
            return v
        return Snap(*(tuple(one(f"{f}{j}_", t) for j, t in enumerate(getattr(s, f))) if isinstance(getattr(s, f), tuple)
                      else one(f"{f}_", getattr(s, f)) for f in Snap.__slots__))

    def scalar(self, t: Term, label: str) -> Term:
        self._count += 1
        v = var(f"{label}{self.tag}_{self._count}")
        self.defs.append(v == t)
        return v

    def bf(self, t: Term) -> Term:
        return blocks_for(self.x.block_size, t, self.b)

    def need(self, s: Snap, seq: Term, tokens: Term) -> Term:
        return self.bf(tokens) - pick(s.blocks, seq)

    def fits(self, s: Snap, seq: Term, tokens: Term) -> z3.BoolRef:
        """try_grow would succeed."""
        need = self.need(s, seq, tokens)
        return z3.Or(need <= 0, s.used + need <= self.x.num_blocks)

    def grow_and_batch(self, s: Snap, seq: Term, tokens: Term, n: Term) -> Snap:
        """try_grow's success branch, then batch[seq] = n."""
        need = self.need(s, seq, tokens)
        need = z3.If(need > 0, need, num(0))
        return replace(s, blocks=put(s.blocks, seq, pick(s.blocks, seq) + need), used=s.used + need,
                       sched=put(s.sched, seq, n), times=put(s.times, seq, pick(s.times, seq) + 1),
                       order=put(s.order, seq, z3.If(pick(s.times, seq) > 0, pick(s.order, seq), s.size)),
                       size=s.size + one_if(pick(s.times, seq) == 0))

    def preempt(self, s: Snap) -> Snap:
        """Preempt running[-1]: to the head of waiting (the queue is unchanged: it is the first waiting entry),
        KV freed, output kept."""
        v = pick(s.queue, s.r - 1)
        out = put(s.out, v, num(0)) if self.fault == "preempt_clears_output" else s.out
        return replace(s, status=put(s.status, v, num(WAITING)), blocks=put(s.blocks, v, num(0)),
                       computed=put(s.computed, v, num(0)), used=s.used - pick(s.blocks, v),
                       r=s.r - 1, w=s.w + 1, preemptions=s.preemptions + 1, out=out)

    def chunk(self, s: Snap, seq: Term, budget: Term) -> tuple[Term, Term, Term]:
        """(remaining, n, num_computed + n: the tokens the blocks are sized for)."""
        tokens = pick(self.x.prompt_len, seq) + pick(s.out, seq)
        rem = tokens - pick(s.computed, seq)
        n = z3.If(rem < budget, rem, budget)
        return rem, n, pick(s.computed, seq) + n

    # --- one step ------------------------------------------------------------------------

    def step(self, k: Term | int) -> None:
        s = self.post[-1]
        for slot in range(self.b.slots):  # add(): arrivals join the waiting tail, in slot order
            c = self.x.arrival[slot] == k
            s = merge(c, replace(s, status=put(s.status, num(slot), num(WAITING)),
                                 queue=put(s.queue, s.r + s.w, num(slot)), w=s.w + 1), s)
        s = self.name(s)
        self.pre.append(s)
        self.unwind.append([])
        s, budget = self.phase1(s)
        s = self.phase2(s, self.admission_budget(budget))
        self.mid.append(s)
        self.post.append(self.update(s))

    def phase1(self, s: Snap) -> tuple[Snap, Term]:
        """P1: running by index; while try_grow fails preempt running[-1]; skip self without advancing."""
        n_slots, budget, i = self.b.slots, self.x.budget, num(0)
        start = s.preemptions
        multi = other = itself = z3.BoolVal(False)
        for _ in range(n_slots + self.rounds):
            g = z3.And(i < s.r, budget > 0)
            seq = pick(s.queue, i)
            _, n, tokens = self.chunk(s, seq, budget)
            skipped, ok = z3.BoolVal(False), self.fits(s, seq, tokens)
            last = s.r - 1
            for attempt in range(n_slots + self.rounds):
                c = z3.And(g, z3.Not(ok), z3.Not(skipped))
                if attempt == 1:
                    multi = z3.Or(multi, z3.And(c, i < last))
                victim = pick(s.queue, s.r - 1)
                other = z3.Or(other, z3.And(c, victim != seq))
                itself = z3.Or(itself, z3.And(c, victim == seq))
                s = merge(c, self.preempt(s), s)
                # P1.skip_self: the victim is the sequence itself; i stays
                skipped = z3.Or(skipped, z3.And(c, victim == seq))
                ok = z3.If(c, self.fits(s, seq, tokens), ok)
            self.unwind[-1].append(z3.And(g, z3.Not(ok), z3.Not(skipped)))
            do = z3.And(g, ok, z3.Not(skipped))  # P1: it fits; schedule n tokens of it
            s = self.name(merge(do, self.grow_and_batch(s, seq, tokens, n), s))
            budget = self.scalar(z3.If(do, budget - n, budget), "budget")
            i = self.scalar(z3.If(do, i + 1, i), "i")
        self.unwind[-1].append(z3.And(i < s.r, budget > 0))
        self.preempted_now.append(s.preemptions > start)
        self.budget_out.append(i < s.r)
        self.multi_victim.append(multi)
        self.preempted_other.append(other)
        self.preempted_self.append(itself)
        return s, budget

    def admission_budget(self, budget: Term) -> Term:
        """What phase 2 may use (admits_after_phase1): all that is left, but none under vllm-v1 after a preemption."""
        if self.b.policy.holds_after_preemption:  # P2.policy
            return self.scalar(z3.If(self.preempted_now[-1], num(0), budget), "admission_budget")
        return budget

    def phase2(self, s: Snap, budget: Term) -> Snap:
        """P2: admit the waiting head while it fits, strictly FCFS; stop at max_num_seqs (P2.full)."""
        stop: z3.BoolRef = z3.BoolVal(False)
        held: z3.BoolRef = z3.BoolVal(False)
        rounds = self.b.slots + self.rounds
        for _ in range(rounds + 1):
            full = s.r >= self.x.max_num_seqs
            g = z3.And(z3.Not(stop), s.w > 0, budget > 0, z3.Not(full))
            if _ == rounds:
                self.unwind[-1].append(g)
                break
            stop = z3.Or(stop, full)  # P2.full
            head = pick(s.queue, s.r)
            _rem, n, tokens = self.chunk(s, head, budget)
            fail = z3.Not(self.fits(s, head, tokens))
            if self.b.policy.reserve_full_isl:  # P2.whole: every token of the head must fit, only the chunk is taken
                whole = z3.Not(self.fits(s, head, pick(self.x.prompt_len, head) + pick(s.out, head)))
                held = z3.Or(held, z3.And(g, whole))
                fail = z3.Or(fail, whole)
            stop = z3.Or(stop, fail)  # P2.stop: the head does not fit; nobody behind it may jump the queue
            do = z3.And(g, z3.Not(fail))  # P2: admit the head with n tokens
            a = self.grow_and_batch(s, head, tokens, n)
            a = replace(a, status=put(a.status, head, num(RUNNING)), r=s.r + 1, w=s.w - 1)
            s = self.name(merge(do, a, s))
            budget = self.scalar(z3.If(do, budget - n, budget), "budget")
        self.held_whole.append(held)
        return s

    def eos_next(self, s: Snap, slot: int) -> z3.BoolRef:
        """Whether the next token `slot` draws from state `s` is eos."""
        if self.first_eos is not None:  # only the first eos matters: the sequence finishes on it
            return s.drawn[slot] == self.first_eos[slot]
        eos_row = self.x.eos[slot]  # one entry: a free choice for this step's token (induction)
        return eos_row[0] if len(eos_row) == 1 else pick(eos_row, s.drawn[slot], z3.BoolVal(False))

    def update(self, s: Snap) -> Snap:
        """U: num_computed += n; draw a token when caught up; finish on eos or max_tokens, freeing blocks."""
        n_slots = self.b.slots
        status, computed, blocks, out, drawn, used, fin = [], [], [], [], [], s.used, []
        for slot in range(n_slots):
            on = z3.And(s.status[slot] == RUNNING, s.times[slot] > 0)
            nc = s.computed[slot] + s.sched[slot]
            tokens = self.x.prompt_len[slot] + s.out[slot]
            sample = z3.And(on, nc >= tokens)  # U.sample; else U.partial
            eos = self.eos_next(s, slot)
            length = s.out[slot] + one_if(sample)  # the token is appended first
            done = z3.And(sample, z3.Or(eos, length >= self.x.max_tokens[slot]))  # U.finish
            fin.append(done)
            status.append(z3.If(done, num(FINISHED), s.status[slot]))
            computed.append(z3.If(on, nc, s.computed[slot]))
            blocks.append(z3.If(done, num(0), s.blocks[slot]))
            out.append(length)
            drawn.append(s.drawn[slot] + one_if(sample))
            used = z3.If(done, used - s.blocks[slot], used)
        queue = s.queue
        for j in range(n_slots - 1, -1, -1):  # remove finished entries from running, back to front
            gone = z3.And(j < s.r, pick(tuple(fin), queue[j], z3.BoolVal(False)))
            ext = queue + (num(n_slots),)
            queue = tuple(z3.If(gone, ext[t + 1], queue[t]) if t >= j else queue[t] for t in range(n_slots))
        zero = tuple(num(0) for _ in range(n_slots))
        r = s.r - total(one_if(f) for f in fin)
        return self.name(Snap(tuple(status), tuple(computed), tuple(blocks), tuple(out), tuple(drawn), zero, zero,
                              zero, queue, r, s.w, used, s.preemptions, num(0)))


__all__ = ["ENCODED_FAULTS", "Run"]
