"""Exhaustive breadth-first model checking of a rules module, in the style of TLC.

The module is ``spec.rules`` itself, or spec/rules.py with a fault applied
(``spec.faults``). A scope fixes the config and the requests (prompt_len,
max_tokens); which requests arrive before a step (in order) and which drawn
tokens are eos are the nondeterministic choices. Every reachable state is
visited once and every claim that can be judged on a step or a path is checked:
I1..I6, FA..FD and crashes after every step, OUT when a sequence finishes (its
output against its output alone on an ample cache, with the same draws), LIVE
against the liveness bound of the path's arrivals, and deadlock. A violation
comes with a shortest trace.
"""

from __future__ import annotations

import functools
import itertools
import time
import types
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, replace

import spec.rules
from spec.bounded.execute import EOS, Draws, Recording, Step, alone, step_violations
from spec.bounded.quotas import PREEMPTS, victim
from spec.errors import InvalidRequest, ProtocolError
from spec.model import DEFAULT_POLICY, Batch, Config, Policy, State
from spec.trace import Request

Key = tuple[object, ...]
CLAIMS = ("I1", "I2", "I3", "I4", "I5", "I6", "FA", "FB", "FC", "FD", "NP", "BO", "FIN", "FR", "SA", "CH", "AD", "PG",
          "OUT", "LIVE", "deadlock", "crash", "protocol")


@dataclass(frozen=True, slots=True)
class Scope:
    config: Config
    requests: tuple[tuple[int, int], ...]  # (prompt_len, max_tokens) in arrival order; their ids sort the other way
    eos: bool = True  # eos may be drawn at any draw


@dataclass(frozen=True, slots=True)
class Report:
    distinct: int
    depth: int
    seconds: float
    violation: str | None
    trace: tuple[str, ...]  # shortest path to the violation: one line per step
    claim: str | None = None  # the claim broken
    broken: tuple[tuple[str, str, tuple[str, ...]], ...] = ()  # every claim broken: (claim, violation, trace)
    most_preemptions: int = 0  # the largest num_preemptions of a state visited
    most_preempted: int = 0  # the most preemptions of one sequence on a path visited

    @property
    def per_second(self) -> float:
        return self.distinct / self.seconds if self.seconds else float("inf")


@dataclass(frozen=True, slots=True)
class Node:
    """A state of the search: the scheduler, and what the path so far fixed (arrivals, draws, steps)."""

    state: State
    arrived: int
    step: int  # steps taken
    last: int  # the step of the latest arrival
    counts: tuple[int, ...]  # draws so far, per request
    eos: tuple[tuple[int, ...], ...]  # the draws that were eos, per request
    preempted: tuple[int, ...] = ()  # preemptions of each request on the path (not in the key: a statistic)

    def key(self) -> Key:
        s = self.state
        return (self.arrived, self.step, self.last, s.blocks_used, s.num_preemptions, self.counts, self.eos,
                tuple((q.seq_id, q.output, q.num_computed, q.num_blocks, q.status.name)
                      for q in s.waiting + s.running + s.finished))


