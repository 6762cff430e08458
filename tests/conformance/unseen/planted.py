"""The unseen bugs as edits of the file each was derived from, applied at test time.

Each entry is a correct scheduler (a style file of conformance/selfcheck/styles/ or impl/)
and the (anchor, replacement) edits that plant one realistic mistake in it; README.md says
who wrote them and what each once showed. ``source(name)`` is the planted file's text.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from spec.faults import Edit, apply_edits

ROOT = Path(__file__).resolve().parents[3]


@dataclass(frozen=True, slots=True)
class Planted:
    base: str  # the correct file it was derived from, relative to the repository
    edits: tuple[Edit, ...]  # applied in order; each anchor occurs exactly once


UNSEEN: dict[str, Planted] = {
    # if self.eos and tok == self.eos: eos = 0 never ends a sequence
    'col_eos_zero': Planted('conformance/selfcheck/styles/columnar.py', (
        Edit('            if tok == self.eos or len(seq.output) >= seq.max_tokens:\n',
             '            if (self.eos and tok == self.eos) or len(seq.output) >= seq.max_tokens:\n'),
    )),
    # the token budget clamped to 2**31 - 1
    'col_int32_clamp': Planted('conformance/selfcheck/styles/columnar.py', (
        Edit('        self.max_num_batched_tokens = max_num_batched_tokens\n',
             "        # the kernel's batch size is an int32: clamp like the CUDA launcher does\n"
             '        self.max_num_batched_tokens = min(max_num_batched_tokens, 2**31 - 1)\n'),
    )),
    # a mutable default argument shares finished between instances
    'cpp_finished_default': Planted('conformance/selfcheck/styles/class_per_phase.py', (
        Edit('                 eos: int | None = None) -> None:\n',
             '                 eos: int | None = None, finished: list[Sequence] = []) -> None:\n'),
        Edit('        self.finished: list[Sequence] = []\n',
             '        self.finished: list[Sequence] = finished  # callers may pass a list to collect into\n'),
    )),
    # a self-preemption is not counted in num_preemptions
    'cpp_selfpreempt_count': Planted('conformance/selfcheck/styles/class_per_phase.py', (
        Edit('        o.num_preemptions += 1\n',
             ''),
        Edit('                if victim is seq:\n',
             '                if victim is seq:\n'
             '                    # it gave up its own slot: a skip, not a preemption of another sequence\n'),
        Edit('                    break\n',
             '                    break\n'
             '                self.owner.num_preemptions += 1\n'),
    )),
    # eos=None stored as -1, so a sampled token -1 ends the sequence
    'dod_eos_sentinel': Planted('conformance/selfcheck/styles/dict_of_deques.py', (
        Edit('        self.eos = eos\n',
             '        self.eos = -1 if eos is None else eos  # -1: no real token id\n'),
    )),
    # free max_num_seqs slots counted before phase 1
    'dod_slots_before_phase1': Planted('conformance/selfcheck/styles/dict_of_deques.py', (
        Edit('        plan: dict[str, tuple[Sequence, int]] = {}\n',
             '        plan: dict[str, tuple[Sequence, int]] = {}\n'
             '        free_slots = self.config["max_num_seqs"] - len(run_q)\n'),
        Edit('        while wait_q and budget > 0 and len(run_q) < self.config["max_num_seqs"]:\n',
             '        while wait_q and budget > 0 and free_slots > 0:\n'),
        Edit('            budget -= n\n'
             '        self._pending = plan\n',
             '            budget -= n\n'
             '            free_slots -= 1\n'
             '        self._pending = plan\n'),
    )),
    # the seq_id lookup dict is a class attribute
    'ev_class_byid': Planted('conformance/selfcheck/styles/event_log.py', (
        Edit('\n'
             '    def __init__(self, num_blocks: int, block_size: int, max_num_seqs: int,\n',
             '\n'
             '    _by_id: dict[str, Sequence] = {}        # seq_id -> sequence, for replaying events\n'
             '\n'
             '    def __init__(self, num_blocks: int, block_size: int, max_num_seqs: int,\n'),
        Edit('        self._by_id: dict[str, Sequence] = {}\n',
             ''),
    )),
    # tok is self.eos
    'ev_eos_is': Planted('conformance/selfcheck/styles/event_log.py', (
        Edit('                if tok == self.eos or len(seq.output) >= seq.max_tokens:\n',
             '                if tok is self.eos or len(seq.output) >= seq.max_tokens:\n'),
    )),
    # finished trimmed to the last 100
    'ev_finished_trim': Planted('conformance/selfcheck/styles/event_log.py', (
        Edit('            self.finished.append(seq)\n',
             '            self.finished.append(seq)\n'
             '            if len(self.finished) > 100:\n'
             '                # keep memory bounded on long runs: only recent completions are kept\n'
             '                del self.finished[0]\n'),
    )),
    # eos ignored on the first output token
    'fc_eos_decode_only': Planted('conformance/selfcheck/styles/functional_copy.py', (
        Edit('                if tok == self.eos or len(seq.output) >= seq.max_tokens:\n',
             '                # eos only ends a generation; the token right after the prompt is never eos\n'
             '                if (tok == self.eos and len(seq.output) > 1) or len(seq.output) >= seq.max_tokens:\n'),
    )),
    # an lru_cached blocks_for reading a module-global block size
    'fc_lru_blocks': Planted('conformance/selfcheck/styles/functional_copy.py', (
        Edit('import enum\n',
             'import enum\n'
             'import functools\n'),
        Edit('\n'
             'def blocks_for(tokens: int, block_size: int) -> int:\n',
             '\n'
             '_BLOCK_SIZE = 16\n'
             '\n'
             '\n'
             '@functools.lru_cache(maxsize=4096)\n'
             'def _blocks_cached(tokens: int) -> int:\n'
             '    return (tokens + _BLOCK_SIZE - 1) // _BLOCK_SIZE\n'
             '\n'
             '\n'
             'def blocks_for(tokens: int, block_size: int) -> int:\n'),
        Edit('    return (tokens + block_size - 1) // block_size\n',
             '    return _blocks_cached(tokens)\n'),
        Edit('                 eos: int | None = None) -> None:\n',
             '                 eos: int | None = None) -> None:\n'
             '        global _BLOCK_SIZE\n'
             '        _BLOCK_SIZE = block_size\n'),
    )),
    # a "decoding" flag not reset by preemption: a recompute gets n = 1
    'hq_decode_flag': Planted('conformance/selfcheck/styles/heap_queue.py', (
        Edit('        self.status = SequenceStatus.WAITING\n',
             '        self.status = SequenceStatus.WAITING\n'
             '        self.decoding = False                  # prompt done, one token per step from now on\n'),
        Edit('            seq = self.running[i]\n'
             '            n = min(seq.num_tokens - seq.num_computed, budget)\n',
             '            seq = self.running[i]\n'
             '            n = 1 if seq.decoding else min(seq.num_tokens - seq.num_computed, budget)\n'),
        Edit('            seq.output.append(tok)\n',
             '            seq.output.append(tok)\n'
             '            seq.decoding = True\n'),
    )),
    # eos stored as eos & 0xFFFFFFFF
    'hq_eos_uint32': Planted('conformance/selfcheck/styles/heap_queue.py', (
        Edit('        self.eos = eos\n',
             '        self.eos = None if eos is None else eos & 0xFFFFFFFF  # token ids are uint32 in the tokenizer\n'),
    )),
    # math.ceil(tokens / block_size)
    'hq_float_ceil': Planted('conformance/selfcheck/styles/heap_queue.py', (
        Edit('import heapq\n',
             'import heapq\n'
             'import math\n'),
        Edit('        return -(-tokens // self.block_size)\n',
             '        return math.ceil(tokens / self.block_size)\n'),
    )),
    # the arrival key is len(heap), ties broken by seq_id
    'hq_len_key': Planted('conformance/selfcheck/styles/heap_queue.py', (
        Edit('        self._heap: list[tuple[int, Sequence]] = []   # (key, seq); smallest key = head\n',
             '        self._heap: list[tuple[int, str, Sequence]] = []   # (key, seq_id, seq); smallest key = head\n'),
        Edit('        return deque(seq for _, seq in sorted(self._heap, key=lambda item: item[0]))\n',
             '        return deque(item[2] for item in sorted(self._heap, key=lambda item: item[:2]))\n'),
        Edit('        heapq.heappush(self._heap, (self._next_tail, seq))\n'
             '        self._next_tail += 1\n',
             '        # the arrival key is the position it joins at: behind everyone waiting\n'
             '        heapq.heappush(self._heap, (len(self._heap), seq.seq_id, seq))\n'),
        Edit('        heapq.heappush(self._heap, (self._next_head, seq))\n',
             '        heapq.heappush(self._heap, (self._next_head, seq.seq_id, seq))\n'),
        Edit('            seq = self._heap[0][1]\n',
             '            seq = self._heap[0][2]\n'),
    )),
    # update() returns one list, cleared on the next call
    'impl_done_reused': Planted('impl/scheduler.py', (
        Edit('        self._batch: dict[str, int] | None = None\n',
             '        self._batch: dict[str, int] | None = None\n'
             '        self._done: list[Sequence] = []  # reused by update() to avoid an allocation per step\n'),
        Edit('        done: list[Sequence] = []\n',
             '        done = self._done\n'
             '        done.clear()\n'),
    )),
    # every 128 steps, waiting re-sorted by slot (= arrival) order
    'st_resort_128': Planted('conformance/selfcheck/styles/slot_table.py', (
        Edit('        self._step_counts: list[int] = []\n',
             '        self._step_counts: list[int] = []\n'
             '        self._steps = 0\n'),
        Edit('        self._step_slots, self._step_counts = [], []\n',
             '        self._step_slots, self._step_counts = [], []\n'
             '        self._steps += 1\n'
             '        if self._steps % 128 == 0:\n'
             '            # housekeeping: slots are handed out in arrival order, so sorting the\n'
             '            # waiting slots restores FCFS after a long run of churn\n'
             '            self._wait = deque(sorted(self._wait))\n'),
    )),
    # vLLM's policy: no admission in a step that preempted
    'st_skip_admit_after_preempt': Planted('conformance/selfcheck/styles/slot_table.py', (
        Edit('        counts: list[int] = []\n',
             '        counts: list[int] = []\n'
             '        preempted_now = False\n'),
        Edit('                self.num_preemptions += 1\n',
             '                self.num_preemptions += 1\n'
             '                preempted_now = True\n'),
        Edit('        while self._wait and budget > 0 and len(self._run) < self._max_seqs:\n',
             '        # as in vLLM: a step that had to preempt admits nobody\n'
             '        while not preempted_now and self._wait and budget > 0 and len(self._run) < self._max_seqs:\n'),
    )),
    # finished slots recycled, so finished shows the new sequence
    'st_slot_reuse': Planted('conformance/selfcheck/styles/slot_table.py', (
        Edit('        self._step_counts: list[int] = []\n',
             '        self._step_counts: list[int] = []\n'
             '        self._free_slots: list[int] = []                     # slots of finished sequences, reusable\n'),
        Edit('    def add(self, seq: Sequence) -> None:\n',
             '    def add(self, seq: Sequence) -> None:\n'
             '        if self._free_slots:\n'
             '            slot = self._free_slots.pop()\n'
             '            self._seq[slot] = seq\n'
             '            self._computed[slot] = seq.num_computed\n'
             '            self._held[slot] = seq.num_blocks\n'
             '            self._code[slot] = _WAITING\n'
             '            self._wait.append(slot)\n'
             '            return\n'),
        Edit('                self._done.append(slot)\n',
             '                self._done.append(slot)\n'
             '                self._free_slots.append(slot)\n'),
    )),
}


def source(name: str) -> str:
    """The text of unseen bug `name`: its base file with its edits applied."""
    planted = UNSEEN[name]
    return apply_edits((ROOT / planted.base).read_text(), planted.edits, f"unseen bug {name!r}")
