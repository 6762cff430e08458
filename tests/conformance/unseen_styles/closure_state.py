"""A correct P07 scheduler written from docs/rules.md alone: its calls are closures over one state dict built in
__init__, the white-box counters read-only properties over that state, and the enum's members plain objects."""
import enum
from collections import deque


class SequenceStatus(enum.Enum):
    WAITING = object()
    RUNNING = object()
    FINISHED = object()


class Sequence:
    def __init__(self, seq_id, prompt_len, max_tokens):
        self.seq_id, self.prompt_len, self.max_tokens = seq_id, prompt_len, max_tokens
        self.output, self.num_computed, self.num_blocks = [], 0, 0
        self.status = SequenceStatus.WAITING

    num_tokens = property(lambda self: self.prompt_len + len(self.output))


def _make(num_blocks, block_size, max_num_seqs, budget_max, sample_fn, eos):
    st = {"used": 0, "pre": 0, "plan": []}
    waiting, running, finished = deque(), [], []

    def blocks_for(t):
        return -(-t // block_size)

    def try_grow(seq, t):
        need = blocks_for(t) - seq.num_blocks
        if need <= 0:
            return True
        if st["used"] + need > num_blocks:
            return False
        st["used"] += need
        seq.num_blocks += need
        return True

    def preempt():
        victim = running.pop()
        st["used"] -= victim.num_blocks
        victim.num_blocks = victim.num_computed = 0
        victim.status = SequenceStatus.WAITING
        waiting.appendleft(victim)
        st["pre"] += 1
        return victim

    def add(seq):
        waiting.append(seq)

    def schedule():
        budget, plan, i = budget_max, [], 0
        while i < len(running) and budget > 0:  # phase 1
            seq = running[i]
            n = min(seq.num_tokens - seq.num_computed, budget)
            if try_grow(seq, seq.num_computed + n):
                plan.append((seq, n))
                budget -= n
                i += 1
            else:
                preempt()  # running[-1]; if that was seq, i now points past the end of the shorter list
        while waiting and budget > 0 and len(running) < max_num_seqs:  # phase 2, strict FCFS
            head = waiting[0]
            n = min(head.num_tokens - head.num_computed, budget)
            if not try_grow(head, head.num_computed + n):
                break
            waiting.popleft()
            head.status = SequenceStatus.RUNNING
            running.append(head)
            plan.append((head, n))
            budget -= n
        st["plan"] = plan
        return {s.seq_id: n for s, n in plan}

    def update():
        plan, st["plan"] = st["plan"], []
        done = []
        for seq, n in plan:
            seq.num_computed += n
            if seq.num_computed != seq.num_tokens:
                continue
            token = sample_fn(seq)
            seq.output.append(token)
            if (eos is not None and token == eos) or len(seq.output) >= seq.max_tokens:
                seq.status = SequenceStatus.FINISHED
                running[:] = [s for s in running if s is not seq]
                st["used"] -= seq.num_blocks
                seq.num_blocks = 0
                finished.append(seq)
                done.append(seq)
        return done

    return st, waiting, running, finished, add, schedule, update


class Scheduler:
    def __init__(self, num_blocks, block_size, max_num_seqs, max_num_batched_tokens, sample_fn, eos=None):
        (self._st, self.waiting, self.running, self.finished,
         self.add, self.schedule, self.update) = _make(num_blocks, block_size, max_num_seqs,
                                                      max_num_batched_tokens, sample_fn, eos)

    blocks_used = property(lambda self: self._st["used"])
    num_preemptions = property(lambda self: self._st["pre"])
