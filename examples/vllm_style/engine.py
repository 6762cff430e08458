"""A vLLM-style scheduler: other names and shapes than docs/api.md, the same P07 rules.

Requests are added with ``add_request``; ``schedule()`` returns an object and
advances ``num_computed_tokens`` at once (as vLLM v1 does); the model's tokens come
back through ``update_from_output``. ``adapter.py`` beside this file connects it to
``schedcheck check``.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field


@dataclass
class Request:
    request_id: str
    num_prompt_tokens: int
    max_tokens: int
    output_token_ids: list[int] = field(default_factory=list)
    num_computed_tokens: int = 0
    num_blocks: int = 0
    finished: bool = False

    @property
    def num_tokens(self) -> int:
        return self.num_prompt_tokens + len(self.output_token_ids)


@dataclass
class SchedulerOutput:
    num_scheduled_tokens: dict[str, int]  # request_id -> tokens this step, in scheduling order
    num_preempted: int


class EngineScheduler:
    def __init__(self, num_gpu_blocks: int, block_size: int, max_num_seqs: int, max_num_batched_tokens: int,
                 eos_token_id: int | None = None) -> None:
        self.num_gpu_blocks, self.block_size = num_gpu_blocks, block_size
        self.max_num_seqs, self.max_num_batched_tokens = max_num_seqs, max_num_batched_tokens
        self.eos_token_id = eos_token_id
        self.waiting: deque[Request] = deque()
        self.running: list[Request] = []
        self.used_blocks = 0
        self.requests: dict[str, Request] = {}

    def add_request(self, request: Request) -> None:
        self.requests[request.request_id] = request
        self.waiting.append(request)

    def _allocate(self, req: Request, n: int) -> bool:
        need = -(-(req.num_computed_tokens + n) // self.block_size) - req.num_blocks
        if need <= 0:
            return True
        if self.used_blocks + need > self.num_gpu_blocks:
            return False
        self.used_blocks += need
        req.num_blocks += need
        return True

    def _preempt(self) -> Request:
        victim = self.running.pop()
        self.used_blocks -= victim.num_blocks
        victim.num_blocks = victim.num_computed_tokens = 0
        self.waiting.appendleft(victim)
        return victim

    def schedule(self) -> SchedulerOutput:
        budget, scheduled, preempted, i = self.max_num_batched_tokens, {}, 0, 0
        while i < len(self.running) and budget > 0:
            req = self.running[i]
            n = min(req.num_tokens - req.num_computed_tokens, budget)
            while not self._allocate(req, n):
                preempted += 1
                if self._preempt() is req:
                    break
            else:
                scheduled[req.request_id] = n
                budget -= n
                i += 1
        while self.waiting and budget > 0 and len(self.running) < self.max_num_seqs:
            req = self.waiting[0]
            n = min(req.num_tokens - req.num_computed_tokens, budget)
            if not self._allocate(req, n):
                break
            self.running.append(self.waiting.popleft())
            scheduled[req.request_id] = n
            budget -= n
        for rid, n in scheduled.items():
            self.requests[rid].num_computed_tokens += n  # vLLM advances this when scheduling
        return SchedulerOutput(scheduled, preempted)

    def update_from_output(self, output: SchedulerOutput, sampled: dict[str, int]) -> list[str]:
        """Append each sampled token (only requests whose prefill is complete have one); return the finished ids."""
        done = []
        for rid in output.num_scheduled_tokens:
            if rid not in sampled:
                continue
            req = self.requests[rid]
            req.output_token_ids.append(sampled[rid])
            if sampled[rid] == self.eos_token_id or len(req.output_token_ids) >= req.max_tokens:
                req.finished = True
                self.running.remove(req)
                self.used_blocks -= req.num_blocks
                req.num_blocks = 0
                done.append(rid)
        return done
