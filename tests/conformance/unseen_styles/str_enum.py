"""P07 scheduler: SequenceStatus is a str-valued Enum.

Members carry lowercase string values ("waiting", "running", "finished"),
which print and serialise nicely; the code compares statuses by their value.
"""
from collections import deque
from enum import Enum


class SequenceStatus(str, Enum):  # noqa: UP042 - the style under test: a str-valued Enum, not StrEnum
    WAITING = "waiting"
    RUNNING = "running"
    FINISHED = "finished"


class Sequence:
    def __init__(self, seq_id: str, prompt_len: int, max_tokens: int):
        self.seq_id = seq_id
        self.prompt_len = prompt_len
        self.max_tokens = max_tokens
        self.output: list = []
        self.num_computed = 0
        self.num_blocks = 0
        self.status = SequenceStatus.WAITING

    @property
    def num_tokens(self) -> int:
        return self.prompt_len + len(self.output)

    def is_(self, value: str) -> bool:
        return self.status.value == value


class Scheduler:
    def __init__(self, num_blocks: int, block_size: int, max_num_seqs: int,
                 max_num_batched_tokens: int, sample_fn, eos=None):
        self.num_blocks = num_blocks
        self.block_size = block_size
        self.max_num_seqs = max_num_seqs
        self.max_num_batched_tokens = max_num_batched_tokens
        self.sample_fn = sample_fn
        self.eos = eos
        self.waiting: deque = deque()
        self.running: list = []
        self.finished: list = []
        self.blocks_used = 0
        self.num_preemptions = 0
        self._plan: list = []

    def _blocks_for(self, t: int) -> int:
        return -(-t // self.block_size)

    def _try_grow(self, seq: Sequence, t: int) -> bool:
        need = self._blocks_for(t) - seq.num_blocks
        if need <= 0:
            return True
        if self.blocks_used + need <= self.num_blocks:
            self.blocks_used += need
            seq.num_blocks += need
            return True
        return False

    def _set_status(self, seq: Sequence, value: str) -> None:
        seq.status = SequenceStatus(value)

    def _preempt(self) -> Sequence:
        victim = self.running.pop()
        assert victim.is_("running")
        self.blocks_used -= victim.num_blocks
        victim.num_blocks = 0
        victim.num_computed = 0
        self._set_status(victim, "waiting")
        self.waiting.appendleft(victim)
        self.num_preemptions += 1
        return victim

    def add(self, seq: Sequence) -> None:
        self.waiting.append(seq)

    def schedule(self) -> dict:
        budget = self.max_num_batched_tokens
        plan = []

        i = 0
        while i < len(self.running) and budget > 0:
            seq = self.running[i]
            n = min(seq.num_tokens - seq.num_computed, budget)
            while not self._try_grow(seq, seq.num_computed + n):
                self._preempt()
                if seq.is_("waiting"):      # the victim was seq itself
                    break
            if seq.status == "running":
                plan.append((seq, n))
                budget -= n
                i += 1

        while self.waiting and budget > 0 and len(self.running) < self.max_num_seqs:
            seq = self.waiting[0]
            assert seq.status == "waiting"
            n = min(seq.num_tokens - seq.num_computed, budget)
            if not self._try_grow(seq, seq.num_computed + n):
                break
            self.waiting.popleft()
            self._set_status(seq, "running")
            self.running.append(seq)
            plan.append((seq, n))
            budget -= n

        self._plan = plan
        return {seq.seq_id: n for seq, n in plan}

    def update(self) -> list:
        plan, self._plan = self._plan, []
        done = []
        for seq, n in plan:
            seq.num_computed += n
            if seq.num_computed != seq.num_tokens:
                continue
            tok = self.sample_fn(seq)
            seq.output.append(tok)
            if (self.eos is not None and tok == self.eos) or len(seq.output) >= seq.max_tokens:
                self._set_status(seq, "finished")
                self.running.remove(seq)
                self.blocks_used -= seq.num_blocks
                seq.num_blocks = 0
                self.finished.append(seq)
                done.append(seq)
        return done