def explore(scope: Scope, rules: types.ModuleType = spec.rules, max_states: int = 2_000_000,
            every: bool = False) -> Report:
    """Visit every reachable state of `scope` breadth first; stop at the first violation.

    every=True goes on after a violation and reports the first, shortest violation of each claim,
    so one search tells which claims a fault breaks (a claim whose shortest path passes another's
    violation is found too); it stops only after a crash and at the liveness bound.

    One function, as TLC's main loop is one: every transition reads and extends the same parent map,
    queue and findings, and each claim is judged where its transition is made.
    """
    start = time.perf_counter()
    config = replace(scope.config, eos=EOS if scope.eos else None)
    n = len(scope.requests)
    names = tuple(f"r{n - 1 - j}" for j in range(n))  # sorted, the ids are in reverse arrival order
    slot = {seq_id: j for j, seq_id in enumerate(names)}
    reqs = tuple(Request(names[j], p, m) for j, (p, m) in enumerate(scope.requests))
    bases = {r.seq_id: 100 * (j + 1) for j, r in enumerate(reqs)}
    work = sum(p + m - 1 for p, m in scope.requests)
    solo: dict[tuple[int, tuple[int, ...]], tuple[int, ...]] = {}
    init = Node(rules.initial_state(config), 0, 0, 0, (0,) * n, ((),) * n, (0,) * n)
    most = [0, 0]  # the largest num_preemptions, the most preemptions of one request
    parent: dict[Key, tuple[Key | None, str]] = {init.key(): (None, "start")}
    queue = deque([init])
    depth = 0

    def path(key: Key, last: str) -> tuple[str, ...]:
        lines = [last]
        cur: Key | None = key
        while cur is not None:
            prev, label = parent[cur]
            lines.append(label)
            cur = prev
        return tuple(reversed(lines[:-1]))

    broken: dict[str, tuple[str, tuple[str, ...]]] = {}
    guarded: set[tuple[tuple[str, ...], ...]] = set()

    def found(claim: str, message: str, key: Key, label: str, d: int) -> Report | None:
        if claim not in broken:
            broken[claim] = (message, path(key, label))
        if every:
            return None
        return Report(len(parent), d, time.perf_counter() - start, message, path(key, label), claim,
                      ((claim, message, path(key, label)),), *most)

    while queue:
        node = queue.popleft()
        depth = max(depth, node.step)
        key = node.key()
        moved = False
        queues = tuple(tuple(q.seq_id for q in queue) for queue in (node.state.waiting, node.state.running,
                                                                   node.state.finished))
        if queues not in guarded:  # add()'s guards read which ids are in which queue: once per such state
            guarded.add(queues)
            refused = request_violation(rules, node.state)
            if refused is not None and (r := found("protocol", refused, key, "add()", node.step)):
                return r
        for more in range(n - node.arrived + 1):  # how many new requests arrive before this step
            try:
                s = node.state
                for j in range(node.arrived, node.arrived + more):
                    s = rules.add(s, reqs[j].seq_id, reqs[j].prompt_len, reqs[j].max_tokens)
            except Exception as e:  # every request of a scope fits the cache alone: add() must take it
                if (r := found("protocol", f"[protocol] add() refused a feasible request: {e!r}", key,
                               f"+{more} arrive", node.step + 1)):
                    return r
                continue
            k = node.step + 1
            last = k if more else node.last
            try:
                mid, batch, events = rules.schedule_explained(s)
            except Exception as e:
                if (r := found("crash", f"schedule() raised {e!r}", key, f"+{more} arrive, schedule", k)):
                    return r
                continue
            misuse = protocol_violation(rules, s, mid, batch)
            if misuse is not None and (r := found("protocol", misuse, key, f"+{more} arrive", k)):
                return r
            if not (s.waiting or s.running):
                continue  # nothing to do: an idle step changes nothing (its protocol is checked above)
            ids = [i for i, _ in batch] if scope.eos else []
            for mask in range(1 << len(ids)):
                flagged = {i for b, i in enumerate(ids) if mask >> b & 1}
                eos = {names[j]: node.eos[j] + ((node.counts[j],) if names[j] in flagged else ()) for j in range(n)}
                draws = Draws(bases, eos, {names[j]: node.counts[j] for j in range(n)})
                label = f"+{more} arrive, schedule {dict(batch)}, eos for {sorted(flagged)}"
                recording = Recording(draws)
                error = None
                try:
                    after, done, _ = rules.update_explained(mid, recording)
                except Exception as e:
                    after, done, error = mid, (), f"update() raised {e!r}"
                bad = step_violations(Step(k, s, batch, events, mid, tuple(recording.tokens),
                                           tuple(q.seq_id for q in done), after, error, tuple(recording.seen)))
                for claim in CLAIMS:
                    if bad.get(claim) and (r := found(claim, bad[claim][0], key, label, k)):
                        return r
                if bad.get("crash"):  # nothing to go on from
                    moved = True
                    continue
                counts = tuple(draws.counts.get(names[j], 0) for j in range(n))
                used = tuple(tuple(e for e in eos[names[j]] if e < counts[j]) for j in range(n))
                for q in done:  # OUT: the output it would have had alone, without any preemption
                    j = slot[q.seq_id]
                    want = solo.get((j, used[j]))
                    if want is None:
                        try:
                            want = alone_cached(rules, replace(config, num_blocks=1), reqs[j], bases[q.seq_id],
                                                used[j])
                        except Exception as e:  # the run alone on an ample cache is the spec's too
                            if (r := found("crash", f"running {q.seq_id} alone raised {e!r}", key, label, k)):
                                return r
                            continue  # no output to compare with
                        solo[(j, used[j])] = want
                    if q.output != want and (r := found("OUT", f"[OUT] {q.seq_id}'s output is "
                                                         f"{list(q.output)}, alone it is {list(want)}", key, label, k)):
                        return r
                hit = [slot[victim(e.message)] for e in events if e.rule in PREEMPTS]
                preempted = tuple(c + hit.count(j) for j, c in enumerate(node.preempted))
                most[:] = max(most[0], after.num_preemptions), max(most[1], *preempted)
                nxt = Node(after, node.arrived + more, k, last, counts, used, preempted)
                left = after.waiting or after.running
                if left and k - last >= work:  # never in a correct run (LIVE's ranking function); a faulty one
                    moved = True               # could go on for ever while requests are still to come: prune
                    continue
                if nxt.arrived == n and left and k >= last - 1 + work:
                    if (r := found("LIVE", f"[LIVE] work left after step {k}, the liveness bound "
                                           f"{last - 1 + work}", key, label, k)):
                        return r
                    moved = True
                    continue
                nkey = nxt.key()
                if nkey[3:] != key[3:] or more:
                    moved = True
                if nkey not in parent:
                    parent[nkey] = (key, label)
                    queue.append(nxt)
                    if len(parent) > max_states:
                        raise RuntimeError(f"more than {max_states} states; shrink the scope")
        stuck = (node.state.waiting or node.state.running) and not moved and node.arrived == n
        if stuck and (r := found("deadlock", "deadlock: work left but no step changes the state", key, "stuck",
                                 node.step)):
            return r
    first = next(iter(broken.items()), None)
    return Report(len(parent), depth, time.perf_counter() - start, first[1][0] if first else None,
                  first[1][1] if first else (), first[0] if first else None,
                  tuple((c, m, t) for c, (m, t) in broken.items()), *most)


