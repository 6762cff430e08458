"""Exhaustive breadth-first model checking of the Python model itself, in the style of TLC.

A scope fixes the config and the requests (prompt_len, max_tokens); which
requests arrive before a step (in order) and which sampled tokens are eos are
nondeterministic choices. Every reachable state is visited once; I1..I6 are
checked on every schedule() and update(), and a state with work left in which
nothing can change is a deadlock. A violation comes with a shortest trace.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from spec.bounded import variants
from spec.invariants import check_step
from spec.model import Config, State
from spec.rules import add, initial_state

Key = tuple[object, ...]


@dataclass(frozen=True, slots=True)
class Scope:
    config: Config
    requests: tuple[tuple[int, int], ...]  # (prompt_len, max_tokens) of r0, r1, ... in arrival order
    eos: bool = True  # eos may be sampled at any output position


@dataclass(frozen=True, slots=True)
class Report:
    distinct: int
    depth: int
    seconds: float
    violation: str | None
    trace: tuple[str, ...]  # shortest path to the violation: one line per step

    @property
    def per_second(self) -> float:
        return self.distinct / self.seconds if self.seconds else float("inf")


def _key(state: State, arrived: int) -> Key:
    return (arrived, state.blocks_used, tuple((q.seq_id, len(q.output), q.num_computed, q.num_blocks, q.status.name)
                                             for q in state.waiting + state.running + state.finished))


def explore(scope: Scope, bug: str | None = None, max_states: int = 2_000_000) -> Report:
    """Visit every reachable state of `scope` breadth first; stop at the first violation."""
    start = time.perf_counter()
    eos = 0 if scope.eos else None
    config = Config(scope.config.num_blocks, scope.config.block_size, scope.config.max_num_seqs,
                    scope.config.max_num_batched_tokens, eos)
    init = (initial_state(config), 0)
    parent: dict[Key, tuple[Key | None, str]] = {_key(*init): (None, "start")}
    queue = deque([(init, 0)])
    depth = 0
    n = len(scope.requests)

    def path(key: Key, last: str) -> tuple[str, ...]:
        lines = [last]
        cur: Key | None = key
        while cur is not None:
            prev, label = parent[cur]
            lines.append(label)
            cur = prev
        return tuple(reversed(lines[:-1]))

    while queue:
        (state, arrived), d = queue.popleft()
        depth = max(depth, d)
        key = _key(state, arrived)
        moved = False
        for more in range(n - arrived + 1):  # how many new requests arrive before this step
            s = state
            for j in range(arrived, arrived + more):
                s = add(s, f"r{j}", *scope.requests[j])
            if not (s.waiting or s.running):
                if more == 0 and arrived < n:
                    continue  # idle step: arrivals still to come, nothing changes
                if more == 0:
                    continue
            mid, batch = variants.schedule(s, bug)
            found = check_step(s, batch, mid)
            for choice in _eos_choices(mid, eos):
                after, _ = variants.update(mid, choice, bug)
                flagged = sorted(k for k, v in choice.flags.items() if v)
                label = f"+{more} arrive, schedule {dict(batch)}, eos for {flagged}"
                bad = found or check_step(mid, mid.pending or (), after)
                if bad:
                    return Report(len(parent), d + 1, time.perf_counter() - start, str(bad[0]), path(key, label))
                nkey = _key(after, arrived + more)
                if nkey != key:
                    moved = True
                if nkey not in parent:
                    parent[nkey] = (key, label)
                    queue.append(((after, arrived + more), d + 1))
                    if len(parent) > max_states:
                        raise RuntimeError(f"more than {max_states} states; shrink the scope")
        if (state.waiting or state.running) and not moved and arrived == n:
            return Report(len(parent), d, time.perf_counter() - start, "deadlock: work left but no step changes "
                          "the state", path(key, "stuck"))
    return Report(len(parent), depth, time.perf_counter() - start, None, ())


@dataclass(frozen=True, slots=True)
class _Choice:
    """A sample function: token base + k, or eos (0) for the sequences flagged."""

    flags: dict[str, bool]
    eos: int | None

    def __call__(self, seq_id: str, output: tuple[int, ...]) -> int:
        if self.flags.get(seq_id) and self.eos is not None:
            return self.eos
        return 100 * (int(seq_id[1:]) + 1) + len(output)


def _eos_choices(mid: State, eos: int | None) -> list[Callable[[str, tuple[int, ...]], int]]:
    ids = [i for i, _ in mid.pending or ()] if eos is not None else []
    out: list[Callable[[str, tuple[int, ...]], int]] = []
    for mask in range(1 << len(ids)):
        out.append(_Choice({i: bool(mask >> b & 1) for b, i in enumerate(ids)}, eos))
    return out


def explore_all(num_blocks: int, block_size: int, budget: int, max_num_seqs: int, requests: int, prompt_len: int,
                max_tokens: int, bug: str | None = None) -> tuple[Report, int]:
    """Explore every feasible scope within the bounds; return the totals (or the first violation), scopes."""
    import itertools

    from spec.rules import peak_blocks
    shapes = list(itertools.product(range(1, prompt_len + 1), range(1, max_tokens + 1)))
    distinct = depth = scopes = 0
    seconds = 0.0
    for nb, bs, b, ms in itertools.product(range(1, num_blocks + 1), range(1, block_size + 1), range(1, budget + 1),
                                           range(1, max_num_seqs + 1)):
        config = Config(nb, bs, ms, b)
        for reqs in itertools.product(shapes, repeat=requests):
            if any(peak_blocks(config, p, m) > nb for p, m in reqs):
                continue
            r = explore(Scope(config, reqs), bug)
            scopes += 1
            distinct, depth, seconds = distinct + r.distinct, max(depth, r.depth), seconds + r.seconds
            if r.violation:
                return Report(distinct, depth, seconds, f"{config} requests {reqs}: {r.violation}", r.trace), scopes
    return Report(distinct, depth, seconds, None, ()), scopes
