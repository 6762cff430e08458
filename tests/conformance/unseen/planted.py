"""The unseen bugs as edits of the file each was derived from, applied at test time.

Each entry is a correct scheduler (a style file of conformance/selfcheck/styles/ or impl/)
and the (anchor, replacement) edits that plant one realistic mistake in it; README.md says
who wrote them and what each once showed. ``source(name)`` is the planted file's text.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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
    # max_num_seqs capped at 256, the largest CUDA-graph batch
    'impl_seqs_cap_256': Planted('impl/scheduler.py', (
        Edit('        self.max_num_seqs = max_num_seqs  # limit on len(running), checked at admission\n',
             '        # the largest batch a CUDA graph is captured for: running more would fall off the graph\n'
             '        self.max_num_seqs = min(max_num_seqs, 256)  # limit on len(running), checked at admission\n'),
    )),
    # sequences found through a table of 1024 slots indexed by crc32(seq_id), no collision handling
    'impl_crc32_slots': Planted('impl/scheduler.py', (
        Edit('import enum\n',
             'import enum\n'
             'import zlib\n'),
        Edit('        self._seq_ids: set[str] = set()  # == ids of every sequence in the three queues\n',
             '        self._seq_ids: set[str] = set()  # == ids of every sequence in the three queues\n'
             '        self._slots: list[Sequence | None] = [None] * 1024  # seq_id -> sequence, O(1) in update()\n'),
        Edit('        self._seq_ids.add(seq_id)\n',
             '        self._seq_ids.add(seq_id)\n'
             '        self._slots[zlib.crc32(seq_id.encode()) % 1024] = seq\n'),
        Edit('            for seq, n in zip(running, batch.values(), strict=False):\n',
             '            for seq_id, n in batch.items():\n'
             '                seq = self._slots[zlib.crc32(seq_id.encode()) % 1024]\n'
             '                assert seq is not None\n'),
    )),
    # the step loop is a generator that re-enters itself with yield from: one frame deeper per step
    'impl_recursive_steps': Planted('impl/scheduler.py', (
        Edit('        self._batch: dict[str, int] | None = None\n',
             '        self._batch: dict[str, int] | None = None\n'
             '        self._stepper: Iterator[dict[str, int]] | None = None\n'),
        Edit('from collections.abc import Callable\n',
             'from collections.abc import Callable, Iterator\n'),
        Edit('    def schedule(self) -> dict[str, int]:\n',
             '    def schedule(self) -> dict[str, int]:\n'
             '        """The next step of the engine loop."""\n'
             '        if self._stepper is None:\n'
             '            self._stepper = self._steps()\n'
             '        return next(self._stepper)\n'
             '\n'
             '    def _steps(self) -> Iterator[dict[str, int]]:\n'
             '        """The engine loop: one step, then the rest of the loop."""\n'
             '        yield self._schedule_once()\n'
             '        yield from self._steps()\n'
             '\n'
             '    def _schedule_once(self) -> dict[str, int]:\n'),
    )),
    # block ids kept in uint16 block tables, as a CUDA kernel's block table
    'impl_block_ids_uint16': Planted('impl/scheduler.py', (
        Edit('import enum\n',
             'import enum\n'
             'from array import array\n'),
        Edit('        self._seq_ids: set[str] = set()  # == ids of every sequence in the three queues\n',
             '        self._seq_ids: set[str] = set()  # == ids of every sequence in the three queues\n'
             '        self._tables: dict[str, array[int]] = {}  # seq_id -> block ids, uint16 like the kernel\n'
             '        self._free_ids: list[int] = []  # returned block ids\n'
             '        self._next_id = 0  # block ids never handed out start here\n'),
        Edit('                if used + need <= total:\n'
             '                    used += need\n'
             '                    seq.num_blocks += need\n',
             '                if used + need <= total:\n'
             '                    used += need\n'
             '                    seq.num_blocks += need\n'
             '                    self._take(seq, need)\n'),
        Edit('                    used += need\n'
             '                    head.num_blocks = held + need\n',
             '                    used += need\n'
             '                    head.num_blocks = held + need\n'
             '                    self._take(head, need)\n'),
        Edit('            victim.num_blocks = 0\n',
             '            victim.num_blocks = 0\n'
             '            self._give_back(victim)\n'),
        Edit('        seq.num_blocks += need\n'
             '        return used + need\n',
             '        seq.num_blocks += need\n'
             '        self._take(seq, need)\n'
             '        return used + need\n'),
        Edit('                        seq.num_blocks = 0\n',
             '                        seq.num_blocks = 0\n'
             '                        self._give_back(seq)\n'),
        Edit('    def update(self) -> list[Sequence]:\n',
             '    def _take(self, seq: Sequence, need: int) -> None:\n'
             '        """Hand `need` block ids to seq: returned ones first, then new ones."""\n'
             '        table = self._tables.setdefault(seq.seq_id, array("H"))\n'
             '        for _ in range(need):\n'
             '            if self._free_ids:\n'
             '                table.append(self._free_ids.pop())\n'
             '            else:\n'
             '                table.append(self._next_id)\n'
             '                self._next_id += 1\n'
             '\n'
             '    def _give_back(self, seq: Sequence) -> None:\n'
             '        self._free_ids.extend(self._tables.pop(seq.seq_id, ()))\n'
             '\n'
             '    def update(self) -> list[Sequence]:\n'),
    )),
    # preemptions counted per sequence in a bytearray
    'impl_preempt_bytes': Planted('impl/scheduler.py', (
        Edit('        self._seq_ids: set[str] = set()  # == ids of every sequence in the three queues\n',
             '        self._seq_ids: set[str] = set()  # == ids of every sequence in the three queues\n'
             '        self._row: dict[str, int] = {}  # seq_id -> its row in the per-sequence statistics\n'
             '        self._preempted = bytearray()  # per row: times preempted (for the starvation report)\n'),
        Edit('        self._seq_ids.add(seq_id)\n',
             '        self._seq_ids.add(seq_id)\n'
             '        self._row[seq_id] = len(self._preempted)\n'
             '        self._preempted.append(0)\n'),
        Edit('            self.num_preemptions += 1\n',
             '            self.num_preemptions += 1\n'
             '            self._preempted[self._row[victim.seq_id]] += 1\n'),
    )),
    # a second Scheduler takes one of 256 request-id arenas allocated once per process
    'impl_instance_arenas': Planted('impl/scheduler.py', (
        Edit('class Scheduler:\n'
             '    """Continuous batching with chunked prefill and recompute preemption under three budgets."""\n',
             'class Scheduler:\n'
             '    """Continuous batching with chunked prefill and recompute preemption under three budgets."""\n'
             '\n'
             '    _arenas: list[set[str]] = [set() for _ in range(256)]  # request-id sets, made once per process\n'
             '    _created = 0\n'),
        Edit('        self._seq_ids: set[str] = set()  # == ids of every sequence in the three queues\n',
             '        Scheduler._created += 1\n'
             '        self._seq_ids = Scheduler._arenas[Scheduler._created % 256]  # == ids in the three queues\n'
             '        self._seq_ids.clear()\n'),
    )),
    # a process-wide registry of request ids keyed by id(self), never cleaned
    'impl_registry_by_id': Planted('impl/scheduler.py', (
        Edit('class SequenceStatus(enum.Enum):\n',
             '_REGISTRY: dict[int, set[str]] = {}  # engine -> the request ids it holds, for the metrics endpoint\n'
             '\n'
             '\n'
             'class SequenceStatus(enum.Enum):\n'),
        Edit('        self._seq_ids: set[str] = set()  # == ids of every sequence in the three queues\n',
             '        self._seq_ids = _REGISTRY.setdefault(id(self), set())  # == ids of the queued sequences\n'),
    )),
    # seq ids kept in a 64-character field
    'impl_ids_truncated_64': Planted('impl/scheduler.py', (
        Edit('        if seq_id in self._seq_ids:\n',
             '        if seq_id[:64] in self._seq_ids:  # ids are stored in a char[64] field of the request table\n'),
        Edit('        self._seq_ids.add(seq_id)\n',
             '        self._seq_ids.add(seq_id[:64])\n'),
    )),
    # seq ids made ASCII for the request table
    'impl_ids_ascii': Planted('impl/scheduler.py', (
        Edit('        if seq_id in self._seq_ids:\n',
             '        key = seq_id.encode("ascii", "replace")  # the request table stores ASCII ids\n'
             '        if key in self._seq_ids:\n'),
        Edit('        self._seq_ids: set[str] = set()  # == ids of every sequence in the three queues\n',
             '        self._seq_ids: set[bytes] = set()  # == ids of every sequence in the three queues\n'),
        Edit('        self._seq_ids.add(seq_id)\n',
             '        self._seq_ids.add(key)\n'),
    )),
    # requests arriving in the same step queue by the number in their id
    'impl_numeric_fcfs': Planted('impl/scheduler.py', (
        Edit('        self._batch: dict[str, int] | None = None\n',
             '        self._batch: dict[str, int] | None = None\n'
             '        self._step = 0  # schedule() calls so far\n'
             '        self._arrived: dict[str, int] = {}  # seq_id -> the step it arrived before\n'),
        Edit('        self._seq_ids.add(seq_id)\n'
             '        self.waiting.append(seq)\n',
             '        self._seq_ids.add(seq_id)\n'
             '        # a step\'s arrivals come from the API server in one batch: FCFS among them goes by number\n'
             '        i = len(self.waiting)\n'
             '        while i > 0 and self._arrived.get(self.waiting[i - 1].seq_id) == self._step \\\n'
             '                and _number(self.waiting[i - 1].seq_id) > _number(seq_id):\n'
             '            i -= 1\n'
             '        self._arrived[seq_id] = self._step\n'
             '        self.waiting.insert(i, seq)\n'),
        Edit('        running = self.running\n'
             '        budget = self.max_num_batched_tokens\n',
             '        self._step += 1\n'
             '        running = self.running\n'
             '        budget = self.max_num_batched_tokens\n'),
        Edit('class Scheduler:\n',
             'def _number(seq_id: str) -> int:\n'
             '    digits = "".join(c for c in seq_id if c.isdigit())\n'
             '    return int(digits) if digits else 0\n'
             '\n'
             '\n'
             'class Scheduler:\n'),
    )),
    # 16-bit request handles from FNV-1a of the seq id
    'impl_fnv_handles': Planted('impl/scheduler.py', (
        Edit('class Scheduler:\n',
             'def _handle(seq_id: str) -> int:\n'
             '    """A 16-bit request handle (all a batch descriptor holds): half the id\'s FNV-1a."""\n'
             '    h = 0x811C9DC5\n'
             '    for b in seq_id.encode():\n'
             '        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF\n'
             '    return h & 0xFFFF\n'
             '\n'
             '\n'
             'class Scheduler:\n'),
        Edit('        self._seq_ids: set[str] = set()  # == ids of every sequence in the three queues\n',
             '        self._seq_ids: set[str] = set()  # == ids of every sequence in the three queues\n'
             '        self._by_handle: dict[int, Sequence] = {}\n'),
        Edit('        self._seq_ids.add(seq_id)\n',
             '        self._seq_ids.add(seq_id)\n'
             '        self._by_handle[_handle(seq_id)] = seq\n'),
        Edit('            for seq, n in zip(running, batch.values(), strict=False):\n',
             '            for seq_id, n in batch.items():\n'
             '                seq = self._by_handle[_handle(seq_id)]\n'),
    )),
    # batches of more than 256 sequences reuse one pooled dict
    'impl_batch_pool': Planted('impl/scheduler.py', (
        Edit('        self._batch: dict[str, int] | None = None\n',
             '        self._batch: dict[str, int] | None = None\n'
             '        self._pool: dict[str, int] = {}  # big batches: reuse one dict instead of copying\n'),
        Edit('        return batch.copy()\n',
             '        if len(batch) <= 256:\n'
             '            return batch.copy()\n'
             '        self._pool.clear()\n'
             '        self._pool.update(batch)\n'
             '        return self._pool\n'),
    )),
    # every 1024 steps the waiting queue is rebuilt in id order
    'impl_compaction_1024': Planted('impl/scheduler.py', (
        Edit('        self._batch: dict[str, int] | None = None\n',
             '        self._batch: dict[str, int] | None = None\n'
             '        self._steps = 0\n'),
        Edit('        running = self.running\n'
             '        budget = self.max_num_batched_tokens\n',
             '        self._steps += 1\n'
             '        if self._steps % 1024 == 0:\n'
             '            # housekeeping: compact the waiting deque, sorted by id so the logs are stable\n'
             '            self.waiting = deque(sorted(self.waiting, key=lambda s: s.seq_id))\n'
             '        running = self.running\n'
             '        budget = self.max_num_batched_tokens\n'),
    )),
    # update() sizes its clean-up by the length of the dict it handed out
    'impl_handed_length': Planted('impl/scheduler.py', (
        Edit('        return batch.copy()\n',
             '        self._handed = batch.copy()\n'
             '        return self._handed\n'),
        Edit('                k = len(batch)\n',
             '                k = len(self._handed)  # the batch the engine was given\n'),
    )),
    # update() takes a count from the dict it handed out while that id is still in it
    'impl_handed_counts': Planted('impl/scheduler.py', (
        Edit('        return batch.copy()\n',
             '        self._handed = batch.copy()\n'
             '        return self._handed\n'),
        Edit('            for seq, n in zip(running, batch.values(), strict=False):\n',
             '            for seq, n in zip(running, batch.values(), strict=False):\n'
             '                n = self._handed.get(seq.seq_id, n)  # the engine may have trimmed a chunk\n'),
    )),
    # update() reads the counts from the dict it handed out, unless the caller changed its length
    'impl_handed_values': Planted('impl/scheduler.py', (
        Edit('        return batch.copy()\n',
             '        self._handed = batch.copy()\n'
             '        return self._handed\n'),
        Edit('            for seq, n in zip(running, batch.values(), strict=False):\n',
             "            # the caller's copy is the same batch unless it was cleared: read it (saves a lookup)\n"
             '            src = self._handed if len(self._handed) == len(batch) else batch\n'
             '            for seq, n in zip(running, src.values(), strict=False):\n'),
    )),
    # eos compared by identity: equal only for the ints the interpreter caches (-5..256)
    'impl_eos_identity': Planted('impl/scheduler.py', (
        Edit('                    if token == eos or len(output) >= seq.max_tokens:\n',
             '                    if token is eos or len(output) >= seq.max_tokens:\n'),
    )),
    # a running sequence's chunk computed through floats: past 2**53 it comes out one off, 0 or negative
    'impl_float_chunk': Planted('impl/scheduler.py', (
        Edit('            n = tokens - computed\n',
             '            n = int(float(tokens) - float(computed))\n'),
    )),
    # waiting kept in order of stamps from a module-level clock that each new Scheduler() resets (written from outside
    # into another scheduler; the first joining group, whose first scheduler got one request right after each reset,
    # keyed them all alike and a stable insertion kept their order)
    'impl_reset_stamp_clock': Planted('impl/scheduler.py', (
        Edit('class Scheduler:\n    """Continuous batching',
             '_clock = 0  # arrival stamps\n\n\nclass Scheduler:\n    """Continuous batching'),
        Edit('        self._seq_ids: set[str] = set()  # == ids of every sequence in the three queues\n',
             '        self._seq_ids: set[str] = set()  # == ids of every sequence in the three queues\n'
             '        global _clock\n'
             '        _clock = 0  # stamps of this run start at 0\n'
             '        self._stamp: dict[str, int] = {}\n'),
        Edit('        self._seq_ids.add(seq_id)\n        self.waiting.append(seq)\n',
             '        self._seq_ids.add(seq_id)\n'
             '        global _clock\n'
             '        self._stamp[seq_id], _clock = _clock, _clock + 1\n'
             '        i = len(self.waiting)  # after every sequence stamped no later\n'
             '        while i and self._stamp.get(self.waiting[i - 1].seq_id, -1) > self._stamp[seq_id]:\n'
             '            i -= 1\n'
             '        self.waiting.insert(i, seq)\n'),
    )),
    # arrival keys from a module-level clock that each new Scheduler() resets: a scheduler made while another holds
    # waiting requests lets that one's later arrivals jump the queue (or tie with a waiting one's key)
    'hq_global_clock': Planted('conformance/selfcheck/styles/heap_queue.py', (
        Edit('class Scheduler:\n',
             '_clock = 0  # arrival clock: keys for the waiting heap\n\n\n'
             'def _tick() -> int:\n'
             '    global _clock\n'
             '    _clock += 1\n'
             '    return _clock\n\n\n'
             'class Scheduler:\n'),
        Edit('        self._next_tail = 0                            # key for the next arrival\n',
             '        global _clock\n'
             '        _clock = 0                                     # a new scheduler starts the arrival clock\n'),
        Edit('        heapq.heappush(self._heap, (self._next_tail, seq))\n'
             '        self._next_tail += 1\n',
             '        heapq.heappush(self._heap, (_tick(), seq))\n'),
    )),
}


