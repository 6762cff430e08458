"""p07_scheduler with a real block allocator.

Blocks are ids 0..num_blocks-1 on an explicit free list (a stack); every
sequence owns a block table (list of ids).  num_blocks of a sequence is
len(block_table) and blocks_used of the scheduler is total - len(free list),
both read-only properties, so the two counters can never disagree.
"""
import enum
from collections import deque


class SequenceStatus(enum.Enum):
    WAITING = "waiting"
    RUNNING = "running"
    FINISHED = "finished"


class Sequence:
    def __init__(self, seq_id, prompt_len, max_tokens):
        self.seq_id = seq_id
        self.prompt_len = prompt_len
        self.max_tokens = max_tokens
        self.output = []
        self.num_computed = 0
        self.block_table = []
        self.status = SequenceStatus.WAITING

    @property
    def num_blocks(self):
        return len(self.block_table)

    @property
    def num_tokens(self):
        return self.prompt_len + len(self.output)


class BlockAllocator:
    def __init__(self, total, block_size):
        self.total = total
        self.block_size = block_size
        self.free = list(range(total - 1, -1, -1))   # pop() hands out 0, 1, 2, ...

    @property
    def used(self):
        return self.total - len(self.free)

    def ensure(self, table, num_tokens):
        """Make `table` hold enough blocks for num_tokens; all or nothing."""
        want = -(-num_tokens // self.block_size)
        missing = want - len(table)
        if missing <= 0:
            return True
        if missing > len(self.free):
            return False
        for _ in range(missing):
            table.append(self.free.pop())
        return True

    def release(self, table):
        while table:
            self.free.append(table.pop())


class Scheduler:
    def __init__(self, num_blocks, block_size, max_num_seqs,
                 max_num_batched_tokens, sample_fn, eos=None):
        self.alloc = BlockAllocator(num_blocks, block_size)
        self.max_num_seqs = max_num_seqs
        self.max_num_batched_tokens = max_num_batched_tokens
        self.sample_fn = sample_fn
        self.eos = eos
        self.waiting = deque()
        self.running = []
        self.finished = []
        self.num_preemptions = 0
        self._scheduled = []

    @property
    def blocks_used(self):
        return self.alloc.used

    def add(self, seq):
        self.waiting.append(seq)

    def _preempt(self):
        victim = self.running.pop()
        self.alloc.release(victim.block_table)
        victim.num_computed = 0
        victim.status = SequenceStatus.WAITING
        self.waiting.appendleft(victim)
        self.num_preemptions += 1
        return victim

    def schedule(self):
        budget = self.max_num_batched_tokens
        out = []
        i = 0
        while i < len(self.running) and budget > 0:
            seq = self.running[i]
            n = min(seq.num_tokens - seq.num_computed, budget)
            while not self.alloc.ensure(seq.block_table, seq.num_computed + n):
                if self._preempt() is seq:
                    n = 0
                    break
            if n == 0:
                continue
            out.append((seq, n))
            budget -= n
            i += 1

        while self.waiting and budget > 0 and len(self.running) < self.max_num_seqs:
            seq = self.waiting[0]
            n = min(seq.num_tokens - seq.num_computed, budget)
            if not self.alloc.ensure(seq.block_table, seq.num_computed + n):
                break
            self.waiting.popleft()
            seq.status = SequenceStatus.RUNNING
            self.running.append(seq)
            out.append((seq, n))
            budget -= n

        self._scheduled = out
        return {seq.seq_id: n for seq, n in out}

    def update(self):
        finished_now = []
        for seq, n in self._scheduled:
            seq.num_computed += n
            if seq.num_computed == seq.num_tokens:
                token = self.sample_fn(seq)
                seq.output.append(token)
                if (self.eos is not None and token == self.eos) \
                        or len(seq.output) >= seq.max_tokens:
                    seq.status = SequenceStatus.FINISHED
                    self.running.remove(seq)
                    self.alloc.release(seq.block_table)
                    self.finished.append(seq)
                    finished_now.append(seq)
        self._scheduled = []
        return finished_now
