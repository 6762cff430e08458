"""P07 scheduler: the queues are small subclasses of list and deque.

SeqList(list) and SeqQueue(deque) carry the few queue operations the rules
name (latest, drop, head, push_front), so schedule() reads like the rules.
"""
import enum
from collections import deque


class SequenceStatus(enum.Enum):
    WAITING = "WAITING"
    RUNNING = "RUNNING"
    FINISHED = "FINISHED"


class SeqList(list):
    """A list of sequences in admission/finishing order."""

    def latest(self):
        return self[-1]

    def drop(self, seq):
        for k, s in enumerate(self):
            if s is seq:
                del self[k]
                return
        raise ValueError(f"{seq.seq_id} not in queue")

    def total_blocks(self):
        return sum(s.num_blocks for s in self)


class SeqQueue(deque):
    """FIFO of waiting sequences; index 0 is the head."""

    def head(self):
        return self[0]

    def push_front(self, seq):
        self.appendleft(seq)

    def push_back(self, seq):
        self.append(seq)

    def pop_head(self):
        return self.popleft()


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

    @property
    def gap(self):
        return self.num_tokens - self.num_computed


class Scheduler:
    def __init__(self, num_blocks, block_size, max_num_seqs,
                 max_num_batched_tokens, sample_fn, eos=None):
        self.num_blocks = num_blocks
        self.block_size = block_size
        self.max_num_seqs = max_num_seqs
        self.max_num_batched_tokens = max_num_batched_tokens
        self.sample_fn = sample_fn
        self.eos = eos
        self.waiting = SeqQueue()
        self.running = SeqList()
        self.finished = SeqList()
        self.blocks_used = 0
        self.num_preemptions = 0
        self._batch = SeqList()

    def blocks_for(self, t):
        q, r = divmod(t, self.block_size)
        return q + (1 if r else 0)

    def try_grow(self, seq, t):
        need = self.blocks_for(t) - seq.num_blocks
        if need <= 0:
            return True
        if self.blocks_used + need <= self.num_blocks:
            self.blocks_used += need
            seq.num_blocks += need
            return True
        return False

    def preempt(self):
        victim = self.running.latest()
        self.running.drop(victim)
        self.blocks_used -= victim.num_blocks
        victim.num_blocks = 0
        victim.num_computed = 0
        victim.status = SequenceStatus.WAITING
        self.waiting.push_front(victim)
        self.num_preemptions += 1
        return victim

    def add(self, seq):
        self.waiting.push_back(seq)

    def schedule(self):
        budget = self.max_num_batched_tokens
        batch = SeqList()

        i = 0
        while i < len(self.running) and budget > 0:
            seq = self.running[i]
            n = min(seq.gap, budget)
            fits = True
            while not self.try_grow(seq, seq.num_computed + n):
                victim = self.preempt()
                if victim is seq:
                    fits = False
                    break
            if fits:
                batch.append((seq, n))
                budget -= n
                i += 1

        while self.waiting and budget > 0 and len(self.running) < self.max_num_seqs:
            seq = self.waiting.head()
            n = min(seq.gap, budget)
            if not self.try_grow(seq, seq.num_computed + n):
                break
            self.waiting.pop_head()
            seq.status = SequenceStatus.RUNNING
            self.running.append(seq)
            batch.append((seq, n))
            budget -= n

        self._batch = batch
        return dict((seq.seq_id, n) for seq, n in batch)

    def update(self):
        batch = self._batch
        self._batch = SeqList()
        out = []
        for seq, n in batch:
            seq.num_computed += n
            if seq.num_computed < seq.num_tokens:
                continue
            tok = self.sample_fn(seq)
            seq.output.append(tok)
            if (self.eos is not None and tok == self.eos) or len(seq.output) >= seq.max_tokens:
                seq.status = SequenceStatus.FINISHED
                self.running.drop(seq)
                self.blocks_used -= seq.num_blocks
                seq.num_blocks = 0
                self.finished.append(seq)
                out.append(seq)
        return out
