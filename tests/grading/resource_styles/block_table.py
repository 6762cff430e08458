"""ok_blocktable: real paged-KV bookkeeping with block ids.

Unusual: the cache is a free list of physical block ids; each Sequence holds a list
of block ids and num_blocks is a read-only property len(block_table); blocks_used is a
property (total - free).  num_computed is stored under another name and exposed as a
property.  Sequences use __slots__.  schedule() returns an OrderedDict subclass whose
counts are an int subclass; waiting is a plain list (pop(0)).
"""
import enum
from collections import OrderedDict


class SequenceStatus(enum.Enum):
    WAITING = "w"
    RUNNING = "r"
    FINISHED = "f"


class Count(int):
    def __repr__(self):
        return "Count(%d)" % int(self)


class Batch(OrderedDict):
    pass


class Sequence:
    __slots__ = ("seq_id", "prompt_len", "max_tokens", "output", "_computed", "block_table", "status")

    def __init__(self, seq_id, prompt_len, max_tokens):
        self.seq_id = seq_id
        self.prompt_len = prompt_len
        self.max_tokens = max_tokens
        self.output = []
        self._computed = 0
        self.block_table = []
        self.status = SequenceStatus.WAITING

    @property
    def num_computed(self):
        return self._computed

    @property
    def num_blocks(self):
        return len(self.block_table)

    @property
    def num_tokens(self):
        return self.prompt_len + len(self.output)


class Scheduler:
    def __init__(self, num_blocks, block_size, max_num_seqs, max_num_batched_tokens, sample_fn, eos=None):
        self._total = num_blocks
        self._bs = block_size
        self._max_seqs = max_num_seqs
        self._max_tokens = max_num_batched_tokens
        self._sample = sample_fn
        self._eos = eos
        # lazily materialised free list: ids below _next_fresh were handed out at least once
        self._free = []
        self._next_fresh = 0
        self._nfree = num_blocks
        self.waiting = []
        self.running = []
        self.finished = []
        self.num_preemptions = 0
        self._plan = []

    @property
    def blocks_used(self):
        return self._total - self._nfree

    def _alloc(self, k):
        out = []
        for _ in range(k):
            if self._free:
                out.append(self._free.pop())
            else:
                out.append(self._next_fresh)
                self._next_fresh += 1
        self._nfree -= k
        return out

    def _release(self, seq):
        self._free.extend(seq.block_table)
        self._nfree += len(seq.block_table)
        seq.block_table = []

    def _fits(self, seq, t):
        need = -(-t // self._bs) - len(seq.block_table)
        if need <= 0:
            return True
        if need > self._nfree:
            return False
        seq.block_table = seq.block_table + self._alloc(need)
        return True

    def add(self, seq):
        self.waiting.append(seq)

    def schedule(self):
        left = self._max_tokens
        batch = Batch()
        plan = []
        i = 0
        while i < len(self.running) and left > 0:
            s = self.running[i]
            n = min(s.num_tokens - s._computed, left)
            if self._fits(s, s._computed + n):
                batch[s.seq_id] = Count(n)
                plan.append((s, n))
                left -= n
                i += 1
            else:
                v = self.running.pop()
                self._release(v)
                v._computed = 0
                v.status = SequenceStatus.WAITING
                self.waiting.insert(0, v)
                self.num_preemptions += 1
        while left > 0 and self.waiting and len(self.running) < self._max_seqs:
            h = self.waiting[0]
            n = min(h.num_tokens - h._computed, left)
            if not self._fits(h, h._computed + n):
                break
            self.waiting.pop(0)
            h.status = SequenceStatus.RUNNING
            self.running.append(h)
            batch[h.seq_id] = Count(n)
            plan.append((h, n))
            left -= n
        self._plan = plan
        return batch

    def update(self):
        done = []
        for s, n in self._plan:
            s._computed += n
            if s._computed == s.num_tokens:
                t = self._sample(s)
                s.output.append(t)
                if t == self._eos if self._eos is not None else False:
                    self._finish(s, done)
                elif len(s.output) >= s.max_tokens:
                    self._finish(s, done)
        self._plan = []
        if done:
            gone = {id(s) for s in done}
            self.running = [s for s in self.running if id(s) not in gone]
        return done

    def _finish(self, s, done):
        s.status = SequenceStatus.FINISHED
        self._release(s)
        self.finished.append(s)
        done.append(s)