@functools.lru_cache(maxsize=1 << 16)
def alone_cached(rules: types.ModuleType, config: Config, request: Request, first: int,
                 eos_draws: tuple[int, ...]) -> tuple[int, ...]:
    """``execute.alone``, shared by every scope (it reads no num_blocks: pass 1; the run alone gets its peak)."""
    return alone(rules, config, request, first, eos_draws)


def protocol_violation(rules: types.ModuleType, state: State, mid: State, batch: Batch) -> str | None:
    """The protocol guards around one schedule() (`state` before it, `mid` after it returned `batch`): update()
    before it, and a second schedule() before update() (after a real or an empty batch), must each raise
    ProtocolError (S.protocol, U.protocol)."""
    attempts: tuple[tuple[str, Callable[[], object]], ...] = (
        ("update() before schedule()", lambda: rules.update_explained(state, lambda i, o: 0)),
        (f"schedule() twice without update() (the first returned {dict(batch)})",
         lambda: rules.schedule_explained(mid)))
    for call, attempt in attempts:
        try:
            attempt()
        except ProtocolError:
            continue
        except Exception as e:
            return f"[protocol] {call} raised {e!r}, not ProtocolError"
        return f"[protocol] {call} did not raise ProtocolError"
    return None


# Values add() must refuse (docs/rules.md, "Settled here": lengths are ints >= 1, ids are str): one of each kind, so
# a guard that lets a kind through (negatives, bools, floats, strings) is caught whichever field it forgets.
NOT_LENGTHS: tuple[object, ...] = (0, -1, -(2**63), True, False, 1.0, "1", None)
NOT_IDS: tuple[object, ...] = (7, None, b"new", 1.5)


