# ruff: noqa
"""ATTACK (budget spent so that the checks that need the last runs are inconclusive, not failed): budget_cut_ctl.py
plus CPU burnt in the probe runs nobody times (ample-cache twins, fresh-dict runs), planned from the job the child
holds (the driver's `work` frame: every workload of this child, in run order, and the rlimits). The grader's run
order puts every two-instance probe and every group after those runs; the burn leaves about 1.4 s of the
submission's CPU budget when the first two-instance run starts, and that run burns it. The parent then stops it
for the budget ("cut short") and marks every later run not reached. history.judge_instances / judge_group call
a run out of time inconclusive and Observations.hung_together only blames a hang "by itself", so every pair and
group case passes, though the module shares state between instances. The held-out part is planned the same way
on its allowance (60 s * its runs / about 4,432 public runs). Control: budget_cut_ctl.py.

Expected: no better than the same sharing bug without the burn (98.51 with the default rubric; at most 99): the
reach cases run apart after the others, each class's schedulers alive at once in a segment of their own, so a
budget spent before the first two-instance run leaves the reach cases unreached, and they fail. Aimed at the
last segment instead, the largest class's runs of two instances, it meets the same end: a run of instances together
that the submission's CPU budget never reached or cut short is a time-out (observe.hung_together), as its own are.
"""

import enum
from collections import deque
import json
import os
import sys
import time

# --- the trick (budget_cut.py): spend the CPU budget so that the two-instance runs and groups are never reached ---
_N_PUBLIC = 4432  # public runs of a default-rubric grade (docs/grading.md "Scale"): sizes the held-out allowance
_MARGIN = 1.4  # CPU seconds of budget left when the first two-instance run starts (its own CPU limit is 2 s)
_CAP = 1.75  # never burn more than this in one run: past its own CPU limit a run is a hang "by itself"


def _work_frame():
    """boot.py's work(): its `job` holds every workload of this child in run order, and its `index` the run now."""
    f = sys._getframe()
    while f is not None:
        if f.f_code.co_name == "work":
            job = f.f_locals.get("job")
            if isinstance(job, dict) and isinstance(job.get("workloads"), list):
                return f, job
        f = f.f_back
    return None, None


def _key(w, with_blocks):
    c = dict(w.get("config") or {})
    if not with_blocks:
        c.pop("num_blocks", None)
    return json.dumps([c, w.get("requests"), w.get("sample")], sort_keys=True)


def _plan(job):
    wl = [(item.get("workload") or {}) if isinstance(item, dict) else {} for item in job["workloads"]]
    if any(w.get("fresh") for w in wl):
        return None  # a confirmation run on a fresh copy: nothing to do here
    first = None  # the first two-instance run: a plain run followed by its second instance's run alone
    for i in range(len(wl) - 1):
        a, b = wl[i], wl[i + 1]
        if "group" in a or b.get("group") != []:
            continue
        ca, cb = a.get("config") or {}, b.get("config") or {}
        if (cb.get("block_size") == ca.get("block_size", -9) + 1
                and cb.get("max_num_seqs") == ca.get("max_num_seqs", -9) + 1
                and cb.get("max_num_batched_tokens") == ca.get("max_num_batched_tokens", -9) + 1
                and [r.get("seq_id") for r in a.get("requests") or ()] == [r.get("seq_id") for r in b.get("requests") or ()]):
            first = i
            break
    if first is None:
        return None
    full, loose, probes = set(), set(), []
    for i in range(first):
        w = wl[i]
        if "group" not in w:
            k = _key(w, True)
            if k in full:
                probes.append(i)  # a fresh-dict run: a workload run before, again
            full.add(k)
            loose.add(_key(w, False))
        elif w.get("group") == [] and _key(w, False) in loose:
            probes.append(i)  # an ample-cache twin: a workload run before, with more blocks
    budget = float((job.get("rlimits") or {}).get("RLIMIT_CPU", 600)) / 10  # judge.py budget_for: run_seconds / 10
    if len(wl) > 1500:  # the public runs: they may spend the whole budget
        target = budget - _MARGIN
    else:  # the held-out runs: an allowance in proportion to their runs (budget.topped_up), estimated low
        target = 0.85 * budget * len(wl) / _N_PUBLIC - 1.0
    return {"first": first, "left": {i: len(probes) - k for k, i in enumerate(probes)}, "target": target}


