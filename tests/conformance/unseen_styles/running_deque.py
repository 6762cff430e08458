"""P07 scheduler: the running queue is a collections.deque.

Preemption always takes the tail of running, so a deque (pop from the right,
appendleft onto waiting) reads naturally. Phase 1 still walks running by index.
"""
import enum
from collections import deque


class SequenceStatus(enum.Enum):
    WAITING = enum.auto()
    RUNNING = enum.auto()
    FINISHED = enum.auto()


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

    def __repr__(self):
        return (f"Sequence({self.seq_id!r}, nc={self.num_computed}, "
                f"nt={self.num_tokens}, nb={self.num_blocks}, {self.status.name})")


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
        self.running = deque()
        self.finished = []
        self.blocks_used = 0
        self.num_preemptions = 0
        self._last_batch = []   # (seq, n) pairs, private copy of the batch

    # -- helpers -----------------------------------------------------------
    def _blocks_for(self, t):
        return -(-t // self.block_size)

    def _try_grow(self, seq, t):
        need = self._blocks_for(t) - seq.num_blocks
        if need <= 0:
            return True
        if self.blocks_used + need <= self.num_blocks:
            seq.num_blocks += need
            self.blocks_used += need
            return True
        return False

    def _preempt_tail(self):
        victim = self.running.pop()
        self.blocks_used -= victim.num_blocks
        victim.num_blocks = 0
        victim.num_computed = 0
        victim.status = SequenceStatus.WAITING
        self.waiting.appendleft(victim)
        self.num_preemptions += 1
        return victim

    # -- interface ---------------------------------------------------------
    def add(self, seq):
        self.waiting.append(seq)

    def schedule(self):
        budget = self.max_num_batched_tokens
        batch = []

        # phase 1: running sequences, by index
        i = 0
        while i < len(self.running) and budget > 0:
            seq = self.running[i]
            n = min(seq.num_tokens - seq.num_computed, budget)
            skipped = False
            while not self._try_grow(seq, seq.num_computed + n):
                if self._preempt_tail() is seq:
                    skipped = True
                    break
            if skipped:
                continue
            batch.append((seq, n))
            budget -= n
            i += 1

        # phase 2: waiting sequences, strict FCFS
        while (self.waiting and budget > 0
               and len(self.running) < self.max_num_seqs):
            seq = self.waiting[0]
            n = min(seq.num_tokens - seq.num_computed, budget)
            if not self._try_grow(seq, seq.num_computed + n):
                break
            self.waiting.popleft()
            seq.status = SequenceStatus.RUNNING
            self.running.append(seq)
            batch.append((seq, n))
            budget -= n

        self._last_batch = batch
        return {seq.seq_id: n for seq, n in batch}

    def update(self):
        batch, self._last_batch = self._last_batch, []
        done = []
        for seq, n in batch:
            seq.num_computed += n
            if seq.num_computed != seq.num_tokens:
                continue            # chunked prefill not caught up yet
            tok = self.sample_fn(seq)
            seq.output.append(tok)
            if (self.eos is not None and tok == self.eos) \
                    or len(seq.output) >= seq.max_tokens:
                seq.status = SequenceStatus.FINISHED
                self.running.remove(seq)
                self.blocks_used -= seq.num_blocks
                seq.num_blocks = 0
                self.finished.append(seq)
                done.append(seq)
        return done
