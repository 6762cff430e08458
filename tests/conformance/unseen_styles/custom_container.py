"""P07 scheduler: waiting and running are a hand-written SeqQueue.

SeqQueue is a small sequence type (__iter__, __len__, __getitem__, __bool__)
with exactly the mutations the rules need: push_back, push_front, pop_front,
pop_back and remove (by identity). finished stays a plain list.
"""
import enum


class SequenceStatus(enum.Enum):
    WAITING = enum.auto()
    RUNNING = enum.auto()
    FINISHED = enum.auto()


class SeqQueue:
    """An ordered queue of sequences; index 0 is the head, -1 the tail."""

    __slots__ = ("_items",)

    def __init__(self, items=()):
        self._items = list(items)

    def __iter__(self):
        return iter(list(self._items))      # a snapshot: safe to mutate while iterating

    def __len__(self):
        return len(self._items)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return SeqQueue(self._items[index])
        return self._items[index]

    def __bool__(self):
        return bool(self._items)

    def __repr__(self):
        return "SeqQueue([" + ", ".join(s.seq_id for s in self._items) + "])"

    def push_back(self, seq):
        self._items.append(seq)

    def push_front(self, seq):
        self._items.insert(0, seq)

    def pop_front(self):
        return self._items.pop(0)

    def pop_back(self):
        return self._items.pop()

    def remove(self, seq):
        for k, s in enumerate(self._items):
            if s is seq:
                del self._items[k]
                return
        raise ValueError("sequence not in queue")


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
        self.waiting = SeqQueue()
        self.running = SeqQueue()
        self.finished = []
        self.blocks_used = 0
        self.num_preemptions = 0
        self._batch = []

    def _blocks_for(self, t):
        full, rest = divmod(t, self.block_size)
        return full + (rest > 0)

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
        victim = self.running.pop_back()
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
        batch = []

        i = 0
        while i < len(self.running) and budget > 0:
            seq = self.running[i]
            n = min(seq.num_tokens - seq.num_computed, budget)
            ok = True
            while not self._try_grow(seq, seq.num_computed + n):
                if self._preempt() is seq:
                    ok = False
                    break
            if not ok:
                continue
            batch.append((seq, n))
            budget -= n
            i += 1

        while self.waiting and budget > 0 and len(self.running) < self.max_num_seqs:
            seq = self.waiting[0]
            n = min(seq.num_tokens - seq.num_computed, budget)
            if not self._try_grow(seq, seq.num_computed + n):
                break
            self.waiting.pop_front()
            seq.status = SequenceStatus.RUNNING
            self.running.push_back(seq)
            batch.append((seq, n))
            budget -= n

        self._batch = batch
        return {seq.seq_id: n for seq, n in batch}

    def update(self):
        batch, self._batch = self._batch, []
        finished_now = []
        for seq, n in batch:
            seq.num_computed += n
            if seq.num_computed != seq.num_tokens:
                continue
            tok = self.sample_fn(seq)
            seq.output.append(tok)
            if (self.eos is not None and tok == self.eos) or len(seq.output) >= seq.max_tokens:
                seq.status = SequenceStatus.FINISHED
                self.running.remove(seq)
                self.blocks_used -= seq.num_blocks
                seq.num_blocks = 0
                self.finished.append(seq)
                finished_now.append(seq)
        return finished_now