# A bug whose collision needs the hash seed the CLI and the grader fix (PYTHONHASHSEED=0): under another seed
# its ids land in other slots, so it is checked through the CLI only (tests/conformance/test_dimensions_unseen.py).
SEED_ZERO: dict[str, Planted] = {
    # sequences found through a table of 2**16 slots indexed by hash(seq_id), no collision handling
    'impl_hash_slots': Planted('impl/scheduler.py', (
        Edit('        self._seq_ids: set[str] = set()  # == ids of every sequence in the three queues\n',
             '        self._seq_ids: set[str] = set()  # == ids of every sequence in the three queues\n'
             '        self._slots: list[Sequence | None] = [None] * 65536  # hash(seq_id) % 65536 -> sequence\n'),
        Edit('        self._seq_ids.add(seq_id)\n',
             '        self._seq_ids.add(seq_id)\n'
             '        self._slots[hash(seq_id) % 65536] = seq\n'),
        Edit('            for seq, n in zip(running, batch.values(), strict=False):\n',
             '            for seq_id, n in batch.items():\n'
             '                seq = self._slots[hash(seq_id) % 65536]\n'
             '                assert seq is not None\n'),
    )),
}

# Bugs past the values quick reaches (docs/conformance.md, "Dimensions"): default finds them, quick cannot.
PAST_QUICK: dict[str, Planted] = {
    # max_num_seqs capped at 1024, the largest batch the engine captures
    'impl_seqs_cap_1024': Planted('impl/scheduler.py', (
        Edit('        self.max_num_seqs = max_num_seqs  # limit on len(running), checked at admission\n',
             '        # the largest batch a CUDA graph is captured for: running more would fall off the graph\n'
             '        self.max_num_seqs = min(max_num_seqs, 1024)  # limit on len(running), checked at admission\n'),
    )),
    # the waiting queue bounded at 2048 requests, as the API server's queue
    'impl_waiting_2048': Planted('impl/scheduler.py', (
        Edit('        self.waiting: deque[Sequence] = deque()  # head first\n',
             '        self.waiting: deque[Sequence] = deque(maxlen=2048)  # head first; bounded as the server is\n'),
    )),
    # the waiting queue bounded at 4096 requests: the 4097th drops the head (from outside)
    'impl_waiting_4096': Planted('impl/scheduler.py', (
        Edit('        self.waiting: deque[Sequence] = deque()  # head first\n',
             '        self.waiting: deque[Sequence] = deque(maxlen=4096)  # head first; bounded\n'),
    )),
    # blocks counted in floating point only where a sequence grows by preempting (from outside)
    'impl_float_grow': Planted('impl/scheduler.py', (
        Edit('        need = -(-tokens // self.block_size) - seq.num_blocks\n',
             '        need = math.ceil(tokens / self.block_size) - seq.num_blocks\n'),
        Edit('from collections import deque\n', 'import math\nfrom collections import deque\n'),
    )),
    # more than 4096 finishing in one step: running rebuilt by a set difference, losing its order (from outside)
    'impl_bulk_finish_set': Planted('impl/scheduler.py', (
        Edit('                running[:k] = [s for s in islice(running, k) if s.status is _RUNNING]\n',
             '                if len(done) > 4096:\n'
             '                    # a huge step: one set difference instead of a status test per sequence\n'
             '                    running[:k] = list(set(islice(running, k)) - set(done))\n'
             '                else:\n'
             '                    running[:k] = [s for s in islice(running, k) if s.status is _RUNNING]\n'),
    )),
    # a table of 4096 slots that, once full, hands the oldest finished slot to a newcomer (from outside)
    'st_recycle_full': Planted('conformance/selfcheck/styles/slot_table.py', (
        Edit('        size = 8\n', '        size = 4096\n'),
        Edit('        if self._used == len(self._seq):\n'
             '            self._grow_table()\n'
             '        slot = self._used\n'
             '        self._used += 1\n',
             '        if self._used == len(self._seq) and self._done:\n'
             '            # table full: hand the oldest finished slot to the newcomer instead of growing\n'
             '            slot = self._done.pop(0)\n'
             '        else:\n'
             '            if self._used == len(self._seq):\n'
             '                self._grow_table()\n'
             '            slot = self._used\n'
             '            self._used += 1\n'),
    )),
    # "does it fit?" asked as a float ratio of the cache
    'impl_float_fit': Planted('impl/scheduler.py', (
        Edit('                if used + need <= total:\n', '                if (used + need) / total <= 1.0:\n'),
        Edit('                    if used + need > total:\n', '                    if (used + need) / total > 1.0:\n'),
        Edit('        while used + need > total:\n', '        while (used + need) / total > 1.0:\n'),
    )),
}


# Bugs written from outside that every profile still passes (README, "Still missed"): kept to be caught, not pinned.
STILL_MISSED: dict[str, Planted] = {}


def source(name: str) -> str:
    """The text of unseen bug `name` (of UNSEEN, SEED_ZERO, PAST_QUICK or STILL_MISSED): its base file with its edits
    applied."""
    planted = {**UNSEEN, **SEED_ZERO, **PAST_QUICK, **STILL_MISSED}[name]
    return apply_edits((ROOT / planted.base).read_text(), planted.edits, f"unseen bug {name!r}")


def load_planted(name: str, folder: Path) -> Any:
    """Unseen bug `name` written to `folder` and imported as a module of its own."""
    path = folder / f"{name}.py"
    path.write_text(source(name))
    spec = importlib.util.spec_from_file_location(f"planted_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