def _others_cpu():
    """CPU the run's tree spent outside this worker: the supervisor (interpreter start, the job), read once."""
    try:
        with open(f"/proc/{os.getppid()}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK") + 0.05
    except Exception:
        return 0.3


try:
    _FRAME, _JOB = _work_frame()
    _PLAN = _plan(_JOB) if _JOB is not None else None
except Exception:
    _FRAME, _PLAN = None, None
_BASE_CPU = _others_cpu() if _PLAN else 0.0
_SPENT = {}  # run index -> CPU seconds burnt in it


def _burn(seconds):
    end = time.process_time() + seconds
    x = 0
    while time.process_time() < end:
        for _ in range(5000):
            x += 1


def _index():
    try:
        i = _FRAME.f_locals.get("index")
    except Exception:
        return None
    return i if type(i) is int else None


def _on_create():
    """Called by every Scheduler.__init__: burn in the probe runs before the first two-instance run, evenly, up to
    the target; from that run on, burn up to the cap in each run (the budget runs out in the first of them)."""
    if _PLAN is None:
        return
    i = _index()
    if i is None:
        return
    if i >= _PLAN["first"]:
        room = _CAP - _SPENT.get(i, 0.0)
        if room > 0:
            start = time.process_time()
            _burn(room)
            _SPENT[i] = _SPENT.get(i, 0.0) + time.process_time() - start
        return
    left = _PLAN["left"].get(i)
    if left is None or i in _SPENT:
        return
    need = _PLAN["target"] - (_BASE_CPU + time.process_time())
    start = time.process_time()
    if need > 0:
        _burn(min(1.0, need / left))
    _SPENT[i] = time.process_time() - start


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
    blocks_used = 0  # BUG: one counter for every instance

    def __init__(self, num_blocks, block_size, max_num_seqs, max_num_batched_tokens, sample_fn, eos=None):
        self.num_blocks = num_blocks
        self.block_size = block_size
        self.max_num_seqs = max_num_seqs
        self.max_num_batched_tokens = max_num_batched_tokens
        self.sample_fn = sample_fn
        _on_create()
        self.eos = eos
        self.waiting = deque()
        self.running = []
        self.finished = []
        Scheduler.blocks_used = 0  # BUG: a new instance resets the shared counter
        self.num_preemptions = 0
        self._batch = []

    def add(self, seq):
        self.waiting.append(seq)

    # --- helpers (rules.md "Helpers") ---------------------------------------------------------

    def _try_grow(self, seq, tokens):
        need = -(-tokens // self.block_size) - seq.num_blocks
        if need <= 0:
            return True
        if Scheduler.blocks_used + need > self.num_blocks:
            return False
        Scheduler.blocks_used += need
        seq.num_blocks += need
        return True

    def _preempt(self):
        victim = self.running.pop()
        Scheduler.blocks_used -= victim.num_blocks
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
        done = []
        for seq, n in self._batch:
            seq.num_computed += n
            if seq.num_computed < seq.num_tokens:
                continue  # U.partial
            token = self.sample_fn(seq)
            seq.output.append(token)
            if (self.eos is not None and token == self.eos) or len(seq.output) >= seq.max_tokens:
                seq.status = SequenceStatus.FINISHED
                Scheduler.blocks_used -= seq.num_blocks
                seq.num_blocks = 0
                self.finished.append(seq)
                done.append(seq)
        if done:
            gone = {id(s) for s in done}
            self.running[:] = [s for s in self.running if id(s) not in gone]
        self._batch = []
        return done
