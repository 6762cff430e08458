# ruff: noqa
"""ATTACK (retention/aliasing checks read only dict and list subclasses): the same reuse as upd_list_ctl.py, but
the reused container is a collections.deque. docs/api.md allows another container (a note, never a finding),
and conformance/sandbox/keep.py ``again`` checks identity and contents only for dict/list subclasses, so the
changed, aliased update() result is never reported. Control: upd_list_ctl.py.

Expected: H.retained (or H.aliased) as for the same reuse with a list, at most 90 (85.5 with the default rubric, its
list control's), the same on a regrade.
"""

import enum
from collections import deque


class SequenceStatus(enum.Enum):
    WAITING = "WAITING"
    RUNNING = "RUNNING"
    FINISHED = "FINISHED"


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
    def __init__(self, num_blocks, block_size, max_num_seqs, max_num_batched_tokens, sample_fn, eos=None):
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
        self._batch = []
        self._done = deque()

    def add(self, seq):
        self.waiting.append(seq)

    # --- helpers (rules.md "Helpers") ---------------------------------------------------------

    def _try_grow(self, seq, tokens):
        need = -(-tokens // self.block_size) - seq.num_blocks
        if need <= 0:
            return True
        if self.blocks_used + need > self.num_blocks:
            return False
        self.blocks_used += need
        seq.num_blocks += need
        return True

    def _preempt(self):
        victim = self.running.pop()
        self.blocks_used -= victim.num_blocks
        victim.num_blocks = 0
        victim.num_computed = 0
        victim.status = SequenceStatus.WAITING
        self.waiting.appendleft(victim)
        self.num_preemptions += 1
        return victim

    # --- the calls ------------------------------------------------------------------------------

    def schedule(self):
        budget = self.max_num_batched_tokens
        batch = []
        i = 0
        while i < len(self.running) and budget > 0:  # phase 1: running, in admission order
            seq = self.running[i]
            n = min(seq.num_tokens - seq.num_computed, budget)
            while True:
                if self._try_grow(seq, seq.num_computed + n):
                    batch.append((seq, n))
                    budget -= n
                    i += 1
                    break
                if self._preempt() is seq:  # P1.skip_self: i does not advance
                    break
        while self.waiting and budget > 0 and len(self.running) < self.max_num_seqs:  # phase 2: FCFS
            head = self.waiting[0]
            n = min(head.num_tokens - head.num_computed, budget)
            if not self._try_grow(head, head.num_computed + n):
                break  # P2.stop
            self.waiting.popleft()
            head.status = SequenceStatus.RUNNING
            self.running.append(head)
            batch.append((head, n))
            budget -= n
        self._batch = batch
        return {seq.seq_id: n for seq, n in batch}

    def update(self):
        done = self._done  # BUG: one container for every step; the caller's earlier result is cleared here
        done.clear()
        for seq, n in self._batch:
            seq.num_computed += n
            if seq.num_computed < seq.num_tokens:
                continue  # U.partial
            token = self.sample_fn(seq)
            seq.output.append(token)
            if (self.eos is not None and token == self.eos) or len(seq.output) >= seq.max_tokens:
                seq.status = SequenceStatus.FINISHED
                self.blocks_used -= seq.num_blocks
                seq.num_blocks = 0
                self.finished.append(seq)
                done.append(seq)
        if done:
            gone = {id(s) for s in done}
            self.running[:] = [s for s in self.running if id(s) not in gone]
        self._batch = []
        return done
