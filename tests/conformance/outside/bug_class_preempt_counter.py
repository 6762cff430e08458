"""P07 scheduler: everything keyed by seq_id, queues as lists of ids.

The scheduler keeps one registry (seq_id -> Sequence) and three order
lists of ids; the public queues are built from them on every read.  The
plan of the current step is a private dict seq_id -> n.
"""
import collections
import enum


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
        return "Sequence(%r, nc=%d/%d, nb=%d, %s)" % (
            self.seq_id, self.num_computed, self.num_tokens,
            self.num_blocks, self.status.name)


class Scheduler:
    num_preemptions = 0

    def __init__(self, num_blocks, block_size, max_num_seqs,
                 max_num_batched_tokens, sample_fn, eos=None):
        self.cfg = {
            "num_blocks": num_blocks,
            "block_size": block_size,
            "max_num_seqs": max_num_seqs,
            "budget": max_num_batched_tokens,
        }
        self.sample_fn = sample_fn
        self.eos = eos

        self.seqs = {}            # seq_id -> Sequence, every request ever added
        self.waiting_ids = collections.deque()
        self.running_ids = []     # admission order
        self.finished_ids = []
        self.plan = {}            # seq_id -> n, private copy of the last batch

    # -- public views ----------------------------------------------------
    @property
    def waiting(self):
        return collections.deque(self.seqs[i] for i in self.waiting_ids)

    @property
    def running(self):
        return [self.seqs[i] for i in self.running_ids]

    @property
    def finished(self):
        return [self.seqs[i] for i in self.finished_ids]

    @property
    def blocks_used(self):
        return sum(self.seqs[i].num_blocks for i in self.running_ids)

    # -- helpers -----------------------------------------------------------
    def _blocks_for(self, tokens):
        bs = self.cfg["block_size"]
        return (tokens + bs - 1) // bs

    def _try_grow(self, sid, tokens):
        seq = self.seqs[sid]
        need = self._blocks_for(tokens) - seq.num_blocks
        if need <= 0:
            return True
        if self.blocks_used + need > self.cfg["num_blocks"]:
            return False
        seq.num_blocks += need
        return True

    def _preempt_last(self):
        sid = self.running_ids.pop()
        seq = self.seqs[sid]
        seq.num_blocks = 0
        seq.num_computed = 0
        seq.status = SequenceStatus.WAITING
        self.waiting_ids.appendleft(sid)
        Scheduler.num_preemptions += 1
        return sid

    def _gap(self, sid):
        seq = self.seqs[sid]
        return seq.num_tokens - seq.num_computed

    # -- API ---------------------------------------------------------------
    def add(self, seq):
        self.seqs[seq.seq_id] = seq
        self.waiting_ids.append(seq.seq_id)

    def schedule(self):
        plan = {}
        left = self.cfg["budget"]

        i = 0
        while i < len(self.running_ids) and left > 0:
            sid = self.running_ids[i]
            n = min(self._gap(sid), left)
            if self._try_grow(sid, self.seqs[sid].num_computed + n):
                plan[sid] = n
                left -= n
                i += 1
            elif self._preempt_last() == sid:
                pass  # preempted itself: skip it, running got shorter

        while self.waiting_ids and left > 0:
            if len(self.running_ids) == self.cfg["max_num_seqs"]:
                break
            sid = self.waiting_ids[0]
            n = min(self._gap(sid), left)
            if not self._try_grow(sid, n):
                break
            self.waiting_ids.popleft()
            self.seqs[sid].status = SequenceStatus.RUNNING
            self.running_ids.append(sid)
            plan[sid] = n
            left -= n

        self.plan = plan
        return dict(plan)

    def update(self):
        finished_now = []
        for sid, n in self.plan.items():
            seq = self.seqs[sid]
            seq.num_computed += n
            if seq.num_computed != seq.num_tokens:
                continue
            token = self.sample_fn(seq)
            seq.output.append(token)
            hit_eos = self.eos is not None and token == self.eos
            if hit_eos or len(seq.output) >= seq.max_tokens:
                self.running_ids.remove(sid)
                seq.num_blocks = 0
                seq.status = SequenceStatus.FINISHED
                self.finished_ids.append(sid)
                finished_now.append(seq)
        self.plan = {}
        return finished_now