def request_violation(rules: types.ModuleType, state: State) -> str | None:
    """add()'s guards at this state (docs/rules.md, "add"): an id already added (waiting, running or finished), a length
    that is not an int >= 1 (NOT_LENGTHS, in either field), an id that is not a str (NOT_IDS) and a request the
    whole cache cannot hold must raise InvalidRequest; a request that fills the whole cache exactly must be
    accepted."""
    config = state.config
    cap = config.num_blocks * config.block_size  # the most tokens one request may ever hold
    known = [seq.seq_id for seq in state.seqs()]
    fresh = "+".join(known) + "+new"
    refusals: list[tuple[str, tuple[object, object, object]]] = [
        (f"add({k!r}) of an id already added", (k, 1, 1)) for k in known]
    refusals += [(f"add() with prompt_len {bad!r}", (fresh, bad, 1)) for bad in NOT_LENGTHS]
    refusals += [(f"add() with max_tokens {bad!r}", (fresh, 1, bad)) for bad in NOT_LENGTHS]
    refusals += [(f"add() with seq_id {bad!r}", (bad, 1, 1)) for bad in NOT_IDS]
    refusals += [(f"add() of a request that needs {config.num_blocks + 1} blocks", (fresh, cap + 1, 1))]
    for what, (seq_id, prompt_len, max_tokens) in refusals:
        try:
            rules.add(state, seq_id, prompt_len, max_tokens)
        except InvalidRequest:
            continue
        except Exception as e:
            return f"[protocol] {what} raised {e!r}, not InvalidRequest"
        return f"[protocol] {what} did not raise InvalidRequest"
    try:
        rules.add(state, fresh, cap, 1)
    except Exception as e:
        return f"[protocol] add() of a request that fits the whole cache exactly ({cap} tokens) raised {e!r}"
    return None


Span = int | tuple[int, int] | list[int]  # a bound: 1..v, or lo..hi


def span(v: Span) -> range:
    """The values a scope bound ranges over: 1..v for an int, lo..hi for a pair (a JSON list once stored)."""
    lo, hi = (1, v) if isinstance(v, int) else v
    return range(lo, hi + 1)


def explore_all(num_blocks: Span, block_size: Span, budget: Span, max_num_seqs: Span, requests: int,
                prompt_len: Span, max_tokens: Span, rules: types.ModuleType = spec.rules, every: bool = False,
                policy: Policy = DEFAULT_POLICY) -> tuple[Report, int]:
    """Explore every feasible scope within the bounds (each ``span``); return the totals (or the first violation),
    scopes.

    every=True explores every scope and reports, per claim, its first violation (scopes in order)."""
    broken: dict[str, tuple[str, tuple[str, ...]]] = {}
    shapes = list(itertools.product(span(prompt_len), span(max_tokens)))
    distinct = depth = scopes = most_preemptions = most_preempted = 0
    seconds = 0.0
    for nb, bs, b, ms in itertools.product(span(num_blocks), span(block_size), span(budget), span(max_num_seqs)):
        config = Config(nb, bs, ms, b, policy=policy)
        for reqs in itertools.product(shapes, repeat=requests):
            if any(spec.rules.peak_blocks(config.block_size, p, m) > nb for p, m in reqs):
                continue
            r = explore(Scope(config, reqs), rules, every=every)
            scopes += 1
            distinct, depth, seconds = distinct + r.distinct, max(depth, r.depth), seconds + r.seconds
            most_preemptions = max(most_preemptions, r.most_preemptions)
            most_preempted = max(most_preempted, r.most_preempted)
            where = f"num_blocks={nb} block_size={bs} budget={b} max_num_seqs={ms} requests {reqs}"
            for claim, message, trace in r.broken:
                broken.setdefault(claim, (f"{where}: {message}", trace))
            if r.violation and not every:
                return Report(distinct, depth, seconds, f"{where}: {r.violation}", r.trace, r.claim,
                              r.broken, most_preemptions, most_preempted), scopes
    first = next(iter(broken.items()), None)
    return Report(distinct, depth, seconds, first[1][0] if first else None, first[1][1] if first else (),
                  first[0] if first else None, tuple((c, m, t) for c, (m, t) in broken.items()),
                  most_preemptions, most_preempted), scopes
