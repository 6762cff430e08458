"""P07 scheduler: running and finished are immutable tuples.

Every change builds a new tuple and rebinds the attribute, so a snapshot
someone holds of a queue never changes under them. waiting stays a deque.
"""
from collections import deque
from enum import Enum


class SequenceStatus(Enum):
    WAITING = 0
    RUNNING = 1
    FINISHED = 2


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
        self.running = ()
        self.finished = ()
        self.blocks_used = 0
        self.num_preemptions = 0
        self._scheduled = ()

    def _blocks_for(self, t):
        return (t + self.block_size - 1) // self.block_size

    def _try_grow(self, seq, t):
        need = self._blocks_for(t) - seq.num_blocks
        if need <= 0:
            return True
        if self.blocks_used + need > self.num_blocks:
            return False
        seq.num_blocks += need
        self.blocks_used += need
        return True

    def _preempt_last(self):
        victim = self.running[-1]
        self.running = self.running[:-1]
        self.blocks_used -= victim.num_blocks
        victim.num_blocks = 0
        victim.num_computed = 0
        victim.status = SequenceStatus.WAITING
        self.waiting.appendleft(victim)
        self.num_preemptions += 1
        return victim

    def add(self, seq):
        self.waiting.append(seq)

    def schedule(self):
        budget = self.max_num_batched_tokens
        scheduled = ()

        i = 0
        while i < len(self.running) and budget > 0:
            seq = self.running[i]
            n = min(seq.num_tokens - seq.num_computed, budget)
            while not self._try_grow(seq, seq.num_computed + n):
                if self._preempt_last() is seq:
                    break
            else:
                scheduled += ((seq, n),)
                budget -= n
                i += 1

        while self.waiting and budget > 0 and len(self.running) < self.max_num_seqs:
            head = self.waiting[0]
            n = min(head.num_tokens - head.num_computed, budget)
            if not self._try_grow(head, head.num_computed + n):
                break
            self.waiting.popleft()
            head.status = SequenceStatus.RUNNING
            self.running = self.running + (head,)
            scheduled += ((head, n),)
            budget -= n

        self._scheduled = scheduled
        return {seq.seq_id: n for seq, n in scheduled}

    def update(self):
        scheduled, self._scheduled = self._scheduled, ()
        finished_now = []
        for seq, n in scheduled:
            seq.num_computed += n
            if seq.num_computed == seq.num_tokens:
                token = self.sample_fn(seq)
                seq.output.append(token)
                hit_eos = self.eos is not None and token == self.eos
                if hit_eos or len(seq.output) >= seq.max_tokens:
                    seq.status = SequenceStatus.FINISHED
                    self.running = tuple(s for s in self.running if s is not seq)
                    self.blocks_used -= seq.num_blocks
                    seq.num_blocks = 0
                    self.finished = self.finished + (seq,)
                    finished_now.append(seq)
        return finished_now
