"""Run two submissions side by side on random workloads and compare everything a grader may observe.

Observed, after every call: the ordered `schedule()` items, the ids `update()` returns, every
`sample_fn` call (seq id and output so far), the three queues, `blocks_used`, `num_preemptions`
and each sequence's fields, `num_tokens` included, plus the container types docs/api.md fixes
(`waiting` a deque, `running` and `finished` lists, `schedule()` a dict, `update()` a list).
Workloads are feasible (each request fits alone), as in docs/rules.md.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import random
import signal
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import FrameType, ModuleType
from typing import Any

VOCAB = 8          # tokens are 0..7, so a random eos is hit now and then
MAX_STEPS = 300    # a correct scheduler finishes every workload drawn here well before this
RUN_SECONDS = 2.0  # wall budget of one run; an endless loop is an observation, not a hang


@dataclass(frozen=True, slots=True)
class Workload:
    """Config plus arrivals; request i is named r<i> and added before schedule() of its step."""

    num_blocks: int
    block_size: int
    max_num_seqs: int
    max_num_batched_tokens: int
    eos: int | None
    arrivals: tuple[tuple[int, int, int], ...]   # (step, prompt_len, max_tokens), steps non-decreasing

    def describe(self) -> str:
        adds = ", ".join(f"r{i}({p},{m})@{s}" for i, (s, p, m) in enumerate(self.arrivals))
        return (f"num_blocks={self.num_blocks} block_size={self.block_size} max_num_seqs={self.max_num_seqs} "
                f"max_num_batched_tokens={self.max_num_batched_tokens} eos={self.eos}; "
                f"arrivals r<i>(prompt_len,max_tokens)@step: {adds}")


def blocks_for(tokens: int, block_size: int) -> int:
    return -(-tokens // block_size)


def is_feasible(w: Workload) -> bool:
    """Every request fits alone at its peak (docs/rules.md, "Feasibility"), and every number is >= 1."""
    if min(w.num_blocks, w.block_size, w.max_num_seqs, w.max_num_batched_tokens) < 1 or not w.arrivals:
        return False
    return all(p >= 1 and m >= 1 and s >= 1 and blocks_for(p + m - 1, w.block_size) <= w.num_blocks
               for s, p, m in w.arrivals)


def draw(rng: random.Random) -> Workload:
    """Draw one small feasible workload; tight caches make preemption common."""
    block_size = rng.choice((1, 2, 3, 4))
    count = rng.randint(1, 6) if rng.random() < 0.9 else rng.randint(7, 24)   # some outgrow small tables
    reqs = [(rng.randint(1, 12), rng.randint(1, 6)) for _ in range(count)]
    peak = max(blocks_for(p + m - 1, block_size) for p, m in reqs)
    steps = sorted(1 if rng.random() < 0.5 else rng.randint(1, 8) for _ in reqs)
    return Workload(
        num_blocks=peak + rng.choice((0, 0, 1, 2, 4, 40)),
        block_size=block_size,
        max_num_seqs=rng.randint(1, 5),
        max_num_batched_tokens=rng.choice((1, 2, 3, 5, 8, 16, 64)),
        eos=rng.choice((None, None, rng.randrange(VOCAB))),
        arrivals=tuple((s, p, m) for s, (p, m) in zip(steps, reqs, strict=True)),
    )


def sample_token(seq_id: str, output_len: int) -> int:
    """The model: a token that depends only on the seq id and how much output exists."""
    return (sum(map(ord, seq_id)) * 5 + output_len * 3 + output_len * output_len) % VOCAB


def load(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load submission {str(path)!r}; pass the path of a .py file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


class _OutOfTime(Exception):
    pass


def _alarm(signum: int, frame: FrameType | None) -> None:
    raise _OutOfTime


def _snapshot(sched: Any, seqs: list[Any]) -> tuple[Any, ...]:
    def ids(queue: Any) -> tuple[str, ...]:
        return tuple(s.seq_id for s in queue)

    fields = tuple((s.seq_id, tuple(s.output), s.num_computed, s.num_blocks, s.status.name, s.num_tokens)
                   for s in seqs)
    shapes = tuple(type(getattr(sched, name)).__name__ for name in ("waiting", "running", "finished"))
    return (ids(sched.waiting), ids(sched.running), ids(sched.finished), sched.blocks_used,
            sched.num_preemptions, fields, shapes)


def observe(module: ModuleType, w: Workload) -> list[tuple[Any, ...]]:
    """Drive `module` through `w` and return the list of observations; an exception or overrun ends it."""
    events: list[tuple[Any, ...]] = []

    def sample(seq: Any) -> int:
        events.append(("sample", seq.seq_id, tuple(seq.output)))
        return sample_token(seq.seq_id, len(seq.output))

    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, RUN_SECONDS)
    try:
        sched = module.Scheduler(num_blocks=w.num_blocks, block_size=w.block_size, max_num_seqs=w.max_num_seqs,
                                 max_num_batched_tokens=w.max_num_batched_tokens, sample_fn=sample, eos=w.eos)
        seqs: list[Any] = []
        done = 0
        for step in range(1, MAX_STEPS + 1):
            while len(seqs) < len(w.arrivals) and w.arrivals[len(seqs)][0] <= step:
                _, prompt_len, max_tokens = w.arrivals[len(seqs)]
                seqs.append(module.Sequence(f"r{len(seqs)}", prompt_len, max_tokens))
                sched.add(seqs[-1])
            batch = sched.schedule()
            events.append(("schedule", step, tuple(batch.items()), _snapshot(sched, seqs), type(batch).__name__))
            batch.clear()   # the caller owns the returned dict (docs/api.md)
            ended = sched.update()
            done += len(ended)
            events.append(("update", step, tuple(s.seq_id for s in ended), _snapshot(sched, seqs),
                           type(ended).__name__))
            if done >= len(w.arrivals) and len(seqs) == len(w.arrivals):
                break
        else:
            events.append(("unfinished", MAX_STEPS))
    except _OutOfTime:
        events.append(("overrun", RUN_SECONDS))
    except Exception as exc:   # a raising submission is an observation like any other
        events.append(("raise", type(exc).__name__))
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    return events


def first_difference(a: list[tuple[Any, ...]], b: list[tuple[Any, ...]]) -> str | None:
    """Describe the first observation where two runs differ, or None when they are identical."""
    for k, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return f"event {k}: original {x!r} vs mutant {y!r}"
    if len(a) != len(b):
        return f"lengths differ: original {len(a)} events, mutant {len(b)}; next: {(a + b)[min(len(a), len(b))]!r}"
    return None


def _smaller(w: Workload) -> Iterator[Workload]:
    """Candidate one-step simplifications of `w`, most aggressive first."""
    n = len(w.arrivals)
    for i in range(n):
        if n > 1:
            yield dataclasses.replace(w, arrivals=w.arrivals[:i] + w.arrivals[i + 1:])
    if w.eos is not None:
        yield dataclasses.replace(w, eos=None)
    for field in ("num_blocks", "block_size", "max_num_seqs", "max_num_batched_tokens"):
        value = getattr(w, field)
        for smaller in sorted({1, value // 2, value - 1}):
            if 1 <= smaller < value:
                yield dataclasses.replace(w, **{field: smaller})
    for i, (s, p, m) in enumerate(w.arrivals):
        for new in ((s, p - 1, m), (s, p, m - 1), (1, p, m), (s - 1, p, m)):
            steps = [a[0] for a in w.arrivals[:i]] + [new[0]] + [a[0] for a in w.arrivals[i + 1:]]
            if steps == sorted(steps):
                yield dataclasses.replace(w, arrivals=w.arrivals[:i] + (new,) + w.arrivals[i + 1:])


def shrink(orig: ModuleType, mutant: ModuleType, w: Workload) -> Workload:
    """Greedily simplify `w` while the two modules still differ on it."""
    changed = True
    while changed:
        changed = False
        for cand in _smaller(w):
            if cand == w or not is_feasible(cand):
                continue
            if first_difference(observe(orig, cand), observe(mutant, cand)) is not None:
                w, changed = cand, True
                break
    return w


def compare(orig_path: Path, mutant_path: Path, runs: int, seed: int) -> dict[str, Any]:
    """Compare on `runs` random workloads; on a difference, shrink it and describe it."""
    orig = load(orig_path, "selfcheck_original")
    mutant = load(mutant_path, "selfcheck_mutant")
    rng = random.Random(seed)
    for k in range(runs):
        w = draw(rng)
        if first_difference(observe(orig, w), observe(mutant, w)) is None:
            continue
        small = shrink(orig, mutant, w)
        return {"identical": False, "runs": k + 1, "workload": small.describe(),
                "difference": first_difference(observe(orig, small), observe(mutant, small)),
                "workload_fields": dataclasses.asdict(small)}
    return {"identical": True, "runs": runs}
