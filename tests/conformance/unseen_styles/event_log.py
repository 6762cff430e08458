"""P07 scheduler: an append-only event log is the source of truth for counters.

Every block allocation, block release and preemption is recorded as an event.
blocks_used and num_preemptions are read-only properties folded from the log
(incrementally: each read folds only the events appended since the last read).
"""
import enum
from collections import deque, namedtuple


class SequenceStatus(enum.Enum):
    WAITING = "W"
    RUNNING = "R"
    FINISHED = "F"


Event = namedtuple("Event", "kind seq_id blocks")   # kind: alloc/free/preempt/finish


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
        self.log = []                 # append-only
        self._folded = 0              # events already folded into the totals
        self._totals = {"blocks": 0, "preemptions": 0}
        self._last = []

    # -- the log and what is derived from it ----------------------------------
    def _record(self, kind, seq, blocks=0):
        self.log.append(Event(kind, seq.seq_id, blocks))

    def _fold(self):
        log = self.log
        totals = self._totals
        for ev in log[self._folded:]:
            if ev.kind == "alloc":
                totals["blocks"] += ev.blocks
            elif ev.kind == "free":
                totals["blocks"] -= ev.blocks
            elif ev.kind == "preempt":
                totals["preemptions"] += 1
        self._folded = len(log)
        return totals

    @property
    def blocks_used(self):
        return self._fold()["blocks"]

    @property
    def num_preemptions(self):
        return self._fold()["preemptions"]

    # -- helpers ---------------------------------------------------------------
    def _blocks_for(self, t):
        return -(-t // self.block_size)

    def _try_grow(self, seq, t):
        need = self._blocks_for(t) - seq.num_blocks
        if need <= 0:
            return True
        if self.blocks_used + need > self.num_blocks:
            return False
        seq.num_blocks += need
        self._record("alloc", seq, need)
        return True

    def _release(self, seq):
        if seq.num_blocks:
            self._record("free", seq, seq.num_blocks)
        seq.num_blocks = 0

    def _preempt_last(self):
        victim = self.running.pop()
        self._release(victim)
        victim.num_computed = 0
        victim.status = SequenceStatus.WAITING
        self.waiting.appendleft(victim)
        self._record("preempt", victim)
        return victim

    # -- interface -------------------------------------------------------------
    def add(self, seq):
        self._record("add", seq)
        self.waiting.append(seq)

    def schedule(self):
        budget = self.max_num_batched_tokens
        batch = []

        i = 0
        while i < len(self.running) and budget > 0:
            seq = self.running[i]
            n = min(seq.num_tokens - seq.num_computed, budget)
            scheduled = True
            while not self._try_grow(seq, seq.num_computed + n):
                if self._preempt_last() is seq:
                    scheduled = False
                    break
            if scheduled:
                batch.append((seq, n))
                self._record("schedule", seq, 0)
                budget -= n
                i += 1

        while self.waiting and budget > 0 and len(self.running) < self.max_num_seqs:
            seq = self.waiting[0]
            n = min(seq.num_tokens - seq.num_computed, budget)
            if not self._try_grow(seq, seq.num_computed + n):
                break
            self.waiting.popleft()
            seq.status = SequenceStatus.RUNNING
            self.running.append(seq)
            self._record("admit", seq)
            batch.append((seq, n))
            budget -= n

        self._last = batch
        return {seq.seq_id: n for seq, n in batch}

    def update(self):
        batch, self._last = self._last, []
        done = []
        for seq, n in batch:
            seq.num_computed += n
            if seq.num_computed != seq.num_tokens:
                continue
            tok = self.sample_fn(seq)
            seq.output.append(tok)
            if (self.eos is not None and tok == self.eos) or len(seq.output) >= seq.max_tokens:
                seq.status = SequenceStatus.FINISHED
                self.running.remove(seq)
                self._release(seq)
                self._record("finish", seq)
                self.finished.append(seq)
                done.append(seq)
        return done
