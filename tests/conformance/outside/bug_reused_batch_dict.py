"""P07 scheduler: a block ledger, generator phases and an event log.

schedule() chains two generators (phase 1, phase 2) that yield
(sequence, n) rows while spending a shared Step budget; every state
change is also recorded in an event log (handy when debugging a trace).
"""
import enum
import itertools
from collections import deque


class SequenceStatus(enum.Enum):
    WAITING = 0
    RUNNING = 1
    FINISHED = 2


class Sequence:
    __slots__ = ("seq_id", "prompt_len", "max_tokens", "output",
                 "num_computed", "num_blocks", "status")

    def __init__(self, seq_id, prompt_len, max_tokens):
        self.seq_id = seq_id
        self.prompt_len = prompt_len
        self.max_tokens = max_tokens
        self.output = []
        self.num_computed = 0
        self.num_blocks = 0
        self.status = SequenceStatus.WAITING

    @property
    def num_tokens(self):
        return self.prompt_len + len(self.output)

    @property
    def gap(self):
        return self.num_tokens - self.num_computed


class BlockLedger:
    """Counts KV blocks; a sequence's share lives in seq.num_blocks."""

    def __init__(self, capacity, block_size):
        self.capacity = capacity
        self.block_size = block_size
        self.used = 0

    def blocks_for(self, tokens):
        q, r = divmod(tokens, self.block_size)
        return q + (1 if r else 0)

    def try_grow(self, seq, tokens):
        need = self.blocks_for(tokens) - seq.num_blocks
        if need <= 0:
            return True
        if self.used + need > self.capacity:
            return False
        self.used += need
        seq.num_blocks += need
        return True

    def release(self, seq):
        self.used -= seq.num_blocks
        seq.num_blocks = 0


class Step:
    def __init__(self, budget):
        self.budget = budget
        self.rows = []

    def take(self, seq, n):
        self.rows.append((seq, n))
        self.budget -= n


class Scheduler:
    def __init__(self, num_blocks, block_size, max_num_seqs,
                 max_num_batched_tokens, sample_fn, eos=None):
        self.ledger = BlockLedger(num_blocks, block_size)
        self.max_num_seqs = max_num_seqs
        self.max_num_batched_tokens = max_num_batched_tokens
        self.sample_fn = sample_fn
        self.eos = eos

        self.waiting = deque()
        self.running = []
        self.finished = []
        self.num_preemptions = 0
        self.log = []            # (step, event, seq_id, detail)
        self.step_no = 0
        self._pending = ()       # rows of the last schedule()
        self._batch = {}         # reused every step: one dict, no garbage

    @property
    def blocks_used(self):
        return self.ledger.used

    def _event(self, kind, seq, detail=None):
        self.log.append((self.step_no, kind, seq.seq_id, detail))

    # -- phases ------------------------------------------------------------
    def _preempt_latest(self):
        victim = self.running.pop()
        self.ledger.release(victim)
        victim.num_computed = 0
        victim.status = SequenceStatus.WAITING
        self.waiting.appendleft(victim)
        self.num_preemptions += 1
        self._event("preempt", victim)
        return victim

    def _phase1(self, step):
        i = 0
        while i < len(self.running) and step.budget > 0:
            seq = self.running[i]
            n = min(seq.gap, step.budget)
            if self.ledger.try_grow(seq, seq.num_computed + n):
                yield seq, n
                i += 1
            else:
                self._preempt_latest()  # may be seq itself: then i stays

    def _phase2(self, step):
        while self.waiting and step.budget > 0:
            if len(self.running) == self.max_num_seqs:
                return
            head = self.waiting[0]
            n = min(head.gap, step.budget)
            if not self.ledger.try_grow(head, n):
                return
            self.waiting.popleft()
            head.status = SequenceStatus.RUNNING
            self.running.append(head)
            self._event("admit", head, n)
            yield head, n

    # -- API -----------------------------------------------------------------
    def add(self, seq):
        self.waiting.append(seq)
        self._event("add", seq)

    def schedule(self):
        self.step_no += 1
        step = Step(self.max_num_batched_tokens)
        for seq, n in itertools.chain(self._phase1(step), self._phase2(step)):
            step.take(seq, n)
        self._pending = tuple(step.rows)
        self._batch.clear()
        for seq, n in step.rows:
            self._batch[seq.seq_id] = n
        return self._batch

    def _finish(self, seq):
        self.running.remove(seq)
        self.ledger.release(seq)
        seq.status = SequenceStatus.FINISHED
        self.finished.append(seq)
        self._event("finish", seq, len(seq.output))

    def update(self):
        out = []
        rows, self._pending = self._pending, ()
        for seq, n in rows:
            seq.num_computed += n
            if seq.num_computed < seq.num_tokens:
                continue
            tok = self.sample_fn(seq)
            seq.output.append(tok)
            if len(seq.output) >= seq.max_tokens or (
                    self.eos is not None and tok == self.eos):
                self._finish(seq)
                out.append(seq)
        return out
