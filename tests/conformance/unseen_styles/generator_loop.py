"""P07 scheduler: each scheduling phase is a generator.

_phase1() and _phase2() yield (seq, n) for every sequence they schedule;
schedule() consumes them, records the batch and spends the shared budget.
Because a generator resumes only after the consumer has spent the previous
chunk, each phase sees the budget that is really left. Plain loops, no
recursion.
"""
import enum
from collections import deque


class SequenceStatus(enum.Enum):
    WAITING = 1
    RUNNING = 2
    FINISHED = 3


class Sequence:
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


class Scheduler:
    def __init__(self, num_blocks, block_size, max_num_seqs,
                 max_num_batched_tokens, sample_fn, eos=None):
        self.num_blocks = num_blocks
        self.block_size = block_size
        self.max_num_seqs = max_num_seqs
        self.max_num_batched_tokens = max_num_batched_tokens
        self.sample_fn = sample_fn
        self.eos = eos
        self.waiting = deque()
        self.running = []
        self.finished = []
        self.blocks_used = 0
        self.num_preemptions = 0
        self._budget = 0
        self._pending = []

    # -- block accounting ----------------------------------------------------
    def _blocks_for(self, t):
        return (t + self.block_size - 1) // self.block_size

    def _try_grow(self, seq, t):
        need = self._blocks_for(t) - seq.num_blocks
        if need <= 0:
            return True
        if self.blocks_used + need <= self.num_blocks:
            seq.num_blocks += need
            self.blocks_used += need
            return True
        return False

    def _preempt(self):
        victim = self.running.pop()
        self.blocks_used -= victim.num_blocks
        victim.num_blocks = 0
        victim.num_computed = 0
        victim.status = SequenceStatus.WAITING
        self.waiting.appendleft(victim)
        self.num_preemptions += 1
        return victim

    # -- the two phases --------------------------------------------------------
    def _phase1(self):
        i = 0
        while i < len(self.running) and self._budget > 0:
            seq = self.running[i]
            n = min(seq.num_tokens - seq.num_computed, self._budget)
            if self._fit_or_preempt(seq, n):
                yield seq, n          # consumer spends n before we resume
                i += 1
            # else: seq preempted itself; running is shorter, i stays

    def _fit_or_preempt(self, seq, n):
        while not self._try_grow(seq, seq.num_computed + n):
            if self._preempt() is seq:
                return False
        return True

    def _phase2(self):
        while (self.waiting and self._budget > 0
               and len(self.running) < self.max_num_seqs):
            seq = self.waiting[0]
            n = min(seq.num_tokens - seq.num_computed, self._budget)
            if not self._try_grow(seq, seq.num_computed + n):
                return
            self.waiting.popleft()
            seq.status = SequenceStatus.RUNNING
            self.running.append(seq)
            yield seq, n

    # -- interface -------------------------------------------------------------
    def add(self, seq):
        self.waiting.append(seq)

    def schedule(self):
        self._budget = self.max_num_batched_tokens
        pending = []
        for phase in (self._phase1, self._phase2):
            for seq, n in phase():
                pending.append((seq, n))
                self._budget -= n
        self._pending = pending
        return {seq.seq_id: n for seq, n in pending}

    def _apply(self):
        for seq, n in self._pending:
            seq.num_computed += n
            if seq.num_computed < seq.num_tokens:
                continue
            tok = self.sample_fn(seq)
            seq.output.append(tok)
            if (self.eos is not None and tok == self.eos) \
                    or len(seq.output) >= seq.max_tokens:
                yield seq

    def update(self):
        done = []
        for seq in self._apply():
            seq.status = SequenceStatus.FINISHED
            self.running.remove(seq)
            self.blocks_used -= seq.num_blocks
            seq.num_blocks = 0
            self.finished.append(seq)
            done.append(seq)
        self._pending = []
        return done
